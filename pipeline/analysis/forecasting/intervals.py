"""Intervals are weighted split-conformal on the backtest's earlier log residuals, normalised by the forecast's
scale s and distance: a forecast of scale s (`pipeline.analysis.forecasting.model.forecast_scale`: run-to-run
noise, the spread between submitters on the same hardware and the drift's uncertainty, in quadrature) `d` (log
count ratio) outside its unit's published counts gets the half-width q x s x (1 + kappa d), q the weighted c (m + 1)
/ m quantile of the normalised scores |r| / (s (1 + kappa d)) of the m earlier forecasts of the same method, kind
and trust (falling back to the same trust, then the same kind, then the whole method when a pool has fewer than
`MIN_CALIBRATION`; with none, q is the normal quantile that holds c: s read as an sd). c is the target coverage
(params `decide.target_coverage`, 0.9): the share of published times the interval should hold.
kappa is calibrated on the earlier folds' own extrapolations (`extrapolation_slope`).
The benchmark's own residuals weigh n / (n + OWN_PRIOR_WEIGHT) of the total, every earlier fold alike (no
recency weighting: see `calibration_weights`). Calibrating fold r only on folds before r keeps the backtest's coverage
honest; calibrating trusted forecasts on trusted residuals keeps their intervals as honest as the others'.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

# Split-conformal needs ceil((m + 1) target_coverage) <= m residuals: 9 for a 90% interval; a few more steady it.
MIN_CALIBRATION = 10
UNCALIBRATED = "uncalibrated"
SAME_KIND, ANY_KIND = "earlier forecasts of the same kind and trust", "earlier forecasts of the same trust"
SAME_KIND_ANY_TRUST, ANY_KIND_ANY_TRUST = "earlier forecasts of the same kind", "earlier forecasts of any kind"
NEW_FAMILIES = "earlier forecasts of families new to their benchmark"
# Calibration: a benchmark's own earlier residuals weigh n / (n + OWN_PRIOR_WEIGHT) against the other benchmarks'.
# Every earlier fold weighs alike: a residual's weight halving every year (a recency half-life, tried at 0.5, 1,
# 2 and 4 years) made the intervals narrower after calm folds and under-covered the next one; on the backtest
# (bench/backtest.py --pipeline-only), predict's answers inside their 90% intervals over every fold 87%, 88%,
# 89%, 89% against 89% with equal weights, and on v5.1 74%, 80%, 80%, 82% against 82% (known families 70%, 77%,
# 77%, 80% against 80%); no fold's coverage fell by more than 1 point with equal weights.
OWN_PRIOR_WEIGHT = 20.0
# The interval's growth per unit of log count outside the published counts, searched on this grid; with fewer
# than MIN_CALIBRATION earlier extrapolations, DEFAULT_EXTRAPOLATION_SLOPE (the width doubles at e times the
# largest published count).
EXTRAPOLATION_GRID = tuple(np.round(np.arange(0.0, 4.01, 0.1), 2))
DEFAULT_EXTRAPOLATION_SLOPE = 1.0


def weighted_conformal_half_width(residuals: np.ndarray, weights: np.ndarray, target_coverage: float) -> float:
    """Split-conformal half-width that holds `target_coverage` (a fraction) from m residuals with non-negative
    `weights`: the smallest |r| whose share of the total weight, counting it and every smaller one, reaches
    target_coverage (m + 1) / m. With equal weights that is the ceil((m + 1) target_coverage)-th smallest |r|;
    infinite when m is too small for that (or no weight)."""
    if len(residuals) != len(weights):
        raise ValueError("weighted_conformal_half_width needs one weight per residual")
    m, total = len(residuals), float(np.sum(weights))
    target = target_coverage * (m + 1) / m if m else math.inf
    if target > 1 or total <= 0:
        return math.inf
    order = np.argsort(np.abs(residuals), kind="stable")
    shares = np.cumsum(np.asarray(weights, dtype=float)[order]) / total
    # A relative tolerance: equal weights must reach k/m exactly when k/m is the target.
    return float(np.abs(residuals)[order][np.searchsorted(shares, target * (1 - 1e-12))])


def weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """The weighted median of `values`: the smallest value whose share of the total (non-negative) `weights`,
    counting it and every smaller one, reaches a half."""
    order = np.argsort(values, kind="stable")
    shares = np.cumsum(np.asarray(weights, dtype=float)[order]) / float(np.sum(weights))
    # A relative tolerance: equal weights must reach k/m exactly when k/m is a half.
    return float(np.asarray(values, dtype=float)[order][np.searchsorted(shares, 0.5 * (1 - 1e-12))])


def calibration_weights(benchmarks: np.ndarray, benchmark: str) -> np.ndarray:
    """Weights of earlier backtest residuals (of `benchmarks`) for a forecast of `benchmark`: the benchmark's own n
    residuals share n / (n + OWN_PRIOR_WEIGHT) of the weight (all of it when no other benchmark has any), the
    other benchmarks' the rest, equally within each."""
    own = np.asarray(benchmarks, dtype=object) == benchmark
    n_own, n_other = int(own.sum()), int((~own).sum())
    own_share = 1.0 if n_other == 0 else n_own / (n_own + OWN_PRIOR_WEIGHT)
    weights = np.zeros(len(own))
    for mask, share in ((own, own_share), (~own, 1.0 - own_share)):
        if mask.any():
            weights[mask] = share / mask.sum()
    return weights


