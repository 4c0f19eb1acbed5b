"""Reading MLPerf Training rounds: every file of a round read, scored and accounted for.

A round is `training_results_vX.Y.tar.gz` or a folder (or fresh clone) `training_results_vX.Y/`; the round is read
from the name. A run log is any `result_*.txt` of a benchmark folder, as the official summarizer reads them, and its
run id the text after `result_`; its power logs, where it has any, are `power/result_<run>/node_*.txt` and `sw_*.txt`
beside it (`pipeline.mlperf.logs.power`). A launch configuration is any `config*.sh` of an implementation folder
(`<submitter>/benchmarks/<benchmark>/implementations/<impl>/`): with the logs, it gives each result its numeric
precision (`pipeline.mlperf.logs.precision`). `ingest` returns the systems, runs, results
(`pipeline.mlperf.logs.scoring`), quarantine and tally (`pipeline.mlperf.accounting`) tables, columns documented in
`pipeline.core.schemas`.
"""
from __future__ import annotations

import gc
import math
import os
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from pipeline.core import schemas
from pipeline.core.errors import SourceError
from pipeline.core.files import byte_progress, write_csv, write_json, write_parquet
from pipeline.mlperf.accounting import (
    REPOSITORY_FILE,
    SYSTEM_QUARANTINED,
    is_repository_file,
    not_an_input,
    orphans,
    result_problems,
    tally,
)
from pipeline.mlperf.catalogue import identify
from pipeline.mlperf.decoding import decode_description, field_text
from pipeline.mlperf.logs import compliance, precision
from pipeline.mlperf.logs.logparse import RunFacts, parse_log
from pipeline.mlperf.logs.power import PowerLog, read_power_log, run_power
from pipeline.mlperf.logs.scoring import scaling_factor, score_results
from pipeline.mlperf.sources import Kind, Member, classify, iter_members, round_of, run_order
from pipeline.mlperf.summaries import SHIPPED_COLUMNS, agreement, read_summary

KEY_COLUMNS = ("round", "submitter", "system")
RUN_ORDER = ["round", "submitter", "system", "benchmark", "run", "path"]
RESERVED_COLUMNS = (*KEY_COLUMNS, "path", "ingest_note")

# Raw description fields that would collide with our own columns keep their value under this prefix.
COLLIDING_FIELD_PREFIX = "desc_"

UNKNOWN_BENCHMARK = "unknown"

@dataclass
class RoundTables:
    """Everything read from one source, before scoring."""

    round: str
    source: str
    systems: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    scaling: dict[tuple[str, str, str], float] = field(default_factory=dict)
    power: list[PowerLog] = field(default_factory=list)
    quarantine: list[dict[str, str]] = field(default_factory=list)
    files: Counter[str] = field(default_factory=Counter)
    paths_seen: set[str] = field(default_factory=set)
    shipped: list[dict[str, Any]] = field(default_factory=list)  # the round's own summary scores, if it ships any
    # What each results folder's logs say of its precision, and the launch configurations' text by (submitter,
    # benchmark folder) and implementation folder; resolved into `precision` once the round is read.
    run_precision: dict[tuple[str, str, str], list[precision.RunPrecision]] = field(default_factory=dict)
    configs: dict[tuple[str, str], dict[str, dict[str, str]]] = field(default_factory=dict)
    precision: list[dict[str, Any]] = field(default_factory=list)
    # The runs as a table, built by the process that read the round (in parallel with the others), so that
    # a columnar frame rather than thousands of dicts travels back to the main process.
    run_frame: pd.DataFrame | None = None

    def finish(self) -> pd.DataFrame:
        """The runs as a table; the rows are dropped once it is built."""
        if self.run_frame is None:
            frame = _frame(self.runs, schemas.RUN_COLUMNS)[schemas.RUN_COLUMNS]
            self.run_frame = frame.sort_values(RUN_ORDER, kind="stable", key=_natural_runs).reset_index(drop=True)
            self.runs = []
        return self.run_frame

    def quarantined(self, path: str, reason: str) -> None:
        """Record that the file at `path` of this round is not read, and why (`reason`, one line); returns None."""
        self.quarantine.append({"round": self.round, "path": path, "reason": reason})


