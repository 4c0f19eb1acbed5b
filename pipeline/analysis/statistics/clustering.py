"""Stage `cluster`: k-means on the configuration (hardware and scale), profiled by outcome, for one benchmark.

    python -m pipeline.analysis.statistics.clustering BENCHMARK

Inputs: the numeric features the importance stage selected when its R^2 gate passed, else the documented default
configuration features of params `cluster.default_features`. Outcomes (time to train, accelerator-hours,
efficiency, throughput) and the round are never inputs. A candidate is dropped, with the reason recorded in
clusters.json, when it is constant, when more than `cluster.max_imputed_share` of the rows lack it (they would sit
at the median), or when it is exactly collinear with the features kept before it (R^2 of a linear fit on them, on
log10 where log-scaled and on the rows where all are known, at least `cluster.max_collinear_r2`: log accelerators =
log nodes + log accelerators per node, for one). Kept features are log10-scaled where they span orders of magnitude
(counts, memory, bandwidth), median-imputed and standardised. k = `cluster.k` with a fixed seed and `cluster.n_init`
restarts.

Distinct configurations: many results share one point in feature space (the same count and hardware,
submitted again or by another submitter). k-means runs on the distinct points, each weighted by how many results
it stands for (`sample_weight`), which is k-means on the results with no point counted as separate evidence of
structure; every result takes its point's cluster. Silhouette and Davies-Bouldin are measured on the distinct
points (identical points would otherwise count as perfectly cohesive pairs), and bootstrap stability resamples the
results and compares the labels of the distinct points (adjusted Rand index).

Profiles: per cluster the median and range of time to train, accelerator-hours, round efficiency and scaling
efficiency; clusters are numbered 0..k-1 from the highest median `round_efficiency` (round's fewest
accelerator-hours / this result's, 1 = best; ties: the faster median time), so cluster 0 is the most
hardware-efficient group (else, without round efficiency, from the lowest median accelerator-hours). Each is named
from its profile (`cluster_name`) and flagged when smaller than `cluster.min_size`.

Diagnostics for every k in `cluster.k_range` (inertia, silhouette, Davies-Bouldin) and stability. The k verdict
(`KVerdict`): the diagnostics prefer the k of highest silhouette (the smaller on a tie); they support `cluster.k`
when its silhouette is within `cluster.silhouette_tolerance` of that best and its mean bootstrap ARI is at least
`cluster.min_stability`; the k they support is `cluster.k` when so, else the preferred k when it is that stable,
else none.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from pipeline.analysis.efficiency import efficiency_column, order_by_efficiency
from pipeline.analysis.scope import ROUND_FEATURE
from pipeline.analysis.statistics.importance_result import ImportanceReport
from pipeline.core.artifacts import Artifact, Record
from pipeline.core.errors import ParamsError
from pipeline.core.features import LOG_SCALED, PROFILED, ROUND_EFFICIENCY
from pipeline.mlperf.hardware.links import link_table
from pipeline.settings import Cluster

# What the clusters are profiled and ordered by; never what they are built on.
OUTCOMES = {"time_to_train_min", "accelerator_hours", "scaling_efficiency", "speedup", "round_efficiency",
            "throughput_samples_per_s", "throughput_per_accelerator", ROUND_FEATURE}
DIGITS = 4  # stored statistics
NAMED_VENDOR_SHARE = 0.25  # a mixed cluster's name gives the link of each vendor with at least this share
FeatureSource = Literal["importance", "default"]  # the importance stage's selection, or cluster.default_features


class DroppedFeature(Record):
    """A candidate feature not clustered on."""

    feature: str
    """The candidate (a configurations.parquet column)."""
    reason: str
    """Why it is dropped, in words."""


class KDiagnostics(Record):
    """How well one k separates the distinct configurations (standardised feature space)."""

    k: int
    """Clusters."""
    inertia: float
    """Sum of squared distances to the centers, each point weighted by the results it stands for; lower: tighter
    (it always falls as k grows)."""
    silhouette: float
    """Mean silhouette of the distinct points, -1 to 1; higher: better separated."""
    davies_bouldin: float
    """Davies-Bouldin index of the distinct points, >= 0; lower: better separated."""


def candidate_features(importance: ImportanceReport,
                       default_features: Sequence[str]) -> tuple[list[str], FeatureSource]:
    """The features to cluster on and where they come from: the importance stage's selection when its gate passed
    and it selected any, else the default configuration features."""
    if importance.explained and importance.selected_features:
        return list(importance.selected_features), "importance"
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
                    max_collinear: float) -> tuple[list[str], list[DroppedFeature]]:
    """The candidates kept for clustering, in order, and the dropped ones with the reason.

    Checked in order, so of an exactly collinear set the later features are dropped.
    """
    forbidden = [c for c in candidates if c in OUTCOMES]
    if forbidden:
        raise ParamsError(f"cluster features {', '.join(forbidden)} are outcomes or the round: they profile the "
                          f"clusters and are never inputs; remove them from cluster.default_features")
    values = _log_scaled(frame[list(candidates)])
    kept: list[str] = []
    dropped: list[DroppedFeature] = []
    for feature in candidates:
        missing = float(values[feature].isna().mean())
        if missing > max_imputed_share:
            dropped.append(DroppedFeature(feature=feature, reason=f"missing (would be imputed) for {missing:.0%} of "
                                                                  f"configurations, above cluster.max_imputed_share "
                                                                  f"= {max_imputed_share:.0%}"))
            continue
        if values[feature].nunique(dropna=True) < 2:
            dropped.append(DroppedFeature(feature=feature, reason="the same for every configuration"))
            continue
        r2, rows = collinear_r2(values, feature, kept)
        if r2 >= max_collinear:
            dropped.append(DroppedFeature(feature=feature, reason=f"exactly collinear with {', '.join(kept)} (R^2 "
                                                                  f"{r2:.4f} on {rows} configurations"
                                                                  f"{', in log10' if feature in LOG_SCALED else ''})"))
            continue
        kept.append(feature)
    return kept, dropped


def design_matrix(frame: pd.DataFrame, features: Sequence[str]) -> np.ndarray:
    """Standardised (log10 where log-scaled, median-imputed) feature matrix, rows x len(features)."""
    values = _log_scaled(frame[list(features)])
    return standardised(values.fillna(values.median()).to_numpy(dtype=float))


def standardised(x: np.ndarray) -> np.ndarray:
    """Each column of `x` (rows x features) centred and divided by its standard deviation (ddof 0; a constant
    column is only centred), as sklearn's StandardScaler does."""
    scale = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(scale > 0, scale, 1.0)


