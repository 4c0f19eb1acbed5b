"""Within-series efficiencies above params `findings.superlinear_threshold`, each beside its series' base member,
with the reason the logs give (fewer samples to converge) or, failing that, what differs between the two system
descriptions (`superlinear_cases`, shown in each benchmark's section)."""
from __future__ import annotations

import math
from typing import Any

import pandas as pd

from pipeline.analysis.efficiency import MIN_BASE_COUNT
from pipeline.analysis.statistics.findings_result import plain
from pipeline.core.artifacts import Record


class SuperlinearCase(Record):
    """A result whose within-series scaling efficiency exceeds params `findings.superlinear_threshold`, beside its
    series' base member (`superlinear_cases`)."""

    round: str
    """The round (vX.Y)."""
    submitter: str
    """The submitter."""
    series: str
    """The scaling series (one round, one submitter, one system model)."""
    system: str
    """The result's system."""
    accelerators: float
    """The result's accelerators."""
    time_to_train_min: float
    """Minutes."""
    base_system: str
    """The series' base member: its fewest accelerators, then the fastest."""
    base_accelerators: float
    """The base member's accelerators."""
    base_time_to_train_min: float
    """The base member's time to train, minutes."""
    scaling_efficiency: float
    """Speed-up over the base / accelerator ratio (1 = linear; above 1: superlinear)."""
    throughput_scaling: float | None
    """Throughput per accelerator over the base's; None when the logs lack it."""
    convergence_work_ratio: float | None
    """Samples to converge over the base's (below 1: fewer); None when the logs lack it."""
    explained_by: str
    """`explain_superlinear`'s verdict: WORK, PARTLY_WORK, NOT_WORK or WORK_UNKNOWN."""
    reason: str
    """The reason in words."""


def superlinear_cases(frame: pd.DataFrame, threshold: float) -> list[SuperlinearCase]:
    """Every result whose within-series efficiency exceeds `threshold`, beside its series' base member, with the
    split of its efficiency (`throughput_scaling`, `convergence_work_ratio`, see
    `pipeline.analysis.configurations`), which of the two explains it (`explained_by`, `explain_superlinear`)
    and the reason in words."""
    cases = []
    over = frame[frame["scaling_efficiency"] > threshold]
    for _, row in over.sort_values(["round", "submitter", "system"]).iterrows():
        members = frame[(frame["series"] == row["series"]) & (frame["accelerator_count"] >= MIN_BASE_COUNT)]
        base = members[members["accelerator_count"] == members["accelerator_count"].min()].nsmallest(
            1, "time_to_train_min").iloc[0]
        explained_by, reason = explain_superlinear(base, row, threshold)
        cases.append(SuperlinearCase.model_validate(plain({
            "round": row["round"], "submitter": row["submitter"], "series": row["series"],
            "system": row["system"], "accelerators": float(row["accelerator_count"]),
            "time_to_train_min": float(row["time_to_train_min"]),
            "base_system": base["system"], "base_accelerators": float(base["accelerator_count"]),
            "base_time_to_train_min": float(base["time_to_train_min"]),
            "scaling_efficiency": float(row["scaling_efficiency"]),
            "throughput_scaling": _number(row.get("throughput_scaling")),
            "convergence_work_ratio": _number(row.get("convergence_work_ratio")),
            "explained_by": explained_by, "reason": reason})))
    return cases


# What a series key does not see and a system description states. Accelerators per node is left out: within one
# node it is the count itself.
REASON_FIELDS = (("n_nodes", "nodes"), ("host_cpu_model", "host CPU"),
                 ("accelerator_memory_gib", "accelerator memory (GiB)"), ("interconnect_intra", "intra-node link"),
                 ("interconnect_inter", "inter-node link"))
# `explain_superlinear`'s verdicts: the larger member needed few enough samples that its efficiency at the base's
# samples is at most the threshold; it needed fewer samples, but not that few; it did not need fewer; the logs
# do not say.
WORK, PARTLY_WORK, NOT_WORK, WORK_UNKNOWN = "convergence work", "partly convergence work", "throughput", "unknown"


def explain_superlinear(base: pd.Series, member: pd.Series, threshold: float) -> tuple[str, str]:
    """Why `member` scales superlinearly over its series' `base`: one of WORK, PARTLY_WORK, NOT_WORK and
    WORK_UNKNOWN, and the reason in words.

    With w the member's `convergence_work_ratio` (its samples to converge over the base's) and E its scaling
    efficiency, E x w is its efficiency had it needed the base's samples (E ~= throughput scaling / w). The work
    explains the efficiency when E x w is at most `threshold`: the page then cites the samples and no hardware.
    When w <= 1 / threshold without E x w falling that low, the samples explain a part and the description
    differences (`likely_reason`) are named for the rest; otherwise they are named alone.
    """
    efficiency = float(member["scaling_efficiency"])
    work = _number(member.get("convergence_work_ratio"))
    throughput = _number(member.get("throughput_scaling"))
    per_accelerator = "" if math.isnan(throughput) else f"; throughput per accelerator {throughput:.2f}× the base's"
    if math.isnan(work):
        return WORK_UNKNOWN, f"{likely_reason(base, member)} (samples to converge not in the logs)"
    samples = (f"needed {work:.2f} of the base's samples to converge, which explains {1 / work:.2f}× of its "
               f"{efficiency:.2f}×")
    if efficiency * work <= threshold:
        return WORK, f"fewer samples to converge: {samples}{per_accelerator}"
    differences = "; ".join(description_differences(base, member)) or (
        "the descriptions state the same nodes, host and links")
    if work <= 1 / threshold:
        return PARTLY_WORK, f"{samples}; the other {efficiency * work:.2f}×{per_accelerator}: {differences}"
    return NOT_WORK, (f"superlinear throughput: needed {work:.2f} of the base's samples{per_accelerator}: "
                      f"{differences}")


def description_differences(base: pd.Series, member: pd.Series) -> list[str]:
    """What differs between the base and the larger member among `REASON_FIELDS`, as "label before → after"."""
    differences = []
    for column, label in REASON_FIELDS:
        before, after = base.get(column), member.get(column)
        if (pd.isna(before) and pd.isna(after)) or before == after:
            continue
        differences.append(f"{label} {_text(before)} → {_text(after)}")
    return differences


def likely_reason(base: pd.Series, member: pd.Series) -> str:
    """"superlinear within series", and what differs between the base and the larger member (for a case whose
    samples to converge the logs do not give)."""
    detail = "; ".join(description_differences(base, member)) or (
        "same nodes, host and links: a larger batch or more converge-friendly tuning is the likely cause")
    return f"superlinear within series: {detail}"


def _number(value: Any) -> float:
    return math.nan if value is None or pd.isna(value) else float(value)


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "unknown"
    if isinstance(value, float) and value.is_integer():
        return f"{value:.0f}"
    return str(value)
