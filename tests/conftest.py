"""Shared fixtures: small hand-made rounds, and the real mirror when it sits beside the project."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from pipeline.analysis.configurations import build_configurations
from pipeline.analysis.efficiency import efficiency_metrics
from pipeline.settings import Fetch

ROOT = Path(__file__).resolve().parents[1]  # the project: params.yaml, dvc.yaml, pipeline/
MIRROR = ROOT.parent / "shared" / "mlperf"
PARITY_REPORT: list[str] = []


def run_stage(stage: str, *arguments: str, cwd: Path, check: bool = True,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python -m pipeline.stages.<stage> ARGUMENTS` as DVC does: in a process of its own, from the project
    folder `cwd`, with this checkout's package first on the path; stdout and stderr are captured as text. With
    `check`, a stage that fails fails the test with its stderr.

    Tests never import a stage (tests/test_layout.py): what a stage does is tested on the library functions it
    calls, and what it is (its messages, exit status and files) by running it like this."""
    command = [sys.executable, "-m", f"pipeline.stages.{stage}", *arguments]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {}), "PYTHONPATH": str(ROOT)})
    if check and done.returncode:
        pytest.fail(f"python -m pipeline.stages.{stage} exited with {done.returncode}:\n{done.stderr}", pytrace=False)
    return done


