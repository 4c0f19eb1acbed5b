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

from dataclasses import dataclass
from pathlib import Path

PARAMS = Path("params.yaml")

DVC_LOCK = Path("dvc.lock")  # DVC's record of the last run: the pages show the input stages' hashes from it
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
BUYER = PROCESSED / "buyer"  # each benchmark's answer for a buyer (the `buyer` stage)
FINDINGS = PROCESSED / "findings"  # the published findings tested (the `findings` stage)
KSCAN = PROCESSED / "kscan"  # k-means at every k of cluster.k_range (the `kscan` stage)

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


@dataclass(frozen=True)
class PerBenchmark:
    """Where a stage writes one file per benchmark: `folder` and the file name's `suffix`. Called as
    `importance_json("bert")` it gives the file's path; `importance_json("bert", folder)` the same file in another
    folder (the stage's temporary output folder while it writes)."""
    folder: Path
    suffix: str

    def __call__(self, benchmark: str, folder: Path | None = None) -> Path:
        """The file of `benchmark` in `folder` (the default folder when None)."""
        return (self.folder if folder is None else folder) / f"{benchmark}{self.suffix}"


importance_json = PerBenchmark(IMPORTANCE, ".json")  # the importance stage's result (JSON)
buyer_json = PerBenchmark(BUYER, ".json")  # the buyer stage's answer
findings_json = PerBenchmark(FINDINGS, ".json")  # the findings stage's tests, corrected over every benchmark
kscan_json = PerBenchmark(KSCAN, ".json")  # the kscan stage's fits, diagnostics and support at every k
clusters_table = PerBenchmark(CLUSTER_TABLES, ".parquet")  # the cluster stage's labelled configurations
clusters_json = PerBenchmark(CLUSTERS, ".json")  # the cluster stage's clusters and the diagnostics of k
rank_json = PerBenchmark(RANK, ".json")  # the rank stage's fronts and findings
ranking_csv = PerBenchmark(RANK, ".csv")  # the rank stage's ranking table
decide_json = PerBenchmark(DECIDE, ".json")  # the decide stage's decision support
models_json = PerBenchmark(DECIDE, ".models.json")  # the fitted forecast models predict and recommend answer from
brief_pdf = PerBenchmark(BRIEFS, ".pdf")  # the brief stage's printable page of a current benchmark
headline_metrics = PerBenchmark(HEADLINE_METRICS, ".json")  # the few numbers `dvc metrics show` prints
