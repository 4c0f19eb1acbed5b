"""Recommend configurations for a benchmark under a buyer's constraints: today's published results and trusted
forecasts.

    python -m pipeline.commands.recommend --benchmark bert [--max-accelerators N] [--deadline-min M]
        [--max-cost USD] [--prices FILE] [--max-energy-kwh E] [--family H100 --family A100 ...] [--limit K] [--json]

Candidates (`pipeline.analysis.buyer`): every result the benchmark's newest round published, results republished
from an earlier round included and marked ("republished from vX.Y": on offer in that round), read from the buyer
stage's record of today (data/processed/buyer/<benchmark>.json, what the pages draw) and priced for this question;
and, for each
accelerator family and form factor, the unpublished powers of two within its published count range whose
next-round forecast (on the models the decide stage saved, as `pipeline.commands.predict` gives it; nothing is
refitted) is trusted. A forecast meets a deadline or a budget only if the upper end of its interval does.

Order (`pipeline.analysis.recommendation`): with --deadline-min, cheapest first; with --max-cost alone, fastest
first; with neither, the front on time to train and accelerator-hours first, fastest first. The answer says how
many candidates matched and how many it shows (--limit).

Cost (derived, not an MLPerf result; `pipeline.analysis.pricing.costs`): accelerator-hours x price per
accelerator-hour, a range over the current on-demand public prices of pipeline/analysis/pricing/price_table.csv
(none superseded, none more than params report.max_price_age_days, 365 by default, older than the table's newest
price; a family with only a commitment, capacity-block or spot price has no cost and says so) naming the provider at
each end; your --prices file (YAML: accelerator family -> USD per
accelerator-hour) replaces them for the families it names, and a price outside its family's plausibility band is
refused. "Cheapest" within a deadline and a budget (--max-cost, USD) are decided at the dearest listed on-demand
price of each configuration's range by default, so they hold whichever listed provider you rent from
(--price-basis typical or cheapest decides at the range's middle or its cheapest end instead); a configuration
without a price never meets a budget. Energy is only what MLPerf power
results measured: --max-energy-kwh leaves out every candidate without a measurement, forecasts included.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from pipeline.analysis.buyer import PRICE_BASES, predicted_candidates, priced, recorded_options
from pipeline.analysis.forecasting.answers import retirement_note
from pipeline.analysis.forecasting.models_artifact import saved_models
from pipeline.analysis.pricing.electricity import electricity_price
from pipeline.analysis.pricing.energy_estimate import fit as fit_energy
from pipeline.analysis.pricing.price_table import chosen_providers
from pipeline.analysis.pricing.prices import add_prices_option, load_prices
from pipeline.analysis.recommendation import (
    DEFAULT_LIMIT,
    as_json,
    check_energy,
    constraints_of,
    left_out,
    recommend,
    render,
    why_infeasible,
)
from pipeline.analysis.scope import read_configurations
from pipeline.core import paths
from pipeline.core.cli import ArgumentParser, canonical_spelling
from pipeline.core.errors import UsageError, cli
from pipeline.settings import load_settings


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line of `recommend` parsed: benchmark, limits (accelerators, minutes, USD, kWh), families, prices
    file, output form and row limit."""
    parser = ArgumentParser("pipeline.commands.recommend", __doc__)
    parser.add_argument("--benchmark", required=True, help="benchmark id of the catalogue, e.g. bert (any case)")
    parser.add_argument("--max-accelerators", type=int, help="at most this many accelerators")
    parser.add_argument("--deadline-min", type=float, help="train within this many minutes (cheapest listed first)")
    parser.add_argument("--max-cost", type=float, metavar="USD",
                        help="at most this cost to train at the --price-basis price of the range (or your "
                             "--prices); alone, fastest listed first")
    parser.add_argument("--provider", action="append", metavar="NAME",
                        help="price with this provider's public prices only (repeat for several, any case, as the "
                             "price table names them); default: params report.providers (every provider)")
    parser.add_argument("--price-basis", choices=PRICE_BASES,
                        help="the price of each range 'cheapest' and --max-cost are decided at: dearest (it holds "
                             "whichever listed provider you rent from), typical (the range's geometric middle) or "
                             "cheapest (that provider only); default: params report.price_basis (dearest)")
    add_prices_option(parser)
    parser.add_argument("--max-energy-kwh", type=float, metavar="KWH",
                        help="at most this measured energy to train (only the few results with MLPerf power logs "
                             "have one)")
    parser.add_argument("--family", action="append", help="only this accelerator family (repeatable)")
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT,
                        help=f"how many to list (default {DEFAULT_LIMIT})")
    parser.add_argument("--json", action="store_true", help="one JSON object per candidate, one per line")
    return parser.parse_args(argv)


