"""The analysis scope of params.yaml (`analysis:`), applied the same way by every analysis stage."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from pipeline.analysis.efficiency import efficiency_metrics
from pipeline.core import paths, schemas
from pipeline.core.errors import ParamsError, UsageError
from pipeline.mlperf.catalogue import BY_ID, CATALOGUE, round_version
from pipeline.settings import AnalysisSettings

# The round as a numeric covariate of the importance model (fractional publication year): it takes the software
# progress between rounds so hardware features are not credited with it. Never a clustering feature.
ROUND_FEATURE = "round_year"


def check_benchmark(benchmark: str) -> None:
    """Return None when `benchmark` is a catalogue id; raise a UsageError listing the known ids otherwise."""
    if benchmark not in BY_ID:
        raise UsageError(f"unknown benchmark {benchmark!r}; choose one of: {', '.join(sorted(BY_ID))}")


def read_configurations() -> pd.DataFrame:
    """The features stage's configurations table, validated."""
    if not paths.CONFIGURATIONS.is_file():
        raise UsageError(f"{paths.CONFIGURATIONS} not found: run `dvc repro features` first")
    return schemas.validate_configurations(pd.read_parquet(paths.CONFIGURATIONS))


def _selected(configurations: pd.DataFrame, analysis: AnalysisSettings, benchmark: str,
              same_runs: bool = False) -> pd.DataFrame:
    """The rows of one benchmark in the division, rounds and availability of `analysis`, with a usable
    accelerator count, republished ones included; the results that publish the same runs as another
    (`same_runs_as`, `pipeline.analysis.pricing.energy`) only with `same_runs`, never otherwise."""
    check_benchmark(benchmark)
    division, rounds, availability = analysis.division, analysis.rounds, analysis.availability
    duplicate = configurations["same_runs_as"].notna()
    frame = configurations[(configurations["benchmark"] == benchmark) & configurations["accelerator_count"].notna()
                           & (duplicate if same_runs else ~duplicate)]
    if division != "all":
        frame = frame[frame["division"] == division]
    if rounds != "all":
        frame = frame[frame["round"].isin(rounds)]
    if availability != "all":
        frame = frame[frame["availability"].isin(availability)]
    return frame


def in_scope(configurations: pd.DataFrame, analysis: AnalysisSettings, benchmark: str) -> pd.DataFrame:
    """The configurations of one benchmark that the analysis settings select, with a usable accelerator count.

    With `analysis.republished: exclude`, results that repeat an earlier round's (`republished_of`) are left out,
    and the metrics that compare a result with others of its round (series baselines, speed-up, scaling
    efficiency and its split, round-relative accelerator-hours) are computed again without them, by
    `pipeline.analysis.efficiency.efficiency_metrics` over the benchmark's results: the rounds read as if those
    results had not been published again. A result that publishes the same runs as another of its round
    (`same_runs_as`: v4.0's AC and DC measurements of one set of runs) is always left out: the one kept carries
    both measurements. Every stage that analyses results (importance, cluster, rank and its
    findings, backtest, decide, predict, recommend) takes its rows from here.
    """
    if analysis.republished == "exclude":
        configurations = efficiency_metrics(_originals(configurations, benchmark))
    return _selected(configurations, analysis, benchmark).reset_index(drop=True)


def on_offer(configurations: pd.DataFrame, analysis: AnalysisSettings, benchmark: str) -> pd.DataFrame:
    """`in_scope` with the republished results included, whatever `analysis.republished` says: every result a
    round offers a buyer (the buyer's answer and the brief; the statistics count a republished result once)."""
    return in_scope(configurations, analysis.model_copy(update={"republished": "include"}), benchmark)


def _originals(configurations: pd.DataFrame, benchmark: str) -> pd.DataFrame:
    """The results of one benchmark that neither republish an earlier round's result nor publish the same runs
    as another: those `analysis.republished: exclude` computes the round-relative metrics over."""
    return configurations[(configurations["benchmark"] == benchmark) & configurations["republished_of"].isna()
                          & configurations["same_runs_as"].isna()]


def _in_scope_rows(configurations: pd.DataFrame, analysis: AnalysisSettings, benchmark: str) -> pd.DataFrame:
    """The rows `in_scope` selects, without computing the metrics again: they add columns and change no row, and
    none of the columns the scope selects by."""
    if analysis.republished == "exclude":
        configurations = _originals(configurations, benchmark)
    return _selected(configurations, analysis, benchmark)


