"""The configurations table: one row per scored result, with its hardware features and efficiency metrics.

The efficiency metrics (`series`, accelerator-hours, speed-up, scaling efficiency and its split into throughput
scaling and convergence work ratio, round-relative accelerator-hours, throughput per accelerator) are defined in
`pipeline.analysis.efficiency`. Besides them, per result:
- `throughput_samples_per_s`: the median over its converged runs of the ingest's throughput
  (`pipeline.mlperf.logs.logparse.RunFacts.throughput_samples_per_s`).
- `samples_to_converge`, `epochs_to_converge` = medians over the result's converged runs of the log's
  samples_count and epoch_num at run_stop (or at the last evaluation): the training work done to reach the
  target. epoch_num counts passes over the training set for most benchmarks and samples for BERT and GPT-3 (they
  log a sample counter under that key); within one benchmark and software stack it counts the same thing.
- `republished_of`: "vX.Y/submitter/system" of the earliest result of an earlier round that this one repeats
  (same benchmark, division, accelerator family and count, time to train equal within a relative
  `REPUBLISHED_TOLERANCE`, whatever the submitter's or system's spelling: MLCommons publishes some results again
  in a later round, often with newer software in the system name); None for an original. The metrics above
  count every published result; `pipeline.analysis.scope.in_scope` recomputes them without the republished ones
  when the analysis leaves them out (params `analysis.republished`); `pipeline.analysis.scope.republication`
  names them.

Energy to train where MLPerf measured it, the power metrics derived from it, and `same_runs_as` (a result that
publishes the same runs as another of its round, such as v4.0's AC and DC measurements of the same Sustainable
Metal Cloud runs) are defined in `pipeline.analysis.pricing.energy`.

Divisions are "closed" or "open" whatever the spelling of the description (v1.0 PCL writes "close", see
`DIVISION_SPELLINGS`).

Hardware features come from `pipeline.mlperf.hardware.description`, availability categories from
`pipeline.mlperf.availability`. Every scored result of a catalogued benchmark is a row: a result whose system
description is missing keeps missing hardware values and a note (`description_notes`), and a results folder
published under another name than its description takes the description `pipeline.mlperf.system_aliases` names.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.analysis.efficiency import efficiency_metrics
from pipeline.analysis.pricing.energy import energy_metrics, same_runs_as
from pipeline.analysis.pricing.energy_estimate import with_energy_estimate
from pipeline.core import schemas
from pipeline.mlperf import availability
from pipeline.mlperf.catalogue import round_version
from pipeline.mlperf.hardware import freetext
from pipeline.mlperf.hardware.description import NOTE_COLUMNS, hardware_features
from pipeline.mlperf.system_aliases import alias_of, description_names

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
        if freetext.is_missing(value):
            return None
        return DIVISION_SPELLINGS.get(str(value).strip().lower(), value)

    return division.map(one).astype(object)


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
    became missing (see `pipeline.mlperf.hardware.description.drop_implausible`), on unknown availability spellings and
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
    names = result_names(frame)
    frame = frame.assign(republished_of=republished_of(frame),
                         same_runs_as=same_runs_as(frame, REPUBLISHED_KEY, REPUBLISHED_TOLERANCE, names))
    frame = with_energy_estimate(energy_metrics(efficiency_metrics(frame), names))
    frame = frame[schemas.CONFIGURATION_COLUMNS].sort_values(["benchmark", "round", "submitter", "system"])
    return schemas.validate_configurations(frame.reset_index(drop=True)), notes.reset_index(drop=True)
