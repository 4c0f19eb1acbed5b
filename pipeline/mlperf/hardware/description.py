"""What a system description says about its hardware: one row of normalised hardware features per description.

The parsers of `pipeline.mlperf.hardware.freetext` read each free-text field; this module applies them to the ingest's
systems table, turns a CPU-only system's host processors into its accelerators, and sets missing (with a note)
every value that is negative, zero where a count or size must be positive, unreadable as the number it should
hold, or outside the plausible range of `PLAUSIBLE` (a typo or a unit mix-up such as "999999 TB"), never a guess.

Two values are then checked against the package's reference tables, because the descriptions state them in
several conventions (`check_against_tables`):
- interconnect_intra_gbps is per accelerator and direction: the rate of the system's accelerator family, form
  factor and stated link kind in links.csv. A stated rate that differs (both directions, the node's total, a
  wrong generation) is replaced by the table's, and so is a link named without a rate; a family or kind the
  table lacks keeps what the text says.
- host_cpu_cores is per node: sockets x the model's cores per socket in cpus.csv. A stated count that differs
  (threads, a node total written per processor, a cloud VM's share) is replaced, and a model named with its
  sockets but no count gets the product; a model the table lacks keeps the description's arithmetic.
Each replacement is a note. A host network that names only management or storage NICs gives no inter-node kind
or rate, also with a note. The notes are the rows of `data/processed/feature_notes.csv` (columns
`NOTE_COLUMNS`).
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from pipeline.mlperf import availability
from pipeline.mlperf.hardware import accelerators, cpus, freetext, links

NOTE_COLUMNS = ["round", "submitter", "system", "field", "value", "reason"]
# A CPU-only system states zero accelerators, and may state zero accelerator memory.
CPU_ONLY_ZEROS = ("accelerators_per_node", "accelerator_memory_gib")
# The number a value starts with, sign included: "-8", "0 GB", "- 80GB".
LEADING_NUMBER = re.compile(r"^\s*(-\s*)?(\d+(?:\.\d+)?)")
# NVIDIA's superchips pair their GPUs with Grace CPUs, whose cores are Arm Neoverse V2: a description of one that
# names the core design ("Neoverse-V2") names the Grace.
GRACE_SUPERCHIPS = frozenset({"GH200", "GB200", "GB300"})
# The description fields the table checks read; a note names the first one present.
INTRA_FIELDS = ("accelerator_interconnect",)
CORE_FIELDS = ("host_processor_core_count", "host_processors_core_count")
INTER_FIELDS = ("host_networking",)
# What `hardware_features(..., details=True)` adds: the sockets, and how the inter-node bandwidth is made up.
DETAIL_COLUMNS = ["host_sockets", "interconnect_inter_ports", "interconnect_inter_port_gbps",
                  "interconnect_inter_grade"]
# Columns kept beside the features while they are checked, dropped before the frame is returned.
STATED_INTRA, STATED_CORES = "_stated_intra_gbps", "_stated_cpu_cores"
STATED_PER_PROCESSOR, STATED_VCPUS = "_stated_cores_per_processor", "_stated_vcpus"
NAME_MEMORY = "_name_memory_gib"
MEMORY_FIELDS = ("accelerator_memory_capacity",)
# Two memory sizes agree within this share (81559 MiB is an 80 GB part); beyond MEMORY_CONTRADICTION they name
# another part, since one part's physical and usable memory differ by less (B200: 192 GB, 180 GB usable).
MEMORY_TOLERANCE = 0.03
MEMORY_CONTRADICTION = 0.10
# Vendors whose server parts run two threads per core: a core count equal to the vCPU count counts threads.
SMT_VENDORS = frozenset({"Intel", "AMD"})


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
    Plausible("host_cpu_cores", CORE_FIELDS, 1, freetext.MAX_CORES_PER_NODE, "cores per node",
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


def _accelerator(name: object, memory: object, system_name: object) -> freetext.Accelerator:
    """The accelerator a description names; Google's early TPU descriptions say only "TPU", and their
    system_name ("tpu-v4-128") carries the generation."""
    accelerator = freetext.parse_accelerator(name, memory)
    if accelerator.family is None:
        from_system = freetext.parse_accelerator(system_name, memory)
        if from_system.family is not None:
            return from_system
    return accelerator


def hardware_features(systems: pd.DataFrame, details: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Normalised hardware features per system description, and the notes on values set missing or corrected;
    with `details`, also the columns DETAIL_COLUMNS (sockets per node, and the ports, the rate of one port and
    the InfiniBand grade behind interconnect_inter_gbps).

    A CPU-only system (no accelerator named, zero accelerators per node) trains on its host processors: they
    are then its accelerators, counted per socket, with family "<CPU model> (CPU)", so such results stay
    comparable rather than dropping out.
    """
    frame, network_notes = _parsed_features(systems)
    cpu_only = (frame["accelerator_family"].isna() & frame["host_cpu_model"].notna()
                & _field(systems, "accelerators_per_node").map(_is_zero).to_numpy())
    frame, implausible = drop_implausible(frame, systems, zero_allowed=dict.fromkeys(CPU_ONLY_ZEROS, cpu_only))
    frame, corrected = check_against_tables(frame, systems)
    notes = _sorted_notes([network_notes, implausible, corrected])
    frame.loc[cpu_only, "accelerator_vendor"] = frame.loc[cpu_only, "host_cpu_vendor"]
    frame.loc[cpu_only, "accelerator_family"] = frame.loc[cpu_only, "host_cpu_model"] + " (CPU)"
    frame.loc[cpu_only, "accelerator_form_factor"] = "CPU socket"
    frame.loc[cpu_only, "accelerators_per_node"] = frame.loc[cpu_only, "host_sockets"]
    frame["accelerator_count"] = frame["n_nodes"] * frame["accelerators_per_node"]
    helpers = [STATED_INTRA, STATED_CORES, STATED_PER_PROCESSOR, STATED_VCPUS, NAME_MEMORY]
    return frame.drop(columns=helpers if details else [*helpers, *DETAIL_COLUMNS]), notes


