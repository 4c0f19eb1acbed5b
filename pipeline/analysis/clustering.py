"""Stage `cluster`: k-means on the configuration (hardware and scale), profiled by outcome, for one benchmark.

    python -m pipeline.analysis.clustering BENCHMARK

Inputs: the numeric features the importance stage selected when its R^2 gate passed, else the documented default
configuration features of params `cluster.default_features`. Outcomes (time to train, accelerator-hours,
efficiency, throughput) and the round are never inputs. A candidate is dropped, with the reason recorded in
clusters.json, when it is constant, when more than `cluster.max_imputed_share` of the rows lack it (they would sit
at the median), or when it is exactly collinear with the features kept before it (R^2 of a linear fit on them, on
log10 where log-scaled and on the rows where all are known, at least `cluster.max_collinear_r2`: log accelerators =
log nodes + log accelerators per node, for one). Kept features are log10-scaled where they span orders of magnitude
(counts, memory, bandwidth), median-imputed and standardised. k = `cluster.k` with a fixed seed and `cluster.n_init`
restarts.

Profiles: per cluster the median and range of time to train, accelerator-hours and scaling efficiency (and of the
round-relative accelerator-hours when configurations.parquet has them); clusters are numbered 0..k-1 from the most
efficient (lowest median `round_efficiency`, else lowest median accelerator-hours), named from their
profile, and flagged when smaller than `cluster.min_size`.

Diagnostics for every k in `cluster.k_range` (inertia, silhouette, Davies-Bouldin) and stability: the adjusted
Rand index between the clustering of the data and of bootstrap resamples. The k verdict: the diagnostics prefer the
k of highest silhouette (the smaller on a tie); they support `cluster.k` when its silhouette is within
`cluster.silhouette_tolerance` of that best and its mean bootstrap ARI is at least `cluster.min_stability`.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn import config_context
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score, davies_bouldin_score, silhouette_score
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from pipeline.analysis.scope import ROUND_FEATURE
from pipeline.core import plots
from pipeline.core.errors import ParamsError
from pipeline.core.features import LOG_SCALED, PROFILED, ROUND_EFFICIENCY
from pipeline.settings import Cluster

# What the clusters are profiled and ordered by; never what they are built on.
OUTCOMES = {"time_to_train_min", "accelerator_hours", "scaling_efficiency", "speedup", "round_efficiency",
            "throughput_samples_per_s", "throughput_per_accelerator", ROUND_FEATURE}
DIGITS = 4  # stored statistics
NAMED_FAMILY_SHARE, NAMED_COVERAGE = 0.25, 0.75  # which families a cluster's name shows (see cluster_name)


def candidate_features(importance: dict[str, Any], default_features: Sequence[str]) -> tuple[list[str], str]:
    """The features to cluster on and where they come from: the importance stage's selection when its gate passed
    and it selected any, else the default configuration features."""
    selected = list(importance.get("selected_features", []))
    if importance.get("gate", {}).get("explained") and selected:
        return selected, "importance"
    return list(default_features), "default"


def _log_scaled(values: pd.DataFrame) -> pd.DataFrame:
    scaled = values.astype(float).copy()
    for column in scaled:
        if column in LOG_SCALED:
            scaled[column] = np.log10(scaled[column].where(scaled[column] > 0))
    return scaled


def collinear_r2(values: pd.DataFrame, feature: str, others: Sequence[str]) -> tuple[float, int]:
    """R^2 of a least-squares fit of `feature` on `others` (with intercept) over the rows where all are known, and
    that row count; (nan, n) when there are too few rows to tell."""
    complete = values[[feature, *others]].dropna()
    if len(complete) <= len(others) + 2 or not others:
        return float("nan"), len(complete)
    y = complete[feature].to_numpy()
    design = np.column_stack([np.ones(len(complete)), complete[list(others)].to_numpy()])
    coefficients, *_ = np.linalg.lstsq(design, y, rcond=None)
    residual = float(((y - design @ coefficients) ** 2).sum())
    total = float(((y - y.mean()) ** 2).sum())
    return (1.0 if total == 0 else 1 - residual / total), len(complete)


def choose_features(frame: pd.DataFrame, candidates: Sequence[str], max_imputed_share: float,
                    max_collinear: float) -> tuple[list[str], list[dict[str, str]]]:
    """The candidates kept for clustering, in order, and the dropped ones with the reason.

    Checked in order, so of an exactly collinear set the later features are dropped.
    """
    forbidden = [c for c in candidates if c in OUTCOMES]
    if forbidden:
        raise ParamsError(f"cluster features {', '.join(forbidden)} are outcomes or the round: they profile the "
                          f"clusters and are never inputs; remove them from cluster.default_features")
    values = _log_scaled(frame[list(candidates)])
    kept: list[str] = []
    dropped: list[dict[str, str]] = []
    for feature in candidates:
        missing = float(values[feature].isna().mean())
        if missing > max_imputed_share:
            dropped.append({"feature": feature, "reason": f"missing (would be imputed) for {missing:.0%} of "
                                                          f"configurations, above cluster.max_imputed_share = "
                                                          f"{max_imputed_share:.0%}"})
            continue
        if values[feature].nunique(dropna=True) < 2:
            dropped.append({"feature": feature, "reason": "the same for every configuration"})
            continue
        r2, rows = collinear_r2(values, feature, kept)
        if r2 >= max_collinear:
            dropped.append({"feature": feature, "reason": f"exactly collinear with {', '.join(kept)} (R^2 "
                                                          f"{r2:.4f} on {rows} configurations"
                                                          f"{', in log10' if feature in LOG_SCALED else ''})"})
            continue
        kept.append(feature)
    return kept, dropped


def design_matrix(frame: pd.DataFrame, features: Sequence[str]) -> np.ndarray:
    """Standardised (log10 where log-scaled, median-imputed) feature matrix, rows x len(features)."""
    values = _log_scaled(frame[list(features)])
    return StandardScaler().fit_transform(values.fillna(values.median()).to_numpy())


def fit(x: np.ndarray, k: int, n_init: int, seed: int) -> KMeans:
    return KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit(x)


def diagnostics(x: np.ndarray, k_range: Sequence[int], n_init: int, seed: int,
                fitted: dict[int, KMeans] | None = None) -> list[dict[str, float]]:
    """Inertia, silhouette and Davies-Bouldin index for each k of `k_range` (inclusive) that the data allow;
    `fitted` holds models already fitted on `x` with these settings, by k (they are not fitted again)."""
    rows = []
    for k in range(k_range[0], min(k_range[1], len(np.unique(x, axis=0)) - 1) + 1):
        model = (fitted or {}).get(k) or fit(x, k, n_init, seed)
        rows.append({"k": k, "inertia": round(float(model.inertia_), DIGITS),
                     "silhouette": round(float(silhouette_score(x, model.labels_)), DIGITS),
                     "davies_bouldin": round(float(davies_bouldin_score(x, model.labels_)), DIGITS)})
    return rows


def stability(x: np.ndarray, k: int, n_init: int, seed: int, resamples: int,
              reference: np.ndarray | None = None) -> list[float]:
    """ARI between the full-data labels (`reference`, else fitted here) and a model fitted on a bootstrap resample,
    over all the points."""
    reference = fit(x, k, n_init, seed).labels_ if reference is None else reference
    rng = np.random.default_rng(seed)
    scores = []
    for _ in range(resamples):
        sample = rng.choice(len(x), size=len(x), replace=True)
        if len(np.unique(x[sample], axis=0)) < k:
            continue
        labels = fit(x[sample], k, n_init, seed).predict(x)
        scores.append(round(float(adjusted_rand_score(reference, labels)), DIGITS))
    return scores


def k_verdict(k_diagnostics: Sequence[dict[str, float]], k: int, stability_mean: float | None,
              tolerance: float, min_stability: float) -> dict[str, Any]:
    """Whether the diagnostics support k: the preferred k has the highest silhouette (the smaller on a tie); k is
    supported when its silhouette is within `tolerance` of it and its bootstrap ARI mean is >= `min_stability`."""
    silhouettes = {int(row["k"]): row["silhouette"] for row in k_diagnostics}
    if not silhouettes:
        return {"supported": None, "preferred_k": None, "message": "No k could be compared"}
    preferred = min(silhouettes, key=lambda candidate: (-silhouettes[candidate], candidate))
    own = silhouettes.get(k)
    close = own is not None and own >= silhouettes[preferred] - tolerance
    stable = stability_mean is not None and stability_mean >= min_stability
    reasons = []
    if not close:
        reasons.append(f"silhouette {own:.2f} at k = {k} against {silhouettes[preferred]:.2f} at k = {preferred}"
                       if own is not None else f"k = {k} is outside the range compared")
    if not stable:
        reasons.append("bootstrap stability unknown" if stability_mean is None else
                       f"bootstrap ARI {stability_mean:.2f} below {min_stability}")
    supported = close and stable
    message = (f"The diagnostics support k = {k} (silhouette within {tolerance} of the best, k = {preferred}; "
               f"bootstrap ARI {stability_mean:.2f})" if supported else
               f"The diagnostics do not support k = {k}: {'; '.join(reasons)}; " +
               (f"they prefer k = {preferred}" if preferred != k else "no other k separates better") +
               (" (the largest k compared: more clusters may separate better still)"
                if preferred == max(silhouettes) and preferred != k else ""))
    return {"supported": supported, "preferred_k": preferred, "silhouette_k": own,
            "silhouette_best": silhouettes[preferred], "stability_ari_mean": stability_mean,
            "rule": f"preferred k: highest silhouette; k supported when its silhouette is within {tolerance} of the "
                    f"best and its mean bootstrap ARI >= {min_stability}", "message": message}


def efficiency_column(frame: pd.DataFrame) -> str:
    """Round-relative accelerator-hours when the features stage provides them, else accelerator-hours."""
    known = ROUND_EFFICIENCY in frame and frame[ROUND_EFFICIENCY].notna().any()
    return ROUND_EFFICIENCY if known else "accelerator_hours"


def order_by_efficiency(frame: pd.DataFrame, labels: np.ndarray) -> np.ndarray:
    """Clusters numbered 0..k-1 from the lowest median of `efficiency_column` (ties: the faster median time)."""
    medians = frame.assign(label=labels).groupby("label")[[efficiency_column(frame), "time_to_train_min"]].median()
    order = medians.sort_values([efficiency_column(frame), "time_to_train_min"]).index
    mapping = {old: new for new, old in enumerate(order)}
    return np.array([mapping[label] for label in labels])


def _optional(value: Any) -> float | None:
    return None if pd.isna(value) else round(float(value), DIGITS)


def _most_common(series: pd.Series) -> str | None:
    counts = series.dropna().astype(str).value_counts()
    return None if counts.empty else min(counts.index, key=lambda value: (-counts[value], value))


def family_counts(group: pd.DataFrame) -> pd.Series:
    """Results per accelerator family, most first (ties by name, so the order is stable)."""
    counts = group["accelerator_family"].fillna("unknown").astype(str).value_counts()
    return counts.iloc[sorted(range(len(counts)), key=lambda i: (-counts.iloc[i], counts.index[i]))]


def cluster_name(group: pd.DataFrame) -> str:
    """A short name from the profile, e.g. "8-64 H100, NVLink": the accelerator range, the families of at least a
    quarter of the members (two at most; "and others" when they cover less than three quarters) and the most common
    intra-node link."""
    low, high = int(group["accelerator_count"].min()), int(group["accelerator_count"].max())
    shares = family_counts(group) / len(group)
    shown = shares[shares >= NAMED_FAMILY_SHARE].head(2) if shares.iloc[0] >= NAMED_FAMILY_SHARE else shares.head(1)
    family = "/".join(shown.index) + (" and others" if shown.sum() < NAMED_COVERAGE else "")
    link = _most_common(group.get("interconnect_intra", pd.Series(dtype=object)))
    return f"{low if low == high else f'{low}-{high}'} {family}" + (f", {link}" if link else "")


def profiles(frame: pd.DataFrame, min_size: int) -> list[dict[str, Any]]:
    """Per cluster: size, configuration (accelerators, families, year) and outcome medians and ranges."""
    rows = []
    for cluster, group in frame.groupby("cluster"):
        families = family_counts(group)
        profile = {
            "cluster": int(cluster), "size": len(group), "small": len(group) < min_size, "name": cluster_name(group),
            "accelerators_median": float(group["accelerator_count"].median()),
            "accelerators_min": float(group["accelerator_count"].min()),
            "accelerators_max": float(group["accelerator_count"].max()),
            "families": {str(name): int(count) for name, count in families.head(4).items()},
            "interconnect_intra": _most_common(group.get("interconnect_intra", pd.Series(dtype=object))),
            "accelerator_year_median": _optional(group["accelerator_year"].median()),
        }
        for column in PROFILED:
            if column in group:
                profile.update({f"{column}_{stat}": _optional(getattr(group[column], stat)())
                                for stat in ("median", "min", "max")})
        profile["description"] = describe(profile)
        rows.append(profile)
    names = pd.Series([row["name"] for row in rows])
    for row, duplicate in zip(rows, names.duplicated(keep=False)):
        if duplicate:  # two clusters with one name: their outcome tells them apart
            row["name"] = f"{row['name']}, median {row['time_to_train_min_median']:.3g} min"
    return rows


def describe(profile: dict[str, Any]) -> str:
    families = ", ".join(list(profile["families"])[:2])
    low, high = int(profile["accelerators_min"]), int(profile["accelerators_max"])
    size = f"{low}" if low == high else f"{low}-{high}"
    efficiency = profile.get("scaling_efficiency_median")
    efficiency_text = "" if efficiency is None else f", median scaling efficiency {efficiency:.2f}"
    return (f"{profile['size']} results on {size} accelerators (mostly {families}): median "
            f"{profile['time_to_train_min_median']:.1f} min and {profile['accelerator_hours_median']:.1f} "
            f"accelerator-hours{efficiency_text}")


def _skipped(frame: pd.DataFrame, reason: str, k: int, **details: Any) -> tuple[pd.DataFrame, dict[str, Any]]:
    summary = {"status": "skipped", "reason": reason, "k": k, "features": [], "profiles": [], "diagnostics": [],
               "stability_ari": [], **details}
    return frame.assign(cluster=pd.Series(dtype="int64")).iloc[0:0], summary


def cluster_benchmark(frame: pd.DataFrame, candidates: Sequence[str], settings: Cluster,
                      feature_source: str = "importance") -> tuple[pd.DataFrame, dict[str, Any]]:
    """k-means of one benchmark's configurations (one row per result) on `candidates` that survive the checks.

    Returns the frame with a `cluster` column (0 = most efficient) and clusters.json's content.
    """
    k, n_init, seed = settings.k, settings.n_init, settings.seed
    if len(frame) <= k:
        return _skipped(frame, f"{len(frame)} configurations, not more than k = {k}", k)
    features, dropped = choose_features(frame, candidates, settings.max_imputed_share, settings.max_collinear_r2)
    chosen = {"feature_source": feature_source, "candidate_features": list(candidates), "features": features,
              "dropped_features": dropped}
    if not features:
        return _skipped(frame, "no configuration feature is usable for clustering (see dropped_features)", k,
                        **{**chosen, "features": []})
    x = design_matrix(frame, features)
    if len(np.unique(x, axis=0)) <= k:
        return _skipped(frame, f"fewer than {k + 1} distinct configurations on {', '.join(features)}", k,
                        **{**chosen, "features": []})
    # One thread: start-up costs more than it saves on a few hundred points. The data are finite and the
    # settings checked, so sklearn's per-call checks (a good part of a fit this small) are skipped.
    with threadpool_limits(1), config_context(assume_finite=True, skip_parameter_validation=True):
        model = fit(x, k, n_init, seed)
        labels = order_by_efficiency(frame, model.labels_)
        ari = stability(x, k, n_init, seed, settings.bootstrap, reference=model.labels_)
        k_diagnostics = diagnostics(x, settings.k_range, n_init, seed, fitted={k: model})
    clustered = frame.assign(cluster=labels)
    cluster_profiles = profiles(clustered, settings.min_size)
    ari_mean = round(float(np.mean(ari)), DIGITS) if ari else None
    summary = {"status": "ok", "k": k, **chosen, "ordered_by": efficiency_column(frame),
               "profiles": cluster_profiles, "diagnostics": k_diagnostics, "stability_ari": ari,
               "stability_ari_mean": ari_mean,
               "k_verdict": k_verdict(k_diagnostics, k, ari_mean, settings.silhouette_tolerance,
                                      settings.min_stability),
               "min_size": settings.min_size,
               "small_clusters": [p["cluster"] for p in cluster_profiles if p["small"]]}
    return clustered, summary


def plot_diagnostics(summary: dict[str, Any], benchmark: str, target: Path) -> None:
    figure, axes = plots.subplots(1, 4, figsize=(13, 3.4))
    data = pd.DataFrame(summary["diagnostics"])
    for axis, (column, label) in zip(axes[:3], [("inertia", "Inertia (lower is tighter)"),
                                                ("silhouette", "Silhouette (higher is better)"),
                                                ("davies_bouldin", "Davies-Bouldin (lower is better)")]):
        if not data.empty:
            axis.plot(data["k"], data[column], marker="o")
            axis.axvline(summary["k"], color="grey", linestyle="--", linewidth=1)
        axis.set_xlabel("Number of clusters k")
        axis.set_ylabel(label)
    axes[3].hist(summary["stability_ari"] or [np.nan], bins=10, range=(-0.1, 1.0))
    axes[3].set_xlabel(f"Adjusted Rand index, k = {summary['k']}")
    axes[3].set_ylabel("Bootstrap resamples")
    figure.suptitle(f"{benchmark}: choosing k and how stable the clusters are")
    plots.save(figure, target)
