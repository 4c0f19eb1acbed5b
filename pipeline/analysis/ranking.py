"""Stage `rank`: an efficiency ranking of configurations and clusters that respects dominance, and the published
study's findings tested on the data, for one benchmark.

    python -m pipeline.stages.rank

"Best" means: trains fastest with the fewest accelerator-hours, the two things a buyer pays for. Configurations
are sorted into non-dominated fronts on (time_to_train_min, accelerator_hours), both minimised: front 1 is the
Pareto front, front 2 the Pareto front of the rest, and so on. Within a front, where no configuration beats
another on both, TOPSIS on params `rank.criteria` orders them (a missing value counts as the median).
So no configuration ranks above one that is at least as fast with at most as many accelerator-hours and better
on one of the two. Scaling efficiency is not a criterion: it explains accelerator-hours (a poorly scaling
configuration already pays for it in hours) rather than adding to them, and it exists only within a series.

Two rankings: `round_rank` within each round (the page leads with the latest round: hardware and software of
one era), and `rank` over all rounds. Beside them `relative_accelerator_hours` compares results across rounds
with their round's best. A cluster is ranked the same way on its members' medians. Sensitivity: each weight is
moved by +/- `rank.sensitivity` (then renormalised) and the overlap of the new top ten with the original is
reported. The superlinear within-series cases (pipeline.analysis.findings, params `findings`) go to rank.json; the
rank stage adds the findings, tested over every benchmark at once.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from pipeline.analysis import findings
from pipeline.core.errors import ParamsError
from pipeline.mlperf.catalogue import round_version
from pipeline.settings import Findings

RANKING_COLUMNS = [
    "rank", "front", "score", "round_rank", "round_front", "round_score", "pareto", "cluster", "round",
    "submitter", "system", "division", "accelerator_family", "accelerator_count", "time_to_train_min",
    "accelerator_hours", "relative_accelerator_hours", "scaling_efficiency", "speedup", "series", "republished_of",
]
OUTCOMES = ["time_to_train_min", "accelerator_hours"]  # both minimised: what the fronts are built on


def criteria_weights(criteria: dict[str, dict[str, Any]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The criteria's column names, weights (summing to 1) and types (1 benefit, -1 cost)."""
    names = list(criteria)
    weights = np.array([float(criteria[name]["weight"]) for name in names])
    if (weights < 0).any() or weights.sum() <= 0:
        raise ParamsError("rank.criteria weights must be non-negative and not all zero")
    types = np.array([1 if criteria[name]["direction"] == "benefit" else -1 for name in names])
    return names, weights / weights.sum(), types


