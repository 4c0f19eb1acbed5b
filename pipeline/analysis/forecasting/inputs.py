"""The forecast model's inputs: the in-scope results of one benchmark it can use, each with a form factor (see
`pipeline.analysis.forecasting.model`). A unit is an accelerator family in one form factor (`UNIT`)."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from pipeline.analysis.scope import analysed_benchmarks, in_scope, read_configurations
from pipeline.settings import AnalysisSettings

UNIT = ["accelerator_family", "form_factor"]
UNSPECIFIED = "unspecified"


def model_inputs(configurations: pd.DataFrame, analysis: AnalysisSettings, benchmark: str) -> pd.DataFrame:
    """The in-scope results of `benchmark` the model can use (a family and a positive time), with a
    `form_factor` for every row (a result whose description names none takes its family's most common one,
    or UNSPECIFIED); text columns as Python strings (pandas' Arrow-backed ones make the fits' many small
    selections several times slower)."""
    frame = in_scope(configurations, analysis, benchmark)
    frame = frame[frame["accelerator_family"].notna() & (frame["time_to_train_min"] > 0)].reset_index(drop=True)
    frame = frame.assign(form_factor=_filled_form_factors(frame))
    return frame.astype({name: object for name in frame.columns if pd.api.types.is_string_dtype(frame[name])})


def model_inputs_by_benchmark(analysis: AnalysisSettings, configurations: pd.DataFrame | None = None,
                              each: Callable[[Callable[[Any], pd.DataFrame], list[Any]], Iterable[pd.DataFrame]]
                              = map) -> dict[str, pd.DataFrame]:
    """Each analysed benchmark's model inputs (params `analysis`), from the features stage's `configurations`
    (read when not given), in `analysed_benchmarks` order. `each(work, items)` maps the benchmarks, in this
    process by default (the stages pass their worker processes: the scope's metrics take a second in all)."""
    if configurations is None:
        configurations = read_configurations()
    benchmarks = analysed_benchmarks(analysis, configurations)
    # Each benchmark's rows alone go to its worker: the scope of one benchmark reads no other's.
    rows = dict(iter(configurations.groupby("benchmark", sort=False, observed=True)))
    items = [(rows.get(benchmark, configurations.iloc[:0]), analysis, benchmark) for benchmark in benchmarks]
    return dict(zip(benchmarks, each(_benchmark_inputs, items)))


def _benchmark_inputs(item: tuple[pd.DataFrame, AnalysisSettings, str]) -> pd.DataFrame:
    """`model_inputs` of one (configurations, analysis, benchmark)."""
    return model_inputs(*item)


def _filled_form_factors(frame: pd.DataFrame) -> pd.Series:
    def fill(group: pd.Series) -> pd.Series:
        known = group.dropna()
        return group.fillna(known.mode().iloc[0] if len(known) else UNSPECIFIED)

    if frame.empty:
        return pd.Series([], dtype=object)
    return frame.groupby("accelerator_family")["accelerator_form_factor"].transform(fill).astype(object)


def form_factors_by_frequency(form_factors: pd.Series | np.ndarray) -> tuple[str, ...]:
    """Most common first (the default of a forecast), ties by name."""
    names, counts = np.unique(np.asarray(form_factors, dtype=str), return_counts=True)
    return tuple(str(name) for _, name in sorted(zip(-counts, names)))


def row_groups(*columns: list[Any]) -> dict[tuple[Any, ...], np.ndarray]:
    """The positions of the rows of each combination of `columns` (one list per column), in order, the
    combinations in order of first appearance (`codes`): a groupby without pandas' cost per group (the
    forecasts' models are built many times over small tables)."""
    code, keys = codes(*columns)
    rows = np.argsort(code, kind="stable")  # by combination, each one's rows in order
    return dict(zip(keys, np.split(rows, np.cumsum(np.bincount(code, minlength=len(keys)))[:-1])))


def codes(*columns: list[Any]) -> tuple[np.ndarray, list[tuple[Any, ...]]]:
    """Integer codes of the rows' combinations of `columns`, numbered in order of first appearance, and those
    combinations."""
    index: dict[tuple[Any, ...], int] = {}
    codes = np.array([index.setdefault(key, len(index)) for key in zip(*columns)], dtype=int)
    return codes, list(index)
