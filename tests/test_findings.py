"""The published study's findings as tests (pipeline.analysis.findings), on small fixtures with hand-checked numbers."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from pipeline.analysis import findings
from pipeline.core.errors import ParamsError
from pipeline.settings import Findings, settings_from

ROOT = Path(__file__).resolve().parents[1]

PARAMS = {"alpha": 0.05, "bootstrap": 200, "seed": 0, "bands": [2, 4, 8, 16], "moderate": [4, 16],
          "top_share": 0.2, "largest_share": 0.2, "superlinear_threshold": 1.05, "min_group": 5}
SETTINGS = Findings.model_validate(PARAMS)


def _series(name: str, counts: list[float], efficiencies: list[float], **extra: object) -> pd.DataFrame:
    base_time = 100.0
    minutes = [base_time / (efficiency * count / counts[0]) for count, efficiency in zip(counts, efficiencies)]
    return pd.DataFrame({"round": "v3.0", "submitter": name, "system": [f"{name}{int(c)}" for c in counts],
                         "series": name, "accelerator_count": counts, "time_to_train_min": minutes,
                         "scaling_efficiency": efficiencies, **extra})


def test_settings_name_the_missing_key_and_check_ranges() -> None:
    project = yaml.safe_load((ROOT / "params.yaml").read_text())
    for broken, message in [({key: value for key, value in PARAMS.items() if key != "min_group"},
                             r"findings\.min_group: is missing"),
                            ({**PARAMS, "alpha": 1.5}, r"findings\.alpha"),
                            ({**PARAMS, "bands": [8, 4]}, r"findings\.bands")]:
        with pytest.raises(ParamsError, match=message):
            settings_from({**project, "findings": broken})


def test_bootstrap_interval_by_hand_and_one_matrix_of_resamples() -> None:
    # every resample of a constant sample has the same median
    assert findings.bootstrap_interval([np.full(7, 2.5)], lambda a: np.median(a, axis=1), SETTINGS) == (2.5, 2.5)
    values = np.arange(10.0)
    # one (resamples x n) index draw is the same stream as one draw of n per resample
    rng = np.random.default_rng(SETTINGS.seed)
    medians = [np.median(values[rng.integers(0, 10, 10)]) for _ in range(SETTINGS.bootstrap)]
    expected = tuple(np.percentile(medians, [2.5, 97.5]))
    assert findings.bootstrap_interval([values], lambda a: np.median(a, axis=1), SETTINGS) == pytest.approx(expected)
    low, high = findings.bootstrap_interval([values, values + 3], lambda a, b: a.mean(axis=1) - b.mean(axis=1),
                                            SETTINGS)
    assert low < -3 < high
    with pytest.raises(ValueError, match="one value per resample"):
        findings.bootstrap_interval([values], np.median, SETTINGS)


@pytest.mark.parametrize("alternative", ["less", "greater"])
def test_signed_rank_p_equals_scipys_wilcoxon(alternative: str) -> None:
    from scipy import stats
    tied = np.array([-0.3, -0.3, -0.1, 0.2, -0.5, -0.1, 0.4, -0.2, -0.2, -0.6, 0.1, -0.4])  # exact permutation test
    untied = np.array([-0.31, -0.12, 0.05, -0.44, -0.27, 0.18, -0.09])  # scipy's exact distribution
    for values in (tied, untied):
        assert findings.signed_rank_p(values, alternative) == stats.wilcoxon(values, alternative=alternative).pvalue


def test_a_verdict_needs_the_test_and_the_interval_to_agree() -> None:
    assert findings._verdict(0.01, 0.99, 0.05, True) == findings.SUPPORTED
    assert findings._verdict(0.99, 0.01, 0.05, True) == findings.CONTRADICTED
    assert findings._verdict(0.2, 0.8, 0.05, True) == findings.INCONCLUSIVE
    assert findings._verdict(math.nan, math.nan, 0.05, True) == findings.INCONCLUSIVE
    assert findings._agree(findings.SUPPORTED, (0.1, 0.3), 0.0, True) == findings.SUPPORTED
    assert findings._agree(findings.SUPPORTED, (0.0, 0.3), 0.0, True) == findings.INCONCLUSIVE  # a tie: no
    assert findings._agree(findings.CONTRADICTED, (-0.3, -0.1), 0.0, True) == findings.CONTRADICTED


def test_sublinear_scaling_within_series() -> None:
    # six series, base efficiency 1 at 8 accelerators, the member at 16 below 1: every log efficiency is
    # negative, so the exact one-sided Wilcoxon p is 1 / 2**6
    frame = pd.concat([_series(f"s{i}", [8.0, 16.0], [1.0, 0.9 - 0.05 * i]) for i in range(6)], ignore_index=True)
    result = findings.sublinear(frame, SETTINGS)
    assert result["verdict"] == findings.SUPPORTED
    assert result["n"] == 6
    assert result["p_value"] == pytest.approx(1 / 64, rel=1e-3)
    assert result["median"] == pytest.approx(0.775)  # median of 0.9, 0.85, ..., 0.65
    assert result["high"] < 1
    assert [band["band"] for band in result["bands"]] == ["16+"]


def test_superlinear_series_contradict_and_ties_are_no_evidence() -> None:
    above = pd.concat([_series(f"s{i}", [8.0, 16.0], [1.0, 1.1 + 0.01 * i]) for i in range(6)], ignore_index=True)
    assert findings.sublinear(above, SETTINGS)["verdict"] == findings.CONTRADICTED
    linear = pd.concat([_series(f"s{i}", [8.0, 16.0], [1.0, 1.0]) for i in range(6)], ignore_index=True)
    assert findings.sublinear(linear, SETTINGS)["verdict"] == findings.INCONCLUSIVE


def test_efficiency_bands_hold_members_above_their_base() -> None:
    frame = pd.concat([_series("a", [2.0, 4.0, 8.0], [1.0, 0.9, 0.8]), _series("b", [4.0, 8.0], [1.0, 0.6])],
                      ignore_index=True)
    bands = findings.efficiency_bands(frame, SETTINGS)
    # 4: a's 0.9; 8 to 15: a's 0.8 and b's 0.6; too few for an interval
    assert [(b["band"], b["n"], b["median"]) for b in bands] == [("4 to 7", 1, 0.9), ("8 to 15", 2, 0.7)]
    assert bands[0]["low"] is None


def test_shrinking_gain_per_chip_is_a_sign_test_over_series() -> None:
    falling = pd.concat([_series(f"s{i}", [2.0, 4.0, 8.0], [1.0, 0.9, 0.7 + 0.01 * i]) for i in range(5)],
                        ignore_index=True)
    result = findings.diminishing(falling, SETTINGS)
    # five series of rho = -1: one-sided binomial p = 1 / 2**5
    assert (result["negative"], result["positive"]) == (5, 0)
    assert result["p_value"] == pytest.approx(1 / 32)
    assert result["verdict"] == findings.SUPPORTED
    two_counts = pd.concat([_series(f"s{i}", [2.0, 4.0], [1.0, 0.9]) for i in range(5)], ignore_index=True)
    assert findings.diminishing(two_counts, SETTINGS)["verdict"] == findings.INCONCLUSIVE


def _round(relative: list[float], counts: list[float], round_: str = "v3.0") -> pd.DataFrame:
    return pd.DataFrame({"round": round_, "round_efficiency": relative, "accelerator_count": counts})


def test_the_top_share_of_each_round_and_its_ties() -> None:
    frame = pd.concat([_round([1.0, 0.5, 0.5, 0.2, 0.1], [8, 8, 8, 8, 8]), _round([1.0, 0.3], [8, 8], "v4.0")],
                      ignore_index=True)
    # 20% of five is one result; of two, at least one
    assert findings.top_by_round(frame, 0.2).tolist() == [True, False, False, False, False, True, False]
    assert findings.top_by_round(frame, 0.4).tolist() == [True, True, True, False, False, True, False]


def test_moderate_counts_among_the_most_efficient_by_fisher_exact() -> None:
    # 25 results: the 5 most efficient all use 8 accelerators; 5 of the other 20 do (the rest 64). One-sided
    # Fisher: P(all 5 drawn from the 10 moderate ones) = C(10, 5) / C(25, 5) = 252 / 53130
    relative = [1.0 - 0.01 * i for i in range(25)]
    counts = [8.0] * 5 + [8.0] * 5 + [64.0] * 15
    frame = _round(relative, counts)
    result = findings.moderate(frame, findings.top_by_round(frame, 0.2), SETTINGS)
    assert result["p_value"] == pytest.approx(252 / 53130, rel=1e-3)
    assert (result["share_top"], result["share_all"]) == (1.0, 0.4)
    assert result["verdict"] == findings.SUPPORTED


def test_the_largest_of_each_round_are_above_its_smallest() -> None:
    frame = _round([1.0] * 6, [8, 8, 8, 8, 8, 8]).pipe(
        lambda f: pd.concat([f, _round([1.0] * 5, [1, 2, 4, 64, 512], "v4.0")], ignore_index=True))
    # a round of equal counts has no largest systems; in v4.0, 20% of five is the 512
    assert findings.largest_by_round(frame, 0.2).tolist() == [False] * 6 + [False, False, False, False, True]


def test_compare_groups_by_mann_whitney() -> None:
    # every value of the first group below the second: exact one-sided p = 1 / C(10, 5)
    first, second = np.arange(1.0, 6.0), np.arange(6.0, 11.0)
    verdict, p_value, interval = findings.compare_groups(first, second, SETTINGS, first_is_greater=False)
    assert verdict == findings.SUPPORTED
    assert p_value == pytest.approx(1 / 252)
    assert interval[1] < 0
    assert findings.compare_groups(first, second, SETTINGS, first_is_greater=True)[0] == findings.CONTRADICTED
    assert findings.compare_groups(first[:3], second, SETTINGS, True)[0] == findings.INCONCLUSIVE  # too few


def test_superlinear_cases_name_both_members_and_what_differs() -> None:
    frame = _series("H3C", [1.0, 4.0], [1.0, 1.3], n_nodes=[1.0, 1.0], accelerators_per_node=[1.0, 4.0],
                    host_cpu_model=["Xeon 8380", "Xeon 8358"])
    cases = findings.superlinear_cases(frame, 1.05)
    assert len(cases) == 1
    case = cases[0]
    assert (case["system"], case["base_system"], case["accelerators"], case["base_accelerators"]) == \
        ("H3C4", "H3C1", 4.0, 1.0)
    assert case["reason"] == ("superlinear within series: host CPU Xeon 8380 → Xeon 8358 (samples to converge not "
                              "in the logs)")
    assert case["explained_by"] == findings.WORK_UNKNOWN
    same = _series("x", [8.0, 16.0], [1.0, 1.2], n_nodes=[1.0, 1.0], accelerators_per_node=[8.0, 16.0])
    assert findings.likely_reason(same.iloc[0], same.iloc[1]).startswith("superlinear within series: same nodes")
