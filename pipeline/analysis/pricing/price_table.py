"""The curated public price table (price_table.csv, package data) and what is built on it: price per
accelerator-hour, a plausibility check per family, and the cost of a training run as a range over providers.

A price is market data about renting hardware, not MLPerf data, so the table lives with the analysis that uses it
(beside `prices.py`, the user's own price file) rather than with the MLPerf reference tables in
`pipeline.mlperf`; its families are spelt as in `pipeline/mlperf/hardware/accelerators.csv`, which the loader checks.

One row per quoted price. Columns (docs/prices.md says how to add a row):

- family: the accelerator family, as in accelerators.csv `family`;
- provider: the cloud that rents it (AWS, Azure, Google Cloud, Oracle Cloud, ...);
- instance_type: the instance, VM size or offer the price is for;
- accelerators_per_instance: the accelerators in that instance;
- price_per_hour: the quoted price, per `price_unit`;
- price_unit: `instance-hour` (the whole instance) or `accelerator-hour` (the source quotes one accelerator);
- currency: ISO 4217 code (USD throughout today);
- price_type: on-demand, spot, capacity-block, committed-1y or committed-3y;
- region: the provider's region, or `unstated` when the source gives none;
- date: ISO date the price held: for a catalogue, the date of the commit the row was read at or the catalogue's own
  per-entry date (`retrieved`, `last_updated`); for a provider's page, the date it states, else the day it was read.
  The note says which: a commit's date in the fixed form "commit <hash> of <YYYY-MM-DD>" (COMMIT_DATE; the loader
  refuses a row dated after it), and a row whose source states no date and whose commit's date could not be read
  keeps the day it was read and says "date: day read, the source states none" (DAY_READ);
- source: the https URL the figure was read from;
- source_kind: `provider` (the provider's own page, price list or documentation) or `community` (a catalogue,
  scraper or comparison site transcribing it: a stated fallback where the provider's page could not be read);
- note: what the source is and anything uncertain; for a rack-scale offer (NVL72 sold by the rack or by 4-GPU
  instances) the rule that converts it to a price per accelerator (RACK_SCALE_FAMILIES); for a row whose check
  failed, why, as its last sentence: "Not verified on 2026-12-07: <why>" (`why_unverified`);
- verified: ISO date the row was checked against its source (the provider's page, or the catalogue file at the
  commit the row cites), empty when it was not or could not be;
- verified_against: what that check read and the figure found there ("<URL>" or "<owner>/<repo>/<path> @ <commit>: row
  '...'"), empty when unverified. The loader requires it of every verified row and refuses it without a date.

An offer is (family, provider, instance, price type, region, currency); its price is its newest row. A row is
**current** (`offer_status`) when it is its offer's newest, no newer row of the same provider prices the same family
and type (whatever the instance's label: one offer listed under two labels is not current twice), and it is at most
`max_age_days` older than the table's newest reading (`as_of`: the date of the table this build ships, which issue 52
calls the build date; never the clock, so the same table answers alike on any day). `max_age_days` is params
`report.max_price_age_days` (default MAX_PRICE_AGE_DAYS, 365), which every caller that prices an answer passes on.
Every other row is history, listed on the prices page and in docs/prices.md, never in an answer.

**Verified ends** (issue 52 point 4). A row of a price type in VERIFIED_TYPES (on-demand: the type of every default
cost range) is used in an answer only once it has been verified against its source: an unverified row is listed
(`unverified_prices`; docs/prices.md, with why), never an end of a range nor one of its prices. The ends of a
default range are thus chosen among verified current rows (`current_prices`, the one place answers take their prices
from), and a family with current on-demand rows but none verified has no default cost and says so (`no_price_text`:
"no verified on-demand price"). `price_audit.excluded_ends` lists the unverified rows that would otherwise set or move
an end.

A cost range never mixes price types: by default it is the on-demand range (`DEFAULT_PRICE_TYPE`); a family without
a current on-demand price has no default cost and says so (`no_price_text`: "no on-demand price (committed-1y
only)"), whatever other types it has: a commitment or a capacity block is not a price one can rent at by the hour.
A caller may ask for another type (`cost_range(price_type=...)`); its type is named.

Every figure is a list price a source states; none is estimated. Cost figures built on it are derived metrics,
not MLPerf results (MLCommons' guidelines ask that they say so and name their basis: `CostRange.describe` does).
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

import numpy as np
import pandas as pd

from pipeline.core.errors import ContractError
from pipeline.mlperf.hardware.accelerators import specifications
from pipeline.mlperf.hardware.tables import check_columns
from pipeline.settings import ReportSettings

PRICE_FILE = "price_table.csv"
COLUMNS = ["family", "provider", "instance_type", "accelerators_per_instance", "price_per_hour", "price_unit",
           "currency", "price_type", "region", "date", "source", "source_kind", "note", "verified", "verified_against"]
TEXT_COLUMNS = ("family", "provider", "instance_type", "price_unit", "currency", "price_type", "region", "date",
                "source", "source_kind", "note", "verified", "verified_against")
PRICE_UNITS = ("instance-hour", "accelerator-hour")
PRICE_TYPES = ("on-demand", "spot", "capacity-block", "committed-1y", "committed-3y")
CURRENCIES = ("USD", "EUR", "GBP")
# `provider`: read on the provider's own page; `community`: a transcription by someone else (the stated fallback).
SOURCE_KINDS = ("provider", "community")
# The price type of a cost range unless one is asked for: a capacity block is booked for days, a commitment for years
# and spot can be taken back at any time, so none of them answers "what does a run cost if I rent it now".
DEFAULT_PRICE_TYPE = "on-demand"
# Price types whose rows must have been verified against their source to be used in an answer (issue 52 point 4):
# the type of every default cost range. Other types, asked for by name, are not checked yet and say their type.
VERIFIED_TYPES = (DEFAULT_PRICE_TYPE,)
# The last sentence of the note of a row whose check failed: its date and why.
UNVERIFIED_NOTE = re.compile(r"Not verified on (\d{4}-\d{2}-\d{2}): (.+)$")
# A row more than this many days older than the table's newest reading is history, not a price (issue 52: 65 of 219
# offers were over a year old, the oldest from 2024-02-07): the default of params `report.max_price_age_days`, whose
# one home is pipeline.settings, for a call that is not given the param.
MAX_PRICE_AGE_DAYS: int = ReportSettings.model_fields["max_price_age_days"].default
# Why a row is not current (`offer_status`).
CURRENT = "current"
REPEATED = "an older row of the same offer"
SUPERSEDED = "superseded by the provider's newer price of the family and type"
STALE = "older than the age limit (params report.max_price_age_days)"
# A commit's date as a note records it ("commit 40f3eb5 of 2025-05-29"): the row's price was read at that commit, so
# it held no later than that date.
COMMIT_DATE = re.compile(r"\bcommit ([0-9a-f]{7,40}) of (\d{4}-\d{2}-\d{2})\b")
# How a note says its row is dated the day the copy was read: the source states no date (and the date of the commit it
# was read at could not be read).
DAY_READ = "date: day read, the source states none"
# Sold by the rack (NVL72) or by 4-GPU instances of a rack: a row priced per instance must state its conversion to
# a price per accelerator ("per-GPU = 64/4 = 16.00") in its note.
RACK_SCALE_FAMILIES = ("GB200", "GB300")
RACK_RULE = r"per[- ]GPU"
# The identity of a price: the same offer may be listed again at a later date (the newest is the one in force).
OFFER = ["family", "provider", "instance_type", "price_type", "region", "currency"]

# Plausibility, per family. A row's price per accelerator-hour must lie within FAMILY_FACTOR of the middle (geometric
# mean of the lowest and highest) of the other rows of its family in the same currency. FAMILY_FACTOR < sqrt(10) =
# 3.16, so a figure 10x off from one that passed is always rejected: it is at least 10 / 3 = 3.33x away from that
# middle, which does not depend on the row itself.
FAMILY_FACTOR = 3.0
# Every row, and the only check for a family with a single row: price per accelerator-hour per peak dense BF16
# PFLOPS (accelerators.csv) between these bounds. The table spans about 1 (MI300X) to 25 (V100) per PFLOPS-hour;
# the band catches unit slips (an instance price entered per accelerator) but is too wide to catch every 10x typo.
GENERATION_BAND = (0.3, 60.0)
# Spot prices are set by the market and move within days (H100 spot spans 0.80 to 6.33 USD per accelerator-hour in
# the table): only the generation band checks them. Every other type is compared with its own type's rows.
UNBANDED_TYPES = ("spot",)


def _read(text_columns: tuple[str, ...]) -> pd.DataFrame:
    with resources.files(__package__).joinpath(PRICE_FILE).open(encoding="utf-8") as handle:
        return pd.read_csv(handle, dtype=dict.fromkeys(text_columns, str), keep_default_na=False,
                           na_values={column: [""] for column in COLUMNS if column not in text_columns})


@lru_cache(maxsize=1)
def price_table() -> pd.DataFrame:
    """The package's table, validated (see `validate`), with `price_per_accelerator_hour` and `usable` added."""
    return validate(_read(TEXT_COLUMNS))


