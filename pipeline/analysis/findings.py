"""The published study's findings (BRIEF.md, "Its findings") as hypothesis tests on one benchmark's results.

Each finding is a stated hypothesis with a test, an interval and a verdict: "supported" when the one-sided test in
the hypothesised direction has p < `alpha` and the interval excludes no effect on the hypothesised side,
"contradicted" when the opposite one-sided test does, "inconclusive" otherwise (too few data, or a tie). No
verdict rests on one median or on a tie: medians only appear with their bootstrap interval, and equal values give
no evidence either way.

- sublinear: within-series scaling efficiency of the results larger than their series' base is below 1
  (one-sided Wilcoxon signed-rank on log efficiency; bootstrap interval of the median), also shown by
  accelerator-count band (`bands`).
- diminishing: within each series of at least three counts, efficiency falls with the count (Spearman rho per
  series; a sign test over the series; bootstrap interval of the median rho).
- moderate / latest: the top `top_share` of each round by round-relative hardware efficiency
  (`round_efficiency`) holds more results with `moderate` accelerators (or with the round's newest
  accelerator generation) than all results do (one-sided Fisher exact test; bootstrap interval of the difference
  in shares).
- host: that top share has more host CPU cores per node and faster intra-node links than the rest (one-sided
  Mann-Whitney each; both must hold).
- largest_fastest / largest_inefficient: the largest `largest_share` of each round by accelerator count train
  faster (time over the round's best time) and use more hardware per training (lower round-relative efficiency)
  than the rest of their round (one-sided Mann-Whitney; bootstrap interval of the difference in medians).

Thresholds, bootstrap resamples and the seed come from params `findings`.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from pipeline.settings import Findings

SUPPORTED, CONTRADICTED, INCONCLUSIVE = "supported", "contradicted", "inconclusive"

# The claims, in the order of the study, as short headers and sentences.
CLAIMS = {
    "sublinear": ("Sublinear speed-up", "Speed-up from adding accelerators is sublinear (within a series)"),
    "diminishing": ("Shrinking gain per chip", "Within a series, efficiency falls as accelerators are added"),
    "moderate": ("Best: 4 to 16 accelerators",
                 "The most hardware-efficient results use a moderate number (4 to 16) of accelerators"),
    "latest": ("Best: latest generation", "The most hardware-efficient results use the round's newest accelerators"),
    "host": ("Best: strong host, fast links",
             "The most hardware-efficient results have more host CPU cores and faster intra-node links"),
    "largest_fastest": ("Largest systems fastest", "The largest systems of a round have the shortest times"),
    "largest_inefficient": ("Largest systems least efficient",
                            "The largest systems of a round use the most hardware time per training"),
}


def _verdict(p_greater: float, p_less: float, alpha: float, hypothesis_is_greater: bool) -> str:
    """A verdict from the two one-sided p-values of a test (NaN when it could not run)."""
    p_for, p_against = (p_greater, p_less) if hypothesis_is_greater else (p_less, p_greater)
    if not math.isnan(p_for) and p_for < alpha:
        return SUPPORTED
    if not math.isnan(p_against) and p_against < alpha:
        return CONTRADICTED
    return INCONCLUSIVE


def _agree(verdict: str, interval: tuple[float, float], null: float, hypothesis_is_greater: bool) -> str:
    """The test's verdict, kept only where the interval agrees (excludes the null on the same side)."""
    low, high = interval
    if verdict == SUPPORTED and not (low > null if hypothesis_is_greater else high < null):
        return INCONCLUSIVE
    if verdict == CONTRADICTED and not (high < null if hypothesis_is_greater else low > null):
        return INCONCLUSIVE
    return verdict


