"""Predict a configuration's time to train from its accelerator family and count, with an honest error.

    python -m pipeline.commands.predict --benchmark resnet --accelerator H100 --count 64 [--form-factor SXM]
                                        [--prices FILE]

The forecast comes from the models the decide stage saved (`pipeline.analysis.forecasting.model`: one count curve per
family and form factor, the method chosen on the forward-chaining backtest, intervals calibrated on it).

Beside it (`pipeline.analysis.pricing.costs`; derived, not MLPerf results): the cost of the forecast's accelerator-hours
at
the dated public list prices of pipeline/analysis/pricing/price_table.csv (your --prices file, family -> USD per
accelerator-hour, replaces them for the families it names), and the measured energy of the nearest published
results that have one (MLPerf power results; a forecast has no measured energy).
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from pipeline.analysis.prediction import (
    Answerer,
    Query,
    RowError,
    measured_rows,
    predicted_cost,
    read_queries,
    render_answer,
    row_error_text,
)
from pipeline.analysis.pricing.costs import basis_lines
from pipeline.analysis.pricing.electricity import electricity_price
from pipeline.analysis.pricing.prices import add_prices_option, load_prices
from pipeline.core.cli import ArgumentParser
from pipeline.core.errors import UsageError, cli
from pipeline.settings import load_settings


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line parsed and checked (argparse.Namespace); a mistake exits 1 with usage."""
    parser = ArgumentParser("pipeline.commands.predict", __doc__)
    parser.add_argument("--benchmark", help="benchmark id of the catalogue, e.g. resnet (any case)")
    parser.add_argument("--accelerator", help="accelerator family, e.g. H100 (any case); one without results is "
                                              "forecast from the specification table")
    parser.add_argument("--count", type=int, help="number of accelerators")
    parser.add_argument("--form-factor", help="e.g. SXM or PCIe (default: the family's most common)")
    parser.add_argument("--from", dest="from_file", type=Path,
                        help="CSV of queries with columns benchmark, accelerator, count (form_factor optional); "
                             "every valid row is answered, each invalid one reported with its line")
    add_prices_option(parser)
    parser.add_argument("--json", action="store_true", help="one JSON object per answer, one per line")
    parser.add_argument("--until", help="forecast as of this published round (e.g. v5.0): refit and calibrate on it "
                                        "and the rounds before it only, to compare with what was published next; "
                                        "without it, answers come from the decide stage's saved models")
    args = parser.parse_args(argv)
    single = [args.benchmark, args.accelerator, args.count]
    if args.from_file is None and any(value is None for value in single):
        parser.error("give --benchmark, --accelerator and --count, or --from FILE.csv")
    if args.from_file is not None and any(value is not None for value in [*single, args.form_factor]):
        parser.error("--from FILE.csv takes its queries from the file: leave out --benchmark, --accelerator, "
                     "--count and --form-factor")
    return args


@cli
def main(argv: Sequence[str] | None = None) -> None:
    """Answer each query (one from the flags, or every row of --from) on stdout: text, or one JSON object per line with
    --json; exit 1 on a mistake."""
    args = parse_args(argv)
    errors: list[RowError] = []
    if args.from_file is not None:
        queries, errors = read_queries(args.from_file)
    else:
        queries = [Query(args.benchmark, args.accelerator, args.count, args.form_factor)]
    n_rows = len(queries) + len(errors)
    settings = load_settings()
    prices = load_prices(args.prices) if args.prices is not None else None
    electricity = electricity_price(settings.report.electricity_usd_per_kwh)
    answerer = Answerer(args.until, settings.analysis, settings.decide.trust, electricity)
    outputs: list[tuple[int, str]] = [(error.line, row_error_text(error, args.json)) for error in errors]
    measured = False  # whether any answer shows measured energy, for the footer saying what it is
    for query in queries:
        try:
            result, nearest = answerer(query)
        except UsageError as error:
            if query.line is None:
                raise
            outputs.append((query.line, row_error_text(RowError(query.line, str(error)), args.json)))
            errors.append(RowError(query.line, str(error)))
            continue
        cost = predicted_cost(result, prices, settings.report.max_price_age_days)
        measured |= bool(len(nearest)) and bool(nearest["energy_kwh"].notna().any())
        text = (json.dumps({**({"line": query.line} if query.line else {}), **result.model_dump(), "cost": cost,
                            "measured_energy": measured_rows(nearest) if len(nearest) else []}, sort_keys=True)
                if args.json else (f"line {query.line}: " if query.line else "") + render_answer(result, nearest, cost))
        outputs.append((query.line or 0, text))
    print(("\n" if args.json else "\n\n").join(text for _, text in sorted(outputs, key=lambda item: item[0])))
    if not args.json and len(outputs) > len(errors):
        print("\n" + "\n".join(basis_lines(args.prices, electricity, energy=measured,
                                           max_age_days=settings.report.max_price_age_days)))
    if errors:
        lines = ", ".join(str(error.line) for error in sorted(errors, key=lambda error: error.line))
        raise UsageError(f"{len(errors)} of {n_rows} rows of {args.from_file} could not be answered (lines {lines}); "
                         f"the others are answered above")


if __name__ == "__main__":
    main()
