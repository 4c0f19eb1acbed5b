"""A dated, sourced default electricity price and the energy cost of a run: kWh x price.

For energy MLPerf measured, and for the estimate of `pipeline.analysis.pricing.energy_estimate` where no power was
logged (that cost is then labelled estimated, not an MLPerf result). The price is a params default the user can
replace with their own tariff; the cost is a derived figure, not an MLPerf result.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class ElectricityPrice:
    """A price of electricity per kWh, with where and when it was stated."""
    per_kwh: float
    currency: str
    what: str
    date: str
    source: str
    note: str = ""


# The U.S. average retail price of electricity to commercial customers (most data centres buy at commercial or
# industrial rates), 14.6 US cents per kWh, in EIA Electric Power Monthly Table 5.6.A as transcribed in the dated
# data file of energypricestoday.com.
US_COMMERCIAL_AVERAGE = ElectricityPrice(
    per_kwh=0.146,
    currency="USD",
    what="U.S. average retail price of electricity, commercial sector",
    date="2026-04-26",
    source="https://www.energypricestoday.com/data/sources/electricity-prices.json",
    note=("national_averages_cents_per_kwh.commercial = 14.6 in that file (updated 2026-04-26), which names its "
          "source as U.S. EIA Electric Power Monthly, Table 5.6.A "
          "(https://www.eia.gov/electricity/monthly/epm_table_grapher.php?t=epmt_5_6_a); the month of data is "
          "that release's latest, not stated in the file; industrial customers pay less, hyperscale contracts "
          "differ"),
)
DEFAULT_ELECTRICITY_PRICE = US_COMMERCIAL_AVERAGE


def electricity_price(usd_per_kwh: float | None) -> ElectricityPrice:
    """params `report.electricity_usd_per_kwh`: the user's tariff in USD per kWh, or None for the dated default."""
    if usd_per_kwh is None:
        return DEFAULT_ELECTRICITY_PRICE
    return ElectricityPrice(per_kwh=float(usd_per_kwh), currency="USD", what="your electricity price",
                            date="", source="params.yaml report.electricity_usd_per_kwh")


def energy_cost(kwh: float, price: float | ElectricityPrice = DEFAULT_ELECTRICITY_PRICE) -> float:
    """The cost of `kwh` of measured energy at `price` per kWh (a number, or an ElectricityPrice), in the price's
    currency."""
    per_kwh = price.per_kwh if isinstance(price, ElectricityPrice) else float(price)
    if not math.isfinite(kwh) or kwh < 0:
        raise ValueError(f"energy must be a finite number of kWh >= 0, got {kwh!r}")
    if not math.isfinite(per_kwh) or per_kwh <= 0:
        raise ValueError(f"the electricity price must be a positive number per kWh, got {per_kwh!r}")
    return kwh * per_kwh
