"""Stage `ingest`: raw MLPerf Training rounds -> systems, runs, official scores and a quarantine list.

    python -m pipeline.stages.ingest SOURCE [SOURCE ...] --out DIR

Each SOURCE is a round as MLCommons publishes it, `training_results_vX.Y.tar.gz` or a folder (or fresh clone)
`training_results_vX.Y/`, or a folder holding rounds (such as data/raw). DIR receives `systems.parquet`,
`runs.parquet`, `results.parquet` and `quarantine.csv` (columns documented in `pipeline.core.schemas`), and
`tally.csv`, the file accounting it prints per round.

The reading lives in `pipeline.mlperf.rounds`, the description decoding in `pipeline.mlperf.decoding`, the
official scoring rule in `pipeline.mlperf.logs.scoring`, the energy to train from power logs in
`pipeline.mlperf.logs.power`
and the accounting in `pipeline.mlperf.accounting`.
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from pipeline.core.cli import ArgumentParser
from pipeline.core.errors import cli
from pipeline.core.files import interrupts_held
from pipeline.mlperf.accounting import format_tally
from pipeline.mlperf.rounds import expand_sources, ingest

# The settings this stage reads, itself or through the library (tools/sync_dvc_params.py writes them
# into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ()


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line parsed: the round `sources` (archives or folders), the `out` folder and the number of
    `workers` (processes; None for up to 2)."""
    parser = ArgumentParser("pipeline.stages.ingest", __doc__)
    parser.add_argument("sources", nargs="+", type=Path, metavar="SOURCE",
                        help="training_results_vX.Y.tar.gz archive or training_results_vX.Y/ folder")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder for the output tables")
    parser.add_argument("--workers", type=int, default=None, help="processes to use (default: up to 2)")
    return parser.parse_args(argv)


@cli
def main(argv: Sequence[str] | None = None) -> None:
    """Run the ingest stage: read the rounds, write the tables into `--out` and print the file tally; returns None."""
    args = parse_args(argv)
    tables = ingest(expand_sources(args.sources), workers=args.workers)
    with interrupts_held():  # Ctrl-C: every table of the previous run or every one of this run
        tables.write(args.out)
    print(format_tally(tables.tally))


if __name__ == "__main__":
    main()
