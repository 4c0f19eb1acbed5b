"""Helpers shared by the benchmark scripts: where the mirror is, which rounds it holds, extracting and timing.

The scripts run as `python bench/<name>.py` from the project root: each puts the root on `sys.path` first, so
`bench` and `pipeline` import the same way as under pytest.
"""
from __future__ import annotations

import argparse
import re
import tarfile
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.mlperf.catalogue import round_version

ROOT = Path(__file__).resolve().parents[1]
MIRROR = ROOT.parent / "shared" / "mlperf"
OUT = ROOT / "bench" / "out"
ARCHIVE = re.compile(r"training_results_(v\d+\.\d+)\.tar\.gz")


# The positional benchmarks of a script that runs on a choice of them (none: every benchmark analysed).
BENCHMARKS: tuple[Sequence[str], dict[str, Any]] = (("benchmarks",), {
    "nargs": "*", "metavar": "BENCHMARK", "help": "benchmarks to run (default: every one of analysis.benchmarks)"})


def arguments(doc: str | None, *options: tuple[Sequence[str], dict[str, Any]],
              argv: Sequence[str] | None = None) -> argparse.Namespace:
    """A bench script's command line parsed: its docstring is the help, each option is (names, add_argument's
    keywords), and `--help` prints them and runs nothing."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    for names, keywords in options:
        parser.add_argument(*names, **keywords)
    return parser.parse_args(argv)


def archive_path(round_: str, mirror: Path = MIRROR) -> Path:
    return mirror / f"training_results_{round_}.tar.gz"


def mirror_rounds(mirror: Path = MIRROR) -> list[str]:
    """The rounds whose archive is in the mirror, oldest first (empty when the mirror is absent)."""
    found = [m.group(1) for p in mirror.glob("training_results_v*.tar.gz") if (m := ARCHIVE.fullmatch(p.name))]
    return sorted(found, key=round_version)


def extract(archive: Path, dest: Path, submitters: Collection[str] | None = None) -> Path:
    """Unpack a round archive (only the given submitters' folders, when given) and return the round folder."""
    top = archive.name.removesuffix(".tar.gz")
    with tarfile.open(archive, "r:gz") as tar:
        members = [info for info in tar.getmembers()
                   if submitters is None or _submitter(info.name, top) in submitters]
        tar.extractall(dest, members=members, filter="data")
    folder = dest / top
    missing = sorted(set(submitters or ()) - {child.name for child in folder.glob("*")})
    if missing:
        raise FileNotFoundError(f"{archive.name} has no submitter folder(s) {', '.join(missing)}")
    return folder


def _submitter(name: str, top: str) -> str | None:
    parts = Path(name).parts
    return parts[1] if len(parts) > 1 and parts[0] == top else None


@dataclass
class Stopwatch:
    seconds: float = 0.0
    started: float = 0.0

    def elapsed(self) -> float:
        """Seconds since the block started (`seconds` is set when it ends)."""
        return time.perf_counter() - self.started


@contextmanager
def timed() -> Iterator[Stopwatch]:
    """`with timed() as clock: ...` leaves the block's wall time in `clock.seconds`."""
    clock = Stopwatch(started=time.perf_counter())
    try:
        yield clock
    finally:
        clock.seconds = clock.elapsed()


def format_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, columns padded so it also reads well on a terminal."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
    lines = [header, ["-" * width for width in widths], *rows]
    return "\n".join("| " + " | ".join(cell.ljust(width) for cell, width in zip(line, widths)) + " |"
                     for line in lines)
