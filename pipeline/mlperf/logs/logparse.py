"""Read one MLPerf result log (`result_N.txt`) into the facts the analysis needs, fast.

Both published formats are read:
  `:::MLLOG {"time_ms": 1714567005981, "key": "run_start", "value": ..., "metadata": {...}}`  (v0.7 on, ms)
  `:::MLL 1560881700.827 run_start: {"value": ..., "metadata": {...}}`                           (v0.6, s)
A line may carry a prefix before `:::` (`0: :::MLLOG ...`) and sit among unrelated output; as the official
parser does, the text after the last `:::MLLOG ` token of a line is the record. Only lines whose key the analysis
uses are decoded, which is what makes a round of gigabytes readable in seconds: a regular expression finds the
wanted keys in the raw bytes and just those lines are decoded as JSON, each line once, so the time stays
linear in the size of the log even for a single line of megabytes holding the keys many times. The same pass
notes which of the further keys a caller names (`also_find`) the log holds, and the evaluations, thousands in
some logs, are decoded a list at a time.

Lines are read as the official parser (`mlperf_logging.compliance_checker.mlp_parser`, rulesets 0.7.0 on) reads
them: split at `\n`, `\r\n` and `\r` (Python's universal newlines), and a line holding `:::MLLOG ` whose record
the official parser cannot read (not JSON, such as two processes' writes interleaved, or cut off) counts as
absent: it is counted in `bad_lines` and blanked before anything else is read (`pipeline.mlperf.logs.readable`).
The official checker rejects a log with any such line (pipeline.mlperf.logs.compliance). Nothing else in a log is
trusted either: a wanted record that nests too deeply or has no finite timestamp is skipped, and counted in
`bad_lines` too.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from functools import cache
from typing import Any

import orjson
from orjson import loads as orjson_loads

from pipeline.mlperf.logs.readable import MLLOG_TOKEN, TOKEN_LENGTH, readable

WANTED_KEYS = (
    "run_start", "run_stop", "eval_accuracy", "global_batch_size", "train_samples", "gradient_accumulation_steps",
    "opt_name", "seed", "submission_benchmark", "submission_org", "submission_division", "submission_status",
    "submission_platform", "number_of_nodes", "accelerators_per_node", "target_accuracy", "eval_target",
    "init_stop",
)
_WANTED = frozenset(WANTED_KEYS)
EVALUATION_KEY = "eval_accuracy"
_EVALUATION_KEY_BYTES = EVALUATION_KEY.encode()
_KEY_ALTERNATION = b"|".join(key.encode() for key in WANTED_KEYS)
MLL_LINE = re.compile(rb":::MLL (\d+(?:\.\d+)?) (" + _KEY_ALTERNATION + rb"): ?([^\r\n]*)")
MLL_TOKEN = b":::MLL "
MAX_PLAUSIBLE_EPOCHS = 1000

@dataclass
class RunFacts:
    """What one log says. Times are epoch milliseconds; NaN/None where the log does not say."""

    log_format: str | None = None
    status: str = "no run_stop"
    run_start_ms: float = math.nan
    run_stop_ms: float = math.nan
    eval_metric: str | None = None
    eval_value: float = math.nan
    target_value: float = math.nan
    epochs_to_converge: float = math.nan
    samples_to_converge: float = math.nan
    global_batch_size: float = math.nan
    train_samples: float = math.nan
    gradient_accumulation_steps: float = math.nan
    optimizer: str | None = None
    seed: float = math.nan
    submission_benchmark: str | None = None
    submission_org: str | None = None
    submission_division: str | None = None
    submission_status: str | None = None
    submission_platform: str | None = None
    log_number_of_nodes: float = math.nan
    log_accelerators_per_node: float = math.nan
    # The last init_stop - the first init_start, which the official checker limits (pipeline.mlperf.logs.compliance).
    init_time_ms: float = math.nan
    # Lines skipped: those the official parser cannot read (`parse_errors`), and records of wanted keys that are
    # not usable (no finite timestamp, nested too deeply).
    bad_lines: int = 0
    # Set by the caller, who knows the benchmark's quality target; None where it is not checked.
    reached_target: bool | None = None
    # Set by the caller, who knows the round: the official checker's logging rules the log breaks, or None.
    compliance: str | None = None
    _eval_values: list[float] = field(default_factory=list, repr=False)
    _keys_found: frozenset[str] = field(default=frozenset(), repr=False)
    _parse_errors: int = field(default=0, repr=False)
    _records_only: bool = field(default=False, repr=False)

    @property
    def parse_errors(self) -> int:
        """:::MLLOG lines that the official parser cannot read: the official checker rejects the log."""
        return self._parse_errors

    @property
    def records_only(self) -> bool:
        """True when every line of the log is an MLLOG line that starts with the token and that the official parser
        reads (`pipeline.mlperf.logs.readable.Reading`): the log holds no framework or launcher output."""
        return self._records_only

    @property
    def eval_values(self) -> list[float]:
        """Every numeric evaluation result in the log, in order (the official checker looks at them all)."""
        return self._eval_values

    @property
    def keys_found(self) -> frozenset[str]:
        """The keys of WANTED_KEYS, and init_start, that the log has a readable record of, and the keys asked
        for with `parse_log(also_find=...)` whose text it holds (some may be missed: see
        pipeline.mlperf.logs.compliance)."""
        return self._keys_found

    @property
    def converged(self) -> bool:
        """True when the run counts: status success, target reached, no logging rule broken, a positive time."""
        return (self.status == "success" and self.reached_target is not False and self.compliance is None
                and self.time_to_train_min > 0)

    @property
    def time_to_train_min(self) -> float:
        """run_stop minus run_start, in minutes."""
        return (self.run_stop_ms - self.run_start_ms) / 60_000.0

    @property
    def throughput_samples_per_s(self) -> float:
        """Training samples processed per second of the timed run.

        Samples are `samples_count` at run_stop (or at the last evaluation) when the log states it, else the
        epochs to converge times `train_samples`; the time is run_stop - run_start, which includes evaluation,
        so this is an effective rate, comparable between systems of one benchmark, not a peak rate. An epoch
        count above MAX_PLAUSIBLE_EPOCHS is a sample or token counter that some benchmarks (GPT-3) log as
        `epoch_num`, and gives no rate.
        """
        seconds = (self.run_stop_ms - self.run_start_ms) / 1000.0
        samples = self.samples_to_converge
        if math.isnan(samples) and self.epochs_to_converge <= MAX_PLAUSIBLE_EPOCHS:
            samples = self.epochs_to_converge * self.train_samples
        if not self.converged or not seconds > 0 or not samples > 0:
            return math.nan
        return samples / seconds

    def record(self) -> dict[str, Any]:
        # Not dataclasses.asdict: it deep-copies the evaluation list, a sixth of the ingest's time.
        """The run as a flat dict of its public fields plus converged, time to train (min, NaN if not converged)
        and throughput (samples/s)."""
        values = {name: getattr(self, name) for name in _public_fields()}
        values.update(converged=self.converged, time_to_train_min=self.time_to_train_min if self.converged
                      else math.nan, throughput_samples_per_s=self.throughput_samples_per_s)
        return values


Record = tuple[str, float, Any, dict[str, Any]]  # key, time_ms, value, metadata
Evaluation = tuple[float, dict[str, Any]]  # time_ms, the whole record


@cache
def _public_fields() -> tuple[str, ...]:
    return tuple(item.name for item in fields(RunFacts) if not item.name.startswith("_"))


def parse_log(data: bytes, also_find: frozenset[str] = frozenset()) -> RunFacts:
    """The facts of one log. `also_find` names further keys, each logged once in a log, whose presence the
    same pass over the log notes in `keys_found` (pipeline.mlperf.logs.compliance asks for the keys its rules
    require)."""
    facts = RunFacts()
    found: set[str] = set()
    if MLLOG_TOKEN in data:
        facts.log_format = "mllog"
        data, facts._parse_errors, facts._records_only = readable(data)
        facts.bad_lines = facts._parse_errors
        records, evaluations = _mllog_records(data, facts, also_find, found)
        # init_start is read apart from the wanted keys: some logs give it once per process, 50 times a run.
        init_start = next((time_ms for time_ms, _ in records_of(data, "init_start")), None)
        init_stops = [time_ms for key, time_ms, _, _ in records if key == "init_stop"]
        if init_start is not None:
            found.add("init_start")
            if init_stops:
                facts.init_time_ms = max(init_stops) - init_start
    elif MLL_TOKEN in data:
        facts.log_format = "mll"
        records, evaluations = _mll_records(data, facts)
    else:
        facts.status = "no MLPerf log lines"
        return facts
    _apply(records, evaluations, facts)
    found.update(key for key, _, _, _ in records)
    if evaluations:
        found.add(EVALUATION_KEY)
    facts._keys_found = frozenset(found)
    return facts


def _mllog_records(data: bytes, facts: RunFacts, also_find: frozenset[str],
                   found: set[str]) -> tuple[list[Record], list[Evaluation]]:
    """The readable records of the wanted keys, in log order, evaluations (time_ms, record) apart from the
    others since a log can hold thousands of them; the keys of `also_find` whose text the log holds go to
    `found`."""
    records: list[Record] = []
    # Keys of which only the first usable value is kept, and presence keys once found: their later lines (one
    # per process in some logs) are not decoded at all.
    done: set[bytes] = set()
    key_search, presence = _key_search(also_find)
    evaluation_texts: list[bytes] = []
    evaluations_before: list[int] = []  # how many other records precede each evaluation
    search, rfind = key_search.search, data.rfind
    position = line_end = 0
    # search, not finditer: after a wanted line the search resumes at its end, so a line holding a key many
    # times costs one look, not one per occurrence (a line holds one record: the text after its last token).
    # The match runs to the end of its line, and the line's start is found inline, as in _line_of: this loop
    # runs for every wanted line of a round.
    while (match := search(data, position)) is not None:
        key_found = match.group(1)
        if key_found in presence and key_found not in done:  # presence is the text alone, wherever it stands
            found.add(key_found.decode())
            done.add(key_found)
        if key_found in done:
            position = match.end(1)  # the line may yet hold another wanted record
            continue
        line_start = rfind(b"\n", line_end, match.start()) + 1
        line_end = position = match.end()
        token = rfind(MLLOG_TOKEN, line_start, line_end)
        if token < 0:
            continue  # other output that happens to hold the text, not an MLPerf line
        text = data[token + TOKEN_LENGTH: line_end]
        if key_found == _EVALUATION_KEY_BYTES:
            evaluation_texts.append(text)  # decoded together, below
            evaluations_before.append(len(records))
            continue
        decoded = _decoded(text)
        if decoded is None:
            facts.bad_lines += 1  # not a damaged line (those are gone), but no usable record either
            continue
        key, time_ms, entry = decoded
        if not isinstance(key, str) or key not in _WANTED:
            continue  # the wanted key's text sat inside another record's value
        if key == EVALUATION_KEY:  # found by another key's text in it: read with the others, in log order
            evaluation_texts.append(text)
            evaluations_before.append(len(records))
            continue
        record = _record(key, time_ms, entry)
        records.append(record)
        if key in _FIRST_VALUE_FIELDS and not _is_unset(_FIRST_VALUE_FIELDS[key][1](record[2])):
            done.add(key.encode())
    evaluations = _evaluations(evaluation_texts)
    if evaluations is None:
        evaluations = _evaluations_one_by_one(evaluation_texts, evaluations_before, records, facts)
    return records, evaluations


def _record(key: str, time_ms: float, entry: dict[str, Any]) -> Record:
    metadata = entry.get("metadata")
    return key, time_ms, entry.get("value"), metadata if isinstance(metadata, dict) else {}


def _decoded(text: bytes) -> tuple[Any, float, dict[str, Any]] | None:
    """(key, time_ms, record) of one record's text; None unless it is a readable record."""
    try:
        entry = _decode_record(text)
        return entry["key"], _timestamp_ms(entry), entry
    except (ValueError, TypeError, KeyError, RecursionError, OverflowError):
        return None


