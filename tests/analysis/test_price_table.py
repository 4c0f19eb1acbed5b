"""The public price table (pipeline/analysis/pricing/price_table.csv, issue 26 item 3): every row sourced and dated,
every
price per accelerator-hour plausible for its family, a 10x typo rejected; the cost of a run as a range naming the
provider at each end, the user's price file winning, families without a price saying so; the electricity default.
Issue 52 point 4: every end of a default range is a row verified against its source; an unverified row sets none.
"""
from __future__ import annotations

import datetime as dt
import math
from importlib import resources

import pandas as pd
import pytest

from pipeline.analysis.pricing import price_audit
from pipeline.analysis.pricing import price_table as pt
from pipeline.analysis.pricing.electricity import DEFAULT_ELECTRICITY_PRICE, ElectricityPrice, energy_cost
from pipeline.analysis.pricing.prices import load_prices
from pipeline.core.errors import ContractError
from pipeline.mlperf.hardware.accelerators import specifications


def _raw() -> pd.DataFrame:
    """The CSV as shipped, before validation."""
    return pt._read(pt.TEXT_COLUMNS)


# ------------------------------------------------------------------------------------------------ the table

def test_the_packaged_table_loads_and_is_shipped_as_package_data() -> None:
    table = pt.price_table()
    assert len(table) >= 50
    assert resources.files("pipeline.analysis.pricing").joinpath(pt.PRICE_FILE).is_file()
    assert {"AWS", "Azure", "Google Cloud"} <= set(table["provider"])
    assert len(set(table["provider"])) >= 8


def test_every_row_has_an_https_source_and_an_iso_date_not_in_the_future() -> None:
    table = _raw()
    assert table["source"].str.startswith("https://").all()
    assert (table["note"].str.len() > 0).all()
    dates = [dt.date.fromisoformat(date) for date in table["date"]]
    assert all(dt.date(2024, 1, 1) <= date <= dt.date.today() for date in dates)


def test_every_family_is_spelt_as_in_accelerators_csv() -> None:
    assert set(pt.price_table()["family"]) <= set(specifications().index)


def test_the_hyperscalers_list_the_families_they_rent() -> None:
    table = pt.price_table()
    for provider, families in {"AWS": {"A100", "H100", "H200", "Trainium"}, "Azure": {"A100", "H100"},
                               "Google Cloud": {"A100", "H100", "H200", "L4", "TPU-v4", "TPU-v5e", "TPU-v5p",
                                                "TPU-v6e"}}.items():
        assert families <= set(table.loc[table["provider"] == provider, "family"]), provider


def test_price_per_accelerator_hour_divides_instance_prices_only() -> None:
    table = pt.price_table()
    per_instance = table["price_unit"] == "instance-hour"
    assert (table.loc[per_instance, "price_per_accelerator_hour"]
            == table.loc[per_instance, "price_per_hour"] / table.loc[per_instance, "accelerators_per_instance"]).all()
    assert (table.loc[~per_instance, "price_per_accelerator_hour"] == table.loc[~per_instance, "price_per_hour"]).all()
    indexed = table.set_index(["provider", "instance_type", "price_type", "region", "date"])
    assert indexed.loc[("AWS", "p5.48xlarge", "on-demand", "us-east-1", "2026-11-09"),
                       "price_per_accelerator_hour"] == 55.04 / 8


def test_every_row_says_whether_the_provider_or_a_community_source_states_it() -> None:
    table = pt.price_table()
    assert set(table["source_kind"]) == set(pt.SOURCE_KINDS)
    # a community row says which page it transcribes or what it is, in its note
    assert (table.loc[table["source_kind"] == "community", "note"].str.len() > 20).all()


def test_rack_scale_offers_state_their_conversion_per_accelerator() -> None:
    table = pt.price_table()
    rack = table[table["family"].isin(pt.RACK_SCALE_FAMILIES) & (table["price_unit"] == "instance-hour")]
    assert not rack.empty and rack["note"].str.contains(pt.RACK_RULE, case=False).all()
    # GB200 NVL72 as 4-GPU instances (OCI, CoreWeave) and by the rack (AWS capacity blocks of 36 or 72)
    assert {4, 36, 72} <= set(rack["accelerators_per_instance"])


