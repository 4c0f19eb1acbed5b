"""The methods page on the fixture site: the findings with the rank stage's verdicts (n, submitters, effect and
both p-values per test, untested ones inconclusive, the headline count supported after the Holm correction), and the
decide stage's prediction error and break-even per benchmark (the metrics kept, the overview linking each benchmark's
details). The methods page of this checkout's site is checked against the outputs in test_methods_numbers.py."""
from __future__ import annotations

import html.parser
import re
from pathlib import Path

import jinja2
import pandas as pd

from pipeline.analysis.statistics import clustering as cluster
from pipeline.analysis.statistics import findings
from pipeline.analysis.statistics import ranking as rank
from pipeline.report import decide_section, inputs, sections, site, tables
from tests.report.fixture_site import (
    DECIDE,
    DECIDE_METRICS,
    HEADLINE,
    OTHER,
    SKIPPED,
    analysed_outputs,
    headline_page,
    page_text,
    skipped_outputs,
)


def _findings(*tested: findings.FindingRecord) -> dict[str, sections.Finding]:
    outputs = inputs.BenchmarkOutputs("resnet", rank.Ranking(benchmark="resnet", status="ok", findings=list(tested)),
                                      pd.DataFrame(), cluster.Clustering(benchmark="resnet", status="ok", k=5), {},
                                      pd.DataFrame())
    return {finding.key: finding for finding in sections.findings_of(outputs)}


def _example_tests(verdict: str) -> tuple[findings.Test, findings.Test]:
    """A test that ran (adjusted verdict `verdict`) and one not run for want of submitters."""
    tested = findings.Test("within-series efficiency", "geometric mean", ratio=True, claim_above=False, n=40,
                           submitters=7, estimate=0.81, low=0.7, high=0.93, p_raw=0.004, p_adjusted=0.02,
                           verdict_raw="supported", verdict=verdict)
    untested = findings.Test("time over the round's best", "largest / rest", ratio=True, claim_above=False, n=30,
                             submitters=3, note="3 submitters on one side, fewer than 5")
    return tested, untested


def test_findings_show_the_rank_stage_verdicts_and_untested_ones_are_inconclusive() -> None:
    tested, untested = _example_tests("supported")
    found = _findings(findings.Finding("sublinear", "clustered t-test", (tested,)).record(),
                      findings.FindingRecord(key="host", short="", claim="", verdict="contradicted",
                                             verdict_raw="contradicted", test="Mann-Whitney", evidence="fewer cores",
                                             tests=[]),
                      findings.Finding("largest_fastest", "clustered", (untested,)).record())
    assert list(found) == list(findings.CLAIMS)
    sublinear = found["sublinear"]
    assert sublinear.verdict == "supported" and sublinear.evidence.startswith("within-series efficiency: ")
    (row,) = sublinear.tests
    assert (row.n, row.submitters, row.p_raw, row.p_adjusted) == (40, 7, "0.004", "0.02")
    assert row.effect == "geometric mean 0.81 (95% CI 0.70 to 0.93)" and row.note == ""
    (row,) = found["largest_fastest"].tests
    assert (row.effect, row.p_raw, row.note) == ("", "", "3 submitters on one side, fewer than 5")
    assert found["host"].verdict == findings.CONTRADICTED and found["host"].tests == ()
    assert found["moderate"].verdict == findings.INCONCLUSIVE and found["moderate"].test == "not run"
    assert sections.verdict_counts(list(found.values())) == {"supported": 1, "contradicted": 1, "inconclusive": 5}


