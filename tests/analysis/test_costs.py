"""Cost to train in the answers (issue 26 items 3 to 5): `pipeline.analysis.costs.training_costs` on a hand-made price
table, figures computed by hand; `recommend` showing a cost for every priced configuration, `--max-cost` on the
public table by default (your --prices overriding it), `--max-energy-kwh` on measured energy only; `predict`
carrying the forecast's cost and the nearest results' measured energy; every figure labelled derived.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipeline.analysis import price_table as pt
from pipeline.analysis.costs import (
    COST_COLUMNS,
    COST_LABEL,
    cost_text,
    measured_energy,
    training_costs,
    usd,
    with_measured_energy,
)
from pipeline.analysis.electricity import DEFAULT_ELECTRICITY_PRICE, electricity_price
from pipeline.commands import predict, recommend
from pipeline.core import paths
from pipeline.core.errors import ContractError, ParamsError
from pipeline.settings import settings_from
from tests.analysis import test_decide
from tests.analysis.test_decide import _exit_message
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def built_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/analysis/test_decide.py's scratch project (H100, A100 and Gaudi2 resnet results, the decide stage's
    models)."""
    return test_decide.built_project.__wrapped__(tmp_path_factory)


@pytest.fixture
def project(built_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return test_decide.project.__wrapped__(built_project, tmp_path, monkeypatch)


def _table() -> pd.DataFrame:
    """A hand-made price table. Current H100 prices per accelerator-hour: Lambda 2.49 (its 2.99 of 2025 is history),
    Google Cloud spot 24.0 / 8 = 3.0, AWS 55.04 / 8 = 6.88; A100: Google Cloud 3.67 alone; Gaudi2: none."""
    rows = [
        ("H100", "AWS", "p5.48xlarge", 8, 55.04, "instance-hour", "on-demand", "us-east-1", "2026-11-09"),
        ("H100", "Lambda", "H100 (per GPU)", 1, 2.99, "accelerator-hour", "on-demand", "unstated", "2025-01-01"),
        ("H100", "Lambda", "H100 (per GPU)", 1, 2.49, "accelerator-hour", "on-demand", "unstated", "2026-06-01"),
        ("H100", "Google Cloud", "a3-highgpu-8g", 8, 24.0, "instance-hour", "spot", "us-central1", "2026-07-30"),
        ("A100", "Google Cloud", "a2-highgpu-1g", 1, 3.67, "instance-hour", "on-demand", "us-central1", "2026-07-30"),
    ]
    frame = pd.DataFrame(rows, columns=["family", "provider", "instance_type", "accelerators_per_instance",
                                        "price_per_hour", "price_unit", "price_type", "region", "date"])
    frame = frame.assign(currency="USD", source=[f"https://example.org/{i}" for i in range(len(rows))],
                         note="a test row")
    return pt.validate(frame[pt.COLUMNS])


def _configurations() -> pd.DataFrame:
    return pd.DataFrame({"accelerator_family": ["H100", "A100", "Gaudi2", None, "H100"],
                         "accelerator_hours": [10.0, 2.0, 5.0, 1.0, math.nan],
                         "energy_kwh": [50.0, math.nan, 12.0, math.nan, math.nan]}, index=[10, 20, 30, 40, 50])


# ------------------------------------------------------------------------------------------------ the library

def test_training_costs_by_hand() -> None:
    costs = training_costs(_configurations(), table=_table(), electricity=electricity_price(0.2))
    assert list(costs.columns) == list(COST_COLUMNS)
    assert costs.dtypes.astype(str).to_dict() == COST_COLUMNS
    assert costs.index.tolist() == [10, 20, 30, 40, 50]  # on the configurations' index
    h100 = costs.loc[10]
    # 10 accelerator-hours x 2.49 (Lambda, the offer's newest price) and x 55.04 / 8 = 6.88 (AWS)
    assert (h100["cost_basis"], h100["cost_prices"]) == ("public", 3)
    assert (h100["cost_low_usd"], h100["cost_high_usd"]) == pytest.approx((24.9, 68.8))
    assert (h100["cost_low_provider"], h100["cost_low_price_type"], h100["cost_low_date"]) == (
        "Lambda", "on-demand", "2026-06-01")
    assert (h100["cost_high_provider"], h100["cost_high_instance"], h100["cost_high_date"]) == (
        "AWS", "p5.48xlarge", "2026-11-09")
    assert h100["cost_high_source"] == "https://example.org/0"
    assert h100["energy_cost_usd"] == pytest.approx(50 * 0.2)
    a100 = costs.loc[20]  # one price: both ends the same
    assert (a100["cost_low_usd"], a100["cost_high_usd"], a100["cost_prices"]) == (pytest.approx(7.34),
                                                                                  pytest.approx(7.34), 1)
    assert math.isnan(a100["energy_cost_usd"])  # not measured: no energy cost
    for index in (30, 40):  # Gaudi2 and a row without a family: no public price, no cost, no provider
        row = costs.loc[index]
        assert row["cost_basis"] == "none" and row["cost_prices"] == 0
        assert math.isnan(row["cost_low_usd"]) and pd.isna(row["cost_low_provider"])
    assert costs.loc[30, "energy_cost_usd"] == pytest.approx(12 * 0.2)  # energy cost needs no rental price
    assert costs.loc[50, "cost_basis"] == "public" and math.isnan(costs.loc[50, "cost_low_usd"])


def test_your_prices_override_the_table_for_the_families_they_name_only() -> None:
    costs = training_costs(_configurations(), {"H100": 2.0}, table=_table())
    assert costs.loc[10, ["cost_basis", "cost_low_usd", "cost_high_usd", "cost_low_provider", "cost_prices"]
                     ].tolist() == ["user", 20.0, 20.0, "your price file", 1]
    assert pd.isna(costs.loc[10, "cost_low_price_type"]) and pd.isna(costs.loc[10, "cost_low_date"])
    assert costs.loc[20, "cost_basis"] == "public"  # A100 keeps the table's price
    assert training_costs(_configurations(), {"Gaudi2": 1.5}, table=_table()).loc[30, "cost_low_usd"] == 7.5


def test_energy_cost_only_where_energy_is_measured() -> None:
    without = training_costs(_configurations().drop(columns="energy_kwh"), table=_table())
    assert without["energy_cost_usd"].isna().all() and str(without["energy_cost_usd"].dtype) == "float64"
    empty = training_costs(_configurations().assign(energy_kwh=None), table=_table())
    assert empty["energy_cost_usd"].isna().all()
    default = training_costs(_configurations(), table=_table())  # params default: the dated, sourced price
    assert default.loc[10, "energy_cost_usd"] == pytest.approx(50 * DEFAULT_ELECTRICITY_PRICE.per_kwh)
    with pytest.raises(ContractError, match="energy_kwh must be >= 0"):
        training_costs(_configurations().assign(energy_kwh=-1.0), table=_table())
    with pytest.raises(ContractError, match="need the columns accelerator_hours"):
        training_costs(_configurations().drop(columns="accelerator_hours"), table=_table())


def test_the_shipped_table_prices_the_families_it_lists_and_no_others() -> None:
    families = ["H100", "A100", "TPU-v4", "Gaudi2", "GB200"]
    costs = training_costs(pd.DataFrame({"accelerator_family": families, "accelerator_hours": 1.0}))
    current = pt.current_prices()
    for family, row in zip(families, costs.to_dict(orient="records")):
        prices = current.loc[current["family"] == family, "price_per_accelerator_hour"]
        if prices.empty:
            assert row["cost_basis"] == "none" and family in pt.families_without_price()
        else:
            assert (row["cost_low_usd"], row["cost_high_usd"]) == (prices.min(), prices.max())
            assert row["cost_prices"] == len(prices) and row["cost_low_provider"] and row["cost_high_provider"]


def test_cost_text_names_the_provider_and_price_type_at_each_end() -> None:
    costs = training_costs(_configurations(), table=_table()).to_dict(orient="records")
    assert cost_text(costs[0]) == "cost 24.9 to 68.8 USD (Lambda on-demand 2026-06-01 to AWS on-demand 2026-11-09)"
    assert cost_text(costs[2]) == "no public price"
    mine = training_costs(_configurations(), {"H100": 20.0}, table=_table()).to_dict(orient="records")
    assert cost_text(mine[0]) == "cost 200 USD (your price file)"


def test_measured_energy_is_joined_on_the_result() -> None:
    configurations = pd.DataFrame({"benchmark": ["bert", "bert", "gpt3"], "round": "v4.0", "submitter": "SMC",
                                   "system": ["a", "b", "a"], "energy_kwh": [1.5, None, 9.0],
                                   "power_measurement": ["DC", None, "AC"]})
    energy = measured_energy(configurations, "bert")
    assert energy.to_dict(orient="records") == [{"round": "v4.0", "submitter": "SMC", "system": "a",
                                                 "energy_kwh": 1.5, "power_measurement": "DC"}]
    ranking = pd.DataFrame({"round": ["v4.0", "v4.0"], "submitter": "SMC", "system": ["b", "a"]}, index=[7, 3])
    joined = with_measured_energy(ranking, energy)
    assert joined.index.tolist() == [7, 3] and joined["energy_kwh"].isna().tolist() == [True, False]
    assert measured_energy(configurations.drop(columns="energy_kwh"), "bert").empty  # features without energy


def test_the_electricity_price_comes_from_params() -> None:
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    assert params["report"]["electricity_usd_per_kwh"] is None
    assert electricity_price(settings_from(params).report.electricity_usd_per_kwh) is DEFAULT_ELECTRICITY_PRICE
    params["report"]["electricity_usd_per_kwh"] = 0.08
    assert electricity_price(settings_from(params).report.electricity_usd_per_kwh).per_kwh == 0.08
    params["report"]["electricity_usd_per_kwh"] = -1
    with pytest.raises(ParamsError, match="electricity_usd_per_kwh"):
        settings_from(params)


# ------------------------------------------------------------------------------------------------ the commands

def _add_energy(project_dir: Path, measured: dict[str, tuple[float, str]] | None) -> None:
    """Give the scratch project's configurations `energy_kwh` and `power_measurement`: `measured` maps a system to
    its energy and measurement point (None: the columns, all empty)."""
    path = project_dir / paths.CONFIGURATIONS
    table = pd.read_parquet(path)
    measured = measured or {}
    table["energy_kwh"] = table["system"].map({system: kwh for system, (kwh, _) in measured.items()}).astype(float)
    table["power_measurement"] = table["system"].map({system: point for system, (_, point) in measured.items()})
    table.to_parquet(path, index=False)


def _json_rows(capsys: pytest.CaptureFixture[str]) -> list[dict]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_recommend_shows_a_public_cost_for_every_priced_configuration(project: Path, capsys) -> None:
    recommend.main(["--benchmark", "resnet", "--top", "30"])
    out = capsys.readouterr().out
    assert f"cost ({COST_LABEL}) = accelerator-hours x price per accelerator-hour" in out
    assert "accelerator-hours: hardware time (accelerators x time to train), not what you pay" in out
    listed = [line for line in out.splitlines() if re.match(r"^\s*\d+\. \[", line)]
    cheapest = pt.current_prices().groupby("family")["price_per_accelerator_hour"].min()
    for line in listed:
        if " Gaudi2 x " in line:
            assert ", no public price, " in line
        else:
            assert re.search(r", cost [\d.,]+ to [\d.,]+ USD \([^)]+ to [^)]+\), ", line), line
    recommend.main(["--benchmark", "resnet", "--top", "30", "--json"])
    rows = _json_rows(capsys)
    for row in rows:
        if row["accelerator_family"] in cheapest:
            assert row["cost_low_usd"] == pytest.approx(row["accelerator_hours"] * cheapest[row["accelerator_family"]])
            assert row["cost_low_usd"] <= row["cost_high_usd"] and row["cost_basis"] == "public"
        else:
            assert row["cost_basis"] == "none" and row["cost_low_usd"] is None


def test_max_cost_uses_the_public_table_and_your_prices_override_it(project: Path, capsys) -> None:
    recommend.main(["--benchmark", "resnet", "--top", "30", "--json"])
    everything = _json_rows(capsys)
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
    prices = project / "mine.yaml"
    prices.write_text("H100: 0.001\nGaudi2: 0.001\n")
    recommend.main(["--benchmark", "resnet", "--top", "30", "--max-cost", "1", "--prices", str(prices)])
    out = capsys.readouterr().out
    assert "your price file" in out and "overrides it for the families it names" in out
    h100 = [line for line in out.splitlines() if " H100 x " in line]
    assert len(h100) == sum(row["accelerator_family"] == "H100" for row in everything)
    assert all("USD (your price file)" in line for line in h100)
    assert any(" Gaudi2 x " in line for line in out.splitlines())


def test_max_energy_kwh_without_any_measured_energy_says_so(project: Path, capsys) -> None:
    _add_energy(project, None)
    message = _exit_message(recommend.main, ["--benchmark", "resnet", "--max-energy-kwh", "10"], capsys)
    assert "none of the 20 resnet candidates has measured energy" in message
    assert "benchmarks with measured energy: none" in message
    _add_energy(project, {"H100-SXM-64-1": (3.0, "DC")})
    message = _exit_message(recommend.main, ["--benchmark", "resnet", "--family", "A100", "--max-energy-kwh", "10"],
                            capsys)
    assert "none of the 7 resnet A100 candidates has measured energy" in message
    assert "resnet families with measured energy: H100" in message
    message = _exit_message(recommend.main, ["--benchmark", "resnet", "--max-energy-kwh", "-1"], capsys)
    assert "--max-energy-kwh must be positive" in message


def test_max_energy_kwh_keeps_measured_results_within_it(project: Path, capsys) -> None:
    _add_energy(project, {"H100-SXM-64-1": (3.0, "DC"), "H100-SXM-128-1": (4.5, "AC and DC"),
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
    rows = _json_rows(capsys)
    assert [(row["energy_kwh"], row["power_measurement"]) for row in rows] == [(4.5, "AC and DC"), (3.0, "DC")]
    assert rows[1]["energy_cost_usd"] == pytest.approx(3.0 * DEFAULT_ELECTRICITY_PRICE.per_kwh)


def test_predict_carries_the_cost_of_the_forecast(project: Path, capsys) -> None:
    predict.main(["--benchmark", "resnet", "--accelerator", "H100", "--count", "64", "--json"])
    answer = json.loads(capsys.readouterr().out)
    cost, current = answer["cost"], pt.current_prices()
    h100 = current.loc[current["family"] == "H100", "price_per_accelerator_hour"]
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
    prices = project / "mine.yaml"
    prices.write_text("Gaudi2: 2.0\n")
    predict.main(["--benchmark", "resnet", "--accelerator", "Gaudi2", "--count", "16", "--prices", str(prices),
                  "--json"])
    cost = json.loads(capsys.readouterr().out)["cost"]
    assert cost["cost_basis"] == "user" and cost["cost_low_usd"] == pytest.approx(cost["accelerator_hours"] * 2.0)


def test_predict_shows_the_measured_energy_of_the_nearest_results(project: Path, capsys) -> None:
    _add_energy(project, {"H100-SXM-64-1": (3.0, "DC")})
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


@pytest.mark.parametrize("module", [recommend, predict])
def test_help_is_short_and_names_the_price_options(module, capsys) -> None:
    with pytest.raises(SystemExit):
        module.main(["--help"])
    out = capsys.readouterr().out
    assert "--prices" in out and "USD per" in out
    assert ("--max-energy-kwh" in out and "--max-cost" in out) if module is recommend else True
