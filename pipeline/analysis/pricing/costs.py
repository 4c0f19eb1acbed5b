"""Cost to train per configuration, and the energy cost of measured energy: the columns `predict`, `recommend` and
the page show.

Cost per training run = accelerator-hours x price per accelerator-hour, as a range over the current prices of the
public price table (`pipeline.analysis.pricing.price_table`: its providers and price types, the provider named at each
end),
or the user's own price where their price file (`--prices`, params `report.prices`) names the family. Energy cost =
measured energy (kWh, MLPerf power results only) x an electricity price (params `report.electricity_usd_per_kwh`,
default `pipeline.analysis.pricing.electricity.DEFAULT_ELECTRICITY_PRICE`). Every figure here is derived, not an MLPerf
result (COST_LABEL): MLCommons asks derived figures to say so and to name their basis.

Accelerator-hours alone are hardware time (accelerators x time to train), not what anyone pays: only a price turns
them into money. All money is in USD: the table's prices are, and a user's price file is read as USD per
accelerator-hour, since it replaces the table's prices family by family.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from pipeline.analysis.pricing.electricity import DEFAULT_ELECTRICITY_PRICE, ElectricityPrice, energy_cost
from pipeline.analysis.pricing.price_table import (
    MAX_PRICE_AGE_DAYS,
    CostRange,
    PriceQuote,
    age_limit_text,
    cost_range,
    no_price_text,
    price_dates_text,
)
from pipeline.core.errors import ContractError

COST_LABEL = "derived, not an MLPerf result"
HARDWARE_TIME = "hardware time (accelerators x time to train), not what you pay"
CURRENCY = "USD"
# A configuration's cost basis: public list prices, the user's price file, or no public price for its family.
PUBLIC, USER, NO_PRICE = "public", "user", "none"
NO_PRICE_TEXT = "no public price"

# The identity of a published result within a benchmark, and what the features stage says of its measured energy.
RESULT_KEY = ["round", "submitter", "system"]
ENERGY_COLUMNS = ["energy_kwh", "power_measurement"]

_END = {"usd": "float64", "usd_per_accelerator_hour": "float64", "provider": "string", "instance": "string",
        "price_type": "string", "date": "string", "source": "string"}
# The columns of `training_costs`, with their dtypes. Per end (low: the cheapest price, high: the dearest):
# cost_<end>_usd                        cost per training run, USD (accelerator_hours x the price);
# cost_<end>_usd_per_accelerator_hour   that price, USD per accelerator-hour;
# cost_<end>_provider                   the provider quoting it ("your price file" for the user's price);
# cost_<end>_instance, _price_type      the instance and price type (on-demand, spot, ...; empty for the user's);
# cost_<end>_date, _source              the ISO date of the price and its source URL (empty for the user's).
# Both ends are of one price type (on-demand by default), never a spot price at one end and on-demand at the other.
# cost_basis: "public", "user" or "none" (no public price: every cost column empty); cost_missing: why there is none
# ("no public price", "no on-demand price (committed-1y only)": `price_table.no_price_text` at the same table and age
# limit), empty where there is a price; cost_prices: how many current prices the range spans (1 for the user's, 0
# for none); energy_cost_usd: energy_kwh x the electricity price, only
# where energy_kwh is measured (empty otherwise, and everywhere when the frame has no energy_kwh);
# energy_estimated_cost_usd: energy_estimated_kwh x the electricity price where the frame has that estimate
# (pipeline.analysis.pricing.energy_estimate: estimated, not an MLPerf result), empty elsewhere.
COST_COLUMNS: dict[str, str] = {
    "cost_basis": "string",
    "cost_missing": "string",
    **{f"cost_low_{name}": dtype for name, dtype in _END.items()},
    **{f"cost_high_{name}": dtype for name, dtype in _END.items()},
    "cost_prices": "int64",
    "energy_cost_usd": "float64",
    "energy_estimated_cost_usd": "float64",
}


def _end(quote: PriceQuote | None) -> dict[str, Any]:
    """One end of a range per accelerator-hour: its price and where it comes from (empty text as missing)."""
    if quote is None:
        return {name: None for name in _END if name != "usd"}
    return {"usd_per_accelerator_hour": quote.per_accelerator_hour, "provider": quote.provider,
            "instance": quote.instance_type or None, "price_type": quote.price_type or None,
            "date": quote.date or None, "source": quote.source or None}


def _family_prices(family: object, user_prices: Mapping[str, float] | None, table: pd.DataFrame | None,
                   price_type: str | None = None, providers: tuple[str, ...] | None = None,
                   max_age_days: int = MAX_PRICE_AGE_DAYS) -> dict[str, Any]:
    """The price range per accelerator-hour of one family (`cost_range` of one hour, of one price type, of
    `providers` alone when given, of prices at most `max_age_days` older than the table's newest), as cost columns
    without the costs."""
    priced: CostRange | None = (None if not isinstance(family, str) else
                                cost_range(1.0, family, user_prices=user_prices, table=table, currency=CURRENCY,
                                           price_type=price_type, providers=providers, max_age_days=max_age_days))
    basis = NO_PRICE if priced is None else priced.basis
    low, high = (None, None) if priced is None else (priced.cheapest, priced.dearest)
    missing = None if basis != NO_PRICE else no_price_text(family, table, CURRENCY, max_age_days)
    return {"cost_basis": basis, "cost_missing": missing,
            **{f"cost_low_{key}": value for key, value in _end(low).items()},
            **{f"cost_high_{key}": value for key, value in _end(high).items()},
            "cost_prices": 0 if priced is None else priced.quotes}


def training_costs(configurations: pd.DataFrame, user_prices: Mapping[str, float] | None = None, *,
                   electricity: ElectricityPrice = DEFAULT_ELECTRICITY_PRICE,
                   table: pd.DataFrame | None = None, price_type: str | None = None,
                   providers: tuple[str, ...] | None = None, max_age_days: int = MAX_PRICE_AGE_DAYS) -> pd.DataFrame:
    """The cost columns (COST_COLUMNS, with their dtypes) of each row of `configurations`, on its index; the public
    ranges of `providers` alone when given (`price_table.chosen_providers`), of prices at most `max_age_days` older
    than the table's newest (params `report.max_price_age_days`; older ones are history).

    `configurations` needs `accelerator_family` (as in accelerators.csv) and `accelerator_hours` (hours of one
    accelerator x count, the hardware time of a run); `energy_kwh` (measured energy to train, kWh) is optional.
    `user_prices` (`pipeline.analysis.pricing.prices.load_prices`: family -> USD per accelerator-hour) replaces the
    public
    table (`table`, default the shipped one) for the families it names. The public range is of one price type,
    `price_type`, or by default on-demand (`price_table.default_price_type`: a family without a current on-demand
    price has none); price types are never mixed. A row whose family has no price (of that type), or whose
    accelerator-hours are missing, has empty costs; a family without a price has cost_basis "none"."""
    missing = [column for column in ("accelerator_family", "accelerator_hours") if column not in configurations]
    if missing:
        raise ContractError(f"training costs need the columns {', '.join(missing)}")
    if electricity.currency != CURRENCY:
        raise ValueError(f"the electricity price must be in {CURRENCY}, got {electricity.currency}")
    families = configurations["accelerator_family"].astype(object)
    per_family = {family: _family_prices(family, user_prices, table, price_type, providers, max_age_days)
                  for family in families.dropna().unique()}
    none = _family_prices(None, None, None)
    out = pd.DataFrame([per_family.get(family, none) if isinstance(family, str) else none for family in families],
                       index=configurations.index, columns=[c for c in COST_COLUMNS if not c.endswith("_usd")])
    hours = pd.to_numeric(configurations["accelerator_hours"], errors="coerce").astype(float)
    for end in ("low", "high"):
        out[f"cost_{end}_usd"] = hours * out[f"cost_{end}_usd_per_accelerator_hour"].astype(float)
    energy = (pd.to_numeric(configurations["energy_kwh"], errors="coerce").astype(float)
              if "energy_kwh" in configurations else pd.Series(math.nan, index=configurations.index))
    if (energy < 0).any():
        raise ContractError("energy_kwh must be >= 0 where it is measured")
    out["energy_cost_usd"] = energy.map(lambda kwh: math.nan if math.isnan(kwh) else energy_cost(kwh, electricity))
    estimate = (pd.to_numeric(configurations["energy_estimated_kwh"], errors="coerce").astype(float)
                if "energy_estimated_kwh" in configurations else pd.Series(math.nan, index=configurations.index))
    out["energy_estimated_cost_usd"] = estimate.map(
        lambda kwh: math.nan if math.isnan(kwh) else energy_cost(kwh, electricity))
    return out[list(COST_COLUMNS)].astype(COST_COLUMNS)


# ------------------------------------------------------------------------------------------------- measured energy

def measured_energy(configurations: pd.DataFrame, benchmark: str, columns: Sequence[str] = ENERGY_COLUMNS,
                    key: Sequence[str] = RESULT_KEY) -> pd.DataFrame:
    """The results of `benchmark` with measured energy: `key` and `columns` of the configurations table, by default
    `energy_kwh` and `power_measurement` (AC, DC, "AC and DC"); a column the table lacks is None. Empty, with those
    columns, when `configurations` has no `energy_kwh` (features from before the power logs were read)."""
    kept = [*key, *columns]
    if "energy_kwh" not in configurations:
        return pd.DataFrame(columns=kept)
    rows = configurations[(configurations["benchmark"] == benchmark) & configurations["energy_kwh"].notna()]
    rows = rows.assign(**{column: None for column in columns if column not in rows})
    return rows[kept].reset_index(drop=True)


def with_measured_energy(frame: pd.DataFrame, energy: pd.DataFrame, key: Sequence[str] = RESULT_KEY) -> pd.DataFrame:
    """`frame` (results with `key`) with the columns of `energy` (`measured_energy` with the same `key`; empty where
    not measured), on `frame`'s index."""
    columns = [column for column in energy if column not in key]
    merged = frame.drop(columns=[c for c in columns if c in frame]).merge(
        energy, on=list(key), how="left", validate="many_to_one")
    merged.index = frame.index
    return merged.astype({"energy_kwh": "float64"})


# ------------------------------------------------------------------------------------------------- as text

def usd(value: float) -> str:
    """Money as the commands print it: whole dollars with separators from 100 up, three significant digits below."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def span(low: float, high: float, fmt: Callable[[float], str] = usd) -> str:
    """A range of money as it reads: "8.62 to 13.1", or one figure when both ends print the same ("62", not "62 to
    62"), each end through `fmt`."""
    low_text, high_text = fmt(low), fmt(high)
    return low_text if low_text == high_text else f"{low_text} to {high_text}"


def _offer(row: Mapping[str, Any], end: str) -> str:
    parts = [row[f"cost_{end}_{name}"] for name in ("provider", "price_type", "date")]
    return " ".join(str(part) for part in parts if isinstance(part, str) and part)


def cost_text(row: Mapping[str, Any], lead: str = "cost ") -> str:
    """A row of `training_costs` in a few words after `lead`: "cost 1,234 to 5,678 USD (RunPod on-demand
    2025-05-29 to Azure on-demand 2026-11-09)", "cost 345 USD (your price file)"; or why there is none (its
    `cost_missing`: "no public price", "no on-demand price (committed-1y only)")."""
    if row["cost_basis"] == NO_PRICE:
        return str(row["cost_missing"])
    low, high = row["cost_low_usd"], row["cost_high_usd"]
    if low is None or pd.isna(low):
        return f"{lead}unknown (no accelerator-hours)"
    if row["cost_basis"] == USER:
        return f"{lead}{usd(low)} {CURRENCY} (your price file)"
    offers = _offer(row, "low"), _offer(row, "high")
    where = offers[0] if offers[0] == offers[1] else f"{offers[0]} to {offers[1]}"
    return f"{lead}{span(low, high)} {CURRENCY} ({where})"


def basis_lines(user_prices_path: object | None, electricity: ElectricityPrice, energy: bool,
                max_age_days: int = MAX_PRICE_AGE_DAYS) -> list[str]:
    """What the cost (and, with `energy`, the energy cost) columns of an answer are, for its header; the public prices
    at most `max_age_days` older than the table's newest."""
    source = (f"; your price file {user_prices_path} (USD per accelerator-hour) overrides it for the families it "
              f"names" if user_prices_path is not None else "")
    lines = [f"accelerator-hours: {HARDWARE_TIME}; cost ({COST_LABEL}) = accelerator-hours x price per "
             f"accelerator-hour, a range over the public list prices of pipeline/analysis/pricing/price_table.csv "
             f"(over providers, on-demand prices only, {age_limit_text(max_age_days)}; prices read "
             f"{price_dates_text(max_age_days=max_age_days)}){source}"]
    if energy:
        dated = f", {electricity.date}, {electricity.source}" if electricity.date else ""
        lines.append(f"energy: measured by MLPerf power results (the result on the row; AC or DC, the point of "
                     f"measurement); energy cost ({COST_LABEL}) = kWh x {electricity.per_kwh:g} {CURRENCY}/kWh "
                     f"({electricity.what}{dated})")
    return lines
