"""The page's decision-support part of each benchmark: what templates/decide.html.j2 renders from the decide
stage's outputs (reports/decide/<benchmark>.json and its figures), and the headline numbers that
reports/metrics.json keeps of them.

Tables go through `formatting.table` and numbers through `formatting.number`, like the rest of the page, so the
decide tables sort the same way and a percentage reads the same everywhere.
"""
from __future__ import annotations

from typing import Any

from pipeline.analysis.decide import EXTRAPOLATION_LIMIT, FIGURES, figure_name
from pipeline.analysis.forecast import MODEL
from pipeline.analysis.scaling import UNSPECIFIED
from pipeline.core import paths
from pipeline.core.artifacts import read_artifact
from pipeline.report.figures import embed
from pipeline.report.formatting import Column, number, table

# Families whose break-even the page's overview across benchmarks lists, most published first.
OVERVIEW_FAMILIES = 3
# Two decimals of a percentage: finer digits are noise in a held-out error and clutter `dvc metrics show`.
METRIC_DECIMALS = 2


def break_even_text(family: dict[str, Any]) -> str:
    """The model's break-even count as a reader should take it: past EXTRAPOLATION_LIMIT times the largest
    published count the number is the power law's tail, not an estimate."""
    count, largest = family["break_even_count"], family["count_max"]
    if count is None or count > EXTRAPOLATION_LIMIT * largest:
        return (f"not below the floor up to {number(EXTRAPOLATION_LIMIT * largest)} "
                f"({EXTRAPOLATION_LIMIT:g}× the largest published)")
    return f"{count:.0f}{' (extrapolated)' if family['break_even_beyond_published'] else ''}"


def _models_table(families: list[dict[str, Any]], interval_pct: str) -> dict[str, Any]:
    records = [{**f, "published": f"{number(f['count_min'])} to {number(f['count_max'])}",
                "slopes": f"{f['slope_at_count_min']:.2f} to {f['slope_at_count_max']:.2f}",
                "loco": f["loco_median_ape_pct"] if f["loco_n"] else "not evaluable",
                "loro": f["loro_median_ape_pct"] if f["loro_n"] else "one round only"} for f in families]
    return table(records, [
        Column("family", "Family", numeric=False, style=None), Column("n_points", "Results"),
        Column("published", "Accelerators published", numeric=False, style=None),
        Column("slopes", "Slope, smallest to largest count", numeric=False, style=None),
        Column("loco", "LOCO median error", style="percent"), Column("loco_n", "LOCO results"),
        Column("loro", "LORO median error", style="percent"), Column("loro_n", "LORO results"),
        Column("loco_interval_coverage", f"Inside the {interval_pct} interval (LOCO)", style="share"),
        Column("trusted", "Trusted", numeric=False)])


def _break_even_table(families: list[dict[str, Any]]) -> dict[str, Any]:
    records = [{**f, "model": break_even_text(f),
                "observed": f["observed_first_count_below_floor"] or "none"} for f in families]
    return table(records, [
        Column("family", "Family", numeric=False, style=None),
        Column("reference_count", "Smallest published count (efficiency 1)"),
        Column("model", "Break-even count (model)", numeric=False, style=None),
        Column("observed", "First published count below the floor (observed)"),
        Column("trusted", "Trusted model", numeric=False)])


def _doubling_table(families: list[dict[str, Any]]) -> dict[str, Any]:
    return table([{"family": f["family"], **row} for f in families for row in f["doubling"]], [
        Column("family", "Family", numeric=False, style=None), Column("accelerator_count", "Accelerators"),
        Column("n_results", "Results"), Column("model_efficiency", "Model efficiency", style="ratio"),
        Column("observed_efficiency", "Observed efficiency (median)", style="ratio"),
        Column("model_doubling_speedup", "Model speed-up of doubling", style="times"),
        Column("observed_doubling_speedup", "Observed speed-up of doubling", style="times")])


def _largest_errors_table(largest: list[dict[str, Any]]) -> dict[str, Any]:
    return table(largest, [
        Column("family", "Family", numeric=False, style=None), Column("round", "Round", numeric=False, style=None),
        Column("submitter", "Submitter", numeric=False, style=None),
        Column("system", "System", numeric=False, style=None), Column("accelerator_count", "Accelerators"),
        Column("time_to_train_min", "Published (min)"), Column("predicted_min", "Predicted (min)"),
        Column("ape_pct", "Error", style="percent")])


