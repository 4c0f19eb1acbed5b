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
show` prints it) and `reports/importance.json` (keyed by benchmark).
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence

import pandas as pd

from ..errors import cli
from ..io import load_params, section, write_csv, write_json, write_text
from ..report.inputs import QUARANTINE, REPORTS, RESULTS, load_benchmark_outputs, load_price_table, load_tally
from ..report.provenance import provenance
from ..report.sections import render, report_context
from ..report.tables import combined_ranking, scalar_metrics


@cli
def main(argv: Sequence[str] | None = None) -> None:
    argparse.ArgumentParser(prog="python -m pipeline.stages.report", description=__doc__.split("\n\n")[0]
                            ).parse_args(argv)
    params = load_params()
    analysis = section(params, "analysis")
    prices = load_price_table((params.get("report") or {}).get("prices"))
    outputs = [load_benchmark_outputs(benchmark) for benchmark in analysis["benchmarks"]]
    write_csv(combined_ranking(outputs), REPORTS / "ranking.csv")
    write_json(scalar_metrics(outputs), REPORTS / "metrics.json")
    write_json({item.benchmark: item.importance for item in outputs}, REPORTS / "importance.json")
    context = report_context(outputs, pd.read_parquet(RESULTS), pd.read_csv(QUARANTINE), params,
                             provenance(params), load_tally(), prices)
    html = render(context)
    write_text(html, REPORTS / "index.html")
    print(f"wrote {REPORTS / 'index.html'} ({len(html.encode()) // 1024} KiB)")


if __name__ == "__main__":
    main()
