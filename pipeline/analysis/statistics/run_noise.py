"""Run-to-run noise of published results: each result's time to train recomputed from bootstrap resamples of its
own runs, as the official score is computed (`pipeline.mlperf.logs.scoring.olympic_score`).

A result's score is the olympic mean of its converged runs (drop the k fastest and the k - f slowest, f the runs
that did not converge) times its `scaling_factor`. Resampling the converged runs with replacement (f kept) and
scoring each resample the same way gives the times the result could as well have published: what the ranking's
pick is checked against (`pipeline.analysis.statistics.ranking.pick_stability`). A result whose runs are not in the
ingest's
tables, or whose runs do not give back its published score, keeps its published time in every resample.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.mlperf.catalogue import BY_ID
from pipeline.mlperf.logs.scoring import olympic_score

RUN_KEY = ["round", "submitter", "system", "benchmark"]  # a results folder in runs.parquet and results.parquet
# The columns `run_times` reads of each (a reader need not load the others).
RUNS_COLUMNS = [*RUN_KEY, "converged", "time_to_train_min"]
RESULTS_COLUMNS = [*RUN_KEY, "n_runs", "n_converged", "scaling_factor"]


@dataclass(frozen=True)
class RunTimes:
    """One result's converged run times (minutes), its runs that did not converge (`n_failed`), the olympic drop
    k of its benchmark and its scaling factor."""
    times: np.ndarray
    n_failed: int
    drop: int
    factor: float

    def score(self) -> float:
        """The official score of these runs (minutes)."""
        return olympic_score(list(self.times), self.n_failed, self.drop) * self.factor


def run_times(frame: pd.DataFrame, runs: pd.DataFrame, results: pd.DataFrame) -> list[RunTimes | None]:
    """The runs of each row of `frame` (configurations: `round, submitter, system, benchmark_folder, benchmark`,
    `time_to_train_min`), from the ingest's runs.parquet (`converged`, `time_to_train_min`) and results.parquet
    (`n_runs`, `n_converged`, `scaling_factor`); None for a row whose runs are missing or do not score to its
    published time (relative 1e-9)."""
    # Only the folders of `frame`'s benchmarks, read as plain columns: grouping every run of every benchmark cost
    # more than the rest of the ranking.
    wanted = set(frame["benchmark_folder"])
    converged = runs[runs["converged"].astype(bool) & runs["benchmark"].isin(wanted)]
    minutes: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    for key, value in zip(_keys(converged), converged["time_to_train_min"].tolist()):
        minutes[key].append(value)
    mine = results[results["benchmark"].isin(wanted)]
    folders = dict(zip(_keys(mine), zip(mine["n_runs"].tolist(), mine["n_converged"].tolist(),
                                        mine["scaling_factor"].tolist())))
    found: list[RunTimes | None] = []
    for round_, submitter, system, folder, benchmark, published in zip(
            frame["round"], frame["submitter"], frame["system"], frame["benchmark_folder"], frame["benchmark"],
            frame["time_to_train_min"]):
        key = (round_, submitter, system, folder)
        if key not in minutes or key not in folders:
            found.append(None)
            continue
        n_runs, n_converged, factor = folders[key]
        entry = BY_ID.get(benchmark)
        sample = RunTimes(np.sort(np.array(minutes[key], dtype=float)), int(n_runs - n_converged),
                          entry.olympic_drop if entry else 1, float(factor))
        found.append(sample if math.isclose(sample.score(), published, rel_tol=1e-9) else None)
    return found


def _keys(table: pd.DataFrame) -> Iterator[tuple[str, str, str, str]]:
    """The results folder (`RUN_KEY`) of each row of `table`."""
    return zip(*(table[column].tolist() for column in RUN_KEY))


def resampled_times(samples: Sequence[RunTimes | None], published: np.ndarray, resamples: int,
                    seed: int) -> np.ndarray:
    """resamples x len(samples) times to train (minutes): column i is result i's score over bootstrap resamples
    of its converged runs (its failed runs kept), or its `published` time where `samples[i]` is None."""
    rng = np.random.default_rng(seed)
    drawn = np.tile(np.asarray(published, dtype=float), (resamples, 1))
    for column, sample in enumerate(samples):
        if sample is None:
            continue
        m = len(sample.times)
        resampled = np.sort(sample.times[rng.integers(0, m, (resamples, m))], axis=1)
        kept = resampled[:, sample.drop: m - (sample.drop - sample.n_failed)]
        drawn[:, column] = kept.mean(axis=1) * sample.factor
    return drawn


@dataclass(frozen=True)
class RunNoise:
    """The ingest's runs and results tables with a bootstrap's size and seed: `times` gives the resampled times of
    any configurations."""
    runs: pd.DataFrame
    results: pd.DataFrame
    resamples: int
    seed: int

    def times(self, frame: pd.DataFrame) -> np.ndarray:
        """resamples x len(frame) times to train (minutes) of `frame`'s results (see `resampled_times`)."""
        return resampled_times(run_times(frame, self.runs, self.results), frame["time_to_train_min"].to_numpy(),
                               self.resamples, self.seed)
