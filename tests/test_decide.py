"""Decision support: the scaling model, break-even, recommendations, price files and the three CLIs.

Synthetic families follow exact power laws, so the fitted exponent, the predictions and the break-even counts
can be checked by hand; one test runs on the real configurations when the pipeline has produced them.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import jinja2
import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import t as student_t

from pipeline.analysis import decide, forecast, models_artifact, scaling
from pipeline.analysis import ranking as rank
from pipeline.analysis.configurations import republished_of
from pipeline.analysis.prices import load_prices
from pipeline.analysis.scope import in_scope
from pipeline.commands import predict, recommend
from pipeline.core import paths
from pipeline.core.errors import ContractError, ParamsError, UsageError
from pipeline.report import decide_section
from pipeline.settings import Analysis, Decide, settings_from
from pipeline.stages import backtest
from pipeline.stages import decide as decide_stage
from tests.conftest import configurations

ROOT = Path(__file__).resolve().parents[1]
DECIDE_PARAMS = {"efficiency_floor": 0.7, "interval": 0.9, "min_points": 4, "max_error": 0.2,
                 "saturation_min_counts": 4,
                 # The synthetic laws are exact, so the first folds' uncalibrated intervals have no width and hold
                 # nothing: any coverage passes here (tests/test_forecast.py tests the coverage condition).
                 "trust": {"min_rounds": 2, "min_backtest_points": 5, "max_count_factor": 2, "coverage": [0.01, 1.0]}}
SETTINGS = Decide.model_validate(DECIDE_PARAMS)
CRITERIA = {"time_to_train_min": {"weight": 0.5, "direction": "cost"},
            "accelerator_hours": {"weight": 0.5, "direction": "cost"}}


def power_law(family: str, counts: list[float], time_at_first: float, exponent: float,
              rounds: tuple[str, ...] = ("v3.0", "v4.0"), form_factor: str | None = "SXM",
              spread: float = 1.02) -> list[dict]:
    """t = time_at_first * (n / counts[0]) ** exponent, times `spread` in the first round and divided by it in
    the second: in log space the two cancel at every count, so a fit recovers the law exactly."""
    rows = []
    for position, round_ in enumerate(rounds):
        factor = spread if position % 2 == 0 else 1 / spread
        rows += [{"round": round_, "submitter": "Acme", "system": f"{family}-{form_factor}-{count:g}-{position}",
                  "accelerator_family": family, "accelerator_form_factor": form_factor,
                  "accelerator_count": float(count),
                  "time_to_train_min": time_at_first * (count / counts[0]) ** exponent * factor} for count in counts]
    return rows


CLOSED_RESNET = Analysis(benchmark="resnet", benchmarks=["resnet"], division="closed", rounds="all", availability="all",
                         min_configurations=2)


def family_frame(rows: list[dict]) -> pd.DataFrame:
    return scaling.model_inputs(configurations(rows), CLOSED_RESNET, "resnet")


# --- the scaling model ------------------------------------------------------------------------------------------

def test_power_law_fit_recovers_exponent_intercept_and_spread() -> None:
    counts = [1, 2, 4, 8, 16]
    model = scaling.fit_family(family_frame(power_law("A100", counts, 100.0, -0.8)), SETTINGS)
    assert not model.saturated  # an exact power law has no curvature to fit
    assert model.exponent == pytest.approx(-0.8)
    assert model.predict(32).time_min == pytest.approx(100 * 32 ** -0.8)
    # residuals are +/- log 1.02 at all ten points, with two parameters fitted
    assert model.residual_sd == pytest.approx(math.log(1.02) * math.sqrt(10 / 8))
    assert model.dof == 8


def test_saturation_count_is_recovered_from_an_exact_curve() -> None:
    counts = [2.0 ** k for k in range(11)]
    rows = [{**row, "time_to_train_min": 100 * row["accelerator_count"] ** -1 * (1 + row["accelerator_count"] / 64)}
            for row in power_law("H100", counts, 1.0, 0.0)]
    model = scaling.fit_family(family_frame(rows), SETTINGS)
    assert model.saturated
    assert model.saturation_count == pytest.approx(64, rel=1e-3)
    assert model.exponent == pytest.approx(-1.0, abs=1e-3)
    assert model.doubling_speedup(64)[0] == pytest.approx(2 * (64 + 64) / (64 + 128), rel=1e-3)  # Amdahl's 4/3


def test_prediction_interval_is_the_ols_t_interval_in_log_space() -> None:
    rows = power_law("A100", [4, 8, 64], 50.0, -0.9, spread=1.1)  # three counts: no saturation term
    rows[0]["time_to_train_min"] *= 1.3  # break the symmetry so the slope carries uncertainty too
    frame = family_frame(rows)
    model = scaling.fit_family(frame, SETTINGS)
    assert not model.saturated
    design = np.column_stack([np.ones(len(frame)), np.log(frame["accelerator_count"])])
    y = np.log(frame["time_to_train_min"])
    beta, rss = np.linalg.lstsq(design, y, rcond=None)[:2]
    s2 = float(rss[0]) / (len(y) - 2)
    x0 = np.array([1.0, math.log(32)])
    half = student_t.ppf(0.95, len(y) - 2) * math.sqrt(s2 * (1 + x0 @ np.linalg.inv(design.T @ design) @ x0))
    prediction = model.predict(32)
    assert prediction.time_min == pytest.approx(math.exp(x0 @ beta))
    assert (prediction.low_min, prediction.high_min) == pytest.approx((math.exp(x0 @ beta - half),
                                                                       math.exp(x0 @ beta + half)))
    assert not prediction.extrapolated and model.predict(128).extrapolated


def test_form_factor_is_an_offset_and_a_missing_one_takes_the_family_mode() -> None:
    rows = (power_law("H100", [8, 16, 32], 10.0, -0.9)
            + power_law("H100", [4, 8], 30.0 * 2 ** 0.9, -0.9, form_factor="PCIe")
            + power_law("H100", [64], 10.0 * 8 ** -0.9, 0.0, rounds=("v4.1",), form_factor=None, spread=1.0))
    frame = family_frame(rows)
    assert frame["form_factor"].value_counts().to_dict() == {"SXM": 7, "PCIe": 4}
    model = scaling.fit_family(frame, SETTINGS)
    assert model.form_factors == ("SXM", "PCIe")
    assert model.count_range("PCIe") == (4.0, 8.0)
    # SXM: 10 (n/8)**-0.9, PCIe: 30 (n/8)**-0.9, three times slower at any count
    assert model.predict(8, "PCIe").time_min / model.predict(8, "SXM").time_min == pytest.approx(3.0)
    assert model.predict(32, "PCIe").extrapolated and not model.predict(32, "SXM").extrapolated


def test_efficiency_doubling_and_break_even_of_a_square_root_law() -> None:
    # t = 60 / sqrt(n): efficiency n**-0.5 relative to one accelerator, each doubling a sqrt(2) speed-up
    model = scaling.fit_family(family_frame(power_law("TPU-v4", [1, 2, 4, 8], 60.0, -0.5)), SETTINGS)
    assert model.efficiency([1, 4, 16]) == pytest.approx([1.0, 0.5, 0.25])
    assert model.doubling_speedup([1, 8]) == pytest.approx([math.sqrt(2)] * 2)
    assert model.break_even(0.7) == pytest.approx(0.7 ** -2)  # 2.04 accelerators


@pytest.mark.parametrize(("count", "beyond", "text"), [
    (40.0, False, "40"), (100.0, True, "100 (extrapolated)"),
    (300.0, True, "not below the floor up to 256 (4× the largest published)"),
    (None, True, "not below the floor up to 256 (4× the largest published)"),
])
def test_break_even_far_past_the_published_counts_is_not_given_as_a_number(count: float | None, beyond: bool,
                                                                          text: str) -> None:
    family = {"break_even_count": count, "break_even_beyond_published": beyond, "count_max": 64.0}
    assert decide_section.break_even_text(family) == text


def test_linear_scaling_never_breaks_even() -> None:
    model = scaling.fit_family(family_frame(power_law("A30", [2, 4, 8], 80.0, -1.0)), SETTINGS)
    assert model.break_even(0.7) is None


def test_superlinear_results_are_fitted_at_linear_scaling_so_efficiency_never_exceeds_one() -> None:
    # t = 100 n**-1.3 (each doubling 2.46x faster) is held at b = -1: t = e**a / n with a the mean of
    # log t + log n = log 100 - 0.3 log n over n = 1, 2, 4, 8, i.e. e**a = 100 * 2**-0.45 (the round spread cancels).
    model = scaling.fit_family(family_frame(power_law("MI250", [1, 2, 4, 8], 100.0, -1.3)), SETTINGS)
    assert model.exponent == -1.0 and not model.saturated
    assert model.predict(4).time_min == pytest.approx(100 * 2 ** -0.45 / 4)
    assert model.efficiency([1, 2, 8]) == pytest.approx([1.0, 1.0, 1.0]) and model.break_even(0.7) is None
    assert model.dof == 8 - 1  # the exponent at its bound is not estimated: only the intercept is
    assert model.doubling_speedup(2)[0] == pytest.approx(2.0)


@pytest.mark.parametrize(("rows", "reason"), [
    (power_law("L4", [8], 10.0, -1.0, rounds=("v3.0",)), "a single result"),
    (power_law("L4", [8], 10.0, -1.0), "one accelerator count"),
    (power_law("L4", [8, 16], 10.0, -1.0, rounds=("v3.0",)), "no residual"),
    (power_law("L4", [8], 10.0, -1.0) + power_law("L4", [16], 9.0, -1.0, form_factor="PCIe"),
     "cannot be told apart"),
])
def test_families_that_cannot_be_modelled_say_why(rows: list[dict], reason: str) -> None:
    assessment = scaling.assess_family(family_frame(rows), SETTINGS)
    assert assessment.model is None and reason in assessment.not_modelled_reason
    assert not assessment.trusted


def test_held_out_errors_of_an_exact_law_are_zero_and_cover_every_result() -> None:
    assessment = scaling.assess_family(family_frame(power_law("H100", [8, 16, 32, 64], 20.0, -0.9, spread=1.0)),
                                       SETTINGS)
    assert assessment.loco.n == 8 and assessment.loro.n == 8  # two rounds of four
    assert assessment.loco.median_ape_pct == pytest.approx(0.0, abs=1e-9)
    assert assessment.loro.median_ape_pct == pytest.approx(0.0, abs=1e-9)
    assert assessment.trusted and assessment.caveats == ()


def test_distrust_reasons_name_few_points_high_error_and_a_narrow_range() -> None:
    noisy = power_law("V100", [8, 16, 512], 100.0, -0.9, rounds=("v0.7",))
    noisy[1]["time_to_train_min"] *= 2.5
    reasons = " ".join(scaling.assess_family(family_frame(noisy), SETTINGS).caveats)
    assert "only 3 published results" in reasons
    narrow = scaling.assess_family(family_frame(power_law("L40", [8, 10], 30.0, -1.0, spread=1.05)), SETTINGS)
    assert any("less than a doubling" in caveat for caveat in narrow.caveats)
    scattered = power_law("A100", [4, 8, 16, 32, 64], 60.0, -0.9, spread=1.6)
    high = scaling.assess_family(family_frame(scattered), SETTINGS)
    assert high.loco.median_ape_pct > 20 and any("median error" in caveat for caveat in high.caveats)


def test_decide_settings_are_checked_where_params_yaml_is_read() -> None:
    project = yaml.safe_load((ROOT / "params.yaml").read_text())
    with pytest.raises(ParamsError, match=r"decide\.efficiency_floor"):
        settings_from({**project, "decide": {**project["decide"], "efficiency_floor": 1.5}})
    with pytest.raises(ParamsError, match=r"decide\.interval: is missing"):
        settings_from({**project, "decide": {k: v for k, v in project["decide"].items() if k != "interval"}})


# --- break-even from the data -----------------------------------------------------------------------------------

def test_observed_break_even_and_doubling_by_hand() -> None:
    frame = family_frame(power_law("TPU-v4", [1, 2, 4, 8], 60.0, -0.5, rounds=("v3.0",)))
    observed = decide.observed_scaling(frame)
    # features.py: speed-up over one accelerator / count = n**-0.5
    assert observed["observed_efficiency"].tolist() == pytest.approx([1.0, 2 ** -0.5, 0.5, 8 ** -0.5])
    assert observed["observed_doubling_speedup"].dropna().tolist() == pytest.approx([math.sqrt(2)] * 3)
    assert decide.first_count_below(observed["observed_efficiency"], 0.7) == 4.0  # 0.707 at 2 is above


# --- recommendations --------------------------------------------------------------------------------------------

def test_candidates_are_scored_by_the_rankings_own_score() -> None:
    """Published and predicted candidates take the ranking's trade-off score, which depends on each candidate
    alone: a prediction moves no published score."""
    candidates = _candidates().drop(columns="score")
    scored = recommend.score_candidates(candidates, CRITERIA)
    assert scored["score"].tolist() == pytest.approx(rank.scores(candidates, CRITERIA).tolist())
    alone = recommend.score_candidates(candidates.iloc[:2], CRITERIA)
    assert alone["score"].tolist() == scored["score"].tolist()[:2]


def _candidates() -> pd.DataFrame:
    return pd.DataFrame({
        "kind": ["published", "published", "predicted"], "label": ["a", "b", "H100 SXM x 16"],
        "accelerator_family": ["A100", "H100", "H100"], "accelerator_count": [8.0, 64.0, 16.0],
        "time_to_train_min": [30.0, 3.0, 9.0], "time_high_min": [30.0, 3.0, 12.0],
        "accelerator_hours": [4.0, 3.2, 2.4], "scaling_efficiency": [1.0, 0.5, 0.8], "score": [11.0, 3.1, 4.6],
        "detail": ["published result", "published result", "predicted"]})


def test_constraints_filter_and_predictions_must_meet_the_deadline_at_their_upper_bound() -> None:
    candidates = _candidates()
    deadline = recommend.constraints_of(None, 10.0, None)
    assert recommend.recommend(candidates, deadline, 0.7)["label"].tolist() == ["b"]  # 12 min upper bound > 10
    chosen = recommend.recommend(candidates, recommend.constraints_of(16, 15.0, None), 0.7)
    assert chosen["label"].tolist() == ["H100 SXM x 16"]
    assert "12 (upper end of the interval) <= 15 min" in chosen.loc[0, "reason"]
    assert "16 <= 16 accelerators" in chosen.loc[0, "reason"]
    ordered = recommend.recommend(candidates, [], 0.7)
    assert ordered["label"].tolist() == ["b", "H100 SXM x 16", "a"]  # front 1 by score (lower first), then a
    assert "below (past the break-even)" in ordered.loc[0, "reason"]


def test_costs_use_the_price_table_and_impossible_constraints_say_what_to_relax() -> None:
    candidates = recommend.with_costs(_candidates(), {"H100": 2.0})
    assert candidates["cost"].tolist()[1:] == pytest.approx([6.4, 4.8])
    assert math.isnan(candidates["cost"].iloc[0])  # no price for A100: never meets a budget
    constraints = recommend.constraints_of(8, 5.0, None)
    assert recommend.recommend(candidates, constraints, 0.7).empty
    message = recommend.why_infeasible(candidates, constraints)
    assert "--max-accelerators 8: relax it to 64 accelerators (published b)" in message
    assert "--deadline-min 5: relax it to 30 min (published a)" in message


@pytest.mark.parametrize(("content", "message"), [
    (None, "not found"),
    ("H100: [3.0\n", "not valid YAML"),
    ("- H100\n- 3.0\n", "must map accelerator family"),
    ("", "must map accelerator family"),
    ("H100: cheap\n", "'H100' must be a positive number"),
    ("H100: -1\n", "'H100' must be a positive number"),
    ("H100: true\n", "'H100' must be a positive number"),
])
def test_malformed_price_files_are_refused_with_the_expected_format(tmp_path: Path, content: str | None,
                                                                    message: str) -> None:
    path = tmp_path / "prices.yaml"
    if content is not None:
        path.write_text(content)
    with pytest.raises(UsageError, match=message):
        load_prices(path)


def test_example_prices_are_labelled_illustrative_and_load() -> None:
    path = ROOT / "examples" / "prices.yaml"
    assert "ILLUSTRATIVE" in path.read_text().splitlines()[0] and "NOT market data" in path.read_text()
    assert load_prices(path)["H100"] > 0


# --- the CLIs, the stage and the report fragment, in a scratch project ------------------------------------------

@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """params.yaml, configurations.parquet and ranking.csv of three families: H100 and A100 follow power laws
    (H100: t = 100 (n/8)^-0.9 at 8 to 128; A100: t = 200 (n/8)^-0.8 at 8, 32 and 64, not 16), Gaudi2 was only
    published at eight accelerators."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    # Gaudi2's v4.1 result repeats its v3.0 one: with `include` it is fitted, and still no backtest forecast.
    params["analysis"].update(benchmarks=["resnet"], min_configurations=5, republished="include")
    params["decide"] = DECIDE_PARAMS
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    rows = (power_law("H100", [8, 16, 32, 64, 128], 100.0, -0.9) + power_law("A100", [8, 32, 64], 200.0, -0.8)
            + power_law("Gaudi2", [8], 150.0, 0.0, rounds=("v3.0", "v4.0", "v4.1")))
    table = configurations(rows)
    table["republished_of"] = republished_of(table)  # as the features stage marks Gaudi2's v4.1 repeat of v3.0
    (tmp_path / "data/processed").mkdir(parents=True)
    table.to_parquet(tmp_path / "data/processed/configurations.parquet", index=False)
    scoped = in_scope(table, Analysis.model_validate(params["analysis"]), "resnet").assign(cluster=0)
    (tmp_path / paths.RANK).mkdir(parents=True)
    rank.rank_configurations(scoped, params["rank"]["criteria"]).to_csv(
        tmp_path / paths.ranking_csv("resnet"), index=False)
    monkeypatch.chdir(tmp_path)
    backtest.main([])
    decide_stage.main([])  # saves the models predict and recommend answer from
    return tmp_path


