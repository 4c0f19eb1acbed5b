"""Stage `figures`: the report's per-benchmark figures as PNG files, drawn once so that the page only embeds them.

    python -m pipeline.stages.figures

For each benchmark of `analysis.benchmarks` that the rank stage analysed, writes
`reports/figures/<benchmark>/<name>.png`, name one of scaling, efficiency, pareto, best_time, heatmap and
importance, from its clusters.parquet, ranking.csv, clusters.json, rank.json and importance.json (see
`pipeline.report.figures`). A benchmark that was not analysed gets no figures. Benchmarks are drawn in as many
processes as the machine gives the job (`pipeline.core.cli.for_each`).
"""
from __future__ import annotations

from collections.abc import Sequence

from pipeline.core import paths
from pipeline.core.artifacts import read_artifact
from pipeline.core.cli import for_each, stage_arguments
from pipeline.core.errors import cli
from pipeline.core.files import fresh_dir
from pipeline.settings import load_settings


def draw(benchmark: str) -> tuple[str, dict[str, bytes]]:
    """One benchmark's figures by name; none when the rank stage did not analyse it."""
    import pandas as pd

    from pipeline.report.figures import draw_benchmark

    rank = read_artifact("rank", paths.rank_json(benchmark))
    if rank.get("status") != "ok":
        return benchmark, {}
    return benchmark, draw_benchmark(pd.read_parquet(paths.clusters_table(benchmark)),
                                     pd.read_csv(paths.ranking_csv(benchmark)),
                                     read_artifact("clusters", paths.clusters_json(benchmark)),
                                     rank.get("most_efficient_cluster"),
                                     read_artifact("importance", paths.importance_json(benchmark)))


@cli
def main(argv: Sequence[str] | None = None) -> None:
    stage_arguments("pipeline.stages.figures", __doc__, argv)
    settings = load_settings()
    from pipeline.analysis.scope import analysed_benchmarks
    from pipeline.report.figures import write_pngs

    benchmarks = analysed_benchmarks(settings.analysis)

    fresh_dir(paths.FIGURES)
    for benchmark, pngs in for_each(draw, benchmarks, "figures"):
        write_pngs(pngs, benchmark)
        print(f"{benchmark}: {len(pngs)} figures" if pngs else f"{benchmark}: not analysed, no figures")


if __name__ == "__main__":
    main()
