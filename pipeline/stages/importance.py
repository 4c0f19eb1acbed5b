"""Stage `importance`: which hardware features explain time to train and accelerator-hours, per benchmark.

    python -m pipeline.stages.importance

For every benchmark analysed (params `analysis.benchmarks`, see
`pipeline.analysis.scope.analysed_benchmarks`), the in-scope configurations go through
`pipeline.analysis.statistics.importance.analyse` (params `importance`); it writes reports/importance/<benchmark>.json
(an
`ImportanceReport`: the cluster stage clusters on its selection, the report draws it).
"""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.core import paths
from pipeline.core.errors import NothingAnalysedError
from pipeline.core.stage import Plan, per_benchmark_stage
from pipeline.settings import AnalysisSettings, Settings, load_settings

# The settings this stage reads, itself or through the library (tools/sync_dvc_params.py writes them
# into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ("analysis", "importance")

if TYPE_CHECKING:
    import pandas as pd

    from pipeline.analysis.statistics.importance_result import ImportanceReport


def analyse(benchmark: str, configurations: pd.DataFrame, settings: Settings, folder: Path) -> ImportanceReport:
    """The importance analysis of one benchmark, written into `folder`."""
    from pipeline.analysis.scope import in_scope
    from pipeline.analysis.statistics import importance

    frame = in_scope(configurations, settings.analysis, benchmark)
    report = importance.analyse(frame, settings.importance, settings.analysis.min_configurations, benchmark=benchmark)
    report.write(paths.importance_json(benchmark, folder))
    return report


def verdict(report: ImportanceReport) -> str:
    """The line printed for one benchmark's analysis: its status, gate and selected features."""
    said = report.reason if report.gate is None else report.gate.message
    return f"{report.benchmark}: {report.status}, {said}; selected {report.selected_features}"


def fail_if_nothing_analysed(reports: list[ImportanceReport], analysis: AnalysisSettings) -> None:
    """Raise NothingAnalysedError, naming the scope of `analysis`, when every one of `reports` was skipped."""
    skipped = {report.benchmark: report.reason for report in reports if report.status == "skipped"}
    if len(skipped) == len(reports):
        raise NothingAnalysedError(
            "every benchmark was skipped: " + "; ".join(f"{name}: {reason}" for name, reason in skipped.items())
            + f". The scope (analysis.division {analysis.division!r}, rounds {analysis.rounds!r}, availability "
            f"{analysis.availability!r}) leaves too few configurations: widen it or lower "
            "analysis.min_configurations in params.yaml")


def plan(folder: Path) -> Plan[str, ImportanceReport]:
    """Analyse every analysed benchmark, writing into `folder`; fails when every one was skipped."""
    settings = load_settings()
    from pipeline.analysis.scope import analysed_benchmarks, read_configurations

    configurations = read_configurations()
    return Plan(partial(analyse, configurations=configurations, settings=settings, folder=folder),
                analysed_benchmarks(settings.analysis, configurations), say=verdict,
                finish=partial(fail_if_nothing_analysed, analysis=settings.analysis))


main = per_benchmark_stage("pipeline.stages.importance", __doc__, plan, outputs=(paths.IMPORTANCE,),
                           preload=("pipeline.analysis.statistics.importance",))


if __name__ == "__main__":
    main()
