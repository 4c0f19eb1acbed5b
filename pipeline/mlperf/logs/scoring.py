"""The official score of a results folder, as `mlperf_logging.result_summarizer` computes it.

A run's time to train is run_stop - run_start in minutes; a run counts when its run_stop status is `success`; a
result is the olympic mean of its runs (drop the k fastest converged and the k - f slowest, f the number of
non-converged runs, k = 1, 4 for unet3d; no score when f > k) times `scaling_factor` from the folder's
`scaling.json`. A result with power logs also gets its energy to train, the olympic mean of the same runs' energies
times the same factor (`pipeline.mlperf.logs.power`).
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import pandas as pd

from pipeline.core import schemas
from pipeline.mlperf.catalogue import identify
from pipeline.mlperf.decoding import decode_description
from pipeline.mlperf.logs import power

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


def olympic_runs(times: Sequence[float], n_failed: int, k: int) -> list[int]:
    """The positions (in `times`) of the converged runs the olympic mean averages, fastest first: the k fastest
    and the k - f slowest dropped; none when the result has no score. The summarizer averages the energies of the
    same runs."""
    if n_failed > k:
        return []
    ordered = sorted(range(len(times)), key=times.__getitem__)  # stable, as the summarizer's sort
    return ordered[k: len(ordered) - (k - n_failed)]


def olympic_score(times: Sequence[float], n_failed: int, k: int) -> float:
    """The official olympic mean of converged times (minutes); NaN when the result has no score."""
    countable = [times[i] for i in olympic_runs(times, n_failed, k)]
    return sum(countable) / len(countable) if countable else math.nan


def score_results(runs: pd.DataFrame, systems: pd.DataFrame,
                  scaling: dict[tuple[str, str, str, str], float],
                  run_power: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per results folder with the official score and completeness, and the energy to train where its
    runs have power logs (`run_power`: `pipeline.mlperf.logs.power.RUN_POWER_COLUMNS`, one row per run with logs)."""
    divisions = _divisions(systems)
    power = _power_by_result(run_power, systems)
    # One pass over plain columns: slicing a frame per folder cost a second for a few thousand folders.
    n_runs: Counter[tuple[str, str, str, str]] = Counter()
    converged: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    converged_runs: dict[tuple[str, str, str, str], list[str]] = defaultdict(list)
    logged_divisions: dict[tuple[str, str, str, str], Counter[str]] = defaultdict(Counter)
    folder_columns = [runs[column].tolist() for column in ("round", "submitter", "system", "benchmark")]
    for key, run, ok, minutes, division in zip(zip(*folder_columns), runs["run"].tolist(), runs["converged"].tolist(),
                                               runs["time_to_train_min"].tolist(),
                                               runs["submission_division"].tolist()):
        n_runs[key] += 1
        if ok:
            converged[key].append(minutes)
            converged_runs[key].append(run)
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
        kept = [converged_runs[key][i] for i in olympic_runs(times, n_failed, k)]
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
            **_result_power(power.get(key), kept, factor, round_),
        })
    return pd.DataFrame(rows, columns=schemas.RESULT_COLUMNS)


def _power_by_result(run_power: pd.DataFrame | None, systems: pd.DataFrame) -> dict[tuple[str, ...], Any]:
    """Per results folder: its runs' energies (run -> J), the logs' measurement types, conversion efficiencies and
    the most nodes and switches measured in a run, and the system name (for the AC or DC token)."""
    if run_power is None or run_power.empty:
        return {}
    names = {}
    if "system_name" in systems:
        names = {(r, s, y): n for r, s, y, n in systems[["round", "submitter", "system", "system_name"]]
                 .itertuples(index=False) if isinstance(n, str)}
    grouped: dict[tuple[str, ...], Any] = {}
    for key, group in run_power.groupby(["round", "submitter", "system", "benchmark"], sort=True):
        effs = group["conversion_eff"].dropna().unique()
        grouped[key] = {
            "energies": {run: energy for run, energy in zip(group["run"], group["energy_j"]) if energy == energy},
            "measurement": power.measurement_of(group["measurement_type"], key[1], names.get(key[:3])),
            "conversion_eff": float(effs[0]) if len(effs) == 1 and effs[0] != 1.0 else math.nan,
            "nodes": int(group["power_nodes"].max()), "switches": int(group["power_switches"].max()),
        }
    return grouped


def _result_power(found: Any, kept: list[str], factor: float, round_: str) -> dict[str, Any]:
    if found is None:
        return {"energy_j": math.nan, "energy_rule": None, "power_measurement": None, "power_conversion_eff": math.nan,
                "power_nodes": math.nan, "power_switches": math.nan}
    return {"energy_j": power.result_energy(found["energies"], kept, factor), "energy_rule": power.rule_of(round_),
            "power_measurement": found["measurement"], "power_conversion_eff": found["conversion_eff"],
            "power_nodes": found["nodes"], "power_switches": found["switches"]}


def _score_note(n_runs: int, n_converged: int, n_failed: int, k: int, factor: float) -> str | None:
    if n_runs == 0:
        return "not scored: the folder holds no result logs (the published logs are absent)"
    if n_failed > k:
        return (f"not scored: {n_failed} non-converged run{'s' if n_failed != 1 else ''}, more than the {k} the "
                f"olympic rule allows")
    if math.isnan(factor):
        return "not scored: scaling.json is unreadable"
    if n_converged <= k:
        runs = f"{n_converged} converged run{'s leave' if n_converged != 1 else ' leaves'}"
        return f"not scored: {runs} none after dropping the {'fastest' if k == 1 else f'fastest {k}'}"
    return None


def _divisions(systems: pd.DataFrame) -> dict[tuple[str, str, str], str]:
    divisions: dict[tuple[str, str, str], str] = {}
    for column in ("division", "divison"):  # the misspelling is in published descriptions
        if column not in systems:
            continue
        for row in systems[["round", "submitter", "system", column]].dropna().itertuples(index=False):
            divisions.setdefault((row[0], row[1], row[2]), str(row[3]).strip().lower())
    return divisions

