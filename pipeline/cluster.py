"""Stage `cluster`: k-means on standardised performance and selected hardware features, for one benchmark.

    python -m pipeline.cluster BENCHMARK

Features: log10 time to train and log10 accelerator-hours (the study clusters by performance) plus the numeric
features the importance stage selected, log10-scaled where they span orders of magnitude (counts, memory,
bandwidth); missing values take the column median; all are standardised. k = `cluster.k` with a fixed seed and
`cluster.n_init` restarts. Diagnostics for every k in `cluster.k_range` (inertia, silhouette, Davies-Bouldin)
and stability: the mean adjusted Rand index between the clustering of the data and of bootstrap resamples.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score, davies_bouldin_score, silhouette_score
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from . import plots, schemas
from .errors import cli
from .importance import reports_dir
from .io import load_params, section, write_json, write_parquet
from .scope import CONFIGURATIONS, benchmark_args, in_scope

PERFORMANCE = ["time_to_train_min", "accelerator_hours"]
LOG_SCALED = {"time_to_train_min", "accelerator_hours", "accelerator_count", "n_nodes", "accelerators_per_node",
              "accelerator_memory_gib", "host_cpu_cores", "host_memory_gib", "interconnect_intra_gbps",
              "interconnect_inter_gbps"}


def clusters_path(benchmark: str) -> Path:
    return Path("data/processed/benchmarks") / benchmark / "clusters.parquet"


def design_matrix(frame: pd.DataFrame, selected: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    columns = PERFORMANCE + [c for c in selected if c not in PERFORMANCE and frame[c].notna().any()]
    values = frame[columns].astype(float).copy()
    for column in columns:
        if column in LOG_SCALED:
            values[column] = np.log10(values[column].where(values[column] > 0))
        values[column] = values[column].fillna(values[column].median())
    return StandardScaler().fit_transform(values.to_numpy()), columns


def fit(x: np.ndarray, k: int, n_init: int, seed: int) -> KMeans:
    return KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit(x)


def diagnostics(x: np.ndarray, k_range: Sequence[int], n_init: int, seed: int) -> list[dict[str, float]]:
    rows = []
    for k in range(k_range[0], min(k_range[1], len(x) - 1) + 1):
        model = fit(x, k, n_init, seed)
        rows.append({"k": k, "inertia": float(model.inertia_),
                     "silhouette": float(silhouette_score(x, model.labels_)),
                     "davies_bouldin": float(davies_bouldin_score(x, model.labels_))})
    return rows


def stability(x: np.ndarray, k: int, n_init: int, seed: int, resamples: int) -> list[float]:
    """ARI between the full-data labels and a model fitted on a bootstrap resample, over the resampled points."""
    reference = fit(x, k, n_init, seed).labels_
    rng = np.random.default_rng(seed)
    scores = []
    for _ in range(resamples):
        sample = rng.choice(len(x), size=len(x), replace=True)
        if len(np.unique(x[sample], axis=0)) < k:
            continue
        labels = fit(x[sample], k, n_init, seed).predict(x)
        scores.append(float(adjusted_rand_score(reference, labels)))
    return scores


def relabel_by_time(frame: pd.DataFrame, labels: np.ndarray) -> np.ndarray:
    """Number clusters 0..k-1 from fastest to slowest median time, so labels read the same across runs."""
    medians = pd.Series(frame["time_to_train_min"].to_numpy()).groupby(labels).median().sort_values()
    mapping = {old: new for new, old in enumerate(medians.index)}
    return np.array([mapping[label] for label in labels])


def profiles(frame: pd.DataFrame) -> list[dict[str, Any]]:
    rows = []
    for cluster, group in frame.groupby("cluster"):
        families = group["accelerator_family"].fillna("unknown").value_counts()
        profile = {
            "cluster": int(cluster), "size": len(group),
            "accelerators_median": float(group["accelerator_count"].median()),
            "accelerators_min": float(group["accelerator_count"].min()),
            "accelerators_max": float(group["accelerator_count"].max()),
            "families": {str(name): int(count) for name, count in families.head(4).items()},
            "time_to_train_min_median": float(group["time_to_train_min"].median()),
            "accelerator_hours_median": float(group["accelerator_hours"].median()),
            "scaling_efficiency_median": _median(group["scaling_efficiency"]),
            "accelerator_year_median": _median(group["accelerator_year"]),
        }
        profile["description"] = describe(profile)
        rows.append(profile)
    return rows


def _median(series: pd.Series) -> float | None:
    value = series.median()
    return None if pd.isna(value) else float(value)


def describe(profile: dict[str, Any]) -> str:
    families = ", ".join(list(profile["families"])[:2])
    low, high = int(profile["accelerators_min"]), int(profile["accelerators_max"])
    size = f"{low}" if low == high else f"{low}-{high}"
    efficiency = profile["scaling_efficiency_median"]
    efficiency_text = "" if efficiency is None else f", median scaling efficiency {efficiency:.2f}"
    return (f"{profile['size']} results on {size} accelerators (mostly {families}): median "
            f"{profile['time_to_train_min_median']:.1f} min and {profile['accelerator_hours_median']:.1f} "
            f"accelerator-hours{efficiency_text}")


def cluster_benchmark(frame: pd.DataFrame, selected: Sequence[str], params: dict[str, Any]) -> tuple[
        pd.DataFrame, dict[str, Any]]:
    k, n_init, seed = params["k"], params["n_init"], params["seed"]
    if len(frame) <= k:
        summary = {"status": "skipped", "reason": f"{len(frame)} configurations, not more than k = {k}",
                   "k": k, "features": [], "profiles": [], "diagnostics": [], "stability_ari": []}
        return frame.assign(cluster=pd.Series(dtype="int64")).iloc[0:0], summary
    x, columns = design_matrix(frame, selected)
    with threadpool_limits(1):  # thread start-up costs more than it saves on a few hundred points
        labels = relabel_by_time(frame, fit(x, k, n_init, seed).labels_)
        ari = stability(x, k, n_init, seed, params["bootstrap"])
        k_diagnostics = diagnostics(x, params["k_range"], n_init, seed)
    clustered = frame.assign(cluster=labels)
    summary = {"status": "ok", "k": k, "features": columns, "profiles": profiles(clustered),
               "diagnostics": k_diagnostics, "stability_ari": ari,
               "stability_ari_mean": float(np.mean(ari)) if ari else None}
    return clustered, summary


def plot_diagnostics(summary: dict[str, Any], benchmark: str, target: Path) -> None:
    figure, axes = plots.plt.subplots(1, 4, figsize=(13, 3.4))
    data = pd.DataFrame(summary["diagnostics"])
    for axis, (column, label) in zip(axes[:3], [("inertia", "Inertia (lower is tighter)"),
                                                ("silhouette", "Silhouette (higher is better)"),
                                                ("davies_bouldin", "Davies-Bouldin (lower is better)")]):
        if not data.empty:
            plots.sns.lineplot(data=data, x="k", y=column, marker="o", ax=axis)
            axis.axvline(summary["k"], color="grey", linestyle="--", linewidth=1)
        axis.set_xlabel("Number of clusters k")
        axis.set_ylabel(label)
    axes[3].hist(summary["stability_ari"] or [np.nan], bins=10, range=(-0.1, 1.0))
    axes[3].set_xlabel(f"Adjusted Rand index, k = {summary['k']}")
    axes[3].set_ylabel("Bootstrap resamples")
    figure.suptitle(f"{benchmark}: choosing k and how stable the clusters are")
    plots.save(figure, target)


@cli
def main(argv: Sequence[str] | None = None) -> None:
    args = benchmark_args("cluster", __doc__, argv)
    params = load_params()
    frame = in_scope(schemas.validate_configurations(pd.read_parquet(CONFIGURATIONS)), section(params, "analysis"),
                     args.benchmark)
    out = reports_dir(args.benchmark)
    importance = json.loads((out / "importance.json").read_text(encoding="utf-8"))
    clustered, summary = cluster_benchmark(frame, importance["selected_features"], section(params, "cluster"))
    write_parquet(clustered, clusters_path(args.benchmark))
    write_json({"benchmark": args.benchmark, **summary}, out / "clusters.json")
    plot_diagnostics(summary, args.benchmark, out / "k_selection.png")
    print(f"{args.benchmark}: {summary['status']}, k = {summary['k']}")


if __name__ == "__main__":
    main()
