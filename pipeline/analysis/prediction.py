"""`predict`'s answers (`pipeline.commands.predict`): queries read and checked, each answered from the decide stage's
saved models (or refitted as of an earlier round) with the family's nearest published results, their measured energy,
the forecast's cost per run, and the text or JSON shown.

It combines the forecasting and pricing sub-packages, so, like `buyer` and `recommendation`, it sits at the top of
`pipeline.analysis` and no sub-package imports it.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from pipeline.analysis.forecasting.answers import Answer, FittedBenchmark, answer, fit_benchmark, interval_text
from pipeline.analysis.forecasting.backtest import load_backtest
from pipeline.analysis.forecasting.model import UNSPECIFIED, form_factors_by_frequency, model_inputs, next_round_drift
from pipeline.analysis.forecasting.models_artifact import saved_models
from pipeline.analysis.pricing.costs import (
    COST_LABEL,
    ENERGY_COLUMNS,
    NO_PRICE,
    RESULT_KEY,
    cost_text,
    measured_energy,
    span,
    training_costs,
    with_measured_energy,
)
from pipeline.analysis.pricing.electricity import (
    DEFAULT_ELECTRICITY_PRICE,
    ElectricityPrice,
    energy_cost,
)
from pipeline.analysis.pricing.price_table import MAX_PRICE_AGE_DAYS
from pipeline.analysis.scope import read_configurations
from pipeline.core import paths
from pipeline.core.cli import canonical_spelling
from pipeline.core.errors import UsageError
from pipeline.mlperf.catalogue import ROUND_PUBLISHED, published_text, round_published, round_version
from pipeline.mlperf.hardware.accelerators import specifications
from pipeline.settings import AnalysisSettings, DecideTrustSettings

QUERY_COLUMNS = ["benchmark", "accelerator", "count"]
NEAREST_PUBLISHED = 5


@dataclass(frozen=True)
class Query:
    """One question: a benchmark, an accelerator family and count (whole accelerators), optionally a form
    factor; `line` is its line in a --from file (None on the command line)."""

    benchmark: str
    accelerator: str
    count: int
    form_factor: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class RowError:
    """A --from row that could not be answered: its line in the file and why."""

    line: int
    reason: str

    def as_dict(self) -> dict[str, Any]:
        """The error as one --json object: the query's row, its input and the message."""
        return {"line": self.line, "error": self.reason}


