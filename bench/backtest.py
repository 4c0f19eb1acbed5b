"""Forward-chaining backtest of `pipeline.commands.predict`'s forecasts on the real data, per benchmark and overall.

    python bench/backtest.py            (after `dvc repro features`; runs the backtest afresh, ~10 s)

For each round, the model is fitted on the earlier rounds and forecasts every result of the round (see
`pipeline.analysis.forecast`); the naive rule (the family's best time at the nearest count of its latest round, scaled
linearly) forecasts the same results. Printed per benchmark, overall, and for the latest fold (v5.1 from the
rounds up to v5.0) on its own: forecasts, median and 90th-percentile absolute percentage error, the share
inside the 90% interval, and the naive rule's median error with the model's on the results both forecast.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

if __package__ in (None, ""):  # run as `python bench/backtest.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.analysis.forecast import KINDS, MODEL, backtest, compare
from pipeline.settings import load_settings
from pipeline.stages.backtest import model_inputs_by_benchmark

COLUMNS = {"model_n": "forecasts", "model_median_ape_pct": "median %", "model_p90_ape_pct": "p90 %",
           "model_coverage": "in 90%", "common_n": "both", "common_model_median_ape_pct": "model median % (both)",
           "common_naive_median_ape_pct": "naive median % (both)", "better": "better"}


def table(points: pd.DataFrame, by: str) -> pd.DataFrame:
    rows = {name: compare(group) for name, group in points.groupby(by, sort=False)}
    rows["overall"] = compare(points)
    frame = pd.DataFrame.from_dict(rows, orient="index")[list(COLUMNS)].rename(columns=COLUMNS)
    return frame.round({"median %": 1, "p90 %": 1, "in 90%": 2, "model median % (both)": 1,
                        "naive median % (both)": 1})


# Issue 14: every benchmark with at least this many backtest forecasts must have its coverage in range.
COVERAGE_MIN_FORECASTS = 20


def coverage_check(points: pd.DataFrame, coverage: tuple[float, float]) -> str:
    """Which benchmarks with COVERAGE_MIN_FORECASTS model forecasts or more, and whether the whole backtest,
    have a 90%-interval coverage outside `coverage` (both ends inclusive)."""
    model = points[points["method"] == MODEL]
    by_benchmark = model.groupby("benchmark")["inside_interval"].agg(["size", "mean"])
    judged = by_benchmark[by_benchmark["size"] >= COVERAGE_MIN_FORECASTS]
    outside = judged[~judged["mean"].between(*coverage)]
    overall = model["inside_interval"].mean()
    lines = [f"Coverage of the model's intervals, target {coverage[0]:.2f} to {coverage[1]:.2f}: overall "
             f"{overall:.3f} ({'in' if coverage[0] <= overall <= coverage[1] else 'OUT OF'} range); "
             f"{len(judged) - len(outside)} of {len(judged)} benchmarks with {COVERAGE_MIN_FORECASTS}+ forecasts "
             f"in range"]
    lines += [f"  out of range: {name} {row['mean']:.3f} ({row['size']:.0f} forecasts)"
              for name, row in outside.iterrows()]
    return "\n".join(lines)


def main() -> None:
    settings = load_settings()
    points = backtest(model_inputs_by_benchmark(settings.analysis), settings.decide.interval)
    latest = points["fold"].iloc[points["fold_time"].argmax()]
    print("Per benchmark, every fold:")
    print(table(points, "benchmark").to_string())
    print(f"\nThe latest fold alone ({latest} forecast from the rounds before it):")
    print(table(points[points["fold"] == latest], "benchmark").to_string())
    print("\n" + coverage_check(points, settings.decide.trust.coverage))
    model = points[points["method"] == MODEL]
    print("\nModel forecasts by kind (every benchmark and fold):")
    for kind in KINDS:
        chosen = model[model["kind"] == kind]
        if len(chosen):
            print(f"  {kind}: {len(chosen)} forecasts, median error {chosen['ape_pct'].median():.1f}%, "
                  f"{100 * chosen['inside_interval'].mean():.0f}% inside the interval")


if __name__ == "__main__":
    main()
