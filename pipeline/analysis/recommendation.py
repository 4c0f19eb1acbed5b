"""`recommend`'s answer: today's options (`pipeline.analysis.buyer`) that meet a buyer's constraints, in the buyer's
order, with why each is listed and, when nothing meets them, what to relax.

Order: with a deadline, cheapest first (`cost_cap_usd`, at the price basis of `pipeline.analysis.buyer.cheapest_rule`,
the dearest listed price by default: the cap holds for any listed provider; unpriced last); with a budget only,
fastest first; with neither, the front on time to train and accelerator-hours first, fastest first
(`pipeline.analysis.buyer.ordered`). A forecast meets a deadline or a budget only if the upper end of its interval
does. A cost cap (--max-cost) holds at the same basis: a configuration without a price never meets it.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from pipeline.analysis.buyer import (
    BASIS_WORDS,
    DEFAULT_PRICE_BASIS,
    ESTIMATE_COLUMNS,
    FORECAST,
    PUBLISHED,
    ordered,
)
from pipeline.analysis.pricing.costs import COST_COLUMNS, ENERGY_COLUMNS, basis_lines, cost_text, usd
from pipeline.analysis.pricing.electricity import DEFAULT_ELECTRICITY_PRICE, ElectricityPrice
from pipeline.analysis.pricing.energy_words import EnergyFigure, energy_words
from pipeline.analysis.pricing.price_table import MAX_PRICE_AGE_DAYS
from pipeline.core.errors import UsageError

DEFAULT_LIMIT = 10  # candidates listed unless --limit says otherwise


@dataclass(frozen=True)
class Constraint:
    """One of the buyer's limits, checked on one column (the conservative value of a candidate)."""
    flag: str
    column: str
    limit: float
    unit: str
    missing: str = ""  # why a candidate may have no value to compare (no price, not measured)
    money: bool = False  # shown in whole dollars

    def met(self, candidates: pd.DataFrame) -> pd.Series:
        """Per candidate row, True when its `column` is at most `limit` (in the constraint's unit); a missing value
        (no price, no energy) is False."""
        return candidates[self.column] <= self.limit  # a missing value (no price) never meets a limit

    def describe(self) -> str:
        """The constraint as the user typed it: the flag and its limit ("--max-cost 5000")."""
        return f"{self.flag} {self.limit:g}"

    def show(self, value: float) -> str:
        """`value` in the constraint's unit as the messages print it: money as `usd` prints USD (whole dollars with
        separators from 100 up), anything else to three significant digits."""
        return usd(value) if self.money else f"{value:.3g}"

    def why_not(self, family_candidates: pd.DataFrame) -> str:
        """Why this constraint leaves out every one of a family's candidates (all of which fail it)."""
        values = family_candidates[self.column].dropna()
        if values.empty:
            return f"{self.describe()}: {self.missing}"
        return f"{self.describe()}: its best is {self.show(values.min())} {self.unit}"


def constraints_of(max_accelerators: int | None, deadline_min: float | None, max_cost: float | None,
                   max_energy_kwh: float | None = None, basis: str = DEFAULT_PRICE_BASIS) -> list[Constraint]:
    """The constraints the user set, each on the column it is checked on (a cost at the price `basis`)."""
    cost = dict(missing="no public price for it (nor in your price file), so no cost to compare", money=True)
    energy = dict(missing="no measured energy (no MLPerf power result; forecasts have none)")
    wanted: list[tuple[str, str, float | None, str, dict[str, Any]]] = [
        ("--max-accelerators", "accelerator_count", max_accelerators, "accelerators", {}),
        ("--deadline-min", "time_high_min", deadline_min, "min", {}),
        ("--max-cost", "cost_cap_usd", max_cost, f"USD at the {basis} listed price", cost),
        ("--max-energy-kwh", "energy_kwh", max_energy_kwh, "kWh measured", energy)]
    return [Constraint(flag, column, float(limit), unit, **extra)
            for flag, column, limit, unit, extra in wanted if limit is not None]


def feasible(candidates: pd.DataFrame, constraints: list[Constraint]) -> pd.Series:
    """Per candidate row (indexed as `candidates`), True when it meets every one of `constraints` (all True when
    there are none)."""
    meets = pd.Series(True, index=candidates.index)
    for constraint in constraints:
        meets &= constraint.met(candidates)
    return meets


