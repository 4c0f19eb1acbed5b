"""The efficiency metrics of the configurations table (defined here; explained in docs/methods.md and in the report).

They compare a result with others of its scaling series or its round, so they depend on which results count: the
features stage computes them over every published result (`pipeline.analysis.configurations`), and
`pipeline.analysis.scope.in_scope` again without the republished ones when the analysis leaves those out. The work
columns they split scaling efficiency with, `samples_to_converge` and `epochs_to_converge`, are medians over a
result's converged runs (`pipeline.analysis.configurations`).

- `accelerator_hours` = accelerator_count x time_to_train_min / 60: the hardware time a result consumed.
- `series`: the scaling series of a result, "round/benchmark/division/submitter/family/form factor/framework/
  host CPU/accelerator memory": results of one system model (the same node: host CPU model and accelerator
  memory, `SYSTEM_MODEL`) that differ only in accelerator count (`SERIES_KEY`). Missing when the family or count
  is unknown. Without the system model a series mixed servers: H3C's v2.0 A100 PCIe "series" ran from a 1-card
  R4900 G5 (396 min) to 8-card R5300 G5s, 1.6 times "superlinear".
- `speedup` = t_base / t within the series, where t_base is the best time at the series' smallest
  multi-accelerator count (base_count, at least `MIN_BASE_COUNT`): a single accelerator communicates with
  nothing, so scaling from it charges the first interconnect to every larger member. Missing for a result alone
  in its series, in a series of one multi-accelerator count, and for a member below the base (a single
  accelerator): there is nothing like-for-like to scale against.
- `scaling_efficiency` = speedup / (accelerator_count / base_count): 1 is ideal linear scaling, below 1 is
  sublinear; above 1 (superlinear within the series) happens when the larger member also changed what the key
  does not see (nodes, interconnect, batch size).
- `round_efficiency` = the fewest accelerator-hours of any result of the same benchmark, round and
  division / this result's accelerator-hours: 1 is the most hardware-efficient result of its round, 0.5 used
  twice its hardware time. It compares submitters fairly within a round. A group of results (a cluster) is the
  more hardware-efficient the higher its median round efficiency (`order_by_efficiency`).
- `throughput_per_accelerator` = median training throughput of the result's converged runs (samples/s, see
  `pipeline.mlperf.logs.logparse.RunFacts.throughput_samples_per_s`) / accelerator_count.
- Within a series, scaling efficiency splits into two factors against the series' base result (the best time at
  base_count). `convergence_work_ratio` = samples_to_converge / the base's where both logs state samples, else
  epochs_to_converge / the base's (the training set is the same, so the ratio of epochs is the ratio of
  samples): the work the larger member needed to reach the target, below 1 when its batch size or other
  hyperparameters converged in fewer samples. `throughput_scaling` = (work / time to train / accelerators) over
  the base's: the training work per accelerator-minute, evaluation included, relative to the base. Hence
      scaling_efficiency = throughput_scaling / convergence_work_ratio,
  exactly by this definition, in which the work is the median over the runs and the time the official olympic
  mean (times the scaling factor, where scaling.json gives one). The ingest's `throughput_samples_per_s` is not
  used for the split: it multiplies epochs by the log's `train_samples`, which RetinaNet logs state in steps per
  epoch (the training set over the batch size) and some Mask R-CNN logs in other units, so it is not comparable
  between batch sizes (up to 10x off within a RetinaNet series); where `train_samples` is the training set's size
  (ResNet-50, SSD, RNN-T, the LLMs), the two throughputs' scaling agrees within 3% (tests/analysis/test_analysis.py).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.core.features import ROUND_EFFICIENCY

# The system model a series holds: the node's host CPU and its accelerators' memory (the same family in another
# server or memory size is another system). Read where present ("-" where a frame lacks them).
SYSTEM_MODEL = ["host_cpu_model", "accelerator_memory_gib"]
# A scaling series: one round, benchmark, division, submitter, accelerator family and form factor, software stack
# and system model; its members differ only in accelerator count.
SERIES_KEY = ["round", "benchmark", "division", "submitter", "accelerator_family", "accelerator_form_factor",
              "framework", *SYSTEM_MODEL]
# A series' base is its smallest member with at least this many accelerators (like for like: both communicate).
MIN_BASE_COUNT = 2
# The results a round-relative metric compares: the same benchmark, round and division.
ROUND_GROUP = ["round", "benchmark", "division"]


def series_ids(configurations: pd.DataFrame) -> pd.Series:
    """The scaling series of each row ("/"-joined `SERIES_KEY`, "-" for a missing part such as an unstated
    framework or a `SYSTEM_MODEL` column the frame lacks), or None where the accelerator family or count is
    unknown."""
    usable = configurations["accelerator_count"].notna() & configurations["accelerator_family"].notna()
    parts = configurations.reindex(columns=SERIES_KEY).astype(object)
    parts = parts.where(parts.notna(), "-").astype(str)
    # Joined a column at a time (row-wise agg builds a Series per row: most of this function's time).
    ids = pd.Series(["/".join(row) for row in zip(*(parts[key].tolist() for key in SERIES_KEY))],
                    index=configurations.index, dtype=object)
    return ids.where(usable, None).astype(object)



def efficiency_metrics(configurations: pd.DataFrame) -> pd.DataFrame:
    """Add `series`, accelerator-hours, speed-up and scaling efficiency within the series with its split into
    throughput scaling and convergence work ratio, round-relative accelerator-hours and throughput per
    accelerator (see the module docstring for the definitions).

    Needs the columns of `SERIES_KEY` but `SYSTEM_MODEL`, `accelerator_count`, `time_to_train_min` (minutes) and
    `throughput_samples_per_s`, and reads `samples_to_converge` and `epochs_to_converge` where present (missing
    where not) and `system` (ties of the base: the first name) where present; returns a copy with the metric
    columns added (or replaced), rows in the same order.
    """
    needed = [*(key for key in SERIES_KEY if key not in SYSTEM_MODEL), "accelerator_count", "time_to_train_min",
              "throughput_samples_per_s"]
    missing = sorted(set(needed) - set(configurations.columns))
    if missing:
        raise ValueError(f"efficiency_metrics needs the columns {missing}")
    frame = configurations.copy()
    for work in ("samples_to_converge", "epochs_to_converge"):  # absent: the logs state no work
        if work not in frame:
            frame[work] = np.nan
    frame["series"] = series_ids(frame)
    frame["accelerator_hours"] = frame["accelerator_count"] * frame["time_to_train_min"] / 60.0
    frame["throughput_per_accelerator"] = frame["throughput_samples_per_s"] / frame["accelerator_count"]
    # The base of each row's series (missing where it has none), row for row: worked out on the few columns it
    # needs, not on the whole (wide) table, which is only written to.
    base = _series_bases(frame).reindex(frame["series"]).set_axis(frame.index)
    base = base.mask(frame["accelerator_count"] < base["base_count"])  # below the base
    frame["speedup"] = base["base_time"] / frame["time_to_train_min"]
    frame["scaling_efficiency"] = frame["speedup"] / (frame["accelerator_count"] / base["base_count"])
    by_samples = frame["samples_to_converge"] / base["base_samples"]
    frame["convergence_work_ratio"] = by_samples.where(by_samples.notna(),
                                                       frame["epochs_to_converge"] / base["base_epochs"])
    frame["throughput_scaling"] = frame["scaling_efficiency"] * frame["convergence_work_ratio"]
    best_hours = frame.groupby(ROUND_GROUP, dropna=False)["accelerator_hours"].transform("min")
    frame["round_efficiency"] = best_hours / frame["accelerator_hours"]
    return frame


def _series_bases(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per scaling series that has a base: its count, time to train (minutes) and work (samples and
    epochs, missing where not positive), as columns base_count, base_time, base_samples and base_epochs,
    indexed by series id. Reads `series`, `accelerator_count`, `time_to_train_min`, the work columns and
    `system` where present."""
    order = ["series", "accelerator_count", "time_to_train_min", *(["system"] if "system" in frame else [])]
    in_series = frame.loc[frame["series"].notna() & (frame["accelerator_count"] >= MIN_BASE_COUNT),
                          [*order, "samples_to_converge", "epochs_to_converge"]]
    # The best time at the smallest multi-accelerator count (ties: the first system name).
    base = (in_series.sort_values(order, kind="mergesort")
            .groupby("series").head(1).set_index("series")  # the base row whole (first() skips missing values)
            [["accelerator_count", "time_to_train_min", "samples_to_converge", "epochs_to_converge"]]
            .set_axis(["base_count", "base_time", "base_samples", "base_epochs"], axis=1))
    counts = in_series.groupby("series")["accelerator_count"].nunique()
    base = base[counts.reindex(base.index) > 1]  # one multi-accelerator count: nothing to scale against
    base[["base_samples", "base_epochs"]] = base[["base_samples", "base_epochs"]].where(
        base[["base_samples", "base_epochs"]] > 0)  # no work stated: no ratio
    return base


def efficiency_column(frame: pd.DataFrame) -> str:
    """What groups of results are ordered by: round efficiency when the frame has any, else accelerator-hours."""
    known = ROUND_EFFICIENCY in frame and frame[ROUND_EFFICIENCY].notna().any()
    return ROUND_EFFICIENCY if known else "accelerator_hours"


def order_by_efficiency(frame: pd.DataFrame, labels: np.ndarray | pd.Series) -> np.ndarray:
    """Groups numbered 0..k-1 from the most hardware-efficient: the highest median round efficiency (ties: the
    faster median time to train); without round efficiency, the lowest median accelerator-hours. One group label
    per row of `frame` in, the new label of each row out (group 0 holds the most hardware-efficient rows)."""
    column = efficiency_column(frame)
    labels = np.asarray(labels)
    medians = frame.assign(label=labels).groupby("label")[[column, "time_to_train_min"]].median()
    order = medians.sort_values([column, "time_to_train_min"],
                                ascending=[column == "accelerator_hours", True], kind="mergesort").index
    mapping = {old: new for new, old in enumerate(order)}
    return np.array([mapping[label] for label in labels])
