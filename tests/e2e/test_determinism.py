"""Same inputs, same bytes: the order of files in an archive or on disk, the number of worker processes, a
repetition or a run killed part way and repeated change no output, from the ingest tables to clusters and ranking."""
from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipeline.analysis.configurations import build_configurations
from pipeline.analysis.statistics import clustering as cluster
from pipeline.analysis.statistics import ranking as rank
from pipeline.core.files import write_csv, write_parquet
from pipeline.mlperf import rounds
from pipeline.settings import ClusterSettings
from tests.conftest import ROOT, RoundFiles, assert_accounted, run_log, system_json, write_archive, write_folder

INGEST_OUTPUTS = ("systems.parquet", "runs.parquet", "results.parquet", "quarantine.csv", "tally.csv",
                  "summary_check.json")
ACCELERATORS = ("NVIDIA A100-SXM4-80GB", "NVIDIA H100-SXM5-80GB", "Intel Gaudi2")
CLUSTER_SETTINGS = ClusterSettings.model_validate({**yaml.safe_load((ROOT / "params.yaml").read_text())["cluster"],
                                                   "k": 3, "n_init": 3, "k_range": [2, 4], "bootstrap": 3})


def varied_round(n_systems: int = 12, runs: int = 5, padding: int = 0) -> RoundFiles:
    """Systems of several sizes, accelerators and submitters, with a few defects so that the quarantine list
    and the notes have rows to order; `padding` adds unrelated output lines to every log, as published logs
    have."""
    files: RoundFiles = {}
    noise = "".join(f"step {line}: loss 0.{line:04d}\n" for line in range(padding))
    for index in range(n_systems):
        submitter, system = f"Org{index % 3}", f"sys{index:03d}"
        nodes, per_node = 1 + index % 4, (2, 4, 8)[index % 3]
        files[f"{submitter}/systems/{system}.json"] = system_json(
            accelerators_per_node=per_node, nodes=nodes, accelerator_model_name=ACCELERATORS[index % 3],
            host_memory_capacity=f"{256 * (1 + index % 5)} GB")
        minutes = 200.0 / (nodes * per_node) ** 0.8
        for run in range(runs):
            files[f"{submitter}/results/{system}/resnet/result_{run}.txt"] = noise + run_log(minutes + run * 0.37)
    files["Org0/systems/sys000.json"] = str(files["Org0/systems/sys000.json"])[:-1] + ",}"
    files["Org1/results/sys001/resnet/result_0.txt"] = run_log(9.0)[:-30]
    files["Org2/results/sys002/resnet/notes.md"] = "extra"
    files["Org2/systems/sys999.json"] = system_json(accelerators_per_node=100000)
    return files


def archive_at(path: Path, files: RoundFiles) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_archive(path, files)


def shuffled(files: RoundFiles, seed: int) -> RoundFiles:
    items = list(files.items())
    random.Random(seed).shuffle(items)
    return dict(items)


def ingest_to(sources: list[Path], out: Path, workers: int | None = None) -> dict[str, bytes]:
    tables = rounds.ingest(sources, workers=workers)
    assert_accounted(tables.tally)
    tables.write(out)
    return read_bytes(out, INGEST_OUTPUTS)


def read_bytes(folder: Path, names: tuple[str, ...]) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in names}


def downstream(interim: Path, out: Path) -> tuple[dict[str, bytes], pd.DataFrame]:
    """Features written as the stage writes them, then clusters and the ranking of the benchmark."""
    tables = {name: pd.read_parquet(interim / f"{name}.parquet") for name in ("systems", "results", "runs")}
    configurations, notes = build_configurations(tables["systems"], tables["results"], tables["runs"])
    write_parquet(configurations, out / "configurations.parquet")
    write_csv(notes, out / "feature_notes.csv")
    clustered, _ = cluster.cluster_benchmark(configurations, ["accelerator_count", "host_memory_gib"],
                                             CLUSTER_SETTINGS, benchmark="fixture")
    criteria = yaml.safe_load((ROOT / "params.yaml").read_text())["rank"]["criteria"]
    ranking = rank.rank_configurations(clustered, criteria)
    return read_bytes(out, ("configurations.parquet", "feature_notes.csv")), ranking


