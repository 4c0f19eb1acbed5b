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
"""
from __future__ import annotations

from pathlib import Path

PARAMS = Path("params.yaml")

MIRROR_LISTING = Path("data/mirror.json")
# The mirror archives' SHA-256 by path, size and time, so an unchanged mirror is not read again (not an output).
MIRROR_HASHES = Path("data/.mirror-hashes.json")
RAW = Path("data/raw")
INTERIM = Path("data/interim")
SYSTEMS = INTERIM / "systems.parquet"
RUNS = INTERIM / "runs.parquet"
RESULTS = INTERIM / "results.parquet"
QUARANTINE = INTERIM / "quarantine.csv"
TALLY = INTERIM / "tally.csv"

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


def importance_json(benchmark: str) -> Path:
    return IMPORTANCE / f"{benchmark}.json"


def clusters_table(benchmark: str) -> Path:
    return CLUSTER_TABLES / f"{benchmark}.parquet"


def clusters_json(benchmark: str) -> Path:
    return CLUSTERS / f"{benchmark}.json"


def rank_json(benchmark: str) -> Path:
    return RANK / f"{benchmark}.json"


def ranking_csv(benchmark: str) -> Path:
    return RANK / f"{benchmark}.csv"


def decide_json(benchmark: str) -> Path:
    return DECIDE / f"{benchmark}.json"


def brief_pdf(benchmark: str) -> Path:
    """The printable brief of a current benchmark."""
    return BRIEFS / f"{benchmark}.pdf"


def models_json(benchmark: str) -> Path:
    """The decide stage's fitted forecast models of a benchmark, which predict and recommend answer from."""
    return DECIDE / f"{benchmark}.models.json"


def headline_metrics(benchmark: str) -> Path:
    """The few numbers of a benchmark that `dvc metrics show` prints."""
    return HEADLINE_METRICS / f"{benchmark}.json"
