"""Stage `report`: the report as a small static site in `reports/`, plus the combined ranking, importance and metrics.

    python -m pipeline.stages.report

`reports/index.html` is the entry: the newest round's benchmarks still in MLPerf (for each the fastest
configuration, the one with the least hardware time and the non-dominated ones, with cost and energy where
known), the accelerator families compared across them, and the retired benchmarks under History.
`reports/benchmarks/<benchmark>.html` is one page per benchmark of `analysis.benchmarks` with interactive charts;
`reports/methods.html` holds the findings, backtest, diagnostics, definitions and params; `reports/data.html` the
coverage, quarantine and provenance (see `pipeline.report.site`). The pages load the shared assets of
`reports/assets/` (the stylesheet, the script and the chart library), which the `assets` stage writes; no page
makes a network request.

Also writes `reports/ranking.csv` (every benchmark's ranking, with a `benchmark` column), `reports/metrics.json`
(keyed by benchmark, scalar metrics only, the decide stage's held-out errors nested under `decide`; `dvc metrics
show` prints it), `reports/importance.json` (keyed by benchmark), `reports/metrics/<benchmark>.json` (a few headline
numbers each) and `reports/metrics/summary.json` (over every benchmark: the mean silhouette and the findings
supported after the page's correction, the headline figure).
"""
from __future__ import annotations

from collections.abc import Sequence

from pipeline.core import paths
from pipeline.core.cli import stage_arguments
from pipeline.core.errors import cli
from pipeline.core.files import atomic_dirs, interrupts_held, write_csv, write_json, write_text
from pipeline.settings import load_params, load_settings

# The settings this stage reads, itself or through the library (tools/sync_dvc_params.py writes them
# into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ("fetch", "analysis", "importance", "cluster", "rank", "findings", "decide", "report")
# The site's folders the stage owns (the pages at the top sit beside other stages' outputs).
SITE_FOLDERS = ("benchmarks",)


@cli
def main(argv: Sequence[str] | None = None) -> None:
    """Run the report stage: write the site's pages into reports/, the headline metrics, the combined ranking,
    metrics and importance summary; returns None."""
    stage_arguments("pipeline.stages.report", __doc__, argv)
    settings = load_settings()
    import pandas as pd

    from pipeline.analysis.buyer import BuyerReport
    from pipeline.analysis.pricing.prices import load_price_table
    from pipeline.analysis.scope import analysed_benchmarks, read_configurations, republished_left_out
    from pipeline.report.inputs import load_benchmark_outputs, load_summary_check, load_tally
    from pipeline.report.provenance import provenance
    from pipeline.report.sections import findings_correction
    from pipeline.report.site import build_site
    from pipeline.report.tables import combined_ranking, headline_metrics, scalar_metrics, summary_metrics

    prices = load_price_table(settings.report.prices)
    configurations = read_configurations()
    outputs = [load_benchmark_outputs(benchmark, republished_left_out(configurations, settings.analysis, benchmark))
               for benchmark in analysed_benchmarks(settings.analysis, configurations)]
    correction = findings_correction(outputs)
    answers = {item.benchmark: BuyerReport.read(paths.buyer_json(item.benchmark)).answer  # the records of today
               for item in outputs}
    site = build_site(outputs, pd.read_parquet(paths.RESULTS), pd.read_csv(paths.QUARANTINE), settings,
                      provenance(load_params()), load_tally(), prices, configurations, load_summary_check(), answers)
    # Everything is computed: written now, Ctrl-C held back until the last output is in place, each folder written
    # beside its old self and swapped in whole, so the site is never absent nor half old, half new.
    with interrupts_held(), atomic_dirs(paths.HEADLINE_METRICS, *(paths.REPORTS / name for name in SITE_FOLDERS)) \
            as (metrics, *folders):
        for item in outputs:
            write_json(headline_metrics(item), paths.headline_metrics(item.benchmark, metrics))
        write_json(summary_metrics(outputs, correction), metrics / paths.SUMMARY_METRICS.name)
        for name, text in sorted(site.items()):
            top, _, rest = name.partition("/")
            write_text(text, folders[SITE_FOLDERS.index(top)] / rest if top in SITE_FOLDERS else paths.REPORTS / name)
        write_csv(combined_ranking(outputs), paths.RANKING)
        write_json(scalar_metrics(outputs), paths.METRICS)
        write_json({item.benchmark: item.importance.as_json() for item in outputs}, paths.IMPORTANCE_SUMMARY)
    size = sum(len(text.encode()) for text in site.values()) // 1024
    print(f"wrote {len(site)} pages into {paths.REPORTS}/ ({size} KiB)")


if __name__ == "__main__":
    main()