def _evaluations(texts: list[bytes]) -> list[Evaluation] | None:
    """The evaluation records of these texts, decoded and checked a list at a time; None unless every one is
    an eval_accuracy record that orjson reads, with an integer time_ms, as MLLOG writes them. Per record this
    costs a fifth of reading each on its own, which matters for the thousands of evaluations of some logs."""
    try:
        entries = list(map(orjson_loads, texts))
        keys = [entry["key"] for entry in entries]
        stamps = [entry["time_ms"] for entry in entries]
    except (orjson.JSONDecodeError, TypeError, KeyError):
        return None
    if keys.count(EVALUATION_KEY) != len(keys) or not set(map(type, stamps)) <= {int}:
        return None
    return list(zip(map(float, stamps), entries))


def _evaluations_one_by_one(texts: list[bytes], before: list[int], records: list[Record],
                            facts: RunFacts) -> list[Evaluation]:
    """The evaluation records of these texts, each read on its own: unusable ones (no finite timestamp) are
    counted and skipped, and a record of another wanted key whose line held the evaluation key's text is put in
    its place in `records`."""
    evaluations: list[Evaluation] = []
    misplaced: list[tuple[int, Record]] = []
    for text, index in zip(texts, before):
        decoded = _decoded(text)
        if decoded is None:
            facts.bad_lines += 1
            continue
        key, time_ms, entry = decoded
        if key == EVALUATION_KEY:
            evaluations.append((time_ms, entry))
        elif isinstance(key, str) and key in _WANTED:
            misplaced.append((index, _record(key, time_ms, entry)))
    for index, record in reversed(misplaced):
        records.insert(index, record)
    return evaluations