def test_every_accelerator_of_the_newest_round_has_an_on_demand_price_or_says_which_types_it_has() -> None:
    families = ["GB300", "GB200", "B300", "B200", "MI355X", "H200", "H100", "MI325X", "MI300X", "TPU-v6e",
                "TPU-v5p", "Trainium"]
    for family in families:
        assert pt.default_price_type(family) == "on-demand", family
        cost = pt.cost_range(1.0, family)
        assert cost.cheapest is not None and cost.dearest is not None
        assert cost.cheapest.price_type == cost.dearest.price_type == "on-demand", family
    # issue 52: a commitment or a capacity block never stands in for an on-demand price; the family says so
    for family, types in (("MI350X", "committed-1y"), ("Trainium2", "spot, capacity-block")):
        assert pt.default_price_type(family) is None and not pt.cost_range(1.0, family).has_price
        assert pt.no_price_text(family) == f"no on-demand price ({types} only)"
        assert pt.cost_range(1.0, family, price_type=types.split(",")[0]).has_price  # asked for, it is there
    assert pt.no_price_text("V100S") == pt.no_price_text(None) == "no public price"
    # every Gaudi price in the table is over a year old: history, so no price at all
    assert pt.no_price_text("Gaudi2") == pt.no_price_text("Gaudi3") == "no public price"


def _row(family: str, provider: str, instance: str, date: str, price: float, kind: str = "on-demand") -> dict:
    return {"family": family, "provider": provider, "instance_type": instance, "accelerators_per_instance": 1,
            "price_per_hour": price, "price_unit": "accelerator-hour", "currency": "USD", "price_type": kind,
            "region": "unstated", "date": date, "source": "https://example.com", "source_kind": "provider",
            "note": "a test row", "verified": "2026-12-07", "verified_against": "https://example.com (a test row)"}


def _checked(row: dict, verified: str = "", against: str = "", why: str = "") -> dict:
    """`row` with its verification columns: the date of the check and what it read, or why it failed."""
    note = row["note"] + (f". Not verified on 2026-12-07: {why}" if why else "")
    return row | {"note": note, "verified": verified, "verified_against": against}


def test_an_unverified_row_sets_no_end_of_a_default_cost_range() -> None:
    """Issue 52 point 4: the ends of an on-demand range are chosen among verified current rows; an unverified row is
    listed (with why) but used in no answer; a family whose on-demand rows are all unverified has no default cost
    and says so; other price types are not subject to the rule."""
    check = ("2026-12-07", "https://example.com/prices: the same figure")
    table = pt.validate(pd.DataFrame([
        _checked(_row("H100", "Acme", "H100", "2026-12-01", 2.0), why="the page could not be read"),  # cheapest
        _checked(_row("H100", "Beta", "H100", "2026-12-01", 3.0), *check),
        _checked(_row("H100", "Gamma", "H100", "2026-12-01", 4.0), *check),
        _checked(_row("H100", "Delta", "H100", "2026-12-01", 6.0)),                  # dearest, no check recorded
        _checked(_row("H100", "Acme", "H100", "2026-12-01", 1.5, "spot")),           # spot: not subject to the rule
        _checked(_row("H200", "Acme", "H200", "2026-12-01", 3.5), why="the catalogue file is not stored"),
        _checked(_row("H200", "Beta", "H200", "2026-12-01", 3.9)),
        _checked(_row("A100", "Beta", "A100", "2026-12-01", 1.9), *check)]))
    assert table["usable"].tolist() == [False, True, True, False, True, False, False, True]
    cost = pt.cost_range(10.0, "H100", table=table)
    assert (cost.low, cost.high, cost.quotes) == (30.0, 40.0, 2)
    assert cost.cheapest is not None and cost.dearest is not None
    assert (cost.cheapest.provider, cost.dearest.provider) == ("Beta", "Gamma")
    assert pt.cost_range(10.0, "H100", table=table, price_type="spot").low == 15.0
    # no verified on-demand H200 price: no default cost, and the family says why
    assert pt.default_price_type("H200", table) is None and not pt.cost_range(1.0, "H200", table=table).has_price
    assert pt.no_price_text("H200", table) == "no verified on-demand price"
    assert pt.no_price_text("A100", table) == "no public price"  # (it has a default cost: the text is not shown)
    ends = price_audit.range_ends(table)
    assert ends[["family", "end", "provider"]].values.tolist() == [
        ["A100", "only", "Beta"], ["H100", "cheapest", "Beta"], ["H100", "dearest", "Gamma"]]
    assert (ends["verified"] != "").all()
    excluded = price_audit.excluded_ends(table)
    assert excluded[["family", "end", "provider"]].values.tolist() == [
        ["H100", "cheapest", "Acme"], ["H100", "dearest", "Delta"], ["H200", "cheapest", "Acme"],
        ["H200", "dearest", "Beta"]]
    assert excluded["reason"].tolist() == [
        "the page could not be read (checked 2026-12-07)", "no check of its source is recorded",
        "the catalogue file is not stored (checked 2026-12-07)", "no check of its source is recorded"]
    assert len(pt.unverified_prices(table)) == 4


