"""Energy to train: ours beside the official summarizer's (v4.1 on) and the published values (v4.0).

    python bench/energy.py [--write-fixture]

For every result with power logs in the mirror's power rounds (v4.0, v4.1, v5.0), prints our energy to train
(kJ, `pipeline.mlperf.logs.power`), the installed summarizer's (`mlperf_logging.result_summarizer`'s
`_compute_strong_score_standalone`, the function its power mode runs per results folder, on a fresh copy of the
folder) and, for v4.0, the value MLCommons published where it is known, each with its relative difference.

The installed summarizer reads v4.0's logs with the rule of v4.1 on: where a log's stop equals its start it raises
ZeroDivisionError (14 of v4.0's 24 results), and elsewhere it gives a value the v4.0 tables do not show. v4.0's
published values came from the summarizer of the v4.0 release, whose rule `pipeline.mlperf.logs.power` applies to v4.0:
those are the reference there.

Then the estimate for results without power logs (`pipeline.analysis.pricing.energy_estimate`, fitted on the
measured results of the features stage's table, data/processed/configurations.parquet): its relative error on every
measured result with the ratio fitted without that result's submitter, and the median and the worst of them.

With --write-fixture the summarizer's outputs (J, or the exception it raised) are written to
tests/data/energy_summarizer.json with each archive's SHA-256, for tests/mlperf/test_energy.py's fast lane.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

if __package__ in (None, ""):  # run as `python bench/energy.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import ROOT, archive_path, extract, format_table
from bench.parity import sha256_of
from pipeline.analysis.pricing import energy_estimate
from pipeline.core import paths
from pipeline.mlperf.logs.compliance import round_ruleset
from pipeline.mlperf.rounds import ingest

POWER_ROUNDS = ("v4.0", "v4.1", "v5.0")
FIXTURE = ROOT / "tests" / "data" / "energy_summarizer.json"
KEY = ["round", "submitter", "system", "benchmark"]
# Energy to train that MLCommons published for v4.0 (kJ, the results tables' rounding), per result.
PUBLISHED_KJ = {
    ("v4.0", "smc-dc-power", "1xSMC-H100-SXM-80GB", "bert"): 1_793.34,
    ("v4.0", "smc-ac-power", "64xSMC-H100-SXM-80GB", "llama2_70b_lora"): 46_574.81,
    ("v4.0", "smc-dc-power", "8xSMC-H100-SXM-80GB", "resnet"): 7_757.11,
}
RELATIVE_TOLERANCE = 1e-9
# Half a unit of the published rounding (0.01 kJ).
PUBLISHED_TOLERANCE_J = 5.0


def power_results(rounds: Sequence[str] = POWER_ROUNDS) -> pd.DataFrame:
    """Our results with power logs (KEY, energy_j, energy_rule, power_measurement, power_nodes, power_switches)."""
    tables = ingest([archive_path(round_) for round_ in rounds])
    results = tables.results[tables.results["power_nodes"].notna()]
    return results[[*KEY, "energy_j", "energy_rule", "power_measurement", "power_nodes", "power_switches"]] \
        .reset_index(drop=True)


def summarizer_energy(folder: Path, round_: str) -> tuple[float | None, str | None]:
    """The installed summarizer's energy to train of one results folder (J), or the exception it raised."""
    from mlperf_logging.result_summarizer import result_summarizer as official

    with contextlib.redirect_stdout(io.StringIO()):  # it prints a line per run it reads
        try:
            _, energy, _ = official._compute_strong_score_standalone(
                folder.name, folder.parent.name, True, str(folder), "training", round_ruleset(round_),
                {"submitter": folder.parents[2].name})
        except Exception as error:  # the summarizer's crash is the finding, whatever its type
            return None, f"{type(error).__name__}: {error}"
    return (float(energy) if energy is not None else None), None


def run_summarizer(results: pd.DataFrame) -> dict[str, Any]:
    """The summarizer's outputs for every result, with each archive's SHA-256 (the fixture's content)."""
    rows, archives = [], {}
    for round_, group in results.groupby("round", sort=True):
        archive = archive_path(str(round_))
        archives[round_] = sha256_of(archive)
        with tempfile.TemporaryDirectory(prefix=f"energy-{round_}-") as tmp:
            folder = extract(archive, Path(tmp), submitters=sorted(set(group["submitter"])))
            for row in group.itertuples(index=False):
                energy, crash = summarizer_energy(folder / row.submitter / "results" / row.system / row.benchmark,
                                                  str(round_))
                rows.append({"round": round_, "submitter": row.submitter, "system": row.system,
                             "benchmark": row.benchmark, "summarizer_j": energy, "summarizer_error": crash})
    from importlib.metadata import version
    return {"package": f"mlperf-logging {version('mlperf-logging')}", "archives": archives, "results": rows}


