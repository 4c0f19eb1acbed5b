"""Stage `brief`: one printable page (PDF) per current benchmark in `reports/briefs/<benchmark>.pdf`.

    python -m pipeline.stages.brief

For each of today's benchmarks (`pipeline.analysis.scope.today`, in the scope of params `analysis`: the entry page's),
`pipeline.report.brief` draws the front, the cost at a deadline with the buyer stage's answers
(data/processed/buyer/, the one "cheapest" the site and `recommend` give), the scaling curve with the decide stage's
forecast band and the table a procurement request needs, priced from the public price table (or params
`report.prices`) with the electricity price of params `report.electricity_usd_per_kwh`. Each benchmark's page links
its brief.
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.core import paths
from pipeline.core.cli import for_each, stage_arguments
from pipeline.core.errors import cli
from pipeline.core.files import atomic_dir
from pipeline.settings import load_settings

# The settings this stage reads, itself or through the library (tools/sync_dvc_params.py writes them
# into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ("analysis", "report")

if TYPE_CHECKING:
    import pandas as pd

    from pipeline.analysis.pricing.electricity import ElectricityPrice
    from pipeline.settings import Analysis


def brief(benchmark: str, configurations: pd.DataFrame, analysis: Analysis, round_: str,
          prices: Mapping[str, float] | None, electricity: ElectricityPrice, folder: Path,
          dates: dict[str, Any] | None, max_age_days: int) -> None:
    """Write the brief of `benchmark` in round `round_` into `folder` (`pipeline.report.brief.write_brief`), from
    the results on offer in the scope of `analysis` (`pipeline.analysis.scope.on_offer`, as the buyer's answer),
    priced at public prices at most `max_age_days` older than the table's newest."""
    from pipeline.analysis.buyer import BuyerReport
    from pipeline.analysis.forecasting.decide import DecideSummary
    from pipeline.analysis.scope import on_offer
    from pipeline.report.brief import brief_inputs, write_brief

    decide = DecideSummary.read(paths.decide_json(benchmark)) if paths.decide_json(benchmark).exists() else None
    buyer = BuyerReport.read(paths.buyer_json(benchmark)).answer if paths.buyer_json(benchmark).exists() else None
    rows = on_offer(configurations, analysis, benchmark)
    write_brief(brief_inputs(rows, benchmark, round_, decide, prices, electricity, buyer, dates, max_age_days),
                electricity, paths.brief_pdf(benchmark, folder))


@cli
def main(argv: Sequence[str] | None = None) -> None:
    """Run the brief stage: write one PDF per current benchmark into reports/briefs/ (one folder, swapped in whole);
    returns None."""
    stage_arguments("pipeline.stages.brief", __doc__, argv)
    started = time.perf_counter()
    settings = load_settings()
    from pipeline.analysis.pricing.electricity import electricity_price
    from pipeline.analysis.pricing.prices import load_price_table
    from pipeline.analysis.scope import read_configurations, today
    from pipeline.report.currency import currency
    from pipeline.report.provenance import git_revision

    prices = load_price_table(settings.report.prices)
    configurations = read_configurations()
    found = today(settings.analysis, configurations)
    benchmarks = list(found.benchmarks)
    max_age_days = settings.report.max_price_age_days
    with atomic_dir(paths.BRIEFS) as folder:  # swapped in whole at the end: Ctrl-C keeps the previous briefs
        # A process per benchmark at a time, as many as the machine has cores (each page is drawn alone).
        for _ in for_each(partial(brief, configurations=configurations, analysis=settings.analysis,
                                  round_=found.round or "",  # "": no benchmark either
                                  prices=None if prices is None else prices.per_hour,
                                  electricity=electricity_price(settings.report.electricity_usd_per_kwh),
                                  folder=folder, max_age_days=max_age_days,
                                  dates=currency(found.round, git_revision(), max_age_days=max_age_days)
                                  if found.round else None),
                          benchmarks, "brief"):
            pass
    print(f"wrote {len(benchmarks)} briefs into {paths.BRIEFS}/ in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
