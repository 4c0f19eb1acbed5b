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
- `samples_to_converge`, `epochs_to_converge` = medians over the result's converged runs of the log's
  samples_count and epoch_num at run_stop (or at the last evaluation): the training work done to reach the
  target. epoch_num counts passes over the training set for most benchmarks and samples for BERT and GPT-3 (they
  log a sample counter under that key); within one benchmark and software stack it counts the same thing.
- Within a series, scaling efficiency splits into two factors against the series' base result (the best time at
  base_count). `convergence_work_ratio` = samples_to_converge / the base's where both logs state samples, else
  epochs_to_converge / the base's (the training set is the same, so the ratio of epochs is the ratio of
  samples): the work the larger member needed to reach the target, below 1 when its batch size or other
  hyperparameters converged in fewer samples. `throughput_scaling` = (work / time to train / accelerators) over
  the base's: the training work per accelerator-minute, evaluation included, relative to the base. Hence
      scaling_efficiency = throughput_scaling / convergence_work_ratio,
  exactly by this definition, in which the work is the median over the runs and the time the official olympic
  mean (times the scaling factor, where scaling.json gives one). The ingest's `throughput_samples_per_s` is not
  used for the split: it multiplies epochs by the log's `train_samples`, which RetinaNet and SSD logs (and some
  Mask R-CNN ones) state in steps per epoch, so it is not comparable between batch sizes; where `train_samples`
  is the training set's size (ResNet-50), the two throughputs agree (tests/test_analysis.py measures it).
- `republished_of`: "vX.Y/submitter/system" of the earliest result of an earlier round that this one repeats
  (same benchmark, division, accelerator family and count, time to train equal within a relative
  `REPUBLISHED_TOLERANCE`, whatever the submitter's or system's spelling: MLCommons publishes some results again
  in a later round, often with newer software in the system name); None for an original. The metrics above
  count every published result; `pipeline.analysis.scope.in_scope` recomputes them without the republished ones
  when the analysis leaves them out (params `analysis.republished`).

Divisions are "closed" or "open" whatever the spelling of the description (v1.0 PCL writes "close", see
`DIVISION_SPELLINGS`).

Hardware features come from `pipeline.mlperf.description`, availability categories from
`pipeline.mlperf.availability`. Every scored result of a catalogued benchmark is a row: a result whose system
description is missing keeps missing hardware values and a note (`description_notes`), and a results folder
published under another name than its description takes the description `pipeline.mlperf.system_aliases` names.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.core import schemas
from pipeline.mlperf import availability, hardware
from pipeline.mlperf.catalogue import round_version
from pipeline.mlperf.description import NOTE_COLUMNS, hardware_features
from pipeline.mlperf.system_aliases import alias_of, description_names

# A scaling series: one round, benchmark, division, submitter, accelerator family and form factor and software
# stack; its members differ only in accelerator count.
SERIES_KEY = ["round", "benchmark", "division", "submitter", "accelerator_family", "accelerator_form_factor",
              "framework"]
# The results a round-relative metric compares: the same benchmark, round and division.
ROUND_GROUP = ["round", "benchmark", "division"]
# Division spellings of published descriptions, lower-cased by the ingest: v1.0 PCL writes "close". Any other
# value is kept as written, so a new spelling shows in the report's Division column instead of vanishing.
DIVISION_SPELLINGS = {"close": "closed", "closed": "closed", "open": "open"}
# Two results' times to train are the same measurement when they differ by at most this, relatively.
REPUBLISHED_TOLERANCE = 1e-9
# What a republished result shares with the one it repeats, besides the time to train.
REPUBLISHED_KEY = ["benchmark", "division", "accelerator_family", "accelerator_count"]
RUN_KEY = ["round", "submitter", "system", "benchmark"]


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


def result_names(frame: pd.DataFrame) -> pd.Series:
    """"round/submitter/system" of each row."""
    if frame.empty:
        return pd.Series([], dtype=object, index=frame.index)
    return (frame["round"].astype(str) + "/" + frame["submitter"].astype(str) + "/"
            + frame["system"].astype(str)).astype(object)


