"""`pipeline.commands.recommend`: candidates scored by the ranking's own score, constraints and what to relax,
costs from the public table or your prices, energy limits on measured energy only; the command on a scratch project
of synthetic resnet results whose decide stage has run (`tests.conftest.decide_project`)."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipeline.analysis.forecasting import models_artifact
from pipeline.analysis.pricing import price_table as pt
from pipeline.analysis.pricing.costs import COST_LABEL, usd
from pipeline.analysis.pricing.electricity import DEFAULT_ELECTRICITY_PRICE
from pipeline.analysis.statistics import ranking as rank
from pipeline.commands import predict, recommend
from pipeline.core import paths
from pipeline.settings import settings_from
from tests.conftest import ROOT, add_energy, exit_message

CRITERIA = {"time_to_train_min": {"weight": 0.5, "direction": "cost"},
            "accelerator_hours": {"weight": 0.5, "direction": "cost"}}


def json_rows(capsys: pytest.CaptureFixture[str]) -> list[dict]:
    """The --json output: one object per line."""
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


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


@pytest.mark.usefixtures("gaudi2_unpriced")
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


def test_recommend_cli_lists_published_and_predicted_with_reasons(decide_project: Path, capsys) -> None:
    recommend.main(["--benchmark", "resnet", "--max-accelerators", "64", "--prices",
                    str(ROOT / "examples/prices.yaml"), "--top", "30"])
    out = capsys.readouterr().out
    assert "public list prices of pipeline/analysis/pricing/price_table.csv" in out and "overrides it" in out
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


def test_recommend_predicts_gaps_and_scores_them_on_the_published_scale(decide_project: Path) -> None:
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


def test_recommend_json_gives_one_object_per_candidate(decide_project: Path, capsys) -> None:
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
def test_recommend_cli_mistakes_exit_1_with_the_valid_choices(decide_project: Path, capsys, argv: list[str],
                                                              expected: str) -> None:
    assert expected in exit_message(recommend.main, ["--benchmark", "resnet", *argv], capsys)


def test_recommend_cli_names_the_analysed_benchmarks(decide_project: Path, capsys) -> None:
    assert "unknown benchmark 'bert'; choose one of: resnet" in exit_message(recommend.main, ["--benchmark", "bert"],
                                                                               capsys)


def test_family_names_and_price_keys_match_in_any_case(decide_project: Path, capsys, tmp_path: Path) -> None:
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


@pytest.mark.usefixtures("gaudi2_unpriced")
def test_recommend_shows_a_public_cost_for_every_priced_configuration(decide_project: Path, capsys) -> None:
    recommend.main(["--benchmark", "resnet", "--top", "30"])
    out = capsys.readouterr().out
    assert f"cost ({COST_LABEL}) = accelerator-hours x price per accelerator-hour" in out
    assert "accelerator-hours: hardware time (accelerators x time to train), not what you pay" in out
    listed = [line for line in out.splitlines() if re.match(r"^\s*\d+\. \[", line)]
    current = pt.current_prices()
    cheapest = current[current["price_type"] == "on-demand"].groupby("family")["price_per_accelerator_hour"].min()
    for line in listed:
        if " Gaudi2 x " in line:
            assert ", no public price, " in line
        else:
            assert re.search(r", cost [\d.,]+ to [\d.,]+ USD \([^)]+ to [^)]+\), ", line), line
    recommend.main(["--benchmark", "resnet", "--top", "30", "--json"])
    rows = json_rows(capsys)
    for row in rows:
        if row["accelerator_family"] in cheapest:
            assert row["cost_low_usd"] == pytest.approx(row["accelerator_hours"] * cheapest[row["accelerator_family"]])
            assert row["cost_low_usd"] <= row["cost_high_usd"] and row["cost_basis"] == "public"
        else:
            assert row["cost_basis"] == "none" and row["cost_low_usd"] is None


@pytest.mark.usefixtures("gaudi2_unpriced")
def test_max_cost_uses_the_public_table_and_your_prices_override_it(decide_project: Path, capsys) -> None:
    recommend.main(["--benchmark", "resnet", "--top", "30", "--json"])
    everything = json_rows(capsys)
    budgets = sorted(row["cost_budget_usd"] for row in everything if row["cost_budget_usd"] is not None)
    limit = budgets[len(budgets) // 2]
    recommend.main(["--benchmark", "resnet", "--top", "30", "--json", "--max-cost", f"{limit!r}"])
    captured = capsys.readouterr()
    chosen = [json.loads(line) for line in captured.out.splitlines()]
    assert chosen and all(row["cost_budget_usd"] <= limit for row in chosen)
    assert len(chosen) == sum(budget <= limit for budget in budgets)
    assert "Gaudi2 (3 candidates): --max-cost" in captured.err and "no public price for it" in captured.err
    # a prediction's budget is the cheapest price at the upper end of its interval
    for row in chosen:
        hours_high = row["accelerator_count"] * row["time_high_min"] / 60
        assert row["cost_budget_usd"] == pytest.approx(hours_high * row["cost_low_usd_per_accelerator_hour"])
    # your price file wins: at 0.001 USD per accelerator-hour every H100 meets a 1 USD budget, and Gaudi2 is priced
    prices = decide_project / "mine.yaml"
    prices.write_text("H100: 0.001\nGaudi2: 0.001\n")
    recommend.main(["--benchmark", "resnet", "--top", "30", "--max-cost", "1", "--prices", str(prices)])
    out = capsys.readouterr().out
    assert "your price file" in out and "overrides it for the families it names" in out
    h100 = [line for line in out.splitlines() if " H100 x " in line]
    assert len(h100) == sum(row["accelerator_family"] == "H100" for row in everything)
    assert all("USD (your price file)" in line for line in h100)
    assert any(" Gaudi2 x " in line for line in out.splitlines())


def test_max_energy_kwh_without_any_measured_energy_says_so(decide_project: Path, capsys) -> None:
    add_energy(decide_project, None)
    message = exit_message(recommend.main, ["--benchmark", "resnet", "--max-energy-kwh", "10"], capsys)
    assert "none of the 20 resnet candidates has measured energy" in message
    assert "benchmarks with measured energy: none" in message
    add_energy(decide_project, {"H100-SXM-64-1": (3.0, "DC")})
    message = exit_message(recommend.main, ["--benchmark", "resnet", "--family", "A100", "--max-energy-kwh", "10"],
                            capsys)
    assert "none of the 7 resnet A100 candidates has measured energy" in message
    assert "resnet families with measured energy: H100" in message
    message = exit_message(recommend.main, ["--benchmark", "resnet", "--max-energy-kwh", "-1"], capsys)
    assert "--max-energy-kwh must be positive" in message


def test_max_energy_kwh_keeps_measured_results_within_it(decide_project: Path, capsys) -> None:
    add_energy(decide_project, {"H100-SXM-64-1": (3.0, "DC"), "H100-SXM-128-1": (4.5, "AC and DC"),
                          "A100-SXM-8-1": (40.0, "AC")})
    recommend.main(["--benchmark", "resnet", "--max-energy-kwh", "10"])
    out = capsys.readouterr().out
    assert "measured energy: 3 of 19 published candidates (predictions: none)" in out
    assert f"energy cost ({COST_LABEL}) = kWh x {DEFAULT_ELECTRICITY_PRICE.per_kwh:g} USD/kWh" in out
    listed = re.findall(r"^\s*\d+\. \[(\w+)\] (\S+ \S+ \S+):", out, flags=re.MULTILINE)
    assert [label for _, label in listed] == ["v4.0 Acme H100-SXM-128-1", "v4.0 Acme H100-SXM-64-1"]
    assert f"energy 3 kWh measured, DC (energy cost {usd(3.0 * DEFAULT_ELECTRICITY_PRICE.per_kwh)} USD)" in out
    assert "A100 (7 candidates): --max-energy-kwh 10: its best is 40 kWh measured" in out
    assert "Gaudi2 (3 candidates): --max-energy-kwh 10: no measured energy" in out
    recommend.main(["--benchmark", "resnet", "--max-energy-kwh", "10", "--json"])
    rows = json_rows(capsys)
    assert [(row["energy_kwh"], row["power_measurement"]) for row in rows] == [(4.5, "AC and DC"), (3.0, "DC")]
    assert rows[1]["energy_cost_usd"] == pytest.approx(3.0 * DEFAULT_ELECTRICITY_PRICE.per_kwh)