def test_member_order_changes_no_output(tmp_path: Path) -> None:
    files = varied_round()
    outputs = []
    for name, order in (("sorted", dict(sorted(files.items()))), ("reversed", dict(reversed(files.items()))),
                        ("shuffled", shuffled(files, seed=7))):
        archive = archive_at(tmp_path / name / "training_results_v3.0.tar.gz", order)
        tables = ingest_to([archive], tmp_path / name / "interim")
        outputs.append((tables, *downstream(tmp_path / name / "interim", tmp_path / name / "processed")))
    (tables, processed, ranking), *others = outputs
    for other_tables, other_processed, other_ranking in others:
        assert other_tables == tables
        assert other_processed == processed
        pd.testing.assert_frame_equal(other_ranking, ranking)
    assert ranking["cluster"].nunique() == CLUSTER_SETTINGS.k


def test_an_archive_and_a_folder_written_in_another_order_give_the_same_bytes(tmp_path: Path) -> None:
    files = varied_round()
    archive = archive_at(tmp_path / "mirror" / "training_results_v3.0.tar.gz", files)
    folder = write_folder(tmp_path / "clone" / "training_results_v3.0", shuffled(files, seed=3))
    assert ingest_to([archive], tmp_path / "a") == ingest_to([folder], tmp_path / "b")


def test_workers_and_repetition_change_no_byte(tmp_path: Path) -> None:
    sources = [write_archive(tmp_path / f"training_results_{round_}.tar.gz", varied_round(n_systems=6 + i))
               for i, round_ in enumerate(("v3.0", "v3.1", "v4.0"))]
    first = ingest_to(sources, tmp_path / "first", workers=2)
    assert ingest_to(list(reversed(sources)), tmp_path / "second", workers=2) == first
    assert ingest_to(sources, tmp_path / "serial", workers=1) == first


def _ingest_command(sources: list[Path], out: Path) -> list[str]:
    return [sys.executable, "-m", "pipeline.stages.ingest", *map(str, sources), "--out", str(out)]