def check_arguments(args: argparse.Namespace) -> None:
    """Return None when every numeric limit given is positive; raise a UsageError naming the first flag that is not."""
    for flag, value in [("--max-accelerators", args.max_accelerators), ("--deadline-min", args.deadline_min),
                        ("--max-cost", args.max_cost), ("--max-energy-kwh", args.max_energy_kwh),
                        ("--limit", args.limit)]:
        if value is not None and not value > 0:
            raise UsageError(f"{flag} must be positive, got {value:g}")


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


@cli
def main(argv: Sequence[str] | None = None) -> None:
    """Run `recommend`: print the configurations (published and forecast) that meet the constraints, in the buyer's
    order, as a table or one JSON line each; notes go to stderr. Returns None; exit 1 with a message on a usage
    mistake."""
    args = parse_args(argv)
    check_arguments(args)
    settings = load_settings()
    fitted = saved_models(args.benchmark)
    configurations = read_configurations()
    published = recorded_options(fitted.benchmark)  # the buyer stage's record of today, as the pages draw it
    if published is None or published.empty:
        raise UsageError(f"{fitted.benchmark} has no result of today's round in scope (the buyer stage's "
                         f"{paths.buyer_json(fitted.benchmark)} is absent or empty: run `dvc repro` first)")
    available = sorted(set(fitted.families()) | set(published["accelerator_family"].dropna()))
    families = check_families(args.family or [], available, fitted.benchmark) or None
    prices = (price_families(load_prices(args.prices), available, args.prices, fitted.benchmark)
              if args.prices is not None else None)
    if families:
        published = published[published["accelerator_family"].isin(families)]
    forecasts, untrusted = predicted_candidates(fitted, settings.decide.trust, families)
    electricity = electricity_price(settings.report.electricity_usd_per_kwh)
    basis = args.price_basis or settings.report.price_basis
    try:
        providers = chosen_providers(args.provider or settings.report.providers)
    except ValueError as error:
        raise UsageError(f"--provider: {error}") from None
    max_age_days = settings.report.max_price_age_days
    candidates = priced(pd.concat([published, forecasts], ignore_index=True) if len(forecasts) else published,
                        prices, electricity, fit_energy(configurations), basis, providers, max_age_days)
    if args.max_energy_kwh is not None:
        check_energy(configurations, candidates, fitted.benchmark, families)
    constraints = constraints_of(args.max_accelerators, args.deadline_min, args.max_cost, args.max_energy_kwh, basis)
    chosen = recommend(candidates, constraints, settings.decide.efficiency_floor)
    if chosen.empty:
        wanted = ", ".join(constraint.describe() for constraint in constraints)
        raise UsageError(f"no {fitted.benchmark} configuration meets all of {wanted}:\n  "
                         f"{why_infeasible(candidates, constraints)}")
    retired = retirement_note(fitted.benchmark, fitted.forecaster.rounds[-1])
    if args.json:
        print("\n".join(as_json(row) for row in chosen.head(args.limit).to_dict(orient="records")))
        print(f"note: {len(chosen)} matched, showing {min(args.limit, len(chosen))}", file=sys.stderr)
        for line in left_out(candidates, chosen, constraints):
            print(f"note: left out by the constraints: {line}", file=sys.stderr)
    else:
        print(render(chosen, candidates, constraints, fitted.benchmark, families, args.prices, args.limit, untrusted,
                     electricity, basis, providers, max_age_days))
    if retired:
        print(f"note: {retired}", file=sys.stderr if args.json else sys.stdout)


if __name__ == "__main__":
    main()
