"""The count curve: an exact power law recovered and extended, never rising with the count nor gaining more than its
ratio, the isotonic regression where no slope bound binds, no lone submitter setting it, and an exact break-even."""
from __future__ import annotations

import math

import numpy as np
import pytest

from pipeline.analysis.forecasting import curve as count_curve


def test_count_curve_recovers_an_exact_power_law_and_extends_it_with_the_exponent() -> None:
    counts = np.array([8.0, 16, 32, 64])
    curve = count_curve.fit_count_curve(np.log(counts), np.log(100 * (counts / 8) ** -0.7), -0.7)
    assert np.exp(curve.log_time([8, 24, 64, 256])) == pytest.approx(100 * (np.array([8, 24, 64, 256]) / 8) ** -0.7)
    assert np.exp(curve.log_time(4.0)) == pytest.approx(100 * 0.5 ** -0.7)  # below the knots: the exponent too


@pytest.mark.parametrize("prior_weight", [0.0, count_curve.SLOPE_PRIOR_WEIGHT, 10.0])
def test_count_curve_never_rises_and_never_gains_more_than_the_count_ratio(prior_weight: float) -> None:
    # rising from 16 to 32, seven times faster from 32 to 64: the fit stays within its bounds (without a pull,
    # the robust fit takes the 70 for an outlier and falls linearly to 64)
    counts = np.array([8.0, 16, 32, 64])
    curve = count_curve.fit_count_curve(np.log(counts), np.log([100.0, 60.0, 70.0, 10.0]), -0.8,
                                     prior_weight=prior_weight)
    steps = np.diff(curve.log_times) / np.diff(curve.log_counts)
    assert np.all(steps <= 1e-12) and np.all(steps >= -1 - 1e-12)
    if prior_weight == 0:
        assert steps[-1] == pytest.approx(-1.0)
    n = np.arange(1.0, 200.0)
    times = curve.log_time(n)
    assert np.all(np.diff(times) <= 1e-12) and np.all(times[:-1] - times[1:] <= np.log(n[1:] / n[:-1]) + 1e-12)


def test_count_curve_without_a_pull_is_the_isotonic_regression_where_no_slope_bound_binds() -> None:
    # A library oracle: with a quadratic loss (a huge Huber scale), no pull and one result per count, the bounded
    # fit is scikit-learn's decreasing isotonic regression when the data never fall faster than linearly.
    from sklearn.isotonic import IsotonicRegression

    counts = np.array([2.0, 4, 8, 16, 32, 64, 128, 256])
    log_times = np.array([6.0, 5.7, 5.75, 5.3, 5.35, 5.36, 4.9, 4.6])  # three rises to pool
    assert np.all(np.diff(log_times) / np.diff(np.log(counts)) > -1)  # so the lower bound never binds
    curve = count_curve.fit_count_curve(np.log(counts), log_times, -0.5, prior_weight=0.0, scale=1e6)
    oracle = IsotonicRegression(increasing=False).fit_transform(np.log(counts), log_times)
    assert curve.log_times == pytest.approx(oracle, abs=1e-6)


def test_a_submitter_alone_at_large_counts_does_not_set_the_curve() -> None:
    # Four submitters at 8 and 16 (22 and 13 min); one of them also, alone, at 32 to 128, everywhere 2.5 times
    # slower than the others. Its offset, learnt where it shares counts, is taken off its lone results.
    counts = [8, 8, 8, 8, 16, 16, 16, 16, 32, 64, 128]
    submitters = ["A", "B", "C", "slow", "A", "B", "C", "slow", "slow", "slow", "slow"]
    typical = {8: 22.0, 16: 13.0, 32: 9.0, 64: 6.0, 128: 4.0}
    times = [typical[n] * (2.5 if who == "slow" else 1.0) for n, who in zip(counts, submitters)]
    curve = count_curve.fit_count_curve(np.log(counts), np.log(times), -0.7, submitters=np.array(submitters))
    assert np.exp(curve.log_time([8, 64, 128])) == pytest.approx([22.0, 6.0, 4.0], rel=0.15)
    alone = count_curve.fit_count_curve(np.log(counts), np.log(times), -0.7)  # without offsets: the slow one's
    assert np.exp(alone.log_time(64))[0] > 12


def test_break_even_is_exact_against_a_root_finder() -> None:
    from scipy.optimize import brentq

    curve = count_curve.CountCurve(np.log([8.0, 32, 128]), np.log([100.0, 30.0, 15.0]), -0.3)
    for floor in (0.9, 0.7, 0.5, 0.2):
        found = curve.break_even(floor, 8.0)
        assert found is not None
        oracle = math.exp(brentq(lambda x, level=floor: curve.efficiency(math.exp(x), 8.0)[0] - level, math.log(8), 20))
        assert found == pytest.approx(oracle, rel=1e-9)
    linear = count_curve.CountCurve(np.log([8.0, 16]), np.log([10.0, 5.0]), -1.0)
    assert linear.break_even(0.7, 8.0) is None
    assert curve.doubling_speedup(8.0)[0] == pytest.approx((100 / 30) ** 0.5)
