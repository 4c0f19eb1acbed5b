"""Every page and every brief says how current it is (issue 53): the round analysed and its publication, the
prices' dates, the build date and its commit, and, while a newer round is known, the notice naming it; no page calls
a retired benchmark "still in MLPerf" nor its round "the newest published" while a newer round is named. Runs on this
checkout's real site and briefs; skipped, saying so, before `dvc repro`."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from pypdf import PdfReader

from pipeline.core import paths
from pipeline.report.currency import currency
from tests.conftest import ROOT


def _text(path: Path) -> str:
    if path.suffix == ".pdf":
        raw = " ".join(page.extract_text() or "" for page in PdfReader(path).pages)
    else:
        raw = re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8"))
    return re.sub(r"\s+", " ", raw.replace("&#39;", "'").replace("&amp;", "&"))


def _documents() -> list[Path]:
    site = ROOT / "reports"
    found = sorted([*site.glob("*.html"), *(site / "benchmarks").glob("*.html"), *(ROOT / paths.BRIEFS).glob("*.pdf")])
    if not (site / "index.html").is_file() or not any(path.suffix == ".pdf" for path in found):
        pytest.skip("the site and the briefs are absent: run `dvc repro` first")
    return found


def test_every_page_and_brief_is_dated_names_its_commit_and_the_newer_round() -> None:
    documents = _documents()
    index = _text(ROOT / "reports" / "index.html")
    built = re.search(r"Analyses MLPerf Training (v\d+\.\d+),.*?built (\S+) from commit ([0-9a-f]{12})\.", index)
    assert built is not None
    # what the entry page names (the build of this checkout's outputs, whatever was committed since)
    dates = currency(built[1], {"commit": built[3], "commit_date": built[2], "revision": "", "dirty": False})
    for path in documents:
        text = _text(path)
        name = path.relative_to(ROOT)
        assert dates["dates"][:-1] in text.replace(" ,", ","), name  # the round, prices, build date and commit
        if dates["notice"]:
            assert dates["notice"].split(":")[0] in text, name
            assert "newest published" not in text, name
        assert "still in MLPerf" not in text, name


def test_a_benchmark_the_rules_retire_reads_retired_after_its_last_round() -> None:
    from pipeline.mlperf.catalogue import BY_ID

    _documents()
    index = _text(ROOT / "reports" / "index.html")
    retired = [entry for entry in BY_ID.values() if entry.last_round and f"{entry.model} (" in index]
    assert retired, "today's round has no benchmark the rules retire after it: nothing to check"
    for entry in retired:
        assert f"{entry.model} (retired after {entry.last_round})" in index
        brief = ROOT / paths.brief_pdf(entry.id)
        if brief.is_file():
            assert f"Retired from MLPerf Training after {entry.last_round}" in _text(brief)
