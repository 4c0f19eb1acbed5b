"""Predict a configuration's time to train from its accelerator family and count, with an honest error.

    python -m pipeline.commands.predict --benchmark resnet --accelerator H100 --count 64 [--form-factor SXM]

The forecast comes from the models the decide stage saved (`pipeline.analysis.forecast`, calibrated on the
forward-chaining backtest); the scaling model itself is described in `pipeline.analysis.scaling`.
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline.analysis.forecast import (
    Answer,
    FittedBenchmark,
    answer,
    fit_benchmark,
    load_backtest,
)
from pipeline.analysis.models_artifact import saved_models
from pipeline.analysis.scaling import (
    UNSPECIFIED,
    canonical_spelling,
    form_factor_levels,
    model_inputs,
    nearest_published,
)
from pipeline.analysis.scope import read_configurations
from pipeline.core.cli import ArgumentParser
from pipeline.core.errors import UsageError, cli
from pipeline.mlperf.accelerators import specifications
from pipeline.mlperf.catalogue import round_published
from pipeline.settings import Analysis, load_settings, round_name


@dataclass(frozen=True)
class Query:
    benchmark: str
    accelerator: str
    count: float
    form_factor: str | None = None


QUERY_COLUMNS = ["benchmark", "accelerator", "count"]


def read_queries(path: Path) -> list[Query]:
    """The rows of a CSV with columns benchmark, accelerator, count (and optionally form_factor)."""
    if not path.is_file():
        raise UsageError(f"--from {path}: no such file; it needs the columns {', '.join(QUERY_COLUMNS)}")
    try:
        table = pd.read_csv(path, dtype=str, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise UsageError(f"--from {path} is not a readable CSV ({error}); it needs the columns "
                         f"{', '.join(QUERY_COLUMNS)}") from None
    missing = [column for column in QUERY_COLUMNS if column not in table.columns]
    if missing or table.empty:
        raise UsageError(f"--from {path} needs a header with {', '.join(QUERY_COLUMNS)} and at least one row"
                         f"{' (missing: ' + ', '.join(missing) + ')' if missing else ''}")
    counts = pd.to_numeric(table["count"], errors="coerce")
    bad = table.index[~(counts > 0)]
    if len(bad):
        raise UsageError(f"--from {path}, line {bad[0] + 2}: count must be a positive number, got "
                         f"{table.loc[bad[0], 'count']!r}")
    form_factors = table["form_factor"] if "form_factor" in table.columns else pd.Series(None, index=table.index)
    return [Query(str(row.benchmark).strip(), str(row.accelerator).strip(), float(count),
                  None if pd.isna(form_factor) else str(form_factor).strip())
            for row, count, form_factor in zip(table.itertuples(), counts, form_factors)]


def resolve_query(fitted: FittedBenchmark, query: Query) -> tuple[str, str]:
    """The family and form factor of a query as the data (or the specification table) spells them; a
    UsageError naming the valid choices otherwise."""
    frame = fitted.published
    known = fitted.families()
    family = canonical_spelling(query.accelerator, known) or canonical_spelling(
        query.accelerator, list(specifications().index))
    if family is None:
        raise UsageError(f"unknown accelerator family {query.accelerator!r} for {query.benchmark}; families with "
                         f"results: {', '.join(known) or 'none'}; or one of the specification table: "
                         f"{', '.join(specifications().index)}")
    published = frame.loc[frame["accelerator_family"] == family, "form_factor"]
    if published.empty:
        return family, query.form_factor or UNSPECIFIED
    levels = form_factor_levels(published)
    if query.form_factor is None:
        return family, levels[0]
    form_factor = canonical_spelling(query.form_factor, levels)
    if form_factor is None:
        raise UsageError(f"no {family} results with form factor {query.form_factor!r} in {query.benchmark}; "
                         f"choose one of: {', '.join(levels)}")
    return family, form_factor


def render_answer(answer: Answer, nearest: pd.DataFrame) -> str:
    """An answer as text: the forecast and interval, how it was made, its trust, the nearest published."""
    form = "" if answer.form_factor == UNSPECIFIED else f" ({answer.form_factor})"
    kind = (f"{answer.kind}, specification-based" if answer.specification_based else answer.kind)
    lines = [f"{answer.benchmark}, {answer.accelerator}{form} x {answer.count:g}: forecast time to train "
             f"{answer.predicted_min:.3g} min ({100 * answer.interval:.0f}% interval {answer.low_min:.3g} to "
             f"{answer.high_min:.3g} min) in the round after {answer.rounds[-1]}",
             f"method: {answer.method} ({kind}); {answer.note}",
             f"fitted on rounds {', '.join(answer.rounds)}; interval calibrated on backtest residuals of: "
             f"{answer.calibration}",
             "trusted: two rounds or more, enough backtest forecasts with coverage in range, count in range"
             if answer.trusted else "not trusted: " + "; ".join(answer.reasons)]
    if not nearest.empty:
        lines.append(f"nearest published {answer.accelerator} results, by accelerator count:")
        lines.append(nearest.to_string(index=False, float_format=lambda value: f"{value:.3g}"))
    return "\n".join(lines)


def until_round(text: str) -> str:
    """`--until`'s value: a round name such as v5.0 (any case), checked as params.yaml's rounds are."""
    try:
        return round_name(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = ArgumentParser("pipeline.commands.predict", __doc__)
    parser.add_argument("--benchmark", help="benchmark id of the catalogue, e.g. resnet (any case)")
    parser.add_argument("--accelerator", help="accelerator family, e.g. H100 (any case); one without results is "
                                              "forecast from the specification table")
    parser.add_argument("--count", type=int, help="number of accelerators")
    parser.add_argument("--form-factor", help="e.g. SXM or PCIe (default: the family's most common)")
    parser.add_argument("--from", dest="from_file", type=Path,
                        help="CSV of queries with columns benchmark, accelerator, count (form_factor optional)")
    parser.add_argument("--json", action="store_true", help="one JSON object per answer, one per line")
    parser.add_argument("--until", type=until_round,
                        help="forecast as of this round (e.g. v5.0): refit and calibrate on it and the rounds before "
                             "it only, to compare with what was published next; without it, answers come from the "
                             "decide stage's saved models")
    args = parser.parse_args(argv)
    single = [args.benchmark, args.accelerator, args.count]
    if args.from_file is None and any(value is None for value in single):
        parser.error("give --benchmark, --accelerator and --count, or --from FILE.csv")
    if args.from_file is not None and any(value is not None for value in [*single, args.form_factor]):
        parser.error("--from FILE.csv takes its queries from the file: leave out --benchmark, --accelerator, "
                     "--count and --form-factor")
    return args


def models_as_of(fitted: FittedBenchmark, until: str, analysis: Analysis) -> FittedBenchmark:
    """`fitted`'s benchmark refitted on the rounds up to `until` and calibrated on the backtest folds up to it,
    as the decide stage would have saved it then."""
    cutoff = round_published(until)
    configurations = read_configurations()
    configurations = configurations[configurations["round"].map(round_published) <= cutoff]
    frame = model_inputs(configurations, analysis, fitted.benchmark)
    if frame.empty:
        raise UsageError(f"no {fitted.benchmark} results in the analysis scope up to {until}")
    points = load_backtest()
    return fit_benchmark(fitted.benchmark, frame, points[points["fold_time"] <= cutoff], fitted.interval,
                         fitted.not_analysed_reason)


@cli
def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    queries = (read_queries(args.from_file) if args.from_file is not None
               else [Query(args.benchmark, args.accelerator, float(args.count), args.form_factor)])
    settings = load_settings()
    rule = settings.decide.trust
    models: dict[str, FittedBenchmark] = {}
    for query in queries:
        key = query.benchmark.strip().casefold()
        if key not in models:
            models[key] = saved_models(query.benchmark)
            if args.until is not None:
                models[key] = models_as_of(models[key], args.until, settings.analysis)
        fitted = models[key]
        family, form_factor = resolve_query(fitted, query)
        result = answer(fitted, family, form_factor, query.count, rule)
        if args.json:
            print(json.dumps(result.as_dict(), sort_keys=True))
        else:
            family_frame = fitted.published[fitted.published["accelerator_family"] == family]
            print(render_answer(result, nearest_published(family_frame, query.count)
                                if len(family_frame) else family_frame))


if __name__ == "__main__":
    main()
