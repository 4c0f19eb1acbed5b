"""Forward-chaining backtest of `pipeline.commands.predict`'s answers on the real data, per benchmark and overall.

    python bench/backtest.py            (after `dvc repro features`; runs the backtest afresh twice, ~1 min:
                                         republished results left out, as the pipeline does, then included;
                                         --pipeline-only: the first alone)

For each round, the model is fitted on the earlier rounds and every result of the round is
forecast as `predict` would have answered then: by the method chosen on the earlier folds (the model, the monotone
naive rule or their blend), with its interval and its trust (see `pipeline.analysis.forecasting.model`). The naive
rule (the
family's best time at the nearest count of its latest round, scaled linearly) is the bar. Printed overall, per
benchmark and for the latest fold on its own: forecasts, median and 90th-percentile absolute percentage error, the
share inside the 90% interval with its exact (Clopper-Pearson) 90% interval, the naive rule's median error and the
answers' on the results both forecast, the median signed error (predicted / published - 1); then trusted against
untrusted answers, new families (a family's first round in a benchmark, from a sibling or the specifications)
against known ones, per fold too, and the issue's checks. Then the scale-out backtest
(`pipeline.analysis.forecasting.scaleout`, issue 50): (a) within a round from a quarter of the count or less, (b)
the next round above a family's largest count, (c) the latest fold at 256 accelerators or more, (a) and the next
round by distance beyond the counts fitted on, and, on the pipeline's scope, each form of the count curve beyond
the published counts (`curve.FORMS`) on the whole backtest and on (a), (b) and (c).
"""
from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binomtest

if __package__ in (None, ""):  # run as `python bench/backtest.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import arguments
from pipeline.analysis.forecasting.backtest import backtest
from pipeline.analysis.forecasting.curve import FORMS, POWER
from pipeline.analysis.forecasting.model import ANSWER, MEASURED, NEW_FAMILY_KINDS, model_inputs_by_benchmark
from pipeline.analysis.forecasting.scaleout import (
    LARGE_COUNT,
    SCALE_OUT_RATIO,
    ScaleOut,
    backtest_view,
    compared_forms,
    distance_bands,
    form_comparison,
    scale_out_table,
)
from pipeline.analysis.forecasting.siblings import (
    LAWS,
    MEASURED_LAW,
    SPEC_LAWS,
    benchmark_ratios,
    choose_law,
    first_appearances,
    law_log_ratio,
    measured_ratios,
    pooled_ratios,
    sibling_of,
)
from pipeline.analysis.forecasting.summaries import ErrorSummary, compare
from pipeline.analysis.forecasting.trust import coverage_consistent
from pipeline.mlperf.catalogue import round_published
from pipeline.mlperf.hardware.accelerators import specifications
from pipeline.settings import DecideTrustSettings, load_settings


def _exact(summary: ErrorSummary) -> str:
    """The exact 90% interval of a summary's coverage, "lo-hi" in percent."""
    if not summary.n:
        return ""
    interval = binomtest(summary.inside, summary.n).proportion_ci(confidence_level=0.9, method="exact")
    return f"{100 * interval.low:.0f}-{100 * interval.high:.0f}"


def _fmt(value: float | None, scale: float = 1.0, digits: int = 1) -> str:
    return "" if value is None else f"{scale * value:.{digits}f}"


def median_signed_error(points: pd.DataFrame) -> float | None:
    """The median signed error (%) of predict's answers among `points`, predicted / published - 1: positive when
    the forecasts are too slow."""
    answers = points[points["method"] == ANSWER]
    if answers.empty:
        return None
    return float(100 * (answers["predicted_min"] / answers["time_to_train_min"] - 1).median())