def _exit_message(main, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.err.startswith("error: ")
    return captured.err


def test_predict_cli_prints_the_forecast_interval_trust_and_nearest_results(project: Path, capsys) -> None:
    predict.main(["--benchmark", "resnet", "--accelerator", "H100", "--count", "64"])
    out = capsys.readouterr().out
    # anchored on v4.0 (times / 1.02), then half the drift of 1.02^-2 per year over the 0.9 years to the round
    # after v4.1: 100 x 8^-0.9 x 1.02^-1.9 = 14.8
    assert f"forecast time to train {100 * 8 ** -0.9 * 1.02 ** -1.9:.3g} min" in out
    assert "in the round after v4.1" in out and "method: model (family)" in out
    nearest = out.split("by accelerator count:\n")[1].splitlines()
    assert all(" 64 " in line for line in nearest[1:3]) and " 32 " in nearest[3]
    predict.main(["--benchmark", "resnet", "--accelerator", "H100", "--count", "1024"])
    assert "1024 accelerators is outside the published 8 to 128" in capsys.readouterr().out


def test_predict_json_and_from_file_answer_one_object_per_row(project: Path, capsys) -> None:
    queries = project / "queries.csv"
    queries.write_text("benchmark,accelerator,count\nresnet,h100,64\nresnet,Gaudi2,16\n")
    predict.main(["--from", str(queries), "--json"])
    answers = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(a["accelerator"], a["count"], a["kind"]) for a in answers] == [
        ("H100", 64.0, "family"), ("Gaudi2", 16.0, "family level, benchmark scaling")]
    assert all({"predicted_min", "low_min", "high_min", "trusted", "reasons", "rounds", "method"} <= set(a)
               for a in answers)
    assert answers[0]["low_min"] < answers[0]["predicted_min"] < answers[0]["high_min"]
    assert answers[1]["specification_based"] and not answers[0]["specification_based"]
    assert answers[0]["rounds"] == ["v3.0", "v4.0", "v4.1"]


