"""Metric definitions and analysis steps on small hand-computed cases."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.analysis import importance, scope
from pipeline.analysis import ranking as rank
from pipeline.analysis.efficiency import efficiency_metrics
from pipeline.core.files import load_params, section
from pipeline.mlperf.catalogue import identify
from pipeline.settings import Analysis
from tests.conftest import pymcdm_topsis

ROOT = Path(__file__).resolve().parents[1]


def _configurations(counts: list[int], minutes: list[float], family: str = "A100",
                    submitter: str = "Acme") -> pd.DataFrame:
    return pd.DataFrame({
        "round": "v3.0", "benchmark": "resnet", "division": "closed", "submitter": submitter,
        "accelerator_family": family, "accelerator_form_factor": "SXM", "framework": "PyTorch",
        "accelerator_count": [float(c) for c in counts], "time_to_train_min": minutes,
        "throughput_samples_per_s": [1000.0 * c for c in counts],
    })


def test_efficiency_metrics_by_hand() -> None:
    frame = efficiency_metrics(_configurations([8, 16, 64], [60.0, 40.0, 15.0]))
    assert frame["series"].nunique() == 1
    assert frame.loc[0, "series"] == "v3.0/resnet/closed/Acme/A100/SXM/PyTorch"
    assert frame["accelerator_hours"].tolist() == pytest.approx([8.0, 16 * 40 / 60, 16.0])
    assert frame["speedup"].tolist() == pytest.approx([1.0, 1.5, 4.0])
    # speed-up over the 8-accelerator base divided by the 2x and 8x more accelerators
    assert frame["scaling_efficiency"].tolist() == pytest.approx([1.0, 0.75, 0.5])
    # the fewest accelerator-hours of the round (8) over each result's
    assert frame["relative_accelerator_hours"].tolist() == pytest.approx([1.0, 8 / (16 * 40 / 60), 0.5])
    assert frame["throughput_per_accelerator"].tolist() == pytest.approx([1000.0] * 3)


def test_baseline_is_the_best_time_at_the_smallest_count_of_the_series() -> None:
    frame = pd.concat([_configurations([8, 8, 16], [50.0, 40.0, 30.0]),
                       _configurations([4, 8], [100.0, 60.0], family="H100")], ignore_index=True)
    metrics = efficiency_metrics(frame)
    assert metrics["series"].nunique() == 2
    assert metrics["speedup"].tolist() == pytest.approx([0.8, 1.0, 40 / 30, 1.0, 100 / 60])


def test_another_submitter_or_form_factor_is_another_series() -> None:
    """A single PCIe card of another submitter is no baseline for an 8-GPU SXM system (issue 13)."""
    pcie = _configurations([1], [396.0], submitter="Other").assign(accelerator_form_factor="PCIe")
    sxm = _configurations([8], [27.2])
    metrics = efficiency_metrics(pd.concat([pcie, sxm], ignore_index=True))
    assert metrics["series"].nunique() == 2
    assert metrics[["speedup", "scaling_efficiency"]].isna().all().all()
    assert metrics["relative_accelerator_hours"].tolist() == pytest.approx([8 * 27.2 / 396.0, 1.0])


def test_a_series_of_one_accelerator_count_has_no_efficiency() -> None:
    metrics = efficiency_metrics(_configurations([8, 8], [30.0, 20.0]))
    assert metrics[["speedup", "scaling_efficiency"]].isna().all().all()


def test_missing_count_gives_missing_metrics_not_zero() -> None:
    frame = _configurations([8, 16], [60.0, 40.0])
    frame.loc[1, "accelerator_count"] = np.nan
    metrics = efficiency_metrics(frame)
    assert metrics.loc[1, ["accelerator_hours", "speedup", "scaling_efficiency", "relative_accelerator_hours"]
                       ].isna().all()
    assert pd.isna(metrics.loc[1, "series"])
    assert metrics.loc[0, ["speedup", "scaling_efficiency"]].isna().all()  # alone in its series now


@pytest.mark.parametrize(("round_", "folder", "expected"), [
    ("v1.1", "ssd", "ssd_resnet34"), ("v2.0", "ssd", "retinanet"), ("v5.0", "retinanet", "retinanet"),
    ("v2.1", "dlrm", "dlrm"), ("v3.0", "dlrm_dcnv2", "dlrm_dcnv2"), ("v4.0", "gnn", "rgat"),
    ("v5.0", "rgat", "rgat"), ("v1.0", "mask", "maskrcnn"), ("v5.0", "resnet", None), ("v4.0", "nope", None),
])
def test_a_folder_name_is_not_a_benchmark(round_: str, folder: str, expected: str | None) -> None:
    benchmark = identify(round_, folder)
    assert (benchmark.id if benchmark else None) == expected


def test_pareto_front() -> None:
    time = np.array([1.0, 2.0, 3.0, 2.5])
    cost = np.array([5.0, 3.0, 1.0, 3.5])
    assert rank.pareto_front(time, cost).tolist() == [True, True, True, False]


def test_nondominated_fronts_peel_the_pareto_front_and_keep_ties_together() -> None:
    # (2.5, 3.5) is dominated by (2, 3) only; (3, 4) by both (2, 3) and (2.5, 3.5); the two (1, 5) tie
    time = np.array([1.0, 2.0, 3.0, 2.5, 3.0, 1.0])
    cost = np.array([5.0, 3.0, 1.0, 3.5, 4.0, 5.0])
    assert rank.nondominated_fronts(time, cost).tolist() == [1, 1, 1, 2, 3, 1]


CRITERIA = {"time_to_train_min": {"weight": 0.5, "direction": "cost"},
            "accelerator_hours": {"weight": 0.5, "direction": "cost"}}


def _ranked_frame(minutes: list[float], hours: list[float], rounds: list[str] | None = None) -> pd.DataFrame:
    n = len(minutes)
    return pd.DataFrame({"round": rounds or ["v3.0"] * n, "submitter": "s", "system": [chr(97 + i) for i in range(n)],
                         "division": "closed", "accelerator_family": "A100", "accelerator_count": 8.0, "cluster": 0,
                         "time_to_train_min": minutes, "accelerator_hours": hours,
                         "scaling_efficiency": np.nan, "speedup": np.nan, "relative_accelerator_hours": np.nan,
                         "series": None})


def test_a_dominated_configuration_never_ranks_above_its_dominator() -> None:
    # c is by far the fastest but costs 10 hours; a (10 min, 2 h) is dominated by b (8 min, 1.5 h)
    frame = _ranked_frame([10.0, 8.0, 1.0], [2.0, 1.5, 10.0])
    ranking = rank.rank_configurations(frame, CRITERIA)
    assert ranking["front"].tolist() == [1, 1, 2]
    assert ranking["system"].tolist()[-1] == "a"
    assert ranking["pareto"].tolist() == [True, True, False]
    assert rank.dominance_violations(ranking) == 0
    assert rank.dominance_violations(ranking.assign(rank=[2, 3, 1])) == 1  # a above b


def test_topsis_orders_within_a_front() -> None:
    # One front. Min-max normalised, weighted 0.5: a (0.5, 0), b (0.3125, 0.25), c (0, 0.5); ideal (0.5, 0.5).
    # b: distances 0.3125 to the ideal and 0.4002 to the anti-ideal, closeness 0.5615; a and c both 0.5, and the
    # tie goes to the faster.
    frame = _ranked_frame([1.0, 4.0, 9.0], [3.0, 2.0, 1.0])
    ranking = rank.rank_configurations(frame, CRITERIA)
    assert ranking["front"].tolist() == [1, 1, 1]
    assert ranking["system"].tolist() == ["b", "a", "c"]
    assert ranking["score"].tolist() == pytest.approx([0.5615, 0.5, 0.5], abs=1e-4)


def test_topsis_of_all_groups_at_once_equals_pymcdm_per_group() -> None:
    # integer values make ties, a group of one and a group where one criterion does not vary
    rng = np.random.default_rng(3)
    for trial in range(40):
        matrix = rng.integers(0, 4, (25, 2)).astype(float) if trial % 2 else rng.lognormal(size=(25, 2))
        groups = rng.integers(0, 5, 25)
        groups[0] = 9  # alone in its group
        weights, types = np.array([0.4, 0.6]), np.array([-1, 1 - 2 * (trial % 3 == 0)])
        expected = np.empty(len(matrix))
        for group in np.unique(groups):
            expected[groups == group] = pymcdm_topsis(matrix[groups == group], weights, types)
        assert rank.topsis_by_group(matrix, weights, types, groups).tolist() == expected.tolist()


def test_missing_criteria_count_as_the_median() -> None:
    values = np.array([[1.0, np.nan], [np.nan, np.nan], [3.0, np.nan], [4.0, np.nan]])
    assert rank.fill_missing(values).tolist() == [[1.0, 1.0], [3.0, 1.0], [3.0, 1.0], [4.0, 1.0]]


def test_rounds_are_ranked_on_their_own_and_the_latest_leads() -> None:
    frame = _ranked_frame([10.0, 20.0, 2.0, 4.0], [2.0, 4.0, 1.0, 3.0], rounds=["v3.0", "v3.0", "v4.0", "v4.0"])
    ranking = rank.rank_configurations(frame, CRITERIA)
    assert ranking.set_index("system")["round_rank"].to_dict() == {"a": 1, "b": 2, "c": 1, "d": 2}
    # d (4, 3) and a (10, 2) share front 2, both at closeness 0.5: the faster first
    assert ranking["system"].tolist() == ["c", "d", "a", "b"]
    latest = rank.latest_round_ranking(ranking)
    assert latest["system"].tolist() == ["c", "d"]


def test_ranking_respects_dominance_on_the_real_data(real_configurations: pd.DataFrame) -> None:
    """Issue 13: for every analysed benchmark, no configuration ranks above one that dominates it, over all rounds
    and within each round."""
    params = load_params(ROOT / "params.yaml")
    analysis = Analysis.model_validate(section(params, "analysis"))
    ranked = 0
    for benchmark in scope.analysed_benchmarks(analysis, real_configurations):
        frame = scope.in_scope(real_configurations, analysis, benchmark)
        if len(frame) < analysis.min_configurations:
            continue
        ranking = rank.rank_configurations(frame, section(params, "rank")["criteria"])
        assert rank.dominance_violations(ranking, "rank") == 0, benchmark
        for round_, group in ranking.groupby("round"):
            assert rank.dominance_violations(group, "round_rank") == 0, (benchmark, round_)
        ranked += 1
    assert ranked >= 10


def test_every_superlinear_efficiency_comes_from_within_a_series(real_configurations: pd.DataFrame) -> None:
    superlinear = real_configurations[real_configurations["scaling_efficiency"] > 1.05]
    assert superlinear["series"].notna().all()
    # 18% of ResNet's efficiencies were above 1.05 against the family's smallest system of any submitter
    assert len(superlinear) < 0.05 * real_configurations["scaling_efficiency"].notna().sum()
    for _, row in superlinear.iterrows():
        members = real_configurations[real_configurations["series"] == row["series"]]
        assert members["accelerator_count"].min() < row["accelerator_count"]
        assert (members[["submitter", "accelerator_family", "round"]].nunique() == 1).all()


def test_selection_rule_keeps_numeric_features_above_the_threshold() -> None:
    # every resample sees the same importances: count 0.5, year 0.2, host memory 0.005 (below the threshold), the
    # family 0.9 (categorical: never selected)
    means = {"accelerator_count": 0.5, "accelerator_family": 0.9, "host_memory_gib": 0.005, "accelerator_year": 0.2}
    fit = importance.TargetFit(0.8, 0.5, 0.3, 0.1, 0.5, 0.1, {name: {"mean": value, "std": 0.0}
                                                           for name, value in means.items()},
                               {}, {}, {}, {name: np.full(10, value) for name, value in means.items()})
    assert importance.select_features({"t": fit}, ["t"], 0.01, 5, 0.7) == (
        ["accelerator_count", "accelerator_year"], {"accelerator_count": 1.0, "accelerator_year": 1.0})
    assert importance.select_features({"t": fit}, ["t"], 0.01, 1, 0.7)[0] == ["accelerator_count"]
    assert importance.select_features({"t": fit}, [], 0.01, 5, 0.7) == ([], {})  # no target passed the gate