def republished_of(configurations: pd.DataFrame) -> pd.Series:
    """For each result that repeats a result of an earlier round, the "round/submitter/system" of the earliest one
    it repeats (see the module docstring); None for an original and where the family, count or time is unknown.

    Needs `round, submitter, system, time_to_train_min` (minutes) and the columns of `REPUBLISHED_KEY`. Of
    several earlier results, the earliest round wins, then the submitter and system in alphabetical order.
    """
    marks = pd.Series([None] * len(configurations), index=configurations.index, dtype=object)
    usable = configurations.dropna(subset=["accelerator_family", "accelerator_count", "time_to_train_min"])
    if usable.empty:
        return marks
    versions = usable["round"].map(lambda name: round_version(name)[0] * 1000 + round_version(name)[1])
    usable = usable.assign(_version=versions).sort_values(["_version", "submitter", "system"], kind="mergesort")
    names = result_names(usable)
    for _, rows in usable.groupby(REPUBLISHED_KEY, dropna=False, sort=False).indices.items():
        version = usable["_version"].to_numpy()[rows]
        minutes = usable["time_to_train_min"].to_numpy(dtype=float)[rows]
        for position in range(len(rows)):
            same = np.abs(minutes - minutes[position]) <= REPUBLISHED_TOLERANCE * np.maximum(minutes,
                                                                                              minutes[position])
            earlier = np.flatnonzero(same & (version < version[position]))
            if len(earlier):
                marks.at[usable.index[rows[position]]] = names.iloc[rows[earlier[0]]]
    return marks


def run_medians(runs: pd.DataFrame) -> pd.DataFrame:
    """Per result (index `RUN_KEY`, benchmark the results folder), the medians over its converged runs of the
    throughput (`throughput_samples_per_s`, samples/s), `samples_to_converge` and `epochs_to_converge`."""
    columns = ["throughput_samples_per_s", "samples_to_converge", "epochs_to_converge"]
    return runs[runs["converged"]].groupby(RUN_KEY)[columns].median()


def efficiency_metrics(configurations: pd.DataFrame) -> pd.DataFrame:
    """Add `series`, accelerator-hours, speed-up and scaling efficiency within the series with its split into
    throughput scaling and convergence work ratio, round-relative accelerator-hours and throughput per
    accelerator (see the module docstring for the definitions).

    Needs the columns of `SERIES_KEY`, `system`, `accelerator_count`, `time_to_train_min` (minutes),
    `throughput_samples_per_s`, `samples_to_converge` and `epochs_to_converge`; returns a copy with the metric
    columns added (or replaced), rows in the same order.
    """
    needed = [*SERIES_KEY, "system", "accelerator_count", "time_to_train_min", "throughput_samples_per_s",
              "samples_to_converge", "epochs_to_converge"]
    missing = sorted(set(needed) - set(configurations.columns))
    if missing:
        raise ValueError(f"efficiency_metrics needs the columns {missing}")
    frame = configurations.copy()
    frame["series"] = series_ids(frame)
    frame["accelerator_hours"] = frame["accelerator_count"] * frame["time_to_train_min"] / 60.0
    frame["throughput_per_accelerator"] = frame["throughput_samples_per_s"] / frame["accelerator_count"]
    in_series = frame[frame["series"].notna()]
    # The base of a series: the best time at its smallest count (ties: the first system name).
    base = (in_series.sort_values(["series", "accelerator_count", "time_to_train_min", "system"], kind="mergesort")
            .groupby("series").first()
            [["accelerator_count", "time_to_train_min", "samples_to_converge", "epochs_to_converge"]]
            .set_axis(["base_count", "base_time", "base_samples", "base_epochs"], axis=1))
    counts = in_series.groupby("series")["accelerator_count"].nunique()
    base = base[counts.reindex(base.index) > 1]  # one accelerator count: nothing to scale against
    base[["base_samples", "base_epochs"]] = base[["base_samples", "base_epochs"]].where(
        base[["base_samples", "base_epochs"]] > 0)  # no work stated: no ratio
    frame = frame.join(base, on="series")
    frame["speedup"] = frame["base_time"] / frame["time_to_train_min"]
    frame["scaling_efficiency"] = frame["speedup"] / (frame["accelerator_count"] / frame["base_count"])
    by_samples = frame["samples_to_converge"] / frame["base_samples"]
    frame["convergence_work_ratio"] = by_samples.where(by_samples.notna(),
                                                       frame["epochs_to_converge"] / frame["base_epochs"])
    frame["throughput_scaling"] = frame["scaling_efficiency"] * frame["convergence_work_ratio"]
    best_hours = frame.groupby(ROUND_GROUP, dropna=False)["accelerator_hours"].transform("min")
    frame["relative_accelerator_hours"] = best_hours / frame["accelerator_hours"]
    return frame.drop(columns=["base_count", "base_time", "base_samples", "base_epochs"])


