"""The scaling model of time to train against accelerator count, per (benchmark, accelerator family), and its
honest error; `pipeline.commands.predict` and the decide stage answer with it.

The model, fitted per (benchmark, accelerator family) on the scored results in the analysis scope (params
`analysis`, closed division by default), in log minutes:

    log t = a + b log n + log(1 + n / m) + d[form factor]

- `b` is the exponent at small counts (-1 is ideal linear scaling), bounded below at -1: the model never
  scales better than linearly, so its scaling efficiency never exceeds 1 (with b = -1 and a saturation term
  it is Amdahl's law, t = s + p / n);
- `m` is the saturation count: above it the slope flattens by up to one (the time per doubling stops halving),
  which is the sublinear, shrinking-gain scaling the published study reports. The term is fitted only where
  the family has at least `decide.saturation_min_counts` distinct counts, and kept only when its best value
  lies inside the published count range widened by ten on each side; otherwise (too few counts to tell a
  curve from noise, or no curvature) the model is the plain power law log t = a + b log n + d.
- `d` is an offset per form factor (SXM, PCIe, OAM, ...) within the family, because a PCIe card and an SXM
  module of one accelerator differ by up to twofold at the same count. A result whose description gives no
  form factor takes its family's most common one.

Why this model: on the published closed-division results (v0.7 to v5.0) we compared, by the held-out
errors defined below, a plain power law, a quadratic in log n, Amdahl's law (t = s + p/n), this power law with
saturation, each with and without a per-round term or a linear round trend, and with and without the
form-factor offset. Saturation lowered the leave-one-configuration-out median error of the large families
(ResNet-50 A100 10% -> 8%, H100 18% -> 15%; BERT H100 17% -> 10%) and the form-factor offset lowered it
further (ResNet-50 H100 to 6%, BERT H100 to 3%, BERT A100 from 21% to 17%). Amdahl's law, whose slope is -1
at small counts, did worse (ResNet-50 A100 12%, BERT A100 25%); the quadratic did about as well inside the
data but turns upward outside it (more accelerators, more time). A round term did not help: a held-out round's
software effect cannot be estimated from the other rounds, and families with few rounds became unstable
(BERT Gaudi: 104% leave-one-round-out with a round term, 51% without). So a prediction is for a typical
published system of the family across the rounds in scope; narrow `analysis.rounds` to predict for recent
software only.

Why the bound on b: unbounded, b fell below -1 in 30 of the 74 families, fitting a slow smallest system
(ResNet-50 A100: one PCIe card at 396 min, two at 118 min) as superlinear scaling: model efficiencies up to
1.3, and break-even counts far past the observed ones (ResNet-50 A100: 136 accelerators, where the published
efficiency is below 0.7 from 24; bounded: 16). The bound moved each benchmark's median held-out error by at
most three points (ResNet-50 5.8% -> 6.0%, SSD 7.5% -> 10.5%, BERT 8.4% -> 7.5%).

The prediction interval (level `decide.interval`) is the t-distribution interval of the least-squares fit in
log space, by the delta method over all estimated parameters (including log m; an exponent held at its bound
is fixed): log t0 +/- t_q * sqrt(s^2 + g' C g), with s the residual standard deviation, C = s^2 (J'J)^-1 and g
the gradient of log t0. It assumes the residual spread is the same at every count; the held-out interval
coverage in decide.json says how well that holds.

Honest error, per family and overall: leave-one-configuration-out (refit without one result, predict it)
and leave-one-round-out (refit without a whole round, predict its results) absolute percentage errors.
A family's model is not to be trusted when it has fewer than `decide.min_points` results, a median held-out
error above `decide.max_error`, or published counts spanning less than a doubling (held-out errors cannot see
that); a prediction outside the published counts of its form factor is an extrapolation.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit

from pipeline.analysis.forecast import ErrorSummary
from pipeline.analysis.scope import in_scope
from pipeline.settings import Analysis, Decide

UNSPECIFIED = "unspecified"
# The saturation count is searched over the published range widened by this factor on each side; beyond it
# the curve is flat (or straight) over the data and the extra parameter would only fit noise.
SATURATION_MARGIN = 10.0
SATURATION_GRID = 41
# Break-even search stops here: a larger count has never been published for any benchmark.
BREAK_EVEN_SEARCH_MAX = 1e6
NEAREST_PUBLISHED = 5
# The steepest exponent the model may take: linear scaling. Published results that look superlinear compare
# systems of different rounds, software or hosts; fitted, they made the model promise speed-ups of more than
# 2x per doubling and scaling efficiencies above 1 (ResNet-50 A100: 1.3 at 4 accelerators).
LINEAR_EXPONENT = -1.0
HELD_OUT_DTYPES = {"scheme": object, "family": object, "round": object, "submitter": object, "system": object,
                   "accelerator_count": float, "time_to_train_min": float, "predicted_min": float, "low_min": float,
                   "high_min": float, "ape_pct": float, "inside_interval": bool}


@dataclass(frozen=True)
class Prediction:
    count: float
    form_factor: str
    time_min: float
    low_min: float
    high_min: float
    extrapolated: bool


@dataclass(frozen=True)
class ScalingModel:
    """A fitted scaling model of one family; parameters are (a, b, d for form_factors[1:], [log m])."""

    family: str
    form_factors: tuple[str, ...]  # the first is the reference level, without an offset
    parameters: np.ndarray
    saturated: bool
    covariance: np.ndarray
    residual_sd: float
    dof: int
    t_quantile: float
    count_min: float
    count_max: float
    count_ranges: tuple[tuple[float, float], ...]  # published (min, max) count of each form factor
    n_points: int
    n_counts: int
    rounds: tuple[str, ...]

    @property
    def exponent(self) -> float:
        return float(self.parameters[1])

    @property
    def saturation_count(self) -> float | None:
        return float(np.exp(self.parameters[-1])) if self.saturated else None

    def log_time(self, counts: np.ndarray | float, form_factor: str | None = None) -> np.ndarray:
        log_count = np.log(np.atleast_1d(np.asarray(counts, dtype=float)))
        levels = np.full(len(log_count), form_factor or self.form_factors[0], dtype=object)
        return _log_time(self.parameters, self.form_factors, self.saturated, log_count, levels)

    def predict(self, count: float, form_factor: str | None = None) -> Prediction:
        level = form_factor or self.form_factors[0]
        time_min, low_min, high_min = (float(value[0]) for value in
                                       self.predict_many(np.array([float(count)]), np.array([level], dtype=object)))
        return Prediction(count=float(count), form_factor=level, time_min=time_min, low_min=low_min,
                          high_min=high_min,
                          extrapolated=not self.count_range(level)[0] <= count <= self.count_range(level)[1])

    def predict_many(self, counts: np.ndarray, form_factors: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Times to train in minutes and the interval's ends, one per (count, form factor of the model)."""
        log_count = np.log(np.asarray(counts, dtype=float))
        centre = _log_time(self.parameters, self.form_factors, self.saturated, log_count, form_factors)
        gradient = _jacobian(self.parameters, self.form_factors, self.saturated, log_count, form_factors)
        variance = np.einsum("ij,jk,ik->i", gradient, self.covariance, gradient)
        half_width = self.t_quantile * np.sqrt(self.residual_sd ** 2 + variance)
        return np.exp(centre), np.exp(centre - half_width), np.exp(centre + half_width)

    def count_range(self, form_factor: str | None = None) -> tuple[float, float]:
        """The published counts of a form factor: the model is fitted, not extrapolated, inside them."""
        return self.count_ranges[self.form_factors.index(form_factor or self.form_factors[0])]

    def slope(self, counts: np.ndarray | float) -> np.ndarray:
        """d log t / d log n: -1 is linear scaling, 0 is no gain from more accelerators."""
        log_count = np.log(np.atleast_1d(np.asarray(counts, dtype=float)))
        return self.exponent + (expit(log_count - self.parameters[-1]) if self.saturated
                                else np.zeros_like(log_count))

    def efficiency(self, counts: np.ndarray | float) -> np.ndarray:
        """t(n0) n0 / (t(n) n), n0 the smallest published count: 1 is linear scaling from n0 (no form factor
        dependence: its offset cancels)."""
        counts = np.atleast_1d(np.asarray(counts, dtype=float))
        log_ratio = self.log_time(self.count_min) - self.log_time(counts) + np.log(self.count_min / counts)
        return np.exp(log_ratio)

    def doubling_speedup(self, counts: np.ndarray | float) -> np.ndarray:
        """t(n) / t(2n): 2 is a perfect doubling, 1 is no gain."""
        counts = np.atleast_1d(np.asarray(counts, dtype=float))
        return np.exp(self.log_time(counts) - self.log_time(2 * counts))

    def break_even(self, floor: float) -> float | None:
        """The smallest count above n0 at which efficiency falls below `floor`; None if it does not below
        BREAK_EVEN_SEARCH_MAX. With b >= -1 efficiency does not rise, but a grid first keeps the search safe
        for any parameters a caller builds."""
        grid = np.geomspace(self.count_min, BREAK_EVEN_SEARCH_MAX, 400)
        below = np.flatnonzero(self.efficiency(grid) < floor)
        if below.size == 0:
            return None
        # below[0] > 0: efficiency is 1 at n0, above any floor
        low, high = np.log(grid[below[0] - 1]), np.log(grid[below[0]])
        from scipy.optimize import brentq

        return float(np.exp(brentq(lambda log_n: self.efficiency(np.exp(log_n))[0] - floor, low, high)))


