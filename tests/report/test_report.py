"""The report site on small fixture tables: its pages and links, sections, tables, the one formatter, the charts'
specs, the quarantine split, cost and energy views, escaping, provenance and the stage's main().

The fixtures run the real cluster and rank functions on synthetic configurations, so the site is built from
tables shaped exactly like the stages' outputs; tests/report/test_browser.py opens the same site in Chromium.
"""
from __future__ import annotations

import dataclasses
import html.parser
import itertools
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
import pandas as pd
import pytest
import yaml

from pipeline.analysis import buyer
from pipeline.analysis.efficiency import efficiency_metrics
from pipeline.analysis.forecasting.decide import DecideSummary
from pipeline.analysis.pricing import price_table
from pipeline.analysis.pricing.energy_estimate import fit as fit_energy
from pipeline.analysis.pricing.prices import Prices, load_price_table
from pipeline.analysis.statistics import clustering as cluster
from pipeline.analysis.statistics import findings, importance
from pipeline.analysis.statistics import ranking as rank
from pipeline.analysis.statistics.findings_result import FindingsReport
from pipeline.analysis.statistics.importance_result import ImportanceReport, TargetFit
from pipeline.core import paths
from pipeline.core.errors import ParamsError
from pipeline.core.files import write_csv, write_json, write_parquet
from pipeline.report import assets, charts, decide_section, formatting, inputs, provenance, sections, site, tables
from pipeline.settings import ClusterSettings, FindingsSettings, RankSettings, settings_from
from tests.conftest import ROOT, run_stage

# A benchmark still in MLPerf (with decision support), a retired one, and one not analysed.
HEADLINE, OTHER, SKIPPED = "rgat", "dlrm", "minigo"  # dlrm: retired (v2.1) before the newest round, v3.0
HOSTILE_SYSTEM = "<script>alert(1)</script>"
HOSTILE_SUBMITTER = "A&B <Labs>"
HOSTILE_PATH = 'Acme/results/<img src=x onerror="alert(2)">/'
PROJECT_PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text())
SKIP_REASON = "4 configurations in scope, fewer than analysis.min_configurations = 15"

CRITERIA = {
    "time_to_train_min": {"weight": 0.4, "direction": "cost"},
    "accelerator_hours": {"weight": 0.6, "direction": "cost"},
}
FINDINGS = {"alpha": 0.05, "bootstrap": 200, "seed": 0, "bands": [2, 4, 8, 16, 64, 256, 1024],
            "moderate": [4, 16],
            "top_share": 0.1, "largest_share": 0.1, "superlinear_threshold": 1.05, "min_group": 5,
            "min_submitters": 5, "latest_peak_share": 0.5}
PARAMS: dict[str, Any] = {
    "fetch": {"mirror": "../shared/mlperf", "rounds": ["v1.0", "v2.0", "v3.0"],
              "upstream": "https://github.com/mlcommons/training_results_{round}"},
    "analysis": {"benchmarks": [HEADLINE, OTHER, SKIPPED], "division": "closed",
                 "rounds": "all", "availability": "all", "min_configurations": 15},
    "importance": PROJECT_PARAMS["importance"],
    "cluster": {**PROJECT_PARAMS["cluster"], "k": 3, "n_init": 3, "k_range": [2, 5], "bootstrap": 3},
    "rank": {"criteria": CRITERIA, "top": 5, "sensitivity": 0.25},
    "findings": FINDINGS,
    "decide": PROJECT_PARAMS["decide"],
    "report": {"prices": None},
}
IMPORTANCE_FITS = {
    name: TargetFit(
        oof_r2=r2, baseline_r2=r2 - 0.2, gain=0.2, gain_low=low, gain_high=0.4, oof_median_abs_error_log10=0.05,
        permutation_importance={"accelerator_count": {"mean": 0.9 * r2, "std": 0.1},
                                "accelerator_year": {"mean": 0.2, "std": 0.05},
                                "round_year": {"mean": 0.1, "std": 0.05},
                                "host_cpu_cores": {"mean": -0.01, "std": 0.01}},
        stability={"accelerator_count": 1.0, "accelerator_year": 0.8}, mutual_information={},
        spearman={"accelerator_count": {"rho": -0.9, "p_value": 1e-5, "n": 40}}, importance_draws={})
    for name, r2, low in (("log_time_to_train", 0.95, 0.1), ("log_accelerator_hours", 0.3, -0.1))}
IMPORTANCE = ImportanceReport(
    benchmark="fixture", status="ok", n_configurations=40, targets=IMPORTANCE_FITS,
    selected_features=["accelerator_count", "accelerator_year"], n_families=6, round_feature="round_year",
    baseline=importance.BASELINE, gate=importance.gate(IMPORTANCE_FITS, 0.5, 5, 6, 4),
    selection_stability={"accelerator_count": 1.0, "accelerator_year": 0.8})
FAMILY_YEAR = {"A100": 2020, "H100": 2022, "TPU-v4": 2021}
DVC_LOCK = {"schema": "2.0", "stages": {
    "fetch": {"cmd": "python -m pipeline.stages.fetch",
              "deps": [{"path": "../shared/mlperf", "hash": "md5", "md5": "625dc9c9cca63ee7ef0aa7c7bf3c1785.dir",
                        "size": 133254458, "nfiles": 12}],
              "outs": [{"path": "data/raw", "hash": "md5", "md5": "8fd54aec2896ff4dab2357b3f6e41f5f.dir",
                        "size": 133250836, "nfiles": 10}]},
    "ingest": {"cmd": "python -m pipeline.stages.ingest data/raw --out data/interim",
               "deps": [{"path": "data/raw", "md5": "8fd54aec2896ff4dab2357b3f6e41f5f.dir", "size": 133250836}],
               "outs": [{"path": "data/interim/quarantine.csv", "md5": "da8dfc2b2b12817d115bf6d1a2fbf965",
                         "size": 13005}]},
    "features": {"cmd": "python -m pipeline.stages.features",
                 "outs": [{"path": "data/processed/configurations.parquet", "md5": "0" * 32}]},
}}


