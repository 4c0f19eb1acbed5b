"""One context per section of the page (summary, findings, each benchmark, data and quarantine, cost), the page's
context as a whole, and its rendering.

"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from pipeline.analysis.pricing.price_table import MAX_PRICE_AGE_DAYS
from pipeline.analysis.pricing.prices import Prices
from pipeline.analysis.statistics import findings
from pipeline.analysis.statistics.cluster_profiles import ClusterProfile
from pipeline.analysis.statistics.clustering import Clustering
from pipeline.analysis.statistics.findings_result import Correction, EfficiencyBand
from pipeline.mlperf.catalogue import BY_ID
from pipeline.report.formatting import FEATURE_LABELS, cluster_colour, round_order
from pipeline.report.inputs import BenchmarkOutputs
from pipeline.report.provenance import Provenance
from pipeline.report.tables import (
    cluster_profile_rows,
    counts,
    importance_rows,
    ranking_table,
    republished_by_round,
    republished_rows,
    superlinear_rows,
)
from pipeline.settings import Settings

STUDY_K = 5  # the published study's number of clusters, named beside `cluster.k` and the k the data support
# The method's names come after what they mean to a reader, here and in the template.
BEST_MEANS = ("The answer is the set of configurations none beats on both time to train and hardware time "
              "(accelerator-hours): a configuration at least as fast with at most as many accelerator-hours, and "
              "better on one, would beat it (the non-dominated front). No single configuration is called the best: "
              "which one to rent depends on your deadline or your budget (the entry page answers both). Results are "
              "ranked front by front, then by the weighted geometric mean of time and accelerator-hours (a 10% "
              "change of either weighs alike at equal weights).")
HOW_TO_READ = ("How to read this: each row is one published system trained to MLPerf's quality target. Time to "
               "train is how long you wait; accelerator-hours (accelerators × hours) are the hardware time it took, "
               "not a price.",
               "Round efficiency = the round's fewest accelerator-hours ÷ this result's (1 = best). Lower is better "
               "for time and accelerator-hours.",
               "A benchmark's answer is its front: the configurations none beats on both time and hardware time. "
               "Clusters are groups of similar hardware (k-means, k groups); the diagnostics say how well separated "
               "and stable they are, and which k the data support.")

# The quarantine list by what it means to a reader, in this order: key, short label, label in a sentence, and the
# phrases of ingest's reasons that make a record of that kind (the first match wins; any other reason is a
# defective or missing file).
QUARANTINE_KINDS = (
    ("rules", "Runs the official rules reject",
     "runs the official rules reject (counted as not converged, as MLCommons counts them)",
     ("official checker's logging rules",)),
    ("layout", "Unusual folder layout",
     "files where the publication's folder layout is unusual, read as the official tools read them",
     ("sits in the system folder", "nested below a benchmark folder", "has no results folder",
      "no usable system description", "unknown benchmark", "more than once")),
    ("defective", "Defective or missing files",
     "defective or missing files (empty or cut-off logs, unreadable descriptions, absent logs)", ()),
)


@dataclass(frozen=True)
class FindingTest:
    """One test of a finding as a row of the page: what it compares, n, submitters, the effect with its 95% interval,
    the p (CR2 standard error, Bell-McCaffrey degrees of freedom `df`) and the Holm-adjusted p (blank when it did
    not run), its verdict and `note`: why it did not run, or why it ran and stays inconclusive."""
    label: str
    n: int
    submitters: int
    effect: str
    p_raw: str
    df: str
    p_adjusted: str
    verdict: str
    note: str


@dataclass(frozen=True)
class Finding:
    """One finding of the published study as the rank stage tested it (rank.json's `findings`): the verdict after
    the correction, the one before it, and its tests."""
    key: str
    claim: str
    verdict: str  # findings.SUPPORTED, CONTRADICTED or INCONCLUSIVE, after the correction
    test: str
    evidence: str
    verdict_raw: str = findings.INCONCLUSIVE
    tests: tuple[FindingTest, ...] = ()


def finding_test(test: findings.Test) -> FindingTest:
    """A test of rank.json's `findings[].tests` as a row of the page: a test of every benchmark together names its
    scope; a descriptive estimate has no p and reads "estimate" where a test has its verdict."""
    ran = test.p_raw is not None or test.descriptive
    effect = f"{test.effect} {test.effect_text()}" if ran and test.estimate is not None else ""
    df = "" if test.df is None else f"{test.df:.1f}"
    label = f"{test.label} ({test.scope})" if test.scope else test.label
    return FindingTest(label, test.n, test.submitters, effect, _p_value(test.p_raw), df,
                       _p_value(test.p_adjusted), "estimate" if test.descriptive else test.verdict, test.note)


def _p_value(value: float | None) -> str:
    return "" if value is None else f"{value:.2g}"


# The published study's findings, as short table headers and claims (tested in pipeline.analysis.statistics.findings).
FINDING_CLAIMS = findings.CLAIMS


# ----------------------------------------------------------------------------------------------------- findings

def best_profile(outputs: BenchmarkOutputs) -> ClusterProfile | None:
    """The profile of the most hardware-efficient cluster: the highest median round efficiency (rank.json)."""
    return outputs.clusters.profile(outputs.rank.most_efficient_cluster)


def findings_of(outputs: BenchmarkOutputs) -> list[Finding]:
    """The published study's findings as the rank stage tested them, in the order of `FINDING_CLAIMS`; one the
    rank stage did not test reads as inconclusive."""
    tested = {item.key: item for item in outputs.rank.findings}
    return [Finding(key, claim, tested[key].verdict, tested[key].test, tested[key].evidence,
                    tested[key].verdict_raw, tuple(finding_test(test) for test in tested[key].tests))
            if key in tested else Finding(key, claim, findings.INCONCLUSIVE, "not run", "not tested by the rank stage")
            for key, (_, claim) in FINDING_CLAIMS.items()]


def findings_correction(outputs: Sequence[BenchmarkOutputs]) -> Correction | None:
    """The page's multiple-testing correction (rank.json's `findings_correction`, the same in every analysed
    benchmark): how many findings and tests were supported before and after it."""
    return next((item.rank.findings_correction for item in outputs if item.rank.findings_correction), None)


def verdict_counts(found: Sequence[Finding]) -> dict[str, int]:
    """How many of `found` are supported, contradicted and inconclusive, keyed by those verdicts (all three keys,
    counts of findings)."""
    return {verdict: sum(item.verdict == verdict for item in found)
            for verdict in (findings.SUPPORTED, findings.CONTRADICTED, findings.INCONCLUSIVE)}


def efficiency_bands(outputs: BenchmarkOutputs) -> list[EfficiencyBand]:
    """The sublinear finding's within-series efficiency by accelerator-count band (rank.json)."""
    sublinear = outputs.rank.finding("sublinear")
    return sublinear.bands if sublinear else []


