"""One piece of hardware, one value: how consistently the description features give each accelerator link, host
CPU and network port the same figure, and how they compare with a hand-checked golden sample.

Three checks, each over the systems that state the value (`CHECKS`):
- intra: interconnect_intra_gbps per accelerator family + form factor + link kind (A100 PCIe has a PCIe and an
  NVLink-bridge variant, so the kind is part of the hardware);
- cores: host cores per socket (host_cpu_cores / sockets) per CPU model;
- port: the rate of one inter-node port per fabric kind + InfiniBand speed grade (only where a grade is named:
  Ethernet NICs of one kind come in many speeds).
A system passes its check when its value is the one most systems of its group have (ties: the larger count,
then the smaller value). `bench/hardware_audit.py` prints the figures.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.mlperf.hardware import cpus, links
from pipeline.mlperf.hardware.description import hardware_features

KEY = ["round", "submitter", "system"]
# The golden sample's expected columns that are numbers; the others are compared as text.
NUMERIC_FIELDS = frozenset({"accelerator_memory_gib", "accelerator_year", "n_nodes", "accelerators_per_node",
                            "host_cpu_cores", "host_memory_gib", "interconnect_intra_gbps",
                            "interconnect_inter_gbps"})
GOLDEN_REL_TOL = 1e-6


@dataclass(frozen=True)
class Check:
    """One audit: the columns naming a piece of hardware and the column that should hold one value for it."""
    name: str
    hardware: tuple[str, ...]  # the columns naming one piece of hardware
    value: str  # the column that should hold one value per piece of hardware
    unit: str
    text: str  # the description field the value is read from, quoted in the reasons
    # The columns a system must have for the check to apply (beside `value`): a port rate is only held to its
    # InfiniBand grade, since Ethernet NICs of one kind come in many speeds.
    required: tuple[str, ...] = ()


CHECKS: tuple[Check, ...] = (
    Check("intra-node link per accelerator", ("accelerator_family", "accelerator_form_factor", "interconnect_intra"),
          "interconnect_intra_gbps", "Gb/s", "accelerator_interconnect"),
    Check("host cores per socket", ("host_cpu_model",), "host_cores_per_socket", "cores",
          "host_processor_model_name"),
    Check("inter-node port rate", ("interconnect_inter", "interconnect_inter_grade"), "interconnect_inter_port_gbps",
          "Gb/s", "host_networking", required=("interconnect_inter", "interconnect_inter_grade")),
)
TEXT_FIELDS = tuple(sorted({check.text for check in CHECKS}))


def audit_table(systems: pd.DataFrame) -> pd.DataFrame:
    """The description features of every system (`hardware_features` with its details), with
    host_cores_per_socket = host_cpu_cores / host_sockets, and the texts the checks' values come from."""
    features, _ = hardware_features(systems, details=True)
    features = features.assign(host_cores_per_socket=features["host_cpu_cores"] / features["host_sockets"])
    # A port rate is only a port rate of the bandwidth kept.
    features.loc[features["interconnect_inter_gbps"].isna(), "interconnect_inter_port_gbps"] = np.nan
    for column in TEXT_FIELDS:
        features[f"text_{column}"] = systems[column].to_numpy() if column in systems else None
    return features


def _label(values: tuple[object, ...]) -> str:
    return " / ".join("?" if _missing(value) else str(value) for value in values)


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _modal(values: pd.Series) -> float:
    counts = values.value_counts()
    return float(min(counts.index, key=lambda value: (-counts[value], value)))


def _applies(table: pd.DataFrame, check: Check) -> pd.DataFrame:
    """The systems a check applies to: with a value and every required column."""
    return table[table[[check.value, *check.required]].notna().all(axis=1)]


