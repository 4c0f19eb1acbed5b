"""fetch.rounds: all: the mirror's rounds, and the rounds a (local, bare) upstream answers for, probed with
git ls-remote; offline, what upstream answered last."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.mlperf import discovery
from pipeline.mlperf.catalogue import ROUND_PUBLISHED
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
    newest = max(ROUND_PUBLISHED, key=discovery.round_version)
    following = discovery.successors(newest)[0]
    upstream = bare_upstream(write_folder(tmp_path / "upstream-work", small_round()), tmp_path / "remote", newest,
                             following)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    write_archive(mirror / f"training_results_{newest}.tar.gz", small_round())
    record = tmp_path / "upstream.json"
    found = discovery.discover(mirror, upstream, record)
    assert found.rounds == [newest, following]
    assert json.loads(record.read_text())["new"] == [following]
    assert any(f"found {following}" in note for note in found.notes)


def test_offline_the_mirror_is_used_and_the_last_check_is_said(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    write_archive(mirror / "training_results_v5.1.tar.gz", small_round())
    record = tmp_path / "upstream.json"
    record.write_text(json.dumps({"checked": "2026-06-20 10:00 UTC", "new": ["v6.1"], "answered": []}))
    found = discovery.discover(mirror, (tmp_path / "none").as_uri() + "/{round}", record)
    assert found.rounds == ["v5.1"]
    assert found.notes == ["the mirror holds 1 round (v5.1 to v5.1)",
                           f"upstream {(tmp_path / 'none').as_uri()}/<round> does not answer (offline?): last "
                           "answered 2026-06-20 10:00 UTC (then it had v6.1)"]


@pytest.mark.parametrize(("round_", "expected"), [("v5.0", ["v5.1", "v6.0"]), ("v5.1", ["v6.0"])])
def test_successors(round_: str, expected: list[str]) -> None:
    assert discovery.successors(round_) == expected
