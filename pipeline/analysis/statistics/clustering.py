"""k-means on the configuration (hardware and scale), profiled by outcome, for one benchmark: what the `cluster`
stage (`python -m pipeline.stages.cluster`) runs for every benchmark analysed.

Inputs: the numeric features the importance stage selected when its R^2 gate passed, else the documented default
configuration features of params `cluster.default_features`. Outcomes (time to train, accelerator-hours,
efficiency, throughput) and the round are never inputs. A candidate is dropped, with the reason recorded in
clusters.json, when it is constant, when more than `cluster.max_imputed_share` of the rows lack it (they would sit
at the median), or when it is exactly collinear with the features kept before it (R^2 of a linear fit on them, on
log10 where log-scaled and on the rows where all are known, at least `cluster.max_collinear_r2`: log accelerators =
log nodes + log accelerators per node, for one). Kept features are log10-scaled where they span orders of magnitude
(counts, memory, bandwidth), median-imputed and standardised. scikit-learn's KMeans, k = `cluster.k`, random_state
`cluster.seed`, `cluster.n_init` k-means++ starts, on one thread (the same bytes on any thread count).

Distinct configurations: many results share one point in feature space (the same count and hardware,
submitted again or by another submitter). k-means runs on the distinct points, each weighted by how many results
it stands for (`sample_weight`), which is k-means on the results with no point counted as separate evidence of
structure; every result takes its point's cluster. Silhouette and Davies-Bouldin are measured on the distinct
points (identical points would otherwise count as perfectly cohesive pairs), and bootstrap stability resamples the
results and compares the labels of the distinct points (adjusted Rand index).

Profiles: per cluster the median and range of time to train, accelerator-hours, round efficiency and scaling
efficiency; clusters are numbered 0..k-1 from the highest median `round_efficiency` (round's fewest
accelerator-hours / this result's, 1 = best; ties: the faster median time), so cluster 0 is the most
hardware-efficient group (else, without round efficiency, from the lowest median accelerator-hours). A cluster of
fewer than `cluster.min_size` results is merged into the one of nearest centroid first (`merge_small`), so no named
group rests on one or two results. Each is named from its profile (`cluster_name`); its description gives its
accelerator counts and their rank among the groups beside its efficiency.

Diagnostics for every k in `cluster.k_range` (inertia, silhouette, Davies-Bouldin). k's support (`k_support`):
`cluster.bootstrap` resamples of the results, each fitted at every k from its own starts; the share of resamples
whose best silhouette is at each k, and each k's mean ARI against the full fit. The k verdict
(`KVerdict`): the diagnostics prefer the k of highest silhouette (the smaller on a tie); they support `cluster.k`
when its silhouette is within `cluster.silhouette_tolerance` of that best and its mean bootstrap ARI is at least
`cluster.min_stability`; the k they support is `cluster.k` when so, else the preferred k when it is that stable,
else none.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from pipeline.analysis.efficiency import efficiency_column, order_by_efficiency
from pipeline.analysis.scope import ROUND_FEATURE
from pipeline.analysis.statistics.cluster_profiles import ClusterProfile, profiles
from pipeline.analysis.statistics.importance_result import ImportanceReport
from pipeline.core.artifacts import Artifact, Record
from pipeline.core.errors import ContractError, ParamsError
from pipeline.core.features import LOG_SCALED
from pipeline.settings import ClusterSettings

if TYPE_CHECKING:  # sklearn is imported where k-means runs: a stage that only reads a Clustering never loads it
    from sklearn.cluster import KMeans

# What the clusters are profiled and ordered by; never what they are built on.
OUTCOMES = {"time_to_train_min", "accelerator_hours", "scaling_efficiency", "speedup", "round_efficiency",
            "throughput_samples_per_s", "throughput_per_accelerator", ROUND_FEATURE}
DIGITS = 4  # stored statistics
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


def _kmeans(points: np.ndarray, weights: np.ndarray, k: int, n_init: int, seed: int) -> KMeans:
    """scikit-learn's KMeans of `points` (m x features), each weighted by `weights` (m,) (the rows it stands for):
    `n_init` k-means++ starts from `seed` (`scan_benchmark` holds it to one thread)."""
    from sklearn.cluster import KMeans

    return KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit(points, sample_weight=weights)


def _silhouette(distances: np.ndarray, labels: np.ndarray) -> float:
    """sklearn's mean silhouette of points whose Euclidean `distances` (m x m) are given, under `labels` (m,),
    rounded to DIGITS."""
    from sklearn.metrics import silhouette_score

    return round(float(silhouette_score(distances, labels, metric="precomputed")), DIGITS)


def adjusted_rand_index(first: np.ndarray, second: np.ndarray) -> float:
    """sklearn's adjusted Rand index of two labelings of the same points (1 = the same partition, about 0 =
    chance)."""
    from sklearn.metrics import adjusted_rand_score

    return float(adjusted_rand_score(first, second))


def _distances(points: np.ndarray) -> np.ndarray:
    """Euclidean distances between the rows of `points` (m x features): m x m, computed once per benchmark."""
    return np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=-1))


class KSupport(Record):
    """How the data support each k, over bootstrap resamples of the results, each resample fitted from its own
    random starts (`k_support`)."""

    resamples: int
    """Resamples whose best k could be told."""
    best_k_share: dict[int, float]
    """Each k of params `cluster.k_range` -> the share of resamples whose highest silhouette is at that k (the
    smaller k on a tie); 0 to 1, summing to 1."""
    stability_ari_mean: dict[int, float]
    """Each k -> the mean adjusted Rand index of the resamples' clusters against the fitted ones (1 = the same)."""

    @property
    def most_supported(self) -> int | None:
        """The k that most resamples pick (the smaller on a tie); None without a resample."""
        shares = self.best_k_share
        return min(shares, key=lambda k: (-shares[k], k)) if shares else None


