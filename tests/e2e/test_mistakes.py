"""Realistic mistakes a user makes, each caught before any work with a message that says what and where, and
exit status 1 (issue 16). A stage validates all of params.yaml first (`load_settings`), so the importance stage,
run as DVC runs it, stands for all."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from pipeline.core.errors import ParamsError
from pipeline.settings import load_settings, settings_from
from tests.conftest import ROOT, configurations, project_params_with, run_dvc_repro, run_stage

# (what the user wrote, params key, value, words the message must hold)
MISTAKES = [
    ("a division that does not exist", "analysis.division", "public", ["analysis.division", "closed", "open"]),
    ("k spelt out", "cluster.k", "five", ["cluster.k", "integer", "five"]),
    ("k below two", "cluster.k", 1, ["cluster.k", "greater than or equal to 2"]),
    ("k outside the range tried", "cluster.k", 12, ["k = 12", "k_range"]),
    ("a misspelt rank criterion", "rank.criteria", {"time_to_train": {"weight": 1, "direction": "cost"}},
     ["time_to_train", "not a criterion", "accelerator_hours"]),
    ("a negative weight", "rank.criteria.time_to_train_min.weight", -1, ["weight", "greater than 0"]),
    ("a direction that is neither", "rank.criteria.time_to_train_min.direction", "cheaper",
     ["direction", "'cost' or 'benefit'"]),
    ("an unknown benchmark", "analysis.benchmarks", ["resnet50"], ["resnet50", "not a benchmark", "resnet"]),
    ("a round without its v", "analysis.rounds", ["4.0"], ["4.0", "rounds are written vX.Y"]),
    ("an unknown availability", "analysis.availability", ["onprem", "hybrid"], ["hybrid", "available"]),
    ("a minimum of one configuration", "analysis.min_configurations", 1, ["min_configurations", "2"]),
    ("one family", "importance.min_families", 1, ["importance.min_families", "2"]),
    ("an R^2 above one", "importance.min_r2", 1.5, ["importance.min_r2", "less than or equal to 1"]),
    ("a zero learning rate", "importance.model.learning_rate", 0, ["learning_rate", "greater than 0"]),
    ("a section deleted", "cluster", KeyError, ["cluster", "missing"]),
    ("a misspelt key", "cluster.kk", 5, ["cluster.kk", "not a setting"]),
    ("bands out of order", "findings.bands", [4, 2], ["findings.bands", "increasing"]),
    ("alpha as a percentage", "findings.alpha", 5, ["findings.alpha", "less than 1"]),
    ("coverage reversed", "decide.trust.coverage", [0.95, 0.85], ["decide.trust.coverage", "low < high"]),
    ("rounds as one string", "fetch.rounds", "v4.0", ["fetch.rounds", "list of rounds"]),
    ("an upstream without {round}", "fetch.upstream", "https://github.com/mlcommons/training_results",
     ["fetch.upstream", "{round}"]),
    ("a misspelt benchmark", "analysis.benchmarks", ["bret"], ["bret", "not a benchmark"]),
    ("a feature that does not exist", "cluster.default_features", ["gpu_count"], ["gpu_count", "accelerator_count"]),
    ("a text where a number goes", "decide.target_coverage", "90%", ["decide.target_coverage", "number"]),
]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_importance(project: Path, *arguments: str) -> tuple[int, str]:
    """The importance stage's exit status and stderr, run in `project`."""
    done = run_stage("importance", *arguments, cwd=project, check=False)
    return done.returncode, done.stderr


