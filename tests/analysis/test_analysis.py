"""Metric definitions and analysis steps on small hand-computed cases."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.analysis import scope
from pipeline.analysis.efficiency import efficiency_metrics
from pipeline.analysis.statistics import importance
from pipeline.analysis.statistics import ranking as rank
from pipeline.analysis.statistics.importance_result import Spread, TargetFit
from pipeline.mlperf.catalogue import identify
from pipeline.settings import load_settings
from tests.conftest import ROOT


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
    assert frame.loc[0, "series"] == "v3.0/resnet/closed/Acme/A100/SXM/PyTorch/-/-"  # no system model stated
    assert frame["accelerator_hours"].tolist() == pytest.approx([8.0, 16 * 40 / 60, 16.0])
    assert frame["speedup"].tolist() == pytest.approx([1.0, 1.5, 4.0])
    # speed-up over the 8-accelerator base divided by the 2x and 8x more accelerators
    assert frame["scaling_efficiency"].tolist() == pytest.approx([1.0, 0.75, 0.5])
    # the fewest accelerator-hours of the round (8) over each result's
    assert frame["round_efficiency"].tolist() == pytest.approx([1.0, 8 / (16 * 40 / 60), 0.5])
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
    assert metrics["round_efficiency"].tolist() == pytest.approx([8 * 27.2 / 396.0, 1.0])


def test_another_system_model_is_another_series() -> None:
    """H3C's v2.0 A100 PCIe: a 1-card R4900 G5 and 4- and 8-card R5300 G5s (other host CPUs) are no series."""
    frame = _configurations([1, 4, 8], [396.0, 60.7, 31.1]).assign(
        host_cpu_model=["Xeon 8380", "Xeon 8358", "Xeon 8358"], accelerator_memory_gib=80.0)
    metrics = efficiency_metrics(frame)
    assert metrics["series"].nunique() == 2
    assert metrics.loc[0, "series"].endswith("/Xeon 8380/80.0")
    assert metrics["scaling_efficiency"].tolist()[1:] == pytest.approx([1.0, 60.7 * 4 / (31.1 * 8)])
    assert pd.isna(metrics.loc[0, "scaling_efficiency"])


def test_the_base_is_the_smallest_multi_accelerator_member() -> None:
    """A single accelerator communicates with nothing: the base is the smallest member of two or more, and a
    member below it has no efficiency."""
    metrics = efficiency_metrics(_configurations([1, 2, 4, 8], [400.0, 120.0, 60.0, 32.0]))
    assert pd.isna(metrics.loc[0, "scaling_efficiency"]) and pd.isna(metrics.loc[0, "speedup"])
    assert metrics["scaling_efficiency"].tolist()[1:] == pytest.approx([1.0, 1.0, 120.0 * 2 / (32.0 * 8)])
    # one multi-accelerator count beside a single accelerator: nothing like-for-like to scale against
    assert efficiency_metrics(_configurations([1, 8], [400.0, 32.0]))["scaling_efficiency"].isna().all()


def test_a_series_of_one_accelerator_count_has_no_efficiency() -> None:
    metrics = efficiency_metrics(_configurations([8, 8], [30.0, 20.0]))
    assert metrics[["speedup", "scaling_efficiency"]].isna().all().all()