def _forecasts_table(forecasts: list[dict[str, Any]], interval_pct: str) -> dict[str, Any]:
    records = [{**f, "family": f["accelerator"] + ("" if f["form_factor"] == UNSPECIFIED else f" ({f['form_factor']})"),
                "range": f"{number(f['low_min'])} to {number(f['high_min'])}",
                "how": f"{f['method']} ({f['kind']})" if f["method"] == MODEL else "naive rule",
                "trust": "yes" if f["trusted"] else "no: " + "; ".join(f["reasons"])} for f in forecasts]
    return table(records, [
        Column("family", "Family", numeric=False, style=None), Column("count", "Accelerators"),
        Column("predicted_min", "Forecast (min)"),
        Column("range", f"{interval_pct} interval (min)", numeric=False, style=None),
        Column("how", "Method", numeric=False, style=None), Column("trust", "Trusted", numeric=False, style=None)])


def _comparison_table(first: str, key: str, records: list[dict[str, Any]], interval_pct: str) -> dict[str, Any]:
    """Model against naive (`forecast.compare` records), one row per `key` (a round or a family)."""
    rows = [{**record, "winner": "no naive forecast" if not record["common_n"]
             else "model" if record["better"] == MODEL else "naive rule"} for record in records]
    return table(rows, [
        Column(key, first, numeric=False, style=None), Column("model_n", "Forecasts"),
        Column("model_median_ape_pct", "Median error", style="percent"),
        Column("model_p90_ape_pct", "90th percentile", style="percent"),
        Column("model_coverage", f"Inside the {interval_pct} interval", style="share"),
        Column("common_n", "Forecast by both"),
        Column("common_model_median_ape_pct", "Model median (both)", style="percent"),
        Column("common_naive_median_ape_pct", "Naive median (both)", style="percent"),
        Column("winner", "Better", numeric=False, style=None)])


def _kinds_table(kinds: list[dict[str, Any]], interval_pct: str) -> dict[str, Any]:
    return table(kinds, [
        Column("kind", "Kind of forecast", numeric=False, style=None), Column("model_n", "Forecasts"),
        Column("model_median_ape_pct", "Median error", style="percent"),
        Column("model_p90_ape_pct", "90th percentile", style="percent"),
        Column("model_coverage", f"Inside the {interval_pct} interval", style="share")])


def backtest_fragment(backtest: dict[str, Any] | None, interval_pct: str) -> dict[str, Any] | None:
    """The backtest part of the fragment: headline text, the latest fold's, and tables by round, family and
    kind of forecast; None when no round could be forecast."""
    if backtest is None or not backtest["model_n"]:
        return None
    latest = backtest["latest_fold"]
    return {
        "n": backtest["model_n"], "median": number(backtest["model_median_ape_pct"], "percent"),
        "p90": number(backtest["model_p90_ape_pct"], "percent"),
        "coverage": number(backtest["model_coverage"], "share"), "common_n": backtest["common_n"],
        "model_common": number(backtest["common_model_median_ape_pct"], "percent"),
        "naive_common": number(backtest["common_naive_median_ape_pct"], "percent"),
        "naive_better": backtest["better"] != MODEL,
        "latest_fold": latest["fold"], "latest_n": latest["model_n"],
        "latest_median": number(latest["model_median_ape_pct"], "percent"),
        "latest_coverage": number(latest["model_coverage"], "share"),
        "latest_naive": number(latest["common_naive_median_ape_pct"], "percent"),
        "latest_model_common": number(latest["common_model_median_ape_pct"], "percent"),
        "calibrated": number(backtest["calibrated_share"], "share"),
        "by_round": _comparison_table("Round forecast", "fold", backtest["folds"], interval_pct),
        "by_family": _comparison_table("Family", "family", backtest["families"], interval_pct),
        "by_kind": _kinds_table(backtest["kinds"], interval_pct),
    }


def load_summary(benchmark: str) -> dict[str, Any] | None:
    """decide.json of a benchmark, validated, or None when the stage has not run."""
    path = paths.decide_json(benchmark)
    return read_artifact("decide", path) if path.is_file() else None


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, METRIC_DECIMALS)


