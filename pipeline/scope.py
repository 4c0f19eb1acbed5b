"""The analysis scope of params.yaml (`analysis:`), applied the same way by every analysis stage."""
from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .benchmarks import BY_ID, round_version
from .errors import ParamsError, UsageError

CONFIGURATIONS = Path("data/processed/configurations.parquet")
# When each round was published (year, month): the software era a result belongs to.
ROUND_PUBLISHED = {
    "v0.5": (2018, 12), "v0.6": (2019, 7), "v0.7": (2020, 7), "v1.0": (2021, 6), "v1.1": (2021, 12),
    "v2.0": (2022, 6), "v2.1": (2022, 11), "v3.0": (2023, 6), "v3.1": (2023, 11), "v4.0": (2024, 6),
    "v4.1": (2024, 11), "v5.0": (2025, 6), "v5.1": (2025, 11),
}
# The round as a numeric covariate of the importance model (fractional publication year): it takes the software
# progress between rounds so hardware features are not credited with it. Never a clustering feature.
ROUND_FEATURE = "round_year"
# Hardware features the analysis may use; the importance stage selects among them.
NUMERIC_FEATURES = [
    "accelerator_count", "n_nodes", "accelerators_per_node", "accelerator_memory_gib", "accelerator_year",
    "host_cpu_cores", "host_memory_gib", "interconnect_intra_gbps", "interconnect_inter_gbps",
]
CATEGORICAL_FEATURES = [
    "accelerator_vendor", "accelerator_family", "accelerator_form_factor", "host_cpu_vendor", "interconnect_intra",
    "interconnect_inter", "framework",
]


def round_published(round_: str) -> float:
    """The round's publication date as a fractional year; unknown rounds fall back to their version."""
    if round_ in ROUND_PUBLISHED:
        year, month = ROUND_PUBLISHED[round_]
        return year + (month - 1) / 12
    major, minor = round_version(round_)
    return 2020 + major + minor / 10


def check_benchmark(benchmark: str) -> None:
    if benchmark not in BY_ID:
        raise UsageError(f"unknown benchmark {benchmark!r}; choose one of: {', '.join(sorted(BY_ID))}")


def in_scope(configurations: pd.DataFrame, analysis: dict[str, Any], benchmark: str) -> pd.DataFrame:
    """The configurations of one benchmark that the analysis params select, with a usable accelerator count."""
    check_benchmark(benchmark)
    try:
        division, rounds, availability = analysis["division"], analysis["rounds"], analysis["availability"]
    except KeyError as missing:
        raise ParamsError(f"params.yaml analysis: needs {missing}; see the project's params.yaml") from None
    frame = configurations[(configurations["benchmark"] == benchmark) & configurations["accelerator_count"].notna()]
    if division != "all":
        frame = frame[frame["division"] == division]
    if rounds != "all":
        frame = frame[frame["round"].isin(rounds)]
    if availability != "all":
        frame = frame[frame["availability"].isin(availability)]
    return frame.reset_index(drop=True)


def benchmark_args(stage: str, doc: str, argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line of a per-benchmark stage: `python -m pipeline.<stage> BENCHMARK`."""
    parser = argparse.ArgumentParser(prog=f"python -m pipeline.{stage}", description=doc.split("\n\n")[0])
    parser.add_argument("benchmark", help="benchmark id of the catalogue, e.g. resnet")
    return parser.parse_args(argv)
