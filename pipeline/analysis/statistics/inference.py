"""Inference for one regression coefficient with few, uneven clusters (the findings' tests).

`coefficient` fits least squares and tests one coefficient with the bias-reduced linearization variance (CR2:
Bell and McCaffrey 2002) clustered by a label, and a t distribution with the Bell-McCaffrey (Satterthwaite)
degrees of freedom: the estimate, its interval and its two-sided p-value come from the one rule, for every test.

Why this rule. The findings' tests have 5 to 37 clusters (submitters) of very uneven sizes (one submitter often
holds most results). There the conventional CR1 errors with G - 1 degrees of freedom reject too often, and the wild
cluster bootstrap cannot help with the fewest clusters: with G clusters its p-value of a coefficient whose clusters
all agree in sign cannot go below about 2^(1 - G), since the draws whose weights share one sign reproduce the
statistic (MacKinnon and Webb 2017, "Wild bootstrap inference for wildly different cluster sizes"; MacKinnon,
Nielsen and Webb 2023, "Cluster-robust inference: a guide to empirical practice"), so 5 unanimous submitters could
never pass a correction over many tests. CR2 removes the bias of the clustered variance under independent errors,
and the Bell-McCaffrey degrees of freedom measure how many clusters effectively carry the coefficient: near G - 1
when the clusters weigh alike, near 1 when one cluster carries it. This is the small-sample rule recommended by
Imbens and Kolesar (2016, "Robust standard errors in small samples: some practical advice") and Pustejovsky and
Tipton (2018, "Small-sample methods for cluster-robust variance estimation and hypothesis testing in fixed effects
models"), who show it holds its size with few and uneven clusters, fixed effects included. So a claim resting on a
handful of submitters, or on one submitter's many results, gets few degrees of freedom and a wide interval.

The computation: with r the tested coefficient's row of the design's pseudo-inverse, H the hat matrix and M = I - H,
cluster g's adjusted score of an outcome y is (M A_g r_g)'y, where A_g is the symmetric inverse square root of
I - H_gg (its pseudo-inverse where a dummy is nested in the cluster, as Pustejovsky and Tipton do); the CR2 variance
is the sum of the squared scores. Under working independence the variance is y'PP'y with P the (n x G) matrix of
the columns M A_g r_g, so its Satterthwaite degrees of freedom are tr(P'P)^2 / tr((P'P)^2) (Bell and McCaffrey's;
Imbens and Kolesar's K_BM). statsmodels has no CR2; `tests/analysis/test_inference.py` holds it to statsmodels' HC2
with one result per cluster, and the degrees of freedom to their definition computed directly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

# Eigenvalues of I - H_gg at or below this are the zeros of a dummy nested in cluster g (they lie in [0, 1]).
NESTED = 1e-10
# Standard errors below this (relative to the estimate, or absolute) are rounding noise of an outcome with no spread.
NO_SPREAD = 1e-12


@dataclass(frozen=True)
class Coefficient:
    """One regression coefficient on the model's scale: its estimate, two-sided 1 - alpha interval and two-sided
    p-value of a t test with the CR2 standard error and `df` Bell-McCaffrey degrees of freedom; or, where the
    outcome has no spread (`exact`), the interval has no width and the p-value is the exact sign-flip test's over
    the clusters (`unanimous_p`)."""
    estimate: float
    low: float
    high: float
    p_value: float
    df: float
    exact: bool = False


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
                clusters: np.ndarray, alpha: float) -> Coefficient | None:
    """The coefficient of `regressor` (of the constant when None) in the OLS of `outcome` on `design_matrix`,
    clustered by `clusters` (one label per row): estimate, 1 - `alpha` interval, p-value and degrees of freedom
    (CR2, Bell-McCaffrey). None when it is not identified (a rank-deficient design, fewer than two clusters, no
    cluster to estimate its variance from) or the outcome is 0 with no spread. A nonzero outcome with no spread
    (every unit on one side by the same amount) has a zero-width interval, where the t test's p would be 0: its p
    is then the exact sign-flip test's over the G clusters, `unanimous_p` (`exact`)."""
    from scipy import stats

    outcome = np.asarray(outcome, dtype=float)
    design = design_matrix(outcome, regressor, strata)
    groups = pd.factorize(pd.Series(clusters).astype(str))[0]
    if len(np.unique(groups)) < 2 or len(outcome) <= design.shape[1]:
        return None
    if np.linalg.matrix_rank(design) < design.shape[1]:
        return None
    index = 0 if regressor is None else 1
    projection, row = cr2_projection(design, groups, index)
    df = satterthwaite_df(projection)
    if df is None:
        return None
    estimate = float(row @ outcome)
    error = cr2_error(outcome, projection)
    if error <= NO_SPREAD * max(1.0, abs(estimate)):
        if round(estimate, 12) == 0:
            return None
        return Coefficient(estimate, estimate, estimate, unanimous_p(len(np.unique(groups))), df, exact=True)
    half = float(stats.t.ppf(1 - alpha / 2, df)) * error
    p_value = float(f"{2 * stats.t.sf(abs(estimate) / error, df):.10g}")  # rounded: verdicts compare it
    return Coefficient(estimate, estimate - half, estimate + half, p_value, df)


