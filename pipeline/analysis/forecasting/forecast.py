"""The one time-versus-count model: forecasts of a configuration's time to train in the next round, the
break-even, and their honest error measured forward in time (the backtest).

Fitted per benchmark on the scored results of earlier rounds, in log minutes. A unit is an accelerator family
in one form factor (H100 SXM, H100 PCIe); a group is a unit in one round.

    log t(n) = curve[unit](log n) + DRIFT_DAMPING x drift x (years from the unit's latest round to the target)

- curve, the unit's **count curve** (`CountCurve`, `fit_count_curve`), is fitted to every result of the unit:
  piecewise linear in log n between its published counts, each slope held in [-1, 0] (more accelerators never
  take longer, and never save more than their count ratio: t(n) / t(n + 1) <= (n + 1) / n), pulled towards the
  unit's exponent b (`SLOPE_PRIOR_WEIGHT`), with slope b beyond the published counts. Each round before the
  latest gets an offset (`ROUND_PRIOR_WEIGHT`), so the curve's level is the latest round's (today's software)
  and its shape comes from every round; each submitter an offset pulled towards zero (`SUBMITTER_PRIOR_WEIGHT`),
  so the curve is the typical submitter's (with two or more). The fit is robust (Huber loss, scale `HUBER_SCALE`)
  over every result of the unit, so no single result sets the level.
- b, the scaling exponent, comes from all rounds but only from differences *within* a group (same hardware,
  same round, different counts), so software progress between rounds does not pass for scaling: the unit's
  within-group least-squares slope shrunk towards the benchmark's pooled within-group slope
  (`EXPONENT_PRIOR_WEIGHT`), bounded to [-1, 0]. A unit never published at two counts in one round takes the
  pooled slope (kind "family level, benchmark scaling").
- drift is the benchmark's software progress per year: the median, over consecutive groups of one unit, of the
  change in level per year between them, applied at half strength (a damped trend).
- A family with no results (or none in this form factor) is forecast from its specifications
  (`pipeline.mlperf.hardware.accelerators`: log peak dense BF16 TFLOPS and log memory bandwidth) when
  `MIN_SPEC_FAMILIES` families have them: the group levels (each group's mean of log t - b log n) regressed on a
  round effect and the two features; the forecast takes the latest round's effect, the pooled exponent and the drift
  (kind "specification").

The break-even of a unit is where the curve's scaling efficiency, t(n0) n0 / (t(n) n), falls below a floor
(`CountCurve.break_even`): the same curve as the forecasts, without the drift (a level shift, which cancels); n0
is the unit's typical series base (`pipeline.analysis.forecasting.decide.typical_base`).

The naive rule, the bar every forecast must clear: the family's best time at the nearest count (log scale) of
its latest round, scaled linearly by count. It jumps where the nearest count changes, so `predict` never
answers with it as such: its **monotone form** joins the latest round's best times (a `CountCurve` without a
pull, slopes in [-1, 0]) and scales linearly beyond them; the **blend** is the geometric mean of the model and
the monotone naive rule. Each is monotone and smooth in count. Which of the three `predict` answers with is
chosen per benchmark on the backtest's earlier folds (`choose_method`): the lowest median error on the results
all three forecast, if lower than the model's by more than `CHOICE_MARGIN` (the model with no earlier fold).

Backtest (forward chaining): for each round r after the first, fit on the rounds before r and forecast every
result of r in scope. A result that repeats an earlier round's (`republished_of`, marked by the features stage) is
flagged `rerun`; with `analysis.republished: exclude` (the default) the scope has none, with `include` they are
forecast too, as a buyer asks about reruns (bench/backtest.py prints both). Errors are absolute percentage errors,
|predicted / published - 1|.

Intervals are weighted split-conformal on the backtest's earlier log residuals, normalised by distance: a
forecast `d` (log count ratio) outside its unit's published counts gets the half-width q x (1 + kappa d), q the
weighted level (m + 1) / m quantile of the normalised scores |r| / (1 + kappa d) of the m earlier forecasts of
the same method, kind and trust (falling back to the same trust, then the same kind, then the whole method when
a pool has fewer than `MIN_CALIBRATION`; with none, an uncalibrated interval from the fit's within-group and
between-round spread). kappa is calibrated on the earlier folds' own extrapolations (`extrapolation_slope`).
The benchmark's own residuals weigh n / (n + OWN_PRIOR_WEIGHT) of the total and older residuals weigh less
(half per CALIBRATION_HALF_LIFE_YEARS). Calibrating fold r only on folds before r keeps the backtest's coverage
honest; calibrating trusted forecasts on trusted residuals keeps their intervals as honest as the others'.

Trust (`trust_reasons`, one rule for the backtest, `predict` and the page): a forecast is trusted when the family
has results from `decide.trust.min_rounds` rounds, its count lies between the smallest published and
`max_count_factor` x the largest, it is not specification-based, and the method's earlier backtest forecasts of
the family (or, with fewer than `decide.trust.min_backtest_points`, of the benchmark and kind) are covered
consistently with `decide.trust.coverage` and have a median error within `decide.trust.max_error`. Counts beyond
the trusted range are "extrapolated"; more than `ABSURD_COUNT` accelerators are refused.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
import pandas as pd
from pydantic import field_serializer

from pipeline.analysis.scope import analysed_benchmarks, in_scope, read_configurations
from pipeline.core.artifacts import Record
from pipeline.core.errors import UsageError
from pipeline.core.paths import BACKTEST
from pipeline.mlperf.catalogue import BY_ID, round_published, round_version
from pipeline.mlperf.hardware.accelerators import spec_features, specifications
from pipeline.settings import Analysis, Trust

# Kinds of model forecast, each with its own calibration; NAIVE is the kind of both naive methods.
FAMILY, POOLED, SPECIFICATION, NAIVE = "family", "family level, benchmark scaling", "specification", "naive"
KINDS = (FAMILY, POOLED, SPECIFICATION)
# Methods: the model, the naive rule (the bar), its monotone form, their blend; ANSWER rows of the backtest are
# what `predict` would have answered (the method chosen on earlier folds), with their trust.
MODEL, NAIVE_METHOD, MONOTONE, BLEND, ANSWER = "model", "naive", "monotone naive", "blend", "answer"
METHODS = (MODEL, NAIVE_METHOD, MONOTONE, BLEND)
CANDIDATES = (MODEL, MONOTONE, BLEND)  # what `predict` may answer with: each is monotone in count
UNIT = ["accelerator_family", "form_factor"]
UNSPECIFIED = "unspecified"
# Split-conformal needs ceil((m + 1) level) <= m residuals: 9 for a 90% interval; a few more steady it.
MIN_CALIBRATION = 10
# The pooled slope counts as this much within-group spread of log n (a pair at n and 2n gives 0.24): a unit
# needs a few such pairs before its own slope dominates.
EXPONENT_PRIOR_WEIGHT = 0.5
# With no within-round scaling in the benchmark at all: close to the median pooled slope of the benchmarks.
FALLBACK_EXPONENT = -0.8
# The count curve's pull of each slope towards the unit's exponent, per unit of log count: small, so the
# published counts of the latest round shape the curve and the exponent settles what they leave open. On the
# backtest (every benchmark), median errors 6.6% at 0.01 and 0.1, 7.2% at 1 and 8.8% for a plain power law.
SLOPE_PRIOR_WEIGHT = 0.1
# Each submitter's offset from the count curve is pulled towards zero with this weight (against the Huber
# scale's): where several submitters published, the curve is their typical level and a submitter's own offset
# is estimated; where one published alone, its offset shrinks and its results shape the curve, minus the offset
# its shared counts revealed (RetinaNet B200 in v5.1: one submitter 2.5 times slower than the others at 8 and 16,
# and alone at 32 to 128). On the backtest, median error 6.5% without offsets, 6.7% at 1, 6.4% at 3, 6.5% at 10
# (v5.1: 3.8%, 3.4%, 3.4%, 3.7%).
SUBMITTER_PRIOR_WEIGHT = 3.0
# Each earlier round's offset from the latest round's level is pulled towards zero with this weight: next to
# nothing, enough to settle a round that shares no count with the others. The curve's shape then comes from
# every round of the unit and its level from the latest. On the backtest, median error 6.4% with the latest
# round alone, 6.3% with every round (v5.1: 3.4% and 3.2%); weights 0.001 to 1 all within 0.1 point of it.
ROUND_PRIOR_WEIGHT = 0.01
# Huber scale of the count curve's fit, in log minutes: residuals beyond 5% (the run-to-run variation MLCommons
# states for most benchmarks) count linearly, so one odd result does not set the curve.
HUBER_SCALE = 0.05
# The count curve's level and steps (log minutes) are solved exactly from the solver's active set
# (`_exact_optimum`) and rounded to CURVE_DECIMALS decimals before any forecast, interval or trust decision uses
# them: the solver's own answer depends on the CPU's BLAS kernels in its last 1e-8, and decisions downstream
# flipped on that (issue 39). 1e-9 log minutes is 1e-7 % of a time to train. A parameter within BOUND_GAP of a
# bound is taken as at it; a system worse conditioned than MAX_CONDITION, or sets still changing after
# ACTIVE_SET_STEPS solves, keep the solver's answer.
CURVE_DECIMALS = 9
BOUND_GAP = 1e-6
MAX_CONDITION = 1e10
ACTIVE_SET_STEPS = 50
# Two median errors (percentage points) closer than this are a tie (the answer wins it): the curves' rounding to
# CURVE_DECIMALS moves an error by up to about 1e-7 points.
TIE_PCT = 1e-6
# Without any pull, a monotone naive curve whose times fall faster than linear scaling between two counts has a
# range of equally good fits (the Huber loss is linear there); which one the solver stopped at depended on the CPU
# (a 10% difference in a forecast). This pull towards linear scaling, a thousandth of the model's, picks one.
NAIVE_TIE_BREAK_WEIGHT = 1e-4
# A regression on specifications needs this many families with specifications in the training rounds.
MIN_SPEC_FAMILIES = 4
# Progress per year slows as a benchmark matures (BERT: -0.5 in log time per year early, -0.03 lately) and
# its estimate is noisy: forecasts apply half of it (a damped trend).
DRIFT_DAMPING = 0.5
# An answer's times (minutes) as printed with --json and stored in decide.json: 0.1 ms, far below any run's noise.
ANSWER_DECIMALS = 4
# MLPerf Training publishes about twice a year: the next round is this many years after the latest.
ROUND_STEP_YEARS = 0.5
# `predict` leaves the model for another candidate only when that one's earlier median error is lower by more
# than this share: a few folds' medians are noisy. On the backtest, overall median error 7.0% without a margin,
# 6.7% at 10%, 6.5% at 20%, 6.6% for the model alone (v5.1: 3.9%, 3.8%, 3.8%, 3.7%; the naive rule 7.8% and 4.2%).
CHOICE_MARGIN = 0.2
# The blend's weight on the model (the rest on the monotone naive rule), in log minutes.
BLEND_WEIGHT = 0.5
UNCALIBRATED = "uncalibrated"
SAME_KIND, ANY_KIND = "earlier forecasts of the same kind and trust", "earlier forecasts of the same trust"
SAME_KIND_ANY_TRUST, ANY_KIND_ANY_TRUST = "earlier forecasts of the same kind", "earlier forecasts of any kind"
# Calibration: a benchmark's own earlier residuals weigh n / (n + OWN_PRIOR_WEIGHT) against the other benchmarks'
# and a residual's weight halves every CALIBRATION_HALF_LIFE_YEARS (errors shrink as a benchmark matures).
OWN_PRIOR_WEIGHT = 20.0
CALIBRATION_HALF_LIFE_YEARS = 1.0
# The interval's growth per unit of log count outside the published counts, searched on this grid; with fewer
# than MIN_CALIBRATION earlier extrapolations, DEFAULT_EXTRAPOLATION_SLOPE (the width doubles at e times the
# largest published count).
EXTRAPOLATION_GRID = tuple(np.round(np.arange(0.0, 4.01, 0.1), 2))
DEFAULT_EXTRAPOLATION_SLOPE = 1.0
# More accelerators than this is refused: five times the largest AI training clusters reported by 2025 (about
# 200,000 GPUs), and 80 times the largest MLPerf Training submission (12,288).
ABSURD_COUNT = 1_000_000
# The published results a FittedBenchmark keeps: the trust rule's rounds and counts, and the nearest results
# `predict` shows beside an answer.
PUBLISHED_COLUMNS = ["accelerator_family", "form_factor", "round", "submitter", "system", "accelerator_count",
                     "time_to_train_min"]
Evidence = tuple[int, int, float | None]  # earlier answers inside their interval, all of them, median error %
FORECAST_COLUMNS = ["benchmark", "fold", "fold_time", "accelerator_family", "form_factor", "submitter", "system",
                    "accelerator_count", "time_to_train_min", "rerun", "family_rounds", "family_count_min",
                    "family_count_max", "distance", "spread_log", "method", "kind", "forecast_log"]
POINT_COLUMNS = ["benchmark", "fold", "fold_time", "accelerator_family", "form_factor", "submitter", "system",
                 "accelerator_count", "time_to_train_min", "rerun", "method", "chosen", "kind", "distance",
                 "predicted_min", "low_min", "high_min", "ape_pct", "inside_interval", "log_residual",
                 "calibration", "trusted", "reasons"]


# --- inputs -------------------------------------------------------------------------------------------------------

def model_inputs(configurations: pd.DataFrame, analysis: Analysis, benchmark: str) -> pd.DataFrame:
    """The in-scope results of `benchmark` the model can use (a family and a positive time), with a
    `form_factor` for every row (a result whose description names none takes its family's most common one,
    or UNSPECIFIED); text columns as Python strings (pandas' Arrow-backed ones make the fits' many small
    selections several times slower)."""
    frame = in_scope(configurations, analysis, benchmark)
    frame = frame[frame["accelerator_family"].notna() & (frame["time_to_train_min"] > 0)].reset_index(drop=True)
    frame = frame.assign(form_factor=_filled_form_factors(frame))
    return frame.astype({name: object for name in frame.columns if pd.api.types.is_string_dtype(frame[name])})


def model_inputs_by_benchmark(analysis: Analysis) -> dict[str, pd.DataFrame]:
    """Each analysed benchmark's model inputs (params `analysis`), from the features stage's configurations."""
    configurations = read_configurations()
    return {benchmark: model_inputs(configurations, analysis, benchmark)
            for benchmark in analysed_benchmarks(analysis, configurations)}


def _filled_form_factors(frame: pd.DataFrame) -> pd.Series:
    def fill(group: pd.Series) -> pd.Series:
        known = group.dropna()
        return group.fillna(known.mode().iloc[0] if len(known) else UNSPECIFIED)

    if frame.empty:
        return pd.Series([], dtype=object)
    return frame.groupby("accelerator_family")["accelerator_form_factor"].transform(fill).astype(object)


def form_factor_levels(form_factors: pd.Series | np.ndarray) -> tuple[str, ...]:
    """Most common first (the default of a forecast), ties by name."""
    names, counts = np.unique(np.asarray(form_factors, dtype=str), return_counts=True)
    return tuple(str(name) for _, name in sorted(zip(-counts, names)))


# --- the count curve ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CountCurve:
    """log minutes against log accelerator count: linear between the knots (`log_counts`, increasing, with
    `log_times` at them), every slope in [-1, 0], and slope `exponent` (in [-1, 0]) beyond the knots. So
    t(n) never rises with n and t(n) / t(n + 1) <= (n + 1) / n for every n."""

    log_counts: np.ndarray
    log_times: np.ndarray
    exponent: float

    def log_time(self, counts: np.ndarray | float) -> np.ndarray:
        """log minutes at `counts` (accelerators, any shape broadcast to 1-d)."""
        x = np.log(np.atleast_1d(np.asarray(counts, dtype=float)))
        inside = np.interp(x, self.log_counts, self.log_times)
        below = self.log_times[0] + self.exponent * (x - self.log_counts[0])
        above = self.log_times[-1] + self.exponent * (x - self.log_counts[-1])
        return np.where(x < self.log_counts[0], below, np.where(x > self.log_counts[-1], above, inside))

    def efficiency(self, counts: np.ndarray | float, reference: float) -> np.ndarray:
        """Scaling efficiency t(n0) n0 / (t(n) n) against `reference` = n0: 1 is linear scaling from n0."""
        counts = np.atleast_1d(np.asarray(counts, dtype=float))
        return np.exp(self.log_time(reference) + math.log(reference) - self.log_time(counts) - np.log(counts))

    def doubling_speedup(self, counts: np.ndarray | float) -> np.ndarray:
        """t(n) / t(2n): 2 is a perfect doubling, 1 is no gain."""
        counts = np.atleast_1d(np.asarray(counts, dtype=float))
        return np.exp(self.log_time(counts) - self.log_time(2 * counts))

    def break_even(self, floor: float, reference: float) -> float | None:
        """The count above `reference` at which the efficiency falls to `floor` (0 < floor < 1), exactly (the log
        efficiency is piecewise linear in log n and never rises); None when it never does (linear scaling to
        infinity)."""
        x0 = math.log(reference)
        target = math.log(floor)
        # log efficiency g(x) = f(x0) + x0 - f(x) - x at the knots beyond x0, then the tail's slope -(1 + b).
        xs = np.concatenate([[x0], self.log_counts[self.log_counts > x0]])
        g = float(self.log_time(reference)[0]) + x0 - self.log_time(np.exp(xs)) - xs
        below = np.flatnonzero(g <= target)
        if below.size:
            j = int(below[0])  # j > 0: g(x0) = 0 > target
            fraction = (g[j - 1] - target) / (g[j - 1] - g[j])
            return float(math.exp(xs[j - 1] + fraction * (xs[j] - xs[j - 1])))
        tail = 1.0 + self.exponent
        if tail <= 0:
            return None
        return float(math.exp(xs[-1] + (g[-1] - target) / tail))


def fit_count_curve(log_counts: np.ndarray, log_times: np.ndarray, exponent: float,
                    prior_weight: float = SLOPE_PRIOR_WEIGHT, scale: float = HUBER_SCALE,
                    submitters: np.ndarray | None = None,
                    offset_weight: float = SUBMITTER_PRIOR_WEIGHT, rounds: np.ndarray | None = None,
                    round_weight: float = ROUND_PRIOR_WEIGHT) -> CountCurve:
    """The count curve of results (`log_counts`, `log_times`: one entry per result): knots at the distinct
    counts, each step between knots held in [-(log count ratio), 0], fitted by robust least squares (Huber loss
    of scale `scale`, `scipy.optimize.least_squares`) to every result, each slope pulled towards `exponent` with
    weight `prior_weight` per unit of log count (0: no pull). With `submitters` (one label per result), each
    submitter of two or more also gets an offset, pulled towards zero with weight `offset_weight`: the curve is
    then the typical submitter's. With `rounds` (each result's publication time), each round before the latest
    gets an offset pulled towards zero with weight `round_weight`: the curve is then the latest round's level
    with the shape of every round. `exponent` in [-1, 0] is also the slope beyond the knots."""
    return _count_curve(_floats(log_counts), _floats(log_times), float(exponent), float(prior_weight), float(scale),
                        None if submitters is None else tuple(str(name) for name in submitters),
                        float(offset_weight), None if rounds is None else _floats(rounds), float(round_weight))


def _floats(values: np.ndarray) -> tuple[float, ...]:
    return tuple(np.asarray(values, dtype=float).tolist())


# The backtest's folds and the decide stage's saved models fit many a curve on the same results again (a family
# without a new round keeps its naive rows; the saved models are read back): each is fitted once per process.
@lru_cache(maxsize=4096)
def _count_curve(log_counts: tuple[float, ...], log_times: tuple[float, ...], exponent: float, prior_weight: float,
                 scale: float, submitters: tuple[str, ...] | None, offset_weight: float,
                 rounds: tuple[float, ...] | None, round_weight: float) -> CountCurve:
    from scipy.optimize import least_squares

    if not -1.0 <= exponent <= 0.0:
        raise ValueError(f"the exponent must lie in [-1, 0], got {exponent}")
    knots, position = np.unique(np.asarray(log_counts, dtype=float), return_inverse=True)
    times = np.asarray(log_times, dtype=float)
    steps = np.diff(knots)
    cumulative = np.tri(len(knots))[:, 1:]  # value at knot j = level + sum of the steps before it
    design = np.column_stack([np.ones(len(knots)), cumulative])[position]
    pull = np.sqrt(prior_weight / steps)  # zeros without a pull: rows that never bind
    prior = np.column_stack([np.zeros(len(pull)), np.diag(pull)]).reshape(len(pull), len(knots))
    target = pull * exponent * steps
    n_groups = 0
    # (each result's group code, the offsets' pull, the group without an offset: the reference level, or None)
    groups: list[tuple[np.ndarray, float, int | None]] = []
    if submitters is not None and len(np.unique(submitters)) > 1:
        groups.append((np.unique(np.asarray(submitters, dtype=str), return_inverse=True)[1], offset_weight, None))
    if rounds is not None and len(np.unique(rounds)) > 1:
        names, codes = np.unique(np.asarray(rounds, dtype=float), return_inverse=True)
        groups.append((codes, round_weight, len(names) - 1))  # the latest round is the reference
    for codes, weight, reference in groups:
        columns = np.eye(codes.max() + 1)[codes]
        if reference is not None:
            columns = np.delete(columns, reference, axis=1)
        count = columns.shape[1]
        design = np.column_stack([design, columns])
        prior = np.vstack([np.column_stack([prior, np.zeros((len(prior), count))]),
                           np.column_stack([np.zeros((count, prior.shape[1])), math.sqrt(weight) * np.eye(count)])])
        target = np.concatenate([target, np.zeros(count)])
        n_groups += count

    def residuals(parameters: np.ndarray) -> np.ndarray:
        return np.concatenate([design @ parameters - times, prior @ parameters - target])

    def jacobian(parameters: np.ndarray) -> np.ndarray:
        return np.vstack([design, prior])

    lower = np.concatenate([[-np.inf], -steps, np.full(n_groups, -np.inf)])
    upper = np.concatenate([[np.inf], np.zeros(len(steps)), np.full(n_groups, np.inf)])
    start = np.concatenate([[float(np.median(times - exponent * (knots[position] - knots[0])))],
                            exponent * steps, np.zeros(n_groups)])
    solution = _exact_optimum(least_squares(residuals, start, jac=jacobian, bounds=(lower, upper), loss="huber",
                                            f_scale=scale, method="trf").x,
                              np.vstack([design, prior]), np.concatenate([times, target]), lower, upper, scale)
    rounded = np.round(solution, CURVE_DECIMALS) + 0.0
    step_values = np.clip(rounded[1:len(knots)], -steps, 0.0)  # a step at its bound stays exactly there
    return CountCurve(knots, rounded[0] + np.concatenate([[0.0], np.cumsum(step_values)]), float(exponent))


def _exact_optimum(solution: np.ndarray, rows: np.ndarray, targets: np.ndarray, lower: np.ndarray,
                   upper: np.ndarray, scale: float) -> np.ndarray:
    """The Huber fit's optimum solved exactly where the iterative `solution` leaves off: with the residuals
    beyond `scale` (linear loss) and the parameters at a bound fixed, the optimum solves a linear system. Starting
    from those of `solution`, a parameter the system would take past its bound is held there, one the cost's
    gradient pulls inwards from its bound is released, a residual that crosses `scale` changes side, and the
    system is solved again until nothing changes. The solver stops within about 1e-8 of it, at a point that
    depends on the CPU's BLAS kernels; this does not. `solution` itself when a system is singular or the sets
    do not settle."""
    residual = rows @ solution - targets
    linear, signs = np.abs(residual) > scale, np.sign(residual)
    at_lower, at_upper = solution <= lower + BOUND_GAP, solution >= upper - BOUND_GAP
    for _ in range(ACTIVE_SET_STEPS):
        free = ~(at_lower | at_upper)
        exact = np.where(at_lower, lower, np.where(at_upper, upper, 0.0))
        quadratic = rows[~linear][:, free]
        normal = quadratic.T @ quadratic
        if not free.any() or np.linalg.cond(normal) > MAX_CONDITION:
            return solution
        pushed = scale * rows[linear][:, free].T @ signs[linear]  # the linear residuals' constant pull
        exact[free] = np.linalg.solve(normal, quadratic.T @ (targets[~linear] - rows[~linear] @ exact) - pushed)
        below, above = free & (exact < lower), free & (exact > upper)
        if below.any() or above.any():
            at_lower, at_upper = at_lower | below, at_upper | above
            continue
        moved = rows @ exact - targets
        crossed = (np.abs(moved) > scale) != linear
        if crossed.any() or np.any(np.sign(moved[linear]) != signs[linear]):
            linear, signs = np.abs(moved) > scale, np.sign(moved)
            continue
        gradient = rows[~linear].T @ moved[~linear] + scale * rows[linear].T @ signs[linear]
        release_lower, release_upper = at_lower & (gradient < 0), at_upper & (gradient > 0)
        if not (release_lower.any() or release_upper.any()):
            return exact
        at_lower, at_upper = at_lower & ~release_lower, at_upper & ~release_upper
    return solution


# --- the model ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Forecaster:
    """A forecast model fitted on some rounds of one benchmark (see the module docstring)."""

    units: pd.DataFrame  # index UNIT: exponent, own_shape, anchor_time, n_rounds, count_min, count_max
    curve_rows: pd.DataFrame  # each unit's count curve at its knots: UNIT, accelerator_count_published, curve_log
    pooled_exponent: float
    drift_per_year: float
    spread_log: float  # sd of a forecast's log residual, from within-group and between-round spread
    spec_intercept: float | None  # the latest round's effect in the specification regression
    spec_time: float
    spec_coefficients: np.ndarray | None
    naive_rows: pd.DataFrame  # each family's best time per count of its latest round
    rounds: tuple[str, ...]

    @cached_property
    def curves(self) -> dict[tuple[str, str], CountCurve]:
        """Each unit's count curve."""
        curves = {}
        for key, rows in self.curve_rows.groupby(UNIT, sort=True):
            curves[(str(key[0]), str(key[1]))] = CountCurve(
                np.log(rows["accelerator_count_published"].to_numpy(dtype=float)),
                rows["curve_log"].to_numpy(dtype=float), float(self.units.loc[key, "exponent"]))
        return curves

    @cached_property
    def monotone_naive(self) -> dict[str, CountCurve]:
        """Each family's monotone naive rule: its best times of its latest round joined (slopes in [-1, 0], a
        pull towards linear scaling only to break ties, NAIVE_TIE_BREAK_WEIGHT), linear scaling beyond them."""
        return {str(family): fit_count_curve(np.log(rows["accelerator_count_published"].to_numpy(dtype=float)),
                                             np.log(rows["time_to_train_min"].to_numpy(dtype=float)), -1.0,
                                             prior_weight=NAIVE_TIE_BREAK_WEIGHT)
                for family, rows in self.naive_rows.groupby("accelerator_family", sort=True)}

    @cached_property
    def family_ranges(self) -> dict[str, tuple[float, float]]:
        """Each family's smallest and largest published count (any form factor)."""
        by_family = self.units.groupby(level="accelerator_family")
        return {str(family): (float(low), float(high))
                for family, low, high in zip(by_family.size().index, by_family["count_min"].min(),
                                             by_family["count_max"].max())}

    @cached_property
    def _unit_rows(self) -> dict[tuple[str, str], tuple[float, bool, float, float]]:
        """Each unit's anchor_time, own_shape, count_min and count_max, read once: `forecast` answers many
        small queries."""
        return {(str(family), str(form_factor)): (float(anchor), bool(own), float(low), float(high))
                for (family, form_factor), anchor, own, low, high in zip(
                    self.units.index, self.units["anchor_time"], self.units["own_shape"], self.units["count_min"],
                    self.units["count_max"])}

    @cached_property
    def _naive_families(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Each family's naive rows as arrays: its published counts (increasing) and best times there."""
        return {family: (rows["accelerator_count_published"].to_numpy(dtype=float),
                         rows["time_to_train_min"].to_numpy(dtype=float))
                for family, rows in self.naive_rows.groupby("accelerator_family", sort=False)}

    @cached_property
    def _count_range(self) -> tuple[float, float]:
        """The benchmark's smallest and largest published count."""
        return float(self.units["count_min"].min()), float(self.units["count_max"].max())

    def forecast(self, queries: pd.DataFrame, target_time: float) -> pd.DataFrame:
        """Every method's forecast (log minutes, NaN where it has none) for `queries` (accelerator_family,
        form_factor, accelerator_count) in the round published at `target_time`: columns MODEL, NAIVE_METHOD,
        MONOTONE, BLEND, kind (the model's), and distance (log count ratio outside the unit's published counts;
        the family's for a unit without results, the benchmark's for a family without)."""
        found = self.forecast_arrays(queries["accelerator_family"].astype(str).to_numpy(),
                                     queries["form_factor"].astype(str).to_numpy(),
                                     queries["accelerator_count"].to_numpy(dtype=float), target_time)
        kind = found["kind"]
        return pd.DataFrame({MODEL: found[MODEL], NAIVE_METHOD: found[NAIVE_METHOD], MONOTONE: found[MONOTONE],
                             BLEND: found[BLEND], "kind": pd.Series(kind, index=queries.index).where(kind != ""),
                             "distance": found["distance"]}, index=queries.index)

    def forecast_arrays(self, families: np.ndarray, form_factors: np.ndarray, counts: np.ndarray,
                        target_time: float) -> dict[str, np.ndarray]:
        """`forecast` on arrays, one entry per query (families and form factors as text, counts as floats), its
        columns as arrays ("kind" empty where the model has none): `predict` asks many small questions."""
        log_count = np.log(counts)
        unit_code, unit_keys = _codes(families.tolist(), form_factors.tolist())
        model, monotone = np.full(len(counts), np.nan), np.full(len(counts), np.nan)
        kind = np.full(len(counts), "", dtype=object)
        low, high = np.full(len(counts), self._count_range[0]), np.full(len(counts), self._count_range[1])
        for code, key in enumerate(unit_keys):
            rows = unit_code == code
            if key in self.curves:
                anchor_time, own_shape, count_min, count_max = self._unit_rows[key]
                model[rows] = (self.curves[key].log_time(counts[rows])
                               + DRIFT_DAMPING * self.drift_per_year * (target_time - anchor_time))
                kind[rows] = FAMILY if own_shape else POOLED
                low[rows], high[rows] = count_min, count_max
            elif key[0] in self.family_ranges:
                low[rows], high[rows] = self.family_ranges[key[0]]
            if key[0] in self.monotone_naive:
                monotone[rows] = self.monotone_naive[key[0]].log_time(counts[rows])
        if self.spec_coefficients is not None and (kind == "").any():  # a query no unit curve answers
            spec = (self.spec_intercept + spec_features(families) @ self.spec_coefficients
                    + self.pooled_exponent * log_count
                    + DRIFT_DAMPING * self.drift_per_year * (target_time - self.spec_time))
            use_spec = (kind == "") & np.isfinite(spec)
            model = np.where(use_spec, spec, model)
            kind = np.where(use_spec, SPECIFICATION, kind)
        distance = np.maximum(0.0, np.maximum(log_count - np.log(high), np.log(low) - log_count))
        return {MODEL: model, NAIVE_METHOD: self.naive_log(families, counts), MONOTONE: monotone,
                BLEND: BLEND_WEIGHT * model + (1 - BLEND_WEIGHT) * monotone, "kind": kind, "distance": distance}

    def naive_log(self, families: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """log of the naive rule's forecast for each (family, count): the family's best time at the published
        count of its latest round nearest on a log scale (the smaller on a tie), scaled linearly; NaN for a family
        without results."""
        result = np.full(len(counts), np.nan)
        for family, (published, best) in self._naive_families.items():  # published: increasing
            wanted = families == family
            if not wanted.any():
                continue
            distance = np.abs(np.log(published)[None, :] - np.log(counts[wanted])[:, None])
            nearest = np.argmin(distance, axis=1)  # the first of equal distances: the smaller count
            result[wanted] = np.log(best[nearest] * published[nearest] / counts[wanted])
        return result


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
    units = pd.DataFrame({"exponent": exponent, "own_shape": sxx > 0, "anchor_time": anchor_time,
                          "n_rounds": np.bincount(group_unit, minlength=n_units),
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
    # The count curves: every result of each unit, an offset per earlier round and per submitter.
    submitters = train["submitter"].to_numpy(dtype=object)
    curve_rows = []
    for code, key in enumerate(unit_keys):
        rows = unit == code
        curve = fit_count_curve(log_n[rows], log_t[rows], float(exponent[code]), submitters=submitters[rows],
                                rounds=times[rows])
        curve_rows += [(*key, float(np.exp(x)), float(y)) for x, y in zip(curve.log_counts, curve.log_times)]
    curve_frame = pd.DataFrame(curve_rows, columns=[*UNIT, "accelerator_count_published", "curve_log"]).sort_values(
        [*UNIT, "accelerator_count_published"], ignore_index=True)
    # Counts stored as exp(log n) must read back as the published integers.
    curve_frame["accelerator_count_published"] = curve_frame["accelerator_count_published"].round()
    return Forecaster(units=units, curve_rows=curve_frame, pooled_exponent=pooled, drift_per_year=drift,
                      spread_log=math.hypot(within_sd, between), spec_intercept=intercept, spec_time=spec_time,
                      spec_coefficients=coefficients, naive_rows=naive_rows, rounds=tuple(ordered_rounds(train)))


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
    # rounded as the count curves are (CURVE_DECIMALS): the least squares' last bits depend on the BLAS kernels
    fitted: np.ndarray = np.linalg.lstsq(design, groups["level"].to_numpy(dtype=float), rcond=None)[0]
    solution = np.round(fitted, CURVE_DECIMALS) + 0.0
    return float(solution[len(rounds) - 1]), float(rounds[-1]), solution[len(rounds):]


def ordered_rounds(frame: pd.DataFrame) -> list[str]:
    return sorted(frame["round"].unique(), key=round_version)


def reruns(test: pd.DataFrame) -> np.ndarray:
    """Which rows of a fold repeat an earlier round's result (their `republished_of` is set)."""
    return test["republished_of"].notna().to_numpy()


def rising_published(published: pd.DataFrame, family: str, form_factor: str, count: float) -> str | None:
    """A sentence when the family's own published best times in one round rise from a smaller count to the next
    larger one around `count` (c1 < count <= c2, or the pair nearest it): the forecast does not follow them."""
    by_round: dict[Any, dict[float, float]] = {}  # round -> count -> best time, from plain columns
    for row_family, row_form, round_, n, minutes in zip(*(published[column].tolist() for column in (
            "accelerator_family", "form_factor", "round", "accelerator_count", "time_to_train_min"))):
        if row_family == family and row_form == form_factor:
            best_times = by_round.setdefault(round_, {})
            best_times[n] = min(best_times.get(n, math.inf), minutes)
    found = []
    for round_, best_times in by_round.items():
        for (small, t_small), (large, t_large) in itertools.pairwise(sorted(best_times.items())):
            if t_large > t_small and small < count <= large:
                found.append(f"{round_}: {t_small:.3g} min at {small:g}, {t_large:.3g} min at {large:g}")
    if not found:
        return None
    return (f"the family's own published best times rise with the count here ({'; '.join(sorted(found))}); the "
            f"forecast is held flat rather than rising")


# --- the backtest -------------------------------------------------------------------------------------------------

def backtest_forecasts(frame: pd.DataFrame) -> pd.DataFrame:
    """Forward chaining: per round after the first, fit on the earlier rounds and forecast every result of the
    round (reruns flagged). One row per result and method that gave a forecast, columns FORECAST_COLUMNS
    (without `benchmark`): the result, its family's rounds and count range in the training rounds, the
    forecast's distance outside the published counts, the fit's spread, method, kind and forecast_log."""
    rows = []
    frame = frame[["round", *UNIT, "submitter", "system", "accelerator_count", "time_to_train_min",
                   "republished_of"]].astype(
        {name: object for name in ["round", *UNIT, "submitter", "system"]})
    times = frame["round"].map(round_published)
    for fold in ordered_rounds(frame)[1:]:
        fold_time = round_published(fold)
        train, test = frame[times < fold_time], frame[frame["round"] == fold]
        forecaster = fit(train)
        forecasts = forecaster.forecast(test, fold_time)
        by_family = train.groupby("accelerator_family")
        family = test["accelerator_family"]
        base = test[[*UNIT, "submitter", "system", "accelerator_count", "time_to_train_min"]].assign(
            fold=fold, fold_time=fold_time, rerun=reruns(test),
            family_rounds=family.map(by_family["round"].nunique()).fillna(0).astype(int),
            family_count_min=family.map(by_family["accelerator_count"].min()).astype(float),
            family_count_max=family.map(by_family["accelerator_count"].max()).astype(float),
            distance=forecasts["distance"], spread_log=forecaster.spread_log)
        for method in METHODS:
            kind = forecasts["kind"] if method in (MODEL, BLEND) else pd.Series(NAIVE, index=test.index)
            rows.append(base.assign(method=method, kind=kind, forecast_log=forecasts[method]))
    columns = [name for name in FORECAST_COLUMNS if name != "benchmark"]
    if not rows:
        return pd.DataFrame(columns=columns)
    forecasts = pd.concat(rows, ignore_index=True)[columns]
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


def extrapolation_slope(residuals: np.ndarray, distances: np.ndarray, level: float) -> tuple[float, str]:
    """kappa of the interval q (1 + kappa d), from earlier backtest forecasts of one method (log `residuals`,
    their `distances` outside the published counts): the smallest kappa of EXTRAPOLATION_GRID whose
    (unweighted) conformal interval holds at least `level` of the extrapolated ones (d > 0), or the grid's
    largest; DEFAULT_EXTRAPOLATION_SLOPE when fewer than MIN_CALIBRATION forecasts were extrapolated. Returns
    (kappa, where it came from)."""
    outside = distances > 0
    if outside.sum() < MIN_CALIBRATION or len(residuals) < MIN_CALIBRATION:
        return DEFAULT_EXTRAPOLATION_SLOPE, f"default (fewer than {MIN_CALIBRATION} earlier extrapolations)"
    magnitude = np.abs(residuals)
    for kappa in EXTRAPOLATION_GRID:
        stretch = 1.0 + kappa * distances
        width = weighted_conformal_half_width(magnitude / stretch, np.ones(len(magnitude)), level)
        if np.mean(magnitude[outside] <= width * stretch[outside]) >= level:
            return float(kappa), f"{int(outside.sum())} earlier extrapolations"
    return float(EXTRAPOLATION_GRID[-1]), f"{int(outside.sum())} earlier extrapolations (the grid's largest)"


@dataclass(frozen=True)
class Calibration:
    """Interval half-widths of one method and kind, for forecasts at one time: q (log minutes, at distance 0),
    kappa (growth per unit of log count outside the published counts), and where each came from."""

    q: float
    q_source: str
    kappa: float
    kappa_source: str

    def half_width(self, distance: np.ndarray | float) -> np.ndarray:
        return self.q * (1.0 + self.kappa * np.asarray(distance, dtype=float))


@dataclass(frozen=True)
class ResidualHistory:
    """Backtest residuals to calibrate on, as arrays: each point's benchmark, fold_time, method, kind, whether it
    was trusted, log_residual and distance."""

    benchmark: np.ndarray
    fold_time: np.ndarray
    method: np.ndarray
    kind: np.ndarray
    trusted: np.ndarray
    log_residual: np.ndarray
    distance: np.ndarray

    @classmethod
    def of(cls, points: pd.DataFrame) -> ResidualHistory:
        """The history of `points` (benchmark, fold_time, method, kind, log_residual, distance and, optionally,
        trusted: False where it is missing)."""
        trusted = (points["trusted"].to_numpy(dtype=bool) if "trusted" in points.columns
                   else np.zeros(len(points), dtype=bool))
        return cls(benchmark=points["benchmark"].to_numpy(dtype=object),
                   fold_time=points["fold_time"].to_numpy(dtype=float),
                   method=points["method"].to_numpy(dtype=object), kind=points["kind"].to_numpy(dtype=object),
                   trusted=trusted, log_residual=points["log_residual"].to_numpy(dtype=float),
                   distance=points["distance"].to_numpy(dtype=float))

    def calibration(self, benchmark: str, method: str, kind: str, level: float, spread_log: float,
                    target_time: float, trusted: bool | None = None) -> Calibration:
        """The Calibration of a forecast of `benchmark` by `method` and `kind` at `target_time` (`trusted` or not;
        None: either), from residuals of rounds published before it: kappa from every benchmark's forecasts of
        the method (`extrapolation_slope`); q weighted split-conformal (`calibration_weights`) over the normalised
        scores of the first pool with MIN_CALIBRATION residuals among: the method's of that kind and trust, of
        that trust, of that kind, all of them; else uncalibrated, z x spread_log. Calibrating trusted forecasts
        on trusted residuals keeps their intervals as honest as the others'."""
        same_method = (self.method == method) & (self.fold_time < target_time)
        kappa, kappa_source = extrapolation_slope(self.log_residual[same_method], self.distance[same_method], level)
        same_trust = same_method if trusted is None else same_method & (self.trusted == trusted)
        same_kind = self.kind == kind
        pools = ((SAME_KIND, same_trust & same_kind), (ANY_KIND, same_trust),
                 (SAME_KIND_ANY_TRUST, same_method & same_kind), (ANY_KIND_ANY_TRUST, same_method))
        for source, pool in pools[:2] if trusted is None else pools:
            if pool.sum() >= MIN_CALIBRATION:
                weights = calibration_weights(self.benchmark[pool], self.fold_time[pool], benchmark, target_time)
                scores = self.log_residual[pool] / (1.0 + kappa * self.distance[pool])
                return Calibration(weighted_conformal_half_width(scores, weights, level), source, kappa,
                                   kappa_source)
        from scipy.stats import norm

        return Calibration(float(norm.ppf(0.5 + level / 2)) * spread_log, UNCALIBRATED, kappa, kappa_source)


def _result_keys(points: pd.DataFrame) -> np.ndarray:
    """One code per published result a point forecasts (its fold, unit, submitter, system, count and time)."""
    key = ["fold", *UNIT, "submitter", "system", "accelerator_count", "time_to_train_min"]
    return _codes(*(points[name].tolist() for name in key))[0]


def _common_rows(keys: np.ndarray, method: np.ndarray, methods: Sequence[str]) -> list[np.ndarray]:
    """Each of `methods`' points on the results every one of them forecast (the fair comparison), one per result
    (the first where a result appears twice), from arrays with one entry per point (its result's code,
    `_result_keys`, and its method): per method, the positions of its points, in order."""
    per_method = [np.flatnonzero(method == name) for name in methods]
    shared = set(keys[per_method[0]].tolist()) if per_method else set()
    for rows in per_method[1:]:
        shared &= set(keys[rows].tolist())
    wanted = np.array(sorted(shared), dtype=int)
    return [rows[~pd.Series(keys[rows]).duplicated().to_numpy() & np.isin(keys[rows], wanted)]
            for rows in per_method]


def choose_method(points: pd.DataFrame) -> tuple[str, dict[str, float | None]]:
    """The method `predict` answers with, from one benchmark's backtest `points` (earlier folds only): the one of
    CANDIDATES with the lowest median error on the results all of them forecast, if it is lower than the
    model's by more than CHOICE_MARGIN (else, or with no such result, the model); and each candidate's median
    error there."""
    return _chosen_method(_result_keys(points), points["method"].to_numpy(dtype=object),
                          points["ape_pct"].to_numpy(dtype=float))


def _chosen_method(keys: np.ndarray, method: np.ndarray, ape: np.ndarray) -> tuple[str, dict[str, float | None]]:
    """`choose_method` on arrays, one entry per point: its result's code (`_result_keys`), method and error."""
    common = dict(zip(CANDIDATES, _common_rows(keys, method, CANDIDATES)))
    medians = {name: (float(np.median(ape[rows])) if len(rows) else math.nan) for name, rows in common.items()}
    shown: dict[str, float | None] = {name: None if math.isnan(value) else value for name, value in medians.items()}
    if not len(common[MODEL]):
        return MODEL, shown
    best = min(CANDIDATES, key=lambda name: (medians[name], name != MODEL))
    if medians[best] >= (1 - CHOICE_MARGIN) * medians[MODEL]:
        best = MODEL
    return best, shown


@lru_cache(maxsize=4096)
def coverage_consistent(inside: int, n: int, coverage: tuple[float, float], level: float = 0.9) -> bool:
    """Whether `inside` of `n` forecasts inside their interval is consistent with a coverage in the range: the
    Clopper-Pearson interval (at `level`) of the observed share overlaps it. Small samples are judged fairly:
    5 of 5 is consistent, 3 of 10 is not."""
    from scipy.special import betaincinv  # the exact interval's beta quantiles (scipy.stats costs 0.6 s to import)

    tail = (1 - level) / 2
    low = 0.0 if inside == 0 else float(betaincinv(inside, n - inside + 1, tail))
    high = 1.0 if inside == n else float(betaincinv(inside + 1, n - inside, 1 - tail))
    return low <= coverage[1] and high >= coverage[0]


def trust_reasons(n_rounds: int, count: float, published: tuple[float, float] | None,
                  family_evidence: Evidence, kind_evidence: Evidence, rule: Trust) -> list[str]:
    """Why a forecast is not trusted (empty: trusted), the one rule of the backtest and `predict`. `published`
    is the family's (smallest, largest) published count, None for a family without results (specification-
    based); `family_evidence` (inside the interval, forecasts, median error %) of the family's earlier backtest
    forecasts by the answering method; `kind_evidence` the same of the benchmark's by that method and kind, the
    fallback."""
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
    if evidence is not None:
        if not coverage_consistent(evidence[0], evidence[1], rule.coverage):
            reasons.append(f"{source} backtest coverage {evidence[0]} of {evidence[1]} is out of the "
                           f"{100 * rule.coverage[0]:.0f}-{100 * rule.coverage[1]:.0f}% range")
        if evidence[2] is not None and evidence[2] > 100 * rule.max_error:
            reasons.append(f"{source} backtest median error {evidence[2]:.0f}% is above "
                           f"{100 * rule.max_error:.0f}%")
    if published is None:
        reasons.append("no published results of the family: specification-based")
    elif not published[0] <= count <= rule.max_count_factor * published[1]:
        reasons.append(f"{count:g} accelerators is outside the published {published[0]:g} to {published[1]:g} "
                       f"(up to {rule.max_count_factor:g}x the largest allowed)")
    return reasons


def _evidence(points: pd.DataFrame, by: str) -> dict[tuple[str, str], Evidence]:
    """(inside, n, median error %) of the forecasts of `points` per method and value of column `by` (sorted;
    rows missing either are left out)."""
    groups: dict[tuple[Any, Any], list[int]] = {}
    for row, key in enumerate(zip(points["method"].tolist(), points[by].tolist())):
        if not (pd.isna(key[0]) or pd.isna(key[1])):
            groups.setdefault(key, []).append(row)
    inside, ape = points["inside_interval"].to_numpy(), points["ape_pct"].to_numpy(dtype=float)
    return {(str(method), str(key)): (int(inside[rows].sum()), len(rows), float(np.median(ape[rows])))
            for (method, key), rows in sorted(groups.items())}


def calibrate(forecasts: pd.DataFrame, level: float, rule: Trust) -> pd.DataFrame:
    """The backtest's points (POINT_COLUMNS) of `backtest_forecasts` of one or more benchmarks (column
    `benchmark`), fold time after fold time in publication order: each forecast's trust (`trust_reasons`, on the
    evidence of its method's earlier forecasts of the benchmark), then its interval, calibrated on residuals of
    rounds published before it of the same method, kind and trust (`ResidualHistory.calibration`); and, per
    benchmark and fold, the ANSWER rows: a copy of each result's forecast by the method chosen on the earlier
    folds (`choose_method`; the model where that method has none)."""
    forecasts = forecasts.assign(log_residual=np.log(forecasts["time_to_train_min"].astype(float))
                                 - forecasts["forecast_log"].astype(float)).reset_index(drop=True)
    residual = forecasts["log_residual"].to_numpy(dtype=float)
    fold_time = forecasts["fold_time"].to_numpy(dtype=float)
    trusted = np.zeros(len(forecasts), dtype=bool)
    reasons = np.full(len(forecasts), "", dtype=object)
    half_width = np.full(len(forecasts), np.nan)
    sources = np.full(len(forecasts), UNCALIBRATED, dtype=object)
    points = forecasts.assign(ape_pct=100 * np.abs(np.exp(-residual) - 1), inside_interval=False)
    for time in sorted(set(fold_time.tolist())):
        earlier, now = fold_time < time, fold_time == time
        done = points[earlier].assign(trusted=trusted[earlier], inside_interval=np.abs(residual[earlier])
                                      <= half_width[earlier])
        for benchmark, rows in forecasts[now].groupby("benchmark", sort=True):
            evidence = done[done["benchmark"] == benchmark]
            by_family, by_kind = _evidence(evidence, "accelerator_family"), _evidence(evidence, "kind")
            found = [trust_reasons(int(row.family_rounds), float(row.accelerator_count),
                                   None if row.kind == SPECIFICATION else (float(row.family_count_min),
                                                                           float(row.family_count_max)),
                                   by_family.get((str(row.method), str(row.accelerator_family)), (0, 0, None)),
                                   by_kind.get((str(row.method), str(row.kind)), (0, 0, None)), rule)
                     for row in rows.itertuples(index=False)]
            trusted[rows.index] = [not reason for reason in found]
            reasons[rows.index] = ["; ".join(reason) for reason in found]
        history = ResidualHistory.of(done)
        current = forecasts[now].assign(trusted=trusted[now])
        for (benchmark, method, kind, trust), rows in current.groupby(["benchmark", "method", "kind", "trusted"],
                                                                      sort=True):
            calibration = history.calibration(benchmark, method, kind, level, float(rows["spread_log"].iloc[0]),
                                              time, bool(trust))
            half_width[rows.index] = calibration.half_width(rows["distance"].to_numpy(dtype=float))
            sources[rows.index] = calibration.q_source
    centre = forecasts["forecast_log"].to_numpy(dtype=float)
    points = points.assign(
        predicted_min=np.exp(centre), low_min=np.exp(centre - half_width), high_min=np.exp(centre + half_width),
        inside_interval=np.abs(residual) <= half_width, calibration=sources, chosen="", trusted=trusted,
        reasons=reasons)
    answers = [_answers(points[points["benchmark"] == benchmark]) for benchmark in sorted(points["benchmark"].unique())]
    return pd.concat([points, *answers], ignore_index=True)[POINT_COLUMNS].sort_values(
        ["benchmark", "fold_time", "method", "accelerator_family", "form_factor", "accelerator_count", "submitter",
         "system", "time_to_train_min"], kind="stable").reset_index(drop=True)


def _answers(points: pd.DataFrame) -> pd.DataFrame:
    """The ANSWER rows of one benchmark's calibrated points, fold by fold (see `calibrate`)."""
    keys, method = _result_keys(points), points["method"].to_numpy(dtype=object)
    ape, fold_times = points["ape_pct"].to_numpy(dtype=float), points["fold_time"].to_numpy(dtype=float)
    done: list[pd.DataFrame] = []
    for fold_time in sorted(points["fold_time"].unique()):
        earlier, now = fold_times < fold_time, fold_times == fold_time
        chosen_method, _ = _chosen_method(keys[earlier], method[earlier], ape[earlier])
        model, chosen = np.flatnonzero(now & (method == MODEL)), np.flatnonzero(now & (method == chosen_method))
        has_chosen = np.isin(keys[model], keys[chosen])
        done.append(pd.concat([points.iloc[chosen], points.iloc[model[~has_chosen]]]).assign(
            chosen=lambda frame: frame["method"], method=ANSWER))
    return pd.concat(done, ignore_index=True) if done else points.iloc[:0]


def benchmark_forecasts(item: tuple[str, pd.DataFrame]) -> pd.DataFrame:
    """`backtest_forecasts` of one (benchmark, model inputs) pair, with a `benchmark` column."""
    benchmark, frame = item
    return backtest_forecasts(frame).assign(benchmark=benchmark)


def backtest(frames: dict[str, pd.DataFrame], level: float, rule: Trust,
             each: Callable[[Callable[[Any], pd.DataFrame], list[Any]], Iterable[pd.DataFrame]] = map) -> pd.DataFrame:
    """Every backtest forecast of each benchmark's model inputs (`frames`, by benchmark id) with its calibrated
    interval, and the answers with their trust: see `backtest_forecasts` and `calibrate`. Columns POINT_COLUMNS.
    `each(work, items)` maps the benchmarks (independent until calibration), in this process by default."""
    forecasts = pd.concat(list(each(benchmark_forecasts, list(frames.items()))), ignore_index=True)
    if forecasts.empty:
        return pd.DataFrame(columns=POINT_COLUMNS)
    return calibrate(forecasts, level, rule)


# --- summaries ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ErrorSummary:
    """Absolute percentage errors (%) of a set of forecasts (columns ape_pct and inside_interval): count,
    median, 90th percentile, and the share inside their interval."""

    n: int
    median_ape_pct: float | None
    p90_ape_pct: float | None
    coverage: float | None
    inside: int

    @classmethod
    def of(cls, points: pd.DataFrame) -> ErrorSummary:
        return cls.of_arrays(points["ape_pct"].to_numpy(dtype=float), points["inside_interval"].astype(bool).to_numpy())

    @classmethod
    def of_arrays(cls, ape: np.ndarray, inside: np.ndarray) -> ErrorSummary:
        """The summary of errors `ape` (%) and whether each was inside its interval (`inside`, booleans)."""
        if not len(ape):
            return cls(0, None, None, None, 0)
        return cls(len(ape), float(np.median(ape)), float(np.quantile(ape, 0.9)), float(inside.mean()),
                   int(inside.sum()))

    def as_dict(self, prefix: str) -> dict[str, Any]:
        return {f"{prefix}_n": self.n, f"{prefix}_median_ape_pct": self.median_ape_pct,
                f"{prefix}_p90_ape_pct": self.p90_ape_pct, f"{prefix}_coverage": self.coverage}


@dataclass(frozen=True)
class Comparison:
    """One set of backtest points summarised: `predict`'s answers (all, trusted, untrusted), the model's and
    the naive rule's forecasts; the three on the results each answer and the naive rule forecast (`common_*`);
    `better` names the lower median there ("answer" or "naive"), the naive rule only if strictly lower."""

    answer: ErrorSummary
    trusted: ErrorSummary
    untrusted: ErrorSummary
    model: ErrorSummary
    naive: ErrorSummary
    common_n: int
    common_answer_median_ape_pct: float | None
    common_model_median_ape_pct: float | None
    common_naive_median_ape_pct: float | None
    methods: dict[str, int]  # how many answers each method gave

    @property
    def better(self) -> str:
        if self.common_n and self.common_naive_median_ape_pct is not None and \
                self.common_answer_median_ape_pct is not None and \
                self.common_naive_median_ape_pct < self.common_answer_median_ape_pct - TIE_PCT:
            return NAIVE_METHOD
        return ANSWER

    def as_dict(self) -> dict[str, Any]:
        return {**self.answer.as_dict("answer"), **self.trusted.as_dict("trusted"),
                **self.untrusted.as_dict("untrusted"), **self.model.as_dict("model"),
                **self.naive.as_dict("naive"), "common_n": self.common_n,
                "common_answer_median_ape_pct": self.common_answer_median_ape_pct,
                "common_model_median_ape_pct": self.common_model_median_ape_pct,
                "common_naive_median_ape_pct": self.common_naive_median_ape_pct,
                "answer_methods": dict(sorted(self.methods.items())), "better": self.better}

    def record(self) -> ComparisonRecord:
        """`as_dict` as the declared record."""
        return ComparisonRecord.model_validate(self.as_dict())


def compare(points: pd.DataFrame) -> Comparison:
    """The Comparison of a set of backtest points (POINT_COLUMNS)."""
    return _PointArrays.of(points).compare(np.ones(len(points), dtype=bool))


@dataclass(frozen=True)
class _PointArrays:
    """The columns of backtest points (POINT_COLUMNS) that `compare` reads, as arrays, one entry per point, with
    each point's result (`_result_keys`): the summaries compare many subsets of the same points."""

    keys: np.ndarray
    method: np.ndarray
    ape: np.ndarray
    inside: np.ndarray
    trusted: np.ndarray
    chosen: np.ndarray

    @classmethod
    def of(cls, points: pd.DataFrame) -> _PointArrays:
        return cls(_result_keys(points), points["method"].to_numpy(dtype=object),
                   points["ape_pct"].to_numpy(dtype=float), points["inside_interval"].astype(bool).to_numpy(),
                   points["trusted"].astype(bool).to_numpy(), points["chosen"].to_numpy(dtype=object))

    def compare(self, subset: np.ndarray) -> Comparison:
        """The Comparison of the points where `subset` (booleans) holds."""
        rows = np.flatnonzero(subset)
        method, ape, inside = self.method[rows], self.ape[rows], self.inside[rows]
        answers = method == ANSWER
        trusted = answers & self.trusted[rows]
        common = dict(zip((ANSWER, MODEL, NAIVE_METHOD),
                          _common_rows(self.keys[rows], method, (ANSWER, MODEL, NAIVE_METHOD))))

        def summary(mask: np.ndarray) -> ErrorSummary:
            return ErrorSummary.of_arrays(ape[mask], inside[mask])

        def median(method_rows: np.ndarray) -> float | None:
            return float(np.median(ape[method_rows])) if len(method_rows) else None

        return Comparison(
            answer=summary(answers), trusted=summary(trusted), untrusted=summary(answers & ~trusted),
            model=summary(method == MODEL), naive=summary(method == NAIVE_METHOD), common_n=len(common[ANSWER]),
            common_answer_median_ape_pct=median(common[ANSWER]), common_model_median_ape_pct=median(common[MODEL]),
            common_naive_median_ape_pct=median(common[NAIVE_METHOD]),
            methods={str(name): int(n) for name, n in pd.Series(self.chosen[rows][answers]).value_counts().items()})


class AnswerErrors(Record):
    """Absolute percentage errors of `predict`'s answers in the backtest (`ErrorSummary`)."""

    answer_n: int
    """Answers."""
    answer_median_ape_pct: float | None
    """Their median absolute percentage error (%; lower: better); None without an answer."""
    answer_p90_ape_pct: float | None
    """Its 90th percentile (%)."""
    answer_coverage: float | None
    """The share of published times inside the answers' interval (0 to 1; the interval's level is the aim)."""


class KindErrors(AnswerErrors):
    """The answers of one kind of forecast."""

    kind: str
    """The kind (one of KINDS, or the naive rule)."""


class ComparisonRecord(AnswerErrors):
    """A set of backtest points summarised (`Comparison`): `predict`'s answers (all, trusted, untrusted), the
    model's and the naive rule's forecasts, each as count, median and 90th-percentile error (%) and coverage, and
    the three on the results both the answer and the naive rule forecast (`common_*`)."""

    trusted_n: int
    """Trusted answers."""
    trusted_median_ape_pct: float | None
    """Their median error (%)."""
    trusted_p90_ape_pct: float | None
    """Their 90th-percentile error (%)."""
    trusted_coverage: float | None
    """Their share inside the interval."""
    untrusted_n: int
    """Untrusted answers."""
    untrusted_median_ape_pct: float | None
    """Their median error (%)."""
    untrusted_p90_ape_pct: float | None
    """Their 90th-percentile error (%)."""
    untrusted_coverage: float | None
    """Their share inside the interval."""
    model_n: int
    """The model's forecasts."""
    model_median_ape_pct: float | None
    """Their median error (%)."""
    model_p90_ape_pct: float | None
    """Their 90th-percentile error (%)."""
    model_coverage: float | None
    """Their share inside the interval."""
    naive_n: int
    """The naive rule's forecasts."""
    naive_median_ape_pct: float | None
    """Their median error (%)."""
    naive_p90_ape_pct: float | None
    """Their 90th-percentile error (%)."""
    naive_coverage: float | None
    """Their share inside the interval."""
    common_n: int
    """Results forecast by both the answer and the naive rule."""
    common_answer_median_ape_pct: float | None
    """The answers' median error on them (%)."""
    common_model_median_ape_pct: float | None
    """The model's median error on them (%)."""
    common_naive_median_ape_pct: float | None
    """The naive rule's median error on them (%)."""
    answer_methods: dict[str, int]
    """How many answers each method gave."""
    better: str
    """The lower median on the common results: "answer", or "naive" only if strictly lower."""


class FoldComparison(ComparisonRecord):
    """The answers for one round, forecast from the rounds before it."""

    fold: str
    """The round forecast."""


class FamilyComparison(ComparisonRecord):
    """The answers for one accelerator family."""

    family: str
    """The accelerator family."""


class BacktestSummary(ComparisonRecord):
    """decide.json's `backtest` (`summarise_backtest`): every answer, then by round, family and kind."""

    folds: list[FoldComparison]
    """By round forecast, oldest first."""
    latest_fold: FoldComparison | None
    """The latest round forecast on its own."""
    families: list[FamilyComparison]
    """By accelerator family, by name."""
    kinds: list[KindErrors]
    """By kind of forecast, for the kinds answered."""
    calibrated_share: float | None
    """The share of answers whose interval is calibrated on earlier forecasts (0 to 1)."""


def summarise_backtest(points: pd.DataFrame) -> BacktestSummary:
    """decide.json's `backtest`: overall, the latest fold on its own, and per fold, family and model kind."""
    folds = sorted(points["fold"].unique(), key=round_version) if len(points) else []
    answers = points[points["method"] == ANSWER]
    arrays = _PointArrays.of(points)
    fold, family = points["fold"].to_numpy(dtype=object), points["accelerator_family"].to_numpy(dtype=object)
    return BacktestSummary.model_validate({
        **arrays.compare(np.ones(len(points), dtype=bool)).as_dict(),
        "folds": [{"fold": name, **arrays.compare(fold == name).as_dict()} for name in folds],
        "latest_fold": {"fold": folds[-1], **arrays.compare(fold == folds[-1]).as_dict()} if folds else None,
        "families": [{"family": name, **arrays.compare(family == name).as_dict()}
                     for name in sorted(points["accelerator_family"].unique())],
        "kinds": [{"kind": kind, **ErrorSummary.of(answers[answers["kind"] == kind]).as_dict("answer")}
                  for kind in (*KINDS, NAIVE) if (answers["kind"] == kind).any()],
        "calibrated_share": float((answers["calibration"] != UNCALIBRATED).mean()) if len(answers) else None,
    })


# --- answers ------------------------------------------------------------------------------------------------------

def retirement_note(benchmark: str, latest_round: str) -> str | None:
    """A sentence when the catalogue says `benchmark` is not run in the round after `latest_round` (the latest
    round fitted on): it was retired, and the sentence names its last round. None while it is still run."""
    entry = BY_ID.get(benchmark)
    if entry is None or entry.last_round is None or round_version(entry.last_round) > round_version(latest_round):
        return None
    return (f"{benchmark} was retired from MLPerf Training after {entry.last_round}, its last round: the round "
            f"forecast will not run it, so read this as history")


class Answer(Record):
    """One forecast as `predict` gives it (`answer`), and as decide.json's `forecasts` hold it: times in minutes,
    stored to ANSWER_DECIMALS."""

    benchmark: str
    """The benchmark."""
    accelerator: str
    """The accelerator family."""
    form_factor: str
    """Its form factor (UNSPECIFIED where the descriptions do not say)."""
    count: int
    """Accelerators."""
    predicted_min: float
    """The forecast time to train (minutes)."""
    low_min: float
    """Its interval: low end (minutes)."""
    high_min: float
    """High end (minutes)."""
    interval: float
    """The interval's level (params `decide.interval`, a fraction)."""
    method: str
    """The method answering: one of CANDIDATES."""
    kind: str
    """The kind of forecast: one of KINDS, or NAIVE."""
    specification_based: bool
    """Whether it borrows from other families: their scaling, or the specifications."""
    trusted: bool
    """Whether it meets params `decide.trust` (`trust_reasons`)."""
    reasons: list[str]
    """Why it is not trusted; empty when it is."""
    rounds: list[str]
    """The rounds fitted on, oldest first."""
    calibration: str
    """Where the interval's residuals came from."""
    note: str
    """Why this method, in a sentence."""
    extrapolated: bool
    """Beyond the trusted count range (params `decide.trust.max_count_factor`)."""
    notes: list[str]
    """What else a reader must know: extrapolated, data rising with count, retired."""

    @field_serializer("predicted_min", "low_min", "high_min")
    def _stored(self, minutes: float) -> float:
        return round(minutes, ANSWER_DECIMALS)


@dataclass(frozen=True)
class FittedBenchmark:
    """Everything `predict` and `recommend` need to answer for one benchmark, fitted once by the decide stage
    and saved in its models.json (`pipeline.analysis.forecasting.models_artifact`): the forecast model of the
    benchmark's
    results in scope, each (method, kind)'s calibration for the next round, the method chosen on the backtest,
    the backtest evidence for the trust rule, and the published results."""

    benchmark: str
    not_analysed_reason: str | None  # why the decide stage skipped the benchmark; None when it analysed it
    interval: float
    forecaster: Forecaster
    calibrations: dict[tuple[str, str, bool], Calibration]  # (method, kind, trusted) -> its calibration
    method: str  # the method `predict` answers with (one of CANDIDATES)
    candidate_medians: dict[str, float | None]  # each candidate's backtest median error on the common results
    comparison: ComparisonRecord  # `compare` of the benchmark's backtest points
    family_evidence: dict[tuple[str, str], Evidence]  # (method, family) -> inside, n, median error % of its
    kind_evidence: dict[tuple[str, str], Evidence]  # backtest forecasts; (method, kind) -> the same
    published: pd.DataFrame  # the model inputs, PUBLISHED_COLUMNS

    @property
    def target_time(self) -> float:
        """The round forecast: the one after the latest fitted on."""
        return max(round_published(name) for name in self.forecaster.rounds) + ROUND_STEP_YEARS

    def families(self) -> list[str]:
        return sorted(self.published["accelerator_family"].unique())

    @cached_property
    def _family_published(self) -> dict[str, tuple[int, float, float]]:
        by_family = self.published.groupby("accelerator_family")
        return {str(family): (int(rounds), float(low), float(high)) for family, rounds, low, high in
                zip(by_family.size().index, by_family["round"].nunique(), by_family["accelerator_count"].min(),
                    by_family["accelerator_count"].max())}

    def family_rounds(self, family: str) -> int:
        """Rounds with published results of `family` (0 without)."""
        return self._family_published.get(family, (0, math.nan, math.nan))[0]

    def family_range(self, family: str) -> tuple[float, float] | None:
        """The family's smallest and largest published count (any form factor), None without results."""
        found = self._family_published.get(family)
        return None if found is None else (found[1], found[2])

    def curve(self, family: str, form_factor: str) -> CountCurve | None:
        """The unit's count curve (the model's, without the drift: the break-even's), None without results."""
        return self.forecaster.curves.get((family, form_factor))


def fit_benchmark(benchmark: str, frame: pd.DataFrame, points: pd.DataFrame, level: float,
                  not_analysed_reason: str | None = None) -> FittedBenchmark:
    """The FittedBenchmark of `benchmark` from its model inputs `frame` (at least one row) and the backtest
    `points` of every benchmark (POINT_COLUMNS, folds up to the rounds of `frame`; other benchmarks' earlier
    residuals help calibrate)."""
    forecaster = fit(frame)
    target_time = max(round_published(name) for name in forecaster.rounds) + ROUND_STEP_YEARS
    history = ResidualHistory.of(points[points["method"] != ANSWER])
    calibrations = {(method, kind, trusted): history.calibration(benchmark, method, kind, level,
                                                                 forecaster.spread_log, target_time, trusted)
                    for method in CANDIDATES for kind in ((*KINDS,) if method in (MODEL, BLEND) else (NAIVE,))
                    for trusted in (True, False)}
    own = points[points["benchmark"] == benchmark]
    method, medians = choose_method(own[own["method"] != ANSWER])
    forecasts = own[own["method"] != ANSWER]
    return FittedBenchmark(benchmark=benchmark, not_analysed_reason=not_analysed_reason, interval=level,
                           forecaster=forecaster, calibrations=calibrations, method=method,
                           candidate_medians=medians, comparison=compare(own).record(),
                           family_evidence=_evidence(forecasts, "accelerator_family"),
                           kind_evidence=_evidence(forecasts, "kind"),
                           published=frame[PUBLISHED_COLUMNS].sort_values(PUBLISHED_COLUMNS, ignore_index=True))


def check_count(count: float) -> int:
    """`count` as a whole number of accelerators, or a UsageError saying what is wrong (not a positive whole
    number, or more than ABSURD_COUNT)."""
    if not (isinstance(count, (int, float, np.integer, np.floating)) and math.isfinite(count)
            and count >= 1 and float(count).is_integer()):
        raise UsageError(f"the accelerator count must be a positive whole number, got {count!r}")
    if count > ABSURD_COUNT:
        raise UsageError(f"{count:,.0f} accelerators is refused: more than {ABSURD_COUNT:,} (five times the largest "
                         f"training clusters reported by 2025), so any number would be made up")
    return int(count)


@dataclass(frozen=True)
class AnswerCurve:
    """`predict`'s forecasts of one family and form factor at many counts: the method and kind answering, and per
    count (accelerators) the forecast's log minutes, its interval's log half-width and its distance (log count
    ratio) outside the published counts."""

    method: str
    kind: str
    calibration: Calibration
    counts: np.ndarray
    log_minutes: np.ndarray
    half_width: np.ndarray
    distance: np.ndarray


def answer_curve(fitted: FittedBenchmark, family: str, form_factor: str, counts: np.ndarray,
                 trusted: bool = False) -> AnswerCurve:
    """The AnswerCurve of `family` in `form_factor` at `counts` (positive), for the round after the latest
    `fitted` was fitted on: the method chosen on the benchmark's backtest (the model where it has nothing to go
    on), its interval calibrated for forecasts as `trusted` as these (the untrusted, wider one by default),
    wider the further a count lies outside the published counts. Raises UsageError when no method can answer."""
    counts = np.asarray(counts, dtype=float)
    forecast = fitted.forecaster.forecast_arrays(np.full(len(counts), family, dtype=object),
                                                 np.full(len(counts), form_factor, dtype=object), counts,
                                                 fitted.target_time)
    if not np.isfinite(forecast[MODEL]).all():
        missing = ("too few families have specifications to regress on" if family in specifications().index
                   else "no row in the accelerator specification table (pipeline/mlperf/hardware/accelerators.csv)")
        raise UsageError(f"no forecast for {family} on {fitted.benchmark}: it has no results in scope and {missing}")
    method = fitted.method if np.isfinite(forecast[fitted.method]).all() else MODEL
    kind = NAIVE if method == MONOTONE else str(forecast["kind"][0])
    calibration = fitted.calibrations[(method, kind, trusted)]
    distance = forecast["distance"]
    return AnswerCurve(method=method, kind=kind, calibration=calibration, counts=counts,
                       log_minutes=forecast[method],
                       half_width=np.asarray(calibration.half_width(distance), dtype=float), distance=distance)


def answer_reasons(fitted: FittedBenchmark, family: str, count: float, method: str, kind: str,
                   rule: Trust) -> list[str]:
    """Why `predict`'s answer for `family` x `count` by `method` and `kind` is not trusted (`trust_reasons`, and
    first that the decide stage did not analyse the benchmark); empty: trusted."""
    reasons = trust_reasons(fitted.family_rounds(family), count, fitted.family_range(family),
                            fitted.family_evidence.get((method, family), (0, 0, None)),
                            fitted.kind_evidence.get((method, kind), (0, 0, None)), rule)
    if fitted.not_analysed_reason is not None:
        reasons.insert(0, f"the decide stage did not analyse {fitted.benchmark}: {fitted.not_analysed_reason}")
    return reasons


def answer_band(fitted: FittedBenchmark, family: str, form_factor: str, counts: np.ndarray,
                rule: Trust) -> pd.DataFrame:
    """`answer`'s forecast and interval at many `counts` (whole, positive) of one family and form factor at once:
    columns predicted_min, low_min, high_min, trusted, one row per count (each count's interval the trusted
    one where its answer is trusted, as `answer` gives it)."""
    counts = np.asarray(counts, dtype=float)
    curve = answer_curve(fitted, family, form_factor, counts)
    trusted = np.array([not answer_reasons(fitted, family, count, curve.method, curve.kind, rule)
                        for count in counts], dtype=bool)
    half_width = curve.half_width
    if trusted.any():
        half_width = np.where(trusted, answer_curve(fitted, family, form_factor, counts, trusted=True).half_width,
                              half_width)
    return pd.DataFrame({"predicted_min": np.exp(curve.log_minutes),
                         "low_min": np.exp(curve.log_minutes - half_width),
                         "high_min": np.exp(curve.log_minutes + half_width), "trusted": trusted})


def answer(fitted: FittedBenchmark, family: str, form_factor: str, count: float, rule: Trust) -> Answer:
    """Forecast `family` x `count` for the round after the latest `fitted` was fitted on (`answer_curve`), with
    its trust (never trusted when the decide stage did not analyse the benchmark) and notes. Raises UsageError
    for a count that is not a whole number or is absurd (`check_count`), and when no method can answer."""
    count = check_count(count)
    benchmark = fitted.benchmark
    curve = answer_curve(fitted, family, form_factor, np.array([float(count)]))
    method, kind = curve.method, curve.kind
    published = fitted.family_range(family)
    reasons = answer_reasons(fitted, family, count, method, kind, rule)
    if not reasons:  # the interval of trusted forecasts, calibrated on trusted ones
        curve = answer_curve(fitted, family, form_factor, np.array([float(count)]), trusted=True)
    centre, half_width, distance = float(curve.log_minutes[0]), float(curve.half_width[0]), float(curve.distance[0])
    extrapolated = published is None or not (published[0] / rule.max_count_factor <= count
                                             <= rule.max_count_factor * published[1])
    notes = []
    if extrapolated:
        where = (f"lies outside the published {published[0]:g} to {published[1]:g}" if published is not None
                 else f"has no published {family} result to stand on")
        notes.append(f"extrapolated: {count} accelerators {where}; the interval widens with the log distance from "
                     f"the published counts (x{math.exp(half_width):.3g} either way here)")
    elif distance > 0:
        notes.append(f"outside the published counts of {family} {form_factor}: the interval is widened for the "
                     f"distance")
    rising = rising_published(fitted.published, family, form_factor, count)
    if rising:
        notes.append(rising)
    retired = retirement_note(benchmark, fitted.forecaster.rounds[-1])
    if retired:
        notes.append(retired)
    return Answer(benchmark=benchmark, accelerator=family, form_factor=form_factor, count=count,
                  predicted_min=math.exp(centre), low_min=math.exp(centre - half_width),
                  high_min=math.exp(centre + half_width), interval=fitted.interval, method=method, kind=kind,
                  specification_based=kind in (POOLED, SPECIFICATION), trusted=not reasons, reasons=reasons,
                  rounds=list(fitted.forecaster.rounds), calibration=curve.calibration.q_source,
                  note=method_note(fitted, method), extrapolated=extrapolated, notes=notes)


def method_note(fitted: FittedBenchmark, method: str) -> str:
    """Why `predict` answers `fitted`'s benchmark with `method`, in a sentence."""
    medians = fitted.candidate_medians
    shown = ", ".join(f"{name} {_pct(medians.get(name))}" for name in CANDIDATES)
    if method != fitted.method:
        return (f"the model: the chosen {fitted.method} needs the family's own results (backtest median errors: "
                f"{shown})")
    if medians.get(MODEL) is None:
        return (f"no backtest compares the methods on {fitted.benchmark} (that needs results in two rounds of the "
                f"same family): the model answers")
    if method == MODEL:
        return (f"no other candidate's backtest median error on {fitted.benchmark} is more than "
                f"{100 * CHOICE_MARGIN:.0f}% below the model's ({shown}, on the same results)")
    return (f"its backtest median error on {fitted.benchmark} is more than {100 * CHOICE_MARGIN:.0f}% below the "
            f"model's ({shown}, on the same results)")


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}%"


def load_backtest() -> pd.DataFrame:
    """The backtest stage's points, or a UsageError saying how to make them."""
    if not BACKTEST.is_file():
        raise UsageError(f"{BACKTEST} not found: run `dvc repro backtest` first")
    points = pd.read_parquet(BACKTEST)
    # Python strings, not Arrow-backed ones: the summaries select from these points many times.
    return points.astype({name: object for name in points.columns if pd.api.types.is_string_dtype(points[name])})
