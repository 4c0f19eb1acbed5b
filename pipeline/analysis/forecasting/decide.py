"""Decision support for one benchmark, from the one forecast model (`pipeline.analysis.forecasting.model`): what the
decide
stage writes.

- decide.json: the backtest of `predict`'s answers against the naive rule (overall, by round, family and kind,
  trusted against untrusted); per unit (family and form factor with results) the forecast for the next round at
  its largest published count, exactly as `predict` answers it, with its trust; and the break-even of the same
  count curve: the count beyond which its scaling efficiency t(n0) n0 / (t(n) n) falls below
  `decide.efficiency_floor`, n0 (`reference_count`) the unit's typical series base (`typical_base`): the lower
  median of the base counts of its scaling series, each the series' smallest multi-accelerator member
  (`pipeline.analysis.efficiency`), so the curve is measured from the same kind of base as the data. Beside it,
  from the data alone: the smallest published count whose median observed scaling efficiency (within its
  series) is below the floor, and the speed-up of doubling at each published count, t(n) / t(2n), from the curve
  and, where a round published both n and 2n, from the best times of that round. The two break-evens are
  compared (`compare_break_even`): `break_even_agreement` says whether they agree and `break_even_note` says
  how, or why not, in a sentence for the page.
- the data of the site's charts (`pipeline.report.charts`): per unit `band`, `predict`'s next-round answer with its
  interval at counts from half its smallest to twice its largest published count (wider outside them), and
  `backtest_points`, the backtest's answers against the published times.

The page's part of these outputs is `pipeline.report.decide_section`.
"""
from __future__ import annotations

import math
from typing import Any, TypeVar

import numpy as np
import pandas as pd
from pydantic import Field

from pipeline.analysis.efficiency import MIN_BASE_COUNT
from pipeline.analysis.forecasting.answers import Answer, FittedBenchmark, answer, answer_band
from pipeline.analysis.forecasting.curve import CountCurve
from pipeline.analysis.forecasting.model import ANSWER
from pipeline.analysis.forecasting.summaries import BacktestSummary, summarise_backtest
from pipeline.core.artifacts import Artifact, Record
from pipeline.settings import DecideTrustSettings

R = TypeVar("R", bound=Record)  # a record type `_rows` makes

LARGEST_ERRORS = 5
# Beyond this many times a family's largest published count a break-even is the tail's exponent, not an estimate
# (the band of the site's forecast chart stops at twice it).
EXTRAPOLATION_LIMIT = 4.0
# `break_even_agreement`: the curve's break-even lies where the data cross the floor, between two published counts
# at most MAX_BRACKET apart (the last whose median observed efficiency is at or above it, the first below it); it
# does not; the data never fall below the floor and the curve's break-even lies beyond them too (nothing tests it);
# it lies in the data's bracket but that spans more than MAX_BRACKET (too wide to tell); the unit has no
# within-series efficiency to compare with.
AGREE, DISAGREE, BEYOND, WIDE, UNOBSERVED = "agree", "disagree", "beyond the data", "too wide to tell", "unobserved"
BREAK_EVEN_AGREEMENTS = (AGREE, DISAGREE, BEYOND, WIDE, UNOBSERVED)
MAX_BRACKET = 2.0  # the widest observed bracket (its upper over its lower count) an agreement may rest on
# Counts of a unit's `band`: geometric steps from half its smallest to twice its largest published count.
BAND_COUNTS = 24
# An observed crossing resting on fewer results than this at its first count below the floor is named as thin.
MIN_CROSSING_RESULTS = 3


class DoublingRow(Record):
    """One published count of a unit: the curve's scaling beside the data's (`observed_scaling`)."""

    accelerator_count: float
    """The published count."""
    n_results: int
    """Results at it."""
    observed_efficiency: float | None
    """Median observed scaling efficiency within a series (1 = linear); None without a series."""
    observed_doubling_speedup: float | None
    """Best time at n over best time at 2n in the same round, median over the rounds with both; None without."""
    model_efficiency: float
    """The curve's scaling efficiency from the unit's `reference_count`."""
    model_doubling_speedup: float
    """The curve's t(n) / t(2n)."""
    model_time_min: float
    """The curve's time to train (minutes)."""


