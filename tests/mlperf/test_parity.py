"""The oracle test: our ingest scores what the official `mlperf_logging.result_summarizer` scores, and reads
every file of every round. Skipped when the mirror of archives (../shared/mlperf) is absent.

The summarizer takes minutes per round, so what it gives is kept in tests/data/parity/ (one CSV of scores and
one manifest per round, keyed by the archive's SHA-256) and compared here with our ingest of every round; the
slow lane (`python -m pytest -m slow`) runs it live on one round and checks that it still gives the fixture.
`python bench/parity_fixtures.py [ROUND ...]` regenerates them."""
from __future__ import annotations

import re
import tarfile
from pathlib import Path, PurePosixPath

import pandas as pd
import pytest

from bench._common import archive_path
from bench.parity import (
    MATCHED,
    Official,
    SummarizerLog,
    _by_rule,
    _kept_lines,
    compare_official,
    exceptions,
    parse_official_csv,
    read_fixture,
    run_official,
    sha256_of,
    write_fixture,
)
from bench.parity_fixtures import differences, unordered
from pipeline.mlperf.rounds import IngestTables

ROUNDS = ["v0.6", "v0.7", "v1.0", "v1.1", "v2.0", "v2.1", "v3.0", "v3.1", "v4.0", "v4.1", "v5.0", "v5.1"]
# The official summarizer's glob `result_*.txt`.
RESULT_LOG = re.compile(r"result_[^/]*\.txt")
# Scores we knowingly do not reproduce, with how their reason must end (where the official compliance checker
# rejects a run that we count, `REPRODUCES`: rescoring our runs without it must give the official outcome). An
# entry that no longer occurs fails its round's test, so the list stays what the data says.
KNOWN_EXCEPTIONS = {
    # Results whose system description is absent from the published repository: the summarizer cannot name
    # the system and skips it; ingest scores the logs (the result is kept, its hardware fields missing).
    **{("v0.7", "Alibaba", system, "resnet"): f"ERROR: Missing Alibaba/systems/{system}.json"
       for system in ("v100-1280", "v100-256", "v100-512")},
}
# The round the slow lane regenerates live: its logs are complete, as published (v4.1 Lambda's with two
# processes' writes interleaved on a line, and named after their job), and the summarizer takes about a minute.
LIVE_ROUND = "v4.1"


def _archive(round_: str) -> Path:
    path = archive_path(round_)
    if not path.is_file():
        pytest.skip(f"{path} is absent: the mirror of MLPerf archives is not here")
    return path


def _fixture(round_: str) -> Official:
    """The round's committed fixture; the test is skipped where there is none, or the archive is not its own."""
    archive = _archive(round_)
    official = read_fixture(round_)
    if official is None:
        pytest.skip(f"no parity fixture for {round_}: python bench/parity_fixtures.py {round_}")
    if (sha256 := sha256_of(archive)) != official.sha256:
        pytest.skip(f"{archive.name} (SHA-256 {sha256[:12]}...) is not the archive the {round_} fixture was made "
                    f"from ({official.sha256[:12]}...): regenerate it, python bench/parity_fixtures.py {round_}")
    return official


def count_members(archive: Path) -> tuple[int, int]:
    """(result logs, system descriptions) in a round archive, counted from the archive itself.

    A log is `<submitter>/results/**/result_*.txt`, a description `<submitter>/systems/<name>.json`.
    """
    logs = systems = 0
    with tarfile.open(archive, "r|gz") as tar:
        for info in tar:
            parts = PurePosixPath(info.name).parts[1:]  # below training_results_vX.Y/
            if not info.isreg() or len(parts) < 3:
                continue
            logs += parts[1] == "results" and bool(RESULT_LOG.fullmatch(parts[-1]))
            systems += len(parts) == 3 and parts[1] == "systems" and parts[2].endswith(".json")
    return logs, systems


@pytest.fixture(scope="module")
def every_round(real_tables: IngestTables) -> IngestTables:
    """The ingest of every round of the mirror (the session's `real_tables`, shared with the other real-data
    tests: ingesting the twelve rounds once more took a fifth of the default lane)."""
    return real_tables


