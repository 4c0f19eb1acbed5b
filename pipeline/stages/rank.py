"""Stage `rank`: the efficiency ranking of configurations and clusters, and the published findings tested.

    python -m pipeline.stages.rank

For every benchmark analysed (params `analysis.benchmarks`, see
`pipeline.analysis.scope.analysed_benchmarks`): `pipeline.analysis.ranking.rank_benchmark` (params `rank`
and `findings`) ranks the clustered configurations, and measures its latest round's pick against `rank.bootstrap`
resamples of every result's runs (data/interim/runs.parquet and results.parquet, `pipeline.analysis.run_noise`);
it writes reports/rank/<benchmark>.json and the ranking table reports/rank/<benchmark>.csv.
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from pipeline.core import paths
from pipeline.core.artifacts import read_artifact
from pipeline.core.cli import for_each, stage_arguments
from pipeline.core.errors import cli
from pipeline.core.files import fresh_dir, write_csv, write_json
from pipeline.settings import Settings, load_settings


def rank(benchmark: str, settings: Settings) -> str:
    """Rank one benchmark and write its outputs; the line to print."""
    import pandas as pd

    from pipeline.analysis import ranking
    from pipeline.analysis.run_noise import RunNoise

    noise = RunNoise(pd.read_parquet(paths.RUNS), pd.read_parquet(paths.RESULTS), settings.rank.bootstrap,
                     settings.rank.seed)
    table, result = ranking.rank_benchmark(
        pd.read_parquet(paths.clusters_table(benchmark)), read_artifact("clusters", paths.clusters_json(benchmark)),
        read_artifact("importance", paths.importance_json(benchmark)), settings.rank.model_dump(), settings.findings,
        noise.times)
    write_csv(table, paths.ranking_csv(benchmark))
    write_json({"benchmark": benchmark, **result}, paths.rank_json(benchmark))
    return f"{benchmark}: ranked {len(table)} configurations"


@cli
def main(argv: Sequence[str] | None = None) -> None:
    stage_arguments("pipeline.stages.rank", __doc__, argv)
    settings = load_settings()
    from pipeline.analysis.scope import analysed_benchmarks

    benchmarks = analysed_benchmarks(settings.analysis)
    fresh_dir(paths.RANK)
    for line in for_each(partial(rank, settings=settings), benchmarks, "rank"):
        print(line)


if __name__ == "__main__":
    main()
