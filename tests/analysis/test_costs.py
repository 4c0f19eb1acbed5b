"""Cost to train (issue 26 items 3 to 5): `pipeline.analysis.pricing.costs.training_costs` on a hand-made price table,
figures computed by hand; the public table, your prices, energy cost and the electricity price. The commands'
costs are tested in tests/commands.
"""
from __future__ import annotations

import math

import pandas as pd
import pytest
import yaml

from pipeline.analysis.pricing import price_table as pt
from pipeline.analysis.pricing.costs import (
    COST_COLUMNS,
    cost_text,
    measured_energy,
    training_costs,
    with_measured_energy,
)
from pipeline.analysis.pricing.electricity import DEFAULT_ELECTRICITY_PRICE, electricity_price
from pipeline.core.errors import ContractError, ParamsError
from pipeline.settings import settings_from
from tests.conftest import ROOT


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
                         source_kind="provider", note="a test row", verified="2026-12-07",
                         verified_against="https://example.org (a test row)")
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
    # 10 accelerator-hours x 2.49 (Lambda, the offer's newest price) and x 55.04 / 8 = 6.88 (AWS); on-demand only:
    # Google Cloud's spot price is not in the range
    assert (h100["cost_basis"], h100["cost_prices"]) == ("public", 2)
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
    families = ["H100", "A100", "TPU-v4", "Gaudi2", "GB200", "MI350X", "GH200"]
    costs = training_costs(pd.DataFrame({"accelerator_family": families, "accelerator_hours": 1.0}))
    current = pt.current_prices()
    for family, row in zip(families, costs.to_dict(orient="records")):
        prices = current.loc[(current["family"] == family) & (current["price_type"] == pt.default_price_type(family)),
                             "price_per_accelerator_hour"]
        if prices.empty:  # no current price, or none on demand (MI350X's only price is a commitment)
            assert row["cost_basis"] == "none"
            assert family in pt.families_without_price() or pt.default_price_type(family) is None
        else:
            assert (row["cost_low_usd"], row["cost_high_usd"]) == (prices.min(), prices.max())
            assert row["cost_prices"] == len(prices) and row["cost_low_provider"] and row["cost_high_provider"]


def test_a_price_type_can_be_chosen_and_is_never_mixed() -> None:
    spot = training_costs(_configurations(), table=_table(), price_type="spot")
    assert (spot.loc[10, "cost_low_usd"], spot.loc[10, "cost_prices"]) == (pytest.approx(30.0), 1)
    assert spot.loc[20, "cost_basis"] == "none"  # no spot A100 price


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


def test_a_range_whose_ends_print_the_same_reads_as_one_figure() -> None:
    from pipeline.analysis.pricing.costs import span

    assert span(62.01, 62.04) == "62" and span(8.62, 13.1) == "8.62 to 13.1" and span(120.0, 4000.0) == "120 to 4,000"