def bootstrap_interval(values: Sequence[np.ndarray], statistic: Callable[..., np.ndarray], settings: Findings,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of a statistic of one or more samples, each resampled on its own; NaN when a
    sample is empty.

    `statistic` takes one (resamples x len(sample)) matrix per sample and returns one value per row, so all
    `settings.bootstrap` resamples are one numpy call (e.g. `lambda a, b: np.median(a, axis=1) - np.median(b,
    axis=1)`). The resamples of each sample are one (resamples x n) index matrix, drawn sample after sample.
    """
    if any(len(v) == 0 for v in values):
        return (math.nan, math.nan)
    rng = np.random.default_rng(settings.seed)
    resampled = [np.asarray(v)[rng.integers(0, len(v), (settings.bootstrap, len(v)))] for v in values]
    draws = np.asarray(statistic(*resampled), dtype=float)
    if draws.shape != (settings.bootstrap,):
        raise ValueError(f"a bootstrap statistic must give one value per resample (got shape {draws.shape})")
    tail = (1 - level) / 2 * 100
    low, high = np.nanpercentile(draws, [tail, 100 - tail])
    return (float(low), float(high))


def _row_median(sample: np.ndarray) -> np.ndarray:
    return np.median(sample, axis=1)


def _row_median_difference(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    return np.median(first, axis=1) - np.median(second, axis=1)


def _row_mean_difference(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    return first.mean(axis=1) - second.mean(axis=1)


def _result(key: str, verdict: str, test: str, evidence: str, **numbers: Any) -> dict[str, Any]:
    return {"key": key, "short": CLAIMS[key][0], "claim": CLAIMS[key][1], "verdict": verdict, "test": test,
            "evidence": evidence, **{name: _plain(value) for name, value in numbers.items()}}


def _plain(value: Any) -> Any:
    """JSON-ready: NaN to None, numpy scalars to Python, floats to 4 significant digits (stable output)."""
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {name: _plain(item) for name, item in value.items()}
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(f"{float(value):.4g}")
    return value


def _fmt(value: float) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.2f}"


def _p(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2g}"


# ------------------------------------------------------------------------------------------------- scaling

def scaled_members(frame: pd.DataFrame) -> pd.DataFrame:
    """Results with a within-series efficiency that are larger than their series' smallest member."""
    has = frame[frame["scaling_efficiency"].notna()]
    base = has.groupby("series")["accelerator_count"].transform("min")
    return has[has["accelerator_count"] > base]


def efficiency_bands(frame: pd.DataFrame, settings: Findings) -> list[dict[str, Any]]:
    """Median within-series efficiency (members above their base) per accelerator-count band, with its bootstrap
    interval and the share below 1. Bands with fewer than `min_group` results are listed without an interval."""
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
        rows.append(_plain({"band": label, "n": len(values), "median": float(np.median(values)),
                            "low": interval[0], "high": interval[1],
                            "share_below_1": float((values < 1).mean())}))
    return rows


def sublinear(frame: pd.DataFrame, settings: Findings) -> dict[str, Any]:
    values = scaled_members(frame)["scaling_efficiency"].to_numpy(float)
    bands = efficiency_bands(frame, settings)
    test = "one-sided Wilcoxon signed-rank of log efficiency against 0 (ties with 1 dropped)"
    logs = np.log(values)
    logs = logs[logs != 0]
    if len(logs) < settings.min_group:
        return _result("sublinear", INCONCLUSIVE, test, f"{len(values)} results above their series' base",
                       n=len(values), bands=bands)
    p_less, p_greater = signed_rank_p(logs, "less"), signed_rank_p(logs, "greater")
    interval = bootstrap_interval([values], _row_median, settings)
    verdict = _agree(_verdict(p_greater, p_less, settings.alpha, False), interval, 1.0, False)
    median = float(np.median(values))
    return _result("sublinear", verdict, test,
                   f"median within-series efficiency {_fmt(median)} (95% CI {_fmt(interval[0])} to "
                   f"{_fmt(interval[1])}) over {len(values)} results above their series' base, "
                   f"{(values < 1).mean():.0%} below 1; p = {_p(p_less)}",
                   n=len(values), median=median, low=interval[0], high=interval[1], p_value=p_less,
                   share_below_1=float((values < 1).mean()), bands=bands)


EXACT_SIGNED_RANK_MAX = 13  # scipy's wilcoxon enumerates every sign pattern of a tied sample up to this size


def signed_rank_p(values: np.ndarray, alternative: str) -> float:
    """One-sided Wilcoxon signed-rank p-value of `values` (none zero) against 0, as `scipy.stats.wilcoxon` gives it.

    For a sample with tied magnitudes of at most `EXACT_SIGNED_RANK_MAX` values scipy's p-value is an exact
    permutation test over all 2^n sign patterns, with its statistic called once per pattern (seconds); here the
    same test runs with the statistic vectorised, giving the same p-value in milliseconds.
    """
    from scipy import stats

    values = np.asarray(values, dtype=float)
    if (values == 0).any():
        raise ValueError("signed_rank_p takes no zeros (the Wilcoxon test drops them)")
    tied = len(np.unique(np.abs(values))) < len(values)
    if not tied or len(values) > EXACT_SIGNED_RANK_MAX:
        return float(stats.wilcoxon(values, alternative=alternative).pvalue)

    def positive_rank_sum(sample: np.ndarray, axis: int) -> np.ndarray:
        return np.where(sample > 0, stats.rankdata(np.abs(sample), axis=axis), 0.0).sum(axis=axis)

    return float(stats.permutation_test((values,), positive_rank_sum, permutation_type="samples", vectorized=True,
                                        alternative=alternative, n_resamples=9999).pvalue)


def series_correlations(frame: pd.DataFrame) -> pd.Series:
    """Spearman rho of scaling efficiency with accelerator count in each series of three or more counts."""
    from scipy import stats

    has = frame[frame["scaling_efficiency"].notna()]
    rhos = {}
    for series, group in has.groupby("series"):
        if group["accelerator_count"].nunique() >= 3 and group["scaling_efficiency"].nunique() > 1:
            rhos[series] = stats.spearmanr(group["accelerator_count"], group["scaling_efficiency"]).statistic
    return pd.Series(rhos, dtype=float)


def diminishing(frame: pd.DataFrame, settings: Findings) -> dict[str, Any]:
    from scipy import stats

    rhos = series_correlations(frame).dropna()
    test = "sign test over series of Spearman rho (efficiency vs accelerators, series of 3+ counts; rho = 0 dropped)"
    negative, positive = int((rhos < 0).sum()), int((rhos > 0).sum())
    if negative + positive < settings.min_group:
        return _result("diminishing", INCONCLUSIVE, test,
                       f"{len(rhos)} series with three or more accelerator counts", n_series=len(rhos))
    n = negative + positive
    p_less = float(stats.binomtest(negative, n, 0.5, alternative="greater").pvalue)  # rho mostly negative
    p_greater = float(stats.binomtest(positive, n, 0.5, alternative="greater").pvalue)
    interval = bootstrap_interval([rhos.to_numpy()], _row_median, settings)
    verdict = _agree(_verdict(p_greater, p_less, settings.alpha, False), interval, 0.0, False)
    return _result("diminishing", verdict, test,
                   f"efficiency falls with count in {negative} of {n} series, rises in {positive}; median rho "
                   f"{_fmt(float(rhos.median()))} (95% CI {_fmt(interval[0])} to {_fmt(interval[1])}); "
                   f"p = {_p(p_less)}",
                   n_series=n, negative=negative, positive=positive, median_rho=float(rhos.median()),
                   low=interval[0], high=interval[1], p_value=p_less)


# ------------------------------------------------------------------------------------- the most efficient results

def top_by_round(frame: pd.DataFrame, share: float) -> pd.Series:
    """True for the best `share` of each round by round-relative hardware efficiency (at least one per round;
    results tied with the last one kept are kept too)."""
    efficiency = frame["round_efficiency"]
    ranks = efficiency.groupby(frame["round"]).rank(ascending=False, method="min")
    sizes = frame.groupby("round")["round"].transform("size")
    return (ranks <= np.maximum(1, np.floor(share * sizes))) & efficiency.notna()


def share_test(key: str, flag: pd.Series, top: pd.Series, what: str, settings: Findings) -> dict[str, Any]:
    """Is `flag` more common among the `top` results than among all? One-sided Fisher exact test on top vs rest,
    and a bootstrap interval of share(top) - share(all)."""
    from scipy import stats

    flag = flag.fillna(False).astype(bool)
    top_flags, rest_flags = flag[top].to_numpy(), flag[~top].to_numpy()
    test = "one-sided Fisher exact test, top vs the rest; bootstrap CI of share(top) - share(all)"
    if len(top_flags) < settings.min_group or len(rest_flags) < settings.min_group:
        return _result(key, INCONCLUSIVE, test, f"{len(top_flags)} top results", n_top=len(top_flags))
    table = [[int(top_flags.sum()), int((~top_flags).sum())], [int(rest_flags.sum()), int((~rest_flags).sum())]]
    p_greater = float(stats.fisher_exact(table, alternative="greater").pvalue)
    p_less = float(stats.fisher_exact(table, alternative="less").pvalue)
    everyone = flag.to_numpy()
    interval = bootstrap_interval([top_flags, everyone], _row_mean_difference, settings)
    verdict = _agree(_verdict(p_greater, p_less, settings.alpha, True), interval, 0.0, True)
    return _result(key, verdict, test,
                   f"{top_flags.mean():.0%} of the {len(top_flags)} most hardware-efficient results {what}, "
                   f"vs {everyone.mean():.0%} of all {len(everyone)} (difference 95% CI {interval[0]:+.0%} to "
                   f"{interval[1]:+.0%}); p = {_p(p_greater)}",
                   n_top=len(top_flags), share_top=float(top_flags.mean()), share_all=float(everyone.mean()),
                   low=interval[0], high=interval[1], p_value=p_greater)


def moderate(frame: pd.DataFrame, top: pd.Series, settings: Findings) -> dict[str, Any]:
    low, high = settings.moderate
    flag = frame["accelerator_count"].between(low, high)
    return share_test("moderate", flag, top, f"use {low:g} to {high:g} accelerators", settings)


def latest(frame: pd.DataFrame, top: pd.Series, settings: Findings) -> dict[str, Any]:
    newest = frame.groupby("round")["accelerator_year"].transform("max")
    flag = frame["accelerator_year"].notna() & (frame["accelerator_year"] == newest)
    return share_test("latest", flag, top, "use their round's newest accelerator generation", settings)


def compare_groups(first: np.ndarray, second: np.ndarray, settings: Findings,
                   first_is_greater: bool) -> tuple[str, float, tuple[float, float]]:
    """One-sided Mann-Whitney of `first` against `second` and the bootstrap interval of the difference in their
    medians: (verdict, p for the hypothesis, interval)."""
    from scipy import stats

    first, second = first[~np.isnan(first)], second[~np.isnan(second)]
    if len(first) < settings.min_group or len(second) < settings.min_group:
        return INCONCLUSIVE, math.nan, (math.nan, math.nan)
    p_greater = float(stats.mannwhitneyu(first, second, alternative="greater").pvalue)
    p_less = float(stats.mannwhitneyu(first, second, alternative="less").pvalue)
    interval = bootstrap_interval([first, second], _row_median_difference, settings)
    verdict = _agree(_verdict(p_greater, p_less, settings.alpha, first_is_greater), interval, 0.0, first_is_greater)
    return verdict, (p_greater if first_is_greater else p_less), interval


def host(frame: pd.DataFrame, top: pd.Series, settings: Findings) -> dict[str, Any]:
    parts, numbers = [], {}
    verdicts = []
    for column, label in (("host_cpu_cores", "host CPU cores per node"),
                          ("interconnect_intra_gbps", "intra-node link Gbit/s")):
        first, second = frame.loc[top, column].to_numpy(float), frame.loc[~top, column].to_numpy(float)
        verdict, p_value, interval = compare_groups(first, second, settings, True)
        verdicts.append(verdict)
        parts.append(f"{label}: median {_fmt(float(np.nanmedian(first)) if np.isfinite(first).any() else math.nan)}"
                     f" vs {_fmt(float(np.nanmedian(second)) if np.isfinite(second).any() else math.nan)} "
                     f"(difference 95% CI {_fmt(interval[0])} to {_fmt(interval[1])}, p = {_p(p_value)})")
        numbers[column] = {"verdict": verdict, "p_value": p_value, "low": interval[0], "high": interval[1]}
    overall = SUPPORTED if all(v == SUPPORTED for v in verdicts) else \
        CONTRADICTED if CONTRADICTED in verdicts else INCONCLUSIVE
    return _result("host", overall, "one-sided Mann-Whitney, top vs the rest, for each; both must hold",
                   "; ".join(parts), **numbers)


# ------------------------------------------------------------------------------------------- the largest systems

def largest_by_round(frame: pd.DataFrame, share: float) -> pd.Series:
    """True for the results of each round whose accelerator count is in its largest `share` (by count rank) and
    above the round's smallest count."""
    counts = frame["accelerator_count"]
    ranks = counts.groupby(frame["round"]).rank(ascending=False, method="min")
    sizes = frame.groupby("round")["round"].transform("size")
    smallest = counts.groupby(frame["round"]).transform("min")
    return (ranks <= np.maximum(1, np.floor(share * sizes))) & (counts > smallest)


def largest(frame: pd.DataFrame, settings: Findings) -> list[dict[str, Any]]:
    big = largest_by_round(frame, settings.largest_share)
    relative_time = frame["time_to_train_min"] / frame.groupby("round")["time_to_train_min"].transform("min")
    results = []
    for key, values, label, bigger in (
            ("largest_fastest", relative_time, "time over the round's best time", False),
            ("largest_inefficient", frame["round_efficiency"], "round-relative hardware efficiency",
             False)):
        first, second = values[big].to_numpy(float), values[~big].to_numpy(float)
        verdict, p_value, interval = compare_groups(first, second, settings, bigger)
        results.append(_result(
            key, verdict, "one-sided Mann-Whitney, largest of each round vs the rest; bootstrap CI of the "
            "difference in medians",
            f"{label}: median {_fmt(float(np.median(first)) if len(first) else math.nan)} for the {len(first)} "
            f"largest results vs {_fmt(float(np.median(second)) if len(second) else math.nan)} for the other "
            f"{len(second)} (difference 95% CI {_fmt(interval[0])} to {_fmt(interval[1])}); p = {_p(p_value)}",
            n_largest=len(first), n_rest=len(second), p_value=p_value, low=interval[0], high=interval[1]))
    return results


# -------------------------------------------------------------------------------------------------------- entry

def evaluate(frame: pd.DataFrame, settings: Findings) -> list[dict[str, Any]]:
    """Every finding of `CLAIMS` tested on one benchmark's in-scope results (configurations.parquet columns),
    in the order of `CLAIMS`."""
    required = {"round", "series", "accelerator_count", "time_to_train_min", "scaling_efficiency",
                "round_efficiency", "accelerator_year", "host_cpu_cores", "interconnect_intra_gbps"}
    missing = sorted(required - set(frame.columns))
    if missing:
        raise ValueError(f"evaluate needs the columns {missing}")
    frame = frame.reset_index(drop=True)
    top = top_by_round(frame, settings.top_share)
    return [sublinear(frame, settings), diminishing(frame, settings), moderate(frame, top, settings),
            latest(frame, top, settings), host(frame, top, settings), *largest(frame, settings)]



def superlinear_cases(frame: pd.DataFrame, threshold: float) -> list[dict[str, Any]]:
    """Every result whose within-series efficiency exceeds `threshold`, beside its series' base member, with the
    split of its efficiency (`throughput_scaling`, `convergence_work_ratio`, see
    `pipeline.analysis.configurations`), which of the two explains it (`explained_by`, `explain_superlinear`)
    and the reason in words."""
    cases = []
    over = frame[frame["scaling_efficiency"] > threshold]
    for _, row in over.sort_values(["round", "submitter", "system"]).iterrows():
        members = frame[frame["series"] == row["series"]]
        base = members[members["accelerator_count"] == members["accelerator_count"].min()].nsmallest(
            1, "time_to_train_min").iloc[0]
        explained_by, reason = explain_superlinear(base, row, threshold)
        cases.append(_plain({
            "round": row["round"], "submitter": row["submitter"], "series": row["series"],
            "system": row["system"], "accelerators": float(row["accelerator_count"]),
            "time_to_train_min": float(row["time_to_train_min"]),
            "base_system": base["system"], "base_accelerators": float(base["accelerator_count"]),
            "base_time_to_train_min": float(base["time_to_train_min"]),
            "scaling_efficiency": float(row["scaling_efficiency"]),
            "throughput_scaling": _number(row.get("throughput_scaling")),
            "convergence_work_ratio": _number(row.get("convergence_work_ratio")),
            "explained_by": explained_by, "reason": reason}))
    return cases


# What a series key does not see and a system description states. Accelerators per node is left out: within one
# node it is the count itself.
REASON_FIELDS = (("n_nodes", "nodes"), ("host_cpu_model", "host CPU"),
                 ("accelerator_memory_gib", "accelerator memory (GiB)"), ("interconnect_intra", "intra-node link"),
                 ("interconnect_inter", "inter-node link"))
# `explain_superlinear`'s verdicts: the larger member needed few enough samples that its efficiency at the base's
# samples is at most the threshold; it needed fewer samples, but not that few; it did not need fewer; the logs
# do not say.
WORK, PARTLY_WORK, NOT_WORK, WORK_UNKNOWN = "convergence work", "partly convergence work", "throughput", "unknown"


def explain_superlinear(base: pd.Series, member: pd.Series, threshold: float) -> tuple[str, str]:
    """Why `member` scales superlinearly over its series' `base`: one of WORK, PARTLY_WORK, NOT_WORK and
    WORK_UNKNOWN, and the reason in words.

    With w the member's `convergence_work_ratio` (its samples to converge over the base's) and E its scaling
    efficiency, E x w is its efficiency had it needed the base's samples (E ~= throughput scaling / w). The work
    explains the efficiency when E x w is at most `threshold`: the page then cites the samples and no hardware.
    When w <= 1 / threshold without E x w falling that low, the samples explain a part and the description
    differences (`likely_reason`) are named for the rest; otherwise they are named alone.
    """
    efficiency = float(member["scaling_efficiency"])
    work = _number(member.get("convergence_work_ratio"))
    throughput = _number(member.get("throughput_scaling"))
    per_accelerator = "" if math.isnan(throughput) else f"; throughput per accelerator {throughput:.2f}× the base's"
    if math.isnan(work):
        return WORK_UNKNOWN, f"{likely_reason(base, member)} (samples to converge not in the logs)"
    samples = (f"needed {work:.2f} of the base's samples to converge, which explains {1 / work:.2f}× of its "
               f"{efficiency:.2f}×")
    if efficiency * work <= threshold:
        return WORK, f"fewer samples to converge: {samples}{per_accelerator}"
    differences = "; ".join(description_differences(base, member)) or (
        "the descriptions state the same nodes, host and links")
    if work <= 1 / threshold:
        return PARTLY_WORK, f"{samples}; the other {efficiency * work:.2f}×{per_accelerator}: {differences}"
    return NOT_WORK, (f"superlinear throughput: needed {work:.2f} of the base's samples{per_accelerator}: "
                      f"{differences}")


def description_differences(base: pd.Series, member: pd.Series) -> list[str]:
    """What differs between the base and the larger member among `REASON_FIELDS`, as "label before → after"."""
    differences = []
    for column, label in REASON_FIELDS:
        before, after = base.get(column), member.get(column)
        if (pd.isna(before) and pd.isna(after)) or before == after:
            continue
        differences.append(f"{label} {_text(before)} → {_text(after)}")
    return differences


def likely_reason(base: pd.Series, member: pd.Series) -> str:
    """"superlinear within series", and what differs between the base and the larger member (for a case whose
    samples to converge the logs do not give)."""
    detail = "; ".join(description_differences(base, member)) or (
        "same nodes, host and links: a larger batch or more converge-friendly tuning is the likely cause")
    return f"superlinear within series: {detail}"


def _number(value: Any) -> float:
    return math.nan if value is None or pd.isna(value) else float(value)


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "unknown"
    if isinstance(value, float) and value.is_integer():
        return f"{value:.0f}"
    return str(value)
