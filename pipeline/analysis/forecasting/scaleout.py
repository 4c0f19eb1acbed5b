"""The scale-out backtest: how well the model forecasts a unit's time to train at counts beyond those it was
fitted on, where communication starts to cost (issue 50). Three views of one benchmark's results, every one
forecast as the model (`MODEL`) or `predict` (`ANSWER`) would have answered, with its 90% interval:

- **within a round** (`within_round_points`): for every round R and unit (family, form factor), each of its
  results of R at a count N where the unit published in R at counts <= N / SCALE_OUT_RATIO, forecast by the model
  fitted on the rounds before R plus that unit's results of R at counts <= N / SCALE_OUT_RATIO, for R's
  publication (so no drift between rounds for that unit: the error is the count curve's alone). Its interval is
  calibrated as the forward backtest's model forecasts of that kind are, on the residuals of rounds published
  before R (`ResidualHistory.calibration`).
- **next round, beyond the family** (`beyond_family_points`): the forward backtest's forecasts of results above
  the largest count their family had published before the round (`backtest.backtest`'s points with
  accelerator_count > family_count_max, the family's own curve's kinds).
- **large counts of one fold** (`large_count_points`): the forward backtest's forecasts at LARGE_COUNT
  accelerators or more in one fold (issue 50's check: v5.1 from the rounds up to v5.0).

Every view is a frame of points (SCALE_OUT_COLUMNS: one row per forecast result, counts in accelerators, times in
minutes, `distance` in log count ratio beyond the counts fitted on, `ape_pct` = |predicted / published - 1| in %,
`signed_pct` = predicted / published - 1 in %, `inside_interval` whether the published time lies in the 90%
interval); `scale_out_table` summarises points per benchmark and overall, and `form_comparison` every view and the
whole forward backtest for each form of the count curve's shape beyond the published counts (`curve.FORMS`).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import pairwise

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from pipeline.analysis.forecasting.backtest import backtest
from pipeline.analysis.forecasting.curve import CURVE_DECIMALS
from pipeline.analysis.forecasting.forms import FABRIC_COLUMNS
from pipeline.analysis.forecasting.intervals import ResidualHistory
from pipeline.analysis.forecasting.model import (
    ANSWER,
    FAMILY,
    MODEL,
    POOLED,
    UNIT,
    DriftPrior,
    Forecaster,
    fit,
    ordered_rounds,
    pooled_drifts,
)
from pipeline.mlperf.catalogue import round_published
from pipeline.settings import DecideTrustSettings

# A result is forecast from the unit's results of its round at a quarter of its count or less: two doublings
# beyond what the fit saw, the distance of a next round's larger systems (64 to 256, 512 to 2,048).
SCALE_OUT_RATIO = 4
# Issue 50's headline: forecasts at 256 accelerators or more, where the inter-node fabric carries the gradients.
LARGE_COUNT = 256
# The family's own curve: the kinds whose extrapolation the count curve's tail decides.
CURVE_KINDS = (FAMILY, POOLED)
SCALE_OUT_COLUMNS = ["benchmark", "fold", "fold_time", *UNIT, "submitter", "system", "accelerator_count",
                     "time_to_train_min", "kind", "distance", "predicted_min", "low_min", "high_min", "ape_pct",
                     "signed_pct", "inside_interval"]
Fitter = Callable[[pd.DataFrame, DriftPrior | None], Forecaster]


def within_round_points(frame: pd.DataFrame, benchmark: str, history: ResidualHistory, target_coverage: float,
                        drift_priors: Mapping[float, DriftPrior] | None = None, fit_model: Fitter = fit
                        ) -> pd.DataFrame:
    """View (a) of one benchmark's model inputs `frame` (accelerator_family, form_factor, round, submitter, system,
    accelerator_count, time_to_train_min; FABRIC_COLUMNS where present): every result of a round at a count N
    whose unit published in that round at N / SCALE_OUT_RATIO or less, forecast by `fit_model` (the model's `fit`
    by default) on the earlier rounds plus those results, for the round's publication, with the drift prior of
    its fold time (`drift_priors`); intervals that should hold `target_coverage` (a fraction), calibrated on
    `history` (the forward backtest's points of rounds before it). Columns SCALE_OUT_COLUMNS."""
    columns = ["round", *UNIT, "submitter", "system", "accelerator_count", "time_to_train_min",
               *(name for name in FABRIC_COLUMNS if name in frame.columns)]
    frame = frame[columns].astype({name: object for name in ["round", *UNIT, "submitter", "system"]})
    times = frame["round"].map(round_published).to_numpy(dtype=float)
    parts = []
    for fold in ordered_rounds(frame):
        fold_time = round_published(fold)
        earlier = frame[times < fold_time]
        prior = None if drift_priors is None else drift_priors.get(fold_time)
        for _, unit_rows in frame[frame["round"] == fold].groupby(UNIT, sort=True):
            counts = np.unique(unit_rows["accelerator_count"].to_numpy(dtype=float))
            target_counts = unit_rows["accelerator_count"].to_numpy(dtype=float)
            # each result's fitted counts end at the unit's largest count <= N / SCALE_OUT_RATIO (NaN: none)
            cutoff = np.array([counts[counts * SCALE_OUT_RATIO <= count].max() if counts[0] * SCALE_OUT_RATIO
                               <= count else math.nan for count in target_counts])
            for end in np.unique(cutoff[np.isfinite(cutoff)]):
                train = pd.concat([earlier, unit_rows[unit_rows["accelerator_count"] <= end]])
                targets = unit_rows[cutoff == end]
                found = fit_model(train, prior).forecast(targets, fold_time)
                parts.append(targets.assign(fold=fold, fold_time=fold_time, kind=found["kind"],
                                            distance=found["distance"], scale=found["scale"],
                                            forecast_log=found[MODEL]))
    if not parts:
        return pd.DataFrame(columns=SCALE_OUT_COLUMNS)
    forecasts = pd.concat(parts, ignore_index=True).assign(benchmark=benchmark)
    half_width = np.full(len(forecasts), np.nan)
    slopes: dict[float, tuple[float, str]] = {}
    for (fold_time, kind), rows in forecasts.groupby(["fold_time", "kind"], sort=True):
        slope = slopes.setdefault(fold_time, history.extrapolation_slope(MODEL, target_coverage, fold_time))
        calibration = history.calibration(benchmark, MODEL, str(kind), target_coverage, fold_time, slope=slope)
        half_width[forecasts.index.get_indexer(rows.index)] = calibration.half_width(
            rows["distance"].to_numpy(dtype=float), rows["scale"].to_numpy(dtype=float))
    return _points(forecasts, forecasts["forecast_log"].to_numpy(dtype=float), half_width)


def _points(forecasts: pd.DataFrame, centre: np.ndarray, half_width: np.ndarray) -> pd.DataFrame:
    """SCALE_OUT_COLUMNS of `forecasts` (the result's columns, kind, distance) forecast at log minutes `centre`
    with interval half-widths `half_width` (log minutes)."""
    published = forecasts["time_to_train_min"].to_numpy(dtype=float)
    ratio = np.exp(centre) / published
    return forecasts.assign(
        predicted_min=np.exp(centre), low_min=np.exp(centre - half_width), high_min=np.exp(centre + half_width),
        ape_pct=100 * np.abs(ratio - 1), signed_pct=100 * (ratio - 1),
        inside_interval=np.abs(np.log(published) - centre) <= half_width)[SCALE_OUT_COLUMNS].reset_index(drop=True)


def backtest_view(points: pd.DataFrame, method: str = ANSWER) -> pd.DataFrame:
    """The forward backtest's `points` (`backtest.backtest`, POINT_COLUMNS) of `method` as SCALE_OUT_COLUMNS."""
    chosen = points[points["method"] == method]
    predicted = chosen["predicted_min"].to_numpy(dtype=float)
    published = chosen["time_to_train_min"].to_numpy(dtype=float)
    return chosen.assign(signed_pct=100 * (predicted / published - 1))[SCALE_OUT_COLUMNS].reset_index(drop=True)


def beyond_family_points(points: pd.DataFrame, frames: Mapping[str, pd.DataFrame], method: str = ANSWER
                         ) -> pd.DataFrame:
    """View (b): the forward backtest's forecasts by `method` of results above the largest count their family had
    published in the rounds before (in `frames`, each benchmark's model inputs), forecast from the family's own
    curve (CURVE_KINDS)."""
    chosen = points[(points["method"] == method) & points["kind"].isin(CURVE_KINDS)]
    largest = pd.Series([_largest_before(frames[benchmark], family, fold_time) for benchmark, family, fold_time in zip(
        chosen["benchmark"], chosen["accelerator_family"], chosen["fold_time"])], index=chosen.index, dtype=float)
    return backtest_view(chosen[chosen["accelerator_count"].astype(float) > largest], method)


def _largest_before(frame: pd.DataFrame, family: str, before: float) -> float:
    """The largest count `family` published in `frame` (model inputs) before `before` (years); 0 without any."""
    rows = frame[(frame["accelerator_family"] == family) & (frame["round"].map(round_published) < before)]
    return float(rows["accelerator_count"].max()) if len(rows) else 0.0


def large_count_points(points: pd.DataFrame, fold: str, method: str = ANSWER,
                       smallest: float = LARGE_COUNT) -> pd.DataFrame:
    """View (c): the forward backtest's forecasts by `method` in `fold` at `smallest` accelerators or more."""
    chosen = points[(points["fold"] == fold) & (points["accelerator_count"].astype(float) >= smallest)]
    return backtest_view(chosen, method)


# Bands of the distance beyond the counts fitted on (times the largest; log count ratio in `distance_bands`).
DISTANCE_BANDS = (1.0, 2.0, 4.0, 16.0)


def distance_bands(points: pd.DataFrame) -> pd.Series:
    """Each point's band of `distance` (log count ratio outside the counts fitted on), as text: "inside", then
    "x1-2", "x2-4", "x4-16" (each with its upper edge: 2, 4 and 16 times the largest), "x16 or more"
    (DISTANCE_BANDS), ordered so."""
    distance = points["distance"].to_numpy(dtype=float)
    edges = np.round(np.log(np.array(DISTANCE_BANDS)), CURVE_DECIMALS)
    labels = ["inside", *(f"x{low:g}-{high:g}" for low, high in pairwise(DISTANCE_BANDS)),
              f"x{DISTANCE_BANDS[-1]:g} or more"]
    # rounded as the curves are: a forecast exactly at a band's edge falls in the lower band on every machine
    band = np.searchsorted(edges, np.round(distance, CURVE_DECIMALS), side="left")
    return pd.Series(pd.Categorical(np.array(labels, dtype=object)[band], categories=labels, ordered=True),
                     index=points.index, name="distance")


def scale_out_table(points: pd.DataFrame, by: str = "benchmark") -> pd.DataFrame:
    """Per value of `by` (sorted) and overall: forecasts, median and 90th-percentile |error| (%), median signed
    error (%, predicted / published - 1: positive when too slow), the share inside the 90% interval (%) and its
    exact (Clopper-Pearson) 90% interval, "lo-hi" in %."""
    rows = {}
    for name, group in [*points.groupby(by, sort=True, observed=True), ("overall", points)]:
        ape = group["ape_pct"].to_numpy(dtype=float)
        inside = int(group["inside_interval"].astype(bool).sum())
        if not len(ape):
            rows[name] = {"forecasts": 0, "median %": "", "p90 %": "", "signed %": "", "in 90% (%)": "",
                          "exact 90%": ""}
            continue
        exact = binomtest(inside, len(ape)).proportion_ci(confidence_level=0.9, method="exact")
        rows[name] = {"forecasts": len(ape), "median %": f"{np.median(ape):.1f}",
                      "p90 %": f"{np.quantile(ape, 0.9):.1f}",
                      "signed %": f"{np.median(group['signed_pct'].to_numpy(dtype=float)):.1f}",
                      "in 90% (%)": f"{100 * inside / len(ape):.0f}",
                      "exact 90%": f"{100 * exact.low:.0f}-{100 * exact.high:.0f}"}
    return pd.DataFrame.from_dict(rows, orient="index")


@dataclass(frozen=True)
class ScaleOut:
    """One form's forward backtest points (`backtest.backtest`, POINT_COLUMNS) and its scale-out views (a), (b)
    and (c) of `predict`'s answers (SCALE_OUT_COLUMNS), and (b) of the model's forecasts (the same results in
    every form: an answer by the naive rule is not the curve's)."""

    points: pd.DataFrame
    within_round: pd.DataFrame
    beyond_family: pd.DataFrame
    large_counts: pd.DataFrame
    beyond_family_model: pd.DataFrame

    @classmethod
    def of(cls, frames: Mapping[str, pd.DataFrame], target_coverage: float, rule: DecideTrustSettings, form: str,
           points: pd.DataFrame | None = None) -> ScaleOut:
        """The backtest of each benchmark's model inputs `frames` with count curves in `form` (its `points`
        when computed already) and its views, view (c) on the latest fold; intervals that should hold
        `target_coverage` (a fraction)."""
        if points is None:
            points = backtest(dict(frames), target_coverage, rule, form=form)
        fold_times = sorted({round_published(name) for frame in frames.values() for name in frame["round"].unique()})
        priors = pooled_drifts(frames, fold_times)
        history = ResidualHistory.of(points[points["method"] != ANSWER])
        within = pd.concat([within_round_points(frame, benchmark, history, target_coverage, priors,
                                                partial(fit, form=form))
                            for benchmark, frame in frames.items()], ignore_index=True)
        latest = points["fold"].iloc[int(points["fold_time"].to_numpy(dtype=float).argmax())]
        return cls(points, within, beyond_family_points(points, frames), large_count_points(points, latest),
                   beyond_family_points(points, frames, MODEL))


def form_comparison(results: Mapping[str, ScaleOut]) -> pd.DataFrame:
    """Per form (the keys of `results`), `predict`'s answers: the whole forward backtest and its latest fold
    (forecasts, median |error| %, median signed %, % inside the 90% interval), then views (a), (b) and (c) (the
    same and the exact 90% interval of the coverage), and (b) of the model's forecasts."""
    rows = {}
    for form, result in results.items():
        answers = backtest_view(result.points)
        latest = answers[answers["fold_time"] == answers["fold_time"].max()]
        row: dict[tuple[str, str], object] = {}
        for label, points, exact in (("next round", answers, False), (str(latest["fold"].iloc[0]), latest, False),
                                     ("(a) within a round", result.within_round, True),
                                     ("(b) beyond the family", result.beyond_family, True),
                                     (f"(c) >= {LARGE_COUNT}", result.large_counts, True),
                                     ("(b) model", result.beyond_family_model, True)):
            overall = scale_out_table(points).loc["overall"]
            row.update({(label, "n"): overall["forecasts"], (label, "median %"): overall["median %"],
                        (label, "signed %"): overall["signed %"], (label, "in 90%"): overall["in 90% (%)"]})
            if exact:
                row[(label, "exact")] = overall["exact 90%"]
        rows[form] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def compared_forms(frames: Mapping[str, pd.DataFrame], target_coverage: float, rule: DecideTrustSettings,
                   forms: Sequence[str], kept: tuple[str, pd.DataFrame] | None = None) -> dict[str, ScaleOut]:
    """`ScaleOut.of` each of `forms`; `kept`: a (form, points) pair whose backtest was computed already."""
    return {form: ScaleOut.of(frames, target_coverage, rule, form, kept[1] if kept and kept[0] == form else None)
            for form in forms}
