"""Energy to train from MLPerf power logs, as `mlperf_logging.result_summarizer` computes it, round by round.

A power result's folder `<submitter>/results/<system>/<benchmark>/` holds, beside each run log
`result_<run>.txt`, a folder `power/result_<run>/` with one `node_<i>.txt` per measured node (MLLOG
`power_measurement_start`, `power_reading` in W, `power_measurement_stop`, optional `conversion_eff` whose metadata
may say `measurement_type`) and one `sw_<j>.txt` per switch (`interconnect_power_est`, W).

A node's energy over a run (J) is `conversion_eff x sum(reading x ms since the previous reading) x time to train
(ms) / measurement window (ms) / 1000`: the time-weighted mean power over the window times the time to train. A
switch's is `conversion_eff x interconnect_power_est x time to train (ms) / 1000` (a switch log holding measured
readings but no estimate counts 0 W, as in the summarizer). A run's energy is the sum over its node and switch
logs; a result's is the olympic mean over the same runs as its time to train, times the same scaling factor
(`pipeline.mlperf.logs.scoring`).

The rule that reads a node log changed between releases, and each round is scored with its own:
- `RELEASE_V4_0` (the summarizer of the v4.0 release, mlcommons/logging a9f4839): the lines in file order, readings
  up to the stop line (a reading counts from the previous line's time, the start line's for the first), the
  `conversion_eff` lines before the stop line; the window ends at the later of the stop and the last reading.
- `INSTALLED` (v4.1 on, the installed package's `_compute_power_node`): the lines sorted by time, readings after
  the start and before the stop, the last `conversion_eff` of the file; the window is stop - start (the last
  reading's time where there is no stop line).
The log parser is the official one: lines holding `:::MLLOG ` (anything before the token dropped), JSON, the
unparsable ones skipped.
"""
from __future__ import annotations

import io
import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import orjson
import pandas as pd
from orjson import loads as orjson_loads

from pipeline.core import schemas
from pipeline.mlperf.logs.readable import record_lines

RELEASE_V4_0 = "summarizer of the v4.0 release"
INSTALLED = "summarizer of v4.1 on (mlperf-logging 4.1.68)"
# The rounds scored with an older release's rule; every other round uses the installed summarizer's.
RELEASE_RULES = {"v4.0": RELEASE_V4_0}
# "Measure max(a run, 60 power samples)": training_policies/power_measurement.adoc.
MIN_SAMPLES = 60
TOKEN = ":::MLLOG "
MEASUREMENT_TOKEN = re.compile(r"(?<![a-z])(ac|dc)(?![a-z])", re.IGNORECASE)
RUN_KEY = ["round", "submitter", "system", "benchmark", "run"]
RUN_POWER_COLUMNS = [*RUN_KEY, "energy_j", "power_nodes", "power_switches", "conversion_eff", "measurement_type"]
# orjson reads an integer that 64 bits cannot hold as a float at least this large.
_BEYOND_64_BITS = 2.0**63


def rule_of(round_: str) -> str:
    """The summarizer rule a round's energy is computed with (`RELEASE_V4_0` or `INSTALLED`)."""
    return RELEASE_RULES.get(round_, INSTALLED)


class Line(msgspec.Struct, gc=False):
    """One MLLOG line of a power log, as msgspec decodes it from the line's record (a million of them are made per
    ingest; untracked by the garbage collector, as decoded JSON holds no cycle)."""

    time_ms: float
    key: str
    value: Any
    metadata: Any


@dataclass(frozen=True)
class PowerLog:
    """One node or switch log of a run, reduced to what its energy needs.

    energy over a run of `t` ms (J) = `weighted x t / window_ms / 1000` for a node, `weighted x t / 1000` for a
    switch (`window_ms` None): `weighted` is conversion_eff x sum(W x ms) for a node, conversion_eff x W for a
    switch. `weighted` is NaN when the rule cannot give an energy (`defects` says why).
    """

    path: str
    round: str
    submitter: str
    system: str
    benchmark: str
    run: str
    device: str  # "node" or "sw"
    weighted: float
    window_ms: float | None
    conversion_eff: float | None
    measurement_type: str | None
    defects: tuple[str, ...] = field(default_factory=tuple)

    @property
    def usable(self) -> bool:
        """True when the log gives a time-weighted mean power (W)."""
        return not math.isnan(self.weighted)

    def energy_j(self, time_to_train_ms: float) -> float:
        # The summarizer's operation order, so that the joules agree to the last bits.
        """The energy (J) over a run of time_to_train_ms milliseconds, in the summarizer's operation order."""
        if self.window_ms is None:
            return self.weighted * time_to_train_ms / 1000
        return self.weighted * time_to_train_ms / self.window_ms / 1000