def test_missing_count_gives_missing_metrics_not_zero() -> None:
    frame = _configurations([8, 16], [60.0, 40.0])
    frame.loc[1, "accelerator_count"] = np.nan
    metrics = efficiency_metrics(frame)
    assert metrics.loc[1, ["accelerator_hours", "speedup", "scaling_efficiency", "round_efficiency"]
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


def test_the_first_front_is_the_pareto_front() -> None:
    time = np.array([1.0, 2.0, 3.0, 2.5])
    cost = np.array([5.0, 3.0, 1.0, 3.5])
    assert (rank.nondominated_fronts(time, cost) == 1).tolist() == [True, True, True, False]


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
                         "scaling_efficiency": np.nan, "speedup": np.nan, "round_efficiency": np.nan,
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


def test_the_trade_off_score_orders_within_a_front() -> None:
    # One front. Equal weights: sqrt(minutes x accelerator-hours): a sqrt(3) = 1.73, b sqrt(8) = 2.83, c 3.
    frame = _ranked_frame([1.0, 4.0, 9.0], [3.0, 2.0, 1.0])
    ranking = rank.rank_configurations(frame, CRITERIA)
    assert ranking["front"].tolist() == [1, 1, 1]
    assert ranking["system"].tolist() == ["a", "b", "c"]
    assert ranking["score"].tolist() == pytest.approx([3 ** 0.5, 8 ** 0.5, 3.0])


def test_the_trade_off_score_is_the_weighted_geometric_mean_and_scale_free() -> None:
    rng = np.random.default_rng(5)
    values = rng.lognormal(size=(30, 2))
    weights, types = np.array([0.3, 0.7]), np.array([-1, -1])
    score = rank.trade_off_score(values, weights, types)
    assert score == pytest.approx(values[:, 0] ** 0.3 * values[:, 1] ** 0.7)
    # a change of unit (minutes to hours, say) multiplies every score by one factor: no order changes
    rescaled = rank.trade_off_score(values * np.array([1 / 60, 1000.0]), weights, types)
    assert rescaled / score == pytest.approx(np.full(30, (1 / 60) ** 0.3 * 1000.0 ** 0.7))
    assert np.argsort(rescaled).tolist() == np.argsort(score).tolist()
    benefit = rank.trade_off_score(values, weights, np.array([-1, 1]))  # a benefit divides
    assert benefit == pytest.approx(values[:, 0] ** 0.3 / values[:, 1] ** 0.7)
    with pytest.raises(ValueError, match="positive"):
        rank.trade_off_score(np.array([[1.0, 0.0]]), weights, types)


def _top(time: np.ndarray, hours: np.ndarray) -> int:
    """The position of the ranking's rank 1 among the rows."""
    frame = _ranked_frame(list(time), list(hours)).assign(system=[f"s{i:03d}" for i in range(len(time))])
    top = rank.rank_configurations(frame, CRITERIA).iloc[0]["system"]
    return int(str(top)[1:])


def test_rank_1_stays_put_when_any_other_result_goes_or_a_worse_one_comes() -> None:
    """Property test over random rounds: removing any result other than rank 1 never changes rank 1; adding a
    result changes it only to the added one, and only when that one scores lower (each result's score its own)."""
    rng = np.random.default_rng(11)
    for _ in range(20):
        n = int(rng.integers(3, 16))
        counts = 2.0 ** rng.integers(0, 12, n)
        time = 500.0 / counts ** rng.uniform(0.3, 1.0, n) * rng.lognormal(0, 0.3, n)
        hours = counts * time / 60
        top = _top(time, hours)
        assert rank.nondominated_fronts(time, hours)[top] == 1  # rank 1 is on the front
        for gone in range(n):
            if gone == top:
                continue
            keep = np.arange(n) != gone
            assert np.flatnonzero(keep)[_top(time[keep], hours[keep])] == top
        for _ in range(6):
            count = 2.0 ** rng.integers(0, 12)
            new_time = 500.0 / count ** rng.uniform(0.3, 1.0) * rng.lognormal(0, 0.3)
            after = _top(np.append(time, new_time), np.append(hours, count * new_time / 60))
            beats = np.sqrt(new_time * count * new_time / 60) < np.sqrt(time[top] * hours[top])
            assert after == (n if beats else top)


def test_rounds_are_ranked_on_their_own_and_the_latest_leads() -> None:
    frame = _ranked_frame([10.0, 20.0, 2.0, 4.0], [2.0, 4.0, 1.0, 3.0], rounds=["v3.0", "v3.0", "v4.0", "v4.0"])
    ranking = rank.rank_configurations(frame, CRITERIA)
    assert ranking.set_index("system")["round_rank"].to_dict() == {"a": 1, "b": 2, "c": 1, "d": 2}
    # d (4, 3) and a (10, 2) share front 2: d scores sqrt(12) = 3.46, a sqrt(20) = 4.47
    assert ranking["system"].tolist() == ["c", "d", "a", "b"]
    latest = rank.latest_round_ranking(ranking)
    assert latest["system"].tolist() == ["c", "d"]


def test_ranking_respects_dominance_on_the_real_data(real_configurations: pd.DataFrame) -> None:
    """Issue 13: for every analysed benchmark, no configuration ranks above one that dominates it, over all rounds
    and within each round."""
    settings = load_settings(ROOT / "params.yaml")
    analysis = settings.analysis
    ranked = 0
    for benchmark in scope.analysed_benchmarks(analysis, real_configurations):
        frame = scope.in_scope(real_configurations, analysis, benchmark)
        if len(frame) < analysis.min_configurations:
            continue
        ranking = rank.rank_configurations(frame, settings.rank.model_dump()["criteria"])
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
    # every resample sees the same importances: count 0.5 (the baseline's own term: never selected), memory 0.3,
    # year 0.2, host memory 0.005 (below the threshold), the family 0.9 (categorical: never selected)
    means = {"accelerator_count": 0.5, "accelerator_family": 0.9, "host_memory_gib": 0.005, "accelerator_year": 0.2,
             "accelerator_memory_gib": 0.3}
    fit = TargetFit(oof_r2=0.8, baseline_r2=0.5, gain=0.3, gain_low=0.1, gain_high=0.5,
                    oof_median_abs_error_log10=0.1,
                    permutation_importance={name: Spread(mean=value, std=0.0) for name, value in means.items()},
                    stability={}, mutual_information={}, spearman={},
                    importance_draws={name: np.full(10, value) for name, value in means.items()})
    assert importance.select_features({"t": fit}, ["t"], 0.01, 5, 0.7) == (
        ["accelerator_memory_gib", "accelerator_year"], {"accelerator_memory_gib": 1.0, "accelerator_year": 1.0})
    assert importance.select_features({"t": fit}, ["t"], 0.01, 1, 0.7)[0] == ["accelerator_memory_gib"]
    assert importance.select_features({"t": fit}, [], 0.01, 5, 0.7) == ([], {})  # no target passed the gate
