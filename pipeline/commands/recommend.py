"""Recommend configurations for a benchmark under constraints: published results and model predictions.

    python -m pipeline.commands.recommend --benchmark bert [--max-accelerators N] [--deadline-min M]
        [--max-cost USD] [--prices FILE] [--max-energy-kwh E] [--family H100 --family A100 ...] [--top K] [--json]

Candidates:
- published: every configuration of the benchmark's efficiency ranking (reports/rank/B.csv);
- predicted: for each accelerator family and form factor it was published in, the unpublished powers of two
  within its published count range whose next-round forecast (`pipeline.analysis.forecasting.answers.answer` on the
  models the
  decide stage saved, as `pipeline.commands.predict` gives it; nothing is refitted) is trusted; scaling efficiency
  from the forecasts, relative to the family's smallest published count.

With --json, one JSON object per listed candidate: its rank, its fields (the accelerator count a whole number),
the reason it is listed and, for a forecast, the forecast itself (interval, method, kind, trust and its reasons,
rounds fitted on). Families with candidates that no constraint-meeting candidate represents are listed with the
constraint that left them out (a family without a price under --max-cost, say).

Order: the rank printed beside each candidate (1 is best), as the ranking orders: by non-dominated front on time to
train and accelerator-hours among the listed candidates (none is listed above one at least as fast with at most as
many accelerator-hours), then by the ranking's trade-off score (`pipeline.analysis.statistics.ranking.scores` on params
`rank.criteria`, lower is better) within a front. A candidate's score depends on that candidate alone, so published
and predicted scores are comparable and a prediction moves no published score.

Constraints are conservative for predictions: a predicted configuration meets a deadline or a budget only
if the upper end of its prediction interval does.

Cost (derived, not an MLPerf result; `pipeline.analysis.pricing.costs`): accelerator-hours x price per accelerator-hour,
a
range over the dated public list prices of pipeline/analysis/pricing/price_table.csv naming the provider at each end;
your
--prices file (YAML: accelerator family -> USD per accelerator-hour) replaces them for the families it names. A
budget (--max-cost, USD) is met at the cheapest listed price. Accelerator-hours alone are hardware time, not what
you pay. Energy is only what MLPerf power results measured (few results have it): --max-energy-kwh leaves out every
candidate without a measurement, predictions included; its cost uses params `report.electricity_usd_per_kwh`.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.analysis.forecasting.answers import FittedBenchmark, answer, retirement_note
from pipeline.analysis.forecasting.models_artifact import saved_models
from pipeline.analysis.pricing.costs import (
    COST_COLUMNS,
    ENERGY_COLUMNS,
    basis_lines,
    cost_text,
    measured_energy,
    training_costs,
    usd,
    with_measured_energy,
)
from pipeline.analysis.pricing.electricity import DEFAULT_ELECTRICITY_PRICE, ElectricityPrice, electricity_price
from pipeline.analysis.pricing.prices import load_prices
from pipeline.analysis.scope import read_configurations, republication
from pipeline.analysis.statistics.ranking import nondominated_fronts, scores
from pipeline.core import paths
from pipeline.core.cli import ArgumentParser, canonical_spelling
from pipeline.core.errors import UsageError, cli
from pipeline.settings import Trust, load_settings

CANDIDATE_COLUMNS = ["kind", "label", "accelerator_family", "accelerator_count", "time_to_train_min",
                     "time_high_min", "accelerator_hours", "scaling_efficiency", "score", "detail", "forecast",
                     *ENERGY_COLUMNS]


@dataclass(frozen=True)
class Constraint:
    flag: str
    column: str  # the conservative value a candidate is checked on
    limit: float
    unit: str
    missing: str = ""  # why a candidate may have no value to compare (no price, not measured)
    money: bool = False  # shown in whole dollars

    def met(self, candidates: pd.DataFrame) -> pd.Series:
        return candidates[self.column] <= self.limit  # a missing value (no price) never meets a limit

    def describe(self) -> str:
        return f"{self.flag} {self.limit:g}"

    def show(self, value: float) -> str:
        return usd(value) if self.money else f"{value:.3g}"

    def why_not(self, family_candidates: pd.DataFrame) -> str:
        """Why this constraint leaves out every one of a family's candidates (all of which fail it)."""
        values = family_candidates[self.column].dropna()
        if values.empty:
            return f"{self.describe()}: {self.missing}"
        return f"{self.describe()}: its best is {self.show(values.min())} {self.unit}"


