"""Loading what the stages wrote: per benchmark the importance, cluster, rank and decide outputs, and the ingest's
results, quarantine list, tally and summary check."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import pandas as pd

from pipeline.analysis.forecasting.decide import DecideSummary
from pipeline.analysis.statistics.clustering import Clustering
from pipeline.analysis.statistics.importance_result import ImportanceReport
from pipeline.analysis.statistics.ranking import Ranking
from pipeline.core import paths
from pipeline.report import decide_section


class LargestDifference(TypedDict):
    """The shipped score farthest from ours in a round: whose, both times to train (minutes) and the relative
    difference (|ours - shipped| / shipped, a fraction)."""
    submitter: str
    system: str
    benchmark: str
    ours_min: float
    shipped_min: float
    relative: float


class SummaryCheck(TypedDict):
    """One round's entry of data/interim/summary_check.json (written by `pipeline.mlperf.summaries.agreement`):
    counts of the scores its summaries ship, equal to ours, differing and not scored here, the summary files
    (paths in the round) and the largest difference (None when none differs)."""
    round: str
    shipped: int
    equal: int
    differing: int
    not_scored_here: int
    files: list[str]
    largest_difference: LargestDifference | None


@dataclass(frozen=True)
class BenchmarkOutputs:
    """What the importance, cluster, rank and decide stages wrote for one benchmark."""
    benchmark: str
    rank: Ranking
    ranking: pd.DataFrame
    clusters: Clustering
    importance: ImportanceReport
    clustered: pd.DataFrame
    # What the decide stage's fragment renders (decide_section.fragment); None: leave the fragment out.
    decide: dict[str, Any] | None = None
    # The decide stage's scalar metrics (decide_section.metrics_of), for reports/metrics.json.
    decide_metrics: dict[str, Any] | None = None
    # decide.json as the decide stage wrote it (decide_section.load_summary): the site's forecast curves.
    decide_summary: DecideSummary | None = None
    # The results of the benchmark's scope left out as republished (pipeline.analysis.scope.republished_left_out).
    republished: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def analysed(self) -> bool:
        """True when the rank stage analysed the benchmark (its ranking is not a skip)."""
        return self.rank.analysed


def load_benchmark_outputs(benchmark: str, republished: pd.DataFrame | None = None) -> BenchmarkOutputs:
    """What the stages wrote for `benchmark`, with the results its scope left out as republished."""
    summary = decide_section.load_summary(benchmark)  # read once, for the fragment and the metrics
    return BenchmarkOutputs(
        benchmark=benchmark, rank=Ranking.read(paths.rank_json(benchmark)),
        ranking=pd.read_csv(paths.ranking_csv(benchmark)),
        clusters=Clustering.read(paths.clusters_json(benchmark)),
        importance=ImportanceReport.read(paths.importance_json(benchmark)),
        clustered=pd.read_parquet(paths.clusters_table(benchmark)),
        decide=decide_section.fragment(benchmark, summary), decide_metrics=decide_section.metrics_of(summary),
        decide_summary=summary,
        republished=pd.DataFrame() if republished is None else republished)


def load_summary_check(path: Path = paths.SUMMARY_CHECK) -> list[SummaryCheck]:
    """Per round with shipped summaries, our scores' agreement with them (pipeline.mlperf.summaries); empty
    without the file."""
    checks: list[SummaryCheck] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
    return checks


def load_tally(path: Path = paths.TALLY) -> pd.DataFrame | None:
    """The ingest's per-round file tally (None when an older ingest wrote none)."""
    return pd.read_csv(path) if path.is_file() else None