def _natural_runs(column: pd.Series) -> pd.Series:
    """Run ids in natural order (`result_2` before `result_10`); the other sort columns as they are."""
    return column.map(run_order) if column.name == "run" else column


@dataclass(frozen=True)
class IngestTables:
    """What the ingest stage writes, as frames: one row per system, per run, per scored result, per file quarantined
    and per round's file tally (columns in pipeline.core.schemas), and the check of our scores against the shipped
    summaries."""
    systems: pd.DataFrame
    runs: pd.DataFrame
    results: pd.DataFrame
    quarantine: pd.DataFrame
    tally: pd.DataFrame
    # Our scores against the rounds' shipped summaries (pipeline.mlperf.summaries.agreement); empty without any.
    summary_check: list[dict[str, Any]] = field(default_factory=list)

    def write(self, out: Path) -> None:
        """Write the tables into the folder `out`, each atomically: systems.parquet, runs.parquet,
        results.parquet, quarantine.csv, tally.csv and summary_check.json (the ingest stage's outputs)."""
        write_parquet(self.systems, out / "systems.parquet")
        write_parquet(self.runs, out / "runs.parquet")
        write_parquet(self.results, out / "results.parquet")
        write_csv(self.quarantine, out / "quarantine.csv")
        write_csv(self.tally, out / "tally.csv")
        write_json(self.summary_check, out / "summary_check.json")


def read_source(source: Path, position: int = 0) -> RoundTables:
    """Read every file of one round; nothing is skipped without a quarantine row saying why."""
    round_ = round_of(source)
    tables = RoundTables(round=round_, source=str(source))
    total = source.stat().st_size if source.is_file() else None
    with byte_progress(total, round_, position) as on_progress:
        for member in iter_members(source, on_progress=on_progress):
            _read_member(member, tables)
    if not (tables.files[Kind.SYSTEM.value] or tables.files[Kind.LOG.value]):
        raise SourceError(
            f"{source} holds no system description (<submitter>/systems/<system>.json) and no result log "
            "(<submitter>/results/<system>/<benchmark>/result_<run>.txt): check that it is an MLPerf Training "
            "results round"
        )
    tables.finish()
    tables.precision = _resolve_precision(tables)
    return tables


def _read_member(member: Member, tables: RoundTables) -> None:
    if member.path in tables.paths_seen:
        # Counted with the other files that are no input, so that every file seen stays accounted for.
        tables.files[Kind.OTHER.value] += 1
        tables.quarantined(member.path, "archive holds this path more than once: only its first copy is read")
        return
    tables.paths_seen.add(member.path)
    kind, parts = classify(member.path)
    tables.files[kind.value] += 1
    if member.data is None:
        _read_refused(member, kind, parts, tables)
    elif kind is Kind.LOG:
        row, facts = _run_row(tables.round, parts, member.path, member.data)
        tables.runs.append(row)
        folder = (row["submitter"], row["system"], row["benchmark"])
        tables.run_precision.setdefault(folder, []).append(
            precision.read_run(member.data, facts.keys_found, records_only=facts.records_only))
        if "benchmark" not in parts:
            tables.quarantined(member.path, "result log sits in the system folder, not in a benchmark folder: "
                               f"benchmark taken from its submission_benchmark line ({row['benchmark']})")
        elif "/" in parts["benchmark"]:
            tables.quarantined(member.path, "result log is nested below a benchmark folder: counted as a run of "
                               f"results folder {parts['benchmark']}, which is not scored and not analysed (the "
                               "official summarizer ignores it too)")
        problem = _log_problem(row, member.data)
        if problem is not None:
            tables.quarantined(member.path, problem)
    elif kind is Kind.SYSTEM:
        _read_system(member, parts, tables)
    elif kind is Kind.SCALING:
        factor = scaling_factor(member.data)
        tables.scaling[parts["submitter"], parts["system"], parts["benchmark"]] = factor
        if math.isnan(factor):
            tables.quarantined(member.path, "scaling.json has no positive numeric scaling_factor: "
                               "the result is not scored")
    elif kind is Kind.POWER:
        tables.power.append(read_power_log(member.path, parts, member.data, tables.round))
    elif kind is Kind.CONFIG:
        implementations = tables.configs.setdefault((parts["submitter"], parts["benchmark"]), {})
        implementations.setdefault(parts["implementation"], {})[parts["name"]] = member.data.decode("utf-8", "replace")
    elif is_repository_file(member.path):
        tables.files[REPOSITORY_FILE] += 1
        tables.shipped.extend(read_summary(tables.round, member.path, member.data))
    else:
        tables.quarantined(member.path, not_an_input(member.path))


