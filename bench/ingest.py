"""How fast and lean the ingest stage is, against the floor of merely reading the archives and the official scorer.

    python bench/ingest.py [--no-summarizer] [--repeat N] [--parts]

(a) floor: one process reads every member of the round archives with `tarfile` and nothing else;
(b) `pipeline.mlperf.rounds.ingest` of the same archives (default workers, both cores) in a child process: wall time,
    and peak resident memory, of its largest process (`ru_maxrss`) and of its whole process tree (sampled from
    /proc, since the workers run at the same time);
(c) the official `mlperf_logging.result_summarizer` on the unpacked v4.0 round against our ingest of v4.0.
(a) and (b) run N times, alternately, since a shared machine's speed drifts; the medians are compared.
(d) with --parts, where the CPU of reading the rounds goes, part by part, in one process, against the floor's CPU
    (`PARTS`): what 2 workers cannot do in less than half its time.
Prints Markdown tables (no assertions): paste them into docs/speed.md.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

if __package__ in (None, ""):  # run as `python bench/ingest.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import OUT, ROOT, archive_path, extract, format_table, mirror_rounds, timed
from bench.parity import run_summarizer
from pipeline.mlperf.logs import compliance, precision
from pipeline.mlperf.logs.logparse import parse_log
from pipeline.mlperf.logs.power import read_power_log
from pipeline.mlperf.logs.readable import MLLOG_TOKEN, readable
from pipeline.mlperf.rounds import ingest, noted_keys, read_source
from pipeline.mlperf.sources import Kind, classify, iter_members, round_of

SPEED_ROUND = "v4.0"
MAX_RATIO = 2.0
MAX_WALL_S = 15.0
MAX_RSS = 1 << 30
MIN_SPEEDUP = 100.0
MIB = 1 << 20
SAMPLE_EVERY_S = 0.02
# Run in the child: ingest the archives given as arguments, report the call's own wall time as JSON.
CHILD = """
import json, sys, time
from pathlib import Path
from pipeline.mlperf.rounds import ingest
start = time.perf_counter()
tables = ingest([Path(p) for p in sys.argv[1:]])
print(json.dumps({"seconds": time.perf_counter() - start, "runs": len(tables.runs)}))
"""


@dataclass(frozen=True)
class Floor:
    seconds: float
    members: int
    bytes: int


def read_floor(archives: Sequence[Path]) -> Floor:
    """Stream every member of the archives, in one process, reading each in full."""
    members = size = 0
    with timed() as clock:
        for archive in archives:
            with tarfile.open(archive, "r|gz") as tar:
                for info in tar:
                    handle = tar.extractfile(info)
                    if handle is not None:
                        size += len(handle.read())
                        members += 1
    return Floor(clock.seconds, members, size)


@dataclass(frozen=True)
class ChildIngest:
    call_s: float  # the ingest() call inside the child
    process_s: float  # the whole child: interpreter start-up, imports, ingest
    runs: int
    max_process_rss: int
    max_tree_rss: int


def measure_ingest(archives: Sequence[Path]) -> ChildIngest:
    env = {**os.environ, "CI": "1"}  # no progress bars
    with timed() as clock:
        child = subprocess.Popen([sys.executable, "-c", CHILD, *map(str, archives)], cwd=ROOT, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        peak = TreePeak(child.pid)
        stdout, stderr = child.communicate()
        peak.stop()
    if child.returncode != 0:
        raise RuntimeError(f"ingest child failed (exit {child.returncode}):\n{stderr}")
    report = json.loads(stdout.strip().splitlines()[-1])
    max_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # KiB on Linux
    return ChildIngest(report["seconds"], clock.seconds, report["runs"], max_rss, max(peak.value, max_rss))


class TreePeak:
    """Samples, in a thread, the summed resident memory of a process and all its descendants; keeps the peak."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.value = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def _sample(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while not self._done.wait(SAMPLE_EVERY_S):
            self.value = max(self.value, sum(_rss_pages(pid) for pid in _tree(self.pid)) * page)