def _where(table: pd.DataFrame, mask: pd.Series) -> str:
    """The rows under `mask`, named for an error message: family / provider / instance / price type."""
    rows = table.loc[mask, ["family", "provider", "instance_type", "price_type"]]
    return "; ".join(" / ".join(map(str, row)) for row in rows.itertuples(index=False))


def validate(table: pd.DataFrame) -> pd.DataFrame:
    """`table` (the CSV's columns, COLUMNS) with `price_per_accelerator_hour` and `usable` added, after checking
    the columns, the family (known to accelerators.csv), positive prices and accelerator counts, the known units,
    types and currencies, an ISO date no later than any commit's date the note records (COMMIT_DATE), an https
    source and a note on every row, a verified row's ISO date and what it was verified against, no offer listed
    twice on one date, and every price per accelerator-hour within its plausibility bands (`plausibility`).
    Raises ContractError naming the rows at fault.

    `usable`: the row may be used in an answer: verified, or of a type not in VERIFIED_TYPES."""
    check_columns(table, PRICE_FILE, COLUMNS)
    table = table.copy()
    for column in TEXT_COLUMNS:
        if column in table:
            table[column] = table[column].astype(str).str.strip()
    known = set(specifications().index)
    unknown = ~table["family"].isin(known)
    if unknown.any():
        raise ContractError(f"{PRICE_FILE}: family not in accelerators.csv for {_where(table, unknown)}; known "
                            f"families: {', '.join(sorted(known, key=str.casefold))}")
    for column in ("provider", "instance_type", "region"):
        empty = table[column] == ""
        if empty.any():
            raise ContractError(f"{PRICE_FILE}: every row needs a {column} (region: `unstated` when the source "
                                f"gives none); missing for {_where(table, empty)}")
    for column, allowed in (("price_unit", PRICE_UNITS), ("price_type", PRICE_TYPES), ("currency", CURRENCIES),
                            ("source_kind", SOURCE_KINDS)):
        bad = ~table[column].isin(allowed)
        if bad.any():
            raise ContractError(f"{PRICE_FILE}: {column} must be one of {', '.join(allowed)}; found "
                                f"{', '.join(sorted(set(table.loc[bad, column])))} for {_where(table, bad)}")
    price = pd.to_numeric(table["price_per_hour"], errors="coerce")
    bad = ~(price > 0) | ~np.isfinite(price)
    if bad.any():
        raise ContractError(f"{PRICE_FILE}: price_per_hour must be a positive number for {_where(table, bad)}")
    count = pd.to_numeric(table["accelerators_per_instance"], errors="coerce")
    bad = ~(count >= 1) | (count != count.round())
    if bad.any():
        raise ContractError(f"{PRICE_FILE}: accelerators_per_instance must be a whole number >= 1 for "
                            f"{_where(table, bad)}")
    dates = pd.to_datetime(table["date"], format="%Y-%m-%d", errors="coerce")
    bad = dates.isna() | (table["date"].str.len() != len("2026-01-31"))
    if bad.any():
        raise ContractError(f"{PRICE_FILE}: date must be an ISO date (YYYY-MM-DD) for {_where(table, bad)}")
    late = _after_commit(table)
    if late.any():
        raise ContractError(f"{PRICE_FILE}: a row is dated after the commit its price was read at (its note's "
                            f"\"commit <hash> of <date>\"): {_where(table, late)}")
    unsourced = ~table["source"].str.startswith("https://")
    if unsourced.any():
        raise ContractError(f"{PRICE_FILE}: every row needs an https URL in `source`; missing for "
                            f"{_where(table, unsourced)}")
    unnoted = table["note"] == ""
    if unnoted.any():
        raise ContractError(f"{PRICE_FILE}: every row needs a note saying what its source is; missing for "
                            f"{_where(table, unnoted)}")
    rack = (table["family"].isin(RACK_SCALE_FAMILIES) & (table["price_unit"] == "instance-hour")
            & ~table["note"].str.contains(RACK_RULE, case=False, regex=True))
    if rack.any():
        raise ContractError(f"{PRICE_FILE}: a rack-scale offer priced per instance must state its conversion to a "
                            f"price per accelerator in its note (\"per-GPU = price / GPUs\"); missing for "
                            f"{_where(table, rack)}")
    verified, against = table["verified"], table["verified_against"]
    checked = verified != ""
    bad = checked & (pd.to_datetime(verified, format="%Y-%m-%d", errors="coerce").isna()
                     | (verified.str.len() != len("2026-01-31")))
    if bad.any():
        raise ContractError(f"{PRICE_FILE}: verified must be the ISO date (YYYY-MM-DD) of the check, or empty, "
                            f"for {_where(table, bad)}")
    bad = checked & (against == "")
    if bad.any():
        raise ContractError(f"{PRICE_FILE}: a verified row must say what it was verified against "
                            f"(verified_against); missing for {_where(table, bad)}")
    bad = ~checked & (against != "")
    if bad.any():
        raise ContractError(f"{PRICE_FILE}: verified_against without the date of the check (verified) for "
                            f"{_where(table, bad)}")
    usable = checked | ~table["price_type"].isin(VERIFIED_TYPES)
    repeated = table.duplicated([*OFFER, "date"])
    if repeated.any():
        raise ContractError(f"{PRICE_FILE}: the same offer listed twice on one date: {_where(table, repeated)}")
    table = table.assign(accelerators_per_instance=count.astype(int), price_per_hour=price)
    per_accelerator = table["price_per_hour"].where(table["price_unit"] == "accelerator-hour",
                                                    table["price_per_hour"] / table["accelerators_per_instance"])
    table = table.assign(price_per_accelerator_hour=per_accelerator, usable=usable.astype(bool))
    check = plausibility(table)
    implausible = ~check["plausible"]
    if implausible.any():
        worst = check.loc[implausible].sort_values("deviation", ascending=False)
        lines = [f"{row.family} / {row.provider} / {row.instance_type} / {row.price_type}: "
                 f"{row.price_per_accelerator_hour:.4g} {row.currency} per accelerator-hour, plausible "
                 f"{row.low:.4g} to {row.high:.4g} ({row.basis})" for row in worst.itertuples()]
        raise ContractError(f"{PRICE_FILE}: implausible price (a typo, or a price per instance entered per "
                            f"accelerator?): " + "; ".join(lines))
    return table.reset_index(drop=True)


