"""The forecast model: publication dates as time, the exponent within rounds and the drift between them, the
anchor on the latest round, a family from its sibling or its specifications, measured ratios, and the backtest that
forecasts each round from the earlier ones. Fixtures small enough to check every number by hand."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from pipeline.analysis.forecasting import backtest, models_artifact, siblings
from pipeline.analysis.forecasting import model as forecast_model
from pipeline.mlperf.catalogue import round_published
from pipeline.mlperf.hardware import accelerators
from tests.analysis.forecast_inputs import RULE, SERIES, results


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
