"""Logs, results folders and sources, hostile or broken: defective logs counted as runs with a reason, an aborted
run a result, a 20 MiB line or log read fast and lean, an oversized file refused unread, too few runs, files that are
no input listed, any name the summarizer globs a run, a path twice read once, a system name under two submitters kept
twice, an unknown benchmark scored but not analysed, and a source of another name or round, without input or missing
refused with its path."""
from __future__ import annotations

import math
import time
import tracemalloc
from pathlib import Path

import pandas as pd
import pytest

from pipeline.analysis.configurations import build_configurations
from pipeline.core.errors import SourceError
from pipeline.mlperf import rounds, sources
from pipeline.mlperf.logs import scoring
from pipeline.mlperf.logs.logparse import parse_log
from tests.conftest import mllog, run_log, run_stage, small_round, write_archive, write_folder
from tests.e2e.hostile_input import LOG, MIB, ingest_checked, reasons_for, run_of, tar_member, write_members

# ----------------------------------------------------------------------------------------------------- logs

@pytest.mark.parametrize(("log", "status", "reason"), [
    (mllog("run_stop", 5, status="success"), "no run_start", "result log has no run_start line: counted as a "
                                                            "non-converged run"),
    (mllog("run_start", 0), "no run_stop", "result log has no run_stop line: counted as a non-converged run"),
    (run_log(3)[:-25], "no run_stop", "result log has no run_stop line and 1 damaged MLPerf line(s)"),
    (run_log(3) + mllog("eval_accuracy", 9e12, 0.5)[:-9], "success",
     "result log has 1 damaged MLPerf line(s) (not valid JSON, or cut off): those lines were skipped"),
    (bytes(range(256)) * 40, "no MLPerf log lines", "result log has no MLPerf lines"),
    (b"", "no MLPerf log lines", "result log is empty (0 bytes): counted as a non-converged run"),
    (run_log(3).replace("1600000180000", "1e999"), "no run_stop", "1 damaged MLPerf line(s)"),
    (run_log(3).replace('"time_ms": 1600000180000', '"time_ms": [1]'), "no run_stop", "1 damaged"),
    ("\n".join([mllog("run_start", 0), ':::MLLOG {"key": "seed", "value": ' + "[" * 100_000 + "]" * 100_000 + "}",
                mllog("run_stop", 60_000, status="success")]), "success", "1 damaged MLPerf line(s)"),
], ids=["no run_start", "no run_stop", "cut-off run_stop", "cut-off last line", "binary garbage", "zero bytes",
        "infinite time", "time of the wrong type", "nested too deeply"])
def test_defective_logs_count_as_runs_with_a_reason(make_archive, log: str | bytes, status: str,
                                                   reason: str) -> None:
    files = {**small_round(), LOG: log}
    tables = ingest_checked([make_archive(files)])
    run = run_of(tables)
    assert run["status"] == status
    assert any(reason in text for text in reasons_for(tables, LOG)), reasons_for(tables, LOG)
    assert len(tables.runs) == 5 and tables.results.iloc[0]["n_runs"] == 5


def test_an_aborted_run_is_a_result_not_a_defect(make_archive) -> None:
    files = {**small_round(), LOG: run_log(3, status="aborted")}
    tables = ingest_checked([make_archive(files)])
    assert run_of(tables)["status"] == "aborted" and not run_of(tables)["converged"]
    assert reasons_for(tables, LOG) == []
    # the failure is the slowest: drop the fastest converged only, mean of 12, 13 and 14
    assert tables.results.iloc[0]["time_to_train_min"] == pytest.approx(13.0)


