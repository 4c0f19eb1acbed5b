"""Backtest (forward chaining): for each round r after the first, fit on the rounds before r and forecast every
result of r in scope. A result that repeats an earlier round's (`republished_of`, marked by the features stage) is
flagged `rerun`; with `analysis.republished: exclude` (the default) the scope has none, with `include` they are
forecast too, as a buyer asks about reruns (bench/backtest.py prints both). Errors are absolute percentage errors,
|predicted / published - 1|.

Each fold's forecasts then get their trust (`pipeline.analysis.forecasting.trust`) and interval
(`pipeline.analysis.forecasting.intervals`), and the ANSWER rows copy what `predict` would have answered: the
method chosen on the earlier folds (`choose_method`).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from pipeline.analysis.forecasting.curve import POWER
from pipeline.analysis.forecasting.forms import FABRIC_COLUMNS
from pipeline.analysis.forecasting.intervals import UNCALIBRATED, ResidualHistory
from pipeline.analysis.forecasting.model import (
    ANSWER,
    BLEND,
    CANDIDATES,
    METHODS,
    MODEL,
    NAIVE,
    NAIVE_BASED,
    NEW_FAMILY_KINDS,
    RECENTRED_KINDS,
    UNIT,
    DriftPrior,
    Forecaster,
    codes,
    fit,
    ordered_rounds,
    pooled_drifts,
)
from pipeline.analysis.forecasting.trust import Evidence, backtest_evidence, trust_reasons
from pipeline.core.errors import UsageError
from pipeline.core.paths import BACKTEST
from pipeline.mlperf.catalogue import round_published
from pipeline.settings import DecideTrustSettings

# `predict` leaves the model for another candidate only when that one's earlier median error is lower by more
# than this share: a few folds' medians are noisy. On the backtest, overall median error 7.0% without a margin,
# 6.7% at 10%, 6.5% at 20%, 6.6% for the model alone (v5.1: 3.9%, 3.8%, 3.8%, 3.7%; the naive rule 7.8% and 4.2%).
CHOICE_MARGIN = 0.2
FORECAST_COLUMNS = ["benchmark", "fold", "fold_time", "accelerator_family", "form_factor", "submitter", "system",
                    "accelerator_count", "time_to_train_min", "rerun", "family_rounds", "family_count_min",
                    "family_count_max", "learned_from", "distance", "scale", "spread_log", "method", "kind",
                    "forecast_log"]
POINT_COLUMNS = ["benchmark", "fold", "fold_time", "accelerator_family", "form_factor", "submitter", "system",
                 "accelerator_count", "time_to_train_min", "rerun", "method", "chosen", "kind", "distance", "scale",
                 "predicted_min", "low_min", "high_min", "ape_pct", "inside_interval", "log_residual", "shift_log",
                 "calibration", "trusted", "reasons"]


def reruns(test: pd.DataFrame) -> np.ndarray:
    """Which rows of a fold repeat an earlier round's result (their `republished_of` is set)."""
    return test["republished_of"].notna().to_numpy()


# --- the backtest -------------------------------------------------------------------------------------------------