def test_a_table_without_verification_columns_records_no_checks_and_is_taken_as_given() -> None:
    table = pt.validate(pd.DataFrame([_row("H100", "Acme", "H100", "2026-12-01", 2.0)]))
    assert table["usable"].all() and pt.cost_range(1.0, "H100", table=table).low == 2.0


def test_every_end_of_the_shipped_tables_default_ranges_is_verified_and_says_against_what() -> None:
    ends = price_audit.range_ends()
    assert set(ends["family"]) >= {"A100", "B200", "B300", "GB200", "GB300", "H100", "H200", "MI300X", "MI355X"}
    for row in ends.itertuples():
        assert dt.date.fromisoformat(row.verified) <= dt.date.today(), row
        assert row.verified_against.startswith(("https://", "skypilot-org/", "RightNow-AI/", "Cyclenerd/",
                                                "dstackai/")), row
    # the rows the audit of issue 52 could not verify set no end: the dearest H100 (Azure, 12.29) and H200 (Google
    # Cloud a3-ultragpu-8g) prices, and TensorWave's 'starting at' prices, whose type the capture does not confirm
    excluded = price_audit.excluded_ends()
    assert {(row.family, row.provider) for row in excluded.itertuples()} == {
        ("H100", "Azure"), ("H200", "Google Cloud"), ("MI300X", "TensorWave"), ("MI325X", "TensorWave")}
    assert not excluded["reason"].str.startswith("no check").any()  # each says why it failed
    h100 = pt.cost_range(1.0, "H100")
    assert h100.dearest is not None and (h100.dearest.provider, h100.dearest.instance_type) == (
        "Google Cloud", "a3-megagpu-8g")
    b300 = pt.cost_range(1.0, "B300")  # AWS's 17.80, read in the catalogue file at its commit
    assert b300.dearest is not None and b300.dearest.provider == "AWS" and b300.high == pytest.approx(17.802)


