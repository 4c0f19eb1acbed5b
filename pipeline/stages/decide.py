"""Stage `decide`: decision support per benchmark from the one forecast model: the next round's forecasts, the
backtest of `predict`'s answers, the break-even, where not to trust them.

    python -m pipeline.stages.decide

For every benchmark analysed (params `analysis.benchmarks`, see `pipeline.analysis.scope.analysed_benchmarks`), fits
the forecast model (`pipeline.analysis.forecasting.model`) on the results in scope, calibrates it on the backtest
(data/processed/backtest.parquet) and writes, under reports/decide/: the fitted models that predict and recommend
answer from (<benchmark>.models.json) and the summary of `pipeline.analysis.forecasting.decide` (<benchmark>.json),
which also
holds the data of the site's forecast, break-even and backtest charts.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.core import paths
from pipeline.core.cli import for_each
from pipeline.core.stage import Plan, per_benchmark_stage
from pipeline.settings import AnalysisSettings, DecideSettings, load_settings

# The settings this stage reads, itself or through the library (tools/sync_dvc_params.py writes them
# into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ("analysis", "decide")

if TYPE_CHECKING:
    import pandas as pd

    from pipeline.analysis.forecasting.model import DriftPrior


def decide_benchmark(inputs: tuple[str, pd.DataFrame], analysis: AnalysisSettings, settings: DecideSettings,
                     backtest_points: pd.DataFrame, folder: Path, drift_prior: DriftPrior | None = None) -> str:
    """Fit and summarise one benchmark from its (name, model inputs: `model_inputs_by_benchmark`) and write its
    outputs into `folder`; the line to print."""
    from pipeline.analysis.forecasting import decide
    from pipeline.analysis.forecasting.answers import FittedBenchmark, fit_benchmark
    from pipeline.analysis.forecasting.models_artifact import (
        models_record,
        not_analysed_record,
        read_models,
        write_models,
    )

    benchmark, frame = inputs
    reason = decide.skip_reason(frame, analysis.min_configurations)
    record = (not_analysed_record(benchmark, reason or "no results in scope", settings.target_coverage) if frame.empty
              else models_record(fit_benchmark(benchmark, frame, backtest_points, settings.target_coverage, reason,
                                                 drift_prior)))
    write_models(record, paths.models_json(benchmark, folder))
    saved = read_models(paths.models_json(benchmark, folder))  # what predict reads, so decide.json states its answers
    fitted = saved if isinstance(saved, FittedBenchmark) else None
    points = backtest_points[backtest_points["benchmark"] == benchmark]
    summary = decide.summarise(benchmark, frame, fitted, points, settings.efficiency_floor, settings.target_coverage,
                               reason, settings.trust)
    summary.write(paths.decide_json(benchmark, folder))
    from pipeline.analysis.forecasting.summaries import error_sentence

    return (f"{benchmark}: {summary.status}; predict answers with the {summary.method or 'n/a'}; "
            f"{error_sentence(summary.backtest)}")


def plan(folder: Path) -> Plan[tuple[str, pd.DataFrame], str]:
    """Fit and summarise every analysed benchmark, writing into `folder`."""
    settings = load_settings()
    from pipeline.analysis.forecasting.backtest import load_backtest
    from pipeline.analysis.forecasting.model import model_inputs_by_benchmark, next_round_prior

    # Each benchmark's model inputs, worked out once (in the worker processes): the drift prior pools them all.
    frames = model_inputs_by_benchmark(settings.analysis, each=partial(for_each, description="model inputs"))
    return Plan(partial(decide_benchmark, analysis=settings.analysis, settings=settings.decide,
                        backtest_points=load_backtest(), folder=folder, drift_prior=next_round_prior(frames)),
                list(frames.items()))


# preload: what the workers import (the count curves' least squares, the summaries and saved models), loaded once
# before they start, not once per worker
main = per_benchmark_stage("pipeline.stages.decide", __doc__, plan, outputs=(paths.DECIDE,),
                           preload=("scipy.optimize", "pipeline.analysis.forecasting.decide",
                                    "pipeline.analysis.forecasting.models_artifact"))


if __name__ == "__main__":
    main()
