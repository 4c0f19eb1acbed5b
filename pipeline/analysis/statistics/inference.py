"""Inference for one regression coefficient with few, uneven clusters (the findings' tests).

`coefficient` fits least squares with statsmodels (`OLS(...).fit(cov_type="cluster")`: CR1 standard errors by
cluster, t with G - 1 degrees of freedom for G clusters) for the estimate, its interval and the conventional p-value,
and adds the p-value of a wild cluster bootstrap (Webb's six-point weights, the null imposed: Cameron, Gelbach and
Miller 2008; Webb 2023; MacKinnon, Nielsen and Webb 2023), which holds its size with as few as five clusters where
the t distribution's p-values are too small.

The bootstrap is vectorised: with r the tested coefficient's row of the design's pseudo-inverse and M the residual
maker, the coefficient of any outcome y* is r·y* and its cluster-g score is (M (r ∘ 1_g))·y*, so every draw is one
row of a (draws x G) weight matrix times a (G x G + 1) matrix computed once. statsmodels has no wild cluster
bootstrap; `tests/analysis/test_inference.py` holds the observed t to statsmodels' CR1 t.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

# Webb's six-point weights: mean 0, variance 1, six values so that few clusters still give many distinct draws.
WEBB = np.array([-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0, math.sqrt(1.5)])


@dataclass(frozen=True)
class Coefficient:
    """One regression coefficient on the model's scale: its estimate, two-sided 1 - alpha interval (CR1, t with
    G - 1 degrees of freedom), the t test's two-sided p-value and the wild cluster bootstrap's (null imposed)."""
    estimate: float
    low: float
    high: float
    p_value: float
    p_bootstrap: float


def design_matrix(outcome: np.ndarray, regressor: np.ndarray | None, strata: np.ndarray | None) -> np.ndarray:
    """A constant, `regressor` (when given) and a dummy per stratum but the first: one row per value of
    `outcome`."""
    columns = [np.ones(len(outcome))]
    if regressor is not None:
        columns.append(np.asarray(regressor, dtype=float))
    if strata is not None:
        dummies = pd.get_dummies(pd.Series(strata).astype(str), drop_first=True, dtype=float)
        columns += [dummies[column].to_numpy() for column in dummies]
    return np.column_stack(columns)


def coefficient(outcome: np.ndarray, regressor: np.ndarray | None, strata: np.ndarray | None,
                clusters: np.ndarray, alpha: float, draws: int, seed: int) -> Coefficient | None:
    """The coefficient of `regressor` (of the constant when None) in the OLS of `outcome` on `design_matrix`,
    clustered by `clusters` (one label per row): estimate, 1 - `alpha` interval and p-values (`draws` bootstrap
    draws from `seed`). None when it is not identified (the regressor does not vary within any stratum, a rank-
    deficient design, fewer than two clusters) or the outcome is 0 with no spread; a nonzero outcome with no spread
    (every unit on one side) has a zero-width interval, a t-test p of 0, and the bootstrap's p."""
    import statsmodels.api as sm

    outcome = np.asarray(outcome, dtype=float)
    design = design_matrix(outcome, regressor, strata)
    groups = pd.factorize(pd.Series(clusters).astype(str))[0]
    if len(np.unique(groups)) < 2 or len(outcome) <= design.shape[1]:
        return None
    if np.linalg.matrix_rank(design) < design.shape[1]:
        return None
    index = 0 if regressor is None else 1
    # a dummy's variance is not estimable with more strata than clusters; unanimous clusters have no spread
    with np.errstate(invalid="ignore", divide="ignore"):
        fit = sm.OLS(outcome, design).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
        error = float(fit.bse[index])
    estimate = float(fit.params[index])
    if not math.isfinite(error) or (error <= 0 and estimate == 0):
        return None
    low, high = (float(value) for value in fit.conf_int(alpha)[index])
    return Coefficient(estimate, low, high, float(fit.pvalues[index]),
                       wild_cluster_p(outcome, design, groups, index, draws, seed))


def score_projection(design: np.ndarray, groups: np.ndarray, index: int) -> tuple[np.ndarray, float]:
    """The (n x G + 1) matrix that maps any outcome to coefficient `index` (column 0) and its G cluster scores
    (the rest), and the CR1 factor G / (G - 1) x (n - 1) / (n - k): `t_values` of outcome @ matrix are the
    coefficient's clustered t statistics."""
    n, k = design.shape
    g = int(groups.max()) + 1
    inverse = np.linalg.pinv(design)
    row = inverse[index]
    indicator = np.zeros((n, g))
    indicator[np.arange(n), groups] = 1.0
    weighted = row[:, None] * indicator
    scores = weighted - design @ (inverse @ weighted)  # M (r ∘ 1_g), one column per cluster
    return np.column_stack([row, scores]), g / (g - 1) * (n - 1) / (n - k)


def t_values(projected: np.ndarray, scale: float) -> np.ndarray:
    """Clustered t statistics of the coefficient = 0, one per row of `projected` (outcomes @ `score_projection`)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return projected[:, 0] / np.sqrt(scale * np.sum(projected[:, 1:] ** 2, axis=1))


def wild_cluster_p(outcome: np.ndarray, design: np.ndarray, groups: np.ndarray, index: int, draws: int,
                   seed: int) -> float:
    """Two-sided p-value of coefficient `index` = 0 by the wild cluster bootstrap-t with the null imposed: the
    restricted fit (without column `index`) plus its residuals times one Webb weight per cluster, `draws` times
    (`numpy.random.default_rng(seed)`); p = (1 + draws with |t*| >= |t|) / (draws + 1), t with CR1 errors."""
    projection, scale = score_projection(design, groups, index)
    restricted = np.delete(design, index, axis=1)
    fitted = restricted @ np.linalg.lstsq(restricted, outcome, rcond=None)[0] if restricted.shape[1] else \
        np.zeros(len(outcome))
    residual = outcome - fitted
    observed = float(t_values((outcome @ projection)[None, :], scale)[0])
    weights = np.random.default_rng(seed).choice(WEBB, size=(draws, projection.shape[1] - 1))
    by_cluster = np.zeros((weights.shape[1], projection.shape[1]))  # (G x G + 1): residual-weighted rows summed
    np.add.at(by_cluster, groups, residual[:, None] * projection)
    drawn = t_values(fitted @ projection + weights @ by_cluster, scale)
    exceed = int(np.sum(np.round(np.abs(drawn), 10) >= round(abs(observed), 10)))
    return (1 + exceed) / (draws + 1)
