"""Each unit's scaling exponent and each group's log-time level within a benchmark (`WithinGroupFit`) and the drift
between rounds that the forecasts carry (`DriftPrior`, `pooled_drift`, `shrunk_drift`): the part of the one
time-versus-count model (`pipeline.analysis.forecasting.model`, whose docstring describes it) that reads how a
benchmark moved from round to round."""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from pipeline.analysis.forecasting.curve import CURVE_DECIMALS
from pipeline.analysis.forecasting.inputs import codes, model_inputs_by_benchmark
from pipeline.analysis.forecasting.intervals import weighted_median
from pipeline.analysis.forecasting.siblings import (
    SIMPLEST,
    LawChoice,
    MeasuredRatio,
    cell_ratios,
    choose_law,
    first_appearances,
    pooled_ratios,
    ratio_cells,
)
from pipeline.mlperf.catalogue import round_published
from pipeline.settings import AnalysisSettings

# The pooled slope counts as this much within-group spread of log n (a pair at n and 2n gives 0.24): a unit
# needs a few such pairs before its own slope dominates.
EXPONENT_PRIOR_WEIGHT = 0.5
# With no within-round scaling in the benchmark at all: close to the median pooled slope of the benchmarks.
FALLBACK_EXPONENT = -0.8
# Progress per year slows as a benchmark matures (BERT: -0.5 in log time per year early, -0.03 lately) and
# its estimate is noisy: forecasts apply half of it (a damped trend). Chosen per fold instead (leave-one-fold-out,
# forward: of 0.25, 0.5, 0.75 and 1, the one whose earlier folds' known families had the smallest |median signed
# error|), it swung between 1 and 0.5 (v1.1 to v3.1 at 0.75-1, then -2% to -6% signed there) and made the median
# error over every fold 8.6% against 8.3% fixed; v0.7 (no earlier step to learn from) stays +11.6% either way.
DRIFT_DAMPING = 0.5
# A benchmark's own m drift rates weigh m / (m + DRIFT_PRIOR_WEIGHT) against every benchmark's later steps: on the
# backtest, the sum over folds of |median signed error| of known families is lowest near 0 (own rates alone), 49
# points; 52 at 1, 56 at 3, 60 at 10. 1 keeps a benchmark with one rate of its own half on the pooled one. Median
# error of every answer over every fold 8.3% at 0.3 and 1, 8.4% at 3 and 10 (v5.1: 7.1%, 7.3%, 7.6%, 7.5%); chosen
# per fold on the earlier folds' |median signed error| (forward) it is 8.4%: no better than the fixed weight.
DRIFT_PRIOR_WEIGHT = 1.0
# Pooled drift rates weigh half as much every DRIFT_HALF_LIFE_YEARS before the latest (progress changes with time).
DRIFT_HALF_LIFE_YEARS = 2.0


@dataclass(frozen=True)
class WithinGroupFit:
    """The results of one benchmark in units and groups (a unit in one round), with each unit's exponent fitted on
    differences within its groups and each group's log-time level (mean of log t - b log n: its log minutes at one
    accelerator on the unit's exponent), and the drift's rates: the change in log-time level per year between
    consecutive groups of one unit."""

    log_n: np.ndarray
    log_t: np.ndarray
    times: np.ndarray  # each result's publication time (years)
    unit: np.ndarray  # each result's unit code
    unit_keys: list[tuple[Any, ...]]
    group: np.ndarray  # each result's group code
    group_unit: np.ndarray
    group_time: np.ndarray
    group_size: np.ndarray
    sxx: np.ndarray  # each unit's within-group spread of log n
    pooled: float
    exponent: np.ndarray  # each unit's
    within: np.ndarray  # each result's log-time level minus its group's
    group_log_time_level: np.ndarray
    order: np.ndarray  # the groups, unit by unit in time order
    same_unit: np.ndarray  # whether each consecutive pair in `order` is of one unit
    rates: np.ndarray  # log minutes per year, one per such pair
    rate_age: np.ndarray  # years from the benchmark's first round to each rate's start
    rate_end: np.ndarray  # each rate's end (the later round's publication time, years)

    @classmethod
    def of(cls, train: pd.DataFrame) -> WithinGroupFit:
        """Each unit's exponent, each group's log-time level and the rates between a unit's rounds, from the
        training rows `train`."""
        log_n = np.log(train["accelerator_count"].to_numpy(dtype=float))
        log_t = np.log(train["time_to_train_min"].to_numpy(dtype=float))
        times = train["round"].map(round_published).to_numpy(dtype=float)
        unit, unit_keys = codes(train["accelerator_family"].tolist(), train["form_factor"].tolist())
        n_units = len(unit_keys)
        group, group_keys = codes(unit.tolist(), times.tolist())
        group_unit = np.array([key[0] for key in group_keys], dtype=int)
        group_time = np.array([key[1] for key in group_keys], dtype=float)
        group_size = np.bincount(group)

        def group_mean(values: np.ndarray) -> np.ndarray:
            return np.bincount(group, weights=values) / group_size

        centred_n, centred_t = log_n - group_mean(log_n)[group], log_t - group_mean(log_t)[group]
        sxx = np.bincount(unit, weights=centred_n ** 2, minlength=n_units)
        sxy = np.bincount(unit, weights=centred_n * centred_t, minlength=n_units)
        total_sxx, total_sxy = sxx.sum(), sxy.sum()
        pooled = float(np.clip(total_sxy / total_sxx, -1, 0)) if total_sxx > 0 else FALLBACK_EXPONENT
        exponent = np.clip((sxy + EXPONENT_PRIOR_WEIGHT * pooled) / (sxx + EXPONENT_PRIOR_WEIGHT), -1, 0)
        log_time_level = log_t - exponent[unit] * log_n
        group_log_time_level = group_mean(log_time_level)
        order = np.lexsort((group_time, group_unit))
        same_unit = group_unit[order][1:] == group_unit[order][:-1]
        rates = np.diff(group_log_time_level[order])[same_unit] / np.diff(group_time[order])[same_unit]
        rate_age = group_time[order][:-1][same_unit] - times.min()
        rate_end = group_time[order][1:][same_unit]
        return cls(log_n, log_t, times, unit, unit_keys, group, group_unit, group_time, group_size, sxx, pooled,
                   exponent, log_time_level - group_log_time_level[group], group_log_time_level, order, same_unit,
                   rates, rate_age, rate_end)


