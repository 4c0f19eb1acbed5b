"""The configurations table: one row per scored result, with its hardware features and efficiency metrics.

Efficiency metrics (defined here, in README.md and in the report):
- `accelerator_hours` = accelerator_count x time_to_train_min / 60: the hardware time a result consumed.
- `series`: the scaling series of a result, "round/benchmark/division/submitter/family/form factor/framework":
  results that differ only in accelerator count (`SERIES_KEY`). Missing when the family or count is unknown.
- `speedup` = t_base / t within the series, where t_base is the best time at the series' smallest accelerator
  count (base_count). Missing for a result alone in its series or in a series of one accelerator count: there
  is nothing to scale against.
- `scaling_efficiency` = speedup / (accelerator_count / base_count): 1 is ideal linear scaling, below 1 is
  sublinear; above 1 (superlinear within the series) happens when the larger member also changed what the key
  does not see (nodes, interconnect, batch size).
- `relative_accelerator_hours` = the fewest accelerator-hours of any result of the same benchmark, round and
  division / this result's accelerator-hours: 1 is the most hardware-efficient result of its round, 0.5 used
  twice its hardware time. It compares submitters fairly within a round.
- `throughput_per_accelerator` = median training throughput of the result's converged runs (samples/s, see
  `pipeline.mlperf.logparse.RunFacts.throughput_samples_per_s`) / accelerator_count.

Divisions are "closed" or "open" whatever the spelling of the description (v1.0 PCL writes "close", see
`DIVISION_SPELLINGS`).

Hardware features come from `pipeline.mlperf.description`.
"""
from __future__ import annotations

import pandas as pd

from pipeline.core import schemas
from pipeline.mlperf import hardware
from pipeline.mlperf.description import hardware_features

# A scaling series: one round, benchmark, division, submitter, accelerator family and form factor and software
# stack; its members differ only in accelerator count.
SERIES_KEY = ["round", "benchmark", "division", "submitter", "accelerator_family", "accelerator_form_factor",
              "framework"]
# The results a round-relative metric compares: the same benchmark, round and division.
ROUND_GROUP = ["round", "benchmark", "division"]
# Division spellings of published descriptions, lower-cased by the ingest: v1.0 PCL writes "close". Any other
# value is kept as written, so a new spelling shows in the report's Division column instead of vanishing.
DIVISION_SPELLINGS = {"close": "closed", "closed": "closed", "open": "open"}


def normalise_division(division: pd.Series) -> pd.Series:
    """"closed" or "open" for every spelling of DIVISION_SPELLINGS (case and spaces aside), other values as
    they are, missing ones missing."""
    def one(value: object) -> object:
        if hardware.is_missing(value):
            return None
        return DIVISION_SPELLINGS.get(str(value).strip().lower(), value)

    return division.map(one).astype(object)


def series_ids(configurations: pd.DataFrame) -> pd.Series:
    """The scaling series of each row ("/"-joined `SERIES_KEY`, "-" for a missing part such as an unstated
    framework), or None where the accelerator family or count is unknown."""
    usable = configurations["accelerator_count"].notna() & configurations["accelerator_family"].notna()
    parts = configurations[SERIES_KEY].astype(object).where(configurations[SERIES_KEY].notna(), "-").astype(str)
    ids = parts.agg("/".join, axis=1) if len(parts) else pd.Series([], dtype=object, index=configurations.index)
    return ids.where(usable, None).astype(object)


def efficiency_metrics(configurations: pd.DataFrame) -> pd.DataFrame:
    """Add `series`, accelerator-hours, speed-up and scaling efficiency within the series, round-relative
    accelerator-hours and throughput per accelerator (see the module docstring for the definitions).

    Needs the columns of `SERIES_KEY`, `accelerator_count`, `time_to_train_min` (minutes) and
    `throughput_samples_per_s`; returns a copy with the metric columns added, rows in the same order.
    """
    missing = sorted(set([*SERIES_KEY, "accelerator_count", "time_to_train_min", "throughput_samples_per_s"])
                     - set(configurations.columns))
    if missing:
        raise ValueError(f"efficiency_metrics needs the columns {missing}")
    frame = configurations.copy()
    frame["series"] = series_ids(frame)
    frame["accelerator_hours"] = frame["accelerator_count"] * frame["time_to_train_min"] / 60.0
    in_series = frame[frame["series"].notna()]
    smallest = in_series.groupby("series")["accelerator_count"].transform("min")
    base = (in_series[in_series["accelerator_count"] == smallest].groupby("series")
            .agg(base_count=("accelerator_count", "first"), base_time=("time_to_train_min", "min")))
    counts = in_series.groupby("series")["accelerator_count"].nunique()
    base = base[counts.reindex(base.index) > 1]  # one accelerator count: nothing to scale against
    frame = frame.join(base, on="series")
    frame["speedup"] = frame["base_time"] / frame["time_to_train_min"]
    frame["scaling_efficiency"] = frame["speedup"] / (frame["accelerator_count"] / frame["base_count"])
    best_hours = frame.groupby(ROUND_GROUP, dropna=False)["accelerator_hours"].transform("min")
    frame["relative_accelerator_hours"] = best_hours / frame["accelerator_hours"]
    frame["throughput_per_accelerator"] = frame["throughput_samples_per_s"] / frame["accelerator_count"]
    return frame.drop(columns=["base_count", "base_time"])


def build_configurations(systems: pd.DataFrame, results: pd.DataFrame,
                         runs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Scored results of catalogued benchmarks joined with their system's hardware features, and the notes on
    description values that became missing (see `drop_implausible`)."""
    scored = results[results["time_to_train_min"].notna() & results["benchmark_id"].notna()]
    throughput = (runs[runs["converged"]].groupby(["round", "submitter", "system", "benchmark"])
                  ["throughput_samples_per_s"].median().rename("throughput_samples_per_s"))
    frame = scored.rename(columns={"benchmark": "benchmark_folder", "benchmark_id": "benchmark"})
    # Before the efficiency baselines, which are per division: "close" results would otherwise form their own.
    frame = frame.assign(division=normalise_division(frame["division"]))
    frame = frame.join(throughput, on=["round", "submitter", "system", "benchmark_folder"])
    described, notes = hardware_features(systems)
    frame = frame.merge(described, on=["round", "submitter", "system"], how="inner", validate="many_to_one")
    frame = efficiency_metrics(frame)
    frame = frame[schemas.CONFIGURATION_COLUMNS].sort_values(["benchmark", "round", "submitter", "system"])
    return schemas.validate_configurations(frame.reset_index(drop=True)), notes
