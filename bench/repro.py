"""Wall time of the pipeline as a DVC user feels it, from a clean clone of this repository, and the CPU time
behind it (of `dvc` and every process it runs: on two cores the wall time cannot fall below half of it).

    python bench/repro.py [--keep] [--stages]

Clones the committed HEAD beside this checkout (so params.yaml's `../shared/mlperf` mirror resolves the same
way), then times, each as one `dvc` command:
- a full `dvc repro` from nothing (the rounds come from the mirror, or are cloned when it lacks them), and
  whether it leaves the clone's `git status` clean (dvc.lock and the metrics byte-identical to the committed);
- a no-op `dvc repro` right after;
- a `cluster.k` change: params.yaml's `cluster.k` set to 6 as `dvc exp run -S cluster.k=6` sets it (DVC's own
  `apply_overrides`: one line of params.yaml changes), then `dvc repro` (what the experiment runs, without its
  bookkeeping), followed by the `dvc metrics diff` it leaves;
- with --stages, each stage alone, forced (`dvc repro -f -s STAGE`), in pipeline order.
The clone is removed afterwards unless --keep. Each row also prints the 1-minute load average before it
started: on a 2-core machine a load above about 0.5 means something else was running and the wall time is
inflated. Nothing here asserts a target: the figures are printed for the docs and for the reader to judge.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml
from dvc.utils.hydra import apply_overrides

ROOT = Path(__file__).resolve().parents[1]


def timed(command: list[str], cwd: Path) -> tuple[float, float, float]:
    """Wall seconds of `command`, the CPU seconds (user and system) of it and every process it waited for, and the
    1-minute load average just before it started."""
    load = os.getloadavg()[0]
    start, used = time.perf_counter(), _children_cpu()
    completed = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    elapsed, cpu = time.perf_counter() - start, _children_cpu() - used
    if completed.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({completed.returncode}):\n{completed.stdout}\n{completed.stderr}")
    return elapsed, cpu, load


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def stages_in_order(clone: Path) -> list[str]:
    return list(yaml.safe_load((clone / "dvc.yaml").read_text(encoding="utf-8"))["stages"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the clone (for a look at its outputs)")
    parser.add_argument("--stages", action="store_true", help="also time each stage alone, forced")
    args = parser.parse_args()
    clone = ROOT.parent / f".{ROOT.name}-repro-bench"
    if clone.exists():
        shutil.rmtree(clone)
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    try:
        rows = [("full dvc repro, clean clone", timed(["dvc", "repro"], clone))]
        changed = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True,
                                 check=True).stdout.split("\n")
        changed = [line for line in changed if line.strip()]
        print("after the full repro, git status in the clone is "
              + ("clean: dvc.lock and the metrics are the committed ones, byte for byte" if not changed
                 else "not clean:\n  " + "\n  ".join(changed)))
        rows.append(("no-op dvc repro", timed(["dvc", "repro"], clone)))
        params = clone / "params.yaml"
        original = params.read_text(encoding="utf-8")
        apply_overrides(params, ["cluster.k=6"])
        changed_lines = sum(old != new for old, new in zip(original.splitlines(),
                                                           params.read_text(encoding="utf-8").splitlines()))
        rows.append(("cluster.k 5 -> 6, dvc repro", timed(["dvc", "repro"], clone)))
        diff = subprocess.run(["dvc", "metrics", "diff"], cwd=clone, capture_output=True, text=True).stdout
        print(f"cluster.k=6 changed {changed_lines} line of params.yaml; dvc metrics diff then prints:\n{diff}")
        params.write_text(original, encoding="utf-8")
        timed(["dvc", "repro"], clone)  # back to the committed outputs
        if args.stages:
            rows += [(f"stage {stage} alone (-f -s)", timed(["dvc", "repro", "-f", "-s", stage], clone))
                     for stage in stages_in_order(clone)]
    finally:
        if not args.keep:
            shutil.rmtree(clone, ignore_errors=True)
    width = max(len(name) for name, _ in rows)
    print(f"{os.cpu_count()} CPUs; load: the 1-minute load average before the command")
    print(f"{'':<{width}}  {'wall':>9}  {'CPU':>9}  {'load':>5}")
    for name, (seconds, cpu, load) in rows:
        print(f"{name:<{width}}  {seconds:7.1f} s  {cpu:7.1f} s  {load:5.2f}")


if __name__ == "__main__":
    main()