def why_infeasible(candidates: pd.DataFrame, constraints: list[Constraint]) -> str:
    """Which constraint to relax, and to what: for each, the best value among the candidates meeting all the
    others; then how many candidates meet each constraint on its own."""
    lines = []
    for constraint in constraints:
        others = [other for other in constraints if other is not constraint]
        pool = candidates[feasible(candidates, others) & candidates[constraint.column].notna()]
        if pool.empty:
            lines.append(f"{constraint.describe()}: relaxing it alone is not enough (nothing meets the others)")
            continue
        best = pool.loc[pool[constraint.column].idxmin()]
        lines.append(f"{constraint.describe()}: relax it to {constraint.show(best[constraint.column])} "
                     f"{constraint.unit} ({best['kind']} {best['label']})")
    alone = ", ".join(f"{c.describe()} by {int(c.met(candidates).sum())}" for c in constraints)
    lines.append(f"of {len(candidates)} candidates, met on its own: {alone}")
    return "\n  ".join(lines)


def has_flag(constraints: list[Constraint], flag: str) -> bool:
    """True when one of `constraints` came from the command-line flag `flag` (e.g. "--deadline-min")."""
    return any(constraint.flag == flag for constraint in constraints)


def recommend(candidates: pd.DataFrame, constraints: list[Constraint], floor: float) -> pd.DataFrame:
    """The `priced` candidates that meet every constraint in the buyer's order (`pipeline.analysis.buyer.ordered`:
    a deadline puts the cheapest first, a budget alone the fastest), with their `rank` (1 first) and the reason
    each is listed."""
    chosen = ordered(candidates[feasible(candidates, constraints)], deadline=has_flag(constraints, "--deadline-min"),
                     budget=has_flag(constraints, "--max-cost"))
    return chosen.assign(rank=range(1, len(chosen) + 1),
                         reason=[_reason(row, constraints, floor) for row in chosen.to_dict(orient="records")])


def left_out(candidates: pd.DataFrame, chosen: pd.DataFrame, constraints: list[Constraint]) -> list[str]:
    """Each family with candidates but none meeting the constraints, with the constraints that leave all its
    candidates out."""
    lines = []
    for family in sorted(set(candidates["accelerator_family"].dropna()) - set(chosen["accelerator_family"])):
        rows = candidates[candidates["accelerator_family"] == family]
        failed = [constraint.why_not(rows) for constraint in constraints if not constraint.met(rows).any()]
        reason = "; ".join(failed) or "no single candidate meets all the constraints at once"
        lines.append(f"{family} ({len(rows)} candidate{'s' if len(rows) != 1 else ''}): {reason}")
    return lines


def _reason(row: dict[str, Any], constraints: list[Constraint], floor: float) -> str:
    parts = [row["detail"]]
    for constraint in constraints:
        bound = (" (upper end of the interval)" if row["kind"] == FORECAST and constraint.column != "accelerator_count"
                 else "")
        parts.append(f"{constraint.show(row[constraint.column])}{bound} <= {constraint.limit:g} {constraint.unit}")
    efficiency = row["scaling_efficiency"]
    if efficiency is not None and not math.isnan(efficiency):
        side = "at or above" if efficiency >= floor else "below (past the break-even)"
        value = (f"model scaling efficiency {efficiency:.2f}" if row["kind"] == FORECAST else
                 f"scaling efficiency {efficiency:.2f} within its series (against its smallest count)")
        parts.append(f"{value}, {side} the {floor:g} floor")
    return "; ".join(parts)


def check_energy(configurations: pd.DataFrame, candidates: pd.DataFrame, benchmark: str,
                 families: list[str] | None) -> None:
    """Before --max-energy-kwh: a UsageError when no candidate has measured energy, saying where some is (the
    benchmark's families, or the benchmarks, with measured energy)."""
    if candidates["energy_kwh"].notna().any():
        return
    measured = configurations[configurations["energy_kwh"].notna()]
    chosen = f" {', '.join(families)}" if families else ""
    own = sorted(measured.loc[measured["benchmark"] == benchmark, "accelerator_family"].dropna().unique())
    where = (f"{benchmark} families with measured energy: {', '.join(own)}" if own else
             f"benchmarks with measured energy: {', '.join(sorted(measured['benchmark'].unique())) or 'none'}")
    raise UsageError(f"--max-energy-kwh: none of the {len(candidates)} {benchmark}{chosen} candidates has measured "
                     f"energy (only MLPerf power results measure it, from v4.0 on, for few submissions); {where}")