@pytest.mark.parametrize(("argv", "expected"), [
    (["--benchmark", "resnet", "--accelerator", "H900", "--count", "8"], "families with results: A100, Gaudi2, H100"),
    (["--benchmark", "resnet", "--accelerator", "H100", "--count", "0"], "count must be positive"),
    (["--benchmark", "resnet", "--accelerator", "H100", "--count", "x"], "invalid int value"),
    (["--benchmark", "resnet", "--accelerator", "H100", "--count", "8", "--form-factor", "PCIe"],
     "choose one of: SXM"),
    (["--benchmark", "imagenet", "--accelerator", "H100", "--count", "8"], "unknown benchmark 'imagenet'; choose one "
                                                                           "of: resnet"),
    (["--benchmark", "resnet"], "or --from FILE.csv"),
    (["--from", "missing.csv"], "no such file"),
    # three families are too few to regress on specifications (pipeline.analysis.forecast.MIN_SPEC_FAMILIES)
    (["--benchmark", "resnet", "--accelerator", "B200", "--count", "8"], "too few families have specifications"),
    (["--from", "params.yaml", "--count", "8"], "leave out --benchmark"),
    (["--benchmark", "resnet", "--accelerator", "H100", "--count", "8", "--until", "2024"],
     "'2024' is not a round: rounds are written vX.Y"),
])
def test_predict_cli_mistakes_exit_1_with_the_valid_choices(project: Path, capsys, argv: list[str],
                                                            expected: str) -> None:
    assert expected in _exit_message(predict.main, argv, capsys)


