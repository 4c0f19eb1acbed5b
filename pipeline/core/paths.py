"""Where every input and output of the pipeline lives, relative to the project root (where params.yaml is).

One home for paths: stages, commands, the report and dvc.yaml name the same files. Each stage writes into its
own folder, one file per benchmark where the stage works per benchmark, so dvc.yaml can state one output per
stage and a benchmark added to `analysis.benchmarks` needs no new stage.

    data/mirror.json                validate: what fetch copies from the mirror, by content (or clones)
    data/raw/                       fetch: one archive or folder per round
    data/interim/                   ingest: systems, runs, results (Parquet), quarantine.csv and tally.csv
    data/processed/                 features: configurations.parquet, feature_notes.csv
    data/processed/backtest.parquet backtest: forward-chaining forecasts of every benchmark
    data/processed/clusters/        cluster: <benchmark>.parquet, the configurations with their cluster
    reports/importance/             importance: <benchmark>.json
    reports/clusters/               cluster: <benchmark>.json (the clustering and the choice of k)
    reports/rank/                   rank: <benchmark>.json, <benchmark>.csv (the ranking)
    reports/decide/                 decide: <benchmark>.json, <benchmark>.models.json
    reports/metrics/                report: <benchmark>.json, the headline numbers (DVC metrics, in git), and
                                    summary.json, over every benchmark (mean silhouette, findings supported)
    reports/index.html ...          report: the site (index.html, benchmarks/, methods.html, data.html, assets/),
                                    metrics.json (every scalar), ranking.csv, importance.json

A stage writes a folder output into a temporary folder beside it, swapped in whole at the end
(`pipeline.core.files.atomic_dir`): the functions below take that `folder` (by default the output's own).
"""
from __future__ import annotations

from pathlib import Path

PARAMS = Path("params.yaml")

MIRROR_LISTING = Path("data/mirror.json")
# The mirror archives' SHA-256 by path, size and time, so an unchanged mirror is not read again (not an output).
MIRROR_HASHES = Path("data/.mirror-hashes.json")
RAW = Path("data/raw")
# What upstream answered when last asked for rounds, and when (pipeline/mlperf/discovery.py): this machine's record.
UPSTREAM_RECORD = Path("data/.upstream.json")
INTERIM = Path("data/interim")
SYSTEMS = INTERIM / "systems.parquet"
RUNS = INTERIM / "runs.parquet"
RESULTS = INTERIM / "results.parquet"
QUARANTINE = INTERIM / "quarantine.csv"
TALLY = INTERIM / "tally.csv"
# Our scores against the summaries a round ships (pipeline/mlperf/summaries.py).
SUMMARY_CHECK = INTERIM / "summary_check.json"

PROCESSED = Path("data/processed")
CONFIGURATIONS = PROCESSED / "configurations.parquet"
FEATURE_NOTES = PROCESSED / "feature_notes.csv"
BACKTEST = PROCESSED / "backtest.parquet"
CLUSTER_TABLES = PROCESSED / "clusters"

REPORTS = Path("reports")
IMPORTANCE = REPORTS / "importance"
CLUSTERS = REPORTS / "clusters"
RANK = REPORTS / "rank"
DECIDE = REPORTS / "decide"
BRIEFS = REPORTS / "briefs"  # one printable page per current benchmark (the `brief` stage)
INDEX = REPORTS / "index.html"
ASSETS = REPORTS / "assets"  # the site's shared assets (the `assets` stage)
METRICS = REPORTS / "metrics.json"
HEADLINE_METRICS = REPORTS / "metrics"
SUMMARY_METRICS = HEADLINE_METRICS / "summary.json"  # no benchmark is called "summary"
RANKING = REPORTS / "ranking.csv"
IMPORTANCE_SUMMARY = REPORTS / "importance.json"


def importance_json(benchmark: str, folder: Path = IMPORTANCE) -> Path:
    """The importance stage's result of a benchmark (JSON).

    `folder` is the stage's output folder (a temporary one while the stage writes).
    """
    return folder / f"{benchmark}.json"


def clusters_table(benchmark: str, folder: Path = CLUSTER_TABLES) -> Path:
    """The cluster stage's labelled configurations of a benchmark (Parquet).

    `folder` is the stage's output folder (a temporary one while the stage writes).
    """
    return folder / f"{benchmark}.parquet"


def clusters_json(benchmark: str, folder: Path = CLUSTERS) -> Path:
    """The cluster stage's result of a benchmark: clusters and the diagnostics of k (JSON).

    `folder` is the stage's output folder (a temporary one while the stage writes).
    """
    return folder / f"{benchmark}.json"


def rank_json(benchmark: str, folder: Path = RANK) -> Path:
    """The rank stage's result of a benchmark: fronts and findings (JSON).

    `folder` is the stage's output folder (a temporary one while the stage writes).
    """
    return folder / f"{benchmark}.json"


def ranking_csv(benchmark: str, folder: Path = RANK) -> Path:
    """The rank stage's ranking table of a benchmark (CSV).

    `folder` is the stage's output folder (a temporary one while the stage writes).
    """
    return folder / f"{benchmark}.csv"


def decide_json(benchmark: str, folder: Path = DECIDE) -> Path:
    """The decide stage's decision support of a benchmark (JSON).

    `folder` is the stage's output folder (a temporary one while the stage writes).
    """
    return folder / f"{benchmark}.json"


def brief_pdf(benchmark: str, folder: Path = BRIEFS) -> Path:
    """The brief stage's printable page of a current benchmark (PDF).

    `folder` is the stage's output folder (a temporary one while the stage writes).
    """
    return folder / f"{benchmark}.pdf"


def models_json(benchmark: str, folder: Path = DECIDE) -> Path:
    """The decide stage's fitted forecast models of a benchmark, which predict and recommend answer from."""
    return folder / f"{benchmark}.models.json"


def headline_metrics(benchmark: str, folder: Path = HEADLINE_METRICS) -> Path:
    """The few numbers of a benchmark that `dvc metrics show` prints."""
    return folder / f"{benchmark}.json"
