"""The published study's findings as tests (pipeline.analysis.statistics.findings), on small fixtures with hand-checked
numbers,
the cluster-robust interval against its formula, Holm against statsmodels, and the real configurations when they are
built."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
import yaml

from pipeline.analysis import scope
from pipeline.analysis.statistics import findings, superlinear
from pipeline.analysis.statistics.inference import coefficient
from pipeline.core.errors import ParamsError
from pipeline.core.paths import CONFIGURATIONS
from pipeline.settings import FindingsSettings, load_settings, settings_from
from tests.conftest import ROOT

PARAMS = {"alpha": 0.05, "bootstrap": 200, "seed": 0, "bands": [2, 4, 8, 16],
          "moderate": [4, 16],
          "top_share": 0.2, "largest_share": 0.2, "superlinear_threshold": 1.05, "min_group": 5,
          "min_submitters": 5, "latest_peak_share": 0.5}
SETTINGS = FindingsSettings.model_validate(PARAMS)


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
                            ({**PARAMS, "min_submitters": 1}, r"findings\.min_submitters"),
                            ({**PARAMS, "latest_peak_share": 0}, r"findings\.latest_peak_share"),
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


# The test engine

def test_cluster_robust_interval_and_p_follow_the_cr2_formula() -> None:
    from scipy import stats
    # intercept only, G clusters of equal size: estimate = mean; CR2 variance = sum over clusters of (sum of
    # residuals)^2 / (N^2 (1 - 1 / G)) (A_g scales the cluster's constant by 1 / sqrt(1 - N_g / N)), the same as
    # CR1 here, and Bell-McCaffrey's degrees of freedom are G - 1
    y = np.array([0.1, -0.3, -0.2, -0.5, 0.0, -0.4, -0.1, -0.6, -0.2, 0.05, -0.35, -0.15])
    clusters = np.array(["a", "a", "b", "b", "c", "c", "d", "d", "e", "e", "f", "f"])
    residual = y - y.mean()
    sums = pd.Series(residual).groupby(clusters).sum().to_numpy()
    groups, n = len(sums), len(y)
    error = math.sqrt(groups / (groups - 1) * (sums ** 2).sum() / n ** 2)
    fitted = coefficient(y, None, None, clusters, 0.05)
    assert fitted is not None
    assert fitted.estimate == pytest.approx(y.mean()) and fitted.df == pytest.approx(groups - 1)
    t = stats.t(groups - 1)
    assert fitted.p_value == pytest.approx(2 * t.sf(abs(y.mean()) / error))
    assert (fitted.low, fitted.high) == pytest.approx((y.mean() - t.ppf(0.975) * error,
                                                      y.mean() + t.ppf(0.975) * error))
    # one cluster, or no spread: no test
    assert coefficient(y, None, None, np.full(len(y), "a"), 0.05) is None
    assert coefficient(np.zeros(len(y)), None, None, clusters, 0.05) is None
    # every unit on one side by the same amount: no spread, a zero-width interval, and not p = 0 but the exact
    # sign-flip test's smallest p over the 6 clusters, 2 / 2^6
    unanimous = coefficient(np.full(len(y), 0.5), None, None, clusters, 0.05)
    assert unanimous is not None and unanimous.exact and unanimous.p_value == pytest.approx(2 / 2 ** 6)
    assert (unanimous.low, unanimous.high) == pytest.approx((0.5, 0.5))


def test_round_strata_compare_results_within_their_round() -> None:
    # in each round the flagged results are 0.2 above the rest; v4.0 is 5 higher and has more flagged results, so a
    # pooled comparison would credit the flag with the round; with a dummy per round the difference is 0.2
    def round_rows(level: float, flagged: int, rest: int) -> list[tuple[float, float]]:
        spread = [0.05 * (-1) ** i for i in range(max(flagged, rest))]
        return ([(level + 0.2 + spread[i], 1.0) for i in range(flagged)] +
                [(level + spread[i], 0.0) for i in range(rest)])
    rows = round_rows(0.0, 2, 6) + round_rows(5.0, 6, 2)
    outcome, flag = (np.array(column) for column in zip(*rows))
    strata = np.array(["v3.0"] * 8 + ["v4.0"] * 8)
    clusters = np.array([f"s{i % 6}" for i in range(16)])
    fitted = coefficient(outcome, flag, strata, clusters, 0.05)
    assert fitted is not None and fitted.estimate == pytest.approx(0.2)
    assert outcome[flag == 1].mean() - outcome[flag == 0].mean() > 2  # what the pooled difference would say
    # a flag that never varies within a round is not identified
    assert coefficient(outcome, (strata == "v4.0").astype(float), strata, clusters, 0.05) is None


def _submitters(frame: pd.DataFrame) -> int:
    return frame["submitter"].nunique()


def _pooled(frames: dict[str, pd.DataFrame]) -> dict[str, findings.Finding]:
    """Each benchmark's sublinear finding with the claim's one test of every benchmark together, not yet
    adjusted."""
    pooled = findings.pool_sublinear({name: [findings.sublinear(frame, SETTINGS)] for name, frame in frames.items()},
                                     SETTINGS)
    return {name: items[0] for name, items in pooled.items()}


def test_sublinear_is_one_sign_test_over_every_benchmarks_series_clustered_by_submitter() -> None:
    efficiencies = [0.9, 0.8, 0.85, 0.7, 0.95, 0.75]
    frame = pd.concat([_series(f"s{i}", [8.0, 16.0], [1.0, e]) for i, e in enumerate(efficiencies)],
                      ignore_index=True)
    result = _pooled({"resnet": frame})["resnet"]
    test, estimate = result.tests
    assert (test.n, test.submitters, test.scope) == (6, 6, findings.EVERY_BENCHMARK)
    assert test.estimate == pytest.approx(0.5)  # every series below linear: the share is one half above one half
    # no spread (every series wholly below linear): not p = 0, but the exact sign-flip p over 6 submitters
    assert test.p_raw == pytest.approx(2 / 2 ** 6) and test.df == pytest.approx(5)
    assert test.note == findings.NO_SPREAD and test.low == test.high == pytest.approx(0.5)
    assert "exact sign-flip p = 0.031" in test.evidence()
    # beside it, the benchmark's efficiency kept per doubling (each series one doubling): an estimate, no test
    assert estimate.descriptive and estimate.p_raw is None and estimate.verdict == findings.INCONCLUSIVE
    assert estimate.estimate == pytest.approx(math.exp(np.log(efficiencies).mean()))
    assert estimate.low < estimate.estimate < estimate.high < 1
    assert "(an estimate, not a test)" in estimate.evidence()
    # one series of two members, one above linear, counts a half; each series is one unit
    mixed = pd.concat([frame, _series("s0", [8.0, 16.0, 32.0], [1.0, 0.9, 1.1]).assign(series="s0b")],
                      ignore_index=True)
    shares = findings.series_efficiency(mixed).set_index("series")["sublinear_share"]
    assert shares["s0b"] == 0.5 and shares["s1"] == 1.0
    assert result.verdict == result.verdict_raw == findings.SUPPORTED  # not adjusted yet
    assert [band["band"] for band in result.bands] == ["16+"]
    # the same six series from four submitters: too few to test
    few = frame.assign(submitter=[f"s{min(i // 2, 3)}" for i in range(len(frame))])
    test, _ = _pooled({"resnet": few})["resnet"].tests
    assert test.p_raw is None and test.verdict == findings.INCONCLUSIVE
    assert test.note == "4 submitters, fewer than 5"
    assert "not tested, 4 submitters, fewer than 5 (n = 6, 4 submitters)" in test.evidence()
    # split over two benchmarks, the series are still tested together: 6 submitters, the same test on both
    split = _pooled({"resnet": frame[frame["submitter"] < "s3"], "bert": frame[frame["submitter"] >= "s3"]})
    assert split["resnet"].tests[0] == split["bert"].tests[0] == _pooled({"resnet": frame})["resnet"].tests[0]


def test_the_same_evidence_reads_the_same_on_every_benchmark() -> None:
    # issue 50: a benchmark whose series all agree (no spread) and one whose series agree in sign but not in size
    # read the same verdict, since the claim is one test; and a benchmark with no series of its own shows it too
    unanimous = pd.concat([_series(f"u{i}", [8.0, 16.0], [1.0, 0.8]) for i in range(6)], ignore_index=True)
    graded = pd.concat([_series(f"g{i}", [8.0, 16.0, 32.0], [1.0, 0.9, 0.8 - 0.02 * i]) for i in range(6)],
                       ignore_index=True)
    alone = _series("a0", [8.0], [1.0])
    found = {"one": [findings.sublinear(unanimous, SETTINGS)], "two": [findings.sublinear(graded, SETTINGS)],
             "three": [findings.sublinear(alone, SETTINGS)]}
    adjusted, correction = findings.across_benchmarks(found, SETTINGS)
    verdicts = {name: items[0].verdict for name, items in adjusted.items()}
    assert set(verdicts.values()) == {findings.SUPPORTED} and correction.tests == 1
    assert len({items[0].tests[0].p_adjusted for items in adjusted.values()}) == 1
    assert adjusted["three"][0].tests[1].note == "no series with members above their base"
    # renaming or reordering the benchmarks changes nothing
    renamed, _ = findings.across_benchmarks({"z": found["three"], "y": found["two"], "x": found["one"]}, SETTINGS)
    assert renamed["x"][0].as_json() == adjusted["one"][0].as_json()
    assert renamed["z"][0].as_json() == adjusted["three"][0].as_json()
    # two benchmarks with the same results read the same, tests and estimates alike
    twins, _ = findings.across_benchmarks({"a": findings.evaluate(_with_columns(graded), SETTINGS),
                                           "b": findings.evaluate(_with_columns(graded), SETTINGS)}, SETTINGS)
    assert [item.as_json() for item in twins["a"]] == [item.as_json() for item in twins["b"]]


def _with_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """A series fixture with the other columns `evaluate` reads."""
    return frame.assign(accelerator_family="H100", round_efficiency=1.0, host_cpu_cores=64.0,
                        interconnect_intra_gbps=900.0)


def test_superlinear_series_contradict_and_linear_ones_are_no_evidence() -> None:
    above = pd.concat([_series(f"s{i}", [8.0, 16.0], [1.0, 1.1 + 0.01 * i]) for i in range(6)], ignore_index=True)
    assert _pooled({"resnet": above})["resnet"].verdict == findings.CONTRADICTED
    linear = pd.concat([_series(f"s{i}", [8.0, 16.0], [1.0, 1.0]) for i in range(6)], ignore_index=True)
    assert _pooled({"resnet": linear})["resnet"].verdict == findings.INCONCLUSIVE


def test_shrinking_gain_per_chip_is_the_efficiency_ratio_per_doubling_within_series() -> None:
    # five series, members at 4, 8 and 16 accelerators with efficiency c x 0.9^log2(count) times a wiggle whose
    # slope is 0: the ratio per doubling is 0.9 exactly, whatever each series' level c
    wiggle = np.array([1.02, 1 / 1.02 ** 2, 1.02])
    frame = pd.concat([_series(f"s{i}", [2.0, 4.0, 8.0, 16.0],
                               [1.0, *(0.8 + 0.03 * i) * 0.9 ** np.array([2.0, 3.0, 4.0]) * wiggle])
                       for i in range(5)], ignore_index=True)
    result = findings.diminishing(frame, SETTINGS)
    (test,) = result.tests
    assert test.estimate == pytest.approx(0.9) and test.high < 1
    assert (test.n, test.submitters) == (15, 5)
    # the five series scale exactly alike (no spread): the exact sign-flip p over five submitters, 2 / 2^5, is the
    # smallest five can give, and not below 0.05
    assert test.note == findings.NO_SPREAD and test.p_raw == pytest.approx(2 / 2 ** 5)
    assert result.verdict == findings.INCONCLUSIVE
    # a sixth submitter's series, scaling a little worse: spread, the CR2 t test, and the claim holds
    sixth = _series("s5", [2.0, 4.0, 8.0, 16.0], [1.0, *0.8 * 0.88 ** np.array([2.0, 3.0, 4.0]) * wiggle])
    result = findings.diminishing(pd.concat([frame, sixth], ignore_index=True), SETTINGS)
    assert result.tests[0].note == "" and result.verdict == findings.SUPPORTED
    two_counts = pd.concat([_series(f"s{i}", [2.0, 4.0], [1.0, 0.9]) for i in range(5)], ignore_index=True)
    (test,) = findings.diminishing(two_counts, SETTINGS).tests
    assert test.p_raw is None and "0 series of three or more counts" in test.note


def test_shares_compare_the_top_with_the_rest_of_their_round() -> None:
    # two rounds of ten results from ten submitters, five marked top in each; 4 of 5 top vs 1 of 5 others are
    # flagged in v3.0, 3 of 5 vs 0 of 5 in v4.0: the difference in shares is 0.6 in both, so 0.6 overall
    frame = pd.DataFrame({"round": ["v3.0"] * 10 + ["v4.0"] * 10,
                          "submitter": [f"s{i % 10}" for i in range(20)]})
    top = pd.Series([True] * 5 + [False] * 5 + [True] * 5 + [False] * 5)
    flag = pd.Series([1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0], dtype=float)
    test = findings.Test("share flagged", "top minus rest", ratio=False, claim_above=True, n=0, submitters=0)
    result = findings.compare_groups(test, flag, top, frame, SETTINGS)
    assert result.estimate == pytest.approx(0.6) and (result.n, result.submitters) == (20, 5)  # five each side
    assert result.effect_text().startswith("+60 points (95% CI ")
    # four submitters on the top side: not tested
    narrow = frame.assign(submitter=[f"s{i % 4}" if top[i] else f"s{i % 10}" for i in range(20)])
    result = findings.compare_groups(test, flag, top, narrow, SETTINGS)
    assert result.p_raw is None and result.note == "4 submitters on one side, fewer than 5"


def test_latest_generation_is_the_newest_available_at_the_round_by_peak() -> None:
    cases = [("v0.6", "V100", 1.0), ("v0.6", "TPU-v3", 1.0), ("v1.0", "A100", 1.0), ("v2.1", "A100", 0.0),
             ("v2.1", "H100", 1.0), ("v3.0", "H100", 1.0), ("v3.0", "L4", 0.0), ("v3.1", "H100", 1.0),
             ("v3.1", "L40S", 0.0), ("v5.0", "B200", 1.0), ("v5.0", "H200", 0.0),
             ("v3.0", "Xeon Platinum 8480+ (CPU)", math.nan)]
    frame = pd.DataFrame(cases, columns=["round", "accelerator_family", "expected"])
    flags = findings.latest_generation(frame, 0.5)
    np.testing.assert_array_equal(flags.to_numpy(), frame["expected"].to_numpy())


def _finding(key: str, *p_values: float, estimate: float = 0.8) -> findings.Finding:
    tests = [findings.Test(f"test {i}", "ratio", ratio=True, claim_above=False, n=50, submitters=6,
                           estimate=estimate, low=estimate - 0.1, high=estimate + 0.1, p_raw=p, df=4.0)
             for i, p in enumerate(p_values)]
    raw = [test.direction() if test.p_raw is not None and test.p_raw < 0.05 else findings.INCONCLUSIVE
           for test in tests]
    return findings.Finding(key, "a test", tuple(dataclasses.replace(test, verdict_raw=verdict, verdict=verdict)
                                                 for test, verdict in zip(tests, raw)))


def test_holm_runs_over_every_test_of_every_benchmark() -> None:
    from statsmodels.stats.multitest import multipletests
    untested = findings.Finding("moderate", "a test", (findings.Test("t", "ratio", True, True, 3, 2,
                                                                      note="2 submitters, fewer than 5"),))
    found = {"resnet": [_finding("sublinear", 0.001), _finding("host", 0.004, 0.03), untested],
             "bert": [_finding("sublinear", 0.02), _finding("largest_fastest", 0.0002, estimate=1.3)]}
    adjusted, correction = findings.adjust(found, 0.05)
    expected = multipletests([0.001, 0.004, 0.03, 0.02, 0.0002], method="holm")[1]
    got = [test.p_adjusted for items in adjusted.values() for item in items for test in item.tests
           if test.p_raw is not None]
    assert got == pytest.approx(expected)  # 0.004, 0.016, 0.04, 0.04, 0.001
    resnet, bert = adjusted["resnet"], adjusted["bert"]
    assert resnet[0].verdict == findings.SUPPORTED
    assert resnet[1].verdict_raw == findings.SUPPORTED and resnet[1].verdict == findings.SUPPORTED
    assert bert[0].verdict == findings.SUPPORTED
    # an effect on the other side of the claim contradicts it
    assert bert[1].verdict == findings.CONTRADICTED
    assert resnet[2].verdict == findings.INCONCLUSIVE and resnet[2].tests[0].p_adjusted is None
    assert (correction.tests, correction.tests_supported_raw, correction.findings) == (5, 4, 5)
    assert (correction.findings_supported_raw, correction.findings_supported) == (3, 3)
    # a larger family: 0.03 no longer passes, and host needs both of its tests
    found["bert"] += [_finding("latest", 0.01), _finding("moderate", 0.012), _finding("diminishing", 0.02)]
    adjusted, correction = findings.adjust(found, 0.05)
    assert adjusted["resnet"][1].tests[1].verdict == findings.INCONCLUSIVE
    # saying why: the side, the submitters and degrees of freedom, and where the p fails
    assert adjusted["resnet"][1].tests[1].note == ("the effect is on the claimed side, but with 6 submitters, 4.0 "
                                                   "degrees of freedom its p = 0.03 does not survive Holm's "
                                                   "correction over the page's 8 tests")
    found["bert"] += [_finding("largest_inefficient", 0.2)]
    assert findings.adjust(found, 0.05)[0]["bert"][-1].tests[0].note.endswith("its p = 0.2 is not below 0.05")
    assert adjusted["resnet"][1].verdict == findings.INCONCLUSIVE and adjusted["resnet"][1].verdict_raw == "supported"
    assert "Holm-adjusted p = " in adjusted["resnet"][1].evidence()
    record = adjusted["resnet"][1].as_json()
    assert [(test["p_raw"], test["verdict"]) for test in record["tests"]] == [(0.004, "supported"),
                                                                              (0.03, "inconclusive")]
    assert correction.statement().startswith("Holm's correction over all 8 tests of the 2 benchmarks")


def test_a_finding_of_two_tests_needs_both() -> None:
    assert findings.combined([findings.SUPPORTED, findings.SUPPORTED]) == findings.SUPPORTED
    assert findings.combined([findings.SUPPORTED, findings.INCONCLUSIVE]) == findings.INCONCLUSIVE
    assert findings.combined([findings.SUPPORTED, findings.CONTRADICTED]) == findings.CONTRADICTED


@pytest.mark.skipif(not (ROOT / CONFIGURATIONS).is_file(), reason="run `dvc repro features` first")
def test_on_the_real_results_every_verdict_has_its_numbers_and_correction_only_removes() -> None:
    project = load_settings(ROOT / "params.yaml")
    configurations = pd.read_parquet(ROOT / CONFIGURATIONS)
    found = {benchmark: findings.evaluate(scope.in_scope(configurations, project.analysis, benchmark),
                                          project.findings)
             for benchmark in scope.analysed_benchmarks(project.analysis, configurations)}
    adjusted, correction = findings.across_benchmarks(found, project.findings)
    tests = [test for items in adjusted.values() for item in items for test in item.tests]
    tested = [test for test in tests if test.p_raw is not None]
    # the sublinear claim is one test, shown on every benchmark: it counts once
    shared = [test for test in tested if test.scope == findings.EVERY_BENCHMARK]
    assert len(shared) == len(adjusted) and len({(test.p_raw, test.p_adjusted, test.verdict) for test in shared}) == 1
    assert correction.tests == len(tested) - len(shared) + 1 > 1
    # issue 50: no test reports p = 0
    assert all(test.p_raw > 0 for test in tested)
    for test in tested:
        assert test.submitters >= project.findings.min_submitters and test.n > 0
        assert test.p_adjusted is not None and test.p_adjusted >= test.p_raw
        assert test.df is not None and test.df > 0
        assert test.low is not None and test.high is not None and test.low <= test.estimate <= test.high
        if test.verdict != findings.INCONCLUSIVE:
            assert test.verdict_raw == test.verdict
    assert all(test.verdict == findings.INCONCLUSIVE for test in tests if test.p_raw is None)
    assert correction.findings_supported <= correction.findings_supported_raw
    # the page's headline numbers are the corrected ones
    assert correction.findings_supported == sum(item.verdict == findings.SUPPORTED
                                                for items in adjusted.values() for item in items)


def test_efficiency_bands_hold_members_above_their_base() -> None:
    frame = pd.concat([_series("a", [2.0, 4.0, 8.0], [1.0, 0.9, 0.8]), _series("b", [4.0, 8.0], [1.0, 0.6])],
                      ignore_index=True)
    bands = findings.efficiency_bands(frame, SETTINGS)
    # 4: a's 0.9; 8 to 15: a's 0.8 and b's 0.6; too few for an interval
    assert [(b["band"], b["n"], b["median"]) for b in bands] == [("4 to 7", 1, 0.9), ("8 to 15", 2, 0.7)]
    assert bands[0]["low"] is None


def _round(relative: list[float], counts: list[float], round_: str = "v3.0") -> pd.DataFrame:
    return pd.DataFrame({"round": round_, "round_efficiency": relative, "accelerator_count": counts})


def test_the_top_share_of_each_round_and_its_ties() -> None:
    frame = pd.concat([_round([1.0, 0.5, 0.5, 0.2, 0.1], [8, 8, 8, 8, 8]), _round([1.0, 0.3], [8, 8], "v4.0")],
                      ignore_index=True)
    # 20% of five is one result; of two, at least one
    assert findings.top_by_round(frame, 0.2).tolist() == [True, False, False, False, False, True, False]
    assert findings.top_by_round(frame, 0.4).tolist() == [True, True, True, False, False, True, False]


def test_the_largest_of_each_round_are_above_its_smallest() -> None:
    frame = _round([1.0] * 6, [8, 8, 8, 8, 8, 8]).pipe(
        lambda f: pd.concat([f, _round([1.0] * 5, [1, 2, 4, 64, 512], "v4.0")], ignore_index=True))
    # a round of equal counts has no largest systems; in v4.0, 20% of five is the 512
    assert findings.largest_by_round(frame, 0.2).tolist() == [False] * 6 + [False, False, False, False, True]


def test_superlinear_cases_name_both_members_and_what_differs() -> None:
    # a series holds one system model (host CPU, accelerator memory) and its base has two accelerators or more
    frame = _series("H3C", [2.0, 8.0], [1.0, 1.3], n_nodes=[1.0, 2.0], accelerators_per_node=[2.0, 4.0],
                    host_cpu_model=["Xeon 8358", "Xeon 8358"])
    cases = superlinear.superlinear_cases(frame, 1.05)
    assert len(cases) == 1
    case = cases[0]
    assert (case.system, case.base_system, case.accelerators, case.base_accelerators) == \
        ("H3C8", "H3C2", 8.0, 2.0)
    assert case.reason == "superlinear within series: nodes 1 → 2 (samples to converge not in the logs)"
    assert case.explained_by == superlinear.WORK_UNKNOWN
    same = _series("x", [8.0, 16.0], [1.0, 1.2], n_nodes=[1.0, 1.0], accelerators_per_node=[8.0, 16.0])
    assert superlinear.likely_reason(same.iloc[0], same.iloc[1]).startswith("superlinear within series: same nodes")
