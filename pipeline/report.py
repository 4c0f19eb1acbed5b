"""Stage `report`: `reports/index.html`, one self-contained page, plus the combined ranking, importance and metrics.

    python -m pipeline.report

The page leads with the headline benchmark (`analysis.benchmark`): a summary card with the best configurations of
the latest round it ran in, its first-ranked cluster, how the published study's findings fared and the data
coverage; then the findings, each a test with its numbers and verdict (rank.json's `findings`), one section per
benchmark of `analysis.benchmarks` (figures, cluster profiles, a sortable and filterable ranking), the quarantine
list, the definitions and method with the params used, and the provenance (git revision, input hashes from
`dvc.lock`). Figures are embedded PNGs and the only script is inline, so the file opens offline.

Also writes `reports/ranking.csv` (every benchmark's ranking, with a `benchmark` column), `reports/metrics.json`
(keyed by benchmark, scalar metrics only, the decide stage's held-out errors nested under `decide`; `dvc metrics
show` prints it) and `reports/importance.json` (keyed by
benchmark).
"""
from __future__ import annotations

import base64
import io
import json
import math
import struct
import subprocess
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
import pandas as pd
import yaml
from PIL import Image

from pipeline.analysis import decide

from pipeline.analysis import findings

from pipeline.core import plots
from pipeline.mlperf.catalogue import BY_ID, round_version
from pipeline.analysis.clustering import LOG_SCALED, PROFILED
from pipeline.core.errors import cli
from pipeline.core import paths
from pipeline.core.artifacts import read_artifact
from pipeline.core.files import load_params, section, write_csv, write_json, write_text
from pipeline.analysis.ranking import latest_round_ranking
from pipeline.analysis.scope import ROUND_PUBLISHED, round_published

REPORTS, RESULTS, QUARANTINE = paths.REPORTS, paths.RESULTS, paths.QUARANTINE
DVC_LOCK = Path("dvc.lock")
TEMPLATE = "report.html.j2"
# The stages whose hashes identify the input data of a report.
INPUT_STAGES = ("fetch", "ingest")
# Other benchmarks show their best configurations only; reports/ranking.csv has every row.
OTHER_RANKING_ROWS = 50
SUMMARY_TOP = 5
# Rows of each benchmark's latest-round ranking and of its all-rounds view by round-relative efficiency.
LATEST_ROWS = 10
# What "best" means, said once wherever a ranking is shown.
BEST_MEANS = ("Best means fastest to train with the fewest accelerator-hours: configurations are ranked by "
              "non-dominated fronts on time to train and accelerator-hours (none ranks above one that is at least as "
              "fast with at most as many accelerator-hours and better on one), then by TOPSIS within a front.")

# Figure sizes in inches at plots.png_bytes' 110 dpi: about 660 x 400 pixels, shown two side by side at ~540
# pixels on a laptop, where the text stays about 12 pixels high.
FIGURE_SIZE = (6.0, 3.6)
WIDE_FIGURE_SIZE = (6.0, 4.2)
# Colours per embedded PNG: the page holds about a hundred figures and must stay a few megabytes.
PNG_COLOURS = 256
# The colour-blind palette reordered so the first five clusters get the most distinct hues (its second and fourth
# colours, orange and vermillion, are hard to tell apart side by side).
CLUSTER_PALETTE_ORDER = [0, 1, 2, 4, 9, 3, 5, 7, 6, 8]
JITTER = 0.15  # relative spread of accelerator counts in scatter plots (see _scatter_by_cluster)
MARKERS = ["o", "s", "D", "^", "v", "P", "X", "*", "h", "<"]
IMPORTANCE_TOP = 8
FAMILIES_SHOWN = 8
HIGHLIGHT = plots.sns.color_palette(plots.PALETTE)[3]  # vermillion: the Pareto front

# MLCommons publication month of each Training round, to place rounds on a time axis.
FEATURE_LABELS = {
    "time_to_train_min": "time to train (min)", "accelerator_hours": "accelerator-hours",
    "scaling_efficiency": "scaling efficiency", "speedup": "speed-up",
    "accelerator_count": "accelerators", "n_nodes": "nodes", "accelerators_per_node": "accelerators per node",
    "accelerator_memory_gib": "accelerator memory (GiB)", "accelerator_year": "accelerator year",
    "host_cpu_cores": "host CPU cores per node", "host_memory_gib": "host memory (GiB)",
    "interconnect_intra_gbps": "intra-node link (Gbit/s)", "interconnect_inter_gbps": "inter-node link (Gbit/s)",
    "accelerator_vendor": "accelerator vendor", "accelerator_family": "accelerator family",
    "accelerator_form_factor": "accelerator form factor", "host_cpu_vendor": "host CPU vendor",
    "interconnect_intra": "intra-node link kind", "interconnect_inter": "inter-node link kind",
    "framework": "framework", "round_year": "round (software era)",
    "relative_accelerator_hours": "accelerator-hours / round's best",
}
TARGET_LABELS = {"log_time_to_train": "time to train", "log_accelerator_hours": "accelerator-hours"}


@dataclass(frozen=True)
class BenchmarkOutputs:
    """What the importance, cluster and rank stages wrote for one benchmark."""
    benchmark: str
    rank: dict[str, Any]
    ranking: pd.DataFrame
    clusters: dict[str, Any]
    importance: dict[str, Any]
    clustered: pd.DataFrame
    k_selection_png: bytes | None
    # What the decide stage's fragment renders (decide.report_section); None: leave the fragment out.
    decide: dict[str, Any] | None = None
    # The decide stage's scalar metrics (decide.metrics_of), for reports/metrics.json.
    decide_metrics: dict[str, Any] | None = None

    @property
    def analysed(self) -> bool:
        return self.rank.get("status") == "ok"


@dataclass(frozen=True)
class Figure:
    data: str  # base64 PNG
    alt: str
    caption: str
    width: int  # pixels, so the page lays out before the images decode
    height: int


@dataclass(frozen=True)
class Finding:
    """One finding of the published study as tested by pipeline.analysis.findings (rank.json's `findings`)."""
    key: str
    claim: str
    verdict: str  # findings.SUPPORTED, CONTRADICTED or INCONCLUSIVE
    test: str
    evidence: str

    @property
    def verdict_text(self) -> str:
        return self.verdict


