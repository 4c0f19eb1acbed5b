"""The findings' inference (pipeline.analysis.statistics.inference): the hand-written CR2 standard error held to
statsmodels' HC2 (CR2 with one result per cluster) and to its definition computed with scipy's matrix square root on
clustered data with nested dummies, and the Bell-McCaffrey degrees of freedom held to their definition computed
directly (n x n) and to their closed form for equal clusters."""
from __future__ import annotations

import numpy as np
import pytest

from pipeline.analysis.statistics import inference


def _data(effect: float, clusters: int = 8, seed: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Clusters of 2 to 8 results (uneven), a flag, three rounds as dummies, and a cluster effect."""
    rng = np.random.default_rng(seed)
    sizes = 2 + np.arange(clusters) % 7
    groups = np.repeat(np.arange(clusters), sizes)
    n = len(groups)
    flag = rng.integers(0, 2, n).astype(float)
    rounds = rng.integers(0, 3, n)
    design = np.column_stack([np.ones(n), flag, rounds == 1, rounds == 2]).astype(float)
    outcome = design @ np.array([0.5, effect, -0.1, 0.3]) + rng.normal(0, 0.1, n) + rng.normal(0, 0.1, clusters)[groups]
    return outcome, design, groups


def _strata(design: np.ndarray) -> np.ndarray:
    """The round of each row of `_data`'s design (its dummies as labels)."""
    return np.where(design[:, 2] == 1, "b", np.where(design[:, 3] == 1, "c", "a"))


def _cr2_by_definition(outcome: np.ndarray, design: np.ndarray, groups: np.ndarray, index: int) -> float:
    """V = (X'X)^-1 (sum over g of X_g' A_g e_g e_g' A_g X_g) (X'X)^-1 with A_g = (I - H_gg)^(-1/2) (scipy's
    matrix power; its pseudo-inverse through the eigenvalues where I - H_gg is singular)."""
    from scipy.linalg import fractional_matrix_power
    bread = np.linalg.inv(design.T @ design)
    hat = design @ bread @ design.T
    residual = outcome - hat @ outcome
    meat = np.zeros((design.shape[1], design.shape[1]))
    for group in np.unique(groups):
        rows = groups == group
        block = np.eye(rows.sum()) - hat[np.ix_(rows, rows)]
        if np.linalg.matrix_rank(block) == len(block):
            root = np.real(fractional_matrix_power(block, -0.5))
        else:
            values, vectors = np.linalg.eigh(block)
            kept = values > 1e-10
            root = (vectors[:, kept] / np.sqrt(values[kept])) @ vectors[:, kept].T
        score = design[rows].T @ root @ residual[rows]
        meat += np.outer(score, score)
    return float(np.sqrt((bread @ meat @ bread)[index, index]))


def _bm_df_by_definition(design: np.ndarray, groups: np.ndarray, index: int) -> float:
    """Bell-McCaffrey: the CR2 variance is y'By with B = sum over g of b_g b_g', b_g = M E_g' A_g X_g (X'X)^-1 c
    (E_g' puts cluster g's rows in place); for y ~ N(X beta, I): E = tr(B), Var = 2 tr(B^2), df = 2 E^2 / Var (all
    n x n, no (n x G) projection)."""
    n, k = design.shape
    bread = np.linalg.inv(design.T @ design)
    hat = design @ bread @ design.T
    maker = np.eye(n) - hat
    contrast = np.eye(k)[index]
    total = np.zeros((n, n))
    for group in np.unique(groups):
        rows = np.flatnonzero(groups == group)
        values, vectors = np.linalg.eigh(np.eye(len(rows)) - hat[np.ix_(rows, rows)])
        kept = values > 1e-10
        root = (vectors[:, kept] / np.sqrt(values[kept])) @ vectors[:, kept].T
        weight = np.zeros(n)
        weight[rows] = root @ design[rows] @ bread @ contrast
        column = maker @ weight
        total += np.outer(column, column)
    return float(np.trace(total) ** 2 / np.trace(total @ total))


def test_with_one_result_per_cluster_cr2_is_statsmodels_hc2() -> None:
    import statsmodels.api as sm
    outcome, design, _ = _data(0.2)
    singles = np.arange(len(outcome))
    expected = sm.OLS(outcome, design).fit(cov_type="HC2")
    fitted = inference.coefficient(outcome, design[:, 1], _strata(design), singles, 0.05)
    assert fitted is not None
    assert fitted.estimate == pytest.approx(expected.params[1], rel=1e-10)
    for index in range(design.shape[1]):
        projection, row = inference.cr2_projection(design, singles, index)
        assert row @ outcome == pytest.approx(expected.params[index], rel=1e-10)
        assert inference.cr2_error(outcome, projection) == pytest.approx(expected.bse[index], rel=1e-9)


def test_cr2_on_clusters_is_its_definition_nested_dummies_included() -> None:
    outcome, design, groups = _data(0.2)
    for index in range(design.shape[1]):
        projection, _ = inference.cr2_projection(design, groups, index)
        assert inference.cr2_error(outcome, projection) == pytest.approx(
            _cr2_by_definition(outcome, design, groups, index), rel=1e-8)
    # a dummy for one cluster's results (a series within its submitter): I - H_gg is singular there
    nested = np.column_stack([design, (groups == 0).astype(float)])
    projection, _ = inference.cr2_projection(nested, groups, 1)
    assert inference.cr2_error(outcome, projection) == pytest.approx(
        _cr2_by_definition(outcome, nested, groups, 1), rel=1e-8)


def test_bell_mccaffrey_degrees_of_freedom_are_their_definition() -> None:
    _, design, groups = _data(0.2)
    for index in range(design.shape[1]):
        projection, _ = inference.cr2_projection(design, groups, index)
        assert inference.satterthwaite_df(projection) == pytest.approx(
            _bm_df_by_definition(design, groups, index), rel=1e-8)
    # the mean of G clusters of equal size: G - 1; one cluster of many results pulls them toward 1
    equal = np.repeat(np.arange(6), 3)
    ones = np.ones((len(equal), 1))
    assert inference.satterthwaite_df(inference.cr2_projection(ones, equal, 0)[0]) == pytest.approx(5)
    uneven = np.repeat(np.arange(6), [30, 1, 1, 1, 1, 1])
    df = inference.satterthwaite_df(inference.cr2_projection(np.ones((35, 1)), uneven, 0)[0])
    assert df is not None and 1 < df < 2.5


def test_coefficient_interval_and_p_are_one_t_with_those_degrees_of_freedom() -> None:
    from scipy import stats
    outcome, design, groups = _data(0.2)
    fitted = inference.coefficient(outcome, design[:, 1], _strata(design), groups, 0.05)
    assert fitted is not None
    error = _cr2_by_definition(outcome, design, groups, 1)
    df = _bm_df_by_definition(design, groups, 1)
    assert fitted.df == pytest.approx(df)
    assert fitted.p_value == pytest.approx(2 * stats.t.sf(abs(fitted.estimate) / error, df), rel=1e-6)
    half = stats.t.ppf(0.975, df) * error
    assert (fitted.low, fitted.high) == pytest.approx((fitted.estimate - half, fitted.estimate + half))
    # no effect: a large p; a strong one: a small p
    for effect, holds in ((0.0, lambda p: p > 0.05), (1.0, lambda p: p < 1e-4)):
        outcome, design, groups = _data(effect, clusters=12)
        fitted = inference.coefficient(outcome, design[:, 1], _strata(design), groups, 0.05)
        assert fitted is not None and holds(fitted.p_value), effect
