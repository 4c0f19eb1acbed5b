"""Stage `rank`: the efficiency ranking of configurations and clusters, and the published findings tested.

    python -m pipeline.stages.rank

For every benchmark analysed (params `analysis.benchmarks`, see `scope.analysed_benchmarks`): `pipeline.analysis.ranking.rank_benchmark` (params `rank`
and `findings`) ranks the clustered configurations; it writes reports/rank/<benchmark>.json and the ranking
table reports/rank/<benchmark>.csv.
"""
from __future__ import annotations

from collections.abc import Sequence

from pipeline.core import paths
from pipeline.core.artifacts import read_artifact
from pipeline.core.cli import progress, stage_arguments
from pipeline.core.errors import cli
from pipeline.core.files import fresh_dir, write_csv, write_json
from pipeline.settings import load_settings


@cli
def main(argv: Sequence[str] | None = None) -> None:
    stage_arguments("pipeline.stages.rank", __doc__, argv)
    settings = load_settings()
    import pandas as pd

    from pipeline.analysis import findings, ranking
    from pipeline.analysis.scope import analysed_benchmarks

    benchmarks = analysed_benchmarks(settings.analysis)

    findings_settings = findings.Settings.from_params(settings.findings.model_dump())
    fresh_dir(paths.RANK)
    for benchmark in progress(benchmarks, "rank"):
        clustered = pd.read_parquet(paths.clusters_table(benchmark))
        table, result = ranking.rank_benchmark(
            clustered, read_artifact("clusters", paths.clusters_json(benchmark)),
            read_artifact("importance", paths.importance_json(benchmark)), settings.rank.model_dump(),
            findings_settings)
        write_csv(table, paths.ranking_csv(benchmark))
        write_json({"benchmark": benchmark, **result}, paths.rank_json(benchmark))
        print(f"{benchmark}: ranked {len(table)} configurations")


if __name__ == "__main__":
    main()
