"""What a system description says about its hardware: one row of normalised hardware features per description.

The parsers of `pipeline.mlperf.hardware` read each free-text field; this module applies them to the ingest's
systems table, turns a CPU-only system's host processors into its accelerators, and sets missing (with a note)
every value that is negative, zero where a count or size must be positive, unreadable as the number it should
hold, or outside the plausible range of `PLAUSIBLE` (a typo or a unit mix-up such as "999999 TB"), never a guess.
The notes are the rows of `data/processed/feature_notes.csv` (columns `NOTE_COLUMNS`).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pandas as pd

from pipeline.mlperf import availability, hardware

NOTE_COLUMNS = ["round", "submitter", "system", "field", "value", "reason"]
# A CPU-only system states zero accelerators, and may state zero accelerator memory.
CPU_ONLY_ZEROS = ("accelerators_per_node", "accelerator_memory_gib")
# The number a value starts with, sign included: "-8", "0 GB", "- 80GB".
LEADING_NUMBER = re.compile(r"^\s*(-\s*)?(\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class Plausible:
    """The values a feature can take on real hardware; the bounds are far outside every published value."""

    feature: str
    fields: tuple[str, ...]  # the description fields it is read from; a note names the first one present
    low: float
    high: float
    unit: str
    # What the field must hold, for the note on a value that cannot be read; None where a value without a
    # number is normal (an interconnect named without its rate).
    holds: str | None


PLAUSIBLE: tuple[Plausible, ...] = (
    Plausible("n_nodes", ("number_of_nodes", "number of nodes"), 1, 100_000, "nodes", "a whole number of nodes"),
    Plausible("accelerators_per_node", ("accelerators_per_node",), 1, 4096, "accelerators per node",
              "a whole number of accelerators"),
    Plausible("host_sockets", ("host_processors_per_node",), 1, 64, "processors per node",
              "a whole number of processors"),
    Plausible("host_cpu_cores", ("host_processor_core_count",), 1, hardware.MAX_CORES_PER_NODE, "cores per node",
              None),
    Plausible("host_memory_gib", ("host_memory_capacity",), 1, 64 * 1024, "GiB", "a memory size"),
    Plausible("accelerator_memory_gib", ("accelerator_memory_capacity", "accelerator_model_name"), 1, 1024, "GiB",
              None),
    Plausible("interconnect_intra_gbps", ("accelerator_interconnect",), 1, 200_000, "Gbit/s", None),
    Plausible("interconnect_inter_gbps", ("host_networking",), 1, 200_000, "Gbit/s", None),
)


def _field(systems: pd.DataFrame, *names: str) -> pd.Series:
    """The first of several spellings of a description field that is present (published files vary)."""
    result = pd.Series([None] * len(systems), index=systems.index, dtype="object")
    for name in names:
        if name in systems:
            result = result.where(result.notna(), systems[name])
    return result


def _field_name(systems: pd.DataFrame, names: tuple[str, ...]) -> pd.Series:
    """Which of the spellings `_field` took its value from, row by row."""
    taken = pd.Series([None] * len(systems), index=systems.index, dtype="object")
    for name in names:
        if name in systems:
            taken = taken.where(taken.notna() | systems[name].isna(), name)
    return taken


def _accelerator(name: object, memory: object, system_name: object) -> hardware.Accelerator:
    """The accelerator a description names; Google's early TPU descriptions say only "TPU", and their
    system_name ("tpu-v4-128") carries the generation."""
    accelerator = hardware.parse_accelerator(name, memory)
    if accelerator.family is None:
        from_system = hardware.parse_accelerator(system_name, memory)
        if from_system.family is not None:
            return from_system
    return accelerator


def hardware_features(systems: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Normalised hardware features per system description, and the notes on values that became missing.

    A CPU-only system (no accelerator named, zero accelerators per node) trains on its host processors: they
    are then its accelerators, counted per socket, with family "<CPU model> (CPU)", so such results stay
    comparable rather than dropping out.
    """
    frame = _parsed_features(systems)
    cpu_only = (frame["accelerator_family"].isna() & frame["host_cpu_model"].notna()
                & _field(systems, "accelerators_per_node").map(_is_zero).to_numpy())
    frame, notes = drop_implausible(frame, systems, zero_allowed=dict.fromkeys(CPU_ONLY_ZEROS, cpu_only))
    frame.loc[cpu_only, "accelerator_vendor"] = frame.loc[cpu_only, "host_cpu_vendor"]
    frame.loc[cpu_only, "accelerator_family"] = frame.loc[cpu_only, "host_cpu_model"] + " (CPU)"
    frame.loc[cpu_only, "accelerator_form_factor"] = "CPU socket"
    frame.loc[cpu_only, "accelerators_per_node"] = frame.loc[cpu_only, "host_sockets"]
    frame["accelerator_count"] = frame["n_nodes"] * frame["accelerators_per_node"]
    return frame.drop(columns=["host_sockets"]), notes


