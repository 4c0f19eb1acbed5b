"""Forecast a configuration's time to train in the next round, and measure those forecasts forward in time.

The forecast model, fitted per benchmark on the scored results of earlier rounds, in log minutes. A series
unit is an accelerator family in one form factor (H100 SXM, H100 PCIe); a group is a unit in one round.

    log t = level[unit, latest round] + b[unit] log n + drift x (years from that round to the target round)

- b, the scaling exponent, comes from all rounds but only from differences *within* a group (same hardware,
  same round, different counts), so software progress between rounds does not pass for scaling. It is the
  unit's own within-group least-squares slope shrunk towards the benchmark's pooled within-group slope
  (prior weight `EXPONENT_PRIOR_WEIGHT`), and bounded to [-1, 0]: never better than linear, never slower with
  more accelerators. A unit never published at two counts in one round takes the pooled slope.
- level is anchored on the unit's most recent round (mean of log t - b log n over its results there):
  today's software, not an average over years.
- drift is the benchmark's software progress per year: the median, over consecutive groups of one unit, of
  the change in level per year between them (years between the publication dates of the round catalogue).
- A family with no results (or none in this form factor) is predicted from its specifications
  (`pipeline.mlperf.accelerators`: log peak dense BF16 TFLOPS and log memory bandwidth): group levels regressed on
  a round effect and the two features; the forecast takes the latest round's effect, the drift and the
  pooled exponent.

Kinds of forecast, each with its own backtest error and calibration: "family" (own level and exponent),
"family level, benchmark scaling" (own level, a unit seen at one count per round) and "specification".
The naive rule the model has to beat: the family's best time at the nearest count (log scale) in its latest
round before the target, scaled linearly by count.

Backtest (forward chaining): for each round r after the first, fit on the rounds before r and forecast every
result of r. Results that repeat an earlier round's (`republished_of`, marked by the features stage: see
`pipeline.analysis.configurations`) are left out, whatever `analysis.republished` says: a republished result is
no forecast. Errors are absolute percentage errors, |predicted / published - 1|.

Intervals are weighted split-conformal on the log residuals of the backtest: the nominal-level interval of a
forecast is its centre times / divided by the weighted level (m + 1) / m quantile of the |log residuals| of the
m backtest forecasts of the same method and kind made in earlier folds (of every kind of the method if that
kind has fewer than `MIN_CALIBRATION`; if those are fewer too, an uncalibrated interval from the fit's
within-group and between-round spread). The benchmark's own residuals weigh n / (n + OWN_PRIOR_WEIGHT) of the
total, so a benchmark with a long history is calibrated on itself and a new one mostly on the others, and
older residuals weigh less (half per CALIBRATION_HALF_LIFE_YEARS). Calibrating fold r only on folds before r
keeps the backtest's coverage honest.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
import pandas as pd

from pipeline.core.errors import UsageError
from pipeline.core.paths import BACKTEST
from pipeline.mlperf.accelerators import spec_features, specifications
from pipeline.mlperf.catalogue import round_published, round_version
from pipeline.settings import Trust

FAMILY, POOLED, SPECIFICATION, NAIVE = "family", "family level, benchmark scaling", "specification", "naive"
MODEL, NAIVE_METHOD = "model", "naive"
KINDS = (FAMILY, POOLED, SPECIFICATION)
# Split-conformal needs ceil((m + 1) level) <= m residuals: 9 for a 90% interval; a few more steady it.
MIN_CALIBRATION = 10
# The pooled slope counts as this much within-group spread of log n (a pair at n and 2n gives 0.24): a unit
# needs a few such pairs before its own slope dominates.
EXPONENT_PRIOR_WEIGHT = 0.5
# With no within-round scaling in the benchmark at all: close to the median pooled slope of the benchmarks.
FALLBACK_EXPONENT = -0.8
# A regression on specifications needs this many families with specifications in the training rounds.
MIN_SPEC_FAMILIES = 4
# Progress per year slows as a benchmark matures (BERT: -0.5 in log time per year early, -0.03 lately) and
# its estimate is noisy: forecasts apply half of it (a damped trend). On the backtest, over every benchmark,
# no drift gave a median error of 8.0%, the full drift 8.6%, half 7.0% (the naive rule 8.6%).
DRIFT_DAMPING = 0.5
# MLPerf Training publishes about twice a year: the next round is this many years after the latest.
ROUND_STEP_YEARS = 0.5
UNIT = ["accelerator_family", "form_factor"]
UNCALIBRATED = "uncalibrated"
SAME_KIND, ANY_KIND = "earlier forecasts of the same kind", "earlier forecasts of any kind"
# Calibration: a benchmark's own earlier residuals weigh n / (n + OWN_PRIOR_WEIGHT) against the other benchmarks'
# (a benchmark's errors differ from the others', but its first folds have few residuals), and a residual's
# weight halves every CALIBRATION_HALF_LIFE_YEARS (errors shrink as a benchmark matures). Chosen on the real
# backtest among 5, 10, 20, 40 and no half-life, 0.5, 0.75, 1, 2 years: benchmarks with 20 forecasts or more
# out of the 85-95% coverage range went from five (unweighted, own kind first) to three, intervals 8% narrower.
OWN_PRIOR_WEIGHT = 20.0
CALIBRATION_HALF_LIFE_YEARS = 1.0
# The published results a FittedBenchmark keeps: the trust rule's rounds and counts, and the nearest results
# `predict` shows beside an answer.
PUBLISHED_COLUMNS = ["accelerator_family", "form_factor", "round", "submitter", "system", "accelerator_count",
                     "time_to_train_min"]
Evidence = tuple[int, int]  # backtest forecasts inside their interval, and all of them
POINT_COLUMNS = ["benchmark", "fold", "fold_time", "accelerator_family", "form_factor", "submitter", "system",
                 "accelerator_count",
                 "time_to_train_min", "method", "kind", "predicted_min", "low_min", "high_min", "ape_pct",
                 "inside_interval", "log_residual", "calibration"]


@dataclass(frozen=True)
class Forecaster:
    """A forecast model fitted on some rounds of one benchmark (see the module docstring)."""

    units: pd.DataFrame  # index UNIT: exponent, own_shape, anchor_level, anchor_time, n_rounds, count_min, count_max
    pooled_exponent: float
    drift_per_year: float
    spread_log: float  # sd of a forecast's log residual, from within-group and between-round spread
    spec_intercept: float | None  # the latest round's effect in the specification regression
    spec_time: float
    spec_coefficients: np.ndarray | None
    naive_rows: pd.DataFrame  # each family's results of its latest round: family, count, time
    anchor_rows: pd.DataFrame  # each unit's latest round, per count: UNIT, accelerator_count, anchor_log
    rounds: tuple[str, ...]

    @cached_property
    def _unit_table(self) -> tuple[dict[tuple[str, str], int], np.ndarray]:
        """Each unit's row, and the rows' exponent, anchor_time and own_shape as floats."""
        return ({key: row for row, key in enumerate(self.units.index)},
                self.units[["exponent", "anchor_time", "own_shape"]].to_numpy(dtype=float))

    def forecast(self, queries: pd.DataFrame, target_time: float) -> pd.DataFrame:
        """Model and naive forecasts for `queries` (accelerator_family, form_factor, accelerator_count) in the
        round published at `target_time`: columns model_log, kind, naive_log (NaN where there is none)."""
        log_count = np.log(queries["accelerator_count"].to_numpy(dtype=float))
        position, table = self._unit_table
        rows = np.array([position.get(key, -1) for key in zip(*(queries[name].tolist() for name in UNIT))],
                        dtype=int)
        known = rows >= 0
        units = table[np.where(known, rows, 0)]
        nearest = _nearest(queries, self.anchor_rows, UNIT)
        own = (nearest["anchor_log"].to_numpy(dtype=float) + units[:, 0]
               * (log_count - np.log(nearest["accelerator_count_published"].to_numpy(dtype=float)))
               + DRIFT_DAMPING * self.drift_per_year * (target_time - units[:, 1]))
        kind = np.where(known, np.where(units[:, 2] > 0, FAMILY, POOLED), "")
        model_log = np.where(known, own, np.nan)
        if self.spec_coefficients is not None:
            features = spec_features(queries["accelerator_family"])
            spec = (self.spec_intercept + features @ self.spec_coefficients + self.pooled_exponent * log_count
                    + DRIFT_DAMPING * self.drift_per_year * (target_time - self.spec_time))
            use_spec = ~known & np.isfinite(spec)
            model_log = np.where(use_spec, spec, model_log)
            kind = np.where(use_spec, SPECIFICATION, kind)
        return pd.DataFrame({"model_log": model_log, "kind": pd.Series(kind, index=queries.index).where(kind != ""),
                             "naive_log": self.naive_log(queries)}, index=queries.index)

    def naive_log(self, queries: pd.DataFrame) -> np.ndarray:
        """log of the naive rule's forecast; NaN for a family without results."""
        nearest = _nearest(queries, self.naive_rows, ["accelerator_family"])
        return np.log(nearest["time_to_train_min"] * nearest["accelerator_count_published"]
                      / queries["accelerator_count"].to_numpy(dtype=float)).to_numpy(dtype=float)