def test_an_offer_is_current_once_superseded_rows_and_rows_over_a_year_old_are_history() -> None:
    table = pt.validate(pd.DataFrame([
        _row("H100", "Acme", "H100 (per GPU)", "2026-01-10", 3.0),
        _row("H100", "Acme", "H100 (per GPU)", "2026-06-01", 2.8),   # the same offer, newer: current
        _row("H100", "Acme", "4x H100", "2025-06-20", 4.0),          # another label, older: superseded
        _row("H100", "Acme", "8x H100", "2026-06-01", 2.9),          # two labels on the newest date: both current
        _row("H100", "Acme", "H100 (per GPU)", "2025-06-20", 2.0, "committed-1y"),  # over a year old: stale
        _row("H100", "Beta", "H100", "2025-12-06", 3.5),             # 362 days before 2026-12-03: current
        _row("H100", "Gamma", "H100", "2026-12-03", 3.3)]))
    status = pt.offer_status(table).tolist()
    assert status == [pt.REPEATED, pt.CURRENT, pt.SUPERSEDED, pt.CURRENT, pt.STALE, pt.CURRENT, pt.CURRENT]
    assert pt.as_of(table) == "2026-12-03"
    current = pt.current_prices(table)
    assert sorted(current["price_per_accelerator_hour"]) == [2.8, 2.9, 3.3, 3.5]
    cost = pt.cost_range(1.0, "H100", table=table)
    assert (cost.low, cost.high, cost.quotes) == (2.8, 3.5, 4)
    assert pt.no_price_text("H100", table) == "no public price" or pt.default_price_type("H100", table)
    assert not pt.cost_range(1.0, "H100", table=table, price_type="committed-1y").has_price  # stale: no price


def test_the_age_limit_is_a_param_that_moves_a_row_between_current_and_history() -> None:
    """Issue 52: rows more than `max_age_days` (params report.max_price_age_days) older than the table's newest
    reading are history; a shorter limit turns a current row into history and the range, the types a family has and
    the prices' dates follow; a longer one brings a stale row back."""
    table = pt.validate(pd.DataFrame([
        _row("H100", "Acme", "H100", "2026-12-01", 2.0),
        _row("H100", "Beta", "H100", "2026-06-01", 5.0),                # 183 days before 2026-12-01
        _row("A100", "Acme", "A100", "2026-06-01", 1.5),
        _row("A100", "Acme", "A100 (1y)", "2026-11-01", 1.0, "committed-1y")]))
    assert pt.offer_status(table).tolist() == [pt.CURRENT] * 4
    assert pt.offer_status(table, 100).tolist() == [pt.CURRENT, pt.STALE, pt.STALE, pt.CURRENT]
    assert pt.offer_status(table, 183)[1] == pt.CURRENT and pt.offer_status(table, 182)[1] == pt.STALE
    year, hundred = pt.cost_range(1.0, "H100", table=table), pt.cost_range(1.0, "H100", table=table, max_age_days=100)
    assert (year.low, year.high, year.quotes) == (2.0, 5.0, 2) and (hundred.low, hundred.high) == (2.0, 2.0)
    assert pt.default_price_type("A100", table) == "on-demand"
    assert pt.default_price_type("A100", table, max_age_days=100) is None
    assert pt.no_price_text("A100", table, max_age_days=100) == "no on-demand price (committed-1y only)"
    assert pt.price_dates_text(table) == "2026-06-01 to 2026-12-01"
    assert pt.price_dates_text(table, 100) == "2026-11-01 to 2026-12-01"
    assert pt.age_limit_text(100) == "none more than 100 days older than the table's newest price"
    with pytest.raises(ValueError, match="max_age_days must be a whole number of days >= 1"):
        pt.offer_status(table, 0)


def test_every_row_says_how_its_date_was_fixed_and_none_postdates_the_commit_it_was_read_at() -> None:
    """Issue 52: a row's date is when its price held. A row read at a commit whose date is known records it ("commit
    <hash> of <date>") and is dated no later; a row whose source states no date keeps the day its copy was read and
    says so in one phrase (DAY_READ), and only a community catalogue is dated so."""
    table = pt.price_table()
    day_read = table["note"].str.contains(pt.DAY_READ, case=False, regex=False)
    assert not table.loc[~day_read, "note"].str.contains(r"day the (?:stored )?copy was read", case=False).any()
    assert (table.loc[day_read, "source_kind"] == "community").all()
    for note, date in zip(table["note"], table["date"]):
        assert all(date <= commit_date for _, commit_date in pt.COMMIT_DATE.findall(note)), note
    # every row of cloud-gpus' comparison is dated by the commit that last edited its cell
    cloud_gpus = table[table["source"].str.contains("cloud-gpus")]
    assert len(cloud_gpus) and all(pt.COMMIT_DATE.search(note) for note in cloud_gpus["note"])