def unanimous_p(clusters: int) -> float:
    """The two-sided p-value of the exact sign-flip (randomization) test of a mean over `clusters` clusters that all
    lie on one side of 0: of the 2^G equally likely sign patterns under the null, the two unanimous ones are as
    extreme, so p = 2^(1 - G) (`scipy.stats.binomtest(G, G)`), the smallest such a test can give; 1 for one
    cluster."""
    from scipy.stats import binomtest

    return float(binomtest(clusters, clusters).pvalue)


def cr2_projection(design: np.ndarray, groups: np.ndarray, index: int) -> tuple[np.ndarray, np.ndarray]:
    """The (n x G) matrix P whose column g maps any outcome to coefficient `index`'s CR2-adjusted score of cluster
    g (`groups`: 0 to G - 1 per row), M A_g r_g, and r, the coefficient's row of the design's pseudo-inverse (the
    estimate is r·y, its CR2 variance the sum of the squares of y·P)."""
    n = design.shape[0]
    inverse = np.linalg.pinv(design)
    row = inverse[index]
    hat = design @ inverse
    adjusted = np.zeros((n, int(groups.max()) + 1))
    for group in range(adjusted.shape[1]):
        rows = np.flatnonzero(groups == group)
        values, vectors = np.linalg.eigh(np.eye(len(rows)) - hat[np.ix_(rows, rows)])
        kept = vectors[:, values > NESTED]
        root = kept / np.sqrt(values[values > NESTED])  # A_g = root @ kept.T, the (pseudo-)inverse square root
        adjusted[rows, group] = root @ (kept.T @ row[rows])
    return adjusted - hat @ adjusted, row


def satterthwaite_df(projection: np.ndarray) -> float | None:
    """Bell and McCaffrey's degrees of freedom of the CR2 variance y'PP'y under independent errors of equal
    variance: tr(P'P)^2 / tr((P'P)^2) (G - 1 for the mean of G clusters of equal sizes, toward 1 as one cluster
    dominates); None when P is 0 (no cluster estimates the variance)."""
    gram = projection.T @ projection
    total = float(np.trace(gram))
    if total <= NO_SPREAD:
        return None
    return round(total ** 2 / float(np.sum(gram * gram)), 10)


def cr2_error(outcome: np.ndarray, projection: np.ndarray) -> float:
    """The CR2 standard error of the coefficient whose `cr2_projection` is `projection`."""
    return math.sqrt(float(np.sum((np.asarray(outcome, dtype=float) @ projection) ** 2)))
