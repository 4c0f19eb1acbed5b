"""Stage `brief`: one printable page (PDF) per current benchmark in `reports/briefs/<benchmark>.pdf`.

    python -m pipeline.stages.brief

For each of today's benchmarks (`pipeline.analysis.scope.today_of` the rounds of the buyer stage's records: the entry
page's), `pipeline.report.brief` draws its record of today (data/processed/buyer/<benchmark>.json: the results on
offer, priced and powered, the front and the one "cheapest" the site and `recommend` give): the front, the cost at a
deadline, the scaling curve with the decide stage's forecast band and the table a procurement request needs, in the
site's colour of each family (from the configurations table, as the site's). Each benchmark's page links its brief.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.core import paths
from pipeline.core.stage import Plan, per_benchmark_stage
from pipeline.settings import load_settings

# The settings this stage reads, itself or through the library (tools/sync_dvc_params.py writes them
# into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ("analysis", "report")

if TYPE_CHECKING:
    from pipeline.analysis.buyer import BuyerAnswer
    from pipeline.analysis.pricing.electricity import ElectricityPrice


def brief(answer: BuyerAnswer, colours: Mapping[str, str], electricity: ElectricityPrice, folder: Path,
          dates: dict[str, Any] | None = None) -> None:
    """Write the brief of the benchmark of `answer`, its record of today (the buyer stage's), into `folder`
    (`pipeline.report.brief.write_brief`), with its decide summary."""
    from pipeline.analysis.forecasting.decide import DecideSummary
    from pipeline.report.brief import BriefInputs, write_brief

    summary = paths.decide_json(answer.benchmark)
    decide = DecideSummary.read(summary) if summary.exists() else None
    write_brief(BriefInputs(answer, decide, colours, dates), electricity, paths.brief_pdf(answer.benchmark, folder))


def plan(folder: Path) -> Plan[BuyerAnswer, None]:
    """Draw every current benchmark's brief into `folder`, from its record of today."""
    started = time.perf_counter()
    settings = load_settings()
    from pipeline.analysis.buyer import BuyerReport
    from pipeline.analysis.pricing.electricity import electricity_price
    from pipeline.analysis.scope import analysed_benchmarks, read_configurations, today_of
    from pipeline.report.charts import family_colours, family_order
    from pipeline.report.currency import currency
    from pipeline.report.provenance import git_revision

    configurations = read_configurations()
    records = {benchmark: BuyerReport.read(paths.buyer_json(benchmark)).answer
               for benchmark in analysed_benchmarks(settings.analysis, configurations)}
    found = today_of({benchmark: answer.round for benchmark, answer in records.items() if answer is not None})
    # A process per benchmark at a time, as many as the machine has cores (each page is drawn alone).
    return Plan(partial(brief, colours=family_colours(family_order(configurations)),
                        electricity=electricity_price(settings.report.electricity_usd_per_kwh),
                        folder=folder, dates=currency(found.round, git_revision(),
                                                     max_age_days=settings.report.max_price_age_days)
                        if found.round else None),
                [answer for answer in records.values() if answer is not None and answer.benchmark in found.benchmarks],
                finish=lambda briefs: f"wrote {len(briefs)} briefs into {paths.BRIEFS}/ in "
                                      f"{time.perf_counter() - started:.1f} s")


main = per_benchmark_stage("pipeline.stages.brief", __doc__, plan, outputs=(paths.BRIEFS,))


if __name__ == "__main__":
    main()