def _unit(family: str, n_points: int, trusted: bool) -> dict[str, Any]:
    """One unit (family and form factor) of decide.json."""
    return {"family": family, "form_factor": "SXM", "n_points": n_points, "rounds": ["v1.0", "v2.0"],
            "latest_round": "v2.0", "count_min": 8.0, "count_max": 64.0, "exponent_b": -0.8,
            "slope_at_count_min": -0.9, "slope_at_count_max": -0.7, "reference_count": 8.0,
            "break_even_count": 40.0, "break_even_beyond_published": False,
            "break_even_model": "count curve, constant exponent beyond the published counts",
            "observed_first_count_below_floor": 64.0,
            "observed_last_count_at_floor": 8.0,
            "break_even_agreement": "agree", "break_even_note": "the data cross the floor between 8 and 64 "
            "accelerators, the curve at 40",
            "trusted": trusted, "reasons": [] if trusted else ["results from 1 round (needs 2)"],
            "doubling": [{"accelerator_count": 8.0, "n_results": 2, "model_efficiency": 1.0,
                          "observed_efficiency": 1.0, "model_doubling_speedup": 1.8, "observed_doubling_speedup": None,
                          "model_time_min": 30.0}],
            "band": [{"accelerator_count": count, "predicted_min": 240 / count, "low_min": 200 / count,
                      "high_min": 290 / count, "trusted": trusted} for count in (4.0, 8.0, 64.0, 128.0)]}


