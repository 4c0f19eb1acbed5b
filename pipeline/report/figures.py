"""The report's figures: drawn once per benchmark by the `figures` stage into `reports/figures/<benchmark>/`,
and embedded by the page from those files (base64 of the file bytes, nothing re-encoded).

matplotlib is imported inside the functions that draw, so that rendering the page never pays for it. Figures use
plain matplotlib with fixed margins (no tight layout, which draws every figure twice) at FIGURE_DPI.
"""
from __future__ import annotations

import base64
import struct
import textwrap
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.core import paths, plots
from pipeline.core.features import LOG_SCALED, PROFILED
from pipeline.core.files import atomic_path
from pipeline.mlperf.catalogue import ROUND_PUBLISHED, round_published
from pipeline.report.formatting import FEATURE_LABELS, TARGET_LABELS, cluster_colour, hardware_name, number, round_order

FIGURES_DIR = paths.FIGURES
# About 600 x 360 pixels: shown two side by side at ~540 pixels on a laptop, the text stays about 11 pixels high.
FIGURE_DPI = 100
FIGURE_SIZE = (6.6, 3.6)
# Margins as fractions of the figure; the right one leaves room for a legend outside the axes, whose cluster
# names wrap at LEGEND_WIDTH characters.
MARGINS = {"left": 0.11, "right": 0.67, "bottom": 0.14, "top": 0.97}
LEGEND_WIDTH = 24
JITTER = 0.15  # relative spread of accelerator counts in scatter plots (see _scatter_by_cluster)
MARKERS = ["o", "s", "D", "^", "v", "P", "X", "*", "h", "<"]
FAMILIES_SHOWN = 8
IMPORTANCE_TOP = 8
COLOURBLIND_TARGETS = ("#0173b2", "#de8f05")  # time to train, accelerator-hours
HIGHLIGHT = "#d55e00"  # vermillion: the Pareto front


@dataclass(frozen=True)
class Figure:
    """A PNG as the page embeds it."""
    data: str  # base64 of the file's bytes
    alt: str
    caption: str
    width: int  # pixels, so that the page lays out before the images decode
    height: int


