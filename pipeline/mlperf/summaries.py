"""The round's own summary as a check: where a round ships the official summarizer's scores (a submitter's
`summary.json`, as v6.0 does, or a `summary.csv`, per submitter or for the round), ingest compares its scores with
them, with no summarizer run.

The summarizer writes one record per system (`summaries.to_json(orient="records")`, the columns of its CSV): the
benchmarks' scores in minutes stand between `private_id` and `details_url`, and `details_url` ends in
`<submitter>/systems/<system>.json`, the key of our results with the benchmark's folder name. A score agrees when
it equals ours to AGREE_RELATIVE (the summary's floats are printed from the same float64 arithmetic).
"""
from __future__ import annotations

import csv
import io
import json
import math
import re
from typing import Any

import pandas as pd

# <submitter>/summary.json (or .csv), or summary.json at the round's top.
SUMMARY_PATH = re.compile(r"(?:[^/]+/)?summary\.(?P<format>json|csv)")
DETAILS_URL = re.compile(r"(?P<submitter>[^/]+)/systems/(?P<system>[^/]+)\.json$")
AGREE_RELATIVE = 1e-9
SHIPPED_COLUMNS = ["round", "submitter", "system", "benchmark", "shipped_min", "path"]


def read_summary(round_: str, path: str, data: bytes) -> list[dict[str, Any]]:
    """The scores of one shipped summary file (rows of SHIPPED_COLUMNS); none from a file that is not one."""
    match = SUMMARY_PATH.fullmatch(path)
    if match is None:
        return []
    text = data.decode("utf-8", errors="replace")
    try:
        records = json.loads(text) if match["format"] == "json" else list(csv.DictReader(io.StringIO(text)))
    except json.JSONDecodeError:
        return []
    rows = []
    for record in records if isinstance(records, list) else []:
        if not isinstance(record, dict) or "details_url" not in record or "private_id" not in record:
            continue
        key = DETAILS_URL.search(str(record["details_url"]))
        names = list(record)
        if key is None:
            continue
        for benchmark in names[names.index("private_id") + 1: names.index("details_url")]:
            score = _number(record[benchmark])
            if score is not None:
                rows.append({"round": round_, "submitter": key["submitter"], "system": key["system"],
                             "benchmark": benchmark, "shipped_min": score, "path": path})
    return rows


def _number(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def agreement(results: pd.DataFrame, shipped: pd.DataFrame) -> list[dict[str, Any]]:
    """Per round with a shipped summary: its scores, how many equal ours, how many differ (the largest relative
    difference and where), and how many we have no score for."""
    rows = []
    for round_, theirs in shipped.groupby("round", sort=True):
        ours = results[results["round"] == round_][["submitter", "system", "benchmark", "time_to_train_min"]]
        joined = theirs.merge(ours, on=["submitter", "system", "benchmark"], how="left")
        scored = joined.dropna(subset=["time_to_train_min"])
        relative = ((scored["time_to_train_min"] - scored["shipped_min"]).abs() / scored["shipped_min"]).round(12)
        differing = scored[relative > AGREE_RELATIVE]
        worst = None
        if len(differing):
            at = relative[relative > AGREE_RELATIVE].idxmax()
            row = scored.loc[at]
            worst = {"submitter": row["submitter"], "system": row["system"], "benchmark": row["benchmark"],
                     "ours_min": round(float(row["time_to_train_min"]), 6),
                     "shipped_min": round(float(row["shipped_min"]), 6),
                     "relative": round(float(relative.loc[at]), 6)}
        rows.append({"round": str(round_), "shipped": len(joined), "equal": int(len(scored) - len(differing)),
                     "differing": len(differing), "largest_difference": worst,
                     "not_scored_here": int(len(joined) - len(scored)),
                     "files": sorted(set(theirs["path"]))})
    return rows
