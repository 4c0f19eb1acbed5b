"""Parity with the official scorer: our ingest against `mlperf_logging.result_summarizer`, round by round.

    python bench/parity.py [ROUND ...]          (default: every round in the mirror)

For each round the archive is unpacked into a fresh temporary folder (the summarizer's RCP checker writes
`scaling.json` files into the folders it checks, so no copy is scored twice), the official summarizer scores it,
and every official score is compared with ours for the same archive. A score that differs by more than 1e-9
relative, and a score only one side gives, is an exception; each is printed with its reason, read from the
summarizer's log (kept with its CSV in bench/out/parity/) and, where the official checker rejected runs, checked
by rescoring our runs without them. Where the summarizer crashes on a round, it is run on each organisation
alone (its unit, a submission package): the organisations it scores are compared, the others are listed with
the crash.

What the summarizer gives for a round is also kept as a fixture, keyed by the archive's SHA-256, so that the
tests compare without running it (`python bench/parity_fixtures.py` writes them to tests/data/parity/).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

if __package__ in (None, ""):  # run as `python bench/parity.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import OUT, ROOT, archive_path, extract, format_table, mirror_rounds, timed
from pipeline.mlperf.catalogue import identify, round_version
from pipeline.mlperf.logs.compliance import round_ruleset
from pipeline.mlperf.logs.scoring import olympic_score
from pipeline.mlperf.rounds import IngestTables, ingest

RELATIVE_TOLERANCE = 1e-9
EXCEPTION_BUDGET = 0.01  # share of a round's compared scores
LOG_DIR = OUT / "parity"
FIXTURES = ROOT / "tests" / "data" / "parity"
# The summarizer names a benchmark column after its folder, except for these (its `_benchmark_alias`).
OFFICIAL_ALIASES = {"mask": "maskrcnn"}
DETAILS_URL = re.compile(r"/blob/main/(?P<desc_submitter>.+)/systems/(?P<system>[^/]+)\.json$")
ROUND_PATH = re.compile(r"\S*/training_results_v\d+\.\d+/(?P<relative>\S+)")
COMPLIANCE_FAILED = re.compile(r"^Compliance check failed in (?P<path>\S+)$")
RUN_ERROR = re.compile(r"^(?P<error>.+?) in (?P<path>\S+/result_[^/\s]*\.txt)$")
RULE = re.compile(r"^(?:WARNING:root: *)?(?P<rule>Failed checks for .+|Required .+ occurrence.*|failed test: .+"
                  r"|CHECK for .+ failed.*)$")
# Lines after which a pending compliance rule no longer belongs to the next rejected run.
CONTEXT_BREAK = re.compile(r"^(?:NOTICE|ERROR|CRITICAL|\*\* CRITICAL|WARNING: RCP|Detected|== )")
EXCEPTION_LINE = re.compile(r"^(?:[\w.]+\.)?(?P<line>\w*(?:Error|Exception)\b.*)$")

MATCHED, MISMATCHED, OFFICIAL_ONLY, OURS_ONLY = "matched", "mismatched", "official-only", "ours-only"
STATUSES = (MATCHED, MISMATCHED, OFFICIAL_ONLY, OURS_ONLY)
EXCEPTIONS = STATUSES[1:]
KEY = ["submitter", "system", "benchmark"]
COMPARISON_COLUMNS = ["round", *KEY, "official_min", "ours_min", "status", "reason"]
# How a reason ends when rescoring our runs without the officially rejected ones gives the official outcome.
REPRODUCES = "reproduces the official one"
AGREES = "agrees with the official summarizer's none"


def run_summarizer(folder: Path, round_: str, log_path: Path, organisation: str | None = None) -> Path | None:
    """Score every organisation of a round folder (or one alone) with the official summarizer; its CSV, or None
    if it crashed.

    stdout and stderr go to `log_path`, unbuffered so that they interleave in order; the CSV lands beside it.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    csv = log_path.with_suffix(".csv")
    csv.unlink(missing_ok=True)
    target = str(folder / organisation) if organisation else f"{folder}/{{*}}"
    command = [sys.executable, "-m", "mlperf_logging.result_summarizer", target, "training",
               round_ruleset(round_), "--csv", str(csv)]
    with log_path.open("w", encoding="utf-8") as log:
        # A fixed hash seed: the checker lists the members of sets in its messages, in an order that changes
        # with it from run to run otherwise.
        done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, cwd=log_path.parent,
                              env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONHASHSEED": "0"}, check=False)
    return csv if done.returncode == 0 and csv.is_file() else None