@dataclass(frozen=True)
class Column:
    name: str
    label: str
    numeric: bool
    format: Callable[[Any], str]
    sort_key: Callable[[Any], float] | None = None
    swatch: bool = False  # the value is a cluster id: show its colour, as in the figures


# The published study's findings, as short table headers and claims (tested in pipeline.analysis.findings).
FINDING_CLAIMS = findings.CLAIMS


# ---------------------------------------------------------------------------------------------------- formatting

def readable(value: Any) -> str:
    """A number with as many digits as a reader needs: 4,320 / 13.5 / 1.80 / 0.358; blank when missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if not isinstance(value, (int, float, np.integer, np.floating)):
        return str(value)
    magnitude = abs(float(value))
    if float(value).is_integer() and magnitude >= 1:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:,.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def ratio(value: Any) -> str:
    """Efficiencies and speed-ups with two decimals, blank when missing."""
    return "" if value is None or pd.isna(value) else f"{value:.2f}"


def _round_order(round_: str) -> float:
    major, minor = round_version(round_)
    return major * 100 + minor


def _optional_float(value: Any) -> float:
    return float("nan") if value is None or pd.isna(value) else float(value)


# Who and what first, then the criteria, then the analysis' labels: on a phone the first columns are what shows.
RANKING_COLUMNS = [
    Column("rank", "Rank", True, readable),
    Column("submitter", "Submitter", False, str),
    Column("system", "System", False, str),
    Column("round", "Round", True, str, _round_order),
    Column("accelerator_family", "Accelerator", False, lambda v: "" if pd.isna(v) else str(v)),
    Column("accelerator_count", "Accelerators", True, readable),
    Column("time_to_train_min", "Time to train (min)", True, readable),
    Column("accelerator_hours", "Accelerator-hours", True, readable),
    Column("relative_accelerator_hours", "Round-relative efficiency", True, ratio),
    Column("scaling_efficiency", "Scaling efficiency (series)", True, ratio),
    Column("speedup", "Speed-up (×)", True, ratio),
    Column("front", "Front", True, readable),
    Column("score", "TOPSIS score in front", True, lambda v: "" if pd.isna(v) else f"{v:.3f}"),
    Column("round_rank", "Rank in round", True, readable),
    Column("cluster", "Cluster", True, readable, swatch=True),
    Column("division", "Division", False, str),
]


def table_rows(frame: pd.DataFrame, columns: Sequence[Column]) -> list[list[dict[str, str]]]:
    """Cells with the text shown and, for numeric columns, the value the page's script sorts by."""
    rows = []
    for record in frame.to_dict(orient="records"):
        cells = []
        for column in columns:
            value = record.get(column.name)
            cell = {"text": column.format(value)}
            if column.numeric:
                key = column.sort_key(value) if column.sort_key else _optional_float(value)
                cell["sort"] = "" if math.isnan(key) else f"{key:.7g}"  # finer than any value shown
            if column.swatch and not pd.isna(value):
                cell["colour"] = hex_colour(cluster_colours([int(value)])[int(value)])
            cells.append(cell)
        rows.append(cells)
    return rows


def ranking_table(ranking: pd.DataFrame, limit: int | None) -> dict[str, Any]:
    shown = ranking if limit is None else ranking.head(limit)
    return {"columns": [{"label": c.label, "numeric": c.numeric} for c in RANKING_COLUMNS],
            "rows": table_rows(shown, RANKING_COLUMNS), "shown": len(shown), "total": len(ranking)}


def configuration_name(row: pd.Series | dict[str, Any]) -> str:
    return f"{row['round']} {row['submitter']} {row['system']}"


def hardware_name(row: pd.Series | dict[str, Any]) -> str:
    """"8 × H100": the accelerator count and family of a configuration."""
    family = row.get("accelerator_family")
    family = "unknown accelerator" if family is None or pd.isna(family) else family
    return f"{readable(row['accelerator_count'])} × {family}"


# ------------------------------------------------------------------------------------------------------ figures

