"""Stage `decide`: decision support per benchmark: scaling models, their honest error, break-even points.

    python -m pipeline.stages.decide

For every benchmark analysed (params `analysis.benchmarks`, see `scope.analysed_benchmarks`), `pipeline.analysis.decide` fits the scaling models (params
`decide`), summarises them with the backtest (data/processed/backtest.parquet) and draws their figures; it
writes reports/decide/<benchmark>.json and the figures <benchmark>.<name>.png beside it.
"""
from __future__ import annotations

from collections.abc import Sequence

from pipeline.core import paths
from pipeline.core.cli import progress, stage_arguments
from pipeline.core.errors import cli
from pipeline.core.files import atomic_path, fresh_dir, load_params, write_json
from pipeline.settings import load_settings


@cli
def main(argv: Sequence[str] | None = None) -> None:
    stage_arguments("pipeline.stages.decide", __doc__, argv)
    settings = load_settings()
    from pipeline.analysis import decide
    from pipeline.analysis.forecast import load_backtest
    from pipeline.analysis.scope import analysed_benchmarks
    from pipeline.commands.predict import assess_benchmark, load_scope

    params = load_params()
    benchmarks = analysed_benchmarks(settings.analysis)
    backtest_points = load_backtest()
    fresh_dir(paths.DECIDE)
    for benchmark in progress(benchmarks, "decide"):
        frame, decide_settings = load_scope(benchmark, params)
        assessments = assess_benchmark(frame, decide_settings)
        points = backtest_points[backtest_points["benchmark"] == benchmark]
        summary = decide.summarise(frame, assessments, decide_settings, settings.analysis.min_configurations, points)
        for name, png in decide.figures(frame, assessments, summary, points, benchmark).items():
            with atomic_path(paths.decide_figure(benchmark, decide.figure_name(name))) as tmp:
                tmp.write_bytes(png)
        write_json({"benchmark": benchmark, **summary}, paths.decide_json(benchmark))
        backtest = summary["backtest"] or {}
        model_error, loco_error = backtest.get("model_median_ape_pct"), summary.get("loco_median_ape_pct")
        print(f"{benchmark}: {summary['status']}; backtest median error "
              f"{'n/a' if model_error is None else f'{model_error:.1f}%'} ({backtest.get('model_n', 0)} forecasts), "
              f"leave-one-configuration-out {'n/a' if loco_error is None else f'{loco_error:.1f}%'}")


if __name__ == "__main__":
    main()