def _comparison(n: int, median: float, naive: float, trusted_p90: float, untrusted_p90: float) -> dict[str, Any]:
    """`forecast.compare(...).as_dict()` of a set of backtest points, by hand."""
    def summary(prefix: str, count: int, value: float) -> dict[str, Any]:
        return {f"{prefix}_n": count, f"{prefix}_median_ape_pct": value, f"{prefix}_p90_ape_pct": 3 * value,
                f"{prefix}_coverage": 0.9}

    return {**summary("answer", n, median), **summary("trusted", n // 2, median / 2),
            "trusted_p90_ape_pct": trusted_p90, **summary("untrusted", n - n // 2, 2 * median),
            "untrusted_p90_ape_pct": untrusted_p90, **summary("model", n, median), **summary("naive", n, naive),
            "common_n": n, "common_answer_median_ape_pct": median, "common_model_median_ape_pct": median,
            "common_naive_median_ape_pct": naive, "answer_methods": {"model": n}, "better": "answer"}


# decide.json as the decide stage writes it, by hand: a backtest of 30 forecasts over two rounds, A100 and H100
# trusted, TPU-v4 not (one round).
DECIDE_SUMMARY: dict[str, Any] = {
    "benchmark": HEADLINE, "status": "ok", "reason": None, "efficiency_floor": 0.7, "target_coverage": 0.9,
    "n_configurations": 60, "n_families": 3, "method": "model",
    "candidate_medians": {"model": 6.4321, "monotone naive": 7.5, "blend": 6.9},
    "backtest": {**_comparison(30, 6.4321, 7.5, 20.0, 45.0),
                 "folds": [{"fold": "v2.0", **_comparison(30, 6.4321, 7.5, 20.0, 45.0)}],
                 "latest_fold": {"fold": "v2.0", **_comparison(30, 6.4321, 7.5, 20.0, 45.0)},
                 "families": [{"family": "A100", **_comparison(30, 6.4321, 7.5, 20.0, 45.0)}],
                 "kinds": [{"kind": "family", "answer_n": 30, "answer_median_ape_pct": 6.4321,
                            "answer_p90_ape_pct": 19.3, "answer_coverage": 0.9}],
                 "calibrated_share": 1.0},
    "n_units": 3, "n_units_trusted": 2,
    "units": [_unit("A100", 20, True), _unit("H100", 10, True), _unit("TPU-v4", 3, False)],
    "forecasts": [{"benchmark": HEADLINE, "accelerator": "A100", "form_factor": "SXM", "count": 64,
                   "predicted_min": 5.0, "low_min": 4.0, "high_min": 6.0, "target_coverage": 0.9, "method": "model",
                   "kind": "family", "specification_based": False, "trusted": True, "reasons": [],
                   "rounds": ["v1.0", "v2.0"], "calibration": "earlier forecasts of the same kind", "note": "",
                   "extrapolated": False, "notes": [],
                   "backtest_error": "backtest median error 3.2% over 41 answers"}],
    "largest_errors": [],
    "backtest_points": [{"fold": "v2.0", "accelerator_family": "A100", "form_factor": "SXM", "submitter": "S",
                         "system": f"sys{i}", "accelerator_count": 8.0 * (i + 1), "time_to_train_min": 30.0 / (i + 1),
                         "predicted_min": 32.0 / (i + 1), "low_min": 26.0 / (i + 1), "high_min": 38.0 / (i + 1),
                         "trusted": True} for i in range(3)],
}
DECIDE = DecideSummary.model_validate(DECIDE_SUMMARY)  # as the report reads it back
# decide_section.metrics_of keeps headline numbers only.
DECIDE_METRICS = {"status": "ok", "method": "model", "backtest_n": 30, "backtest_median_ape_pct": 6.43,
                  "backtest_p90_ape_pct": 19.3, "backtest_coverage": 0.9, "naive_median_ape_pct": 7.5,
                  "answer_median_ape_pct_vs_naive": 6.43, "better": "answer", "trusted_n": 15,
                  "trusted_p90_ape_pct": 20.0, "trusted_coverage": 0.9, "untrusted_p90_ape_pct": 45.0,
                  "latest_fold": "v2.0", "latest_fold_n": 30, "latest_fold_median_ape_pct": 6.43,
                  "latest_fold_naive_median_ape_pct": 7.5, "latest_fold_coverage": 0.9, "n_units": 3,
                  "n_units_trusted": 2}


def synthetic_configurations(benchmark: str, n: int, seed: int) -> pd.DataFrame:
    """Configurations whose time falls sublinearly with accelerators, through the features stage's metrics."""
    rng = np.random.default_rng(seed)
    counts = rng.choice([1, 2, 4, 8, 8, 16, 64, 256, 1024], n).astype(float)
    families = rng.choice(list(FAMILY_YEAR), n)
    speed = np.where(families == "H100", 3.0, 1.0)
    frame = pd.DataFrame({
        "round": rng.choice(["v1.0", "v2.0", "v3.0"], n), "submitter": rng.choice(["Acme", "Globex", "Initech"], n),
        "system": [f"{benchmark}-system-{i}" for i in range(n)], "benchmark": benchmark, "division": "closed",
        "accelerator_family": families, "accelerator_form_factor": "SXM", "framework": "PyTorch",
        "accelerator_count": counts,
        "accelerator_year": [float(FAMILY_YEAR[f]) for f in families],
        "accelerator_memory_gib": np.where(families == "H100", 80.0, 40.0), "n_nodes": np.maximum(1, counts // 8),
        "host_cpu_cores": rng.choice([64.0, 96.0, 128.0], n),
        "interconnect_intra_gbps": rng.choice([2400.0, 7200.0], n),
        "time_to_train_min": 600 / speed / counts ** 0.8 * rng.lognormal(0, 0.15, n),
        "throughput_samples_per_s": counts * 1000.0,
    })
    frame.loc[0, ["submitter", "system"]] = [HOSTILE_SUBMITTER, HOSTILE_SYSTEM]
    return efficiency_metrics(frame)


def analysed_outputs(benchmark: str, n: int, seed: int, scratch: Path) -> inputs.BenchmarkOutputs:
    """What the importance, cluster and rank stages write for one benchmark, made by their own functions."""
    clustered, summary = cluster.cluster_benchmark(synthetic_configurations(benchmark, n, seed),
                                                   IMPORTANCE.selected_features,
                                                   ClusterSettings.model_validate(PARAMS["cluster"]),
                                                   benchmark=benchmark)
    settings = FindingsSettings.model_validate(FINDINGS)
    scratch.mkdir(parents=True, exist_ok=True)
    ranking, content = rank.rank_benchmark(clustered, summary, IMPORTANCE, RankSettings.model_validate(PARAMS["rank"]),
                                           settings)
    write_csv(ranking, scratch / "ranking.csv")
    # the findings corrected as if this were the page's only benchmark (as the findings stage writes them)
    adjusted, correction = findings.across_benchmarks({benchmark: findings.evaluate(clustered, settings)}, settings)
    content.with_findings(FindingsReport.of(benchmark, adjusted[benchmark], correction)).write(
        scratch / "rank.json")
    summary.write(scratch / "clusters.json")
    return inputs.BenchmarkOutputs(  # as the report reads them back
        benchmark=benchmark, rank=rank.Ranking.read(scratch / "rank.json"),
        ranking=pd.read_csv(scratch / "ranking.csv"), clusters=cluster.Clustering.read(scratch / "clusters.json"),
        importance=IMPORTANCE.model_copy(update={"benchmark": benchmark}), clustered=clustered)


def skipped_outputs(benchmark: str) -> inputs.BenchmarkOutputs:
    return inputs.BenchmarkOutputs(
        benchmark=benchmark, rank=rank.Ranking(benchmark=benchmark, status="skipped", reason=SKIP_REASON),
        ranking=pd.DataFrame(columns=rank.RANKING_COLUMNS),
        clusters=cluster.Clustering(benchmark=benchmark, status="skipped", reason=SKIP_REASON, k=5, features=[],
                                    profiles=[], diagnostics=[]),
        importance=ImportanceReport(benchmark=benchmark, status="skipped", reason=SKIP_REASON,
                                    n_configurations=3, targets={}, selected_features=[]),
        clustered=pd.DataFrame())


def fixture_results() -> pd.DataFrame:
    return pd.DataFrame({
        "round": ["v1.0", "v1.0", "v2.0", "v3.0", "v3.0"], "submitter": ["Acme", "Acme", "Globex", "Initech", "Acme"],
        "system": ["a", "b", "c", "d", "a"], "time_to_train_min": [10.0, 20.0, 5.0, np.nan, 8.0],
        "score_note": [None, None, None, "not scored: the folder holds no result logs", None],
    })


RULES_REASON = ("result log breaks the official checker's logging rules (no eval_accuracy): counted as a "
                "non-converged run, as the official summarizer counts it")


def fixture_quarantine() -> pd.DataFrame:
    return pd.DataFrame({"round": ["v1.0", "v2.0", "v2.0", "v2.0"],
                         "path": [HOSTILE_PATH, "Globex/systems/x.json", "Globex/results/y/",
                                  "Globex/results/y/resnet/result_0.txt"],
                         "reason": ["log has no run_stop: counted as a non-converged run",
                                    "system description has no results folder: nothing to score",
                                    "system description has no results folder: nothing to score", RULES_REASON]})


def fixture_tally() -> pd.DataFrame:
    """ingest's tally.csv, two rounds: 120 and 3 files of the repository around the inputs."""
    return pd.DataFrame({"round": ["v1.0", "v2.0"], "other_files": [0, 0], "repository_files": [120, 3]})


def fixture_outputs(scratch: Path) -> list[inputs.BenchmarkOutputs]:
    """The headline with decision support (DECIDE_SUMMARY), the other without (the stage has not run)."""
    headline = dataclasses.replace(analysed_outputs(HEADLINE, 60, 0, scratch / HEADLINE),
                                   decide=decide_section.fragment(HEADLINE, DECIDE), decide_summary=DECIDE)
    return [headline, analysed_outputs(OTHER, 40, 1, scratch / OTHER), skipped_outputs(SKIPPED)]


# A measured power reading for some of the headline's newest results (the features stage's energy columns).
ENERGY = {"energy_kwh": 12.5, "power_per_accelerator_w": 650.0, "power_share_of_tdp": 0.93,
          "power_measurement": "node wall power"}


def with_energy_columns(configurations: pd.DataFrame) -> pd.DataFrame:
    """configurations.parquet as the features stage writes it with power measurements: the energy columns, set
    on the headline benchmark's newest-round results and empty elsewhere."""
    measured = (configurations["benchmark"] == HEADLINE) & (configurations["round"] == "v3.0")
    return configurations.assign(**{name: np.where(measured, value, None if isinstance(value, str) else np.nan)
                                    for name, value in ENERGY.items()})


def render_fixture_site(scratch: Path, energy: bool = False) -> dict[str, str]:
    """Every page of the site from the fixtures, as main() builds them (provenance from a fixture dvc.lock);
    `energy`: the configurations carry the energy columns."""
    lock = scratch / "dvc.lock"
    scratch.mkdir(parents=True, exist_ok=True)
    lock.write_text(yaml.safe_dump(DVC_LOCK), encoding="utf-8")
    outputs = fixture_outputs(scratch)
    configurations = fixture_configurations(outputs)
    configurations = with_energy_columns(configurations) if energy else configurations
    settings, prices = settings_from(PARAMS), Prices(Path("examples/prices.yaml"), {"A100": 1.5, "H100": 3.0})
    # as the buyer stage answers (no saved models here: no forecast)
    answers = {item.benchmark: buyer.answer_for(item.benchmark, configurations, settings, fit_energy(configurations),
                                                prices.per_hour) for item in outputs}
    context = site.site_context(outputs, fixture_results(), fixture_quarantine(), settings,
                                provenance.provenance(PARAMS, lock=lock, cwd=scratch), fixture_tally(), prices,
                                configurations, answers=answers)
    context["summary_check"] = SUMMARY_CHECK  # as the report stage adds it
    return {**site.render_site(context), **assets.static_assets()}  # the pages and the assets beside them


# data/interim/summary_check.json of a round that ships its summaries (tests/mlperf/test_summaries.py makes one).
SUMMARY_CHECK = [{"round": "v3.0", "shipped": 3, "equal": 1, "differing": 1, "not_scored_here": 1,
                  "files": ["Acme/summary.json"],
                  "largest_difference": {"submitter": "Acme", "system": "other", "benchmark": "rgat", "ours_min": 22.0,
                                         "shipped_min": 22.5, "relative": 0.022222}}]


def test_the_data_page_reports_agreement_with_the_shipped_summaries(pages: dict[str, str]) -> None:
    text = page_text(pages[site.DATA])
    assert ("v3.0 ships the official summarizer's scores (1 summary file, 3 scores): 1 equal ours, 1 differ (the "
            "largest: Acme other rgat, 22.0 min here against 22.5 shipped, 2.2%), and 1 have no score here") in text


def write_fixture_site(folder: Path, energy: bool = False) -> Path:
    """The fixture site written into `folder` with the chart library, as the stage writes it; its entry page."""
    for name, text in {**render_fixture_site(folder / "scratch", energy),
                       f"assets/{assets.LIBRARY}": assets.chart_library()}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder / site.INDEX


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return render_fixture_site(tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="module")
def energy_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The fixture site with the configurations' energy columns."""
    return render_fixture_site(tmp_path_factory.mktemp("energy"), energy=True)


@pytest.fixture(scope="module")
def page(pages: dict[str, str]) -> str:
    """Every page of the site, one after the other: for checks that hold wherever a thing is shown."""
    return "\n".join(text for name, text in sorted(pages.items()) if name.endswith(".html"))


def headline_page(pages: dict[str, str]) -> str:
    return pages[site.benchmark_page(HEADLINE)]


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


# -------------------------------------------------------------------------------------------------------- tests

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


def page_text(page_html: str) -> str:
    """A page's text as a reader sees it, tags stripped, whitespace collapsed."""
    text = re.sub(r"\s+", " ", re.sub(r"<script.*?</script>|<[^>]+>", " ", page_html, flags=re.S))
    return html.unescape(re.sub(r" ([,.;:)])", r"\1", text))


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


def test_the_headline_page_answers_with_the_front_fastest_least_hardware_time_and_groups(
        pages: dict[str, str], tmp_path: Path) -> None:
    outputs = analysed_outputs(HEADLINE, 60, 0, tmp_path)
    answer = sections.answer_of(outputs)
    latest = outputs.ranking[outputs.ranking["round"] == "v3.0"]
    front = latest[latest["round_front"] == 1].sort_values("time_to_train_min")
    assert answer.round == "v3.0" and answer.n_round == len(latest)
    assert [row["name"] for row in answer.front] == [formatting.configuration_name(row) for _, row in front.iterrows()]
    # the most hardware-efficient group is the highest median round efficiency: cluster 0
    medians = outputs.clustered.groupby("cluster")["round_efficiency"].median()
    assert answer.efficient is not None and answer.efficient.cluster == medians.idxmax() == 0
    text = page_text(headline_page(pages))
    fastest = latest.loc[latest["time_to_train_min"].idxmin()]
    least = latest.loc[latest["accelerator_hours"].idxmin()]
    assert f"{len(latest)} results in v3.0" in text
    assert f"Fastest: {fastest['submitter']} {fastest['system']}" in text
    assert f"{formatting.number(least['accelerator_hours'])} accelerator-hours" in text
    assert f"These {len(front)} are not beaten on both time and hardware time" in text
    for _, row in front.iterrows():
        assert f"{row['submitter']} {row['system']}" in text
    assert "pick" not in text  # no single configuration is called the best: a deadline or a budget decides
    assert "The most hardware-efficient group is" in text and answer.efficient.name in text


def test_coverage_and_quarantine_counts_are_on_the_data_page(pages: dict[str, str]) -> None:
    text = page_text(pages[site.DATA])
    assert "4 scored results out of 5 results folders" in text
    assert ("1 runs the official rules reject" in text and "1 defective or missing files" in text
            and "2 files where the publication" in text and 'href="#quarantine"' in pages[site.DATA])
    assert "123 code/documentation files of the repository, not inputs" in text


def test_the_entrys_first_screen_names_the_newest_round_and_its_best_in_plain_words(pages: dict[str, str],
                                                                                     tmp_path: Path) -> None:
    entry = pages[site.INDEX]
    first_screen = page_text(entry[:entry.index('id="families"')])
    assert "MLPerf Training v3.0" in first_screen and "R-GAT" in first_screen and "BERT" not in first_screen
    ranking = analysed_outputs(HEADLINE, 60, 0, tmp_path).ranking
    latest = ranking[ranking["round"] == "v3.0"]
    fastest = latest.loc[latest["time_to_train_min"].idxmin()]
    assert f"{formatting.hardware_name(fastest)}, {formatting.number(fastest['time_to_train_min'])} min" in first_screen
    # the buyer's answer: the cheapest within each deadline of params report.deadlines_min, in the first screen
    assert "Cheapest that finishes within" in first_screen
    deadlines = PROJECT_PARAMS["report"]["deadlines_min"]
    assert all(f"{formatting.number(limit)} min:" in first_screen for limit in deadlines)
    # none of the methods' names, no p-values: those are on the methods page
    for word in ("TOPSIS", "Pareto", "LOCO", "LORO", "silhouette", "ARI", "p =", "k-means", "cluster", "Holm"):
        assert word not in first_screen, word
    # accelerator-hours are hardware time; a cost is labelled as derived
    assert "hardware time" in first_screen and not re.search(r"\bpays?\b|\bpaid\b", first_screen)
    methods = page_text(pages[site.METHODS])
    # on the methods page a plain label first, the method's name after it
    assert methods.index("none beats on both") < methods.index("(the non-dominated front)")
    assert "k = 3 (the published study used 5)" in methods or "the published study used 5" in methods


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


def test_ranking_table_shows_every_row_collapsed_and_searchable(pages: dict[str, str], tmp_path: Path) -> None:
    ranking = analysed_outputs(OTHER, 40, 1, tmp_path).ranking
    table = tables.ranking_table(ranking, limit=10)
    assert (table["shown"], table["total"]) == (10, 40)
    assert [cell["text"] for cell in table["rows"][0]][:1] == ["1"]
    assert table["rows"][0][0]["sort"] == "1"
    for benchmark, rows in ((HEADLINE, 60), (OTHER, 40)):
        page_html = pages[site.benchmark_page(benchmark)]
        ranking_html = page_html[page_html.index(f'id="{benchmark}-table"'):]
        assert ranking_html[:ranking_html.index("</table>")].count("<tr>") == 1 + rows
        details = page_html[page_html.index(f'<details class="long" id="{benchmark}-ranking">'):]
        assert details.index(f'id="{benchmark}-table"') < details.index("</details>")  # collapsed
        assert f'data-filter="{benchmark}-table"' in details


def test_sort_keys_are_numbers_and_blank_when_missing() -> None:
    frame = pd.DataFrame({"round": ["v0.7", "v10.0"], "round_efficiency": [np.nan, 0.5]})
    columns = [column for column in tables.RANKING_COLUMNS if column.name in frame]
    rows = formatting.table(frame, columns)["rows"]
    assert [row[0]["text"] for row in rows] == ["v0.7", "v10.0"]
    assert float(rows[0][0]["sort"]) < float(rows[1][0]["sort"])  # by version, not as text
    assert rows[0][1] == {"text": "", "sort": ""} and rows[1][1] == {"text": "0.50", "sort": "0.5"}


def test_a_word_in_a_numeric_column_reads_as_written_and_sorts_with_the_blanks() -> None:
    rows = formatting.table([{"error": 7.44}, {"error": "not evaluable"}],
                            [formatting.Column("error", "Error", style="percent")])["rows"]
    assert [row[0] for row in rows] == [{"text": "7.4%", "sort": "7.44"}, {"text": "not evaluable", "sort": ""}]


@pytest.mark.parametrize(("value", "style", "text"), [
    (4320.0, "readable", "4,320"), (13.47, "readable", "13.5"), (1.8, "readable", "1.80"),
    (0.35816, "readable", "0.358"), (8.0, "readable", "8"), (np.nan, "readable", ""), (None, "ratio", ""),
    ("H100", "readable", "H100"), (True, "readable", "yes"), (0.8149, "ratio", "0.81"), (0.12345, "score", "0.123"),
    (2022.0, "year", "2022"), (1234.5, "money", "1,234.50"), (0, "readable", "0"), (7.44, "percent", "7.4%"),
    (0.913, "share", "91%"), (1.854, "times", "1.85×")])
def test_one_number_formatter_for_the_page(value: Any, style: formatting.Style, text: str) -> None:
    assert formatting.number(value, style) == text


def test_cost_per_run_is_accelerator_hours_times_the_price_or_a_public_range_and_blank_without_one() -> None:
    unpriced = price_table.families_without_price()[0]
    rows = pd.DataFrame({"round": "v3.0", "submitter": ["Acme", "Globex", "Initech"], "system": ["a", "b", "c"],
                         "accelerator_family": ["H100", "A100", unpriced], "accelerator_count": [8, 16, 4],
                         "time_to_train_min": [30.0, 45.0, 90.0], "accelerator_hours": [4.0, 12.0, 6.0]})
    mine = site._cost_columns(rows, Prices(Path("mine.yaml"), {"H100": 3.0}))
    assert mine["cost_low"].tolist()[0] == mine["cost_high"].tolist()[0] == 12.0
    assert mine["cost_text"].tolist()[0] == "12 (your price)"
    public = price_table.cost_range(12.0, "A100")  # the user's file names no A100: the public range
    assert (mine["cost_low"][1], mine["cost_high"][1]) == (public.low, public.high) and public.low < public.high
    assert mine["cost_text"][1].startswith(f"{formatting.number(public.low)} to {formatting.number(public.high)} USD (")
    assert public.cheapest is not None and public.cheapest.provider in mine["cost_text"][1]
    assert mine["cost_text"][2] == "" and pd.isna(mine["cost_low"][2])


def test_a_price_file_with_an_unknown_family_is_an_error_listing_the_known_ones(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("h100: 3.0\nH10O: 2.0\n", encoding="utf-8")
    with pytest.raises(ParamsError, match=r"unknown accelerator families: H10O; known families: .*H100"):
        load_price_table(prices)
    prices.write_text("h100: 3.0\ntpu-V4: 2.0\n", encoding="utf-8")
    assert load_price_table(prices).per_hour == {"H100": 3.0, "TPU-v4": 2.0}  # the catalogue's spelling
    assert load_price_table(None) is None


def test_costs_are_labelled_derived_and_the_example_prices_illustrative(pages: dict[str, str]) -> None:
    text = page_text(headline_page(pages))
    assert "Cost per run (USD, derived)" in text and "derived, not an MLPerf result" in text
    assert "prices from examples/prices.yaml are illustrative, not market data" in text
    assert "Cost = accelerator-hours × public price per accelerator-hour" in text


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


def test_input_hashes_come_from_the_fetch_and_ingest_stages(tmp_path: Path) -> None:
    lock = tmp_path / "dvc.lock"
    lock.write_text(yaml.safe_dump(DVC_LOCK), encoding="utf-8")
    rows = provenance.input_hashes(lock)
    assert [(row["stage"], row["kind"], row["path"]) for row in rows] == [
        ("fetch", "dep", "../shared/mlperf"), ("fetch", "out", "data/raw"), ("ingest", "dep", "data/raw"),
        ("ingest", "out", "data/interim/quarantine.csv")]
    assert rows[0]["md5"] == "625dc9c9cca63ee7ef0aa7c7bf3c1785.dir" and rows[0]["nfiles"] == "12"
    assert provenance.input_hashes(tmp_path / "missing.lock") == []


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


def test_every_page_s_first_screen_says_how_current_it_is(pages: dict[str, str]) -> None:
    """The round analysed and its publication, the prices' date, the build date and commit, on every page (the
    masthead); the entry also names the round the forecasts are for."""
    from pipeline.analysis.pricing.price_table import price_dates_text

    for name, page in pages.items():
        if not name.endswith(".html"):
            continue
        masthead = page_text(page[:page.index("</header>")])
        assert "Analyses MLPerf Training v3.0, published June 2023;" in masthead, name
        assert f"prices read {price_dates_text()}; built " in masthead and " from commit " in masthead, name
    assert "Forecasts are for v3.1, the round after v3.0." in page_text(pages[site.INDEX])


def test_a_round_published_by_the_build_date_but_not_in_the_data_is_named(tmp_path: Path) -> None:
    """Offline, with no upstream record, the masthead still says a newer round is out when the catalogue's table
    of publication dates has it by the build date (v6.0, June 2026), and says nothing before it."""
    from pipeline.report.currency import currency, newer_catalogued

    assert newer_catalogued("v5.1", "2026-12-06") == {"round": "v6.0", "published": "published June 2026"}
    assert newer_catalogued("v5.1", "2026-05-31") is None and newer_catalogued("v6.0", "2026-12-06") is None
    assert newer_catalogued("v5.1", "unknown") is None
    dates = currency("v5.1", {"commit": "abc", "commit_date": "2026-12-06"}, tmp_path / "no-record.json")
    assert dates["newer_upstream"] is None and dates["newer_catalogued"]["round"] == "v6.0"


def test_the_page_names_the_commit_of_its_code_not_the_lock_committed_after_it(tmp_path: Path) -> None:
    """Committing dvc.lock and the metrics after a run changes no page: the commit named is the last that changed
    the code, params.yaml or dvc.yaml (a clean clone's `dvc repro` then leaves git status clean)."""
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                              capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    (tmp_path / "pipeline").mkdir()
    (tmp_path / "pipeline" / "stage.py").write_text("x = 1\n")
    git("add", "-A")
    git("commit", "-qm", "code")
    code = git("rev-parse", "HEAD")
    (tmp_path / "dvc.lock").write_text("stages: {}\n")
    git("add", "-A")
    git("commit", "-qm", "lock")
    assert git("rev-parse", "HEAD") != code and provenance.git_revision(tmp_path)["commit"] == code


def test_git_revision_is_unknown_outside_a_checkout(tmp_path: Path) -> None:
    assert provenance.git_revision(tmp_path) == {"revision": "unknown", "dirty": False, "commit": "unknown",
                                                 "commit_date": "unknown"}
    here = provenance.git_revision(Path(__file__).parent)["revision"]
    assert here == "unknown" or re.fullmatch(r"[0-9a-f]{40}", here)


def test_provenance_renders_revision_hashes_and_params(page: str) -> None:
    shown = page[page.index('id="provenance"'):]
    assert "unknown" in shown and "8fd54aec2896ff4dab2357b3f6e41f5f.dir" in shown
    assert "0" * 32 not in shown  # the features stage is not an input
    for name in PARAMS:
        assert f"<code>{name}</code>" in shown
    assert "k_range: [2, 5]" in shown


def test_the_same_hardware_across_rounds_keeps_each_rounds_best_of_counts_published_twice() -> None:
    frame = pd.DataFrame({"accelerator_family": ["A100", "A100", "A100", "H100", "TPU-v4"],
                          "accelerator_count": [8.0, 8.0, 8.0, 8.0, 16.0],
                          "round": ["v1.0", "v1.0", "v2.0", "v2.0", "v1.0"],
                          "time_to_train_min": [10.0, 7.0, 5.0, 2.0, 9.0], "submitter": "Acme", "system": list("abcde"),
                          "accelerator_hours": 1.0})
    progress = charts.progress_frame(frame)
    assert progress[["family", "count", "round", "time"]].astype(object).values.tolist() == [
        ["A100", 8.0, "v1.0", 7.0], ["A100", 8.0, "v2.0", 5.0]]
    assert progress["hardware"].tolist() == ["8 × A100", "8 × A100"]


def test_decide_charts_come_from_decide_json() -> None:
    colours = charts.family_colours(["A100", "H100", "TPU-v4"])
    bands, forecasts = charts.forecast_frames(DECIDE, {"A100", "H100"})
    assert sorted(bands["unit"].unique()) == ["A100 (SXM)", "H100 (SXM)"] and len(bands) == 8
    assert (bands["low"] <= bands["time"]).all() and (bands["time"] <= bands["high"]).all()
    assert forecasts["unit"].tolist() == ["A100 (SXM)"]
    curves, observed, crossings = charts.break_even_frames(DECIDE, {"A100", "H100", "TPU-v4"})
    assert len(curves) == len(observed) == 3 and crossings["count"].tolist() == [40.0] * 3
    assert crossings["agreement"].tolist() == ["yes"] * 3
    chart = charts.break_even_chart("b", DECIDE, ["A100", "H100", "TPU-v4"], colours, "BERT")
    assert chart is not None and "0.7" in chart.reading
    backtest = charts.backtest_chart("bt", DECIDE, "BERT")
    assert backtest is not None and "3 BERT results of 1 round," in backtest.alt
    skipped = DECIDE.model_copy(update={"status": "skipped", "backtest_points": []})
    assert charts.backtest_chart("bt", skipped, "BERT") is None
    assert charts.break_even_chart("b", None, ["A100"], colours, "BERT") is None
    cell = decide_section.fragment(HEADLINE, DECIDE)["break_even"]["rows"][0]
    assert any(c["text"].startswith("yes: the data cross the floor") for c in cell)


def fixture_configurations(outputs: list[inputs.BenchmarkOutputs]) -> pd.DataFrame:
    """configurations.parquet behind the fixture outputs: the analysed benchmarks' rows and, for the headline,
    a v3.0 copy of a v1.0 result (republished, so the analysis leaves it out)."""
    from pipeline.core.schemas import CONFIGURATION_COLUMNS

    frame = pd.concat([item.clustered.drop(columns="cluster") for item in outputs if item.analysed],
                      ignore_index=True)
    original = frame[(frame["benchmark"] == HEADLINE) & (frame["round"] == "v1.0")].iloc[0]
    copy = original.to_frame().T.assign(round="v3.0", system="copy-of-" + original["system"],
                                        republished_of=f"v1.0/{original['submitter']}/{original['system']}")
    frame = pd.concat([frame, copy], ignore_index=True).assign(benchmark_folder=lambda f: f["benchmark"])
    for column in CONFIGURATION_COLUMNS:
        if column not in frame:
            frame[column] = None
    return frame[CONFIGURATION_COLUMNS].infer_objects()


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


def test_republished_results_say_so_in_the_tables() -> None:
    ranking = pd.DataFrame({"rank": [1, 2], "round": ["v2.1", "v2.0"], "submitter": "Acme", "system": ["b", "a"],
                            "republished_of": ["v2.0/Acme/a", None], "time_to_train_min": [5.0, 5.0],
                            "accelerator_count": 8.0, "accelerator_family": "A100", "accelerator_hours": 8 * 5 / 60})
    system = next(i for i, column in enumerate(tables.RANKING_COLUMNS) if column.name == "system")
    cells = [row[system]["text"] for row in tables.ranking_table(ranking, None)["rows"]]
    assert cells == ["b (republished from v2.0)", "a"]
    # every results table has a cost column: a run today at the dearest on-demand price, or your own
    cost = next(i for i, column in enumerate(tables.RANKING_COLUMNS) if column.name == "cost_high_usd")
    mine = [row[cost]["text"] for row in tables.ranking_table(ranking, None, {"A100": 3.0})["rows"]]
    assert mine == ["2", "2"]  # 8 x 5 min = 0.667 accelerator-hours x 3 USD
    assert formatting.configuration_name(ranking.iloc[0]) == "v2.1 Acme b (republished from v2.0)"
    assert tables.republished_rows(ranking.iloc[:1]) == [
        {"name": "v2.1 Acme b (republished from v2.0)", "hardware": "8 × A100", "time": "5", "original": "v2.0 Acme a"}]
    assert tables.republished_by_round(ranking) == [
        {"round": "v2.0", "results": 1, "republished": 0, "share": "0%"},
        {"round": "v2.1", "results": 1, "republished": 1, "share": "100%"}]


def test_energy_shows_where_measured_and_nothing_changes_without_the_columns(
        tmp_path: Path, pages: dict[str, str], energy_pages: dict[str, str]) -> None:
    with_energy = energy_pages
    headline = with_energy[site.benchmark_page(HEADLINE)]
    assert "Energy per run (kWh; measured, or estimated" in headline and f'id="{HEADLINE}_energy"' in headline
    assert "12.5 kWh measured (node wall power)" in page_text(headline)  # each energy figure with its measurement point
    # the energy view: every measured result named (round, submitter, system), the derived figures labelled
    assert 'id="energy"' in headline and "W per accelerator (derived)" in headline
    assert "derived, not an MLPerf result" in headline and "650" in page_text(headline) and "93%" in page_text(headline)
    assert 'id="energy"' not in with_energy[site.benchmark_page(OTHER)]
    assert "Energy per run (kWh" not in with_energy[site.benchmark_page(OTHER)]  # no measurement there
    # without the columns (or with them all empty) the pages are as they were
    plain = headline_page(pages)
    assert "Energy" not in plain and 'id="energy"' not in plain and f'id="{HEADLINE}_energy"' not in plain
    configurations = fixture_configurations(fixture_outputs(tmp_path / "again"))
    empty = configurations.assign(**dict.fromkeys(site.ENERGY_COLUMNS, np.nan))
    assert site.with_energy(analysed_outputs(HEADLINE, 60, 0, tmp_path).ranking, empty, HEADLINE).columns.tolist() == \
        pd.read_csv(tmp_path / "ranking.csv").columns.tolist()


def _specs(page_html: str) -> dict[str, dict[str, Any]]:
    return {key: json.loads(spec) for key, spec in
            re.findall(r'<script type="application/json" id="spec-([^"]+)">(.*?)</script>', page_html, re.S)}


def test_charts_name_each_point_filter_by_family_and_select_rounds_with_fixed_colours(pages: dict[str, str]) -> None:
    specs = {key: spec for name, text in pages.items() if name.endswith(".html") for key, spec in _specs(text).items()}
    assert {f"{HEADLINE}_tradeoff", f"{HEADLINE}_scaling", f"{HEADLINE}_progress", f"{OTHER}_tradeoff",
            "family_comparison"} <= set(specs)
    trade_off = json.dumps(specs[f"{HEADLINE}_tradeoff"])
    for field in ("submitter", "system", "round", "count", "time", "hours"):
        assert f'"field": "{field}"' in trade_off
    params = [param["name"] for param in specs[f"{HEADLINE}_tradeoff"]["params"]]
    assert params == [f"{HEADLINE}_tradeoff_family", f"{HEADLINE}_tradeoff_round"]  # legend filter, round selector
    assert specs[f"{HEADLINE}_tradeoff"]["params"][1]["bind"]["input"] == "select"
    # the forecast and its interval from decide.json: A100's 5 min (4 to 6) at 64 accelerators
    scaling = json.dumps(specs[f"{HEADLINE}_scaling"])
    assert '"high": 6.0' in scaling and '"low": 4.0' in scaling and '"time": 5.0' in scaling
    # one colour per family, the same in every chart of every page
    colour_of: dict[str, str] = {}
    for spec in specs.values():
        for found in re.finditer(r'"domain": \[([^\]]*)\], "range": \[([^\]]*)\]', json.dumps(spec, sort_keys=True)):
            domain, colours = json.loads(f"[{found[1]}]"), json.loads(f"[{found[2]}]")
            if all(isinstance(c, str) and c.startswith("#") for c in colours):
                for family, colour in zip(domain, colours):
                    assert colour_of.setdefault(family, colour) == colour, family
    assert {"A100", "H100", "TPU-v4"} <= set(colour_of) and len({colour_of[f] for f in FAMILY_YEAR}) == 3
    # each chart: a title, a one-line reading and a text alternative
    for name, text in pages.items():
        for figure in re.findall(r'<figure class="vchart".*?</figure>', text, re.S):
            assert re.search(r"<strong>[^<]+</strong><span class=\"reading\">[^<]+</span>", figure), name
            assert re.search(r'role="img" aria-label="[^"]{40,}"', figure), name


def test_every_chart_is_valid_vega_lite(energy_pages: dict[str, str]) -> None:
    """Every kind of chart the site draws, checked against the JSON schema of the Vega-Lite version the site bundles
    (assets.VEGA_LITE_VERSION), as Altair ships it."""
    import altair
    import jsonschema

    assert altair.SCHEMA_VERSION.startswith(f"v{assets.VEGA_LITE_VERSION}.")
    schema = resources.files("altair.vegalite.v6.schema").joinpath("vega-lite-schema.json").read_text("utf-8")
    validator = jsonschema.Draft7Validator(json.loads(schema))
    specs = {key: spec for name, text in energy_pages.items() if name.endswith(".html")
             for key, spec in _specs(text).items()}
    kinds = {"tradeoff", "scaling", "progress", "cost", "energy", "break_even", "backtest"}
    assert {kind for kind in kinds for key in specs if key.endswith(f"_{kind}")} == kinds
    assert "family_comparison" in specs
    for key, spec in specs.items():
        assert [error.message for error in validator.iter_errors(spec)] == [], key


def test_family_order_puts_the_newest_rounds_families_first() -> None:
    frame = pd.DataFrame({"round": ["v1.0", "v1.0", "v1.0", "v2.0", "v2.0", "v2.0"],
                          "accelerator_family": ["A100", "A100", "V100", "H100", "B200", "B200"]})
    assert charts.family_order(frame) == ["B200", "H100", "A100", "V100"]
    palette = charts.FAMILY_PALETTE
    assert charts.family_colours(["B200", "H100"]) == {"B200": palette[0], "H100": palette[1]}


def test_the_same_inputs_give_the_same_site(tmp_path: Path, pages: dict[str, str]) -> None:
    assert render_fixture_site(tmp_path) == pages


# The methods' names and statistics a buyer should not need: they are on the methods page only.
JARGON = ("TOPSIS", "Pareto", "LOCO", "LORO", "silhouette", "ARI", "p =", "k-means", "cluster", "Holm", "R²")


def test_a_benchmark_page_speaks_plainly_until_its_long_tables(pages: dict[str, str]) -> None:
    for benchmark in (HEADLINE, OTHER):
        page_html = pages[site.benchmark_page(benchmark)]
        top = page_text(page_html[:page_html.index('id="results"')])
        assert [word for word in JARGON if word in top] == [], benchmark
    assert "silhouette" in page_text(pages[site.METHODS]).lower() and "Holm" in pages[site.METHODS]


def test_the_family_comparison_has_a_bootstrap_interval_of_the_median() -> None:
    values = np.array([0.2, 0.4, 0.5, 0.6, 0.9])
    low, high = site.median_interval(values)
    assert 0.2 <= low <= 0.5 <= high <= 0.9 and low < high
    assert site.median_interval(values) == (low, high)  # seeded: the page is the same on every run
    assert site.median_interval(np.array([0.7])) == (0.7, 0.7)  # one result: no interval
    view = {"model": "BERT", "rows": pd.DataFrame({"accelerator_family": ["A", "A", "A", "B"],
                                                  "round_efficiency": [0.2, 0.5, 0.9, 1.0]})}
    rows = site.family_comparison([view]).set_index("family")
    assert rows.loc["A", "median"] == 0.5 and rows.loc["A", "ci_low"] <= 0.5 <= rows.loc["A", "ci_high"]
    assert (rows.loc["B", "ci_low"], rows.loc["B", "ci_high"], rows.loc["B", "n"]) == (1.0, 1.0, 1)


@pytest.mark.skipif(not (ROOT / "reports" / site.INDEX).is_file(), reason="needs this checkout's `dvc repro` outputs")
def test_the_real_entry_counts_the_results_the_round_republished() -> None:
    """Issue 35 on this checkout's site: RetinaNet v5.1's fastest is 1.39 min on 512 x GB200, republished from
    v5.0 (10.1 min when republished results were left out); R-GAT's 0.837 min; every named option has a cost (or
    says it has no public price) and an energy."""
    entry = (ROOT / "reports" / site.INDEX).read_text(encoding="utf-8")
    glance = page_text(entry[entry.index('id="glance"'):entry.index('id="families"')])
    if "v5.1" not in glance or "RetinaNet" not in glance:
        pytest.skip("the site is not of the v5.1 mirror")
    assert "512 × GB200, 1.39 min" in glance and "republished from v5.0" in glance
    assert "256 × GB200, 0.837 min" in glance
    rows = entry[entry.index('id="glance"'):entry.index('id="families"')].count('<th scope="row">')
    assert rows == 7 and glance.count("; energy ") == 2 * rows  # the fastest and the least hardware time of each


def test_the_newest_round_counts_its_republished_results_and_its_front_is_beaten_by_none() -> None:
    """A result republished in the round that beats the ranking's front on both joins the round's rows, marked;
    the front, round rank and round efficiency are computed over them all."""
    ranking = pd.DataFrame({"round": ["v5.1", "v5.1", "v5.0"], "submitter": "Acme", "system": ["a", "b", "old"],
                            "accelerator_family": "H100", "accelerator_count": [8.0, 64.0, 512.0],
                            "time_to_train_min": [30.0, 5.0, 1.0], "accelerator_hours": [4.0, 5.33, 8.53],
                            "round_front": [1, 1, 1], "round_rank": [1, 2, 1], "round_efficiency": [1.0, 0.75, 1.0]})
    republished = pd.DataFrame({"round": ["v5.1"], "submitter": ["Acme"], "system": ["b_again"],
                                "accelerator_family": ["H100"], "accelerator_count": [32.0],
                                "time_to_train_min": [4.0], "accelerator_hours": [2.13],
                                "republished_of": ["v5.0/Acme/b0"]})
    rows = site.newest_round_rows(ranking, republished, "v5.1")
    assert rows["system"].tolist() == ["b_again", "b", "a"]  # front first, then the faster
    assert rows["round_front"].tolist() == [1, 2, 2] and rows["round_rank"].tolist() == [1, 2, 3]
    assert rows["round_efficiency"].tolist() == pytest.approx([1.0, 2.13 / 5.33, 2.13 / 4.0])
    assert site.configuration_row(rows.iloc[0])["name"] == "Acme b_again (republished from v5.0)"


def test_features_of_equal_importance_are_listed_in_name_order() -> None:
    """Rows of equal permutation importance (often many at 0.000) keep one order, by feature name: an unstable sort
    left them in an order that changed with the CPU's sort code, and so did the methods page's bytes."""
    features = {f"feature_{i:02d}": {"mean": 0.0 if i % 3 else 0.5, "std": 0.0} for i in range(40, 0, -1)}
    fit = TargetFit.model_validate({**IMPORTANCE_FITS["log_time_to_train"].model_dump(),
                                    "permutation_importance": features})
    report = IMPORTANCE.model_copy(update={"targets": {"log_time_to_train": fit}})
    order = list(dict.fromkeys(tables.importance_frame(report, top=40)["feature"]))
    assert order == sorted(features, key=lambda name: (-features[name]["mean"], name))
