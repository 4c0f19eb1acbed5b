"""Stage `rank`: an efficiency ranking of configurations and clusters that respects dominance, its one pick, and the
published study's findings tested on the data, for one benchmark.

    python -m pipeline.stages.rank

"Best" means: trains fastest with the least hardware time (accelerator-hours), the two outcomes of a training
run. Configurations are sorted into non-dominated fronts on (time_to_train_min, accelerator_hours), both
minimised: front 1 is the Pareto front (none of its members is beaten on both time and hardware time by another
result), front 2 the Pareto front of the rest, and so on. The answer is front 1 of the round.

Where one configuration is shown, the pick: the lowest trade-off score (`trade_off_score`), the weighted geometric
mean of the criteria of params `rank.criteria` (equal weights: sqrt(minutes x accelerator-hours)), i.e. a weighted
sum of log time and log accelerator-hours. It is scale-free (a change of unit, or any factor common to all results,
changes no order: a 10% longer time weighs as much as 10% more accelerator-hours) and always on front 1. It is
stable: each result's score depends on that result alone, so removing any result other than the pick never changes
it, and adding one changes it only to the added result, when that scores lower (a property test holds both). The
same score orders the members of a front, so the ranking is front, then score. Its stability under the runs'
noise (`pick_stability`, with `pipeline.analysis.run_noise`) is the share of bootstrap resamples of every result's
runs in which the pick stays the pick. Scaling efficiency is not a criterion: it explains accelerator-hours rather
than adding to them, and it exists only within a series.

Two rankings: `round_rank` within each round (the page leads with the latest round: hardware and software of
one era), and `rank` over all rounds. Beside them `round_efficiency` (round's fewest accelerator-hours / this
result's, 1 = best) compares results across rounds with their round's best. Clusters are described by their
members' medians: the most hardware-efficient cluster is the one of highest median round efficiency (cluster 0,
as the cluster stage numbers them), and the trade-off between them is their medians' own non-dominated fronts on
time and accelerator-hours, named separately. Sensitivity: each weight is moved by +/- `rank.sensitivity` (then
renormalised) and the overlap of the new top ten with the original is reported. The superlinear within-series
cases (pipeline.analysis.findings, params `findings`) go to rank.json; the rank stage adds the findings, tested
over every benchmark at once.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from pipeline.analysis import findings
from pipeline.analysis.efficiency import order_by_efficiency
from pipeline.core.errors import ParamsError
from pipeline.core.features import ROUND_EFFICIENCY
from pipeline.mlperf.catalogue import round_version
from pipeline.settings import Findings

RANKING_COLUMNS = [
    "rank", "front", "score", "round_rank", "round_front", "pareto", "cluster", "round",
    "submitter", "system", "division", "accelerator_family", "accelerator_count", "time_to_train_min",
    "accelerator_hours", "round_efficiency", "scaling_efficiency", "speedup", "series", "republished_of",
]
OUTCOMES = ["time_to_train_min", "accelerator_hours"]  # both minimised: what the fronts are built on
SCORE_DIGITS = 12  # significant digits of a stored score: the last bits of a log sum differ between machines


def criteria_weights(criteria: dict[str, dict[str, Any]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The criteria's column names, weights (summing to 1) and types (1 benefit, -1 cost)."""
    names = list(criteria)
    weights = np.array([float(criteria[name]["weight"]) for name in names])
    if (weights < 0).any() or weights.sum() <= 0:
        raise ParamsError("rank.criteria weights must be non-negative and not all zero")
    types = np.array([1 if criteria[name]["direction"] == "benefit" else -1 for name in names])
    return names, weights / weights.sum(), types


