"""The page's prediction part of each benchmark: what templates/decide.html.j2 renders from the decide stage's
outputs (reports/decide/<benchmark>.json; the charts of it are `pipeline.report.charts`'), and the headline numbers
that reports/metrics.json keeps of them. One model (`pipeline.analysis.forecasting.model`) gives the forecasts, the
break-even and the backtest, and one rule says which forecasts are trusted.

Tables go through `formatting.table` and numbers through `formatting.number`, like the rest of the page, so the
decide tables sort the same way and a percentage reads the same everywhere.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pipeline.analysis.forecasting.answers import Answer
from pipeline.analysis.forecasting.decide import (
    AGREE,
    DISAGREE,
    EXTRAPOLATION_LIMIT,
    UNOBSERVED,
    DecideSummary,
    LargestError,
    UnitRecord,
)
from pipeline.analysis.forecasting.model import CANDIDATES, NAIVE_METHOD, UNSPECIFIED
from pipeline.analysis.forecasting.summaries import BacktestSummary, ComparisonRecord, KindErrors
from pipeline.core import paths
from pipeline.report.formatting import Column, number, table

# Families whose break-even the page's overview across benchmarks lists, most published first.
OVERVIEW_FAMILIES = 3
# Two decimals of a percentage: finer digits are noise in a backtest error and clutter `dvc metrics show`.
METRIC_DECIMALS = 2


def _unit_name(family: str, form_factor: str) -> str:
    return family if form_factor == UNSPECIFIED else f"{family} ({form_factor})"


def break_even_text(unit: UnitRecord) -> str:
    """The break-even count as a reader should take it: past EXTRAPOLATION_LIMIT times the largest published
    count the number is the curve's tail exponent, not an estimate."""
    count, largest = unit.break_even_count, unit.count_max
    if count is None or count > EXTRAPOLATION_LIMIT * largest:
        return (f"not below the floor up to {number(EXTRAPOLATION_LIMIT * largest)} "
                f"({EXTRAPOLATION_LIMIT:g}× the largest published)")
    return f"{number(round(count))}{' (extrapolated)' if unit.break_even_beyond_published else ''}"


def _trust_text(trusted: bool, reasons: list[str]) -> str:
    return "yes" if trusted else "no: " + "; ".join(reasons)


def _break_even_table(units: list[UnitRecord]) -> dict[str, Any]:
    records = [{"unit": _unit_name(u.family, u.form_factor), "n_points": u.n_points, "latest_round": u.latest_round,
                "model": break_even_text(u), "observed": u.observed_first_count_below_floor or "none",
                "published": f"{number(u.count_min)} to {number(u.count_max)}",
                "slopes": f"{number(u.slope_at_count_min, 'ratio')} to {number(u.slope_at_count_max, 'ratio')}",
                "trust": "yes" if u.trusted else "no", "agreement": agreement_text(u)} for u in units]
    return table(records, [
        Column("unit", "Family", numeric=False, style=None), Column("n_points", "Results"),
        Column("published", "Accelerators published", numeric=False, style=None),
        Column("latest_round", "Curve from", numeric=False, style=None),
        Column("slopes", "Slope, smallest to largest count", numeric=False, style=None),
        Column("model", "Break-even count (forecast curve)", numeric=False, style=None),
        Column("observed", "First published count below the floor (observed)"),
        Column("agreement", "Curve and data agree?", numeric=False, style=None),
        Column("trust", "Forecast trusted", numeric=False, style=None)])


def agreement_text(unit: UnitRecord) -> str:
    """decide.json's `break_even_agreement` and `break_even_note` of a unit as one cell: "yes: the data cross..."."""
    word = {AGREE: "yes", DISAGREE: "no", UNOBSERVED: "not measured"}.get(unit.break_even_agreement,
                                                                          unit.break_even_agreement)
    return f"{word}: {unit.break_even_note}"


def _doubling_table(units: list[UnitRecord]) -> dict[str, Any]:
    return table([{"unit": _unit_name(u.family, u.form_factor), **row.model_dump()} for u in units
                  for row in u.doubling], [
        Column("unit", "Family", numeric=False, style=None), Column("accelerator_count", "Accelerators"),
        Column("n_results", "Results"), Column("model_efficiency", "Curve efficiency", style="ratio"),
        Column("observed_efficiency", "Observed efficiency (median)", style="ratio"),
        Column("model_doubling_speedup", "Curve speed-up of doubling", style="times"),
        Column("observed_doubling_speedup", "Observed speed-up of doubling", style="times")])


def _largest_errors_table(largest: list[LargestError]) -> dict[str, Any]:
    records = [{**row.model_dump(), "unit": _unit_name(row.accelerator_family, row.form_factor)} for row in largest]
    return table(records, [
        Column("fold", "Round forecast", numeric=False, style=None),
        Column("unit", "Family", numeric=False, style=None),
        Column("submitter", "Submitter", numeric=False, style=None),
        Column("system", "System", numeric=False, style=None), Column("accelerator_count", "Accelerators"),
        Column("time_to_train_min", "Published (min)"), Column("predicted_min", "Forecast (min)"),
        Column("ape_pct", "Error", style="percent"), Column("chosen", "Method", numeric=False, style=None)])


