"""Decision support: the decide stage and its page fragment, break-even, recommendations, price files and the
predict and recommend commands (the model itself is tested in tests/analysis/test_forecast.py).

Synthetic families follow exact power laws, so the forecasts and the break-even counts can be checked by hand;
one test runs on the real ranking when the pipeline has produced it.
"""
from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import jinja2
import numpy as np
import pandas as pd
import pytest
import yaml

from pipeline.analysis import decide, forecast, models_artifact
from pipeline.analysis import ranking as rank
from pipeline.analysis.configurations import republished_of
from pipeline.analysis.prices import load_prices
from pipeline.analysis.scope import in_scope
from pipeline.commands import predict, recommend
from pipeline.core import paths
from pipeline.core.errors import ContractError, ParamsError, UsageError
from pipeline.report import decide_section
from pipeline.settings import Analysis, Decide, settings_from
from tests.conftest import ROOT, configurations, run_stage

DECIDE_PARAMS = {"efficiency_floor": 0.7, "interval": 0.9,
                 # The synthetic laws are exact, so the first folds' uncalibrated intervals have no width and hold
                 # nothing: any coverage passes here (tests/analysis/test_forecast.py tests the coverage condition).
                 "trust": {"min_rounds": 2, "min_backtest_points": 5, "max_error": 0.2, "max_count_factor": 1,
                           "coverage": [0.01, 1.0]}}
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
    return forecast.model_inputs(configurations(rows), CLOSED_RESNET, "resnet")


# --- break-even ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("count", "beyond", "text"), [
    (40.0, False, "40"), (100.0, True, "100 (extrapolated)"),
    (300.0, True, "not below the floor up to 256 (4× the largest published)"),
    (None, True, "not below the floor up to 256 (4× the largest published)"),
])
def test_break_even_far_past_the_published_counts_is_not_given_as_a_number(count: float | None, beyond: bool,
                                                                          text: str) -> None:
    unit = decide.UnitRecord.model_construct(break_even_count=count, break_even_beyond_published=beyond,
                                             count_max=64.0)  # the fields the text reads
    assert decide_section.break_even_text(unit) == text


def test_the_break_even_comes_from_the_forecast_curve() -> None:
    # t = 60 / sqrt(n) in v3.0 and v4.0: measured from the series' base of 2 (the single accelerator is no base),
    # the curve's efficiency is (n / 2)**-0.5, 0.7 at n = 2 / 0.49 = 4.08; the data first fall below it at 8
    frame = family_frame(power_law("TPU-v4", [1, 2, 4, 8], 60.0, -0.5))
    points = pd.DataFrame(columns=forecast.POINT_COLUMNS)
    fitted = forecast.fit_benchmark("resnet", frame, points, 0.9)
    [unit] = decide.unit_records(fitted, frame, 0.7, SETTINGS.trust)
    assert unit.reference_count == 2.0
    assert unit.break_even_count == pytest.approx(2 * 0.7 ** -2) and not unit.break_even_beyond_published
    assert (unit.observed_last_count_at_floor, unit.observed_first_count_below_floor) == (4.0, 8.0)
    assert unit.break_even_agreement == decide.AGREE
    assert unit.slope_at_count_min == pytest.approx(-0.5, abs=1e-5) and unit.latest_round == "v4.0"
    assert [row.model_efficiency for row in unit.doubling] == pytest.approx([2 ** 0.5, 1.0, 2 ** -0.5, 0.5])
    assert not unit.trusted and "no backtest" not in " ".join(unit.reasons)  # one rule: no evidence, no trust


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
    # efficiency.py: speed-up over the smallest multi-accelerator member (2) / (count / 2) = (n / 2)**-0.5; the
    # single accelerator is below the base and has none
    assert observed["observed_efficiency"].tolist()[1:] == pytest.approx([1.0, 2 ** -0.5, 0.5])
    assert math.isnan(observed["observed_efficiency"].iloc[0])
    assert observed["observed_doubling_speedup"].dropna().tolist() == pytest.approx([math.sqrt(2)] * 3)
    assert decide.first_count_below(observed["observed_efficiency"], 0.7) == 8.0  # 0.707 at 4 is above
    assert decide.last_count_at_floor(observed["observed_efficiency"], 0.7, 8.0) == 4.0