_RECORD_LINES = msgspec.json.Decoder(Line)


def parse_power_lines(data: bytes) -> list[Line]:
    """The MLLOG lines of a power log in file order, as the official parser reads them (latin-1; the text before
    the last `:::MLLOG ` of a line dropped; lines that are not JSON with time_ms, key, value and metadata skipped)."""
    quick = _quick_lines(data)
    if quick is not None:
        return quick
    lines = []
    loads = _ascii_loads if data.isascii() else json.loads
    for text in io.TextIOWrapper(io.BytesIO(data), encoding="latin-1"):
        if TOKEN not in text:
            continue
        try:
            record = loads(text[text.rindex(TOKEN) + len(TOKEN):].strip())
            lines.append(Line(float(record["time_ms"]), str(record["key"]), record["value"], record["metadata"]))
        except (ValueError, KeyError, TypeError):
            continue
    return lines


def _quick_lines(data: bytes) -> list[Line] | None:
    """`parse_power_lines` of a log decoded whole, in half the time, where it can be: ASCII with no `\r` but in
    `\r\n` (so lines end where the official parser ends them), one token per line, every record an object with
    a numeric time_ms, a string key, a value and metadata that msgspec reads (it reads what json.loads reads, less:
    no NaN, no integer of thousands of digits (`record_lines`); a duplicated key's last value, as json.loads;
    integers as integers, floats correctly rounded, an integer time_ms as float() rounds it). None otherwise: the
    log is then read line by line, skipping the lines that do not qualify."""
    if not data.isascii() or (b"\r" in data and data.count(b"\r") != data.count(b"\r\n")):
        return None
    lines = record_lines(data)
    if lines is None:
        return None
    joined, count = lines
    try:
        records = _RECORD_LINES.decode_lines(joined)
    except (msgspec.DecodeError, RecursionError):
        return None
    if len(records) != count:  # a blank text, skipped as a JSON line, is a line the official parser skips
        return None
    return records


def _ascii_loads(text: str) -> Any:
    """`json.loads` of ASCII text, as orjson reads it, three times faster, where the two agree: the standard
    reader for what orjson refuses (NaN literals, lone surrogates, a number out of float range), and for a
    record whose time_ms, key or value orjson read as a float of at least 2**63, which is how it reads an
    integer beyond 64 bits (not rounded as float() rounds it). Metadata is read only for its measurement_type,
    a string. On ASCII, the file's Latin-1 reading and orjson's UTF-8 agree."""
    try:
        record = orjson_loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
    if type(record) is dict and (_beyond_64_bits(record.get("time_ms")) or _beyond_64_bits(record.get("value"))
                                 or _beyond_64_bits(record.get("key"))):
        return json.loads(text)
    return record


def _beyond_64_bits(value: Any) -> bool:
    return type(value) is float and not -_BEYOND_64_BITS < value < _BEYOND_64_BITS


_NUMBER_TYPES = frozenset({int, float})


def _number(value: Any) -> float | None:
    if type(value) in _NUMBER_TYPES:  # as JSON gives numbers: a quicker test than the one below
        return float(value)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _all_numbers(values: list[Any]) -> bool:
    """Whether every value is a number (`_number` gives a float for each); by their types first, the common case."""
    return set(map(type, values)) <= _NUMBER_TYPES or all(_number(value) is not None for value in values)


def node_weighted_v4_0(lines: Sequence[Line]) -> tuple[float, float, float]:
    """(conversion_eff x sum(W x ms), window ms, conversion_eff) by the v4.0 release's rule (see the module)."""
    previous = agg = start = stop = last_reading = 0.0
    eff = 1.0
    for line in lines:
        key = line.key
        if key == "power_reading":  # most lines: asked first
            agg += _number(line.value) * (line.time_ms - previous)  # type: ignore[operator]
            previous = line.time_ms
            if previous > last_reading:  # max(last_reading, the reading's time), without a call
                last_reading = previous
        elif key == "power_measurement_start":
            start = previous = line.time_ms
        elif key == "power_measurement_stop":
            stop = line.time_ms
            break
        elif key == "conversion_eff":
            eff = _number(line.value)  # type: ignore[assignment]
    return eff * agg, max(stop, last_reading) - start, eff