def backtest_forecasts(frame: pd.DataFrame, drift_priors: Mapping[float, DriftPrior] | None = None,
                       form: str = POWER) -> pd.DataFrame:
    """Forward chaining: per round after the first, fit on the earlier rounds and forecast every result of the
    round (reruns flagged). One row per result and method that gave a forecast, columns FORECAST_COLUMNS
    (without `benchmark`): the result, its family's rounds and count range in the training rounds (in its latest
    training round for the methods resting on the naive rule, NAIVE_BASED), the
    forecast's distance outside the published counts, the fit's spread, method, kind and forecast_log. Each fold's
    fit takes `drift_priors[fold time]` (`pooled_drift` of every benchmark's earlier rounds) as its drift prior and
    its count curves in `form` beyond the published counts (`curve.FORMS`)."""
    rows = []
    frame = frame[["round", *UNIT, "submitter", "system", "accelerator_count", "time_to_train_min",
                   "republished_of", *(name for name in (*FABRIC_COLUMNS, "benchmark", "precision")
                                       if name in frame.columns)]].astype(
        {name: object for name in ["round", *UNIT, "submitter", "system"]})
    times = frame["round"].map(round_published)
    for fold in ordered_rounds(frame)[1:]:
        fold_time = round_published(fold)
        train, test = frame[times < fold_time], frame[frame["round"] == fold]
        forecaster = fit(train, None if drift_priors is None else drift_priors.get(fold_time), form)
        forecasts = forecaster.forecast(test, fold_time)
        by_family = train.groupby("accelerator_family")
        family = test["accelerator_family"]
        base = test[[*UNIT, "submitter", "system", "accelerator_count", "time_to_train_min"]].assign(
            fold=fold, fold_time=fold_time, rerun=reruns(test),
            family_rounds=family.map(by_family["round"].nunique()).fillna(0).astype(int),
            family_count_min=family.map(by_family["accelerator_count"].min()).astype(float),
            family_count_max=family.map(by_family["accelerator_count"].max()).astype(float),
            distance=forecasts["distance"], scale=forecasts["scale"], spread_log=forecaster.spread_log)
        # a family new to the benchmark: the rounds and counts of the family it learns from (`learned_from`)
        learned = learned_from(forecaster, train, family.tolist(), fold_time)
        base = base.assign(learned_from=[entry[0] for entry in learned],
                           family_rounds=np.where([entry[0] != "" for entry in learned],
                                                  [entry[1] for entry in learned], base["family_rounds"]),
                           family_count_min=np.where([entry[0] != "" for entry in learned],
                                                     [entry[2] for entry in learned], base["family_count_min"]),
                           family_count_max=np.where([entry[0] != "" for entry in learned],
                                                     [entry[3] for entry in learned], base["family_count_max"]))
        latest = forecaster.latest_round_ranges
        ends = np.array([latest.get(name, (np.nan, np.nan)) for name in family.tolist()], dtype=float).reshape(-1, 2)
        # The fold's results once per method, METHODS one after another, taken and assigned at once (text as
        # pandas' str, as it stores a text value assigned to a column).
        per_method = np.tile(np.arange(len(test)), len(METHODS))
        method = np.repeat(np.array(METHODS, dtype=object), len(test))
        naive_based = np.isin(method, NAIVE_BASED)  # their trusted range is the family's latest round's (trust_reasons)
        kind = np.where(np.isin(method, (MODEL, BLEND)), forecasts["kind"].to_numpy(dtype=object)[per_method], NAIVE)
        rows.append(base.iloc[per_method].assign(
            family_count_min=np.where(naive_based, ends[per_method, 0],
                                      base["family_count_min"].to_numpy(dtype=float)[per_method]),
            family_count_max=np.where(naive_based, ends[per_method, 1],
                                      base["family_count_max"].to_numpy(dtype=float)[per_method]),
            method=pd.array(method, dtype="str"), kind=pd.array(kind, dtype="str"),
            forecast_log=np.concatenate([forecasts[name].to_numpy(dtype=float) for name in METHODS])))
    columns = [name for name in FORECAST_COLUMNS if name != "benchmark"]
    if not rows:
        return pd.DataFrame(columns=columns)
    forecasts = pd.concat(rows, ignore_index=True)[columns]
    return forecasts[forecasts["forecast_log"].notna()].reset_index(drop=True)


def learned_from(forecaster: Forecaster, train: pd.DataFrame, families: Sequence[str], target_time: float
                 ) -> list[tuple[str, int, float, float]]:
    """For each of `families`, "" (and NaNs) where it has results in `train`; else what a forecast of it stands on
    (`Forecaster.source_of`): its sibling or stand-in, with that family's rounds and smallest and largest count in
    `train`, or, without one, "the benchmark" (the regression on specifications) with the benchmark's."""
    by_family = train.groupby("accelerator_family")
    rounds, low, high = by_family["round"].nunique(), by_family["accelerator_count"].min(), \
        by_family["accelerator_count"].max()
    found: dict[str, tuple[str, int, float, float]] = {}
    for name in sorted(set(families)):
        if name in rounds.index:
            found[name] = ("", 0, math.nan, math.nan)
            continue
        source = forecaster.source_of(name, target_time)
        if source is not None and source.family in rounds.index:
            found[name] = (source.family, int(rounds[source.family]), float(low[source.family]),
                           float(high[source.family]))
        else:
            found[name] = ("the benchmark", int(train["round"].nunique()),
                           float(train["accelerator_count"].min()), float(train["accelerator_count"].max()))
    return [found[name] for name in families]