@cache
def _key_search(also_find: frozenset[str]) -> tuple[re.Pattern[bytes], frozenset[bytes]]:
    """A search for the wanted keys and those of `also_find` as MLLOG records spell them, `"key": "run_start"`,
    and the presence keys (those of `also_find` not wanted) as bytes. Cached: it is asked once per log."""
    keys = sorted(key.encode() for key in _WANTED | also_find)
    return (re.compile(rb'"key":\s*"(' + _prefix_tree(keys) + rb')"[^\n]*'),
            frozenset(key.encode() for key in also_find - _WANTED))


def _prefix_tree(words: list[bytes]) -> bytes:
    """A regular expression for exactly these words with their common prefixes factored out: re tries the
    branches of an alternation one by one, so a flat one of a hundred keys would be tried a hundred times at
    every record of a log, and this one a few times."""
    branches: dict[bytes, list[bytes]] = {}
    for word in words:
        branches.setdefault(word[:1], []).append(word[1:])
    ends_here = branches.pop(b"", None) is not None
    parts = [re.escape(head) + _prefix_tree(tails) for head, tails in sorted(branches.items())]
    if not parts:
        return b""
    body = parts[0] if len(parts) == 1 and not ends_here else b"(?:" + b"|".join(parts) + b")"
    return body + b"?" if ends_here else body