def _tree(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # the process ended meanwhile
        parents[int(stat.parent.name)] = int(fields[1])
    tree, grew = {root}, True
    while grew:
        added = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= added
        grew = bool(added)
    return tree


def _rss_pages(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (OSError, IndexError):
        return 0


@dataclass(frozen=True)
class Versus:
    summarizer_s: float | None  # None when it crashed
    archive_s: float
    folder_s: float


def versus_summarizer(round_: str) -> Versus:
    """The official summarizer on a fresh unpacked copy of the round, and our ingest of its archive and of the copy."""
    archive = archive_path(round_)
    with timed() as from_archive:
        ingest([archive])
    with tempfile.TemporaryDirectory(prefix=f"bench-{round_}-") as tmp:
        folder = extract(archive, Path(tmp))
        with timed() as from_folder:
            ingest([folder])  # before the summarizer, whose RCP checker writes into the folder
        with timed() as official:
            csv = run_summarizer(folder, round_, OUT / "ingest" / f"summarizer-{round_}.log")
    return Versus(official.seconds if csv else None, from_archive.seconds, from_folder.seconds)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def rows(floor: Floor, child: ChildIngest, versus: Versus | None, n_archives: int,
         pair_ratios: Sequence[float]) -> list[list[str]]:
    ratio = child.call_s / floor.seconds
    table = [
        [f"floor: read all {floor.members} members ({floor.bytes / MIB:.0f} MiB) of {n_archives} archives, "
         f"1 process, median of {len(pair_ratios)}", f"{floor.seconds:.2f} s", "", ""],
        [f"ingest() of {n_archives} archives, 2 workers ({child.runs} runs), median", f"{child.call_s:.2f} s",
         f"<= {MAX_WALL_S:.0f} s", verdict(child.call_s <= MAX_WALL_S)],
        ["ingest process, incl. start-up and imports", f"{child.process_s:.2f} s", f"<= {MAX_WALL_S:.0f} s",
         verdict(child.process_s <= MAX_WALL_S)],
        ["ratio of the medians, ingest() / floor", f"{ratio:.3f}", f"<= {MAX_RATIO:g}", verdict(ratio <= MAX_RATIO)],
        ["ratio of each side-by-side pair, lowest to highest",
         f"{min(pair_ratios):.2f}-{max(pair_ratios):.2f}", "", ""],
        ["peak RSS, largest process (ru_maxrss)", f"{child.max_process_rss / MIB:.0f} MiB", "", ""],
        ["peak RSS, whole process tree (sampled)", f"{child.max_tree_rss / MIB:.0f} MiB",
         f"<= {MAX_RSS / MIB:.0f} MiB", verdict(child.max_tree_rss <= MAX_RSS)],
    ]
    if versus is not None:
        table += _versus_rows(versus)
    return table


def _versus_rows(versus: Versus) -> list[list[str]]:
    name = f"official summarizer, {SPEED_ROUND} unpacked"
    ours = [[f"ingest() of {SPEED_ROUND}, archive", f"{versus.archive_s:.2f} s", "", ""],
            [f"ingest() of {SPEED_ROUND}, unpacked folder", f"{versus.folder_s:.2f} s", "", ""]]
    if versus.summarizer_s is None:
        return [[name, "crashed", "", ""], *ours]
    table = [[name, f"{versus.summarizer_s:.1f} s", "", ""], *ours]
    for input_, seconds in (("from the archive", versus.archive_s), ("same unpacked input", versus.folder_s)):
        speedup = versus.summarizer_s / seconds
        table.append([f"speed-up over the summarizer, {input_}", f"{speedup:.0f}x", f">= {MIN_SPEEDUP:.0f}x",
                      verdict(speedup >= MIN_SPEEDUP)])
    return table


# (d): the parts of reading the rounds, in the order they are timed, and what each is.
PARTS = {
    "read": "reading every member as ingest does (ISA-L inflate, tar, a copy of each member)",
    "touch": "one look at each byte of the logs (bytes.count): the least any pass over them costs",
    "readable": "every MLLOG line checked as the official parser reads it (lines cut into records, each JSON-checked)",
    "records": "the records the analysis uses found and decoded (parse_log, less the check above)",
    "precision": "precision and parallel sizes from the framework output and records (precision.read_run)",
    "compliance": "the official logging rules (compliance.violations)",
    "power": "power logs (read_power_log)",
    "rest": "the rest of read_source: descriptions, launch configurations, scaling, tables",
}


def cpu_parts(archives: Sequence[Path]) -> tuple[dict[str, float], float]:
    """CPU seconds of one process by part (`PARTS`; "touch" is counted apart, not in the total), each log's parts
    timed one after the other while the log is in cache, and read_source's own CPU seconds over all archives."""
    seconds = dict.fromkeys(PARTS, 0.0)

    def lap(part: str, function: Callable[..., object], *arguments: object, **keywords: object) -> object:
        start = time.process_time()
        result = function(*arguments, **keywords)
        seconds[part] += time.process_time() - start
        return result

    whole = 0.0
    for archive in archives:
        round_ = round_of(archive)
        start = time.process_time()
        members = [member for member in iter_members(archive) if member.data is not None]
        seconds["read"] += time.process_time() - start
        for member in members:
            kind, parts = classify(member.path)
            data = member.data
            assert data is not None
            if kind is Kind.LOG:
                lap("touch", data.count, b"\n")
                if MLLOG_TOKEN in data:
                    lap("readable", readable, data)
                facts = lap("records", parse_log, data, also_find=noted_keys())
                lap("precision", precision.read_run, data, facts.keys_found, records_only=facts.records_only)
                lap("compliance", compliance.violations, data, facts, round_)
            elif kind is Kind.POWER:
                lap("power", read_power_log, member.path, parts, data, round_)
        del members
        start = time.process_time()
        read_source(archive)
        whole += time.process_time() - start
    seconds["records"] -= seconds["readable"]
    seconds["rest"] = whole - sum(value for part, value in seconds.items() if part not in ("touch", "rest"))
    return seconds, whole


def parts_rows(seconds: dict[str, float], whole: float, floor_cpu: float) -> list[list[str]]:
    rows = [[PARTS[part], f"{value:.2f} s", f"{value / floor_cpu:.2f}"] for part, value in seconds.items()]
    return [*rows, ["all of read_source, every round", f"{whole:.2f} s", f"{whole / floor_cpu:.2f}"],
            ["the floor (a), its CPU", f"{floor_cpu:.2f} s", "1.00"]]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python bench/ingest.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-summarizer", action="store_true", help="skip (c), the official summarizer run")
    parser.add_argument("--repeat", type=int, default=5, metavar="N",
                        help="measure (a) and (b) N times, alternately, and report the medians (default 5)")
    parser.add_argument("--parts", action="store_true",
                        help="also (d): where one process's CPU goes in reading the rounds, part by part")
    args = parser.parse_args(argv)
    archives = [archive_path(round_) for round_ in mirror_rounds()]
    if not archives:
        raise SystemExit("no training_results_vX.Y.tar.gz in the mirror: nothing to measure")
    floors, children = [], []
    for attempt in range(1, args.repeat + 1):  # side by side, alternately: the machine's noise hits both
        print(f"(a) reading {len(archives)} archives ({attempt}/{args.repeat}) ...", flush=True)
        floors.append(read_floor(archives))
        print(f"(b) ingesting them in a child process ({attempt}/{args.repeat}) ...", flush=True)
        children.append(measure_ingest(archives))
    floor = sorted(floors, key=lambda measured: measured.seconds)[len(floors) // 2]
    middle = sorted(children, key=lambda measured: measured.call_s)[len(children) // 2]
    child = replace(middle, max_process_rss=max(c.max_process_rss for c in children),
                    max_tree_rss=max(c.max_tree_rss for c in children))
    pair_ratios = [c.call_s / f.seconds for f, c in zip(floors, children)]
    versus = None
    if not args.no_summarizer:
        print(f"(c) official summarizer on {SPEED_ROUND} ...", flush=True)
        versus = versus_summarizer(SPEED_ROUND)
    print()
    print(format_table(["measure", "value", "target", "verdict"],
                       rows(floor, child, versus, len(archives), pair_ratios)))
    if args.parts:
        print("\n(d) the parts of reading the rounds, one process ...", flush=True)
        start = time.process_time()
        read_floor(archives)
        floor_cpu = time.process_time() - start
        seconds, whole = cpu_parts(archives)
        print()
        print(format_table(["part of reading the rounds (one process)", "CPU", "x floor CPU"],
                           parts_rows(seconds, whole, floor_cpu)))
    print(f"\n{os.cpu_count()} CPU(s), Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