def backtest_metrics(backtest: dict[str, Any] | None) -> dict[str, Any]:
    """The backtest's headline numbers: the model's forecasts, median and 90th-percentile error and coverage,
    the naive rule's median error and the model's on the results both forecast, which is better, and the
    latest fold's forecasts, median error and coverage."""
    if backtest is None or not backtest["model_n"]:
        return {"backtest_n": 0}
    latest = backtest["latest_fold"]
    return {"backtest_n": backtest["model_n"], "backtest_median_ape_pct": _rounded(backtest["model_median_ape_pct"]),
            "backtest_p90_ape_pct": _rounded(backtest["model_p90_ape_pct"]),
            "backtest_coverage": _rounded(backtest["model_coverage"]),
            "naive_median_ape_pct": _rounded(backtest["common_naive_median_ape_pct"]),
            "model_median_ape_pct_vs_naive": _rounded(backtest["common_model_median_ape_pct"]),
            "better": backtest["better"], "latest_fold": latest["fold"], "latest_fold_n": latest["model_n"],
            "latest_fold_median_ape_pct": _rounded(latest["model_median_ape_pct"]),
            "latest_fold_coverage": _rounded(latest["model_coverage"])}


def metrics_of(summary: dict[str, Any] | None) -> dict[str, Any]:
    """The headline scalars of decide.json for reports/metrics.json (`dvc metrics show` prints them as
    `<benchmark>.decide.backtest_median_ape_pct`): the backtest's (see backtest_metrics) and, as the secondary
    figure, the leave-one-configuration-out median error."""
    if summary is None:
        return {"status": "missing"}
    if summary["status"] != "ok":
        return {"status": summary["status"], **backtest_metrics(summary.get("backtest"))}
    return {"status": "ok", "n_families_modelled": summary["n_families_modelled"],
            **backtest_metrics(summary.get("backtest")), "loco_n": summary["loco_n"],
            "loco_median_ape_pct": _rounded(summary["loco_median_ape_pct"])}


def fragment(benchmark: str, summary: dict[str, Any] | None, pngs: dict[str, bytes]) -> dict[str, Any]:
    """What templates/decide.html.j2 renders for one benchmark: decide.json's `summary` (None: the stage has
    not run) and its figures by file name (`decide.FIGURES`), as text and the page's tables."""
    if summary is None:
        return {"benchmark": benchmark, "status": "missing", "backtest": None,
                "reason": "the decide stage has not run (dvc repro decide)"}
    interval_pct = f"{100 * summary['interval']:.0f}%"
    base = {"benchmark": benchmark, "status": summary["status"], "reason": summary["reason"],
            "floor": f"{summary['efficiency_floor']:g}", "floor_cost": f"{1 / summary['efficiency_floor']:.2f}",
            "interval_pct": interval_pct, "backtest": backtest_fragment(summary.get("backtest"), interval_pct)}
    if summary["status"] != "ok":
        return base
    families = summary["families"]
    trusted = [f for f in families if f["trusted"]]
    forecasts = summary.get("forecasts", [])
    return {
        **base,
        "loco_median": number(summary["loco_median_ape_pct"], "percent"), "loco_n": summary["loco_n"],
        "loro_median": number(summary["loro_median_ape_pct"], "percent"), "loro_n": summary["loro_n"],
        "coverage": number(summary["loco_interval_coverage"], "share"),
        "n_modelled": summary["n_families_modelled"], "n_trusted": summary["n_families_trusted"],
        "models": _models_table(families, interval_pct), "break_even": _break_even_table(families),
        "forecasts": _forecasts_table(forecasts, interval_pct),
        "forecast_round": forecasts[0]["rounds"][-1] if forecasts else None,
        "doubling": _doubling_table(families), "n_doubling_rows": sum(len(f["doubling"]) for f in families),
        "largest_errors": _largest_errors_table(summary["largest_errors"]),
        "untrusted": [f"{f['family']}: {'; '.join(f['caveats'])}" for f in families if not f["trusted"]],
        "not_modelled": [f"{f['family']} ({f['reason']})" for f in summary["not_modelled"]],
        # For the report's overview across benchmarks: the most-published trusted families' break-even.
        "trusted_break_even": [f"{f['family']}: {break_even_text(f)}" for f in trusted[:OVERVIEW_FAMILIES]],
        "figures": {figure_name(name): embed(pngs[name], f"{benchmark}: {alt}", caption)
                    for name, (alt, caption) in FIGURES.items()},
    }


def report_section(benchmark: str, summary: dict[str, Any] | None) -> dict[str, Any]:
    """`fragment` of decide.json's `summary` (load_summary) and the figures on disk."""
    figures_written = summary is not None and summary["status"] == "ok"  # a skipped one embeds none
    pngs = {name: paths.decide_figure(benchmark, figure_name(name)).read_bytes() for name in FIGURES} \
        if figures_written else {}
    return fragment(benchmark, summary, pngs)
