"""The analysis scope of params.yaml (`analysis:`), applied the same way by every analysis stage."""
from __future__ import annotations

import pandas as pd

from pipeline.core import paths, schemas
from pipeline.core.errors import ParamsError, UsageError
from pipeline.mlperf.catalogue import BY_ID, CATALOGUE
from pipeline.settings import Analysis

# The round as a numeric covariate of the importance model (fractional publication year): it takes the software
# progress between rounds so hardware features are not credited with it. Never a clustering feature.
ROUND_FEATURE = "round_year"


def check_benchmark(benchmark: str) -> None:
    if benchmark not in BY_ID:
        raise UsageError(f"unknown benchmark {benchmark!r}; choose one of: {', '.join(sorted(BY_ID))}")


def read_configurations() -> pd.DataFrame:
    """The features stage's configurations table, validated."""
    if not paths.CONFIGURATIONS.is_file():
        raise UsageError(f"{paths.CONFIGURATIONS} not found: run `dvc repro features` first")
    return schemas.validate_configurations(pd.read_parquet(paths.CONFIGURATIONS))


def in_scope(configurations: pd.DataFrame, analysis: Analysis, benchmark: str) -> pd.DataFrame:
    """The configurations of one benchmark that the analysis settings select, with a usable accelerator count."""
    check_benchmark(benchmark)
    division, rounds, availability = analysis.division, analysis.rounds, analysis.availability
    frame = configurations[(configurations["benchmark"] == benchmark) & configurations["accelerator_count"].notna()]
    if division != "all":
        frame = frame[frame["division"] == division]
    if rounds != "all":
        frame = frame[frame["round"].isin(rounds)]
    if availability != "all":
        frame = frame[frame["availability"].isin(availability)]
    return frame.reset_index(drop=True)


def analysed_benchmarks(analysis: Analysis, configurations: pd.DataFrame | None = None) -> list[str]:
    """The benchmarks the stages analyse: `analysis.benchmarks` as listed, or for "all" every benchmark of the
    catalogue (in its order) with at least `analysis.min_configurations` configurations in scope. `configurations`
    is read from the features stage when not given and needed.

    Raises `ParamsError` when "all" leaves out the headline benchmark `analysis.benchmark`, or leaves nothing.
    """
    if analysis.benchmarks != "all":
        return list(analysis.benchmarks)
    if configurations is None:
        configurations = read_configurations()
    counts = {benchmark.id: len(in_scope(configurations, analysis, benchmark.id)) for benchmark in CATALOGUE}
    chosen = [name for name, count in counts.items() if count >= analysis.min_configurations]
    if analysis.benchmark not in chosen:
        raise ParamsError(f"analysis.benchmark {analysis.benchmark!r} has {counts[analysis.benchmark]} configurations "
                          f"in scope, fewer than analysis.min_configurations = {analysis.min_configurations}; lead "
                          f"the summary with one of {', '.join(chosen) or '(none)'} or widen the scope")
    return chosen
