"""Stage `ingest`: raw MLPerf Training rounds -> systems, runs, official scores and a quarantine list.

    python -m pipeline.stages.ingest SOURCE [SOURCE ...] --out DIR

Each SOURCE is a round as MLCommons publishes it, `training_results_vX.Y.tar.gz` or a folder (or fresh clone)
`training_results_vX.Y/`; the round is read from the name. DIR receives `systems.parquet`, `runs.parquet`,
`results.parquet` and `quarantine.csv` (columns documented in `pipeline.core.schemas`), and `tally.csv`, the file
accounting it prints per round (see `format_tally`): the code and documentation files of a clone, outside every
`<submitter>/systems/` and `<submitter>/results/`, are counted there as `repository_files` and not listed in the
quarantine. A run log is any
`result_*.txt` of a benchmark folder, as the official summarizer reads them, and its run id the text after
`result_`. A system description is JSON, or v0.6's `key: {json}` line form (`pipeline.mlperf.legacy_description`).

Scores follow `mlperf_logging.result_summarizer`: a run's time to train is run_stop - run_start in minutes; a
run counts when its run_stop status is `success`; a result is the olympic mean of its runs (drop the k fastest
converged and the k - f slowest, f the number of non-converged runs, k = 1, 4 for unet3d; no score when f > k)
times `scaling_factor` from the folder's `scaling.json`.
"""
from __future__ import annotations

import argparse
import codecs
import json
import math
import os
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import pandas as pd
from tqdm import tqdm

from pipeline.core import schemas
from pipeline.core.cli import ArgumentParser
from pipeline.core.errors import SourceError, cli
from pipeline.core.files import show_progress, write_csv, write_parquet
from pipeline.mlperf import compliance
from pipeline.mlperf.catalogue import identify
from pipeline.mlperf.legacy_description import LiteralRefused, is_line_form, read_legacy_entry, read_line_form
from pipeline.mlperf.logparse import parse_log
from pipeline.mlperf.sources import LOG_NAME, Kind, Member, classify, iter_members, round_of, run_order

KEY_COLUMNS = ("round", "submitter", "system")
RUN_ORDER = ["round", "submitter", "system", "benchmark", "run", "path"]
RESERVED_COLUMNS = (*KEY_COLUMNS, "path", "ingest_note")
# Raw description fields that would collide with our own columns keep their value under this prefix.
COLLIDING_FIELD_PREFIX = "desc_"
SYSTEM_QUARANTINED = "system_quarantined"
# Files of the repository around the inputs (a clone's benchmark code and docs: tens of thousands in a full clone),
# counted in the tally under this key and not listed one by one in the quarantine list.
REPOSITORY_FILE = "repository"
# Where the rules put a submitter's inputs: <submitter>/systems/ and <submitter>/results/.
INPUT_FOLDERS = ("systems", "results")
UNKNOWN_BENCHMARK = "unknown"
# The repair of malformed JSON steps over strings (an opening quote, then STRING_REST), so that a comment or a
# comma is removed only outside them: that is what makes the repair certain.
STRING_OR_SLASH = re.compile(r'["/]')
STRING_REST = re.compile(r'(?:[^"\\\n]|\\.)*"')
STRING_OR_TRAILING_COMMA = re.compile(r'("(?:[^"\\\n]|\\.)*")|,(?=\s*[}\]])')
# Published descriptions are under 3 KB; the limit keeps a hostile file from making the repair slow.
MAX_REPAIRED_BYTES = 1 << 20
LINE_FORM_NOTE = ("read from v0.6's `key: {json}` line form: Python-literal `entry` and `nodes` values parsed without "
                  "evaluating anything")
NESTED_NOTE = "not scored: the folder is nested below a benchmark folder, and the official summarizer ignores it"


@dataclass
class RoundTables:
    """Everything read from one source, before scoring."""

    round: str
    source: str
    systems: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    scaling: dict[tuple[str, str, str], float] = field(default_factory=dict)
    quarantine: list[dict[str, str]] = field(default_factory=list)
    files: Counter[str] = field(default_factory=Counter)
    paths_seen: set[str] = field(default_factory=set)
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
        self.quarantine.append({"round": self.round, "path": path, "reason": reason})


def _natural_runs(column: pd.Series) -> pd.Series:
    """Run ids in natural order (`result_2` before `result_10`); the other sort columns as they are."""
    return column.map(run_order) if column.name == "run" else column


@dataclass(frozen=True)
class IngestTables:
    systems: pd.DataFrame
    runs: pd.DataFrame
    results: pd.DataFrame
    quarantine: pd.DataFrame
    tally: pd.DataFrame


