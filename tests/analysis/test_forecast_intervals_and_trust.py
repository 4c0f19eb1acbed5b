"""A forecast's interval and trust: the conformal half-width and its calibration on earlier rounds (weighted
between the benchmark and the others, widened with the distance outside the published counts), the comparison with
the naive rule, the method choice and the trust rule with its Clopper-Pearson coverage test."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import yaml

from pipeline.analysis.forecasting import answers, backtest, intervals, summaries, trust
from pipeline.analysis.forecasting import model as forecast_model
from pipeline.core.errors import ParamsError
from pipeline.mlperf.catalogue import round_published
from pipeline.settings import settings_from
from tests.analysis.forecast_inputs import RULE, evidence
from tests.conftest import ROOT


def test_conformal_half_width_is_the_rank_ceil_m_plus_1_times_level() -> None:
    def width(residuals: np.ndarray) -> float:
        return intervals.weighted_conformal_half_width(residuals, np.ones(len(residuals)), 0.9)

    assert width(np.arange(1.0, 11.0)) == 10.0  # ceil(11 x 0.9) = 10
    assert width(-np.arange(1.0, 20.0)) == 18.0  # ceil(20 x 0.9) = 18, |r|
    assert width(np.arange(1.0, 9.0)) == math.inf  # too few for 90%


def test_weighted_half_width_reaches_the_level_in_weight() -> None:
    # m = 10, target share 0.9 x 11 / 10 = 0.99: with no weight on the largest, the 9th already holds it all
    residuals = np.arange(1.0, 11.0)
    assert intervals.weighted_conformal_half_width(residuals, np.r_[np.ones(9), 0.0], 0.9) == 9.0
    # half the weight on the smallest: 0.5 + 8 x 0.5 / 9 = 0.944 at the 9th, 1 at the 10th
    assert intervals.weighted_conformal_half_width(residuals, np.r_[9.0, np.ones(9)], 0.9) == 10.0


def test_calibration_weights_share_between_the_benchmark_and_the_others() -> None:
    weights = intervals.calibration_weights(np.array(["a", "a", "b", "b", "b"]), "a")
    # own share 2 / (2 + 20) = 1/11 in halves, whatever their age; the others 10/11 in thirds
    assert weights == pytest.approx([1 / 22, 1 / 22, 10 / 33, 10 / 33, 10 / 33])
    alone = intervals.calibration_weights(np.array(["a", "a"]), "a")
    assert alone == pytest.approx([0.5, 0.5])  # no other benchmark: all the weight is the benchmark's


def test_an_interval_whose_low_end_rounds_to_zero_is_unbounded_below() -> None:
    low = answers.interval_low(np.log(np.array([3.6, 3.6])), np.array([0.1, 12.0]))
    assert low[0] == pytest.approx(3.6 * np.exp(-0.1)) and np.isnan(low[1])
    assert answers.interval_text(None, 563157.0) == "up to 5.63e+05 min (unbounded below)"
    assert answers.interval_text(3.26, 3.98) == "3.26 to 3.98 min"


def test_weighted_median_is_the_smallest_value_holding_half_the_weight() -> None:
    assert intervals.weighted_median(np.array([3.0, 1.0, 2.0, 4.0]), np.ones(4)) == 2.0  # the lower of two middles
    assert intervals.weighted_median(np.array([3.0, 1.0, 2.0]), np.array([1.0, 0.1, 0.1])) == 3.0


def _forecasts(fold: str, residuals: list[float], kind: str = forecast_model.FAMILY, method: str = forecast_model.MODEL,
               distance: float = 0.0) -> pd.DataFrame:
    count = len(residuals)
    return pd.DataFrame({"benchmark": "resnet", "fold": fold, "fold_time": round_published(fold),
                         "accelerator_family": "H100", "form_factor": "SXM", "submitter": "Acme",
                         "system": [f"s{index}" for index in range(count)], "accelerator_count": 8.0,
                         "time_to_train_min": np.exp(residuals), "rerun": False, "family_rounds": 3,
                         "family_count_min": 8.0, "family_count_max": 8.0,
                         "learned_from": "B200" if kind in forecast_model.NEW_FAMILY_KINDS else "",
                         "distance": distance, "scale": 0.1, "spread_log": 0.1,
                         "method": method, "kind": kind, "forecast_log": 0.0})[backtest.FORECAST_COLUMNS]


def test_calibration_uses_only_earlier_rounds() -> None:
    first = [0.01 * step for step in range(1, 11)]  # |residuals| 0.01 .. 0.10
    points = backtest.calibrate(pd.concat([_forecasts("v1.0", first), _forecasts("v1.1", [0.5, -0.05])],
                                          ignore_index=True), 0.9, RULE)
    points = points[points["method"] == forecast_model.MODEL]
    earliest, later = points[points["fold"] == "v1.0"], points[points["fold"] == "v1.1"]
    # v1.0 has nothing before it: uncalibrated, z(0.95) x scale = 1.645 x 0.1, which holds all ten
    assert (earliest["calibration"] == intervals.UNCALIBRATED).all() and earliest["inside_interval"].all()
    assert np.log(earliest["high_min"]).to_numpy() == pytest.approx(1.6449 * 0.1, abs=1e-4)
    # v1.1 on v1.0's ten residuals: the 10th smallest, 0.10: 0.5 is outside, -0.05 inside. v1.1's forecasts are
    # trusted (ten earlier ones, all inside, median error 5.6%) and no earlier one was: any trust's residuals
    assert (later["calibration"] == intervals.SAME_KIND_ANY_TRUST).all() and later["trusted"].all()
    assert np.log(later["high_min"]).to_numpy() == pytest.approx(0.10)
    assert later.sort_values("system")["inside_interval"].tolist() == [False, True]


def _history(frame: pd.DataFrame) -> intervals.ResidualHistory:
    return intervals.ResidualHistory.of(frame.assign(distance=frame.get("distance", 0.0),
                                                     scale=frame.get("scale", 1.0)))


def test_calibration_falls_back_to_other_benchmarks_and_kinds() -> None:
    history = _history(pd.DataFrame({"benchmark": "bert", "fold_time": 2021.5, "method": forecast_model.MODEL,
                                     "kind": forecast_model.FAMILY, "log_residual": np.arange(1.0, 11.0) / 100}))

    def calibrated(method: str, kind: str, time: float = 2022.0) -> tuple[float, str]:
        calibration = history.calibration("resnet", method, kind, 0.9, time)
        return calibration.q, calibration.q_source

    assert calibrated(forecast_model.MODEL, forecast_model.FAMILY) == (pytest.approx(0.10), intervals.SAME_KIND)
    assert calibrated(forecast_model.MODEL, forecast_model.SPECIFICATION)[1] == intervals.ANY_KIND
    assert calibrated(forecast_model.NAIVE_METHOD, forecast_model.NAIVE) == (pytest.approx(1.6449, abs=1e-4),
                                                                 intervals.UNCALIBRATED)
    # residuals of the target round itself or later are never used
    assert calibrated(forecast_model.MODEL, forecast_model.FAMILY, 2021.5)[1] == intervals.UNCALIBRATED


def test_the_interval_widens_with_the_distance_outside_the_published_counts() -> None:
    # A hundred forecasts inside the published counts miss by 0.1; ten extrapolated by d = 1 miss by 0.3. kappa
    # is the smallest of the grid whose normalised interval holds 90% of the extrapolated: the 100th of the 110
    # scores |r| / (1 + k d) is 0.1, and 0.1 (1 + 2 x 1) = 0.3 holds all ten at k = 2, none at k = 1.9.
    residuals = np.r_[np.full(100, 0.1), np.full(10, 0.3)]
    distances = np.r_[np.zeros(100), np.ones(10)]
    kappa, source = intervals.extrapolation_slope(residuals, distances, 0.9)
    assert kappa == pytest.approx(2.0) and source == "10 earlier extrapolations"
    assert intervals.extrapolation_slope(residuals[:105], distances[:105], 0.9)[0] == \
        intervals.DEFAULT_EXTRAPOLATION_SLOPE  # five extrapolations are too few
    history = _history(pd.DataFrame({"benchmark": "resnet", "fold_time": 2021.5, "method": forecast_model.MODEL,
                                     "kind": forecast_model.FAMILY, "log_residual": residuals, "distance": distances}))
    calibration = history.calibration("resnet", forecast_model.MODEL, forecast_model.FAMILY, 0.9, 2022.0)
    assert calibration.half_width(np.array([0.0, 1.0, 3.0]), 1.0) == pytest.approx([0.1, 0.3, 0.7])
    # a forecast of twice the scale (more spread between submitters, a less certain drift) twice as wide
    assert calibration.half_width(0.0, 2.0) == pytest.approx(0.2)
    # the method's slope worked out once for every group (the backtest, fit_benchmark) changes nothing
    slope = history.extrapolation_slope(forecast_model.MODEL, 0.9, 2022.0)
    assert slope == (kappa, source)
    assert history.calibration("resnet", forecast_model.MODEL, forecast_model.FAMILY, 0.9, 2022.0,
                               slope=slope) == calibration


def test_a_benchmark_with_many_earlier_residuals_is_calibrated_mostly_on_its_own() -> None:
    # resnet: 80 residuals of 0.05; bert: 20 of 0.5. resnet's share 80 / 100 = 0.8 < 0.9 x 101 / 100: the
    # interval reaches bert's 0.5; with 180 of its own (share 0.9 < 0.9045) still; with 400, 0.952: 0.05.
    def history(n_own: int) -> pd.DataFrame:
        return pd.DataFrame({"benchmark": ["resnet"] * n_own + ["bert"] * 20, "fold_time": 2021.5,
                             "method": forecast_model.MODEL, "kind": forecast_model.FAMILY,
                             "log_residual": [0.05] * n_own + [0.5] * 20})

    widths = [_history(history(n)).calibration("resnet", forecast_model.MODEL, forecast_model.FAMILY, 0.9, 2022.0).q
              for n in (80, 180, 400)]
    assert widths == pytest.approx([0.5, 0.5, 0.05])


def test_compare_summarises_answers_against_the_naive_rule_on_the_results_both_forecast() -> None:
    base = _forecasts("v1.1", [0.0] * 4).drop(columns=["forecast_log", "spread_log"])
    answers = base.assign(method=forecast_model.ANSWER, chosen=forecast_model.MODEL, ape_pct=[10.0, 10.0, 10.0, 50.0],
                          inside_interval=True, trusted=[True, True, False, False])
    model = answers.assign(method=forecast_model.MODEL, chosen="")
    naive = base.iloc[:3].assign(method=forecast_model.NAIVE_METHOD, kind=forecast_model.NAIVE,
                                 ape_pct=[5.0, 5.0, 20.0],
                                 inside_interval=[True, False, True], trusted=False)
    summary = summaries.compare(pd.concat([answers, model, naive]))
    assert (summary.answer.n, summary.answer.median_ape_pct, summary.naive.n) == (4, 10.0, 3)
    assert summary.common_n == 3 and summary.common_answer_median_ape_pct == 10.0
    assert summary.common_naive_median_ape_pct == 5.0 and summary.better == forecast_model.NAIVE_METHOD
    assert summary.naive.coverage == pytest.approx(2 / 3) and summary.methods == {forecast_model.MODEL: 4}
    assert (summary.trusted.n, summary.untrusted.n, summary.untrusted.median_ape_pct) == (2, 2, 30.0)
    assert summary.as_dict()["better"] == "naive"


def test_the_method_leaves_the_model_only_for_a_clearly_lower_error() -> None:
    base = _forecasts("v1.1", [0.0] * 3).drop(columns=["forecast_log", "spread_log"])

    def points(model: float, monotone: float, blend: float) -> pd.DataFrame:
        return pd.concat([base.assign(method=method, ape_pct=error) for method, error in
                          ((forecast_model.MODEL, model), (forecast_model.MONOTONE, monotone),
                           (forecast_model.BLEND, blend))])

    assert backtest.choose_method(points(10.0, 8.5, 9.0))[0] == forecast_model.MODEL  # 15% lower: not enough
    method, medians = backtest.choose_method(points(10.0, 7.9, 9.0))
    assert method == forecast_model.MONOTONE and medians == {forecast_model.MODEL: 10.0, forecast_model.MONOTONE: 7.9,
                                                       forecast_model.BLEND: 9.0}
    assert backtest.choose_method(points(10.0, 10.0, 10.0))[0] == forecast_model.MODEL  # a tie goes to the model
    assert backtest.choose_method(base.iloc[:0].assign(ape_pct=[]))[0] == forecast_model.MODEL  # no earlier fold


@pytest.mark.parametrize(("inside", "total", "consistent"), [(5, 5, True), (3, 10, False), (50, 50, True),
                                                              (70, 100, False), (90, 100, True)])
def test_coverage_is_judged_with_its_clopper_pearson_interval(inside: int, total: int, consistent: bool) -> None:
    assert trust.coverage_consistent(inside, total, (0.85, 0.95)) is consistent


def test_trust_rule_names_each_failed_condition() -> None:
    good = evidence(9, 10)
    assert trust.trust_reasons(3, 64, (8, 64), good, good, RULE) == []
    assert trust.trust_reasons(3, 128, (8, 64), good, good, RULE) == []  # twice the largest is allowed here
    [reason] = trust.trust_reasons(1, 64, (8, 64), good, good, RULE)
    assert reason == "results from 1 round (needs 2)"
    [reason] = trust.trust_reasons(3, 129, (8, 64), good, good, RULE)
    assert "outside the published 8 to 64" in reason
    assert "outside the published" in trust.trust_reasons(3, 4, (8, 64), good, good, RULE)[0]
    # too few of the family's own: the benchmark's forecasts of the kind decide, here badly covered
    [reason] = trust.trust_reasons(3, 64, (8, 64), evidence(3, 3), evidence(3, 10), RULE)
    assert reason.startswith("the benchmark's (the family has too few) backtest coverage 3 of 10")
    [reason] = trust.trust_reasons(3, 64, (8, 64), evidence(2, 2), evidence(4, 4), RULE)
    assert reason == "2 backtest forecasts of the family and 4 of its kind (needs 5)"
    [reason] = trust.trust_reasons(3, 64, (8, 64), evidence(9, 10, 25.0), good, RULE)
    assert reason == "the family's backtest median error 25% is above 20%"
    reasons = trust.trust_reasons(0, 64, None, evidence(0, 0, None), good, RULE)
    assert reasons == ["results from 0 rounds (needs 2)",
                       "no published results of the family or of one to learn from on this benchmark"]
    # a family new to the benchmark earns trust by the same rule: its sibling's rounds and counts, its kind's
    # evidence on every benchmark
    assert trust.trust_reasons(3, 64, (8, 64), evidence(0, 0, None), good, RULE, learned_from="GB200") == []
    reasons = trust.trust_reasons(1, 128, (8, 32), evidence(0, 0, None), evidence(8, 10, 25.0), RULE,
                                  learned_from="GB200")
    assert reasons == ["GB200's results (learned from) from 1 round (needs 2)",
                       "its kind's, on every benchmark (a family new to the benchmark) backtest median error 25% is "
                       "above 20%", "128 accelerators is outside GB200's published 8 to 32 (up to 2x the "
                       "largest allowed)"]


def test_trust_settings_come_from_params_and_are_checked() -> None:
    project = yaml.safe_load((ROOT / "params.yaml").read_text())
    trust = {"min_rounds": 2, "min_backtest_points": 5, "max_error": 0.2, "max_count_factor": 2,
             "coverage": [0.85, 0.95]}
    assert settings_from({**project, "decide": {**project["decide"], "trust": trust}}).decide.trust == RULE
    with pytest.raises(ParamsError, match=r"decide\.trust\.coverage"):
        settings_from({**project, "decide": {**project["decide"], "trust": {**trust, "coverage": [0.95, 0.85]}}})
    with pytest.raises(ParamsError, match=r"decide\.trust\.min_rounds: is missing"):
        settings_from({**project, "decide": {**project["decide"], "trust": {}}})
