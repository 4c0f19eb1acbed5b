"""The decide stage's saved forecast models (reports/decide/<benchmark>.models.json): written once by
`pipeline.stages.decide`, read by `pipeline.commands.predict` and `pipeline.commands.recommend`, which never refit,
so their answers are the report's.

The file is a `ModelsArtifact` (times in minutes, logs natural, years as fractional publication dates): the
`Forecaster` (`ForecasterRecord`: its scalars and its units', count curves' and naive rule's rows), one calibration
per method, kind and trust (`CalibrationRow`), the method `predict` answers with and the backtest's candidate
medians, the benchmark's backtest `ComparisonRecord`, the trust rule's evidence (`EvidenceRow`) and the published
results (`PublishedRow`). A benchmark without a single result in scope has nothing to forecast from: its file has
status "skipped", its reason, and null forecaster, method and comparison (empty elsewhere); `read_models` gives a
`NotAnalysed` for it. `read_models` raises ContractError naming the file and what is wrong.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, cast

import numpy as np
import pandas as pd
from pydantic import Field, FiniteFloat, model_validator

from pipeline.analysis.forecasting.answers import FittedBenchmark
from pipeline.analysis.forecasting.intervals import Calibration
from pipeline.analysis.forecasting.model import BLEND, CANDIDATES, KINDS, MODEL, NAIVE, UNIT, Forecaster
from pipeline.analysis.forecasting.siblings import LawChoice, MeasuredRatio
from pipeline.analysis.forecasting.summaries import AnswerErrors, ComparisonRecord
from pipeline.core import paths
from pipeline.core.artifacts import Artifact, Record
from pipeline.core.cli import canonical_name
from pipeline.core.errors import UsageError

FORMAT: Literal[3] = 3
# The (method, kind, trusted) triples a saved model calibrates: each candidate method's kinds, trusted or not.
CALIBRATED = sorted((method, kind, trusted) for method in CANDIDATES
                    for kind in ((*KINDS,) if method in (MODEL, BLEND) else (NAIVE,)) for trusted in (True, False))
Method = Literal["model", "monotone naive", "blend"]  # CANDIDATES
Form = Literal["constant exponent", "fixed plus divisible", "communication-aware"]  # curve.FORMS


@dataclass(frozen=True)
class NotAnalysed:
    """A benchmark the decide stage skipped without a result to forecast from."""

    benchmark: str
    reason: str


class UnitRow(Record):
    """One unit (an accelerator family in one form factor) of the forecaster."""

    accelerator_family: str
    """The accelerator family."""
    form_factor: str
    """Its form factor."""
    exponent: FiniteFloat = Field(ge=-1, le=0)
    """The unit's scaling exponent (log minutes per log accelerator)."""
    own_shape: bool
    """Whether the exponent comes from the unit's own results at two counts in one round."""
    anchor_time: FiniteFloat
    """The publication time of the unit's latest round (years)."""
    n_rounds: int = Field(ge=1)
    """Rounds with results of the unit."""
    count_min: FiniteFloat = Field(gt=0)
    """Its smallest published count (accelerators)."""
    count_max: FiniteFloat = Field(gt=0)
    """Its largest published count (accelerators)."""
    spread: FiniteFloat = Field(ge=0)
    """The spread between submitters' results around its curve in its latest round (log minutes, shrunk towards
    the benchmark's)."""
    serial: FiniteFloat = Field(default=0.0, ge=0)
    """Its curve's fixed time per step over the divisible one (c / a) beyond its counts (`curve.ScalingShape`;
    0 in the constant-exponent form)."""
    communication: FiniteFloat = Field(default=0.0, ge=0)
    """Its curve's communication time per doubling over the divisible one (k / a; 0 but in the communication-aware
    form)."""
    domain: FiniteFloat = Field(default=1.0, gt=0)
    """The accelerators of its NVLink (or ICI) domain, beyond which communication costs (communication-aware form)."""


