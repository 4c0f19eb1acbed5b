"""The published study's findings (BRIEF.md, "Its findings") as hypothesis tests, on every analysed benchmark.

Each finding is one or two tests, each a regression clustered by submitter
(`pipeline.analysis.statistics.inference`: the CR2 standard error with Bell-McCaffrey degrees of freedom, the
small-sample rule that keeps its size with 5 to 37 uneven clusters; the module gives the reasons and the
literature), so the results of one submitter, who shares hardware, software and tuning across them, count as one
cluster of evidence and not as independent draws. Comparisons across results of different rounds are stratified by
round (a dummy per round: each result is compared with the others of its round). Every p-value is two-sided;
`adjust` applies Holm's step-down correction (`statsmodels.stats.multitest.multipletests`) to the p-values of every
test of every benchmark on the page together. A test's verdict is "supported" when its Holm-adjusted p is below
`alpha` and the effect lies on the claimed side, "contradicted" when it lies on the other, "inconclusive" otherwise;
a test is not run (inconclusive) when fewer than `min_submitters` submitters, or fewer than `min_group` results,
stand on either side of its comparison. A finding of two tests (host) is supported when both are, contradicted when
either is.

- sublinear: one claim about MLPerf Training, tested once on every benchmark's series together (`pool_sublinear`),
  where the claim lives, within series: each series is one unit, its value the share of its members above the
  series' base whose efficiency against that base is below 1 (each member paired with its own base), and that
  share exceeds one half over the series (a clustered sign test: the series' values on a constant, clustered by
  submitter across benchmarks). Every benchmark shows that one verdict, so benchmarks with the same evidence read
  the same, and its own estimate beside it (descriptive, no test, so not in the correction's family): the
  efficiency its series keep per doubling of accelerators, the mean over members of log efficiency / log2(count /
  base), clustered by submitter, with its interval.
- diminishing: within a series, efficiency falls as accelerators are added: the slope of log efficiency on log2
  accelerator count among the members above the base, with a dummy per series (series of three counts or more),
  reported as the efficiency ratio per doubling.
- moderate / latest: within a round, the share of results with `moderate` accelerators (or of the latest
  generation, `latest_generation`) is higher among the `top_share` most hardware-efficient results
  (`round_efficiency`) than among the rest (a linear probability model: the difference in shares).
- host: those top results have more host CPU cores per node and faster intra-node links than the rest of their
  round (log value on the top flag: the ratio of geometric means), both.
- largest_fastest / largest_inefficient: the largest `largest_share` of each round by accelerator count train
  faster relative to the round's best time, and have a lower round-relative efficiency, than the rest of their
  round (ratio of geometric means).

Series lie within one round and one submitter, so the two scaling findings need no round strata. Thresholds,
sizes, the bootstrap of the efficiency bands (descriptive, no test) and its seed come from params `findings`.
An inconclusive test that ran says why: the side of its effect, its submitters and degrees of freedom, and whether
its p failed alpha before the correction or only after it.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from pipeline.analysis.statistics.findings_result import CLAIMS as CLAIMS
from pipeline.analysis.statistics.findings_result import CONTRADICTED as CONTRADICTED
from pipeline.analysis.statistics.findings_result import CORRECTION as CORRECTION
from pipeline.analysis.statistics.findings_result import EVERY_BENCHMARK as EVERY_BENCHMARK
from pipeline.analysis.statistics.findings_result import INCONCLUSIVE as INCONCLUSIVE
from pipeline.analysis.statistics.findings_result import NO_SPREAD as NO_SPREAD
from pipeline.analysis.statistics.findings_result import SUPPORTED as SUPPORTED
from pipeline.analysis.statistics.findings_result import VERDICTS as VERDICTS
from pipeline.analysis.statistics.findings_result import Correction as Correction
from pipeline.analysis.statistics.findings_result import EfficiencyBand as EfficiencyBand
from pipeline.analysis.statistics.findings_result import Finding as Finding
from pipeline.analysis.statistics.findings_result import FindingRecord as FindingRecord
from pipeline.analysis.statistics.findings_result import Test as Test
from pipeline.analysis.statistics.findings_result import combined as combined
from pipeline.analysis.statistics.findings_result import p_text, plain
from pipeline.core.features import ROUND_EFFICIENCY
from pipeline.settings import FindingsSettings

LAUNCH_OFFSET = 0.5  # a family counts as launched in the middle of its launch year (accelerators.csv)

REQUIRED = {"round", "submitter", "series", "accelerator_family", "accelerator_count", "time_to_train_min",
            "scaling_efficiency", ROUND_EFFICIENCY, "host_cpu_cores", "interconnect_intra_gbps"}

# ------------------------------------------------------------------------------------------ the test engine

def run_test(test: Test, outcome: np.ndarray, regressor: np.ndarray | None, strata: np.ndarray | None,
             clusters: np.ndarray, settings: FindingsSettings) -> Test:
    """`test` (its label, effect, scale, claimed side, n and submitters set) with the coefficient's estimate,
    interval, p-value, degrees of freedom and the verdict before correction filled in
    (`pipeline.analysis.statistics.inference.coefficient`; the note says when the units have no spread); not run
    when it has fewer than `min_submitters` submitters (the note says so) or the coefficient is not identified."""
    from pipeline.analysis.statistics.inference import coefficient

    if test.submitters < settings.min_submitters:
        return dataclasses.replace(test, note=f"{test.submitters} submitter{'s' if test.submitters != 1 else ''}, "
                                                   f"fewer than {settings.min_submitters}")
    fitted = coefficient(outcome, regressor, strata, clusters, settings.alpha)
    if fitted is None:
        return dataclasses.replace(test, note="no variation to test")
    scale: Callable[[float], float] = math.exp if test.ratio else float
    filled = dataclasses.replace(test, estimate=scale(fitted.estimate), low=scale(fitted.low),
                                 high=scale(fitted.high), p_raw=fitted.p_value, df=fitted.df)
    verdict = filled.direction() if fitted.p_value < settings.alpha else INCONCLUSIVE
    note = NO_SPREAD if fitted.exact else ""
    return dataclasses.replace(filled, verdict_raw=verdict, verdict=verdict, note=note)


def compare_groups(test: Test, values: pd.Series, group: pd.Series, frame: pd.DataFrame,
                   settings: FindingsSettings) -> Test:
    """A round-stratified, submitter-clustered comparison of `values` (one per row of `frame`, on the model's
    scale: a log or a 0/1 flag) between the rows where `group` is true and the rest; rows without a finite value
    are left out. Not run when either side has fewer than `min_group` results."""
    known = np.isfinite(values.to_numpy(dtype=float))
    rows, inside = frame[known], group[known].to_numpy(dtype=bool)
    sizes = (int(inside.sum()), int((~inside).sum()))
    submitters = min(rows.loc[inside, "submitter"].nunique(), rows.loc[~inside, "submitter"].nunique())
    test = dataclasses.replace(test, n=int(known.sum()), submitters=int(submitters))
    if min(sizes) < settings.min_group:
        return dataclasses.replace(test, note=f"{_results(min(sizes))} on one side, fewer than {settings.min_group}")
    if submitters < settings.min_submitters:
        return dataclasses.replace(test, note=f"{_results(submitters, 'submitter')} on one side, fewer than "
                                              f"{settings.min_submitters}")
    return run_test(test, values.to_numpy(dtype=float)[known], inside.astype(float), rows["round"].to_numpy(),
                    rows["submitter"].to_numpy(), settings)


# ------------------------------------------------------------------------------------------------- helpers

def bootstrap_interval(values: Sequence[np.ndarray], statistic: Callable[..., np.ndarray], settings: FindingsSettings,
                       confidence_level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval (at `confidence_level`) of a statistic of one or more samples, each resampled on
    its own; NaN when a sample is empty.

    `statistic` takes one (resamples x len(sample)) matrix per sample and returns one value per row, so all
    `settings.bootstrap` resamples are one numpy call (e.g. `lambda a: np.median(a, axis=1)`). The resamples of
    each sample are one (resamples x n) index matrix, drawn sample after sample.
    """
    if any(len(v) == 0 for v in values):
        return (math.nan, math.nan)
    rng = np.random.default_rng(settings.seed)
    resampled = [np.asarray(v)[rng.integers(0, len(v), (settings.bootstrap, len(v)))] for v in values]
    draws = np.asarray(statistic(*resampled), dtype=float)
    if draws.shape != (settings.bootstrap,):
        raise ValueError(f"a bootstrap statistic must give one value per resample (got shape {draws.shape})")
    tail = (1 - confidence_level) / 2 * 100
    low, high = np.nanpercentile(draws, [tail, 100 - tail])
    return (float(low), float(high))


