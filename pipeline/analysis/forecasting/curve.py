"""The count curve of one unit (an accelerator family in one form factor): log minutes against log
accelerator count, piecewise linear between the published counts with every slope in [-1, 0]
(`CountCurve`, `fit_count_curve`); see `pipeline.analysis.forecasting.model` for its place in the model.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

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
# The break-even beyond the knots of a curve whose tail is not a power law is found by bisection in log count, this
# many halvings of BREAK_EVEN_SPAN (1e-15 of a log count: exact to the last bit, the same on every machine).
BISECTION_STEPS = 60
BREAK_EVEN_SPAN = 50.0
# The forms of the curve's shape beyond its published counts (issue 50), `ScalingShape`.
POWER, AMDAHL, COMMUNICATION = "constant exponent", "fixed plus divisible", "communication-aware"
FORMS = (POWER, AMDAHL, COMMUNICATION)


@dataclass(frozen=True)
class ScalingShape:
    """The shape of log minutes against log count (up to a constant) that a count curve follows beyond its
    knots and that its slopes between them are pulled towards. POWER: `exponent` x log n (a constant slope).
    AMDAHL and COMMUNICATION: log(t(n) / a) for t(n) = c + a / n + k log2(n / domain) beyond `domain` accelerators
    (an all-reduce tree over the inter-node fabric; none inside the NVLink or ICI domain), with `serial` = c / a and
    `communication` = k / a (0 for AMDAHL), held flat from the count where t stops falling (t never rises with
    the count). Every slope lies in [-1, 0]."""

    form: str
    exponent: float
    serial: float = 0.0
    communication: float = 0.0
    domain: float = 1.0

    def log_shape(self, log_counts: np.ndarray) -> np.ndarray:
        """The shape at `log_counts` (log accelerators, 1-d)."""
        if self.form == POWER:
            return self.exponent * log_counts
        counts = np.exp(log_counts)
        if self.communication > 0:
            # d t / d n = -a / n^2 + k / (n ln 2) vanishes at n = ln 2 / (k / a); from there t is held flat
            counts = np.minimum(counts, max(self.domain, math.log(2) / self.communication))
        fabric = np.log2(np.maximum(counts / self.domain, 1.0))
        return np.log(self.serial + 1.0 / counts + self.communication * fabric)


# --- the count curve ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CountCurve:
    """log minutes against log accelerator count: linear between the knots (`log_counts`, increasing, with
    `log_times` at them), every slope in [-1, 0], and beyond the knots the shape `shape` (`ScalingShape`; without
    one, slope `exponent`, in [-1, 0]: the POWER form). So t(n) never rises with n and t(n) / t(n + 1) <= (n + 1) / n
    for every n. `exponent` is the unit's within-round scaling exponent in every form."""

    log_counts: np.ndarray
    log_times: np.ndarray
    exponent: float
    shape: ScalingShape | None = None

    @property
    def form(self) -> str:
        """The form of the curve's shape beyond its knots (one of FORMS)."""
        return POWER if self.shape is None else self.shape.form

    def _log_shape(self, x: np.ndarray) -> np.ndarray:
        return self.exponent * x if self.shape is None else self.shape.log_shape(x)

    def log_time(self, counts: np.ndarray | float) -> np.ndarray:
        """log minutes at `counts` (accelerators, any shape broadcast to 1-d)."""
        x = np.log(np.atleast_1d(np.asarray(counts, dtype=float)))
        inside = np.interp(x, self.log_counts, self.log_times)
        ends = self._log_shape(self.log_counts[[0, -1]])
        below = self.log_times[0] + self._log_shape(x) - ends[0]
        above = self.log_times[-1] + self._log_shape(x) - ends[1]
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
        if self.shape is None:
            tail = 1.0 + self.exponent
            if tail <= 0:
                return None
            return float(math.exp(xs[-1] + (g[-1] - target) / tail))
        # beyond the knots g falls as x + shape(x) rises (never faster than x): bisect where it meets the floor
        base = float(self.log_time(reference)[0]) + x0

        def above_floor(x: float) -> bool:
            return base - float(self.log_time(math.exp(x))[0]) - x > target

        low, high = float(xs[-1]), float(xs[-1]) + BREAK_EVEN_SPAN
        if above_floor(high):
            return None
        for _ in range(BISECTION_STEPS):
            middle = 0.5 * (low + high)
            low, high = (middle, high) if above_floor(middle) else (low, middle)
        return float(math.exp(high))


def fit_count_curve(log_counts: np.ndarray, log_times: np.ndarray, exponent: float,
                    prior_weight: float = SLOPE_PRIOR_WEIGHT, scale: float = HUBER_SCALE,
                    submitters: np.ndarray | None = None,
                    offset_weight: float = SUBMITTER_PRIOR_WEIGHT, rounds: np.ndarray | None = None,
                    round_weight: float = ROUND_PRIOR_WEIGHT, shape: ScalingShape | None = None) -> CountCurve:
    """The count curve of results (`log_counts`, `log_times`: one entry per result): knots at the distinct
    counts, each step between knots held in [-(log count ratio), 0], fitted by robust least squares (Huber loss
    of scale `scale`, `scipy.optimize.least_squares`) to every result, each slope pulled towards `exponent` with
    weight `prior_weight` per unit of log count (0: no pull). With `submitters` (one label per result), each
    submitter of two or more also gets an offset, pulled towards zero with weight `offset_weight`: the curve is
    then the typical submitter's. With `rounds` (each result's publication time), each round before the latest
    gets an offset pulled towards zero with weight `round_weight`: the curve is then the latest round's level
    with the shape of every round. `exponent` in [-1, 0] is also the slope beyond the knots, unless `shape` is
    given: then each step is pulled towards the shape's change between its knots, and the shape continues the
    curve beyond them."""
    return _count_curve(_floats(log_counts), _floats(log_times), float(exponent), float(prior_weight), float(scale),
                        None if submitters is None else tuple(str(name) for name in submitters),
                        float(offset_weight), None if rounds is None else _floats(rounds), float(round_weight),
                        shape)


def _floats(values: np.ndarray) -> tuple[float, ...]:
    return tuple(np.asarray(values, dtype=float).tolist())


# The backtest's folds and the decide stage's saved models fit many a curve on the same results again (a family
# without a new round keeps its naive rows; the saved models are read back): each is fitted once per process.
@lru_cache(maxsize=4096)
def _count_curve(log_counts: tuple[float, ...], log_times: tuple[float, ...], exponent: float, prior_weight: float,
                 scale: float, submitters: tuple[str, ...] | None, offset_weight: float,
                 rounds: tuple[float, ...] | None, round_weight: float, shape: ScalingShape | None) -> CountCurve:
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
    shape_steps = exponent * steps if shape is None else np.diff(shape.log_shape(knots))
    target = pull * shape_steps
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
                            np.clip(shape_steps, -steps, 0.0), np.zeros(n_groups)])
    solution = _exact_optimum(least_squares(residuals, start, jac=jacobian, bounds=(lower, upper), loss="huber",
                                            f_scale=scale, method="trf").x,
                              np.vstack([design, prior]), np.concatenate([times, target]), lower, upper, scale)
    rounded = np.round(solution, CURVE_DECIMALS) + 0.0
    step_values = np.clip(rounded[1:len(knots)], -steps, 0.0)  # a step at its bound stays exactly there
    return CountCurve(knots, rounded[0] + np.concatenate([[0.0], np.cumsum(step_values)]), float(exponent), shape)


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