def organisations(folder: Path) -> list[str]:
    """The organisation folders of a round, as the summarizer finds them (a systems/ and a results/ folder)."""
    return sorted(child.name for child in folder.iterdir()
                  if (child / "systems").is_dir() and (child / "results").is_dir())


def crash_summary(log_text: str) -> str:
    """The exception lines of a crashed summarizer's last traceback, cause first and each once
    (`FieldError: ... -> NameError: ...`)."""
    lines = log_text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Traceback")), len(lines))
    chain = [match.group("line") for line in lines[start:] if (match := EXCEPTION_LINE.match(line))]
    return " -> ".join(dict.fromkeys(chain)) or (lines[-1] if lines else "no output")


def parse_official_csv(path: Path) -> pd.DataFrame:
    """One row per official score: desc_submitter, system (the description's file name), benchmark, official_min."""
    table = pd.read_csv(path)
    keys = table["details_url"].str.extract(DETAILS_URL)
    if keys.isna().any().any():
        raise ValueError(f"{path}: a details_url does not end in <submitter>/systems/<system>.json")
    columns = list(table.columns)
    benchmarks = columns[columns.index("private_id") + 1: columns.index("details_url")]
    scores = pd.concat([keys, table[benchmarks]], axis=1).melt(
        id_vars=["desc_submitter", "system"], var_name="benchmark", value_name="official_min")
    return scores.dropna(subset=["official_min"]).reset_index(drop=True)


@dataclass
class SummarizerLog:
    """What the summarizer printed, with paths made relative to the round folder, and the runs it rejected."""

    lines: list[str]
    rejected_runs: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))

    @classmethod
    def parse(cls, text: str) -> SummarizerLog:
        log = cls([ROUND_PATH.sub(r"\g<relative>", line) for line in text.splitlines()])
        pending: list[str] = []  # compliance rules printed before the "Compliance check failed in" line
        for line in log.lines:
            if rule := RULE.match(line):
                pending.append(" ".join(rule.group("rule").split()))
            elif failed := COMPLIANCE_FAILED.match(line):
                log._reject(failed.group("path"), "; ".join(pending) or "no rule printed")
                pending = []
            elif error := RUN_ERROR.match(line):
                log._reject(error.group("path"), error.group("error"))
                pending = []
            elif CONTEXT_BREAK.match(line):
                pending = []
        return log

    def _reject(self, path: str, why: str) -> None:
        folder, run = path.rsplit("/", 1)
        self.rejected_runs[folder].append((run, why))

    def about(self, fragment: str) -> list[str]:
        return [line for line in self.lines if fragment in line]


SCORE_COLUMNS = ["desc_submitter", "system", "benchmark", "official_min"]