def accuracy_table(points: pd.DataFrame, by: str = "benchmark") -> pd.DataFrame:
    """Per value of `by` (benchmark or fold) and overall: predict's answers (forecasts, median, p90 and median
    signed error, coverage with its exact interval), and on the results the naive rule also forecast: the naive
    rule's median, the answers' and the model's; the better of answer and naive there; which methods answered."""
    rows = {}
    for name, group in [*points.groupby(by, sort=False), ("overall", points)]:
        comparison = compare(group)
        answer = comparison.answer
        rows[name] = {"forecasts": answer.n, "median %": _fmt(answer.median_ape_pct),
                      "p90 %": _fmt(answer.p90_ape_pct), "signed %": _fmt(median_signed_error(group)),
                      "in 90% (%)": _fmt(answer.coverage, 100, 0),
                      "exact 90%": _exact(answer), "both": comparison.common_n,
                      "naive median %": _fmt(comparison.common_naive_median_ape_pct),
                      "chosen median %": _fmt(comparison.common_answer_median_ape_pct),
                      "model median %": _fmt(comparison.common_model_median_ape_pct),
                      "better": "" if not comparison.common_n else
                      "chosen" if comparison.better == ANSWER else "naive",
                      "methods": ", ".join(f"{method} {n}" for method, n in comparison.methods.items())}
    return pd.DataFrame.from_dict(rows, orient="index")


