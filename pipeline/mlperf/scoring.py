"""The official score of a results folder, as `mlperf_logging.result_summarizer` computes it.

A run's time to train is run_stop - run_start in minutes; a run counts when its run_stop status is `success`; a
result is the olympic mean of its runs (drop the k fastest converged and the k - f slowest, f the number of
non-converged runs, k = 1, 4 for unet3d; no score when f > k) times `scaling_factor` from the folder's
`scaling.json`.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

import pandas as pd

from pipeline.core import schemas
from pipeline.mlperf.catalogue import identify
from pipeline.mlperf.decoding import decode_description

NESTED_NOTE = "not scored: the folder is nested below a benchmark folder, and the official summarizer ignores it"

def scaling_factor(data: bytes) -> float:
    """The positive `scaling_factor` of a scaling.json, or NaN when it has none (the result is then not scored)."""
    description, _ = decode_description(data)
    value = description.get("scaling_factor") if isinstance(description, dict) else None
    try:
        factor = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan
    return factor if math.isfinite(factor) and factor > 0 else math.nan


def olympic_score(times: Sequence[float], n_failed: int, k: int) -> float:
    """The official olympic mean of converged times (minutes); NaN when the result has no score."""
    if n_failed > k:
        return math.nan
    ordered = sorted(times)
    countable = ordered[k: len(ordered) - (k - n_failed)]
    return sum(countable) / len(countable) if countable else math.nan


def score_results(runs: pd.DataFrame, systems: pd.DataFrame,
                  scaling: dict[tuple[str, str, str, str], float]) -> pd.DataFrame:
    """One row per results folder with the official score and completeness."""
    divisions = _divisions(systems)
    # One pass over plain columns: slicing a frame per folder cost a second for a few thousand folders.
    n_runs: Counter[tuple[str, str, str, str]] = Counter()
    converged: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    logged_divisions: dict[tuple[str, str, str, str], Counter[str]] = defaultdict(Counter)
    folder_columns = [runs[column].tolist() for column in ("round", "submitter", "system", "benchmark")]
    for key, ok, minutes, division in zip(zip(*folder_columns), runs["converged"].tolist(),
                                          runs["time_to_train_min"].tolist(), runs["submission_division"].tolist()):
        n_runs[key] += 1
        if ok:
            converged[key].append(minutes)
        if isinstance(division, str):
            logged_divisions[key][division.lower()] += 1
    rows = []
    for key in sorted(set(n_runs) | set(scaling)):
        round_, submitter, system, folder = key
        benchmark = identify(round_, folder)
        k = benchmark.olympic_drop if benchmark else (4 if folder == "unet3d" else 1)
        times = converged.get(key, [])
        n_failed = n_runs[key] - len(times)
        factor = scaling.get(key, 1.0)
        nested = "/" in folder  # a folder below a benchmark folder, which the official summarizer never reads
        score = math.nan if nested else olympic_score(times, n_failed, k) * factor
        division = divisions.get((round_, submitter, system))
        if division is None and logged_divisions.get(key):
            counts = logged_divisions[key]
            division = min(counts, key=lambda name: (-counts[name], name))  # the most logged; ties: first by name
        rows.append({
            "round": round_, "submitter": submitter, "system": system, "benchmark": folder,
            "benchmark_id": benchmark.id if benchmark else None, "division": division,
            "n_runs": n_runs[key], "n_converged": len(times),
            "runs_required": benchmark.runs_required if benchmark else None,
            "complete": bool(benchmark and n_runs[key] >= benchmark.runs_required),
            "scaling_factor": factor, "time_to_train_min": score,
            "score_note": NESTED_NOTE if nested else _score_note(n_runs[key], len(times), n_failed, k, factor),
        })
    return pd.DataFrame(rows, columns=schemas.RESULT_COLUMNS)


def _score_note(n_runs: int, n_converged: int, n_failed: int, k: int, factor: float) -> str | None:
    if n_runs == 0:
        return "not scored: the folder holds no result logs (the published logs are absent)"
    if n_failed > k:
        return f"not scored: {n_failed} non-converged runs, more than the {k} the olympic rule allows"
    if math.isnan(factor):
        return "not scored: scaling.json is unreadable"
    if n_converged <= k:
        return f"not scored: {n_converged} converged runs leave none after dropping the fastest {k}"
    return None


def _divisions(systems: pd.DataFrame) -> dict[tuple[str, str, str], str]:
    divisions: dict[tuple[str, str, str], str] = {}
    for column in ("division", "divison"):  # the misspelling is in published descriptions
        if column not in systems:
            continue
        for row in systems[["round", "submitter", "system", column]].dropna().itertuples(index=False):
            divisions.setdefault((row[0], row[1], row[2]), str(row[3]).strip().lower())
    return divisions