def extrapolation_slope(residuals: np.ndarray, distances: np.ndarray, target_coverage: float) -> tuple[float, str]:
    """kappa of the interval q (1 + kappa d), from earlier backtest forecasts of one method (log `residuals` in
    units of their scale,
    their `distances` outside the published counts): the smallest kappa of EXTRAPOLATION_GRID whose
    (unweighted) conformal interval holds at least `target_coverage` of the extrapolated ones (d > 0), or the grid's
    largest; DEFAULT_EXTRAPOLATION_SLOPE when fewer than MIN_CALIBRATION forecasts were extrapolated. Returns
    (kappa, where it came from)."""
    outside = distances > 0
    if outside.sum() < MIN_CALIBRATION or len(residuals) < MIN_CALIBRATION:
        return DEFAULT_EXTRAPOLATION_SLOPE, f"default (fewer than {MIN_CALIBRATION} earlier extrapolations)"
    magnitude = np.abs(residuals)
    for kappa in EXTRAPOLATION_GRID:
        stretch = 1.0 + kappa * distances
        width = weighted_conformal_half_width(magnitude / stretch, np.ones(len(magnitude)), target_coverage)
        if np.mean(magnitude[outside] <= width * stretch[outside]) >= target_coverage:
            return float(kappa), f"{int(outside.sum())} earlier extrapolations"
    return float(EXTRAPOLATION_GRID[-1]), f"{int(outside.sum())} earlier extrapolations (the grid's largest)"


@dataclass(frozen=True)
class Calibration:
    """Interval half-widths of one method and kind, for forecasts at one time: q (log minutes, at distance 0),
    kappa (growth per unit of log count outside the published counts), and where each came from."""

    q: float
    q_source: str
    kappa: float
    kappa_source: str
    shift: float = 0.0  # log minutes added to the forecast: the weighted median of earlier residuals (`recentre`)

    def half_width(self, distance: np.ndarray | float, scale: np.ndarray | float) -> np.ndarray:
        """Half-widths (log minutes) at `distance` outside the published counts for forecasts of `scale`
        (`pipeline.analysis.forecasting.model.forecast_scale`)."""
        return self.q * np.asarray(scale, dtype=float) * (1.0 + self.kappa * np.asarray(distance, dtype=float))


