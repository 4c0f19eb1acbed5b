"""Shared fixtures: small hand-made rounds, and the real mirror when it sits beside the project."""
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from pipeline.analysis.configurations import build_configurations, republished_of
from pipeline.analysis.efficiency import efficiency_metrics
from pipeline.analysis.scope import in_scope
from pipeline.analysis.statistics.ranking import rank_configurations
from pipeline.core import paths
from pipeline.settings import AnalysisSettings, FetchSettings

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


def run_dvc(*arguments: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`dvc ARGUMENTS` in the project folder `cwd` with this interpreter's dvc and stages first on PATH, analytics
    off; stdout and stderr captured as text (the caller checks the exit status)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "DVC_NO_ANALYTICS": "1", "CI": "true"}
    return subprocess.run([sys.executable, "-m", "dvc", *arguments], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def run_dvc_repro(cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`dvc repro` in `cwd` (`run_dvc`)."""
    return run_dvc("repro", cwd=cwd, timeout=timeout)


def run_git(*arguments: str, cwd: Path | None = None) -> str:
    """`git ARGUMENTS` in `cwd` as a throwaway committer (user t), failing on a non-zero exit; its stdout, stripped."""
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *arguments], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def bare_upstream(folder: Path, remote: Path, *rounds: str) -> str:
    """`folder` committed as one git repository and cloned bare as `remote`/training_results_<round>.git for each of
    `rounds`, standing in for github.com/mlcommons (partial clones allowed, as GitHub allows them); the URL template
    params.yaml's `fetch.upstream` takes."""
    run_git("init", "-q", "-b", "main", str(folder))
    run_git("add", ".", cwd=folder)
    run_git("commit", "-q", "-m", "results", cwd=folder)
    for round_ in rounds:
        bare = remote / f"training_results_{round_}.git"
        run_git("clone", "-q", "--bare", str(folder), str(bare))
        run_git("config", "uploadpack.allowFilter", "true", cwd=bare)
    return remote.as_uri() + "/training_results_{round}.git"


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
    rules that ingest checks for a closed ResNet result of v3.0 (see pipeline/mlperf/logs/compliance.py)."""
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
    """The ingest's tables (`rounds.IngestTables`) of every round of the mirror (params.yaml's fetch.rounds: all):
    this checkout's data/interim tables, read as the features stage reads them, when DVC says the fetch and ingest
    stages are up to date (the same function's output for the same archives: ingesting twelve rounds again takes
    about 40 s), else an ingest of the mirror's archives."""
    from pipeline.core import schemas
    from pipeline.mlperf.discovery import in_mirror
    from pipeline.mlperf.rounds import IngestTables, ingest

    published = in_mirror(MIRROR) or ["v5.1"]
    archives = [MIRROR / f"training_results_{round_}.tar.gz" for round_ in published]
    if not all(archive.is_file() for archive in archives):
        pytest.skip(f"the MLPerf mirror is not at {MIRROR}")
    if not _stages_up_to_date("fetch", "ingest"):
        return ingest(archives)
    return IngestTables(systems=schemas.validate_systems(pd.read_parquet(ROOT / paths.SYSTEMS)),
                        runs=schemas.validate_runs(pd.read_parquet(ROOT / paths.RUNS)),
                        results=schemas.validate_results(pd.read_parquet(ROOT / paths.RESULTS)),
                        quarantine=pd.read_csv(ROOT / paths.QUARANTINE), tally=pd.read_csv(ROOT / paths.TALLY),
                        summary_check=json.loads((ROOT / paths.SUMMARY_CHECK).read_text(encoding="utf-8")))


def _stages_up_to_date(*stages: str) -> bool:
    """Whether `dvc status` finds every one of `stages` of this checkout up to date (its outputs there and in
    dvc.lock, and its dependencies unchanged since it ran)."""
    if not all((ROOT / path).is_file() for path in ("dvc.lock", paths.SYSTEMS, paths.RESULTS, paths.RUNS,
                                                    paths.QUARANTINE, paths.TALLY, paths.SUMMARY_CHECK)):
        return False
    done = subprocess.run([sys.executable, "-m", "dvc", "status", "--quiet", *stages], cwd=ROOT,
                          capture_output=True, text=True)
    return done.returncode == 0


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


def fetch_settings(mirror: Path, upstream: str, *rounds: str) -> FetchSettings:
    """params.yaml's `fetch` section for these rounds, as `pipeline.mlperf.fetching.fetch` takes it."""
    return FetchSettings(mirror=str(mirror), upstream=upstream, rounds=list(rounds))


# --- a scratch project of synthetic resnet results, through the backtest and decide stages -------------------------

# Decide settings for the synthetic laws below.
DECIDE_PARAMS = {"efficiency_floor": 0.7, "target_coverage": 0.9,
                 # The synthetic laws are exact, so the first folds' uncalibrated intervals have no width and hold
                 # nothing: any coverage passes here (tests/analysis/test_forecast_intervals_and_trust.py tests the
                 # coverage condition).
                 "trust": {"min_rounds": 2, "min_backtest_points": 5, "max_error": 0.2, "max_count_factor": 1,
                           "coverage": [0.01, 1.0]}}


def power_law(family: str, counts: list[float], time_at_first: float, exponent: float,
              rounds: tuple[str, ...] = ("v3.0", "v4.0"), form_factor: str | None = "SXM",
              spread: float = 1.02) -> list[dict]:
    """t = time_at_first * (n / counts[0]) ** exponent, times `spread` in the first round and divided by it in
    the second: in log space the two cancel at every count, so a fit recovers the law exactly."""
    rows = []
    for position, round_ in enumerate(rounds):
        factor = spread if position % 2 == 0 else 1 / spread
        rows += [{"round": round_, "submitter": "Acme", "system": f"{family}-{form_factor}-{count:g}-{position}",
                  "accelerator_family": family, "accelerator_form_factor": form_factor,
                  "accelerator_count": float(count),
                  "time_to_train_min": time_at_first * (count / counts[0]) ** exponent * factor} for count in counts]
    return rows


@pytest.fixture(scope="session")
def decide_project_built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """params.yaml, configurations.parquet and ranking.csv of three families: H100 and A100 follow power laws
    (H100: t = 100 (n/8)^-0.9 at 8 to 128; A100: t = 200 (n/8)^-0.8 at 8, 32 and 64, not 16), Gaudi2 was only
    published at eight accelerators; then the backtest and decide stages' outputs (the models predict and recommend
    answer from). Built once: tests take a copy (`decide_project`)."""
    tmp_path = tmp_path_factory.mktemp("decide")
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    # Gaudi2's v4.1 result repeats its v3.0 one: with `include` it is fitted and forecast (flagged a rerun).
    params["analysis"].update(benchmarks=["resnet"], min_configurations=5, republished="include")
    params["decide"] = DECIDE_PARAMS
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    rows = (power_law("H100", [8, 16, 32, 64, 128], 100.0, -0.9) + power_law("A100", [8, 32, 64], 200.0, -0.8)
            + power_law("Gaudi2", [8], 150.0, 0.0, rounds=("v3.0", "v4.0", "v4.1")))
    table = configurations(rows)
    table["republished_of"] = republished_of(table)  # as the features stage marks Gaudi2's v4.1 repeat of v3.0
    (tmp_path / "data/processed").mkdir(parents=True)
    table.to_parquet(tmp_path / "data/processed/configurations.parquet", index=False)
    scoped = in_scope(table, AnalysisSettings.model_validate(params["analysis"]), "resnet").assign(cluster=0)
    (tmp_path / paths.RANK).mkdir(parents=True)
    rank_configurations(scoped, params["rank"]["criteria"]).to_csv(tmp_path / paths.ranking_csv("resnet"), index=False)
    run_stage("backtest", cwd=tmp_path)
    run_stage("decide", cwd=tmp_path)  # saves the models predict and recommend answer from
    run_stage("buyer", cwd=tmp_path)  # the record of today recommend answers from
    return tmp_path


@pytest.fixture
def decide_project(decide_project_built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of `decide_project_built` for the test alone, as the working folder."""
    shutil.copytree(decide_project_built, tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def exit_message(main: Callable[[list[str]], None], argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """What a command (`pipeline.commands.<name>.main`) writes to stderr when `argv` is a mistake: it exits 1 with
    one error line and no traceback."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.err.startswith("error: ")
    return captured.err


def add_energy(project_dir: Path, measured: dict[str, tuple[float, str]] | None) -> None:
    """Give the scratch project's configurations `energy_kwh` and `power_measurement`: `measured` maps a system to
    its energy and measurement point (None: the columns, all empty)."""
    path = project_dir / paths.CONFIGURATIONS
    table = pd.read_parquet(path)
    measured = measured or {}
    table["energy_kwh"] = table["system"].map({system: kwh for system, (kwh, _) in measured.items()}).astype(float)
    table["power_measurement"] = table["system"].map({system: point for system, (_, point) in measured.items()})
    table.to_parquet(path, index=False)


@pytest.fixture
def gaudi2_unpriced(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The shipped price table without its Gaudi2 rows: the commands' scratch project (H100, A100, Gaudi2) then has
    one family with no public price, the case its tests check."""
    from pipeline.analysis.pricing import price_table as pt

    table = pt.price_table()
    monkeypatch.setattr(pt, "price_table", lambda: table[table["family"] != "Gaudi2"].reset_index(drop=True))
    caches = (pt._package_current_prices, pt._package_types, pt._package_quotes)
    for cached in caches:
        cached.cache_clear()
    yield
    for cached in caches:
        cached.cache_clear()
