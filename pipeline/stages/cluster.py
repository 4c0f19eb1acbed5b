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

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.core import paths
from pipeline.core.files import write_parquet
from pipeline.core.stage import Plan, per_benchmark_stage
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


def plan(tables: Path, reports: Path) -> Plan[str, str]:
    """Cluster every analysed benchmark, writing into the folders `tables` and `reports`."""
    settings = load_settings()
    from pipeline.analysis.scope import analysed_benchmarks, read_configurations

    configurations = read_configurations()
    return Plan(partial(cluster, configurations=configurations, settings=settings, tables=tables, reports=reports),
                analysed_benchmarks(settings.analysis, configurations))


main = per_benchmark_stage("pipeline.stages.cluster", __doc__, plan, outputs=(paths.CLUSTER_TABLES, paths.CLUSTERS),
                           preload=("pipeline.analysis.statistics.clustering",))


if __name__ == "__main__":
    main()
