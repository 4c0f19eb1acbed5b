"""Stage `findings`: the published study's findings tested on every benchmark, corrected for the number of tests.

    python -m pipeline.stages.findings

For every benchmark analysed (params `analysis.benchmarks`, see
`pipeline.analysis.scope.analysed_benchmarks`): `pipeline.analysis.statistics.findings.evaluate` (params `findings`)
tests the published findings on its in-scope results; then `findings.across_benchmarks` tests the sublinear claim
once on every benchmark's series and corrects every test's p-value over all benchmarks together (Holm: the page
shows them side by side), and the stage writes
data/processed/findings/<benchmark>.json, which the rank stage adds to reports/rank/<benchmark>.json. The findings
read the results and never the clusters, so a change of `cluster.k` does not test them again.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.core import paths
from pipeline.core.stage import Plan, per_benchmark_stage
from pipeline.settings import Settings, load_settings

# The settings this stage reads, itself or through the library (tools/sync_dvc_params.py writes them
# into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ("analysis", "findings")

if TYPE_CHECKING:
    import pandas as pd

    from pipeline.analysis.statistics.findings import Finding


def evaluate(benchmark: str, configurations: pd.DataFrame, settings: Settings) -> list[Finding]:
    """One benchmark's findings (p not adjusted)."""
    from pipeline.analysis.scope import in_scope
    from pipeline.analysis.statistics import findings

    return findings.evaluate(in_scope(configurations, settings.analysis, benchmark), settings.findings)


def corrected(found: list[list[Finding]], benchmarks: list[str], settings: Settings, folder: Path) -> str:
    """Correct every benchmark's findings (`found`, in the order of `benchmarks`) over all of them and write each
    benchmark's `FindingsReport` into `folder`; the correction's statement, the line to print."""
    from pipeline.analysis.statistics import findings
    from pipeline.analysis.statistics.findings_result import FindingsReport

    adjusted, correction = findings.across_benchmarks(dict(zip(benchmarks, found)), settings.findings)
    for benchmark in benchmarks:
        FindingsReport.of(benchmark, adjusted[benchmark], correction).write(paths.findings_json(benchmark, folder))
    return correction.statement()


def plan(folder: Path) -> Plan[str, list[Finding]]:
    """Test the findings on every analysed benchmark, then correct them all together, writing into `folder`."""
    settings = load_settings()
    from pipeline.analysis.scope import analysed_benchmarks, read_configurations

    configurations = read_configurations()
    benchmarks = analysed_benchmarks(settings.analysis, configurations)
    return Plan(partial(evaluate, configurations=configurations, settings=settings), benchmarks,
                say=lambda found: None,  # one line at the end, over every benchmark
                finish=partial(corrected, benchmarks=benchmarks, settings=settings, folder=folder))


main = per_benchmark_stage("pipeline.stages.findings", __doc__, plan, outputs=(paths.FINDINGS,),
                           preload=("pipeline.analysis.statistics.findings", "statsmodels.api"))


if __name__ == "__main__":
    main()
