"""The importance gate on the real data, per benchmark and target: R^2 on held-out architecture generations (every
family of a generation held out together: B200 with GB200, H100 with H200 and GH200), the baseline's R^2, the gain
with its 95% cluster-bootstrap interval over the generations, the gate's verdict, and how stably each feature is
selected (the share of bootstrap resamples of the generations in which the selection rule keeps it); then the
selected features per benchmark (never the baseline's own term, accelerator_count).

    python bench/importance_check.py [BENCHMARK ...]            # params.yaml's importance settings
    python bench/importance_check.py --seeds 0-9 [BENCHMARK ...]  # also: does any verdict or selection move?

Reads data/processed/configurations.parquet (run `dvc repro features` first) and params.yaml, from the root, and
runs `pipeline.analysis.statistics.importance.analyse` in-process (the importance stage's work, without its files). With
`--seeds`, the study runs once per `importance.seed` of the range and the last table says, per benchmark, the gate
verdicts and selections of every seed (the stage must run for any seed, and its answers should not depend on it).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import format_table
from pipeline.analysis import scope
from pipeline.analysis.statistics import importance
from pipeline.settings import load_settings

SHOWN = 4  # features listed per target, most often kept first


def seed_range(text: str) -> list[int]:
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benchmarks", nargs="*")
    parser.add_argument("--seeds", type=seed_range, default=None, help="a range such as 0-9")
    arguments = parser.parse_args(argv)
    project = load_settings()
    configurations = scope.read_configurations()
    benchmarks = arguments.benchmarks or scope.analysed_benchmarks(project.analysis, configurations)
    frames = {benchmark: scope.in_scope(configurations, project.analysis, benchmark) for benchmark in benchmarks}
    settings = project.importance
    start = time.process_time()
    reports = {benchmark: importance.analyse(frame, settings, project.analysis.min_configurations, benchmark=benchmark)
               for benchmark, frame in frames.items()}
    seconds = time.process_time() - start
    rows = []
    for benchmark, report in reports.items():
        if report.status != "ok" or report.gate is None:
            rows.append([benchmark, "", "", "", "", f"not analysed: {report.reason}", ""])
            continue
        for target, verdict in report.gate.targets.items():
            shares = report.targets[target].stability
            first = target == next(iter(report.gate.targets))
            rows.append([f"{benchmark} ({report.n_generations} generations)" if first else "",
                         target.removeprefix("log_"), f"{verdict.oof_r2:.2f}", f"{verdict.baseline_r2:.2f}",
                         f"{verdict.gain:+.2f} [{verdict.gain_low:+.2f}, {verdict.gain_high:+.2f}]",
                         "credits hardware" if verdict.passes else f"no: {verdict.reason}",
                         ", ".join(f"{name} {share:.2f}" for name, share in list(shares.items())[:SHOWN])])
    print(f"leave one architecture generation out (all its families together), bootstrap {settings.bootstrap} "
          f"resamples of the generations, "
          f"min_families {settings.min_families}, min_r2 {settings.min_r2}, select.min_stability "
          f"{settings.select.min_stability}, seed {settings.seed}; baseline: {importance.BASELINE}\n")
    print(format_table(["benchmark", "target", "R2 unseen generations", "baseline R2", "gain [95% CI]", "gate",
                        "kept in share of resamples"], rows))
    print("\nselected (share of resamples keeping it, over the targets that credit hardware):")
    for benchmark, report in reports.items():
        if report.status == "ok":
            chosen = ", ".join(f"{name} {report.selection_stability[name]:.2f}" for name in report.selected_features)
            print(f"  {benchmark}: {chosen or 'none'}")
    credited = [b for b, r in reports.items() if r.gate is not None and r.gate.explained]
    print(f"\n{len(credited)} of {len(reports)} benchmarks credit hardware features on some target; the study took "
          f"{seconds:.1f} CPU s")
    if arguments.seeds:
        seed_check(frames, arguments.seeds, project)


def seed_check(frames: dict, seeds: list[int], project: object) -> None:
    """Run the study for every seed; print per benchmark whether the gate verdicts or the selection moved."""
    settings = project.importance  # type: ignore[attr-defined]
    minimum = project.analysis.min_configurations  # type: ignore[attr-defined]
    answers: dict[str, list[tuple[tuple[bool, ...], frozenset[str]]]] = {benchmark: [] for benchmark in frames}
    for seed in seeds:
        seeded = settings.model_copy(update={"seed": seed})
        for benchmark, frame in frames.items():
            report = importance.analyse(frame, seeded, minimum, benchmark=benchmark)
            passes = tuple(v.passes for v in report.gate.targets.values()) if report.gate is not None else ()
            answers[benchmark].append((passes, frozenset(report.selected_features)))
    rows, moved = [], 0
    for benchmark, runs in answers.items():
        gates, selections = {run[0] for run in runs}, {run[1] for run in runs}
        moved += len(gates) > 1 or len(selections) > 1
        rows.append([benchmark, "same" if len(gates) == 1 else f"{len(gates)} different",
                     "same" if len(selections) == 1 else f"{len(selections)} different",
                     " | ".join(", ".join(sorted(selection)) or "none"
                                for selection in sorted(selections, key=sorted))])
    print(f"\nseeds {seeds[0]}-{seeds[-1]}: the stage ran for every seed and benchmark; gate verdicts or selection "
          f"(as sets) moved in {moved} of {len(frames)} benchmarks")
    print(format_table(["benchmark", "gate verdicts", "selection", "selections seen"], rows))


if __name__ == "__main__":
    main(sys.argv[1:])