def _line_of(data: bytes, match: re.Match[bytes], floor: int) -> tuple[int, int]:
    """Where the record of the line holding `match` starts (after the line's last token; -1 when the line has
    none), and where the line ends. The line starts after the last newline between `floor` and the match."""
    line_start = data.rfind(b"\n", floor, match.start()) + 1
    line_end = data.find(b"\n", match.end())
    line_end = len(data) if line_end < 0 else line_end
    token = data.rfind(MLLOG_TOKEN, line_start, line_end)
    return (token + TOKEN_LENGTH if token >= 0 else -1), line_end


def records_of(data: bytes, key: str) -> Iterator[tuple[float, dict[str, Any]]]:
    """(time_ms, record) of every readable record of one key, in log order; damaged lines are skipped (the
    main reading counts them in bad_lines where the key is wanted)."""
    for match in key_pattern(key).finditer(data):
        record_start, line_end = _line_of(data, match, 0)
        if record_start < 0:
            continue
        decoded = _decoded(data[record_start: line_end])
        if decoded is not None and decoded[0] == key:
            yield decoded[1], decoded[2]


@cache
def key_pattern(key: str) -> re.Pattern[bytes]:
    """Finds `"key": "<key>"` as an MLLOG record spells it."""
    return re.compile(rb'"key":\s*"' + re.escape(key.encode()) + rb'"')


def _decode_record(text: bytes) -> Any:
    """The JSON of one record: orjson, five times faster, for the lines it takes; the standard reader for the
    rest (NaN literals, bytes that are not UTF-8), so the outcome is json.loads's. The one difference, an
    integer beyond 64 bits read as the nearest float, changes nothing: numeric fields are read as floats."""
    try:
        return orjson_loads(text)
    except orjson.JSONDecodeError:
        return _standard_decode(text)


def _standard_decode(text: bytes) -> Any:
    return json.loads(text.decode("utf-8", "replace"))


def _mll_records(data: bytes, facts: RunFacts) -> tuple[list[Record], list[Evaluation]]:
    records: list[Record] = []
    evaluations: list[Evaluation] = []
    for match in MLL_LINE.finditer(data):
        time_ms = float(match.group(1)) * 1000.0
        if not math.isfinite(time_ms):
            facts.bad_lines += 1
            continue
        payload = match.group(3).decode("utf-8", "replace").strip()
        try:
            body = json.loads(payload) if payload else {}
        except ValueError:
            body = {"value": payload}  # v0.6 often logs a bare value rather than a JSON object
        except RecursionError:
            facts.bad_lines += 1
            continue
        if not isinstance(body, dict):
            body = {"value": body}
        key = match.group(2).decode()
        if key == EVALUATION_KEY:
            evaluations.append((time_ms, body))
        else:
            records.append(_record(key, time_ms, body))
    return records, evaluations


