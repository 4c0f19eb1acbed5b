"""Forecasting a family from what it is: the accelerator specification table, the specifications' law, and the law
chosen for a new family on earlier first appearances alone, with the precision it assumes."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from pipeline.analysis.forecasting import model as forecast_model
from pipeline.analysis.forecasting import models_artifact, siblings
from pipeline.mlperf.catalogue import round_published
from pipeline.mlperf.hardware import accelerators
from pipeline.mlperf.hardware import freetext as parsers
from tests.analysis.forecast_inputs import results

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