def result_keys(points: pd.DataFrame) -> np.ndarray:
    """One code per published result a point forecasts (its fold, unit, submitter, system, count and time)."""
    key = ["fold", *UNIT, "submitter", "system", "accelerator_count", "time_to_train_min"]
    return codes(*(points[name].tolist() for name in key))[0]


def common_rows(keys: np.ndarray, method: np.ndarray, methods: Sequence[str]) -> list[np.ndarray]:
    """Each of `methods`' points on the results every one of them forecast (the fair comparison), one per result
    (the first where a result appears twice), from arrays with one entry per point (its result's code,
    `result_keys`, and its method): per method, the positions of its points, in order."""
    per_method = [np.flatnonzero(method == name) for name in methods]
    shared = set(keys[per_method[0]].tolist()) if per_method else set()
    for rows in per_method[1:]:
        shared &= set(keys[rows].tolist())
    wanted = np.array(sorted(shared), dtype=int)
    return [rows[_first_occurrences(keys[rows]) & np.isin(keys[rows], wanted)] for rows in per_method]


def _first_occurrences(values: np.ndarray) -> np.ndarray:
    """Whether each of `values` is the first of its value (pandas' `~duplicated()`, without a Series)."""
    first = np.zeros(len(values), dtype=bool)
    first[np.unique(values, return_index=True)[1]] = True
    return first


def choose_method(points: pd.DataFrame) -> tuple[str, dict[str, float | None]]:
    """The method `predict` answers with, from one benchmark's backtest `points` (earlier folds only): the one of
    CANDIDATES with the lowest median error on the results all of them forecast, if it is lower than the
    model's by more than CHOICE_MARGIN (else, or with no such result, the model); and each candidate's median
    error there."""
    return _chosen_method(result_keys(points), points["method"].to_numpy(dtype=object),
                          points["ape_pct"].to_numpy(dtype=float))


def _chosen_method(keys: np.ndarray, method: np.ndarray, ape: np.ndarray) -> tuple[str, dict[str, float | None]]:
    """`choose_method` on arrays, one entry per point: its result's code (`result_keys`), method and error."""
    common = dict(zip(CANDIDATES, common_rows(keys, method, CANDIDATES)))
    medians = {name: (float(np.median(ape[rows])) if len(rows) else math.nan) for name, rows in common.items()}
    shown: dict[str, float | None] = {name: None if math.isnan(value) else value for name, value in medians.items()}
    if not len(common[MODEL]):
        return MODEL, shown
    best = min(CANDIDATES, key=lambda name: (medians[name], name != MODEL))
    if medians[best] >= (1 - CHOICE_MARGIN) * medians[MODEL]:
        best = MODEL
    return best, shown