@dataclass(frozen=True)
class DistinctPoints:
    """The distinct rows of a design matrix: `points` (m x features), `counts` (m,) how many rows each stands for,
    `inverse` (n,) the distinct point of each row (points[inverse] == x)."""
    points: np.ndarray
    counts: np.ndarray
    inverse: np.ndarray

    @property
    def share_repeated(self) -> float:
        """The share of rows that repeat a point another row already has (0 when every row is distinct)."""
        return 1 - len(self.points) / len(self.inverse) if len(self.inverse) else 0.0


def distinct_points(x: np.ndarray) -> DistinctPoints:
    """`x` (rows x features) as its distinct rows (in lexicographic order) with their counts."""
    points, inverse, counts = np.unique(x, axis=0, return_inverse=True, return_counts=True)
    return DistinctPoints(points, counts.astype(float), inverse.reshape(-1))


# Lloyd iterations per start at most (sklearn's default); a start stops earlier when its labels stop changing.
MAX_ITER = 100


@dataclass(frozen=True)
class KMeansFit:
    """A fitted k-means: `centers` (k x features), the fitted points' `labels_` (m,) and `inertia_` (the weighted
    sum of squared distances to their centers)."""

    centers: np.ndarray
    labels_: np.ndarray
    inertia_: float

    def predict(self, points: np.ndarray) -> np.ndarray:
        """The nearest center of each row of `points` (the first on a tie)."""
        return np.argmin(_squared_distances(points[None], self.centers[None])[0], axis=1)