def _apply(records: list[Record], evaluations: list[Evaluation], facts: RunFacts) -> None:
    """Fold the records into facts, choosing run_start and run_stop exactly as the official summarizer does.

    It walks the log and stops at the first point where both keys have been seen, keeping the latest of each
    up to there, so a duplicated key resolves the same way here.
    """
    start = stop = None
    for key, time_ms, _, metadata in records:
        if key == "run_start":
            start = time_ms
        elif key == "run_stop":
            stop = (time_ms, metadata)
        if start is not None and stop is not None:
            break
    if start is not None:
        facts.run_start_ms = start
    if start is None:
        facts.status = "no run_start"
    elif stop is None:
        facts.status = "no run_stop"
    else:
        facts.run_stop_ms, stop_metadata = stop
        facts.status = str(stop_metadata.get("status", "no status")).strip().lower()
        facts.epochs_to_converge = _number(stop_metadata.get("epoch_num", stop_metadata.get("epoch")))
        facts.samples_to_converge = _number(stop_metadata.get("samples_count"))

    for key, _time_ms, value, _metadata in records:
        if key in ("target_accuracy", "eval_target"):
            facts.target_value = _number(value)
        elif key in _FIRST_VALUE_FIELDS:
            attribute, convert = _FIRST_VALUE_FIELDS[key]
            if _is_unset(getattr(facts, attribute)):
                setattr(facts, attribute, convert(value))
    if evaluations:
        _apply_evaluations(evaluations, facts)


def _apply_evaluations(evaluations: list[Evaluation], facts: RunFacts) -> None:
    """Every numeric evaluation value; metric, value and progress of the last evaluation up to run_stop."""
    values = [entry.get("value") for _, entry in evaluations]
    # A list at a time where every value is a finite float, as MLLOG writes them: some logs hold thousands.
    if set(map(type, values)) <= {float} and all(map(math.isfinite, values)):  # type: ignore[arg-type]
        facts._eval_values = values  # type: ignore[assignment]  # all floats, checked above
    else:
        facts._eval_values = [number for number in map(_number, values) if not math.isnan(number)]
    stop_ms = facts.run_stop_ms if not math.isnan(facts.run_stop_ms) else math.inf
    last_eval = next((entry for time_ms, entry in reversed(evaluations) if time_ms <= stop_ms), None)
    if last_eval is not None:
        metadata = last_eval.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        facts.eval_metric = str(metadata.get("metric", "eval_accuracy"))
        facts.eval_value = _number(last_eval.get("value"))
        if math.isnan(facts.epochs_to_converge):
            facts.epochs_to_converge = _number(metadata.get("epoch_num"))
        if math.isnan(facts.samples_to_converge):
            facts.samples_to_converge = _number(metadata.get("samples_count"))


def _timestamp_ms(entry: dict[str, Any]) -> float:
    """`time_ms` as the rules require; some v0.7 logs (Alibaba) give `time_s` in seconds instead.

    Raises ValueError unless it is a finite number: an infinite time would make an infinite time to train.
    """
    stamp = entry.get("time_ms")
    if type(stamp) is int:  # as MLLOG writes it; every int converts to a finite float
        return float(stamp)
    stamp = entry["time_ms"] if "time_ms" in entry else entry["time_s"]
    if isinstance(stamp, bool):
        raise ValueError("a timestamp is a number, not true or false")
    time_ms = float(stamp) if "time_ms" in entry else float(stamp) * 1000.0
    if not math.isfinite(time_ms):
        raise ValueError(f"timestamp {stamp!r} is not finite")
    return time_ms


def _number(value: Any) -> float:
    if isinstance(value, bool):
        return math.nan
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an integer of hundreds of digits
        return math.nan
    return number if math.isfinite(number) else math.nan


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _is_unset(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


_FIRST_VALUE_FIELDS = {
    "global_batch_size": ("global_batch_size", _number),
    "train_samples": ("train_samples", _number),
    "gradient_accumulation_steps": ("gradient_accumulation_steps", _number),
    "opt_name": ("optimizer", _text),
    "seed": ("seed", _number),
    "submission_benchmark": ("submission_benchmark", _text),
    "submission_org": ("submission_org", _text),
    "submission_division": ("submission_division", _text),
    "submission_status": ("submission_status", _text),
    "submission_platform": ("submission_platform", _text),
    "number_of_nodes": ("log_number_of_nodes", _number),
    "accelerators_per_node": ("log_accelerators_per_node", _number),
}