def _row_median(sample: np.ndarray) -> np.ndarray:
    return np.median(sample, axis=1)


def _results(count: int, what: str = "result") -> str:
    return f"{count} {what}{'' if count == 1 else 's'}"


def _log(values: pd.Series) -> pd.Series:
    """Natural log of the positive values, NaN elsewhere."""
    numbers = values.astype(float)
    return np.log(numbers.where(numbers > 0))


# ------------------------------------------------------------------------------------------------- scaling

def scaled_members(frame: pd.DataFrame) -> pd.DataFrame:
    """Results with a within-series efficiency that are larger than their series' smallest member."""
    has = frame[frame["scaling_efficiency"].notna()]
    base = has.groupby("series")["accelerator_count"].transform("min")
    return has[has["accelerator_count"] > base]


def efficiency_bands(frame: pd.DataFrame, settings: FindingsSettings) -> list[dict[str, Any]]:
    """Median within-series efficiency (members above their base) per accelerator-count band, with its bootstrap
    interval and the share below 1 (descriptive: no test). Bands with fewer than `min_group` results are listed
    without an interval."""
    members = scaled_members(frame)
    edges = [*settings.bands, math.inf]
    rows = []
    for low, high in itertools.pairwise(edges):
        values = members.loc[(members["accelerator_count"] >= low) & (members["accelerator_count"] < high),
                             "scaling_efficiency"].to_numpy(float)
        if len(values) == 0:
            continue
        interval = bootstrap_interval([values], _row_median, settings) if len(values) >= settings.min_group \
            else (math.nan, math.nan)
        label = f"{low:g}+" if math.isinf(high) else f"{low:g} to {high - 1:g}"
        rows.append(plain({"band": label, "n": len(values), "median": float(np.median(values)),
                            "low": interval[0], "high": interval[1],
                            "share_below_1": float((values < 1).mean())}))
    return rows


