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

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from pipeline.core import paths
from pipeline.core.cli import for_each, stage_arguments
from pipeline.core.errors import cli
from pipeline.core.files import atomic_dir
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


@cli
def main(argv: Sequence[str] | None = None) -> None:
    """Run the findings stage: write each analysed benchmark's findings, with Holm's correction over every test,
    into data/processed/findings/ (JSON); returns None."""
    stage_arguments("pipeline.stages.findings", __doc__, argv)
    settings = load_settings()
    from pipeline.analysis.scope import analysed_benchmarks, read_configurations
    from pipeline.analysis.statistics import findings
    from pipeline.analysis.statistics.findings_result import FindingsReport

    configurations = read_configurations()
    benchmarks = analysed_benchmarks(settings.analysis, configurations)
    found = for_each(partial(evaluate, configurations=configurations, settings=settings), benchmarks, "findings",
                     preload=("pipeline.analysis.statistics.findings", "statsmodels.api"))
    adjusted, correction = findings.across_benchmarks(dict(zip(benchmarks, found)), settings.findings)
    with atomic_dir(paths.FINDINGS) as folder:  # swapped in whole at the end: Ctrl-C keeps the previous one
        for benchmark in benchmarks:
            FindingsReport.of(benchmark, adjusted[benchmark], correction).write(
                paths.findings_json(benchmark, folder))
    print(correction.statement())


if __name__ == "__main__":
    main()
