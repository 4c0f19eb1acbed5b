"""The data's accounting on the real rounds, as docs/data.md quotes it: quarantine rows per round, runs the official
logging rules reject per round and rule, and results republished from an earlier round per round and division.

    python bench/accounting.py      (after `dvc repro features`; a few seconds)

Reads data/interim/quarantine.csv, data/interim/runs.parquet and data/processed/configurations.parquet, from the
root. Prints tables, asserts nothing.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd

from bench._common import arguments
from pipeline.core import paths
from pipeline.mlperf.catalogue import round_version

# A rejection's rules, without the counts and versions that vary from log to log.
RULES = [
    (re.compile(r"\bno (\w+) record"), "no {} record"),
    (re.compile(r"\bnone of ([\w /]+?) logged"), "none of {} logged"),
    (re.compile(r"\bfewer than \d+ (\w+) records"), "too few {} records"),
    (re.compile(r"weights_initialization records name"), "other initialised tensors than the rules list"),
    (re.compile(r"initialisation took"), "initialisation longer than the limit"),
    (re.compile(r"do not parse"), ":::MLLOG lines that do not parse"),
]


def rules(compliance: str) -> list[str]:
    """The rules a run's `compliance` text names, each once."""
    return sorted({label.format(*match.groups()) for pattern, label in RULES for match in pattern.finditer(compliance)})


def by_round(frame: pd.DataFrame) -> pd.DataFrame:
    order = sorted(frame.index.unique(), key=round_version)
    return frame.loc[order]


def main() -> None:
    arguments(__doc__)
    quarantine = pd.read_csv(paths.QUARANTINE)
    print("Quarantine rows per round:")
    print(by_round(quarantine.groupby("round").size().to_frame("rows")).to_string())

    runs = pd.read_parquet(paths.RUNS, columns=["round", "compliance"])
    rejected = runs[runs["compliance"].fillna("") != ""]
    pairs = pd.DataFrame([(row.round, rule) for row in rejected.itertuples() for rule in rules(row.compliance)],
                         columns=["round", "rule"])
    print(f"\nRuns the official logging rules reject: {len(rejected)}, per round and rule:")
    print(by_round(pairs.groupby(["round", "rule"]).size().to_frame("runs").reset_index("rule")).to_string())

    configurations = pd.read_parquet(paths.CONFIGURATIONS, columns=["round", "division", "republished_of"])
    republished = configurations[configurations["republished_of"].notna()]
    print(f"\nResults republished from an earlier round: {len(republished)} of {len(configurations)}, "
          f"per division: {republished['division'].value_counts().to_dict()}; per round:")
    print(by_round(republished.groupby("round")["division"].value_counts().unstack(fill_value=0)).to_string())


if __name__ == "__main__":
    main()