class BandPoint(Record):
    """`predict`'s next-round answer at one count of a unit's band (`unit_band`)."""

    accelerator_count: float
    """Accelerators."""
    predicted_min: float
    """The forecast time to train (minutes)."""
    low_min: float | None
    """Its interval (holding params `decide.target_coverage`): low end (minutes); None when unbounded below
    (`pipeline.analysis.forecasting.answers.interval_low`)."""
    high_min: float
    """High end (minutes)."""
    trusted: bool
    """Whether the answer meets params `decide.trust`."""


class UnitRecord(Record):
    """One unit (family and form factor with results): its published results, its count curve, the break-even
    of that curve against the data's own scaling (`compare_break_even`), and the trust of its next-round forecast
    at its largest count (the one rule of `predict`)."""

    family: str
    """The accelerator family."""
    form_factor: str
    """Its form factor ("unspecified" where the descriptions do not say)."""
    n_points: int
    """Published results."""
    rounds: list[str]
    """The rounds they come from, oldest first."""
    latest_round: str
    """The latest of them."""
    count_min: float
    """The smallest published accelerator count."""
    count_max: float
    """The largest."""
    exponent_b: float
    """The curve's exponent beyond the latest round's counts (d log t / d log n)."""
    slope_at_count_min: float
    """The curve's slope d log t / d log n at `count_min` (-1: linear scaling)."""
    slope_at_count_max: float
    """The same at `count_max`."""
    reference_count: float
    """n0, the count the curve's efficiency is measured from (`typical_base`)."""
    break_even_count: float | None
    """The count beyond which the curve's scaling efficiency falls below params `decide.efficiency_floor`; None:
    never."""
    break_even_beyond_published: bool
    """Whether that lies beyond `count_max` (or never comes)."""
    break_even_model: str
    """The model it comes from: the unit's count curve (the forecasts'), in its form beyond the published counts
    (`curve.FORMS`)."""
    observed_first_count_below_floor: float | None
    """The data's own: the smallest published count whose median within-series efficiency is below the floor."""
    observed_last_count_at_floor: float | None
    """The largest count before it whose median is at or above the floor."""
    break_even_agreement: str
    """Whether the curve's and the data's break-even agree: agree, disagree, beyond the data, too wide to tell or
    unobserved (`compare_break_even`)."""
    break_even_note: str
    """How, or why not, in a sentence for the page."""
    trusted: bool
    """Whether the next-round forecast at `count_max` meets params `decide.trust`."""
    reasons: list[str]
    """Why not; empty when it does."""
    doubling: list[DoublingRow]
    """Per published count, the curve's scaling beside the data's."""
    band: list[BandPoint]
    """`predict`'s answer from half its smallest to twice its largest published count (the site's chart)."""


class BacktestAnswer(Record):
    """One backtest answer: a published result forecast from the rounds before its own."""

    fold: str
    """The round forecast."""
    accelerator_family: str
    """The accelerator family."""
    form_factor: str
    """Its form factor."""
    submitter: str
    """Who published the result."""
    system: str
    """The system's name."""
    accelerator_count: float
    """Accelerators."""
    time_to_train_min: float
    """The published time to train (minutes)."""
    predicted_min: float
    """The forecast (minutes)."""
    low_min: float
    """Its interval: low end (minutes)."""
    high_min: float
    """High end (minutes)."""


class BacktestPoint(BacktestAnswer):
    """A backtest answer as the site's chart shows it."""

    trusted: bool
    """Whether the answer met params `decide.trust`."""


class LargestError(BacktestAnswer):
    """One of the trusted backtest answers furthest from the published time."""

    ape_pct: float
    """Its absolute percentage error (%)."""
    chosen: str
    """The method that answered."""