def trade_off_score(values: np.ndarray, weights: np.ndarray, types: np.ndarray) -> np.ndarray:
    """The trade-off score of each row of `values` (rows x criteria, positive, finite): the weighted geometric mean
    prod_j x_j ** (w_j s_j), with s_j = 1 for a cost and -1 for a benefit (`types` -1 and 1), weights summing to 1.
    Lower is better; it is in the criteria's units (for time to train and accelerator-hours weighted equally,
    sqrt(minutes x accelerator-hours)) and scale-free: multiplying a criterion by a constant multiplies every
    score by one factor, so no order changes. A row's score depends on that row alone."""
    values = np.asarray(values, dtype=float)
    if values.ndim != 2 or values.shape[1] != len(weights) or len(weights) != len(types):
        raise ValueError(f"trade_off_score needs a rows x criteria matrix and one weight and type per criterion "
                         f"(got {values.shape}, {len(weights)} weights, {len(types)} types)")
    if not np.isfinite(values).all() or (values <= 0).any():
        raise ValueError("trade_off_score needs positive, finite criteria")
    exponents = np.asarray(weights, dtype=float) * -np.asarray(types, dtype=float)
    return np.exp(np.log(values) @ exponents) if len(values) else np.zeros(0)


def dominators(time: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """n x n boolean matrix: [i, j] is True when j dominates i (at least as good on both, better on one)."""
    time, cost = np.asarray(time, dtype=float), np.asarray(cost, dtype=float)
    no_worse = (time[None, :] <= time[:, None]) & (cost[None, :] <= cost[:, None])
    better = (time[None, :] < time[:, None]) | (cost[None, :] < cost[:, None])
    return no_worse & better


def nondominated_fronts(time: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """Front number of each point, from 1 (not dominated), both criteria minimised: front k+1 is what no point
    outside fronts 1..k dominates. Equal points share a front."""
    dominated_by = dominators(time, cost)
    fronts = np.zeros(len(dominated_by), dtype=int)
    front = 0
    while (fronts == 0).any():
        front += 1
        remaining = fronts == 0
        fronts[remaining & ~(dominated_by & remaining[None, :]).any(axis=1)] = front
    return fronts


def dominance_violations(ranking: pd.DataFrame, rank_column: str = "rank") -> int:
    """How many pairs (a, b) have a ranked above b while b dominates a on time to train and accelerator-hours.
    A ranking that respects dominance has none."""
    order = ranking.sort_values(rank_column)
    dominated_by = dominators(order["time_to_train_min"].to_numpy(), order["accelerator_hours"].to_numpy())
    below = np.triu(np.ones(dominated_by.shape, dtype=bool), k=1)  # [i, j]: j ranked below i
    return int((dominated_by & below).sum())


def _check_outcomes(frame: pd.DataFrame) -> None:
    missing = [column for column in OUTCOMES if column not in frame]
    if missing:
        raise ValueError(f"ranking needs the columns {missing}")


def _name_codes(names: pd.Series) -> np.ndarray:
    """Sort keys of names: their position in alphabetical order (missing last), as pandas sorts them."""
    codes = pd.Categorical(names, ordered=True)
    return np.where(codes.codes < 0, len(codes.categories), codes.codes)


def scores(frame: pd.DataFrame, criteria: dict[str, dict[str, Any]]) -> np.ndarray:
    """The trade-off score (`trade_off_score` on params `rank.criteria`) of each row of `frame`, as stored: to
    `SCORE_DIGITS` significant digits. The ranking, its pick and `pipeline.commands.recommend` all score with it."""
    names, weights, types = criteria_weights(criteria)
    raw = trade_off_score(frame[names].to_numpy(dtype=float), weights, types)
    return np.array([float(f"{score:.{SCORE_DIGITS}g}") for score in raw])


def _ranked(time: np.ndarray, hours: np.ndarray, score: np.ndarray,
            system_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Front and the ranking order of some rows: by front, then trade-off score (lowest first), then the faster,
    then the system's name; a stable sort, so full ties keep the rows' order."""
    fronts = nondominated_fronts(time, hours)
    return fronts, np.lexsort((system_codes, time, score, fronts))


def rank_configurations(frame: pd.DataFrame, criteria: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """The ranking over all rounds (`rank`, `front`) and within each round (`round_rank`, `round_front`), with
    each row's trade-off `score` (the same in both: it depends on the row alone), sorted by `rank`; columns
    `RANKING_COLUMNS` (`cluster` empty when the frame has none).

    Each round is ranked on its own fronts, then all rounds together, with the rounds' rankings one after the
    other as the order that full ties keep. Computed on arrays: the frame is reordered once, at the end.
    """
    _check_outcomes(frame)
    time = frame["time_to_train_min"].to_numpy(dtype=float)
    hours = frame["accelerator_hours"].to_numpy(dtype=float)
    score = scores(frame, criteria)
    systems = _name_codes(frame["system"])
    round_front, round_rank = np.zeros(len(frame), dtype=int), np.zeros(len(frame), dtype=int)
    by_round = [np.zeros(0, dtype=int)]
    for _, rows in sorted(frame.groupby("round", sort=True).indices.items()):
        fronts, order = _ranked(time[rows], hours[rows], score[rows], systems[rows])
        round_front[rows] = fronts
        round_rank[rows[order]] = np.arange(1, len(rows) + 1)
        by_round.append(rows[order])
    rows = np.concatenate(by_round)
    fronts, order = _ranked(time[rows], hours[rows], score[rows], systems[rows])
    final = rows[order]
    ranked = frame.iloc[final].assign(
        rank=np.arange(1, len(final) + 1), front=fronts[order], score=score[final], pareto=fronts[order] == 1,
        round_rank=round_rank[final], round_front=round_front[final])
    return ranked.reindex(columns=RANKING_COLUMNS).reset_index(drop=True)


def latest_round_ranking(ranking: pd.DataFrame) -> pd.DataFrame:
    """The rows of the latest round in the ranking, by `round_rank`."""
    latest = max(ranking["round"], key=round_version)
    return ranking[ranking["round"] == latest].sort_values("round_rank").reset_index(drop=True)


@dataclass(frozen=True)
class Pick:
    """The one configuration shown as a round's best trade-off of time and hardware time: the round's rank 1 (the
    lowest trade-off score, on front 1). `stability`: the share of `resamples` bootstrap resamples of every
    result's runs in which it stays the pick (None when not measured); `front_size`: the round's front 1."""
    round: str
    submitter: str
    system: str
    accelerator_family: str | None
    accelerator_count: float
    time_to_train_min: float
    accelerator_hours: float
    round_efficiency: float | None
    score: float
    front_size: int
    stability: float | None
    resamples: int
    rule: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


CRITERION_WORDS = {"time_to_train_min": "time to train", "accelerator_hours": "accelerator-hours"}


def pick_rule(criteria: dict[str, dict[str, Any]]) -> str:
    """The pick's rule in words: "lowest (time to train)^0.5 × (accelerator-hours)^0.5, a weighted geometric
    mean: scale-free, and each result's own"."""
    names, weights, types = criteria_weights(criteria)
    terms = " × ".join(f"({CRITERION_WORDS.get(name, name)})^{weight * -kind:g}"
                       for name, weight, kind in zip(names, weights, types))
    return f"lowest {terms}, a weighted geometric mean: scale-free, and each result's own"


def pick_of(round_ranking: pd.DataFrame, criteria: dict[str, dict[str, Any]], stability: float | None = None,
            resamples: int = 0) -> Pick:
    """The pick of one round's ranking (its `round_rank` 1) with its stability."""
    top = round_ranking.sort_values("round_rank").iloc[0]
    family = top.get("accelerator_family")
    efficiency = top.get(ROUND_EFFICIENCY)
    return Pick(str(top["round"]), str(top["submitter"]), str(top["system"]),
                None if pd.isna(family) else str(family), float(top["accelerator_count"]),
                float(top["time_to_train_min"]), float(top["accelerator_hours"]),
                None if efficiency is None or pd.isna(efficiency) else float(efficiency), float(top["score"]),
                int((round_ranking["round_front"] == 1).sum()), stability, resamples, pick_rule(criteria))


def pick_stability(times: np.ndarray, counts: np.ndarray, pick: int, criteria: dict[str, dict[str, Any]]) -> float:
    """The share of rows of `times` (resamples x results, minutes: one round's results, columns in ranking order
    so that ties go as the ranking's) in which result `pick` has the lowest trade-off score, accelerator-hours
    being `counts` (results,) x time / 60."""
    names, weights, types = criteria_weights(criteria)
    outcomes = {"time_to_train_min": times, "accelerator_hours": times * np.asarray(counts, dtype=float) / 60.0}
    unknown = [name for name in names if name not in outcomes]
    if unknown:
        raise ParamsError(f"rank.criteria {', '.join(unknown)}: the pick's stability is measured on time to train "
                          f"and accelerator-hours only")
    log_score = sum(weight * -kind * np.log(outcomes[name]) for name, weight, kind in zip(names, weights, types))
    return float(np.mean(np.argmin(log_score, axis=1) == pick)) if len(times) else float("nan")


@dataclass(frozen=True)
class ClusterStanding:
    """One cluster by its members' medians: results, time to train (min), accelerator-hours, round efficiency
    (None without), its place by median round efficiency (`efficiency_order`, 0 = the most hardware-efficient)
    and its non-dominated front among the clusters' medians on time and accelerator-hours (`trade_off_front`,
    1 = no other cluster's medians are at least as good on both and better on one)."""
    cluster: int
    size: int
    time_to_train_min: float
    accelerator_hours: float
    round_efficiency: float | None
    efficiency_order: int
    trade_off_front: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def cluster_standings(frame: pd.DataFrame) -> list[ClusterStanding]:
    """Each cluster of `frame` (one row per result with `cluster`) by its members' medians, by cluster number."""
    order = pd.Series(order_by_efficiency(frame, frame["cluster"].to_numpy()), index=frame.index)
    columns = [*OUTCOMES, *([ROUND_EFFICIENCY] if ROUND_EFFICIENCY in frame else [])]
    medians = frame.groupby("cluster")[columns].median().sort_index()
    fronts = nondominated_fronts(medians["time_to_train_min"].to_numpy(), medians["accelerator_hours"].to_numpy())
    sizes = frame.groupby("cluster").size()
    places = order.groupby(frame["cluster"]).first()
    return [ClusterStanding(int(cluster), int(sizes[cluster]), float(row["time_to_train_min"]),
                            float(row["accelerator_hours"]),
                            None if pd.isna(row.get(ROUND_EFFICIENCY)) else float(row[ROUND_EFFICIENCY]),
                            int(places[cluster]), int(front))
            for (cluster, row), front in zip(medians.iterrows(), fronts)]


def most_efficient_cluster(standings: Sequence[ClusterStanding]) -> int | None:
    """The most hardware-efficient cluster: the highest median round efficiency (`ClusterStanding.efficiency_order`
    0)."""
    return next((item.cluster for item in standings if item.efficiency_order == 0), None)


def sensitivity(frame: pd.DataFrame, criteria: dict[str, dict[str, Any]], delta: float, top: int) -> list[dict]:
    base_keys = _top_keys(rank_configurations(frame, criteria), top)
    rows = []
    for name in criteria:
        for sign in (-1, 1):
            moved = {key: dict(value) for key, value in criteria.items()}
            moved[name]["weight"] = max(0.0, float(moved[name]["weight"]) * (1 + sign * delta))
            keys = _top_keys(rank_configurations(frame, moved), top)
            rows.append({"criterion": name, "change": sign * delta,
                         "top_overlap": len(keys & base_keys) / max(1, len(base_keys))})
    return rows


def _top_keys(ranking: pd.DataFrame, top: int) -> set[str]:
    head = ranking.head(top)
    return set(head["round"] + "/" + head["submitter"] + "/" + head["system"])


def metrics(ranking: pd.DataFrame, standings: Sequence[ClusterStanding], cluster_summary: dict[str, Any],
            importance: dict[str, Any], pick: Pick) -> dict[str, Any]:
    """rank.json's scalar headline numbers (DVC metrics)."""
    top, latest = ranking.iloc[0], latest_round_ranking(ranking)
    targets = importance.get("targets", {})
    verdict = cluster_summary.get("k_verdict") or {}
    return {
        "n_configurations": len(ranking),
        "latest_round": str(latest.iloc[0]["round"]),
        "n_latest_round": len(latest),
        "top_system": configuration_key(latest.iloc[0]),
        "top_system_all_rounds": configuration_key(top),
        "pick_stability": pick.stability,
        "latest_front_size": pick.front_size,
        "pareto_size": int(ranking["pareto"].sum()),
        "dominance_violations": dominance_violations(ranking, "rank"),
        "round_dominance_violations": sum(dominance_violations(group, "round_rank")
                                          for _, group in ranking.groupby("round")),
        "most_efficient_cluster": most_efficient_cluster(standings),
        "k_supported": verdict.get("supported_k"),
        "silhouette": next((row["silhouette"] for row in cluster_summary["diagnostics"]
                            if row["k"] == cluster_summary["k"]), None),
        "stability_ari_mean": cluster_summary.get("stability_ari_mean"),
        "importance_oof_r2_time": targets.get("log_time_to_train", {}).get("oof_r2"),
        "importance_oof_r2_accelerator_hours": targets.get("log_accelerator_hours", {}).get("oof_r2"),
    }


def configuration_key(row: pd.Series) -> str:
    return f"{row['round']} {row['submitter']} {row['system']}"


def rank_benchmark(clustered: pd.DataFrame, cluster_summary: dict[str, Any], importance: dict[str, Any],
                   rank_params: dict[str, Any], settings: Findings,
                   noise: Callable[[pd.DataFrame], np.ndarray] | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The ranking table (columns `RANKING_COLUMNS`) and rank.json's content for one benchmark's clustered
    configurations, given its clusters.json and importance.json content and params `rank`.

    `noise`: resampled times to train (resamples x rows, minutes) of some of `clustered`'s rows
    (`pipeline.analysis.run_noise.RunNoise.times`), for the stability of the latest round's pick; None: not
    measured."""
    criteria = rank_params["criteria"]
    if clustered.empty:
        return pd.DataFrame(columns=RANKING_COLUMNS), {"status": "skipped", "reason": cluster_summary.get("reason")}
    ranking = rank_configurations(clustered, criteria)
    latest = latest_round_ranking(ranking)
    times = None
    if noise is not None:  # the latest round's results, in its ranking's order (ties go as the ranking's)
        keys = ["round", "submitter", "system"]
        times = noise(clustered.set_index(keys).loc[pd.MultiIndex.from_frame(latest[keys])].reset_index())
    stability = (None if times is None else
                 round(pick_stability(times, latest["accelerator_count"].to_numpy(), 0, criteria), 4))
    pick = pick_of(latest, criteria, stability, 0 if times is None else len(times))
    standings = cluster_standings(clustered)
    superlinear = findings.superlinear_cases(clustered, settings.superlinear_threshold)
    return ranking, {"status": "ok", **metrics(ranking, standings, cluster_summary, importance, pick),
                     "n_superlinear": len(superlinear),
                     "n_superlinear_work_explained": sum(case["explained_by"] == findings.WORK
                                                         for case in superlinear),
                     "pick": pick.as_dict(),
                     "clusters": [item.as_dict() for item in standings],
                     "sensitivity": sensitivity(clustered, criteria, rank_params["sensitivity"], rank_params["top"]),
                     "superlinear": superlinear}
