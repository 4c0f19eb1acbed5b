"""Ingest on hand-made rounds: log formats, the olympic rule, scaling, accounting and the CLI."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from pipeline.core.errors import SourceError
from pipeline.mlperf import rounds
from pipeline.mlperf.logs import scoring
from pipeline.mlperf.logs.logparse import _decode_record, _prefix_tree, parse_log
from tests.conftest import mllog, run_log, run_stage, small_round, system_json, write_folder


def test_mllog_with_prefixes_noise_crlf_and_bad_bytes() -> None:
    text = run_log(12.5).replace(":::MLLOG", "0: :::MLLOG")
    noisy = "starting job\n" + text.replace("\n", "\r\n") + "\xff\xfe garbage\n"
    facts = parse_log(noisy.encode("latin-1", "replace"))
    assert facts.converged
    assert facts.time_to_train_min == pytest.approx(12.5)
    assert facts.global_batch_size == 256
    assert facts.eval_value == pytest.approx(0.76)
    assert facts.epochs_to_converge == 3


def test_mll_v06_format_in_seconds() -> None:
    log = "\n".join([
        ":::MLL 1560881700.000 submission_benchmark: {\"value\": \"resnet\"}",
        ":::MLL 1560881700.500 run_start: {\"value\": null, \"metadata\": {\"lineno\": 1}}",
        ":::MLL 1560882000.500 run_stop: {\"value\": null, \"metadata\": {\"status\": \"success\"}}",
    ])
    facts = parse_log(log.encode())
    assert facts.log_format == "mll"
    assert facts.time_to_train_min == pytest.approx(5.0)
    assert facts.submission_benchmark == "resnet"


def test_duplicated_keys_resolve_as_the_official_summarizer() -> None:
    log = "\n".join([mllog("run_start", 0), mllog("run_start", 60_000),
                     mllog("run_stop", 180_000, status="success"), mllog("run_stop", 999_000, status="success")])
    assert parse_log(log.encode()).time_to_train_min == pytest.approx(2.0)


@pytest.mark.parametrize("record", [
    b'{"time_ms": 1, "key": "eval_accuracy", "value": NaN, "metadata": {}}',  # json.dumps writes NaN
    b'{"time_ms": 1, "key": "eval_accuracy", "value": 0.5, "metadata": {"note": "caf\xe9"}}',  # not UTF-8
    b'{"time_ms": 1, "key": "eval_accuracy", "value": 0.5, "value": 0.75, "metadata": {}}',  # a key twice
    b'{"time_ms": 1.5e3, "key": "eval_accuracy", "value": 7.25e-1, "metadata": {"epoch_num": 3}}',
])
def test_a_record_decodes_as_the_standard_json_reader_reads_it(record: bytes) -> None:
    import json
    expected = json.loads(record.decode("utf-8", "replace"))
    decoded = _decode_record(record)
    assert json.dumps(decoded) == json.dumps(expected)


def evaluations(*values: str) -> str:
    """A converged run_log whose evaluations are these JSON value texts, one record each, before run_stop."""
    lines = run_log(10).splitlines()
    stop = next(index for index, line in enumerate(lines) if '"run_stop"' in line)
    evaluations = [mllog("eval_accuracy", 1_600_000_000_000 + index, 0.0, epoch_num=index).replace(
        '"value": 0.0', f'"value": {value}') for index, value in enumerate(values)]
    return "\n".join([line for line in lines[:stop] if '"eval_accuracy"' not in line] + evaluations
                     + lines[stop:]) + "\n"


@pytest.mark.parametrize(("log", "values", "bad_lines"), [
    (evaluations("0.5", "0.75", "0.76"), [0.5, 0.75, 0.76], 0),  # as MLLOG writes them: read a list at a time
    (evaluations("0.5", "1", "0.76"), [0.5, 1.0, 0.76], 0),  # an integer value
    (evaluations("0.5", "NaN", "0.76"), [0.5, 0.76], 0),  # json.dumps writes NaN: no number
    (evaluations("0.5", '"high"', "0.76"), [0.5, 0.76], 0),
    (evaluations("0.5", "null", "0.76"), [0.5, 0.76], 0),
    (evaluations("0.5", "1e999", "0.76"), [0.5, 0.76], 0),  # infinite
    (evaluations("0.5", "0.7, oops", "0.76"), [0.5, 0.76], 1),  # a damaged line is counted and skipped
    (evaluations("0.5", "0.7").replace('"epoch_num": 1}}', '"epoch_num": 1'), [0.5], 1),  # cut off
])
def test_every_evaluation_is_read_however_it_is_written(log: str, values: list[float], bad_lines: int) -> None:
    facts = parse_log(log.encode())
    assert facts.eval_values == values
    assert facts.bad_lines == bad_lines
    assert facts.eval_value == values[-1]
    assert facts.converged


def test_a_record_whose_line_holds_another_keys_text_is_read_in_its_place() -> None:
    # Output before the MLLOG token names eval_accuracy; the record itself is the run's run_stop.
    log = run_log(10).replace(':::MLLOG {"namespace": "", "time_ms": 1600000600000',
                              'note "key": "eval_accuracy" :::MLLOG {"namespace": "", "time_ms": 1600000600000')
    assert 'note "key"' in log
    facts = parse_log(log.encode())
    assert facts.status == "success" and facts.time_to_train_min == pytest.approx(10.0)
    assert facts.eval_values == [0.76]


@pytest.mark.parametrize("words", [
    [b"run_start", b"run_stop", b"seed"],
    [b"a", b"ab", b"abc", b"abd", b"b"],  # words that are prefixes of others
    [b"eval_accuracy", b"eval_target", b"eval_samples", b"epoch_num", b"e"],
])
def test_the_prefix_tree_matches_exactly_its_words(words: list[bytes]) -> None:
    import re
    pattern = re.compile(_prefix_tree(sorted(words)))
    assert all(pattern.fullmatch(word) for word in words)
    near_misses = {word[:-1] for word in words} | {word + b"x" for word in words} | {b"", b"x"}
    assert not any(pattern.fullmatch(word) for word in near_misses - set(words))


@pytest.mark.parametrize(("log", "status"), [
    (b"", "no MLPerf log lines"),
    (mllog("run_start", 0).encode(), "no run_stop"),
    (mllog("run_stop", 5, status="success").encode(), "no run_start"),
    (run_log(3, status="aborted").encode(), "aborted"),
    ((run_log(3)[:-40]).encode(), "no run_stop"),
])
def test_logs_that_do_not_converge(log: bytes, status: str) -> None:
    facts = parse_log(log)
    assert facts.status == status
    assert not facts.converged
    assert math.isnan(facts.record()["time_to_train_min"])


@pytest.mark.parametrize(("times", "failed", "k", "expected"), [
    ([1, 2, 3, 4, 5], 0, 1, 3.0),          # drop fastest and slowest
    ([1, 2, 3, 4], 1, 1, 3.0),             # a failed run was the slowest: drop only the fastest
    ([1, 2, 3], 2, 1, math.nan),           # f > k: no score
    (list(range(1, 41)), 0, 4, 20.5),      # unet3d: drop 4 and 4
    (list(range(1, 39)), 2, 4, 20.5),      # unet3d, 2 failures: mean of 5..36 (4 fastest, 2 slowest dropped)
    ([5], 0, 1, math.nan),
])
def test_olympic_score(times: list[float], failed: int, k: int, expected: float) -> None:
    score = scoring.olympic_score(times, failed, k)
    assert (math.isnan(score) and math.isnan(expected)) or score == pytest.approx(expected)


def test_small_archive_scores_and_accounts(make_archive) -> None:
    files = small_round()
    files["Acme/results/box/resnet/scaling.json"] = '{"scaling_factor": 1.5}'
    files["Acme/results/box/resnet/notes.md"] = "hello"
    tables = rounds.ingest([make_archive(files)])
    result = tables.results.iloc[0]
    assert result["time_to_train_min"] == pytest.approx(12.0 * 1.5)
    assert (result["n_runs"], result["n_converged"], result["runs_required"]) == (5, 5, 5)
    assert result["complete"] and result["benchmark_id"] == "resnet" and result["division"] == "closed"
    tally = tables.tally.iloc[0]
    assert tally["log_files"] == tally["runs"] == 5
    assert tally["system_files"] == tally["systems"] + tally["systems_quarantined"] == 1
    assert "not an input" in tables.quarantine.loc[tables.quarantine["path"].str.endswith("notes.md"), "reason"].item()


def test_folder_and_archive_give_the_same_tables(make_archive, tmp_path: Path) -> None:
    files = small_round([9.0, 8.0, 7.0, 6.0, 5.0])
    from_archive = rounds.ingest([make_archive(files)])
    from_folder = rounds.ingest([write_folder(tmp_path / "clone" / "training_results_v3.0", files)])
    for name in ("systems", "runs", "results", "quarantine"):
        left, right = getattr(from_archive, name), getattr(from_folder, name)
        pd.testing.assert_frame_equal(left.drop(columns=[], errors="ignore"), right)


def test_malformed_and_missing_system_descriptions(make_archive) -> None:
    files = small_round()
    commented = system_json().replace(', "framework"', ',\n  // a comment\n  "framework"')
    files["Acme/systems/box.json"] = commented[:-1] + ",}"
    files["Acme/systems/broken.json"] = "{not json"
    files["Acme/systems/empty.json"] = ""
    files["Other/results/ghost/resnet/result_0.txt"] = run_log(3)
    tables = rounds.ingest([make_archive(files)])
    box = tables.systems.set_index("system").loc["box"]
    assert "repaired" in box["ingest_note"]
    reasons = dict(zip(tables.quarantine["path"], tables.quarantine["reason"]))
    assert "not valid JSON" in reasons["Acme/systems/broken.json"]
    assert "empty" in reasons["Acme/systems/empty.json"]
    assert "no usable system description" in reasons["Other/systems/ghost.json"]
    tally = tables.tally.iloc[0]
    assert tally["system_files"] == tally["systems"] + tally["systems_quarantined"] == 3


def test_too_many_failures_is_not_scored(make_archive) -> None:
    files = small_round()
    for run in (0, 1):
        files[f"Acme/results/box/resnet/result_{run}.txt"] = run_log(5, status="aborted")
    result = rounds.ingest([make_archive(files)]).results.iloc[0]
    assert math.isnan(result["time_to_train_min"])
    assert "2 non-converged runs" in result["score_note"]


def test_cli_writes_the_four_tables_the_tally_and_the_summary_check(make_archive, tmp_path: Path) -> None:
    done = run_stage("ingest", str(make_archive(small_round())), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert {path.name for path in (tmp_path / "out").iterdir()} == {
        "systems.parquet", "runs.parquet", "results.parquet", "quarantine.csv", "tally.csv", "summary_check.json"}
    assert "v3.0" in done.stdout


def test_cli_rejects_a_source_without_a_round_name(tmp_path: Path) -> None:
    done = run_stage("ingest", str(tmp_path), "--out", str(tmp_path / "out"), cwd=tmp_path, check=False)
    assert done.returncode == 1
    assert "training_results_vX.Y" in done.stderr


def test_same_round_twice_is_refused(make_archive, tmp_path: Path) -> None:
    archive = make_archive(small_round())
    folder = write_folder(tmp_path / "x" / "training_results_v3.0", small_round())
    with pytest.raises(SourceError, match="more than once"):
        rounds.ingest([archive, folder])


def test_a_run_that_never_reaches_the_quality_target_does_not_count(make_archive) -> None:
    files = small_round()
    files["Acme/results/box/resnet/result_0.txt"] = run_log(1.0).replace('"value": 0.76', '"value": 0.70')
    tables = rounds.ingest([make_archive(files)])
    run = tables.runs.set_index("run").loc["0"]
    assert run["status"] == "success" and not run["reached_target"] and not run["converged"]
    # converged 11..14 with one failure: drop the fastest only, mean of 12, 13 and 14
    assert tables.results.iloc[0]["time_to_train_min"] == pytest.approx(13.0)


# --------------------------------------------------------------------- logs named after a job (v4.0 SMC, v4.1 Lambda)

SMC_JOB = "5119-240510190348838227199"


def job_named_round() -> dict[str, str]:
    """Logs named as Sustainable Metal Cloud's (`result_<job id>_NN.txt`) and Lambda-style numbered ones whose
    natural order differs from their text order (`_2` before `_10`), beside a folder with no log at all."""
    files: dict[str, str] = {"smc/systems/smc.json": system_json(), "Lambda/systems/1cc.json": system_json()}
    for number, minutes in zip((2, 4, 6, 8, 10), (14.0, 10.0, 12.0, 11.0, 13.0)):
        files[f"smc/results/smc/resnet/result_{SMC_JOB}_{number:02d}.txt"] = run_log(minutes)
    for number, minutes in zip((1, 2, 10), (21.0, 20.0, 22.0)):
        files[f"Lambda/results/1cc/resnet/result_7731_{number}.txt"] = run_log(minutes)
    files["Lambda/results/1cc/bert/scaling.json"] = '{"scaling_factor": 1.0}'
    return files


@pytest.mark.parametrize("as_folder", [False, True], ids=["archive", "folder"])
def test_logs_named_after_their_job_are_runs(as_folder: bool, make_archive, tmp_path: Path) -> None:
    files = job_named_round()
    source = (write_folder(tmp_path / "clone" / "training_results_v4.0", files) if as_folder
              else make_archive(files, round_="v4.0"))
    tables = rounds.ingest([source])
    runs = tables.runs.groupby("submitter")["run"].agg(list).to_dict()
    assert runs == {"smc": [f"{SMC_JOB}_{number:02d}" for number in (2, 4, 6, 8, 10)],
                    "Lambda": ["7731_1", "7731_2", "7731_10"]}
    results = tables.results.set_index(["submitter", "benchmark"])
    # 10, 11, 12, 13, 14 minutes: drop the fastest and the slowest, mean of 11, 12 and 13
    assert results.loc[("smc", "resnet"), "time_to_train_min"] == pytest.approx(12.0)
    assert results.loc[("Lambda", "resnet"), "time_to_train_min"] == pytest.approx(21.0)
    assert results.loc[("Lambda", "resnet"), "n_runs"] == 3
    tally = tables.tally.iloc[0]
    assert tally["log_files"] == tally["runs"] == 8
    assert tally["system_files"] == tally["systems"] + tally["systems_quarantined"] == 2
    assert tally["other_files"] == 0
    absent = tables.quarantine[tables.quarantine["reason"].str.contains("published logs are absent")]
    assert absent["path"].tolist() == ["Lambda/results/1cc/bert/"]
    assert not tables.quarantine["reason"].str.contains("not an input|result log is not at").any()
