"""The small report site the tests of tests/report build: fixture tables shaped exactly like the stages' outputs,
and the site rendered from them.

Three benchmarks: HEADLINE (R-GAT, still in MLPerf, with decide.json), OTHER (DLRM, retired) and SKIPPED (MiniGo,
too few configurations). The importance, cluster and rank outputs are made by the real cluster and rank functions on
synthetic configurations; decide.json (DECIDE_SUMMARY), the ingest's results, quarantine, tally and summary check,
and dvc.lock are written by hand. Hostile strings (HOSTILE_SYSTEM, HOSTILE_SUBMITTER, HOSTILE_PATH) sit in the data
so every page can be checked for escaping. The pytest fixtures built from them (`pages`, `energy_pages`, `page`) are
in tests/report/conftest.py; tests/report/test_browser.py opens the same site in Chromium."""
from __future__ import annotations

import dataclasses
import html
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from pipeline.analysis import buyer
from pipeline.analysis.efficiency import efficiency_metrics
from pipeline.analysis.forecasting.decide import DecideSummary
from pipeline.analysis.pricing.energy_estimate import fit as fit_energy
from pipeline.analysis.pricing.prices import Prices
from pipeline.analysis.statistics import clustering as cluster
from pipeline.analysis.statistics import findings, importance
from pipeline.analysis.statistics import ranking as rank
from pipeline.analysis.statistics.findings_result import FindingsReport
from pipeline.analysis.statistics.importance_result import ImportanceReport, TargetFit
from pipeline.core.files import write_csv
from pipeline.report import assets, decide_section, inputs, provenance, site
from pipeline.settings import ClusterSettings, FindingsSettings, RankSettings, settings_from
from tests.conftest import ROOT

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


def write_fixture_site(folder: Path, energy: bool = False) -> Path:
    """The fixture site written into `folder` with the chart library, as the stage writes it; its entry page."""
    for name, text in {**render_fixture_site(folder / "scratch", energy),
                       f"assets/{assets.LIBRARY}": assets.chart_library()}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder / site.INDEX


def headline_page(pages: dict[str, str]) -> str:
    return pages[site.benchmark_page(HEADLINE)]


def page_text(page_html: str) -> str:
    """A page's text as a reader sees it, tags stripped, whitespace collapsed."""
    text = re.sub(r"\s+", " ", re.sub(r"<script.*?</script>|<[^>]+>", " ", page_html, flags=re.S))
    return html.unescape(re.sub(r" ([,.;:)])", r"\1", text))


# The methods' names and statistics a buyer should not need: they are on the methods page only.
JARGON = ("TOPSIS", "Pareto", "LOCO", "LORO", "silhouette", "ARI", "p =", "k-means", "cluster", "Holm", "R²")