def test_a_lone_single_accelerator_of_another_system_is_no_base() -> None:
    """Issue 23: a 1 x PCIe card of another server (396 min) set the base of a family's break-even. A series of
    one system model scales t = 32 (n / 8)**-0.8 from 8 to 128 accelerators (efficiency (n / 8)**-0.2, 0.7 at
    8 x 0.7**-5 = 47.6); the lone card, 4 times slower per accelerator, changes neither break-even."""
    series = power_law("A100", [8, 16, 32, 64, 128], 32.0, -0.8, form_factor="PCIe", spread=1.0)
    series = [{**row, "host_cpu_model": "Xeon 8362", "accelerator_memory_gib": 80.0} for row in series]
    lone = [{**series[0], "system": "one-card", "accelerator_count": 1.0, "time_to_train_min": 396.0,
             "host_cpu_model": "Xeon 8380"}]
    frame = family_frame(series + lone)
    fitted = forecast.fit_benchmark("resnet", frame, pd.DataFrame(columns=forecast.POINT_COLUMNS), 0.9)
    [unit] = decide.unit_records(fitted, frame, 0.7, SETTINGS.trust)
    assert unit.count_min == 1.0 and unit.reference_count == 8.0
    assert (unit.observed_last_count_at_floor, unit.observed_first_count_below_floor) == (32.0, 64.0)
    assert 32.0 <= unit.break_even_count <= 64.0 and unit.break_even_agreement == decide.AGREE
    assert "between 32 and 64" in unit.break_even_note


def _observed(efficiency: dict[float, float], results: int = 3) -> pd.DataFrame:
    return pd.DataFrame({"n_results": results, "observed_efficiency": pd.Series(efficiency)})


@pytest.mark.parametrize(("model", "efficiency", "agreement", "words"), [
    (24.0, {8: 1.0, 16: 0.8, 32: 0.6}, decide.AGREE, "between 16 and 32"),
    (100.0, {8: 1.0, 16: 0.8, 32: 0.6}, decide.DISAGREE, "scales better than the series measured at 32"),
    (10.0, {8: 1.0, 16: 0.8, 32: 0.6}, decide.DISAGREE, "scales worse than the series measured at 16"),
    (40.0, {8: 1.0, 16: 0.6, 32: 0.8}, decide.DISAGREE, "cross the floor more than once"),
    (None, {8: 1.0, 16: 0.8}, decide.AGREE, "no series falls below the floor up to 16"),
    (12.0, {8: 1.0, 16: 0.8}, decide.DISAGREE, "stay above it"),
    (30.0, {}, decide.UNOBSERVED, "no scaling series"),
])
def test_model_and_observed_break_even_agree_or_say_why(model: float | None, efficiency: dict[float, float],
                                                         agreement: str, words: str) -> None:
    curve = forecast.CountCurve(np.log([8.0, 64.0]), np.log([30.0, 30.0 / 8 ** 0.8]), -0.8)
    found, note = decide.compare_break_even(model, _observed(efficiency), 0.7, 8.0, curve)
    assert found == agreement and words in note


def test_a_crossing_on_few_results_is_named() -> None:
    curve = forecast.CountCurve(np.log([8.0, 64.0]), np.log([30.0, 30.0 / 8 ** 0.8]), -0.8)
    _, note = decide.compare_break_even(100.0, _observed({8: 1.0, 16: 0.8, 32: 0.6}, results=1), 0.7, 8.0, curve)
    assert "rests on 1 result at 32" in note


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
    assert ordered["rank"].tolist() == [1, 2, 3]  # the rank printed is the order listed
    assert "below (past the break-even)" in ordered.loc[0, "reason"]