def test_a_buyer_chooses_the_providers_whose_prices_answer() -> None:
    """Issue 52: `providers` narrows a range to the providers a buyer can use (named in any case); an unknown name is
    a ValueError listing the table's providers; none chosen is every provider."""
    table = pt.validate(pd.DataFrame([_row("H100", "Acme", "a", "2026-06-01", 2.0),
                                      _row("H100", "Beta", "b", "2026-06-01", 4.0),
                                      _row("H100", "Gamma", "c", "2026-06-01", 8.0)]))
    assert pt.chosen_providers(["beta", "ACME"], table) == ("Acme", "Beta")
    assert pt.chosen_providers(None, table) is None and pt.chosen_providers([], table) is None
    with pytest.raises(ValueError, match="unknown provider Delta; the price table's providers: Acme, Beta, Gamma"):
        pt.chosen_providers(["Delta"], table)
    every = pt.cost_range(1.0, "H100", table=table)
    chosen = pt.cost_range(1.0, "H100", table=table, providers=("Acme", "Beta"))
    assert (every.low, every.high, every.quotes) == (2.0, 8.0, 3) and (chosen.low, chosen.high, chosen.quotes) == (
        2.0, 4.0, 2)
    assert not pt.cost_range(1.0, "A100", table=table, providers=("Acme",)).has_price


def test_no_current_price_of_the_shipped_table_is_over_the_age_limit_or_superseded() -> None:
    current = pt.current_prices()
    age = pd.to_datetime(pt.as_of()) - pd.to_datetime(current["date"])
    assert (age.dt.days <= pt.MAX_PRICE_AGE_DAYS).all()
    newest = current.groupby(["family", "provider", "price_type"])["date"].transform("max")
    assert (current["date"] == newest).all()


def test_each_price_per_accelerator_hour_falls_in_its_family_band() -> None:
    checked = pt.plausibility(pt.price_table())
    assert checked["plausible"].all(), checked.loc[~checked["plausible"]]
    # every family with two or more rows of one type (but spot) is checked against the others of that type
    several = (checked.groupby(["family", "price_type"])["family"].transform("size") > 1) & \
        ~checked["price_type"].isin(pt.UNBANDED_TYPES)
    assert checked.loc[several, "basis"].str.contains("middle of the other").all()


@pytest.mark.parametrize("factor", [10.0, 0.1])
def test_a_10x_typo_in_any_row_of_a_family_with_several_rows_is_rejected(factor: float) -> None:
    raw = _raw()
    groups = raw.groupby(["family", "price_type"])["family"].transform("size")
    for index in raw.index[(groups > 1) & ~raw["price_type"].isin(pt.UNBANDED_TYPES)]:
        wrong = raw.copy()
        wrong.loc[index, "price_per_hour"] = raw.loc[index, "price_per_hour"] * factor
        with pytest.raises(ContractError, match="implausible price"):
            pt.validate(wrong)


def test_a_10x_typo_names_the_row_first() -> None:
    raw = _raw()
    index = raw.index[(raw["provider"] == "AWS") & (raw["instance_type"] == "p5.48xlarge")
                      & (raw["price_type"] == "on-demand") & (raw["date"] == "2026-11-09")][0]
    raw.loc[index, "price_per_hour"] = 550.4
    with pytest.raises(ContractError, match=r"implausible price .*?: H100 / AWS / p5\.48xlarge / on-demand: 68\.8"):
        pt.validate(raw)


def test_an_instance_price_entered_per_accelerator_is_rejected() -> None:
    raw = _raw()
    index = raw.index[(raw["family"] == "TPU-v4")][0]  # the only TPU v4 row: the generation band alone
    raw.loc[index, "price_per_hour"] = raw.loc[index, "price_per_hour"] * 64
    with pytest.raises(ContractError, match="TPU-v4 / Google Cloud"):
        pt.validate(raw)