def calibrate(forecasts: pd.DataFrame, target_coverage: float, rule: DecideTrustSettings) -> pd.DataFrame:
    """The backtest's points (POINT_COLUMNS) of `backtest_forecasts` of one or more benchmarks (column
    `benchmark`), fold time after fold time in publication order: each forecast's trust (`trust_reasons`, on the
    evidence of its method's earlier forecasts of the benchmark), then its interval, calibrated on residuals of
    rounds published before it of the same method, kind and trust (`ResidualHistory.calibration`); and, per
    benchmark and fold, the ANSWER rows: a copy of each result's forecast by the method chosen on the earlier
    folds (`choose_method`; the model where that method has none)."""
    forecasts = forecasts.assign(log_residual=np.log(forecasts["time_to_train_min"].astype(float))
                                 - forecasts["forecast_log"].astype(float), shift_log=0.0).reset_index(drop=True)
    residual = forecasts["log_residual"].to_numpy(dtype=float).copy()
    shift = np.zeros(len(forecasts))
    fold_time = forecasts["fold_time"].to_numpy(dtype=float)
    trusted = np.zeros(len(forecasts), dtype=bool)
    reasons = np.full(len(forecasts), "", dtype=object)
    half_width = np.full(len(forecasts), np.nan)
    sources = np.full(len(forecasts), UNCALIBRATED, dtype=object)

    def ape(rows: np.ndarray) -> np.ndarray:
        return 100 * np.abs(np.exp(-residual[rows]) - 1)

    benchmarks = forecasts["benchmark"].to_numpy(dtype=object)
    # What the trust rule reads of each forecast, as Python values (row by row below: pandas' rows cost more).
    rule_inputs = list(zip(*(forecasts[name].tolist() for name in (
        "family_rounds", "accelerator_count", "kind", "family_count_min", "family_count_max", "method",
        "accelerator_family", "learned_from"))))
    # The columns the evidence and the residual history read (the earlier points, taken at every fold time).
    history_columns = ["benchmark", "fold_time", "method", "kind", "accelerator_family", "distance", "scale"]
    for time in sorted(set(fold_time.tolist())):
        earlier, now = fold_time < time, fold_time == time
        done = forecasts.loc[earlier, history_columns].assign(
            trusted=trusted[earlier], inside_interval=np.abs(residual[earlier]) <= half_width[earlier],
            ape_pct=ape(earlier), log_residual=residual[earlier], shift_log=shift[earlier])
        # a new family's kind is judged on every benchmark's earlier forecasts of it (a benchmark sees few)
        every_kind = new_family_evidence(done)
        for benchmark in sorted(set(benchmarks[now].tolist())):
            rows = np.flatnonzero(now & (benchmarks == benchmark))
            evidence = done[done["benchmark"] == benchmark]
            by_family = backtest_evidence(evidence, "accelerator_family")
            by_kind = {**backtest_evidence(evidence, "kind"), **every_kind}
            found = [trust_reasons(int(rounds), float(count),
                                   None if math.isnan(low) else (float(low), float(high)),
                                   (0, 0, None) if kind in NEW_FAMILY_KINDS
                                   else by_family.get((str(method), str(family)), (0, 0, None)),
                                   by_kind.get((str(method), str(kind)), (0, 0, None)), rule,
                                   latest_round_only=method in NAIVE_BASED,
                                   learned_from=str(source) if kind in NEW_FAMILY_KINDS and source else None)
                     for rounds, count, kind, low, high, method, family, source in (rule_inputs[row]
                                                                                   for row in rows)]
            trusted[rows] = [not reason for reason in found]
            reasons[rows] = ["; ".join(reason) for reason in found]
        history = ResidualHistory.of(done)
        current = forecasts.loc[now, ["benchmark", "method", "kind", "distance", "scale"]].assign(
            trusted=trusted[now])
        slopes = {method: history.extrapolation_slope(method, target_coverage, time)  # one per method, for every group
                  for method in sorted(set(current["method"].tolist()))}
        for (benchmark, method, kind, trust), rows in current.groupby(["benchmark", "method", "kind", "trusted"],
                                                                      sort=True):
            calibration = history.calibration(benchmark, method, kind, target_coverage, time, bool(trust),
                                              recentre=kind in RECENTRED_KINDS,
                                              new_family_kinds=NEW_FAMILY_KINDS, slope=slopes[method])
            half_width[rows.index] = calibration.half_width(rows["distance"].to_numpy(dtype=float),
                                                            rows["scale"].to_numpy(dtype=float))
            sources[rows.index] = calibration.q_source
            shift[rows.index] = calibration.shift
            residual[rows.index] -= calibration.shift
    centre = forecasts["forecast_log"].to_numpy(dtype=float) + shift
    every = np.ones(len(forecasts), dtype=bool)
    points = forecasts.assign(
        forecast_log=centre, log_residual=residual, shift_log=shift, ape_pct=ape(every),
        predicted_min=np.exp(centre), low_min=np.exp(centre - half_width), high_min=np.exp(centre + half_width),
        inside_interval=np.abs(residual) <= half_width, calibration=sources, chosen="", trusted=trusted,
        reasons=reasons)
    return pd.concat([points, _answers(points)], ignore_index=True)[POINT_COLUMNS].sort_values(
        ["benchmark", "fold_time", "method", "accelerator_family", "form_factor", "accelerator_count", "submitter",
         "system", "time_to_train_min"], kind="stable").reset_index(drop=True)


