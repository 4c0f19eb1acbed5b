"""Stage `importance`: which hardware features explain time to train and accelerator-hours, per benchmark.

    python -m pipeline.stages.importance

For every benchmark analysed (params `analysis.benchmarks`, see
`pipeline.analysis.scope.analysed_benchmarks`), the in-scope configurations go through
`pipeline.analysis.statistics.importance.analyse` (params `importance`); it writes reports/importance/<benchmark>.json
(an
`ImportanceReport`: the cluster stage clusters on its selection, the report draws it).
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from pipeline.core import paths
from pipeline.core.cli import for_each, stage_arguments
from pipeline.core.errors import NothingAnalysedError, cli
from pipeline.core.files import atomic_dir
from pipeline.settings import Settings, load_settings

# The settings this stage reads, itself or through the library (tools/sync_dvc_params.py writes them
# into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ("analysis", "importance")

if TYPE_CHECKING:
    import pandas as pd

    from pipeline.analysis.statistics.importance_result import ImportanceReport


def analyse(benchmark: str, configurations: pd.DataFrame, settings: Settings) -> ImportanceReport:
    """The importance analysis of one benchmark."""
    from pipeline.analysis.scope import in_scope
    from pipeline.analysis.statistics import importance

    frame = in_scope(configurations, settings.analysis, benchmark)
    return importance.analyse(frame, settings.importance, settings.analysis.min_configurations, benchmark=benchmark)


@cli
def main(argv: Sequence[str] | None = None) -> None:
    """Run the importance stage: write each analysed benchmark's reports/importance/<benchmark>.json; returns None,
    or raises NothingAnalysedError when every benchmark was skipped."""
    stage_arguments("pipeline.stages.importance", __doc__, argv)
    settings = load_settings()
    from pipeline.analysis.scope import analysed_benchmarks, read_configurations

    configurations = read_configurations()
    benchmarks = analysed_benchmarks(settings.analysis, configurations)
    skipped = {}
    with atomic_dir(paths.IMPORTANCE) as folder:  # swapped in whole at the end: Ctrl-C keeps the previous one
        for report in for_each(partial(analyse, configurations=configurations, settings=settings), benchmarks,
                               "importance", preload=("pipeline.analysis.statistics.importance",)):
            report.write(paths.importance_json(report.benchmark, folder))
            verdict = report.reason if report.gate is None else report.gate.message
            print(f"{report.benchmark}: {report.status}, {verdict}; selected {report.selected_features}")
            if report.status == "skipped":
                skipped[report.benchmark] = report.reason
        if len(skipped) == len(benchmarks):
            raise NothingAnalysedError(
                "every benchmark was skipped: " + "; ".join(f"{name}: {reason}" for name, reason in skipped.items())
                + f". The scope (analysis.division {settings.analysis.division!r}, rounds "
                f"{settings.analysis.rounds!r}, availability {settings.analysis.availability!r}) leaves too few "
                "configurations: widen it or lower analysis.min_configurations in params.yaml")


if __name__ == "__main__":
    main()