@dataclass
class Official:
    """What the official summarizer gives for one round archive: its scores, the lines of its log that say why
    a run or a system was left out (paths relative to the round folder), and the organisations it crashed on."""

    round: str
    sha256: str
    scores: pd.DataFrame  # SCORE_COLUMNS, one row per score, in key order
    log: list[str]
    crashed: dict[str, str] = field(default_factory=dict)  # organisation ("*": the whole round) -> crash summary
    per_organisation: bool = False  # run on each organisation alone, the round as a whole having crashed
    seconds: float = math.nan
    # organisation -> the crash of its energy computation, where it was scored again without its power logs
    without_power: dict[str, str] = field(default_factory=dict)

    @property
    def log_text(self) -> str:
        return "\n".join(self.log)

    @property
    def scored_everything(self) -> bool:
        return not self.crashed


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run_official(round_: str, archive: Path, log_dir: Path = LOG_DIR) -> Official:
    """Run the summarizer on a fresh copy of the round; where it crashes, on each organisation alone (a fresh
    copy again, as the crashed run may have written scaling.json files); where an organisation with power logs
    crashes, on a fresh copy of it without them (the energy computation that crashes does not feed a time to
    train: the summarizer then scores the times alone)."""
    sha256 = sha256_of(archive)
    with timed() as clock:
        with tempfile.TemporaryDirectory(prefix=f"parity-{round_}-") as tmp:
            folder = extract(archive, Path(tmp))
            log_path = log_dir / f"{round_}.log"
            csv = run_summarizer(folder, round_, log_path)
            text = log_path.read_text(encoding="utf-8", errors="replace")
            if csv is not None:
                return Official(round_, sha256, _sorted_scores(parse_official_csv(csv)), _kept_lines(text),
                                seconds=clock.elapsed())
            log = [f"== the whole round: crashed: {crash_summary(text)}"]
        scores, crashed, without_power = [], {}, {}
        with tempfile.TemporaryDirectory(prefix=f"parity-{round_}-") as tmp:
            folder = extract(archive, Path(tmp))
            for organisation in organisations(folder):
                log_path = log_dir / round_ / f"{organisation}.log"
                csv = run_summarizer(folder, round_, log_path, organisation)
                text = log_path.read_text(encoding="utf-8", errors="replace")
                log += [f"== {organisation}: the official summarizer run on this organisation alone",
                        *_kept_lines(text)]
                if csv is not None:
                    scores.append(parse_official_csv(csv).assign(organisation=organisation))
                elif not any((folder / organisation).glob("results/*/*/power")):
                    crashed[organisation] = crash_summary(text)
                else:
                    with tempfile.TemporaryDirectory(prefix=f"parity-{round_}-{organisation}-") as alone:
                        copy = extract(archive, Path(alone), (organisation,))
                        for power in list(copy.glob(f"{organisation}/results/*/*/power")):
                            shutil.rmtree(power)
                        log_path = log_dir / round_ / f"{organisation}.without-power.log"
                        csv = run_summarizer(copy, round_, log_path, organisation)
                    again = log_path.read_text(encoding="utf-8", errors="replace")
                    log += [f"== {organisation}: run again without its power logs, its energy having crashed: "
                            f"{crash_summary(text)}", *_kept_lines(again)]
                    if csv is None:
                        crashed[organisation] = crash_summary(again)
                    else:
                        scores.append(parse_official_csv(csv).assign(organisation=organisation))
                        without_power[organisation] = crash_summary(text)
    table = pd.concat(scores, ignore_index=True) if scores else pd.DataFrame(columns=SCORE_COLUMNS)
    return Official(round_, sha256, _sorted_scores(table), log, crashed, per_organisation=True,
                    seconds=clock.elapsed(), without_power=without_power)


def _sorted_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """The scores in key order; with the organisation folder each came from where the summarizer ran on each
    alone (the description's submitter, which is all its CSV gives, can be that of several folders)."""
    columns = SCORE_COLUMNS + [column for column in ("organisation",) if column in scores.columns]
    return scores[columns].sort_values([*SCORE_COLUMNS[:3], *columns[4:]]).reset_index(drop=True)


def _kept_lines(log_text: str) -> list[str]:
    """The lines of a summarizer log that `SummarizerLog` and `Evidence` read, paths made relative to the round
    folder: the compliance rules a run broke and the run they rejected, the errors that dropped a run, the
    notices about a result, and any line naming a system or results folder. The long context dumps of the
    compliance checker are left out."""
    kept = []
    for line in log_text.splitlines():
        line = ROUND_PATH.sub(r"\g<relative>", line)
        if (RULE.match(line) or COMPLIANCE_FAILED.match(line) or RUN_ERROR.match(line)
                or CONTEXT_BREAK.match(line) or "/systems/" in line or "/results/" in line):
            kept.append(line.rstrip())
    return kept


