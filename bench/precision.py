"""How many results have a known numeric precision, and from which source (pipeline/mlperf/logs/precision.py).

    python bench/precision.py [--results PATH] [--rounds v5.0 v5.1 ...] [--all-benchmarks]

Reads data/interim/results.parquet (after the ingest stage; a second). Prints a Markdown table with one row per
benchmark and round of the closed division (by default the Llama and FLUX.1 benchmarks, llama2_70b_lora,
llama31_8b, llama31_405b and flux1, of v5.0 and v5.1): the results, how many have a known precision and their
share (the target is 90%), the count per source (mllog, log, config, config_match, inferred), the count per
precision, and how many have a parallel layout (`parallel_source` set). Then the results whose precision is
unknown, one line each. Asserts nothing.
"""
from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd

from bench._common import arguments, format_table
from pipeline.core import paths, schemas

BENCHMARKS = ("llama2_70b_lora", "llama31_8b", "llama31_405b", "flux1")
ROUNDS = ("v5.0", "v5.1")
TARGET = 0.9


def coverage(results: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """The table's header and rows: per benchmark and round, results, known, share, then counts per source and
    per precision, and results with a parallel layout."""
    header = ["benchmark", "round", "results", "known", "share", *schemas.PRECISION_SOURCES, "precisions", "layout"]
    rows = []
    for (benchmark, round_), group in results.groupby(["benchmark", "round"], sort=True):
        known = int(group["precision"].notna().sum())
        sources = group["precision_source"].value_counts()
        precisions = group["precision"].value_counts()
        rows.append([benchmark, round_, str(len(group)), str(known), f"{known / len(group):.0%}",
                     *(str(int(sources.get(source, 0))) for source in schemas.PRECISION_SOURCES),
                     ", ".join(f"{name} {count}" for name, count in precisions.items()),
                     str(int(group["parallel_source"].notna().sum()))])
    return header, rows


def main() -> None:
    """Print the coverage table and the results of unknown precision."""
    args = arguments(__doc__, (("--results",), {"type": Path, "default": paths.RESULTS,
                                                 "help": "results.parquet to read (default: %(default)s)"}),
                     (("--rounds",), {"nargs": "+", "default": list(ROUNDS), "help": "rounds (default: v5.0 v5.1)"}),
                     (("--all-benchmarks",), {"action": "store_true", "help": "every benchmark, not only Llama/FLUX"}))
    results = pd.read_parquet(args.results)
    chosen = results[results["round"].isin(args.rounds) & (results["division"] == "closed")]
    if not args.all_benchmarks:
        chosen = chosen[chosen["benchmark"].isin(BENCHMARKS)]
    header, rows = coverage(chosen)
    print(format_table(header, rows))
    unknown = chosen[chosen["precision"].isna()]
    print(f"\n{len(unknown)} result(s) of unknown precision (target: {TARGET:.0%} known per row)")
    for row in unknown.itertuples(index=False):
        print(f"  {row.round} {row.submitter}/{row.system} {row.benchmark}")


if __name__ == "__main__":
    main()