class CurveRow(Record):
    """One knot of a unit's count curve."""

    accelerator_family: str
    """The accelerator family."""
    form_factor: str
    """Its form factor."""
    accelerator_count_published: FiniteFloat = Field(gt=0)
    """The knot: a published count (accelerators)."""
    curve_log: FiniteFloat
    """The curve there (log minutes)."""


class NaiveRow(Record):
    """One of the naive rule's rows: a family's best time at one count of its latest round."""

    accelerator_family: str
    """The accelerator family."""
    accelerator_count_published: FiniteFloat = Field(gt=0)
    """The published count (accelerators)."""
    time_to_train_min: FiniteFloat = Field(gt=0)
    """The best time there (minutes)."""


class MeasuredRatioRow(Record):
    """A family without results on the benchmark against one with (`MeasuredRatio`), measured elsewhere."""

    family: str
    """The family forecast."""
    sibling: str
    """The family with results here."""
    log_ratio: FiniteFloat
    """The median over benchmarks of log(time of family / time of sibling) in one round at one count."""
    benchmarks: int = Field(ge=1)
    """Benchmarks measuring it."""


Law = Literal["bf16 compute", "compute at the precision", "compute and bandwidth"]  # siblings.SPEC_LAWS


class LawChoiceRow(Record):
    """The law of a new family's ratio to its sibling (`siblings.LawChoice`), chosen on earlier first appearances."""

    law: Law = "bf16 compute"
    """The specifications' law."""
    measured: bool = False
    """Whether a ratio measured on other benchmarks replaces it where there is one."""
    cases: int = Field(default=0, ge=0)
    """The earlier first appearances it was chosen on."""
    measured_cases: int = Field(default=0, ge=0)
    """The earlier meetings of two families with a measured ratio."""
    errors: list[tuple[Law, FiniteFloat | None]] = Field(default_factory=list)
    """Each law's median |log error| on those first appearances."""
    measured_error: FiniteFloat | None = None
    """The measured ratio's median |log error| on the meetings with one."""
    law_error_on_measured: FiniteFloat | None = None
    """The chosen law's on the same meetings."""