class DecideSummary(Artifact):
    """One benchmark's decision support (reports/decide/<benchmark>.json, `summarise`): the backtest of `predict`'s
    answers, per unit the next round's forecast, the break-even and the trust, and the data of the site's charts.
    A skipped one holds the head (`reason`, floor, target coverage, counts, method, backtest) and empty lists."""

    KIND = "decide"

    efficiency_floor: float
    """Params `decide.efficiency_floor`: the scaling efficiency the break-even is measured against."""
    target_coverage: float
    """Params `decide.target_coverage`: the share of published times the forecasts' intervals should hold (a
    fraction)."""
    n_configurations: int
    """Results in scope."""
    n_families: int
    """Accelerator families among them."""
    method: str | None
    """The method `predict` answers with (one of `forecast.CANDIDATES`); None without a fitted model."""
    candidate_medians: dict[str, float | None]
    """Per candidate method, its backtest median error (%) on the results every candidate forecast."""
    backtest: BacktestSummary | None
    """The backtest of `predict`'s answers; None when no round could be forecast."""
    n_units: int | None = None
    """Units (family and form factor) with results."""
    n_units_trusted: int | None = None
    """Those whose next-round forecast is trusted."""
    n_units_break_even_agree: int | None = None
    """Those whose curve's break-even agrees with the data's."""
    n_units_break_even_disagree: int | None = None
    """Those where it does not."""
    units: list[UnitRecord] = Field(default_factory=list)
    """Every unit, most published results first."""
    forecasts: list[Answer] = Field(default_factory=list)
    """Per unit, in the same order, the next round's forecast at its largest published count."""
    largest_errors: list[LargestError] = Field(default_factory=list)
    """The trusted backtest answers furthest from the published times, worst first."""
    backtest_points: list[BacktestPoint] = Field(default_factory=list)
    """Every backtest answer (the site's backtest chart)."""


def series_bases(unit_frame: pd.DataFrame) -> dict[Any, float]:
    """Each scaling series' base count: its smallest member with a within-series efficiency."""
    smallest: dict[Any, float] = {}
    for series, count, efficiency in zip(unit_frame["series"].tolist(), unit_frame["accelerator_count"].tolist(),
                                         unit_frame["scaling_efficiency"].tolist()):
        if not (pd.isna(series) or pd.isna(efficiency)):
            smallest[series] = min(smallest.get(series, math.inf), count)
    return smallest


def observed_scaling(unit_frame: pd.DataFrame, reference: float) -> pd.DataFrame:
    """Per published count: results, median observed scaling efficiency of the members of the series whose base
    is `reference` (each against its own series' base, so every median, like the curve's efficiency, is measured
    from the same count; NaN at counts no such series reaches), and the observed speed-up of doubling (best time
    at n over best time at 2n in the same round; median over rounds that have both)."""
    # On plain columns: a unit has a few dozen results, and grouped frames cost more than the arithmetic.
    bases = series_bases(unit_frame)
    best: dict[tuple[Any, float], float] = {}
    efficiencies: dict[float, list[float]] = {}
    for round_, count, minutes, efficiency, series in zip(
            unit_frame["round"].tolist(), unit_frame["accelerator_count"].tolist(),
            unit_frame["time_to_train_min"].tolist(), unit_frame["scaling_efficiency"].tolist(),
            unit_frame["series"].tolist()):
        best[(round_, count)] = min(best.get((round_, count), math.inf), minutes)
        efficiencies.setdefault(count, []).append(efficiency if bases.get(series) == reference else math.nan)
    ratios: dict[float, list[float]] = {}
    for (round_, count), minutes in best.items():
        if (round_, 2 * count) in best:
            ratios.setdefault(count, []).append(minutes / best[(round_, 2 * count)])
    counts = sorted(efficiencies)
    return pd.DataFrame({"n_results": [len(efficiencies[count]) for count in counts],
                         "n_measured": [int(np.sum(~np.isnan(efficiencies[count]))) for count in counts],
                         "observed_efficiency": [_median(efficiencies[count]) for count in counts],
                         "observed_doubling_speedup": [_median(ratios.get(count, [])) for count in counts]},
                        index=pd.Index(counts, dtype=float, name="accelerator_count"))