def read_source(source: Path, position: int = 0) -> RoundTables:
    """Read every file of one round; nothing is skipped without a quarantine row saying why."""
    round_ = round_of(source)
    tables = RoundTables(round=round_, source=str(source))
    total = source.stat().st_size if source.is_file() else None
    with tqdm(total=total, desc=round_, unit="B", unit_scale=True, position=position, leave=True,
              disable=not show_progress()) as bar:
        for member in iter_members(source, on_progress=bar.update):
            _read_member(member, tables)
    if not (tables.files[Kind.SYSTEM.value] or tables.files[Kind.LOG.value]):
        raise SourceError(
            f"{source} holds no system description (<submitter>/systems/<system>.json) and no result log "
            "(<submitter>/results/<system>/<benchmark>/result_<run>.txt): check that it is an MLPerf Training "
            "results round"
        )
    tables.finish()
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
        row = _run_row(tables.round, parts, member.path, member.data)
        tables.runs.append(row)
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
        factor = _scaling_factor(member.data)
        tables.scaling[parts["submitter"], parts["system"], parts["benchmark"]] = factor
        if math.isnan(factor):
            tables.quarantined(member.path, "scaling.json has no positive numeric scaling_factor: "
                               "the result is not scored")
    elif is_repository_file(member.path):
        tables.files[REPOSITORY_FILE] += 1
    else:
        tables.quarantined(member.path, _not_an_input(member.path))


def is_repository_file(path: str) -> bool:
    """A file outside every <submitter>/systems/ and <submitter>/results/ folder (code, docs, licences), unless
    its name says it could be a misplaced input (a result log) or a leftover of an interrupted copy (hidden):
    those stay in the quarantine list, one row each."""
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    outside = len(parts) < 3 or parts[1] not in INPUT_FOLDERS
    return outside and not name.startswith(".") and not LOG_NAME.fullmatch(name)


def _read_refused(member: Member, kind: Kind, parts: dict[str, str], tables: RoundTables) -> None:
    """A file that was not read still counts where its kind counts, so nothing vanishes from the tally."""
    reason = member.refused or "file was not read"
    if kind is Kind.SYSTEM:
        tables.files[SYSTEM_QUARANTINED] += 1
    elif kind is Kind.LOG:
        tables.runs.append(_run_row(tables.round, parts, member.path, None))
        reason += "; counted as a non-converged run"
    elif kind is Kind.SCALING:
        tables.scaling[parts["submitter"], parts["system"], parts["benchmark"]] = math.nan
        reason += "; the result is not scored"
    tables.quarantined(member.path, reason)


def _not_an_input(path: str) -> str:
    name = PurePosixPath(path).name
    if name.startswith("."):
        return "hidden or temporary file (such as one left by an interrupted copy): not an input, ignored"
    if LOG_NAME.fullmatch(name):
        return ("result log is not at <submitter>/results/<system>/<benchmark>/result_<run>.txt, where the rules "
                "put logs: not read")
    return "not a system description, result log or scaling.json: not an input, ignored"


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


def _run_row(round_: str, parts: dict[str, str], path: str, data: bytes | None) -> dict[str, Any]:
    facts = parse_log(data or b"", also_find=compliance.presence_keys())
    if data is None:
        facts.status = "unreadable"
    benchmark = parts.get("benchmark") or facts.submission_benchmark or UNKNOWN_BENCHMARK
    catalogued = identify(round_, benchmark)
    facts.reached_target = catalogued.reached(round_, facts.eval_values) if catalogued else None
    facts.compliance = "; ".join(compliance.violations(data or b"", facts, round_)) or None
    return {"round": round_, "submitter": parts["submitter"], "system": parts["system"],
            "benchmark": benchmark, "run": parts["run"], "path": path, **facts.record()}


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
        row[column] = _field_text(value)
    tables.systems.append(row)


