"""Stage `features`: one row per scored result, with normalised hardware features and efficiency metrics.

    python -m pipeline.stages.features

Efficiency metrics (defined here, in README.md and in the report):
- `accelerator_hours` = accelerator_count x time_to_train_min / 60: the hardware time a result consumed.
- `series`: the scaling series of a result, "round/benchmark/division/submitter/family/form factor/framework":
  results that differ only in accelerator count (`SERIES_KEY`). Missing when the family or count is unknown.
- `speedup` = t_base / t within the series, where t_base is the best time at the series' smallest accelerator
  count (base_count). Missing for a result alone in its series or in a series of one accelerator count: there
  is nothing to scale against.
- `scaling_efficiency` = speedup / (accelerator_count / base_count): 1 is ideal linear scaling, below 1 is
  sublinear; above 1 (superlinear within the series) happens when the larger member also changed what the key
  does not see (nodes, interconnect, batch size).
- `relative_accelerator_hours` = the fewest accelerator-hours of any result of the same benchmark, round and
  division / this result's accelerator-hours: 1 is the most hardware-efficient result of its round, 0.5 used
  twice its hardware time. It compares submitters fairly within a round.
- `throughput_per_accelerator` = median training throughput of the result's converged runs (samples/s, see
  `pipeline.mlperf.logparse.RunFacts.throughput_samples_per_s`) / accelerator_count.

Divisions are "closed" or "open" whatever the spelling of the description (v1.0 PCL writes "close", see
`DIVISION_SPELLINGS`).

A description value that is negative, zero where a count or size must be positive, unreadable as the number it
should hold, or outside the plausible range of `PLAUSIBLE` (a typo or a unit mix-up such as "999999 TB") becomes
missing, never a guess, and gets a row in `data/processed/feature_notes.csv` saying why.
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from pipeline.core import paths, schemas
from pipeline.core.cli import stage_arguments
from pipeline.core.errors import cli
from pipeline.core.files import write_csv, write_parquet
from pipeline.mlperf import hardware

NOTE_COLUMNS = ["round", "submitter", "system", "field", "value", "reason"]
# A scaling series: one round, benchmark, division, submitter, accelerator family and form factor and software
# stack; its members differ only in accelerator count.
SERIES_KEY = ["round", "benchmark", "division", "submitter", "accelerator_family", "accelerator_form_factor",
              "framework"]
# The results a round-relative metric compares: the same benchmark, round and division.
ROUND_GROUP = ["round", "benchmark", "division"]
# A CPU-only system states zero accelerators, and may state zero accelerator memory.
CPU_ONLY_ZEROS = ("accelerators_per_node", "accelerator_memory_gib")
# The number a value starts with, sign included: "-8", "0 GB", "- 80GB".
LEADING_NUMBER = re.compile(r"^\s*(-\s*)?(\d+(?:\.\d+)?)")
# Division spellings of published descriptions, lower-cased by the ingest: v1.0 PCL writes "close". Any other
# value is kept as written, so a new spelling shows in the report's Division column instead of vanishing.
DIVISION_SPELLINGS = {"close": "closed", "closed": "closed", "open": "open"}


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
        "availability": _field(systems, "status").map(_lower_or_none),
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


def normalise_division(division: pd.Series) -> pd.Series:
    """"closed" or "open" for every spelling of DIVISION_SPELLINGS (case and spaces aside), other values as
    they are, missing ones missing."""
    def one(value: object) -> object:
        if hardware.is_missing(value):
            return None
        return DIVISION_SPELLINGS.get(str(value).strip().lower(), value)

    return division.map(one).astype(object)


def series_ids(configurations: pd.DataFrame) -> pd.Series:
    """The scaling series of each row ("/"-joined `SERIES_KEY`, "-" for a missing part such as an unstated
    framework), or None where the accelerator family or count is unknown."""
    usable = configurations["accelerator_count"].notna() & configurations["accelerator_family"].notna()
    parts = configurations[SERIES_KEY].astype(object).where(configurations[SERIES_KEY].notna(), "-").astype(str)
    ids = parts.agg("/".join, axis=1) if len(parts) else pd.Series([], dtype=object, index=configurations.index)
    return ids.where(usable, None).astype(object)


def efficiency_metrics(configurations: pd.DataFrame) -> pd.DataFrame:
    """Add `series`, accelerator-hours, speed-up and scaling efficiency within the series, round-relative
    accelerator-hours and throughput per accelerator (see the module docstring for the definitions).

    Needs the columns of `SERIES_KEY`, `accelerator_count`, `time_to_train_min` (minutes) and
    `throughput_samples_per_s`; returns a copy with the metric columns added, rows in the same order.
    """
    missing = sorted(set([*SERIES_KEY, "accelerator_count", "time_to_train_min", "throughput_samples_per_s"])
                     - set(configurations.columns))
    if missing:
        raise ValueError(f"efficiency_metrics needs the columns {missing}")
    frame = configurations.copy()
    frame["series"] = series_ids(frame)
    frame["accelerator_hours"] = frame["accelerator_count"] * frame["time_to_train_min"] / 60.0
    in_series = frame[frame["series"].notna()]
    smallest = in_series.groupby("series")["accelerator_count"].transform("min")
    base = (in_series[in_series["accelerator_count"] == smallest].groupby("series")
            .agg(base_count=("accelerator_count", "first"), base_time=("time_to_train_min", "min")))
    counts = in_series.groupby("series")["accelerator_count"].nunique()
    base = base[counts.reindex(base.index) > 1]  # one accelerator count: nothing to scale against
    frame = frame.join(base, on="series")
    frame["speedup"] = frame["base_time"] / frame["time_to_train_min"]
    frame["scaling_efficiency"] = frame["speedup"] / (frame["accelerator_count"] / frame["base_count"])
    best_hours = frame.groupby(ROUND_GROUP, dropna=False)["accelerator_hours"].transform("min")
    frame["relative_accelerator_hours"] = best_hours / frame["accelerator_hours"]
    frame["throughput_per_accelerator"] = frame["throughput_samples_per_s"] / frame["accelerator_count"]
    return frame.drop(columns=["base_count", "base_time"])


def build_configurations(systems: pd.DataFrame, results: pd.DataFrame,
                         runs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Scored results of catalogued benchmarks joined with their system's hardware features, and the notes on
    description values that became missing (see `drop_implausible`)."""
    scored = results[results["time_to_train_min"].notna() & results["benchmark_id"].notna()]
    throughput = (runs[runs["converged"]].groupby(["round", "submitter", "system", "benchmark"])
                  ["throughput_samples_per_s"].median().rename("throughput_samples_per_s"))
    frame = scored.rename(columns={"benchmark": "benchmark_folder", "benchmark_id": "benchmark"})
    # Before the efficiency baselines, which are per division: "close" results would otherwise form their own.
    frame = frame.assign(division=normalise_division(frame["division"]))
    frame = frame.join(throughput, on=["round", "submitter", "system", "benchmark_folder"])
    hardware, notes = hardware_features(systems)
    frame = frame.merge(hardware, on=["round", "submitter", "system"], how="inner", validate="many_to_one")
    frame = efficiency_metrics(frame)
    frame = frame[schemas.CONFIGURATION_COLUMNS].sort_values(["benchmark", "round", "submitter", "system"])
    return schemas.validate_configurations(frame.reset_index(drop=True)), notes


@cli
def main(argv: Sequence[str] | None = None) -> None:
    stage_arguments("pipeline.stages.features", __doc__, argv)
    systems = schemas.validate_systems(pd.read_parquet(paths.SYSTEMS))
    results = schemas.validate_results(pd.read_parquet(paths.RESULTS))
    runs = schemas.validate_runs(pd.read_parquet(paths.RUNS))
    configurations, notes = build_configurations(systems, results, runs)
    write_parquet(configurations, paths.CONFIGURATIONS)
    write_csv(notes, paths.FEATURE_NOTES)
    n_missing = int(configurations["accelerator_count"].isna().sum())
    print(f"{len(configurations)} configurations, {n_missing} without an accelerator count, "
          f"{len(notes)} description values set missing (see {paths.FEATURE_NOTES})")


if __name__ == "__main__":
    main()