@pytest.mark.parametrize("line", [
    b"x" * (20 * MIB),
    (b':::MLLOG {"key": "run_start", "time_ms": 1, "value": null} ' * (20 * MIB // 60)),
    b"0: " + (b'"key": "seed" ' * (20 * MIB // 14)) + mllog("run_start", 0).encode(),
])
def test_a_single_line_of_20_mib_is_read_fast_and_lean(line: bytes) -> None:
    tracemalloc.start()
    start = time.perf_counter()
    facts = parse_log(line)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert not facts.converged
    assert seconds < 3.0, f"{seconds:.1f} s for one line of {len(line) >> 20} MiB"
    assert peak < 4 * len(line), f"{peak >> 20} MiB for a line of {len(line) >> 20} MiB"


def test_a_20_mib_log_in_an_archive_is_ingested(make_archive) -> None:
    tables = ingest_checked([make_archive({**small_round(), LOG: run_log(3) + "y" * (20 * MIB)})])
    assert run_of(tables)["converged"]


def test_an_oversized_file_is_refused_unread(make_archive, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "MAX_FILE_BYTES", 1000)
    files = {**small_round(), LOG: run_log(3) + "z" * 1000}
    for source in (make_archive(files), write_folder(tmp_path / "folder" / "training_results_v3.0", files)):
        tables = ingest_checked([source])
        assert run_of(tables)["status"] == "unreadable"
        [reason] = reasons_for(tables, LOG)
        assert "is larger than" in reason and reason.endswith("refused, not read; counted as a non-converged run")


# ------------------------------------------------------------------------------------------- results folders

def test_too_few_runs_and_no_runs(make_archive) -> None:
    files = small_round()
    for run in (3, 4):
        del files[f"Acme/results/box/resnet/result_{run}.txt"]
    files["Acme/results/box/bert/scaling.json"] = '{"scaling_factor": 1.1}'
    tables = ingest_checked([make_archive(files)])
    results = tables.results.set_index("benchmark")
    assert (results.loc["resnet", "n_runs"], results.loc["resnet", "runs_required"]) == (3, 5)
    assert not results.loc["resnet", "complete"] and results.loc["resnet", "time_to_train_min"] == 11.0
    assert reasons_for(tables, "Acme/results/box/resnet/") == [
        "results folder holds fewer result logs than the rules require: scored from the runs present"]
    assert reasons_for(tables, "Acme/results/box/bert/") == [
        "results folder holds no result logs (the published logs are absent): not scored"]


def test_files_that_are_no_input_are_listed(make_archive) -> None:
    files = small_round()
    extra = {
        "Acme/results/box/resnet/notes.md": "not an input, ignored",
        "Acme/results/box/resnet/.!123!result_4.txt": "hidden or temporary file",
        "Acme/results/result_3.txt": "result log is not at",
    }
    # The repository around the inputs: counted in the tally, not listed.
    repository = ["README.md", "Acme/benchmarks/resnet/implementations/train.py", "Acme/LICENSE"]
    nested = "Acme/results/box/resnet/bert/result_0.txt"
    files.update(dict.fromkeys([*extra, *repository, nested], run_log(2)))
    tables = ingest_checked([make_archive(files)])
    for path, reason in extra.items():
        assert reason in reasons_for(tables, path)[0]
    assert tables.tally.iloc[0]["other_files"] == len(extra)
    assert tables.tally.iloc[0]["repository_files"] == len(repository)
    assert not tables.quarantine["path"].isin(repository).any()
    assert "result log is nested below a benchmark folder" in reasons_for(tables, nested)[0]
    assert reasons_for(tables, "Acme/results/box/resnet/bert/")[0].startswith("unknown benchmark")
    assert tables.results.set_index("benchmark").loc["resnet", "time_to_train_min"] == pytest.approx(12.0)
    nested_result = tables.results.set_index("benchmark").loc["resnet/bert"]
    assert math.isnan(nested_result["time_to_train_min"]) and nested_result["score_note"] == scoring.NESTED_NOTE


def test_any_name_the_summarizer_globs_is_a_run(make_archive) -> None:
    files = small_round()
    for run in range(5):
        del files[f"Acme/results/box/resnet/result_{run}.txt"]
    names = ["result_.txt", "result_a b.txt", "result_x.txt.txt", "result_007.txt", "result_7.txt"]
    files.update({f"Acme/results/box/resnet/{name}": run_log(10.0 + i) for i, name in enumerate(names)})
    tables = ingest_checked([make_archive(files)])
    assert tables.runs["run"].tolist() == ["", "007", "7", "a b", "x.txt"]
    assert tables.results.iloc[0]["time_to_train_min"] == pytest.approx(12.0)


def test_a_path_twice_in_an_archive_is_read_once(tmp_path: Path) -> None:
    top = "training_results_v3.0"
    members = [tar_member(f"{top}/{name}", data=content.encode()) for name, content in small_round().items()]
    archive = write_members(tmp_path / f"{top}.tar.gz", [*members, tar_member(f"{top}/{LOG}", data=b"again")])
    tables = ingest_checked([archive])
    assert reasons_for(tables, LOG) == ["archive holds this path more than once: only its first copy is read"]
    assert run_of(tables)["time_to_train_min"] == pytest.approx(10.0)


# ------------------------------------------------------------------------------------------ names and rounds

def test_the_same_system_name_under_two_submitters_is_kept_twice(make_archive) -> None:
    files = small_round()
    files.update({path.replace("Acme", "Bolt"): content for path, content in small_round([1, 2, 3, 4, 5]).items()})
    tables = ingest_checked([make_archive(files)])
    keys = set(tables.systems[["submitter", "system"]].itertuples(index=False, name=None))
    assert keys == {("Acme", "box"), ("Bolt", "box")}
    notes = tables.systems.set_index("submitter")["ingest_note"]
    assert notes["Acme"] == "system name also used by Bolt: kept apart by submitter"
    assert notes["Bolt"] == "system name also used by Acme: kept apart by submitter"
    assert tables.results.set_index("submitter")["time_to_train_min"].to_dict() == {"Acme": 12.0, "Bolt": 3.0}


def test_an_unknown_benchmark_is_scored_but_not_analysed(make_archive) -> None:
    files = small_round()
    files.update({path.replace("/resnet/", "/quantum_chess/"): log for path, log in small_round().items()
                  if "/resnet/" in path})
    tables = ingest_checked([make_archive(files)])
    unknown = tables.results.set_index("benchmark").loc["quantum_chess"]
    assert unknown["benchmark_id"] is None or pd.isna(unknown["benchmark_id"])
    [reason] = reasons_for(tables, "Acme/results/box/quantum_chess/")
    assert reason.startswith("unknown benchmark") and reason.endswith("not analysed")
    configurations, _ = build_configurations(tables.systems, tables.results, tables.runs)
    assert configurations["benchmark_folder"].tolist() == ["resnet"]


@pytest.mark.parametrize("name", ["training_results_latest.tar.gz", "results_v3.0.tar.gz", "training_results_v3.zip"])
def test_a_source_with_an_unexpected_name_is_refused_with_exit_1(tmp_path: Path, name: str) -> None:
    source = write_archive(tmp_path / name, small_round(), top="training_results_v3.0")
    done = run_stage("ingest", str(source), "--out", str(tmp_path / "out"), cwd=tmp_path, check=False)
    assert done.returncode == 1
    error = done.stderr
    assert error.startswith("error: cannot tell the round of") and "training_results_vX.Y" in error
    assert error.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_an_archive_holding_another_round_folder_is_refused(tmp_path: Path) -> None:
    archive = write_archive(tmp_path / "training_results_v3.0.tar.gz", small_round(), top="training_results_v2.0")
    with pytest.raises(SourceError, match=r"holds a round folder training_results_v2\.0/"):
        rounds.ingest([archive])
    nested = write_folder(tmp_path / "x" / "training_results_v3.0" / "training_results_v3.0", small_round()).parent
    with pytest.raises(SourceError, match=r"holds a round folder training_results_v3\.0/"):
        rounds.ingest([nested])


def test_a_source_without_any_input_is_refused(make_archive) -> None:
    with pytest.raises(SourceError, match=r"holds no system description .* and no result log"):
        rounds.ingest([make_archive({"NVIDIA/benchmarks/resnet/train.py": "x = 1\n"})])


def test_a_missing_source_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        rounds.ingest([tmp_path / "training_results_v3.0.tar.gz"])
