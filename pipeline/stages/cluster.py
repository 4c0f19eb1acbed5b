"""Stage `cluster`: the clusters of each benchmark's configurations at k = params `cluster.k`, with the diagnostics
of the choice of k.

    python -m pipeline.stages.cluster

For every benchmark analysed (params `analysis.benchmarks`, see
`pipeline.analysis.scope.analysed_benchmarks`): `pipeline.analysis.statistics.clustering.clusters_from_scan` (params
`cluster`) labels the in-scope configurations from the kscan stage's fit at k (data/processed/kscan/<benchmark>.json),
merges small clusters and profiles them; it writes data/processed/clusters/<benchmark>.parquet, and
reports/clusters/<benchmark>.json (the diagnostics the page draws its choice-of-k chart from). No k-means runs here,
so a change of k takes seconds.
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.core import paths
from pipeline.core.cli import for_each, stage_arguments
from pipeline.core.errors import cli
from pipeline.core.files import atomic_dirs, write_parquet
from pipeline.settings import Settings, load_settings

# The settings this stage reads, itself or through the library (tools/sync_dvc_params.py writes them
# into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ("analysis", "cluster")

if TYPE_CHECKING:
    import pandas as pd


def cluster(benchmark: str, configurations: pd.DataFrame, settings: Settings, tables: Path, reports: Path) -> str:
    """Cluster one benchmark and write its outputs into the folders `tables` (the labelled configurations) and
    `reports` (the diagnostics); the line to print."""
    from pipeline.analysis.scope import in_scope
    from pipeline.analysis.statistics import clustering

    frame = in_scope(configurations, settings.analysis, benchmark)
    scan = clustering.KScan.read(paths.kscan_json(benchmark))
    clustered, summary = clustering.clusters_from_scan(frame, scan, settings.cluster)
    write_parquet(clustered, paths.clusters_table(benchmark, tables))
    summary.write(paths.clusters_json(benchmark, reports))
    verdict = summary.k_verdict.message if summary.k_verdict else summary.reason
    return f"{benchmark}: {summary.status}, k = {summary.k} on {summary.features}; {verdict}"


@cli
def main(argv: Sequence[str] | None = None) -> None:
    """Run the cluster stage: write each analysed benchmark's clustered configurations (data/processed/clusters/,
    parquet) and its clustering report (reports/clusters/, JSON); returns None."""
    stage_arguments("pipeline.stages.cluster", __doc__, argv)
    settings = load_settings()
    from pipeline.analysis.scope import analysed_benchmarks, read_configurations

    configurations = read_configurations()
    benchmarks = analysed_benchmarks(settings.analysis, configurations)
    with atomic_dirs(paths.CLUSTER_TABLES, paths.CLUSTERS) as (tables, reports):  # swapped in whole at the end
        for line in for_each(partial(cluster, configurations=configurations, settings=settings, tables=tables,
                                     reports=reports), benchmarks, "cluster",
                             preload=("pipeline.analysis.statistics.clustering",)):
            print(line)


if __name__ == "__main__":
    main()
