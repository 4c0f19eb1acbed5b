"""The data page: coverage (scored results out of results folders), the quarantine split by what each reason
means (the official rules, defective files, the publication's layout) with its table and counts, and the agreement
with the summaries a round ships."""
from __future__ import annotations

import pytest

from pipeline.report import sections, site
from tests.report.fixture_site import RULES_REASON, fixture_quarantine, fixture_results, fixture_tally, page_text


def test_the_data_page_reports_agreement_with_the_shipped_summaries(pages: dict[str, str]) -> None:
    text = page_text(pages[site.DATA])
    assert ("v3.0 ships the official summarizer's scores (1 summary file, 3 scores): 1 equal ours, 1 differ (the "
            "largest: Acme other rgat, 22.0 min here against 22.5 shipped, 2.2%), and 1 have no score here") in text


def test_coverage_and_quarantine_counts_are_on_the_data_page(pages: dict[str, str]) -> None:
    text = page_text(pages[site.DATA])
    assert "4 scored results out of 5 results folders" in text
    assert ("1 runs the official rules reject" in text and "1 defective or missing files" in text
            and "2 files where the publication" in text and 'href="#quarantine"' in pages[site.DATA])
    assert "123 code/documentation files of the repository, not inputs" in text


@pytest.mark.parametrize(("reason", "kind"), [
    (RULES_REASON, "rules"),
    ("result log is empty (0 bytes): counted as a non-converged run", "defective"),
    ("results folder holds no result logs (the published logs are absent): not scored", "defective"),
    ("system description has no results folder: nothing to score", "layout"),
    ("result log sits in the system folder, not in a benchmark folder: benchmark taken from its "
     "submission_benchmark line (bert)", "layout"),
    ("hidden or temporary file (such as one left by an interrupted copy): not an input, ignored", "defective"),
])
def test_quarantine_reasons_are_split_by_what_they_mean(reason: str, kind: str) -> None:
    assert sections.quarantine_kind(reason) == kind


def test_quarantine_table_and_counts_by_kind_and_reason_are_in_the_page(pages: dict[str, str]) -> None:
    coverage = sections.coverage_of(fixture_results(), fixture_quarantine(), fixture_tally())
    assert coverage["quarantine_by_reason"][0] == {
        "reason": "system description has no results folder: nothing to score", "count": 2}
    split = coverage["quarantine"]
    assert [(kind["key"], kind["count"]) for kind in split["kinds"]] == [("rules", 1), ("layout", 2), ("defective", 1)]
    assert split["total"] == sum(kind["count"] for kind in split["kinds"]) == 4 and split["repository_files"] == 123
    assert (coverage["results"], coverage["submitters"], coverage["systems"]) == (4, 2, 3)  # scored only
    data = pages[site.DATA]
    start = data.index('<details class="long" id="quarantine">')
    details = data[start:data.index("</details>", start)]
    assert details.count("<tr>") == 1 + 4  # header and one row per record, none per repository file
    assert 'data-filter="quarantine-table"' in details  # searchable