def consistency(table: pd.DataFrame, check: Check) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(groups, exceptions) of one check. `groups`: per piece of hardware with a value, `hardware` (its label),
    `systems`, `distinct` (how many values), `modal`, `values` ("3600 (170), 7200 (1)"), hardware lacking a
    required column included (shown, never exceptions). `exceptions`: the systems the check applies to whose
    value is not their group's modal one, with `value`, `modal` and `reason`."""
    stated = table[table[check.value].notna()]
    applies = _applies(table, check).index
    groups, exceptions = [], []
    for key, group in stated.groupby(list(check.hardware), dropna=False, sort=False):
        counts = group[check.value].value_counts()
        modal = _modal(group[check.value])
        label = _label(key if isinstance(key, tuple) else (key,))
        groups.append({"hardware": label, "systems": len(group), "distinct": len(counts), "modal": modal,
                       "values": ", ".join(f"{value:g} ({count})" for value, count in sorted(counts.items()))})
        for _, row in group[(group[check.value] != modal) & group.index.isin(applies)].iterrows():
            exceptions.append({**{column: row[column] for column in KEY}, "hardware": label,
                               "value": row[check.value], "modal": modal,
                               "reason": f"{row[check.value]:g} {check.unit} where {counts[modal]} of the "
                                         f"{len(group)} systems of {label} have {modal:g}; the description's "
                                         f"{check.text} is {row[f'text_{check.text}']!r}"})
    group_table = pd.DataFrame(groups, columns=["hardware", "systems", "distinct", "modal", "values"])
    exception_table = pd.DataFrame(exceptions, columns=[*KEY, "hardware", "value", "modal", "reason"])
    return (group_table.sort_values(["distinct", "systems", "hardware"], ascending=[False, False, True],
                                    kind="stable").reset_index(drop=True),
            exception_table.sort_values([*KEY], kind="stable").reset_index(drop=True))


def share_holding(table: pd.DataFrame, check: Check) -> tuple[int, int]:
    """(systems passing the check, systems it applies to)."""
    _, exceptions = consistency(table, check)
    applies = len(_applies(table, check))
    return applies - len(exceptions), applies


def unchecked(table: pd.DataFrame) -> pd.DataFrame:
    """The values the reference tables cannot check, which keep what the text says: per system, the `field`,
    the `hardware` and the `value` (NaN when none is stated) of an intra-node link named for a family, form
    factor and kind that links.csv lacks, and of a host core count of a CPU model that cpus.csv lacks."""
    rows = []
    for _, row in table.iterrows():
        kind = row["interconnect_intra"]
        if not _missing(kind):
            family, form = (None if _missing(row[c]) else row[c] for c in ("accelerator_family",
                                                                            "accelerator_form_factor"))
            if links.intra_link(family, form, kind, row["interconnect_intra_gbps"],
                                row["accelerators_per_node"]) is None:
                rows.append({**{c: row[c] for c in KEY}, "field": "interconnect_intra_gbps",
                             "hardware": _label((family, form, kind)), "value": row["interconnect_intra_gbps"]})
        model = row["host_cpu_model"]
        if not _missing(model) and cpus.cores_per_socket(model) is None and not _missing(row["host_cpu_cores"]):
            rows.append({**{c: row[c] for c in KEY}, "field": "host_cpu_cores", "hardware": model,
                         "value": row["host_cpu_cores"]})
    return pd.DataFrame(rows, columns=[*KEY, "field", "hardware", "value"])


def golden_mismatches(golden: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The golden sample's values the features miss: `field`, `expected`, `got` per system and field, over
    every golden column named like a feature (an empty golden cell is a value expected missing; numbers agree
    within GOLDEN_REL_TOL). A golden system the table lacks is one row with field "(description)"."""
    fields = [column for column in golden.columns if column not in KEY and column in table.columns]
    by_key = {tuple(row[KEY]): row for _, row in table.iterrows()}
    rows = []
    for _, expected_row in golden.iterrows():
        key = tuple(expected_row[KEY])
        row = by_key.get(key)
        if row is None:
            rows.append({**dict(zip(KEY, key)), "field": "(description)", "expected": "present", "got": "absent"})
            continue
        for field in fields:
            expected, got = expected_row[field], row[field]
            if not _agrees(field, expected, got):
                rows.append({**dict(zip(KEY, key)), "field": field, "expected": expected or "missing",
                             "got": "missing" if _missing(got) else got})
    return pd.DataFrame(rows, columns=[*KEY, "field", "expected", "got"])


def _agrees(field: str, expected: object, got: object) -> bool:
    expected_missing = expected is None or expected == "" or (isinstance(expected, float) and math.isnan(expected))
    if expected_missing or _missing(got):
        return expected_missing and _missing(got)
    if field in NUMERIC_FIELDS:
        return math.isclose(float(expected), float(got), rel_tol=GOLDEN_REL_TOL)  # type: ignore[arg-type]
    return str(got) == str(expected)