def _host_cpu(model: object, cores: object, sockets: object, family: str | None) -> freetext.HostCpu:
    cpu = freetext.parse_host_cpu(model, cores, sockets)
    if family in GRACE_SUPERCHIPS and cpu.model == "Neoverse-V2":
        return freetext.HostCpu(vendor="NVIDIA", model="Grace", cores_per_node=cpu.cores_per_node)
    return cpu


def _parsed_features(systems: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The features as the descriptions state them, and the notes on host networks that name no fabric."""
    accelerators = [_accelerator(name, memory, system_name) for name, memory, system_name in
                    zip(_field(systems, "accelerator_model_name"), _field(systems, "accelerator_memory_capacity"),
                        _field(systems, "system_name"))]
    cpus = [_host_cpu(model, cores, sockets, accelerator.family) for model, cores, sockets, accelerator in
            zip(_field(systems, "host_processor_model_name"), _field(systems, *CORE_FIELDS),
                _field(systems, "host_processors_per_node"), accelerators)]
    intra = [freetext.parse_interconnect(value) for value in _field(systems, "accelerator_interconnect")]
    inter = [freetext.parse_interconnect(value) for value in _field(systems, "host_networking")]
    nodes = _field(systems, "number_of_nodes", "number of nodes").map(freetext.parse_count)
    per_node = _field(systems, "accelerators_per_node").map(freetext.parse_count)
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
        "host_memory_gib": _field(systems, "host_memory_capacity").map(freetext.parse_memory_gib),
        "interconnect_intra": [i.kind for i in intra], "interconnect_intra_gbps": [i.bandwidth_gbps for i in intra],
        "interconnect_inter": [i.kind for i in inter], "interconnect_inter_gbps": [i.bandwidth_gbps for i in inter],
        "framework": _field(systems, "framework").map(freetext.parse_framework),
    })
    frame["host_sockets"] = _field(systems, "host_processors_per_node").map(freetext.parse_count)
    frame["interconnect_inter_ports"] = [i.ports for i in inter]
    frame["interconnect_inter_port_gbps"] = [i.port_gbps for i in inter]
    frame["interconnect_inter_grade"] = [i.grade for i in inter]
    numeric = ["accelerator_memory_gib", "accelerator_year", "n_nodes", "accelerators_per_node", "host_sockets",
               "host_cpu_cores", "host_memory_gib", "interconnect_intra_gbps", "interconnect_inter_gbps",
               "interconnect_inter_ports", "interconnect_inter_port_gbps"]
    frame[numeric] = frame[numeric].astype("float64")
    frame[STATED_INTRA] = frame["interconnect_intra_gbps"]
    frame[NAME_MEMORY] = pd.Series([a.name_memory_gib for a in accelerators], index=frame.index, dtype="float64")
    frame[STATED_CORES] = frame["host_cpu_cores"]
    frame[STATED_PER_PROCESSOR] = _field(systems, *CORE_FIELDS).map(freetext.parse_count).astype("float64")
    frame[STATED_VCPUS] = _field(systems, "host_processor_vcpu_count").map(freetext.parse_count).astype("float64")
    inter_stated = _stated(systems, INTER_FIELDS)
    network_notes = [_note(frame, index, inter_stated, INTER_FIELDS, f"{interconnect.note}: treated as missing")
                     for index, interconnect in zip(frame.index, inter) if interconnect.note is not None]
    return frame, pd.DataFrame(network_notes, columns=NOTE_COLUMNS)


def _stated(systems: pd.DataFrame, fields: tuple[str, ...]) -> tuple[pd.Series, pd.Series]:
    """Row by row, which of the spellings `fields` a description states (`_field_name`) and its value
    (`_field`): worked out once for all the notes on those fields."""
    return _field_name(systems, fields), _field(systems, *fields)


def _note(frame: pd.DataFrame, index: object, stated: tuple[pd.Series, pd.Series], fields: tuple[str, ...],
          reason: str) -> dict[str, object]:
    """A row of the notes table on the value of the first of `fields` present in row `index`; `stated` is
    `_stated(systems, fields)`."""
    names, values = stated
    return {"round": frame.at[index, "round"], "submitter": frame.at[index, "submitter"],
            "system": frame.at[index, "system"], "field": names.at[index] or fields[0],
            "value": values.at[index], "reason": reason}


def _sorted_notes(tables: list[pd.DataFrame]) -> pd.DataFrame:
    notes = pd.concat([table for table in tables if len(table)], ignore_index=True) \
        if any(len(table) for table in tables) else pd.DataFrame(columns=NOTE_COLUMNS)
    return notes.sort_values(["round", "submitter", "system", "field", "reason"], kind="stable").reset_index(drop=True)


# ------------------------------------------------------------------------------------------ reference tables

def check_against_tables(frame: pd.DataFrame, systems: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`frame` with interconnect_intra_gbps and host_cpu_cores set to the values of links.csv and cpus.csv where
    those tables know the hardware and the description states another value or none (see the module
    docstring), and one note per value set. `frame` carries the values as stated (before `drop_implausible`) in
    the STATED_INTRA and STATED_CORES columns: a value dropped as implausible is not filled in."""
    frame = frame.copy()
    notes = []
    stated = {fields: _stated(systems, fields) for fields in (INTRA_FIELDS, CORE_FIELDS, MEMORY_FIELDS)}
    # Rows as plain dicts: a Series per row (iterrows) costs more than every check made on it.
    for index, row in zip(frame.index, frame.to_dict("records")):
        intra = _checked_intra(row)
        if intra is not None:
            frame.at[index, "interconnect_intra"], frame.at[index, "interconnect_intra_gbps"] = intra[:2]
            notes.append(_note(frame, index, stated[INTRA_FIELDS], INTRA_FIELDS, intra[2]))
        cores = _checked_cores(row)
        if cores is not None:
            frame.at[index, "host_cpu_cores"] = cores[0]
            notes.append(_note(frame, index, stated[CORE_FIELDS], CORE_FIELDS, cores[1]))
        memory = _checked_memory(row)
        if memory is not None:
            frame.at[index, "accelerator_memory_gib"] = memory[0]
            notes.append(_note(frame, index, stated[MEMORY_FIELDS], MEMORY_FIELDS, memory[1]))
    return frame, pd.DataFrame(notes, columns=NOTE_COLUMNS)


def _known(value: object) -> bool:
    return isinstance(value, str) or (value is not None and not pd.isna(value))


def _checked_intra(row: Mapping[str, Any]) -> tuple[str, float, str] | None:
    """(the table's link kind, its rate, the note) when the row's intra-node link must change, else None."""
    family, form_factor, kind = (row[name] if _known(row[name]) else None for name in
                                 ("accelerator_family", "accelerator_form_factor", "interconnect_intra"))
    stated, value, per_node = row[STATED_INTRA], row["interconnect_intra_gbps"], row["accelerators_per_node"]
    link = links.intra_link(family, form_factor, kind, stated, per_node)
    if link is None:
        return None
    table = link.gbps_per_direction
    if link.link == kind:
        said = f"names {kind}"
    elif link.link == "RoCE":
        said = f"names Ethernet: the {family}'s on-chip Ethernet ports run RoCE"
    else:
        said = f"names {kind}, which is not how a {_hardware_name(family, form_factor)} reaches the other " \
               "accelerators of its node"
    if math.isnan(stated):
        rate = "without a rate"
    elif math.isnan(value):
        return None  # dropped as implausible, with its note
    elif math.isclose(value, table, rel_tol=1e-9):
        if link.link == kind:
            return None
        rate = f"at {value:g} Gb/s"
    else:
        rate = f"states {value:g} Gb/s, {_intra_mismatch(value, table, per_node)}"
    joined = f"{said} {rate}" if rate.startswith(("without", "at ")) else f"{said}; {rate}"
    return link.link, table, f"{joined}; {link.describe()} (links.csv): set to {table:g}"


def _checked_memory(row: Mapping[str, Any]) -> tuple[float, str] | None:
    """(the name's memory size, the note) when the memory field and the model name state sizes that differ by
    more than MEMORY_CONTRADICTION and the name's is the family's, as accelerators.csv gives it; else None (the
    field's size stands)."""
    stated, in_name, family = row["accelerator_memory_gib"], row[NAME_MEMORY], row["accelerator_family"]
    if math.isnan(stated) or math.isnan(in_name) or not _known(family):
        return None
    table = accelerators.specifications()
    if family not in table.index or math.isclose(stated, in_name, rel_tol=MEMORY_CONTRADICTION):
        return None
    specified = float(table.at[family, "memory_gib"])
    if not math.isclose(in_name, specified, rel_tol=MEMORY_TOLERANCE):
        return None
    return in_name, (f"states {stated:g} GiB per accelerator, but the model name states {in_name:g} GiB, the "
                     f"{family}'s memory (accelerators.csv): set to {in_name:g}")


def _hardware_name(family: str | None, form_factor: str | None) -> str:
    return " ".join(part for part in (family, form_factor) if part)


def _intra_mismatch(stated: float, table: float, per_node: float) -> str:
    """What a stated intra-node rate is, given the table's per-accelerator one-direction rate."""
    def near(multiple: float) -> bool:
        return math.isclose(stated, table * multiple, rel_tol=1e-6)
    if near(2):
        return "the sum of both directions"
    if not math.isnan(per_node) and per_node > 1 and near(per_node):
        return f"the total of the node's {per_node:g} accelerators"
    if not math.isnan(per_node) and per_node > 1 and near(2 * per_node):
        return f"both directions summed over the node's {per_node:g} accelerators"
    return "not this link's rate per accelerator and direction"


def _checked_cores(row: Mapping[str, Any]) -> tuple[float, str] | None:
    """(sockets x the model's cores per socket, the note) when the row's host cores must change, else None."""
    model = row["host_cpu_model"] if _known(row["host_cpu_model"]) else None
    per_socket, sockets = cpus.cores_per_socket(model), row["host_sockets"]
    if per_socket is None:
        return _thread_count(row, model)
    if math.isnan(sockets):
        return None
    expected = sockets * per_socket
    stated, value = row[STATED_CORES], row["host_cpu_cores"]
    where = f"the {model} has {per_socket} cores per socket (cpus.csv): {sockets:g} x {per_socket} = {expected:g}"
    if math.isnan(stated):
        return expected, f"no core count stated: {where}"
    if math.isnan(value) or value == expected:
        return None
    return expected, f"states {value:g} cores per node, {_cores_mismatch(value, expected, sockets)}; {where}: corrected"


def _thread_count(row: Mapping[str, Any], model: str | None) -> tuple[float, str] | None:
    """(NaN, the note) when a CPU the table lacks states as many cores per processor as vCPUs: on parts with two
    threads per core that is the thread count, and without the table the cores cannot be known."""
    per_processor, vcpus = row[STATED_PER_PROCESSOR], row[STATED_VCPUS]
    if (row["host_cpu_vendor"] not in SMT_VENDORS or math.isnan(row["host_cpu_cores"]) or math.isnan(vcpus)
            or per_processor != vcpus):
        return None
    return math.nan, (f"states {per_processor:g} cores per processor, as many as its {vcpus:g} vCPUs: threads, "
                      f"and cpus.csv has no {model or 'such part'} to give the cores: treated as missing")


def _cores_mismatch(stated: float, expected: float, sockets: float) -> str:
    """What a stated host core count is, given sockets x the part's cores per socket."""
    if stated == 2 * expected:
        also = ", or the node's total read as a per-processor count" if sockets == 2 else ""
        return f"twice the part's cores (threads counted as cores{also})"
    if sockets > 1 and stated == expected * sockets:
        return "the node's total read as a per-processor count"
    if stated < expected:
        return "fewer than the part has (a cloud VM's share of the host, or cores switched off)"
    return "more than the part has"


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
    if freetext.is_missing(value):
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
        if len(text.strip()) > freetext.MAX_TEXT_CHARS:
            return f"longer than {freetext.MAX_TEXT_CHARS} characters, not {spec.holds}: treated as missing"
        known = freetext.KNOWN_UNPARSEABLE.get(text.strip())
        return f"{known}: treated as missing" if known else f"cannot be read as {spec.holds}: treated as missing"
    if not spec.low <= parsed <= spec.high:
        return (f"implausible: {parsed:.6g} {spec.unit}, outside {spec.low:g} to {spec.high:g}: "
                "treated as missing")
    return None
