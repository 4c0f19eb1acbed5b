"""Stage `rank`: the efficiency ranking of configurations and clusters, and the published findings tested.

    python -m pipeline.stages.rank

For every benchmark analysed (params `analysis.benchmarks`, see
`pipeline.analysis.scope.analysed_benchmarks`): `pipeline.analysis.statistics.ranking.rank_benchmark` (params `rank`)
ranks the clustered configurations; the stage writes reports/rank/<benchmark>.json, with the published findings the
findings stage tested (data/processed/findings/<benchmark>.json, corrected over every benchmark), and the ranking
table reports/rank/<benchmark>.csv.
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from pipeline.core import paths
from pipeline.core.cli import for_each, stage_arguments
from pipeline.core.errors import cli
from pipeline.core.files import atomic_dir, write_csv
from pipeline.settings import Settings, load_settings

# The settings this stage reads, itself or through the library (tools/sync_dvc_params.py writes them
# into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ("analysis", "rank", "findings")

if TYPE_CHECKING:
    import pandas as pd

    from pipeline.analysis.statistics.ranking import Ranking


def rank(benchmark: str, settings: Settings) -> tuple[pd.DataFrame, Ranking]:
    """One benchmark's ranking table and `Ranking`, with its findings when it was ranked."""
    import pandas as pd

    from pipeline.analysis.statistics import ranking
    from pipeline.analysis.statistics.clustering import Clustering
    from pipeline.analysis.statistics.findings_result import FindingsReport
    from pipeline.analysis.statistics.importance_result import ImportanceReport

    clustered = pd.read_parquet(paths.clusters_table(benchmark))
    table, result = ranking.rank_benchmark(
        clustered, Clustering.read(paths.clusters_json(benchmark)),
        ImportanceReport.read(paths.importance_json(benchmark)), settings.rank, settings.findings)
    return table, (result.with_findings(FindingsReport.read(paths.findings_json(benchmark))) if result.analysed
                   else result)


@cli
def main(argv: Sequence[str] | None = None) -> None:
    """Run the rank stage: write each analysed benchmark's ranking CSV and rank JSON (with the findings stage's
    findings) into reports/rank/; returns None."""
    stage_arguments("pipeline.stages.rank", __doc__, argv)
    settings = load_settings()
    from pipeline.analysis.scope import analysed_benchmarks

    benchmarks = analysed_benchmarks(settings.analysis)
    with atomic_dir(paths.RANK) as folder:  # swapped in whole at the end: Ctrl-C keeps the previous one
        for benchmark, (table, result) in zip(benchmarks, for_each(partial(rank, settings=settings), benchmarks,
                                                                   "rank",
                                                                   preload=("pipeline.analysis.statistics.ranking",))):
            write_csv(table, paths.ranking_csv(benchmark, folder))
            result.write(paths.rank_json(benchmark, folder))
            print(f"{benchmark}: ranked {len(table)} configurations")


if __name__ == "__main__":
    main()
