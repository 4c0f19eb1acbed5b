"""The decide stage's saved forecast models (reports/decide/<benchmark>.models.json): written once by
`pipeline.stages.decide`, read by `pipeline.commands.predict` and `pipeline.commands.recommend`, which never refit,
so their answers are the report's.

Structure (`ModelsRecord`; times in minutes, logs natural, years as fractional publication dates):

    {"format": 2, "benchmark": "resnet", "status": "ok" | "skipped", "reason": null | "why it was skipped",
     "interval": 0.9,
     "forecaster": {"rounds": ["v0.7", ...], "pooled_exponent", "drift_per_year", "spread_log",
                    "spec_intercept": null | float, "spec_time": null | float, "spec_coefficients": null | [float],
                    "units": [{"accelerator_family", "form_factor", "exponent", "own_shape", "anchor_time",
                               "n_rounds", "count_min", "count_max"}],
                    "curve_rows": [{"accelerator_family", "form_factor", "accelerator_count_published",
                                    "curve_log"}],
                    "naive_rows": [{"accelerator_family", "accelerator_count_published", "time_to_train_min"}]},
     "calibration": [{"method", "kind", "trusted", "q_log", "q_source", "kappa", "kappa_source"}],
     "method": "model" | "monotone naive" | "blend", "candidate_medians": {method: null | float},
     "comparison": {`pipeline.analysis.forecasting.summaries.ComparisonRecord` of the benchmark's backtest},
     "evidence": [{"method", "by": "family" | "kind", "key", "inside", "n", "median_ape_pct"}],
     "published": [{PUBLISHED_COLUMNS}]}

A benchmark without a single result in scope has nothing to forecast from: its file has status "skipped", its
reason, and null forecaster, method and comparison (empty elsewhere); `read_models` gives a `NotAnalysed` for it.
`read_models` raises ContractError naming the first thing that is wrong.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, cast

import numpy as np
import pandas as pd
from pydantic import ValidationError

from pipeline.analysis.forecasting.answers import PUBLISHED_COLUMNS, FittedBenchmark
from pipeline.analysis.forecasting.intervals import Calibration
from pipeline.analysis.forecasting.model import BLEND, CANDIDATES, KINDS, MODEL, NAIVE, UNIT, Forecaster
from pipeline.analysis.forecasting.summaries import ComparisonRecord
from pipeline.core import paths
from pipeline.core.artifacts import problems
from pipeline.core.cli import canonical_name
from pipeline.core.errors import ContractError, UsageError
from pipeline.core.files import write_json

FORMAT = 2
STATUSES = ("ok", "skipped")
UNIT_COLUMNS = [*UNIT, "exponent", "own_shape", "anchor_time", "n_rounds", "count_min", "count_max"]
CURVE_COLUMNS = [*UNIT, "accelerator_count_published", "curve_log"]
NAIVE_COLUMNS = ["accelerator_family", "accelerator_count_published", "time_to_train_min"]
FORECASTER_SCALARS = ["pooled_exponent", "drift_per_year", "spread_log"]
CALIBRATION_COLUMNS = ["method", "kind", "trusted", "q_log", "q_source", "kappa", "kappa_source"]
EVIDENCE_COLUMNS = ["method", "by", "key", "inside", "n", "median_ape_pct"]


@dataclass(frozen=True)
class NotAnalysed:
    """A benchmark the decide stage skipped without a result to forecast from."""

    benchmark: str
    reason: str


class ModelsRecord(TypedDict):
    format: int
    benchmark: str
    status: str
    reason: str | None
    interval: float
    forecaster: dict[str, Any] | None
    calibration: list[dict[str, Any]]
    method: str | None
    candidate_medians: dict[str, float | None]
    comparison: dict[str, Any] | None
    evidence: list[dict[str, Any]]
    published: list[dict[str, Any]]


def models_record(fitted: FittedBenchmark) -> ModelsRecord:
    """`fitted` as models.json holds it."""
    forecaster = fitted.forecaster
    return {
        "format": FORMAT, "benchmark": fitted.benchmark,
        "status": "ok" if fitted.not_analysed_reason is None else "skipped", "reason": fitted.not_analysed_reason,
        "interval": fitted.interval,
        "forecaster": {
            "rounds": list(forecaster.rounds), "pooled_exponent": forecaster.pooled_exponent,
            "drift_per_year": forecaster.drift_per_year, "spread_log": forecaster.spread_log,
            "spec_intercept": forecaster.spec_intercept,
            "spec_time": None if math.isnan(forecaster.spec_time) else forecaster.spec_time,
            "spec_coefficients": None if forecaster.spec_coefficients is None
            else [float(value) for value in forecaster.spec_coefficients],
            "units": _records(forecaster.units.reset_index(), UNIT_COLUMNS),
            "curve_rows": _records(forecaster.curve_rows, CURVE_COLUMNS),
            "naive_rows": _records(forecaster.naive_rows, NAIVE_COLUMNS)},
        # JSON has no infinity: a pool too small for the level is stored as null.
        "calibration": [{"method": method, "kind": kind, "trusted": trusted,
                         "q_log": calibration.q if math.isfinite(calibration.q) else None,
                         "q_source": calibration.q_source, "kappa": calibration.kappa,
                         "kappa_source": calibration.kappa_source}
                        for (method, kind, trusted), calibration in sorted(fitted.calibrations.items())],
        "method": fitted.method, "candidate_medians": dict(fitted.candidate_medians),
        "comparison": fitted.comparison.model_dump(),
        "evidence": [{"method": method, "by": by, "key": key, "inside": inside, "n": n, "median_ape_pct": median}
                     for by, table in (("family", fitted.family_evidence), ("kind", fitted.kind_evidence))
                     for (method, key), (inside, n, median) in sorted(table.items())],
        "published": _records(fitted.published, PUBLISHED_COLUMNS),
    }


def _records(frame: pd.DataFrame, columns: list[str]) -> list[dict[str, Any]]:
    return [{name: _plain(value) for name, value in zip(columns, row)}
            for row in frame[columns].itertuples(index=False, name=None)]


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def not_analysed_record(benchmark: str, reason: str, interval: float) -> ModelsRecord:
    """models.json of a benchmark without a result in scope."""
    return {"format": FORMAT, "benchmark": benchmark, "status": "skipped", "reason": reason, "interval": interval,
            "forecaster": None, "calibration": [], "method": None, "candidate_medians": {}, "comparison": None,
            "evidence": [], "published": []}


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


def write_models(record: ModelsRecord, path: Path) -> None:
    write_json(record, path)


def read_models(path: Path) -> FittedBenchmark | NotAnalysed:
    """The FittedBenchmark saved at `path` (a NotAnalysed when there is none); ContractError when the file is
    missing, not JSON or not of the declared structure (the message names what is wrong)."""
    if not path.is_file():
        raise ContractError(f"{path} not found: run `dvc repro decide` first")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ContractError(f"{path} is not valid JSON ({error}): run `dvc repro -f decide` to rewrite it") from None
    try:
        return fitted_from_record(record)
    except ContractError as error:
        raise ContractError(f"{path}: {error}; run `dvc repro -f decide` to rewrite it") from None


def fitted_from_record(record: Any) -> FittedBenchmark | NotAnalysed:
    """A ModelsRecord (as parsed from JSON) back into a FittedBenchmark, or a NotAnalysed; validated."""
    _require(isinstance(record, dict), "the top level must be an object")
    _keys(record, ModelsRecord.__annotations__, "the top level")
    _require(record["format"] == FORMAT, f"format {record['format']!r} is not {FORMAT}")
    _require(isinstance(record["benchmark"], str) and bool(record["benchmark"]), "benchmark must be a name")
    _require(record["status"] in STATUSES, f"status must be one of {', '.join(STATUSES)}")
    _require((record["reason"] is None) == (record["status"] == "ok"), "reason is given exactly when skipped")
    interval = _number(record["interval"], "interval")
    _require(0 < interval < 1, "interval must lie between 0 and 1")
    if record["forecaster"] is None:
        _require(record["status"] == "skipped", "forecaster is null although the status is ok")
        return NotAnalysed(record["benchmark"], record["reason"])
    forecaster = _forecaster(record["forecaster"])
    comparison = _comparison(record["comparison"])
    _require(record["method"] in CANDIDATES, f"method must be one of {', '.join(CANDIDATES)}")
    medians = record["candidate_medians"]
    _require(isinstance(medians, dict) and set(medians) == set(CANDIDATES)
             and all(value is None or isinstance(value, (int, float)) for value in medians.values()),
             f"candidate_medians must give each of {', '.join(CANDIDATES)} a number or null")
    return FittedBenchmark(
        benchmark=record["benchmark"], not_analysed_reason=record["reason"], interval=interval,
        forecaster=forecaster, calibrations=_calibration(record["calibration"]), method=record["method"],
        candidate_medians=dict(medians), comparison=comparison,
        family_evidence=_evidence(record["evidence"], "family"), kind_evidence=_evidence(record["evidence"], "kind"),
        published=_frame(record["published"], PUBLISHED_COLUMNS, "published"))


def _forecaster(value: Any) -> Forecaster:
    _keys(value, ["rounds", *FORECASTER_SCALARS, "spec_intercept", "spec_time", "spec_coefficients", "units",
                  "curve_rows", "naive_rows"], "forecaster")
    rounds = value["rounds"]
    _require(isinstance(rounds, list) and bool(rounds) and all(isinstance(name, str) for name in rounds),
             "forecaster.rounds must be a non-empty list of round names")
    coefficients = value["spec_coefficients"]
    if coefficients is not None:
        _require(isinstance(coefficients, list), "forecaster.spec_coefficients must be a list or null")
        _require(value["spec_intercept"] is not None, "forecaster.spec_intercept is needed with coefficients")
    units = _frame(value["units"], UNIT_COLUMNS, "forecaster.units").set_index(UNIT)
    curve_rows = _frame(value["curve_rows"], CURVE_COLUMNS, "forecaster.curve_rows")
    known = set(units.index)
    _require(all(key in known for key in zip(curve_rows["accelerator_family"], curve_rows["form_factor"])),
             "forecaster.curve_rows names a unit forecaster.units lacks")
    return Forecaster(
        units=units.astype({"own_shape": bool}), curve_rows=curve_rows,
        pooled_exponent=_number(value["pooled_exponent"], "forecaster.pooled_exponent"),
        drift_per_year=_number(value["drift_per_year"], "forecaster.drift_per_year"),
        spread_log=_number(value["spread_log"], "forecaster.spread_log"),
        spec_intercept=None if value["spec_intercept"] is None else _number(value["spec_intercept"],
                                                                           "forecaster.spec_intercept"),
        spec_time=math.nan if value["spec_time"] is None else _number(value["spec_time"], "forecaster.spec_time"),
        spec_coefficients=None if coefficients is None else np.array(
            [_number(item, "forecaster.spec_coefficients") for item in coefficients]),
        naive_rows=_frame(value["naive_rows"], NAIVE_COLUMNS, "forecaster.naive_rows"),
        rounds=tuple(rounds))


def _calibration(rows: Any) -> dict[tuple[str, str, bool], Calibration]:
    table = _frame(rows, CALIBRATION_COLUMNS, "calibration")
    expected = {(method, kind, trusted) for method in CANDIDATES
                for kind in ((*KINDS,) if method in (MODEL, BLEND) else (NAIVE,)) for trusted in (True, False)}
    found = set(zip(table["method"], table["kind"], table["trusted"]))
    _require(found == expected, f"calibration must hold one row per method, kind and trust: {sorted(expected)}")
    return {(str(method), str(kind), bool(trusted)): Calibration(math.inf if pd.isna(q) else float(q), str(q_source),
                                                                 _number(kappa, "calibration.kappa"),
                                                                 str(kappa_source))
            for method, kind, trusted, q, q_source, kappa, kappa_source in table[CALIBRATION_COLUMNS].itertuples(
                index=False, name=None)}


def _evidence(rows: Any, by: str) -> dict[tuple[str, str], tuple[int, int, float | None]]:
    table = _frame(rows, EVIDENCE_COLUMNS, "evidence")
    table = table[table["by"] == by]
    _require(bool((table["inside"] <= table["n"]).all()), "evidence: inside cannot exceed n")
    return {(str(method), str(key)): (int(inside), int(n), None if pd.isna(median) else float(median))
            for method, key, inside, n, median in table[["method", "key", "inside", "n", "median_ape_pct"]]
            .itertuples(index=False, name=None)}


def _frame(rows: Any, columns: list[str], where: str) -> pd.DataFrame:
    _require(isinstance(rows, list) and all(isinstance(row, dict) for row in rows), f"{where} must be a list of "
             f"objects")
    for index, row in enumerate(rows):
        _keys(row, columns, f"{where}[{index}]")
    return pd.DataFrame(rows, columns=columns).astype(
        {name: object for name in columns if all(isinstance(row[name], str) for row in rows)})


def _comparison(value: Any) -> ComparisonRecord:
    try:
        return ComparisonRecord.model_validate(value)
    except ValidationError as error:
        raise ContractError(f"comparison: {problems(error)}") from None


def _keys(value: Any, expected: Any, where: str) -> None:
    _require(isinstance(value, dict), f"{where} must be an object")
    missing = [key for key in expected if key not in value]
    _require(not missing, f"{where} lacks {', '.join(missing)}")


def _number(value: Any, where: str) -> float:
    _require(isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value),
             f"{where} must be a finite number, got {value!r}")
    return float(value)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ContractError(message)
