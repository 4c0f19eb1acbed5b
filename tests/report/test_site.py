"""The report site as a whole, on the fixture site (tests/report/fixture_site.py): every page there and linked
from the entry, ids unique, headings one level at a time, only the site's own assets loaded, data strings escaped
(in the HTML and in the charts' inline specs), the one glossary linked from every page, the same inputs giving the
same bytes, and the report stage's main() writing the pages, assets and combined outputs."""
from __future__ import annotations

import html.parser
import itertools
import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipeline.core import paths
from pipeline.core.files import write_csv, write_json, write_parquet
from pipeline.report import site
from tests.conftest import run_stage
from tests.report.fixture_site import (
    DECIDE_METRICS,
    DECIDE_SUMMARY,
    HEADLINE,
    HOSTILE_SYSTEM,
    OTHER,
    PARAMS,
    SKIP_REASON,
    SKIPPED,
    fixture_configurations,
    fixture_outputs,
    fixture_quarantine,
    fixture_results,
    fixture_tally,
    page_text,
    render_fixture_site,
)


class _Outline(html.parser.HTMLParser):
    """Headings, images, links, ids, scripts and stylesheets of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[int] = []
        self.images: list[dict[str, str | None]] = []
        self.urls: list[str] = []
        self.ids: list[str] = []
        self.scripts: list[str] = []
        self.stylesheets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if re.fullmatch(r"h[1-6]", tag):
            self.headings.append(int(tag[1]))
        if tag == "img":
            self.images.append(attributes)
        for name in ("src", "href"):
            if attributes.get(name):
                self.urls.append(str(attributes[name]))
        if attributes.get("id"):
            self.ids.append(str(attributes["id"]))
        if tag == "script" and attributes.get("src"):
            self.scripts.append(str(attributes["src"]))
        if tag == "link" and attributes.get("rel") == "stylesheet":
            self.stylesheets.append(str(attributes["href"]))


def outline(page_html: str) -> _Outline:
    parser = _Outline()
    parser.feed(page_html)
    return parser


def test_data_strings_are_escaped(page: str) -> None:
    assert HOSTILE_SYSTEM not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "A&amp;B &lt;Labs&gt;" in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=&#34;alert(2)&#34;&gt;" in page
    # inside a chart's inline spec the same strings are JSON with <, > and & escaped, so they cannot end the script
    specs = re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', page, re.S)
    assert specs and all("<" not in spec and "&" not in spec for spec in specs)
    assert any("\\u003cscript\\u003ealert(1)" in spec for spec in specs)


def test_the_site_has_its_pages_each_linked_from_the_entry(pages: dict[str, str]) -> None:
    assert set(pages) == {site.INDEX, site.METHODS, site.DATA, *(site.benchmark_page(b) for b in (HEADLINE, OTHER,
                                                                                              SKIPPED)),
                          "assets/site.css", "assets/site.js"}
    entry = pages[site.INDEX]
    for target in (site.METHODS, site.DATA, *(site.benchmark_page(b) for b in (HEADLINE, OTHER, SKIPPED))):
        assert f'href="{target}"' in entry
    ids = {name: outline(text).ids for name, text in pages.items() if name.endswith(".html")}
    for name, anchors in ((site.METHODS, ("findings", "decide", "method", "confirmation-rules", f"{HEADLINE}-findings",
                                          f"{HEADLINE}-decide-details", f"{OTHER}-clusters")),
                          (site.DATA, ("coverage", "quarantine", "republished", "provenance")),
                          (site.INDEX, ("glance", "families", HEADLINE, "history"))):
        assert set(anchors) <= set(ids[name]), name
    assert all(len(found) == len(set(found)) for found in ids.values()), "ids must be unique on a page"
    assert f"Not analysed: {SKIP_REASON}." in pages[site.benchmark_page(SKIPPED)]
    assert "R-GAT" in page_text(entry) and "DLRM" in entry and "MiniGo" in entry  # catalogue names
    # retired benchmarks sit under History, after today's
    assert entry.index('id="history"') > entry.index(f'id="{HEADLINE}"')
    history = entry[entry.index('id="history"'):]
    assert site.benchmark_page(OTHER) in history and site.benchmark_page(HEADLINE) not in history


def test_headings_descend_one_level_at_a_time(pages: dict[str, str]) -> None:
    for name, text in pages.items():
        if name.endswith(".html"):
            levels = outline(text).headings
            assert levels[0] == 1 and levels.count(1) == 1, name
            assert all(later - earlier <= 1 for earlier, later in itertools.pairwise(levels)), name


def test_pages_load_only_the_sites_own_assets(pages: dict[str, str]) -> None:
    for name, text in pages.items():
        if not name.endswith(".html"):
            continue
        parsed = outline(text)
        root = "../" if name.startswith("benchmarks/") else ""
        assert parsed.scripts == [f"{root}assets/vega.js", f"{root}assets/site.js"], name
        assert parsed.stylesheets == [f"{root}assets/site.css"], name
        assert not parsed.images, name  # every figure is a chart drawn in the browser
        external = [url for url in parsed.urls if re.match(r"[a-z]+:", url) and not url.startswith("data:")]
        assert all(re.match(r"https://(mlcommons\.org|github\.com)/", url) for url in external), name
        assert "@import" not in text and "url(" not in text
    assert "url(" not in pages["assets/site.css"] and "@import" not in pages["assets/site.css"]


def test_every_page_links_the_one_glossary_of_the_terms_it_uses(pages: dict[str, str]) -> None:
    """Issue 53: "group 0", "Front in round (1 = unbeaten)", "hardware efficiency (1 = best)" and "break-even" are
    explained once, on the methods page, and every page links there."""
    for name, page in pages.items():
        if name.endswith(".html"):
            assert 'methods.html#glossary">glossary</a>' in page, name
    glossary = page_text(pages[site.METHODS].split('id="glossary"')[1].split("</dl>")[0])
    for term in ("Front in round (1 = unbeaten)", "Hardware efficiency (1 = best of round)", "Group (cluster)",
                 "Break-even", "Cheapest within a deadline", "Efficiency kept per doubling"):
        assert term in glossary, term


def test_the_same_inputs_give_the_same_site(tmp_path: Path, pages: dict[str, str]) -> None:
    assert render_fixture_site(tmp_path) == pages


def test_main_writes_the_site_and_combined_outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outputs = fixture_outputs(tmp_path / "scratch")
    for item in outputs:
        item.rank.write(tmp_path / paths.rank_json(item.benchmark))
        write_csv(item.ranking, tmp_path / paths.ranking_csv(item.benchmark))
        item.clusters.write(tmp_path / paths.clusters_json(item.benchmark))
        item.importance.write(tmp_path / paths.importance_json(item.benchmark))
        write_parquet(item.clustered, tmp_path / paths.clusters_table(item.benchmark))
    write_json(DECIDE_SUMMARY, tmp_path / paths.decide_json(HEADLINE))
    write_json({"benchmark": OTHER, "status": "skipped", "reason": SKIP_REASON, "efficiency_floor": 0.7,
                "target_coverage": 0.9, "n_configurations": 3, "n_families": 1, "method": None, "candidate_medians": {},
                "backtest": None},
               tmp_path / paths.decide_json(OTHER))
    write_parquet(fixture_configurations(outputs), tmp_path / paths.CONFIGURATIONS)
    write_parquet(fixture_results(), tmp_path / paths.RESULTS)
    write_csv(fixture_quarantine(), tmp_path / paths.QUARANTINE)
    write_csv(fixture_tally(), tmp_path / paths.TALLY)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(PARAMS), encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    (tmp_path / "reports" / "benchmarks").mkdir(parents=True, exist_ok=True)
    (tmp_path / "reports" / "benchmarks" / "stale.html").write_text("from an earlier run")
    run_stage("buyer", cwd=tmp_path)  # the answers the entry shows
    run_stage("report", cwd=tmp_path)
    run_stage("assets", cwd=tmp_path)

    ranking = pd.read_csv("reports/ranking.csv")
    assert ranking.groupby("benchmark").size().to_dict() == {HEADLINE: 60, OTHER: 40}
    metrics = json.loads(Path("reports/metrics.json").read_text())
    assert set(metrics) == {HEADLINE, OTHER, SKIPPED} and metrics[SKIPPED]["status"] == "skipped"
    # scalars, except the decide stage's errors: one level of families below `decide`
    assert all(not isinstance(value, (list, dict)) for values in metrics.values()
               for key, value in values.items() if key != "decide")
    assert metrics[HEADLINE]["decide"] == DECIDE_METRICS
    assert metrics[OTHER]["decide"] == {"status": "skipped", "method": None, "backtest_n": 0}
    assert metrics[SKIPPED]["decide"] == {"status": "missing"}
    assert set(json.loads(Path("reports/importance.json").read_text())) == {HEADLINE, OTHER, SKIPPED}
    written = {str(path.relative_to("reports")) for path in Path("reports").rglob("*.html")}
    assert written == {site.INDEX, site.METHODS, site.DATA, *(site.benchmark_page(b) for b in (HEADLINE, OTHER,
                                                                                               SKIPPED))}
    assert sorted(path.name for path in Path("reports/assets").iterdir()) == ["site.css", "site.js", "vega.js"]
    assert "vegaEmbed" in Path("reports/assets/vega.js").read_text(encoding="utf-8")
    assert "dvc.lock not found" in Path("reports/data.html").read_text(encoding="utf-8")
    methods = Path("reports/methods.html").read_text(encoding="utf-8")
    assert "<img " not in methods and f'id="{HEADLINE}_backtest"' in methods  # the backtest, drawn in the browser
    headline = Path("reports", site.benchmark_page(HEADLINE)).read_text(encoding="utf-8")
    # the republished copy is left out of the analysis, listed on its benchmark's page and counted per round
    assert "1 republished result left out" in headline and "(republished from v1.0)" in headline
    assert ("Results that repeat an earlier round's result (republished), per round"
            in Path("reports/data.html").read_text(encoding="utf-8"))
    assert "(your price)" not in headline  # report.prices is absent: public prices only
    assert f"No forecasts for {OTHER}: {SKIP_REASON}" in Path("reports", site.benchmark_page(OTHER)).read_text(
        encoding="utf-8")
    # trade-offs, scaling with forecasts, same hardware across rounds, break-even
    assert headline.count('class="vega"') >= 4 and f'id="{HEADLINE}_break_even"' in headline