def compact_png(png: bytes, colours: int = PNG_COLOURS) -> bytes:
    """The PNG with a palette of `colours`: a third of the bytes, and charts of flat colours look the same.
    Octree quantisation keeps the colour of a small cluster that median cut merges into grey."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    buffer = io.BytesIO()
    image.quantize(colors=colours, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(
        buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def embed(png: bytes, alt: str, caption: str) -> Figure:
    png = compact_png(png)
    width, height = struct.unpack(">II", png[16:24])  # the PNG header's IHDR chunk
    return Figure(base64.b64encode(png).decode("ascii"), alt, caption, width, height)


def cluster_colours(clusters: Sequence[int]) -> dict[int, tuple[float, float, float]]:
    """One colour per cluster id, the same in every figure and table of the page."""
    palette = plots.sns.color_palette(plots.PALETTE, n_colors=10)
    ordered = [palette[i] for i in CLUSTER_PALETTE_ORDER]
    return {int(cluster): ordered[int(cluster) % len(ordered)] for cluster in clusters}


def hex_colour(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{round(255 * channel):02x}" for channel in rgb)


def _scatter_by_cluster(axis: Any, clustered: pd.DataFrame, x: str, y: str, best_cluster: int | None) -> None:
    """Scatter on a log x axis of accelerator counts, jittered by up to ±JITTER so the dozens of results at the
    same count (8 accelerators above all) show as a cloud rather than one point; seeded, so figures repeat."""
    jitter = np.random.default_rng(0).uniform(-JITTER, JITTER, len(clustered))
    clustered = clustered.assign(**{x: clustered[x] * (1 + jitter)})
    colours = cluster_colours(sorted(clustered["cluster"].unique()))
    # Hollow markers of distinct shapes: where clusters overlap (they do, at 8 accelerators) every one shows
    # through; the best cluster is filled and drawn on top.
    for cluster, group in clustered.groupby("cluster"):
        best = int(cluster) == best_cluster
        colour = colours[int(cluster)]
        axis.scatter(group[x], group[y], s=30, marker=MARKERS[int(cluster) % len(MARKERS)],
                     facecolor=(*colour, 0.55) if best else "none", edgecolor=colour, linewidth=1.0,
                     label=f"{int(cluster)} (best)" if best else f"{int(cluster)}", zorder=3 if best else 2)


def _outside_legend(axis: Any, title: str | None = "cluster") -> None:
    """Legend right of the plot, clusters in id order and other entries as plotted: inside the axes it would hide
    the largest or fastest systems."""
    handles, labels = axis.get_legend_handles_labels()
    first_words = [label.split()[0] for label in labels]
    order = sorted(range(len(labels)), key=lambda i: (0, int(first_words[i])) if first_words[i].isdigit() else (1, i))
    axis.legend([handles[i] for i in order], [labels[i] for i in order], title=title, fontsize="small",
                title_fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
                alignment="left")


def scaling_figure(clustered: pd.DataFrame, best_cluster: int | None) -> bytes:
    """Time to train against accelerators by cluster, with ideal linear scaling of the most hardware-efficient
    result: the vertical gap between a point and the line is the hardware time it left idle."""
    figure, axis = plots.plt.subplots(figsize=FIGURE_SIZE)
    _scatter_by_cluster(axis, clustered, "accelerator_count", "time_to_train_min", best_cluster)
    counts = np.geomspace(clustered["accelerator_count"].min(), clustered["accelerator_count"].max(), 50)
    best_accelerator_minutes = (clustered["time_to_train_min"] * clustered["accelerator_count"]).min()
    axis.plot(counts, best_accelerator_minutes / counts, color="black", linestyle="--", linewidth=1,
              label="ideal linear scaling")
    plots.log_log(axis, xlabel="Accelerators (count, log scale)",
                  ylabel="Time to train (minutes, log scale)")
    _outside_legend(axis)
    return plots.png_bytes(figure)


def size_band_medians(clustered: pd.DataFrame, column: str, min_points: int = 3) -> pd.DataFrame:
    """Median of `column` per power-of-two band of accelerator count (bands with at least `min_points`)."""
    data = clustered[clustered[column].notna() & (clustered["accelerator_count"] > 0)]
    band = 2.0 ** np.round(np.log2(data["accelerator_count"].astype(float)))
    grouped = data.groupby(band)[column].agg(["median", "size"])
    grouped = grouped[grouped["size"] >= min_points]
    return grouped.rename_axis("accelerators").reset_index()


def efficiency_figure(clustered: pd.DataFrame, best_cluster: int | None) -> bytes:
    """Scaling efficiency against accelerators, with the median per size band: the trend of the gain per chip."""
    figure, axis = plots.plt.subplots(figsize=FIGURE_SIZE)
    data = clustered[clustered["scaling_efficiency"].notna()]
    _scatter_by_cluster(axis, data, "accelerator_count", "scaling_efficiency", best_cluster)
    axis.axhline(1.0, color="black", linestyle="--", linewidth=1, label="ideal linear scaling (1)")
    bands = size_band_medians(data, "scaling_efficiency")
    if len(bands) > 1:
        axis.plot(bands["accelerators"], bands["median"], color="black", linewidth=1.8, marker="o",
                  markersize=4, label="median per size band")
    axis.set(xscale="log", xlabel="Accelerators (count, log scale)",
             ylabel="Scaling efficiency (1 = linear)")
    axis.set_ylim(bottom=0)
    plots.plain_log_ticks(axis, "x")
    _outside_legend(axis)
    return plots.png_bytes(figure)


def spaced_labels(x: np.ndarray, y: np.ndarray, min_gap: float = 0.09) -> list[int]:
    """Indices of points far enough apart to label without overlap: greedy, in order, with distances in
    fractions of the log-log span of the points."""
    if len(x) == 0:
        return []
    position = np.column_stack([np.log10(x), np.log10(y)])
    span = np.ptp(position, axis=0)
    position = position / np.where(span > 0, span, 1.0)
    kept: list[int] = []
    for index in range(len(position)):
        if all(np.abs(position[index] - position[other]).max() >= min_gap for other in kept):
            kept.append(index)
    return kept


def pareto_figure(ranking: pd.DataFrame) -> bytes:
    """Time to train against accelerator-hours; the Pareto front is what no other result beats on both."""
    figure, axis = plots.plt.subplots(figsize=FIGURE_SIZE)
    front = ranking[ranking["pareto"].astype(bool)].sort_values("accelerator_hours")
    others = ranking[~ranking["pareto"].astype(bool)]
    axis.scatter(others["accelerator_hours"], others["time_to_train_min"], s=18, color="#9a9a9a", alpha=0.55,
                 edgecolor="none", label="other results")
    axis.plot(front["accelerator_hours"], front["time_to_train_min"], color=HIGHLIGHT, linewidth=1.2,
              drawstyle="steps-post", zorder=3)
    axis.scatter(front["accelerator_hours"], front["time_to_train_min"], s=42, color=HIGHLIGHT, marker="D",
                 edgecolor="black", linewidth=0.5, zorder=4, label=f"Pareto front ({len(front)})")
    picks = front.iloc[spaced_labels(front["accelerator_hours"].to_numpy(), front["time_to_train_min"].to_numpy())]
    for index, (_, row) in enumerate(picks.iterrows()):
        # Alternate above-right and below-left: neighbours on the front sit close together.
        above = index % 2 == 0
        axis.annotate(hardware_name(row), (row["accelerator_hours"], row["time_to_train_min"]),
                      xytext=(6, 5) if above else (-6, -11), ha="left" if above else "right",
                      textcoords="offset points", fontsize=7.5, color="#222222")
    plots.log_log(axis, xlabel="Accelerator-hours (log scale)",
                  ylabel="Time to train (minutes, log scale)")
    axis.legend(fontsize="small", loc="upper right", framealpha=0.9)
    return plots.png_bytes(figure)


def importance_frame(importance: dict[str, Any], top: int = IMPORTANCE_TOP) -> pd.DataFrame:
    """Permutation importance (mean, spread) of the `top` features, strongest first, for both targets."""
    rows = [{"target": name, "feature": feature, "mean": stats["mean"], "std": stats["std"]}
            for name, result in importance.get("targets", {}).items()
            for feature, stats in result["permutation_importance"].items()]
    if not rows:
        return pd.DataFrame(columns=["target", "feature", "mean", "std"])
    frame = pd.DataFrame(rows)
    order = frame.groupby("feature")["mean"].max().sort_values(ascending=False).index[:top]
    frame = frame[frame["feature"].isin(order)]
    frame["feature"] = pd.Categorical(frame["feature"], categories=list(order), ordered=True)
    return frame.sort_values(["feature", "target"]).reset_index(drop=True)


def target_label(importance: dict[str, Any], target: str) -> str:
    """A target's name with its out-of-fold R² (mean ± s.d. over the repeats) and the gate's verdict."""
    result = importance["targets"][target]
    passes = importance.get("gate", {}).get("targets", {}).get(target, {}).get("passes")
    return (f"{TARGET_LABELS.get(target, target)} (out-of-fold R² {result['oof_r2']:.2f} ± "
            f"{result.get('oof_r2_std', float('nan')):.2f}{'' if passes else ', not explained'})")


def importance_figure(importance: dict[str, Any]) -> bytes:
    """The strongest features for both targets, bars at the mean over folds x repeats, whiskers one s.d."""
    data = importance_frame(importance)
    features = list(data["feature"].cat.categories)
    targets = list(importance["targets"])
    figure, axis = plots.plt.subplots(figsize=WIDE_FIGURE_SIZE)
    height = 0.8 / max(1, len(targets))
    colours = plots.sns.color_palette(plots.PALETTE, n_colors=max(2, len(targets)))
    for index, target in enumerate(targets):
        part = data[data["target"] == target].set_index("feature").reindex(features)
        positions = np.arange(len(features)) + (index - (len(targets) - 1) / 2) * height
        axis.barh(positions, part["mean"], height=height, xerr=part["std"], color=colours[index],
                  error_kw={"elinewidth": 0.9, "capsize": 2, "ecolor": "#333333"},
                  label=target_label(importance, target))
    axis.set_yticks(np.arange(len(features)), [FEATURE_LABELS.get(f, f) for f in features])
    axis.invert_yaxis()
    axis.axvline(0, color="grey", linewidth=0.8)
    axis.set_xlabel("Permutation importance (R² lost when shuffled)")
    axis.set_ylabel("")
    axis.legend(title="predicting log10 of", fontsize="small", title_fontsize="small", loc="lower center",
                bbox_to_anchor=(0.5, 1.0), frameon=False, ncol=1)
    return plots.png_bytes(figure)


def importance_rows(importance: dict[str, Any]) -> dict[str, Any]:
    """The numbers behind the importance figure: per feature and target the permutation importance (mean ± s.d.)
    and Spearman's rho with the target (the model-free view); which features were selected; per target the
    out-of-fold R² (mean ± s.d.) and whether it clears the gate."""
    data = importance_frame(importance)
    targets = list(importance.get("targets", {}))
    selected = set(importance.get("selected_features", []))
    gate = importance.get("gate", {})
    rows = []
    for feature, group in data.groupby("feature", observed=True, sort=True):
        by_target = group.set_index("target")
        rho = [importance["targets"][t].get("spearman", {}).get(str(feature), {}).get("rho") for t in targets]
        rows.append({"feature": FEATURE_LABELS.get(str(feature), str(feature)), "selected": feature in selected,
                     "covariate": feature == importance.get("round_feature"),
                     "cells": [f"{by_target.at[t, 'mean']:.3f} ± {by_target.at[t, 'std']:.3f}"
                                if t in by_target.index else "" for t in targets],
                     "rho": ["" if value is None else f"{value:+.2f}" for value in rho]})
    verdicts = gate.get("targets", {})
    return {"targets": [TARGET_LABELS.get(t, t) for t in targets], "rows": rows,
            "r2": [f"{ratio(importance['targets'][t]['oof_r2'])} ± {ratio(importance['targets'][t].get('oof_r2_std'))}"
                   for t in targets],
            "passes": [bool(verdicts.get(t, {}).get("passes")) for t in targets],
            "min_r2": gate.get("min_r2"), "explained": bool(gate.get("explained")),
            "not_explained": [f"{TARGET_LABELS.get(t, t)} (out-of-fold R² {ratio(importance['targets'][t]['oof_r2'])} "
                              f"± {ratio(importance['targets'][t].get('oof_r2_std'))})"
                              for t in targets if not verdicts.get(t, {}).get("passes")]}


def heatmap_features(clusters: dict[str, Any], clustered: pd.DataFrame) -> list[str]:
    """The clustering features, then the outcomes that profile the clusters (where the data has them)."""
    features = list(clusters.get("features", []))
    return features + [column for column in PROFILED if column not in features and column in clustered
                       and clustered[column].notna().any()]


def cluster_medians(clustered: pd.DataFrame, features: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per cluster: the median of each feature, and that median standardised over all configurations (on log10
    for the features the clustering log-scales), so one colour scale fits features of any unit."""
    raw = clustered.groupby("cluster")[list(features)].median()
    values = clustered[list(features)].astype(float)
    for feature in features:
        if feature in LOG_SCALED:
            values[feature] = np.log10(values[feature].where(values[feature] > 0))
    spread = values.std().replace(0, np.nan)
    standardised = ((values - values.mean()) / spread).assign(cluster=clustered["cluster"]).groupby(
        "cluster").median()
    return raw, standardised


