"""fetch.rounds: all: the mirror's rounds, and the rounds a (local, bare) upstream answers for, probed with
git ls-remote; offline, what upstream answered last."""
from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.mlperf import discovery
from pipeline.mlperf.catalogue import ROUND_PUBLISHED, round_version, successors
from pipeline.mlperf.upstream import UpstreamRecord, read_upstream_record
from tests.conftest import bare_upstream, small_round, write_archive, write_folder


def test_the_mirror_rounds_are_found_by_name(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    write_archive(mirror / "training_results_v5.1.tar.gz", small_round())
    write_folder(mirror / "training_results_v6.0", small_round())
    write_archive(mirror / "training_results_v0.5.tar.gz", small_round())  # before the first round read
    (mirror / "README.md").write_text("x")
    assert discovery.in_mirror(mirror) == ["v5.1", "v6.0"]


def test_next_rounds_upstream_are_found_and_recorded(tmp_path: Path) -> None:
    newest = max(ROUND_PUBLISHED, key=round_version)
    following = successors(newest)[0]
    upstream = bare_upstream(write_folder(tmp_path / "upstream-work", small_round()), tmp_path / "remote", newest,
                             following)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    write_archive(mirror / f"training_results_{newest}.tar.gz", small_round())
    found = discovery.discover(mirror, upstream, UpstreamRecord())
    assert found.rounds == [newest, following]
    assert found.record.new == [following] and found.record.newer_than(newest) == following
    assert any(f"found {following}" in note for note in found.notes)


def test_offline_the_mirror_is_used_and_the_last_check_is_said(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    write_archive(mirror / "training_results_v5.1.tar.gz", small_round())
    previous = UpstreamRecord(checked="2026-06-20 10:00 UTC", new=["v6.1"])
    found = discovery.discover(mirror, (tmp_path / "none").as_uri() + "/{round}", previous)
    assert found.record == previous
    assert found.rounds == ["v5.1"]
    assert found.notes == ["the mirror holds 1 round (v5.1 to v5.1)",
                           f"upstream {(tmp_path / 'none').as_uri()}/<round> does not answer (offline?): last "
                           "answered 2026-06-20 10:00 UTC (then it had v6.1)"]


@pytest.mark.parametrize(("round_", "expected"), [("v5.0", ["v5.1", "v6.0"]), ("v5.1", ["v6.0"])])
def test_successors(round_: str, expected: list[str]) -> None:
    assert successors(round_) == expected


def test_the_record_reads_back_and_a_missing_one_was_never_reached(tmp_path: Path) -> None:
    """The validate stage writes the record every run: what it wrote reads back; none is a never-reached record."""
    path = tmp_path / "upstream.json"
    assert read_upstream_record(path) == UpstreamRecord()
    record = UpstreamRecord(upstream="u/{round}", checked="2026-06-20 10:00 UTC", answered=["v5.1", "v6.0"],
                            new=["v6.0"])
    record.write(path)
    assert read_upstream_record(path) == record and record.newer_than("v5.1") == "v6.0"
    assert record.newer_than("v6.0") is None