def test_costs_use_the_price_table_and_impossible_constraints_say_what_to_relax() -> None:
    # Gaudi2 has no public price (tests/analysis/test_costs.py tests the public prices)
    candidates = recommend.with_costs(_candidates().replace({"accelerator_family": {"A100": "Gaudi2"}}),
                                      {"H100": 2.0})
    assert candidates["cost_low_usd"].tolist()[1:] == pytest.approx([6.4, 4.8])
    assert math.isnan(candidates["cost_low_usd"].iloc[0])  # no price for Gaudi2: never meets a budget
    constraints = recommend.constraints_of(8, 5.0, None)
    assert recommend.recommend(candidates, constraints, 0.7).empty
    message = recommend.why_infeasible(candidates, constraints)
    assert "--max-accelerators 8: relax it to 64 accelerators (published b)" in message
    assert "--deadline-min 5: relax it to 30 min (published a)" in message
    budget = recommend.constraints_of(None, None, 100.0)
    chosen = recommend.recommend(candidates, budget, 0.7)
    assert recommend.left_out(candidates, chosen, budget) == [
        "Gaudi2 (1 candidate): --max-cost 100: no public price for it (nor in your price file), so no cost to compare"]
    few = recommend.constraints_of(32, None, None)
    assert recommend.left_out(_candidates(), recommend.recommend(_candidates(), few, 0.7), few) == []


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

@pytest.fixture(scope="module")
def built_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """params.yaml, configurations.parquet and ranking.csv of three families: H100 and A100 follow power laws
    (H100: t = 100 (n/8)^-0.9 at 8 to 128; A100: t = 200 (n/8)^-0.8 at 8, 32 and 64, not 16), Gaudi2 was only
    published at eight accelerators; then the backtest and decide stages' outputs."""
    tmp_path = tmp_path_factory.mktemp("decide")
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    # Gaudi2's v4.1 result repeats its v3.0 one: with `include` it is fitted and forecast (flagged a rerun).
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
    run_stage("backtest", cwd=tmp_path)
    run_stage("decide", cwd=tmp_path)  # saves the models predict and recommend answer from
    return tmp_path