def heatmap_text(feature: str, value: float) -> str:
    if feature == "accelerator_year" and not pd.isna(value):
        return f"{value:.0f}"
    return ratio(value) if feature == "scaling_efficiency" else readable(value)


def cluster_heatmap(clustered: pd.DataFrame, features: Sequence[str]) -> bytes:
    raw, standardised = cluster_medians(clustered, features)
    sizes = clustered["cluster"].value_counts()
    # As wide as two charts: seven or so columns of numbers need the room to stay legible.
    figure, axis = plots.plt.subplots(figsize=(8.4, 1.6 + 0.34 * len(raw)))
    annotations = np.array([[heatmap_text(feature, raw.at[cluster, feature]) for feature in features]
                            for cluster in raw.index])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)  # seaborn 0.13 calls Colormap.set_bad
        plots.sns.heatmap(standardised, ax=axis, cmap="vlag", center=0, vmin=-2, vmax=2, annot=annotations, fmt="",
                          annot_kws={"fontsize": 8}, linewidths=0.5, linecolor="white",
                          cbar_kws={"label": "standardised median (z)", "shrink": 0.9})
    axis.set_xticklabels([FEATURE_LABELS.get(f, f) for f in features], rotation=20, ha="right", fontsize=9)
    axis.set_yticklabels([f"cluster {int(c)} (n={sizes[c]})" for c in raw.index], rotation=0, fontsize=9)
    axis.set(xlabel="", ylabel="")
    return plots.png_bytes(figure)