def diagnostics(distinct: DistinctPoints, ks: Sequence[int], n_init: int, seed: int,
                fitted: dict[int, KMeans]) -> list[KDiagnostics]:
    """Inertia (weighted by the rows each point stands for), silhouette and Davies-Bouldin index (on the distinct
    points) for each k of `ks`, of the models in `fitted` (by k; fitted here when missing, and added)."""
    from sklearn.metrics import davies_bouldin_score

    rows, distances = [], _distances(distinct.points)
    for k in ks:
        if k not in fitted:
            fitted[k] = _kmeans(distinct.points, distinct.counts, k, n_init, seed)
        labels = fitted[k].labels_
        if len(np.unique(labels)) < 2:
            continue
        rows.append(KDiagnostics(k=k, inertia=round(float(fitted[k].inertia_), DIGITS),
                                 silhouette=_silhouette(distances, labels),
                                 davies_bouldin=round(float(davies_bouldin_score(distinct.points, labels)), DIGITS)))
    return rows


# k-means++ starts per bootstrap fit: each resample draws its own start, so the support varies over the starts and the
# resamples at once (and 19 benchmarks x resamples x k fits stay within a few seconds).
RESAMPLE_STARTS = 1


def k_support(distinct: DistinctPoints, fitted: dict[int, KMeans], seed: int,
              resamples: int) -> tuple[KSupport, dict[int, list[float]]]:
    """Bootstrap the results `resamples` times; in each, fit every k of `fitted` (below the distinct points drawn)
    on the distinct points drawn (weighted by how often), from the resample's own start (`RESAMPLE_STARTS`, random_state
    seed + 1 + resample), and
    record the k of highest silhouette and each k's adjusted Rand index over all distinct points against `fitted`.
    Returns the support and the ARI of every resample per k."""
    points, ks = distinct.points, sorted(fitted)
    distances = _distances(points)
    rng = np.random.default_rng(seed)
    best: list[int] = []
    ari: dict[int, list[float]] = {k: [] for k in ks}
    for resample in range(resamples):
        drawn = np.bincount(distinct.inverse[rng.choice(len(distinct.inverse), size=len(distinct.inverse))],
                            minlength=len(points)).astype(float)
        present = drawn > 0
        among = distances[np.ix_(present, present)]
        scores = {}
        for k in (k for k in ks if k < present.sum()):
            model = _kmeans(points[present], drawn[present], k, RESAMPLE_STARTS, seed + 1 + resample)
            if len(np.unique(model.labels_)) > 1:
                scores[k] = _silhouette(among, model.labels_)
            ari[k].append(round(adjusted_rand_index(fitted[k].labels_, model.predict(points)), DIGITS))
        if scores:
            best.append(min(scores, key=lambda k: (-scores[k], k)))
    counts = Counter(best)
    support = KSupport(resamples=len(best),
                       best_k_share={k: round(counts[k] / len(best), DIGITS) for k in ks} if best else {},
                       stability_ari_mean={k: mean for k, values in ari.items()
                                           if (mean := _mean(values)) is not None})
    return support, ari