@pytest.mark.parametrize(("change", "message"), [
    (lambda t: t.drop(columns="note"), "columns must be"),
    (lambda t: t.assign(family=t["family"].replace("H100", "H10O")), "family not in accelerators.csv"),
    (lambda t: t.assign(price_per_hour=t["price_per_hour"].where(t.index != 0, -1.0)), "positive number"),
    (lambda t: t.assign(price_per_hour=t["price_per_hour"].where(t.index != 0, math.nan)), "positive number"),
    (lambda t: t.assign(accelerators_per_instance=t["accelerators_per_instance"].where(t.index != 0, 0)),
     "whole number"),
    (lambda t: t.assign(date=t["date"].where(t.index != 0, "09/11/2026")), "ISO date"),
    (lambda t: t.assign(date=t["date"].where(t.index != 0, "")), "ISO date"),
    (lambda t: t.assign(source=t["source"].where(t.index != 0, "http://example.com/")), "https URL"),
    (lambda t: t.assign(source=t["source"].where(t.index != 0, "")), "https URL"),
    (lambda t: t.assign(note=t["note"].where(t.index != 0, "")), "needs a note"),
    (lambda t: t.assign(region=t["region"].where(t.index != 0, "")), "needs a region"),
    (lambda t: t.assign(price_type=t["price_type"].where(t.index != 0, "reserved")), "price_type must be"),
    (lambda t: t.assign(currency=t["currency"].where(t.index != 0, "usd")), "currency must be"),
    (lambda t: t.assign(price_unit=t["price_unit"].where(t.index != 0, "GPU-hour")), "price_unit must be"),
    (lambda t: pd.concat([t, t.iloc[[0]]], ignore_index=True), "listed twice"),
    (lambda t: t.assign(source_kind=t["source_kind"].where(t.index != 0, "blog")), "source_kind must be"),
    (lambda t: t.assign(note=t["note"].where(~t["family"].isin(["GB200"]), "a GB200 rack")), "rack-scale offer"),
    (lambda t: t.drop(columns="verified_against"), "columns must be"),
    (lambda t: t.assign(verified=t["verified"].where(t["verified"] == "", "07/12/2026")), "ISO date .* of the check"),
    (lambda t: t.assign(verified_against=t["verified_against"].where(t["verified"] == "", "")),
     "must say what it was verified against"),
    (lambda t: t.assign(verified_against="https://example.com/"), "without the date of the check"),
    (lambda t: t.assign(note=t["note"].where(t.index != 0, "read at commit abc1234 of 2024-01-01"),
                        date=t["date"].where(t.index != 0, "2024-01-02")), "dated after the commit"),
    (lambda t: t.assign(note=t["note"].where(t.index != 0, "read at commit abc1234 of 2024-13-01")),
     "dated after the commit"),
])
def test_a_broken_table_is_a_contract_error(change, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ContractError, match=message):
        pt.validate(change(_raw()))


def test_a_later_listing_of_an_offer_replaces_the_older_one() -> None:
    raw = _raw()
    newer = raw[(raw["provider"] == "AWS") & (raw["instance_type"] == "p5.48xlarge")
                & (raw["price_type"] == "on-demand") & (raw["region"] == "us-east-1")
                ].iloc[[0]].assign(price_per_hour=50.0, date="2026-12-31", verified="2026-12-31",
                                   verified_against="https://example.com/p5: 50.00 per instance-hour")
    table = pt.validate(pd.concat([raw, newer], ignore_index=True))
    current = pt.current_prices(table)
    p5 = current[(current["instance_type"] == "p5.48xlarge") & (current["price_type"] == "on-demand")
                 & (current["region"] == "us-east-1")]
    assert p5["price_per_hour"].tolist() == [50.0]
    # unverified, the newer listing still retires the older row (history) but is not used itself: no p5 price
    table = pt.validate(pd.concat([raw, newer.assign(verified="", verified_against="")], ignore_index=True))
    current, unverified = pt.current_prices(table), pt.unverified_prices(table)
    assert not ((current["instance_type"] == "p5.48xlarge") & (current["price_type"] == "on-demand")).any()
    assert (unverified["instance_type"] == "p5.48xlarge").sum() == 1


