"""The page's tables and the stage's table outputs, built with `formatting.table` and `formatting.number`."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

import pandas as pd

from pipeline.analysis.pricing.costs import training_costs
from pipeline.analysis.pricing.price_table import MAX_PRICE_AGE_DAYS
from pipeline.analysis.scope import republished_from
from pipeline.analysis.statistics.cluster_profiles import ClusterProfile
from pipeline.analysis.statistics.findings_result import Correction
from pipeline.analysis.statistics.importance_result import ImportanceReport, TargetVerdict
from pipeline.report.formatting import (
    FEATURE_LABELS,
    TARGET_LABELS,
    Column,
    cluster_colour,
    configuration_name,
    hardware_name,
    missing,
    number,
    round_order,
    table,
)
from pipeline.report.inputs import BenchmarkOutputs

IMPORTANCE_TOP = 8  # features in the importance table, strongest first

# Who and what first, then the criteria, then the analysis' labels; few enough to fit a laptop's width (every column
# is in reports/ranking.csv).
RANKING_COLUMNS = [
    Column("rank", "Rank"),
    Column("round", "Round", style=None, sort_key=round_order),
    Column("submitter", "Submitter", numeric=False, style=None),
    Column("system", "System", numeric=False, style=None),
    Column("accelerator_family", "Accelerator (precision)", numeric=False, style=None),
    Column("accelerator_count", "Accelerators"),
    Column("time_to_train_min", "Time to train (min)"),
    Column("accelerator_hours", "Accelerator-hours"),
    Column("cost_high_usd", "Cost today (USD)"),
    Column("round_efficiency", "Hardware efficiency (1 = best of round)", style="ratio"),
    Column("round_front", "Front in round (1 = unbeaten)"),
    Column("cluster", "Group", swatch=True),
]


def ranking_table(ranking: pd.DataFrame, limit: int | None, prices: Mapping[str, float] | None = None,
                  max_age_days: int = MAX_PRICE_AGE_DAYS) -> dict[str, Any]:
    """The sortable ranking; a republished result (ranked with `analysis.republished: include`) says so after its
    system name, and each accelerator the precision it trained in where known. Its cost is that of a run today at the
    dearest current on-demand price (`training_costs`, none more than `max_age_days` older than the table's newest;
    your `prices` where they name the family), empty without one: derived, not an MLPerf result."""
    ranking = ranking.assign(cost_high_usd=training_costs(ranking, prices, max_age_days=max_age_days)[
        "cost_high_usd"].astype(float))
    if "precision" in ranking:
        ranking = ranking.assign(accelerator_family=[
            family if missing(precision) or missing(family) else f"{family} ({precision})"
            for family, precision in zip(ranking["accelerator_family"], ranking["precision"])])
    if "republished_of" in ranking:
        labels = [system if missing(original) else f"{system} ({republished_from(str(original))})"
                  for system, original in zip(ranking["system"], ranking["republished_of"])]
        ranking = ranking.assign(system=labels)
    return table(ranking, RANKING_COLUMNS, limit)


def republished_rows(republished: pd.DataFrame) -> list[dict[str, str]]:
    """The results the analysis left out as republications (`pipeline.analysis.scope.republished_left_out`): the
    result, its hardware and time, and the original it repeats."""
    return [{"name": configuration_name(row), "hardware": hardware_name(row),
             "time": number(row["time_to_train_min"]), "original": str(row["republished_of"]).replace("/", " ")}
            for _, row in republished.iterrows()]


def republished_by_round(configurations: pd.DataFrame) -> list[dict[str, Any]]:
    """Per round, in order: the scored results of catalogued benchmarks (every division) and how many of them
    repeat an earlier round's result (`republished_of`), with the share; rounds without any are listed too."""
    rows = []
    for round_, group in configurations.groupby("round"):
        republished = int(group["republished_of"].notna().sum())
        rows.append({"round": round_, "results": len(group), "republished": republished,
                     "share": number(republished / len(group), "share")})
    return sorted(rows, key=lambda row: round_order(row["round"]))


def superlinear_rows(outputs: BenchmarkOutputs) -> list[dict[str, str]]:
    """Within-series efficiencies above the threshold, both members side by side, with the split of the
    efficiency (samples to converge and throughput per accelerator, each against the base) and the reason."""
    return [{"round": case.round, "submitter": case.submitter,
             "member": f"{case.system}: {number(case.accelerators)} accelerators, {number(case.time_to_train_min)} min",
             "base": f"{case.base_system}: {number(case.base_accelerators)} accelerators, "
                     f"{number(case.base_time_to_train_min)} min",
             "efficiency": number(case.scaling_efficiency, "ratio"),
             "work": number(case.convergence_work_ratio, "ratio"),
             "throughput": number(case.throughput_scaling, "ratio"), "reason": case.reason}
            for case in outputs.rank.superlinear]


