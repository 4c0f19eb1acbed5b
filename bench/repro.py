"""Wall time of the pipeline as a DVC user feels it, from a clean clone of this repository, and the CPU time
behind it (of `dvc` and every process it runs: on two cores the wall time cannot fall below half of it).

    python bench/repro.py [--keep] [--stages] [--tests] [--timeline]

Clones the committed HEAD beside this checkout (so params.yaml's `../shared/mlperf` mirror resolves the same
way), then times, each as one `dvc` command:
- a full `dvc repro` from nothing (the rounds come from the mirror, or are cloned when it lacks them), and
  whether it leaves the clone's `git status` clean (dvc.lock and the metrics byte-identical to the committed);
- a no-op `dvc repro` right after;
- a `cluster.k` change: params.yaml's `cluster.k` set to 6 as `dvc exp run -S cluster.k=6` sets it (DVC's own
  `apply_overrides`: one line of params.yaml changes), then `dvc repro` (what the experiment runs, without its
  bookkeeping), followed by the `dvc metrics diff` it leaves;
- with --tests, the default test lane (`python -m pytest -q -p no:cacheprovider`) in the clone, on its outputs;
- with --stages, each stage alone, forced (`dvc repro -f -s STAGE`), in pipeline order;
- with --timeline, where the full repro's wall time went: each stage's process (`python -m pipeline.stages.<stage>`,
  from its interpreter's start to its exit, imports included) and the time before it that was DVC's own (its
  start, the stage's status, hashing and caching outputs, rewriting dvc.lock). A `sitecustomize` module on
  PYTHONPATH, for that command only, writes each stage process's start and end times.
The four rows with a target (issue 39: full repro 45 s, `cluster.k` change 10 s, no-op 1.5 s, default lane
3 minutes, wall time on this 2-core machine) print it and whether the wall time met it.
The clone is removed afterwards unless --keep. Each row also prints the 1-minute load average before it
started: on a 2-core machine a load above about 0.5 means something else was running and the wall time is
inflated. Nothing here asserts a target: the figures are printed for the docs and for the reader to judge.
"""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from dvc.utils.hydra import apply_overrides

if __package__ in (None, ""):  # run as `python bench/<name>.py`: the project root first, as under pytest
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import arguments

ROOT = Path(__file__).resolve().parents[1]
FULL, NO_OP, CLUSTER_K, TESTS = ("full dvc repro, clean clone", "no-op dvc repro", "cluster.k 5 -> 6, dvc repro",
                                 "default test lane (pytest)")
TARGET_SECONDS = {FULL: 45.0, NO_OP: 1.5, CLUSTER_K: 10.0, TESTS: 180.0}
# Imported by every Python process of the full repro when --timeline puts its folder on PYTHONPATH: a stage's
# process appends "stage start end" (epoch seconds) to the log at exit; forked workers leave by os._exit and
# write nothing.
TIMELINE_HOOK = """import atexit, sys, time

_started = time.time()


def _record():
    argv = getattr(sys, "orig_argv", sys.argv)
    if "-m" in argv[:-1] and argv[argv.index("-m") + 1].startswith("pipeline.stages."):
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(f"{argv[argv.index('-m') + 1].rpartition('.')[2]} {_started} {time.time()}\\n")


atexit.register(_record)
"""


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """Wall seconds of `command` (run with `env`, else this process' environment), the CPU seconds (user and
    system) of it and every process it waited for, and the 1-minute load average just before it started."""
    load = os.getloadavg()[0]
    start, used = time.perf_counter(), _children_cpu()
    completed = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env)
    elapsed, cpu = time.perf_counter() - start, _children_cpu() - used
    if completed.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({completed.returncode}):\n{completed.stdout}\n{completed.stderr}")
    return elapsed, cpu, load


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def stages_in_order(clone: Path) -> list[str]:
    return list(yaml.safe_load((clone / "dvc.yaml").read_text(encoding="utf-8"))["stages"])