def fixture_paths(round_: str, directory: Path = FIXTURES) -> tuple[Path, Path]:
    """(scores CSV, manifest JSON) of a round's fixture."""
    return directory / f"{round_}.csv", directory / f"{round_}.json"


def write_fixture(official: Official, archive: Path, directory: Path = FIXTURES) -> None:
    from importlib.metadata import version
    scores_path, manifest_path = fixture_paths(official.round, directory)
    directory.mkdir(parents=True, exist_ok=True)
    official.scores.to_csv(scores_path, index=False, lineterminator="\n")
    manifest = {
        "round": official.round,
        "archive": archive.name,
        "sha256": official.sha256,
        "summarizer": f"mlperf-logging {version('mlperf-logging')}, mlperf_logging.result_summarizer, "
                      f"ruleset {round_ruleset(official.round)}",
        "regenerate": f"python bench/parity_fixtures.py {official.round}",
        "run": "each organisation alone (the round as a whole crashed)" if official.per_organisation
               else "the whole round",
        "crashed": official.crashed,
        "scored_without_power_logs": official.without_power,
        "scores": len(official.scores),
        "summarizer_seconds": round(official.seconds, 1),
        "log": official.log,
    }
    manifest_path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def read_fixture(round_: str, directory: Path = FIXTURES) -> Official | None:
    """A round's committed fixture, or None where there is none."""
    scores_path, manifest_path = fixture_paths(round_, directory)
    if not manifest_path.is_file():
        return None
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    scores = (pd.read_csv(scores_path, dtype={"desc_submitter": str, "system": str, "benchmark": str,
                                              "organisation": str},
                          keep_default_na=False, na_values={"official_min": [""]})
              if scores_path.is_file() else pd.DataFrame(columns=SCORE_COLUMNS))
    return Official(round_, manifest["sha256"], _sorted_scores(scores), manifest["log"], manifest["crashed"],
                    manifest["run"] != "the whole round", manifest["summarizer_seconds"],
                    manifest.get("scored_without_power_logs", {}))


def compare_official(official: Official, ours: IngestTables) -> pd.DataFrame:
    """`compare` for the organisations the summarizer scored: those it crashed on are left out on our side too."""
    if official.crashed:
        crashed = set(official.crashed)
        keep = ~((ours.results["round"] == official.round) & ours.results["submitter"].isin(crashed))
        ours = IngestTables(ours.systems, ours.runs, ours.results[keep], ours.quarantine, ours.tally)
    return compare(official.scores, ours, official.round, official.log_text)


def compare(official: pd.DataFrame, ours: IngestTables, round_: str, log_text: str = "") -> pd.DataFrame:
    """Every score either side gives for the round, with its status; an exception's reason is empty if unknown.

    `official` is `parse_official_csv` output; its (desc_submitter, system) is mapped to our submitter folder
    through systems.parquet, and our folder names to the summarizer's benchmark names.
    """
    results = ours.results[(ours.results["round"] == round_) & ours.results["time_to_train_min"].notna()]
    ours_scores = pd.DataFrame({
        "submitter": results["submitter"], "system": results["system"], "folder": results["benchmark"],
        "benchmark": results["benchmark"].replace(OFFICIAL_ALIASES), "ours_min": results["time_to_train_min"],
    })
    merged = _with_submitter(official, ours.systems, round_).merge(ours_scores, on=KEY, how="outer")
    merged["round"] = round_
    merged["benchmark"] = merged["folder"].fillna(merged["benchmark"])
    merged["status"] = [_status(o, u) for o, u in zip(merged["official_min"], merged["ours_min"])]
    evidence = Evidence(ours, SummarizerLog.parse(log_text))
    merged["reason"] = [evidence.reason(row) if row["status"] in EXCEPTIONS else ""
                        for row in merged.to_dict("records")]
    merged["order"] = merged["status"].map(STATUSES.index)
    return merged.sort_values(["order", *KEY])[COMPARISON_COLUMNS].reset_index(drop=True)