@pytest.mark.parametrize("round_", ROUNDS)
def test_every_log_and_system_file_is_accounted_for(round_: str, every_round: IngestTables) -> None:
    logs, system_files = count_members(_archive(round_))
    runs = int((every_round.runs["round"] == round_).sum())
    tally = every_round.tally.set_index("round").loc[round_]
    parsed = int((every_round.systems["round"] == round_).sum())
    assert logs > 0 and system_files > 0
    assert runs == logs, f"{round_}: {logs} result logs in the archive, {runs} rows in runs.parquet"
    assert parsed + tally["systems_quarantined"] == system_files, (
        f"{round_}: {system_files} system descriptions in the archive, {parsed} parsed + "
        f"{tally['systems_quarantined']} quarantined")


@pytest.mark.parametrize("round_", ROUNDS)
def test_official_scores_are_reproduced(round_: str, every_round: IngestTables, parity_report: list[str]) -> None:
    official = _fixture(round_)
    comparison = compare_official(official, every_round)
    matched = int((comparison["status"] == MATCHED).sum())
    unscored = (f"; the summarizer crashed on {', '.join(official.crashed)} (not compared)"
                if official.crashed else "")
    unscored += (f"; {', '.join(official.without_power)} scored without their power logs (the summarizer's "
                 "energy crashed)" if official.without_power else "")
    summary = (f"{round_}: {len(official.scores)} official scores, {len(comparison)} compared (official and "
               f"ours), {matched} matched{unscored}")
    parity_report.append(summary)
    unexpected = [row for row in exceptions(comparison).to_dict("records")
                  if (round_, row["submitter"], row["system"], row["benchmark"]) not in KNOWN_EXCEPTIONS]
    assert not unexpected, f"{summary}; scores that differ from the official ones: {unexpected}"
    for row in exceptions(comparison).to_dict("records"):
        expected = KNOWN_EXCEPTIONS[round_, row["submitter"], row["system"], row["benchmark"]]
        assert row["reason"].endswith(expected), f"{row}: the reason should end {expected!r}"
    found = {(round_, *key) for key in exceptions(comparison)[["submitter", "system", "benchmark"]].itertuples(
        index=False, name=None)}
    stale = {key for key in KNOWN_EXCEPTIONS if key[0] == round_} - found
    assert not stale, f"{summary}; known exceptions that are not (any more): {sorted(stale)}"


def test_the_interleaved_lines_of_v4_1_lambda_are_rejected_as_the_summarizer_rejects_them(
        every_round: IngestTables) -> None:
    official = _fixture("v4.1")
    runs = every_round.runs[(every_round.runs["round"] == "v4.1") & (every_round.runs["submitter"] == "Lambda")]
    damaged = runs[runs["compliance"].fillna("").str.contains("do not parse")]
    assert sorted(damaged["benchmark"]) == ["llama2_70b_lora", "stable_diffusion", "stable_diffusion"]
    rejected = SummarizerLog.parse(official.log_text).rejected_runs
    for row in damaged.to_dict("records"):
        folder = f"Lambda/results/{row['system']}/{row['benchmark']}"
        assert f"result_{row['run']}.txt" in {run for run, _ in rejected[folder]}, folder


@pytest.mark.parametrize("round_", ["v4.0", "v4.1"])
def test_results_of_logs_named_after_their_job_are_compared_and_matched(round_: str,
                                                                        every_round: IngestTables) -> None:
    official = _fixture(round_)
    key = ["submitter", "system", "benchmark"]
    runs = every_round.runs[every_round.runs["round"] == round_]
    runs = runs[~runs["submitter"].isin(official.crashed)]  # organisations the summarizer does not score
    named = runs[~runs["run"].str.fullmatch(r"\d+")][key].drop_duplicates()
    results = every_round.results[every_round.results["round"] == round_]
    named_scored = named.merge(results[results["time_to_train_min"].notna()][key])
    comparison = compare_official(official, every_round)
    matched = comparison[comparison["status"] == MATCHED][key]
    assert len(named_scored.merge(matched)) == len(named_scored) > 0, named_scored.merge(matched, how="left")


@pytest.mark.slow
def test_the_official_summarizer_still_gives_the_committed_fixture(tmp_path: Path) -> None:
    committed = _fixture(LIVE_ROUND)
    fresh = run_official(LIVE_ROUND, archive_path(LIVE_ROUND), tmp_path)
    assert differences(fresh, committed) == []