def node_weighted_installed(lines: Sequence[Line]) -> tuple[float, float, float]:
    """(conversion_eff x sum(W x ms), window ms, conversion_eff) by the installed summarizer's rule."""
    previous = agg = start = stop = last_reading = 0.0
    eff = 1.0
    started = stopped = False
    for line in sorted(lines, key=lambda line: line.time_ms):  # stable, as the summarizer's list.sort
        if line.key == "power_measurement_start":
            start = previous = line.time_ms
            started = True
        if line.key == "power_reading" and started and not stopped:
            agg += _number(line.value) * (line.time_ms - previous)  # type: ignore[operator]
            previous = line.time_ms
            last_reading = max(last_reading, line.time_ms)
        if line.key == "power_measurement_stop":
            stop = line.time_ms
            stopped = True
        if line.key == "conversion_eff":
            eff = _number(line.value)  # type: ignore[assignment]
    return eff * agg, (stop if stopped else last_reading) - start, eff


def switch_weighted(lines: Sequence[Line]) -> tuple[float, float]:
    """(conversion_eff x interconnect_power_est in W, conversion_eff): the first estimate, and the efficiency
    stated before it (both releases)."""
    eff = 1.0
    for line in lines:
        if line.key == "conversion_eff":
            eff = _number(line.value)  # type: ignore[assignment]
        if line.key == "interconnect_power_est":
            return eff * _number(line.value), eff  # type: ignore[operator]
    return 0.0, eff


def node_defects(lines: Sequence[Line], rule: str) -> tuple[list[str], bool]:
    """What is wrong with a node log (a stop before the start or at it, fewer readings than the rules' minimum,
    readings outside the window), and whether the rule can still give an energy from it."""
    keys = [line.key for line in lines]
    starts = [line.time_ms for line in lines if line.key == "power_measurement_start"]
    stops = [line.time_ms for line in lines if line.key == "power_measurement_stop"]
    readings = [line.time_ms for line in lines if line.key == "power_reading"]
    if not _all_numbers([line.value for line in lines if line.key in ("power_reading", "conversion_eff")]):
        return ["a power_reading or conversion_eff value that is not a number"], False
    if not starts:
        return ["no power_measurement_start line"], False
    start = starts[-1]
    if stops and stops[-1] < start:
        return ["power_measurement_stop before power_measurement_start"], False
    if rule == RELEASE_V4_0 and "power_reading" in keys[: keys.index("power_measurement_start")]:
        return ["readings before the start line, which the v4.0 rule would weigh from time 0"], False
    defects = []
    if not stops:
        defects.append("no power_measurement_stop line: the window ends at the last reading")
    end = stops[-1] if stops else max(readings, default=start)
    stop_at_start = end == start
    if stop_at_start:
        if rule != RELEASE_V4_0 or not readings:
            return [*defects, "power_measurement_stop at its start: a window of 0 ms"], False
        defects.append("power_measurement_stop at its start: the v4.0 rule ends the window at the last reading")
        end = max(end, *readings)
    inside = sum(start <= reading <= end for reading in readings)
    if not stop_at_start and inside < len(readings):
        counted = ("the v4.0 rule counts those before the stop line and ends the window at the last reading"
                   if rule == RELEASE_V4_0 else "not counted")
        defects.append(f"readings outside the window: {counted}")
    if inside < MIN_SAMPLES:
        defects.append(f"fewer readings in the window than the rules' minimum of {MIN_SAMPLES}")
    return defects, True


def read_power_log(path: str, parts: Mapping[str, str], data: bytes, round_: str) -> PowerLog:
    """A power log read with its round's rule; `parts` are the submitter, system, benchmark, run and device
    (node or sw) its path names (`pipeline.mlperf.sources.POWER_PATH`)."""
    rule = rule_of(round_)
    lines = parse_power_lines(data)
    measurement = next((line.metadata.get("measurement_type") for line in lines if line.key == "conversion_eff"
                        and isinstance(line.metadata, dict) and line.metadata.get("measurement_type")), None)
    parts = {name: parts[name] for name in ("submitter", "system", "benchmark", "run", "device")}
    if parts["device"] == "sw":
        if any(line.key in ("conversion_eff", "interconnect_power_est") and _number(line.value) is None
               for line in lines):
            return PowerLog(path, round_, **parts, weighted=math.nan, window_ms=None, conversion_eff=None,
                            measurement_type=measurement, defects=("a value is not a number",))
        weighted, eff = switch_weighted(lines)
        estimated = any(line.key == "interconnect_power_est" for line in lines)
        return PowerLog(path, round_, **parts, weighted=weighted, window_ms=None, conversion_eff=eff,
                        measurement_type=measurement, defects=() if estimated else (
                            "no interconnect_power_est line: the switch counts 0 W, as in the summarizer",))
    defects, usable = node_defects(lines, rule)
    if not usable:
        return PowerLog(path, round_, **parts, weighted=math.nan, window_ms=None, conversion_eff=None,
                        measurement_type=measurement, defects=tuple(defects))
    node = node_weighted_v4_0 if rule == RELEASE_V4_0 else node_weighted_installed
    weighted, window, eff = node(lines)
    return PowerLog(path, round_, **parts, weighted=weighted, window_ms=window, conversion_eff=eff,
                    measurement_type=measurement, defects=tuple(defects))