def best_time_by_family(clustered: pd.DataFrame, families: int = FAMILIES_SHOWN) -> pd.DataFrame:
    """The best time to train of each round for the most-submitted accelerator families."""
    data = clustered[clustered["accelerator_family"].notna()]
    top = data["accelerator_family"].value_counts().index[:families]
    best = (data[data["accelerator_family"].isin(top)].groupby(["accelerator_family", "round"])
            ["time_to_train_min"].min().reset_index())
    best["published"] = best["round"].map(round_published)
    best["accelerator_family"] = pd.Categorical(best["accelerator_family"], categories=list(top), ordered=True)
    return best.sort_values(["accelerator_family", "published"]).reset_index(drop=True)


def best_time_figure(clustered: pd.DataFrame) -> bytes:
    best = best_time_by_family(clustered)
    figure, axis = plots.plt.subplots(figsize=FIGURE_SIZE)
    colours = plots.sns.color_palette(plots.PALETTE, n_colors=max(1, len(best["accelerator_family"].cat.categories)))
    for index, (family, group) in enumerate(best.groupby("accelerator_family", observed=True)):
        axis.plot(group["published"], group["time_to_train_min"], marker=MARKERS[index % len(MARKERS)],
                  color=colours[index], linewidth=1.4, markersize=5, label=str(family))
    rounds = sorted(clustered["round"].unique(), key=_round_order)
    axis.set_xticks([round_published(r) for r in rounds],
                    [f"{r}\n{ROUND_PUBLISHED.get(r, ('', ))[0]}" for r in rounds], fontsize=8)
    axis.set(yscale="log", xlabel="Round (publication year)", ylabel="Best time to train (minutes, log scale)")
    plots.plain_log_ticks(axis, "y")
    _outside_legend(axis, "accelerator family")
    return plots.png_bytes(figure)


# ----------------------------------------------------------------------------------------------------- findings

def _best_profile(outputs: BenchmarkOutputs) -> dict[str, Any] | None:
    return next((p for p in outputs.clusters.get("profiles", []) if p["cluster"] == outputs.rank.get("best_cluster")),
                None)


def findings_of(outputs: BenchmarkOutputs) -> list[Finding]:
    """The published study's findings as the rank stage tested them, in the order of `FINDING_CLAIMS`; one the
    rank stage did not test reads as inconclusive."""
    tested = {item["key"]: item for item in outputs.rank.get("findings", [])}
    return [Finding(key, claim, tested[key]["verdict"], tested[key]["test"], tested[key]["evidence"])
            if key in tested else Finding(key, claim, findings.INCONCLUSIVE, "not run", "not tested by the rank stage")
            for key, (_, claim) in FINDING_CLAIMS.items()]


def verdict_counts(found: Sequence[Finding]) -> dict[str, int]:
    return {verdict: sum(item.verdict == verdict for item in found)
            for verdict in (findings.SUPPORTED, findings.CONTRADICTED, findings.INCONCLUSIVE)}


def efficiency_bands(outputs: BenchmarkOutputs) -> list[dict[str, Any]]:
    """The sublinear finding's within-series efficiency by accelerator-count band (rank.json)."""
    return next((item.get("bands", []) for item in outputs.rank.get("findings", []) if item["key"] == "sublinear"),
                [])


def superlinear_rows(outputs: BenchmarkOutputs) -> list[dict[str, str]]:
    """Within-series efficiencies above the threshold, both members side by side, with the likely reason."""
    return [{"round": case["round"], "submitter": case["submitter"],
             "member": f"{case['system']}: {readable(case['accelerators'])} accelerators, "
                       f"{readable(case['time_to_train_min'])} min",
             "base": f"{case['base_system']}: {readable(case['base_accelerators'])} accelerators, "
                     f"{readable(case['base_time_to_train_min'])} min",
             "efficiency": ratio(case["scaling_efficiency"]), "reason": case["reason"]}
            for case in outputs.rank.get("superlinear", [])]


def ranking_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Short rows of a ranking for the summary card and the latest-round and all-rounds tables."""
    return [{"rank": int(row["round_rank"]), "overall_rank": int(row["rank"]), "front": int(row["front"]),
             "round_front": int(row["round_front"]), "name": configuration_name(row), "round": row["round"],
             "hardware": hardware_name(row), "time": readable(row["time_to_train_min"]),
             "hours": readable(row["accelerator_hours"]), "relative": ratio(row["relative_accelerator_hours"]),
             "efficiency": ratio(row["scaling_efficiency"]), "score": f"{row['round_score']:.3f}"}
            for _, row in frame.iterrows()]


def all_rounds_view(ranking: pd.DataFrame, top: int = LATEST_ROWS) -> pd.DataFrame:
    """The results of every round with the highest round-relative efficiency (1 = the fewest accelerator-hours
    of its round), ties by time to train."""
    return ranking.sort_values(["relative_accelerator_hours", "time_to_train_min", "system"],
                               ascending=[False, True, True]).head(top)


# ---------------------------------------------------------------------------------------------- page sections

def benchmark_title(benchmark: str) -> dict[str, str]:
    entry = BY_ID.get(benchmark)
    if entry is None:
        return {"id": benchmark, "model": benchmark, "task": "", "dataset": "", "quality_target": ""}
    return {"id": benchmark, "model": entry.model, "task": entry.task, "dataset": entry.dataset,
            "quality_target": entry.quality_target}


def scope_of(clustered: pd.DataFrame) -> dict[str, Any]:
    rounds = sorted(clustered["round"].unique(), key=_round_order)
    return {"rounds": rounds, "round_range": f"{rounds[0]} to {rounds[-1]}" if rounds else "none",
            "results": len(clustered), "submitters": int(clustered["submitter"].nunique()),
            "systems": int(clustered[["submitter", "system"]].drop_duplicates().shape[0]),
            "families": int(clustered["accelerator_family"].nunique())}


def families_by_count(profile: dict[str, Any]) -> list[tuple[str, int]]:
    """A profile's accelerator families, most results first (clusters.json stores them by name)."""
    return sorted(profile["families"].items(), key=lambda item: (-item[1], item[0]))