def test_official_csv_and_log_are_read(tmp_path: Path) -> None:
    csv = tmp_path / "official.csv"
    csv.write_text(
        "division,system,private_id,bert,maskrcnn,details_url,code_url\n"
        "closed,Pretty A,,1.5,,https://github.com/mlcommons/training_results_v1.0/blob/main/Org A/systems/a.json,x\n"
        "closed,Pretty B,,,2.5,https://github.com/mlcommons/training_results_v1.0/blob/main/OrgB/systems/b_1.json,x\n")
    scores = parse_official_csv(csv).sort_values("official_min").to_dict("records")
    assert scores == [
        {"desc_submitter": "Org A", "system": "a", "benchmark": "bert", "official_min": 1.5},
        {"desc_submitter": "OrgB", "system": "b_1", "benchmark": "maskrcnn", "official_min": 2.5},
    ]
    log = SummarizerLog.parse(
        "WARNING:root: Failed checks for eval_accuracy :  v['value'] >= 0.908\n"
        "Compliance check failed in /tmp/x/training_results_v1.0/G/results/s/unet3d/result_3.txt\n"
        "NOTICE: Dropping non-converged run(s) for G s/unet3d using olympic scoring.\n"
        "Compliance check failed in /tmp/x/training_results_v1.0/G/results/s/unet3d/result_4.txt\n")
    assert log.rejected_runs == {"G/results/s/unet3d": [
        ("result_3.txt", "Failed checks for eval_accuracy : v['value'] >= 0.908"),
        ("result_4.txt", "no rule printed"),
    ]}


def test_runs_named_after_their_job_are_read_from_the_summarizer_log() -> None:
    log = SummarizerLog.parse(
        "ValueError: no run_stop in /tmp/x/training_results_v4.0/smc/results/s/bert/result_5119-2405_06.txt\n"
        "ValueError: no run_stop in /tmp/x/training_results_v4.0/smc/results/s/bert/result_3.txt\n")
    rejected = log.rejected_runs["smc/results/s/bert"]
    assert rejected == [("result_5119-2405_06.txt", "ValueError: no run_stop"),
                        ("result_3.txt", "ValueError: no run_stop")]
    assert _by_rule(rejected) == "result_3,5119-2405_06.txt: ValueError: no run_stop"


def test_a_fixture_reads_back_as_written(tmp_path: Path) -> None:
    scores = pd.DataFrame({"desc_submitter": ["Org A", "NA"], "system": ["a_1", "b"], "benchmark": ["bert", "dlrm"],
                           "official_min": [1 / 3, 25.123456789012345]})
    rule = "WARNING:root: Failed checks for eval_accuracy :  v['value'] >= 0.908"
    log = _kept_lines(f"Detected organizations: OrgA\n{rule}\ncurrent context[s]={{\n"
                      "Compliance check failed in /tmp/x/training_results_v1.0/OrgA/results/a_1/bert/result_3.txt\n")
    assert log == ["Detected organizations: OrgA", rule,
                   "Compliance check failed in OrgA/results/a_1/bert/result_3.txt"]
    archive = tmp_path / "training_results_v1.0.tar.gz"
    archive.write_bytes(b"not really an archive")
    official = Official("v1.0", sha256_of(archive), scores.sort_values(["desc_submitter"]).reset_index(drop=True),
                        log, {"Org C": "FieldError: ..."}, per_organisation=True, seconds=12.25)
    write_fixture(official, archive, tmp_path)
    again = read_fixture("v1.0", tmp_path)
    assert again is not None and differences(again, official) == []
    assert again.scores["official_min"].tolist() == official.scores["official_min"].tolist()  # to the last bit
    assert again.per_organisation and again.crashed == {"Org C": "FieldError: ..."}
    assert read_fixture("v9.9", tmp_path) is None


def test_lines_listing_a_set_compare_in_any_order() -> None:
    assert unordered("Required AT_LEAST_ONE occurrence of 'epoch_stop' or 'block_stop'") == unordered(
        "Required AT_LEAST_ONE occurrence of 'block_stop' or 'epoch_stop'")
    line = "WARNING:root: Required EXACTLY_ONE occurrence of 'seed' but found 2 with different values: [{}, {}]"
    assert unordered(line.format(1, 2)) == unordered(line.format(2, 1)) != unordered(line.format(1, 3))
    assert unordered("Compliance check failed in a/b.txt") == "Compliance check failed in a/b.txt"