def _parsed_features(systems: pd.DataFrame) -> pd.DataFrame:
    accelerators = [_accelerator(name, memory, system_name) for name, memory, system_name in
                    zip(_field(systems, "accelerator_model_name"), _field(systems, "accelerator_memory_capacity"),
                        _field(systems, "system_name"))]
    cpus = [hardware.parse_host_cpu(model, cores, sockets) for model, cores, sockets in
            zip(_field(systems, "host_processor_model_name"), _field(systems, "host_processor_core_count"),
                _field(systems, "host_processors_per_node"))]
    intra = [hardware.parse_interconnect(value) for value in _field(systems, "accelerator_interconnect")]
    inter = [hardware.parse_interconnect(value) for value in _field(systems, "host_networking")]
    nodes = _field(systems, "number_of_nodes", "number of nodes").map(hardware.parse_count)
    per_node = _field(systems, "accelerators_per_node").map(hardware.parse_count)
    frame = pd.DataFrame({
        "round": systems["round"], "submitter": systems["submitter"], "system": systems["system"],
        "availability": _field(systems, "status").map(availability.category),
        "accelerator_name": _field(systems, "accelerator_model_name"),
        "accelerator_vendor": [a.vendor for a in accelerators],
        "accelerator_family": [a.family for a in accelerators],
        "accelerator_form_factor": [a.form_factor for a in accelerators],
        "accelerator_memory_gib": [a.memory_gib for a in accelerators],
        "accelerator_year": [a.year for a in accelerators],
        "n_nodes": nodes, "accelerators_per_node": per_node,
        "host_cpu_vendor": [c.vendor for c in cpus], "host_cpu_model": [c.model for c in cpus],
        "host_cpu_cores": [c.cores_per_node for c in cpus],
        "host_memory_gib": _field(systems, "host_memory_capacity").map(hardware.parse_memory_gib),
        "interconnect_intra": [i.kind for i in intra], "interconnect_intra_gbps": [i.bandwidth_gbps for i in intra],
        "interconnect_inter": [i.kind for i in inter], "interconnect_inter_gbps": [i.bandwidth_gbps for i in inter],
        "framework": _field(systems, "framework").map(hardware.parse_framework),
    })
    frame["host_sockets"] = _field(systems, "host_processors_per_node").map(hardware.parse_count)
    numeric = ["accelerator_memory_gib", "accelerator_year", "n_nodes", "accelerators_per_node", "host_sockets",
               "host_cpu_cores", "host_memory_gib", "interconnect_intra_gbps", "interconnect_inter_gbps"]
    frame[numeric] = frame[numeric].astype("float64")
    return frame


def _is_zero(value: object) -> bool:
    try:
        return float(str(value).strip()) == 0
    except ValueError:
        return False


def drop_implausible(frame: pd.DataFrame, systems: pd.DataFrame,
                     zero_allowed: dict[str, pd.Series]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`frame` with each value of `PLAUSIBLE` that is negative, zero, unreadable or implausible set missing,
    and one note per such value (columns `NOTE_COLUMNS`). `zero_allowed` marks rows where a zero is
    meaningful (a CPU-only system has zero accelerators per node)."""
    frame = frame.copy()
    notes = []
    for spec in PLAUSIBLE:
        raw = _field(systems, *spec.fields)
        allowed = zero_allowed.get(spec.feature, pd.Series(False, index=frame.index))
        for index, field_name, value, parsed, zero_ok in zip(frame.index, _field_name(systems, spec.fields), raw,
                                                             frame[spec.feature], allowed):
            reason = _implausibility(spec, value, parsed, zero_ok)
            if reason is None:
                continue
            frame.at[index, spec.feature] = math.nan
            notes.append({"round": frame.at[index, "round"], "submitter": frame.at[index, "submitter"],
                          "system": frame.at[index, "system"], "field": field_name, "value": value,
                          "reason": reason})
    table = pd.DataFrame(notes, columns=NOTE_COLUMNS).sort_values(["round", "submitter", "system", "field"])
    return frame, table.reset_index(drop=True)


def _implausibility(spec: Plausible, value: object, parsed: float, zero_ok: bool) -> str | None:
    """Why a description value gives no feature value, or None when it is fine (or simply not stated)."""
    if hardware.is_missing(value):
        return None
    text = str(value)
    leading = LEADING_NUMBER.match(text)
    if leading is not None and leading.group(1):
        return f"negative {spec.unit}: treated as missing"
    if leading is not None and float(leading.group(2)) == 0 and not zero_ok:
        return f"zero {spec.unit}: treated as missing"
    if math.isnan(parsed):
        if spec.holds is None or zero_ok:
            return None
        if len(text.strip()) > hardware.MAX_TEXT_CHARS:
            return f"longer than {hardware.MAX_TEXT_CHARS} characters, not {spec.holds}: treated as missing"
        known = hardware.KNOWN_UNPARSEABLE.get(text.strip())
        return f"{known}: treated as missing" if known else f"cannot be read as {spec.holds}: treated as missing"
    if not spec.low <= parsed <= spec.high:
        return (f"implausible: {parsed:.6g} {spec.unit}, outside {spec.low:g} to {spec.high:g}: "
                "treated as missing")
    return None


def _lower_or_none(value: object) -> str | None:
    return None if hardware.is_missing(value) else str(value).strip().lower()