def _median_range(profile: dict[str, Any], column: str, show: Callable[[Any], str]) -> str:
    """"median (min to max)" of one profiled outcome; blank when the profile lacks it."""
    if profile.get(f"{column}_median") is None:
        return ""
    return f"{show(profile[f'{column}_median'])} ({show(profile[f'{column}_min'])} to {show(profile[f'{column}_max'])})"


def cluster_profile_rows(outputs: BenchmarkOutputs) -> list[dict[str, Any]]:
    """Cluster profiles (clusters.json) with their efficiency rank and score (rank.json), best first."""
    ranked = {row["cluster"]: row for row in outputs.rank.get("clusters", [])}
    colours = cluster_colours([p["cluster"] for p in outputs.clusters.get("profiles", [])])
    rows = []
    for profile in outputs.clusters.get("profiles", []):
        ranking = ranked.get(profile["cluster"], {})
        rows.append({
            "cluster": profile["cluster"], "colour": hex_colour(colours[profile["cluster"]]),
            "name": profile.get("name", ""), "small": bool(profile.get("small")),
            "rank": ranking.get("rank"), "score": ranking.get("score"), "size": profile["size"],
            "accelerators": f"{readable(profile['accelerators_median'])} "
                            f"({readable(profile['accelerators_min'])} to {readable(profile['accelerators_max'])})",
            "families": ", ".join(f"{name} ({count})" for name, count in families_by_count(profile)),
            "time": _median_range(profile, "time_to_train_min", readable),
            "hours": _median_range(profile, "accelerator_hours", readable),
            "relative_hours": _median_range(profile, "relative_accelerator_hours", ratio),
            "efficiency": _median_range(profile, "scaling_efficiency", ratio),
            "year": "" if profile["accelerator_year_median"] is None else f"{profile['accelerator_year_median']:.0f}",
            "best": profile["cluster"] == outputs.rank.get("best_cluster"),
        })
    return sorted(rows, key=lambda row: (row["rank"] is None, row["rank"] or 0, row["cluster"]))


def cluster_notes(clusters: dict[str, Any]) -> dict[str, Any]:
    """What the page says about how the clusters were made: inputs and where they came from, the dropped
    candidates with the reason, the k verdict and the clusters too small to read much into."""
    verdict = clusters.get("k_verdict") or {}
    return {
        "features": [FEATURE_LABELS.get(f, f) for f in clusters.get("features", [])],
        "from_importance": clusters.get("feature_source") == "importance",
        "dropped": [{"feature": FEATURE_LABELS.get(d["feature"], d["feature"]), "reason": d["reason"]}
                    for d in clusters.get("dropped_features", [])],
        "ordered_by": FEATURE_LABELS.get(clusters.get("ordered_by", ""), clusters.get("ordered_by")),
        "k": clusters.get("k"), "k_supported": verdict.get("supported"), "preferred_k": verdict.get("preferred_k"),
        "k_message": verdict.get("message"), "k_rule": verdict.get("rule"),
        "small": [p for p in clusters.get("profiles", []) if p.get("small")], "min_size": clusters.get("min_size"),
    }


def benchmark_figures(outputs: BenchmarkOutputs) -> dict[str, Figure]:
    """The figures of one benchmark, by name, for the template to place in its subsections."""
    clustered, ranking, best = outputs.clustered, outputs.ranking, outputs.rank.get("best_cluster")
    model = benchmark_title(outputs.benchmark)["model"]
    figures = {
        "scaling": embed(
            scaling_figure(clustered, best),
            f"Log-log scatter plot of time to train in minutes against number of accelerators for "
            f"{len(clustered)} {model} results, coloured and shaped by cluster, with a dashed line of ideal linear "
            f"scaling.",
            "Time to train against accelerators, by cluster. The dashed line is perfect linear scaling of the most "
            "hardware-efficient result: the further a point sits above it, the more hardware time idled. Counts "
            "are jittered a little so that results at the same count show."),
        "efficiency": embed(
            efficiency_figure(clustered, best),
            f"Scatter plot of scaling efficiency against number of accelerators (log scale) for {model}, by "
            f"cluster, with a horizontal line at 1 for linear scaling and the median per size band.",
            "Scaling efficiency within each scaling series (speed-up over the series' smallest member, per added "
            "accelerator) against accelerators; results alone in their series have none. The black line is the "
            "median of each power-of-two size band."),
        "pareto": embed(
            pareto_figure(ranking),
            f"Log-log scatter plot of time to train against accelerator-hours for {model}; the "
            f"{int(ranking['pareto'].astype(bool).sum())} results on the Pareto front are highlighted and "
            f"labelled with their accelerator count and family.",
            "The Pareto front of time against hardware cost: no other result is both faster and cheaper in "
            "accelerator-hours than a point on it. Lower left is better."),
        "best_time": embed(
            best_time_figure(clustered),
            f"Line chart of the best time to train per round (log scale) over the years for the {FAMILIES_SHOWN} "
            f"most-submitted accelerator families of {model}.",
            f"Best time to train per round for the {FAMILIES_SHOWN} most-submitted accelerator families: hardware "
            f"and software progress over the years."),
    }
    if outputs.importance.get("status") == "ok":
        figures["importance"] = embed(
            importance_figure(outputs.importance),
            f"Horizontal bar chart of permutation importance of the {IMPORTANCE_TOP} strongest hardware features "
            f"for predicting time to train and accelerator-hours of {model}, with whiskers of one standard "
            f"deviation.",
            "What explains time to train and accelerator-hours: the R² a gradient-boosted model loses when one "
            "feature is shuffled, on held-out system families.")
    features = heatmap_features(outputs.clusters, clustered)
    figures["heatmap"] = embed(
        cluster_heatmap(clustered, features),
        f"Heatmap of {len(features)} features by cluster for {model}: colour is the standardised median, the "
        f"number in each cell the median itself.",
        "Cluster profiles: each cell is a cluster's median (the number) and how far it sits from all "
        "configurations in standard deviations (the colour; on log10 for counts, times and sizes).")
    if outputs.k_selection_png is not None:
        k_values = [row["k"] for row in outputs.clusters.get("diagnostics", [])]
        k_range = f"k from {min(k_values)} to {max(k_values)}" if k_values else "each k"
        figures["k_selection"] = embed(
            outputs.k_selection_png,
            f"Four panels of k-means diagnostics for {model}: inertia, silhouette and Davies-Bouldin index for "
            f"{k_range}, and a histogram of bootstrap adjusted Rand indices for the chosen k.",
            f"Choosing k: the chosen k = {outputs.clusters.get('k')} is dashed; the histogram shows how stable the "
            f"clusters are under bootstrap resampling (1 = identical).")
    return figures


