"""The one time-versus-count model: forecasts of a configuration's time to train in the next round, the
break-even, and their honest error measured forward in time (the backtest).

Fitted per benchmark on the scored results of earlier rounds, in log minutes. A unit is an accelerator family
in one form factor (H100 SXM, H100 PCIe); a group is a unit in one round.

    log t(n) = curve[unit](log n) + drift x (years from the unit's latest round to the target)

- curve, the unit's **count curve** (`CountCurve`, `fit_count_curve`), is fitted to every result of the unit:
  piecewise linear in log n between its published counts, each slope held in [-1, 0] (more accelerators never
  take longer, and never save more than their count ratio: t(n) / t(n + 1) <= (n + 1) / n), pulled towards the
  unit's exponent b (`SLOPE_PRIOR_WEIGHT`), with slope b beyond the published counts (the constant-exponent
  form; `fit`'s `form` takes the others issue 50 compared, `forms`, none kept: docs/predictions.md). Each round
  before the latest gets an offset (`ROUND_PRIOR_WEIGHT`), so the curve's level is the latest round's (today's software)
  and its shape comes from every round; each submitter an offset pulled towards zero (`SUBMITTER_PRIOR_WEIGHT`),
  so the curve is the typical submitter's (with two or more). The fit is robust (Huber loss, scale `HUBER_SCALE`)
  over every result of the unit, so no single result sets the level.
- b, the scaling exponent, comes from all rounds but only from differences *within* a group (same hardware,
  same round, different counts), so software progress between rounds does not pass for scaling: the unit's
  within-group least-squares slope shrunk towards the benchmark's pooled within-group slope
  (`EXPONENT_PRIOR_WEIGHT`), bounded to [-1, 0]. A unit never published at two counts in one round takes the
  pooled slope (kind "family level, benchmark scaling").
- drift is the software and hardware progress per year the forecasts apply (`shrunk_drift`): a benchmark with
  rounds of its own takes half (a damped trend) of the median, over consecutive groups of one unit, of the change
  in log-time level per year between them, shrunk towards every benchmark's (`pooled_drift`, `DriftPrior`); one
  with a single round takes half the median of every benchmark's first step between rounds. Never positive.
- A family with no results (or none in this form factor) is forecast from its specifications
  (`pipeline.mlperf.hardware.accelerators`: log peak dense BF16 TFLOPS and log memory bandwidth) when
  `MIN_SPEC_FAMILIES` families have them: the groups' log-time levels (each group's mean of log t - b log n, its
  log minutes at one accelerator on the unit's exponent: `WithinGroupFit`) regressed on a round effect and the two
  features; the forecast takes the latest round's effect, the pooled exponent and the drift (kind
  "specification").
- A family new to the benchmark whose sibling (`sibling_of`, its vendor's) has results here takes the sibling's
  curve and drift times their ratio by the law chosen on the earlier folds' first appearances
  (`siblings.choose_law`, carried with the drift prior, `DriftPrior.law`): BF16 compute, compute at the precision
  the forecast assumes, or compute and bandwidth (kind "sibling", re-centred on earlier folds' residuals,
  `RECENTRED_KINDS`), or their ratio **measured** where the two have results in one round at one count of other
  benchmarks and the choice takes it (`siblings.measured_ratios`, `DriftPrior.ratios`; kind "sibling, measured
  ratio", not re-centred). docs/predictions.md gives the candidates' backtest.

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

The backtest (`backtest`), its intervals (`intervals`), the trust rule (`trust`), its summaries
(`summaries`) and `predict`'s answers (`answers`) live beside this module in `pipeline.analysis.forecasting`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from pipeline.analysis.forecasting.curve import CURVE_DECIMALS, POWER, CountCurve, ScalingShape, fit_count_curve

# The within-group fit and the drift live in `drift`; the names other modules read here too:
from pipeline.analysis.forecasting.drift import DRIFT_DAMPING as DRIFT_DAMPING
from pipeline.analysis.forecasting.drift import DRIFT_HALF_LIFE_YEARS as DRIFT_HALF_LIFE_YEARS
from pipeline.analysis.forecasting.drift import DRIFT_PRIOR_WEIGHT as DRIFT_PRIOR_WEIGHT
from pipeline.analysis.forecasting.drift import EXPONENT_PRIOR_WEIGHT as EXPONENT_PRIOR_WEIGHT
from pipeline.analysis.forecasting.drift import FALLBACK_EXPONENT as FALLBACK_EXPONENT
from pipeline.analysis.forecasting.drift import DriftPrior as DriftPrior
from pipeline.analysis.forecasting.drift import WithinGroupFit as WithinGroupFit
from pipeline.analysis.forecasting.drift import next_round_drift as next_round_drift
from pipeline.analysis.forecasting.drift import next_round_prior as next_round_prior
from pipeline.analysis.forecasting.drift import pooled_drift as pooled_drift
from pipeline.analysis.forecasting.drift import pooled_drifts as pooled_drifts
from pipeline.analysis.forecasting.drift import shrunk_drift as shrunk_drift
from pipeline.analysis.forecasting.forms import SHAPE_COLUMNS, stored_shapes, unit_shapes

# The model inputs live in `inputs`; the names other modules read here too:
from pipeline.analysis.forecasting.inputs import UNIT as UNIT
from pipeline.analysis.forecasting.inputs import UNSPECIFIED as UNSPECIFIED
from pipeline.analysis.forecasting.inputs import codes as codes
from pipeline.analysis.forecasting.inputs import form_factors_by_frequency as form_factors_by_frequency
from pipeline.analysis.forecasting.inputs import model_inputs as model_inputs
from pipeline.analysis.forecasting.inputs import model_inputs_by_benchmark as model_inputs_by_benchmark
from pipeline.analysis.forecasting.inputs import row_groups
from pipeline.analysis.forecasting.siblings import (
    SIMPLEST,
    LawChoice,
    MeasuredRatio,
    NewFamilySource,
    assumed_precision,
    new_family_source,
    sibling_of,
)
from pipeline.mlperf.catalogue import round_published, round_version
from pipeline.mlperf.hardware.accelerators import spec_features

# Kinds of model forecast, each with its own calibration; NAIVE is the kind of both naive methods.
FAMILY, POOLED, SPECIFICATION, NAIVE = "family", "family level, benchmark scaling", "specification", "naive"
SIBLING, MEASURED = "sibling", "sibling, measured ratio"  # its sibling's curve by the specification or measured ratio
KINDS = (FAMILY, POOLED, MEASURED, SIBLING, SPECIFICATION)
NEW_FAMILY_KINDS = (MEASURED, SIBLING, SPECIFICATION)  # forecasts of a family without results on the benchmark
# Re-centred on earlier new families' residuals (`intervals.ResidualHistory.calibration`); a measured ratio is not:
# see `Forecaster._new_family`.
RECENTRED_KINDS = (SIBLING, SPECIFICATION)
# Methods: the model, the naive rule (the bar), its monotone form, their blend; ANSWER rows of the backtest are
# what `predict` would have answered (the method chosen on earlier folds), with their trust.
MODEL, NAIVE_METHOD, MONOTONE, BLEND, ANSWER = "model", "naive", "monotone naive", "blend", "answer"
METHODS = (MODEL, NAIVE_METHOD, MONOTONE, BLEND)
CANDIDATES = (MODEL, MONOTONE, BLEND)  # what `predict` may answer with: each is monotone in count
NAIVE_BASED = (NAIVE_METHOD, MONOTONE, BLEND)  # resting on the family's latest round alone (its trusted range)
# A regression on specifications needs this many families with specifications in the training rounds.
MIN_SPEC_FAMILIES = 4
# Without any pull, a monotone naive curve whose times fall faster than linear scaling between two counts has a
# range of equally good fits (the Huber loss is linear there); which one the solver stopped at depended on the CPU
# (a 10% difference in a forecast). This pull towards linear scaling, a thousandth of the model's, picks one.
NAIVE_TIE_BREAK_WEIGHT = 1e-4
# Run-to-run variation MLCommons states for most benchmarks (log minutes): the smallest scale of an interval.
SCALE_FLOOR = 0.05
# A unit's spread between submitters is shrunk towards the benchmark's with this many results' weight.
SPREAD_PRIOR_RESULTS = 10.0
# MLPerf Training publishes about twice a year: the next round is this many years after the latest.
ROUND_STEP_YEARS = 0.5
# The blend's weight on the model (the rest on the monotone naive rule), in log minutes.
BLEND_WEIGHT = 0.5


# --- the model ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Forecaster:
    """A forecast model fitted on some rounds of one benchmark (see the module docstring)."""

    # index UNIT: exponent, own_shape, anchor_time, n_rounds, count_min, count_max, spread, and the ScalingShape's
    # serial, communication and domain
    units: pd.DataFrame
    curve_rows: pd.DataFrame  # each unit's count curve at its knots: UNIT, accelerator_count_published, curve_log
    pooled_exponent: float
    drift_per_year: float  # the drift the forecasts apply (`shrunk_drift`), log minutes per year
    spread_log: float  # sd of a forecast's log residual, from within-group and between-round spread
    rate_sd: float  # sd of the benchmark's drift rates (log minutes per year; 0 with fewer than two)
    spec_intercept: float | None  # the latest round's effect in the specification regression
    spec_time: float
    spec_coefficients: np.ndarray | None
    naive_rows: pd.DataFrame  # each family's best time per count of its latest round
    rounds: tuple[str, ...]
    measured: tuple[MeasuredRatio, ...] = ()  # of families without results here to ones with (`measured_ratios`)
    form: str = POWER  # the count curves' form beyond the published counts (`curve.FORMS`)
    law: LawChoice = SIMPLEST  # the law of a new family's ratio to its sibling (`siblings.choose_law`)
    benchmark: str = ""  # the benchmark fitted (its typical precision, `siblings.assumed_precision`)
    # each family's most common precision in its latest round here, where the data say it (a `precision` column)
    precisions: tuple[tuple[str, str], ...] = ()

    @cached_property
    def curves(self) -> dict[tuple[str, str], CountCurve]:
        """Each unit's count curve (by unit, sorted)."""
        shapes = stored_shapes(self.units, self.form)
        exponents = dict(zip(self.units.index, self.units["exponent"].to_numpy(dtype=float)))
        log_counts = np.log(self.curve_rows["accelerator_count_published"].to_numpy(dtype=float))
        log_times = self.curve_rows["curve_log"].to_numpy(dtype=float)
        units = row_groups(*(self.curve_rows[name].tolist() for name in UNIT))
        return {(str(key[0]), str(key[1])): CountCurve(log_counts[rows], log_times[rows], float(exponents[key]),
                                                       shapes[key]) for key, rows in sorted(units.items())}

    @cached_property
    def monotone_naive(self) -> dict[str, CountCurve]:
        """Each family's monotone naive rule: its best times of its latest round joined (slopes in [-1, 0], a
        pull towards linear scaling only to break ties, NAIVE_TIE_BREAK_WEIGHT), linear scaling beyond them."""
        return {family: fit_count_curve(np.log(counts), np.log(times), -1.0, prior_weight=NAIVE_TIE_BREAK_WEIGHT)
                for family, (counts, times) in sorted(self._naive_families.items())}

    @cached_property
    def latest_round_ranges(self) -> dict[str, tuple[float, float]]:
        """Each family's smallest and largest count of its latest round (any form factor): what the naive rule and
        its monotone form rest on, so their trusted range (linear scaling from 64 accelerators answered 1,024
        sixteen times faster: RetinaNet H100, 0.39 min where 2,048 had published 0.92)."""
        return {family: (float(counts.min()), float(counts.max()))
                for family, (counts, _) in sorted(self._naive_families.items())}

    @cached_property
    def family_ranges(self) -> dict[str, tuple[float, float]]:
        """Each family's smallest and largest published count (any form factor)."""
        ranges: dict[str, tuple[float, float]] = {}
        for (family, _), (_, _, low, high) in sorted(self._unit_rows.items()):
            known = ranges.get(family)
            ranges[family] = (low, high) if known is None else (min(known[0], low), max(known[1], high))
        return ranges

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
        """Each family's naive rows as arrays: its published counts (increasing) and best times there (in order of
        the families' first rows)."""
        counts = self.naive_rows["accelerator_count_published"].to_numpy(dtype=float)
        times = self.naive_rows["time_to_train_min"].to_numpy(dtype=float)
        return {str(family): (counts[rows], times[rows])
                for (family,), rows in row_groups(self.naive_rows["accelerator_family"].tolist()).items()}

    @cached_property
    def _count_range(self) -> tuple[float, float]:
        """The benchmark's smallest and largest published count."""
        return float(self.units["count_min"].min()), float(self.units["count_max"].max())

    def forecast(self, queries: pd.DataFrame, target_time: float) -> pd.DataFrame:
        """Every method's forecast (log minutes, NaN where it has none) for `queries` (accelerator_family,
        form_factor, accelerator_count) in the round published at `target_time`: columns MODEL, NAIVE_METHOD,
        MONOTONE, BLEND, kind (the model's), distance (log count ratio outside the unit's published counts;
        the family's for a unit without results, the benchmark's for a family without) and scale (`forecast_scale`:
        what the interval is proportional to)."""
        found = self.forecast_arrays(queries["accelerator_family"].astype(str).to_numpy(),
                                     queries["form_factor"].astype(str).to_numpy(),
                                     queries["accelerator_count"].to_numpy(dtype=float), target_time)
        kind = found["kind"]
        return pd.DataFrame({MODEL: found[MODEL], NAIVE_METHOD: found[NAIVE_METHOD], MONOTONE: found[MONOTONE],
                             BLEND: found[BLEND], "kind": pd.Series(kind, index=queries.index).where(kind != ""),
                             "distance": found["distance"], "scale": found["scale"]}, index=queries.index)

    def forecast_arrays(self, families: np.ndarray, form_factors: np.ndarray, counts: np.ndarray,
                        target_time: float, monotone_curves: bool = True) -> dict[str, np.ndarray]:
        """`forecast` on arrays, one entry per query (families and form factors as text, counts as floats), its
        columns as arrays ("kind" empty where the model has none): `predict` asks many small questions. Without
        `monotone_curves`, MONOTONE and BLEND are NaN: the monotone naive curves, a least-squares fit per family,
        are not fitted for a caller answering with another method."""
        log_count = np.log(counts)
        unit_code, unit_keys = codes(families.tolist(), form_factors.tolist())
        model, monotone = np.full(len(counts), np.nan), np.full(len(counts), np.nan)
        kind = np.full(len(counts), "", dtype=object)
        low, high = np.full(len(counts), self._count_range[0]), np.full(len(counts), self._count_range[1])
        spread, horizon = np.full(len(counts), self._typical_spread), np.full(len(counts), ROUND_STEP_YEARS)
        for code, key in enumerate(unit_keys):
            rows = unit_code == code
            if key in self.curves:
                anchor_time, own_shape, count_min, count_max = self._unit_rows[key]
                spread[rows], horizon[rows] = self._unit_spread[key], target_time - anchor_time
                model[rows] = (self.curves[key].log_time(counts[rows])
                               + self.drift_per_year * (target_time - anchor_time))
                kind[rows] = FAMILY if own_shape else POOLED
                low[rows], high[rows] = count_min, count_max
            elif key[0] in self.family_ranges:
                low[rows], high[rows] = self.family_ranges[key[0]]
            if monotone_curves and key[0] in self.monotone_naive:
                monotone[rows] = self.monotone_naive[key[0]].log_time(counts[rows])
        if (kind == "").any():  # a family without results here: from a sibling, else from the specifications
            model, kind, spread, horizon = self._new_family(families, counts, target_time, model, kind, spread,
                                                            horizon)
        distance = np.maximum(0.0, np.maximum(log_count - np.log(high), np.log(low) - log_count))
        return {MODEL: model, NAIVE_METHOD: self.naive_log(families, counts), MONOTONE: monotone,
                BLEND: BLEND_WEIGHT * model + (1 - BLEND_WEIGHT) * monotone, "kind": kind, "distance": distance,
                "scale": forecast_scale(spread, self.rate_sd, horizon)}

    @cached_property
    def _unit_spread(self) -> dict[tuple[str, str], float]:
        """Each unit's spread (log minutes) between submitters' results around its curve."""
        return {(str(family), str(form_factor)): float(value)
                for (family, form_factor), value in self.units["spread"].items()}

    @cached_property
    def _typical_spread(self) -> float:
        """The benchmark's median unit spread: a forecast without a unit's own."""
        return float(np.median(self.units["spread"].to_numpy(dtype=float)))

    def source_of(self, family: str, target_time: float | None = None) -> NewFamilySource | None:
        """`siblings.new_family_source` of `family` among the families with results here, by the chosen law
        (`law`) at the precision a forecast for the round published at `target_time` (the next round by default)
        assumes (`siblings.assumed_precision`: its sibling's where the data say it)."""
        if target_time is None:
            target_time = max(round_published(name) for name in self.rounds) + ROUND_STEP_YEARS
        # the sibling is the source unless the family has results here in another form factor
        found = sibling_of(family, self._sibling_units) if family not in self._sibling_units else None
        known = dict(self.precisions)
        precision = assumed_precision(self.benchmark, target_time, known.get(found[0]) if found else None)
        return new_family_source(family, self._sibling_units, self._measured, self.law, precision)

    @cached_property
    def _measured(self) -> dict[tuple[str, str], MeasuredRatio]:
        """The measured ratios by (family, sibling)."""
        return {(ratio.family, ratio.sibling): ratio for ratio in self.measured}

    @cached_property
    def _sibling_units(self) -> dict[str, tuple[str, str]]:
        """Each family's unit a sibling forecast stands on: the one with the most rounds, then the largest count."""
        # most rounds first, then the largest count, ties in the units' order (a stable sort, as pandas' on two
        # columns)
        order = sorted(zip(self.units.index, self.units["n_rounds"].tolist(), self.units["count_max"].tolist()),
                       key=lambda unit: (-unit[1], -unit[2]))
        found: dict[str, tuple[str, str]] = {}
        for (family, form_factor), _, _ in order:
            found.setdefault(str(family), (str(family), str(form_factor)))
        return found

    def _new_family(self, families: np.ndarray, counts: np.ndarray, target_time: float, model: np.ndarray,
                    kind: np.ndarray, spread: np.ndarray, horizon: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`model` and `kind` filled where `kind` is empty (a family without a unit): the family's own curve in
        another form factor (`FAMILY`); else its sibling's (`sibling_of`, of its vendor), times their ratio measured
        on other benchmarks where the chosen law takes it (`MEASURED`, `siblings.measured_ratios`) or else by the
        chosen law of their specifications (`SIBLING`, `siblings.choose_law`: a fixed law, steadier on the
        backtest's new families than the benchmark's regression on specifications, 13-66% per fold); else
        the regression on specifications (`SPECIFICATION`); else a stand-in's curve by the specifications' law
        (`SIBLING`; a ratio measured across vendors missed by a median 30.3% against the law's 36.1% on 28 pairs,
        but rests on few benchmarks and submitters: MI300X took 9.2 times B200's time over two, one submitter's BERT
        among them, bench/backtest.py); docs/predictions.md says what was tried and not kept."""
        log_count = np.log(counts)
        spec = np.full(len(counts), np.nan)
        if self.spec_coefficients is not None:
            spec = (self.spec_intercept + spec_features(families) @ self.spec_coefficients
                    + self.pooled_exponent * log_count
                    + self.drift_per_year * (target_time - self.spec_time))
        model, kind, spread, horizon = model.copy(), kind.copy(), spread.copy(), horizon.copy()
        for family in sorted(set(families[kind == ""].tolist())):
            rows = (families == family) & (kind == "")
            source = self.source_of(str(family), target_time)
            if source is not None and (source.own_vendor or not np.isfinite(spec[rows]).all()):
                unit = self._sibling_units[source.family]
                anchor_time = self._unit_rows[unit][0]
                model[rows] = (self.curves[unit].log_time(counts[rows]) + source.log_ratio
                               + self.drift_per_year * (target_time - anchor_time))
                kind[rows] = (FAMILY if source.family == family else SIBLING if source.measured is None
                              else MEASURED)
                spread[rows], horizon[rows] = self._unit_spread[unit], target_time - anchor_time
            elif np.isfinite(spec[rows]).all():
                model[rows], kind[rows] = spec[rows], SPECIFICATION
                horizon[rows] = target_time - self.spec_time
        return model, kind, spread, horizon

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


def forecast_scale(spread: np.ndarray, rate_sd: float, horizon: np.ndarray) -> np.ndarray:
    """What a forecast's interval is proportional to (log minutes, rounded to CURVE_DECIMALS): run-to-run noise
    (SCALE_FLOOR), the spread between submitters on the same hardware (`spread`, the unit's) and the drift's
    uncertainty over the years from the unit's latest round to the forecast (`rate_sd` x DRIFT_DAMPING x
    `horizon`), added in quadrature."""
    drift = DRIFT_DAMPING * rate_sd * np.asarray(horizon, dtype=float)
    return np.round(np.sqrt(SCALE_FLOOR ** 2 + np.asarray(spread, dtype=float) ** 2 + drift ** 2), CURVE_DECIMALS)


def fit(train: pd.DataFrame, drift_prior: DriftPrior | None = None, form: str = POWER) -> Forecaster:
    """The forecast model of `train` (model inputs of one benchmark: accelerator_family, form_factor, round,
    accelerator_count, time_to_train_min; at least one row); its drift is its own shrunk towards `drift_prior`
    (`pooled_drift`, `shrunk_drift`; none: its own alone); its count curves in `form` beyond the published counts
    (`forms.unit_shapes`)."""
    if train.empty:
        raise ValueError("fit needs at least one result")
    groups = WithinGroupFit.of(train)
    drift = shrunk_drift(groups, drift_prior)
    anchor_time = _latest_round_times(groups)
    shapes = unit_shapes(train, groups.log_n, groups.log_t, groups.group, groups.unit, groups.unit_keys,
                         groups.exponent, form)
    curves = _unit_count_curves(train, groups, shapes, form)
    units = _unit_table(train, groups, anchor_time, shapes, _unit_spreads(groups, curves, anchor_time))
    spec_intercept, spec_time, spec_coefficients = _spec_regression(groups)
    return Forecaster(units=units, curve_rows=_curve_table(groups.unit_keys, curves), pooled_exponent=groups.pooled,
                      drift_per_year=drift, spread_log=_residual_spread(groups, drift), rate_sd=_rate_sd(groups.rates),
                      spec_intercept=spec_intercept, spec_time=spec_time, spec_coefficients=spec_coefficients,
                      naive_rows=_naive_rows(train, groups.times), rounds=tuple(ordered_rounds(train)),
                      measured=_ratios_to_families_here(drift_prior, train), form=form,
                      law=drift_prior.law if drift_prior else SIMPLEST,
                      benchmark=str(train["benchmark"].iloc[0]) if "benchmark" in train.columns else "",
                      precisions=latest_precisions(train))


def _latest_round_times(groups: WithinGroupFit) -> np.ndarray:
    """Each unit's latest round (publication time, years; one per unit code): its forecasts' anchor."""
    latest_group = groups.order[np.r_[~groups.same_unit, True]]  # the last group of each unit in time order
    anchor_time = np.empty(len(groups.unit_keys))
    anchor_time[groups.group_unit[latest_group]] = groups.group_time[latest_group]
    return anchor_time


def _rate_sd(rates: np.ndarray) -> float:
    """sd of the benchmark's drift rates (log minutes per year, rounded to CURVE_DECIMALS; 0 with fewer than two)."""
    return float(np.round(np.std(rates), CURVE_DECIMALS)) if len(rates) > 1 else 0.0


def _residual_spread(groups: WithinGroupFit, drift: float) -> float:
    """sd of a forecast's log residual (log minutes): the results' spread within their group and, between rounds,
    what the drift (log minutes per year) leaves unexplained over half a year, the usual forecast horizon, added in
    quadrature."""
    between = float(np.std(groups.rates - drift) * ROUND_STEP_YEARS) if len(groups.rates) > 1 else 0.0
    within_sd = float(np.sqrt((groups.within ** 2).sum() / max(len(groups.log_t) - len(groups.group_size), 1)))
    return math.hypot(within_sd, between)


def _unit_count_ranges(groups: WithinGroupFit, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each unit's smallest and largest published count (one per unit code) of the results' `counts`."""
    n_units = len(groups.unit_keys)
    count_min, count_max = np.full(n_units, np.inf), np.zeros(n_units)
    np.minimum.at(count_min, groups.unit, counts)
    np.maximum.at(count_max, groups.unit, counts)
    return count_min, count_max


def _unit_count_curves(train: pd.DataFrame, groups: WithinGroupFit, shapes: list[ScalingShape], form: str
                       ) -> list[CountCurve]:
    """Each unit's count curve (one per unit code), fitted to every result of the unit with an offset per earlier
    round and per submitter (`fit_count_curve`); beyond the published counts its exponent, or its shape in `form`."""
    submitters = train["submitter"].to_numpy(dtype=object)
    curves = []
    for code in range(len(groups.unit_keys)):
        rows = groups.unit == code
        curves.append(fit_count_curve(groups.log_n[rows], groups.log_t[rows], float(groups.exponent[code]),
                                      submitters=submitters[rows], rounds=groups.times[rows],
                                      shape=None if form == POWER else shapes[code]))
    return curves


def _unit_spreads(groups: WithinGroupFit, curves: list[CountCurve], anchor_time: np.ndarray) -> np.ndarray:
    """Between submitters on the same hardware: each unit's root mean square residual (log minutes, rounded to
    CURVE_DECIMALS) around its curve in its latest round (the curve is the typical submitter's), shrunk towards the
    benchmark's with SPREAD_PRIOR_RESULTS results' weight."""
    squares, sizes = np.zeros(len(curves)), np.zeros(len(curves))  # in each latest round: squared residuals, results
    for code, curve in enumerate(curves):
        latest_rows = (groups.unit == code) & (groups.times == anchor_time[code])
        squares[code] = float(np.sum((groups.log_t[latest_rows]
                                      - curve.log_time(np.exp(groups.log_n[latest_rows]))) ** 2))
        sizes[code] = latest_rows.sum()
    typical = squares.sum() / sizes.sum()
    return np.round(np.sqrt((squares + SPREAD_PRIOR_RESULTS * typical) / (sizes + SPREAD_PRIOR_RESULTS)),
                    CURVE_DECIMALS)


def _unit_table(train: pd.DataFrame, groups: WithinGroupFit, anchor_time: np.ndarray, shapes: list[ScalingShape],
                spread: np.ndarray) -> pd.DataFrame:
    """`Forecaster.units`: one row per unit (index UNIT, sorted) from its code-ordered arrays: exponent, own_shape
    (an exponent of its own, from two counts in one round), anchor_time, n_rounds, count_min, count_max, the
    ScalingShape's SHAPE_COLUMNS and spread."""
    count_min, count_max = _unit_count_ranges(groups, train["accelerator_count"].to_numpy(dtype=float))
    return pd.DataFrame({"exponent": groups.exponent, "own_shape": groups.sxx > 0, "anchor_time": anchor_time,
                         "n_rounds": np.bincount(groups.group_unit, minlength=len(groups.unit_keys)),
                         "count_min": count_min, "count_max": count_max,
                         **{name: [getattr(shape, name) for shape in shapes] for name in SHAPE_COLUMNS},
                         "spread": spread},
                        index=pd.MultiIndex.from_tuples(groups.unit_keys, names=UNIT)).sort_index()


def _curve_table(unit_keys: list[tuple[Any, ...]], curves: list[CountCurve]) -> pd.DataFrame:
    """`Forecaster.curve_rows`: each unit's count curve at its knots (UNIT, accelerator_count_published, curve_log),
    sorted."""
    rows = [(*key, float(np.exp(x)), float(y))
            for key, curve in zip(unit_keys, curves) for x, y in zip(curve.log_counts, curve.log_times)]
    frame = pd.DataFrame(rows, columns=[*UNIT, "accelerator_count_published", "curve_log"]).sort_values(
        [*UNIT, "accelerator_count_published"], ignore_index=True)
    # Counts stored as exp(log n) must read back as the published integers.
    frame["accelerator_count_published"] = frame["accelerator_count_published"].round()
    return frame


def _naive_rows(train: pd.DataFrame, times: np.ndarray) -> pd.DataFrame:
    """`Forecaster.naive_rows`: the naive rule's rows, each family's best time per count in the family's latest
    round (accelerator_family, accelerator_count_published, time_to_train_min), sorted; `times` the results'
    publication times (years)."""
    families = train["accelerator_family"].tolist()
    counts = train["accelerator_count"].to_numpy(dtype=float)
    family_latest = pd.Series(times).groupby(families).transform("max").to_numpy()
    latest = np.flatnonzero(times == family_latest)
    cell, cell_keys = codes([families[row] for row in latest], counts[latest].tolist())
    best = np.full(len(cell_keys), np.inf)
    np.minimum.at(best, cell, train["time_to_train_min"].to_numpy(dtype=float)[latest])
    return pd.DataFrame(cell_keys, columns=["accelerator_family", "accelerator_count_published"]).assign(
        time_to_train_min=best).sort_values(["accelerator_family", "accelerator_count_published"], ignore_index=True)


def _ratios_to_families_here(drift_prior: DriftPrior | None, train: pd.DataFrame) -> tuple[MeasuredRatio, ...]:
    """The prior's measured ratios (`siblings.measured_ratios`) of a family without results in `train` to one
    with: the ones a forecast of this benchmark may use."""
    present = set(train["accelerator_family"])
    return tuple(ratio for ratio in (drift_prior.ratios if drift_prior else ())
                 if ratio.family not in present and ratio.sibling in present)


def latest_precisions(train: pd.DataFrame) -> tuple[tuple[str, str], ...]:
    """Each family's most common precision (ties by name) in its latest round of `train`, where its `precision`
    column says one; empty without the column."""
    if "precision" not in train.columns:
        return ()
    known = train[train["precision"].notna()]
    times = known["round"].map(round_published)
    latest = known[times.to_numpy() == times.groupby(known["accelerator_family"]).transform("max").to_numpy()]
    found = []
    for family, group in latest.groupby("accelerator_family", sort=True):
        counts = group["precision"].astype(str).value_counts()
        found.append((str(family), str(min(counts.index, key=lambda value: (-counts[value], value)))))
    return tuple(found)


def _spec_regression(within_fit: WithinGroupFit) -> tuple[float | None, float, np.ndarray | None]:
    """The groups' log-time levels regressed on a round effect and the log specifications: (latest round's effect,
    its time, the feature coefficients), or Nones when fewer than MIN_SPEC_FAMILIES families have specifications."""
    unit_family = np.array([key[0] for key in within_fit.unit_keys], dtype=object)
    groups = pd.DataFrame({"accelerator_family": unit_family[within_fit.group_unit],
                           "round_time": within_fit.group_time,
                           "log_time_level": within_fit.group_log_time_level})
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
    fitted: np.ndarray = np.linalg.lstsq(design, groups["log_time_level"].to_numpy(dtype=float), rcond=None)[0]
    solution = np.round(fitted, CURVE_DECIMALS) + 0.0
    return float(solution[len(rounds) - 1]), float(rounds[-1]), solution[len(rounds):]


def ordered_rounds(frame: pd.DataFrame) -> list[str]:
    """The rounds of `frame`, oldest first (v0.7 < v1.0 < v4.1)."""
    return sorted(frame["round"].unique(), key=round_version)
