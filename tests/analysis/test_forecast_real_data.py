"""Forecasts on this checkout's real outputs (each test skipped, saying so, before the stage it reads has run):
answers against the naive rule and trust, curves that never rise, GB300 as of v5.0, model inputs per benchmark."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from pipeline.analysis.forecasting import answers, backtest, models_artifact, summaries, trust
from pipeline.analysis.forecasting import model as forecast_model
from pipeline.core import paths
from pipeline.mlperf.catalogue import round_published
from tests.analysis.forecast_inputs import RULE
from tests.conftest import ROOT

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
