"""A user's price table: accelerator family -> USD per accelerator-hour (the user's own prices).

They override the shipped public price table (`pipeline.analysis.pricing.price_table`) family by family, so they are
read
as USD like it; examples/prices.yaml holds made-up illustrative prices. `recommend --prices`, `predict --prices` and
the report's cost view (params `report.prices`) read tables through `load_prices`; `pipeline.analysis.pricing.costs`
applies
them.
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from pipeline.analysis.pricing.price_table import FAMILY_FACTOR, GENERATION_BAND, family_bands
from pipeline.core.errors import ImplausiblePriceError, ParamsError, UsageError
from pipeline.mlperf.hardware.accelerators import specifications
from pipeline.mlperf.hardware.freetext import ACCELERATOR_FAMILIES

EXAMPLE_PRICES = Path("examples/prices.yaml")
# A malformed price is quoted in the error up to this length (a whole YAML document can sit under one key).
SHOWN_VALUE_CHARS = 60


def add_prices_option(parser: argparse.ArgumentParser) -> None:
    """Give a command the option `--prices FILE`, the user's price file that `load_prices` reads; returns None."""
    parser.add_argument("--prices", type=Path, metavar="FILE",
                        help="your prices, YAML: accelerator family -> USD per accelerator-hour (each replaces "
                             "the public prices of its family; an implausible price is refused)")


def load_prices(path: Path) -> dict[str, float]:
    """A price table: accelerator family -> USD per accelerator-hour (the user's own), keyed by
    the catalogue's spelling of each family (`pipeline.mlperf.hardware.freetext.ACCELERATOR_FAMILIES`, matched in any
    case).

    An unknown family is a UsageError listing the known ones: a misspelt family (H10O) would otherwise silently
    leave its configurations without a cost. A price outside its family's plausibility band (`check_plausible`) is
    an ImplausiblePriceError."""
    example = "for example\n  H100: 3.0\n  A100: 1.5"
    if not path.is_file():
        raise UsageError(f"price file {path} not found; it maps accelerator family to price per "
                         f"accelerator-hour, {example}")
    try:
        table = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise UsageError(f"price file {path} is not valid YAML ({str(error).splitlines()[0]}); {example}") from None
    if not isinstance(table, dict) or not table:
        raise UsageError(f"price file {path} must map accelerator family to price per accelerator-hour, {example}")
    prices = {}
    for family, price in table.items():
        if isinstance(price, bool) or not isinstance(price, (int, float)) or not math.isfinite(price) or price <= 0:
            shown = repr(price) if len(repr(price)) <= SHOWN_VALUE_CHARS else repr(price)[:SHOWN_VALUE_CHARS] + "..."
            raise UsageError(f"price file {path}: the price of {family!r} must be a positive number per "
                             f"accelerator-hour, got {shown}; {example}")
        prices[str(family)] = float(price)
    known = {family.name.casefold(): family.name for family in ACCELERATOR_FAMILIES}
    unknown = sorted(family for family in prices if family.strip().casefold() not in known)
    if unknown:
        raise UsageError(f"price file {path} names unknown accelerator families: {', '.join(unknown)}; known "
                         f"families: {', '.join(sorted(known.values(), key=str.casefold))}")
    return check_plausible({known[family.strip().casefold()]: price for family, price in prices.items()}, path)


@dataclass(frozen=True)
class Prices:
    """A price table (accelerator family -> price per accelerator-hour) and where it came from."""
    path: Path
    per_hour: dict[str, float]

    @property
    def illustrative(self) -> bool:
        """True when the prices are the made-up ones of examples/prices.yaml, which the pages then label as
        illustrative."""
        return self.path.resolve() == EXAMPLE_PRICES.resolve()


def load_price_table(path: str | Path | None) -> Prices | None:
    """`report.prices` from params: None, or a price YAML (`pipeline.analysis.pricing.prices.load_prices`: every family
    must be one the catalogue knows). A problem with the file is a ParamsError, since params named it."""
    if path is None:
        return None
    try:
        return Prices(Path(path), load_prices(Path(path)))
    except UsageError as error:
        raise ParamsError(f"report.prices: {error}") from None


def price_band(family: str, table: pd.DataFrame | None = None) -> tuple[float, float, str]:
    """The plausible price band of `family`, USD per accelerator-hour (low, high) and its basis in words: the
    band a new row of the public table would have to meet (`price_table.family_bands`) where the table prices the
    family, else the generation band per peak dense BF16 PFLOPS (`price_table.GENERATION_BAND`); (0, inf) when
    neither is known."""
    bands = family_bands(table)
    row = bands[bands["family"] == family]
    if not row.empty:
        low, high = float(row["band_low"].iloc[0]), float(row["band_high"].iloc[0])
        return low, high, (f"within {FAMILY_FACTOR:g}x of {row['middle'].iloc[0]:.3g}, the middle of the "
                           f"{int(row['rows'].iloc[0])} public {family} prices, and {GENERATION_BAND[0]:g} to "
                           f"{GENERATION_BAND[1]:g} per BF16 PFLOPS")
    tflops = specifications()["bf16_tflops"].get(family, math.nan)
    if not math.isfinite(tflops):
        return 0.0, math.inf, "no band known: positive only"
    pflops = tflops / 1000.0
    return (GENERATION_BAND[0] * pflops, GENERATION_BAND[1] * pflops,
            f"{GENERATION_BAND[0]:g} to {GENERATION_BAND[1]:g} USD per BF16 PFLOPS-hour ({pflops:g} PFLOPS)")


def check_plausible(prices: dict[str, float], path: Path, table: pd.DataFrame | None = None) -> dict[str, float]:
    """`prices` (family -> USD per accelerator-hour) unchanged, or an ImplausiblePriceError naming every price
    outside its family's band (`price_band`), the band and its basis, and what to fix."""
    broken = []
    for family, price in sorted(prices.items()):
        low, high, basis = price_band(family, table)
        if not low <= price <= high:
            broken.append(f"{family}: {price:g} USD per accelerator-hour is outside {low:.3g} to {high:.3g} "
                          f"({basis})")
    if broken:
        raise ImplausiblePriceError(
            f"price file {path}: implausible price{'s' if len(broken) > 1 else ''}: {'; '.join(broken)}. Prices "
            f"are USD per accelerator-hour (one accelerator, not an instance of 8); fix the figure or its unit")
    return prices