def _read_refused(member: Member, kind: Kind, parts: dict[str, str], tables: RoundTables) -> None:
    """A file that was not read still counts where its kind counts, so nothing vanishes from the tally."""
    reason = member.refused or "file was not read"
    if kind is Kind.SYSTEM:
        tables.files[SYSTEM_QUARANTINED] += 1
    elif kind is Kind.LOG:
        tables.runs.append(_run_row(tables.round, parts, member.path, None)[0])
        reason += "; counted as a non-converged run"
    elif kind is Kind.SCALING:
        tables.scaling[parts["submitter"], parts["system"], parts["benchmark"]] = math.nan
        reason += "; the result is not scored"
    elif kind is Kind.POWER:
        # Read as an empty log, so that its run gets no energy from the other logs alone.
        tables.power.append(read_power_log(member.path, parts, b"", tables.round))
        reason += "; its run and result get no energy"
    tables.quarantined(member.path, reason)


def _log_problem(row: dict[str, Any], data: bytes) -> str | None:
    """What is wrong with a log that was read, or None; an aborted or failed run is a result, not a defect."""
    if not data:
        return "result log is empty (0 bytes): counted as a non-converged run"
    if row["log_format"] is None:
        return "result log has no MLPerf lines (:::MLLOG or :::MLL): counted as a non-converged run"
    damaged = f"{row['bad_lines']} damaged MLPerf line(s) (not valid JSON, or cut off)" if row["bad_lines"] else ""
    if row["status"] in ("no run_start", "no run_stop"):
        also = f" and {damaged}" if damaged else ""
        return f"result log has {row['status']} line{also}: counted as a non-converged run"
    broken = (f"breaks the official checker's logging rules ({row['compliance']}): counted as a non-converged "
              "run, as the official summarizer counts it") if row["compliance"] else ""
    if damaged:
        also = f"; it also {broken}" if broken else ""
        return f"result log has {damaged}: those lines were skipped, the rest of the log was used{also}"
    return f"result log {broken}" if broken else None


def _run_row(round_: str, parts: dict[str, str], path: str, data: bytes | None) -> tuple[dict[str, Any], RunFacts]:
    """A run's row of runs.parquet, and what its log says (which of the keys that the compliance rules and the
    precision's MLLOG records need it holds among them)."""
    facts = parse_log(data or b"", also_find=noted_keys())
    if data is None:
        facts.status = "unreadable"
    benchmark = parts.get("benchmark") or facts.submission_benchmark or UNKNOWN_BENCHMARK
    catalogued = identify(round_, benchmark)
    facts.reached_target = catalogued.reached(round_, facts.eval_values) if catalogued else None
    facts.compliance = "; ".join(compliance.violations(data or b"", facts, round_)) or None
    return {"round": round_, "submitter": parts["submitter"], "system": parts["system"],
            "benchmark": benchmark, "run": parts["run"], "path": path, **facts.record()}, facts


@cache
def noted_keys() -> frozenset[str]:
    """The MLLOG keys whose presence the log parser notes: the compliance checker's, and the precision's."""
    return compliance.presence_keys() | precision.MLLOG_KEYS