def importance_frame(importance: ImportanceReport, top: int = IMPORTANCE_TOP) -> pd.DataFrame:
    """Permutation importance (mean, spread) of the `top` features, strongest first, for both targets."""
    rows = [{"target": name, "feature": feature, "mean": spread.mean, "std": spread.std}
            for name, result in importance.targets.items()
            for feature, spread in result.permutation_importance.items()]
    if not rows:
        return pd.DataFrame(columns=["target", "feature", "mean", "std"])
    frame = pd.DataFrame(rows)
    # Stable, so features of equal importance stay in name order (groupby sorts by name) on every machine.
    order = frame.groupby("feature")["mean"].max().sort_values(ascending=False, kind="stable").index[:top]
    frame = frame[frame["feature"].isin(order)]
    frame["feature"] = pd.Categorical(frame["feature"], categories=list(order), ordered=True)
    return frame.sort_values(["feature", "target"]).reset_index(drop=True)


def importance_rows(importance: ImportanceReport) -> dict[str, Any]:
    """The numbers behind the importance figure: per feature and target the permutation importance on held-out
    generations (mean ± s.d. over the shuffles), the share of the generations' bootstrap resamples in which the
    selection rule keeps it, and Spearman's rho with the target (the model-free view); which features were selected;
    per target the R² on held-out generations, the baseline's, the gain with its interval and the gate's verdict."""
    data = importance_frame(importance)
    fits = importance.targets
    targets = list(fits)
    selected = set(importance.selected_features)
    gate = importance.gate
    verdicts = {} if gate is None else gate.targets
    rows = []
    for feature, group in data.groupby("feature", observed=True, sort=True):
        # (mean, std) by target, read once: a frame indexed per feature costs more than the row it makes.
        by_target = dict(zip(group["target"], zip(group["mean"], group["std"])))
        name = str(feature)
        rho = [getattr(fits[t].spearman.get(name), "rho", None) for t in targets]
        kept = [fits[t].stability.get(name) for t in targets]
        rows.append({"feature": FEATURE_LABELS.get(name, name), "selected": feature in selected,
                     "covariate": feature == importance.round_feature,
                     "cells": [f"{number(by_target[t][0], 'score')} ± {number(by_target[t][1], 'score')}"
                               if t in by_target else "" for t in targets],
                     "kept": ["" if value is None else f"{value:.0%}" for value in kept],
                     "rho": ["" if value is None else f"{value:+.2f}" for value in rho]})
    return {"targets": [TARGET_LABELS.get(t, t) for t in targets], "rows": rows,
            "r2": [number(fits[t].oof_r2, "ratio") for t in targets],
            "baseline": [number(fits[t].baseline_r2, "ratio") for t in targets],
            "gain": [_gain(verdicts.get(t)) for t in targets],
            "passes": [_passes(verdicts.get(t)) for t in targets],
            "min_r2": getattr(gate, "min_r2", None), "min_families": getattr(gate, "min_families", None),
            "n_families": getattr(gate, "n_families", None), "n_generations": getattr(gate, "n_generations", None),
            "explained": importance.explained,
            "not_explained": [f"{TARGET_LABELS.get(t, t)} ({getattr(verdicts.get(t), 'reason', 'no gate verdict')})"
                              for t in targets if not _passes(verdicts.get(t))],
            "stability": {FEATURE_LABELS.get(name, name): f"{share:.0%}"
                          for name, share in importance.selection_stability.items() if name in selected}}


def _passes(verdict: TargetVerdict | None) -> bool:
    return verdict is not None and verdict.passes


def _gain(verdict: TargetVerdict | None) -> str:
    """"+0.18 (95% CI +0.07 to +0.59)"; blank without a verdict."""
    if verdict is None:
        return ""
    return f"{verdict.gain:+.2f} (95% CI {verdict.gain_low:+.2f} to {verdict.gain_high:+.2f})"


def families_by_count(profile: ClusterProfile) -> list[tuple[str, int]]:
    """A profile's accelerator families, most results first (clusters.json stores them by name)."""
    return sorted(profile.families.items(), key=lambda item: (-item[1], item[0]))


def _median_range(profile: ClusterProfile, column: str, style: str = "readable") -> str:
    """"median (min to max)" of one profiled outcome; blank when the profile lacks it."""
    if profile.outcome(column, "median") is None:
        return ""
    low, middle, high = (number(profile.outcome(column, part), style)  # type: ignore[arg-type]
                         for part in ("min", "median", "max"))
    return f"{middle} ({low} to {high})"


