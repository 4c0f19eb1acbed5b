"""`predict`'s answers: the decide stage's fitted models of one benchmark (`FittedBenchmark`, `fit_benchmark`)
and the forecast, interval, trust and notes for one family and count (`answer`, `answer_band`).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from pydantic import field_serializer

from pipeline.analysis.forecasting.backtest import CHOICE_MARGIN, choose_method, new_family_evidence
from pipeline.analysis.forecasting.curve import CountCurve
from pipeline.analysis.forecasting.intervals import Calibration, ResidualHistory
from pipeline.analysis.forecasting.model import (
    ANSWER,
    BLEND,
    CANDIDATES,
    KINDS,
    MODEL,
    MONOTONE,
    NAIVE,
    NAIVE_BASED,
    NEW_FAMILY_KINDS,
    POOLED,
    RECENTRED_KINDS,
    ROUND_STEP_YEARS,
    SPECIFICATION,
    DriftPrior,
    Forecaster,
    fit,
)
from pipeline.analysis.forecasting.summaries import (
    AnswerErrors,
    ComparisonRecord,
    ErrorSummary,
    compare,
    error_sentence,
    new_family_sentence,
)
from pipeline.analysis.forecasting.trust import Evidence, backtest_evidence, trust_reasons
from pipeline.core.artifacts import Record
from pipeline.core.errors import UsageError
from pipeline.mlperf.catalogue import BY_ID, round_published, round_version
from pipeline.mlperf.hardware.accelerators import specifications
from pipeline.settings import DecideTrustSettings

# An answer's times (minutes) as printed with --json and stored in decide.json: 0.1 ms, far below any run's noise.
ANSWER_DECIMALS = 4
# More accelerators than this is refused: five times the largest AI training clusters reported by 2025 (about
# 200,000 GPUs), and 80 times the largest MLPerf Training submission (12,288).
ABSURD_COUNT = 1_000_000
# The published results a FittedBenchmark keeps: the trust rule's rounds and counts, and the nearest results
# `predict` shows beside an answer.
PUBLISHED_COLUMNS = ["accelerator_family", "form_factor", "round", "submitter", "system", "accelerator_count",
                     "time_to_train_min"]


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
    low_min: float | None
    """Its interval: low end (minutes); None when unbounded below (`interval_low`)."""
    high_min: float
    """High end (minutes)."""
    target_coverage: float
    """The share of published times the interval should hold (params `decide.target_coverage`, a fraction)."""
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
    """What else a reader must know: extrapolated, data rising with count, what a family new to the benchmark is
    learned from (`source_note`), retired."""
    backtest_error: str
    """The benchmark's one error figure (`error_sentence`): the forward backtest of `predict`'s answers, the naive
    rule's beside it; for a family new to the benchmark, that of such answers on every benchmark
    (`new_family_sentence`)."""

    @field_serializer("predicted_min", "low_min", "high_min")
    def _stored(self, minutes: float | None) -> float | None:
        return None if minutes is None else round(minutes, ANSWER_DECIMALS)


@dataclass(frozen=True)
class FittedBenchmark:
    """Everything `predict` and `recommend` need to answer for one benchmark, fitted once by the decide stage
    and saved in its models.json (`pipeline.analysis.forecasting.models_artifact`): the forecast model of the
    benchmark's
    results in scope, each (method, kind)'s calibration for the next round, the method chosen on the backtest,
    the backtest evidence for the trust rule, and the published results."""

    benchmark: str
    not_analysed_reason: str | None  # why the decide stage skipped the benchmark; None when it analysed it
    target_coverage: float  # the share of published times the intervals should hold (params `decide.target_coverage`)
    forecaster: Forecaster
    calibrations: dict[tuple[str, str, bool], Calibration]  # (method, kind, trusted) -> its calibration
    method: str  # the method `predict` answers with (one of CANDIDATES)
    candidate_medians: dict[str, float | None]  # each candidate's backtest median error on the common results
    comparison: ComparisonRecord  # `compare` of the benchmark's backtest points
    new_family_errors: AnswerErrors  # every benchmark's backtest answers of NEW_FAMILY_KINDS
    family_evidence: dict[tuple[str, str], Evidence]  # (method, family) -> inside, n, median error % of its
    kind_evidence: dict[tuple[str, str], Evidence]  # backtest forecasts; (method, kind) -> the same
    published: pd.DataFrame  # the model inputs, PUBLISHED_COLUMNS

    @property
    def target_time(self) -> float:
        """The round forecast: the one after the latest fitted on."""
        return max(round_published(name) for name in self.forecaster.rounds) + ROUND_STEP_YEARS

    def families(self) -> list[str]:
        """The accelerator families with published results in the fitted rounds, sorted."""
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

    def family_range(self, family: str, method: str = MODEL) -> tuple[float, float] | None:
        """The family's smallest and largest published count (any form factor) that `method` rests on: every
        round's for the model, its latest round's for the methods resting on the naive rule (NAIVE_BASED); None
        without results."""
        if method in NAIVE_BASED:
            return self.forecaster.latest_round_ranges.get(family)
        found = self._family_published.get(family)
        return None if found is None else (found[1], found[2])

    def curve(self, family: str, form_factor: str) -> CountCurve | None:
        """The unit's count curve (the model's, without the drift: the break-even's), None without results."""
        return self.forecaster.curves.get((family, form_factor))


