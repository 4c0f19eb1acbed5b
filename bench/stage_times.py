"""Wall and CPU seconds of the analysis stages, each run as DVC runs it (`python -m pipeline.stages.<stage>`), on this
checkout's data (run the pipeline up to `features` first). The stages rewrite their own outputs, the same bytes.

    python bench/stage_times.py [STAGE ...]     # default: importance kscan cluster findings rank backtest decide buyer

CPU is user + system time of the stage and its worker processes (on two cores a stage's wall time cannot fall
below half of it). A `cluster.k` change reruns cluster, rank and report: the cluster + rank line is their sum.
Nothing here asserts a target; machine load shows in the wall times, not in the CPU times.
"""
from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import arguments, format_table  # noqa: E402

STAGES = ["importance", "kscan", "cluster", "findings", "rank", "backtest", "decide", "buyer"]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(stage: str) -> tuple[float, float]:
    """Wall and CPU seconds of one stage; exits when it fails."""
    start, used = time.perf_counter(), children_cpu()
    done = subprocess.run([sys.executable, "-m", f"pipeline.stages.{stage}"], cwd=ROOT, capture_output=True,
                          text=True)
    if done.returncode:
        sys.exit(f"{stage} failed ({done.returncode}):\n{done.stderr}")
    return time.perf_counter() - start, children_cpu() - used


def main() -> None:
    stages = arguments(__doc__, (("stages",), {"nargs": "*", "metavar": "STAGE",
                                               "help": f"stages to time (default: {' '.join(STAGES)})"})).stages
    stages = stages or STAGES
    times = {stage: run(stage) for stage in stages}
    rows = [[stage, f"{wall:.1f}", f"{cpu:.1f}"] for stage, (wall, cpu) in times.items()]
    if {"cluster", "rank"} <= times.keys():
        rows.append(["cluster + rank", *(f"{times['cluster'][i] + times['rank'][i]:.1f}" for i in (0, 1))])
    rows.append(["total", *(f"{sum(value[i] for value in times.values()):.1f}" for i in (0, 1))])
    print(format_table(["stage", "wall s", "CPU s"], rows))


if __name__ == "__main__":
    main()
