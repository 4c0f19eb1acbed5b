"""An efficiency ranking of configurations and clusters that respects dominance, for one benchmark: what the `rank`
stage (`python -m pipeline.stages.rank`) runs for every benchmark analysed, beside the findings' tests.

"Best" means: trains fastest with the least hardware time (accelerator-hours), the two outcomes of a training
run. Configurations are sorted into non-dominated fronts on (time_to_train_min, accelerator_hours), both
minimised: front 1 is the Pareto front (none of its members is beaten on both time and hardware time by another
result), front 2 the Pareto front of the rest, and so on. The answer is front 1 of the round.

Within a front, results are ordered by the trade-off score (`trade_off_score`), the weighted geometric mean of
the criteria of params `rank.criteria` (equal weights: sqrt(minutes x accelerator-hours)), i.e. a weighted sum of
log time and log accelerator-hours: scale-free, and each result's own, so adding or removing another result never
reorders the rest. It orders the ranking table only: no single configuration is shown as "the best" (a buyer's
answer is a deadline or a budget, `pipeline.analysis.buyer`). Scaling efficiency is not a criterion: it explains
accelerator-hours rather than adding to them, and it exists only within a series.

Two rankings: `round_rank` within each round (the page leads with the latest round: hardware and software of
one era), and `rank` over all rounds. Beside them `round_efficiency` (round's fewest accelerator-hours / this
result's, 1 = best) compares results across rounds with their round's best. Clusters are described by their
members' medians: the most hardware-efficient cluster is the one of highest median round efficiency (cluster 0,
as the cluster stage numbers them), and the trade-off between them is their medians' own non-dominated fronts on
time and accelerator-hours, named separately. Sensitivity: each weight is moved by +/- `rank.sensitivity` (then
renormalised) and the overlap of the new top ten with the original is reported. The superlinear within-series
cases (pipeline.analysis.statistics.findings, params `findings`) go to rank.json; the rank stage adds the findings,
tested
over every benchmark at once.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from pydantic import Field

from pipeline.analysis.efficiency import order_by_efficiency
from pipeline.analysis.statistics import findings
from pipeline.analysis.statistics.clustering import Clustering
from pipeline.analysis.statistics.findings_result import Correction, FindingRecord, FindingsReport
from pipeline.analysis.statistics.importance_result import ImportanceReport
from pipeline.analysis.statistics.superlinear import WORK, SuperlinearCase, superlinear_cases
from pipeline.core.artifacts import Artifact, Record
from pipeline.core.errors import ParamsError
from pipeline.core.features import ROUND_EFFICIENCY
from pipeline.mlperf.catalogue import round_version
from pipeline.settings import FindingsSettings, RankSettings

RANKING_COLUMNS = [
    "rank", "front", "score", "round_rank", "round_front", "pareto", "cluster", "round",
    "submitter", "system", "division", "accelerator_family", "accelerator_count", "precision", "time_to_train_min",
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
    `SCORE_DIGITS` significant digits: the ranking's order within a front."""
    names, weights, types = criteria_weights(criteria)
    raw = trade_off_score(frame[names].to_numpy(dtype=float), weights, types)
    return np.array([float(f"{score:.{SCORE_DIGITS}g}") for score in raw])