def write_params(project: Path, key: str, value: Any) -> None:
    """The project's params.yaml with the mistake `key: value` in the scratch project."""
    params = project_params_with(key, value)
    (project / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")


def test_the_table_is_long_enough() -> None:
    assert len(MISTAKES) >= 20


@pytest.mark.parametrize(("what", "key", "value", "words"), MISTAKES, ids=[m[0] for m in MISTAKES])
def test_a_params_mistake_is_a_message_saying_what_and_where(what: str, key: str, value: Any, words: list[str],
                                                              project: Path) -> None:
    write_params(project, key, value)
    with pytest.raises(ParamsError) as error:
        load_settings()
    message = str(error.value)  # a stage prints it as one line "error: <message>" and exits 1 (the test below)
    assert message.startswith("params.yaml has") and "\n" not in message, what
    for word in words:
        assert word in message, (what, word, message)


def test_a_params_mistake_stops_the_stage_before_any_work(project: Path) -> None:
    what, key, value, words = MISTAKES[0]
    write_params(project, key, value)
    status, message = run_importance(project)
    assert status == 1, what
    assert message.startswith("error: params.yaml has") and message.count("\n") == 1 and "Traceback" not in message
    assert all(word in message for word in words), message
    assert not (project / "reports").exists()  # nothing ran


def test_names_are_matched_whatever_their_case() -> None:
    params = project_params_with("analysis.division", "Closed")
    params["analysis"].update(benchmarks=["ResNet", " BERT "], rounds=["V4.0"],
                              availability=["Available"])
    settings = settings_from(params)
    assert settings.analysis.division == "closed" and settings.analysis.benchmarks == ["resnet", "bert"]
    assert settings.analysis.rounds == ["v4.0"]
    assert settings.analysis.availability == ["available_onprem", "available_cloud"]


def test_params_that_are_not_yaml(project: Path) -> None:
    (project / "params.yaml").write_text("analysis:\n  division: [closed\n", encoding="utf-8")
    status, message = run_importance(project)
    assert status == 1 and "params.yaml is not valid YAML" in message


def test_no_params_file(project: Path) -> None:
    status, message = run_importance(project)
    assert status == 1 and "params.yaml not found" in message and "project root" in message


def test_an_argument_a_stage_does_not_take(project: Path) -> None:
    status, message = run_importance(project, "resnet")
    assert status == 1 and "unrecognized arguments: resnet" in message and "usage:" in message


def test_a_scope_that_leaves_nothing_stops_the_analysis(project: Path) -> None:
    """All benchmarks skipped is a failure that says why, not an empty report (the `Closed`-era bug)."""
    from pipeline.core import paths
    from pipeline.core.files import write_parquet

    rows = [{"round": "v4.0", "submitter": "Acme", "system": f"box-{count}", "accelerator_family": "H100",
             "accelerator_form_factor": "SXM", "accelerator_count": float(count), "time_to_train_min": 80.0 / count}
            for count in (8, 16, 32)]
    write_parquet(pd.concat([configurations(rows, "resnet"), configurations(rows, "bert")], ignore_index=True),
                  paths.CONFIGURATIONS)
    (project / "params.yaml").write_text(yaml.safe_dump(project_params_with("analysis.benchmarks", ["resnet", "bert"])),
                                         encoding="utf-8")
    status, message = run_importance(project)
    assert status == 1 and "every benchmark was skipped" in message
    assert "resnet: 3 configurations in scope" in message and "bert: 3 configurations" in message
    assert "min_configurations" in message


MODULES = ["pipeline.stages.validate", "pipeline.stages.fetch", "pipeline.stages.ingest", "pipeline.stages.features",
           "pipeline.stages.importance", "pipeline.stages.kscan", "pipeline.stages.cluster",
           "pipeline.stages.findings", "pipeline.stages.rank", "pipeline.stages.backtest",
           "pipeline.stages.decide", "pipeline.stages.buyer", "pipeline.stages.brief", "pipeline.commands.predict",
           "pipeline.commands.recommend", "pipeline.mlperf.logs.compliance"]


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_run_nothing(module: str, flag: str, tmp_path: Path) -> None:
    """In an empty folder (no params, no data) --help and --version print, exit 0 and write nothing."""
    completed = subprocess.run([sys.executable, "-m", module, flag], cwd=tmp_path, capture_output=True, text=True,
                               env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() and not completed.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_price_file_with_an_unknown_family_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    from pipeline.analysis.pricing.prices import load_prices
    from pipeline.core.errors import UsageError

    prices = tmp_path / "prices.yaml"
    prices.write_text("H10O: 3.0\na100: 1.5\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"unknown accelerator families: H10O; known families: .*H100"):
        load_prices(prices)
    prices.write_text("h100: 3.0\na100: 1.5\n", encoding="utf-8")
    assert load_prices(prices) == {"H100": 3.0, "A100": 1.5}


# ------------------------------------------------------------------ mistakes under `dvc repro`: nothing is lost

# (what the user did, params.yaml edits as (key, value), a price file's text or None, words the message must hold)
REPRO_MISTAKES = [
    ("k below two", [("cluster.k", 1)], None, ["cluster.k", "greater than or equal to 2"]),
    ("k spelt out", [("cluster.k", "five")], None, ["cluster.k", "five"]),
    ("a round that does not exist", [("analysis.rounds", ["v9.9"])], None, ["analysis.rounds", "v9.9",
                                                                           "fetch.rounds"]),
    ("a round not fetched", [("analysis.rounds", ["v4.5"])], None, ["v4.5", "not among the rounds found"]),
    ("no rounds at all", [("analysis.rounds", [])], None, ["analysis.rounds", "empty list"]),
    ("an empty feature list", [("cluster.default_features", [])], None, ["cluster.default_features", "empty"]),
    ("a price file that is not there", [("report.prices", "examples/no-such-prices.yaml")], None,
     ["report.prices", "no-such-prices.yaml", "not found"]),
    ("a price for an unknown family", [("report.prices", "prices.yaml")], "H10O: 3.0\n",
     ["report.prices", "H10O", "unknown accelerator families"]),
    ("a misspelt mirror, offline", [("fetch.mirror", "../shared/mlperff")], None,
     ["fetch.mirror", "mlperff does not exist, so rounds are cloned from", "cannot be reached"]),
    ("an unknown availability", [("analysis.availability", ["onprem", "hybrid"])], None,
     ["analysis.availability", "hybrid"]),
    ("a round to fetch that exists nowhere", [("fetch.mirror", "empty-mirror"), ("fetch.rounds", ["v9.9"]),
                                              ("fetch.upstream", "file:///nowhere/training_results_{round}")],
     None, ["round v9.9: it is not in the mirror empty-mirror", "cannot be reached"]),
]


def _outputs(clone: Path) -> dict[str, tuple[int, int, int]]:
    """Every file of the pipeline's outputs, by path: (inode, size, modification time). A file DVC deleted and a
    stage wrote again has another inode or time."""
    return {path.relative_to(clone).as_posix(): (path.stat().st_ino, path.stat().st_size, path.stat().st_mtime_ns)
            for folder in ("data", "reports") for path in sorted((clone / folder).rglob("*")) if path.is_file()}


@pytest.fixture(scope="module")
def repro_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git clone of the project with this checkout's outputs (hard links), as after `dvc repro`."""
    if not (ROOT / "reports" / "index.html").is_file() or not (ROOT / "data" / "mirror.json").is_file():
        pytest.skip("needs this checkout's outputs: run dvc repro (or dvc pull) first")
    clone = tmp_path_factory.mktemp("mistakes") / "project"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    (clone.parent / "shared").symlink_to((ROOT / ".." / "shared").resolve())  # the default mirror, beside it
    for folder in ("data", "reports"):  # the git-tracked metrics come with the clone
        shutil.copytree(ROOT / folder, clone / folder, dirs_exist_ok=True,
                        copy_function=lambda source, target: Path(target).exists() or os.link(source, target))
    return clone


@pytest.mark.slow
@pytest.mark.parametrize(("what", "edits", "prices", "words"), REPRO_MISTAKES, ids=[m[0] for m in REPRO_MISTAKES])
def test_a_mistake_under_dvc_repro_loses_no_output(what: str, edits: list[tuple[str, Any]], prices: str | None,
                                                   words: list[str], repro_clone: Path) -> None:
    """DVC deletes a stage's outputs before running it: the validate stage, first of all, stops the run before
    that, with a message naming the mistake, and every output (git-tracked metrics included) stays as it was."""
    params_file = repro_clone / "params.yaml"
    original = params_file.read_text(encoding="utf-8")
    params = yaml.safe_load(original)
    for key, value in edits:
        node = params
        *parents, last = key.split(".")
        for part in parents:
            node = node[part]
        node[last] = value
    params_file.write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    if prices is not None:
        (repro_clone / "prices.yaml").write_text(prices, encoding="utf-8")
    (repro_clone / "empty-mirror").mkdir(exist_ok=True)
    before = _outputs(repro_clone)
    try:
        repro = run_dvc_repro(repro_clone, timeout=600)
    finally:
        params_file.write_text(original, encoding="utf-8")
        (repro_clone / "prices.yaml").unlink(missing_ok=True)
    output = repro.stdout + repro.stderr
    assert repro.returncode != 0 and "failed to reproduce 'validate'" in output and "exited with 1" in output, output
    assert "Traceback" not in output
    for word in words:
        assert word in output, (what, word, output)
    after = _outputs(repro_clone)
    assert sorted(set(before) - set(after)) == [], f"{what}: deleted"
    assert [name for name in before if before[name] != after[name]] == [], f"{what}: rewritten"


@pytest.mark.slow
def test_a_truncated_archive_loses_no_output(repro_clone: Path) -> None:
    """A mirror without SHA256SUMS whose newest archive is cut off: validate reads every archive to its end and
    stops the run naming the mirror's file, before the fetch could replace the good copy in data/raw."""
    mirror = repro_clone / "bad-mirror"
    mirror.mkdir(exist_ok=True)
    archives = sorted(ROOT.joinpath("..", "shared", "mlperf").resolve().glob("training_results_v*.tar.gz"))
    if not archives:
        pytest.skip("needs the MLPerf mirror")
    for archive in archives[:-1]:
        if not (mirror / archive.name).exists():
            os.link(archive, mirror / archive.name)
    cut = mirror / archives[-1].name
    cut.write_bytes(archives[-1].read_bytes()[: archives[-1].stat().st_size // 2])
    params_file = repro_clone / "params.yaml"
    original = params_file.read_text(encoding="utf-8")
    params_file.write_text(original.replace("mirror: ../shared/mlperf", "mirror: bad-mirror"), encoding="utf-8")
    before = _outputs(repro_clone)
    try:
        repro = run_dvc_repro(repro_clone, timeout=600)
    finally:
        params_file.write_text(original, encoding="utf-8")
    output = repro.stdout + repro.stderr
    assert repro.returncode != 0 and "failed to reproduce 'validate'" in output and "Traceback" not in output, output
    assert f"bad-mirror/{cut.name} ({cut.stat().st_size} bytes) is not a readable .tar.gz" in output, output
    after = _outputs(repro_clone)
    assert sorted(set(before) - set(after)) == [] and [name for name in before if before[name] != after[name]] == []


def test_a_reader_that_stops_early_ends_a_command_without_a_traceback() -> None:
    """`predict ... | head -1`: the pipe is closed before the command writes, as a reader that has read enough
    closes it; the command stops with exit status 1 and says nothing on stderr (it printed a BrokenPipeError's
    traceback before)."""
    from pipeline.core import paths

    if not (ROOT / paths.models_json("llama2_70b_lora")).is_file():
        pytest.skip("the decide stage has not run in this checkout")
    process = subprocess.Popen([sys.executable, "-m", "pipeline.commands.predict", "--benchmark", "llama2_70b_lora",
                                "--accelerator", "GB300", "--count", "512"], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    error = process.stderr.read().decode()
    assert process.wait() == 1 and error == "", error
