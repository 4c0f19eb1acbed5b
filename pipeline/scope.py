"""The analysis scope of params.yaml (`analysis:`), applied the same way by every analysis stage."""
from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .benchmarks import BY_ID
from .errors import ParamsError, UsageError

CONFIGURATIONS = Path("data/processed/configurations.parquet")
# Hardware features the analysis may use; the importance stage selects among them.
NUMERIC_FEATURES = [
    "accelerator_count", "n_nodes", "accelerators_per_node", "accelerator_memory_gib", "accelerator_year",
    "host_cpu_cores", "host_memory_gib", "interconnect_intra_gbps", "interconnect_inter_gbps",
]
CATEGORICAL_FEATURES = [
    "accelerator_vendor", "accelerator_family", "accelerator_form_factor", "host_cpu_vendor", "interconnect_intra",
    "interconnect_inter", "framework",
]


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