def _median(values: list[float]) -> float:
    """The median of the known `values` (NaN skipped), NaN when none is known."""
    known = np.asarray(values, dtype=float)
    known = known[~np.isnan(known)]
    return float(np.median(known)) if len(known) else math.nan


def first_count_below(efficiency: pd.Series, floor: float) -> float | None:
    """The smallest accelerator count (the index of `efficiency`) whose scaling efficiency is below `floor`, or None."""
    below = efficiency[efficiency < floor]
    return float(below.index.min()) if len(below) else None


def last_count_at_floor(efficiency: pd.Series, floor: float, before: float | None) -> float | None:
    """The largest count (index) below `before` (every count when None) whose efficiency is at least `floor`."""
    at = efficiency[(efficiency >= floor) & (efficiency.index < (math.inf if before is None else before))]
    return float(at.index.max()) if len(at) else None


def typical_base(unit_frame: pd.DataFrame) -> float:
    """The count a unit's break-even is measured from: the lower median of its scaling series' base counts (each
    series' smallest member with an efficiency, its smallest multi-accelerator member), so the curve's base is
    like the data's; without a series, the smallest published count of two or more (else the smallest)."""
    bases = np.sort(np.array(list(series_bases(unit_frame).values()), dtype=float))
    if len(bases):
        return float(bases[(len(bases) - 1) // 2])
    counts = unit_frame["accelerator_count"].to_numpy(dtype=float)
    multi = counts[counts >= MIN_BASE_COUNT]
    return float(multi.min() if len(multi) else counts.min())


def compare_break_even(model: float | None, observed: pd.DataFrame, floor: float, reference: float,
                       curve: CountCurve) -> tuple[str, str]:
    """`break_even_agreement` (one of `BREAK_EVEN_AGREEMENTS`) and `break_even_note`, the sentence the page shows:
    the curve's break-even `model` (None: never below `floor`) against the data's `observed` (`observed_scaling`
    of the unit, from `reference`). They agree only when the data bracket their crossing inside the published
    counts (the last count at or above the floor before the first below it, both observed) at most MAX_BRACKET
    wide and the model lies in it; a model in a wider bracket is WIDE; where no median is below the floor and the
    model lies beyond every observed count too, it is BEYOND the data. A disagreement names its likely causes: a
    crossing resting on few results, medians that cross the floor more than once, or the curve (every round and
    submitter of the unit, robust) scaling better or worse there than the series measured (the unit's `curve`,
    its efficiency from `reference`)."""
    efficiency = observed["observed_efficiency"].dropna()
    model_text = "never" if model is None else f"at {model:.0f}"
    if efficiency.empty:
        return UNOBSERVED, (f"no scaling series within a round to compare with: the curve falls below the floor "
                            f"{model_text}, from its other rounds and the benchmark's pooled slope")
    below = first_count_below(efficiency, floor)
    if below is None:
        largest = float(efficiency.index.max())
        if model is None or model > largest:
            return BEYOND, (f"beyond the data: no series from {reference:.0f} falls below the floor up to "
                            f"{largest:.0f} accelerators, and the curve does so {model_text}, where no result "
                            "tests it")
        return DISAGREE, (f"the curve falls below the floor {model_text}, but the series measured from "
                          f"{reference:.0f} up to {largest:.0f} accelerators stay above it (median "
                          f"{efficiency.iloc[-1]:.2f} at {largest:.0f}): the curve is the typical submitter's over "
                          "every round, these series scale better")
    above = last_count_at_floor(efficiency, floor, below)
    low = reference if above is None else above
    if model is not None and low <= model <= below:
        bracket = f"the data cross the floor between {low:.0f} and {below:.0f} accelerators, the curve at {model:.0f}"
        if above is not None and below <= MAX_BRACKET * above:
            return AGREE, bracket
        return WIDE, (f"{bracket}, but that bracket spans {below / low:.0f}x (more than {MAX_BRACKET:g}x): too "
                      "wide to tell")
    causes = []
    results = int(observed.loc[below, "n_measured"])
    if results < MIN_CROSSING_RESULTS:
        causes.append(f"the data's crossing rests on {results} result{'s' if results > 1 else ''} at {below:.0f}")
    back_above = efficiency[(efficiency.index > below) & (efficiency >= floor)]
    if len(back_above):
        causes.append(f"the medians cross the floor more than once (below at {below:.0f}, at or above it again "
                      f"at {float(back_above.index[0]):.0f})")
    side, count = ("better", below) if model is None or model > below else ("worse", low)
    measured = f", median observed {efficiency[count]:.2f}" if count in efficiency.index else ""
    causes.append(f"the curve (every round and submitter) scales {side} than the series measured at {count:.0f} "
                  f"(curve {float(curve.efficiency(count, reference)[0]):.2f}{measured})")
    return DISAGREE, (f"the curve falls below the floor {model_text}, the data between {low:.0f} and "
                      f"{below:.0f}: {'; '.join(causes)}")


def _slope(curve: Any, count: float) -> float:
    """d log t / d log n of a curve at `count` (the right-hand slope; the left one at the largest knot)."""
    step = 1e-6
    return float((curve.log_time(count * np.exp(step)) - curve.log_time(count))[0] / step)


def unit_order(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """Every unit (family, form factor) with results, most published results first (then by name)."""
    units = frame.groupby(["accelerator_family", "form_factor"]).size()
    return sorted(units.index, key=lambda key: (-units[key], key))


def unit_answers(fitted: FittedBenchmark, frame: pd.DataFrame, rule: DecideTrustSettings
                 ) -> dict[tuple[str, str], Answer]:
    """Per unit (`unit_order`), the next-round forecast at its largest published count, as
    `python -m pipeline.commands.predict` answers it (from the same saved models): decide.json's `forecasts`."""
    largest = frame.groupby(["accelerator_family", "form_factor"])["accelerator_count"].max()
    return {(family, form_factor): answer(fitted, family, form_factor, float(largest[(family, form_factor)]), rule)
            for family, form_factor in unit_order(frame)}


def unit_band(fitted: FittedBenchmark, family: str, form_factor: str, low: float, high: float,
              rule: DecideTrustSettings) -> list[BandPoint]:
    """`predict`'s answer with its interval (minutes) at BAND_COUNTS whole counts from low / 2 to 2 high."""
    counts = np.unique(np.round(np.geomspace(max(1.0, low / 2), 2 * high, BAND_COUNTS)))
    band = answer_band(fitted, family, form_factor, counts, rule)
    return _rows(BandPoint, band.assign(accelerator_count=counts))


def _rows(model: type[R], frame: pd.DataFrame) -> list[R]:
    """`frame`'s rows as `model` records (its fields the columns kept)."""
    names = list(model.model_fields)
    # Column by column as Python values, missing ones None (pandas' astype, where and to_dict on these small
    # frames took a fifth of the stage's work).
    columns = [[None if pd.isna(value) else value for value in frame[name].tolist()] for name in names]
    return [model.model_validate(dict(zip(names, values))) for values in zip(*columns)]


def unit_records(fitted: FittedBenchmark, frame: pd.DataFrame, floor: float, rule: DecideTrustSettings,
                 answers: dict[tuple[str, str], Answer] | None = None) -> list[UnitRecord]:
    """Every unit with results (`unit_order`); `answers` their `unit_answers` when computed already."""
    answers = unit_answers(fitted, frame, rule) if answers is None else answers
    records = []
    for family, form_factor in unit_order(frame):
        curve = fitted.curve(family, form_factor)
        assert curve is not None  # every unit with results has one
        unit_frame = frame[(frame["accelerator_family"] == family) & (frame["form_factor"] == form_factor)]
        low, high = float(unit_frame["accelerator_count"].min()), float(unit_frame["accelerator_count"].max())
        reference = typical_base(unit_frame)
        observed = observed_scaling(unit_frame, reference)
        counts = observed.index.to_numpy(dtype=float)
        break_even = curve.break_even(floor, reference)
        below = first_count_below(observed["observed_efficiency"].dropna(), floor)
        agreement, note = compare_break_even(break_even, observed, floor, reference, curve)
        doubling = observed.assign(model_efficiency=curve.efficiency(counts, reference),
                                   model_doubling_speedup=curve.doubling_speedup(counts),
                                   model_time_min=np.exp(curve.log_time(counts)))
        forecast = answers[(family, form_factor)]
        rounds = sorted(unit_frame["round"].unique(), key=lambda name: fitted.forecaster.rounds.index(name))
        records.append(UnitRecord(
            family=family, form_factor=form_factor, n_points=len(unit_frame), rounds=rounds,
            latest_round=rounds[-1], count_min=low, count_max=high, exponent_b=curve.exponent,
            slope_at_count_min=_slope(curve, low), slope_at_count_max=_slope(curve, high),
            reference_count=reference, break_even_count=break_even,
            break_even_beyond_published=break_even is None or break_even > high,
            break_even_model=f"count curve, {curve.form} beyond the published counts",
            observed_first_count_below_floor=below,
            observed_last_count_at_floor=last_count_at_floor(observed["observed_efficiency"].dropna(), floor, below),
            break_even_agreement=agreement, break_even_note=note,
            trusted=forecast.trusted, reasons=list(forecast.reasons),
            doubling=_rows(DoublingRow, doubling.rename_axis("accelerator_count").reset_index()),
            band=unit_band(fitted, family, form_factor, low, high, rule)))
    return records


def skip_reason(frame: pd.DataFrame, min_configurations: int) -> str | None:
    """Why the decide stage does not analyse a benchmark with these model inputs; None when it does."""
    if frame.empty:
        return "no results in scope"
    if len(frame) < min_configurations:
        return f"{len(frame)} configurations in scope, fewer than analysis.min_configurations = {min_configurations}"
    return None


def summarise(benchmark: str, frame: pd.DataFrame, fitted: FittedBenchmark | None, backtest_points: pd.DataFrame,
              floor: float, target_coverage: float, reason: str | None, rule: DecideTrustSettings) -> DecideSummary:
    """decide.json of `benchmark`. `fitted` is the benchmark's saved models (None without a result in scope);
    `backtest_points` its backtest (POINT_COLUMNS); `reason` why the stage skips it (`skip_reason`), None when it
    analyses it."""
    answers = backtest_points[backtest_points["method"] == ANSWER]
    head: dict[str, Any] = {
        "benchmark": benchmark, "efficiency_floor": floor, "target_coverage": target_coverage,
        "n_configurations": len(frame),
        "n_families": int(frame["accelerator_family"].nunique()) if len(frame) else 0,
        "method": None if fitted is None else fitted.method,
        "candidate_medians": {} if fitted is None else fitted.candidate_medians,
        "backtest": summarise_backtest(backtest_points) if len(answers) else None}
    if reason is not None or fitted is None:
        return DecideSummary(status="skipped", reason=reason or "no results in scope", **head, units=[],
                             forecasts=[], largest_errors=[], backtest_points=[])
    next_round = unit_answers(fitted, frame, rule)
    units = unit_records(fitted, frame, floor, rule, next_round)
    trusted_answers = answers[answers["trusted"].astype(bool)].astype({"ape_pct": float})
    return DecideSummary(
        status="ok", reason=None, **head, n_units=len(units),
        n_units_trusted=sum(unit.trusted for unit in units),
        n_units_break_even_agree=sum(unit.break_even_agreement == AGREE for unit in units),
        n_units_break_even_disagree=sum(unit.break_even_agreement == DISAGREE for unit in units),
        units=units, forecasts=list(next_round.values()),
        largest_errors=_rows(LargestError, trusted_answers.nlargest(LARGEST_ERRORS, "ape_pct")),
        backtest_points=_rows(BacktestPoint, answers.astype({"trusted": bool})))