@pytest.hookimpl(trylast=True)  # after pytest's own teardown, which must run whatever happens here
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Fail the test that imported a stage module, also by a dynamic import tests/test_layout.py cannot see."""
    imported = sorted(name for name in sys.modules if name.startswith("pipeline.stages."))
    if imported:
        for name in imported:
            del sys.modules[name]
        pytest.fail(f"{item.nodeid} imported {imported}: run a stage with tests.conftest.run_stage, or call the "
                    "library function it calls", pytrace=False)


@pytest.fixture(scope="session")
def parity_report() -> list[str]:
    """Lines the parity tests leave for the end of the run (how many official scores each round compared)."""
    return PARITY_REPORT


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if PARITY_REPORT:
        terminalreporter.section("parity with the official summarizer")
        for line in sorted(PARITY_REPORT, key=lambda text: [int(part) for part in text[1:].split(":")[0].split(".")]):
            terminalreporter.write_line(line)


def mllog(key: str, time_ms: float, value: object = None, **metadata: object) -> str:
    return ":::MLLOG " + json.dumps({"namespace": "", "time_ms": time_ms, "event_type": "POINT_IN_TIME",
                                     "key": key, "value": value, "metadata": metadata})


# What the official checker's 3.0.0 closed ResNet rules (SGD variant) require besides the lines run_log varies.
COMPLIANT_HEADER = {
    "submission_org": "Acme", "submission_platform": "box", "submission_status": "onprem", "cache_clear": True,
    "gradient_accumulation_steps": 1, "eval_samples": 50000, "opt_name": "sgd", "model_bn_span": 32,
    "opt_learning_rate_warmup_epochs": 2, "sgd_opt_base_learning_rate": 1.0, "sgd_opt_end_learning_rate": 1e-4,
    "sgd_opt_learning_rate_decay_poly_power": 2, "sgd_opt_learning_rate_decay_steps": 100,
    "sgd_opt_momentum": 0.9, "sgd_opt_weight_decay": 5e-5,
}


def run_log(minutes: float, status: str = "success", start_ms: float = 1_600_000_000_000, **extra: object) -> str:
    """A minimal converged (or not) MLLOG result log whose time to train is `minutes`; it meets the logging
    rules that ingest checks for a closed ResNet result of v3.0 (see pipeline/mlperf/compliance.py)."""
    stop_ms = start_ms + minutes * 60_000
    lines = [
        mllog("submission_benchmark", start_ms - 10, "resnet"),
        mllog("submission_division", start_ms - 10, "closed"),
        mllog("global_batch_size", start_ms - 5, 256),
        mllog("train_samples", start_ms - 5, 1000),
        *(mllog(key, start_ms - 5, value) for key, value in COMPLIANT_HEADER.items() if key not in extra),
        mllog("init_start", start_ms - 60_000),
        mllog("init_stop", start_ms - 1),
        mllog("run_start", start_ms),
        mllog("block_start", start_ms + 1, first_epoch_num=1),
        mllog("block_stop", stop_ms - 3, first_epoch_num=1),
        mllog("eval_start", stop_ms - 2, epoch_num=3),
        mllog("eval_accuracy", stop_ms - 1, 0.76, epoch_num=3),
        mllog("eval_stop", stop_ms - 1, epoch_num=3),
        mllog("run_stop", stop_ms, None, status=status, epoch_num=3),
    ]
    lines += [mllog(key, start_ms, value) for key, value in extra.items()]
    return "\n".join(lines) + "\n"


def system_json(accelerators_per_node: int = 8, nodes: int = 1, **fields: object) -> str:
    description = {
        "submitter": "Acme", "division": "closed", "status": "available", "system_name": "acme box",
        "number_of_nodes": str(nodes), "host_processors_per_node": "2",
        "host_processor_model_name": "AMD EPYC 7763 64-Core Processor", "host_processor_core_count": "64",
        "host_memory_capacity": "2 TB", "accelerators_per_node": str(accelerators_per_node),
        "accelerator_model_name": "NVIDIA A100-SXM4-80GB", "accelerator_memory_capacity": "80 GB",
        "accelerator_interconnect": "12xNVLink 25GB/s + 6xNVSwitch", "host_networking": "8x 200Gb/s InfiniBand HDR",
        "framework": "PyTorch NVIDIA Release 22.04",
    }
    description.update(fields)
    return json.dumps(description)


RoundFiles = dict[str, str | bytes]


def write_archive(path: Path, files: RoundFiles, top: str | None = None) -> Path:
    """A .tar.gz of `files` (relative path -> content) under the round folder `top` (the archive's stem)."""
    top = top or path.name.removesuffix(".tar.gz")
    with tarfile.open(path, "w:gz") as tar:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def write_folder(path: Path, files: RoundFiles) -> Path:
    for name, content in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def small_round(minutes: list[float] | None = None) -> RoundFiles:
    """One submitter, one system, five resnet runs: a complete, scorable result."""
    times = minutes or [10.0, 11.0, 12.0, 13.0, 14.0]
    files: RoundFiles = {"Acme/systems/box.json": system_json()}
    for run, value in enumerate(times):
        files[f"Acme/results/box/resnet/result_{run}.txt"] = run_log(value)
    return files


@pytest.fixture
def make_archive(tmp_path: Path) -> Callable[..., Path]:
    def make(files: RoundFiles, round_: str = "v3.0") -> Path:
        return write_archive(tmp_path / f"training_results_{round_}.tar.gz", files)

    return make


@pytest.fixture
def mirror() -> Path:
    if not (MIRROR / "training_results_v0.7.tar.gz").is_file():
        pytest.skip(f"the MLPerf mirror is not at {MIRROR}")
    return MIRROR


@pytest.fixture(scope="session")
def real_tables() -> Any:
    """The ingest's tables (`rounds.IngestTables`) of every round of params.yaml's fetch.rounds, from the mirror."""
    from pipeline.mlperf.rounds import ingest
    from pipeline.settings import load_settings

    published = load_settings(ROOT / "params.yaml").fetch.rounds
    archives = [MIRROR / f"training_results_{round_}.tar.gz" for round_ in published]
    if not all(archive.is_file() for archive in archives):
        pytest.skip(f"the MLPerf mirror is not at {MIRROR}")
    return ingest(archives)


@pytest.fixture(scope="session")
def real_configurations(real_tables: Any) -> pd.DataFrame:
    """configurations.parquet as the features stage builds it from every round of the mirror."""
    return build_configurations(real_tables.systems, real_tables.results, real_tables.runs)[0]


def assert_accounted(tally: pd.DataFrame) -> None:
    """Every file seen is used or quarantined: logs = runs, system files = parsed + quarantined, and each file
    that is no input has its quarantine row, except the repository's code and docs (counted as repository_files)."""
    assert (tally["log_files"] == tally["runs"]).all(), tally.to_dict("records")
    assert (tally["system_files"] == tally["systems"] + tally["systems_quarantined"]).all(), tally.to_dict("records")
    assert (tally["quarantined"] >= tally["other_files"] + tally["systems_quarantined"]).all(), tally.to_dict("records")


def configurations(rows: list[dict], benchmark: str = "resnet") -> pd.DataFrame:
    """A configurations table with every documented column and the features stage's efficiency metrics."""
    frame = pd.DataFrame(rows).assign(benchmark=benchmark, benchmark_folder=benchmark, division="closed",
                                      availability="available_onprem", throughput_samples_per_s=float("nan"),
                                      framework="PyTorch")
    from pipeline.core.schemas import CONFIGURATION_COLUMNS

    frame = efficiency_metrics(frame)
    for column in CONFIGURATION_COLUMNS:
        if column not in frame:
            frame[column] = None
    return frame[CONFIGURATION_COLUMNS]


def project_params_with(path: str, value: object) -> dict[str, Any]:
    """The project's params.yaml with the key at dotted `path` set to `value` (the value KeyError removes it)."""
    import yaml

    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    *parents, key = path.split(".")
    node = params
    for parent in parents:
        node = node[parent]
    if value is KeyError:
        del node[key]
    else:
        node[key] = value
    return params


def fetch_settings(mirror: Path, upstream: str, *rounds: str) -> Fetch:
    """params.yaml's `fetch` section for these rounds, as `pipeline.mlperf.fetching.fetch` takes it."""
    return Fetch(mirror=str(mirror), upstream=upstream, rounds=list(rounds))
