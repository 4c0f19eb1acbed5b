"""`python -m pipeline.commands.predict` on a scratch project of synthetic resnet results whose decide stage has
run (`tests.conftest.decide_project`): the forecast with its interval, trust and nearest results, --json and --from,
its answers exactly decide.json's, the cost of the forecast and the measured energy beside it, and each mistake
named (exit 1)."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
import yaml

from pipeline.analysis.forecasting import models_artifact
from pipeline.analysis.forecasting.answers import FittedBenchmark
from pipeline.analysis.pricing import price_table as pt
from pipeline.analysis.pricing.costs import COST_LABEL
from pipeline.analysis.pricing.electricity import DEFAULT_ELECTRICITY_PRICE
from pipeline.commands import predict
from pipeline.core import paths
from tests.conftest import add_energy, exit_message, run_stage


def test_predict_cli_prints_the_forecast_interval_trust_and_nearest_results(decide_project: Path, capsys) -> None:
    predict.main(["--benchmark", "resnet", "--accelerator", "H100", "--count", "64"])
    out = capsys.readouterr().out
    # anchored on v4.0 (times / 1.02), then the drift the model applies (half its own 1.02^-2 per year, shrunk
    # towards the later steps of every benchmark) over the 0.9 years to the round after v4.1
    fitted = models_artifact.read_models(decide_project / "reports/decide/resnet.models.json")
    assert isinstance(fitted, FittedBenchmark) and fitted.forecaster.drift_per_year < 0
    expected = 100 * 8 ** -0.9 / 1.02 * math.exp(fitted.forecaster.drift_per_year * 0.9)
    assert f"forecast time to train {expected:.3g} min" in out
    assert "in the round after v4.1" in out and "method: model (family)" in out
    nearest = out.split("by accelerator count:\n")[1].splitlines()
    assert all(" 64 " in line for line in nearest[1:3]) and " 32 " in nearest[3]
    predict.main(["--benchmark", "resnet", "--accelerator", "H100", "--count", "1024"])
    assert "1024 accelerators is outside the published 8 to 128" in capsys.readouterr().out


def test_predict_json_and_from_file_answer_one_object_per_row(decide_project: Path, capsys) -> None:
    queries = decide_project / "queries.csv"
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


def test_a_family_new_to_the_benchmark_is_answered_from_a_sibling_untrusted(decide_project: Path, capsys) -> None:
    # three families are too few to regress on specifications (MIN_SPEC_FAMILIES): B200 learns from its sibling
    predict.main(["--benchmark", "resnet", "--accelerator", "B200", "--count", "8", "--json"])
    found = json.loads(capsys.readouterr().out)
    assert found["kind"] == "sibling" and not found["trusted"] and found["specification_based"]
    assert found["low_min"] < found["predicted_min"] < found["high_min"]
    # the answer names what it stands on: H100's curve, times the law chosen on earlier first appearances (none
    # here: the simplest, BF16 compute), and the precision it assumes
    assert (f"learned from H100, its vendor's sibling: its count curve and drift on resnet, times the ratio of their "
            f"dense BF16 peaks ({989 / 2250:.3f} of its time; the bf16 compute law, no earlier first appearance to "
            f"choose on: the simplest law; the forecast assumes BF16 training)" in " ".join(found["notes"]))


def test_a_family_without_a_sibling_names_its_stand_in_as_a_weaker_guide(decide_project: Path, capsys) -> None:
    predict.main(["--benchmark", "resnet", "--accelerator", "MI300X", "--count", "8"])
    out = capsys.readouterr().out
    assert ("note: learned from H100, another vendor's family standing in (no AMD family has results on resnet; a "
            f"weaker guide): its count curve and drift on resnet, times the geometric mean of the ratios of their peak "
            f"dense BF16 TFLOPS and memory bandwidth ({math.sqrt(989 / 1307 * 3.35 / 5.3):.3f} of its time; the "
            f"compute and bandwidth law, kept for another vendor's family; the forecast assumes BF16 training)") in out


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
    (["--from", "params.yaml", "--count", "8"], "leave out --benchmark"),
    (["--benchmark", "resnet", "--accelerator", "H100", "--count", "8", "--until", "2024"],
     "--until: '2024' is not a round in this build's data; choose one of: v3.0, v4.0, v4.1"),
    (["--benchmark", "resnet", "--accelerator", "H100", "--count", "8", "--until", "v9.9"],
     "--until: 'v9.9' is not a round in this build's data"),
    # a round MLCommons published that the data lacks is not called unpublished (issue 53)
    (["--benchmark", "resnet", "--accelerator", "H100", "--count", "8", "--until", "v3.1"],
     "--until: MLPerf Training v3.1 was published November 2023 but is not in this build's data"),
])
def test_predict_cli_mistakes_exit_1_with_the_valid_choices(decide_project: Path, capsys, argv: list[str],
                                                            expected: str) -> None:
    assert expected in exit_message(predict.main, argv, capsys)


def test_predict_from_a_malformed_table_says_what_it_needs(decide_project: Path, capsys) -> None:
    bad = decide_project / "bad.csv"
    bad.write_text("benchmark,accelerator\nresnet,H100\n")
    assert "(missing: count)" in exit_message(predict.main, ["--from", str(bad)], capsys)
    bad.write_text("benchmark,accelerator,count\nresnet,H100,8\nresnet,H100,-2\n")
    with pytest.raises(SystemExit) as exit_:
        predict.main(["--from", str(bad)])
    captured = capsys.readouterr()
    assert exit_.value.code == 1 and "1 of 2 rows" in captured.err and "(lines 3)" in captured.err
    assert captured.out.startswith("line 2: resnet, H100 (SXM) x 8: forecast")  # the valid row is answered
    assert "line 3: error: count must be a positive whole number of accelerators, got '-2'" in captured.out


def test_predict_from_answers_every_valid_row_and_reports_each_invalid_one(decide_project: Path, capsys) -> None:
    queries = decide_project / "queries.csv"
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


def test_predict_answers_exactly_what_decide_json_states(decide_project: Path, capsys) -> None:
    forecasts = json.loads((decide_project / paths.decide_json("resnet")).read_text())["forecasts"]
    # one per family and form factor, most published first
    assert [(f["accelerator"], f["count"]) for f in forecasts] == [("H100", 128), ("A100", 64), ("Gaudi2", 8)]
    for stated in forecasts:
        predict.main(["--benchmark", "RESNET", "--accelerator", stated["accelerator"], "--count",
                      f"{stated['count']:g}", "--form-factor", stated["form_factor"], "--json"])
        answered = json.loads(capsys.readouterr().out)
        assert {key: answered[key] for key in stated} == stated  # and its cost and measured energy beside it


def test_a_benchmark_the_decide_stage_skipped_is_never_trusted(decide_project: Path, capsys) -> None:
    params = yaml.safe_load(Path("params.yaml").read_text())
    params["analysis"]["min_configurations"] = 1000
    Path("params.yaml").write_text(yaml.safe_dump(params))
    run_stage("decide", cwd=decide_project)
    predict.main(["--benchmark", "resnet", "--accelerator", "H100", "--count", "64", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert not result["trusted"]
    assert result["reasons"][0] == ("the decide stage did not analyse resnet: 19 configurations in scope, fewer "
                                    "than analysis.min_configurations = 1000")
    # a benchmark without any result in scope has no model at all: predict says why
    models_artifact.write_models(models_artifact.not_analysed_record("resnet", "no results in scope", 0.9),
                                 paths.models_json("resnet"))
    message = exit_message(predict.main, ["--benchmark", "resnet", "--accelerator", "H100", "--count", "8"],
                            capsys)
    assert "resnet was not analysed by the decide stage (no results in scope)" in message


@pytest.mark.usefixtures("gaudi2_unpriced")
def test_predict_carries_the_cost_of_the_forecast(decide_project: Path, capsys) -> None:
    predict.main(["--benchmark", "resnet", "--accelerator", "H100", "--count", "64", "--json"])
    answer = json.loads(capsys.readouterr().out)
    cost, current = answer["cost"], pt.current_prices()
    h100 = current.loc[(current["family"] == "H100") & (current["price_type"] == "on-demand"),
                       "price_per_accelerator_hour"]  # a range is of one price type, on-demand by default
    hours = 64 * answer["predicted_min"] / 60
    assert cost["label"] == COST_LABEL and cost["cost_basis"] == "public"
    assert cost["accelerator_hours"] == pytest.approx(hours, rel=1e-4)
    assert (cost["cost_low_usd"], cost["cost_high_usd"]) == pytest.approx((hours * h100.min(), hours * h100.max()),
                                                                          rel=1e-4)
    assert cost["interval_low_usd"] == pytest.approx(64 * answer["low_min"] / 60 * h100.min(), rel=1e-4)
    assert cost["interval_high_usd"] == pytest.approx(64 * answer["high_min"] / 60 * h100.max(), rel=1e-4)
    assert "energy_cost_usd" not in cost and answer["measured_energy"] == []  # a forecast measures nothing
    predict.main(["--benchmark", "resnet", "--accelerator", "H100", "--count", "64"])
    out = capsys.readouterr().out
    assert re.search(rf"^cost \({COST_LABEL}\): [\d.,]+ to [\d.,]+ USD \(.+\) for [\d.]+ accelerator-hours of "
                     rf"hardware time at the forecast; over the interval [\d.,]+ to [\d.,]+ USD$", out, re.MULTILINE)
    assert "energy" not in out.split("by accelerator count")[1]  # no measured energy: no energy column
    predict.main(["--benchmark", "resnet", "--accelerator", "Gaudi2", "--count", "16"])
    assert "cost: no public price for this family (give yours with --prices)" in capsys.readouterr().out
    prices = decide_project / "mine.yaml"
    prices.write_text("Gaudi2: 2.0\n")
    predict.main(["--benchmark", "resnet", "--accelerator", "Gaudi2", "--count", "16", "--prices", str(prices),
                  "--json"])
    cost = json.loads(capsys.readouterr().out)["cost"]
    assert cost["cost_basis"] == "user" and cost["cost_low_usd"] == pytest.approx(cost["accelerator_hours"] * 2.0)


def test_predict_shows_the_measured_energy_of_the_nearest_results(decide_project: Path, capsys) -> None:
    add_energy(decide_project, {"H100-SXM-64-1": (3.0, "DC")})
    predict.main(["--benchmark", "resnet", "--accelerator", "H100", "--count", "64"])
    out = capsys.readouterr().out
    table = out.split("by accelerator count (energy: measured by the result on its row):\n")[1].splitlines()
    assert "energy_kwh" in table[0] and "power_measurement" in table[0]
    assert re.search(r"H100-SXM-64-1 .* 3 +DC +0\.438", table[1] + table[2])
    assert "energy: measured by MLPerf power results" in out
    predict.main(["--benchmark", "resnet", "--accelerator", "H100", "--count", "64", "--json"])
    assert json.loads(capsys.readouterr().out)["measured_energy"] == [
        {"round": "v4.0", "submitter": "Acme", "system": "H100-SXM-64-1", "accelerator_count": 64, "energy_kwh": 3.0,
         "power_measurement": "DC", "energy_cost_usd": pytest.approx(3.0 * DEFAULT_ELECTRICITY_PRICE.per_kwh)}]
