"""The findings' inference (pipeline.analysis.statistics.inference): statsmodels' clustered fit, and the vectorised
wild cluster bootstrap held to its definition (a loop refitting statsmodels' OLS on every draw) and to
statsmodels' CR1 t."""
from __future__ import annotations

import numpy as np
import pytest

from pipeline.analysis.statistics import inference


def _data(effect: float, clusters: int = 8, seed: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = 5 * clusters
    groups = np.repeat(np.arange(clusters), 5)
    flag = rng.integers(0, 2, n).astype(float)
    rounds = rng.integers(0, 3, n)
    design = np.column_stack([np.ones(n), flag, rounds == 1, rounds == 2]).astype(float)
    outcome = design @ np.array([0.5, effect, -0.1, 0.3]) + rng.normal(0, 0.1, n) + rng.normal(0, 0.1, clusters)[groups]
    return outcome, design, groups


def test_the_observed_t_is_statsmodels_cr1_t() -> None:
    import statsmodels.api as sm
    outcome, design, groups = _data(0.2)
    expected = sm.OLS(outcome, design).fit(cov_type="cluster", cov_kwds={"groups": groups})
    for index in range(design.shape[1]):
        projection, scale = inference.score_projection(design, groups, index)
        assert inference.t_values((outcome @ projection)[None, :], scale)[0] == pytest.approx(
            expected.tvalues[index], rel=1e-9)


def test_the_vectorised_bootstrap_is_the_loop_over_draws() -> None:
    import statsmodels.api as sm
    outcome, design, groups = _data(0.05)
    draws, index = 60, 1
    restricted = np.delete(design, index, axis=1)
    fitted = sm.OLS(outcome, restricted).fit().fittedvalues
    weights = np.random.default_rng(7).choice(inference.WEBB, size=(draws, 8))
    observed = sm.OLS(outcome, design).fit(cov_type="cluster", cov_kwds={"groups": groups}).tvalues[index]
    drawn = [sm.OLS(fitted + w[groups] * (outcome - fitted), design).fit(
        cov_type="cluster", cov_kwds={"groups": groups}).tvalues[index] for w in weights]
    expected = (1 + sum(abs(t) >= abs(observed) - 1e-9 for t in drawn)) / (draws + 1)
    assert inference.wild_cluster_p(outcome, design, groups, index, draws, 7) == pytest.approx(expected)


def test_a_strong_effect_reaches_the_floor_and_no_effect_does_not() -> None:
    outcome, design, groups = _data(1.0, clusters=12)
    assert inference.wild_cluster_p(outcome, design, groups, 1, 999, 0) == pytest.approx(1 / 1000)
    outcome, design, groups = _data(0.0, clusters=12)
    assert inference.wild_cluster_p(outcome, design, groups, 1, 999, 0) > 0.05
    # the same seed, the same p (byte-identical outputs)
    assert inference.wild_cluster_p(outcome, design, groups, 1, 999, 0) == \
        inference.wild_cluster_p(outcome, design, groups, 1, 999, 0)


def test_coefficient_interval_and_p_are_statsmodels() -> None:
    import statsmodels.api as sm
    outcome, design, groups = _data(0.2)
    strata = np.where(design[:, 2] == 1, "b", np.where(design[:, 3] == 1, "c", "a"))
    fitted = inference.coefficient(outcome, design[:, 1], strata, groups, 0.05, 199, 0)
    expected = sm.OLS(outcome, design).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    assert fitted is not None
    assert (fitted.estimate, fitted.p_value) == pytest.approx((expected.params[1], expected.pvalues[1]))
    assert (fitted.low, fitted.high) == pytest.approx(tuple(expected.conf_int(0.05)[1]))
    assert 0 < fitted.p_bootstrap <= 1
