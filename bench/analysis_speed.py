"""Seconds the importance, cluster and rank (with findings) work takes per benchmark, in-process, imports excluded.

    python bench/analysis_speed.py [BENCHMARK ...] [--dump DIR]   # default: every benchmark of analysis.benchmarks

Runs the stages' pure functions on each benchmark's in-scope configurations (data/processed/configurations.parquet:
run `dvc repro features` first) with the project's params: `importance.analyse`, then `cluster.cluster_benchmark`
on the features it chose, then what the rank stage computes (rankings, cluster ranking, weight sensitivity,
findings, superlinear cases). Prints a table of seconds per benchmark and stage, the mean per benchmark and the
total. Figures and file writing are not timed. With `--dump DIR` it also writes each benchmark's results as JSON
(`DIR/<benchmark>.json`) so two versions of the code can be compared answer for answer.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd

from bench._common import format_table, timed
from pipeline.analysis import scope
from pipeline.analysis.statistics import clustering as cluster
from pipeline.analysis.statistics import findings, importance, superlinear
from pipeline.analysis.statistics import ranking as rank
from pipeline.core.files import write_json
from pipeline.settings import Settings, load_settings

STAGES = ("importance", "cluster", "rank")


def run_benchmark(benchmark: str, frame: pd.DataFrame,
                  settings: Settings) -> tuple[dict[str, float], dict[str, Any]]:
    """Seconds per stage and the stages' answers for one benchmark's in-scope configurations."""
    rank_params = settings.rank.model_dump()
    criteria = rank_params["criteria"]
    seconds: dict[str, float] = {}
    with timed() as clock:
        importance_report = importance.analyse(frame, settings.importance, settings.analysis.min_configurations,
                                               benchmark=benchmark)
    seconds["importance"] = clock.seconds
    with timed() as clock:
        candidates, source = cluster.candidate_features(importance_report, settings.cluster.default_features)
        clustered, summary = cluster.cluster_benchmark(frame, candidates, settings.cluster, source,
                                                       benchmark=benchmark)
    seconds["cluster"] = clock.seconds
    answers: dict[str, Any] = {"importance": importance_report.as_json(), "clusters": summary.as_json(),
                               "cluster_labels": clustered["cluster"].tolist()}
    with timed() as clock:
        if not clustered.empty:
            ranking = rank.rank_configurations(clustered, criteria)
            answers["rank"] = {
                "ranking": ranking[["round", "submitter", "system", "rank", "round_rank", "front"]].to_dict("records"),
                "clusters": [item.model_dump() for item in rank.cluster_standings(clustered)],
                "sensitivity": [row.model_dump() for row in rank.sensitivity(
                    clustered, criteria, rank_params["sensitivity"], rank_params["top"])],
                "findings": [item.as_json() for item in findings.evaluate(clustered, settings.findings)],
                "superlinear": [case.model_dump() for case in superlinear.superlinear_cases(
                    clustered, settings.findings.superlinear_threshold)]}
    seconds["rank"] = clock.seconds
    return seconds, answers


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benchmarks", nargs="*", help="catalogue ids (default: the analysed benchmarks)")
    parser.add_argument("--dump", type=Path, help="write each benchmark's answers to DIR/<benchmark>.json")
    args = parser.parse_args(argv)
    settings = load_settings()
    analysis = settings.analysis
    configurations = scope.read_configurations()
    rows, totals = [], dict.fromkeys(STAGES, 0.0)
    benchmarks = args.benchmarks or scope.analysed_benchmarks(analysis, configurations)
    for benchmark in benchmarks:
        frame = scope.in_scope(configurations, analysis, benchmark)
        seconds, answers = run_benchmark(benchmark, frame, settings)
        if args.dump:
            write_json(answers, args.dump / f"{benchmark}.json")
        for stage in STAGES:
            totals[stage] += seconds[stage]
        rows.append([benchmark, str(len(frame)), *(f"{seconds[stage]:.2f}" for stage in STAGES),
                     f"{sum(seconds.values()):.2f}"])
        print(f"{benchmark}: " + ", ".join(f"{stage} {seconds[stage]:.2f} s" for stage in STAGES), file=sys.stderr)
    rows.append(["mean per benchmark", "", *(f"{totals[stage] / len(benchmarks):.2f}" for stage in STAGES),
                 f"{sum(totals.values()) / len(benchmarks):.2f}"])
    rows.append([f"total ({len(benchmarks)} benchmarks)", "", *(f"{totals[stage]:.2f}" for stage in STAGES),
                 f"{sum(totals.values()):.2f}"])
    print(format_table(["benchmark", "configurations", *(f"{stage} s" for stage in STAGES), "all s"], rows))


if __name__ == "__main__":
    main()