def _finished_run(sources: list[Path], out: Path) -> float:
    start = time.perf_counter()
    subprocess.run(_ingest_command(sources, out), cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - start


def _kill_when(sources: list[Path], out: Path, ready: Callable[[set[str]], bool], timeout: float) -> None:
    """Start the ingest in a session of its own and SIGKILL it, workers included, as soon as `ready` holds for
    the names in `out`, or after `timeout` seconds."""
    process = subprocess.Popen(_ingest_command(sources, out), cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        if out.exists() and ready(set(os.listdir(out))):
            break
        time.sleep(0.001)
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _is_hidden_temporary(name: str) -> bool:
    return name.startswith(".") and name.endswith(".tmp")


@pytest.mark.slow
def test_a_killed_ingest_leaves_no_partial_output_and_its_repetition_the_same_bytes(tmp_path: Path) -> None:
    sources = [write_archive(tmp_path / f"training_results_{round_}.tar.gz",
                             varied_round(n_systems=100, runs=5, padding=100)) for round_ in ("v3.0", "v3.1")]
    reference = tmp_path / "reference"
    seconds = _finished_run(sources, reference)
    expected = read_bytes(reference, INGEST_OUTPUTS)

    out = tmp_path / "killed"
    delay = random.Random(0).uniform(0.3, 0.9) * seconds
    kills = {
        f"after {delay:.2f} s": lambda names: False,
        # The moment that matters most: an output is half written to its temporary file.
        "while writing its first output": lambda names: any(_is_hidden_temporary(name) for name in names - before),
    }
    for moment, ready in kills.items():
        before = set(os.listdir(out)) if out.exists() else set()
        _kill_when(sources, out, ready, timeout=delay if moment.startswith("after") else 4 * seconds)
        left = set(os.listdir(out)) if out.exists() else set()
        finals = left & set(INGEST_OUTPUTS)
        assert all(_is_hidden_temporary(name) for name in left - finals), (moment, left)
        for name in finals:  # a final name only ever holds a complete output
            assert (out / name).read_bytes() == expected[name], f"{name} is partial after a kill {moment}"

    _finished_run(sources, out)
    assert read_bytes(out, INGEST_OUTPUTS) == expected
    assert sorted(os.listdir(out)) == sorted(INGEST_OUTPUTS), "the temporaries of the killed runs were not removed"


ANALYSIS_STAGES = ("importance", "kscan", "cluster", "findings", "rank", "backtest", "decide")


def _analysis_outputs(project: Path, settings: dict[str, str]) -> dict[str, bytes]:
    """Run the analysis stages in `project` with the environment variables `settings` added; every output's bytes
    by path."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CI": "true", **settings}
    for stage in ANALYSIS_STAGES:
        subprocess.run([sys.executable, "-m", f"pipeline.stages.{stage}"], cwd=project, env=env, check=True,
                       capture_output=True)
    return {path.relative_to(project).as_posix(): path.read_bytes()
            for folder in ("reports", "data/processed") for path in sorted((project / folder).rglob("*"))
            if path.is_file() and path.name != "configurations.parquet"}


def _project(folder: Path, benchmarks: list[str]) -> Path:
    """A scratch project with this checkout's configurations and ingest tables, analysing `benchmarks`."""
    from tests.conftest import project_params_with

    (folder / "data" / "processed").mkdir(parents=True)
    shutil.copyfile(ROOT / "data" / "processed" / "configurations.parquet",
                    folder / "data" / "processed" / "configurations.parquet")
    shutil.copytree(ROOT / "data" / "interim", folder / "data" / "interim")
    params = project_params_with("analysis.benchmarks", benchmarks)
    (folder / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    return folder


def _needs_outputs() -> None:
    if not (ROOT / "data" / "processed" / "configurations.parquet").is_file() or \
            not (ROOT / "data" / "interim" / "runs.parquet").is_file():
        pytest.skip("needs data/processed/configurations.parquet and data/interim/ (dvc pull or dvc repro features)")


def _blas_kernel(core_type: str) -> str | None:
    """The kernel family the installed OpenBLAS uses when OPENBLAS_CORETYPE is `core_type` (threadpoolctl), or
    None when this CPU cannot run it."""
    probe = subprocess.run([sys.executable, "-c", "import numpy, threadpoolctl; print(*[info.get('architecture') "
                            "for info in threadpoolctl.threadpool_info() if info['user_api'] == 'blas'])"],
                           env={**os.environ, "OPENBLAS_CORETYPE": core_type}, capture_output=True, text=True)
    return probe.stdout.strip() or None if probe.returncode == 0 else None


@pytest.mark.slow
def test_every_stage_runs_the_one_blas_kernel_whatever_the_cpu_asks() -> None:
    """A process that imports `pipeline` runs OpenBLAS' baseline kernel (pipeline/core/threads.py), in numpy's and
    scipy's copies, whatever OPENBLAS_CORETYPE says: the kernel the CPU would pick is no input of any output."""
    from pipeline.core.threads import BLAS_KERNEL

    if _blas_kernel(BLAS_KERNEL) is None:
        pytest.skip("not an x86-64 OpenBLAS")
    script = ("import pipeline, numpy, sklearn.cluster, threadpoolctl; print(*sorted({info.get('architecture') "
              "for info in threadpoolctl.threadpool_info() if info['user_api'] == 'blas'}))")
    for core_type in ("SkylakeX", "Haswell", "Sandybridge"):
        probe = subprocess.run([sys.executable, "-c", script], env={**os.environ, "OPENBLAS_CORETYPE": core_type},
                               capture_output=True, text=True, check=True, cwd=ROOT)
        assert probe.stdout.split() == [_blas_kernel(BLAS_KERNEL)], core_type


@pytest.mark.parametrize("asked", [{"NPY_ENABLE_CPU_FEATURES": "X86_V3"}, {"NPY_DISABLE_CPU_FEATURES": ""}, {}])
def test_every_stage_runs_numpys_baseline_code_whatever_the_cpu_or_user_asks(asked: dict[str, str]) -> None:
    """A process that imports `pipeline` runs none of numpy's CPU-specific code (AVX2, AVX-512), whatever the CPU
    has or the environment asks: a quicksort of equal keys and a sum's lane order are the same on every x86-64
    machine (pipeline/core/threads.py). Also fails when a numpy upgrade adds a dispatch target not turned off."""
    from pipeline.core.threads import is_x86_64

    if not is_x86_64():
        pytest.skip("numpy's code is pinned on x86-64 only")
    environment = {name: value for name, value in os.environ.items() if not name.startswith("NPY_")}
    script = ("import pipeline, numpy._core._multiarray_umath as umath; "
              "print(*sorted(name for name in umath.__cpu_dispatch__ if umath.__cpu_features__[name]))")
    probe = subprocess.run([sys.executable, "-c", script], env={**environment, **asked}, capture_output=True,
                           text=True, cwd=ROOT)
    assert (probe.returncode, probe.stdout.split(), probe.stderr) == (0, [], "")


@pytest.mark.slow
def test_thread_counts_change_no_byte(tmp_path: Path) -> None:
    """The learners (gradient boosting, k-means, the forecasts' least squares) and BLAS asked for 1 or 2 threads:
    the outputs DVC hashes are the same bytes, so a clean clone's dvc.lock holds on a machine with another number
    of cores (every stage pins one thread: pipeline/core/threads.py)."""
    _needs_outputs()
    outputs = []
    for threads in (1, 2):
        project = _project(tmp_path / f"threads-{threads}", ["resnet", "bert"])
        outputs.append(_analysis_outputs(project, {name: str(threads) for name in (
            "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}))
    assert outputs[0].keys() == outputs[1].keys() and len(outputs[0]) >= 6
    assert [name for name in outputs[0] if outputs[0][name] != outputs[1][name]] == []


@pytest.mark.slow
def test_blas_kernels_change_no_byte(tmp_path: Path) -> None:
    """The analysis stages asked for the BLAS kernels of other CPUs (OPENBLAS_CORETYPE: the ones this CPU can run
    among SkylakeX, Haswell, Sandybridge and Prescott) write the same bytes (issue 39: coverage 0.88 -> 0.90 and
    every later stage's outputs on another machine): the kernel is pinned, and nothing else varies with it."""
    _needs_outputs()
    kernels: dict[str, str] = {}
    for core_type in ("SkylakeX", "Haswell", "Sandybridge", "Prescott"):
        kernel = _blas_kernel(core_type)
        if kernel is not None and kernel not in kernels.values():
            kernels[core_type] = kernel
    if len(kernels) < 2:
        pytest.skip(f"this CPU runs fewer than two BLAS kernel families: {kernels}")
    outputs = {core_type: _analysis_outputs(_project(tmp_path / core_type, ["resnet", "bert", "dlrm_dcnv2"]),
                                            {"OPENBLAS_CORETYPE": core_type})
               for core_type in kernels}
    first, *others = outputs
    assert len(outputs[first]) >= 9
    differing = {other: [name for name in outputs[first] if outputs[first][name] != outputs[other].get(name)]
                 for other in others}
    assert differing == {other: [] for other in others}, f"kernels {kernels}"