def fill_missing(values: np.ndarray) -> np.ndarray:
    """A missing value of a criterion (rows x criteria) counts as the column's median, 1 when all are missing."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy warns on an all-missing column
        medians = np.nanmedian(values, axis=0) if len(values) else np.full(values.shape[1], np.nan)
    return np.where(np.isnan(values), np.where(np.isnan(medians), 1.0, medians), values)


def criteria_matrix(frame: pd.DataFrame, criteria: dict[str, dict[str, Any]]) -> tuple[np.ndarray, np.ndarray,
                                                                                        np.ndarray]:
    """Rows x criteria values (missing ones filled, see `fill_missing`), weights and types of `criteria`."""
    names, weights, types = criteria_weights(criteria)
    return fill_missing(frame[names].astype(float).to_numpy()), weights, types


def topsis_by_group(matrix: np.ndarray, weights: np.ndarray, types: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """TOPSIS closeness (0 to 1, higher is better) of each group's rows on their own (rows x criteria `matrix`, one
    group label per row), in one numpy pass. Per group it equals pymcdm's TOPSIS to the last bit (min-max
    normalisation, ideal point each weight times 1, anti-ideal 0; a test holds the two equal), with a criterion
    on which the group's rows are all equal left out (all equal: every row scores 1). pymcdm is the tests'
    oracle, not a dependency: importing it imports matplotlib.pyplot, and it checks its inputs on every call."""
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2 or len(groups) != len(matrix) or len(weights) != matrix.shape[1] != len(types):
        raise ValueError(f"topsis_by_group needs a rows x criteria matrix with one group per row and one weight and "
                         f"type per criterion (got {matrix.shape}, {len(groups)} groups, {len(weights)} weights)")
    if not len(matrix):
        return np.ones(0)
    _, group = np.unique(groups, return_inverse=True)
    low = np.full((group.max() + 1, matrix.shape[1]), np.inf)
    high = np.full_like(low, -np.inf)
    np.minimum.at(low, group, matrix)
    np.maximum.at(high, group, matrix)
    low, high = low[group], high[group]
    varies = high > low
    row_weights = np.where(varies, weights, 0.0)
    total = row_weights.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        row_weights = row_weights / total
        normalised = np.where(np.asarray(types) > 0, matrix - low, high - matrix) / (high - low)
    # pymcdm's ideal point is each weight times 1, the anti-ideal 0 (the normalised extremes are exact)
    weighted = normalised * row_weights
    to_ideal = np.sqrt(np.where(varies, (weighted - row_weights) ** 2, 0.0).sum(axis=1))
    to_worst = np.sqrt(np.where(varies, weighted ** 2, 0.0).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        closeness = to_worst / (to_worst + to_ideal)
    return np.where(varies.any(axis=1), closeness, 1.0)


def pareto_front(time: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """True where no other point is at least as good on both and strictly better on one."""
    return nondominated_fronts(time, cost) == 1


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


def _ranked(time: np.ndarray, hours: np.ndarray, values: np.ndarray, weights: np.ndarray, types: np.ndarray,
            system_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Front, TOPSIS score within the front and the ranking order of some rows: by front, then score (best
    first), then the faster, then the system's name; a stable sort, so full ties keep the rows' order."""
    fronts = nondominated_fronts(time, hours)
    scores = topsis_by_group(fill_missing(values), weights, types, fronts)
    return fronts, scores, np.lexsort((system_codes, time, -scores, fronts))