def series_efficiency(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per series with members above its base: `series`, `submitter`, `members`, `log_efficiency` (the
    mean natural log of its members' scaling efficiency, each against the series' own base; 0 is linear) and
    `sublinear_share`, the share of its members below 1 (a member at exactly 1 counts half)."""
    members = scaled_members(frame)
    members = members.assign(log_efficiency=_log(members["scaling_efficiency"])).dropna(subset=["log_efficiency"])
    members = members.assign(sublinear_share=0.5 - np.sign(members["log_efficiency"]) / 2)
    return members.groupby("series", sort=True).agg(submitter=("submitter", "first"),
                                                    members=("log_efficiency", "size"),
                                                    log_efficiency=("log_efficiency", "mean"),
                                                    sublinear_share=("sublinear_share", "mean")).reset_index()


def sublinear(frame: pd.DataFrame, settings: FindingsSettings) -> Finding:
    """The sublinear speed-up finding of one benchmark's configurations (`frame`): its estimate (`doubling_estimate`)
    and its series' values (`Finding.units`), which `pool_sublinear` tests with every other benchmark's."""
    series = series_efficiency(frame)
    units = tuple((str(submitter), float(share) - 0.5)
                  for submitter, share in zip(series["submitter"], series["sublinear_share"]))
    return Finding("sublinear", SUBLINEAR_METHOD, (doubling_estimate(frame, settings),),
                   efficiency_bands(frame, settings), units)


SUBLINEAR_METHOD = ("one test on every benchmark's series together: paired within series, each series one unit (the "
                    "share of its members whose efficiency against the series' own base is below 1) against one "
                    "half, clustered by submitter; beside it the benchmark's own efficiency kept per doubling, an "
                    "estimate")


def doubling_estimate(frame: pd.DataFrame, settings: FindingsSettings) -> Test:
    """The efficiency one benchmark's series keep per doubling of accelerators (1: linear scaling; 0.8: a fifth of
    the hardware's work lost per doubling): exp of the mean over members above their base of log efficiency /
    log2(count / base), clustered by submitter (CR2 interval at 1 - alpha, `inference.coefficient`). Descriptive:
    an estimate with its interval, no test; without an interval where fewer than two submitters' series scale."""
    members = scaled_members(frame)
    base = frame[frame["scaling_efficiency"].notna()].groupby("series")["accelerator_count"].min()
    doublings = np.log2(members["accelerator_count"].to_numpy(float) / members["series"].map(base).to_numpy(float))
    per_doubling = _log(members["scaling_efficiency"]).to_numpy() / doublings
    known = np.isfinite(per_doubling)
    submitters = members.loc[known, "submitter"].to_numpy()
    test = Test("efficiency kept per doubling of accelerators, within series (this benchmark)", "ratio", ratio=True,
                claim_above=False, n=int(known.sum()), submitters=len(set(submitters)), descriptive=True)
    if not known.any():
        return dataclasses.replace(test, note="no series with members above their base")
    from pipeline.analysis.statistics.inference import coefficient

    fitted = coefficient(per_doubling[known], None, None, submitters, settings.alpha)
    if fitted is None:
        return dataclasses.replace(test, estimate=math.exp(float(per_doubling[known].mean())),
                                   note="no interval: fewer than two submitters' series scale")
    return dataclasses.replace(test, estimate=math.exp(fitted.estimate), low=math.exp(fitted.low),
                               high=math.exp(fitted.high), df=fitted.df)


def pool_sublinear(found: Mapping[str, Sequence[Finding]], settings: FindingsSettings) -> dict[str, list[Finding]]:
    """`found` (benchmark -> its findings) with the sublinear claim's one test, on every benchmark's series together
    (`Finding.units`: clustered by submitter across benchmarks), put first in each benchmark's sublinear finding: the
    same test, p and verdict on every page. Not run with fewer than `min_group` series or `min_submitters`
    submitters in all."""
    units = [unit for items in found.values() for item in items if item.key == "sublinear" for unit in item.units]
    submitters = np.array([submitter for submitter, _ in units], dtype=object)
    test = Test("share of within-series members below linear (series-weighted), over one half",
                "share minus one half", ratio=False, claim_above=True, n=len(units),
                submitters=len(set(submitters.tolist())), scope=EVERY_BENCHMARK)
    if len(units) < settings.min_group:
        test = dataclasses.replace(test, note=f"{len(units)} series with members above their base, fewer than "
                                              f"{settings.min_group}")
    else:
        test = run_test(test, np.array([value for _, value in units]), None, None, submitters, settings)
    return {benchmark: [dataclasses.replace(item, tests=(test, *item.tests)) if item.key == "sublinear" else item
                        for item in items]
            for benchmark, items in found.items()}


def diminishing(frame: pd.DataFrame, settings: FindingsSettings) -> Finding:
    """The shrinking-gain-per-chip finding: within series of three or more counts, log efficiency on log2 count with a
    dummy per series."""
    members = scaled_members(frame)
    counts = members.groupby("series")["accelerator_count"].transform("nunique")
    members = members[counts >= 2]  # the series has three counts or more, its base included
    test = Test("efficiency per doubling of accelerators, within series", "ratio", ratio=True, claim_above=False,
                n=len(members), submitters=int(members["submitter"].nunique()))
    n_series = members["series"].nunique()
    if n_series < settings.min_group:
        test = dataclasses.replace(test, note=f"{n_series} series of three or more counts, fewer than "
                                              f"{settings.min_group}")
    else:
        test = run_test(test, _log(members["scaling_efficiency"]).to_numpy(),
                        np.log2(members["accelerator_count"].to_numpy(float)), members["series"].to_numpy(),
                        members["submitter"].to_numpy(), settings)
    return Finding("diminishing", "slope of log efficiency on log2 accelerators with a dummy per series (members "
                   "above the base of series of three or more counts), clustered by submitter", (test,))


# ------------------------------------------------------------------------------------- the most efficient results

def top_by_round(frame: pd.DataFrame, share: float) -> pd.Series:
    """True for the best `share` of each round by round-relative hardware efficiency (at least one per round;
    results tied with the last one kept are kept too)."""
    efficiency = frame[ROUND_EFFICIENCY]
    ranks = efficiency.groupby(frame["round"]).rank(ascending=False, method="min")
    sizes = frame.groupby("round")["round"].transform("size")
    return (ranks <= np.maximum(1, np.floor(share * sizes))) & efficiency.notna()


def latest_generation(frame: pd.DataFrame, share: float) -> pd.Series:
    """1.0 where the result's accelerator is of the newest generation available at its round, 0.0 where it is
    not, NaN where its peak is unknown (CPUs, families without a BF16 figure in accelerators.csv).

    Newest generation: peak dense BF16 at least `share` of the highest peak among the families launched before
    the round was published (a family counts as launched in the middle of its `launch_year`,
    `pipeline.mlperf.catalogue.round_published` dates the round). So H100 is the latest generation in v3.0 and
    v3.1 (L4 and L40S, launched later, are a fraction of its peak) and A100 is not once H100 is out.
    """
    from pipeline.mlperf.catalogue import round_published
    from pipeline.mlperf.hardware.accelerators import specifications

    table = specifications()
    peak = frame["accelerator_family"].map(table["bf16_tflops"]).astype(float)
    launched = table["launch_year"].astype(float) + LAUNCH_OFFSET
    frontier = {round_: float(table.loc[launched < round_published(round_), "bf16_tflops"].max())
                for round_ in frame["round"].unique()}
    best = frame["round"].map(frontier).astype(float)
    return (peak >= share * best).astype(float).where(peak.notna() & best.notna())


def moderate(frame: pd.DataFrame, top: pd.Series, settings: FindingsSettings) -> Finding:
    """The moderate-count (4 to 16 accelerators) finding: their share among each round's most hardware-efficient results
    (`top`, a boolean per row) against the rest."""
    low, high = settings.moderate
    flag = frame["accelerator_count"].between(low, high).astype(float)
    test = Test(f"share with {low:g} to {high:g} accelerators", "top minus rest of the round", ratio=False,
                claim_above=True, n=0, submitters=0)
    return Finding("moderate", _share_method(settings), (compare_groups(test, flag, top, frame, settings),))


def latest(frame: pd.DataFrame, top: pd.Series, settings: FindingsSettings) -> Finding:
    """The latest-generation finding: the share of the newest generation available then among each round's most
    hardware-efficient results (`top`) against the rest."""
    flag = latest_generation(frame, settings.latest_peak_share)
    test = Test("share of the latest generation", "top minus rest of the round", ratio=False, claim_above=True,
                n=0, submitters=0)
    return Finding("latest", _share_method(settings) + f"; latest generation: peak BF16 at least "
                   f"{settings.latest_peak_share:g} of the best launched before the round",
                   (compare_groups(test, flag, top, frame, settings),))


def _share_method(settings: FindingsSettings) -> str:
    return (f"difference in shares between the round's most hardware-efficient {settings.top_share:.0%} and the "
            "rest (linear probability model with a dummy per round), clustered by submitter")


def host(frame: pd.DataFrame, top: pd.Series, settings: FindingsSettings) -> Finding:
    """The strong-host finding: host CPU cores per node and intra-node bandwidth of the most hardware-efficient results
    (`top`) against the rest; both tests must hold."""
    tests = []
    for column, label in (("host_cpu_cores", "host CPU cores per node"),
                          ("interconnect_intra_gbps", "intra-node link Gbit/s")):
        test = Test(label, "top / rest of the round (geometric means)", ratio=True, claim_above=True, n=0,
                    submitters=0)
        tests.append(compare_groups(test, _log(frame[column]), top, frame, settings))
    return Finding("host", "log value on the top flag with a dummy per round, clustered by submitter; both must "
                   "hold", tuple(tests))


# ------------------------------------------------------------------------------------------- the largest systems

def largest_by_round(frame: pd.DataFrame, share: float) -> pd.Series:
    """True for the results of each round whose accelerator count is in its largest `share` (by count rank) and
    above the round's smallest count."""
    counts = frame["accelerator_count"]
    ranks = counts.groupby(frame["round"]).rank(ascending=False, method="min")
    sizes = frame.groupby("round")["round"].transform("size")
    smallest = counts.groupby(frame["round"]).transform("min")
    return (ranks <= np.maximum(1, np.floor(share * sizes))) & (counts > smallest)


def largest(frame: pd.DataFrame, settings: FindingsSettings) -> list[Finding]:
    """The two largest-systems findings (fastest; least hardware-efficient) of each round's largest systems against the
    rest of the round, as ratios of geometric means."""
    big = largest_by_round(frame, settings.largest_share)
    relative_time = frame["time_to_train_min"] / frame.groupby("round")["time_to_train_min"].transform("min")
    method = (f"log value on the flag of the round's largest {settings.largest_share:.0%} by accelerators, with a "
              "dummy per round, clustered by submitter")
    found = []
    for key, values, label in (("largest_fastest", relative_time, "time over the round's best time"),
                               ("largest_inefficient", frame[ROUND_EFFICIENCY], "round-relative efficiency")):
        test = Test(label, "largest / rest of the round (geometric means)", ratio=True, claim_above=False, n=0,
                    submitters=0)
        found.append(Finding(key, method, (compare_groups(test, _log(values), big, frame, settings),)))
    return found


# -------------------------------------------------------------------------------------------------------- entry

def evaluate(frame: pd.DataFrame, settings: FindingsSettings) -> list[Finding]:
    """Every finding of `CLAIMS` tested on one benchmark's in-scope results (configurations.parquet columns), in
    the order of `CLAIMS`; p-values not yet adjusted (`adjust` does that over every benchmark of the page)."""
    missing = sorted(REQUIRED - set(frame.columns))
    if missing:
        raise ValueError(f"evaluate needs the columns {missing}")
    # Only the columns the tests read: every row selection below copies each column of the frame.
    frame = frame[sorted(REQUIRED)].reset_index(drop=True)
    top = top_by_round(frame, settings.top_share)
    return [sublinear(frame, settings), diminishing(frame, settings), moderate(frame, top, settings),
            latest(frame, top, settings), host(frame, top, settings), *largest(frame, settings)]


def adjust(found: Mapping[str, Sequence[Finding]], alpha: float) -> tuple[dict[str, list[Finding]], Correction]:
    """`found` (benchmark -> its findings) with every test's p-value adjusted by Holm's method over all the tests
    that ran, of all benchmarks together (a test of every benchmark together, `Test.scope`, counts once, and every
    page shows its one adjusted p), and the verdicts judged on the adjusted p; and the correction's summary."""
    places = [(benchmark, i, j) for benchmark, items in found.items() for i, item in enumerate(items)
              for j, test in enumerate(item.tests) if test.p_raw is not None]

    def test_key(benchmark: str, i: int, j: int) -> tuple[Any, ...]:
        """A benchmark's own test by its place, a test of every benchmark together by its scope and label."""
        test = found[benchmark][i].tests[j]
        return (test.scope, test.label) if test.scope else (benchmark, i, j)

    keys = [test_key(*place) for place in places]
    first: dict[tuple[Any, ...], tuple[str, int, int]] = {}
    for place, name in zip(places, keys):
        first.setdefault(name, place)
    from statsmodels.stats.multitest import multipletests

    raw = np.array([found[b][i].tests[j].p_raw for b, i, j in first.values()], dtype=float)
    adjusted = dict(zip(first, multipletests(raw, method="holm")[1] if len(raw) else raw))
    result = {benchmark: list(items) for benchmark, items in found.items()}
    for (benchmark, i, j), key in zip(places, keys):
        item = result[benchmark][i]
        test, p_value = item.tests[j], adjusted[key]
        verdict = test.direction() if p_value < alpha else INCONCLUSIVE
        note = test.note if verdict != INCONCLUSIVE else inconclusive_reason(test, alpha, len(first))
        tests = (*item.tests[:j], dataclasses.replace(test, p_adjusted=float(p_value), verdict=verdict, note=note),
                 *item.tests[j + 1:])
        result[benchmark][i] = dataclasses.replace(item, tests=tests)
    every = [item for items in result.values() for item in items]
    tests_run = list({key: result[b][i].tests[j] for (b, i, j), key in zip(places, keys)}.values())
    return result, Correction(
        CORRECTION, alpha, len(found), len(tests_run), sum(test.verdict_raw == SUPPORTED for test in tests_run),
        sum(test.verdict == SUPPORTED for test in tests_run), len(every),
        sum(item.verdict_raw == SUPPORTED for item in every), sum(item.verdict == SUPPORTED for item in every))


def across_benchmarks(found: Mapping[str, Sequence[Finding]], settings: FindingsSettings
                      ) -> tuple[dict[str, list[Finding]], Correction]:
    """Every benchmark's findings (`evaluate`'s, by benchmark) concluded together: the sublinear claim tested once on
    every benchmark's series (`pool_sublinear`), then every p-value corrected (`adjust`)."""
    return adjust(pool_sublinear(found, settings), settings.alpha)


def inconclusive_reason(test: Test, alpha: float, tests: int) -> str:
    """Why a test that ran reads inconclusive: the side of its effect, the submitters and degrees of freedom it
    rests on, and whether its p already fails `alpha` or fails only Holm's correction over the page's `tests`."""
    side = "on the claimed side" if test.direction() == SUPPORTED else "against the claim"
    assert test.p_raw is not None and test.df is not None
    evidence = f"{_results(test.submitters, 'submitter')}, {test.df:.1f} degrees of freedom"
    if test.p_raw >= alpha:
        return f"the effect is {side}, but with {evidence} its p = {p_text(test.p_raw)} is not below {alpha:g}"
    return (f"the effect is {side}, but with {evidence} its p = {p_text(test.p_raw)} does not survive {CORRECTION}'s "
            f"correction over the page's {tests} tests")


def summary(found: Sequence[FindingRecord]) -> dict[str, int]:
    """One benchmark's verdict counts after correction, supported before it, and its tests run (scalars for `dvc
    metrics`)."""
    return {**{f"findings_{verdict}": sum(item.verdict == verdict for item in found) for verdict in VERDICTS},
            "findings_supported_raw": sum(item.verdict_raw == SUPPORTED for item in found),
            "findings_tests": sum(test.p_raw is not None for item in found for test in item.tests)}