def in_scope_count(configurations: pd.DataFrame, analysis: AnalysisSettings, benchmark: str) -> int:
    """How many rows `in_scope` selects (`_in_scope_rows`)."""
    return len(_in_scope_rows(configurations, analysis, benchmark))


def republished_left_out(configurations: pd.DataFrame, analysis: AnalysisSettings, benchmark: str) -> pd.DataFrame:
    """The results of one benchmark that the scope selects but `analysis.republished: exclude` leaves out (none
    with `include`), in round, submitter and system order."""
    if analysis.republished == "include":
        return configurations.iloc[0:0].reset_index(drop=True)
    frame = _selected(configurations, analysis, benchmark)
    return (frame[frame["republished_of"].notna()].sort_values(["round", "submitter", "system"], kind="mergesort")
            .reset_index(drop=True))


def same_runs_left_out(configurations: pd.DataFrame, analysis: AnalysisSettings, benchmark: str) -> pd.DataFrame:
    """The results of one benchmark that the scope would select but that publish the same runs as another result of
    their round (`same_runs_as`), in round, submitter and system order: listed, never analysed."""
    return (_selected(configurations, analysis, benchmark, same_runs=True)
            .sort_values(["round", "submitter", "system"], kind="mergesort").reset_index(drop=True))


def analysed_benchmarks(analysis: AnalysisSettings, configurations: pd.DataFrame | None = None) -> list[str]:
    """The benchmarks the stages analyse: `analysis.benchmarks` as listed, or for "all" every benchmark of the
    catalogue (in its order) with at least `analysis.min_configurations` configurations in scope. `configurations`
    is read from the features stage when not given and needed.

    Raises `ParamsError` when nothing is left.
    """
    if analysis.benchmarks != "all":
        return list(analysis.benchmarks)
    if configurations is None:
        configurations = read_configurations()
    counts = {benchmark.id: in_scope_count(configurations, analysis, benchmark.id) for benchmark in CATALOGUE}
    chosen = [name for name, count in counts.items() if count >= analysis.min_configurations]
    if not chosen:
        raise ParamsError(f"no benchmark has analysis.min_configurations = {analysis.min_configurations} "
                          "configurations in scope; widen the scope (analysis.rounds, division, availability)")
    return chosen


def retired_by(benchmark: str, round_: str) -> bool:
    """True when the catalogue's last round of `benchmark` comes before `round_` ("vX.Y"): the package's rules
    drop it from a round on. A benchmark the catalogue lacks is never retired."""
    entry = BY_ID.get(benchmark)
    return entry is not None and entry.last_round is not None and \
        round_version(entry.last_round) < round_version(round_)


@dataclass(frozen=True)
class Today:
    """Today's round and its benchmarks: what the entry page, the buyer's answers and the briefs show.

    round: the newest round of any analysed benchmark (None when none has a result in scope); benchmarks: the
    analysed benchmarks whose newest round in scope it is and that the catalogue does not retire by it, in the
    analysed benchmarks' order."""
    round: str | None
    benchmarks: tuple[str, ...]


def today_of(newest_rounds: Mapping[str, str]) -> Today:
    """Today from each analysed benchmark's newest round in scope (`newest_rounds`, by benchmark, in the analysed
    benchmarks' order; a benchmark without results in scope left out): the one rule `today` and the report share."""
    newest = max(newest_rounds.values(), key=round_version, default=None)
    if newest is None:
        return Today(None, ())
    return Today(newest, tuple(benchmark for benchmark, round_ in newest_rounds.items()
                               if round_ == newest and not retired_by(benchmark, newest)))


def today(analysis: AnalysisSettings, configurations: pd.DataFrame) -> Today:
    """`today_of` the newest round in scope (`_in_scope_rows`) of each benchmark `analysed_benchmarks` gives."""
    newest: dict[str, str] = {}
    for benchmark in analysed_benchmarks(analysis, configurations):
        rounds = _in_scope_rows(configurations, analysis, benchmark)["round"]
        if len(rounds):
            newest[benchmark] = max(rounds.unique(), key=round_version)
    return today_of(newest)


def republished_from(original: str) -> str:
    """The short label of a republished result, from its `republished_of` ("vX.Y/submitter/system"):
    "republished from vX.Y"."""
    return f"republished from {original.partition('/')[0]}"


def republication(original: str) -> str:
    """The long label of a republished result, naming the original: "republished from vX.Y (the result of vX.Y
    submitter system)"."""
    round_, _, rest = original.partition("/")
    return f"{republished_from(original)} (the result of {round_} {rest.replace('/', ' ', 1)})"
