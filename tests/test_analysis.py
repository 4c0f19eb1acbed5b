"""Metric definitions and analysis steps on small hand-computed cases."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline import features, importance, rank
from pipeline.benchmarks import identify


def _configurations(counts: list[int], minutes: list[float], family: str = "A100") -> pd.DataFrame:
    return pd.DataFrame({
        "round": "v3.0", "benchmark": "resnet", "division": "closed", "accelerator_family": family,
        "accelerator_count": [float(c) for c in counts], "time_to_train_min": minutes,
        "throughput_samples_per_s": [1000.0 * c for c in counts],
    })


def test_efficiency_metrics_by_hand() -> None:
    frame = features.efficiency_metrics(_configurations([8, 16, 64], [60.0, 40.0, 15.0]))
    assert frame["accelerator_hours"].tolist() == pytest.approx([8.0, 16 * 40 / 60, 16.0])
    assert frame["speedup"].tolist() == pytest.approx([1.0, 1.5, 4.0])
    # speed-up over the 8-accelerator base divided by the 2x and 8x more accelerators
    assert frame["scaling_efficiency"].tolist() == pytest.approx([1.0, 0.75, 0.5])
    assert frame["throughput_per_accelerator"].tolist() == pytest.approx([1000.0] * 3)


def test_baseline_is_per_family_and_the_best_time_at_the_smallest_count() -> None:
    frame = pd.concat([_configurations([8, 8, 16], [50.0, 40.0, 30.0]),
                       _configurations([4, 8], [100.0, 60.0], family="H100")], ignore_index=True)
    metrics = features.efficiency_metrics(frame)
    assert metrics["speedup"].tolist() == pytest.approx([0.8, 1.0, 40 / 30, 1.0, 100 / 60])


def test_missing_count_gives_missing_metrics_not_zero() -> None:
    frame = _configurations([8, 16], [60.0, 40.0])
    frame.loc[1, "accelerator_count"] = np.nan
    metrics = features.efficiency_metrics(frame)
    assert metrics.loc[1, ["accelerator_hours", "speedup", "scaling_efficiency"]].isna().all()


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


CRITERIA = {"time_to_train_min": {"weight": 0.5, "direction": "cost"},
            "accelerator_hours": {"weight": 0.5, "direction": "cost"}}


def test_topsis_prefers_the_dominating_configuration() -> None:
    frame = pd.DataFrame({"round": "v3.0", "submitter": "s", "system": ["a", "b", "c"], "division": "closed",
                          "accelerator_family": "A100", "accelerator_count": [8.0, 16.0, 64.0], "cluster": 0,
                          "time_to_train_min": [10.0, 8.0, 20.0], "accelerator_hours": [2.0, 1.5, 20.0],
                          "scaling_efficiency": [1.0, 1.0, 0.2], "speedup": [1.0, 1.2, 0.5]})
    ranking = rank.rank_configurations(frame, CRITERIA)
    assert ranking["system"].tolist() == ["b", "a", "c"]
    assert ranking["pareto"].tolist() == [True, False, False]
    assert ranking["rank"].tolist() == [1, 2, 3]


def test_selection_rule_keeps_numeric_features_above_the_threshold() -> None:
    targets = {"t": {"permutation_importance": {
        "accelerator_count": {"mean": 0.5, "std": 0.1}, "accelerator_family": {"mean": 0.9, "std": 0.1},
        "host_memory_gib": {"mean": 0.005, "std": 0.01}, "accelerator_year": {"mean": 0.2, "std": 0.1}}}}
    assert importance.select_features(targets, 0.01, 5) == ["accelerator_count", "accelerator_year"]
    assert importance.select_features(targets, 0.01, 1) == ["accelerator_count"]