def _nearest(queries: pd.DataFrame, published: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    """Per query (in order), the row of `published` with the same `key` whose accelerator_count_published is
    nearest to the query's count on a log scale (the smaller count on a tie); NaN rows where `key` has none."""
    rows_of: dict[tuple[Any, ...], list[int]] = {}
    for row, name in enumerate(zip(*(published[column].tolist() for column in key))):
        rows_of.setdefault(name, []).append(row)
    columns = [column for column in published.columns if column not in key]
    counts = published["accelerator_count_published"].to_numpy(dtype=float)
    table = published[columns].to_numpy(dtype=float)
    values = np.full((len(queries), len(columns)), np.nan)
    log_counts = np.log(queries["accelerator_count"].to_numpy(dtype=float))
    for query, (name, log_count) in enumerate(zip(zip(*(queries[column].tolist() for column in key)), log_counts)):
        if name in rows_of:
            rows = np.asarray(rows_of[name])
            distance = np.abs(np.log(counts[rows]) - log_count)
            values[query] = table[rows[np.lexsort((counts[rows], distance))[0]]]
    return pd.DataFrame(values, columns=columns)


def _codes(*columns: list[Any]) -> tuple[np.ndarray, list[tuple[Any, ...]]]:
    """Integer codes of the rows' combinations of `columns`, numbered in order of first appearance, and those
    combinations."""
    index: dict[tuple[Any, ...], int] = {}
    codes = np.array([index.setdefault(key, len(index)) for key in zip(*columns)], dtype=int)
    return codes, list(index)


def fit(train: pd.DataFrame) -> Forecaster:
    """The forecast model of `train` (model inputs of one benchmark: accelerator_family, form_factor, round,
    accelerator_count, time_to_train_min; at least one row)."""
    if train.empty:
        raise ValueError("fit needs at least one result")
    log_n = np.log(train["accelerator_count"].to_numpy(dtype=float))
    log_t = np.log(train["time_to_train_min"].to_numpy(dtype=float))
    times = train["round"].map(round_published).to_numpy(dtype=float)
    families = train["accelerator_family"].tolist()
    unit, unit_keys = _codes(families, train["form_factor"].tolist())
    n_units = len(unit_keys)
    group, group_keys = _codes(unit.tolist(), times.tolist())
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
    level = log_t - exponent[unit] * log_n
    group_level = group_mean(level)
    within = level - group_level[group]
    # Each unit's groups in time order: the steps between consecutive rounds give the drift.
    order = np.lexsort((group_time, group_unit))
    same_unit = group_unit[order][1:] == group_unit[order][:-1]
    rates = np.diff(group_level[order])[same_unit] / np.diff(group_time[order])[same_unit]
    drift = float(np.median(rates)) if len(rates) else 0.0
    # Between rounds: what the drift leaves unexplained over half a year, the usual forecast horizon.
    between = float(np.std(rates - drift) * ROUND_STEP_YEARS) if len(rates) > 1 else 0.0
    within_sd = float(np.sqrt((within ** 2).sum() / max(len(log_t) - len(group_size), 1)))
    latest_group = order[np.r_[~same_unit, True]]  # the last group of each unit in time order
    anchor_time = np.empty(n_units)
    anchor_time[group_unit[latest_group]] = group_time[latest_group]
    counts = train["accelerator_count"].to_numpy(dtype=float)
    count_min, count_max = np.full(n_units, np.inf), np.zeros(n_units)
    np.minimum.at(count_min, unit, counts)
    np.maximum.at(count_max, unit, counts)
    unit_family = np.array([key[0] for key in unit_keys], dtype=object)
    units = pd.DataFrame({"exponent": exponent, "own_shape": sxx > 0, "anchor_level": group_level[latest_group],
                          "anchor_time": anchor_time, "n_rounds": np.bincount(group_unit, minlength=n_units),
                          "count_min": count_min, "count_max": count_max},
                         index=pd.MultiIndex.from_tuples(unit_keys, names=UNIT)).sort_index()
    intercept, spec_time, coefficients = _spec_regression(pd.DataFrame({
        "accelerator_family": unit_family[group_unit], "round_time": group_time, "level": group_level}))
    # The naive rule's rows: each family's best time per count in the family's latest round.
    family_latest = pd.Series(times).groupby(families).transform("max").to_numpy()
    latest = np.flatnonzero(times == family_latest)
    cell, cell_keys = _codes([families[row] for row in latest], counts[latest].tolist())
    best = np.full(len(cell_keys), np.inf)
    np.minimum.at(best, cell, train["time_to_train_min"].to_numpy(dtype=float)[latest])
    naive_rows = pd.DataFrame(cell_keys, columns=["accelerator_family", "accelerator_count_published"]).assign(
        time_to_train_min=best).sort_values(["accelerator_family", "accelerator_count_published"],
                                            ignore_index=True)
    # The anchors: each unit's median log time per count in the unit's latest round.
    anchored = np.flatnonzero(times == anchor_time[unit])
    cell, cell_keys = _codes(unit[anchored].tolist(), counts[anchored].tolist())
    anchor_log = [float(np.median(log_t[anchored][cell == index])) for index in range(len(cell_keys))]
    anchor_rows = pd.DataFrame([(*unit_keys[unit_code], count, value)
                                for (unit_code, count), value in zip(cell_keys, anchor_log)],
                               columns=[*UNIT, "accelerator_count_published", "anchor_log"]).sort_values(
        [*UNIT, "accelerator_count_published"], ignore_index=True)
    return Forecaster(units=units, anchor_rows=anchor_rows, pooled_exponent=pooled, drift_per_year=drift,
                      spread_log=math.hypot(within_sd, between), spec_intercept=intercept, spec_time=spec_time,
                      spec_coefficients=coefficients, naive_rows=naive_rows,
                      rounds=tuple(ordered_rounds(train)))


def _spec_regression(groups: pd.DataFrame) -> tuple[float | None, float, np.ndarray | None]:
    """Group levels on a round effect and the log specifications: (latest round's effect, its time, the
    feature coefficients), or Nones when fewer than MIN_SPEC_FAMILIES families have specifications."""
    features = spec_features(groups["accelerator_family"])
    usable = np.isfinite(features).all(axis=1)
    groups, features = groups[usable], features[usable]
    rounds = sorted(groups["round_time"].unique())
    if groups["accelerator_family"].nunique() < MIN_SPEC_FAMILIES or len(groups) <= len(rounds) + features.shape[1]:
        return None, math.nan, None
    dummies = (groups["round_time"].to_numpy()[:, None] == np.array(rounds)[None, :]).astype(float)
    design = np.column_stack([dummies, features])
    if np.linalg.matrix_rank(design) < design.shape[1]:
        return None, math.nan, None
    solution = np.linalg.lstsq(design, groups["level"].to_numpy(), rcond=None)[0]
    return float(solution[len(rounds) - 1]), float(rounds[-1]), solution[len(rounds):]


def ordered_rounds(frame: pd.DataFrame) -> list[str]:
    return sorted(frame["round"].unique(), key=round_version)


def republished(test: pd.DataFrame) -> np.ndarray:
    """Which rows of a fold repeat an earlier round's result (their `republished_of` is set)."""
    return test["republished_of"].notna().to_numpy()


def backtest_forecasts(frame: pd.DataFrame) -> pd.DataFrame:
    """Forward chaining: per round after the first, fit on the earlier rounds and forecast the round's results
    (republished results left out; needs the model inputs' `republished_of`). One row per result and method
    (model, naive) that gave a forecast: the result's columns, fold, method, kind, forecast_log, spread_log,
    fold_time."""
    rows = []
    # Plain Python strings: pandas' Arrow-backed ones make every grouping and lookup of the folds slower.
    frame = frame[["round", *UNIT, "submitter", "system", "accelerator_count", "time_to_train_min",
                   "republished_of"]].astype(
        {name: object for name in ["round", *UNIT, "submitter", "system"]})
    times = frame["round"].map(round_published)
    for fold in ordered_rounds(frame)[1:]:
        fold_time = round_published(fold)
        train, test = frame[times < fold_time], frame[frame["round"] == fold]
        test = test[~republished(test)]
        forecaster = fit(train)
        forecasts = forecaster.forecast(test, fold_time)
        base = test[["accelerator_family", "form_factor", "submitter", "system", "accelerator_count",
                     "time_to_train_min"]].assign(fold=fold, fold_time=fold_time, spread_log=forecaster.spread_log)
        rows.append(base.assign(method=MODEL, kind=forecasts["kind"], forecast_log=forecasts["model_log"]))
        rows.append(base.assign(method=NAIVE_METHOD, kind=NAIVE, forecast_log=forecasts["naive_log"]))
    if not rows:
        return pd.DataFrame(columns=["fold", "fold_time", "accelerator_family", "form_factor", "submitter", "system",
                                     "accelerator_count", "time_to_train_min", "method", "kind", "forecast_log",
                                     "spread_log"])
    forecasts = pd.concat(rows, ignore_index=True)
    return forecasts[forecasts["forecast_log"].notna()].reset_index(drop=True)


def weighted_conformal_half_width(residuals: np.ndarray, weights: np.ndarray, level: float) -> float:
    """Split-conformal half-width of `level` from m residuals with non-negative `weights`: the smallest |r| whose
    share of the total weight, counting it and every smaller one, reaches level (m + 1) / m. With equal weights
    that is the ceil((m + 1) level)-th smallest |r|; infinite when m is too small for that (or no weight)."""
    if len(residuals) != len(weights):
        raise ValueError("weighted_conformal_half_width needs one weight per residual")
    m, total = len(residuals), float(np.sum(weights))
    target = level * (m + 1) / m if m else math.inf
    if target > 1 or total <= 0:
        return math.inf
    order = np.argsort(np.abs(residuals), kind="stable")
    shares = np.cumsum(np.asarray(weights, dtype=float)[order]) / total
    # A relative tolerance: equal weights must reach k/m exactly when k/m is the target.
    return float(np.abs(residuals)[order][np.searchsorted(shares, target * (1 - 1e-12))])


def calibration_weights(benchmarks: np.ndarray, fold_times: np.ndarray, benchmark: str,
                        target_time: float) -> np.ndarray:
    """Weights of earlier backtest residuals (their `benchmarks` and `fold_times`, years) for a forecast of
    `benchmark` at `target_time`: the benchmark's own n residuals share n / (n + OWN_PRIOR_WEIGHT) of the
    weight (all of it when no other benchmark has any), the other benchmarks' the rest; within each, a
    residual's weight halves every CALIBRATION_HALF_LIFE_YEARS of age."""
    recency = 0.5 ** ((target_time - np.asarray(fold_times, dtype=float)) / CALIBRATION_HALF_LIFE_YEARS)
    own = np.asarray(benchmarks, dtype=object) == benchmark
    n_own, n_other = int(own.sum()), int((~own).sum())
    own_share = 1.0 if n_other == 0 else n_own / (n_own + OWN_PRIOR_WEIGHT)
    weights = np.zeros(len(own))
    for mask, share in ((own, own_share), (~own, 1.0 - own_share)):
        if mask.any():
            weights[mask] = share * recency[mask] / recency[mask].sum()
    return weights


@dataclass(frozen=True)
class ResidualHistory:
    """Backtest residuals to calibrate on, as arrays: each point's benchmark, fold_time, method, kind and
    log_residual."""

    benchmark: np.ndarray
    fold_time: np.ndarray
    method: np.ndarray
    kind: np.ndarray
    log_residual: np.ndarray

    @classmethod
    def of(cls, points: pd.DataFrame) -> ResidualHistory:
        return cls(benchmark=points["benchmark"].to_numpy(dtype=object),
                   fold_time=points["fold_time"].to_numpy(dtype=float),
                   method=points["method"].to_numpy(dtype=object), kind=points["kind"].to_numpy(dtype=object),
                   log_residual=points["log_residual"].to_numpy(dtype=float))

    def half_width(self, benchmark: str, method: str, kind: str, level: float, spread_log: float,
                   target_time: float) -> tuple[float, str]:
        """See `calibrated_half_width`."""
        same_method = (self.method == method) & (self.fold_time < target_time)
        for source, pool in ((SAME_KIND, same_method & (self.kind == kind)), (ANY_KIND, same_method)):
            if pool.sum() >= MIN_CALIBRATION:
                weights = calibration_weights(self.benchmark[pool], self.fold_time[pool], benchmark, target_time)
                return weighted_conformal_half_width(self.log_residual[pool], weights, level), source
        from scipy.stats import norm

        return float(norm.ppf(0.5 + level / 2)) * spread_log, UNCALIBRATED


def calibrated_half_width(history: pd.DataFrame, benchmark: str, method: str, kind: str, level: float,
                          spread_log: float, target_time: float) -> tuple[float, str]:
    """Half-width in log space of a forecast of `benchmark` by `method` and `kind` at `target_time`, from the
    earlier residuals in `history` (benchmark, fold_time, method, kind, log_residual): weighted split-conformal
    (`calibration_weights`) over the residuals of that method and kind, or of every kind of the method when
    that kind has fewer than MIN_CALIBRATION; else uncalibrated, z x spread_log. Returns (half-width, source:
    SAME_KIND, ANY_KIND or UNCALIBRATED)."""
    return ResidualHistory.of(history).half_width(benchmark, method, kind, level, spread_log, target_time)


def calibrate(forecasts: pd.DataFrame, level: float) -> pd.DataFrame:
    """The backtest's points (POINT_COLUMNS) of `backtest_forecasts` of one or more benchmarks (column
    `benchmark`): each fold's intervals calibrated on residuals of rounds published before it only."""
    forecasts = forecasts.assign(log_residual=np.log(forecasts["time_to_train_min"].astype(float))
                                 - forecasts["forecast_log"].astype(float))
    half_widths = pd.Series(np.nan, index=forecasts.index)
    sources = pd.Series(UNCALIBRATED, index=forecasts.index, dtype=object)
    history = ResidualHistory.of(forecasts)
    for (benchmark, fold_time, method, kind), points in forecasts.groupby(["benchmark", "fold_time", "method",
                                                                           "kind"]):
        width, source = history.half_width(benchmark, method, kind, level, float(points["spread_log"].iloc[0]),
                                           fold_time)
        half_widths[points.index], sources[points.index] = width, source
    centre = forecasts["forecast_log"].astype(float)
    points = forecasts.assign(
        predicted_min=np.exp(centre), low_min=np.exp(centre - half_widths), high_min=np.exp(centre + half_widths),
        ape_pct=100 * (np.exp(-forecasts["log_residual"]) - 1).abs(),
        inside_interval=forecasts["log_residual"].abs() <= half_widths, calibration=sources)
    return points[POINT_COLUMNS].sort_values(
        ["benchmark", "fold_time", "method", "accelerator_family", "form_factor", "accelerator_count", "submitter",
         "system"], kind="stable").reset_index(drop=True)


def benchmark_forecasts(item: tuple[str, pd.DataFrame]) -> pd.DataFrame:
    """`backtest_forecasts` of one (benchmark, model inputs) pair, with a `benchmark` column."""
    benchmark, frame = item
    return backtest_forecasts(frame).assign(benchmark=benchmark)


def backtest(frames: dict[str, pd.DataFrame], level: float,
             each: Callable[[Callable[[Any], pd.DataFrame], list[Any]], Iterable[pd.DataFrame]] = map) -> pd.DataFrame:
    """Every backtest forecast of each benchmark's model inputs (`frames`, by benchmark id) with its calibrated
    interval: see `backtest_forecasts` and `calibrate`. Columns POINT_COLUMNS. `each(work, items)` maps the
    benchmarks (independent until calibration), in this process by default."""
    forecasts = pd.concat(list(each(benchmark_forecasts, list(frames.items()))), ignore_index=True)
    if forecasts.empty:
        return pd.DataFrame(columns=POINT_COLUMNS)
    return calibrate(forecasts, level)


@dataclass(frozen=True)
class ErrorSummary:
    """Absolute percentage errors (%) of a set of forecasts or held-out predictions (columns ape_pct and
    inside_interval): count, median, 90th percentile, and the share inside their interval."""

    n: int
    median_ape_pct: float | None
    p90_ape_pct: float | None
    coverage: float | None

    @classmethod
    def of(cls, points: pd.DataFrame) -> ErrorSummary:
        if points.empty:
            return cls(0, None, None, None)
        ape = points["ape_pct"].to_numpy(dtype=float)
        return cls(len(ape), float(np.median(ape)), float(np.quantile(ape, 0.9)),
                   float(points["inside_interval"].astype(bool).mean()))

    def as_dict(self, prefix: str, coverage_name: str = "coverage") -> dict[str, Any]:
        return {f"{prefix}_n": self.n, f"{prefix}_median_ape_pct": self.median_ape_pct,
                f"{prefix}_p90_ape_pct": self.p90_ape_pct, f"{prefix}_{coverage_name}": self.coverage}


def _result_keys(points: pd.DataFrame) -> np.ndarray:
    """One code per published result a point forecasts (its fold, unit, submitter, system, count and time)."""
    key = ["fold", *UNIT, "submitter", "system", "accelerator_count", "time_to_train_min"]
    return _codes(*(points[name].tolist() for name in key))[0]


def _first_of_each(keys: np.ndarray) -> np.ndarray:
    return ~pd.Series(keys).duplicated().to_numpy()


def compare(points: pd.DataFrame) -> dict[str, Any]:
    """Model against naive on one set of backtest points: each on all its forecasts, and both on the results
    both forecast (the fair comparison); `better` names the one with the lower median error there."""
    model, naive = points[points["method"] == MODEL], points[points["method"] == NAIVE_METHOD]
    keys = _result_keys(pd.concat([model, naive]))
    model_keys, naive_keys = keys[:len(model)], keys[len(model):]
    common = model[_first_of_each(model_keys) & np.isin(model_keys, naive_keys)]
    common_naive = naive[_first_of_each(naive_keys) & np.isin(naive_keys, model_keys)]
    head = {**ErrorSummary.of(model).as_dict("model"), **ErrorSummary.of(naive).as_dict("naive"),
            "common_n": len(common),
            "common_model_median_ape_pct": ErrorSummary.of(common).median_ape_pct,
            "common_naive_median_ape_pct": ErrorSummary.of(common_naive).median_ape_pct}
    better = MODEL
    if head["common_n"] and head["common_naive_median_ape_pct"] < head["common_model_median_ape_pct"]:
        better = NAIVE_METHOD
    return {**head, "better": better}


def summarise_backtest(points: pd.DataFrame) -> dict[str, Any]:
    """decide.json's `backtest`: overall, the latest fold on its own, and per fold, family and model kind."""
    folds = sorted(points["fold"].unique(), key=round_version) if len(points) else []
    model = points[points["method"] == MODEL]
    return {
        **compare(points),
        "folds": [{"fold": fold, **compare(points[points["fold"] == fold])} for fold in folds],
        "latest_fold": {"fold": folds[-1], **compare(points[points["fold"] == folds[-1]])} if folds else None,
        "families": [{"family": family, **compare(points[points["accelerator_family"] == family])}
                     for family in sorted(points["accelerator_family"].unique())],
        "kinds": [{"kind": kind, **ErrorSummary.of(model[model["kind"] == kind]).as_dict("model")}
                  for kind in KINDS if (model["kind"] == kind).any()],
        "calibrated_share": float((points["calibration"] != UNCALIBRATED).mean()) if len(points) else None,
    }


@lru_cache(maxsize=4096)
def coverage_consistent(inside: int, n: int, coverage: tuple[float, float], level: float = 0.9) -> bool:
    """Whether `inside` of `n` forecasts inside their interval is consistent with a coverage in the range: the
    Clopper-Pearson interval (at `level`) of the observed share overlaps it. Small samples are judged fairly:
    5 of 5 is consistent, 3 of 10 is not."""
    from scipy.stats import binomtest

    interval = binomtest(inside, n).proportion_ci(confidence_level=level, method="exact")
    return interval.low <= coverage[1] and interval.high >= coverage[0]


def trust_reasons(n_rounds: int, count: float, published: tuple[float, float] | None,
                  family_evidence: Evidence, kind_evidence: Evidence, rule: Trust) -> list[str]:
    """Why a forecast is not trusted (empty: trusted). `published` is the family's (smallest, largest)
    published count or None; `family_evidence` (inside the interval, forecasts) of its backtest forecasts by
    the chosen method; `kind_evidence` the same of the benchmark's by that method and kind, the fallback."""
    reasons = []
    if n_rounds < rule.min_rounds:
        reasons.append(f"results from {n_rounds} round{'s' if n_rounds != 1 else ''} (needs {rule.min_rounds})")
    evidence: Evidence | None = None
    if family_evidence[1] >= rule.min_backtest_points:
        evidence, source = family_evidence, "the family's"
    elif kind_evidence[1] >= rule.min_backtest_points:
        evidence, source = kind_evidence, "the benchmark's (the family has too few)"
    else:
        reasons.append(f"{family_evidence[1]} backtest forecasts of the family and {kind_evidence[1]} of its kind "
                       f"(needs {rule.min_backtest_points})")
    if evidence is not None and not coverage_consistent(*evidence, rule.coverage):
        reasons.append(f"{source} backtest coverage {evidence[0]} of {evidence[1]} is out of the "
                       f"{100 * rule.coverage[0]:.0f}-{100 * rule.coverage[1]:.0f}% range")
    if published is None:
        reasons.append("no published results of the family: specification-based")
    elif not published[0] <= count <= rule.max_count_factor * published[1]:
        reasons.append(f"{count:g} accelerators is outside the published {published[0]:g} to {published[1]:g} "
                       f"(up to {rule.max_count_factor:g}x the largest allowed)")
    return reasons


@dataclass(frozen=True)
class Answer:
    """One forecast as `predict` gives it: times in minutes, the interval at `interval` (a fraction)."""

    benchmark: str
    accelerator: str
    form_factor: str
    count: float
    predicted_min: float
    low_min: float
    high_min: float
    interval: float
    method: str  # MODEL or NAIVE_METHOD
    kind: str  # one of KINDS, or NAIVE
    trusted: bool
    reasons: tuple[str, ...]  # why it is not trusted; empty when it is
    rounds: tuple[str, ...]  # the rounds fitted on
    calibration: str  # where the interval's residuals came from
    note: str  # why this method, in a sentence

    @property
    def specification_based(self) -> bool:
        """Whether the forecast borrows from other families: their scaling, or the specifications."""
        return self.kind in (POOLED, SPECIFICATION)

    def as_dict(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "accelerator": self.accelerator, "form_factor": self.form_factor,
                "count": self.count, "predicted_min": round(self.predicted_min, 4),
                "low_min": round(self.low_min, 4), "high_min": round(self.high_min, 4), "interval": self.interval,
                "method": self.method, "kind": self.kind, "specification_based": self.specification_based,
                "trusted": self.trusted, "reasons": list(self.reasons), "rounds": list(self.rounds),
                "calibration": self.calibration, "note": self.note}


@dataclass(frozen=True)
class FittedBenchmark:
    """Everything `predict` and `recommend` need to answer for one benchmark, fitted once by the decide stage
    and saved in its models.json (`pipeline.models_artifact`): the forecast model of the benchmark's results
    in scope, each (method, kind)'s calibrated half-width for the next round, the backtest comparison that
    picks the model or the naive rule, the backtest evidence for the trust rule, and the published results."""

    benchmark: str
    not_analysed_reason: str | None  # why the decide stage skipped the benchmark; None when it analysed it
    interval: float
    forecaster: Forecaster
    half_widths: dict[tuple[str, str], tuple[float, str]]  # (method, kind) -> (log half-width, calibration)
    comparison: dict[str, Any]  # `compare` of the benchmark's backtest points
    family_evidence: dict[tuple[str, str], Evidence]  # (method, family) -> (inside the interval, forecasts)
    kind_evidence: dict[tuple[str, str], Evidence]  # (method, kind) -> (inside the interval, forecasts)
    published: pd.DataFrame  # the model inputs, PUBLISHED_COLUMNS

    @property
    def target_time(self) -> float:
        """The round forecast: the one after the latest fitted on."""
        return max(round_published(name) for name in self.forecaster.rounds) + ROUND_STEP_YEARS

    def families(self) -> list[str]:
        return sorted(self.published["accelerator_family"].unique())


def fit_benchmark(benchmark: str, frame: pd.DataFrame, points: pd.DataFrame, level: float,
                  not_analysed_reason: str | None = None) -> FittedBenchmark:
    """The FittedBenchmark of `benchmark` from its model inputs `frame` (at least one row) and the backtest
    `points` of every benchmark (POINT_COLUMNS; other benchmarks' earlier residuals help calibrate)."""
    forecaster = fit(frame)
    target_time = max(round_published(name) for name in forecaster.rounds) + ROUND_STEP_YEARS
    history = ResidualHistory.of(points)
    half_widths = {(method, kind): history.half_width(benchmark, method, kind, level, forecaster.spread_log,
                                                      target_time)
                   for method, kinds in ((MODEL, KINDS), (NAIVE_METHOD, (NAIVE,))) for kind in kinds}
    own = points[points["benchmark"] == benchmark]
    inside = own.assign(inside=own["inside_interval"].astype(bool))

    def evidence(by: str) -> dict[tuple[str, str], Evidence]:
        counts = inside.groupby(["method", by])["inside"].agg(["sum", "size"])
        return {(str(method), str(key)): (int(row["sum"]), int(row["size"]))
                for (method, key), row in counts.iterrows()}

    return FittedBenchmark(benchmark=benchmark, not_analysed_reason=not_analysed_reason, interval=level,
                           forecaster=forecaster, half_widths=half_widths, comparison=compare(own),
                           family_evidence=evidence("accelerator_family"), kind_evidence=evidence("kind"),
                           published=frame[PUBLISHED_COLUMNS].sort_values(PUBLISHED_COLUMNS, ignore_index=True))


def answer(fitted: FittedBenchmark, family: str, form_factor: str, count: float, rule: Trust) -> Answer:
    """Forecast `family` x `count` for the round after the latest `fitted` was fitted on, with the method that
    did better on the benchmark's backtest, its calibrated interval and its trust (never trusted when the
    decide stage did not analyse the benchmark). Raises UsageError when neither method can answer."""
    if count <= 0:
        raise UsageError(f"the accelerator count must be positive, got {count:g}")
    benchmark, comparison = fitted.benchmark, fitted.comparison
    query = pd.DataFrame({"accelerator_family": [family], "form_factor": [form_factor],
                          "accelerator_count": [float(count)]})
    forecast = fitted.forecaster.forecast(query, fitted.target_time).iloc[0]
    method, kind, centre = MODEL, forecast["kind"], forecast["model_log"]
    note = (f"the model's backtest median error on {benchmark} ({_pct(comparison['common_model_median_ape_pct'])}) "
            f"is not above the naive rule's ({_pct(comparison['common_naive_median_ape_pct'])}) on the same results"
            if comparison["common_n"] else
            f"no backtest compares the model with the naive rule on {benchmark} (that needs results in two rounds of "
            f"the same family): the model answers")
    if comparison["better"] == NAIVE_METHOD and np.isfinite(forecast["naive_log"]):
        method, kind, centre = NAIVE_METHOD, NAIVE, forecast["naive_log"]
        note = (f"naive rule (the family's best time at the nearest count of its latest round, scaled linearly): "
                f"on {benchmark} its backtest median error ({_pct(comparison['common_naive_median_ape_pct'])}) is "
                f"below the model's ({_pct(comparison['common_model_median_ape_pct'])})")
    elif not np.isfinite(centre):
        missing = ("too few families have specifications to regress on" if family in specifications().index
                   else "no row in the accelerator specification table (pipeline/mlperf/accelerators.csv)")
        raise UsageError(f"no forecast for {family} on {benchmark}: it has no results in scope and {missing}")
    half_width, calibration = fitted.half_widths[(method, kind)]
    family_rows = fitted.published[fitted.published["accelerator_family"] == family]
    published = ((float(family_rows["accelerator_count"].min()), float(family_rows["accelerator_count"].max()))
                 if len(family_rows) else None)
    reasons = trust_reasons(family_rows["round"].nunique(), count, published,
                            fitted.family_evidence.get((method, family), (0, 0)),
                            fitted.kind_evidence.get((method, kind), (0, 0)), rule)
    if fitted.not_analysed_reason is not None:
        reasons.insert(0, f"the decide stage did not analyse {benchmark}: {fitted.not_analysed_reason}")
    return Answer(benchmark=benchmark, accelerator=family, form_factor=form_factor, count=float(count),
                  predicted_min=math.exp(centre), low_min=math.exp(centre - half_width),
                  high_min=math.exp(centre + half_width), interval=fitted.interval, method=method, kind=kind,
                  trusted=not reasons, reasons=tuple(reasons), rounds=fitted.forecaster.rounds,
                  calibration=calibration, note=note)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}%"


def load_backtest() -> pd.DataFrame:
    """The backtest stage's points, or a UsageError saying how to make them."""
    if not BACKTEST.is_file():
        raise UsageError(f"{BACKTEST} not found: run `dvc repro backtest` first")
    points = pd.read_parquet(BACKTEST)
    # Python strings, not Arrow-backed ones: the summaries select from these points many times.
    return points.astype({name: object for name in points.columns if pd.api.types.is_string_dtype(points[name])})
