"""The next round arrives by itself (issue 36): a v6.0 built from real v5.1 logs (tests/e2e/next_round.py), with
RetinaNet and R-GAT retired and a benchmark the catalogue does not describe, found in a mirror folder by
`dvc repro` with params.yaml's rounds untouched, and served from a local bare git repository as upstream."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from pipeline.mlperf import discovery, fetching
from pipeline.mlperf.rounds import ingest
from pipeline.mlperf.upstream import UpstreamRecord
from pipeline.settings import FetchSettings
from tests.conftest import MIRROR, ROOT, bare_upstream, run_dvc_repro
from tests.e2e.next_round import NEXT_ROUND, write_next_round

pytestmark = pytest.mark.slow
SOURCE = MIRROR / "training_results_v5.1.tar.gz"


@pytest.fixture(scope="module")
def next_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not SOURCE.is_file():
        pytest.skip(f"needs the MLPerf mirror at {MIRROR}")
    return write_next_round(SOURCE, tmp_path_factory.mktemp("next") / f"training_results_{NEXT_ROUND}.tar.gz")


def test_the_next_round_upstream_is_found_cloned_and_scored(next_archive: Path, tmp_path: Path) -> None:
    """A mirror that stops at v5.1, an upstream (a local bare repository) that has v6.0: found, cloned, scored."""
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["tar", "-xzf", str(next_archive), "-C", str(work)], check=True)
    folder = work / f"training_results_{NEXT_ROUND}"
    upstream = bare_upstream(folder, tmp_path / "remote", NEXT_ROUND)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    os.link(SOURCE, mirror / SOURCE.name)
    found = discovery.discover(mirror, upstream, UpstreamRecord())
    assert found.rounds == ["v5.1", NEXT_ROUND], found.notes
    [_, cloned] = fetching.fetch(FetchSettings(mirror=str(mirror), upstream=upstream, rounds="all"), tmp_path / "raw",
                                 rounds=found.rounds)
    results = ingest([cloned]).results
    assert {"gpt_oss_20b", "llama31_8b"} <= set(results["benchmark"]) and not {"retinanet", "rgat"} & set(
        results["benchmark"])
    assert results.loc[results["benchmark"] == "gpt_oss_20b", "complete"].all()


def test_a_next_round_dropped_into_the_mirror_leads_the_site(next_archive: Path, tmp_path: Path) -> None:
    """Done when (issue 36): training_results_v6.0.tar.gz dropped into the mirror, params.yaml's rounds untouched:
    `dvc repro` finds, scores and analyses it, and the entry page's first screen names v6.0 and no benchmark
    retired before it."""
    clone = tmp_path / "project"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    mirror = clone / "next-mirror"
    mirror.mkdir()
    for round_ in ("v5.0", "v5.1"):
        os.link(MIRROR / f"training_results_{round_}.tar.gz", mirror / f"training_results_{round_}.tar.gz")
    os.link(next_archive, mirror / next_archive.name)
    params = clone / "params.yaml"
    text = params.read_text(encoding="utf-8")
    assert "  rounds: all\n" in text
    params.write_text(text.replace("mirror: ../shared/mlperf", "mirror: next-mirror")
                      .replace("https://github.com/mlcommons/training_results_{round}",
                               (tmp_path / "offline").as_uri() + "/training_results_{round}"), encoding="utf-8")
    repro = run_dvc_repro(clone, timeout=900)
    output = repro.stdout + repro.stderr
    assert repro.returncode == 0, output[-3000:]
    assert "the mirror holds 3 rounds (v5.0 to v6.0)" in output
    entry = (clone / "reports" / "index.html").read_text(encoding="utf-8")
    first_screen = re.sub(r"<[^>]+>", " ", entry[:entry.index('id="families"')] if 'id="families"' in entry
                          else entry[:6000])
    assert "v6.0" in first_screen and "Analyses MLPerf Training v6.0, published June 2026" in first_screen
    for retired in ("RetinaNet", "R-GAT", "BERT", "Stable Diffusion"):
        assert retired not in first_screen, retired
    assert (clone / "reports" / "benchmarks" / "gpt_oss_20b.html").is_file()
    page = (clone / "reports" / "benchmarks" / "gpt_oss_20b.html").read_text(encoding="utf-8")
    assert "New in MLPerf Training v6.0" in page
