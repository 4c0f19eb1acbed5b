"""Regenerate the official summarizer's output that the parity tests compare our ingest with, one round at a time.

    python bench/parity_fixtures.py [ROUND ...] [--check]     (default: every round in the mirror)

For each round, `mlperf_logging.result_summarizer` runs on a fresh copy of the mirror's archive (on each
organisation alone where it crashes on the whole round, and without an organisation's power logs where its
energy computation crashes: times to train do not depend on them), and tests/data/parity/ gets:
  <round>.csv   one row per official score: desc_submitter, system (the description's file name), benchmark,
                official_min (minutes, as the summarizer's CSV gives them);
  <round>.json  the archive's SHA-256 (the fixture's key: tests/mlperf/test_parity.py skips a round whose archive
                differs), the package version and ruleset, how it was run, the organisations it crashed on
                and why, its time, and the lines of its log that give the reasons for runs it rejected.
The summarizer takes from seconds to twenty minutes per round; run one round at a time on a busy machine.
With --check nothing is written: each round is regenerated and compared with its committed fixture.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as `python bench/parity_fixtures.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import MIRROR, archive_path, mirror_rounds
from bench.parity import FIXTURES, LOG_DIR, Official, read_fixture, run_official, write_fixture
from pipeline.mlperf.catalogue import round_version

# Lines where the checker lists the members of a Python set, in an order that changes from run to run.
ALTERNATIVES = re.compile(r"^(?P<head>.*Required AT_LEAST_ONE occurrence of )(?P<names>'[^']*'(?: or '[^']*')+)$")
VALUES = re.compile(r"^(?P<head>.* with different values: \[)(?P<values>.*)\]$")


def unordered(line: str) -> str:
    """A summarizer log line with the members of a set it lists in one order."""
    if (match := ALTERNATIVES.match(line)) is not None:
        return match["head"] + " or ".join(sorted(match["names"].split(" or ")))
    if (match := VALUES.match(line)) is not None:
        return match["head"] + ", ".join(sorted(match["values"].split(", "))) + "]"
    return line


def differences(fresh: Official, committed: Official) -> list[str]:
    """What differs between two runs of the summarizer on one archive (empty when they agree)."""
    found = []
    if fresh.sha256 != committed.sha256:
        found.append(f"archive SHA-256 {fresh.sha256} against the fixture's {committed.sha256}")
    if not fresh.scores.equals(committed.scores):
        keys = [column for column in fresh.scores.columns if column != "official_min"]
        merged = fresh.scores.merge(committed.scores, how="outer", on=keys,
                                    suffixes=("_fresh", "_fixture"), indicator=True)
        changed = merged[(merged["_merge"] != "both")
                         | (merged["official_min_fresh"] != merged["official_min_fixture"])]
        found.append(f"{len(changed)} score(s) differ:\n{changed.to_string(index=False)}")
    if fresh.crashed != committed.crashed:
        found.append(f"crashed on {fresh.crashed} against the fixture's {committed.crashed}")
    if fresh.without_power != committed.without_power:
        found.append(f"scored without power logs {fresh.without_power} against the fixture's "
                     f"{committed.without_power}")
    fresh_log, committed_log = sorted(map(unordered, fresh.log)), sorted(map(unordered, committed.log))
    if fresh_log != committed_log:  # the summarizer's order of folders is the file system's
        only_fresh = sorted(set(fresh_log) - set(committed_log))
        only_committed = sorted(set(committed_log) - set(fresh_log))
        found.append(f"log lines differ: {len(only_fresh)} new, such as {only_fresh[:3]}; "
                     f"{len(only_committed)} gone, such as {only_committed[:3]}")
    return found


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python bench/parity_fixtures.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("rounds", nargs="*", metavar="ROUND", help="e.g. v5.0 (default: every round in the mirror)")
    parser.add_argument("--mirror", type=Path, default=MIRROR, help=f"folder of archives (default {MIRROR})")
    parser.add_argument("--out", type=Path, default=FIXTURES, help=f"fixture folder (default {FIXTURES})")
    parser.add_argument("--log-dir", type=Path, default=LOG_DIR, help=f"summarizer logs (default {LOG_DIR})")
    parser.add_argument("--check", action="store_true", help="compare with the committed fixtures, write nothing")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    available = mirror_rounds(args.mirror)
    rounds = sorted(args.rounds or available, key=round_version)
    unknown = sorted(set(rounds) - set(available))
    if unknown:
        raise SystemExit(f"no archive for {', '.join(unknown)} in {args.mirror} (has: {', '.join(available)})")
    failed = 0
    for round_ in rounds:
        archive = archive_path(round_, args.mirror)
        print(f"{round_}: running the official summarizer ...", flush=True)
        official = run_official(round_, archive, args.log_dir)
        crashed = "; ".join(f"{who}: {why}" for who, why in official.crashed.items())
        energy = "; ".join(f"{who}: {why}" for who, why in official.without_power.items())
        print(f"{round_}: {len(official.scores)} scores in {official.seconds:.1f} s"
              + (", run per organisation" if official.per_organisation else "")
              + (f", crashed on {crashed}" if official.crashed else "")
              + (f", scored without power logs where energy crashed: {energy}" if energy else ""), flush=True)
        if args.check:
            committed = read_fixture(round_, args.out)
            found = ["no committed fixture"] if committed is None else differences(official, committed)
            failed += bool(found)
            print("\n".join(f"  {line}" for line in found) or "  the committed fixture is what the summarizer gives")
        else:
            write_fixture(official, archive, args.out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