def ordered_by_fronts(frame: pd.DataFrame, criteria: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """`frame` sorted by non-dominated front, then TOPSIS score within the front (best first), with columns
    `front` and `score` (the TOPSIS closeness within the front, 0 to 1)."""
    _check_outcomes(frame)
    names, weights, types = criteria_weights(criteria)
    fronts, scores, order = _ranked(frame["time_to_train_min"].to_numpy(dtype=float),
                                    frame["accelerator_hours"].to_numpy(dtype=float),
                                    frame[names].astype(float).to_numpy(), weights, types,
                                    _name_codes(frame["system"]))
    return frame.assign(front=fronts, score=scores).iloc[order]


def rank_configurations(frame: pd.DataFrame, criteria: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """The ranking over all rounds (`rank`, `front`, `score`) and within each round (`round_rank`,
    `round_front`, `round_score`), sorted by `rank`; columns `RANKING_COLUMNS` (`cluster` empty when the frame
    has none).

    Each round is ranked on its own (its own fronts and missing-value medians), then all rounds together, with
    the rounds' rankings one after the other as the order that full ties keep. Computed on arrays: the frame is
    reordered once, at the end.
    """
    _check_outcomes(frame)
    names, weights, types = criteria_weights(criteria)
    time = frame["time_to_train_min"].to_numpy(dtype=float)
    hours = frame["accelerator_hours"].to_numpy(dtype=float)
    values = frame[names].astype(float).to_numpy()
    systems = _name_codes(frame["system"])
    round_front, round_rank = np.zeros(len(frame), dtype=int), np.zeros(len(frame), dtype=int)
    round_score = np.zeros(len(frame))
    by_round = [np.zeros(0, dtype=int)]
    for _, rows in sorted(frame.groupby("round", sort=True).indices.items()):
        fronts, scores, order = _ranked(time[rows], hours[rows], values[rows], weights, types, systems[rows])
        round_front[rows], round_score[rows] = fronts, scores
        round_rank[rows[order]] = np.arange(1, len(rows) + 1)
        by_round.append(rows[order])
    rows = np.concatenate(by_round)
    fronts, scores, order = _ranked(time[rows], hours[rows], values[rows], weights, types, systems[rows])
    final = rows[order]
    ranked = frame.iloc[final].assign(
        rank=np.arange(1, len(final) + 1), front=fronts[order], score=scores[order], pareto=fronts[order] == 1,
        round_rank=round_rank[final], round_front=round_front[final], round_score=round_score[final])
    return ranked.reindex(columns=RANKING_COLUMNS).reset_index(drop=True)


def latest_round_ranking(ranking: pd.DataFrame) -> pd.DataFrame:
    """The rows of the latest round in the ranking, by `round_rank`."""
    latest = max(ranking["round"], key=round_version)
    return ranking[ranking["round"] == latest].sort_values("round_rank").reset_index(drop=True)


def rank_clusters(frame: pd.DataFrame, criteria: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """Clusters by front and TOPSIS on their members' median criteria, best first, with `rank`."""
    columns = list(dict.fromkeys([*OUTCOMES, *criteria]))
    medians = frame.groupby("cluster")[columns].median().reset_index().assign(system="")
    ranked = ordered_by_fronts(medians, criteria).drop(columns="system")
    ranked["rank"] = np.arange(1, len(ranked) + 1)
    return ranked.reset_index(drop=True)


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


def metrics(ranking: pd.DataFrame, clusters: pd.DataFrame, cluster_summary: dict[str, Any],
            importance: dict[str, Any]) -> dict[str, Any]:
    """rank.json's scalar headline numbers (DVC metrics)."""
    top, latest = ranking.iloc[0], latest_round_ranking(ranking)
    targets = importance.get("targets", {})
    return {
        "n_configurations": len(ranking),
        "latest_round": str(latest.iloc[0]["round"]),
        "n_latest_round": len(latest),
        "top_system": configuration_key(latest.iloc[0]),
        "top_system_all_rounds": configuration_key(top),
        "top_score": float(top["score"]),
        "pareto_size": int(ranking["pareto"].sum()),
        "dominance_violations": dominance_violations(ranking, "rank"),
        "round_dominance_violations": sum(dominance_violations(group, "round_rank")
                                          for _, group in ranking.groupby("round")),
        "best_cluster": int(clusters.iloc[0]["cluster"]),
        "silhouette": next((row["silhouette"] for row in cluster_summary["diagnostics"]
                            if row["k"] == cluster_summary["k"]), None),
        "stability_ari_mean": cluster_summary.get("stability_ari_mean"),
        "importance_oof_r2_time": targets.get("log_time_to_train", {}).get("oof_r2"),
        "importance_oof_r2_accelerator_hours": targets.get("log_accelerator_hours", {}).get("oof_r2"),
    }


def configuration_key(row: pd.Series) -> str:
    return f"{row['round']} {row['submitter']} {row['system']}"


def rank_benchmark(clustered: pd.DataFrame, cluster_summary: dict[str, Any], importance: dict[str, Any],
                   rank_params: dict[str, Any], settings: Findings) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The ranking table (columns `RANKING_COLUMNS`) and rank.json's content for one benchmark's clustered
    configurations, given its clusters.json and importance.json content and params `rank`."""
    criteria = rank_params["criteria"]
    if clustered.empty:
        return pd.DataFrame(columns=RANKING_COLUMNS), {"status": "skipped", "reason": cluster_summary.get("reason")}
    ranking = rank_configurations(clustered, criteria)
    clusters = rank_clusters(clustered, criteria)
    superlinear = findings.superlinear_cases(clustered, settings.superlinear_threshold)
    return ranking, {"status": "ok", **metrics(ranking, clusters, cluster_summary, importance),
                     "n_superlinear": len(superlinear),
                     "n_superlinear_work_explained": sum(case["explained_by"] == findings.WORK
                                                         for case in superlinear),
                     "clusters": clusters.to_dict(orient="records"),
                     "sensitivity": sensitivity(clustered, criteria, rank_params["sensitivity"], rank_params["top"]),
                     "superlinear": superlinear}