def _squared_distances(points: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """(starts, m, k) squared distances of `points` (starts or 1, m, features) to `centers` (starts or 1, k,
    features), summed over the features one after the other (no BLAS, and no (starts, m, k, features) temporary:
    the same bytes on any thread count)."""
    total = (points[:, :, None, 0] - centers[:, None, :, 0]) ** 2
    for feature in range(1, points.shape[-1]):
        total += (points[:, :, None, feature] - centers[:, None, :, feature]) ** 2
    return total


def _distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Euclidean distances between the rows of `a` and of `b`."""
    return np.sqrt(_squared_distances(a[None], b[None])[0])


def silhouette(points: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette of `points` (m x features) under `labels` (m,), as sklearn's `silhouette_score`: per point
    (b - a) / max(a, b), a its mean distance to the other members of its cluster, b the smallest mean distance to
    another cluster's members; 0 for the only member of a cluster."""
    distances = _distances(points, points)
    clusters, codes = np.unique(labels, return_inverse=True)
    membership = np.eye(len(clusters))[codes]  # m x clusters
    sizes = membership.sum(axis=0)
    # summed distance of each point to each cluster's members (no BLAS: the same bytes on any thread count)
    totals = (distances[:, :, None] * membership[None, :, :]).sum(axis=1)
    own_size = sizes[codes]
    a = totals[np.arange(len(points)), codes] / np.maximum(own_size - 1, 1)
    others = np.where(membership > 0, np.inf, totals / sizes)
    b = others.min(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(own_size > 1, (b - a) / np.maximum(a, b), 0.0)
    return float(np.mean(np.nan_to_num(score)))


def davies_bouldin(points: np.ndarray, labels: np.ndarray) -> float:
    """Davies-Bouldin index of `points` under `labels`, as sklearn's `davies_bouldin_score`: the mean over clusters
    of the largest (spread_i + spread_j) / centroid distance_ij, spread the mean distance to the centroid."""
    clusters, codes = np.unique(labels, return_inverse=True)
    centroids = np.stack([points[codes == c].mean(axis=0) for c in range(len(clusters))])
    spread = np.array([_distances(points[codes == c], centroids[c:c + 1]).mean() for c in range(len(clusters))])
    between = _distances(centroids, centroids)
    if np.allclose(spread, 0) or np.allclose(between, 0):
        return 0.0
    between[between == 0] = np.inf
    return float(np.mean(np.max((spread[:, None] + spread[None, :]) / between, axis=1)))


def adjusted_rand(first: np.ndarray, second: np.ndarray) -> float:
    """Adjusted Rand index of two labellings of the same points, as sklearn's `adjusted_rand_score` (from the
    pair confusion matrix, in integers)."""
    _, a = np.unique(first, return_inverse=True)
    _, b = np.unique(second, return_inverse=True)
    table = np.zeros((a.max() + 1, b.max() + 1), dtype=np.int64)
    np.add.at(table, (a, b), 1)
    n = len(a)
    squares = int((table ** 2).sum())
    same_both = squares - n
    same_second_only = int((table.sum(axis=0) ** 2).sum()) - squares
    same_first_only = int((table.sum(axis=1) ** 2).sum()) - squares
    neither = n * n - same_second_only - same_first_only - squares
    if same_first_only == 0 and same_second_only == 0:
        return 1.0
    return 2.0 * (same_both * neither - same_first_only * same_second_only) / (
        (same_both + same_first_only) * (same_first_only + neither)
        + (same_both + same_second_only) * (same_second_only + neither))


def fit(points: np.ndarray, weights: np.ndarray, k: int, n_init: int, seed: int) -> KMeansFit:
    """k-means of `points` (m x features), each weighted by `weights` (m,): the clustering of the rows they
    stand for. `n_init` weighted k-means++ starts (`seed`), all iterated at once (the data are a few hundred
    points at most, so one vectorised pass costs less than a library call's overhead), Lloyd's iterations until
    no label changes (at most MAX_ITER); the start of the lowest inertia wins (the first on a tie). An emptied
    cluster keeps its center."""
    points, weights = np.asarray(points, dtype=float), np.asarray(weights, dtype=float)
    m = len(points)
    rng = np.random.default_rng(seed)
    starts = np.arange(n_init)
    # Greedy k-means++ (sklearn's): the first center drawn by weight; each next one the best, by the weighted sum of
    # squared distances to the nearest center, of 2 + log k candidates drawn by weight x that squared distance.
    trials = 2 + int(np.log(k))
    chosen = np.empty((n_init, k), dtype=int)
    cumulative = np.cumsum(weights)
    chosen[:, 0] = np.minimum(np.searchsorted(cumulative, rng.random(n_init) * cumulative[-1], side="right"), m - 1)
    nearest = _squared_distances(points[None], points[chosen[:, :1]])[:, :, 0]  # (starts, m)
    for j in range(1, k):
        cumulative = np.cumsum(weights[None, :] * nearest, axis=1)
        draws = rng.random((n_init, trials)) * cumulative[:, -1:]
        # searchsorted(side="right") of each start's draws in its (non-decreasing) cumulative sum
        candidates = np.minimum((cumulative[:, None, :] <= draws[:, :, None]).sum(axis=2), m - 1)
        to_candidate = _squared_distances(points[candidates], points[None])  # (starts, trials, m)
        reached = np.minimum(nearest[:, None, :], to_candidate)  # (starts, trials, m)
        best = np.argmin((reached * weights[None, None, :]).sum(axis=2), axis=1)
        chosen[:, j] = candidates[starts, best]
        nearest = reached[starts, best]
    centers = points[chosen]  # (starts, k, features)
    labels = np.full((n_init, m), -1)
    # A start whose labels did not change has converged (its centers would come out the same): only the others
    # iterate on, so every start ends as if all had iterated until the last one converged.
    active = starts
    offsets = np.arange(n_init)[:, None] * k
    for _ in range(MAX_ITER):
        new = np.argmin(_squared_distances(points[None], centers[active]), axis=2)
        changed = (new != labels[active]).any(axis=1)
        if not changed.any():
            break
        active, new = active[changed], new[changed]
        labels[active] = new
        # weighted sums of each start's members per cluster, added in the points' order (np.bincount)
        cells = (new + offsets[:len(active)]).reshape(-1)
        mass = np.bincount(cells, np.tile(weights, len(active)), len(active) * k).reshape(-1, k)
        sums = np.stack([np.bincount(cells, np.tile(weights * points[:, feature], len(active)), len(active) * k)
                         for feature in range(points.shape[1])], axis=-1).reshape(len(active), k, -1)
        centers[active] = np.where(mass[:, :, None] > 0, sums / np.where(mass > 0, mass, 1.0)[:, :, None],
                                   centers[active])
    distances = _squared_distances(points[None], centers)
    inertia = (np.take_along_axis(distances, labels[:, :, None], axis=2)[:, :, 0] * weights[None, :]).sum(axis=1)
    best = int(starts[np.argmin(inertia)])
    return KMeansFit(centers[best], labels[best], float(inertia[best]))


def diagnostics(distinct: DistinctPoints, k_range: Sequence[int], n_init: int, seed: int,
                fitted: dict[int, KMeansFit] | None = None) -> list[KDiagnostics]:
    """Inertia (weighted by the rows each point stands for), silhouette and Davies-Bouldin index (on the distinct
    points) for each k of `k_range` (inclusive) that the distinct points allow (k below their number); `fitted`
    holds models already fitted on them with these settings, by k (they are not fitted again)."""
    rows = []
    for k in range(k_range[0], min(k_range[1], len(distinct.points) - 1) + 1):
        model = (fitted or {}).get(k) or fit(distinct.points, distinct.counts, k, n_init, seed)
        if len(np.unique(model.labels_)) < 2:
            continue
        rows.append(KDiagnostics(k=k, inertia=round(float(model.inertia_), DIGITS),
                                 silhouette=round(silhouette(distinct.points, model.labels_), DIGITS),
                                 davies_bouldin=round(davies_bouldin(distinct.points, model.labels_), DIGITS)))
    return rows


def stability(distinct: DistinctPoints, k: int, n_init: int, seed: int, resamples: int,
              reference: np.ndarray | None = None) -> list[float]:
    """Adjusted Rand index, over the distinct points, between their labels (`reference`, else fitted here) and the
    labels a model fitted on a bootstrap resample of the rows (results) gives them; a resample with fewer than k
    distinct points is skipped."""
    points = distinct.points
    reference = fit(points, distinct.counts, k, n_init, seed).labels_ if reference is None else reference
    rng = np.random.default_rng(seed)
    scores = []
    for _ in range(resamples):
        drawn = np.bincount(distinct.inverse[rng.choice(len(distinct.inverse), size=len(distinct.inverse))],
                            minlength=len(points)).astype(float)
        present = drawn > 0
        if present.sum() <= k:
            continue
        labels = fit(points[present], drawn[present], k, n_init, seed).predict(points)
        scores.append(round(adjusted_rand(reference, labels), DIGITS))
    return scores


class KVerdict(Record):
    """What the diagnostics say of k (`k_verdict`)."""

    k: int
    """The study's k (params `cluster.k`)."""
    supported: bool | None
    """Whether the diagnostics support k; None when no k could be compared."""
    preferred_k: int | None
    """The k of highest silhouette (the smaller on a tie)."""
    supported_k: int | None
    """The k the diagnostics support: `k` when supported, else the preferred k when it is stable enough, else
    None."""
    silhouette_k: float | None
    """k's mean silhouette (-1 to 1, higher: better separated); None when k is outside the range compared."""
    silhouette_best: float | None
    """The preferred k's mean silhouette."""
    stability_ari_mean: float | None
    """k's mean bootstrap adjusted Rand index (1 = the same clusters in every resample)."""
    preferred_stability_ari_mean: float | None
    """The preferred k's mean bootstrap adjusted Rand index."""
    rule: str
    """The rule, in words."""
    message: str
    """The verdict, in words."""


def k_verdict(k_diagnostics: Sequence[KDiagnostics], k: int, stability_mean: float | None,
              tolerance: float, min_stability: float, preferred_stability: float | None = None) -> KVerdict:
    """Whether the diagnostics support k: the preferred k has the highest silhouette (the smaller on a tie); k is
    supported when its silhouette is within `tolerance` of it and its bootstrap ARI mean is >= `min_stability`.
    `preferred_stability`: the preferred k's bootstrap ARI mean (when it is not k)."""
    rule = (f"preferred k: highest silhouette; k supported when its silhouette is within {tolerance} of the best "
            f"and its mean bootstrap ARI >= {min_stability}")
    silhouettes = {row.k: row.silhouette for row in k_diagnostics}
    if not silhouettes:
        return KVerdict(k=k, supported=None, preferred_k=None, supported_k=None, silhouette_k=None,
                        silhouette_best=None, stability_ari_mean=stability_mean, preferred_stability_ari_mean=None,
                        rule=rule, message="No k could be compared")
    preferred = min(silhouettes, key=lambda candidate: (-silhouettes[candidate], candidate))
    own = silhouettes.get(k)
    close = own is not None and own >= silhouettes[preferred] - tolerance
    stable = stability_mean is not None and stability_mean >= min_stability
    preferred_ari = stability_mean if preferred == k else preferred_stability
    reasons = []
    if not close:
        reasons.append(f"silhouette {own:.2f} at k = {k} against {silhouettes[preferred]:.2f} at k = {preferred}"
                       if own is not None else f"k = {k} is outside the range compared")
    if not stable:
        reasons.append("bootstrap stability unknown" if stability_mean is None else
                       f"bootstrap ARI {stability_mean:.2f} below {min_stability}")
    supported = close and stable
    preferred_stable = preferred_ari is not None and preferred_ari >= min_stability
    supported_k = k if supported else preferred if preferred != k and preferred_stable else None
    if supported:
        message = (f"The diagnostics support k = {k} (silhouette within {tolerance} of the best, k = {preferred}; "
                   f"bootstrap ARI {stability_mean:.2f})")
    else:
        message = f"The diagnostics do not support k = {k}: {'; '.join(reasons)}; "
        if preferred == k:
            message += "no other k separates better"
        else:
            message += (f"they prefer k = {preferred}" + (f" (bootstrap ARI {preferred_ari:.2f}"
                        f"{'' if preferred_stable else f', below {min_stability}: not stable either'})"
                        if preferred_ari is not None else ""))
            if preferred == max(silhouettes):
                message += " (the largest k compared: more clusters may separate better still)"
    return KVerdict(k=k, supported=supported, preferred_k=preferred, supported_k=supported_k, silhouette_k=own,
                    silhouette_best=silhouettes[preferred], stability_ari_mean=stability_mean,
                    preferred_stability_ari_mean=preferred_ari, rule=rule, message=message)


def _optional(value: Any) -> float | None:
    return None if pd.isna(value) else round(float(value), DIGITS)


def _most_common(values: Iterable[Any]) -> str | None:
    """The commonest of the known `values`, as text (ties: the first by name); None when none is known."""
    counts = Counter(str(value) for value in values if not pd.isna(value))
    return min(counts, key=lambda value: (-counts[value], value)) if counts else None


def _names(group: pd.DataFrame, column: str) -> list[str]:
    """`column` of each member as text, "unknown" where missing (or for every member when the frame lacks it)."""
    if column not in group:
        return ["unknown"] * len(group)
    return ["unknown" if pd.isna(value) else str(value) for value in group[column].tolist()]


def family_counts(group: pd.DataFrame) -> pd.Series:
    """Results per accelerator family, most first (ties by name, so the order is stable)."""
    counts = Counter(_names(group, "accelerator_family"))
    return pd.Series(dict(sorted(counts.items(), key=lambda item: (-item[1], item[0]))), dtype="int64")


@cache  # the package's table: read and checked once per family and form factor
def table_link(family: Any, form_factor: Any) -> str | None:
    """The accelerator-to-accelerator link kind of `family` in `form_factor` when pipeline/mlperf/hardware/links.csv
    lists a
    single one for it (its rows of that form factor, else its rows for every form factor): ICI for a TPU, NVLink
    for an H100 SXM; None when the table lists none or several (an A100 PCIe may have an NVLink bridge or not)."""
    table = link_table()
    rows = table[table["family"] == family]
    if isinstance(form_factor, str) and (rows["form_factor"] == form_factor).any():
        rows = rows[rows["form_factor"] == form_factor]
    elif (rows["form_factor"] == "").any():
        rows = rows[rows["form_factor"] == ""]
    kinds = rows["link"].unique()
    return str(kinds[0]) if len(kinds) == 1 else None


def member_links(group: pd.DataFrame) -> pd.Series:
    """Each member's intra-node link kind: the one its description states (`interconnect_intra`), else the one the
    link table gives its family and form factor (`table_link`), else missing."""
    stated = group.get("interconnect_intra", pd.Series(None, index=group.index, dtype=object))
    form = group.get("accelerator_form_factor", pd.Series(None, index=group.index, dtype=object))
    return pd.Series([link if isinstance(link, str) else table_link(family, form_factor)
                      for link, family, form_factor in zip(stated, group["accelerator_family"], form)],
                     index=group.index, dtype=object)


def vendor_links(group: pd.DataFrame) -> dict[str, str]:
    """The most common intra-node link kind (`member_links`) of each accelerator vendor's members, vendors with
    most members first; a vendor none of whose members has a known link is left out."""
    links = member_links(group).tolist()
    vendors = _names(group, "accelerator_vendor")
    order = Counter(vendors)
    found = {}
    for vendor in sorted(order, key=lambda name: (-order[name], name)):
        link = _most_common(link for link, owner in zip(links, vendors) if owner == vendor)
        if link:
            found[vendor] = link
    return found


def cluster_name(group: pd.DataFrame) -> str:
    """A short name from the profile: the accelerator range, the family when it holds most members ("8-64 H100"
    when it holds all, "8-64 mostly H100" when more than half, "8-64 mixed" otherwise), and the intra-node link by
    its name: the dominant family's most common link, or in a mixed cluster the link of each vendor holding at
    least `NAMED_VENDOR_SHARE` of the members ("NVLink (NVIDIA), ICI (Google)"). Links come from `member_links`,
    so a TPU's is ICI, never another vendor's NVLink."""
    low, high = int(group["accelerator_count"].min()), int(group["accelerator_count"].max())
    shares = family_counts(group) / len(group)
    top, share = str(shares.index[0]), float(shares.iloc[0])
    size = f"{low}" if low == high else f"{low}-{high}"
    if share > 0.5:
        family = top if share == 1 else f"mostly {top}"
        link = _most_common(link for link, name in zip(member_links(group).tolist(),
                                                        _names(group, "accelerator_family")) if name == top)
        return f"{size} {family}" + (f", {link}" if link else "")
    vendors = Counter(_names(group, "accelerator_vendor"))
    named = {vendor: link for vendor, link in vendor_links(group).items()
             if vendors[vendor] / len(group) >= NAMED_VENDOR_SHARE}
    links = ", ".join(f"{link} ({vendor})" for vendor, link in named.items())
    return f"{size} mixed" + (f", {links}" if links else "")


class ClusterProfile(Record):
    """One cluster by its members (results): size, configuration and the median and range of each outcome. An
    outcome the configurations lack (round efficiency on old data) is left out."""

    cluster: int
    """0..k-1, from the highest median round efficiency (0: the most hardware-efficient)."""
    size: int
    """Results."""
    small: bool
    """Fewer results than params `cluster.min_size`: too few to read much into."""
    name: str
    """A short name from the profile (`cluster_name`), unique among the clusters."""
    accelerators_median: float
    """Accelerators per result: median."""
    accelerators_min: float
    """Accelerators per result: fewest."""
    accelerators_max: float
    """Accelerators per result: most."""
    families: dict[str, int]
    """Results per accelerator family, the four commonest (by name in the file)."""
    family_share: float
    """The commonest family's share of the results, 0 to 1."""
    links: dict[str, str]
    """Accelerator vendor -> its members' commonest intra-node link kind (`vendor_links`)."""
    accelerator_year_median: float | None
    """Median launch year of the accelerators."""
    time_to_train_min_median: float | None = None
    """Time to train, minutes (lower: faster): median."""
    time_to_train_min_min: float | None = None
    """Lowest."""
    time_to_train_min_max: float | None = None
    """Highest."""
    accelerator_hours_median: float | None = None
    """Accelerator-hours, accelerators x time to train (lower: less hardware time): median."""
    accelerator_hours_min: float | None = None
    """Lowest."""
    accelerator_hours_max: float | None = None
    """Highest."""
    scaling_efficiency_median: float | None = None
    """Within-series scaling efficiency (1 = linear, higher: better): median."""
    scaling_efficiency_min: float | None = None
    """Lowest."""
    scaling_efficiency_max: float | None = None
    """Highest."""
    round_efficiency_median: float | None = None
    """The round's fewest accelerator-hours / the result's (1 = best of its round): median."""
    round_efficiency_min: float | None = None
    """Lowest."""
    round_efficiency_max: float | None = None
    """Highest."""
    description: str
    """The profile in one sentence (`describe`)."""

    def outcome(self, column: str, statistic: str) -> float | None:
        """`statistic` ("median", "min", "max") of a profiled outcome (`PROFILED`) or of "accelerators"."""
        value = getattr(self, f"{column}_{statistic}")
        return None if value is None else float(value)


# The columns a profile reads.
PROFILE_COLUMNS = {"cluster", "accelerator_count", "accelerator_family", "accelerator_vendor", "accelerator_year",
                   "accelerator_form_factor", "interconnect_intra", "time_to_train_min", *PROFILED}


def profiles(frame: pd.DataFrame, min_size: int) -> list[ClusterProfile]:
    """Per cluster: size, configuration (accelerators, families, year) and outcome medians and ranges."""
    rows = []
    # Only the columns profiled: each group copies every column it has.
    frame = frame[[column for column in frame if column in PROFILE_COLUMNS]]
    for cluster, group in frame.groupby("cluster"):
        families = family_counts(group)
        profile = {
            "cluster": int(cluster), "size": len(group), "small": len(group) < min_size, "name": cluster_name(group),
            "accelerators_median": float(group["accelerator_count"].median()),
            "accelerators_min": float(group["accelerator_count"].min()),
            "accelerators_max": float(group["accelerator_count"].max()),
            "families": {str(name): int(count) for name, count in families.head(4).items()},
            "family_share": round(float(families.iloc[0] / len(group)), DIGITS),
            "links": vendor_links(group),
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
    return [ClusterProfile.model_validate(row) for row in rows]


def describe(profile: dict[str, Any]) -> str:
    """One sentence of a profile: "12 results on 8-64 accelerators (H100 9, A100 3): median 20.1 min, 12.0
    accelerator-hours, round efficiency 0.61, scaling efficiency 0.85"."""
    families = ", ".join(f"{name} {count}" for name, count in list(profile["families"].items())[:3])
    low, high = int(profile["accelerators_min"]), int(profile["accelerators_max"])
    size = f"{low}" if low == high else f"{low}-{high}"
    extra = "".join(f", {label} {profile[key]:.2f}" for key, label in
                    ((f"{ROUND_EFFICIENCY}_median", "round efficiency"),
                     ("scaling_efficiency_median", "scaling efficiency")) if profile.get(key) is not None)
    return (f"{profile['size']} results on {size} accelerators ({families}): median "
            f"{profile['time_to_train_min_median']:.1f} min, {profile['accelerator_hours_median']:.1f} "
            f"accelerator-hours{extra}")


class Clustering(Artifact):
    """One benchmark's clustering (reports/clusters/<benchmark>.json, `cluster_benchmark`). A skipped one holds
    `reason`, `k`, empty `features`, `profiles`, `diagnostics` and `stability_ari`, and the feature choice when it
    got that far."""

    KIND = "cluster"

    k: int
    """Clusters (params `cluster.k`)."""
    feature_source: FeatureSource | None = None
    """Where the candidates come from: the importance stage's selection, or params `cluster.default_features`."""
    candidate_features: list[str] = Field(default_factory=list)
    """The features considered, in order of priority."""
    features: list[str] = Field(default_factory=list)
    """The features clustered on (log10 where log-scaled, median-imputed, standardised)."""
    dropped_features: list[DroppedFeature] = Field(default_factory=list)
    """The candidates not clustered on, with the reason."""
    ordered_by: str | None = None
    """What numbers the clusters (`efficiency_column`): round_efficiency, else accelerator_hours."""
    n_distinct: int | None = None
    """Distinct points in feature space that k-means ran on."""
    share_repeated: float | None = None
    """Share of the results that repeat a point another result has, 0 to 1."""
    profiles: list[ClusterProfile] = Field(default_factory=list)
    """One per cluster, by cluster number."""
    diagnostics: list[KDiagnostics] = Field(default_factory=list)
    """One per k of params `cluster.k_range` that the distinct points allow."""
    stability_ari: list[float] = Field(default_factory=list)
    """Adjusted Rand index of each bootstrap resample's clusters against the fitted ones (1 = the same)."""
    stability_ari_mean: float | None = None
    """Their mean (higher: more stable); None without a resample."""
    k_verdict: KVerdict | None = None
    """Whether the diagnostics support k."""
    min_size: int | None = None
    """Params `cluster.min_size`: smaller clusters are flagged `small`."""
    small_clusters: list[int] = Field(default_factory=list)
    """The clusters smaller than `min_size`."""

    @property
    def silhouette(self) -> float | None:
        """The mean silhouette at the k used (higher: better separated); None when k was not compared."""
        return next((row.silhouette for row in self.diagnostics if row.k == self.k), None)

    def profile(self, cluster: int | None) -> ClusterProfile | None:
        """The profile of `cluster`; None when there is none."""
        return next((item for item in self.profiles if item.cluster == cluster), None)


def _skipped(frame: pd.DataFrame, benchmark: str, reason: str, k: int,
             **details: Any) -> tuple[pd.DataFrame, Clustering]:
    summary = Clustering(benchmark=benchmark, status="skipped", reason=reason, k=k, features=[], profiles=[],
                         diagnostics=[], stability_ari=[], **details)
    return frame.assign(cluster=pd.Series(dtype="int64")).iloc[0:0], summary


def cluster_benchmark(frame: pd.DataFrame, candidates: Sequence[str], settings: Cluster,
                      feature_source: FeatureSource = "importance", *,
                      benchmark: str) -> tuple[pd.DataFrame, Clustering]:
    """k-means of one benchmark's configurations (one row per result) on `candidates` that survive the checks.

    Returns the frame with a `cluster` column (0 = the highest median round efficiency) and the `Clustering`.
    """
    k, n_init, seed = settings.k, settings.n_init, settings.seed
    if len(frame) <= k:
        return _skipped(frame, benchmark, f"{len(frame)} configurations, not more than k = {k}", k)
    features, dropped = choose_features(frame, candidates, settings.max_imputed_share, settings.max_collinear_r2)
    chosen: dict[str, Any] = {"feature_source": feature_source, "candidate_features": list(candidates),
                              "dropped_features": dropped}
    if not features:
        return _skipped(frame, benchmark, "no configuration feature is usable for clustering (see dropped_features)",
                        k, **chosen)
    x = design_matrix(frame, features)
    distinct = distinct_points(x)
    if len(distinct.points) <= k:
        return _skipped(frame, benchmark, f"fewer than {k + 1} distinct configurations on {', '.join(features)}",
                        k, **chosen)
    model = fit(distinct.points, distinct.counts, k, n_init, seed)
    labels = order_by_efficiency(frame, model.labels_[distinct.inverse])
    ari = stability(distinct, k, n_init, seed, settings.bootstrap, reference=model.labels_)
    k_diagnostics = diagnostics(distinct, settings.k_range, n_init, seed, fitted={k: model})
    ari_mean = _mean(ari)
    preferred = k_verdict(k_diagnostics, k, ari_mean, settings.silhouette_tolerance,
                          settings.min_stability).preferred_k
    preferred_ari = (_mean(stability(distinct, preferred, n_init, seed, settings.bootstrap))
                     if preferred is not None and preferred != k else None)
    verdict = k_verdict(k_diagnostics, k, ari_mean, settings.silhouette_tolerance, settings.min_stability,
                        preferred_ari)
    clustered = frame.assign(cluster=labels)
    cluster_profiles = profiles(clustered, settings.min_size)
    summary = Clustering(
        benchmark=benchmark, status="ok", k=k, **chosen, features=features, ordered_by=efficiency_column(frame),
        n_distinct=len(distinct.points), share_repeated=round(distinct.share_repeated, DIGITS),
        profiles=cluster_profiles, diagnostics=k_diagnostics, stability_ari=ari, stability_ari_mean=ari_mean,
        k_verdict=verdict, min_size=settings.min_size,
        small_clusters=[p.cluster for p in cluster_profiles if p.small])
    return clustered, summary


def _mean(values: Sequence[float]) -> float | None:
    return round(float(np.mean(values)), DIGITS) if len(values) else None
