"""A user's price table: accelerator family -> USD per accelerator-hour (the user's own prices).

They override the shipped public price table (`pipeline.analysis.pricing.price_table`) family by family, so they are
read
as USD like it; examples/prices.yaml holds made-up illustrative prices. `recommend --prices`, `predict --prices` and
the report's cost view (params `report.prices`) read tables through `load_prices`; `pipeline.analysis.pricing.costs`
applies
them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import yaml

from pipeline.core.errors import ParamsError, UsageError
from pipeline.mlperf.hardware.freetext import ACCELERATOR_FAMILIES

EXAMPLE_PRICES = Path("examples/prices.yaml")
# A malformed price is quoted in the error up to this length (a whole YAML document can sit under one key).
SHOWN_VALUE_CHARS = 60


def load_prices(path: Path) -> dict[str, float]:
    """A price table: accelerator family -> USD per accelerator-hour (the user's own), keyed by
    the catalogue's spelling of each family (`pipeline.mlperf.hardware.freetext.ACCELERATOR_FAMILIES`, matched in any
    case).

    An unknown family is a UsageError listing the known ones: a misspelt family (H10O) would otherwise silently
    leave its configurations without a cost."""
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
    return {known[family.strip().casefold()]: price for family, price in prices.items()}


@dataclass(frozen=True)
class Prices:
    """A price table (accelerator family -> price per accelerator-hour) and where it came from."""
    path: Path
    per_hour: dict[str, float]

    @property
    def illustrative(self) -> bool:
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