def _after_commit(table: pd.DataFrame) -> pd.Series:
    """Per row of `table` (text columns, ISO dates): True where its note records a commit's date (COMMIT_DATE) earlier
    than the row's date, or one that is not an ISO date."""
    recorded = table["note"].str.extractall(COMMIT_DATE)  # one row per commit recorded, on (row, match)
    rows = recorded.index.get_level_values(0)
    commit = pd.to_datetime(recorded[1], format="%Y-%m-%d", errors="coerce").to_numpy()
    dated = pd.to_datetime(table.loc[rows, "date"], format="%Y-%m-%d").to_numpy()
    return pd.Series(table.index.isin(rows[pd.isna(commit) | (dated > commit)]), index=table.index)


def plausibility(table: pd.DataFrame) -> pd.DataFrame:
    """Per row of a table with `price_per_accelerator_hour`: the plausible band (`low`, `high`), its `basis`, the
    row's `deviation` (the factor it lies outside the band by, 1 inside) and `plausible`.

    The band is the intersection of the family band (within FAMILY_FACTOR of the middle, on a log scale, of the
    prices per accelerator-hour of the family's other rows of the same currency and price type; none for a family
    with a single such row, nor for spot prices, UNBANDED_TYPES) and the generation band
    (GENERATION_BAND per peak dense BF16 PFLOPS of the family, from accelerators.csv; none where it lacks the
    figure). A row with neither band is checked for a positive price only."""
    pflops = (table["family"].map(specifications()["bf16_tflops"]) / 1000.0).to_numpy(dtype=float)
    value = table["price_per_accelerator_hour"].to_numpy(dtype=float)
    middle = np.full(len(table), np.nan)
    others = np.zeros(len(table), dtype=int)
    for (_, _, kind), positions in table.groupby(["family", "currency", "price_type"], sort=False).indices.items():
        if len(positions) < 2 or kind in UNBANDED_TYPES:
            continue
        prices = value[positions]
        for k, position in enumerate(positions):
            rest = np.delete(prices, k)
            middle[position] = math.sqrt(rest.min() * rest.max())
            others[position] = len(rest)
    has_family = np.isfinite(middle)
    has_generation = np.isfinite(pflops)
    lows = np.maximum(np.where(has_family, middle / FAMILY_FACTOR, 0.0),
                      np.where(has_generation, GENERATION_BAND[0] * pflops, 0.0))
    highs = np.minimum(np.where(has_family, middle * FAMILY_FACTOR, np.inf),
                       np.where(has_generation, GENERATION_BAND[1] * pflops, np.inf))
    bases = []
    for family, fam, gen, mid, count in zip(table["family"], has_family, has_generation, middle, others):
        basis = []
        if fam:
            basis.append(f"within {FAMILY_FACTOR:g}x of {mid:.4g}, the middle of the other {count} {family} rows")
        if gen:
            basis.append(f"{GENERATION_BAND[0]:g} to {GENERATION_BAND[1]:g} per BF16 PFLOPS")
        bases.append("; ".join(basis) or "no band: positive only")
    out = table.assign(low=lows, high=highs, basis=bases)
    out["deviation"] = np.maximum(1.0, np.maximum(value / highs, lows / value))
    out["plausible"] = (value >= lows) & (value <= highs)
    return out