@dataclass(frozen=True)
class ResidualHistory:
    """Backtest residuals to calibrate on, as arrays: each point's benchmark, fold_time, method, kind, whether it
    was trusted, log_residual and distance."""

    benchmark: np.ndarray
    fold_time: np.ndarray
    method: np.ndarray
    kind: np.ndarray
    trusted: np.ndarray
    log_residual: np.ndarray
    distance: np.ndarray
    scale: np.ndarray  # each point's forecast scale: scores are residuals in units of it
    shift: np.ndarray  # each point's re-centring (log minutes), so log_residual + shift is the unshifted one's

    @classmethod
    def of(cls, points: pd.DataFrame) -> ResidualHistory:
        """The history of `points` (benchmark, fold_time, method, kind, log_residual, distance, scale and, optionally,
        trusted and shift_log: False and 0 where they are missing)."""
        trusted = (points["trusted"].to_numpy(dtype=bool) if "trusted" in points.columns
                   else np.zeros(len(points), dtype=bool))
        return cls(benchmark=points["benchmark"].to_numpy(dtype=object),
                   fold_time=points["fold_time"].to_numpy(dtype=float),
                   method=points["method"].to_numpy(dtype=object), kind=points["kind"].to_numpy(dtype=object),
                   trusted=trusted, log_residual=points["log_residual"].to_numpy(dtype=float),
                   distance=points["distance"].to_numpy(dtype=float),
                   scale=points["scale"].to_numpy(dtype=float),
                   shift=(points["shift_log"].to_numpy(dtype=float) if "shift_log" in points.columns
                          else np.zeros(len(points))))

    def extrapolation_slope(self, method: str, target_coverage: float, target_time: float) -> tuple[float, str]:
        """kappa and where it came from (`extrapolation_slope`) for forecasts by `method` at `target_time`, from
        every benchmark's forecasts of the method in rounds published before it."""
        same_method = (self.method == method) & (self.fold_time < target_time)
        return extrapolation_slope(self.log_residual[same_method] / self.scale[same_method],
                                   self.distance[same_method], target_coverage)

    def calibration(self, benchmark: str, method: str, kind: str, target_coverage: float, target_time: float,
                    trusted: bool | None = None, recentre: bool = False,
                    new_family_kinds: tuple[str, ...] = (), slope: tuple[float, str] | None = None) -> Calibration:
        """The Calibration of a forecast of `benchmark` by `method` and `kind` at `target_time` (`trusted` or not;
        None: either), from residuals of rounds published before it: kappa from every benchmark's forecasts of
        the method (`extrapolation_slope`); q weighted split-conformal (`calibration_weights`) over the normalised
        scores of the first pool with MIN_CALIBRATION residuals among: the method's of that kind and trust, of
        that trust, of that kind, all of them; else uncalibrated, z (the normal quantile). Calibrating trusted forecasts
        on trusted residuals keeps their intervals as honest as the others'. With `recentre` (forecasts of a family
        new to the benchmark, `NEW_FAMILY_KINDS`: a new generation is faster than its sibling), the forecast is
        shifted by the weighted median (`calibration_weights`: the benchmark's own weigh n / (n + OWN_PRIOR_WEIGHT))
        unshifted residual of the method's earlier forecasts of that kind on every benchmark, given MIN_CALIBRATION
        of them (a plain median over every benchmark made new families' median error 20.8% over every fold and
        24.6% on v5.1, signed +0.8% and +24.6%; weighted, 20.1% and 17.5%, +0.5% and +17.5%). A forecast of one of
        `new_family_kinds`, re-centred or not, has its interval calibrated on that kind's, else on every one of
        `new_family_kinds`', before the pools above. `slope`: the method's `extrapolation_slope` at `target_time`
        when the caller has it already (it is one for every benchmark, kind and trust)."""
        same_method = (self.method == method) & (self.fold_time < target_time)
        shift = 0.0
        if recentre and (same_method & (self.kind == kind)).sum() >= MIN_CALIBRATION:
            pool = same_method & (self.kind == kind)
            shift = float(np.round(weighted_median(self.log_residual[pool] + self.shift[pool],
                                                   calibration_weights(self.benchmark[pool], benchmark)), 9))
        kappa, kappa_source = slope or self.extrapolation_slope(method, target_coverage, target_time)
        same_trust = same_method if trusted is None else same_method & (self.trusted == trusted)
        same_kind = self.kind == kind
        pools: tuple[tuple[str, np.ndarray], ...] = ((SAME_KIND, same_trust & same_kind), (ANY_KIND, same_trust),
                 (SAME_KIND_ANY_TRUST, same_method & same_kind), (ANY_KIND_ANY_TRUST, same_method))
        new_family = recentre or kind in new_family_kinds
        if new_family:  # a new family's errors are of their own: its kind's, else every new family's, first
            new_families = same_method & np.isin(self.kind, np.array(new_family_kinds, dtype=object))
            pools = ((SAME_KIND_ANY_TRUST, same_method & same_kind), (NEW_FAMILIES, new_families), *pools)
        for source, pool in pools[:2 + 2 * new_family] if trusted is None else pools:
            if pool.sum() >= MIN_CALIBRATION:
                weights = calibration_weights(self.benchmark[pool], benchmark)
                scores = self.log_residual[pool] / (self.scale[pool] * (1.0 + kappa * self.distance[pool]))
                return Calibration(weighted_conformal_half_width(scores, weights, target_coverage), source, kappa,
                                   kappa_source, shift)
        # scipy.stats' norm.ppf is this same ndtri (bit for bit); scipy.stats costs 0.6 s to import
        from scipy.special import ndtri

        return Calibration(float(ndtri(0.5 + target_coverage / 2)), UNCALIBRATED, kappa, kappa_source, shift)
