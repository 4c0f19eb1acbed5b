"""Issue 38: the numbers the methods pages quote are the stage outputs'. The site's methods page (built by the report
stage) must show the rank stage's correction, verdict totals, and each benchmark's k from reports/clusters; and
docs/methods.md quotes no counts of the outputs at all (they would go stale: it points to the site and bench/)."""
from __future__ import annotations

import html
import json
import re
from collections import Counter

import pytest

from pipeline.analysis.statistics.findings import CLAIMS, VERDICTS
from tests.conftest import ROOT

METHODS_HTML = ROOT / "reports" / "methods.html"
RANK = ROOT / "reports" / "rank"
CLUSTERS = ROOT / "reports" / "clusters"


def test_docs_methods_quotes_no_output_counts() -> None:
    """Counts of the outputs ("26 of 133 findings", a pasted bench output) never appear in docs/methods.md."""
    text = (ROOT / "docs" / "methods.md").read_text()
    assert "```text" not in text
    assert not re.findall(r"\b\d+ of \d+\b", text)


def _rank_outputs() -> dict[str, dict]:
    return {path.stem: json.loads(path.read_text()) for path in sorted(RANK.glob("*.json"))}


@pytest.mark.skipif(not METHODS_HTML.is_file(), reason="the report stage has not run")
def test_the_site_methods_page_quotes_the_outputs() -> None:
    page = html.unescape(re.sub(r"\s+", " ", METHODS_HTML.read_text()))
    ranked = {name: output for name, output in _rank_outputs().items() if output.get("findings")}
    correction = next(iter(ranked.values()))["findings_correction"]
    assert all(output["findings_correction"] == correction for output in ranked.values())
    quoted = re.search(r"All (\d+) p-values of the page are corrected together for multiple testing \(Holm's "
                       r"method\): (\d+) of the (\d+) findings are supported after it, (\d+) before \((\d+) and "
                       r"(\d+) of the tests\)", re.sub(r"<[^>]+>", "", page))
    assert quoted is not None
    assert [int(value) for value in quoted.groups()] == [
        correction["tests"], correction["findings_supported"], correction["findings"],
        correction["findings_supported_raw"], correction["tests_supported"], correction["tests_supported_raw"]]
    # the matrix's totals per claim, in the order of CLAIMS
    totals = re.search(r"Supported / contradicted / inconclusive</th>(.*?)</tr>", page)
    assert totals is not None
    shown = re.findall(r"<td>(\d+) / (\d+) / (\d+)</td>", totals.group(1))
    for key, cells in zip(CLAIMS, shown, strict=True):
        counts = Counter(item["verdict"] for output in ranked.values() for item in output["findings"]
                         if item["key"] == key)
        assert [int(cell) for cell in cells] == [counts[verdict] for verdict in VERDICTS], key
    # each benchmark's k, the study's and the one the data support, from reports/clusters
    for benchmark, study, data in re.findall(
            r'id="([\w-]+)-clusters".*?k: study, data</dt><dd>(\d+), ([^<]*)</dd>', page):
        verdict = json.loads((CLUSTERS / f"{benchmark}.json").read_text()).get("k_verdict") or {}
        assert int(study) == json.loads((CLUSTERS / f"{benchmark}.json").read_text())["k"]
        assert data == (str(verdict["supported_k"]) if verdict.get("supported_k") else "none firmly"), benchmark


@pytest.mark.skipif(not METHODS_HTML.is_file(), reason="the report stage has not run")
def test_every_test_on_the_site_shows_its_estimate_p_degrees_of_freedom_holm_p_and_reason() -> None:
    """Issue 38: per test, the estimate with its 95% interval, the p of the test (CR2), its degrees of freedom, the
    Holm-adjusted p and the verdict with its reason, as rank.json has them."""
    from pipeline.analysis.statistics.findings import Test
    from pipeline.report.sections import finding_test

    page = html.unescape(METHODS_HTML.read_text())
    shown = 0
    for benchmark, output in _rank_outputs().items():
        if not output.get("findings"):
            continue
        block = re.search(rf'<details class="long" id="{benchmark}-findings">(.*?)</details>', page, re.S)
        assert block is not None, benchmark
        text = re.sub(r"\s+", " ", block.group(1))
        for finding in output["findings"]:
            for record in finding["tests"]:
                row = finding_test(Test(**record))
                if not row.p_raw:
                    continue
                assert (f'<td>{row.effect}</td><td class="num">{row.p_raw}</td><td class="num">{row.df}</td>'
                        f'<td class="num">{row.p_adjusted}</td><td>{row.verdict}') in text, (benchmark, row.label)
                assert row.verdict != "inconclusive" or row.note in text, (benchmark, row.label)
                shown += 1
    assert shown > 0