def fit_benchmark(benchmark: str, frame: pd.DataFrame, points: pd.DataFrame, target_coverage: float,
                  not_analysed_reason: str | None = None, drift_prior: DriftPrior | None = None) -> FittedBenchmark:
    """The FittedBenchmark of `benchmark` from its model inputs `frame` (at least one row) and the backtest
    `points` of every benchmark (POINT_COLUMNS, folds up to the rounds of `frame`; other benchmarks' earlier
    residuals help calibrate); `drift_prior` (`next_round_drift`) is the drift of a benchmark without its own."""
    forecaster = fit(frame, drift_prior)
    target_time = max(round_published(name) for name in forecaster.rounds) + ROUND_STEP_YEARS
    history = ResidualHistory.of(points[points["method"] != ANSWER])
    slopes = {method: history.extrapolation_slope(method, target_coverage, target_time) for method in CANDIDATES}
    calibrations = {(method, kind, trusted): history.calibration(
                        benchmark, method, kind, target_coverage, target_time, trusted,
                        recentre=kind in RECENTRED_KINDS, new_family_kinds=NEW_FAMILY_KINDS, slope=slopes[method])
                    for method in CANDIDATES for kind in ((*KINDS,) if method in (MODEL, BLEND) else (NAIVE,))
                    for trusted in (True, False)}
    own = points[points["benchmark"] == benchmark]
    method, medians = choose_method(own[own["method"] != ANSWER])
    forecasts = own[own["method"] != ANSWER]
    return FittedBenchmark(benchmark=benchmark, not_analysed_reason=not_analysed_reason,
                           target_coverage=target_coverage,
                           forecaster=forecaster, calibrations=calibrations, method=method,
                           candidate_medians=medians, comparison=compare(own).record(),
                           new_family_errors=AnswerErrors.model_validate(ErrorSummary.of(
                               points[(points["method"] == ANSWER) & points["kind"].isin(NEW_FAMILY_KINDS)]
                           ).as_dict("answer")),
                           family_evidence=backtest_evidence(forecasts, "accelerator_family"),
                           # a new family's kind: every benchmark's forecasts of it (`backtest.new_family_evidence`)
                           kind_evidence={**backtest_evidence(forecasts, "kind"),
                                          **new_family_evidence(points[points["method"] != ANSWER])},
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
    # The monotone naive curves only where the chosen method rests on them (they cost a fit per family).
    forecast = fitted.forecaster.forecast_arrays(np.full(len(counts), family, dtype=object),
                                                 np.full(len(counts), form_factor, dtype=object), counts,
                                                 fitted.target_time,
                                                 monotone_curves=fitted.method in (MONOTONE, BLEND))
    if not np.isfinite(forecast[MODEL]).all():
        missing = ("too few families have specifications to regress on" if family in specifications().index
                   else "no row in the accelerator specification table (pipeline/mlperf/hardware/accelerators.csv)")
        raise UsageError(f"no forecast for {family} on {fitted.benchmark}: it has no results in scope and {missing}")
    method = fitted.method if np.isfinite(forecast[fitted.method]).all() else MODEL
    kind = NAIVE if method == MONOTONE else str(forecast["kind"][0])
    calibration = fitted.calibrations[(method, kind, trusted)]
    distance = forecast["distance"]
    return AnswerCurve(method=method, kind=kind, calibration=calibration, counts=counts,
                       log_minutes=forecast[method] + calibration.shift,
                       half_width=np.asarray(calibration.half_width(distance, forecast["scale"]), dtype=float),
                       distance=distance)


def answer_reasons(fitted: FittedBenchmark, family: str, count: float, method: str, kind: str,
                   rule: DecideTrustSettings) -> list[str]:
    """Why `predict`'s answer for `family` x `count` by `method` and `kind` is not trusted (`trust_reasons`, and
    first that the decide stage did not analyse the benchmark); empty: trusted."""
    if kind in NEW_FAMILY_KINDS:  # the same rule on what it learns from and its kind's evidence (trust.py)
        source = fitted.forecaster.source_of(family, fitted.target_time) if kind != SPECIFICATION else None
        if source is not None and fitted.family_rounds(source.family):
            learned, rounds, published = source.family, fitted.family_rounds(source.family), fitted.family_range(
                source.family, method)
        else:
            counts = fitted.published["accelerator_count"]
            learned, rounds = "the benchmark", int(fitted.published["round"].nunique())
            published = (float(counts.min()), float(counts.max())) if len(counts) else None
        reasons = trust_reasons(rounds, count, published, (0, 0, None),
                                fitted.kind_evidence.get((method, kind), (0, 0, None)), rule, learned_from=learned)
    else:
        reasons = trust_reasons(fitted.family_rounds(family), count, fitted.family_range(family, method),
                                fitted.family_evidence.get((method, family), (0, 0, None)),
                                fitted.kind_evidence.get((method, kind), (0, 0, None)), rule,
                                latest_round_only=method in NAIVE_BASED)
    if fitted.not_analysed_reason is not None:
        reasons.insert(0, f"the decide stage did not analyse {fitted.benchmark}: {fitted.not_analysed_reason}")
    return reasons


def interval_low(log_minutes: np.ndarray, half_width: np.ndarray) -> np.ndarray:
    """The low ends (minutes) of intervals centred on `log_minutes` with log `half_width`s: NaN where it rounds to 0
    at ANSWER_DECIMALS (an interval so wide, such as DLRM's V100 x 16 from one round, 0.00002 to 563,157 min, says
    nothing of how fast a run can be: unbounded below, not drawn from 0)."""
    low = np.exp(np.asarray(log_minutes, dtype=float) - np.asarray(half_width, dtype=float))
    return np.where(np.round(low, ANSWER_DECIMALS) > 0, low, np.nan)


def interval_text(low_min: float | None, high_min: float) -> str:
    """An interval in words (minutes, three significant digits): "4.1 to 5.2 min", or "up to 5.2 min (unbounded
    below)" when it has no low end (`interval_low`)."""
    if low_min is None or math.isnan(low_min):
        return f"up to {high_min:.3g} min (unbounded below)"
    return f"{low_min:.3g} to {high_min:.3g} min"


def answer_band(fitted: FittedBenchmark, family: str, form_factor: str, counts: np.ndarray,
                rule: DecideTrustSettings) -> pd.DataFrame:
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
                         "low_min": interval_low(curve.log_minutes, half_width),
                         "high_min": np.exp(curve.log_minutes + half_width), "trusted": trusted})