def decode_description(data: bytes) -> tuple[object, str]:
    """Decode a description; repair it only where the repair is certain, and say what was done.

    A description is JSON, or v0.6's `key: {json}` line form (see `pipeline.mlperf.legacy_description`); a v0.6
    per-node listing is read into the fields later rounds use. Returns the fields (a dict when usable) and a
    note: the repairs and readings made, or why it is unusable. Nothing in the file is ever evaluated.
    """
    text, notes = _decode_text(data)
    if not text.strip():
        return None, "system description is empty: not used"
    if is_line_form(text):
        return _decode_line_form(text, notes)
    duplicates: set[str] = set()
    try:
        parsed = _load_json(text, duplicates)
    except RecursionError:
        return None, "system description nests too deeply to read: not used"
    except ValueError as error:
        unrepairable = (None, f"system description is not valid JSON ({error}), and removing trailing commas "
                              "and comments does not make it valid: not used")
        repair = repair_json(text) if len(data) <= MAX_REPAIRED_BYTES else None
        if repair is None:
            return unrepairable
        try:
            parsed = _load_json(repair[0], duplicates)
        except (ValueError, RecursionError):
            return unrepairable
        notes.append(f"repaired: {' and '.join(repair[1])} removed")
    if not isinstance(parsed, dict):
        return None, f"system description is a JSON {type(parsed).__name__}, not an object: not used"
    if duplicates:
        notes.append(f"{', '.join(sorted(duplicates))} given twice with different values: the last value used, "
                     "as JSON readers do")
    if "nodes" in parsed:
        return _with_node_listing(parsed, notes)
    return parsed, "; ".join(notes)


def _decode_line_form(text: str, notes: list[str]) -> tuple[object, str]:
    """A v0.6 `key: {json}` description, its Python-literal values read without evaluating anything."""
    try:
        fields, node_notes = read_line_form(text)
    except LiteralRefused as refused:
        return None, f"system description in v0.6's `key: {{json}}` line form cannot be read: {refused}: not used"
    return fields, "; ".join([*notes, LINE_FORM_NOTE, *node_notes])


def _with_node_listing(description: dict[str, Any], notes: list[str]) -> tuple[object, str]:
    """A v0.6 JSON description with its `nodes` listing: the fields it gives that the description lacks added."""
    try:
        listed, node_notes = read_legacy_entry(description)
    except LiteralRefused as refused:
        return None, f"system description's v0.6 `nodes` listing cannot be read: {refused}: not used"
    # v0.6 JSON writes some keys with spaces ("number of nodes"), which the features stage reads too.
    given = {name.replace(" ", "_") for name in description}
    added = {field: value for field, value in listed.items() if field not in given}
    if added:
        node_notes.insert(0, f"{', '.join(sorted(added))} read from its v0.6 `nodes` listing")
    return {**description, **added}, "; ".join([*notes, *node_notes])


def _decode_text(data: bytes) -> tuple[str, list[str]]:
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), ["read as UTF-16, as its byte-order mark says"]
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError:
        return data.decode("latin-1"), ["not UTF-8: read as Latin-1"]


def _load_json(text: str, duplicates: set[str]) -> object:
    """json.loads that collects the keys an object gives twice with different values."""
    def keep_last(pairs: list[tuple[str, object]]) -> dict[str, object]:
        seen: dict[str, object] = {}
        for key, value in pairs:
            if key in seen and seen[key] != value:
                duplicates.add(key)
            seen[key] = value
        return seen

    return json.loads(text, object_pairs_hook=keep_last)


def repair_json(text: str) -> tuple[str, list[str]] | None:
    """The text without comments and trailing commas outside strings, and which of the two it had; None when
    a string or comment is never closed, which no certain repair can fix. Time is linear in the text's length.
    """
    repairs = []
    without_comments = _remove_comments(text)
    if without_comments is None:
        return None
    if without_comments != text:
        repairs.append("comments")

    def drop_comma(match: re.Match[str]) -> str:
        return match[1] if match[1] is not None else ""

    repaired = STRING_OR_TRAILING_COMMA.sub(drop_comma, without_comments)
    if repaired != without_comments:
        repairs.insert(0, "trailing commas")
    return repaired, repairs


def _remove_comments(text: str) -> str | None:
    """`//` and `/* */` comments outside strings, each replaced by a space so that it cannot join two tokens."""
    kept, position = [], 0
    while (found := STRING_OR_SLASH.search(text, position)) is not None:
        start = found.start()
        kept.append(text[position:start])
        if text[start] == '"':
            rest = STRING_REST.match(text, start + 1)
            if rest is None:
                return None
            kept.append(text[start:rest.end()])
            position = rest.end()
        elif text.startswith("//", start):
            line_end = text.find("\n", start)
            kept.append(" ")
            position = len(text) if line_end < 0 else line_end
        elif text.startswith("/*", start):
            close = text.find("*/", start + 2)
            if close < 0:
                return None
            kept.append(" ")
            position = close + 2
        else:
            kept.append("/")
            position = start + 1
    kept.append(text[position:])
    return "".join(kept)