def _read_system(member: Member, parts: dict[str, str], tables: RoundTables) -> None:
    assert member.data is not None
    description, note = decode_description(member.data)
    if not isinstance(description, dict):
        tables.quarantined(member.path, note)
        tables.files[SYSTEM_QUARANTINED] += 1
        return
    row: dict[str, Any] = {"round": tables.round, "submitter": parts["submitter"], "system": parts["system"],
                           "path": member.path, "ingest_note": note or None}
    for name, value in description.items():
        column = name
        while column in RESERVED_COLUMNS or (column != name and column in description):
            column = f"{COLLIDING_FIELD_PREFIX}{column}"
        row[column] = field_text(value)
    tables.systems.append(row)


def _resolve_precision(tables: RoundTables) -> list[dict[str, Any]]:
    """Each results folder's precision and its source (`pipeline.mlperf.logs.precision.resolve`), from its logs, the
    round's launch configurations and its system description's node and accelerator counts."""
    described = {(row["submitter"], row["system"]): row for row in tables.systems}
    launch: dict[tuple[str, str], list[precision.LaunchConfig]] = {}
    rows = []
    for (submitter, system, benchmark), runs in sorted(tables.run_precision.items()):
        if (submitter, benchmark) not in launch:
            launch[submitter, benchmark] = precision.launch_configs(tables.configs.get((submitter, benchmark), {}),
                                                                    benchmark)
        description = described.get((submitter, system), {})
        resolved = precision.resolve(
            runs, launch[submitter, benchmark], system,
            nodes=precision.leading_integer(description.get("number_of_nodes")),
            per_node=precision.leading_integer(description.get("accelerators_per_node")),
            accelerator=str(description.get("accelerator_model_name") or ""))
        layout = precision.resolve_layout(
            runs, launch[submitter, benchmark], system,
            nodes=precision.leading_integer(description.get("number_of_nodes")),
            per_node=precision.leading_integer(description.get("accelerators_per_node")),
            accelerator=str(description.get("accelerator_model_name") or ""))
        sizes = dict(zip(precision.LAYOUT_FIELDS, layout.precision or (None,) * len(precision.LAYOUT_FIELDS)))
        rows.append({"round": tables.round, "submitter": submitter, "system": system, "benchmark": benchmark,
                     "precision": resolved.precision, "precision_source": resolved.source, **sizes,
                     "parallel_source": layout.source})
    return rows


def ingest(sources: Sequence[Path], workers: int | None = None) -> IngestTables:
    """Read all sources (in parallel, one process per source), then score and account for every file."""
    sources = [Path(source) for source in sources]
    rounds = [round_of(source) for source in sources]
    repeated = sorted({round_ for round_ in rounds if rounds.count(round_) > 1})
    if repeated:
        raise SourceError(f"round(s) {', '.join(repeated)} given more than once: pass one source per round")
    # Largest first, so the two workers finish together.
    order = sorted(range(len(sources)), key=lambda i: -_size(sources[i]))
    workers = workers or min(os.cpu_count() or 1, len(sources), 2)
    if workers > 1 and len(sources) > 1:
        # Each worker freezes what it inherits (the imports) out of garbage collection, which would otherwise look
        # at all of it in each full collection.
        with ProcessPoolExecutor(max_workers=workers, initializer=gc.freeze) as pool:
            futures = {i: pool.submit(read_source, sources[i], slot % workers) for slot, i in enumerate(order)}
            per_round = [futures[i].result() for i in range(len(sources))]
    else:
        per_round = [read_source(source) for source in sources]
    return assemble(per_round)


def _size(source: Path) -> int:
    """Roughly how many bytes a source holds, to start the largest first; 0 where it cannot be told (the
    reading reports why)."""
    try:
        if source.is_file():
            return source.stat().st_size
        return sum(path.lstat().st_size for path in source.rglob("result_*.txt"))
    except OSError:
        return 0