def benchmark_section(outputs: BenchmarkOutputs, ranking_limit: int | None) -> dict[str, Any]:
    title = benchmark_title(outputs.benchmark)
    if not outputs.analysed:
        reason = outputs.rank.get("reason") or outputs.importance.get("reason") or "no configurations in scope"
        return {**title, "analysed": False, "reason": reason}
    rank = outputs.rank
    latest = latest_round_ranking(outputs.ranking)
    return {
        **title, "analysed": True, "scope": scope_of(outputs.clustered),
        "top": latest.iloc[0].to_dict(), "metrics": rank, "decide": outputs.decide,
        "latest_round": latest.iloc[0]["round"], "latest": ranking_rows(latest.head(LATEST_ROWS)),
        "n_latest": len(latest), "all_rounds": ranking_rows(all_rounds_view(outputs.ranking)),
        "superlinear": superlinear_rows(outputs), "bands": efficiency_bands(outputs),
        "best_profile": _best_profile(outputs), "findings": findings_of(outputs),
        "figures": benchmark_figures(outputs), "clusters": cluster_profile_rows(outputs),
        "cluster_notes": cluster_notes(outputs.clusters),
        "ranking": ranking_table(outputs.ranking, ranking_limit),
        "importance": importance_rows(outputs.importance) if outputs.importance.get("status") == "ok" else None,
        "importance_reason": None if outputs.importance.get("status") == "ok" else outputs.importance.get("reason"),
        "selected_features": [FEATURE_LABELS.get(f, f) for f in outputs.importance.get("selected_features", [])],
    }


def headline_summary(outputs: BenchmarkOutputs | None, top: int = SUMMARY_TOP) -> dict[str, Any] | None:
    """The summary card of the headline benchmark: the latest round it ran in, its best configurations there, the
    first-ranked cluster with its profile, and how the published findings fared."""
    if outputs is None or not outputs.analysed:
        return None
    best = _best_profile(outputs)
    latest = latest_round_ranking(outputs.ranking)
    found = findings_of(outputs)
    return {
        **benchmark_title(outputs.benchmark), "scope": scope_of(outputs.clustered),
        "round": latest.iloc[0]["round"], "n_latest": len(latest),
        "latest_fronts": int(latest["round_front"].max()),
        "top": ranking_rows(latest.head(top)),
        "best": best, "best_families": [name for name, _ in families_by_count(best)[:2]] if best else [],
        "best_colour": hex_colour(cluster_colours([best["cluster"]])[best["cluster"]]) if best else None,
        "pareto_size": outputs.rank.get("pareto_size"),
        "verdicts": verdict_counts(found), "n_findings": len(found),
        "supported": [item.claim for item in found if item.verdict == findings.SUPPORTED],
        "n_superlinear": outputs.rank.get("n_superlinear"),
    }


def coverage_of(results: pd.DataFrame, quarantine: pd.DataFrame) -> dict[str, Any]:
    """What the ingested data holds, over every round and benchmark."""
    rounds = sorted(results["round"].unique(), key=_round_order)
    scored = results[results["time_to_train_min"].notna()]
    unscored = results[results["time_to_train_min"].isna()]
    return {
        "rounds": rounds, "round_range": f"{rounds[0]} to {rounds[-1]}" if rounds else "none",
        "results_folders": len(results), "results": len(scored),
        "submitters": int(scored["submitter"].nunique()),
        "systems": int(scored[["submitter", "system"]].drop_duplicates().shape[0]),
        "unscored_by_reason": _counts(unscored["score_note"].fillna("no score")),
        "quarantined": len(quarantine), "quarantine_by_reason": _counts(quarantine["reason"]),
        "quarantine_rows": quarantine[["round", "path", "reason"]].astype(str).to_dict(orient="records"),
    }


def _counts(values: pd.Series) -> list[dict[str, Any]]:
    counts = values.value_counts()
    return [{"reason": str(reason), "count": int(count)} for reason, count in counts.items()]


