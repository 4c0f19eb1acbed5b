"""Stage `decide`: decision support per benchmark: scaling models, their honest error, break-even points.

    python -m pipeline.stages.decide

For every benchmark analysed (params `analysis.benchmarks`, see
`pipeline.analysis.scope.analysed_benchmarks`), `pipeline.analysis.decide` fits the scaling models (params
`decide`), summarises them with the backtest (data/processed/backtest.parquet) and draws their figures; it
writes reports/decide/<benchmark>.json, the fitted models that predict and recommend answer from
(<benchmark>.models.json) and the figures <benchmark>.<name>.png beside it.
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from pipeline.core import paths
from pipeline.core.cli import for_each, stage_arguments
from pipeline.core.errors import cli
from pipeline.core.files import atomic_path, fresh_dir, write_json
from pipeline.settings import Analysis, Decide, load_settings

if TYPE_CHECKING:
    import pandas as pd


def decide_benchmark(benchmark: str, configurations: pd.DataFrame, analysis: Analysis, settings: Decide,
                     backtest_points: pd.DataFrame) -> str:
    """Fit, summarise and draw one benchmark (of the whole configurations table) and write its outputs; the
    line to print."""
    from pipeline.analysis import decide
    from pipeline.analysis.forecast import FittedBenchmark
    from pipeline.analysis.models_artifact import read_models, write_models
    from pipeline.analysis.scaling import assess_benchmark, model_inputs

    frame = model_inputs(configurations, analysis, benchmark)
    assessments = assess_benchmark(frame, settings)
    points = backtest_points[backtest_points["benchmark"] == benchmark]
    summary = decide.summarise(frame, assessments, settings, analysis.min_configurations, points)
    write_models(decide.saved_models(benchmark, frame, backtest_points, summary), paths.models_json(benchmark))
    fitted = read_models(paths.models_json(benchmark))  # what predict reads, so decide.json states its answers
    summary["forecasts"] = (decide.next_round_forecasts(fitted, settings.trust)
                            if isinstance(fitted, FittedBenchmark) else [])
    for name, png in decide.figures(frame, assessments, summary, points, benchmark).items():
        with atomic_path(paths.decide_figure(benchmark, decide.figure_name(name))) as tmp:
            tmp.write_bytes(png)
    write_json({"benchmark": benchmark, **summary}, paths.decide_json(benchmark))
    backtest = summary["backtest"] or {}
    model_error, loco_error = backtest.get("model_median_ape_pct"), summary.get("loco_median_ape_pct")
    return (f"{benchmark}: {summary['status']}; backtest median error "
            f"{'n/a' if model_error is None else f'{model_error:.1f}%'} ({backtest.get('model_n', 0)} forecasts), "
            f"leave-one-configuration-out {'n/a' if loco_error is None else f'{loco_error:.1f}%'}")


@cli
def main(argv: Sequence[str] | None = None) -> None:
    stage_arguments("pipeline.stages.decide", __doc__, argv)
    settings = load_settings()
    from pipeline.analysis.forecast import load_backtest
    from pipeline.analysis.scope import analysed_benchmarks, read_configurations

    configurations = read_configurations()  # read once: every benchmark's worker cuts its own rows
    fresh_dir(paths.DECIDE)
    work = partial(decide_benchmark, configurations=configurations, analysis=settings.analysis,
                   settings=settings.decide, backtest_points=load_backtest())
    for line in for_each(work, analysed_benchmarks(settings.analysis, configurations), "decide"):
        print(line)


if __name__ == "__main__":
    main()