def findings_matrix(sections: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Every analysed benchmark against every finding: a verdict and its evidence per cell."""
    analysed = [s for s in sections if s["analysed"]]
    rows = [{"id": s["id"], "model": s["model"], "findings": s["findings"]} for s in analysed]
    totals = [{verdict: sum(r["findings"][i].verdict == verdict for r in rows)
               for verdict in (findings.SUPPORTED, findings.CONTRADICTED, findings.INCONCLUSIVE)}
              for i in range(len(FINDING_CLAIMS))]
    return {"claims": [short for short, _ in FINDING_CLAIMS.values()], "rows": rows, "totals": totals}


# ---------------------------------------------------------------------------------------------- a benchmark

def benchmark_title(benchmark: str) -> dict[str, str]:
    """A benchmark's heading on the pages: id, model, task, data set, quality target, the round it is new in
    (blank when not new) and its last round when the rules retire it after that (blank while it is run); the id
    alone for a benchmark the catalogue lacks."""
    entry = BY_ID.get(benchmark)
    if entry is None:
        return {"id": benchmark, "model": benchmark, "task": "", "dataset": "", "quality_target": "", "new_in": "",
                "retired_after": ""}
    return {"id": benchmark, "model": entry.model, "task": entry.task, "dataset": entry.dataset,
            "quality_target": entry.quality_target, "new_in": entry.first_round if entry.new else "",
            "retired_after": entry.last_round or ""}


def scope_of(clustered: pd.DataFrame) -> dict[str, Any]:
    """The scope a benchmark page states from its clustered configurations (one row each): the rounds in order and
    their range, the count of results, submitters, systems and accelerator families."""
    rounds = sorted(clustered["round"].unique(), key=round_order)
    return {"rounds": rounds, "round_range": f"{rounds[0]} to {rounds[-1]}" if rounds else "none",
            "results": len(clustered), "submitters": int(clustered["submitter"].nunique()),
            "systems": int(clustered[["submitter", "system"]].drop_duplicates().shape[0]),
            "families": int(clustered["accelerator_family"].nunique())}


def cluster_notes(clusters: Clustering) -> dict[str, Any]:
    """What the page says about how the clusters were made: inputs and where they came from, the dropped
    candidates with the reason, the distinct configurations clustered, the k verdict and the k the diagnostics
    support, and the clusters too small to read much into."""
    verdict = clusters.k_verdict
    ordered_by = clusters.ordered_by or ""
    return {
        "n_distinct": clusters.n_distinct, "share_repeated": clusters.share_repeated,
        "k_supported_by_data": verdict.supported_k if verdict else None,
        "features": [FEATURE_LABELS.get(f, f) for f in clusters.features],
        "from_importance": clusters.feature_source == "importance",
        "dropped": [{"feature": FEATURE_LABELS.get(d.feature, d.feature), "reason": d.reason}
                    for d in clusters.dropped_features],
        "ordered_by": FEATURE_LABELS.get(ordered_by, clusters.ordered_by),
        "k": clusters.k, "k_supported": verdict.supported if verdict else None,
        "preferred_k": verdict.preferred_k if verdict else None, "k_message": verdict.message if verdict else None,
        "k_rule": verdict.rule if verdict else None,
        "small": [p for p in clusters.profiles if p.small], "min_size": clusters.min_size,
        "merged_small": clusters.merged_small,
        "k_support": clusters.k_support,
    }


@dataclass(frozen=True)
class Answer:
    """What the page answers for one benchmark from its groups (today's results are the buyer stage's record): the
    most hardware-efficient cluster's profile (highest median round efficiency) and the clusters whose medians trade
    time against hardware time (their own front, fastest median first)."""
    efficient: ClusterProfile | None
    efficient_colour: str | None
    trade_off: list[dict[str, Any]]
    k: int | None
    k_supported: int | None


def answer_of(outputs: BenchmarkOutputs) -> Answer:
    """The `Answer` of an analysed benchmark, from its rank.json and clusters.json."""
    efficient = best_profile(outputs)
    trade_off = sorted((standing for standing in outputs.rank.clusters if standing.trade_off_front == 1),
                       key=lambda standing: standing.time_to_train_min)
    verdict = outputs.clusters.k_verdict
    return Answer(
        efficient=efficient,
        efficient_colour=cluster_colour(efficient.cluster) if efficient else None,
        trade_off=[{**standing.model_dump(), "name": getattr(outputs.clusters.profile(standing.cluster), "name", ""),
                    "colour": cluster_colour(standing.cluster)} for standing in trade_off],
        k=outputs.clusters.k, k_supported=verdict.supported_k if verdict else None)


def benchmark_section(outputs: BenchmarkOutputs, prices: Prices | None = None,
                      max_age_days: int = MAX_PRICE_AGE_DAYS) -> dict[str, Any]:
    """What a benchmark's page and its parts of the methods page show: scope, answer, ranking (every row, with its
    cost at your `prices` or the public ones, none more than `max_age_days` older than the table's newest), findings,
    clusters, importance, republished results and the decide fragment."""
    title = benchmark_title(outputs.benchmark)
    if not outputs.analysed:
        reason = outputs.rank.reason or outputs.importance.reason or "no configurations in scope"
        return {**title, "analysed": False, "reason": reason}
    importance_ok = outputs.importance.status == "ok"
    return {
        **title, "analysed": True, "scope": scope_of(outputs.clustered), "answer": answer_of(outputs),
        "metrics": outputs.rank, "decide": outputs.decide,
        "superlinear": superlinear_rows(outputs), "bands": efficiency_bands(outputs),
        "republished": republished_rows(outputs.republished),
        "findings": findings_of(outputs),
        "clusters": cluster_profile_rows(outputs),
        "cluster_notes": cluster_notes(outputs.clusters),
        "ranking": ranking_table(outputs.ranking, None, None if prices is None else prices.per_hour, max_age_days),
        "importance": importance_rows(outputs.importance) if importance_ok else None,
        "importance_reason": None if importance_ok else outputs.importance.reason,
        "selected_features": [FEATURE_LABELS.get(f, f) for f in outputs.importance.selected_features],
    }


# ------------------------------------------------------------------------------------------ data and quarantine

def quarantine_kind(reason: str) -> str:
    """The QUARANTINE_KINDS key of one quarantine reason."""
    return next((key for key, _, _, phrases in QUARANTINE_KINDS if any(phrase in reason for phrase in phrases)),
                "defective")


def quarantine_summary(quarantine: pd.DataFrame, tally: pd.DataFrame | None) -> dict[str, Any]:
    """The quarantine list split by what it means (QUARANTINE_KINDS), with the counts by reason within each kind,
    and the repository's code and documentation files, which ingest counts in its tally but does not list."""
    kinds = quarantine["reason"].astype(str).map(quarantine_kind)
    repository = int(tally["repository_files"].sum()) if tally is not None and "repository_files" in tally else 0
    return {"total": len(quarantine), "repository_files": repository,
            "kinds": [{"key": key, "short": short, "label": label, "count": int((kinds == key).sum()),
                       "by_reason": counts(quarantine.loc[kinds == key, "reason"])}
                      for key, short, label, _ in QUARANTINE_KINDS]}


def coverage_of(results: pd.DataFrame, quarantine: pd.DataFrame, tally: pd.DataFrame | None = None,
                configurations: pd.DataFrame | None = None) -> dict[str, Any]:
    """What the ingested data holds, over every round and benchmark; with the configurations, how many of each
    round's results repeat an earlier round's."""
    rounds = sorted(results["round"].unique(), key=round_order)
    scored = results[results["time_to_train_min"].notna()]
    unscored = results[results["time_to_train_min"].isna()]
    return {
        "rounds": rounds, "round_range": f"{rounds[0]} to {rounds[-1]}" if rounds else "none",
        "results_folders": len(results), "results": len(scored),
        "submitters": int(scored["submitter"].nunique()),
        "systems": int(scored[["submitter", "system"]].drop_duplicates().shape[0]),
        "unscored_by_reason": counts(unscored["score_note"].fillna("no score")),
        "quarantined": len(quarantine), "quarantine": quarantine_summary(quarantine, tally),
        "quarantine_by_reason": counts(quarantine["reason"]),
        "quarantine_rows": quarantine[["round", "path", "reason"]].astype(str).to_dict(orient="records"),
        "republished": [] if configurations is None else republished_by_round(configurations),
        "n_republished": 0 if configurations is None else int(configurations["republished_of"].notna().sum()),
    }


# ------------------------------------------------------------------------------------------------------- render

def report_context(outputs: Sequence[BenchmarkOutputs], results: pd.DataFrame, quarantine: pd.DataFrame,
                   settings: Settings, provenance_: Provenance, tally: pd.DataFrame | None = None,
                   prices: Prices | None = None, configurations: pd.DataFrame | None = None) -> dict[str, Any]:
    """What every page of the site shares: each benchmark's section, the findings across benchmarks, the data
    coverage, the validated settings the methods quote (`analysis`, `importance_params`, ...) and the provenance."""
    sections = [benchmark_section(item, prices, settings.report.max_price_age_days) for item in outputs]
    return {
        "sections": sections, "matrix": findings_matrix(sections), "correction": findings_correction(outputs),
        "coverage": coverage_of(results, quarantine, tally, configurations), "analysis": settings.analysis,
        "importance_params": settings.importance, "cluster_params": settings.cluster,
        "rank_params": settings.rank, "provenance": provenance_,
        "findings_params": settings.findings, "best_means": BEST_MEANS, "how_to_read": HOW_TO_READ,
        "study_k": STUDY_K,
        "prices": None if prices is None else {"path": str(prices.path), "illustrative": prices.illustrative},
    }
