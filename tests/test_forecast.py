"""Forecasts forward in time: the model, the naive rule, the backtest, the calibration, the trust rule and the
accelerator specification table. Fixtures are small enough to check every number by hand."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from pipeline.analysis import forecast
from pipeline.core.errors import ParamsError
from pipeline.mlperf import accelerators
from pipeline.mlperf import hardware as parsers
from pipeline.mlperf.catalogue import round_published
from pipeline.settings import Trust, settings_from

ROOT = Path(__file__).resolve().parents[1]
RULE = Trust(min_rounds=2, min_backtest_points=5, max_count_factor=2.0, coverage=(0.85, 0.95))


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
    fitted = forecast.fit(SERIES)
    assert fitted.pooled_exponent == pytest.approx(-0.5)
    assert fitted.units.loc[("H100", "SXM"), "exponent"] == pytest.approx(-0.5)  # shrunk towards itself
    assert fitted.drift_per_year == pytest.approx(math.log(0.8) / 0.5)
    assert fitted.rounds == ("v1.0", "v1.1")


def test_forecast_anchors_on_the_latest_round_and_applies_half_the_drift() -> None:
    fitted = forecast.fit(SERIES)
    query = pd.DataFrame({"accelerator_family": ["H100", "H100"], "form_factor": ["SXM", "SXM"],
                          "accelerator_count": [32.0, 4.0]})
    out = fitted.forecast(query, round_published("v2.0"))  # half a year after v1.1
    # 80 min at 8 (v1.1), x (32/8)^-0.5, x exp(0.5 x drift x 0.5) = 0.8^0.5
    assert np.exp(out["model_log"].to_numpy()) == pytest.approx([40 * 0.8 ** 0.5, 80 * 2 ** 0.5 * 0.8 ** 0.5])
    assert out["kind"].tolist() == [forecast.FAMILY, forecast.FAMILY]
    # naive: the best time at the nearest count of the latest round (80 min at 8), scaled linearly
    assert np.exp(out["naive_log"].to_numpy()) == pytest.approx([20.0, 160.0])


def test_a_family_seen_at_one_count_borrows_the_benchmark_exponent() -> None:
    train = pd.concat([SERIES, results([("v1.1", "B200", 8, 40.0)])])
    out = forecast.fit(train).forecast(pd.DataFrame({"accelerator_family": ["B200"], "form_factor": ["SXM"],
                                                     "accelerator_count": [32.0]}), round_published("v1.1"))
    assert out["kind"].iloc[0] == forecast.POOLED
    assert math.exp(out["model_log"].iloc[0]) == pytest.approx(40 * 4 ** -0.5)  # no time passes: no drift


def test_an_unseen_family_is_forecast_from_its_specifications() -> None:
    # One round, each family at 8 accelerators, time inversely proportional to peak BF16 TFLOPS.
    specs = accelerators.specifications()
    families = ["A100", "H100", "L40S", "V100", "MI250"]
    train = results([("v3.0", family, 8, 1e5 / specs.loc[family, "bf16_tflops"]) for family in families])
    fitted = forecast.fit(train)
    assert fitted.spec_coefficients is not None
    query = pd.DataFrame({"accelerator_family": ["MI300X", "Trainium2"], "form_factor": ["OAM", "unspecified"],
                          "accelerator_count": [8.0, 8.0]})
    out = fitted.forecast(query, round_published("v3.0"))
    assert out["kind"].tolist() == [forecast.SPECIFICATION, forecast.SPECIFICATION]
    # the bandwidth term is not needed to fit an exact law in the TFLOPS, so MI300X comes out exactly
    assert math.exp(out["model_log"].iloc[0]) == pytest.approx(1e5 / specs.loc["MI300X", "bf16_tflops"], rel=0.05)
    assert np.isnan(out["naive_log"]).all()  # the naive rule has nothing to go on


def test_backtest_forecasts_each_round_from_the_earlier_ones_and_leaves_reruns_out() -> None:
    frame = pd.concat([SERIES, results([("v2.0", "H100", 32, 30.0), ("v2.0", "H100", 8, 80.0)])],
                      ignore_index=True)
    frame.loc[4, "republished_of"] = "v1.1/Acme/H100-8-v1.1"  # as the features stage marks it
    forecasts = forecast.backtest_forecasts(frame)
    model = forecasts[forecasts["method"] == forecast.MODEL]
    # v1.1 from v1.0: 100 min at 8, no drift yet; v2.0 from v1.0 and v1.1: the republished 80 min at 8 is left out
    assert model["fold"].tolist() == ["v1.1", "v2.0"]
    assert np.exp(model["forecast_log"].to_numpy(dtype=float)) == pytest.approx([100.0, 40 * 0.8 ** 0.5])


def test_conformal_half_width_is_the_rank_ceil_m_plus_1_times_level() -> None:
    def width(residuals: np.ndarray) -> float:
        return forecast.weighted_conformal_half_width(residuals, np.ones(len(residuals)), 0.9)

    assert width(np.arange(1.0, 11.0)) == 10.0  # ceil(11 x 0.9) = 10
    assert width(-np.arange(1.0, 20.0)) == 18.0  # ceil(20 x 0.9) = 18, |r|
    assert width(np.arange(1.0, 9.0)) == math.inf  # too few for 90%


def test_weighted_half_width_reaches_the_level_in_weight() -> None:
    # m = 10, target share 0.9 x 11 / 10 = 0.99: with no weight on the largest, the 9th already holds it all
    residuals = np.arange(1.0, 11.0)
    assert forecast.weighted_conformal_half_width(residuals, np.r_[np.ones(9), 0.0], 0.9) == 9.0
    # half the weight on the smallest: 0.5 + 8 x 0.5 / 9 = 0.944 at the 9th, 1 at the 10th
    assert forecast.weighted_conformal_half_width(residuals, np.r_[9.0, np.ones(9)], 0.9) == 10.0


def test_calibration_weights_share_between_the_benchmark_and_the_others_and_decay_with_age() -> None:
    weights = forecast.calibration_weights(np.array(["a", "a", "b", "b", "b"]),
                                           np.array([2021.0, 2022.0, 2022.0, 2022.0, 2022.0]), "a", 2023.0)
    # own share 2 / (2 + 20) = 1/11, split 1:2 by age (two years and one year old); the others 10/11 in thirds
    assert weights == pytest.approx([1 / 33, 2 / 33, 10 / 33, 10 / 33, 10 / 33])
    alone = forecast.calibration_weights(np.array(["a", "a"]), np.array([2022.0, 2022.0]), "a", 2023.0)
    assert alone == pytest.approx([0.5, 0.5])  # no other benchmark: all the weight is the benchmark's


def _forecasts(fold: str, residuals: list[float], kind: str = forecast.FAMILY) -> pd.DataFrame:
    count = len(residuals)
    return pd.DataFrame({"benchmark": "resnet", "fold": fold, "fold_time": round_published(fold),
                         "accelerator_family": "H100", "form_factor": "SXM", "submitter": "Acme",
                         "system": [f"s{index}" for index in range(count)], "accelerator_count": 8.0,
                         "time_to_train_min": np.exp(residuals), "method": forecast.MODEL, "kind": kind,
                         "forecast_log": 0.0, "spread_log": 0.1})


def test_calibration_uses_only_earlier_rounds() -> None:
    first = [0.01 * step for step in range(1, 11)]  # |residuals| 0.01 .. 0.10
    points = forecast.calibrate(pd.concat([_forecasts("v1.0", first), _forecasts("v1.1", [0.5, -0.05])],
                                          ignore_index=True), 0.9)
    earliest, later = points[points["fold"] == "v1.0"], points[points["fold"] == "v1.1"]
    # v1.0 has nothing before it: uncalibrated, z(0.95) x spread = 1.645 x 0.1, which holds all ten
    assert (earliest["calibration"] == forecast.UNCALIBRATED).all() and earliest["inside_interval"].all()
    assert np.log(earliest["high_min"]).to_numpy() == pytest.approx(1.6449 * 0.1, abs=1e-4)
    # v1.1 on v1.0's ten residuals: the 10th smallest, 0.10: 0.5 is outside, -0.05 inside
    assert (later["calibration"] == forecast.SAME_KIND).all()
    assert np.log(later["high_min"]).to_numpy() == pytest.approx(0.10)
    assert later.sort_values("system")["inside_interval"].tolist() == [False, True]


def test_calibration_falls_back_to_other_benchmarks_and_kinds() -> None:
    history = pd.DataFrame({"benchmark": "bert", "fold_time": 2021.5, "method": forecast.MODEL,
                            "kind": forecast.FAMILY, "log_residual": np.arange(1.0, 11.0) / 100})

    def calibrated(method: str, kind: str) -> tuple[float, str]:
        return forecast.calibrated_half_width(history, "resnet", method, kind, 0.9, 1.0, 2022.0)

    assert calibrated(forecast.MODEL, forecast.FAMILY) == (pytest.approx(0.10), forecast.SAME_KIND)
    assert calibrated(forecast.MODEL, forecast.SPECIFICATION)[1] == forecast.ANY_KIND
    assert calibrated(forecast.NAIVE_METHOD, forecast.NAIVE) == (pytest.approx(1.6449, abs=1e-4),
                                                                 forecast.UNCALIBRATED)
    # residuals of the target round itself or later are never used
    assert forecast.calibrated_half_width(history, "resnet", forecast.MODEL, forecast.FAMILY, 0.9, 1.0,
                                          2021.5)[1] == forecast.UNCALIBRATED


def test_a_benchmark_with_many_earlier_residuals_is_calibrated_mostly_on_its_own() -> None:
    # resnet: 80 residuals of 0.05; bert: 20 of 0.5. resnet's share 80 / 100 = 0.8 < 0.9 x 101 / 100: the
    # interval reaches bert's 0.5; with 180 of its own (share 0.9 < 0.9045) still; with 400, 0.952: 0.05.
    def history(n_own: int) -> pd.DataFrame:
        return pd.DataFrame({"benchmark": ["resnet"] * n_own + ["bert"] * 20, "fold_time": 2021.5,
                             "method": forecast.MODEL, "kind": forecast.FAMILY,
                             "log_residual": [0.05] * n_own + [0.5] * 20})

    widths = [forecast.calibrated_half_width(history(n), "resnet", forecast.MODEL, forecast.FAMILY, 0.9, 1.0,
                                             2022.0)[0] for n in (80, 180, 400)]
    assert widths == pytest.approx([0.5, 0.5, 0.05])


def test_compare_names_the_better_method_on_the_results_both_forecast() -> None:
    base = _forecasts("v1.1", [0.0] * 4).drop(columns=["forecast_log", "spread_log"])
    model = base.assign(ape_pct=[10.0, 10.0, 10.0, 50.0], inside_interval=True)
    naive = base.iloc[:3].assign(method=forecast.NAIVE_METHOD, kind=forecast.NAIVE, ape_pct=[5.0, 5.0, 20.0],
                                 inside_interval=[True, False, True])
    summary = forecast.compare(pd.concat([model, naive]))
    assert (summary["model_n"], summary["model_median_ape_pct"], summary["naive_n"]) == (4, 10.0, 3)
    assert summary["common_n"] == 3 and summary["common_model_median_ape_pct"] == 10.0
    assert summary["common_naive_median_ape_pct"] == 5.0 and summary["better"] == forecast.NAIVE_METHOD
    assert summary["naive_coverage"] == pytest.approx(2 / 3)


def _points(inside: int, total: int) -> forecast.Evidence:
    return inside, total


@pytest.mark.parametrize(("inside", "total", "consistent"), [(5, 5, True), (3, 10, False), (50, 50, True),
                                                              (70, 100, False), (90, 100, True)])
def test_coverage_is_judged_with_its_clopper_pearson_interval(inside: int, total: int, consistent: bool) -> None:
    assert forecast.coverage_consistent(inside, total, (0.85, 0.95)) is consistent


def test_trust_rule_names_each_failed_condition() -> None:
    good = _points(9, 10)
    assert forecast.trust_reasons(3, 64, (8, 64), good, good, RULE) == []
    assert forecast.trust_reasons(3, 128, (8, 64), good, good, RULE) == []  # twice the largest is allowed
    [reason] = forecast.trust_reasons(1, 64, (8, 64), good, good, RULE)
    assert reason == "results from 1 round (needs 2)"
    [reason] = forecast.trust_reasons(3, 129, (8, 64), good, good, RULE)
    assert "outside the published 8 to 64" in reason
    assert "outside the published" in forecast.trust_reasons(3, 4, (8, 64), good, good, RULE)[0]
    # too few of the family's own: the benchmark's forecasts of the kind decide, here badly covered
    [reason] = forecast.trust_reasons(3, 64, (8, 64), _points(3, 3), _points(3, 10), RULE)
    assert reason.startswith("the benchmark's (the family has too few) backtest coverage 3 of 10")
    [reason] = forecast.trust_reasons(3, 64, (8, 64), _points(2, 2), _points(4, 4), RULE)
    assert reason == "2 backtest forecasts of the family and 4 of its kind (needs 5)"
    reasons = forecast.trust_reasons(0, 64, None, _points(0, 0), good, RULE)
    assert reasons == ["results from 0 rounds (needs 2)", "no published results of the family: specification-based"]


def test_trust_settings_come_from_params_and_are_checked() -> None:
    project = yaml.safe_load((ROOT / "params.yaml").read_text())
    trust = {"min_rounds": 2, "min_backtest_points": 5, "max_count_factor": 2, "coverage": [0.85, 0.95]}
    assert settings_from({**project, "decide": {**project["decide"], "trust": trust}}).decide.trust == RULE
    with pytest.raises(ParamsError, match=r"decide\.trust\.coverage"):
        settings_from({**project, "decide": {**project["decide"], "trust": {**trust, "coverage": [0.95, 0.85]}}})
    with pytest.raises(ParamsError, match=r"decide\.trust\.min_rounds: is missing"):
        settings_from({**project, "decide": {**project["decide"], "trust": {}}})


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


# --- the real data ------------------------------------------------------------------------------------------------

REAL_BACKTEST = ROOT / forecast.BACKTEST


@pytest.mark.skipif(not REAL_BACKTEST.is_file(), reason="the backtest stage has not run")
def test_real_backtest_is_calibrated_and_beats_the_naive_rule() -> None:
    points = pd.read_parquet(REAL_BACKTEST)
    overall = forecast.compare(points)
    assert 0.85 <= overall["model_coverage"] <= 0.95
    assert overall["common_model_median_ape_pct"] < overall["common_naive_median_ape_pct"]
    latest = forecast.compare(points[points["fold"] == "v5.1"])
    assert latest["model_n"] >= 50 and latest["better"] == forecast.MODEL


@pytest.mark.skipif(not REAL_BACKTEST.is_file(), reason="the backtest stage has not run")
def test_real_gb300_as_of_v5_0_is_a_specification_forecast_with_an_interval_and_reasons() -> None:
    from pipeline.analysis.scaling import model_inputs  # the real configurations exist when the backtest does
    from pipeline.settings import Analysis

    analysis = Analysis(benchmark="llama2_70b_lora", benchmarks=["llama2_70b_lora"], division="closed", rounds="all",
                        availability="all", min_configurations=2)
    configurations = pd.read_parquet(ROOT / "data/processed/configurations.parquet")
    frame = model_inputs(configurations[configurations["round"].map(round_published)
                                        <= round_published("v5.0")], analysis, "llama2_70b_lora")
    points = pd.read_parquet(REAL_BACKTEST)
    points = points[points["fold_time"] <= round_published("v5.0")]
    fitted = forecast.fit_benchmark("llama2_70b_lora", frame, points, 0.9)
    result = forecast.answer(fitted, "GB300", "unspecified", 512, RULE)
    assert result.kind == forecast.SPECIFICATION and result.specification_based and not result.trusted
    assert result.low_min < result.predicted_min < result.high_min and result.rounds[-1] == "v5.0"
    assert "no published results of the family: specification-based" in result.reasons
    # GB300 x 512 published 0.40 min in v5.1: inside the interval
    assert result.low_min < 0.403 < result.high_min