def _field_text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _scaling_factor(data: bytes) -> float:
    description, _ = decode_description(data)
    value = description.get("scaling_factor") if isinstance(description, dict) else None
    try:
        factor = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan
    return factor if math.isfinite(factor) and factor > 0 else math.nan


def olympic_score(times: Sequence[float], n_failed: int, k: int) -> float:
    """The official olympic mean of converged times (minutes); NaN when the result has no score."""
    if n_failed > k:
        return math.nan
    ordered = sorted(times)
    countable = ordered[k: len(ordered) - (k - n_failed)]
    return sum(countable) / len(countable) if countable else math.nan


def score_results(runs: pd.DataFrame, systems: pd.DataFrame,
                  scaling: dict[tuple[str, str, str, str], float]) -> pd.DataFrame:
    """One row per results folder with the official score and completeness."""
    divisions = _divisions(systems)
    # One pass over plain columns: slicing a frame per folder cost a second for a few thousand folders.
    n_runs: Counter[tuple[str, str, str, str]] = Counter()
    converged: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    logged_divisions: dict[tuple[str, str, str, str], Counter[str]] = defaultdict(Counter)
    folder_columns = [runs[column].tolist() for column in ("round", "submitter", "system", "benchmark")]
    for key, ok, minutes, division in zip(zip(*folder_columns), runs["converged"].tolist(),
                                          runs["time_to_train_min"].tolist(), runs["submission_division"].tolist()):
        n_runs[key] += 1
        if ok:
            converged[key].append(minutes)
        if isinstance(division, str):
            logged_divisions[key][division.lower()] += 1
    rows = []
    for key in sorted(set(n_runs) | set(scaling)):
        round_, submitter, system, folder = key
        benchmark = identify(round_, folder)
        k = benchmark.olympic_drop if benchmark else (4 if folder == "unet3d" else 1)
        times = converged.get(key, [])
        n_failed = n_runs[key] - len(times)
        factor = scaling.get(key, 1.0)
        nested = "/" in folder  # a folder below a benchmark folder, which the official summarizer never reads
        score = math.nan if nested else olympic_score(times, n_failed, k) * factor
        division = divisions.get((round_, submitter, system))
        if division is None and logged_divisions.get(key):
            counts = logged_divisions[key]
            division = min(counts, key=lambda name: (-counts[name], name))  # the most logged; ties: first by name
        rows.append({
            "round": round_, "submitter": submitter, "system": system, "benchmark": folder,
            "benchmark_id": benchmark.id if benchmark else None, "division": division,
            "n_runs": n_runs[key], "n_converged": len(times),
            "runs_required": benchmark.runs_required if benchmark else None,
            "complete": bool(benchmark and n_runs[key] >= benchmark.runs_required),
            "scaling_factor": factor, "time_to_train_min": score,
            "score_note": NESTED_NOTE if nested else _score_note(n_runs[key], len(times), n_failed, k, factor),
        })
    return pd.DataFrame(rows, columns=schemas.RESULT_COLUMNS)


def _score_note(n_runs: int, n_converged: int, n_failed: int, k: int, factor: float) -> str | None:
    if n_runs == 0:
        return "not scored: the folder holds no result logs (the published logs are absent)"
    if n_failed > k:
        return f"not scored: {n_failed} non-converged runs, more than the {k} the olympic rule allows"
    if math.isnan(factor):
        return "not scored: scaling.json is unreadable"
    if n_converged <= k:
        return f"not scored: {n_converged} converged runs leave none after dropping the fastest {k}"
    return None


def _divisions(systems: pd.DataFrame) -> dict[tuple[str, str, str], str]:
    divisions: dict[tuple[str, str, str], str] = {}
    for column in ("division", "divison"):  # the misspelling is in published descriptions
        if column not in systems:
            continue
        for row in systems[["round", "submitter", "system", column]].dropna().itertuples(index=False):
            divisions.setdefault((row[0], row[1], row[2]), str(row[3]).strip().lower())
    return divisions


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
        with ProcessPoolExecutor(max_workers=workers) as pool:
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
    results = score_results(runs, systems, scaling)
    quarantine = _frame([row for tables in per_round for row in tables.quarantine], schemas.QUARANTINE_COLUMNS)
    quarantine = pd.concat([quarantine, _orphans(systems, results), _result_problems(results)], ignore_index=True)
    quarantine = quarantine.sort_values(["round", "path", "reason"], kind="stable").reset_index(drop=True)
    tally = _tally(per_round, systems, runs, results, quarantine)
    return IngestTables(
        systems=schemas.validate_systems(systems), runs=schemas.validate_runs(runs),
        results=schemas.validate_results(results), quarantine=quarantine, tally=tally,
    )


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


