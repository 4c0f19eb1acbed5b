"""Benchmarks and rules from the official package: benchmark_rules.json is the installed mlperf-logging's, a
benchmark its rules drop is retired from then on, and a benchmark the catalogue does not describe is still known."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.analysis.scope import check_benchmark
from pipeline.mlperf import benchmark_rules
from pipeline.mlperf.catalogue import BY_ID, DESCRIBED, identify


def test_the_rules_file_is_the_installed_packages() -> None:
    pytest.importorskip("mlperf_logging")
    vendored = json.loads(Path(benchmark_rules.__file__).with_name(benchmark_rules.RULES_FILE).read_text())
    assert vendored == json.loads(json.dumps(benchmark_rules.rules_document())), (
        "pipeline/mlperf/benchmark_rules.json is stale: run python -m pipeline.mlperf.benchmark_rules")


def test_the_described_runs_and_retirements_agree_with_the_package() -> None:
    """The hand-written table's runs and last rounds are the package's wherever both speak."""
    for described in DESCRIBED:
        assert BY_ID[described.id].runs_required == described.runs_required, described.id
        if described.last_round is not None:
            assert BY_ID[described.id].last_round == described.last_round, described.id


def test_retinanet_and_rgat_retire_after_v5_1() -> None:
    assert BY_ID["retinanet"].last_round == "v5.1" and BY_ID["rgat"].last_round == "v5.1"
    assert identify("v6.0", "retinanet") is None and identify("v5.1", "rgat") is BY_ID["rgat"]


@pytest.mark.parametrize(("folder", "runs", "target"), [("deepseekv3_671b", 3, ("<=", 3.6)),
                                                        ("gpt_oss_20b", 10, ("<=", 3.34))])
def test_a_new_round_s_benchmarks_are_known_under_their_folder_names(folder: str, runs: int,
                                                                     target: tuple[str, float]) -> None:
    benchmark = identify("v6.0", folder)
    assert benchmark is not None and benchmark.id == folder and benchmark.new and benchmark.first_round == "v6.0"
    assert benchmark.runs_required == runs and benchmark.target == target and benchmark.olympic_drop == 1
    assert identify("v5.1", folder) is None


def test_predict_knows_the_new_benchmarks() -> None:
    check_benchmark("deepseekv3_671b")
    check_benchmark("gpt_oss_20b")