def read_fixture(path: Path = FIXTURE) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def relative(ours: float, other: float | None) -> float:
    return math.nan if other is None or math.isnan(ours) else abs(ours - other) / abs(other)


def comparison(results: pd.DataFrame, summarizer: dict[str, Any]) -> pd.DataFrame:
    """One row per power result: ours, the summarizer's and the published energy (kJ) with relative differences."""
    official = pd.DataFrame(summarizer["results"], columns=[*KEY, "summarizer_j", "summarizer_error"])
    table = results.merge(official, on=KEY, how="left")
    table["published_kj"] = [PUBLISHED_KJ.get(key) for key in table[KEY].itertuples(index=False, name=None)]
    table["rel_summarizer"] = [relative(ours, other) for ours, other in zip(table["energy_j"], table["summarizer_j"])]
    table["rel_published"] = [relative(ours / 1000, published) if published else math.nan
                              for ours, published in zip(table["energy_j"], table["published_kj"])]
    return table


def _print(table: pd.DataFrame) -> None:
    shown = pd.DataFrame({
        "result": [f"{r} {s} {y} {b}" for r, s, y, b in table[KEY].itertuples(index=False, name=None)],
        "ours_kJ": [f"{value / 1000:,.2f}" for value in table["energy_j"]],
        "summarizer_kJ": [f"{value / 1000:,.2f}" if value == value and value is not None
                          else (error.split(":")[0] if isinstance(error, str) else "none")
                          for value, error in zip(table["summarizer_j"], table["summarizer_error"])],
        "rel_diff": [f"{value:.1e}" if value == value else "" for value in table["rel_summarizer"]],
        "published_kJ": [f"{value:,.2f}" if value == value else "" for value in table["published_kj"]],
        "rel_diff_pub": [f"{value:.1e}" if value == value else "" for value in table["rel_published"]],
        "measured": table["power_measurement"],
    })
    print(format_table(list(shown.columns), shown.astype(str).values.tolist()))
    for round_, group in table.groupby("round"):
        compared = group["rel_summarizer"].dropna()
        published = group["rel_published"].dropna()
        print(f"{round_}: {len(group)} power results, {group['energy_j'].notna().sum()} with an energy; "
              f"summarizer: {len(compared)} compared, max relative difference "
              f"{compared.max() if len(compared) else math.nan:.1e}, {group['summarizer_error'].notna().sum()} "
              f"raised an exception; published: {len(published)} compared, max relative difference "
              f"{published.max() if len(published) else math.nan:.1e}")


def print_estimate_errors(configurations: pd.DataFrame) -> None:
    """The energy estimate's leave-one-submitter-out error on every measured result, then its median and worst."""
    training = energy_estimate.training_set(configurations)
    errors = energy_estimate.held_out_errors(training)
    model = energy_estimate.fit(configurations)
    rows = configurations.loc[training.index]
    shown = [[f"{r} {s} {y} {b}", f"{m:,.3g}", f"{rated * (model.share_of_rated_power if model else math.nan):,.3g}",
              f"{e:.1%}"]
             for (r, s, y, b), m, rated, e in zip(rows[KEY].itertuples(index=False, name=None),
                                                  training["energy_kwh"], training["rated_kwh"], errors)]
    print()
    print("energy estimate (estimated, not an MLPerf result): accelerators x hours x rated power x R; error with R "
          "fitted without the result's submitter")
    print(format_table(["result", "measured_kWh", "estimate_kWh (all-data R)", "held_out_error"], shown))
    if model is not None:
        print(f"R = {model.share_of_rated_power:.3f} (median measured system power per accelerator / rated power) over "
              f"{model.results} measured results of {model.submitters} submitters; held-out error median "
              f"{model.median_error:.1%}, worst {model.worst_error:.1%}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python bench/energy.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--write-fixture", action="store_true", help=f"write the summarizer's outputs to {FIXTURE}")
    args = parser.parse_args(argv)
    results = power_results()
    summarizer = run_summarizer(results)
    if args.write_fixture:
        FIXTURE.write_text(json.dumps(summarizer, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {FIXTURE.relative_to(ROOT)}")
    _print(comparison(results, summarizer))
    print_estimate_errors(pd.read_parquet(paths.CONFIGURATIONS))


if __name__ == "__main__":
    main()