def new_family_table(points: pd.DataFrame, by: str = "benchmark") -> pd.DataFrame:
    """Per value of `by` and overall: answers for a family's first round in the benchmark (from a sibling or the
    specifications, `NEW_FAMILY_KINDS`) against the others (known families), and among them those from their
    sibling's curve by a ratio measured on other benchmarks (`MEASURED`): count, median, p90 and median signed
    error, coverage and its exact interval."""
    answers = points[points["method"] == ANSWER]
    new = answers["kind"].isin(NEW_FAMILY_KINDS)
    measured = answers["kind"] == MEASURED
    rows = {}
    for name, group in [*answers.groupby(by, sort=False), ("overall", answers)]:
        row: dict[tuple[str, str], object] = {}
        for label, part in (("known", group[~new.loc[group.index]]), ("new families", group[new.loc[group.index]]),
                            ("of which measured ratio", group[measured.loc[group.index]])):
            summary = ErrorSummary.of(part)
            row.update({(label, "n"): summary.n, (label, "median %"): _fmt(summary.median_ape_pct),
                        (label, "p90 %"): _fmt(summary.p90_ape_pct), (label, "signed %"): _fmt(
                            median_signed_error(part)), (label, "in 90% (%)"): _fmt(summary.coverage, 100, 0),
                        (label, "exact 90%"): _exact(summary)})
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def sibling_ratio_table(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The ratio a new family's forecast stands on, checked on every pair of one vendor's families (the later
    launched first) with results in one round at one count of a benchmark: their ratio there (`measured_ratios`
    of that round) against the one measured on the other benchmarks before the round (the model's, None without
    any) and their specifications' (`law_log_ratio`: geometric mean of peak BF16 TFLOPS and memory bandwidth).
    Per fold and overall: cases, median absolute and signed error (%) of each on the cases with both; last, the
    same overall for pairs of two vendors (a stand-in's)."""
    table = specifications()
    cases = []
    for fold in sorted({name for frame in frames.values() for name in frame["round"].unique()},
                       key=round_published):
        before = benchmark_ratios(frames, round_published(fold))
        for benchmark in sorted(frames):
            frame = frames[benchmark]
            earlier = {(ratio.family, ratio.sibling): ratio.log_ratio
                       for ratio in pooled_ratios(before[before["benchmark"] != benchmark])}
            for ratio in measured_ratios({benchmark: frame[frame["round"] == fold]}, math.inf):
                family, sibling = ratio.family, ratio.sibling
                if (family not in table.index or sibling not in table.index or (family, sibling) not in earlier
                        or (int(table.loc[family, "launch_year"]), family)
                        <= (int(table.loc[sibling, "launch_year"]), sibling)):
                    continue
                law = law_log_ratio(family, sibling)
                if math.isfinite(law):
                    same = table.loc[family, "vendor"] == table.loc[sibling, "vendor"]
                    cases.append({"fold": fold, "vendors": same,
                                  "measured": earlier[(family, sibling)] - ratio.log_ratio,
                                  "specification": law - ratio.log_ratio})
    found = pd.DataFrame(cases, columns=["fold", "vendors", "measured", "specification"])
    one = found[found["vendors"].astype(bool)]
    rows = {}
    for name, group in [*one.groupby("fold", sort=False), ("overall", one),
                        ("two vendors, overall", found[~found["vendors"].astype(bool)])]:
        row: dict[str, object] = {"cases": len(group)}
        for label in ("measured", "specification"):
            errors = 100 * (np.exp(group[label].to_numpy(dtype=float)) - 1)
            row.update({f"{label} median %": _fmt(float(np.median(np.abs(errors)))),
                        f"{label} signed %": _fmt(float(np.median(errors)))})
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def law_table(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The candidate laws of a new family's ratio to its sibling (`siblings.choose_law`), fold by fold: the law
    chosen on the earlier folds' first appearances (and whether a measured ratio replaces it where there is one),
    how many it was chosen on, and each law's median |error| (%, exp(|log error|) - 1) on the fold's own first
    appearances (out of sample; signed in brackets: positive, the forecast too slow) and, last, on every fold's."""
    cases = first_appearances(frames)
    rows = {}
    folds = sorted({str(name) for frame in frames.values() for name in frame["round"].unique()},
                   key=round_published)[1:]  # every fold of the backtest
    for name in [*folds, "every fold"]:
        own = cases if name == "every fold" else cases[cases["fold"] == name]
        first = own[own["first"].astype(bool)]
        row: dict[str, object] = {"chosen": "", "on": "", "meetings": ""}
        if name != "every fold":
            choice = choose_law(cases, round_published(name))
            row.update({"chosen": choice.law + (" (measured where one)" if choice.measured else ""),
                        "on": choice.cases, "meetings": choice.measured_cases})
        row["first appearances"] = len(first)
        for law in LAWS:
            part = first if law in SPEC_LAWS else own
            errors = (part[law] - part["actual"]).to_numpy(dtype=float)
            errors = errors[np.isfinite(errors)]
            row[law if law in SPEC_LAWS else f"{MEASURED_LAW} (meetings)"] = "" if not len(errors) else (
                f"{100 * math.expm1(float(np.median(np.abs(errors)))):.1f} "
                f"({100 * math.expm1(float(np.median(errors))):+.1f}) n={len(errors)}")
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def latest_first_appearances(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The latest fold's first appearances (`siblings.first_appearances`): each new family and its sibling, the
    precision assumed, the published ratio of their times in the round and each candidate law's (time of family /
    time of sibling): what no ratio of specifications carries shows here (GB300 against GB200, equal BF16 and FP8
    peaks)."""
    cases = first_appearances(frames)
    latest = cases[cases["first"].astype(bool) & (cases["time"] == cases["time"].max())]
    return pd.DataFrame({"benchmark": latest["benchmark"], "family": latest["family"], "sibling": latest["sibling"],
                         "precision": latest["precision"],
                         "published": np.exp(latest["actual"].to_numpy(dtype=float)).round(3),
                         **{law: np.exp(latest[law].to_numpy(dtype=float)).round(3) for law in LAWS}})


def next_round_ratios(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The next round's new families forecast by a measured ratio: on each benchmark of the latest round, each
    family of the latest round without results there whose sibling (`sibling_of`, its vendor's) has some, with
    their measured ratio (time of family / time of sibling, over how many benchmarks) and their specifications';
    and, for each stand-in (another vendor's family) with one, the ratio the model leaves unused."""
    latest = max((name for frame in frames.values() for name in frame["round"].unique()), key=round_published)
    ratios = {(ratio.family, ratio.sibling): ratio for ratio in measured_ratios(frames, math.inf)}
    current = sorted({str(family) for frame in frames.values()
                      for family in frame.loc[frame["round"] == latest, "accelerator_family"]})
    rows = []
    for benchmark in sorted(frames):
        frame = frames[benchmark]
        if not (frame["round"] == latest).any():
            continue
        present = set(frame["accelerator_family"].astype(str))
        for family in current:
            found = None if family in present else sibling_of(family, present)
            ratio = None if found is None else ratios.get((family, found[0]))
            if found is None or ratio is None:
                continue
            law = law_log_ratio(family, found[0])
            rows.append({"benchmark": benchmark, "family": family,
                         "sibling": found[0] if found[1] else f"{found[0]} (stand-in, unused)",
                         "measured": _fmt(math.exp(ratio.log_ratio), digits=3), "benchmarks": ratio.benchmarks,
                         "specifications": _fmt(math.exp(law), digits=3) if math.isfinite(law) else ""})
    return pd.DataFrame(rows, columns=["benchmark", "family", "sibling", "measured", "benchmarks", "specifications"])


def trust_table(points: pd.DataFrame, coverage: tuple[float, float], by: str = "benchmark") -> pd.DataFrame:
    """Per value of `by` (benchmark or fold) and overall: trusted answers (count, median, p90, coverage, its exact
    interval, whether it is consistent with `coverage`) against untrusted ones (count, median, p90, coverage), and
    the p90 ratio."""
    rows = {}
    for name, group in [*points.groupby(by, sort=by == "benchmark"), ("overall", points)]:
        comparison = compare(group)
        trusted, untrusted = comparison.trusted, comparison.untrusted
        ratio = (trusted.p90_ape_pct / untrusted.p90_ape_pct
                 if trusted.p90_ape_pct is not None and untrusted.p90_ape_pct else None)
        rows[name] = {("trusted", "n"): trusted.n, ("trusted", "median %"): _fmt(trusted.median_ape_pct),
                      ("trusted", "p90 %"): _fmt(trusted.p90_ape_pct),
                      ("trusted", "in 90% (%)"): _fmt(trusted.coverage, 100, 0),
                      ("trusted", "exact 90%"): _exact(trusted),
                      ("trusted", "consistent"): "" if not trusted.n else
                      "yes" if coverage_consistent(trusted.inside, trusted.n, coverage) else "NO",
                      ("untrusted", "n"): untrusted.n, ("untrusted", "median %"): _fmt(untrusted.median_ape_pct),
                      ("untrusted", "p90 %"): _fmt(untrusted.p90_ape_pct),
                      ("untrusted", "in 90% (%)"): _fmt(untrusted.coverage, 100, 0),
                      ("", "p90 ratio"): _fmt(ratio, digits=2)}
    return pd.DataFrame.from_dict(rows, orient="index")


def checks(points: pd.DataFrame, latest: str, coverage: tuple[float, float]) -> list[str]:
    """The issue's acceptance checks, one line each."""
    lines = []
    for scope, group in (("overall", points), (f"latest fold {latest}", points[points["fold"] == latest])):
        comparison = compare(group)
        answer, naive = comparison.common_answer_median_ape_pct, comparison.common_naive_median_ape_pct
        trusted, untrusted = comparison.trusted.p90_ape_pct, comparison.untrusted.p90_ape_pct
        half = trusted is not None and bool(untrusted) and trusted <= untrusted / 2
        lines.append(f"{scope}: chosen median {_fmt(answer)}% against the naive rule's {_fmt(naive)}% on "
                     f"{comparison.common_n} results: {'beats' if comparison.better == ANSWER else 'does NOT beat'} "
                     f"it; trusted p90 {_fmt(trusted)}% against untrusted {_fmt(untrusted)}%: "
                     f"{'at most half' if half else 'NOT at most half'}")
    known = points[~points["kind"].isin(NEW_FAMILY_KINDS)]
    for label, subset in (("every answer", points), ("known families", known)):
        signed = {fold: median_signed_error(group) for fold, group in subset.groupby("fold", sort=False)}
        outside = [f"{fold} ({value:+.1f}%)" for fold, value in signed.items() if value is not None and abs(value) > 3]
        lines.append(f"median signed error within +-3% on every fold ({label}): "
                     f"{'yes' if not outside else 'NO: ' + ', '.join(outside)}")
    latest_answers = points[(points["fold"] == latest) & (points["method"] == ANSWER)]
    for label, group in (("every answer", latest_answers), ("trusted", latest_answers[latest_answers["trusted"]]),
                         *((f"{benchmark}", part) for benchmark, part in latest_answers.groupby("benchmark", sort=True)
                           if len(part) >= 20)):
        summary = ErrorSummary.of(group)
        if summary.n:
            verdict = "consistent" if coverage_consistent(summary.inside, summary.n, coverage) else "NOT consistent"
            lines.append(f"latest fold {latest}, {label}: {summary.inside} of {summary.n} inside the interval, exact "
                         f"{_exact(summary)}%: {verdict} with {100 * coverage[0]:.0f}-{100 * coverage[1]:.0f}%")
    answers = points[points["method"] == ANSWER]
    failing = [f"{benchmark} ({int(group['inside_interval'].sum())} of {len(group)})"
               for benchmark, group in answers[answers["trusted"].astype(bool)].groupby("benchmark", sort=True)
               if not coverage_consistent(int(group["inside_interval"].sum()), len(group), coverage)]
    lines.append(f"trusted coverage consistent with {100 * coverage[0]:.0f}-{100 * coverage[1]:.0f}% (exact "
                 f"binomial, 90%) in every benchmark: {'yes' if not failing else 'NO: ' + ', '.join(failing)}")
    return lines


def report(points: pd.DataFrame, rule: DecideTrustSettings, scope: str) -> None:
    """Print the accuracy and trust tables, the answers by kind and the checks of one backtest."""
    latest = points["fold"].iloc[points["fold_time"].argmax()]
    print(f"Accuracy of predict's answers per fold ({scope}; signed: median of predicted / published - 1):")
    by_fold = points.sort_values(["fold_time", "benchmark"], kind="stable")
    print(accuracy_table(by_fold, by="fold").to_string())
    print(f"\nTrusted against untrusted answers per fold ({scope}):")
    print(trust_table(by_fold, rule.coverage, by="fold").to_string())
    print(f"\nNew families (first round in the benchmark: from a sibling or the specifications) against known ones, "
          f"per fold ({scope}):")
    print(new_family_table(by_fold, by="fold").to_string())
    print()
    for title, subset in (("every fold", points), (f"the latest fold alone ({latest} forecast from the rounds "
                                                    f"before it)", points[points["fold"] == latest])):
        print(f"Accuracy of predict's answers, {title} ({scope}):")
        print(accuracy_table(subset).to_string())
        print(f"\nTrusted against untrusted answers, {title} ({scope}):")
        print(trust_table(subset, rule.coverage).to_string())
        print(f"\nNew families against known ones, {title} ({scope}):")
        print(new_family_table(subset.sort_values("benchmark", kind="stable")).to_string())
        print()
    answers = points[points["method"] == ANSWER]
    print(f"Answers by kind (every benchmark and fold, {scope}):")
    for kind, group in answers.groupby("kind", sort=True):
        summary = ErrorSummary.of(group)
        print(f"  {kind}: {summary.n} forecasts, median error {_fmt(summary.median_ape_pct)}%, "
              f"{_fmt(summary.coverage, 100, 0)}% inside the interval")
    extrapolated = answers[answers["distance"] > 0]
    print(f"Answers outside the published counts: {len(extrapolated)}, median error "
          f"{_fmt(ErrorSummary.of(extrapolated).median_ape_pct)}%, "
          f"{_fmt(ErrorSummary.of(extrapolated).coverage, 100, 0)}% inside the interval")
    print(f"\nChecks ({scope}):")
    for line in checks(points, latest, rule.coverage):
        print(f"  {line}")


def scale_out_report(result: ScaleOut, scope: str) -> None:
    """Print the scale-out backtest (`pipeline.analysis.forecasting.scaleout`) of one form: (a) within a round,
    (b) beyond a family's largest count in the next round, (c) the latest fold's large counts; per benchmark and
    overall."""
    *_, previous, latest = result.points.drop_duplicates("fold").sort_values("fold_time")["fold"].tolist()
    print(f"Scale-out (a), within a round: each result at N forecast by the model from the earlier rounds and its "
          f"unit's results of the round at N/{SCALE_OUT_RATIO} or less ({scope}; signed: median of predicted / "
          f"published - 1):")
    print(scale_out_table(result.within_round).to_string())
    print(f"\nScale-out (a) by distance beyond the counts fitted on (times the largest), and predict's answers in the "
          f"forward backtest so ({scope}):")
    answers = result.points[result.points["method"] == ANSWER]
    print(pd.concat({"(a) within a round": scale_out_table(result.within_round.assign(
        band=distance_bands(result.within_round)), by="band"), "next round": scale_out_table(
        backtest_view(answers).assign(band=distance_bands(answers).to_numpy()), by="band")}, axis=1).to_string())
    print(f"\nScale-out (b), next round above the family's largest earlier count, from its own curve ({scope}):")
    print(scale_out_table(result.beyond_family).to_string())
    print(f"\nScale-out (c), {latest} at {LARGE_COUNT} accelerators or more, from the rounds up to {previous} "
          f"({scope}):")
    print(scale_out_table(result.large_counts).to_string())


def main() -> None:
    pipeline_only = arguments(__doc__, (("--pipeline-only",), {
        "action": "store_true", "help": "only the pipeline's scope (republished results left out), half the time"})
    ).pipeline_only
    settings = load_settings()
    pd.set_option("display.width", 250)
    # The pipeline's scope first (params analysis.republished), then the other one: a buyer also asks about
    # configurations whose result was republished, which the naive rule answers exactly.
    other = "include" if settings.analysis.republished == "exclude" else "exclude"
    scopes = (settings.analysis.republished,) if pipeline_only else (
        settings.analysis.republished, other)
    for republished in scopes:
        analysis = settings.analysis.model_copy(update={"republished": republished})
        scope = ("republished results left out" if republished == "exclude"
                 else "republished results (reruns) included")
        frames = model_inputs_by_benchmark(analysis)
        points = backtest(frames, settings.decide.target_coverage, settings.decide.trust)
        report(points, settings.decide.trust, scope)
        print()
        # every form of the count curve's tail on the pipeline's scope: the model's (POWER) first, as computed above
        forms = FORMS if republished == settings.analysis.republished else (POWER,)
        results = compared_forms(frames, settings.decide.target_coverage, settings.decide.trust, forms, (POWER, points))
        scale_out_report(results[POWER], scope)
        if len(results) > 1:
            print(f"\nForms of the count curve beyond the published counts, predict's answers ({scope}; the model "
                  f"keeps {POWER}):")
            print(form_comparison(results).to_string())
        print(f"\nA new family's ratio to its sibling, checked on pairs of one vendor's families with results in one "
              f"round at one count of a benchmark: measured on the other benchmarks before the round against the "
              f"specifications' ({scope}; signed: positive when the forecast would be too slow):")
        print(sibling_ratio_table(frames).to_string())
        print(f"\nThe law of a new family's ratio to its sibling, chosen per fold on the earlier folds' first "
              f"appearances (median |log error|; a measured ratio on the earlier meetings with one), and each "
              f"candidate's error on the fold's own first appearances ({scope}; median |error| %, signed in "
              f"brackets, positive: too slow):")
        print(law_table(frames).to_string())
        print(f"\nThe latest fold's first appearances: the published ratio of a new family's time to its sibling's in "
              f"the round against each candidate's ({scope}):")
        print(latest_first_appearances(frames).to_string(index=False))
        print(f"\nThe next round's new families with a measured ratio to their sibling (time of family / time of "
              f"sibling; {scope}):")
        print(next_round_ratios(frames).to_string(index=False))
        print("\n" + "=" * 100 + "\n")


if __name__ == "__main__":
    main()
