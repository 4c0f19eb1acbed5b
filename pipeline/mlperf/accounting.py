"""The ingest's accounting: every file of a round is counted where its kind counts, and every file or record that
could not be used gets a quarantine row saying why (columns `pipeline.core.schemas.QUARANTINE_COLUMNS`).
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from pathlib import PurePosixPath

import pandas as pd

from pipeline.core import schemas
from pipeline.mlperf.sources import LOG_NAME, Kind

SYSTEM_QUARANTINED = "system_quarantined"

# Files of the repository around the inputs (a clone's benchmark code and docs: tens of thousands in a full clone),
# counted in the tally under this key and not listed one by one in the quarantine list.
REPOSITORY_FILE = "repository"
# Where the rules put a submitter's inputs: <submitter>/systems/ and <submitter>/results/.
INPUT_FOLDERS = ("systems", "results")

def is_repository_file(path: str) -> bool:
    """A file outside every <submitter>/systems/ and <submitter>/results/ folder (code, docs, licences), unless
    its name says it could be a misplaced input (a result log) or a leftover of an interrupted copy (hidden):
    those stay in the quarantine list, one row each."""
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    outside = len(parts) < 3 or parts[1] not in INPUT_FOLDERS
    return outside and not name.startswith(".") and not LOG_NAME.fullmatch(name)


def not_an_input(path: str) -> str:
    """Why the file at `path` (relative to the round's folder) is not read: the reason the file accounting prints for
    it."""
    name = PurePosixPath(path).name
    if name.startswith("."):
        return "hidden or temporary file (such as one left by an interrupted copy): not an input, ignored"
    if LOG_NAME.fullmatch(name):
        return ("result log is not at <submitter>/results/<system>/<benchmark>/result_<run>.txt, where the rules "
                "put logs: not read")
    return "not a system description, result log, scaling.json or power log: not an input, ignored"


def orphans(systems: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Results folders with no system description, and descriptions with no results: each gets a row."""
    described = set(systems[["round", "submitter", "system"]].itertuples(index=False, name=None))
    scored = set(results[["round", "submitter", "system"]].itertuples(index=False, name=None))
    rows = [{"round": r, "path": f"{s}/systems/{y}.json",
             "reason": "results folder has no usable system description (missing or quarantined): scored, but "
                       "without hardware features"}
            for r, s, y in sorted(scored - described)]
    rows += [{"round": r, "path": f"{s}/results/{y}/",
              "reason": "system description has no results folder: nothing to score"}
             for r, s, y in sorted(described - scored)]
    return pd.DataFrame(rows, columns=schemas.QUARANTINE_COLUMNS)


def result_problems(results: pd.DataFrame) -> pd.DataFrame:
    """A row for each results folder of an unknown benchmark or with fewer runs than the rules require, and for
    each with power logs but no energy to train."""
    rows = []
    for result in results.itertuples(index=False):
        path = f"{result.submitter}/results/{result.system}/{result.benchmark}/"
        if pd.isna(result.benchmark_id):
            reason = ("unknown benchmark: the folder name is not in the catalogue (pipeline/mlperf/catalogue.py) for "
                      "this round: scored, but not analysed")
        elif result.n_runs == 0:
            reason = "results folder holds no result logs (the published logs are absent): not scored"
        elif not result.complete:
            done = "scored from the runs present" if not math.isnan(result.time_to_train_min) else "not scored"
            reason = f"results folder holds fewer result logs than the rules require: {done}"
        else:
            reason = None
        if reason is not None:
            rows.append({"round": result.round, "path": path, "reason": reason})
        if not math.isnan(result.power_nodes) and math.isnan(result.energy_j):
            rows.append({"round": result.round, "path": f"{path}power/",
                         "reason": "result has power logs but no energy to train: a run its olympic mean keeps has "
                                   "no power logs, or logs no energy can be computed from"})
    return pd.DataFrame(rows, columns=schemas.QUARANTINE_COLUMNS)


def tally(files: Mapping[str, Counter[str]], systems: pd.DataFrame, runs: pd.DataFrame, results: pd.DataFrame,
          quarantine: pd.DataFrame) -> pd.DataFrame:
    """The file accounting per round (columns `pipeline.core.columns.TALLY`), from the files counted by kind while each
    round was read (`files`: round -> count per `Kind` value, `SYSTEM_QUARANTINED` and `REPOSITORY_FILE`) and
    the tables made from them."""
    rows = []
    for round_, counted in files.items():
        rows.append({
            "round": round_,
            "log_files": counted[Kind.LOG.value],
            "runs": int((runs["round"] == round_).sum()),
            "system_files": counted[Kind.SYSTEM.value],
            "systems": int((systems["round"] == round_).sum()),
            "systems_quarantined": counted[SYSTEM_QUARANTINED],
            "results": int((results["round"] == round_).sum()),
            "scored": int(results.loc[results["round"] == round_, "time_to_train_min"].notna().sum()),
            "other_files": counted[Kind.OTHER.value] - counted[REPOSITORY_FILE],
            "repository_files": counted[REPOSITORY_FILE],
            "quarantined": int((quarantine["round"] == round_).sum()),
            "power_files": counted[Kind.POWER.value],
            "config_files": counted[Kind.CONFIG.value],
        })
    return pd.DataFrame(rows)


def format_tally(tally: pd.DataFrame) -> str:
    """The tally as the ingest prints it: one line per round, with whether its logs and descriptions add up."""
    lines = ["round   logs = runs   systems json = parsed + quarantined   results (scored)   other files   "
             "repository files (code/docs, not inputs)   launch configurations"]
    for row in tally.itertuples(index=False):
        ok = "ok" if row.log_files == row.runs and row.system_files == row.systems + row.systems_quarantined \
            else "MISMATCH"
        lines.append(f"{row.round:<7} {row.log_files:>5} = {row.runs:<5}  {row.system_files:>5} = {row.systems:>4} + "
                     f"{row.systems_quarantined:<4} {ok:>14}   {row.results:>6} ({row.scored:>5})   "
                     f"{row.other_files:>6}        {row.repository_files:>6}{row.config_files:>38}")
    return "\n".join(lines)