def new_family_evidence(points: pd.DataFrame) -> dict[tuple[str, str], Evidence]:
    """(inside, n, median error %) of the forecasts of `points` of each method and new family kind
    (`NEW_FAMILY_KINDS`) on every benchmark: the trust rule's evidence for a family new to a benchmark."""
    return backtest_evidence(points[points["kind"].isin(NEW_FAMILY_KINDS)], "kind")


def _answers(points: pd.DataFrame) -> pd.DataFrame:
    """The ANSWER rows of the calibrated points, benchmark by benchmark (sorted) and fold by fold (see
    `calibrate`): the rows are picked first, then taken from `points` at once."""
    keys, method = result_keys(points), points["method"].to_numpy(dtype=object)
    ape, fold_times = points["ape_pct"].to_numpy(dtype=float), points["fold_time"].to_numpy(dtype=float)
    benchmarks = points["benchmark"].to_numpy(dtype=object)
    picked: list[np.ndarray] = []
    for benchmark in sorted(set(benchmarks.tolist())):
        own = benchmarks == benchmark
        for fold_time in sorted(set(fold_times[own].tolist())):
            earlier, now = own & (fold_times < fold_time), own & (fold_times == fold_time)
            chosen_method, _ = _chosen_method(keys[earlier], method[earlier], ape[earlier])
            model, chosen = np.flatnonzero(now & (method == MODEL)), np.flatnonzero(now & (method == chosen_method))
            picked += [chosen, model[~np.isin(keys[model], keys[chosen])]]
    if not picked:
        return points.iloc[:0]
    answers = points.iloc[np.concatenate(picked)]
    return answers.assign(chosen=answers["method"], method=ANSWER)


def benchmark_forecasts(item: tuple[str, pd.DataFrame, Mapping[float, DriftPrior], str]) -> pd.DataFrame:
    """`backtest_forecasts` of one (benchmark, model inputs, drift priors by fold time, form), with a `benchmark`
    column."""
    benchmark, frame, drift_priors, form = item
    return backtest_forecasts(frame, drift_priors, form).assign(benchmark=benchmark)


def backtest(frames: dict[str, pd.DataFrame], target_coverage: float, rule: DecideTrustSettings,
             each: Callable[[Callable[[Any], pd.DataFrame], list[Any]], Iterable[pd.DataFrame]] = map,
             form: str = POWER) -> pd.DataFrame:
    """Every backtest forecast of each benchmark's model inputs (`frames`, by benchmark id) with its calibrated
    interval, and the answers with their trust: see `backtest_forecasts` and `calibrate`. Columns POINT_COLUMNS.
    `each(work, items)` maps the benchmarks (independent until calibration), in this process by default; the
    count curves take `form` beyond the published counts."""
    fold_times = sorted({round_published(name) for frame in frames.values() for name in frame["round"].unique()})
    priors = pooled_drifts(frames, fold_times)
    forecasts = pd.concat(list(each(benchmark_forecasts, [(benchmark, frame, priors, form)
                                                          for benchmark, frame in frames.items()])),
                          ignore_index=True)
    if forecasts.empty:
        return pd.DataFrame(columns=POINT_COLUMNS)
    return calibrate(forecasts, target_coverage, rule)


def load_backtest() -> pd.DataFrame:
    """The backtest stage's points, or a UsageError saying how to make them."""
    if not BACKTEST.is_file():
        raise UsageError(f"{BACKTEST} not found: run `dvc repro backtest` first")
    points = pd.read_parquet(BACKTEST)
    # Python strings, not Arrow-backed ones: the summaries select from these points many times.
    return points.astype({name: object for name in points.columns if pd.api.types.is_string_dtype(points[name])})