def embed(png: bytes, alt: str, caption: str) -> Figure:
    """A PNG file's bytes as they are, base64-encoded, with the size read from its IHDR chunk."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    width, height = struct.unpack(">II", png[16:24])
    return Figure(base64.b64encode(png).decode("ascii"), alt, caption, width, height)


def figure_path(benchmark: str, name: str, root: Path = FIGURES_DIR) -> Path:
    return root / benchmark / f"{name}.png"


# ------------------------------------------------------------------------------------------------------ drawing

def _new_figure(size: tuple[float, float] = FIGURE_SIZE, margins: dict[str, float] | None = None) -> tuple[Any, Any]:
    figure, axis = plots.subplots(figsize=size)
    figure.subplots_adjust(**(margins or MARGINS))
    return figure, axis


def _scatter_by_cluster(axis: Any, clustered: pd.DataFrame, x: str, y: str, best_cluster: int | None,
                        names: dict[int, str]) -> None:
    """Scatter on a log x axis of accelerator counts, jittered by up to ±JITTER so the dozens of results at the
    same count (8 accelerators above all) show as a cloud rather than one point; seeded, so figures repeat."""
    jitter = np.random.default_rng(0).uniform(-JITTER, JITTER, len(clustered))
    clustered = clustered.assign(**{x: clustered[x] * (1 + jitter)})
    # Hollow markers of distinct shapes: where clusters overlap (they do, at 8 accelerators) every one shows
    # through; the most hardware-efficient cluster is filled and drawn on top.
    for cluster, group in clustered.groupby("cluster"):
        best = int(cluster) == best_cluster
        colour = cluster_colour(int(cluster))
        axis.scatter(group[x], group[y], s=26, marker=MARKERS[int(cluster) % len(MARKERS)],
                     facecolor=colour if best else "none", alpha=0.8 if best else 1.0, edgecolor=colour,
                     linewidth=1.0, label=cluster_label(int(cluster), names, best), zorder=3 if best else 2)


def cluster_label(cluster: int, names: dict[int, str], best: bool = False) -> str:
    """"0: 2-64 H100, NVLink (most hardware-efficient)": the cluster's id and profile name, and whether it is the
    most hardware-efficient cluster (`best`), wrapped for a legend."""
    name = names.get(cluster, "")
    mark = " (most hardware-efficient)" if best else ""
    text = f"{cluster}: {name}{mark}" if name else f"{cluster}{mark}"
    return textwrap.fill(text, LEGEND_WIDTH, subsequent_indent="   ")


def _outside_legend(axis: Any, title: str | None = "cluster") -> None:
    """Legend right of the plot: inside the axes it would hide the largest or fastest systems."""
    axis.legend(title=title, fontsize="x-small", title_fontsize="small", loc="upper left",
                bbox_to_anchor=(1.01, 1.0), frameon=False, alignment="left")


def scaling_figure(clustered: pd.DataFrame, best_cluster: int | None, names: dict[int, str]) -> bytes:
    """Time to train against accelerators by cluster, with ideal linear scaling of the most hardware-efficient
    result: the vertical gap between a point and the line is the hardware time it left idle."""
    figure, axis = _new_figure()
    _scatter_by_cluster(axis, clustered, "accelerator_count", "time_to_train_min", best_cluster, names)
    counts = np.geomspace(clustered["accelerator_count"].min(), clustered["accelerator_count"].max(), 50)
    best_accelerator_minutes = (clustered["time_to_train_min"] * clustered["accelerator_count"]).min()
    axis.plot(counts, best_accelerator_minutes / counts, color="black", linestyle="--", linewidth=1,
              label="ideal linear scaling")
    plots.log_log(axis, xlabel="Accelerators (count, log scale)", ylabel="Time to train (min, log scale)")
    _outside_legend(axis)
    return plots.png_bytes(figure, dpi=FIGURE_DPI, tight=False)


def size_band_medians(clustered: pd.DataFrame, column: str, min_points: int = 3) -> pd.DataFrame:
    """Median of `column` per power-of-two band of accelerator count (bands with at least `min_points`)."""
    data = clustered[clustered[column].notna() & (clustered["accelerator_count"] > 0)]
    band = 2.0 ** np.round(np.log2(data["accelerator_count"].astype(float)))
    grouped = data.groupby(band)[column].agg(["median", "size"])
    grouped = grouped[grouped["size"] >= min_points]
    return grouped.rename_axis("accelerators").reset_index()


def efficiency_figure(clustered: pd.DataFrame, best_cluster: int | None, names: dict[int, str]) -> bytes:
    """Scaling efficiency against accelerators, with the median per size band: the trend of the gain per chip."""
    figure, axis = _new_figure()
    data = clustered[clustered["scaling_efficiency"].notna()]
    _scatter_by_cluster(axis, data, "accelerator_count", "scaling_efficiency", best_cluster, names)
    axis.axhline(1.0, color="black", linestyle="--", linewidth=1, label="ideal linear scaling (1)")
    bands = size_band_medians(data, "scaling_efficiency")
    if len(bands) > 1:
        axis.plot(bands["accelerators"], bands["median"], color="black", linewidth=1.8, marker="o",
                  markersize=4, label="median per size band")
    axis.set(xscale="log", xlabel="Accelerators (count, log scale)", ylabel="Scaling efficiency (1 = linear)")
    axis.set_ylim(bottom=0)
    plots.plain_log_ticks(axis, "x")
    _outside_legend(axis)
    return plots.png_bytes(figure, dpi=FIGURE_DPI, tight=False)


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
    figure, axis = _new_figure(margins={**MARGINS, "right": 0.97})
    front = ranking[ranking["pareto"].astype(bool)].sort_values("accelerator_hours")
    others = ranking[~ranking["pareto"].astype(bool)]
    axis.scatter(others["accelerator_hours"], others["time_to_train_min"], s=16, color="#9a9a9a", alpha=0.55,
                 edgecolor="none", label="other results")
    axis.plot(front["accelerator_hours"], front["time_to_train_min"], color=HIGHLIGHT, linewidth=1.2,
              drawstyle="steps-post", zorder=3)
    axis.scatter(front["accelerator_hours"], front["time_to_train_min"], s=38, color=HIGHLIGHT, marker="D",
                 edgecolor="black", linewidth=0.5, zorder=4, label=f"best trade-offs, Pareto front ({len(front)})")
    picks = front.iloc[spaced_labels(front["accelerator_hours"].to_numpy(), front["time_to_train_min"].to_numpy())]
    for index, (_, row) in enumerate(picks.iterrows()):
        # Alternate above-right and below-left: neighbours on the front sit close together.
        above = index % 2 == 0
        axis.annotate(hardware_name(row), (row["accelerator_hours"], row["time_to_train_min"]),
                      xytext=(6, 5) if above else (-6, -11), ha="left" if above else "right",
                      textcoords="offset points", fontsize=7.5, color="#222222")
    plots.log_log(axis, xlabel="Accelerator-hours (log scale)", ylabel="Time to train (min, log scale)")
    axis.legend(fontsize="small", loc="upper right", framealpha=0.9)
    return plots.png_bytes(figure, dpi=FIGURE_DPI, tight=False)


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


def _target_label(importance: dict[str, Any], target: str) -> str:
    """A target's name with its R² on held-out accelerator families, the baseline's, and whether the gate credits
    hardware on it."""
    result = importance["targets"][target]
    passes = importance.get("gate", {}).get("targets", {}).get(target, {}).get("passes")
    return (f"{TARGET_LABELS.get(target, target)} (R² {number(result['oof_r2'], 'ratio')} on held-out families, "
            f"baseline {number(result.get('baseline_r2'), 'ratio')}{'' if passes else ', hardware not credited'})")


def importance_figure(importance: dict[str, Any]) -> bytes:
    """The strongest features for both targets (importance.json), bars at the mean over the shuffles, whiskers one
    s.d., the legend above the bars it names."""
    data = importance_frame(importance)
    features = list(data["feature"].cat.categories)
    targets = list(importance["targets"])
    figure, axis = _new_figure((6.6, 4.2), {"left": 0.3, "right": 0.97, "bottom": 0.12, "top": 0.8})
    height = 0.8 / max(1, len(targets))
    for index, target in enumerate(targets):
        part = data[data["target"] == target].set_index("feature").reindex(features)
        positions = np.arange(len(features)) + (index - (len(targets) - 1) / 2) * height
        axis.barh(positions, part["mean"], height=height, xerr=part["std"], color=COLOURBLIND_TARGETS[index % 2],
                  error_kw={"elinewidth": 0.9, "capsize": 2, "ecolor": "#333333"},
                  label=_target_label(importance, target))
    axis.set_yticks(np.arange(len(features)), [FEATURE_LABELS.get(f, f) for f in features], fontsize=8)
    axis.invert_yaxis()
    axis.axvline(0, color="grey", linewidth=0.8)
    axis.set_xlabel("Permutation importance (R² lost when shuffled)")
    axis.legend(title="predicting log10 of", fontsize="small", title_fontsize="small", loc="lower center",
                bbox_to_anchor=(0.5, 1.0), frameon=False, ncol=1)
    return plots.png_bytes(figure, dpi=FIGURE_DPI, tight=False)


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
    style = {"accelerator_year": "year", "scaling_efficiency": "ratio"}.get(feature, "readable")
    return number(value, style)  # type: ignore[arg-type]


def cluster_heatmap(clustered: pd.DataFrame, features: Sequence[str], names: dict[int, str]) -> bytes:
    """Clusters by features: the colour is the standardised median (z, clipped to ±2), the text the median."""
    raw, standardised = cluster_medians(clustered, features)
    sizes = clustered["cluster"].value_counts()
    # As wide as two charts: seven or so columns of numbers need the room to stay legible.
    height = 1.3 + 0.36 * len(raw)
    figure, axis = _new_figure((8.4, height), {"left": 0.36, "right": 0.99, "bottom": 1.05 / height,
                                               "top": 1 - 0.12 / height})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-missing column is blank, not an error
        image = axis.imshow(standardised.to_numpy(dtype=float), cmap="RdBu_r", vmin=-2, vmax=2, aspect="auto")
    for row, cluster in enumerate(raw.index):
        for column, feature in enumerate(features):
            z = standardised.at[cluster, feature]
            axis.text(column, row, heatmap_text(feature, raw.at[cluster, feature]), ha="center", va="center",
                      fontsize=8, color="white" if abs(z) > 1.3 else "#222222")
    axis.set_xticks(range(len(features)), [FEATURE_LABELS.get(f, f) for f in features], rotation=20, ha="right",
                    fontsize=8)
    axis.set_yticks(range(len(raw)), [f"{c}: {names.get(int(c), '')} (n={sizes[c]})" for c in raw.index],
                    fontsize=8)
    axis.grid(False)
    figure.colorbar(image, ax=axis, label="standardised median (z)", shrink=0.9, pad=0.01)
    return plots.png_bytes(figure, dpi=FIGURE_DPI, tight=False)


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
    figure, axis = _new_figure()
    for index, (family, group) in enumerate(best.groupby("accelerator_family", observed=True)):
        axis.plot(group["published"], group["time_to_train_min"], marker=MARKERS[index % len(MARKERS)],
                  color=cluster_colour(index), linewidth=1.4, markersize=5, label=str(family))
    rounds = sorted(clustered["round"].unique(), key=round_order)
    axis.set_xticks([round_published(r) for r in rounds],
                    [f"{r}\n{ROUND_PUBLISHED.get(r, ('', ))[0]}" for r in rounds], fontsize=7)
    axis.set(yscale="log", xlabel="Round (publication year)", ylabel="Best time to train (min, log scale)")
    plots.plain_log_ticks(axis, "y")
    _outside_legend(axis, "accelerator family")
    return plots.png_bytes(figure, dpi=FIGURE_DPI, tight=False)


# ---------------------------------------------------------------------------------------------------- the stage

def draw_benchmark(clustered: pd.DataFrame, ranking: pd.DataFrame, clusters: dict[str, Any],
                   best_cluster: int | None, importance: dict[str, Any]) -> dict[str, bytes]:
    """The PNG bytes of one analysed benchmark's figures, by name (the file is `<name>.png`).

    `clustered`: clusters.parquet (one row per configuration, with `cluster`); `ranking`: ranking.csv;
    `clusters`: clusters.json; `best_cluster`: rank.json's most hardware-efficient cluster (the highest median
    round efficiency); `importance`: importance.json (its figure only when its status is ok)."""
    if clustered.empty or "cluster" not in clustered:
        raise ValueError("clustered configurations must be a non-empty table with a `cluster` column")
    names = {int(p["cluster"]): p.get("name", "") for p in clusters.get("profiles", [])}
    pngs = {
        "scaling": scaling_figure(clustered, best_cluster, names),
        "efficiency": efficiency_figure(clustered, best_cluster, names),
        "pareto": pareto_figure(ranking),
        "best_time": best_time_figure(clustered),
        "heatmap": cluster_heatmap(clustered, heatmap_features(clusters, clustered), names),
    }
    if importance.get("status") == "ok":
        pngs["importance"] = importance_figure(importance)
    return pngs


def write_pngs(pngs: dict[str, bytes], benchmark: str, root: Path = FIGURES_DIR) -> None:
    for name, png in pngs.items():
        with atomic_path(figure_path(benchmark, name, root)) as tmp:
            tmp.write_bytes(png)
