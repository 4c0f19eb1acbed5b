"""Print the findings' figures on the real data: first, how many findings and tests are supported before and after
Holm's correction over every analysed benchmark (the page's headline figure) and the verdict totals; per benchmark,
the first-ranked configuration of its latest round, whether any ranked configuration is dominated by one ranked
below it, the within-series efficiencies above the superlinear threshold with how many the convergence work ratio
explains, the share of within-series members scaling sublinearly with their submitters and the sublinear verdict
(where issue 38's bar applies and the verdict is not supported: the members at or above linear), and each finding's
tests: n, submitters, effect with interval, p (CR2 standard error), its Bell-McCaffrey degrees of
freedom, Holm-adjusted p and verdict. The last line checks issue 38's bar: sublinear reads supported in every
benchmark where at least `QUALIFYING_SHARE` of the within-series members scale sublinearly and they come from at
least `QUALIFYING_SUBMITTERS` submitters.

    python bench/findings.py [BENCHMARK ...]     # default: every analysed benchmark of params.yaml

Reads data/processed/configurations.parquet (run `dvc repro features` first) and params.yaml, from the root.
"""
from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


import pandas as pd

from bench._common import BENCHMARKS, arguments
from pipeline.analysis import scope
from pipeline.analysis.statistics import findings, superlinear
from pipeline.analysis.statistics import ranking as rank
from pipeline.settings import load_settings

QUALIFYING_SHARE = 0.9  # issue 38: the share of within-series members below linear that should read supported
QUALIFYING_SUBMITTERS = 5  # ... when they come from at least this many submitters


def main(benchmarks: list[str]) -> None:
    project = load_settings()
    analysis, settings = project.analysis, project.findings
    criteria = project.rank.model_dump()["criteria"]
    configurations = scope.read_configurations()
    in_division = configurations[configurations["division"] == analysis.division] \
        if analysis.division != "all" else configurations
    print(f"within-series efficiencies > {settings.superlinear_threshold} ({analysis.division} division, all "
          f"benchmarks): {int((in_division['scaling_efficiency'] > settings.superlinear_threshold).sum())} of "
          f"{int(in_division['scaling_efficiency'].notna().sum())}, none outside a series: "
          f"{bool(in_division.loc[in_division['scaling_efficiency'] > 1, 'series'].notna().all())}")
    analysed = scope.analysed_benchmarks(analysis, configurations)
    frames = {benchmark: scope.in_scope(configurations, analysis, benchmark) for benchmark in analysed}
    frames = {benchmark: frame for benchmark, frame in frames.items() if len(frame) >= analysis.min_configurations}
    adjusted, correction = findings.across_benchmarks({benchmark: findings.evaluate(frame, settings)
                                                       for benchmark, frame in frames.items()}, settings)
    print(f"{correction.statement()}; tests: {correction.tests_supported} of {correction.tests} supported after the "
          f"correction, {correction.tests_supported_raw} before; findings not tested for too few submitters or "
          f"results: {sum(all(t.p_raw is None for t in item.tests) for items in adjusted.values() for item in items)}")
    every = [item for items in adjusted.values() for item in items]
    print("verdicts: " + ", ".join(f"{sum(item.verdict == verdict for item in every)} {verdict}"
                                   for verdict in findings.VERDICTS))
    qualifying: dict[str, str] = {}  # benchmark -> its sublinear verdict, where issue 38's bar applies
    for benchmark in benchmarks or analysed:
        if benchmark not in frames:
            print(f"\n{benchmark}: not analysed")
            continue
        frame = frames[benchmark]
        ranking = rank.rank_configurations(frame, criteria)
        cases = superlinear.superlinear_cases(frame, settings.superlinear_threshold)
        first = rank.latest_round_ranking(ranking).iloc[0]
        violations = rank.dominance_violations(ranking, "rank")
        round_violations = sum(rank.dominance_violations(group, "round_rank") for _, group in ranking.groupby("round"))
        print(f"\n{benchmark}: {len(ranking)} configurations; first of {first['round']}: {first['submitter']} "
              f"{first['system']}, {first['accelerator_count']:.0f} x {first['accelerator_family']}, "
              f"{first['time_to_train_min']:.2f} min, {first['accelerator_hours']:.2f} accelerator-hours; "
              f"dominated pairs ranked wrongly: {violations} over all rounds, {round_violations} within rounds; "
              f"efficiencies > {settings.superlinear_threshold}: {len(cases)}, explained by the convergence work: "
              f"{sum(case.explained_by == superlinear.WORK for case in cases)}")
        members = findings.scaled_members(frame)
        below = int((members["scaling_efficiency"] < 1).sum())
        verdict = next(item.verdict for item in adjusted[benchmark] if item.key == "sublinear")
        if _qualifies(members):
            qualifying[benchmark] = verdict
        print(f"  within-series members below 1: {below} of {len(members)} ({below / max(len(members), 1):.0%}), "
              f"{members['submitter'].nunique()} submitters, {members['series'].nunique()} series; sublinear "
              f"{verdict}{' (qualifying)' if _qualifies(members) else ''}")
        if _qualifies(members) and verdict != findings.SUPPORTED:
            at_or_above = members[members["scaling_efficiency"] >= 1]
            print("  members at or above linear: " + ", ".join(
                f"{row.submitter} {row.accelerator_count:.0f} accelerators {row.scaling_efficiency:.3f}"
                for row in at_or_above.itertuples()))
        for item in adjusted[benchmark]:
            for test in item.tests:
                numbers = (f"n={test.n} sub={test.submitters} {test.effect_text() or '-'} p={_p(test.p_raw)} "
                           f"df={_p(test.df)} holm={_p(test.p_adjusted)}")
                print(f"  {item.key:<20} {test.verdict:<13} {numbers}" + (f"  [{test.note}]" if test.note else ""))
    supported = [benchmark for benchmark, verdict in qualifying.items() if verdict == findings.SUPPORTED]
    print(f"\nsublinear supported in {len(supported)} of {len(qualifying)} qualifying benchmarks (at least "
          f"{QUALIFYING_SHARE:.0%} of within-series members below 1, from {QUALIFYING_SUBMITTERS} or more "
          f"submitters); not supported: {', '.join(sorted(set(qualifying) - set(supported))) or 'none'}; issue 38's "
          f"Done-when {'holds' if len(supported) == len(qualifying) else 'does not hold'}")


def _qualifies(members: pd.DataFrame) -> bool:
    """Issue 38's bar: at least QUALIFYING_SHARE of the within-series members (above their base) below 1, from at
    least QUALIFYING_SUBMITTERS submitters."""
    return bool(len(members) and members["submitter"].nunique() >= QUALIFYING_SUBMITTERS
                and round((members["scaling_efficiency"] < 1).mean(), 10) >= QUALIFYING_SHARE)

def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.2g}"


if __name__ == "__main__":
    main(arguments(__doc__, BENCHMARKS).benchmarks)