def _orphans(systems: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Results folders with no system description, and descriptions with no results: each gets a row."""
    described = set(systems[["round", "submitter", "system"]].itertuples(index=False, name=None))
    scored = set(results[["round", "submitter", "system"]].itertuples(index=False, name=None))
    rows = [{"round": r, "path": f"{s}/systems/{y}.json",
             "reason": "results folder has no usable system description (missing or quarantined): scored, but "
                       "without hardware features"}
            for r, s, y in sorted(scored - described)]
    rows += [{"round": r, "path": f"{s}/results/{y}/",
              "reason": "system description has no results folder: nothing to score"}
             for r, s, y in sorted(described - scored)]
    return pd.DataFrame(rows, columns=schemas.QUARANTINE_COLUMNS)


def _result_problems(results: pd.DataFrame) -> pd.DataFrame:
    """A row for each results folder of an unknown benchmark or with fewer runs than the rules require."""
    rows = []
    for result in results.itertuples(index=False):
        path = f"{result.submitter}/results/{result.system}/{result.benchmark}/"
        if pd.isna(result.benchmark_id):
            reason = ("unknown benchmark: the folder name is not in the catalogue (pipeline/mlperf/catalogue.py) for "
                      "this round: scored, but not analysed")
        elif result.n_runs == 0:
            reason = "results folder holds no result logs (the published logs are absent): not scored"
        elif not result.complete:
            done = "scored from the runs present" if not math.isnan(result.time_to_train_min) else "not scored"
            reason = f"results folder holds fewer result logs than the rules require: {done}"
        else:
            continue
        rows.append({"round": result.round, "path": path, "reason": reason})
    return pd.DataFrame(rows, columns=schemas.QUARANTINE_COLUMNS)


def _tally(per_round: Sequence[RoundTables], systems: pd.DataFrame, runs: pd.DataFrame, results: pd.DataFrame,
           quarantine: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for tables in per_round:
        round_ = tables.round
        rows.append({
            "round": round_,
            "log_files": tables.files[Kind.LOG.value],
            "runs": int((runs["round"] == round_).sum()),
            "system_files": tables.files[Kind.SYSTEM.value],
            "systems": int((systems["round"] == round_).sum()),
            "systems_quarantined": tables.files[SYSTEM_QUARANTINED],
            "results": int((results["round"] == round_).sum()),
            "scored": int(results.loc[results["round"] == round_, "time_to_train_min"].notna().sum()),
            "other_files": tables.files[Kind.OTHER.value] - tables.files[REPOSITORY_FILE],
            "repository_files": tables.files[REPOSITORY_FILE],
            "quarantined": int((quarantine["round"] == round_).sum()),
        })
    return pd.DataFrame(rows)


def write_outputs(tables: IngestTables, out: Path) -> None:
    write_parquet(tables.systems, out / "systems.parquet")
    write_parquet(tables.runs, out / "runs.parquet")
    write_parquet(tables.results, out / "results.parquet")
    write_csv(tables.quarantine, out / "quarantine.csv")
    write_csv(tables.tally, out / "tally.csv")


def format_tally(tally: pd.DataFrame) -> str:
    lines = ["round   logs = runs   systems json = parsed + quarantined   results (scored)   other files   "
             "repository files (code/docs, not inputs)"]
    for row in tally.itertuples(index=False):
        ok = "ok" if row.log_files == row.runs and row.system_files == row.systems + row.systems_quarantined \
            else "MISMATCH"
        lines.append(f"{row.round:<7} {row.log_files:>5} = {row.runs:<5}  {row.system_files:>5} = {row.systems:>4} + "
                     f"{row.systems_quarantined:<4} {ok:>14}   {row.results:>6} ({row.scored:>5})   "
                     f"{row.other_files:>6}        {row.repository_files:>6}")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = ArgumentParser("pipeline.stages.ingest", __doc__)
    parser.add_argument("sources", nargs="+", type=Path, metavar="SOURCE",
                        help="training_results_vX.Y.tar.gz archive or training_results_vX.Y/ folder")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder for the output tables")
    parser.add_argument("--workers", type=int, default=None, help="processes to use (default: up to 2)")
    return parser.parse_args(argv)


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


@cli
def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    tables = ingest(expand_sources(args.sources), workers=args.workers)
    write_outputs(tables, args.out)
    print(format_tally(tables.tally))


if __name__ == "__main__":
    main()