def measurement_of(measurement_types: Iterable[str | None], submitter: str, system_name: str | None) -> str | None:
    """Where the power was measured, "AC" or "DC": the `measurement_type` of the logs' conversion_eff lines, else
    an AC or DC token in the submitter folder or system name (v4.0 Sustainable Metal Cloud: smc-ac-power,
    SMC-H100-DC-Power); None when neither says."""
    stated = sorted({kind.upper() for kind in measurement_types if isinstance(kind, str) and kind})
    if stated:
        return " and ".join(stated)
    for text in (submitter, system_name or ""):
        if match := MEASUREMENT_TOKEN.search(text):
            return match[1].upper()
    return None


@dataclass
class RunPower:
    """The power of the runs of one round's results, with a quarantine row per run folder whose logs have defects."""

    runs: pd.DataFrame  # RUN_POWER_COLUMNS
    quarantine: pd.DataFrame  # schemas.QUARANTINE_COLUMNS


def run_power(runs: pd.DataFrame, logs: Sequence[PowerLog]) -> RunPower:
    """Each converged run's energy (J) from its power logs; the defects of the logs as quarantine rows, one per
    run folder `.../power/result_<run>/`.

    `runs` has the runs table's columns (`round, submitter, system, benchmark, run, converged, run_start_ms,
    run_stop_ms`). A converged run's energy is NaN when a log of it cannot give one or it has no node log; runs
    that did not converge get no energy (the summarizer computes none for them).
    """
    by_run: dict[tuple[str, ...], list[PowerLog]] = defaultdict(list)
    for log in logs:
        by_run[log.round, log.submitter, log.system, log.benchmark, log.run].append(log)
    converged = runs[runs["converged"].astype(bool)]  # read as column lists: iterating a frame's rows is slow
    columns = [converged[column].tolist() for column in (*RUN_KEY, "run_start_ms", "run_stop_ms")]
    timed: dict[tuple[str, ...], float] = {tuple(row[:-2]): float(row[-1]) - float(row[-2]) for row in zip(*columns)}
    rows, quarantine = [], []
    for key in sorted(by_run):
        run_logs = sorted(by_run[key], key=lambda log: (log.device != "node", log.path))
        nodes = [log for log in run_logs if log.device == "node"]
        switches = [log for log in run_logs if log.device == "sw"]
        folder = run_logs[0].path.rsplit("/", 1)[0] + "/"
        reasons = _defect_summary(run_logs)
        if key not in timed:
            quarantine.append({"round": key[0], "path": folder,
                               "reason": "power logs of a run that has no converged result log: not used"})
            continue
        usable = bool(nodes) and all(log.usable for log in run_logs)
        energy = sum(log.energy_j(timed[key]) for log in run_logs) if usable else math.nan
        if not nodes:
            reasons.append("no node_*.txt log")
        if reasons:
            outcome = ("used, as the round's summarizer rule uses them" if usable
                       else "the run has no energy, nor its result")
            quarantine.append({"round": key[0], "path": folder,
                               "reason": f"power logs: {'; '.join(reasons)}: {outcome}"})
        effs = {log.conversion_eff for log in nodes if log.conversion_eff is not None}
        rows.append({**dict(zip(RUN_KEY, key)), "energy_j": energy, "power_nodes": len(nodes),
                     "power_switches": len(switches),
                     "conversion_eff": effs.pop() if len(effs) == 1 else math.nan,
                     "measurement_type": " and ".join(sorted({log.measurement_type.upper() for log in run_logs
                                                              if log.measurement_type})) or None})
    return RunPower(pd.DataFrame(rows, columns=RUN_POWER_COLUMNS),
                    pd.DataFrame(quarantine, columns=schemas.QUARANTINE_COLUMNS))


def _defect_summary(logs: Sequence[PowerLog]) -> list[str]:
    """Each defect once, with how many of the run's logs have it."""
    counts: dict[str, int] = defaultdict(int)
    for log in logs:
        for defect in log.defects:
            counts[defect] += 1
    return [f"{count} of {len(logs)} log(s) with {defect}" for defect, count in counts.items()]


def result_energy(energies: Mapping[str, float], kept_runs: Sequence[str] | None, factor: float) -> float:
    """A result's energy (J): the mean of its kept runs' energies times the scaling factor; NaN when the result
    has no score or a kept run has no energy."""
    if not kept_runs or any(run not in energies for run in kept_runs):
        return math.nan
    return sum(energies[run] for run in kept_runs) * 1.0 / len(kept_runs) * factor