def test_every_finding_on_the_methods_page_shows_n_submitters_effect_and_both_p_values(
        pages: dict[str, str]) -> None:
    methods = pages[site.METHODS]
    shown = methods[methods.index('<section id="findings"'):methods.index("</section>",
                                                                        methods.index('<section id="findings"'))]
    assert "Holm" in shown and "together for multiple testing" in shown
    header = ('<th scope="col">Compared</th><th scope="col" class="num">n</th><th scope="col" class="num">'
              'Submitters</th>')
    assert shown.count(header) == 2 * len(findings.CLAIMS)  # each analysed benchmark's findings, one table each
    assert re.search(r"\d+ of the \d+ findings are supported after it", page_text(shown))  # the headline figure
    # a test that ran shows its effect, interval and both p-values; one that did not, why
    tested, untested = _example_tests("inconclusive")
    found = _findings(findings.Finding("sublinear", "clustered", (tested,)).record(),
                      findings.Finding("largest_fastest", "clustered", (untested,)).record())
    environment = jinja2.Environment(loader=jinja2.PackageLoader("pipeline.report", "templates"), autoescape=True)
    rendered = environment.from_string('{% from "macros.html.j2" import finding_list %}{{ finding_list(found) }}'
                                       ).render(found=[found["sublinear"], found["largest_fastest"]])
    text = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", rendered)))
    assert "within-series efficiency 40 7 geometric mean 0.81 (95% CI 0.70 to 0.93) 0.004 0.02 inconclusive" in text
    assert "(supported before the correction)" in text
    assert "time over the round's best 30 3 not tested: 3 submitters on one side, fewer than 5" in text


def test_the_headline_figure_is_the_count_supported_after_correction(tmp_path: Path) -> None:
    outputs = [analysed_outputs(HEADLINE, 60, 0, tmp_path / HEADLINE), skipped_outputs(SKIPPED)]
    correction = sections.findings_correction(outputs)
    assert correction is not None and correction.method == "Holm"
    metrics = tables.summary_metrics(outputs, correction)
    assert metrics["supported"] == sum(item.verdict == findings.SUPPORTED for item in sections.findings_of(outputs[0]))
    assert metrics["supported"] <= correction.findings_supported_raw and metrics["benchmarks"] == 1


def test_findings_section_states_verdicts_for_every_benchmark(page: str) -> None:
    matrix = page[page.index('<table class="matrix">'):]
    matrix = matrix[:matrix.index("</table>")]
    assert matrix.count('<th scope="row"><a href=') == 2  # the skipped benchmark has no verdicts
    assert len(re.findall(r"supported|contradicted|inconclusive", matrix)) >= 2 * len(sections.FINDING_CLAIMS)
    assert "confirmed" not in page


def test_decide_metrics_keep_the_backtest_headline() -> None:
    assert decide_section.metrics_of(DECIDE) == DECIDE_METRICS


def test_prediction_error_and_break_even_overview_links_each_benchmark(pages: dict[str, str]) -> None:
    methods = pages[site.METHODS]
    start = methods.index('<section id="decide"')
    overview = methods[start:methods.index(f'<details class="long" id="{HEADLINE}-decide')]
    assert f'href="#{HEADLINE}-decide-details"' in overview
    # DECIDE_SUMMARY: median 6.4321% of 30 forecasts against the naive rule's 7.5%, trusted and untrusted 90th
    # percentiles 20% and 45%; A100 and H100 trusted with break-even 40 inside 8 to 64
    assert "6.4% (30)" in overview and "7.5%" in overview and "20.0% / 45.0%" in overview
    assert "2 of 3" in overview and "A100 (SXM): 40; H100 (SXM): 40" in overview
    assert f'href="#{OTHER}-decide-details"' not in overview  # no decide output for it
    section = methods[methods.index(f'id="{HEADLINE}-decide"'):methods.index('id="diagnostics"')]
    assert "Where not to trust it" in section and "TPU-v4 (SXM): results from 1 round (needs 2)" in section
    assert "the <strong>model</strong>" in section
    assert "1.43× the accelerator-hours" in section  # what the 0.7 floor means
    # the benchmark's page lists the forecasts and links to the backtest
    headline = headline_page(pages)
    assert f'href="../methods.html#{HEADLINE}-decide"' in headline and "Forecasts per family (1)" in headline
