"""Does the pick the page shows stay put? Checked on the real data for every analysed benchmark.

    dvc repro features   (and the ingest's data/interim/runs.parquet, results.parquet)
    python bench/stability.py

Per benchmark, on its latest round (as the rank stage ranks it, params `rank`): the pick (round rank 1, the lowest
trade-off score), the size of the round's first front, and what happens to the pick when one result is removed:
each result not on the first front in turn (issue 23's test), then each other member of the front (the rule
promises that too). Then the pick's stability under the runs' noise: the share of `rank.bootstrap` resamples of
every result's runs (scored as MLCommons scores them, `pipeline.analysis.statistics.run_noise`) in which it stays the
pick.
Exits 1 when any removal changes a pick.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from bench._common import format_table  # noqa: E402
from pipeline.analysis.scope import analysed_benchmarks, in_scope  # noqa: E402
from pipeline.analysis.statistics import ranking  # noqa: E402
from pipeline.analysis.statistics.run_noise import RunNoise  # noqa: E402
from pipeline.core import paths  # noqa: E402
from pipeline.settings import load_params, settings_from  # noqa: E402


def _keys(frame: pd.DataFrame) -> pd.Series:
    return frame["round"] + " " + frame["submitter"] + " " + frame["system"]


def main() -> None:
    settings = settings_from(load_params(ROOT / "params.yaml"))
    criteria = settings.rank.model_dump()["criteria"]
    configurations = pd.read_parquet(ROOT / paths.CONFIGURATIONS)
    noise = RunNoise(pd.read_parquet(ROOT / paths.RUNS), pd.read_parquet(ROOT / paths.RESULTS),
                     settings.rank.bootstrap, settings.rank.seed)
    rows, changed, removals, stabilities = [], 0, {"off": 0, "front": 0}, {}
    for benchmark in analysed_benchmarks(settings.analysis, configurations):
        frame = in_scope(configurations, settings.analysis, benchmark)
        latest = ranking.latest_round_ranking(ranking.rank_configurations(frame, criteria))
        pick = ranking.configuration_key(latest.iloc[0])
        keys, latest_keys = _keys(frame), _keys(latest)
        moved = {"off": 0, "front": 0}
        for key, front in zip(latest_keys, latest["round_front"]):
            if key == pick:
                continue
            again = ranking.latest_round_ranking(ranking.rank_configurations(frame[keys != key], criteria))
            if ranking.configuration_key(again.iloc[0]) != pick:
                moved["front" if front == 1 else "off"] += 1
        changed += sum(moved.values())
        n_front = int((latest["round_front"] == 1).sum())
        removals["off"] += len(latest) - n_front
        removals["front"] += n_front - 1
        rows_latest = frame.set_index(["round", "submitter", "system"]).loc[
            pd.MultiIndex.from_frame(latest[["round", "submitter", "system"]])].reset_index()
        stability = ranking.pick_stability(noise.times(rows_latest), latest["accelerator_count"].to_numpy(), 0,
                                           criteria)
        stabilities[benchmark] = stability
        top = latest.iloc[0]
        rows.append([benchmark, pick, f"{top['accelerator_count']:g} x {top['accelerator_family']}",
                     f"{top['time_to_train_min']:.3g}", f"{top['accelerator_hours']:.3g}",
                     f"{top['round_efficiency']:.2f}", f"{n_front} of {len(latest)}",
                     f"{moved['off']} of {len(latest) - n_front}", f"{moved['front']} of {n_front - 1}",
                     f"{stability:.0%}"])
    print(f"pick: {ranking.pick_rule(criteria)}; stability over {settings.rank.bootstrap} resamples of the runs")
    print(format_table(["benchmark", "pick (latest round)", "hardware", "min", "acc-h", "round eff.", "front",
                        "off-front removals that move it", "front removals that move it", "stability"], rows))
    print(f"{changed} of {removals['off']} removals off the front and of {removals['front']} on it changed a pick; "
          f"stability 100% in {sum(value == 1 for value in stabilities.values())} of {len(stabilities)}, below 50% "
          f"in {', '.join(f'{name} {value:.0%}' for name, value in stabilities.items() if value < 0.5) or 'none'}")
    sys.exit(1 if changed else 0)


if __name__ == "__main__":
    main()