def _forecasts_table(forecasts: list[Answer], target_coverage_pct: str) -> dict[str, Any]:
    records = [{"unit": _unit_name(f.accelerator, f.form_factor), "count": f.count, "predicted_min": f.predicted_min,
                "range": (f"{number(f.low_min)} to {number(f.high_min)}" if f.low_min is not None
                          else f"up to {number(f.high_min)} (unbounded below)"),
                "how": f"{f.method} ({f.kind})", "trust": _trust_text(f.trusted, f.reasons)}
               for f in forecasts]
    return table(records, [
        Column("unit", "Family", numeric=False, style=None), Column("count", "Accelerators"),
        Column("predicted_min", "Forecast (min)"),
        Column("range", f"{target_coverage_pct} interval (min)", numeric=False, style=None),
        Column("how", "Method", numeric=False, style=None), Column("trust", "Trusted", numeric=False, style=None)])


def _comparison_table(first: str, key: str, records: Sequence[ComparisonRecord], target_coverage_pct: str
                      ) -> dict[str, Any]:
    """predict's answers against the naive rule (`forecast.ComparisonRecord`s), one row per `key` (a round or a
    family); the trusted and untrusted answers' 90th percentiles are in the text above it (fewer columns fit)."""
    rows = [{**record.model_dump(), "winner": _winner(record)} for record in records]
    return table(rows, [
        Column(key, first, numeric=False, style=None), Column("answer_n", "Forecasts"),
        Column("answer_median_ape_pct", "Median error", style="percent"),
        Column("answer_p90_ape_pct", "90th percentile", style="percent"),
        Column("answer_coverage", f"Inside the {target_coverage_pct} interval", style="share"),
        Column("common_n", "Forecast by both"),
        Column("common_answer_median_ape_pct", "Forecast median (both)", style="percent"),
        Column("common_naive_median_ape_pct", "Naive median (both)", style="percent"),
        Column("trusted_n", "Trusted"), Column("winner", "Better", numeric=False, style=None)])


def _winner(record: ComparisonRecord) -> str:
    if not record.common_n:
        return "no naive forecast"
    return "naive rule" if record.better == NAIVE_METHOD else "forecast"


def _kinds_table(kinds: list[KindErrors], target_coverage_pct: str) -> dict[str, Any]:
    return table([kind.model_dump() for kind in kinds], [
        Column("kind", "Kind of forecast", numeric=False, style=None), Column("answer_n", "Forecasts"),
        Column("answer_median_ape_pct", "Median error", style="percent"),
        Column("answer_p90_ape_pct", "90th percentile", style="percent"),
        Column("answer_coverage", f"Inside the {target_coverage_pct} interval", style="share")])


def backtest_fragment(backtest: BacktestSummary | None, target_coverage_pct: str) -> dict[str, Any] | None:
    """The backtest part of the fragment: headline text, the latest fold's, and tables by round, family and
    kind of forecast; None when no round could be forecast."""
    if backtest is None or not backtest.answer_n:
        return None
    latest = backtest.latest_fold
    assert latest is not None  # a backtest with answers has a fold
    return {
        "n": backtest.answer_n, "median": number(backtest.answer_median_ape_pct, "percent"),
        "p90": number(backtest.answer_p90_ape_pct, "percent"),
        "coverage": number(backtest.answer_coverage, "share"), "common_n": backtest.common_n,
        "answer_common": number(backtest.common_answer_median_ape_pct, "percent"),
        "naive_common": number(backtest.common_naive_median_ape_pct, "percent"),
        "naive_better": backtest.better == NAIVE_METHOD,
        "trusted_n": backtest.trusted_n, "trusted_median": number(backtest.trusted_median_ape_pct, "percent"),
        "trusted_p90": number(backtest.trusted_p90_ape_pct, "percent"),
        "trusted_coverage": number(backtest.trusted_coverage, "share"),
        "untrusted_n": backtest.untrusted_n,
        "untrusted_median": number(backtest.untrusted_median_ape_pct, "percent"),
        "untrusted_p90": number(backtest.untrusted_p90_ape_pct, "percent"),
        "latest_fold": latest.fold, "latest_n": latest.answer_n,
        "latest_median": number(latest.answer_median_ape_pct, "percent"),
        "latest_coverage": number(latest.answer_coverage, "share"),
        "latest_naive": number(latest.common_naive_median_ape_pct, "percent"),
        "latest_answer_common": number(latest.common_answer_median_ape_pct, "percent"),
        "calibrated": number(backtest.calibrated_share, "share"),
        "by_round": _comparison_table("Round forecast", "fold", backtest.folds, target_coverage_pct),
        "by_family": _comparison_table("Family", "family", backtest.families, target_coverage_pct),
        "by_kind": _kinds_table(backtest.kinds, target_coverage_pct),
    }


