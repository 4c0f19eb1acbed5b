"""Stage `report`: `reports/index.html`, one self-contained page, plus the combined ranking, importance and metrics.

    python -m pipeline.stages.report

The page leads with the headline benchmark (`analysis.benchmark`): a summary card with the best configurations of
the latest round it ran in, its first-ranked cluster, how the published study's findings fared and the data
coverage; then the findings, each a test with its numbers and verdict (rank.json's `findings`), one section per
benchmark of `analysis.benchmarks` (figures, cluster profiles, a sortable and filterable ranking, and with
`report.prices` set the cost per training run), the quarantine list, the definitions and method with the params
used, and the provenance (git revision, input hashes from `dvc.lock`). Figures are the PNG files the stages wrote,
embedded as they are, and the only script is inline, so the file opens offline.

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
from pipeline.core.files import fresh_dir, load_params, write_csv, write_json, write_text
from pipeline.settings import load_settings

# The settings this stage reads, itself or through the library (tools/sync_dvc_params.py writes them
# into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ("fetch", "analysis", "importance", "cluster", "rank", "findings", "decide", "report")


@cli
def main(argv: Sequence[str] | None = None) -> None:
    stage_arguments("pipeline.stages.report", __doc__, argv)
    settings = load_settings()
    import pandas as pd

    from pipeline.analysis.scope import analysed_benchmarks, read_configurations, republished_left_out
    from pipeline.report.inputs import load_benchmark_outputs, load_price_table, load_tally
    from pipeline.report.provenance import provenance
    from pipeline.report.sections import findings_correction, render, report_context
    from pipeline.report.tables import combined_ranking, headline_metrics, scalar_metrics, summary_metrics

    params = load_params()
    prices = load_price_table(settings.report.prices)
    configurations = read_configurations()
    outputs = [load_benchmark_outputs(benchmark, republished_left_out(configurations, settings.analysis, benchmark))
               for benchmark in analysed_benchmarks(settings.analysis, configurations)]
    write_csv(combined_ranking(outputs), paths.RANKING)
    write_json(scalar_metrics(outputs), paths.METRICS)
    fresh_dir(paths.HEADLINE_METRICS)
    for item in outputs:
        write_json(headline_metrics(item), paths.headline_metrics(item.benchmark))
    correction = findings_correction(outputs)
    write_json(summary_metrics(outputs, correction), paths.SUMMARY_METRICS)
    write_json({item.benchmark: item.importance for item in outputs}, paths.IMPORTANCE_SUMMARY)
    context = report_context(outputs, pd.read_parquet(paths.RESULTS), pd.read_csv(paths.QUARANTINE), params,
                             provenance(params), load_tally(), prices, configurations)
    html = render(context)
    write_text(html, paths.INDEX)
    print(f"wrote {paths.INDEX} ({len(html.encode()) // 1024} KiB)")


if __name__ == "__main__":
    main()
