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

import numpy as np
import pandas as pd
from scipy.stats import binom, binomtest

if __package__ in (None, ""):  # run as `python bench/backtest.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.analysis.forecast import KINDS, MODEL, backtest, compare, coverage_consistent
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
    """The 90%-interval coverage of the model's forecasts, overall and for each benchmark with
    COVERAGE_MIN_FORECASTS or more, against `coverage` (both ends inclusive): the share inside, its exact
    (Clopper-Pearson) 90% interval, whether the share is in range, and whether it is consistent with the range
    (`coverage_consistent`: the interval overlaps it). The second verdict is the fair one for a few dozen
    forecasts: even perfectly calibrated intervals leave a 47-forecast share outside 85-95% one time in four."""
    model = points[points["method"] == MODEL]
    by_benchmark = model.groupby("benchmark")["inside_interval"].agg(["sum", "size"])
    judged = by_benchmark[by_benchmark["size"] >= COVERAGE_MIN_FORECASTS]
    rows = [("overall", int(model["inside_interval"].sum()), len(model)),
            *((str(name), int(row["sum"]), int(row["size"])) for name, row in judged.iterrows())]
    table = pd.DataFrame([{
        "": name, "inside": inside, "forecasts": n, "coverage": round(inside / n, 3),
        "exact 90% interval": "{:.3f} to {:.3f}".format(*_exact_interval(inside, n)),
        "in range": "yes" if coverage[0] <= inside / n <= coverage[1] else "NO",
        "consistent with range": "yes" if coverage_consistent(inside, n, coverage) else "NO"}
        for name, inside, n in rows]).set_index("").rename_axis(None)
    in_range = int((table["in range"].iloc[1:] == "yes").sum())
    consistent = int((table["consistent with range"].iloc[1:] == "yes").sum())
    return (f"Coverage of the model's 90% intervals, target {coverage[0]:.2f} to {coverage[1]:.2f}, for the whole "
            f"backtest and each benchmark with {COVERAGE_MIN_FORECASTS}+ forecasts: {in_range} of {len(judged)} "
            f"benchmarks in range, {consistent} of {len(judged)} consistent with it. Were every interval exactly "
            f"calibrated (each forecast inside with probability 0.90, independently), all {len(judged)} shares would "
            f"be in range with probability {_all_in_range(judged['size'].tolist(), coverage):.3f}.\n"
            f"{table.to_string()}")


def _all_in_range(sizes: list[int], coverage: tuple[float, float], level: float = 0.9) -> float:
    """Probability that independent Binomial(n, level) shares, one per n in `sizes`, all lie in `coverage`."""
    probability = 1.0
    for n in sizes:
        inside = np.arange(n + 1)
        probability *= float(binom.pmf(inside, n, level)[(inside >= coverage[0] * n) & (inside <= coverage[1] * n)]
                             .sum())
    return probability


def _exact_interval(inside: int, n: int) -> tuple[float, float]:
    interval = binomtest(inside, n).proportion_ci(confidence_level=0.9, method="exact")
    return interval.low, interval.high


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