def _with_submitter(official: pd.DataFrame, systems: pd.DataFrame, round_: str) -> pd.DataFrame:
    """Our submitter folder for each official row: the organisation the summarizer ran on where it ran on each
    alone, else the one folder whose description names that submitter and system; the description's submitter
    where none of ours matches."""
    systems = systems[systems["round"] == round_]
    folders = systems.groupby(["desc_submitter", "system"])["submitter"].agg(list).to_dict()
    submitter = [_single(folders.get(key)) or key[0] for key in zip(official["desc_submitter"], official["system"])]
    if "organisation" in official.columns:
        submitter = [organisation or folder for organisation, folder in zip(official["organisation"], submitter)]
    return official.assign(submitter=pd.Series(submitter, index=official.index, dtype=object))


def _single(values: list[str] | None) -> str | None:
    return values[0] if values and len(values) == 1 else None


def _status(official: float, ours: float) -> str:
    if math.isnan(official):
        return OURS_ONLY
    if math.isnan(ours):
        return OFFICIAL_ONLY
    return MATCHED if math.isclose(official, ours, rel_tol=RELATIVE_TOLERANCE, abs_tol=0.0) else MISMATCHED


@dataclass(frozen=True)
class Evidence:
    ours: IngestTables
    log: SummarizerLog

    def reason(self, row: dict[str, Any]) -> str:
        """Why one score is an exception, from the summarizer's log and our runs; empty when nothing says."""
        submitter, system, folder = row["submitter"], row["system"], row["benchmark"]
        skipped = self.log.about(f"{submitter}/systems/{system}.json")
        if row["status"] == OURS_ONLY and skipped:
            return f"official summarizer skips the system: {skipped[0]}"
        rejected = self.log.rejected_runs.get(f"{submitter}/results/{system}/{folder}", [])
        if rejected:
            return (f"official checker rejects {len(rejected)} run(s): {_by_rule(rejected)}; "
                    f"{self._rescored(row, rejected)}")
        said = self.log.about(f"{submitter}/results/{system}/{folder}") + self.log.about(f" {system}/{folder} ")
        return " | ".join(dict.fromkeys(said))

    def _rescored(self, row: dict[str, Any], rejected: list[tuple[str, str]]) -> str:
        """Our olympic mean with the officially rejected runs counted as non-converged, against the official one."""
        folder = _in_folder(self.ours.results, row)
        if folder.empty:
            return "we have no results folder of that name"
        in_folder = _in_folder(self.ours.runs, row)
        names = {run for run, _ in rejected}
        accepted = in_folder["converged"] & ~in_folder["path"].str.rsplit("/", n=1).str[-1].isin(names)
        benchmark = identify(row["round"], row["benchmark"])
        score = folder["scaling_factor"].iloc[0] * olympic_score(in_folder.loc[accepted, "time_to_train_min"].tolist(),
                                       int((~accepted).sum()), benchmark.olympic_drop if benchmark else 1)
        official = row["official_min"]
        if math.isnan(official):
            verdict = AGREES if math.isnan(score) else "still differs from the official summarizer's none"
        else:
            verdict = REPRODUCES if _status(official, score) == MATCHED else "does NOT reproduce the official one"
        return f"without them our score is {_minutes(score)}, which {verdict}"


def _by_rule(rejected: list[tuple[str, str]]) -> str:
    """`result_0-3,7.txt: <rule> | result_5.txt: <other rule>`: the rejected runs grouped by the rule they broke;
    run ids that are not numbers (`result_<job id>_06.txt`) are listed as they are."""
    runs: dict[str, list[str]] = defaultdict(list)
    for run, why in rejected:
        runs[why].append(run.removeprefix("result_").removesuffix(".txt"))
    return " | ".join(f"result_{_run_list(ids)}.txt: {why}" for why, ids in runs.items())


def _run_list(ids: list[str]) -> str:
    numbers = sorted(int(run) for run in ids if run.isdigit())
    others = sorted(run for run in ids if not run.isdigit())
    return ",".join(([_ranges(numbers)] if numbers else []) + others)