class ForecasterRecord(Record):
    """A `Forecaster` as saved."""

    rounds: list[str] = Field(min_length=1)
    """The rounds fitted on, oldest first."""
    pooled_exponent: FiniteFloat
    """The benchmark's pooled within-group scaling exponent."""
    drift_per_year: FiniteFloat
    """The benchmark's software progress (log minutes per year)."""
    spread_log: FiniteFloat
    """The sd of a forecast's log residual from the fit's within-group and between-round spreads."""
    rate_sd: FiniteFloat = Field(ge=0)
    """The sd of the benchmark's drift rates (log minutes per year): the drift's uncertainty in an interval."""
    spec_intercept: FiniteFloat | None
    """The latest round's effect in the specification regression; null without one."""
    spec_time: FiniteFloat | None
    """That round's publication time (years); null without a regression."""
    spec_coefficients: list[FiniteFloat] | None
    """The specification features' coefficients; null without a regression."""
    units: list[UnitRow]
    """The units, by family and form factor."""
    curve_rows: list[CurveRow]
    """The units' count curves at their knots."""
    naive_rows: list[NaiveRow]
    """The naive rule's rows."""
    measured: list[MeasuredRatioRow]
    """Measured ratios of families without results here to ones with."""
    form: Form = "constant exponent"
    """The form of the count curves beyond the published counts (`curve.FORMS`)."""
    law: LawChoiceRow = Field(default_factory=LawChoiceRow)
    """The law of a new family's ratio to its sibling."""
    benchmark: str = ""
    """The benchmark fitted (the precision a new family's forecast assumes)."""
    precisions: list[tuple[str, str]] = Field(default_factory=list)
    """Each family's most common precision in its latest round, where the data say it."""

    @model_validator(mode="after")
    def _consistent(self) -> ForecasterRecord:
        if self.spec_coefficients is not None and self.spec_intercept is None:
            raise ValueError("spec_intercept is needed with spec_coefficients")
        known = {(unit.accelerator_family, unit.form_factor) for unit in self.units}
        if any((row.accelerator_family, row.form_factor) not in known for row in self.curve_rows):
            raise ValueError("curve_rows names a unit the units lack")
        return self

    @classmethod
    def of(cls, forecaster: Forecaster) -> ForecasterRecord:
        """The record of a fitted `Forecaster`: its scalars and its units', curves' and naive rule's rows."""
        return cls.model_validate({
            "rounds": list(forecaster.rounds), "pooled_exponent": forecaster.pooled_exponent,
            "drift_per_year": forecaster.drift_per_year, "spread_log": forecaster.spread_log,
            "rate_sd": forecaster.rate_sd,
            "spec_intercept": forecaster.spec_intercept,
            "spec_time": None if math.isnan(forecaster.spec_time) else forecaster.spec_time,
            "spec_coefficients": None if forecaster.spec_coefficients is None
            else [float(value) for value in forecaster.spec_coefficients],
            "units": _records(forecaster.units.reset_index(), UnitRow),
            "curve_rows": _records(forecaster.curve_rows, CurveRow),
            "naive_rows": _records(forecaster.naive_rows, NaiveRow),
            "measured": [asdict(ratio) for ratio in forecaster.measured], "form": forecaster.form,
            "law": asdict(forecaster.law), "benchmark": forecaster.benchmark,
            "precisions": [list(pair) for pair in forecaster.precisions]})

    def forecaster(self) -> Forecaster:
        """The `Forecaster` this record saved, as fitted (the inverse of `of`)."""
        return Forecaster(
            units=_frame(self.units, UnitRow).set_index(UNIT).astype({"own_shape": bool}),
            curve_rows=_frame(self.curve_rows, CurveRow), pooled_exponent=self.pooled_exponent,
            drift_per_year=self.drift_per_year, spread_log=self.spread_log, rate_sd=self.rate_sd,
            spec_intercept=self.spec_intercept,
            spec_time=math.nan if self.spec_time is None else self.spec_time,
            spec_coefficients=None if self.spec_coefficients is None else np.array(self.spec_coefficients),
            naive_rows=_frame(self.naive_rows, NaiveRow), rounds=tuple(self.rounds),
            measured=tuple(MeasuredRatio(**row.model_dump()) for row in self.measured), form=self.form,
            law=LawChoice(**{**self.law.model_dump(), "errors": tuple(
                (name, value) for name, value in self.law.errors)}),
            benchmark=self.benchmark, precisions=tuple((family, value) for family, value in self.precisions))


class CalibrationRow(Record):
    """The calibration of one method, kind and trust for the next round (`Calibration`)."""

    method: Method
    """The method."""
    kind: str
    """The kind of forecast."""
    trusted: bool
    """For trusted forecasts or the others."""
    q_log: FiniteFloat | None
    """The interval's half-width at the published counts (log minutes); null when the pool is too small for the
    target coverage (an unbounded interval)."""
    q_source: str
    """Where its residuals came from."""
    kappa: FiniteFloat
    """The interval's growth per unit of log count outside the published counts."""
    kappa_source: str
    """Where kappa came from."""
    shift_log: FiniteFloat = 0.0
    """Added to the forecast (log minutes): for a family new to the benchmark, the median residual of earlier
    such forecasts; 0 otherwise."""


class EvidenceRow(Record):
    """The trust rule's evidence: a method's earlier backtest forecasts of one family or kind."""

    method: str
    """The method."""
    by: Literal["family", "kind"]
    """What `key` names."""
    key: str
    """The family or the kind."""
    inside: int = Field(ge=0)
    """Forecasts inside their interval."""
    n: int = Field(ge=0)
    """Forecasts."""
    median_ape_pct: FiniteFloat | None
    """Their median absolute percentage error (%)."""

    @model_validator(mode="after")
    def _inside_at_most_n(self) -> EvidenceRow:
        if self.inside > self.n:
            raise ValueError("inside cannot exceed n")
        return self


