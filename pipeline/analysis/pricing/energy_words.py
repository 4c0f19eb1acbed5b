"""Energy to train in words, the one wording every page, brief and command uses: a measured figure is an MLPerf
result at its measurement point; an estimate (`pipeline.analysis.pricing.energy_estimate`) is marked as one, with
its median error, and never read as a result.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pipeline.analysis.pricing.costs import usd as plain_number

NOT_MEASURED = "not measured, and no rated power to estimate it from"


def _value(value: Any) -> float | None:
    """A finite float, or None for None, NaN and pandas' NA."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


@dataclass(frozen=True)
class EnergyFigure:
    """One result's (or forecast's) energy to train, kWh: measured (an MLPerf result) at `point` ("AC" or "DC"),
    with `measured_dc_kwh` where the same runs were also measured at DC; else estimated from rated power with its
    median relative error (a fraction); `cost_usd`: the energy cost of the figure shown, USD; None where absent."""

    measured_kwh: float | None = None
    measured_dc_kwh: float | None = None
    point: str | None = None
    estimated_kwh: float | None = None
    estimate_error: float | None = None
    cost_usd: float | None = None

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> EnergyFigure:
        """The figure of a row with the energy columns (`energy_kwh`, `energy_dc_kwh`, `power_measurement`,
        `energy_estimated_kwh`, `energy_estimate_error`, `energy_cost_usd`, `energy_estimated_cost_usd`; any may be
        absent)."""
        measured = _value(row.get("energy_kwh"))
        point = row.get("power_measurement")
        return cls(measured_kwh=measured, measured_dc_kwh=_value(row.get("energy_dc_kwh")),
                   point=point if isinstance(point, str) and point else None,
                   estimated_kwh=None if measured is not None else _value(row.get("energy_estimated_kwh")),
                   estimate_error=_value(row.get("energy_estimate_error")),
                   cost_usd=_value(row.get("energy_cost_usd" if measured is not None
                                           else "energy_estimated_cost_usd")))


@dataclass(frozen=True)
class EnergyWords:
    """An energy figure in words: `long` (a sentence's worth, with the estimate's error and what it is not),
    `cell` (a table cell under a header that says what an estimate is not: the estimate's error, no more), `short`
    (a few words) and `kind` ("measured", "estimated" or "" without either)."""

    long: str
    cell: str
    short: str
    kind: str


def energy_words(figure: EnergyFigure, kwh: Callable[[float], str] = plain_number,
                 usd: Callable[[float], str] | None = None, about: str = "≈") -> EnergyWords:
    """`figure` in words, each kWh through `kwh` (by default as the commands print money: 1,234 / 14.8 / 0.512);
    with `usd`, the energy cost follows (long: "; energy cost 2.16 USD", short: " (2.16 USD)").
    Measured: "0.512 kWh measured (AC) · 0.498 kWh (DC)"; estimated: "≈14.8 kWh estimated from rated power, median
    error 8%; not an MLPerf result" (short: "≈14.8 kWh estimated"); `about` marks an estimate ("~" where a font
    lacks "≈")."""
    spent = None if usd is None or figure.cost_usd is None else usd(figure.cost_usd)
    cost, cost_short = ("", "") if spent is None else (f"; energy cost {spent} USD", f" ({spent} USD)")
    if figure.measured_kwh is not None:
        measured = f"{kwh(figure.measured_kwh)} kWh measured"
        if figure.measured_dc_kwh is not None:
            short = f"{measured} (AC) · {kwh(figure.measured_dc_kwh)} kWh (DC)"
        else:
            short = f"{measured} ({figure.point})" if figure.point else measured
        return EnergyWords(long=f"{short}{cost}", cell=short, short=f"{short}{cost_short}", kind="measured")
    if figure.estimated_kwh is not None:
        short = f"{about}{kwh(figure.estimated_kwh)} kWh estimated"
        error = "" if figure.estimate_error is None else f"median error {100 * figure.estimate_error:.0f}%"
        return EnergyWords(long=f"{short} from rated power{f', {error}' if error else ''}; not an MLPerf result{cost}",
                           cell=f"{short} ({error})" if error else short, short=f"{short}{cost_short}",
                           kind="estimated")
    return EnergyWords(long=NOT_MEASURED, cell="", short="not measured", kind="")