def read_queries(path: Path) -> tuple[list[Query], list[RowError]]:
    """The rows of a CSV with columns benchmark, accelerator, count (and optionally form_factor): the valid
    queries and, for each invalid row, its line and why. A file that is missing, unreadable or without the
    columns is a UsageError."""
    if not path.is_file():
        raise UsageError(f"--from {path}: no such file; it needs the columns {', '.join(QUERY_COLUMNS)}")
    try:
        table = pd.read_csv(path, dtype=str, skipinitialspace=True, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise UsageError(f"--from {path} is not a readable CSV ({error}); it needs the columns "
                         f"{', '.join(QUERY_COLUMNS)}") from None
    missing = [column for column in QUERY_COLUMNS if column not in table.columns]
    if missing or table.empty:
        raise UsageError(f"--from {path} needs a header with {', '.join(QUERY_COLUMNS)} and at least one row"
                         f"{' (missing: ' + ', '.join(missing) + ')' if missing else ''}")
    queries, errors = [], []
    form_factors = table["form_factor"] if "form_factor" in table.columns else pd.Series("", index=table.index)
    for position, (row, form_factor) in enumerate(zip(table.itertuples(index=False), form_factors)):
        line = position + 2  # the header is line 1
        benchmark, accelerator, count = (str(value).strip() for value in (row.benchmark, row.accelerator, row.count))
        empty = [name for name, value in zip(QUERY_COLUMNS, (benchmark, accelerator, count)) if not value]
        if empty:
            errors.append(RowError(line, f"{', '.join(empty)} is empty"))
        elif not re.fullmatch(r"\+?\d+(\.0*)?", count) or float(count) < 1:
            errors.append(RowError(line, f"count must be a positive whole number of accelerators, got {count!r}"))
        else:
            queries.append(Query(benchmark, accelerator, int(float(count)), str(form_factor).strip() or None, line))
    return queries, errors


def resolve_query(fitted: FittedBenchmark, query: Query) -> tuple[str, str]:
    """The family and form factor of a query as the data (or the specification table) spells them; a
    UsageError naming the valid choices otherwise."""
    frame = fitted.published
    known = fitted.families()
    family = canonical_spelling(query.accelerator, known) or canonical_spelling(
        query.accelerator, list(specifications().index))
    if family is None:
        raise UsageError(f"unknown accelerator family {query.accelerator!r} for {fitted.benchmark}; families with "
                         f"results: {', '.join(known) or 'none'}; or one of the specification table: "
                         f"{', '.join(specifications().index)}")
    published = frame.loc[frame["accelerator_family"] == family, "form_factor"]
    if published.empty:
        return family, query.form_factor or UNSPECIFIED
    form_factors = form_factors_by_frequency(published)
    if query.form_factor is None:
        return family, form_factors[0]
    form_factor = canonical_spelling(query.form_factor, form_factors)
    if form_factor is None:
        raise UsageError(f"no {family} results with form factor {query.form_factor!r} in {fitted.benchmark}; "
                         f"choose one of: {', '.join(form_factors)}")
    return family, form_factor


def nearest_published(family_frame: pd.DataFrame, count: float, n: int = NEAREST_PUBLISHED) -> pd.DataFrame:
    """The family's published results closest in accelerator count (on a log scale), fastest first on ties."""
    distance = (family_frame["accelerator_count"].astype(float).map(math.log) - math.log(count)).abs()
    nearest = family_frame.assign(distance=distance).sort_values(["distance", "time_to_train_min"]).head(n)
    return nearest.assign(accelerator_count=nearest["accelerator_count"].astype(int))[
        ["round", "submitter", "system", "form_factor", "accelerator_count", "time_to_train_min"]]


def predicted_cost(result: Answer, prices: dict[str, float] | None,
                   max_age_days: int = MAX_PRICE_AGE_DAYS) -> dict[str, Any]:
    """The cost of the forecast (`pipeline.analysis.pricing.costs.training_costs` of its accelerator-hours, count x
    predicted minutes / 60, at public prices at most `max_age_days` older than the table's newest, without the
    energy cost: a forecast has no measured energy), with `accelerator_hours`,
    `label` and the range over the interval: `interval_low_usd` (the cheapest price at the interval's lower end)
    and `interval_high_usd` (the dearest at its upper end); missing figures as None."""
    hours = result.count * result.predicted_min / 60
    costs = training_costs(pd.DataFrame({"accelerator_family": [result.accelerator], "accelerator_hours": [hours]}),
                           prices, max_age_days=max_age_days).drop(
        columns=["energy_cost_usd", "energy_estimated_cost_usd"]).iloc[0]
    fields: dict[str, Any] = {"accelerator_hours": hours, "label": COST_LABEL, **costs.to_dict(),
                              "interval_low_usd": None if result.low_min is None else
                              result.count * result.low_min / 60 * costs["cost_low_usd_per_accelerator_hour"],
                              "interval_high_usd": result.count * result.high_min / 60 * costs[
                                  "cost_high_usd_per_accelerator_hour"]}
    return {key: None if pd.isna(value) else value.item() if hasattr(value, "item") else value
            for key, value in fields.items()}


def with_energy_cost(nearest: pd.DataFrame, electricity: ElectricityPrice) -> pd.DataFrame:
    """The nearest published results with `energy_cost_usd` where their energy was measured."""
    return nearest.assign(energy_cost_usd=[math.nan if pd.isna(kwh) else energy_cost(kwh, electricity)
                                           for kwh in nearest["energy_kwh"]])


def measured_rows(nearest: pd.DataFrame) -> list[dict[str, Any]]:
    """The nearest published results with measured energy, for JSON: the result, its energy, point, cost."""
    rows = nearest.loc[nearest["energy_kwh"].notna(),
                       [*RESULT_KEY, "accelerator_count", *ENERGY_COLUMNS, "energy_cost_usd"]]
    return [{key: None if pd.isna(value) else value for key, value in row.items()}
            for row in rows.to_dict(orient="records")]


def render_cost(cost: dict[str, Any]) -> str:
    """The forecast's cost (`predicted_cost`) in one line."""
    if cost["cost_basis"] == NO_PRICE:
        return "cost: no public price for this family (give yours with --prices)"
    interval = ("" if cost["interval_low_usd"] is None else
                f"; over the interval {span(cost['interval_low_usd'], cost['interval_high_usd'])} USD")
    return (f"cost ({COST_LABEL}): {cost_text(cost, lead='')} for {cost['accelerator_hours']:.3g} "
            f"accelerator-hours of hardware time at the forecast{interval}")


def render_answer(result: Answer, nearest: pd.DataFrame, cost: dict[str, Any] | None = None) -> str:
    """An answer as text: the forecast and interval, how it was made, its trust, notes, its cost, the nearest
    published (with their measured energy, where they have one)."""
    form = "" if result.form_factor == UNSPECIFIED else f" ({result.form_factor})"
    kind = f"{result.kind}, borrowed from other families" if result.specification_based else result.kind
    flag = "EXTRAPOLATED " if result.extrapolated else ""
    lines = [f"{result.benchmark}, {result.accelerator}{form} x {result.count}: {flag}forecast time to train "
             f"{result.predicted_min:.3g} min ({100 * result.target_coverage:.0f}% interval "
             f"{interval_text(result.low_min, result.high_min)}) in the round after {result.rounds[-1]}",
             f"method: {result.method} ({kind}); {result.note}",
             f"error: {result.backtest_error}",
             f"fitted on rounds {', '.join(result.rounds)}; interval calibrated on backtest residuals of: "
             f"{result.calibration}",
             "trusted: results from enough rounds, enough backtest forecasts with coverage in range and a small "
             "error, a count inside the published ones" if result.trusted
             else "not trusted: " + "; ".join(result.reasons)]
    lines += [f"note: {note}" for note in result.notes]
    if cost is not None:
        lines.append(render_cost(cost))
    if not nearest.empty:
        measured = "energy_kwh" in nearest and nearest["energy_kwh"].notna().any()
        shown = nearest if measured else nearest.drop(columns=[*ENERGY_COLUMNS, "energy_cost_usd"], errors="ignore")
        lines.append(f"nearest published {result.accelerator} results, by accelerator count"
                     f"{' (energy: measured by the result on its row)' if measured else ''}:")
        lines.append(shown.to_string(index=False, na_rep="", float_format=lambda value: f"{value:.3g}"))
    return "\n".join(lines)


def published_round(text: str, configurations: pd.DataFrame) -> str:
    """`--until`'s round as the data spells it (any case): one of the rounds with results in this build's data, else
    a UsageError listing them (a round published but not in the data says so: it is not "unpublished")."""
    rounds = sorted(configurations["round"].unique(), key=round_version)
    match = canonical_spelling(text, rounds)
    if match is None:
        known = canonical_spelling(text, list(ROUND_PUBLISHED))
        why = (f"MLPerf Training {known} was {published_text(known)} but is not in this build's data (add its archive "
               "to the mirror, or run `dvc repro` with network)" if known is not None
               else f"{text!r} is not a round in this build's data")
        raise UsageError(f"--until: {why}; choose one of: {', '.join(rounds)}")
    return match


def models_as_of(fitted: FittedBenchmark, until: str, configurations: pd.DataFrame, analysis: AnalysisSettings,
                 points: pd.DataFrame) -> FittedBenchmark:
    """`fitted`'s benchmark refitted on the rounds up to `until` and calibrated on the backtest folds up to it,
    as the decide stage would have saved it then."""
    cutoff = round_published(until)
    configurations = configurations[configurations["round"].map(round_published) <= cutoff]
    frame = model_inputs(configurations, analysis, fitted.benchmark)
    if frame.empty:
        raise UsageError(f"no {fitted.benchmark} results in the analysis scope up to {until}")
    return fit_benchmark(fitted.benchmark, frame, points[points["fold_time"] <= cutoff], fitted.target_coverage,
                         fitted.not_analysed_reason, next_round_drift(configurations, analysis))


class Answerer:
    """Answers queries from the saved models (refitted as of `until` when given), each benchmark loaded once."""

    def __init__(self, until: str | None, analysis: AnalysisSettings, rule: DecideTrustSettings,
                 electricity: ElectricityPrice = DEFAULT_ELECTRICITY_PRICE) -> None:
        self.rule, self.analysis, self.electricity = rule, analysis, electricity
        self.models: dict[str, FittedBenchmark] = {}
        # --until refits on them; otherwise they only add the measured energy of the nearest published results,
        # and the saved models answer without them
        self.configurations = (read_configurations() if until is not None or paths.CONFIGURATIONS.is_file()
                               else None)
        self.until = None if self.configurations is None or until is None else published_round(
            until, self.configurations)
        self.points = load_backtest() if until is not None else None

    def fitted(self, benchmark: str) -> FittedBenchmark:
        """The decide stage's saved models of `benchmark` (loaded once per benchmark), or the error to report."""
        key = benchmark.strip().casefold()
        if key not in self.models:
            models = saved_models(benchmark)
            if self.until is not None and self.configurations is not None and self.points is not None:
                models = models_as_of(models, self.until, self.configurations, self.analysis, self.points)
            self.models[key] = models
        return self.models[key]

    def __call__(self, query: Query) -> tuple[Answer, pd.DataFrame]:
        """The answer to `query` and the family's nearest published results with their measured energy
        (`pipeline.analysis.pricing.costs.measured_energy`, and its cost); UsageError when it has none."""
        fitted = self.fitted(query.benchmark)
        family, form_factor = resolve_query(fitted, query)
        result = answer(fitted, family, form_factor, query.count, self.rule)
        family_frame = fitted.published[fitted.published["accelerator_family"] == family]
        if not len(family_frame):
            return result, family_frame
        energy = measured_energy(pd.DataFrame() if self.configurations is None else self.configurations,
                                 fitted.benchmark)
        nearest = with_measured_energy(nearest_published(family_frame, query.count), energy)
        return result, with_energy_cost(nearest, self.electricity)


def row_error_text(error: RowError, as_json: bool) -> str:
    """A row that could not be answered: one JSON object (`RowError.as_dict`) or "line N: error: reason"."""
    return json.dumps(error.as_dict(), sort_keys=True) if as_json else f"line {error.line}: error: {error.reason}"