def answer(fitted: FittedBenchmark, family: str, form_factor: str, count: float, rule: DecideTrustSettings) -> Answer:
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
    source = source_note(fitted, family, kind, curve.calibration.shift)
    if source:
        notes.append(source)
    retired = retirement_note(benchmark, fitted.forecaster.rounds[-1])
    if retired:
        notes.append(retired)
    low = float(interval_low(np.array([centre]), np.array([half_width]))[0])
    return Answer(benchmark=benchmark, accelerator=family, form_factor=form_factor, count=count,
                  predicted_min=math.exp(centre), low_min=None if math.isnan(low) else low,
                  high_min=math.exp(centre + half_width), target_coverage=fitted.target_coverage, method=method,
                  kind=kind,
                  specification_based=kind in (POOLED, *NEW_FAMILY_KINDS), trusted=not reasons, reasons=reasons,
                  rounds=list(fitted.forecaster.rounds), calibration=curve.calibration.q_source,
                  note=method_note(fitted, method), extrapolated=extrapolated, notes=notes,
                  backtest_error=(new_family_sentence(fitted.new_family_errors) if kind in NEW_FAMILY_KINDS
                                  else error_sentence(fitted.comparison)))


def source_note(fitted: FittedBenchmark, family: str, kind: str, shift: float) -> str:
    """What the forecast of a family without results on `fitted`'s benchmark (`kind` one of NEW_FAMILY_KINDS)
    stands on, in a sentence: the family it learned from (`siblings.new_family_source`) and their ratio, or the
    regression on specifications; then the re-centring `shift` (log minutes) where there is one. Empty for
    other kinds."""
    benchmark = fitted.benchmark
    if kind == SPECIFICATION:
        text = (f"from the specifications: the regression of {benchmark}'s families' levels on their peak dense BF16 "
                f"TFLOPS and memory bandwidth ({family} and every family of its vendor have no result there)")
    else:
        source = fitted.forecaster.source_of(family) if kind in NEW_FAMILY_KINDS else None
        if source is None:
            return ""
        vendor = specifications().loc[family, "vendor"]
        whom = (f"{source.family}, its vendor's sibling" if source.own_vendor else
                f"{source.family}, another vendor's family standing in (no {vendor} family has results on "
                f"{benchmark}; a weaker guide)")
        text = f"learned from {whom}: its count curve and drift on {benchmark}, times {source.ratio_text()}"
    if shift:
        text += (f"; then times {math.exp(shift):.3f}, re-centred on the errors of earlier forecasts of this kind in "
                 f"the backtest")
    return text


def method_note(fitted: FittedBenchmark, method: str) -> str:
    """Why `predict` answers `fitted`'s benchmark with `method`, in a sentence (the error itself is
    `error_sentence`'s, the one figure)."""
    if method != fitted.method:
        return f"the model: the chosen {fitted.method} needs the family's own results"
    if fitted.candidate_medians.get(MODEL) is None:
        return (f"no backtest compares the methods on {fitted.benchmark} (that needs results in two rounds of the "
                f"same family): the model answers")
    if method == MODEL:
        return (f"no other candidate's backtest median error on {fitted.benchmark} is more than "
                f"{100 * CHOICE_MARGIN:.0f}% below the model's on the results all of them forecast")
    return (f"its backtest median error on {fitted.benchmark} is more than {100 * CHOICE_MARGIN:.0f}% below the "
            f"model's on the results all of them forecast")
