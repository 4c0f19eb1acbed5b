"""The scale-out backtest (`pipeline.analysis.forecasting.scaleout`) on small synthetic frames."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.analysis.forecasting import intervals, scaleout
from pipeline.analysis.forecasting import model as forecast_model
from pipeline.mlperf.catalogue import round_published


def results(rows: list[tuple[str, float, float]], family: str = "H100") -> pd.DataFrame:
    """Model inputs of one SXM family from (round, count, minutes) rows, one submitter."""
    return pd.DataFrame([{"round": round_, "accelerator_family": family, "form_factor": "SXM",
                          "accelerator_count": float(count), "time_to_train_min": float(minutes),
                          "submitter": "Acme", "system": f"{family}-{count:g}-{round_}", "republished_of": None}
                         for round_, count, minutes in rows])


EMPTY_HISTORY = intervals.ResidualHistory.of(pd.DataFrame(
    {name: [] for name in ("benchmark", "fold_time", "method", "kind", "log_residual", "distance", "scale")}))


def test_within_round_forecasts_each_count_from_the_rounds_before_and_a_quarter_of_it_or_less() -> None:
    # t = 100 n^-0.9 in v1.0, 20% faster in v1.1: the curve's tail is the exponent fitted within the rounds
    frame = results([(round_, count, factor * 100 * count ** -0.9) for round_, factor in (("v1.0", 1.0), ("v1.1", 0.8))
                     for count in (1, 2, 4, 8, 16)])
    points = scaleout.within_round_points(frame, "resnet", EMPTY_HISTORY, 0.9)
    # counts 4, 8 and 16 of each round, from 1, 2 and 4 of it: no drift, the exponent from the rounds' pairs
    assert sorted(zip(points["fold"], points["accelerator_count"])) == [
        (round_, count) for round_ in ("v1.0", "v1.1") for count in (4.0, 8.0, 16.0)]
    # v1.0's beyond its fitted counts; v1.1's inside the counts v1.0 published, the curve's shape from both rounds
    assert points.sort_values(["fold", "accelerator_count"])["distance"].to_numpy() == pytest.approx(
        [np.log(4.0)] * 3 + [0.0] * 3)
    # 4 from 1 alone: no pair in a round yet, the fallback exponent -0.8, 4^0.1 - 1 too slow; the rest on the curve
    first = (points["fold"] == "v1.0") & (points["accelerator_count"] == 4.0)
    assert points.loc[first, "signed_pct"].to_numpy() == pytest.approx([100 * (4 ** 0.1 - 1)])
    assert points.loc[~first, "ape_pct"].max() < 1.0 and points["inside_interval"].all()
    assert list(points.columns) == scaleout.SCALE_OUT_COLUMNS
    assert (points["fold_time"] == points["fold"].map(round_published)).all()


def test_a_unit_without_a_count_four_times_smaller_is_not_forecast() -> None:
    frame = results([("v1.0", 8, 100.0), ("v1.0", 16, 55.0)])
    assert scaleout.within_round_points(frame, "resnet", EMPTY_HISTORY, 0.9).empty


def _points(fold: str, counts: list[float], predicted: list[float]) -> pd.DataFrame:
    count = len(counts)
    return pd.DataFrame({"benchmark": "resnet", "fold": fold, "fold_time": round_published(fold),
                         "accelerator_family": "H100", "form_factor": "SXM", "submitter": "Acme",
                         "system": [f"s{index}" for index in range(count)], "accelerator_count": counts,
                         "time_to_train_min": 10.0, "kind": forecast_model.FAMILY, "distance": 0.0,
                         "method": forecast_model.ANSWER, "predicted_min": predicted, "low_min": 5.0,
                         "high_min": 20.0, "ape_pct": [100 * abs(value / 10 - 1) for value in predicted],
                         "inside_interval": [5.0 <= value <= 20.0 for value in predicted]})


def test_beyond_family_and_large_count_views_select_from_the_forward_backtest() -> None:
    frame = results([("v1.0", 8, 100.0), ("v1.0", 64, 20.0)])
    points = pd.concat([_points("v1.1", [32.0, 128.0, 512.0], [9.0, 12.0, 30.0]),
                        _points("v1.1", [512.0], [10.0]).assign(method=forecast_model.MODEL)], ignore_index=True)
    beyond = scaleout.beyond_family_points(points, {"resnet": frame})
    assert beyond["accelerator_count"].tolist() == [128.0, 512.0]
    assert beyond["signed_pct"].to_numpy() == pytest.approx([20.0, 200.0])
    large = scaleout.large_count_points(points, "v1.1", smallest=256)
    assert large["accelerator_count"].tolist() == [512.0]
    table = scaleout.scale_out_table(beyond)
    assert table.loc["overall", "forecasts"] == 2 and table.loc["overall", "median %"] == "110.0"
    assert table.loc["overall", "in 90% (%)"] == "50" and table.loc["overall", "exact 90%"] == "3-97"


def test_distance_bands_put_an_edge_in_the_lower_band() -> None:
    points = pd.DataFrame({"distance": [0.0, 0.3, np.log(2.0), np.log(4.0) + 1e-12, np.log(16.0), 5.0]})
    assert scaleout.distance_bands(points).astype(str).tolist() == [
        "inside", "x1-2", "x1-2", "x2-4", "x4-16", "x16 or more"]
