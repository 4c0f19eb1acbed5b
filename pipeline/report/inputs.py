"""Loading what the stages wrote: per benchmark the importance, cluster, rank and decide outputs with their
figure files (PNG bytes as written), and the ingest's results, quarantine list and tally; the user's price table.

Names this package takes from stage modules (the lead moves them into core/analysis modules):
cluster.clusters_path, importance.reports_dir, decide.load_summary / report_section / metrics_of,
recommend.load_prices.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .. import decide
from ..cluster import clusters_path
from ..errors import ParamsError
from ..importance import reports_dir
from ..parsers import ACCELERATOR_FAMILIES
from ..recommend import load_prices
from .figures import FIGURES_DIR

REPORTS = Path("reports")
RESULTS = Path("data/interim/results.parquet")
QUARANTINE = Path("data/interim/quarantine.csv")
TALLY = Path("data/interim/tally.csv")
DVC_LOCK = Path("dvc.lock")
# The one price file the project ships: made-up numbers, so the page labels its costs as illustrative.
EXAMPLE_PRICES = Path("examples/prices.yaml")
# The figure of a benchmark the cluster stage writes beside its JSON (file name -> the key the template places it
# by); the figures stage writes the others into FIGURES_DIR/<benchmark>/<key>.png. The importance stage's own
# importance.png is not shown: its legend covers the bars and it names features by column; the figures stage
# draws the one the page shows from importance.json.
STAGE_FIGURES = {"k_selection.png": "k_selection"}


@dataclass(frozen=True)
class BenchmarkOutputs:
    """What the importance, cluster, rank and decide stages wrote for one benchmark."""
    benchmark: str
    rank: dict[str, Any]
    ranking: pd.DataFrame
    clusters: dict[str, Any]
    importance: dict[str, Any]
    clustered: pd.DataFrame
    # PNG bytes of the stages' figures, by FIGURE_FILES key; a figure a stage did not write is absent.
    figures: dict[str, bytes] = field(default_factory=dict)
    # What the decide stage's fragment renders (decide.report_section); None: leave the fragment out.
    decide: dict[str, Any] | None = None
    # The decide stage's scalar metrics (decide.metrics_of), for reports/metrics.json.
    decide_metrics: dict[str, Any] | None = None

    @property
    def analysed(self) -> bool:
        return self.rank.get("status") == "ok"


@dataclass(frozen=True)
class Prices:
    """A price table (accelerator family -> price per accelerator-hour) and where it came from."""
    path: Path
    per_hour: dict[str, float]

    @property
    def illustrative(self) -> bool:
        return self.path.resolve() == EXAMPLE_PRICES.resolve()


def load_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def load_benchmark_outputs(benchmark: str) -> BenchmarkOutputs:
    out = reports_dir(benchmark)
    summary = decide.load_summary(benchmark)  # read once, for the fragment and the metrics
    return BenchmarkOutputs(
        benchmark=benchmark, rank=load_json(out / "rank.json"), ranking=pd.read_csv(out / "ranking.csv"),
        clusters=load_json(out / "clusters.json"), importance=load_json(out / "importance.json"),
        clustered=pd.read_parquet(clusters_path(benchmark)),
        figures=figure_files(benchmark),
        decide=decide.report_section(benchmark, summary), decide_metrics=decide.metrics_of(summary))


def figure_files(benchmark: str, figures_dir: Path = FIGURES_DIR) -> dict[str, bytes]:
    """The PNG bytes of every figure the stages wrote for a benchmark, by key."""
    paths = {key: reports_dir(benchmark) / name for name, key in STAGE_FIGURES.items()}
    paths.update({path.stem: path for path in sorted((figures_dir / benchmark).glob("*.png"))})
    return {key: path.read_bytes() for key, path in paths.items() if path.is_file()}


def load_tally(path: Path = TALLY) -> pd.DataFrame | None:
    """The ingest's per-round file tally (None when an older ingest wrote none)."""
    return pd.read_csv(path) if path.is_file() else None


def load_price_table(path: str | Path | None) -> Prices | None:
    """`report.prices` from params: None, or a price YAML whose families are all in the accelerator catalogue
    (`pipeline.parsers.ACCELERATOR_FAMILIES`), matched without regard to case and stored under the catalogue's
    spelling.

    An unknown family is an error listing the known ones: a misspelt family would otherwise silently leave its
    configurations without a cost."""
    if path is None:
        return None
    path = Path(path)
    known = {family.name.casefold(): family.name for family in ACCELERATOR_FAMILIES}
    per_hour = load_prices(path)
    unknown = sorted(family for family in per_hour if family.casefold() not in known)
    if unknown:
        raise ParamsError(f"price file {path} (report.prices) names unknown accelerator families: "
                          f"{', '.join(unknown)}; known families: {', '.join(sorted(known.values()))}")
    return Prices(path, {known[family.casefold()]: price for family, price in per_hour.items()})