def findings_matrix(sections: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Every analysed benchmark against every finding: a verdict and its evidence per cell."""
    analysed = [s for s in sections if s["analysed"]]
    rows = [{"id": s["id"], "model": s["model"], "findings": s["findings"]} for s in analysed]
    totals = [{verdict: sum(r["findings"][i].verdict == verdict for r in rows)
               for verdict in (findings.SUPPORTED, findings.CONTRADICTED, findings.INCONCLUSIVE)}
              for i in range(len(FINDING_CLAIMS))]
    return {"claims": [short for short, _ in FINDING_CLAIMS.values()], "rows": rows, "totals": totals}


# --------------------------------------------------------------------------------------------------- provenance

def git_revision(cwd: Path | str = ".") -> dict[str, Any]:
    """The git tree id of the pipeline's code (`HEAD:pipeline`) and whether it had uncommitted changes.

    The tree, not the commit: committing dvc.lock after a run makes a new commit, and a page naming the commit
    could then never match the dvc.lock that records it. The tree changes exactly when the code does, which
    re-runs the stage anyway. "unknown" outside a git checkout.
    """
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=20,
                                  check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    revision = git("rev-parse", "HEAD:pipeline")
    status = git("status", "--porcelain", "--untracked-files=no", "--", "pipeline") if revision else None
    return {"revision": revision or "unknown", "dirty": bool(status)}


def input_hashes(lock: Path, stages: Sequence[str] = INPUT_STAGES) -> list[dict[str, Any]]:
    """md5 of the deps and outs of the input stages, as DVC recorded them in `dvc.lock` (empty without one)."""
    if not lock.is_file():
        return []
    recorded = (yaml.safe_load(lock.read_text(encoding="utf-8")) or {}).get("stages", {})
    rows = []
    for stage in stages:
        for kind in ("deps", "outs"):
            for entry in recorded.get(stage, {}).get(kind, []):
                rows.append({"stage": stage, "kind": kind[:-1], "path": str(entry.get("path", "")),
                             "md5": str(entry.get("md5", "")), "size": readable(entry.get("size")),
                             "nfiles": readable(entry.get("nfiles"))})
    return rows


def provenance(params: dict[str, Any], lock: Path = DVC_LOCK, cwd: Path | str = ".") -> dict[str, Any]:
    return {**git_revision(cwd), "hashes": input_hashes(lock), "lock_found": lock.is_file(),
            "params": [{"name": name, "yaml": yaml.safe_dump(value, sort_keys=False, default_flow_style=None,
                                                             width=60).strip()}
                       for name, value in params.items()]}


# ------------------------------------------------------------------------------------------------------- render

def report_context(outputs: Sequence[BenchmarkOutputs], results: pd.DataFrame, quarantine: pd.DataFrame,
                   params: dict[str, Any], provenance_: dict[str, Any]) -> dict[str, Any]:
    analysis = section(params, "analysis")
    headline = analysis.get("benchmark")
    sections = [benchmark_section(item, None if item.benchmark == headline else OTHER_RANKING_ROWS)
                for item in outputs]
    headline_outputs = next((item for item in outputs if item.benchmark == headline), None)
    return {
        "headline": headline, "headline_title": benchmark_title(headline) if headline else None,
        "summary": headline_summary(headline_outputs),
        "headline_section": next((s for s in sections if s["id"] == headline), None),
        "sections": sections, "matrix": findings_matrix(sections),
        "coverage": coverage_of(results, quarantine), "analysis": analysis,
        "importance_params": params.get("importance", {}), "cluster_params": params.get("cluster", {}),
        "rank_params": params.get("rank", {}), "provenance": provenance_,
        "findings_params": params.get("findings", {}), "best_means": BEST_MEANS,
        "other_ranking_rows": OTHER_RANKING_ROWS,
    }


def render(context: dict[str, Any]) -> str:
    environment = jinja2.Environment(loader=jinja2.PackageLoader("pipeline", "templates"),
                                     autoescape=jinja2.select_autoescape(["html", "j2"]),
                                     undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    environment.filters["readable"] = readable
    environment.filters["ratio"] = ratio
    return environment.get_template(TEMPLATE).render(**context)


# ------------------------------------------------------------------------------------------------------ outputs

def _load_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def load_benchmark_outputs(benchmark: str) -> BenchmarkOutputs:
    k_selection = paths.k_selection_figure(benchmark)
    summary = decide.load_summary(benchmark)  # read once, for the fragment and the metrics
    return BenchmarkOutputs(
        benchmark=benchmark, rank=read_artifact("rank", paths.rank_json(benchmark)),
        ranking=pd.read_csv(paths.ranking_csv(benchmark)),
        clusters=read_artifact("clusters", paths.clusters_json(benchmark)),
        importance=read_artifact("importance", paths.importance_json(benchmark)),
        clustered=pd.read_parquet(paths.clusters_table(benchmark)),
        k_selection_png=k_selection.read_bytes() if k_selection.is_file() else None,
        decide=_compact_figures(decide.report_section(benchmark, summary)),
        decide_metrics=decide.metrics_of(summary))


def _compact_figures(value: Any) -> Any:
    """The decide fragment's embedded figures through compact_png, like the page's own, to keep it small."""
    if isinstance(value, dict):
        if "data" in value and "alt" in value:
            return {**value, "data": base64.b64encode(compact_png(base64.b64decode(value["data"]))).decode("ascii")}
        return {key: _compact_figures(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_compact_figures(item) for item in value]
    return value


def combined_ranking(outputs: Sequence[BenchmarkOutputs]) -> pd.DataFrame:
    return pd.concat([item.ranking.assign(benchmark=item.benchmark) for item in outputs], ignore_index=True)


def scalar_metrics(outputs: Sequence[BenchmarkOutputs]) -> dict[str, dict[str, Any]]:
    """Per benchmark, rank.json without its lists and tables, and under `decide` the decide stage's held-out
    errors (decide.metrics_of): what `dvc metrics show` can print."""
    return {item.benchmark: {**{key: value for key, value in item.rank.items() if not isinstance(value, (list, dict))},
                             **({"decide": item.decide_metrics} if item.decide_metrics is not None else {})}
            for item in outputs}


@cli
def main() -> None:
    params = load_params()
    benchmarks = section(params, "analysis")["benchmarks"]
    outputs = [load_benchmark_outputs(benchmark) for benchmark in benchmarks]
    write_csv(combined_ranking(outputs), REPORTS / "ranking.csv")
    write_json(scalar_metrics(outputs), REPORTS / "metrics.json")
    write_json({item.benchmark: item.importance for item in outputs}, REPORTS / "importance.json")
    context = report_context(outputs, pd.read_parquet(RESULTS), pd.read_csv(QUARANTINE), params,
                             provenance(params))
    html = render(context)
    write_text(html, REPORTS / "index.html")
    print(f"wrote {REPORTS / 'index.html'} ({len(html.encode()) // 1024} KiB)")


if __name__ == "__main__":
    main()
