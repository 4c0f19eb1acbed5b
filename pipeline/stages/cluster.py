"""Stage `cluster`: k-means on the configuration of each benchmark, with the diagnostics of the choice of k.

    python -m pipeline.stages.cluster

For every benchmark analysed (params `analysis.benchmarks`, see `scope.analysed_benchmarks`): the features come from reports/importance/<benchmark>.json
(or params `cluster.default_features`), `pipeline.analysis.clustering.cluster_benchmark` (params `cluster`) labels
the in-scope configurations; it writes data/processed/clusters/<benchmark>.parquet, and
reports/clusters/<benchmark>.json with the k-selection figure <benchmark>.png.
"""
from __future__ import annotations

from collections.abc import Sequence

from pipeline.core import paths
from pipeline.core.artifacts import read_artifact
from pipeline.core.cli import progress, stage_arguments
from pipeline.core.errors import cli
from pipeline.core.files import fresh_dir, write_json, write_parquet
from pipeline.settings import load_settings


@cli
def main(argv: Sequence[str] | None = None) -> None:
    stage_arguments("pipeline.stages.cluster", __doc__, argv)
    settings = load_settings()
    from pipeline.analysis import clustering
    from pipeline.analysis.scope import analysed_benchmarks, in_scope, read_configurations

    configurations = read_configurations()
    benchmarks = analysed_benchmarks(settings.analysis, configurations)
    cluster_params = settings.cluster.model_dump()
    for folder in (paths.CLUSTER_TABLES, paths.CLUSTERS):
        fresh_dir(folder)
    for benchmark in progress(benchmarks, "cluster"):
        frame = in_scope(configurations, settings.analysis, benchmark)
        importance = read_artifact("importance", paths.importance_json(benchmark))
        candidates, source = clustering.candidate_features(importance, settings.cluster.default_features)
        clustered, summary = clustering.cluster_benchmark(frame, candidates, cluster_params, source)
        write_parquet(clustered, paths.clusters_table(benchmark))
        write_json({"benchmark": benchmark, **summary}, paths.clusters_json(benchmark))
        clustering.plot_diagnostics(summary, benchmark, paths.k_selection_figure(benchmark))
        verdict = summary.get("k_verdict", {}).get("message", summary.get("reason"))
        print(f"{benchmark}: {summary['status']}, k = {summary['k']} on {summary['features']}; {verdict}")


if __name__ == "__main__":
    main()