def _centre(rows: pd.DataFrame) -> float:
    """The middle, on a log scale, of the prices per accelerator-hour of `rows`: the geometric mean of the lowest
    and the highest. Unlike a median it does not lean towards where most rows sit (many neoclouds, a few dearer
    hyperscalers), and it ignores how many price types one provider lists."""
    prices = rows["price_per_accelerator_hour"]
    return float(math.sqrt(prices.min() * prices.max()))


def family_bands(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per family and price type of the table: the number of rows, the lowest and highest price per
    accelerator-hour, and the band a new row of that family and type would have to meet (family band from all its
    rows, none for spot, intersected with the generation band), in the table's currency (the first, when a family
    has several)."""
    table = price_table() if table is None else table
    pflops = specifications()["bf16_tflops"] / 1000.0
    rows = []
    for (family, kind), group in table.groupby(["family", "price_type"], sort=True):
        group = group[group["currency"] == group["currency"].iloc[0]]
        middle = _centre(group)
        low, high = (0.0, math.inf) if kind in UNBANDED_TYPES else (middle / FAMILY_FACTOR, middle * FAMILY_FACTOR)
        if np.isfinite(pflops.get(family, np.nan)):
            low = max(low, GENERATION_BAND[0] * pflops[family])
            high = min(high, GENERATION_BAND[1] * pflops[family])
        rows.append({"family": family, "price_type": kind, "rows": len(group),
                     "currency": group["currency"].iloc[0],
                     "min": float(group["price_per_accelerator_hour"].min()),
                     "max": float(group["price_per_accelerator_hour"].max()),
                     "middle": middle, "band_low": low, "band_high": high})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------------ cost per run

@dataclass(frozen=True)
class PriceQuote:
    """One price per accelerator-hour and where it comes from."""
    provider: str
    instance_type: str
    price_type: str
    region: str
    date: str
    per_accelerator_hour: float
    source: str
    source_kind: str = ""

    def label(self) -> str:
        """The quote as a page names it: provider, instance type, price type and date, or "your price file"."""
        if self.provider == USER_PROVIDER:
            return "your price file"
        return f"{self.provider} {self.instance_type}, {self.price_type}, {self.date}"


USER_PROVIDER = "your price file"


@dataclass(frozen=True)
class CostRange:
    """The cost of a training run that took `accelerator_hours` on `family`: `low` to `high` in `currency`, from
    `cheapest` and `dearest` of `quotes` prices. `basis` is "user" (the user's price file, one price: low = high),
    "public" (the table's current prices of the family, `current_prices`, over its providers, of one price type) or
    "none" (no such price for the family: low, high, the quotes and the currency are None)."""
    family: str
    accelerator_hours: float
    basis: str
    currency: str | None = None
    low: float | None = None
    high: float | None = None
    cheapest: PriceQuote | None = None
    dearest: PriceQuote | None = None
    quotes: int = 0

    @property
    def has_price(self) -> bool:
        """True when a price was found (basis "user" or "public"); False when `low` and `high` are None."""
        return self.basis != "none"

    def describe(self) -> str:
        """One line for a page or a terminal, saying the basis (a derived figure, not an MLPerf result)."""
        if not self.has_price:
            return f"{self.family}: no public price (derived cost not available)"
        assert self.low is not None and self.high is not None and self.cheapest and self.dearest
        if self.basis == "user":
            return (f"{self.low:,.2f} (derived: {self.accelerator_hours:,.1f} accelerator-hours x your price "
                    f"for {self.family}; not an MLPerf result)")
        unit = f" {self.currency}" if self.currency else ""
        return (f"{self.low:,.2f} to {self.high:,.2f}{unit} (derived: {self.accelerator_hours:,.1f} "
                f"accelerator-hours x public list prices, {self.cheapest.label()} to {self.dearest.label()}, "
                f"{self.quotes} prices; not an MLPerf result)")


def current_prices(table: pd.DataFrame | None = None, max_age_days: int = MAX_PRICE_AGE_DAYS) -> pd.DataFrame:
    """The prices an answer may use: the current rows of the table (`offer_status`: none more than `max_age_days`
    older than `as_of`), one per offer, that are `usable` (verified, where their type must be: VERIFIED_TYPES). Of
    the package's table (`table` None) they are worked out once per age limit, as the table is read once."""
    return _package_current_prices(max_age_days) if table is None else _newest_offers(table, max_age_days)


@cache
def _package_current_prices(max_age_days: int) -> pd.DataFrame:
    # A report asks for the families' prices one family at a time (44 families: 0.25 s of sorting the same table).
    return _newest_offers(price_table(), max_age_days)


def as_of(table: pd.DataFrame | None = None) -> str:
    """The table's newest reading (ISO date): what a price's age is measured from. It is the date of the table this
    build ships (issue 52's "build date"), not the clock, so the same table gives the same answers on any day."""
    return str((price_table() if table is None else table)["date"].max())


def offer_status(table: pd.DataFrame, max_age_days: int = MAX_PRICE_AGE_DAYS) -> pd.Series:
    """Per row of `table` (validated, on its index): CURRENT, or why it is history: REPEATED (its offer has a newer
    row), SUPERSEDED (the same provider priced the family and type on a later date, under any instance label) or
    STALE (more than `max_age_days` days before `as_of`, the table's newest reading). ValueError for an age limit
    below 1 day."""
    if max_age_days < 1:
        raise ValueError(f"max_age_days must be a whole number of days >= 1, got {max_age_days!r}")
    dates = pd.to_datetime(table["date"], format="%Y-%m-%d")
    offer_newest = dates.groupby([table[column] for column in OFFER], sort=False).transform("max")
    provider_newest = dates.groupby([table[column] for column in ("family", "provider", "price_type", "currency")],
                                    sort=False).transform("max")
    age = (dates.max() - dates).dt.days
    status = pd.Series(CURRENT, index=table.index, dtype=object)
    status[age > max_age_days] = STALE
    status[dates < provider_newest] = SUPERSEDED
    status[dates < offer_newest] = REPEATED
    return status


def _newest_offers(table: pd.DataFrame, max_age_days: int) -> pd.DataFrame:
    current = table[(offer_status(table, max_age_days) == CURRENT) & table["usable"]]
    return current.sort_values(["family", "price_per_accelerator_hour", "provider"]).reset_index(drop=True)


def unverified_prices(table: pd.DataFrame | None = None, max_age_days: int = MAX_PRICE_AGE_DAYS) -> pd.DataFrame:
    """The current rows (`offer_status` at `max_age_days`) that are not used because they are not verified (of a type
    in VERIFIED_TYPES): listed, never in an answer."""
    table = price_table() if table is None else table
    current = table[(offer_status(table, max_age_days) == CURRENT) & ~table["usable"]]
    return current.sort_values(["family", "price_per_accelerator_hour", "provider"]).reset_index(drop=True)


def why_unverified(note: str) -> str:
    """Why a row is not verified, from the last sentence of its note ("Not verified on <date>: <why>"), or that no
    check of it is recorded."""
    found = UNVERIFIED_NOTE.search(str(note))
    return f"{found.group(2)} (checked {found.group(1)})" if found else "no check of its source is recorded"


def default_price_type(family: str, table: pd.DataFrame | None = None, currency: str = "USD",
                       max_age_days: int = MAX_PRICE_AGE_DAYS) -> str | None:
    """The price type a cost range of `family` uses unless told otherwise: DEFAULT_PRICE_TYPE where the family has a
    current (verified) price of it at `max_age_days`; None otherwise (`no_price_text` says what it has instead)."""
    types = _current_types(family, table, currency, max_age_days)
    return DEFAULT_PRICE_TYPE if DEFAULT_PRICE_TYPE in types else None


def _current_types(family: str, table: pd.DataFrame | None, currency: str, max_age_days: int) -> tuple[str, ...]:
    return (_package_types(family, currency, max_age_days) if table is None else
            _types(current_prices(table, max_age_days), family, currency))


def _types(prices: pd.DataFrame, family: str, currency: str) -> tuple[str, ...]:
    """The price types of `family`'s current `prices` in `currency`, in the order of PRICE_TYPES."""
    kinds = set(prices.loc[(prices["family"] == family) & (prices["currency"] == currency), "price_type"])
    return tuple(kind for kind in PRICE_TYPES if kind in kinds)


@cache
def _package_types(family: str, currency: str, max_age_days: int) -> tuple[str, ...]:
    return _types(current_prices(None, max_age_days), family, currency)


def no_price_text(family: object, table: pd.DataFrame | None = None, currency: str = "USD",
                  max_age_days: int = MAX_PRICE_AGE_DAYS) -> str:
    """Why `family` has no default cost at `max_age_days`, in words: "no verified on-demand price" where its current
    on-demand rows are all unverified, "no on-demand price (committed-1y only)" where it has current prices of other
    types only, else "no public price"."""
    types = _current_types(family, table, currency, max_age_days) if isinstance(family, str) else ()
    if DEFAULT_PRICE_TYPE in types:
        return "no public price"
    others = f" ({', '.join(types)} only)" if types else ""
    if isinstance(family, str):
        unverified = unverified_prices(table, max_age_days)
        if ((unverified["family"] == family) & (unverified["currency"] == currency)
                & (unverified["price_type"] == DEFAULT_PRICE_TYPE)).any():
            return f"no verified {DEFAULT_PRICE_TYPE} price{others}"
    return f"no {DEFAULT_PRICE_TYPE} price{others}" if types else "no public price"


def chosen_providers(names: Sequence[str] | None, table: pd.DataFrame | None = None) -> tuple[str, ...] | None:
    """`names` (the providers a buyer can use, any case) as the table spells them, sorted; None for every provider
    (`names` None or empty). ValueError naming the unknown ones and the table's providers."""
    if not names:
        return None
    known = {provider.casefold(): provider for provider in (price_table() if table is None else table)["provider"]}
    unknown = sorted(name for name in names if name.strip().casefold() not in known)
    if unknown:
        raise ValueError(f"unknown provider {', '.join(unknown)}; the price table's providers: "
                         f"{', '.join(sorted(set(known.values()), key=str.casefold))}")
    return tuple(sorted({known[name.strip().casefold()] for name in names}, key=str.casefold))


def cost_range(accelerator_hours: float, family: str, *, user_prices: Mapping[str, float] | None = None,
               table: pd.DataFrame | None = None, price_type: str | None = None,
               currency: str = "USD", providers: tuple[str, ...] | None = None,
               max_age_days: int = MAX_PRICE_AGE_DAYS) -> CostRange:
    """The cost of a run of `accelerator_hours` on `family`. The user's prices (`pipeline.analysis.pricing.prices.
    load_prices`: family -> price per accelerator-hour, their currency) win when they name the family; otherwise
    the range over the table's current prices of the family (`current_prices` at `max_age_days`) in `currency` of
    one `price_type` (default: `default_price_type`, on-demand where there is one), of `providers` alone when given
    (`chosen_providers`): price types are never mixed in one range. A family with no price (of that type, at those
    providers) says so (basis "none")."""
    if not math.isfinite(accelerator_hours) or accelerator_hours < 0:
        raise ValueError(f"accelerator_hours must be a finite number >= 0, got {accelerator_hours!r}")
    if user_prices and family in user_prices:
        price = float(user_prices[family])
        quote = PriceQuote(USER_PROVIDER, "", "", "", "", price, "", "")
        cost = accelerator_hours * price
        return CostRange(family, accelerator_hours, "user", None, cost, cost, quote, quote, 1)
    if price_type is not None and price_type not in PRICE_TYPES:
        raise ValueError(f"unknown price type {price_type}; known: {', '.join(PRICE_TYPES)}")
    kind = price_type if price_type is not None else default_price_type(family, table, currency, max_age_days)
    quotes = None if kind is None else (
        _package_quotes(family, currency, kind, providers, max_age_days) if table is None else
        _quotes(current_prices(table, max_age_days), family, currency, kind, providers))
    if quotes is None:
        return CostRange(family, accelerator_hours, "none")
    cheapest, dearest, count = quotes
    return CostRange(family, accelerator_hours, "public", currency,
                     accelerator_hours * cheapest.per_accelerator_hour,
                     accelerator_hours * dearest.per_accelerator_hour, cheapest, dearest, count)


def _quotes(prices: pd.DataFrame, family: str, currency: str, price_type: str,
            providers: tuple[str, ...] | None = None) -> tuple[PriceQuote, PriceQuote, int] | None:
    """The cheapest and the dearest of the current `prices` of `family` in `currency` of `price_type` (of
    `providers` alone when given), and how many there are; None without one. `prices` are `current_prices`:
    verified, where their type must be."""
    prices = prices[(prices["family"] == family) & (prices["currency"] == currency)
                    & (prices["price_type"] == price_type)
                    & (prices["provider"].isin(providers) if providers else True)]
    if prices.empty:
        return None
    ordered = prices.sort_values(["price_per_accelerator_hour", "date"], ascending=[True, False])
    return _quote(ordered.iloc[0]), _quote(ordered.iloc[-1]), len(prices)


# A report asks for the same few families' prices hundreds of times (one per configuration shown); the package's
# table is read once (`price_table`), so its quotes per family are too.
@cache
def _package_quotes(family: str, currency: str, price_type: str, providers: tuple[str, ...] | None,
                    max_age_days: int) -> tuple[PriceQuote, PriceQuote, int] | None:
    return _quotes(current_prices(None, max_age_days), family, currency, price_type, providers)


def _quote(row: pd.Series) -> PriceQuote:
    return PriceQuote(str(row["provider"]), str(row["instance_type"]), str(row["price_type"]), str(row["region"]),
                      str(row["date"]), float(row["price_per_accelerator_hour"]), str(row["source"]),
                      str(row["source_kind"]))


def families_without_price(table: pd.DataFrame | None = None, max_age_days: int = MAX_PRICE_AGE_DAYS) -> list[str]:
    """The families of accelerators.csv that the table has no current price for (`offer_status` at `max_age_days`),
    in its order."""
    priced = set(current_prices(table, max_age_days)["family"])
    return [family for family in specifications().index if family not in priced]


def age_limit_text(max_age_days: int = MAX_PRICE_AGE_DAYS) -> str:
    """The age limit of the prices an answer uses, in the words every page and answer print: "none more than 365 days
    older than the table's newest price"."""
    return f"none more than {max_age_days} days older than the table's newest price"


def price_dates_text(table: pd.DataFrame | None = None, max_age_days: int = MAX_PRICE_AGE_DAYS) -> str:
    """When the current prices (at `max_age_days`) held, for a page or an answer: "2024-12-23 to 2026-12-05"."""
    dates = current_prices(table, max_age_days)["date"]
    return f"{min(dates)} to {max(dates)}"
