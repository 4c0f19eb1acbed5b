"""Forecasts forward in time: the count curve, the model, the naive rule, the backtest, the calibration, the method
choice, the trust rule, the answers and the accelerator specification table. Fixtures are small enough to check
every number by hand; the last tests run on the real data when the pipeline has produced it."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
import yaml

from pipeline.analysis.forecasting import answers, backtest, intervals, models_artifact, siblings, summaries, trust
from pipeline.analysis.forecasting import curve as count_curve
from pipeline.analysis.forecasting import model as forecast_model
from pipeline.core import paths
from pipeline.core.errors import ParamsError, UsageError
from pipeline.mlperf.catalogue import round_published
from pipeline.mlperf.hardware import accelerators
from pipeline.mlperf.hardware import freetext as parsers
from pipeline.settings import DecideTrustSettings, settings_from
from tests.conftest import ROOT

RULE = DecideTrustSettings(min_rounds=2, min_backtest_points=5, max_error=0.2, max_count_factor=2.0,
                           coverage=(0.85, 0.95))


def results(rows: list[tuple[str, str, float, float]], submitter: str = "Acme") -> pd.DataFrame:
    """Model inputs from (round, family, count, minutes) rows, all SXM."""
    return pd.DataFrame([{"round": round_, "accelerator_family": family, "form_factor": "SXM",
                          "accelerator_count": float(count), "time_to_train_min": float(minutes),
                          "submitter": submitter, "system": f"{family}-{count:g}-{round_}", "republished_of": None}
                         for round_, family, count, minutes in rows])


# v1.0: t = 100 (n/8)^-0.5 at 8 and 32; v1.1: 20% faster at 8 (half a year later: June and December 2021).
SERIES = results([("v1.0", "H100", 8, 100.0), ("v1.0", "H100", 32, 50.0), ("v1.1", "H100", 8, 80.0)])


def test_round_dates_are_the_catalogues_publication_months() -> None:
    # v1.1 was published in December 2021, v5.1 in November 2025; v6.0 and v6.1 follow MLCommons' calendar.
    assert [round_published(name) for name in ("v0.6", "v0.7", "v1.0", "v1.1", "v5.0", "v5.1", "v6.0", "v6.1")] == \
        pytest.approx([2019.5, 2020.5, 2021 + 5 / 12, 2021 + 11 / 12, 2025 + 5 / 12, 2025 + 10 / 12, 2026 + 5 / 12,
                       2026 + 10 / 12])
    with pytest.raises(ValueError, match=r"vX\.Y"):
        round_published("2024")


def test_fit_takes_the_exponent_within_rounds_and_the_drift_between_them() -> None:
    fitted = forecast_model.fit(SERIES)
    assert fitted.pooled_exponent == pytest.approx(-0.5)
    assert fitted.units.loc[("H100", "SXM"), "exponent"] == pytest.approx(-0.5)  # shrunk towards itself
    # its own rate, log 0.8 per half year, applied at half strength (DRIFT_DAMPING)
    assert fitted.drift_per_year == pytest.approx(0.5 * math.log(0.8) / 0.5)
    assert fitted.rounds == ("v1.0", "v1.1")


def test_a_benchmark_with_one_round_takes_the_drift_pooled_over_the_earlier_rounds_of_all() -> None:
    # SERIES' only rate: log 0.8 per half year (v1.0 to v1.1), a first step; a benchmark with results of one
    # round has no rate of its own and takes every benchmark's first steps; one with its own rates is shrunk
    # towards the later steps, m / (m + DRIFT_PRIOR_WEIGHT) on its own; both damped (DRIFT_DAMPING).
    rate = math.log(0.8) / 0.5
    single = results([("v1.1", "B200", 8, 50.0), ("v1.1", "B200", 16, 30.0)])
    prior = forecast_model.pooled_drift({"resnet": SERIES, "bert": single}, round_published("v2.0"))
    assert prior == forecast_model.DriftPrior(first=pytest.approx(rate), later=None)
    assert forecast_model.pooled_drift({"resnet": SERIES}, round_published("v1.1")) == forecast_model.DriftPrior()
    assert forecast_model.fit(single, prior).drift_per_year == pytest.approx(forecast_model.DRIFT_DAMPING * rate)
    assert forecast_model.fit(single).drift_per_year == 0.0
    weight = 1 / (1 + forecast_model.DRIFT_PRIOR_WEIGHT)
    assert forecast_model.fit(SERIES, forecast_model.DriftPrior(later=-1.0)).drift_per_year == pytest.approx(
        forecast_model.DRIFT_DAMPING * (weight * rate + (1 - weight) * -1.0))
    # never positive: a benchmark getting slower is a change in who submits
    assert forecast_model.fit(single, forecast_model.DriftPrior(first=0.3)).drift_per_year == 0.0


def test_forecast_anchors_on_the_latest_round_and_applies_half_the_drift() -> None:
    fitted = forecast_model.fit(SERIES)
    query = pd.DataFrame({"accelerator_family": ["H100", "H100"], "form_factor": ["SXM", "SXM"],
                          "accelerator_count": [32.0, 4.0]})
    out = fitted.forecast(query, round_published("v2.0"))  # half a year after v1.1
    # 80 min at 8 (v1.1's level), x (32/8)^-0.5 (v1.0's shape), x exp(0.5 x drift x 0.5) = 0.8^0.5; within
    # 1% since the weak pull on v1.0's offset (ROUND_PRIOR_WEIGHT) leaves a trace of v1.0's level
    assert np.exp(out[forecast_model.MODEL].to_numpy()) == pytest.approx([40 * 0.8 ** 0.5, 80 * 2 ** 0.5 * 0.8 ** 0.5],
                                                                   rel=0.01)
    assert out["kind"].tolist() == [forecast_model.FAMILY, forecast_model.FAMILY]
    # naive: the best time at the nearest count of the latest round (80 min at 8), scaled linearly
    assert np.exp(out[forecast_model.NAIVE_METHOD].to_numpy()) == pytest.approx([20.0, 160.0])


def test_a_family_seen_at_one_count_borrows_the_benchmark_exponent() -> None:
    train = pd.concat([SERIES, results([("v1.1", "B200", 8, 40.0)])])
    out = forecast_model.fit(train).forecast(pd.DataFrame({"accelerator_family": ["B200"], "form_factor": ["SXM"],
                                                     "accelerator_count": [32.0]}), round_published("v1.1"))
    assert out["kind"].iloc[0] == forecast_model.POOLED
    assert math.exp(out[forecast_model.MODEL].iloc[0]) == pytest.approx(40 * 4 ** -0.5)  # no time passes: no drift


def test_an_unseen_family_is_forecast_from_its_sibling_else_its_specifications() -> None:
    # One round, each family at 8 accelerators, time inversely proportional to peak BF16 TFLOPS.
    specs = accelerators.specifications()
    families = ["A100", "H100", "L40S", "V100", "MI250"]
    train = results([("v3.0", family, 8, 1e5 / specs.loc[family, "bf16_tflops"]) for family in families])
    fitted = forecast_model.fit(train)
    assert fitted.spec_coefficients is not None
    query = pd.DataFrame({"accelerator_family": ["MI300X", "Trainium2"], "form_factor": ["OAM", "unspecified"],
                          "accelerator_count": [8.0, 8.0]})
    out = fitted.forecast(query, round_published("v3.0"))
    # MI300X from its sibling MI250 (AMD, OAM): without earlier first appearances to choose on, the simplest law,
    # its time over the two's peak dense BF16 TFLOPS; Trainium2 has no AWS sibling and comes from the regression
    # on specifications
    assert out["kind"].tolist() == [forecast_model.SIBLING, forecast_model.SPECIFICATION]
    assert math.exp(out[forecast_model.MODEL].iloc[0]) == pytest.approx(1e5 / specs.loc["MI300X", "bf16_tflops"])
    # with the compute and bandwidth law chosen (the drift prior carries the choice): their geometric mean
    law = siblings.LawChoice(law=siblings.COMPUTE_BANDWIDTH, cases=12)
    chosen = forecast_model.fit(train, forecast_model.DriftPrior(law=law)).forecast(query, round_published("v3.0"))
    ratio = math.sqrt(specs.loc["MI300X", "bf16_tflops"] * specs.loc["MI300X", "bandwidth_tbps"]
                      / (specs.loc["MI250", "bf16_tflops"] * specs.loc["MI250", "bandwidth_tbps"]))
    assert math.exp(chosen[forecast_model.MODEL].iloc[0]) == pytest.approx(
        1e5 / specs.loc["MI250", "bf16_tflops"] / ratio)
    # the bandwidth term is not needed to fit an exact law in the TFLOPS, so Trainium2 comes out exactly
    assert math.exp(out[forecast_model.MODEL].iloc[1]) == pytest.approx(1e5 / specs.loc["Trainium2", "bf16_tflops"],
                                                                        rel=0.05)
    assert np.isnan(out[forecast_model.NAIVE_METHOD]).all()  # the naive rule has nothing to go on


def test_pooled_drifts_at_many_times_are_each_times_own() -> None:
    # The backtest's priors (`pooled_drifts`: the rounds' times and the ratios' cells worked out once) equal the
    # prior of the results published before each time alone.
    resnet = pd.concat([SERIES, results([("v2.0", "H100", 8, 60.0), ("v2.0", "B200", 8, 30.0),
                                         ("v3.0", "H100", 8, 55.0), ("v3.0", "B200", 8, 25.0)])],
                       ignore_index=True)
    bert = results([("v1.1", "B200", 8, 50.0), ("v1.1", "H100", 8, 90.0), ("v2.0", "B200", 8, 40.0),
                    ("v2.0", "H100", 8, 70.0)])
    frames = {"resnet": resnet, "bert": bert}
    times = [round_published(name) for name in ("v1.1", "v2.0", "v3.0")]
    for time, prior in forecast_model.pooled_drifts(frames, times).items():
        earlier = {name: frame[frame["round"].map(round_published) < time] for name, frame in frames.items()}
        assert prior == forecast_model.pooled_drift(earlier, math.inf)


def test_row_groups_keep_the_rows_in_order_and_the_groups_in_order_of_appearance() -> None:
    groups = forecast_model.row_groups(["B", "A", "B", "A"], ["x", "x", "x", "y"])
    assert list(groups) == [("B", "x"), ("A", "x"), ("A", "y")]
    assert [rows.tolist() for rows in groups.values()] == [[0, 2], [1], [3]]


def test_measured_ratios_pair_median_times_per_round_and_count_then_benchmarks() -> None:
    # B200 / H200 on resnet: 0.5 at 8 (median log time of 4 and 6.25 against 10), 0.6 at 16 in v4.1; in v5.0 0.7
    # at 8 (a later round, left out before v5.0); preview results never count; bert: 0.8. Per benchmark the median
    # of its pairs, then the median over benchmarks.
    resnet = pd.concat([results([("v4.1", "H200", 8, 10.0), ("v4.1", "B200", 8, 4.0), ("v4.1", "B200", 8, 6.25),
                                 ("v4.1", "H200", 16, 5.0), ("v4.1", "B200", 16, 3.0), ("v5.0", "H200", 8, 10.0),
                                 ("v5.0", "B200", 8, 7.0)]).assign(availability="available_onprem"),
                        results([("v4.1", "B200", 32, 1.0), ("v4.1", "H200", 32, 10.0)]).assign(
                            availability="preview")], ignore_index=True)
    bert = results([("v4.1", "H200", 64, 10.0), ("v4.1", "B200", 64, 8.0)]).assign(availability="available_cloud")
    found = {(ratio.family, ratio.sibling): ratio
             for ratio in siblings.measured_ratios({"resnet": resnet, "bert": bert}, round_published("v5.0"))}
    resnet_ratio = (math.log(0.5) + math.log(0.6)) / 2
    assert found[("B200", "H200")].log_ratio == pytest.approx((resnet_ratio + math.log(0.8)) / 2)
    assert found[("B200", "H200")].benchmarks == 2
    assert found[("H200", "B200")].log_ratio == pytest.approx(-found[("B200", "H200")].log_ratio)
    assert siblings.measured_ratios({"resnet": resnet}, round_published("v4.1")) == ()
    # the drift prior carries them to every benchmark's fit: pooled_drift reads the same rounds
    assert forecast_model.pooled_drift({"resnet": resnet, "bert": bert}, round_published("v5.0")).ratios == \
        tuple(found[key] for key in sorted(found))


def test_a_new_family_takes_its_measured_ratio_to_its_sibling_over_their_specifications() -> None:
    # GB300 has no result on gpt3; its sibling GB200 has. Elsewhere (llama) GB300 trained in 0.8 of GB200's time,
    # where their specifications say 1: the forecast is GB200's curve x 0.8, kind MEASURED; without the measured
    # ratio (no prior), the specifications' law, kind SIBLING.
    gpt3 = results([("v5.0", "GB200", 64, 100.0), ("v5.0", "GB200", 128, 50.0)])
    llama = results([("v5.0", "GB200", 8, 10.0), ("v5.0", "GB300", 8, 8.0)])
    prior = forecast_model.pooled_drift({"gpt3": gpt3, "llama": llama}, round_published("v5.1"))
    # no earlier meeting judges the measured ratio: the simplest law alone
    assert not prior.law.measured and prior.ratios
    assert forecast_model.fit(gpt3, prior).forecast(pd.DataFrame({
        "accelerator_family": ["GB300"], "form_factor": ["Superchip"], "accelerator_count": [64.0]}),
        round_published("v5.0"))["kind"].iloc[0] == forecast_model.SIBLING
    # where earlier meetings of two families chose it (`siblings.choose_law`), the measured ratio
    prior = dataclasses.replace(prior, law=siblings.LawChoice(measured=True, measured_cases=5))
    query = pd.DataFrame({"accelerator_family": ["GB300"], "form_factor": ["Superchip"],
                          "accelerator_count": [64.0]})
    measured = forecast_model.fit(gpt3, prior).forecast(query, round_published("v5.0"))
    assert measured["kind"].iloc[0] == forecast_model.MEASURED
    assert math.exp(measured[forecast_model.MODEL].iloc[0]) == pytest.approx(80.0, rel=0.01)
    specified = forecast_model.fit(gpt3).forecast(query, round_published("v5.0"))
    assert specified["kind"].iloc[0] == forecast_model.SIBLING
    assert math.exp(specified[forecast_model.MODEL].iloc[0]) == pytest.approx(100.0, rel=0.01)
    # saved and read back with the model
    record = models_artifact.ForecasterRecord.of(forecast_model.fit(gpt3, prior))
    assert record.forecaster().forecast(query, round_published("v5.0")).equals(measured)


def test_the_backtest_never_measures_a_ratio_on_the_round_it_forecasts() -> None:
    # GB300 first appears on gpt3 in v5.1; tripling every v5.1 time (on both benchmarks, where GB300 and GB200
    # meet) changes no forecast of v5.1: the measured ratio comes from earlier rounds alone.
    gpt3 = results([("v5.0", "GB200", 64, 100.0), ("v5.0", "GB200", 128, 50.0), ("v5.1", "GB300", 64, 70.0),
                    ("v5.1", "GB200", 64, 90.0)])
    llama = results([("v4.1", "GB200", 8, 10.0), ("v4.1", "GB300", 8, 8.0), ("v5.0", "GB200", 8, 10.0),
                     ("v5.0", "GB300", 8, 8.0), ("v5.1", "GB200", 8, 9.0), ("v5.1", "GB300", 8, 5.0)])
    # bert's v5.0 meeting, measured on llama's v4.1 at 0.8 as published, chooses the measured ratio for v5.1
    bert = results([("v5.0", "GB200", 8, 10.0), ("v5.0", "GB300", 8, 8.0), ("v5.1", "GB200", 8, 9.0)])

    def forecasts(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
        points = backtest.backtest(frames, 0.9, RULE)
        return points[points["fold"] == "v5.1"][["benchmark", "accelerator_family", "method", "kind",
                                                 "predicted_min"]].reset_index(drop=True)

    tripled = {name: frame.assign(time_to_train_min=frame["time_to_train_min"].where(frame["round"] != "v5.1",
                                                                                     3 * frame["time_to_train_min"]))
               for name, frame in {"gpt3": gpt3, "llama": llama, "bert": bert}.items()}
    found = forecasts({"gpt3": gpt3, "llama": llama, "bert": bert})
    assert forecast_model.MEASURED in set(found["kind"])
    pd.testing.assert_frame_equal(found, forecasts(tripled))


def test_backtest_forecasts_each_round_from_the_earlier_ones_and_flags_reruns() -> None:
    frame = pd.concat([SERIES, results([("v2.0", "H100", 32, 30.0), ("v2.0", "H100", 8, 80.0)])],
                      ignore_index=True)
    frame.loc[4, "republished_of"] = "v1.1/Acme/H100-8-v1.1"  # as the features stage marks it
    forecasts = backtest.backtest_forecasts(frame)
    model = forecasts[forecasts["method"] == forecast_model.MODEL]
    # v1.1 from v1.0: 100 min at 8, no drift yet; v2.0 from v1.0 and v1.1: 80 min at 8 (v1.1) scaled to 32 and
    # kept at 8, with half the drift; the v2.0 result of 80 min at 8 repeats v1.1's: republished (marked), forecast
    # and flagged as a rerun; the scope (analysis.republished: exclude) leaves such rows out before the backtest
    assert model["fold"].tolist() == ["v1.1", "v2.0", "v2.0"]
    assert np.exp(model["forecast_log"].to_numpy(dtype=float)) == pytest.approx(
        [100.0, 40 * 0.8 ** 0.5, 80 * 0.8 ** 0.5], rel=0.01)  # within 1%: see the test above
    assert model["rerun"].tolist() == [False, False, True]
    assert set(forecasts["method"]) == set(forecast_model.METHODS)


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


def _points(inside: int, total: int, median: float | None = 5.0) -> trust.Evidence:
    return inside, total, median


@pytest.mark.parametrize(("inside", "total", "consistent"), [(5, 5, True), (3, 10, False), (50, 50, True),
                                                              (70, 100, False), (90, 100, True)])
def test_coverage_is_judged_with_its_clopper_pearson_interval(inside: int, total: int, consistent: bool) -> None:
    assert trust.coverage_consistent(inside, total, (0.85, 0.95)) is consistent


def test_trust_rule_names_each_failed_condition() -> None:
    good = _points(9, 10)
    assert trust.trust_reasons(3, 64, (8, 64), good, good, RULE) == []
    assert trust.trust_reasons(3, 128, (8, 64), good, good, RULE) == []  # twice the largest is allowed here
    [reason] = trust.trust_reasons(1, 64, (8, 64), good, good, RULE)
    assert reason == "results from 1 round (needs 2)"
    [reason] = trust.trust_reasons(3, 129, (8, 64), good, good, RULE)
    assert "outside the published 8 to 64" in reason
    assert "outside the published" in trust.trust_reasons(3, 4, (8, 64), good, good, RULE)[0]
    # too few of the family's own: the benchmark's forecasts of the kind decide, here badly covered
    [reason] = trust.trust_reasons(3, 64, (8, 64), _points(3, 3), _points(3, 10), RULE)
    assert reason.startswith("the benchmark's (the family has too few) backtest coverage 3 of 10")
    [reason] = trust.trust_reasons(3, 64, (8, 64), _points(2, 2), _points(4, 4), RULE)
    assert reason == "2 backtest forecasts of the family and 4 of its kind (needs 5)"
    [reason] = trust.trust_reasons(3, 64, (8, 64), _points(9, 10, 25.0), good, RULE)
    assert reason == "the family's backtest median error 25% is above 20%"
    reasons = trust.trust_reasons(0, 64, None, _points(0, 0, None), good, RULE)
    assert reasons == ["results from 0 rounds (needs 2)",
                       "no published results of the family or of one to learn from on this benchmark"]
    # a family new to the benchmark earns trust by the same rule: its sibling's rounds and counts, its kind's
    # evidence on every benchmark
    assert trust.trust_reasons(3, 64, (8, 64), _points(0, 0, None), good, RULE, learned_from="GB200") == []
    reasons = trust.trust_reasons(1, 128, (8, 32), _points(0, 0, None), _points(8, 10, 25.0), RULE,
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


# --- the count curve --------------------------------------------------------------------------------------------

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


# --- the specification table ----------------------------------------------------------------------------------

REQUIRED = ["A100", "H100", "H200", "B200", "B300", "GB200", "GB300", "L40S", "RTX Pro 6000", "MI300X", "MI325X",
            "MI350X", "MI355X", "Gaudi2", "Gaudi3", "TPU-v4", "TPU-v5e", "TPU-v5p", "TPU-v6e", "Trainium",
            "Trainium2", "Bow"]


def test_every_parsed_family_and_every_current_accelerator_has_specifications() -> None:
    table = accelerators.specifications()
    assert {family.name for family in parsers.ACCELERATOR_FAMILIES} <= set(table.index)
    assert set(REQUIRED) <= set(table.index)
    assert table.loc[REQUIRED, "bf16_tflops"].notna().all()  # the specification model can use them all
    assert table["source"].str.startswith("https://").all() and table["launch_year"].between(2017, 2025).all()
    # FP8 is at least BF16 where a part has it; dense H100 is half its 1979 sparse BF16 figure
    has_fp8 = table["fp8_tflops"].notna()
    assert (table.loc[has_fp8, "fp8_tflops"] >= table.loc[has_fp8, "bf16_tflops"]).all()
    assert table.loc["H100", "bf16_tflops"] == 989


def test_spec_features_are_logs_and_nan_for_the_unknown() -> None:
    features = accelerators.spec_features(pd.Series(["H100", "Bow", "Nope"]))
    assert features[0] == pytest.approx([math.log(989), math.log(3.35)])
    assert math.isnan(features[1, 1]) and np.isnan(features[2]).all()  # Bow: SRAM, no bandwidth figure


def test_the_specifications_law_is_the_geometric_mean_of_the_figures_both_families_have() -> None:
    """A100 against V100: 312 / 125 TFLOPS and 2.039 / 0.9 TB/s; Bow against GC200: throughput alone (neither has
    a bandwidth figure); a family outside the table has no law."""
    assert siblings.law_log_ratio("A100", "V100") == pytest.approx(-(math.log(312 / 125) + math.log(2.039 / 0.9)) / 2)
    assert siblings.law_log_ratio("B300", "B200") == 0.0
    assert siblings.law_log_ratio("Bow", "GC200") == pytest.approx(-math.log(87.5 / 62.5))
    assert math.isnan(siblings.law_log_ratio("Nope", "V100"))


# --- answers ------------------------------------------------------------------------------------------------------

def _fitted() -> answers.FittedBenchmark:
    """SERIES with a result off its power law (so the fit has a spread), fitted with no backtest behind it, as
    `predict` would load it for bert."""
    empty = pd.DataFrame(columns=backtest.POINT_COLUMNS)
    return answers.fit_benchmark("bert", pd.concat([SERIES, results([("v1.0", "H100", 16, 75.0)])]), empty, 0.9)


def test_answers_widen_outside_the_published_counts_and_say_extrapolated() -> None:
    fitted = _fitted()
    inside, beyond, far = (answers.answer(fitted, "H100", "SXM", count, RULE) for count in (32, 64, 2048))
    widths = [math.log(a.high_min / a.predicted_min) for a in (inside, beyond, far)]
    # uncalibrated q x (1 + kappa d) with the default kappa: d = 0, log 2 and log 64 beyond the largest, 32
    assert widths[0] > 0
    assert widths[1] == pytest.approx(widths[0] * (1 + math.log(64 / 32)))
    assert widths[2] == pytest.approx(widths[0] * (1 + math.log(2048 / 32)))
    assert not inside.extrapolated and not beyond.extrapolated and far.extrapolated  # RULE allows twice 32
    assert any(note.startswith("extrapolated: 2048 accelerators lies outside the published 8 to 32")
               for note in far.notes)
    assert any(note.startswith("outside the published counts of H100 SXM") for note in beyond.notes)
    assert far.count == 2048 and isinstance(far.model_dump()["count"], int)


def test_a_method_resting_on_the_naive_rule_is_trusted_only_within_the_latest_rounds_counts() -> None:
    fitted = _fitted()  # SERIES: v1.0 published 8, 16 and 32; its latest round, v1.1, only 8
    assert fitted.forecaster.latest_round_ranges == {"H100": (8.0, 8.0)}
    assert fitted.family_range("H100") == (8.0, 32.0)
    assert fitted.family_range("H100", forecast_model.MONOTONE) == (8.0, 8.0)
    good = _points(9, 10)
    [reason] = trust.trust_reasons(3, 32, (8, 8), good, good, RULE, latest_round_only=True)
    assert "outside the family's latest round's published 8 to 8" in reason
    assert trust.trust_reasons(3, 32, (8, 32), good, good, RULE) == []


@pytest.mark.parametrize(("count", "message"), [(2_000_000, "refused: more than 1,000,000"),
                                                (2.5, "a positive whole number"), (0, "a positive whole number")])
def test_absurd_and_fractional_counts_are_refused(count: float, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        answers.answer(_fitted(), "H100", "SXM", count, RULE)


def test_a_retired_benchmark_is_answered_as_history_naming_its_last_round() -> None:
    # bert's last round is v5.0: fitted up to v1.1 it still runs next round; fitted up to v5.0 it does not
    assert answers.retirement_note("bert", "v1.1") is None
    assert "retired from MLPerf Training after v5.0" in (answers.retirement_note("bert", "v5.0") or "")
    assert answers.retirement_note("llama2_70b_lora", "v5.1") is None  # still run


def test_published_times_rising_with_the_count_are_named() -> None:
    published = results([("v1.0", "H100", 8, 100.0), ("v1.0", "H100", 16, 120.0), ("v1.0", "H100", 32, 50.0)])
    note = answers.rising_published(published, "H100", "SXM", 12)
    assert note is not None and "v1.0: 100 min at 8, 120 min at 16" in note
    assert answers.rising_published(published, "H100", "SXM", 24) is None


# --- the real data ------------------------------------------------------------------------------------------------

REAL_BACKTEST = ROOT / backtest.BACKTEST
REAL_MODELS = sorted((ROOT / paths.DECIDE).glob("*.models.json"))


@pytest.mark.skipif(not REAL_BACKTEST.is_file(), reason="the backtest stage has not run")
def test_real_answers_beat_the_naive_rule_and_trust_separates() -> None:
    points = pd.read_parquet(REAL_BACKTEST)
    project = yaml.safe_load((ROOT / "params.yaml").read_text())["decide"]
    coverage = tuple(project["trust"]["coverage"])
    for scope in (points, points[points["fold"] == "v5.1"]):  # every fold, and the latest on its own
        comparison = summaries.compare(scope)
        assert comparison.better == forecast_model.ANSWER and comparison.common_n >= 80
        assert comparison.common_answer_median_ape_pct < comparison.common_naive_median_ape_pct
        assert comparison.trusted.p90_ape_pct < comparison.untrusted.p90_ape_pct
    # over every fold the trusted answers' p90 is at most half the untrusted ones' (v5.1 alone: 21% against 37%,
    # since new families' answers, untrusted, are now re-centred on earlier ones' errors)
    overall = summaries.compare(points)
    assert overall.trusted.p90_ape_pct <= overall.untrusted.p90_ape_pct / 2
    # analysis.republished: exclude (params.yaml) leaves republished results out of the backtest (issue 22);
    # bench/backtest.py prints it with them too
    assert not points["rerun"].any()
    answers = points[(points["method"] == forecast_model.ANSWER) & points["trusted"]]
    for benchmark, group in answers.groupby("benchmark"):
        assert trust.coverage_consistent(int(group["inside_interval"].sum()), len(group), coverage), benchmark


@pytest.mark.skipif(not REAL_MODELS, reason="the decide stage has not run")
def test_real_forecasts_never_rise_with_the_count_nor_gain_more_than_its_ratio() -> None:
    # The property of issue 24: every fitted family and form factor of every benchmark, as predict answers it
    # (the method chosen for the benchmark), from 1 accelerator to twice its largest published count.
    swept = 0
    for path in REAL_MODELS:
        fitted = models_artifact.read_models(path)
        if not isinstance(fitted, answers.FittedBenchmark):
            continue
        for (family, form_factor), largest in fitted.forecaster.units["count_max"].items():
            counts = np.arange(1.0, 2 * largest + 1)
            times = answers.answer_curve(fitted, family, form_factor, counts).log_minutes
            steps = times[:-1] - times[1:]
            assert np.all(steps >= -1e-9), (fitted.benchmark, family, form_factor)
            assert np.all(steps <= np.log(counts[1:] / counts[:-1]) + 1e-9), (fitted.benchmark, family, form_factor)
            swept += 1
    assert swept >= 100


@pytest.mark.skipif(not REAL_BACKTEST.is_file(), reason="the backtest stage has not run")
def test_real_gb300_as_of_v5_0_is_a_sibling_forecast_with_an_interval_and_reasons() -> None:
    from pipeline.settings import AnalysisSettings

    analysis = AnalysisSettings(benchmarks=["llama2_70b_lora"], division="closed", rounds="all",
                        availability="all", min_configurations=2)
    configurations = pd.read_parquet(ROOT / "data/processed/configurations.parquet")
    frame = forecast_model.model_inputs(configurations[configurations["round"].map(round_published)
                                                 <= round_published("v5.0")], analysis, "llama2_70b_lora")
    points = pd.read_parquet(REAL_BACKTEST)
    points = points[points["fold_time"] <= round_published("v5.0")]
    fitted = answers.fit_benchmark("llama2_70b_lora", frame, points, 0.9)
    result = answers.answer(fitted, "GB300", "unspecified", 512, RULE)
    # GB300 learns from its sibling GB200 (NVIDIA, Superchip), re-centred on earlier new families' errors
    assert result.kind == forecast_model.SIBLING and result.specification_based and not result.trusted
    assert result.low_min < result.predicted_min < result.high_min and result.rounds[-1] == "v5.0"
    # judged as any forecast, on what it learns from (GB200's rounds and counts) and its kind's evidence
    assert result.extrapolated and any("(learned from)" in reason for reason in result.reasons)
    assert result.backtest_error.startswith("a family's first round in a benchmark: backtest median error")
    # GB300 x 512 published 0.40 min in v5.1: inside the interval
    assert result.low_min < 0.403 < result.high_min


REAL_CONFIGURATIONS = ROOT / paths.CONFIGURATIONS


@pytest.mark.skipif(not REAL_CONFIGURATIONS.is_file(), reason="the features stage has not run")
@pytest.mark.parametrize("republished", ["exclude", "include"])
def test_real_model_inputs_from_each_benchmarks_own_rows_are_those_of_the_whole_table(republished: str) -> None:
    # The stages hand each worker its benchmark's rows alone (`model_inputs_by_benchmark`): the scope of one
    # benchmark, its round-relative metrics included, reads no other benchmark's rows.
    from pipeline.settings import AnalysisSettings

    analysis = AnalysisSettings(benchmarks="all", division="closed", rounds="all", availability="all",
                        min_configurations=2, republished=republished)
    configurations = pd.read_parquet(REAL_CONFIGURATIONS)
    frames = forecast_model.model_inputs_by_benchmark(analysis, configurations)
    assert len(frames) > 10
    for benchmark, frame in frames.items():
        pd.testing.assert_frame_equal(frame, forecast_model.model_inputs(configurations, analysis, benchmark),
                                      check_exact=True)


def _law_cases(rows: list[tuple[float, bool, float, float, float, float]]) -> pd.DataFrame:
    """First appearances (`siblings.first_appearances`) of (time, first, actual, bf16, bandwidth law, measured)."""
    return pd.DataFrame([{"fold": "v", "time": time, "benchmark": "b", "family": "f", "sibling": "s", "first": first,
                          "precision": "bf16", "actual": actual, siblings.BF16_COMPUTE: bf16,
                          siblings.PRECISION_COMPUTE: bf16, siblings.COMPUTE_BANDWIDTH: law,
                          siblings.MEASURED_LAW: measured}
                         for time, first, actual, bf16, law, measured in rows], columns=siblings.CASE_COLUMNS)


def test_the_law_is_chosen_on_earlier_first_appearances_alone() -> None:
    nan = math.nan
    cases = _law_cases([
        # 2023: the compute and bandwidth law misses by 0.05, BF16 compute by 0.3
        (2023.0, True, -0.5, -0.8, -0.55, nan), (2023.0, True, -0.4, -0.7, -0.45, nan),
        (2023.0, True, -0.6, -0.9, -0.65, nan),
        # 2024: BF16 compute exact, the law 0.2 slow, on five more; a meeting measured within 0.01
        *[(2024.0, True, -0.3, -0.3, -0.1, nan)] * 5, (2024.0, False, -0.2, -0.4, -0.1, -0.21),
        # 2025: the round forecast, never read by its own choice
        *[(2025.0, True, -0.1, -0.9, -0.1, nan)] * 20])
    # nothing before: the simplest law, no measured ratio
    first = siblings.choose_law(cases, 2023.0)
    assert (first.law, first.measured, first.cases) == (siblings.BF16_COMPUTE, False, 0)
    # on 2023's three: the bandwidth law (0.05 against 0.3); no meeting with a measured ratio
    assert siblings.choose_law(cases, 2024.0).law == siblings.COMPUTE_BANDWIDTH
    # on every first appearance before 2025 (eight): BF16 compute's median 0 against the law's 0.2; BF16 compute and
    # compute at the precision tie (same peaks), the simpler taken; the measured ratio beats it on the meeting
    chosen = siblings.choose_law(cases, 2025.0)
    assert (chosen.law, chosen.measured, chosen.cases, chosen.measured_cases) == (
        siblings.BF16_COMPUTE, True, 8, 1)
    assert dict(chosen.errors)[siblings.COMPUTE_BANDWIDTH] == pytest.approx(0.2)
    assert chosen.measured_error == pytest.approx(0.01) and chosen.law_error_on_measured == pytest.approx(0.2)
    assert "chosen on 8 earlier first appearances" in chosen.why()
    # the same cases with the round forecast changed choose the same: it never enters its own choice
    changed = cases.assign(actual=cases["actual"].where(cases["time"] < 2025.0, 5.0))
    assert siblings.choose_law(changed, 2025.0) == chosen


def test_first_appearances_pair_a_new_family_with_its_sibling_in_the_round() -> None:
    # GB300 first appears on llama in v5.1 beside GB200 (its sibling, results there before): one case, its actual
    # ratio the round's (4 / 5), each law's from the specification table; B200 never met GB200 on llama
    llama = results([("v5.0", "GB200", 8, 6.0), ("v5.1", "GB200", 8, 5.0), ("v5.1", "GB300", 8, 4.0),
                     ("v5.1", "GB300", 16, 2.0)])
    cases = siblings.first_appearances({"llama2_70b_lora": llama})
    assert cases[["fold", "family", "sibling", "first", "precision"]].values.tolist() == [
        ["v5.1", "GB300", "GB200", True, "fp8"]]
    assert cases["actual"].iloc[0] == pytest.approx(math.log(0.8))
    assert cases[siblings.BF16_COMPUTE].iloc[0] == pytest.approx(0.0)  # equal BF16 peaks
    # with a precision column, the sibling's precision there before the round: GB200 in NVFP4, the 4-bit peaks
    with_precision = llama.assign(precision=["nvfp4", "nvfp4", "fp8", "fp8"])
    case = siblings.first_appearances({"llama2_70b_lora": with_precision}).iloc[0]
    assert case["precision"] == "nvfp4" and case[siblings.PRECISION_COMPUTE] == pytest.approx(-math.log(1.5))
    assert siblings.assumed_precision("resnet", round_published("v5.1")) == "bf16"
    assert siblings.assumed_precision("flux1", round_published("v5.1")) == "fp8"
    assert siblings.assumed_precision("gpt3", round_published("v3.1")) == "bf16"  # before v4.0


def test_a_new_family_source_states_its_law_its_precision_and_why() -> None:
    chosen = siblings.LawChoice(law=siblings.PRECISION_COMPUTE, cases=40)
    source = siblings.new_family_source("MI355X", ["MI325X", "B200"], {}, chosen, "fp8")
    assert source is not None and (source.family, source.law, source.peak) == ("MI325X", chosen.law, "fp8_tflops")
    assert source.log_ratio == pytest.approx(-math.log(5033 / 2615))
    assert source.ratio_text() == ("the ratio of their dense FP8 peaks (0.520 of its time; the compute at the "
                                   "precision law, chosen on 40 earlier first appearances; the forecast assumes FP8 "
                                   "training)")
    # a 4-bit precision where the sibling has no 4-bit peak: the BF16 peaks, said so
    lacking = siblings.new_family_source("MI355X", ["MI325X"], {}, chosen, "mxfp4")
    assert lacking is not None and lacking.peak == "bf16_tflops" and "which one of them has no peak" in \
        lacking.ratio_text()
    # a measured ratio only where the choice takes it
    ratio = siblings.MeasuredRatio("GB300", "GB200", math.log(0.885), 4)
    assert siblings.new_family_source("GB300", ["GB200"], {("GB300", "GB200"): ratio}, chosen).measured is None
    taken = siblings.new_family_source("GB300", ["GB200"], {("GB300", "GB200"): ratio},
                                       dataclasses.replace(chosen, measured=True, measured_cases=65))
    assert taken is not None and taken.measured == ratio and "on 65 earlier meetings" in taken.ratio_text()


def test_a_precision_column_sets_the_precision_a_new_family_is_forecast_at() -> None:
    # GB200 trained llama in NVFP4: with compute at the precision chosen, GB300 (new there) takes the ratio of their
    # 4-bit peaks (15,000 / 10,000), said so; without the column, FP8 (a Llama benchmark from v4.0 on), equal peaks
    llama = results([("v5.0", "GB200", 8, 10.0), ("v5.0", "GB200", 16, 5.0)]).assign(benchmark="llama2_70b_lora")
    prior = forecast_model.DriftPrior(law=siblings.LawChoice(law=siblings.PRECISION_COMPUTE, cases=10))
    query = pd.DataFrame({"accelerator_family": ["GB300"], "form_factor": ["Superchip"], "accelerator_count": [8.0]})
    fp4 = forecast_model.fit(llama.assign(precision="nvfp4"), prior)
    assert fp4.precisions == (("GB200", "nvfp4"),)
    assert math.exp(fp4.forecast(query, round_published("v5.0"))[forecast_model.MODEL].iloc[0]) == pytest.approx(
        10.0 / 1.5, rel=0.01)
    source = fp4.source_of("GB300")
    assert source is not None and "dense 4-bit peaks (0.667 of its time" in source.ratio_text()
    assert "assumes NVFP4 training" in source.ratio_text()
    fp8 = forecast_model.fit(llama, prior)
    assert math.exp(fp8.forecast(query, round_published("v5.0"))[forecast_model.MODEL].iloc[0]) == pytest.approx(
        10.0, rel=0.01)
    assert "assumes FP8 training" in str(fp8.source_of("GB300").ratio_text())  # type: ignore[union-attr]
    # saved and read back with the model
    record = models_artifact.ForecasterRecord.of(fp4)
    assert record.forecaster().precisions == fp4.precisions and record.forecaster().law == fp4.law