def merge_small(labels: np.ndarray, x: np.ndarray, min_size: int) -> tuple[np.ndarray, int]:
    """Labels (one per result) with every cluster of fewer than `min_size` results merged into the cluster whose
    centroid (the mean of its results in `x`, rows x features) is nearest, the smallest first (ties: the lower
    label), until none is that small or one is left; renumbered 0.. in the order of their old labels. Returns the
    labels and how many clusters were merged away."""
    labels = labels.copy()
    merged = 0
    while True:
        clusters, sizes = np.unique(labels, return_counts=True)
        if len(clusters) < 2 or sizes.min() >= min_size:
            break
        small = clusters[np.argmin(sizes)]
        centroids = {c: x[labels == c].mean(axis=0) for c in clusters}
        distances = {c: round(float(np.linalg.norm(centroids[c] - centroids[small])), DIGITS)
                     for c in clusters if c != small}
        labels[labels == small] = min(distances, key=lambda c: (distances[c], c))
        merged += 1
    return np.unique(labels, return_inverse=True)[1].reshape(-1), merged


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
    """Params `cluster.min_size`: a smaller cluster is merged into the nearest one (never named)."""
    merged_small: int = 0
    """Clusters of k-means merged away for holding fewer than `min_size` results (`merge_small`)."""
    small_clusters: list[int] = Field(default_factory=list)
    """The clusters still smaller than `min_size` (only when one is left)."""
    k_support: KSupport | None = None
    """Each k's share of bootstrap resamples choosing it, and its stability (`k_support`)."""

    @property
    def n_clusters(self) -> int:
        """The clusters reported, k less the merged ones."""
        return len(self.profiles)

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


class KScan(Artifact):
    """One benchmark's k-means at every k of params `cluster.k_range` (data/processed/kscan/<benchmark>.json,
    `scan_benchmark`): the feature choice, each k's diagnostics, labels and bootstrap stability, and the support of
    each k. None of it depends on `cluster.k`, which the cluster stage picks among them (`clusters_from_scan`), so a
    change of k runs no k-means. A skipped scan holds the reason and the feature choice."""

    KIND = "kscan"

    feature_source: FeatureSource | None = None
    """Where the candidates come from: the importance stage's selection, or params `cluster.default_features`."""
    candidate_features: list[str] = Field(default_factory=list)
    """The features considered, in order of priority."""
    features: list[str] = Field(default_factory=list)
    """The features clustered on (log10 where log-scaled, median-imputed, standardised)."""
    dropped_features: list[DroppedFeature] = Field(default_factory=list)
    """The candidates not clustered on, with the reason."""
    n_distinct: int | None = None
    """Distinct points in feature space that k-means ran on."""
    diagnostics: list[KDiagnostics] = Field(default_factory=list)
    """One per k of params `cluster.k_range` that the distinct points allow."""
    labels: dict[int, list[int]] = Field(default_factory=dict)
    """Each k fitted -> the cluster of each distinct point (`distinct_points` order) in the fit on all of them."""
    stability_ari: dict[int, list[float]] = Field(default_factory=dict)
    """Each k fitted -> the adjusted Rand index of each bootstrap resample's clusters against that fit."""
    k_support: KSupport | None = None
    """Each k's share of bootstrap resamples choosing it, and its stability (`k_support`)."""

    def chosen(self) -> dict[str, Any]:
        """The feature choice, as `Clustering` reports it."""
        return {"feature_source": self.feature_source, "candidate_features": self.candidate_features,
                "dropped_features": self.dropped_features}