def test_predict_from_a_malformed_table_says_what_it_needs(project: Path, capsys) -> None:
    bad = project / "bad.csv"
    bad.write_text("benchmark,accelerator\nresnet,H100\n")
    assert "(missing: count)" in _exit_message(predict.main, ["--from", str(bad)], capsys)
    bad.write_text("benchmark,accelerator,count\nresnet,H100,8\nresnet,H100,-2\n")
    assert "line 3: count must be a positive number" in _exit_message(predict.main, ["--from", str(bad)], capsys)


def test_recommend_cli_lists_published_and_predicted_with_reasons(project: Path, capsys) -> None:
    recommend.main(["--benchmark", "resnet", "--max-accelerators", "64", "--prices",
                    str(ROOT / "examples/prices.yaml"), "--top", "30"])
    out = capsys.readouterr().out
    assert "no market data" in out
    listed = re.findall(r"^\s*\d+\. \[(\w+)\] (.+?):", out, flags=re.MULTILINE)
    kinds = {kind for kind, _ in listed}
    assert kinds == {"published", "predicted"}
    # the one unpublished power of two inside a family's range
    assert [label for kind, label in listed if kind == "predicted"] == ["A100 SXM x 16"]
    assert "not predicted (forecast not trusted): Gaudi2 SXM" in out
    assert all("x 128" not in label for _, label in listed)  # 128 breaks --max-accelerators
    assert out.count("    why: ") == len(listed)