def published_candidates(ranking: pd.DataFrame, energy: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every configuration of the whole ranking (filter afterwards: the scores are against them all), with its
    measured energy where `energy` (`pipeline.analysis.pricing.costs.measured_energy`) has it; a republished one (ranked
    with `analysis.republished: include`) names the original result it repeats."""
    originals = (ranking["republished_of"] if "republished_of" in ranking
                 else pd.Series([None] * len(ranking), index=ranking.index))
    ranking = with_measured_energy(ranking, measured_energy(pd.DataFrame(), "") if energy is None else energy)
    return ranking.assign(
        kind="published", label=ranking["round"] + " " + ranking["submitter"] + " " + ranking["system"],
        time_high_min=ranking["time_to_train_min"], forecast=None,
        detail=["published result" + ("" if pd.isna(original) else f"; {republication(str(original))}")
                for original in originals])[CANDIDATE_COLUMNS]


def predicted_candidates(fitted: FittedBenchmark, rule: Trust,
                         families: list[str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Trusted forecasts (`pipeline.analysis.forecasting.answers.answer` on the decide stage's saved models) at the
    unpublished
    powers of two inside each family's published count range per form factor, unscored; and the families
    not forecast, with the reasons. `families`: only these (all when None)."""
    rows, untrusted = [], []
    published_rows = fitted.published
    for family in families or fitted.families():
        published = published_rows[published_rows["accelerator_family"] == family]
        for form_factor in published["form_factor"].unique():
            counts = published.loc[published["form_factor"] == form_factor, "accelerator_count"]
            low, high = float(counts.min()), float(counts.max())
            reference = answer(fitted, family, form_factor, low, rule)
            if not reference.trusted:
                untrusted.append(f"{family} {form_factor} ({'; '.join(reference.reasons)})")
                continue
            powers = 2.0 ** np.arange(math.ceil(math.log2(low)), math.floor(math.log2(high)) + 1)
            for count in (count for count in powers if count not in set(counts)):
                forecast = answer(fitted, family, form_factor, count, rule)
                if not forecast.trusted:
                    continue
                rows.append({
                    "kind": "predicted", "label": f"{family} {form_factor} x {count:g}",
                    "accelerator_family": family, "accelerator_count": count,
                    "time_to_train_min": forecast.predicted_min, "time_high_min": forecast.high_min,
                    "accelerator_hours": count * forecast.predicted_min / 60,
                    "scaling_efficiency": reference.predicted_min * low / (forecast.predicted_min * count),
                    "score": np.nan, "forecast": forecast.model_dump(),
                    "detail": f"forecast for the next round by the {forecast.method} ({forecast.kind}), "
                              f"{100 * fitted.interval:.0f}% interval {forecast.low_min:.3g} to "
                              f"{forecast.high_min:.3g} min, scored as published results are"})
    return pd.DataFrame(rows, columns=CANDIDATE_COLUMNS), untrusted


def score_candidates(candidates: pd.DataFrame, criteria: dict[str, Any]) -> pd.DataFrame:
    """`candidates` with `score`: the ranking's trade-off score (`pipeline.analysis.statistics.ranking.scores`) on
    params
    `rank.criteria`, which name time to train and accelerator-hours only (`pipeline.settings.RANK_CRITERIA`), both
    known for a prediction."""
    if candidates.empty:
        return candidates
    return candidates.assign(score=scores(candidates, criteria))


def with_costs(candidates: pd.DataFrame, prices: dict[str, float] | None,
               electricity: ElectricityPrice = DEFAULT_ELECTRICITY_PRICE) -> pd.DataFrame:
    """`candidates` with the cost columns (`pipeline.analysis.pricing.costs.training_costs`: public list prices,
    `prices`
    overriding them) and `cost_budget_usd`, the cost a budget is checked on: the cheapest price times the
    accelerator-hours at the upper end of the time (of the interval, for a prediction)."""
    costs = training_costs(candidates, prices, electricity=electricity)
    budget_hours = candidates["accelerator_count"] * candidates["time_high_min"] / 60
    return pd.concat([candidates.drop(columns=[c for c in COST_COLUMNS if c in candidates]), costs], axis=1).assign(
        cost_budget_usd=budget_hours * costs["cost_low_usd_per_accelerator_hour"])


def constraints_of(max_accelerators: int | None, deadline_min: float | None, max_cost: float | None,
                   max_energy_kwh: float | None = None) -> list[Constraint]:
    cost = dict(missing="no public price for it (nor in your price file), so no cost to compare", money=True)
    energy = dict(missing="no measured energy (no MLPerf power result; predictions have none)")
    wanted: list[tuple[str, str, float | None, str, dict[str, Any]]] = [
        ("--max-accelerators", "accelerator_count", max_accelerators, "accelerators", {}),
        ("--deadline-min", "time_high_min", deadline_min, "min", {}),
        ("--max-cost", "cost_budget_usd", max_cost, "USD at the cheapest listed price", cost),
        ("--max-energy-kwh", "energy_kwh", max_energy_kwh, "kWh measured", energy)]
    return [Constraint(flag, column, float(limit), unit, **extra)
            for flag, column, limit, unit, extra in wanted if limit is not None]


def feasible(candidates: pd.DataFrame, constraints: list[Constraint]) -> pd.Series:
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


def recommend(candidates: pd.DataFrame, constraints: list[Constraint], floor: float) -> pd.DataFrame:
    """The candidates that meet every constraint, by non-dominated front on time to train and accelerator-hours
    (as the ranking), lowest trade-off score first within a front, with their `rank` in that order (1 is best)
    and the reason each is listed."""
    chosen = candidates[feasible(candidates, constraints)]
    chosen = chosen.assign(front=nondominated_fronts(chosen["time_to_train_min"].to_numpy(dtype=float),
                                                     chosen["accelerator_hours"].to_numpy(dtype=float)))
    chosen = chosen.sort_values(["front", "score", "accelerator_hours", "label"],
                                kind="mergesort").drop(columns="front").reset_index(drop=True)
    return chosen.assign(rank=np.arange(1, len(chosen) + 1),
                         reason=[_reason(row, constraints, floor) for row in chosen.to_dict(orient="records")])


def left_out(candidates: pd.DataFrame, chosen: pd.DataFrame, constraints: list[Constraint]) -> list[str]:
    """Each family with candidates but none meeting the constraints, with the constraints that leave all its
    candidates out."""
    lines = []
    for family in sorted(set(candidates["accelerator_family"]) - set(chosen["accelerator_family"])):
        rows = candidates[candidates["accelerator_family"] == family]
        failed = [constraint.why_not(rows) for constraint in constraints if not constraint.met(rows).any()]
        reason = "; ".join(failed) or "no single candidate meets all the constraints at once"
        lines.append(f"{family} ({len(rows)} candidate{'s' if len(rows) != 1 else ''}): {reason}")
    return lines


def _reason(row: dict[str, Any], constraints: list[Constraint], floor: float) -> str:
    parts = [row["detail"]]
    for constraint in constraints:
        # Predictions are checked on the upper end of their interval (see the module docstring).
        bound = " (upper end of the interval)" if row["kind"] == "predicted" and constraint.column != \
            "accelerator_count" else ""
        parts.append(f"{constraint.show(row[constraint.column])}{bound} <= {constraint.limit:g} {constraint.unit}")
    efficiency = row["scaling_efficiency"]
    if not math.isnan(efficiency):
        side = "at or above" if efficiency >= floor else "below (past the break-even)"
        # The two kinds are measured against different references; say which, so 2.04 next to 0.85 makes sense.
        if row["kind"] == "predicted":
            value = f"model scaling efficiency {efficiency:.2f}"
        else:
            value = f"scaling efficiency {efficiency:.2f} within its series (against its smallest count)"
        parts.append(f"{value}, {side} the {floor:g} floor")
    return "; ".join(parts)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = ArgumentParser("pipeline.commands.recommend", __doc__)
    parser.add_argument("--benchmark", required=True, help="benchmark id of the catalogue, e.g. bert (any case)")
    parser.add_argument("--max-accelerators", type=int, help="at most this many accelerators")
    parser.add_argument("--deadline-min", type=float, help="train within this many minutes")
    parser.add_argument("--max-cost", type=float, metavar="USD",
                        help="at most this cost to train at the cheapest public list price (or your --prices)")
    parser.add_argument("--prices", type=Path, metavar="FILE",
                        help="your prices, YAML: accelerator family -> USD per accelerator-hour (each replaces "
                             "the public prices of its family)")
    parser.add_argument("--max-energy-kwh", type=float, metavar="KWH",
                        help="at most this measured energy to train (only the few results with MLPerf power logs "
                             "have one)")
    parser.add_argument("--family", action="append", help="only this accelerator family (repeatable)")
    parser.add_argument("--top", type=int, default=10, help="how many to list (default 10)")
    parser.add_argument("--json", action="store_true", help="one JSON object per candidate, one per line")
    return parser.parse_args(argv)


def check_arguments(args: argparse.Namespace) -> None:
    for flag, value in [("--max-accelerators", args.max_accelerators), ("--deadline-min", args.deadline_min),
                        ("--max-cost", args.max_cost), ("--max-energy-kwh", args.max_energy_kwh),
                        ("--top", args.top)]:
        if value is not None and not value > 0:
            raise UsageError(f"{flag} must be positive, got {value:g}")


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


def load_ranking(benchmark: str) -> pd.DataFrame:
    path = paths.ranking_csv(benchmark)
    ranked = sorted(ranking.stem for ranking in paths.RANK.glob("*.csv"))
    if not path.is_file():
        raise UsageError(f"{benchmark} has no efficiency ranking ({path}); ranked benchmarks: "
                         f"{', '.join(ranked) or 'none'} (run `dvc repro` first)")
    ranking = pd.read_csv(path)
    if ranking.empty:
        raise UsageError(f"{benchmark} was not ranked (too few configurations in scope, see "
                         f"{paths.rank_json(benchmark)}); ranked benchmarks: {', '.join(ranked)}")
    return ranking


def check_families(requested: list[str], available: list[str], benchmark: str) -> list[str]:
    """The requested families as the data spells them ("h100" is H100), or a UsageError listing the valid ones
    (`available`, the families with results)."""
    found = [canonical_spelling(family, available) for family in requested]
    unknown = [family for family, match in zip(requested, found) if match is None]
    if unknown:
        raise UsageError(f"no {benchmark} results for accelerator family {', '.join(map(repr, unknown))}; "
                         f"families with data: {', '.join(available)}")
    return [match for match in found if match is not None]


def price_families(prices: dict[str, float], available: list[str], path: Path, benchmark: str) -> dict[str, float]:
    """The price table keyed as the data spells the families (`available`, those with results); a note on
    stderr names the keys that match no family with results, and the families that do have them."""
    matched = {canonical_spelling(family, available) or family: price for family, price in prices.items()}
    unused = sorted(set(matched) - set(available))
    if unused:
        print(f"note: {path} prices families without {benchmark} results: {', '.join(unused)} "
              f"(families with results: {', '.join(available)})", file=sys.stderr)
    return matched


def energy_text(row: dict[str, Any]) -> str:
    """A candidate's measured energy and its cost ("" when it has none)."""
    if pd.isna(row["energy_kwh"]):
        return ""
    point = f", {row['power_measurement']}" if isinstance(row["power_measurement"], str) else ""
    return (f", energy {row['energy_kwh']:.3g} kWh measured{point} (energy cost {usd(row['energy_cost_usd'])} "
            f"USD)")


def render(chosen: pd.DataFrame, candidates: pd.DataFrame, constraints: list[Constraint], benchmark: str,
           families: list[str] | None, prices_path: Path | None, top: int, untrusted: list[str],
           electricity: ElectricityPrice = DEFAULT_ELECTRICITY_PRICE) -> str:
    rule = ", ".join(constraint.describe() for constraint in constraints) or "no constraints"
    kinds = candidates["kind"].value_counts()
    lines = [f"{benchmark}{' (' + ', '.join(families) + ')' if families else ''}: {len(chosen)} of "
             f"{len(candidates)} candidates ({kinds.get('published', 0)} published, {kinds.get('predicted', 0)} "
             f"predicted) meet {rule}; ordered by rank: front on time and accelerator-hours, then lowest trade-off "
             f"score first (the ranking's: each candidate's own, so published and predicted scores compare)"]
    published = candidates[candidates["kind"] == "published"]
    measured = int(published["energy_kwh"].notna().sum())
    lines += basis_lines(prices_path, electricity, energy=measured > 0)
    if measured or any(constraint.column == "energy_kwh" for constraint in constraints):
        lines.append(f"measured energy: {measured} of {len(published)} published candidates (predictions: none)")
    if untrusted:
        lines.append(f"not predicted (forecast not trusted): {', '.join(untrusted)}")
    excluded = left_out(candidates, chosen, constraints)
    if excluded:
        lines.append("families left out by the constraints: " + "; ".join(excluded))
    for row in chosen.head(top).to_dict(orient="records"):
        lines.append(f"{row['rank']:2d}. [{row['kind']}] {row['label']}: {row['accelerator_family']} x "
                     f"{row['accelerator_count']:g}, {row['time_to_train_min']:.3g} min, "
                     f"{row['accelerator_hours']:.3g} accelerator-hours, {cost_text(row)}{energy_text(row)}, "
                     f"trade-off score {row['score']:.4g}")
        lines.append(f"    why: {row['reason']}")
    return "\n".join(lines)


def build_candidates(fitted: FittedBenchmark, ranking: pd.DataFrame, rule: Trust, criteria: dict[str, Any],
                     families: list[str] | None, prices: dict[str, float] | None, energy: pd.DataFrame | None = None,
                     electricity: ElectricityPrice = DEFAULT_ELECTRICITY_PRICE) -> tuple[pd.DataFrame, list[str]]:
    """Published (with their measured `energy`, `pipeline.analysis.pricing.costs.measured_energy`) and predicted
    candidates
    of the chosen families (all when None), with their costs (`with_costs`), and the families whose forecasts are
    not trusted, with the reasons."""
    published = published_candidates(ranking, energy)
    if families:
        published = published[published["accelerator_family"].isin(families)]
    predicted, untrusted = predicted_candidates(fitted, rule, families)
    # Both kinds are scored by the ranking's own score, which depends on each candidate alone.
    published, predicted = (score_candidates(candidates, criteria) for candidates in (published, predicted))
    candidates = pd.concat([published, predicted], ignore_index=True).astype({"energy_kwh": float})
    return with_costs(candidates, prices, electricity), untrusted


def as_json(row: dict[str, Any]) -> str:
    """One candidate as a JSON line: its rank, what it is, its time (and for a forecast its interval, method,
    kind, trust and rounds fitted on), its score and why it is listed, its cost and measured energy (null where
    there is none); counts as whole numbers."""
    fields = {key: row[key] for key in ("rank", "kind", "label", "accelerator_family", "time_to_train_min",
                                        "time_high_min", "accelerator_hours", "score", "reason")}
    fields["accelerator_count"] = int(row["accelerator_count"])
    # cost and energy columns (`pipeline.analysis.pricing.costs`), empty ones as null
    fields.update({key: None if pd.isna(row[key]) else row[key]
                   for key in [*COST_COLUMNS, "cost_budget_usd", *ENERGY_COLUMNS]})
    return json.dumps({**fields, "forecast": row["forecast"]}, sort_keys=True)


@cli
def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    check_arguments(args)
    settings = load_settings()
    fitted = saved_models(args.benchmark)
    ranking = load_ranking(fitted.benchmark)
    families = check_families(args.family or [], fitted.families(), fitted.benchmark) or None
    prices = (price_families(load_prices(args.prices), fitted.families(), args.prices, fitted.benchmark)
              if args.prices is not None else None)
    configurations = read_configurations()
    electricity = electricity_price(settings.report.electricity_usd_per_kwh)
    candidates, untrusted = build_candidates(fitted, ranking, settings.decide.trust,
                                             settings.rank.model_dump()["criteria"], families, prices,
                                             measured_energy(configurations, fitted.benchmark), electricity)
    if args.max_energy_kwh is not None:
        check_energy(configurations, candidates, fitted.benchmark, families)
    constraints = constraints_of(args.max_accelerators, args.deadline_min, args.max_cost, args.max_energy_kwh)
    chosen = recommend(candidates, constraints, settings.decide.efficiency_floor)
    if chosen.empty:
        wanted = ", ".join(constraint.describe() for constraint in constraints)
        raise UsageError(f"no {fitted.benchmark} configuration meets all of {wanted}:\n  "
                         f"{why_infeasible(candidates, constraints)}")
    retired = retirement_note(fitted.benchmark, fitted.forecaster.rounds[-1])
    if args.json:
        print("\n".join(as_json(row) for row in chosen.head(args.top).to_dict(orient="records")))
        for line in left_out(candidates, chosen, constraints):
            print(f"note: left out by the constraints: {line}", file=sys.stderr)
    else:
        print(render(chosen, candidates, constraints, fitted.benchmark, families, args.prices, args.top, untrusted,
                     electricity))
    if retired:
        print(f"note: {retired}", file=sys.stderr if args.json else sys.stdout)


if __name__ == "__main__":
    main()