def _ranges(numbers: list[int]) -> str:
    spans: list[list[int]] = []
    for number in numbers:
        if spans and number == spans[-1][1] + 1:
            spans[-1][1] = number
        else:
            spans.append([number, number])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _in_folder(table: pd.DataFrame, row: dict[str, Any]) -> pd.DataFrame:
    """The rows of a runs or results table that belong to one results folder."""
    columns = ["round", *KEY]
    return table[(table[columns] == [row[column] for column in columns]).all(axis=1)]


def _minutes(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.6f}"


def exceptions(comparison: pd.DataFrame) -> pd.DataFrame:
    return comparison[comparison["status"].isin(EXCEPTIONS)]


def exception_share(comparison: pd.DataFrame) -> float:
    return len(exceptions(comparison)) / len(comparison) if len(comparison) else 0.0


def rescored_to_official(comparison: pd.DataFrame) -> int:
    """Exceptions whose official outcome our runs give once the officially rejected runs are left out."""
    return int(exceptions(comparison)["reason"].str.endswith((REPRODUCES, AGREES)).sum())


@dataclass
class RoundParity:
    round: str
    summarizer_s: float
    ingest_s: float
    comparison: pd.DataFrame | None  # None when the summarizer crashed
    crash: str = ""
    own_scores: pd.DataFrame | None = None  # ours alone, shown where the summarizer crashed

    def cells(self) -> list[str]:
        timing = [f"{self.summarizer_s:.1f}", f"{self.ingest_s:.2f}", f"{self.summarizer_s / self.ingest_s:.0f}x"]
        if self.comparison is None:  # a speed-up over a crash would mean nothing
            return [self.round, "crashed", *["-"] * 7, *timing[:2], "-", "-", "-"]
        counts = self.comparison["status"].value_counts()
        bad = exceptions(self.comparison)
        share = exception_share(self.comparison)
        met = share < EXCEPTION_BUDGET and bool((bad["reason"] != "").all())
        official = sum(int(counts.get(status, 0)) for status in (MATCHED, MISMATCHED, OFFICIAL_ONLY))
        return [self.round, str(official), *(str(int(counts.get(status, 0))) for status in STATUSES),
                str(len(bad)), f"{100 * share:.2f}%", str(rescored_to_official(self.comparison)), *timing,
                ", ".join(sorted(organisation for organisation, _ in self.crashed())) or "-",
                "PASS" if met else "FAIL"]

    def crashed(self) -> list[tuple[str, str]]:
        """(organisation, crash) of each organisation the summarizer crashed on, from `crash`."""
        return [tuple(part.split(": ", 1)) for part in self.crash.split("; ") if ": " in part]  # type: ignore[misc]


HEADER = ["round", "official scores", "reproduced", "mismatched", "official-only", "ours-only", "exceptions",
          "exception %", "rescored = official", "summarizer s", "ingest s", "speed-up", "not scored (crashed on)",
          "target"]


def check_round(round_: str, log_dir: Path = LOG_DIR, from_fixtures: bool = False) -> RoundParity:
    """Our ingest of a round against the summarizer, run now or read from the round's committed fixture."""
    archive = archive_path(round_)
    with timed() as ingest_clock:
        ours = ingest([archive])
    if from_fixtures:
        official = read_fixture(round_)
        if official is None:
            raise SystemExit(f"no parity fixture for {round_}: python bench/parity_fixtures.py {round_}")
        if official.sha256 != sha256_of(archive):
            raise SystemExit(f"{archive} is not the archive the {round_} fixture was made from: "
                             f"python bench/parity_fixtures.py {round_}")
    else:
        official = run_official(round_, archive, log_dir)
    crash = "; ".join(f"{who}: {why}" for who, why in official.crashed.items())
    if official.crashed and official.scores.empty:  # nothing scored: nothing to compare
        return RoundParity(round_, official.seconds, ingest_clock.seconds, None, crash, own_scores(ours, round_))
    return RoundParity(round_, official.seconds, ingest_clock.seconds, compare_official(official, ours), crash)