def cluster_profile_rows(outputs: BenchmarkOutputs) -> list[dict[str, Any]]:
    """Cluster profiles (clusters.json) by cluster number, i.e. from the highest median round efficiency, each with
    whether its medians are on the clusters' trade-off front of time and accelerator-hours (rank.json)."""
    standings = {row.cluster: row for row in outputs.rank.clusters}
    rows = []
    for profile in sorted(outputs.clusters.profiles, key=lambda item: item.cluster):
        standing = standings.get(profile.cluster)
        rows.append({
            "cluster": profile.cluster, "colour": cluster_colour(profile.cluster),
            "name": profile.name, "small": profile.small, "size": profile.size,
            "accelerators": _median_range(profile, "accelerators"),
            "families": ", ".join(f"{name} ({count})" for name, count in families_by_count(profile)),
            "time": _median_range(profile, "time_to_train_min"),
            "hours": _median_range(profile, "accelerator_hours"),
            "round_efficiency": _median_range(profile, "round_efficiency", "ratio"),
            "efficiency": _median_range(profile, "scaling_efficiency", "ratio"),
            "year": number(profile.accelerator_year_median, "year"),
            "trade_off": standing is not None and standing.trade_off_front == 1,
            "best": profile.cluster == outputs.rank.most_efficient_cluster,
        })
    return rows


def combined_ranking(outputs: Sequence[BenchmarkOutputs]) -> pd.DataFrame:
    """The benchmarks' rankings one after the other, one row per configuration with a `benchmark` column added: what
    reports/ranking.csv holds."""
    return pd.concat([item.ranking.assign(benchmark=item.benchmark) for item in outputs], ignore_index=True)


def scalar_metrics(outputs: Sequence[BenchmarkOutputs]) -> dict[str, dict[str, Any]]:
    """Per benchmark, rank.json without its lists and tables, and under `decide` the decide stage's held-out
    errors (decide_section.metrics_of): what `dvc metrics show` can print."""
    return {item.benchmark: {**item.rank.scalars(),
                             **({"decide": item.decide_metrics} if item.decide_metrics is not None else {})}
            for item in outputs}


class HeadlineMetrics(TypedDict):
    """The few numbers per benchmark that `dvc metrics show` prints (reports/metrics/<benchmark>.json), with short
    names so the table stays within 160 columns; None where its stage gave none. None of them depends on the
    clustering, so a cluster change shows in the summary's one column, not in one per benchmark
    (`dvc exp show --only-changed`)."""
    configs: int | None
    """Configurations ranked (rank.json `n_configurations`)."""
    pareto: int | None
    """Configurations on the front over all rounds (rank.json `pareto_size`)."""
    front: int | None
    """Configurations on the newest round's front (rank.json `latest_front_size`)."""
    error_pct: float | None
    """Median absolute percentage error of `predict`'s backtest answers, % (lower is better; decide.json)."""
    coverage: float | None
    """Share of backtest results inside the prediction interval, a fraction (decide.json)."""


class SummaryMetrics(TypedDict):
    """The headline over every benchmark (reports/metrics/summary.json)."""
    benchmarks: int
    """Benchmarks analysed."""
    silhouette: float | None
    """Mean silhouette of their clusterings at the k used (higher: better separated); None without any."""
    supported: int | None
    """Findings supported after the page's correction; None without a correction."""
# Decimals of the summary's mean silhouette: finer digits are noise in `dvc metrics diff`.
SILHOUETTE_DECIMALS = 4


def summary_metrics(outputs: list[BenchmarkOutputs], correction: Correction | None) -> SummaryMetrics:
    """The page's headline over every benchmark (reports/metrics/summary.json): how many benchmarks were
    analysed, the mean silhouette of their clusterings at the k used (higher: better separated; it moves with
    params `cluster`), and the findings supported after the page's correction (rank.json's
    `findings_correction`; None without one)."""
    analysed = [item for item in outputs if item.analysed]
    silhouettes = [item.rank.silhouette for item in analysed if item.rank.silhouette is not None]
    return {"benchmarks": len(analysed),
            "silhouette": round(sum(silhouettes) / len(silhouettes), SILHOUETTE_DECIMALS) if silhouettes else None,
            "supported": None if correction is None else correction.findings_supported}


def headline_metrics(item: BenchmarkOutputs) -> HeadlineMetrics:
    """One benchmark's headline numbers (`HeadlineMetrics`; None where its stage gave none)."""
    rank, decide = item.rank.scalars(), item.decide_metrics or {}
    return {"configs": rank.get("n_configurations"), "pareto": rank.get("pareto_size"),
            "front": rank.get("latest_front_size"), "error_pct": decide.get("backtest_median_ape_pct"),
            "coverage": decide.get("backtest_coverage")}


def counts(values: pd.Series) -> list[dict[str, Any]]:
    """How often each value occurs, most first: `[{"reason", "count"}]`."""
    return [{"reason": str(reason), "count": int(count)} for reason, count in values.value_counts().items()]