def scan_benchmark(frame: pd.DataFrame, candidates: Sequence[str], settings: ClusterSettings,
                   feature_source: FeatureSource = "importance", *, benchmark: str) -> KScan:
    """k-means of one benchmark's configurations (one row per result) on the `candidates` that survive the checks,
    at every k of `settings.k_range` below the number of distinct points, with each k's diagnostics and bootstrap
    support. Reads every key of params `cluster` but `k`, `min_size`, `silhouette_tolerance` and `min_stability`."""
    features, dropped = choose_features(frame, candidates, settings.max_imputed_share, settings.max_collinear_r2)
    chosen: dict[str, Any] = {"feature_source": feature_source, "candidate_features": list(candidates),
                              "dropped_features": dropped}
    if not features:
        return KScan(benchmark=benchmark, status="skipped",
                     reason="no configuration feature is usable for clustering (see dropped_features)", **chosen)
    distinct = distinct_points(design_matrix(frame, features))
    ks = range(settings.k_range[0], min(settings.k_range[1], len(distinct.points) - 1) + 1)
    from sklearn import config_context
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1), config_context(assume_finite=True, skip_parameter_validation=True):
        # One thread: the same bytes on any thread count (and no thread start-up on data this small); the matrix is
        # built and checked here, so sklearn's per-call checks are skipped.
        fitted: dict[int, KMeans] = {}
        k_diagnostics = diagnostics(distinct, ks, settings.n_init, settings.seed, fitted)
        support, ari = k_support(distinct, fitted, settings.seed, settings.bootstrap)
    return KScan(benchmark=benchmark, status="ok", **chosen, features=features, n_distinct=len(distinct.points),
                 diagnostics=k_diagnostics, labels={k: model.labels_.tolist() for k, model in fitted.items()},
                 stability_ari=ari, k_support=support)


def cluster_benchmark(frame: pd.DataFrame, candidates: Sequence[str], settings: ClusterSettings,
                      feature_source: FeatureSource = "importance", *,
                      benchmark: str) -> tuple[pd.DataFrame, Clustering]:
    """k-means of one benchmark's configurations (one row per result) at k = params `cluster.k`, in one call: the
    kscan stage's `scan_benchmark`, then the cluster stage's `clusters_from_scan`."""
    scan = scan_benchmark(frame, candidates, settings, feature_source, benchmark=benchmark)
    return clusters_from_scan(frame, scan, settings)


def clusters_from_scan(frame: pd.DataFrame, scan: KScan, settings: ClusterSettings) -> tuple[pd.DataFrame, Clustering]:
    """One benchmark's configurations (one row per result, the frame `scan` was made from) labelled by the k-means
    of `scan` at k = params `cluster.k`, small clusters merged.

    Returns the frame with a `cluster` column (0 = the highest median round efficiency) and the `Clustering`.
    Raises `ContractError` when `scan` is not of this frame (a stale kscan output).
    """
    k, benchmark = settings.k, scan.benchmark
    if len(frame) <= k:
        return _skipped(frame, benchmark, f"{len(frame)} configurations, not more than k = {k}", k)
    if scan.status == "skipped":
        return _skipped(frame, benchmark, scan.reason or "", k, **scan.chosen())
    x = design_matrix(frame, scan.features)
    distinct = distinct_points(x)
    if len(distinct.points) != scan.n_distinct:
        raise ContractError(f"the k scan of {benchmark} holds {scan.n_distinct} distinct configurations, the "
                            f"configurations {len(distinct.points)}: it is stale; run `dvc repro`")
    if len(distinct.points) <= k:
        return _skipped(frame, benchmark, f"fewer than {k + 1} distinct configurations on {', '.join(scan.features)}",
                        k, **scan.chosen())
    ari = scan.stability_ari
    preferred = k_verdict(scan.diagnostics, k, _mean(ari[k]), settings.silhouette_tolerance,
                          settings.min_stability).preferred_k
    verdict = k_verdict(scan.diagnostics, k, _mean(ari[k]), settings.silhouette_tolerance, settings.min_stability,
                        _mean(ari[preferred]) if preferred is not None else None)
    # int32: the dtype of scikit-learn's labels_, as the scan fitted them
    labels, merged = merge_small(np.asarray(scan.labels[k], dtype=np.int32)[distinct.inverse], x, settings.min_size)
    clustered = frame.assign(cluster=order_by_efficiency(frame, labels))
    cluster_profiles = profiles(clustered, settings.min_size)
    summary = Clustering(
        benchmark=benchmark, status="ok", k=k, **scan.chosen(), features=scan.features,
        ordered_by=efficiency_column(frame), n_distinct=len(distinct.points),
        share_repeated=round(distinct.share_repeated, DIGITS), profiles=cluster_profiles, diagnostics=scan.diagnostics,
        stability_ari=ari[k], stability_ari_mean=_mean(ari[k]), k_verdict=verdict, min_size=settings.min_size,
        merged_small=merged, k_support=scan.k_support, small_clusters=[p.cluster for p in cluster_profiles if p.small])
    return clustered, summary


def _mean(values: Sequence[float]) -> float | None:
    return round(float(np.mean(values)), DIGITS) if len(values) else None