def test_recommend_predicts_gaps_and_scores_them_on_the_published_scale(project: Path) -> None:
    params = yaml.safe_load(Path("params.yaml").read_text())
    fitted = models_artifact.saved_models("resnet")
    ranking = pd.read_csv(paths.ranking_csv("resnet"))
    candidates, untrusted = recommend.build_candidates(fitted, ranking, settings_from(params).decide.trust,
                                                       CRITERIA, ["A100"], None)
    predicted = candidates[candidates["kind"] == "predicted"]
    assert predicted["label"].tolist() == ["A100 SXM x 16"] and untrusted == []
    # anchored on v4.0's 8 (times / 1.02), 200 / 1.02 x 2^b, with half the drift over 0.9 years; b is A100's
    # -0.8 shrunk a little towards the pooled slope of H100 and A100, so within 1% of 2^-0.8
    assert predicted["time_to_train_min"].iloc[0] == pytest.approx(200 * 2 ** -0.8 * 1.02 ** -1.9, rel=0.01)
    assert predicted["score"].iloc[0] == pytest.approx(rank.scores(predicted, CRITERIA)[0])
    assert predicted["forecast"].iloc[0]["trusted"] and predicted["forecast"].iloc[0]["kind"] == "family"


def test_recommend_json_gives_one_object_per_candidate(project: Path, capsys) -> None:
    recommend.main(["--benchmark", "resnet", "--max-accelerators", "64", "--top", "30", "--json"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {row["kind"] for row in rows} == {"published", "predicted"}
    assert all(row["forecast"] is None for row in rows if row["kind"] == "published")
    assert all(row["forecast"]["interval"] == 0.9 for row in rows if row["kind"] == "predicted")


@pytest.mark.parametrize(("argv", "expected"), [
    (["--family", "H200"], "families with data: A100, Gaudi2, H100"),
    (["--max-accelerators", "0"], "--max-accelerators must be positive"),
    (["--deadline-min", "-5"], "--deadline-min must be positive"),
    (["--max-cost", "10"], "--max-cost needs --prices"),
    (["--max-accelerators", "4"], "--max-accelerators 4: relax it to 8 accelerators"),
    (["--prices", "missing.yaml"], "price file missing.yaml not found"),
])
def test_recommend_cli_mistakes_exit_1_with_the_valid_choices(project: Path, capsys, argv: list[str],
                                                              expected: str) -> None:
    assert expected in _exit_message(recommend.main, ["--benchmark", "resnet", *argv], capsys)


def test_family_names_and_price_keys_match_in_any_case(project: Path, capsys, tmp_path: Path) -> None:
    predict.main(["--benchmark", "resnet", "--accelerator", "h100", "--count", "64", "--form-factor", "sxm"])
    assert capsys.readouterr().out.startswith("resnet, H100 (SXM) x 64: ")
    prices = tmp_path / "prices.yaml"
    prices.write_text("h100: 2.0\nmi300x: 1.0\n")
    recommend.main(["--benchmark", "resnet", "--family", "h100", "--prices", str(prices), "--top", "1"])
    captured = capsys.readouterr()
    assert captured.out.startswith("resnet (H100): ")
    # first (front 1, lowest trade-off score sqrt(minutes x accelerator-hours)): H100 x 128 of v4.0, 8.09 min and
    # 128 x 8.09 / 60 = 17.2 accelerator-hours, sqrt(8.09 x 17.2) = 11.8, at 2.0 per accelerator-hour
    assert "H100 x 128, 8.09 min, 17.2 accelerator-hours, cost 34.5, trade-off score 11.8" in captured.out
    assert "MI300X (families with results: A100, Gaudi2, H100)" in captured.err  # known, without resnet results


def test_predict_answers_exactly_what_decide_json_states(project: Path, capsys) -> None:
    forecasts = json.loads((project / paths.decide_json("resnet")).read_text())["forecasts"]
    assert [(f["accelerator"], f["count"]) for f in forecasts] == [("A100", 64.0), ("Gaudi2", 8.0), ("H100", 128.0)]
    for stated in forecasts:
        predict.main(["--benchmark", "RESNET", "--accelerator", stated["accelerator"], "--count",
                      f"{stated['count']:g}", "--form-factor", stated["form_factor"], "--json"])
        assert json.loads(capsys.readouterr().out) == stated


def test_a_benchmark_the_decide_stage_skipped_is_never_trusted(project: Path, capsys) -> None:
    params = yaml.safe_load(Path("params.yaml").read_text())
    params["analysis"]["min_configurations"] = 1000
    Path("params.yaml").write_text(yaml.safe_dump(params))
    decide_stage.main([])
    capsys.readouterr()
    predict.main(["--benchmark", "resnet", "--accelerator", "H100", "--count", "64", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert not result["trusted"]
    assert result["reasons"][0] == ("the decide stage did not analyse resnet: 19 configurations in scope, fewer "
                                    "than analysis.min_configurations = 1000")
    # a benchmark without any result in scope has no model at all: predict says why
    models_artifact.write_models(models_artifact.not_analysed_record("resnet", "no results in scope", 0.9),
                                 paths.models_json("resnet"))
    message = _exit_message(predict.main, ["--benchmark", "resnet", "--accelerator", "H100", "--count", "8"],
                            capsys)
    assert "resnet was not analysed by the decide stage (no results in scope)" in message


def test_saved_models_round_trip_and_name_what_is_wrong(project: Path) -> None:
    path = paths.models_json("resnet")
    fitted = models_artifact.read_models(path)
    assert isinstance(fitted, forecast.FittedBenchmark)
    again = project / "again.json"
    models_artifact.write_models(models_artifact.models_record(fitted), again)
    assert again.read_text() == path.read_text()  # nothing lost on the way
    record = json.loads(path.read_text())
    broken = [({**record, "format": 2}, "format 2 is not 1"),
              ({key: value for key, value in record.items() if key != "calibration"},
               "the top level lacks calibration"),
              ({**record, "calibration": record["calibration"][1:]}, "calibration must hold one row per method"),
              ({**record, "forecaster": {**record["forecaster"], "drift_per_year": "fast"}},
               "forecaster.drift_per_year must be a finite number, got 'fast'"),
              ({**record, "status": "skipped"}, "reason is given exactly when skipped")]
    for value, expected in broken:
        path.write_text(json.dumps(value))
        with pytest.raises(ContractError, match=re.escape(expected)):
            models_artifact.read_models(path)
    path.write_text("{")
    with pytest.raises(ContractError, match="is not valid JSON"):
        models_artifact.read_models(path)


@pytest.mark.parametrize("main", [predict.main, recommend.main])
def test_predict_and_recommend_follow_the_command_line_conventions(main, project: Path, capsys) -> None:
    before = sorted(path.stat().st_mtime_ns for path in project.rglob("*") if path.is_file())
    for flag in ("--help", "--version"):
        with pytest.raises(SystemExit) as exit_:
            main([flag])
        assert exit_.value.code == 0
    assert sorted(path.stat().st_mtime_ns for path in project.rglob("*") if path.is_file()) == before
    assert "unrecognized arguments: --nope" in _exit_message(main, ["--benchmark", "resnet", "--nope"], capsys)


def test_recommend_cli_names_the_analysed_benchmarks(project: Path, capsys) -> None:
    assert "unknown benchmark 'bert'; choose one of: resnet" in _exit_message(recommend.main, ["--benchmark", "bert"],
                                                                               capsys)


def _render(fragment: dict, **options: bool) -> str:
    """The fragment inside a benchmark's <h2> section, as report.html.j2 includes it."""
    environment = jinja2.Environment(loader=jinja2.PackageLoader("pipeline.report", "templates"),
                                     autoescape=jinja2.select_autoescape(["html", "j2"]),
                                     undefined=jinja2.StrictUndefined, **options)
    return environment.from_string('<section><h2>resnet</h2>{% with decide = fragment %}'
                                   '{% include "decide.html.j2" %}{% endwith %}</section>').render(fragment=fragment)


def test_stage_writes_metrics_figures_and_a_report_fragment(project: Path) -> None:
    table = pd.read_parquet("data/processed/configurations.parquet")
    hostile = table.iloc[[0]].assign(accelerator_family="<script>alert(1)</script>", system="x")
    pd.concat([table, hostile]).to_parquet("data/processed/configurations.parquet")  # must reach the report escaped
    decide_stage.main([])
    summary = json.loads(paths.decide_json("resnet").read_text())
    assert summary["status"] == "ok" and summary["n_families_modelled"] == 2
    # scalars, tables as nested lists, and the backtest's summary
    assert all(not isinstance(value, dict) for key, value in summary.items() if key != "backtest")
    assert summary["backtest"]["model_n"] == 9  # v4.0 from v3.0 (see the metrics test)
    h100 = next(family for family in summary["families"] if family["family"] == "H100")
    assert h100["exponent_b"] == pytest.approx(-0.9)
    assert h100["break_even_count"] == pytest.approx(8 * 0.7 ** -10)  # (n/8)**-0.1 = 0.7 at n = 283
    assert h100["break_even_beyond_published"] and h100["loco_median_ape_pct"] < 5  # the 2% round spread
    assert [family["family"] for family in summary["not_modelled"]] == ["Gaudi2", "<script>alert(1)</script>"]
    for name in decide.FIGURES:
        assert paths.decide_figure("resnet", decide.figure_name(name)).read_bytes().startswith(b"\x89PNG")

    section = decide_section.report_section("resnet", decide_section.load_summary("resnet"))
    html = _render(section)
    assert set(re.findall(r"<h(\d)", html)) == {"2", "3"} and html.count("<h2>") == 1
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert html.count("data:image/png;base64,") == 3 and "Gaudi2" in html
    assert _render(section, trim_blocks=True, lstrip_blocks=True).count("<h3") == \
        html.count("<h3") == 6  # the report renders with trim_blocks and lstrip_blocks


def test_metrics_hold_the_backtest_headline_and_the_loco_error(project: Path) -> None:
    decide_stage.main([])
    metrics = decide_section.metrics_of(decide_section.load_summary("resnet"))
    # v4.0 forecast from v3.0 alone (no drift yet): every v4.0 time is the v3.0 one / 1.02^2, so each of the
    # nine forecasts (H100 5, A100 3, Gaudi2 1) is 1.02^2 - 1 = 4.04% too high. Gaudi2's v4.1 result repeats its
    # v3.0 time (x 1.02) exactly: republished, left out, so v4.0 is the latest fold.
    assert metrics["backtest_n"] == 9 and metrics["backtest_median_ape_pct"] == round(100 * (1.02 ** 2 - 1), 2)
    assert metrics["latest_fold"] == "v4.0" and metrics["latest_fold_n"] == 9
    assert metrics["naive_median_ape_pct"] == metrics["model_median_ape_pct_vs_naive"] == 4.04
    assert metrics["better"] == "model"  # a tie goes to the model
    assert metrics["loco_n"] == 16 and 0 < metrics["loco_median_ape_pct"] < 5
    assert all(not isinstance(value, (list, dict)) for value in metrics.values())
    assert decide_section.metrics_of(None) == {"status": "missing"}


def test_a_benchmark_without_enough_results_is_skipped_with_outputs(project: Path) -> None:
    params = yaml.safe_load(Path("params.yaml").read_text())
    params["analysis"]["min_configurations"] = 100
    Path("params.yaml").write_text(yaml.safe_dump(params))
    decide_stage.main([])
    summary = json.loads(paths.decide_json("resnet").read_text())
    assert summary["status"] == "skipped" and "fewer than analysis.min_configurations" in summary["reason"]
    assert all(paths.decide_figure("resnet", decide.figure_name(name)).is_file() for name in decide.FIGURES)
    sections = {name: decide_section.report_section(name, decide_section.load_summary(name))
                for name in ("resnet", "bert")}
    assert "No scaling model for resnet" in _render(sections["resnet"])
    assert "the decide stage has not run" in _render(sections["bert"])


# --- the real data ------------------------------------------------------------------------------------------------

REAL_CONFIGURATIONS = ROOT / "data/processed/configurations.parquet"


@pytest.mark.skipif(not REAL_CONFIGURATIONS.is_file(), reason="the pipeline has not produced configurations")
def test_real_resnet_models_are_accurate_where_there_is_data() -> None:
    analysis = Analysis.model_validate(yaml.safe_load((ROOT / "params.yaml").read_text())["analysis"])
    frame = scaling.model_inputs(pd.read_parquet(REAL_CONFIGURATIONS), analysis, "resnet")
    assessments = scaling.assess_benchmark(frame, SETTINGS)
    for family in ("A100", "H100"):
        assessment = assessments[family]
        assert assessment.trusted and assessment.loco.n == assessment.n_points
        assert assessment.loco.median_ape_pct < 20 and assessment.loro.median_ape_pct < 20
        assert 0.75 <= assessment.loco.coverage <= 1.0  # a 90% interval roughly holds


def test_recommend_names_the_original_of_a_republished_result() -> None:
    """With `analysis.republished: include` the ranking holds republished results; recommend says what they are."""
    ranking = pd.DataFrame({"rank": [1, 2], "round": ["v5.1", "v5.0"], "submitter": ["NVIDIA", "NVIDIA"],
                            "system": ["tyche_new", "tyche"], "accelerator_family": "GB200",
                            "accelerator_count": 72.0, "time_to_train_min": 10.0, "accelerator_hours": 12.0,
                            "scaling_efficiency": float("nan"), "score": 0.5,
                            "republished_of": ["v5.0/NVIDIA/tyche", float("nan")]})
    details = recommend.published_candidates(ranking)["detail"].tolist()
    assert details[0].endswith("; republished from v5.0 (the result of v5.0 NVIDIA tyche)")
    assert "republished" not in details[1]
