"""Stage `kscan`: k-means of each benchmark's configurations at every k of params `cluster.k_range`.

    python -m pipeline.stages.kscan

For every benchmark analysed (params `analysis.benchmarks`, see
`pipeline.analysis.scope.analysed_benchmarks`): the features come from reports/importance/<benchmark>.json
(or params `cluster.default_features`), and `pipeline.analysis.statistics.clustering.scan_benchmark` fits k-means at
each k of the range with its diagnostics and bootstrap stability; it writes data/processed/kscan/<benchmark>.json.
None of it reads `cluster.k`: the cluster stage picks k among these fits, so a change of k runs no k-means.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.core import paths
from pipeline.core.stage import Plan, per_benchmark_stage
from pipeline.settings import Settings, load_settings

# The settings this stage reads, itself or through the library (tools/sync_dvc_params.py writes them
# into dvc.yaml; tests/test_params_deps.py checks): every key of `cluster` but k and what only the cluster stage
# reads (min_size, silhouette_tolerance, min_stability).
PARAMS: tuple[str, ...] = ("analysis", "cluster.n_init", "cluster.seed", "cluster.k_range", "cluster.bootstrap",
                           "cluster.default_features", "cluster.max_imputed_share", "cluster.max_collinear_r2")

if TYPE_CHECKING:
    import pandas as pd


def scan(benchmark: str, configurations: pd.DataFrame, settings: Settings, folder: Path) -> str:
    """Scan k for one benchmark and write its `KScan` into `folder`; the line to print."""
    from pipeline.analysis.scope import in_scope
    from pipeline.analysis.statistics import clustering
    from pipeline.analysis.statistics.importance_result import ImportanceReport

    frame = in_scope(configurations, settings.analysis, benchmark)
    importance = ImportanceReport.read(paths.importance_json(benchmark))
    candidates, source = clustering.candidate_features(importance, settings.cluster.default_features)
    result = clustering.scan_benchmark(frame, candidates, settings.cluster, source, benchmark=benchmark)
    result.write(paths.kscan_json(benchmark, folder))
    if result.status == "skipped":
        return f"{benchmark}: skipped, {result.reason}"
    return f"{benchmark}: k = {', '.join(map(str, result.labels))} on {result.features}"


def plan(folder: Path) -> Plan[str, str]:
    """Scan every analysed benchmark, writing into `folder`."""
    settings = load_settings()
    from pipeline.analysis.scope import analysed_benchmarks, read_configurations

    configurations = read_configurations()
    return Plan(partial(scan, configurations=configurations, settings=settings, folder=folder),
                analysed_benchmarks(settings.analysis, configurations))


main = per_benchmark_stage("pipeline.stages.kscan", __doc__, plan, outputs=(paths.KSCAN,),
                           preload=("pipeline.analysis.statistics.clustering", "sklearn.cluster", "sklearn.metrics"))


if __name__ == "__main__":
    main()