class PublishedRow(Record):
    """A published result in scope (PUBLISHED_COLUMNS)."""

    accelerator_family: str
    """The accelerator family."""
    form_factor: str
    """Its form factor."""
    round: str
    """The round."""
    submitter: str
    """The submitter."""
    system: str
    """The system's name."""
    accelerator_count: FiniteFloat = Field(ge=1)
    """Accelerators."""
    time_to_train_min: FiniteFloat = Field(gt=0)
    """The scored time to train (minutes)."""


class ModelsArtifact(Artifact):
    """reports/decide/<benchmark>.models.json."""

    format: Literal[3]
    """The file's format."""
    target_coverage: float = Field(gt=0, lt=1)
    """The share of published times the intervals should hold (params `decide.target_coverage`, a fraction)."""
    forecaster: ForecasterRecord | None
    """The forecast model; null when skipped."""
    calibration: list[CalibrationRow]
    """One per method, kind and trust (CALIBRATED); empty when skipped."""
    method: Method | None
    """The method `predict` answers with; null when skipped."""
    candidate_medians: dict[Method, FiniteFloat | None]
    """Each candidate's backtest median error on the results all of them forecast (%)."""
    comparison: ComparisonRecord | None
    """The benchmark's backtest summarised; null when skipped."""
    new_family_errors: AnswerErrors | None
    """Every benchmark's backtest answers for a family's first round in a benchmark (`NEW_FAMILY_KINDS`): the
    error `predict` states for such an answer; null when skipped."""
    evidence: list[EvidenceRow]
    """The trust rule's evidence."""
    published: list[PublishedRow]
    """The published results in scope."""

    KIND: ClassVar[str] = "decide"

    @model_validator(mode="after")
    def _consistent(self) -> ModelsArtifact:
        if (self.reason is None) != (self.status == "ok"):
            raise ValueError("reason is given exactly when skipped")
        if self.forecaster is None:
            if self.status == "ok":
                raise ValueError("forecaster is null although the status is ok")
            return self
        if self.method is None or self.comparison is None or self.new_family_errors is None:
            raise ValueError("method, comparison and new_family_errors are needed with a forecaster")
        if set(self.candidate_medians) != set(CANDIDATES):
            raise ValueError(f"candidate_medians must give each of {', '.join(CANDIDATES)} a number or null")
        if sorted((row.method, row.kind, row.trusted) for row in self.calibration) != CALIBRATED:
            raise ValueError(f"calibration must hold one row per method, kind and trust: {CALIBRATED}")
        return self

    def fitted(self) -> FittedBenchmark | NotAnalysed:
        """The FittedBenchmark saved (a NotAnalysed when there is none)."""
        if self.forecaster is None:
            return NotAnalysed(self.benchmark, str(self.reason))
        evidence = {by: {(row.method, row.key): (row.inside, row.n, row.median_ape_pct)
                         for row in self.evidence if row.by == by} for by in ("family", "kind")}
        return FittedBenchmark(
            benchmark=self.benchmark, not_analysed_reason=self.reason, target_coverage=self.target_coverage,
            forecaster=self.forecaster.forecaster(),
            calibrations={(row.method, row.kind, row.trusted): Calibration(
                math.inf if row.q_log is None else row.q_log, row.q_source, row.kappa, row.kappa_source,
                row.shift_log)
                for row in self.calibration},
            method=cast(str, self.method),
            candidate_medians={str(name): value for name, value in self.candidate_medians.items()},
            comparison=cast(ComparisonRecord, self.comparison),
            new_family_errors=cast(AnswerErrors, self.new_family_errors), family_evidence=evidence["family"],
            kind_evidence=evidence["kind"], published=_frame(self.published, PublishedRow))


