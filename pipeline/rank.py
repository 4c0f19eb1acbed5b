"""Stage `rank`: a multi-criteria efficiency ranking of configurations and clusters, for one benchmark.

    python -m pipeline.rank BENCHMARK

Score: TOPSIS (pymcdm) on the criteria and weights of params `rank.criteria`: time to train and
accelerator-hours are costs, scaling efficiency a benefit (a missing value counts as the median). A cluster is
ranked by TOPSIS on its members' median criteria. The Pareto front marks configurations that no other beats on
both time to train and accelerator-hours. Sensitivity: each weight is moved by +/- `rank.sensitivity` (then the
weights are renormalised) and the overlap of the new top ten with the original is reported.
"""
from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pymcdm.methods import TOPSIS
from scipy.stats import spearmanr

from .cluster import clusters_path
from .errors import ParamsError, cli
from .importance import reports_dir
from .scope import benchmark_args
from .io import load_params, section, write_csv, write_json

RANKING_COLUMNS = [
    "rank", "score", "pareto", "cluster", "round", "submitter", "system", "division", "accelerator_family",
    "accelerator_count", "time_to_train_min", "accelerator_hours", "scaling_efficiency", "speedup",
]


def criteria_matrix(frame: pd.DataFrame, criteria: dict[str, dict[str, Any]]) -> tuple[np.ndarray, np.ndarray,
                                                                                        np.ndarray]:
    names = list(criteria)
    matrix = frame[names].astype(float)
    matrix = matrix.fillna(matrix.median()).fillna(1.0).to_numpy()
    weights = np.array([float(criteria[name]["weight"]) for name in names])
    if (weights < 0).any() or weights.sum() <= 0:
        raise ParamsError("rank.criteria weights must be non-negative and not all zero")
    types = np.array([1 if criteria[name]["direction"] == "benefit" else -1 for name in names])
    return matrix, weights / weights.sum(), types


def topsis(matrix: np.ndarray, weights: np.ndarray, types: np.ndarray) -> np.ndarray:
    if len(matrix) == 1:
        return np.ones(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pymcdm warns about dominated alternatives, which a ranking expects
        return np.asarray(TOPSIS()(matrix, weights, types), dtype=float)


def pareto_front(time: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """True where no other point is at least as good on both and strictly better on one."""
    front = np.ones(len(time), dtype=bool)
    for i in range(len(time)):
        dominated = (time <= time[i]) & (cost <= cost[i]) & ((time < time[i]) | (cost < cost[i]))
        front[i] = not dominated.any()
    return front


def rank_configurations(frame: pd.DataFrame, criteria: dict[str, dict[str, Any]]) -> pd.DataFrame:
    matrix, weights, types = criteria_matrix(frame, criteria)
    ranked = frame.assign(score=topsis(matrix, weights, types),
                          pareto=pareto_front(frame["time_to_train_min"].to_numpy(),
                                              frame["accelerator_hours"].to_numpy()))
    ranked = ranked.sort_values(["score", "time_to_train_min", "system"], ascending=[False, True, True])
    ranked["rank"] = np.arange(1, len(ranked) + 1)
    return ranked[RANKING_COLUMNS].reset_index(drop=True)


def rank_clusters(frame: pd.DataFrame, criteria: dict[str, dict[str, Any]]) -> pd.DataFrame:
    medians = frame.groupby("cluster")[list(criteria)].median().reset_index()
    matrix, weights, types = criteria_matrix(medians, criteria)
    medians["score"] = topsis(matrix, weights, types)
    medians = medians.sort_values("score", ascending=False)
    medians["rank"] = np.arange(1, len(medians) + 1)
    return medians.reset_index(drop=True)


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


def findings(clustered: pd.DataFrame, ranking: pd.DataFrame, clusters: pd.DataFrame) -> dict[str, Any]:
    """Evidence for or against the published study's findings (see the brief)."""
    scaled = clustered[clustered["speedup"].notna() & (clustered["scaling_efficiency"].notna())]
    larger = scaled[scaled["scaling_efficiency"] != 1.0]
    correlation = spearmanr(scaled["accelerator_count"], scaled["scaling_efficiency"]).statistic \
        if scaled["accelerator_count"].nunique() > 1 else np.nan
    best = clusters.iloc[0]
    members = clustered[clustered["cluster"] == best["cluster"]]
    largest = ranking.nlargest(max(1, len(ranking) // 10), "accelerator_count")
    return {
        "sublinear_share": float((larger["scaling_efficiency"] < 1).mean()) if len(larger) else None,
        "efficiency_vs_accelerators_spearman": None if np.isnan(correlation) else float(correlation),
        "best_cluster": int(best["cluster"]),
        "best_cluster_accelerators_min": float(members["accelerator_count"].min()),
        "best_cluster_accelerators_max": float(members["accelerator_count"].max()),
        "largest_systems_median_rank_percentile": float((largest["rank"] / len(ranking)).median()),
        "largest_systems_fastest": bool(ranking["time_to_train_min"].idxmin() in largest.index),
    }


def metrics(ranking: pd.DataFrame, clusters: pd.DataFrame, findings_: dict[str, Any],
            cluster_summary: dict[str, Any], importance: dict[str, Any]) -> dict[str, Any]:
    top = ranking.iloc[0]
    targets = importance.get("targets", {})
    return {
        "n_configurations": len(ranking),
        "top_system": f"{top['round']} {top['submitter']} {top['system']}",
        "top_score": float(top["score"]),
        "pareto_size": int(ranking["pareto"].sum()),
        "best_cluster": int(clusters.iloc[0]["cluster"]),
        "silhouette": next((row["silhouette"] for row in cluster_summary["diagnostics"]
                            if row["k"] == cluster_summary["k"]), None),
        "stability_ari_mean": cluster_summary.get("stability_ari_mean"),
        "importance_oof_r2_time": targets.get("log_time_to_train", {}).get("oof_r2"),
        "importance_oof_r2_accelerator_hours": targets.get("log_accelerator_hours", {}).get("oof_r2"),
        **{f"finding_{key}": value for key, value in findings_.items()},
    }


@cli
def main(argv: Sequence[str] | None = None) -> None:
    args = benchmark_args("rank", __doc__, argv)
    params = section(load_params(), "rank")
    out = reports_dir(args.benchmark)
    clustered = pd.read_parquet(clusters_path(args.benchmark))
    cluster_summary = json.loads((out / "clusters.json").read_text(encoding="utf-8"))
    importance = json.loads((out / "importance.json").read_text(encoding="utf-8"))
    criteria = params["criteria"]
    if clustered.empty:
        ranking = pd.DataFrame(columns=RANKING_COLUMNS)
        result: dict[str, Any] = {"status": "skipped", "reason": cluster_summary.get("reason")}
    else:
        ranking = rank_configurations(clustered, criteria)
        clusters = rank_clusters(clustered, criteria)
        found = findings(clustered, ranking, clusters)
        result = {"status": "ok", **metrics(ranking, clusters, found, cluster_summary, importance),
                  "clusters": clusters.to_dict(orient="records"),
                  "sensitivity": sensitivity(clustered, criteria, params["sensitivity"], params["top"])}
    write_csv(ranking, out / "ranking.csv")
    write_json({"benchmark": args.benchmark, **result}, out / "rank.json")
    print(f"{args.benchmark}: ranked {len(ranking)} configurations")


if __name__ == "__main__":
    main()