@pytest.fixture
def project(built_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of `built_project` for the test alone, as the working folder."""
    shutil.copytree(built_project, tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
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
    assert [(a["line"], a["accelerator"], a["count"], a["kind"]) for a in answers] == [
        (2, "H100", 64, "family"), (3, "Gaudi2", 16, "family level, benchmark scaling")]
    assert all(isinstance(a["count"], int) for a in answers)  # counts are whole numbers in JSON
    assert all({"predicted_min", "low_min", "high_min", "trusted", "reasons", "rounds", "method"} <= set(a)
               for a in answers)
    assert answers[0]["low_min"] < answers[0]["predicted_min"] < answers[0]["high_min"]
    assert answers[1]["specification_based"] and not answers[0]["specification_based"]
    assert answers[0]["rounds"] == ["v3.0", "v4.0", "v4.1"]


@pytest.mark.parametrize(("argv", "expected"), [
    (["--benchmark", "resnet", "--accelerator", "H900", "--count", "8"], "families with results: A100, Gaudi2, H100"),
    (["--benchmark", "resnet", "--accelerator", "H100", "--count", "0"], "count must be a positive whole number"),
    (["--benchmark", "resnet", "--accelerator", "H100", "--count", "2000000"], "refused: more than 1,000,000"),
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
     "--until '2024' is not a published round; choose one of: v3.0, v4.0, v4.1"),
    (["--benchmark", "resnet", "--accelerator", "H100", "--count", "8", "--until", "v9.9"],
     "--until 'v9.9' is not a published round"),
    (["--benchmark", "resnet", "--accelerator", "H100", "--count", "8", "--until", "v3.1"],
     "--until 'v3.1' is not a published round"),
])
def test_predict_cli_mistakes_exit_1_with_the_valid_choices(project: Path, capsys, argv: list[str],
                                                            expected: str) -> None:
    assert expected in _exit_message(predict.main, argv, capsys)


def test_predict_from_a_malformed_table_says_what_it_needs(project: Path, capsys) -> None:
    bad = project / "bad.csv"
    bad.write_text("benchmark,accelerator\nresnet,H100\n")
    assert "(missing: count)" in _exit_message(predict.main, ["--from", str(bad)], capsys)
    bad.write_text("benchmark,accelerator,count\nresnet,H100,8\nresnet,H100,-2\n")
    with pytest.raises(SystemExit) as exit_:
        predict.main(["--from", str(bad)])
    captured = capsys.readouterr()
    assert exit_.value.code == 1 and "1 of 2 rows" in captured.err and "(lines 3)" in captured.err
    assert captured.out.startswith("line 2: resnet, H100 (SXM) x 8: forecast")  # the valid row is answered
    assert "line 3: error: count must be a positive whole number of accelerators, got '-2'" in captured.out


def test_predict_from_answers_every_valid_row_and_reports_each_invalid_one(project: Path, capsys) -> None:
    queries = project / "queries.csv"
    queries.write_text("benchmark,accelerator,count\nresnet,H100,64\nresnet,H100,2.5\nimagenet,H100,8\n"
                       "resnet,H900,8\nresnet,H100,2000000\n,H100,8\nresnet,A100,16\n")
    with pytest.raises(SystemExit) as exit_:
        predict.main(["--from", str(queries), "--json"])
    captured = capsys.readouterr()
    rows = [json.loads(line) for line in captured.out.splitlines()]
    assert exit_.value.code == 1 and "6 of 7 rows" not in captured.err and "5 of 7 rows" in captured.err
    assert [row["line"] for row in rows] == [2, 3, 4, 5, 6, 7, 8]  # in the file's order
    answered = {row["line"]: row for row in rows if "error" not in row}
    assert sorted(answered) == [2, 8] and answered[8]["accelerator"] == "A100"
    errors = {row["line"]: row["error"] for row in rows if "error" in row}
    assert "positive whole number" in errors[3] and "unknown benchmark 'imagenet'" in errors[4]
    assert "unknown accelerator family 'H900'" in errors[5] and "refused" in errors[6]
    assert errors[7] == "benchmark is empty"


def test_recommend_cli_lists_published_and_predicted_with_reasons(project: Path, capsys) -> None:
    recommend.main(["--benchmark", "resnet", "--max-accelerators", "64", "--prices",
                    str(ROOT / "examples/prices.yaml"), "--top", "30"])
    out = capsys.readouterr().out
    assert "public list prices of pipeline/analysis/price_table.csv" in out and "overrides it" in out
    listed = re.findall(r"^\s*\d+\. \[(\w+)\] (.+?):", out, flags=re.MULTILINE)
    kinds = {kind for kind, _ in listed}
    assert kinds == {"published", "predicted"}
    # the one unpublished power of two inside a family's range
    assert [label for kind, label in listed if kind == "predicted"] == ["A100 SXM x 16"]
    assert "not predicted (forecast not trusted): Gaudi2 SXM" in out
    assert all("x 128" not in label for _, label in listed)  # 128 breaks --max-accelerators
    assert out.count("    why: ") == len(listed)
    ranks = [int(rank) for rank in re.findall(r"^\s*(\d+)\. \[", out, flags=re.MULTILINE)]
    assert ranks == list(range(1, len(ranks) + 1))  # listed in the order of the rank printed
    # resnet's last round is v4.0 in the catalogue: the round after v4.1 will not run it
    assert "note: resnet was retired from MLPerf Training after v4.0" in out


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
    (["--max-energy-kwh", "10"], "--max-energy-kwh: "),
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
    assert "H100 x 128, 8.09 min, 17.2 accelerator-hours, cost 34.5 USD (your price file), trade-off score 11.8" \
        in captured.out
    assert "MI300X (families with results: A100, Gaudi2, H100)" in captured.err  # known, without resnet results


def test_predict_answers_exactly_what_decide_json_states(project: Path, capsys) -> None:
    forecasts = json.loads((project / paths.decide_json("resnet")).read_text())["forecasts"]
    # one per family and form factor, most published first
    assert [(f["accelerator"], f["count"]) for f in forecasts] == [("H100", 128), ("A100", 64), ("Gaudi2", 8)]
    for stated in forecasts:
        predict.main(["--benchmark", "RESNET", "--accelerator", stated["accelerator"], "--count",
                      f"{stated['count']:g}", "--form-factor", stated["form_factor"], "--json"])
        answered = json.loads(capsys.readouterr().out)
        assert {key: answered[key] for key in stated} == stated  # and its cost and measured energy beside it


def test_a_benchmark_the_decide_stage_skipped_is_never_trusted(project: Path, capsys) -> None:
    params = yaml.safe_load(Path("params.yaml").read_text())
    params["analysis"]["min_configurations"] = 1000
    Path("params.yaml").write_text(yaml.safe_dump(params))
    run_stage("decide", cwd=project)
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
    broken = [({**record, "format": 1}, "format 1 is not 2"),
              ({**record, "method": "naive"}, "method must be one of model, monotone naive, blend"),
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
    """The fragment inside a benchmark's part of the methods page, as methods.html.j2 includes it."""
    environment = jinja2.Environment(loader=jinja2.PackageLoader("pipeline.report", "templates"),
                                     autoescape=jinja2.select_autoescape(["html", "j2"]),
                                     undefined=jinja2.StrictUndefined, **options)
    return environment.from_string('<section><h2>resnet</h2>{% with decide = fragment %}'
                                   '{% include "decide.html.j2" %}{% endwith %}</section>').render(fragment=fragment)


def test_stage_writes_chart_data_metrics_and_a_report_fragment(project: Path) -> None:
    table = pd.read_parquet("data/processed/configurations.parquet")
    hostile = table.iloc[[0]].assign(accelerator_family="<script>alert(1)</script>", system="x")
    pd.concat([table, hostile]).to_parquet("data/processed/configurations.parquet")  # must reach the report escaped
    run_stage("decide", cwd=project)
    summary = json.loads(paths.decide_json("resnet").read_text())
    assert summary["status"] == "ok" and summary["n_units"] == 4 and summary["method"] == forecast.MODEL
    # scalars, tables as nested lists, and the backtest's summary
    assert all(not isinstance(value, dict) for key, value in summary.items()
               if key not in ("backtest", "candidate_medians"))
    assert summary["backtest"]["answer_n"] == 10  # v4.0 from v3.0 (9), v4.1 from both (1; see the metrics test)
    h100 = next(unit for unit in summary["units"] if unit["family"] == "H100")
    # H100's own -0.9, pulled a little towards the pooled slope of H100 and A100 (-0.8)
    assert h100["exponent_b"] == pytest.approx(-0.9, abs=0.005) and h100["latest_round"] == "v4.0"
    # the data's slope -0.9 up to 128 (efficiency 16**-0.1 = 0.76 there), then the exponent b: 0.7 at n = 279
    b = h100["exponent_b"]
    assert h100["break_even_count"] == pytest.approx(128 * (0.7 / 16 ** -0.1) ** (-1 / (1 + b)), rel=0.01)
    assert h100["break_even_beyond_published"]
    hostile_unit = next(unit for unit in summary["units"] if unit["family"].startswith("<script>"))
    assert not hostile_unit["trusted"] and "results from 1 round (needs 2)" in hostile_unit["reasons"]
    assert [f["accelerator"] for f in summary["forecasts"]] == [unit["family"] for unit in summary["units"]]
    # the site's charts' data: H100's forecast band from half its smallest to twice its largest count, and the
    # backtest's answers
    counts = [row["accelerator_count"] for row in h100["band"]]
    assert counts[0] == max(1.0, h100["count_min"] / 2) and counts[-1] == 2 * h100["count_max"]
    assert all(row["low_min"] <= row["predicted_min"] <= row["high_min"] for row in h100["band"])
    assert len(summary["backtest_points"]) == summary["backtest"]["answer_n"]
    assert not list(paths.DECIDE.glob("*.png"))

    section = decide_section.fragment("resnet", decide_section.load_summary("resnet"))
    html = _render(section)
    assert set(re.findall(r"<h(\d)", html)) == {"2", "3"} and html.count("<h2>") == 1
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<img" not in html and "Gaudi2" in html
    # the catalogue's resnet ran last in v4.0: the round after v4.1 will not run it, and the page says so
    assert html.count("resnet was retired from MLPerf Training after v4.0, its last round") == 1
    assert _render(section, trim_blocks=True, lstrip_blocks=True).count("<h3") == \
        html.count("<h3") == 4  # the report renders with trim_blocks and lstrip_blocks


def test_metrics_hold_the_backtest_headline(project: Path) -> None:
    run_stage("decide", cwd=project)
    metrics = decide_section.metrics_of(decide_section.load_summary("resnet"))
    # v4.0 forecast from v3.0 alone (no drift yet): every v4.0 time is the v3.0 one / 1.02^2, so each of the
    # nine forecasts (H100 5, A100 3, Gaudi2 1) is 1.02^2 - 1 = 4.04% too high, the naive rule's too. Gaudi2's
    # v4.1 result repeats its v3.0 time (x 1.02): republished, and with `analysis.republished: include` (the
    # fixture's) forecast as a rerun, from v4.0 (/ 1.02) with half the drift of 1.02^-2 a year over 5/12 of a year,
    # 1.02^-(2 + 5/12) of the published time; the naive rule, v4.0's time scaled, 1.02^-2.
    assert metrics["backtest_n"] == 10 and metrics["backtest_median_ape_pct"] == round(100 * (1.02 ** 2 - 1), 2)
    assert metrics["naive_median_ape_pct"] == metrics["answer_median_ape_pct_vs_naive"] == 4.04
    assert metrics["better"] == "answer"  # a tie goes to the answer
    assert metrics["latest_fold"] == "v4.1" and metrics["latest_fold_n"] == 1
    # (the weak pull on v3.0's offset from v4.0's level, ROUND_PRIOR_WEIGHT, moves it by a few hundredths)
    assert metrics["latest_fold_median_ape_pct"] == pytest.approx(100 * (1 - 1.02 ** -(2 + 5 / 12)), abs=0.05)
    assert metrics["latest_fold_naive_median_ape_pct"] == round(100 * (1 - 1.02 ** -2), 2)
    assert metrics["trusted_n"] == 0 and metrics["trusted_p90_ape_pct"] is None  # no earlier evidence to trust
    assert metrics["method"] == "model" and metrics["n_units"] == 3
    assert all(not isinstance(value, (list, dict)) for value in metrics.values())
    assert decide_section.metrics_of(None) == {"status": "missing"}


def test_a_benchmark_without_enough_results_is_skipped_with_outputs(project: Path) -> None:
    params = yaml.safe_load(Path("params.yaml").read_text())
    params["analysis"]["min_configurations"] = 100
    Path("params.yaml").write_text(yaml.safe_dump(params))
    run_stage("decide", cwd=project)
    summary = json.loads(paths.decide_json("resnet").read_text())
    assert summary["status"] == "skipped" and "fewer than analysis.min_configurations" in summary["reason"]
    assert summary["backtest_points"] == [] and summary["units"] == []
    sections = {name: decide_section.fragment(name, decide_section.load_summary(name))
                for name in ("resnet", "bert")}
    assert "No forecasts for resnet: 19 configurations in scope" in _render(sections["resnet"])
    assert "the decide stage has not run" in _render(sections["bert"])


# --- the real data ------------------------------------------------------------------------------------------------

@pytest.mark.skipif(not (ROOT / "reports" / "decide" / "bert.json").is_file(), reason="the decide stage has not run")
def test_real_break_evens_are_like_for_like() -> None:
    """On the real outputs: every unit's break-even is measured from a multi-accelerator base where it has one,
    model and data agree or the unit says why, and BERT's A100 SXM (14 from a 1 x A100 PCIe run of another server
    before issue 23; the data cross the floor at 128) agrees with the data."""
    for path in sorted((ROOT / "reports" / "decide").glob("*.json")):
        if path.name.endswith(".models.json"):
            continue
        for unit in json.loads(path.read_text())["units"]:
            assert unit["reference_count"] >= 2 or unit["count_max"] < 2, (path.name, unit["family"])
            assert unit["break_even_agreement"] in (decide.AGREE, decide.DISAGREE, decide.UNOBSERVED)
            assert unit["break_even_note"]
    bert = json.loads((ROOT / "reports" / "decide" / "bert.json").read_text())
    a100 = next(u for u in bert["units"] if (u["family"], u["form_factor"]) == ("A100", "SXM"))
    assert a100["break_even_count"] > 32 and a100["break_even_agreement"] == decide.AGREE


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