def assemble(per_round: Sequence[RoundTables]) -> IngestTables:
    """Score and account; every table comes out in key order, whatever order the files were read in."""
    per_round = sorted(per_round, key=lambda tables: tables.round)
    # Sorted before the frame is built, so that the raw fields' column order does not follow file order.
    system_rows = sorted((row for tables in per_round for row in tables.systems),
                         key=lambda row: (row["round"], row["submitter"], row["system"]))
    systems = _note_shared_names(_frame(system_rows, schemas.SYSTEM_KEY_COLUMNS))
    # Each round's table is in RUN_ORDER already, and round leads it.
    runs = pd.concat([tables.finish() for tables in per_round], ignore_index=True)
    scaling = {(tables.round, *key): factor for tables in per_round for key, factor in tables.scaling.items()}
    measured = run_power(runs, [log for tables in per_round for log in tables.power])
    results = _with_precision(score_results(runs, systems, scaling, measured.runs),
                              [row for tables in per_round for row in tables.precision])
    quarantine = _frame([row for tables in per_round for row in tables.quarantine], schemas.QUARANTINE_COLUMNS)
    quarantine = pd.concat([quarantine, measured.quarantine, orphans(systems, results), result_problems(results)],
                           ignore_index=True)
    quarantine = quarantine.sort_values(["round", "path", "reason"], kind="stable").reset_index(drop=True)
    counted = tally({tables.round: tables.files for tables in per_round}, systems, runs, results, quarantine)
    shipped = _frame([row for tables in per_round for row in tables.shipped], SHIPPED_COLUMNS)
    return IngestTables(
        systems=schemas.validate_systems(systems), runs=schemas.validate_runs(runs),
        results=schemas.validate_results(results), quarantine=quarantine, tally=counted,
        summary_check=agreement(results, shipped),
    )


def _with_precision(results: pd.DataFrame, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The results with each folder's precision, parallel layout and their sources (empty where unknown)."""
    key = ["round", "submitter", "system", "benchmark"]
    texts = ["precision", "precision_source", "parallel_source"]
    columns = [*texts, *precision.LAYOUT_FIELDS]
    found = _frame(rows, [*key, *columns])[[*key, *columns]]
    merged = results.drop(columns=columns).merge(found, on=key, how="left", validate="one_to_one")
    for column in texts:
        merged[column] = merged[column].astype(object).where(merged[column].notna(), None)
    for column in precision.LAYOUT_FIELDS:
        merged[column] = pd.to_numeric(merged[column]).astype("Int64")
    return merged[schemas.RESULT_COLUMNS]


def _frame(rows: list[dict[str, Any]], columns: Sequence[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    for column in columns:
        if column not in frame:
            frame[column] = pd.Series(dtype="object")
    return frame


def _note_shared_names(systems: pd.DataFrame) -> pd.DataFrame:
    """Note on each description whose system name another submitter of the round also uses (both are kept:
    the key includes the submitter)."""
    if systems.empty:
        return systems
    submitters: dict[tuple[str, str], set[str]] = defaultdict(set)
    for round_, submitter, system in zip(systems["round"], systems["submitter"], systems["system"]):
        submitters[round_, system].add(submitter)
    notes = []
    for round_, submitter, system, note in zip(systems["round"], systems["submitter"], systems["system"],
                                               systems["ingest_note"]):
        others = sorted(submitters[round_, system] - {submitter})
        shared = f"system name also used by {', '.join(others)}: kept apart by submitter" if others else None
        notes.append("; ".join(text for text in (note, shared) if isinstance(text, str) and text) or None)
    return systems.assign(ingest_note=notes)


def expand_sources(paths: Sequence[Path]) -> list[Path]:
    """A folder that holds rounds (such as data/raw) stands for the rounds in it."""
    expanded: list[Path] = []
    for path in paths:
        if path.is_dir() and not re.fullmatch(r"training_results_v\d+\.\d+", path.name):
            inner = sorted(child for child in path.iterdir() if child.name.startswith("training_results_"))
            if not inner:
                raise SourceError(f"{path} holds no training_results_vX.Y archive or folder")
            expanded.extend(inner)
        else:
            expanded.append(path)
    return expanded

