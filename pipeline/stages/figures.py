"""Stage `figures`: the report's per-benchmark figures as PNG files, drawn once so that the page only embeds them.

    python -m pipeline.stages.figures [BENCHMARK ...]

For each benchmark of `analysis.benchmarks` (or the ones named) that the rank stage analysed, writes
`reports/figures/<benchmark>/<name>.png`, name one of scaling, efficiency, pareto, best_time, heatmap and
importance, from its clusters.parquet, ranking.csv, clusters.json, rank.json and importance.json (see
`pipeline.report.figures`). A benchmark that was not analysed gets no figures. Benchmarks are drawn in two
processes: the machine's two cores.
"""
from __future__ import annotations

import argparse
import shutil
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

import pandas as pd

from ..cluster import clusters_path
from ..errors import UsageError, cli
from ..importance import reports_dir
from ..io import load_params, section
from ..report.figures import FIGURES_DIR, draw_benchmark, write_pngs
from ..report.inputs import load_json

WORKERS = 2


def draw(benchmark: str) -> tuple[str, dict[str, bytes]]:
    """One benchmark's figures by name; none when the rank stage did not analyse it."""
    out = reports_dir(benchmark)
    rank = load_json(out / "rank.json")
    if rank.get("status") != "ok":
        return benchmark, {}
    return benchmark, draw_benchmark(pd.read_parquet(clusters_path(benchmark)), pd.read_csv(out / "ranking.csv"),
                                     load_json(out / "clusters.json"), rank.get("best_cluster"),
                                     load_json(out / "importance.json"))


def parse_args(argv: Sequence[str] | None, benchmarks: Sequence[str]) -> list[str]:
    parser = argparse.ArgumentParser(prog="python -m pipeline.stages.figures", description=__doc__.split("\n\n")[0])
    parser.add_argument("benchmarks", nargs="*", metavar="BENCHMARK",
                        help=f"benchmarks to draw (default: analysis.benchmarks: {', '.join(benchmarks)})")
    chosen = [name.lower() for name in parser.parse_args(argv).benchmarks] or list(benchmarks)
    unknown = [name for name in chosen if name not in benchmarks]
    if unknown:
        raise UsageError(f"not in analysis.benchmarks: {', '.join(unknown)}; choose from {', '.join(benchmarks)}")
    return chosen


@cli
def main(argv: Sequence[str] | None = None) -> None:
    benchmarks = parse_args(argv, section(load_params(), "analysis")["benchmarks"])
    with ProcessPoolExecutor(max_workers=min(WORKERS, len(benchmarks))) as pool:
        for benchmark, pngs in pool.map(draw, benchmarks):
            shutil.rmtree(FIGURES_DIR / benchmark, ignore_errors=True)  # no figure left from an earlier run
            write_pngs(pngs, benchmark)
            print(f"{benchmark}: {len(pngs)} figures" if pngs else f"{benchmark}: not analysed, no figures")


if __name__ == "__main__":
    main()