def description_notes(frame: pd.DataFrame, described: pd.Series) -> pd.DataFrame:
    """Notes (columns `NOTE_COLUMNS`) on results whose hardware comes from a description of another name
    (`pipeline.mlperf.system_aliases`), and on results without a description (`described` False): their row is
    kept with missing hardware values. One note per system, whatever its number of benchmarks."""
    notes = []
    for (round_, submitter, system, description), found in zip(
            frame[["round", "submitter", "system", "description"]].itertuples(index=False, name=None), described):
        alias = alias_of(round_, submitter, system)
        if not found:
            reason = ("no system description of this name (see quarantine.csv): the result is kept, its hardware "
                      "values are missing")
        elif alias is not None:
            reason = f"results folder named differently from its description; hardware from it: {alias.evidence}"
        else:
            continue
        notes.append({"round": round_, "submitter": submitter, "system": system, "field": "system description",
                      "value": f"{submitter}/systems/{description}.json", "reason": reason})
    return pd.DataFrame(notes, columns=NOTE_COLUMNS).drop_duplicates()


def availability_notes(systems: pd.DataFrame) -> pd.DataFrame:
    """Notes (columns `NOTE_COLUMNS`) on descriptions whose `status` is no known availability spelling: their
    availability is missing (`pipeline.mlperf.availability`)."""
    status = systems["status"] if "status" in systems else pd.Series([None] * len(systems), index=systems.index)
    unknown = availability.unknown_spellings(status)
    return pd.DataFrame({
        "round": systems.loc[unknown, "round"], "submitter": systems.loc[unknown, "submitter"],
        "system": systems.loc[unknown, "system"], "field": "status", "value": status[unknown],
        "reason": (f"not an availability category ({', '.join(availability.OFFICIAL_NAMES.values())}) in any "
                   "known spelling: treated as missing")}, columns=NOTE_COLUMNS)


def build_configurations(systems: pd.DataFrame, results: pd.DataFrame,
                         runs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every scored result of a catalogued benchmark with its system's hardware features, its runs' medians
    and the efficiency metrics, one row each; and the notes (columns `NOTE_COLUMNS`) on description values that
    became missing (see `pipeline.mlperf.description.drop_implausible`), on unknown availability spellings and
    on results whose description is missing or named otherwise."""
    scored = results[results["time_to_train_min"].notna() & results["benchmark_id"].notna()]
    frame = scored.rename(columns={"benchmark": "benchmark_folder", "benchmark_id": "benchmark"})
    # Before the efficiency baselines, which are per division: "close" results would otherwise form their own.
    frame = frame.assign(division=normalise_division(frame["division"]))
    frame = frame.join(run_medians(runs), on=["round", "submitter", "system", "benchmark_folder"])
    described, notes = hardware_features(systems)
    frame = frame.assign(description=description_names(frame))
    frame = frame.merge(described.rename(columns={"system": "description"}), on=["round", "submitter", "description"],
                        how="left", validate="many_to_one", indicator="_described")
    notes = pd.concat([notes, availability_notes(systems),
                       description_notes(frame, frame["_described"] == "both")], ignore_index=True)
    notes = notes.sort_values(["round", "submitter", "system", "field", "reason"], kind="mergesort")
    frame = frame.assign(republished_of=republished_of(frame))
    frame = efficiency_metrics(frame)
    frame = frame[schemas.CONFIGURATION_COLUMNS].sort_values(["benchmark", "round", "submitter", "system"])
    return schemas.validate_configurations(frame.reset_index(drop=True)), notes.reset_index(drop=True)