def rank_configurations(frame: pd.DataFrame, criteria: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """The ranking over all rounds (`rank`, `front`) and within each round (`round_rank`, `round_front`), with
    each row's trade-off `score` (the same in both: it depends on the row alone), sorted by `rank`; columns
    `RANKING_COLUMNS` (`cluster` empty when the frame has none).

    Each round is ranked on its own fronts, then all rounds together, with the rounds' rankings one after the
    other as the order that full ties keep. Computed on arrays (`Fronts`): the frame is reordered once, at the
    end.
    """
    fronts = Fronts.of(frame)
    score = scores(frame, criteria)
    order, round_rank = fronts.order(score)
    ranked = frame.iloc[order].assign(
        rank=np.arange(1, len(order) + 1), front=fronts.front[order], score=score[order],
        pareto=fronts.front[order] == 1, round_rank=round_rank[order], round_front=fronts.round_front[order])
    return ranked.reindex(columns=RANKING_COLUMNS).reset_index(drop=True)


@dataclass(frozen=True)
class Fronts:
    """What a ranking of some rows owes to their outcomes alone, whatever the criteria's weights: per row its
    `front` over all rounds and its `round_front` within its round, with the sort keys after the score (the
    faster `time`, then the `system` name's code) and each round's rows (`rounds`, rounds in order)."""
    front: np.ndarray
    round_front: np.ndarray
    time: np.ndarray
    system: np.ndarray
    rounds: list[np.ndarray]

    @classmethod
    def of(cls, frame: pd.DataFrame) -> Fronts:
        """The fronts of `frame`'s rows (one per configuration, with time_to_train_min, accelerator_hours, round and
        system): over all rounds and within each round, 1 the non-dominated."""
        _check_outcomes(frame)
        time = frame["time_to_train_min"].to_numpy(dtype=float)
        hours = frame["accelerator_hours"].to_numpy(dtype=float)
        rounds = [rows for _, rows in sorted(frame.groupby("round", sort=True).indices.items())]
        round_front = np.zeros(len(frame), dtype=int)
        for rows in rounds:
            round_front[rows] = nondominated_fronts(time[rows], hours[rows])
        return cls(nondominated_fronts(time, hours), round_front, time, _name_codes(frame["system"]), rounds)

    def order(self, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows from rank 1 under `score` (one per row) and each row's `round_rank`: by front, then score
        (lowest first), then the faster, then the system's name; a stable sort, so full ties keep the rows'
        order within a round, and over all rounds the rounds' rankings one after the other."""
        round_rank = np.zeros(len(score), dtype=int)
        by_round = [np.zeros(0, dtype=int)]
        for rows in self.rounds:
            ranked = rows[self._sorted(rows, score, self.round_front)]
            round_rank[ranked] = np.arange(1, len(rows) + 1)
            by_round.append(ranked)
        rows = np.concatenate(by_round)
        return rows[self._sorted(rows, score, self.front)], round_rank

    def _sorted(self, rows: np.ndarray, score: np.ndarray, front: np.ndarray) -> np.ndarray:
        return np.lexsort((self.system[rows], self.time[rows], score[rows], front[rows]))


def latest_round_ranking(ranking: pd.DataFrame) -> pd.DataFrame:
    """The rows of the latest round in the ranking, by `round_rank`."""
    latest = max(ranking["round"], key=round_version)
    return ranking[ranking["round"] == latest].sort_values("round_rank").reset_index(drop=True)


class ClusterStanding(Record):
    """One cluster by its members' medians."""

    cluster: int
    """The cluster stage's number."""
    size: int
    """Results."""
    time_to_train_min: float
    """Median time to train, minutes (lower: faster)."""
    accelerator_hours: float
    """Median accelerator-hours (lower: less hardware time)."""
    round_efficiency: float | None
    """Median round efficiency (1 = best of its round); None without."""
    efficiency_order: int
    """Its place by median round efficiency (0 = the most hardware-efficient)."""
    trade_off_front: int
    """Its non-dominated front among the clusters' medians on time and accelerator-hours (1 = no other cluster's
    medians are at least as good on both and better on one)."""


def cluster_standings(frame: pd.DataFrame) -> list[ClusterStanding]:
    """Each cluster of `frame` (one row per result with `cluster`) by its members' medians, by cluster number."""
    order = pd.Series(order_by_efficiency(frame, frame["cluster"].to_numpy()), index=frame.index)
    columns = [*OUTCOMES, *([ROUND_EFFICIENCY] if ROUND_EFFICIENCY in frame else [])]
    medians = frame.groupby("cluster")[columns].median().sort_index()
    fronts = nondominated_fronts(medians["time_to_train_min"].to_numpy(), medians["accelerator_hours"].to_numpy())
    sizes = frame.groupby("cluster").size()
    places = order.groupby(frame["cluster"]).first()
    return [ClusterStanding(cluster=int(cluster), size=int(sizes[cluster]),
                            time_to_train_min=float(row["time_to_train_min"]),
                            accelerator_hours=float(row["accelerator_hours"]),
                            round_efficiency=None if pd.isna(row.get(ROUND_EFFICIENCY))
                            else float(row[ROUND_EFFICIENCY]),
                            efficiency_order=int(places[cluster]), trade_off_front=int(front))
            for (cluster, row), front in zip(medians.iterrows(), fronts)]


def most_efficient_cluster(standings: Sequence[ClusterStanding]) -> int | None:
    """The most hardware-efficient cluster: the highest median round efficiency (`ClusterStanding.efficiency_order`
    0)."""
    return next((item.cluster for item in standings if item.efficiency_order == 0), None)


class Sensitivity(Record):
    """How the ranking's top moves when one criterion's weight moves (`sensitivity`)."""

    criterion: str
    """The criterion (a key of params `rank.criteria`)."""
    change: float
    """The relative change of its weight (-0.25: a quarter less), before the weights are renormalised."""
    top_overlap: float
    """Share of the original top (params `rank.top`) still in the new top, 0 to 1 (1: unmoved)."""


def sensitivity(frame: pd.DataFrame, criteria: dict[str, dict[str, Any]], delta: float,
                top: int) -> list[Sensitivity]:
    """Each criterion's weight moved by -`delta` and +`delta` (relative), and the overlap of the new top `top` with
    the original's."""
    fronts = Fronts.of(frame)  # the weights move the scores only
    keys = (frame["round"] + "/" + frame["submitter"] + "/" + frame["system"]).to_numpy()

    def top_keys(weighted: dict[str, dict[str, Any]]) -> set[str]:
        return set(keys[fronts.order(scores(frame, weighted))[0][:top]])

    base_keys = top_keys(criteria)
    rows = []
    for name in criteria:
        for sign in (-1, 1):
            moved = {key: dict(value) for key, value in criteria.items()}
            moved[name]["weight"] = max(0.0, float(moved[name]["weight"]) * (1 + sign * delta))
            rows.append(Sensitivity(criterion=name, change=sign * delta,
                                    top_overlap=len(top_keys(moved) & base_keys) / max(1, len(base_keys))))
    return rows


def configuration_key(row: pd.Series) -> str:
    """A configuration's name across the pages and files: "<round> <submitter> <system>" of a ranking row."""
    return f"{row['round']} {row['submitter']} {row['system']}"


class Ranking(Artifact):
    """One benchmark's ranking (reports/rank/<benchmark>.json; `rank_benchmark`, then `with_findings`): the
    scalar headline numbers (`dvc metrics`), the clusters' standings, the sensitivity, the superlinear
    cases and the published findings tested. A skipped one holds `reason` only."""

    KIND = "rank"

    n_configurations: int | None = None
    """Configurations ranked (one per in-scope result)."""
    latest_round: str | None = None
    """The latest round ranked."""
    n_latest_round: int | None = None
    """Its configurations."""
    top_system_all_rounds: str | None = None
    """Rank 1 over all rounds, "round submitter system"."""
    latest_front_size: int | None = None
    """Results on the latest round's front 1 (none of the round beats them on both time and accelerator-hours)."""
    pareto_size: int | None = None
    """Configurations on front 1 over all rounds."""
    dominance_violations: int | None = None
    """Pairs ranked above a configuration that dominates them (`dominance_violations`; 0: the ranking respects
    dominance)."""
    round_dominance_violations: int | None = None
    """The same within each round, summed."""
    most_efficient_cluster: int | None = None
    """The cluster of highest median round efficiency (`most_efficient_cluster`)."""
    k_supported: int | None = None
    """The k the clustering's diagnostics support (`KVerdict.supported_k`)."""
    silhouette: float | None = None
    """The clustering's mean silhouette at the k used (-1 to 1, higher: better separated)."""
    stability_ari_mean: float | None = None
    """The clustering's mean bootstrap adjusted Rand index (1 = the same clusters in every resample)."""
    importance_oof_r2_time: float | None = None
    """The importance model's R^2 on held-out families, log time to train (higher: better)."""
    importance_oof_r2_accelerator_hours: float | None = None
    """The same for log accelerator-hours."""
    n_superlinear: int | None = None
    """Within-series efficiencies above params `findings.superlinear_threshold`."""
    n_superlinear_work_explained: int | None = None
    """Of those, the ones the convergence work explains."""
    clusters: list[ClusterStanding] = Field(default_factory=list)
    """Each cluster by its members' medians, by cluster number."""
    sensitivity: list[Sensitivity] = Field(default_factory=list)
    """Each criterion's weight moved down and up by params `rank.sensitivity`."""
    superlinear: list[SuperlinearCase] = Field(default_factory=list)
    """The superlinear within-series cases."""
    findings_supported: int | None = None
    """Findings supported after the page's correction."""
    findings_contradicted: int | None = None
    """Findings contradicted after the correction."""
    findings_inconclusive: int | None = None
    """Findings inconclusive after the correction."""
    findings_supported_raw: int | None = None
    """Findings supported before the correction."""
    findings_tests: int | None = None
    """Tests run."""
    findings: list[FindingRecord] = Field(default_factory=list)
    """The published findings tested on the benchmark, in the order of `findings.CLAIMS`."""
    findings_correction: Correction | None = None
    """The page's multiple-testing correction (the same in every benchmark)."""

    @property
    def analysed(self) -> bool:
        """True when the benchmark was ranked (status "ok"); False when it was skipped, with only the reason set."""
        return self.status == "ok"

    def with_findings(self, report: FindingsReport) -> Ranking:
        """This ranking with the published findings tested on its benchmark (the findings stage's `report`,
        p-values adjusted over the page)."""
        return self.model_copy(update={**findings.summary(report.findings), "findings": report.findings,
                                       "findings_correction": report.correction})

    def scalars(self) -> dict[str, Any]:
        """The file's content without its lists and records: what `dvc metrics show` prints."""
        return {key: value for key, value in self.as_json().items() if not isinstance(value, (list, dict))}

    def finding(self, key: str) -> FindingRecord | None:
        """The record of finding `key` (a key of `findings.CLAIMS`); None when not tested."""
        return next((item for item in self.findings if item.key == key), None)


def rank_benchmark(clustered: pd.DataFrame, clustering: Clustering, importance: ImportanceReport,
                   rank_settings: RankSettings, settings: FindingsSettings) -> tuple[pd.DataFrame, Ranking]:
    """The ranking table (columns `RANKING_COLUMNS`) and the `Ranking` (findings not yet added) of one benchmark's
    clustered configurations, given its clustering, its importance result and params `rank`."""
    criteria = rank_settings.model_dump()["criteria"]
    if clustered.empty:
        return pd.DataFrame(columns=RANKING_COLUMNS), Ranking(benchmark=clustering.benchmark, status="skipped",
                                                              reason=clustering.reason)
    ranking = rank_configurations(clustered, criteria)
    top, latest = ranking.iloc[0], latest_round_ranking(ranking)
    standings = cluster_standings(clustered)
    superlinear = superlinear_cases(clustered, settings.superlinear_threshold)
    return ranking, Ranking(
        benchmark=clustering.benchmark, status="ok", n_configurations=len(ranking),
        latest_round=str(latest.iloc[0]["round"]), n_latest_round=len(latest),
        top_system_all_rounds=configuration_key(top),
        latest_front_size=int((latest["round_front"] == 1).sum()), pareto_size=int(ranking["pareto"].sum()),
        dominance_violations=dominance_violations(ranking, "rank"),
        round_dominance_violations=sum(dominance_violations(group, "round_rank")
                                       for _, group in ranking.groupby("round")),
        most_efficient_cluster=most_efficient_cluster(standings),
        k_supported=clustering.k_verdict.supported_k if clustering.k_verdict else None,
        silhouette=clustering.silhouette, stability_ari_mean=clustering.stability_ari_mean,
        importance_oof_r2_time=importance.oof_r2("log_time_to_train"),
        importance_oof_r2_accelerator_hours=importance.oof_r2("log_accelerator_hours"),
        n_superlinear=len(superlinear),
        n_superlinear_work_explained=sum(case.explained_by == WORK for case in superlinear),
        clusters=standings,
        sensitivity=sensitivity(clustered, criteria, rank_settings.sensitivity, rank_settings.top),
        superlinear=superlinear)