def load_summary(benchmark: str) -> DecideSummary | None:
    """decide.json of a benchmark, validated, or None when the stage has not run."""
    path = paths.decide_json(benchmark)
    return DecideSummary.read(path) if path.is_file() else None


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, METRIC_DECIMALS)


def backtest_metrics(backtest: BacktestSummary | None) -> dict[str, Any]:
    """The backtest's headline numbers of `predict`'s answers: count, median and 90th-percentile error and
    coverage; the naive rule's median error and the answers' on the results both forecast, which is better;
    trusted and untrusted answers' count, 90th percentile and coverage; the latest fold's count, median error,
    naive median and coverage."""
    if backtest is None or not backtest.answer_n:
        return {"backtest_n": 0}
    latest = backtest.latest_fold
    assert latest is not None  # a backtest with answers has a fold
    return {"backtest_n": backtest.answer_n, "backtest_median_ape_pct": _rounded(backtest.answer_median_ape_pct),
            "backtest_p90_ape_pct": _rounded(backtest.answer_p90_ape_pct),
            "backtest_coverage": _rounded(backtest.answer_coverage),
            "naive_median_ape_pct": _rounded(backtest.common_naive_median_ape_pct),
            "answer_median_ape_pct_vs_naive": _rounded(backtest.common_answer_median_ape_pct),
            "better": backtest.better, "trusted_n": backtest.trusted_n,
            "trusted_p90_ape_pct": _rounded(backtest.trusted_p90_ape_pct),
            "trusted_coverage": _rounded(backtest.trusted_coverage),
            "untrusted_p90_ape_pct": _rounded(backtest.untrusted_p90_ape_pct),
            "latest_fold": latest.fold, "latest_fold_n": latest.answer_n,
            "latest_fold_median_ape_pct": _rounded(latest.answer_median_ape_pct),
            "latest_fold_naive_median_ape_pct": _rounded(latest.common_naive_median_ape_pct),
            "latest_fold_coverage": _rounded(latest.answer_coverage)}


def metrics_of(summary: DecideSummary | None) -> dict[str, Any]:
    """The headline scalars of decide.json for reports/metrics.json (`dvc metrics show` prints them as
    `<benchmark>.decide.backtest_median_ape_pct`): the method `predict` answers with, the backtest's numbers (see
    backtest_metrics) and how many families' forecasts are trusted."""
    if summary is None:
        return {"status": "missing"}
    head = {"status": summary.status, "method": summary.method, **backtest_metrics(summary.backtest)}
    if summary.status != "ok":
        return head
    return {**head, "n_units": summary.n_units, "n_units_trusted": summary.n_units_trusted}


def fragment(benchmark: str, summary: DecideSummary | None) -> dict[str, Any]:
    """What templates/decide.html.j2 renders for one benchmark: decide.json's `summary` (None: the stage has
    not run) as text and the page's tables."""
    if summary is None:
        return {"benchmark": benchmark, "status": "missing", "backtest": None, "method": None, "candidates": "",
                "reason": "the decide stage has not run (dvc repro decide)"}
    target_coverage_pct = f"{100 * summary.target_coverage:.0f}%"
    medians = summary.candidate_medians
    base = {"benchmark": benchmark, "status": summary.status, "reason": summary.reason,
            "floor": f"{summary.efficiency_floor:g}", "floor_cost": f"{1 / summary.efficiency_floor:.2f}",
            "target_coverage_pct": target_coverage_pct, "method": summary.method,
            "candidates": ", ".join(f"{name} {number(medians.get(name), 'percent')}" for name in CANDIDATES
                                    if medians.get(name) is not None),
            "backtest": backtest_fragment(summary.backtest, target_coverage_pct)}
    if summary.status != "ok":
        return base
    units = summary.units
    trusted = [u for u in units if u.trusted]
    forecasts = summary.forecasts
    return {
        **base,
        "n_units": summary.n_units, "n_trusted": summary.n_units_trusted,
        "break_even": _break_even_table(units),
        "break_even_notes": [{"unit": _unit_name(u.family, u.form_factor), "count": break_even_text(u),
                              "agreement": agreement_text(u)} for u in units],
        "forecasts": _forecasts_table(forecasts, target_coverage_pct),
        "forecast_round": forecasts[0].rounds[-1] if forecasts else None,
        "notes": sorted({note for f in forecasts for note in f.notes if "retired" in note}),
        "doubling": _doubling_table(units), "n_doubling_rows": sum(len(u.doubling) for u in units),
        "largest_errors": _largest_errors_table(summary.largest_errors),
        "untrusted": [f"{_unit_name(u.family, u.form_factor)}: {'; '.join(u.reasons)}"
                      for u in units if not u.trusted],
        # For the report's overview across benchmarks: the most-published trusted families' break-even.
        "trusted_break_even": [f"{_unit_name(u.family, u.form_factor)}: {break_even_text(u)}"
                               for u in trusted[:OVERVIEW_FAMILIES]],
    }