def models_record(fitted: FittedBenchmark) -> ModelsArtifact:
    """`fitted` as models.json holds it."""
    return ModelsArtifact.model_validate({
        "format": FORMAT, "benchmark": fitted.benchmark,
        "status": "ok" if fitted.not_analysed_reason is None else "skipped", "reason": fitted.not_analysed_reason,
        "target_coverage": fitted.target_coverage, "forecaster": ForecasterRecord.of(fitted.forecaster),
        # JSON has no infinity: a pool too small for the level is stored as null.
        "calibration": [{"method": method, "kind": kind, "trusted": trusted,
                         "q_log": calibration.q if math.isfinite(calibration.q) else None,
                         "q_source": calibration.q_source, "kappa": calibration.kappa,
                         "kappa_source": calibration.kappa_source, "shift_log": calibration.shift}
                        for (method, kind, trusted), calibration in sorted(fitted.calibrations.items())],
        "method": fitted.method, "candidate_medians": dict(fitted.candidate_medians),
        "comparison": fitted.comparison, "new_family_errors": fitted.new_family_errors,
        "evidence": [{"method": method, "by": by, "key": key, "inside": inside, "n": n, "median_ape_pct": median}
                     for by, table in (("family", fitted.family_evidence), ("kind", fitted.kind_evidence))
                     for (method, key), (inside, n, median) in sorted(table.items())],
        "published": _records(fitted.published, PublishedRow)})


def not_analysed_record(benchmark: str, reason: str, target_coverage: float) -> ModelsArtifact:
    """models.json of a benchmark without a result in scope."""
    return ModelsArtifact(format=FORMAT, benchmark=benchmark, status="skipped", reason=reason,
                          target_coverage=target_coverage,
                          forecaster=None, calibration=[], method=None, candidate_medians={}, comparison=None,
                          new_family_errors=None, evidence=[], published=[])


def _records(frame: pd.DataFrame, row: type[Record]) -> list[dict[str, Any]]:
    columns = list(row.model_fields)
    return [{name: value.item() if isinstance(value, np.generic) else value for name, value in zip(columns, values)}
            for values in frame[columns].itertuples(index=False, name=None)]


def _frame(rows: list[Any], row: type[Record]) -> pd.DataFrame:
    """Saved rows as the frame the model keeps: text columns as Python strings."""
    columns = list(row.model_fields)
    frame = pd.DataFrame([item.model_dump() for item in rows], columns=columns)
    return frame.astype({name: object for name, field in row.model_fields.items() if field.annotation is str})


def saved_models(name: str) -> FittedBenchmark:
    """The saved models of the benchmark `name` spells (any case), among those the decide stage saved; a
    UsageError listing the benchmarks with models otherwise, or saying why the decide stage left the benchmark
    without one."""
    files = sorted(paths.DECIDE.glob("*.models.json"))
    saved = {path.name.removesuffix(".models.json"): read_models(path) for path in files}
    with_models = [benchmark for benchmark, models in saved.items() if isinstance(models, FittedBenchmark)]
    skipped = {models.benchmark.casefold(): models for models in saved.values() if isinstance(models, NotAnalysed)}
    if name.strip().casefold() in skipped:
        reason = skipped[name.strip().casefold()]
        raise UsageError(f"{reason.benchmark} was not analysed by the decide stage ({reason.reason}), so there is "
                         f"no model to forecast with; benchmarks with models: {', '.join(with_models) or 'none'}")
    if not saved:
        raise UsageError(f"no saved forecast models ({paths.models_json('BENCHMARK')}): run `dvc repro` first")
    return cast(FittedBenchmark, saved[canonical_name(name, with_models, "benchmark")])


def write_models(record: ModelsArtifact, path: Path) -> None:
    """Write `record` to `path` (JSON, atomically: `Artifact.write`)."""
    record.write(path)


def read_models(path: Path) -> FittedBenchmark | NotAnalysed:
    """The FittedBenchmark saved at `path` (a NotAnalysed when there is none); ContractError when the file is
    missing, not JSON or not of the declared structure (the message names what is wrong)."""
    return ModelsArtifact.read(path).fitted()
