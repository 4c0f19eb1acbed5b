"""Stage `backtest`: forward-chaining forecasts of every analysed benchmark, with calibrated intervals, the answer
`predict` would have given and its trust.

    python -m pipeline.stages.backtest

Writes data/processed/backtest.parquet: one row per result of a round forecast from the rounds before it, per
method (the model, the naive rule, its monotone form, the blend) and for `predict`'s answer (method "answer", the
method chosen on the earlier folds in `chosen`, with `trusted` and the `reasons` it is not); columns
`pipeline.analysis.forecasting.backtest.POINT_COLUMNS` (times in minutes, ape_pct the absolute percentage error,
inside_interval whether the published time lies inside the interval meant to hold `decide.target_coverage` of
them, calibration the residual pool it was calibrated on, rerun whether the result repeats an earlier one). All
benchmarks run in one stage because a benchmark with few earlier folds calibrates on the other benchmarks' earlier
residuals (see `pipeline.analysis.forecasting.model`).
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from pipeline.analysis.forecasting.backtest import BACKTEST, backtest
from pipeline.analysis.forecasting.model import model_inputs_by_benchmark
from pipeline.analysis.forecasting.summaries import compare
from pipeline.core.cli import for_each, stage_arguments
from pipeline.core.errors import cli
from pipeline.core.files import write_parquet
from pipeline.settings import load_settings

# The settings this stage reads, itself or through the library (tools/sync_dvc_params.py writes them
# into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ("analysis", "decide.target_coverage", "decide.trust")


@cli
def main(argv: Sequence[str] | None = None) -> None:
    """Run the backtest stage: write data/processed/backtest.parquet (one row per result forecast, per method) and
    print the answers' median error (%) and interval coverage; returns None."""
    stage_arguments("pipeline.stages.backtest", __doc__, argv)
    settings = load_settings()
    # the scope's metrics of each benchmark in the worker processes too (a second in all)
    frames = model_inputs_by_benchmark(settings.analysis, each=partial(for_each, description="model inputs"))
    # scipy.optimize (the count curves' least squares) imported once here, not once per worker
    points = backtest(frames, settings.decide.target_coverage, settings.decide.trust,
                      partial(for_each, description="backtest", preload=("scipy.optimize",)))
    write_parquet(points, BACKTEST)
    overall = compare(points)
    if not overall.answer.n:
        print("backtest: no forecasts, since a forecast needs an earlier round of the same benchmark and "
              "fetch.rounds holds no such pair; predict and recommend will not trust any family")
        return
    naive = ("no naive forecasts to compare with" if not overall.common_n else
             f"the naive rule {overall.common_naive_median_ape_pct:.1f}% against the answers' "
             f"{overall.common_answer_median_ape_pct:.1f}% on the {overall.common_n} results both forecast")
    print(f"backtest: {overall.answer.n} answers, median error {overall.answer.median_ape_pct:.1f}%, "
          f"{100 * (overall.answer.coverage or 0):.0f}% inside the "
          f"{100 * settings.decide.target_coverage:.0f}% interval; "
          f"{naive}")


if __name__ == "__main__":
    main()