def order_words(constraints: list[Constraint], basis: str = DEFAULT_PRICE_BASIS) -> str:
    """The order of the listing in words (a cost at the price `basis`)."""
    if has_flag(constraints, "--deadline-min"):
        return f"cheapest first (cost {BASIS_WORDS[basis]}; without a price last), then faster"
    if has_flag(constraints, "--max-cost"):
        return "fastest first, then cheaper"
    return "the front on time and accelerator-hours first (none beaten on both), fastest first"


def energy_text(row: dict[str, Any]) -> str:
    """", energy ..." of a candidate (`energy_words`, long, with its energy cost); "" when it has neither a
    measurement nor an estimate."""
    words = energy_words(EnergyFigure.of(row), usd=usd)
    return f", energy {words.long}" if words.kind else ""


def render(chosen: pd.DataFrame, candidates: pd.DataFrame, constraints: list[Constraint], benchmark: str,
           families: list[str] | None, prices_path: object | None, limit: int, untrusted: list[str],
           electricity: ElectricityPrice = DEFAULT_ELECTRICITY_PRICE, basis: str = DEFAULT_PRICE_BASIS,
           providers: tuple[str, ...] | None = None, max_age_days: int = MAX_PRICE_AGE_DAYS) -> str:
    """The answer as text: what matched and how many are shown, the cost basis (the `providers` priced, when
    chosen; the prices' age limit, `max_age_days`), then one entry per candidate."""
    rule = ", ".join(constraint.describe() for constraint in constraints) or "no constraints"
    kinds = candidates["kind"].value_counts()
    rounds = sorted(set(candidates["round"].dropna()))
    shown = min(limit, len(chosen))
    more = "; --limit N shows more" if shown < len(chosen) else ""
    lines = [f"{benchmark}{' (' + ', '.join(families) + ')' if families else ''}, round {', '.join(rounds)}: "
             f"{len(chosen)} matched ({rule}), showing {shown}{more} (of {len(candidates)} candidates: "
             f"{kinds.get(PUBLISHED, 0)} published, republished ones included, and {kinds.get(FORECAST, 0)} "
             f"trusted forecasts); {order_words(constraints, basis)}"]
    published = candidates[candidates["kind"] == PUBLISHED]
    measured = int(published["energy_kwh"].notna().sum())
    lines += basis_lines(prices_path, electricity, energy=measured > 0, max_age_days=max_age_days)
    if providers:
        lines.append(f"providers: the public prices of {', '.join(providers)} alone (--provider)")
    estimated = int(candidates["energy_estimated_kwh"].notna().sum())
    if measured or has_flag(constraints, "--max-energy-kwh"):
        lines.append(f"measured energy: {measured} of {len(published)} published candidates (forecasts: none)")
    if estimated:
        lines.append(f"estimated energy (accelerators x hours x rated power x the measured results' share of it; "
                     f"not an MLPerf result, never checked against --max-energy-kwh): {estimated} of "
                     f"{len(candidates)} candidates")
    if untrusted:
        lines.append(f"not forecast (forecast not trusted): {', '.join(untrusted)}")
    excluded = left_out(candidates, chosen, constraints)
    if excluded:
        lines.append("families left out by the constraints: " + "; ".join(excluded))
    for row in chosen.head(limit).to_dict(orient="records"):
        lines.append(f"{row['rank']:2d}. [{row['kind']}] {row['label']}: {row['accelerator_family']} x "
                     f"{row['accelerator_count']:g}, {row['time_to_train_min']:.3g} min, "
                     f"{row['accelerator_hours']:.3g} accelerator-hours, {cost_text(row)}{energy_text(row)}")
        lines.append(f"    why: {row['reason']}")
    return "\n".join(lines)


def as_json(row: dict[str, Any]) -> str:
    """One candidate as a JSON line: its rank, what it is, its time (and for a forecast its interval, method,
    kind, trust and rounds fitted on), why it is listed, its cost (`cost_cap_usd` the one caps are checked on) and
    measured energy (null where there is none) or its estimate from rated power; counts as whole numbers."""
    fields = {key: row[key] for key in ("rank", "kind", "label", "accelerator_family", "time_to_train_min",
                                        "time_high_min", "accelerator_hours", "reason")}
    fields["accelerator_count"] = int(row["accelerator_count"])
    fields["republished_of"] = None if pd.isna(row["republished_of"]) else row["republished_of"]
    fields.update({key: None if pd.isna(row[key]) else row[key]
                   for key in [*COST_COLUMNS, "cost_cap_usd", *ENERGY_COLUMNS, *ESTIMATE_COLUMNS]})
    return json.dumps({**fields, "forecast": row["forecast"]}, sort_keys=True)