@dataclass(frozen=True)
class FamilyAssessment:
    family: str
    n_points: int
    model: ScalingModel | None
    not_modelled_reason: str | None
    loco: ErrorSummary
    loro: ErrorSummary
    held_out: pd.DataFrame  # both schemes, one row per held-out prediction
    caveats: tuple[str, ...]

    @property
    def trusted(self) -> bool:
        return self.model is not None and not self.caveats


def model_inputs(configurations: pd.DataFrame, analysis: Analysis, benchmark: str) -> pd.DataFrame:
    """The in-scope results a model can use (a family and a time), with a `form_factor` for every row."""
    frame = in_scope(configurations, analysis, benchmark)
    frame = frame[frame["accelerator_family"].notna() & (frame["time_to_train_min"] > 0)].reset_index(drop=True)
    return _plain_strings(frame.assign(form_factor=_filled_form_factors(frame)))


def _plain_strings(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with its text columns as Python objects: pandas' Arrow-backed strings make the many small
    selections and groupings of the fits several times slower."""
    return frame.astype({name: object for name in frame.columns if pd.api.types.is_string_dtype(frame[name])})


def _filled_form_factors(frame: pd.DataFrame) -> pd.Series:
    def fill(group: pd.Series) -> pd.Series:
        known = group.dropna()
        return group.fillna(known.mode().iloc[0] if len(known) else UNSPECIFIED)

    if frame.empty:
        return pd.Series([], dtype=object)
    return frame.groupby("accelerator_family")["accelerator_form_factor"].transform(fill).astype(object)


def form_factor_levels(form_factors: pd.Series | np.ndarray) -> tuple[str, ...]:
    """Most common first (the reference level of the model and the default of a prediction), ties by name."""
    names, counts = np.unique(np.asarray(form_factors, dtype=str), return_counts=True)
    return tuple(str(name) for _, name in sorted(zip(-counts, names)))


def _design(log_count: np.ndarray, form_factors: np.ndarray, levels: tuple[str, ...]) -> np.ndarray:
    """The linear part's columns: intercept, log n, one indicator per non-reference form factor."""
    columns = [np.ones_like(log_count), log_count] + [(form_factors == level).astype(float) for level in levels[1:]]
    return np.column_stack(columns)


def _log_time(parameters: np.ndarray, levels: tuple[str, ...], saturated: bool, log_count: np.ndarray,
              form_factors: np.ndarray) -> np.ndarray:
    design = _design(log_count, form_factors, levels)
    linear = design @ parameters[:design.shape[1]]
    return (linear + np.logaddexp(0.0, log_count - parameters[-1])) if saturated else linear


def _jacobian(parameters: np.ndarray, levels: tuple[str, ...], saturated: bool, log_count: np.ndarray,
              form_factors: np.ndarray) -> np.ndarray:
    """d log t / d parameters: the design, plus d/d log m = -n/(n + m) when saturated."""
    design = _design(log_count, form_factors, levels)
    return np.column_stack([design, -expit(log_count - parameters[-1])]) if saturated else design


def not_fittable_reason(family_frame: pd.DataFrame) -> str | None:
    """Why the family's model cannot be fitted with an interval, or None when it can."""
    return _not_fittable(family_frame["accelerator_count"].to_numpy(dtype=float),
                         family_frame["form_factor"].to_numpy(dtype=object))


def _not_fittable(counts: np.ndarray, form_factors: np.ndarray) -> str | None:
    """not_fittable_reason of a family's counts and form factors (arrays of one row per result)."""
    levels = set(form_factors)
    n_parameters = 2 + len(levels) - 1
    if len(counts) == 1:
        return "a single result: no scaling to fit"
    if np.unique(counts).size < 2:
        return f"all {len(counts)} results use one accelerator count: no scaling to fit"
    if max(np.unique(counts[form_factors == level]).size for level in levels) < 2:
        return "each form factor was published at one accelerator count: scaling and form factor cannot be told apart"
    if len(counts) <= n_parameters:
        return f"{len(counts)} results for {n_parameters} parameters: no residual left to size an interval"
    return None


@lru_cache(maxsize=256)
def _t_quantile(probability: float, dof: int) -> float:
    from scipy.stats import t as student_t

    return float(student_t.ppf(probability, dof))


def fit_family(family_frame: pd.DataFrame, settings: Decide) -> ScalingModel:
    """Least squares in log space with b >= -1; the saturation count by a grid then a bounded search (the other
    parameters are linear given it). Call not_fittable_reason first."""
    return _fit_arrays(str(family_frame["accelerator_family"].iloc[0]),
                       family_frame["accelerator_count"].to_numpy(dtype=float),
                       np.log(family_frame["time_to_train_min"].to_numpy(dtype=float)),
                       family_frame["form_factor"].to_numpy(dtype=object), family_frame["round"].to_numpy(dtype=object),
                       settings)


def _fit_arrays(family: str, counts: np.ndarray, log_time: np.ndarray, form_factors: np.ndarray,
                rounds: np.ndarray, settings: Decide) -> ScalingModel:
    """fit_family of one row per result: accelerator counts, log minutes, form factors, rounds."""
    log_count = np.log(counts)
    levels = form_factor_levels(form_factors)
    design = _design(log_count, form_factors, levels)
    # The fit is linear given log m: solve it with fixed pseudo-inverses, for one or many log m at once.
    free_inverse = np.linalg.pinv(design)
    bound_inverse = np.linalg.pinv(np.delete(design, 1, axis=1))

    def solve(log_saturation: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Residual sums of squares and coefficients (one column per log m; a single column for None)."""
        targets = (log_time[:, None] if log_saturation is None
                   else log_time[:, None] - np.logaddexp(0.0, log_count[:, None] - log_saturation[None, :]))
        coefficients = _bounded_least_squares(free_inverse, bound_inverse, targets, log_count)
        return np.sum((targets - design @ coefficients) ** 2, axis=0), coefficients

    log_saturation = None
    # The saturation term costs one more parameter: it needs the counts to show a curve and a residual left.
    if np.unique(counts).size >= settings.saturation_min_counts and len(counts) > design.shape[1] + 1:
        log_saturation = _interior_saturation(lambda values: solve(values)[0], counts)
    saturated = log_saturation is not None
    coefficients = solve(None if log_saturation is None else np.array([log_saturation]))[1][:, 0]
    parameters = np.append(coefficients, [log_saturation]) if log_saturation is not None else coefficients
    residuals = log_time - _log_time(parameters, levels, saturated, log_count, form_factors)
    jacobian = _jacobian(parameters, levels, saturated, log_count, form_factors)
    free = np.ones(len(parameters), dtype=bool)
    # An exponent held at its bound is not estimated: it adds no variance and costs no degree of freedom.
    free[1] = parameters[1] != LINEAR_EXPONENT
    dof = len(counts) - int(np.linalg.matrix_rank(jacobian[:, free]))
    variance = float(residuals @ residuals) / dof
    covariance = np.zeros((len(parameters), len(parameters)))
    covariance[np.ix_(free, free)] = variance * np.linalg.pinv(jacobian[:, free].T @ jacobian[:, free])
    return ScalingModel(
        family=family, form_factors=levels, parameters=parameters, saturated=saturated, covariance=covariance,
        residual_sd=math.sqrt(variance), dof=dof, t_quantile=_t_quantile(0.5 + settings.interval / 2, dof),
        count_min=float(counts.min()), count_max=float(counts.max()),
        count_ranges=tuple((float(counts[form_factors == level].min()), float(counts[form_factors == level].max()))
                           for level in levels), n_points=len(counts),
        n_counts=int(np.unique(counts).size), rounds=tuple(sorted(set(rounds))))


def _bounded_least_squares(free_inverse: np.ndarray, bound_inverse: np.ndarray, targets: np.ndarray,
                           log_count: np.ndarray) -> np.ndarray:
    """Least squares of each column of `targets` with the exponent (row 1 of the result) at least
    LINEAR_EXPONENT, from the pseudo-inverses of the design and of the design without its log n column. The
    problem is a convex quadratic with one bound, so when the free optimum breaks the bound the constrained one
    lies on it: fix b and solve for the rest."""
    coefficients = free_inverse @ targets
    broken = coefficients[1] < LINEAR_EXPONENT
    if broken.any():
        rest = bound_inverse @ (targets[:, broken] - LINEAR_EXPONENT * log_count[:, None])
        coefficients[:, broken] = np.insert(rest, 1, LINEAR_EXPONENT, axis=0)
    return coefficients


def _interior_saturation(residual_sums: Callable[[np.ndarray], np.ndarray], counts: np.ndarray) -> float | None:
    """The best log m if it lies strictly inside the searched range, else None (both ends are power laws).
    `residual_sums` maps an array of log m to their residual sums of squares."""
    grid = np.linspace(np.log(counts.min() / SATURATION_MARGIN), np.log(counts.max() * SATURATION_MARGIN),
                       SATURATION_GRID)
    best = int(np.argmin(residual_sums(grid)))
    if best in (0, len(grid) - 1):
        return None
    from scipy.optimize import minimize_scalar

    return float(minimize_scalar(lambda value: float(residual_sums(np.array([value]))[0]),
                                 bounds=(grid[best - 1], grid[best + 1]), method="bounded").x)


def held_out_predictions(family_frame: pd.DataFrame, settings: Decide, scheme: str) -> pd.DataFrame:
    """Refit without each configuration (scheme "configuration") or each round ("round") and predict what was
    left out. Held-out rows whose training set cannot be fitted, or whose form factor it lacks, are skipped."""
    groups = family_frame.index.to_numpy() if scheme == "configuration" else family_frame["round"].to_numpy()
    family = str(family_frame["accelerator_family"].iloc[0]) if len(family_frame) else ""
    counts = family_frame["accelerator_count"].to_numpy(dtype=float)
    times = family_frame["time_to_train_min"].to_numpy(dtype=float)
    form_factors = family_frame["form_factor"].to_numpy(dtype=object)
    rounds = family_frame["round"].to_numpy(dtype=object)
    held_out, predictions = [], []
    for group in pd.unique(groups):
        train, test = groups != group, groups == group
        if _not_fittable(counts[train], form_factors[train]) is not None:
            continue
        model = _fit_arrays(family, counts[train], np.log(times[train]), form_factors[train], rounds[train],
                            settings)
        test &= np.isin(form_factors, model.form_factors)
        held_out.append(np.flatnonzero(test))
        predictions.append(np.column_stack(model.predict_many(counts[test], form_factors[test])))
    if not held_out:
        return held_out_frame([])
    rows = np.concatenate(held_out)
    predicted, low, high = np.concatenate(predictions).T
    return pd.DataFrame({
        "scheme": scheme, "family": family, "round": rounds[rows],
        "submitter": family_frame["submitter"].to_numpy(dtype=object)[rows],
        "system": family_frame["system"].to_numpy(dtype=object)[rows], "accelerator_count": counts[rows],
        "time_to_train_min": times[rows], "predicted_min": predicted, "low_min": low, "high_min": high,
        "ape_pct": 100 * np.abs(predicted / times[rows] - 1),
        "inside_interval": (low <= times[rows]) & (times[rows] <= high)}, columns=list(HELD_OUT_DTYPES)).astype(
        HELD_OUT_DTYPES)


def held_out_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Held-out predictions with fixed columns and dtypes, also when there are none."""
    return pd.DataFrame(rows, columns=list(HELD_OUT_DTYPES)).astype(HELD_OUT_DTYPES)


def assess_family(family_frame: pd.DataFrame, settings: Decide) -> FamilyAssessment:
    family = str(family_frame["accelerator_family"].iloc[0])
    reason = not_fittable_reason(family_frame)
    if reason is not None:
        none = held_out_frame([])
        return FamilyAssessment(family, len(family_frame), None, reason, ErrorSummary.of(none),
                                ErrorSummary.of(none), none, ())
    family_frame = family_frame.reset_index(drop=True)
    held_out = pd.concat([held_out_predictions(family_frame, settings, scheme)
                          for scheme in ("configuration", "round")], ignore_index=True)
    loco = ErrorSummary.of(held_out[held_out["scheme"] == "configuration"])
    loro = ErrorSummary.of(held_out[held_out["scheme"] == "round"])
    model = fit_family(family_frame, settings)
    return FamilyAssessment(family, len(family_frame), model, None, loco, loro, held_out,
                            distrust_reasons(model, loco, loro, settings))


def distrust_reasons(model: ScalingModel, loco: ErrorSummary, loro: ErrorSummary,
                     settings: Decide) -> tuple[str, ...]:
    """Why a family's model should not be trusted; empty when nothing speaks against it."""
    limit = 100 * settings.max_error
    found = []
    if model.n_points < settings.min_points:
        found.append(f"only {model.n_points} published results (fewer than {settings.min_points})")
    if model.count_max < 2 * model.count_min:
        # Held-out errors cannot reveal this: every held-out result sits inside the same narrow range.
        found.append(f"the published counts ({model.count_min:g} to {model.count_max:g}) span less than a doubling: "
                     "the scaling exponent rests on too narrow a range")
    if loco.median_ape_pct is None:
        found.append("no result could be held out and predicted: the error is unknown")
    elif loco.median_ape_pct > limit:
        found.append(f"leave-one-configuration-out median error {loco.median_ape_pct:.0f}% (above {limit:.0f}%)")
    if loro.median_ape_pct is not None and loro.median_ape_pct > limit:
        found.append(f"leave-one-round-out median error {loro.median_ape_pct:.0f}% (above {limit:.0f}%): "
                     "a new round's results are hard to predict")
    return tuple(found)


def assess_benchmark(frame: pd.DataFrame, settings: Decide) -> dict[str, FamilyAssessment]:
    """Every family with data, most published results first (then by name)."""
    sizes = frame["accelerator_family"].value_counts()
    families = sorted(sizes.index, key=lambda family: (-sizes[family], family))
    return {family: assess_family(frame[frame["accelerator_family"] == family], settings) for family in families}


def all_held_out(assessments: dict[str, FamilyAssessment], scheme: str) -> pd.DataFrame:
    """Every family's held-out predictions of one scheme ("configuration" or "round")."""
    held_out = pd.concat([held_out_frame([]), *(a.held_out for a in assessments.values())], ignore_index=True)
    return held_out[held_out["scheme"] == scheme].astype(HELD_OUT_DTYPES)


def nearest_published(family_frame: pd.DataFrame, count: float, n: int = NEAREST_PUBLISHED) -> pd.DataFrame:
    """The family's published results closest in accelerator count (on a log scale), fastest first on ties."""
    distance = (np.log(family_frame["accelerator_count"].astype(float)) - math.log(count)).abs()
    nearest = family_frame.assign(distance=distance).sort_values(["distance", "time_to_train_min"]).head(n)
    return nearest.assign(accelerator_count=nearest["accelerator_count"].astype(int))[
        ["round", "submitter", "system", "form_factor", "accelerator_count", "time_to_train_min"]]


def canonical_spelling(name: str, known: Sequence[str]) -> str | None:
    """The name of `known` (families, form factors) that `name` spells, ignoring case and surrounding spaces
    ("h100" is H100)."""
    by_key = {family.casefold(): family for family in known}
    return by_key.get(name.strip().casefold())


def families_with_data(frame: pd.DataFrame) -> list[str]:
    return sorted(frame["accelerator_family"].unique())