def timed_with_timeline(command: list[str], cwd: Path) -> tuple[tuple[float, float, float], list[str]]:
    """`timed(command)` with each stage process' start and end recorded (TIMELINE_HOOK), and the lines that say
    where the wall time went."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "stages.log"
        (Path(folder) / "sitecustomize.py").write_text(f"LOG = {str(log)!r}\n{TIMELINE_HOOK}", encoding="utf-8")
        path = os.pathsep.join(part for part in (folder, os.environ.get("PYTHONPATH", "")) if part)
        started = time.time()
        figures = timed(command, cwd, {**os.environ, "PYTHONPATH": path})
        ended = started + figures[0]
        stages = [(name, float(start), float(end)) for name, start, end in
                  (line.split() for line in log.read_text(encoding="utf-8").splitlines())]
    lines = [f"{'stage':<12}  {'DVC before':>10}  {'process':>8}"]
    previous = started
    for name, start, end in sorted(stages, key=lambda stage: stage[1]):
        lines.append(f"{name:<12}  {start - previous:8.2f} s  {end - start:6.2f} s")
        previous = end
    processes = sum(end - start for _, start, end in stages)
    lines.append(f"{'(after)':<12}  {ended - previous:8.2f} s")
    lines.append(f"{len(stages)} stage processes {processes:.1f} s, DVC's own {figures[0] - processes:.1f} s, "
                 f"of {figures[0]:.1f} s")
    return figures, lines


def main() -> None:
    args = arguments(
        __doc__, (("--keep",), {"action": "store_true", "help": "keep the clone (for a look at its outputs)"}),
        (("--stages",), {"action": "store_true", "help": "also time each stage alone, forced"}),
        (("--tests",), {"action": "store_true", "help": "also time the default test lane in the clone"}),
        (("--timeline",), {"action": "store_true",
                           "help": "also print where the full repro's time went: each stage's process and DVC's own"}))
    clone = ROOT.parent / f".{ROOT.name}-repro-bench"
    if clone.exists():
        shutil.rmtree(clone)
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    try:
        timeline: list[str] = []
        if args.timeline:
            figures, timeline = timed_with_timeline(["dvc", "repro"], clone)
        else:
            figures = timed(["dvc", "repro"], clone)
        rows = [(FULL, figures)]
        changed = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True,
                                 check=True).stdout.split("\n")
        changed = [line for line in changed if line.strip()]
        print("after the full repro, git status in the clone is "
              + ("clean: dvc.lock and the metrics are the committed ones, byte for byte" if not changed
                 else "not clean:\n  " + "\n  ".join(changed)))
        rows.append((NO_OP, timed(["dvc", "repro"], clone)))
        params = clone / "params.yaml"
        original = params.read_text(encoding="utf-8")
        apply_overrides(params, ["cluster.k=6"])
        changed_lines = sum(old != new for old, new in zip(original.splitlines(),
                                                           params.read_text(encoding="utf-8").splitlines()))
        rows.append((CLUSTER_K, timed(["dvc", "repro"], clone)))
        diff = subprocess.run(["dvc", "metrics", "diff"], cwd=clone, capture_output=True, text=True).stdout
        print(f"cluster.k=6 changed {changed_lines} line of params.yaml; dvc metrics diff then prints:\n{diff}")
        params.write_text(original, encoding="utf-8")
        timed(["dvc", "repro"], clone)  # back to the committed outputs
        if args.tests:
            rows.append((TESTS, timed([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], clone)))
        if args.stages:
            rows += [(f"stage {stage} alone (-f -s)", timed(["dvc", "repro", "-f", "-s", stage], clone))
                     for stage in stages_in_order(clone)]
    finally:
        if not args.keep:
            shutil.rmtree(clone, ignore_errors=True)
    if timeline:
        print("where the full repro's wall time went:\n  " + "\n  ".join(timeline))
    width = max(len(name) for name, _ in rows)
    print(f"{os.cpu_count()} CPUs; load: the 1-minute load average before the command")
    print(f"{'':<{width}}  {'wall':>9}  {'CPU':>9}  {'load':>5}  {'target':>8}")
    for name, (seconds, cpu, load) in rows:
        target = TARGET_SECONDS.get(name)
        verdict = "" if target is None else f"  {target:6.1f} s  {'met' if seconds <= target else 'NOT MET'}"
        print(f"{name:<{width}}  {seconds:7.1f} s  {cpu:7.1f} s  {load:5.2f}{verdict}")


if __name__ == "__main__":
    main()