OWN_HEADER = ["round", "results", "scored", "runs", "converged runs", "runs of scored results"]
OWN_COLUMNS = ["submitter", "system", "benchmark", "n_runs", "n_converged", "time_to_train_min"]


def own_scores(ours: IngestTables, round_: str) -> pd.DataFrame:
    """Every results folder of the round as our ingest scores it (NaN where it gives no score), in key order."""
    results = ours.results[ours.results["round"] == round_]
    return results[OWN_COLUMNS].sort_values(KEY).reset_index(drop=True)


def own_cells(round_: str, scores: pd.DataFrame) -> list[str]:
    """A summary row of our own scores for a round the summarizer cannot score."""
    scored = scores["time_to_train_min"].notna()
    return [round_, str(len(scores)), str(int(scored.sum())), str(int(scores["n_runs"].sum())),
            str(int(scores["n_converged"].sum())), str(int(scores.loc[scored, "n_runs"].sum()))]


def own_score_lines(round_: str, scores: pd.DataFrame) -> list[str]:
    return [f"{round_} {row['submitter']}/{row['system']}/{row['benchmark']}: {_minutes(row['time_to_train_min'])} min "
            f"from {row['n_converged']} of {row['n_runs']} runs converged"
            for row in scores.to_dict("records")]


def exception_lines(comparison: pd.DataFrame) -> list[str]:
    return [f"{row['round']} {row['status']:<13} {row['submitter']}/{row['system']}/{row['benchmark']}: "
            f"official {_minutes(row['official_min'])} min, ours {_minutes(row['ours_min'])} min\n"
            f"      reason: {row['reason'] or 'UNEXPLAINED: the summarizer log says nothing about this folder'}"
            for row in exceptions(comparison).to_dict("records")]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python bench/parity.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("rounds", nargs="*", metavar="ROUND", help="e.g. v5.0 (default: every round in the mirror)")
    parser.add_argument("--log-dir", type=Path, default=LOG_DIR, help=f"summarizer logs and CSVs (default {LOG_DIR})")
    parser.add_argument("--from-fixtures", action="store_true",
                        help="compare with the committed fixtures (tests/data/parity) instead of running the "
                             "summarizer; summarizer s is then the time it took when the fixture was made")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    available = mirror_rounds()
    rounds = sorted(args.rounds or available, key=round_version)
    unknown = sorted(set(rounds) - set(available))
    if unknown:
        raise SystemExit(f"no archive for {', '.join(unknown)} in the mirror (has: {', '.join(available)})")
    checked = []
    for round_ in rounds:
        if not args.from_fixtures:
            print(f"{round_}: running the official summarizer ...", flush=True)
        parity = check_round(round_, args.log_dir, args.from_fixtures)
        if parity.crash:
            print(f"{round_}: the official summarizer crashed on {parity.crash}", flush=True)
        checked.append(parity)
    print()
    print(format_table(HEADER, [parity.cells() for parity in checked]))
    print(f"\ntarget: every official score reproduced within {RELATIVE_TOLERANCE:g} relative; exceptions below "
          f"{EXCEPTION_BUDGET:.0%} of the compared scores (official and ours), each with its reason.\n"
          "rescored = official: exceptions whose official outcome our runs give once the runs the official "
          f"compliance checker rejects are left out. Summarizer logs and CSVs: {args.log_dir}")
    details = [line for parity in checked if parity.comparison is not None
               for line in exception_lines(parity.comparison)]
    print(f"\nexceptions ({len(details)}):")
    print("\n".join(details) or "  none")
    for parity in checked:
        for organisation, crash in parity.crashed():
            print(f"{parity.round} crashed on {organisation}: {crash}")
    crashed = [parity for parity in checked if parity.comparison is None]
    if crashed:
        print("\nwhere the summarizer crashed, our own scores (nothing to compare them with):\n")
        print(format_table(OWN_HEADER, [own_cells(parity.round, parity.own_scores) for parity in crashed]))
        for parity in crashed:
            print()
            print("\n".join(own_score_lines(parity.round, parity.own_scores)))


if __name__ == "__main__":
    main()