def test_families_without_a_price_are_listed_and_bands_cover_the_priced_ones() -> None:
    missing = pt.families_without_price()
    assert "GH200" in missing and "H100" not in missing
    bands = pt.family_bands()
    assert set(bands["family"]) | set(missing) == set(specifications().index)
    assert (bands["band_low"] <= bands["min"]).all() and (bands["max"] <= bands["band_high"]).all()


# ------------------------------------------------------------------------------------------------ cost of a run

def test_cost_range_names_the_provider_at_each_end() -> None:
    cost = pt.cost_range(1000.0, "H100")
    table = pt.current_prices()
    h100 = table.loc[(table["family"] == "H100") & (table["price_type"] == "on-demand"), "price_per_accelerator_hour"]
    assert cost.basis == "public" and cost.has_price and cost.currency == "USD"
    assert cost.low == pytest.approx(1000.0 * h100.min()) and cost.high == pytest.approx(1000.0 * h100.max())
    assert cost.cheapest is not None and cost.dearest is not None
    assert cost.cheapest.provider != cost.dearest.provider
    assert cost.quotes == len(h100)
    text = cost.describe()
    assert cost.cheapest.provider in text and cost.dearest.provider in text and "not an MLPerf result" in text


def test_a_cost_range_is_of_one_price_type_on_demand_by_default() -> None:
    on_demand = pt.cost_range(10.0, "H100")
    spot = pt.cost_range(10.0, "H100", price_type="spot")
    for cost, kind in ((on_demand, "on-demand"), (spot, "spot")):
        assert cost.cheapest is not None and cost.cheapest.price_type == kind
        assert cost.dearest is not None and cost.dearest.price_type == kind
    assert spot.low is not None and on_demand.low is not None and spot.low < on_demand.low
    with pytest.raises(ValueError, match="unknown price type"):
        pt.cost_range(10.0, "H100", price_type="reserved")


def test_a_family_without_a_public_price_says_so() -> None:
    cost = pt.cost_range(100.0, "GH200")
    assert not cost.has_price and cost.basis == "none" and cost.low is None and cost.cheapest is None
    assert "no public price" in cost.describe()


def test_the_users_price_file_overrides_the_table(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "prices.yaml"
    path.write_text("H100: 3.0\nGaudi2: 1.2\n", encoding="utf-8")
    user = load_prices(path)
    cost = pt.cost_range(100.0, "H100", user_prices=user)
    assert (cost.basis, cost.low, cost.high, cost.currency) == ("user", 300.0, 300.0, None)
    assert "your price" in cost.describe()
    assert pt.cost_range(100.0, "Gaudi2", user_prices=user).low == pytest.approx(120.0)
    # a family the user file does not name falls back to the table
    assert pt.cost_range(100.0, "A100", user_prices=user).basis == "public"


def test_cost_range_refuses_negative_hours() -> None:
    with pytest.raises(ValueError):
        pt.cost_range(-1.0, "H100")


# ------------------------------------------------------------------------------------------------ electricity

def test_the_electricity_default_is_dated_and_sourced() -> None:
    price = DEFAULT_ELECTRICITY_PRICE
    assert isinstance(price, ElectricityPrice) and price.currency == "USD"
    assert 0.03 < price.per_kwh < 0.5
    assert price.source.startswith("https://") and dt.date.fromisoformat(price.date) <= dt.date.today()


def test_energy_cost_is_kwh_times_price() -> None:
    assert energy_cost(1000.0, 0.1) == pytest.approx(100.0)
    assert energy_cost(1000.0) == pytest.approx(1000.0 * DEFAULT_ELECTRICITY_PRICE.per_kwh)
    with pytest.raises(ValueError):
        energy_cost(-1.0, 0.1)
    with pytest.raises(ValueError):
        energy_cost(1.0, 0.0)
