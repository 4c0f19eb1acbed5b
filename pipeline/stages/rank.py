"""Stage `rank`: the efficiency ranking of configurations and clusters, and the published findings tested.

    python -m pipeline.stages.rank

For every benchmark analysed (params `analysis.benchmarks`, see
`pipeline.analysis.scope.analysed_benchmarks`): `pipeline.analysis.statistics.ranking.rank_benchmark` (params `rank`)
ranks the clustered configurations; the stage writes reports/rank/<benchmark>.json, with the published findings the
findings stage tested (data/processed/findings/<benchmark>.json, corrected over every benchmark), and the ranking
table reports/rank/<benchmark>.csv.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path

from pipeline.core import paths
from pipeline.core.files import write_csv
from pipeline.core.stage import Plan, per_benchmark_stage
from pipeline.settings import Settings, load_settings

# The settings this stage reads, itself or through the library (tools/sync_dvc_params.py writes them
# into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ("analysis", "rank", "findings")

def rank(benchmark: str, settings: Settings, folder: Path) -> str:
    """Rank one benchmark and write its ranking table and `Ranking` (with its findings when it was ranked) into
    `folder`; the line to print."""
    import pandas as pd

    from pipeline.analysis.statistics import ranking
    from pipeline.analysis.statistics.clustering import Clustering
    from pipeline.analysis.statistics.findings_result import FindingsReport
    from pipeline.analysis.statistics.importance_result import ImportanceReport

    clustered = pd.read_parquet(paths.clusters_table(benchmark))
    table, result = ranking.rank_benchmark(
        clustered, Clustering.read(paths.clusters_json(benchmark)),
        ImportanceReport.read(paths.importance_json(benchmark)), settings.rank, settings.findings)
    if result.analysed:
        result = result.with_findings(FindingsReport.read(paths.findings_json(benchmark)))
    write_csv(table, paths.ranking_csv(benchmark, folder))
    result.write(paths.rank_json(benchmark, folder))
    return f"{benchmark}: ranked {len(table)} configurations"


def plan(folder: Path) -> Plan[str, str]:
    """Rank every analysed benchmark, writing into `folder`."""
    settings = load_settings()
    from pipeline.analysis.scope import analysed_benchmarks

    return Plan(partial(rank, settings=settings, folder=folder), analysed_benchmarks(settings.analysis))


main = per_benchmark_stage("pipeline.stages.rank", __doc__, plan, outputs=(paths.RANK,),
                           preload=("pipeline.analysis.statistics.ranking",))


if __name__ == "__main__":
    main()