@dataclass(frozen=True)
class DriftPrior:
    """Every benchmark's drift rates (`WithinGroupFit.rates`, log minutes per year) pooled: `first` the median of the
    steps from a benchmark's first round to its second (software catches up fast on a new benchmark), `later` of
    the others, each weighted by recency (DRIFT_HALF_LIFE_YEARS); None without any (`shrunk_drift`)."""

    first: float | None = None
    later: float | None = None
    ratios: tuple[MeasuredRatio, ...] = ()  # every pair of families' measured ratio (`measured_ratios`)
    law: LawChoice = SIMPLEST  # the law of new families' ratios, chosen on earlier first appearances


def pooled_drift(frames: Mapping[str, pd.DataFrame], before: float) -> DriftPrior:
    """The DriftPrior of every benchmark's results published before `before` (years): software and hardware move
    on between rounds of every benchmark, fastest after its first round."""
    return pooled_drifts(frames, [before])[before]


def pooled_drifts(frames: Mapping[str, pd.DataFrame], befores: Iterable[float]) -> dict[float, DriftPrior]:
    """`pooled_drift` at each of `befores` (the backtest's fold times): the results' publication times and the
    measured ratios' cells (`siblings.ratio_cells`) are worked out once for all of them."""
    times = {name: frame["round"].map(round_published).to_numpy(dtype=float) for name, frame in frames.items()}
    cells = ratio_cells(frames)
    cases = first_appearances(frames)
    return {before: _pooled_drift(frames, times, cells, before, cases) for before in befores}


def _pooled_drift(frames: Mapping[str, pd.DataFrame], times: Mapping[str, np.ndarray], cells: pd.DataFrame,
                  before: float, cases: pd.DataFrame) -> DriftPrior:
    """`pooled_drift` of `frames` before `before`, given each frame's publication `times`, its ratio `cells` and
    its first appearances (`siblings.first_appearances`, the law's choice)."""
    rates, ages, ends = [], [], []
    for name, frame in frames.items():
        train = frame[times[name] < before]
        if len(train):
            groups = WithinGroupFit.of(train)
            rates.append(groups.rates)
            ages.append(groups.rate_age)
            ends.append(groups.rate_end)
    rate, age, end = (np.concatenate(parts) if parts else np.array([]) for parts in (rates, ages, ends))

    def median(chosen: np.ndarray) -> float | None:
        if not chosen.any():
            return None
        # each rate's weight halves every DRIFT_HALF_LIFE_YEARS before the latest
        weights = 0.5 ** ((end.max() - end[chosen]) / DRIFT_HALF_LIFE_YEARS)
        return float(np.round(weighted_median(rate[chosen], weights), CURVE_DECIMALS))

    first = age == 0
    return DriftPrior(median(first), median(~first), pooled_ratios(cell_ratios(cells, before)),
                      choose_law(cases, before))


def shrunk_drift(groups: WithinGroupFit, prior: DriftPrior | None) -> float:
    """The drift the forecasts apply from a benchmark's latest round to the next (log minutes per year, never
    positive: a median rate above 0 is a change in who submits, not software getting slower): DRIFT_DAMPING x the
    median of the benchmark's m rates shrunk towards `prior.later`, m / (m + DRIFT_PRIOR_WEIGHT) on its own; a
    benchmark with a single round takes `prior.first`, every benchmark's first step between rounds (damped alike:
    on the backtest, in full it made the median error 7.4% against 6.9% over every fold, and 7.5% against 5.9% on
    v5.1, for a median signed error on benchmarks' first forecast folds of +10% against +15%). 0 without either."""
    prior = prior or DriftPrior()
    own = groups.rates
    if not len(own):
        pooled = prior.first if prior.first is not None else prior.later
        return min(0.0, float(np.round(DRIFT_DAMPING * (pooled or 0.0), CURVE_DECIMALS)))
    later = prior.later if prior.later is not None else prior.first
    weight = 1.0 if later is None else len(own) / (len(own) + DRIFT_PRIOR_WEIGHT)
    shrunk = weight * float(np.median(own)) + (1 - weight) * (later or 0.0)
    return min(0.0, float(np.round(DRIFT_DAMPING * shrunk, CURVE_DECIMALS)))


def next_round_drift(configurations: pd.DataFrame, analysis: AnalysisSettings) -> DriftPrior:
    """`pooled_drift` of every analysed benchmark's model inputs in `configurations` (all their rounds): the
    prior of the next round's forecasts."""
    return next_round_prior(model_inputs_by_benchmark(analysis, configurations))


def next_round_prior(frames: Mapping[str, pd.DataFrame]) -> DriftPrior:
    """`next_round_drift` of the analysed benchmarks' model inputs `frames` (`model_inputs_by_benchmark`)."""
    return pooled_drift(frames, math.inf)
