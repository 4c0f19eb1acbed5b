"""Stage `rank`: the efficiency ranking of configurations and clusters, and the published findings tested.

    python -m pipeline.stages.rank

For every benchmark analysed (params `analysis.benchmarks`, see
`pipeline.analysis.scope.analysed_benchmarks`): `pipeline.analysis.statistics.ranking.rank_benchmark` (params `rank`)
ranks the clustered configurations, and `pipeline.analysis.statistics.findings.evaluate` (params `findings`) tests
the published findings on them. Then
`findings.adjust` corrects every test's p-value over all benchmarks together (Holm: the page shows them side by
side), and the stage writes reports/rank/<benchmark>.json (the findings and the correction included) and the
ranking table reports/rank/<benchmark>.csv.
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

    from pipeline.analysis.statistics.findings import Finding
    from pipeline.analysis.statistics.ranking import Ranking


def rank(benchmark: str, settings: Settings) -> tuple[str, pd.DataFrame, Ranking, list[Finding]]:
    """One benchmark's ranking table, `Ranking` (without the findings) and findings (p not adjusted)."""
    import pandas as pd

    from pipeline.analysis.statistics import findings, ranking
    from pipeline.analysis.statistics.clustering import Clustering
    from pipeline.analysis.statistics.importance_result import ImportanceReport

    clustered = pd.read_parquet(paths.clusters_table(benchmark))
    table, result = ranking.rank_benchmark(
        clustered, Clustering.read(paths.clusters_json(benchmark)),
        ImportanceReport.read(paths.importance_json(benchmark)), settings.rank, settings.findings)
    found = findings.evaluate(clustered, settings.findings) if result.analysed else []
    return benchmark, table, result, found


@cli
def main(argv: Sequence[str] | None = None) -> None:
    """Run the rank stage: write each analysed benchmark's ranking CSV and rank JSON (findings with Holm's correction
    over every test) into reports/rank/; returns None."""
    stage_arguments("pipeline.stages.rank", __doc__, argv)
    settings = load_settings()
    from pipeline.analysis.scope import analysed_benchmarks
    from pipeline.analysis.statistics import findings

    benchmarks = analysed_benchmarks(settings.analysis)
    ranked = list(for_each(partial(rank, settings=settings), benchmarks, "rank",
                           preload=("pipeline.analysis.statistics.ranking", "statsmodels.api")))
    adjusted, correction = findings.adjust({benchmark: found for benchmark, _, _, found in ranked},
                                           settings.findings.alpha)
    with atomic_dir(paths.RANK) as folder:  # swapped in whole at the end: Ctrl-C keeps the previous one
        for benchmark, table, result, _ in ranked:
            write_csv(table, paths.ranking_csv(benchmark, folder))
            (result.with_findings(adjusted[benchmark], correction) if result.analysed else result).write(
                paths.rank_json(benchmark, folder))
            print(f"{benchmark}: ranked {len(table)} configurations")
    print(correction.statement())


if __name__ == "__main__":
    main()
