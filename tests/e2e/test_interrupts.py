"""Ctrl-C loses nothing: every stage interrupted part way (SIGINT to its process group, as a terminal sends it)
prints one line, no traceback, exits 130, and leaves its previous outputs as they were, or, when the signal came
while it wrote them, every new one whole (dvc.yaml's `persist` keeps DVC from deleting them first)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from pipeline.core.errors import INTERRUPTED, cli
from tests.conftest import ROOT, run_stage

# The stages after fetch, in dvc.yaml's order (validate and fetch read the mirror: tests/e2e/test_mistakes.py).
STAGES = ("features", "importance", "kscan", "cluster", "findings", "rank", "backtest", "decide", "buyer",
          "assets", "report")
INPUTS = ("params.yaml", "data/interim")
MARK = b"\n(previous)\n"  # appended to each previous output file; a folder gets a file of this name
MARKER = ".previous"


def stage_outputs(stage: str) -> list[str]:
    """The outputs of `stage`, as dvc.yaml names them (metrics included)."""
    entry = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"][stage]
    return [next(iter(out)) if isinstance(out, dict) else out
            for key in ("outs", "metrics") for out in entry.get(key, [])]


def files_under(project: Path, outputs: list[str]) -> dict[str, bytes]:
    """Every file of `outputs` (folders walked) by path relative to `project`."""
    found = {}
    for name in outputs:
        path = project / name
        for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
            if file.is_file():
                found[file.relative_to(project).as_posix()] = file.read_bytes()
    return found


def mark(project: Path, outputs: list[str]) -> None:
    for name in outputs:
        path = project / name
        if path.is_dir():
            (path / MARKER).write_bytes(MARK)
        else:
            path.write_bytes(path.read_bytes() + MARK)


def restore(project: Path, outputs: list[str], reference: dict[str, bytes]) -> None:
    for name in outputs:
        path = project / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    for name, data in reference.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_bytes(data)


def interrupt(stage: str, project: Path, after: float) -> subprocess.CompletedProcess[str]:
    """Run the stage in its own process group and send that group SIGINT `after` seconds in."""
    process = subprocess.Popen([sys.executable, "-m", f"pipeline.stages.{stage}"], cwd=project, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT), "CI": "true"})
    time.sleep(after)
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@pytest.mark.slow
def test_ctrl_c_keeps_each_stage_s_previous_outputs(tmp_path: Path) -> None:
    if not (ROOT / "data" / "interim" / "results.parquet").is_file():
        pytest.skip("needs data/interim/ (dvc pull or dvc repro ingest)")
    project = tmp_path / "project"
    for name in INPUTS:
        source, target = ROOT / name, project / name
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    seconds = {}
    for stage in STAGES:  # the previous run: its outputs and how long each stage takes
        started = time.monotonic()
        run_stage(stage, cwd=project, env={"CI": "true"})
        seconds[stage] = time.monotonic() - started

    problems = []
    fraction = 0.3  # of the stage's time: past its imports (Ctrl-C there is quiet too) for most stages
    for stage in STAGES:
        outputs = stage_outputs(stage)
        reference = files_under(project, outputs)
        mark(project, outputs)
        previous = files_under(project, outputs)
        done = interrupt(stage, project, fraction * seconds[stage])
        left = files_under(project, outputs)
        parents = {(project / name).parent for name in outputs}
        temporaries = [path.name for parent in parents for path in parent.iterdir()
                       if path.name.startswith(".") and ".tmp" in path.name]
        if done.returncode not in (130, -signal.SIGINT):  # -2: stopped in its imports, by the signal itself
            problems.append(f"{stage}: exit status {done.returncode} after {fraction * seconds[stage]:.1f} s of "
                            f"{seconds[stage]:.1f} s, not 130 or -2 (interrupted)")
        if "Traceback" in done.stderr or len(done.stderr.strip().splitlines()) != 1:
            problems.append(f"{stage}: printed on stderr {done.stderr!r}, not one line")
        if left != previous and left != reference:
            changed = sorted(name for name in left.keys() | previous.keys() if left.get(name) != previous.get(name))
            problems.append(f"{stage}: outputs neither the previous nor the new ones: {changed}")
        if temporaries:
            problems.append(f"{stage}: temporaries left {temporaries}")
        restore(project, outputs, reference)
    assert not problems, "\n".join(problems)


class _InterruptOnDefinition:
    """A class attribute whose `__set_name__` is where Ctrl-C lands, as in a dataclass field while a library
    defines its classes on import (pandera's, under the cluster stage: Python 3.11 wraps it in a RuntimeError)."""

    def __set_name__(self, owner: type, name: str) -> None:
        raise KeyboardInterrupt


def test_ctrl_c_wrapped_by_a_library_import_is_still_one_line_and_exit_130(capsys) -> None:
    @cli
    def main() -> None:
        class Defined:
            field = _InterruptOnDefinition()

    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == INTERRUPTED
    assert capsys.readouterr().err.count("\n") == 1


def test_a_wrapped_ctrl_c_outside_a_stage_s_main_is_one_line_and_exit_130() -> None:
    """While a stage imports its libraries at the top of its module, before its wrapped main()."""
    script = "import pipeline\nraise RuntimeError('import') from KeyboardInterrupt"
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True)
    assert (done.returncode, done.stderr.count("\n"), done.stderr.startswith("interrupted: ")) == (INTERRUPTED, 1, True)


def test_other_failures_keep_their_traceback() -> None:
    done = subprocess.run([sys.executable, "-c", "import pipeline\nraise RuntimeError('a bug')"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" in done.stderr and "a bug" in done.stderr
