"""Stage `decide`: decision support for one benchmark: scaling models, their honest error, break-even points.

    python -m pipeline.stages.decide

Fits the scaling model of `pipeline.commands.predict` per accelerator family (analysis scope of params `analysis`,
settings of params `decide`) and writes, under reports/decide/:
- decide.json: headline held-out errors at the top level; per-family models, errors, caveats and break-even
  tables in nested lists (the report stage copies the scalar errors into reports/metrics.json, see
  `metrics_of`);
- decide_fit.png, decide_break_even.png, decide_errors.png: the fitted curves with their prediction
  intervals, scaling efficiency against the floor, and held-out predictions against the published times.

Break-even: the accelerator count beyond which the model's scaling efficiency, t(n0) n0 / (t(n) n) with n0
the family's smallest published count, falls below `decide.efficiency_floor`. Beside it, from the data
alone: the smallest published count whose median observed scaling efficiency (`pipeline.stages.features`:
relative to the smallest configuration of the family in the same round) is below the floor, and the
marginal speed-up of doubling at each published size, t(n) / t(2n), from the model and, where a round
published both n and 2n, from the best times of that round.

`report_section(BENCHMARK, load_summary(BENCHMARK))` gives the report the data that templates/decide.html.j2
renders, reading only this stage's outputs.
"""
from __future__ import annotations

import base64
import itertools
import json
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from pipeline.analysis.forecast import (
    MODEL,
    ErrorSummary,
    FittedBenchmark,
    TrustRule,
    answer,
    fit_benchmark,
    summarise_backtest,
)
from pipeline.analysis.models_artifact import ModelsRecord, models_record, not_analysed_record
from pipeline.analysis.scaling import UNSPECIFIED, DecideSettings, FamilyAssessment, ScalingModel, all_held_out
from pipeline.core import paths, plots
from pipeline.core.colours import COLOURBLIND

FIGURES = {  # file name -> (alt text, caption)
    "decide_fit.png": ("time to train against accelerators per family, with the scaling model",
                       "Published results (points) and each family's scaling model (line) with its prediction "
                       "interval (band), for the family's most common form factor; log-log."),
    "decide_break_even.png": ("scaling efficiency against accelerators per family, with the floor",
                              "The model's scaling efficiency relative to the family's smallest published count (line, "
                              "dashed beyond the published range), the median observed efficiency (points, relative to "
                              "the smallest system of the same round), the floor (dotted) and each family's "
                              "break-even (X)."),
    "decide_errors.png": ("forecasts of each round from the rounds before it, against the published times",
                          "Backtest: each result forecast by the model fitted on the rounds before its own, against "
                          "its published time, coloured by round; on the diagonal the forecast is exact, inside the "
                          "grey band it is within 20%; log-log."),
}
# Families drawn in the figures, most published results first: more lines would not be legible.
FIGURE_FAMILIES = 6
LARGEST_ERRORS = 5
METRIC_DECIMALS = 2
# Beyond this many times a family's largest published count a break-even is a power law's tail, not an estimate
# (the figure's dashed extrapolation stops there too).
EXTRAPOLATION_LIMIT = 4.0
OVERVIEW_FAMILIES = 3


def observed_scaling(family_frame: pd.DataFrame) -> pd.DataFrame:
    """Per published count: results, median observed scaling efficiency, and the observed speed-up of
    doubling (best time at n over best time at 2n in the same round; median over rounds that have both)."""
    best = family_frame.groupby(["round", "accelerator_count"])["time_to_train_min"].min()
    at_double = best.rename(index=lambda count: count / 2, level="accelerator_count")
    doubling = (best / at_double).dropna().groupby(level="accelerator_count").median()
    by_count = family_frame.groupby("accelerator_count")
    return pd.DataFrame({"n_results": by_count.size(),
                         "observed_efficiency": by_count["scaling_efficiency"].median(),
                         "observed_doubling_speedup": doubling})


def first_count_below(efficiency: pd.Series, floor: float) -> float | None:
    below = efficiency[efficiency < floor]
    return float(below.index.min()) if len(below) else None


def family_record(assessment: FamilyAssessment, family_frame: pd.DataFrame, floor: float) -> dict[str, Any]:
    model = assessment.model
    assert model is not None  # only modelled families get a record
    observed = observed_scaling(family_frame)
    counts = observed.index.to_numpy(dtype=float)
    break_even = model.break_even(floor)
    doubling = observed.assign(model_efficiency=model.efficiency(counts),
                               model_doubling_speedup=model.doubling_speedup(counts),
                               model_time_min=np.exp(model.log_time(counts)))
    return {
        "family": model.family, "n_points": model.n_points, "n_counts": model.n_counts,
        "rounds": list(model.rounds), "count_min": model.count_min, "count_max": model.count_max,
        "form_factors": list(model.form_factors), "saturated": model.saturated, "exponent_b": model.exponent,
        "saturation_count_m": model.saturation_count,
        "slope_at_count_min": float(model.slope(model.count_min)[0]),
        "slope_at_count_max": float(model.slope(model.count_max)[0]), "residual_sd_log": model.residual_sd,
        "dof": model.dof,
        **_errors("loco", assessment.loco), **_errors("loro", assessment.loro),
        "trusted": assessment.trusted, "caveats": list(assessment.caveats),
        "reference_count": model.count_min, "break_even_count": break_even,
        "break_even_beyond_published": break_even is None or break_even > model.count_max,
        "observed_first_count_below_floor": first_count_below(observed["observed_efficiency"], floor),
        "doubling": doubling.rename_axis("accelerator_count").reset_index().to_dict(orient="records"),
    }


def _errors(prefix: str, summary: ErrorSummary) -> dict[str, Any]:
    return summary.as_dict(prefix, coverage_name="interval_coverage")


def summarise(frame: pd.DataFrame, assessments: dict[str, FamilyAssessment], settings: DecideSettings,
              min_configurations: int, backtest_points: pd.DataFrame) -> dict[str, Any]:
    """decide.json without the benchmark name: scalars first, tables nested; `backtest` is the benchmark's
    forward-chaining backtest (`pipeline.analysis.forecast.summarise_backtest`, None without backtest points)."""
    head = {"efficiency_floor": settings.efficiency_floor, "interval": settings.interval,
            "n_configurations": len(frame), "n_families": len(assessments),
            "backtest": summarise_backtest(backtest_points) if len(backtest_points) else None}
    modelled = {family: a for family, a in assessments.items() if a.model is not None}
    not_modelled = [{"family": family, "n_points": a.n_points, "reason": a.not_modelled_reason}
                    for family, a in assessments.items() if a.model is None]
    reason = None
    if len(frame) < min_configurations:
        reason = f"{len(frame)} configurations in scope, fewer than analysis.min_configurations = {min_configurations}"
    elif not modelled:
        reason = "no accelerator family has enough results to fit a scaling model"
    if reason is not None:
        return {"status": "skipped", "reason": reason, **head, "not_modelled": not_modelled}
    loco = all_held_out(modelled, "configuration")
    return {
        "status": "ok", "reason": None, **head, "n_families_modelled": len(modelled),
        "n_families_trusted": sum(a.trusted for a in modelled.values()),
        **_errors("loco", ErrorSummary.of(loco)),
        **_errors("loro", ErrorSummary.of(all_held_out(modelled, "round"))),
        "families": [family_record(a, frame[frame["accelerator_family"] == family], settings.efficiency_floor)
                     for family, a in modelled.items()],
        "not_modelled": not_modelled,
        "largest_errors": loco.nlargest(LARGEST_ERRORS, "ape_pct").to_dict(orient="records"),
    }


def saved_models(benchmark: str, frame: pd.DataFrame, points: pd.DataFrame, summary: dict[str, Any]
                 ) -> ModelsRecord:
    """models.json of the benchmark (`pipeline.models_artifact`): its forecast model fitted on `frame`,
    calibrated on every benchmark's backtest `points`; marked skipped, with the reason, when the stage skipped
    the benchmark, and without a model when there is no result to fit."""
    reason = None if summary["status"] == "ok" else summary["reason"]
    if frame.empty:
        return not_analysed_record(benchmark, reason or "no results in scope", summary["interval"])
    return models_record(fit_benchmark(benchmark, frame, points, summary["interval"], reason))


def next_round_forecasts(fitted: FittedBenchmark, rule: TrustRule) -> list[dict[str, Any]]:
    """decide.json's `forecasts`: per family and form factor with results, the next-round forecast at its
    largest published count, as `python -m pipeline.predict` answers it (from the same saved models)."""
    published = fitted.published.groupby(["accelerator_family", "form_factor"])["accelerator_count"].max()
    return [answer(fitted, family, form_factor, count, rule).as_dict()
            for (family, form_factor), count in published.items()]


def _figure_models(assessments: dict[str, FamilyAssessment]) -> dict[str, tuple[ScalingModel, Any]]:
    """The families drawn (the first FIGURE_FAMILIES modelled ones), each with its model and colour."""
    models = [a.model for a in assessments.values() if a.model is not None][:FIGURE_FAMILIES]
    return {model.family: (model, colour) for model, colour in zip(models, COLOURBLIND)}


def fit_figure(frame: pd.DataFrame, assessments: dict[str, FamilyAssessment], benchmark: str) -> bytes:
    figure, axis = plots.subplots(figsize=(7.5, 4.8))
    for family, (model, colour) in _figure_models(assessments).items():
        published = frame[frame["accelerator_family"] == family]
        counts = np.geomspace(*model.count_range(), 60)
        predictions = [model.predict(count) for count in counts]
        axis.scatter(published["accelerator_count"], published["time_to_train_min"], color=colour, s=18, alpha=0.7)
        axis.plot(counts, [p.time_min for p in predictions], color=colour, label=_curve_label(model))
        axis.fill_between(counts, [p.low_min for p in predictions], [p.high_min for p in predictions],
                          color=colour, alpha=0.15, linewidth=0)
    plots.log_log(axis, xlabel="Accelerators (count, log scale)", ylabel="Time to train (minutes, log scale)",
                  title=f"{benchmark}: scaling model per accelerator family")
    axis.legend(fontsize="small")
    return plots.png_bytes(figure)


def _curve_label(model: ScalingModel) -> str:
    """"A100 (SXM)": the form factor the curve is drawn for, unless the descriptions never name one."""
    form_factor = model.form_factors[0]
    return model.family if form_factor == UNSPECIFIED else f"{model.family} ({form_factor})"


def break_even_figure(frame: pd.DataFrame, assessments: dict[str, FamilyAssessment], floor: float,
                      benchmark: str) -> bytes:
    figure, axis = plots.subplots(figsize=(7.5, 4.8))
    for family, (model, colour) in _figure_models(assessments).items():
        break_even = model.break_even(floor)
        # Extrapolate up to the break-even, but not past EXTRAPOLATION_LIMIT times the published range.
        end = min(max(model.count_max, break_even or 0.0), EXTRAPOLATION_LIMIT * model.count_max)
        inside = np.geomspace(model.count_min, model.count_max, 60)
        axis.plot(inside, model.efficiency(inside), color=colour, label=family)
        if end > model.count_max:
            beyond = np.geomspace(model.count_max, end, 20)
            axis.plot(beyond, model.efficiency(beyond), color=colour, linestyle="--")
        observed = observed_scaling(frame[frame["accelerator_family"] == family])
        axis.scatter(observed.index, observed["observed_efficiency"], color=colour, s=18, alpha=0.8)
        if break_even is not None and break_even <= end:
            axis.scatter([break_even], [floor], color=colour, marker="X", s=80, edgecolor="black", zorder=3)
    axis.axhline(floor, color="black", linewidth=1, linestyle=":", label=f"efficiency floor {floor:g}")
    axis.set(xscale="log", ylim=(0, 1.6), xlabel="Accelerators (count, log scale)",
             ylabel="Scaling efficiency (1 = linear)", title=f"{benchmark}: break-even (X) per accelerator family")
    plots.plain_log_ticks(axis, "x")
    axis.legend(fontsize="small")
    return plots.png_bytes(figure)


def errors_figure(backtest_points: pd.DataFrame, benchmark: str) -> bytes:
    forecasts = backtest_points[backtest_points["method"] == MODEL]
    if forecasts.empty:
        return message_figure(f"{benchmark}: no round could be forecast from earlier ones")
    figure, axis = plots.subplots(figsize=(6.0, 5.0))
    for (fold, points), colour in zip(forecasts.groupby("fold", sort=True), itertools.cycle(COLOURBLIND)):
        axis.scatter(points["time_to_train_min"], points["predicted_min"], s=22, color=colour, label=fold)
    times = forecasts[["time_to_train_min", "predicted_min"]].to_numpy(dtype=float)
    limits = np.array([times.min() / 1.5, times.max() * 1.5])
    axis.plot(limits, limits, color="black", linewidth=1)
    axis.fill_between(limits, limits * 0.8, limits * 1.2, color="grey", alpha=0.2, linewidth=0)
    plots.log_log(axis, xlim=limits, ylim=limits, xlabel="Published time to train (minutes)",
                  ylabel="Forecast from earlier rounds (minutes)", title=f"{benchmark}: backtest by round")
    axis.legend(title="round", fontsize="small")
    return plots.png_bytes(figure)


def message_figure(message: str) -> bytes:
    """Stands in for a figure when there is nothing to draw, so the stage's outputs always exist."""
    figure, axis = plots.subplots(figsize=(6.0, 1.2))
    axis.axis("off")
    axis.text(0.5, 0.5, message, ha="center", va="center", wrap=True)
    return plots.png_bytes(figure)


def figures(frame: pd.DataFrame, assessments: dict[str, FamilyAssessment], summary: dict[str, Any],
            backtest_points: pd.DataFrame, benchmark: str) -> dict[str, bytes]:
    if summary["status"] != "ok":
        placeholder = message_figure(f"{benchmark}: no decision support ({summary['reason']})")
        return dict.fromkeys(FIGURES, placeholder)
    return {"decide_fit.png": fit_figure(frame, assessments, benchmark),
            "decide_break_even.png": break_even_figure(frame, assessments, summary["efficiency_floor"], benchmark),
            "decide_errors.png": errors_figure(backtest_points, benchmark)}


# --- the report fragment ------------------------------------------------------------------------------------

def _fmt(value: Any, pattern: str = "{:.3g}") -> str:
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else pattern.format(value)


def _pct(value: float | None) -> str:
    return _fmt(value, "{:.1f}%")


def _share(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.0f}%"


def _table(columns: list[str], rows: list[list[str]], numeric: Sequence[int] = ()) -> dict[str, Any]:
    """A table the template renders as it is; `numeric` are the indices of right-aligned columns."""
    return {"columns": [{"label": label, "numeric": index in numeric} for index, label in enumerate(columns)],
            "rows": rows}


def _models_table(families: list[dict[str, Any]], interval_pct: str) -> dict[str, Any]:
    return _table(
        ["Family", "Results", "Accelerators published", "Slope, smallest to largest count",
         "LOCO median error (results)", "LORO median error (results)", f"Inside the {interval_pct} interval (LOCO)",
         "Trusted"],
        [[f["family"], str(f["n_points"]), f"{f['count_min']:g} to {f['count_max']:g}",
          f"{f['slope_at_count_min']:.2f} to {f['slope_at_count_max']:.2f}",
          f"{_pct(f['loco_median_ape_pct'])} ({f['loco_n']})" if f["loco_n"] else "not evaluable",
          f"{_pct(f['loro_median_ape_pct'])} ({f['loro_n']})" if f["loro_n"] else "one round only",
          _share(f["loco_interval_coverage"]),
          "yes" if f["trusted"] else "no"] for f in families], numeric=(1, 4, 5, 6))


def break_even_text(family: dict[str, Any]) -> str:
    """The model's break-even count as a reader should take it: past EXTRAPOLATION_LIMIT times the largest
    published count the number is the power law's tail, not an estimate."""
    count, largest = family["break_even_count"], family["count_max"]
    if count is None or count > EXTRAPOLATION_LIMIT * largest:
        return (f"not below the floor up to {EXTRAPOLATION_LIMIT * largest:g} ({EXTRAPOLATION_LIMIT:g}× the largest "
                f"published)")
    return f"{count:.0f}{' (extrapolated)' if family['break_even_beyond_published'] else ''}"


def _break_even_table(families: list[dict[str, Any]]) -> dict[str, Any]:
    return _table(["Family", "Smallest published count (efficiency 1)", "Break-even count (model)",
                   "First published count below the floor (observed)", "Trusted model"],
                  [[f["family"], f"{f['reference_count']:g}", break_even_text(f),
                    _fmt(f["observed_first_count_below_floor"], "{:g}") or "none",
                    "yes" if f["trusted"] else "no"] for f in families], numeric=(1,))


def _doubling_table(families: list[dict[str, Any]]) -> dict[str, Any]:
    return _table(["Family", "Accelerators", "Results", "Model efficiency", "Observed efficiency (median)",
                   "Model speed-up of doubling", "Observed speed-up of doubling"],
                  [[f["family"], f"{row['accelerator_count']:g}", str(row["n_results"]),
                    _fmt(row["model_efficiency"], "{:.2f}"), _fmt(row["observed_efficiency"], "{:.2f}"),
                    _fmt(row["model_doubling_speedup"], "{:.2f}×"), _fmt(row["observed_doubling_speedup"], "{:.2f}×")]
                   for f in families for row in f["doubling"]], numeric=(1, 2, 3, 4, 5, 6))


def _largest_errors_table(largest: list[dict[str, Any]]) -> dict[str, Any]:
    return _table(["Family", "Round", "Submitter", "System", "Accelerators", "Published (min)", "Predicted (min)",
                   "Error"],
                  [[e["family"], e["round"], e["submitter"], e["system"], f"{e['accelerator_count']:g}",
                    _fmt(e["time_to_train_min"]), _fmt(e["predicted_min"]), _pct(e["ape_pct"])] for e in largest],
                  numeric=(4, 5, 6, 7))


def _forecasts_table(forecasts: list[dict[str, Any]], interval_pct: str) -> dict[str, Any]:
    return _table(["Family", "Accelerators", "Forecast (min)", f"{interval_pct} interval (min)", "Method",
                   "Trusted"],
                  [[f["accelerator"] + ("" if f["form_factor"] == UNSPECIFIED else f" ({f['form_factor']})"),
                    f"{f['count']:g}", _fmt(f["predicted_min"]), f"{_fmt(f['low_min'])} to {_fmt(f['high_min'])}",
                    f"{f['method']} ({f['kind']})" if f["method"] == MODEL else "naive rule",
                    "yes" if f["trusted"] else "no: " + "; ".join(f["reasons"])] for f in forecasts],
                  numeric=(1, 2))


def _comparison_row(label: str, record: dict[str, Any]) -> list[str]:
    return [label, str(record["model_n"]), _pct(record["model_median_ape_pct"]), _pct(record["model_p90_ape_pct"]),
            _share(record["model_coverage"]), str(record["common_n"]), _pct(record["common_model_median_ape_pct"]),
            _pct(record["common_naive_median_ape_pct"]),
            "no naive forecast" if not record["common_n"] else "model" if record["better"] == MODEL else "naive rule"]


def _comparison_table(first: str, rows: list[list[str]], interval_pct: str) -> dict[str, Any]:
    return _table([first, "Forecasts", "Median error", "90th percentile", f"Inside the {interval_pct} interval",
                   "Forecast by both", "Model median (both)", "Naive median (both)", "Better"],
                  rows, numeric=(1, 2, 3, 4, 5, 6, 7))


def backtest_fragment(backtest: dict[str, Any] | None, interval_pct: str) -> dict[str, Any] | None:
    """The backtest part of the fragment: headline text, the latest fold's, and tables by round, family and
    kind of forecast; None when no round could be forecast."""
    if backtest is None or not backtest["model_n"]:
        return None
    latest = backtest["latest_fold"]
    worse = backtest["better"] != MODEL
    return {
        "n": backtest["model_n"], "median": _pct(backtest["model_median_ape_pct"]),
        "p90": _pct(backtest["model_p90_ape_pct"]), "coverage": _share(backtest["model_coverage"]),
        "common_n": backtest["common_n"], "model_common": _pct(backtest["common_model_median_ape_pct"]),
        "naive_common": _pct(backtest["common_naive_median_ape_pct"]), "naive_better": worse,
        "latest_fold": latest["fold"], "latest_n": latest["model_n"],
        "latest_median": _pct(latest["model_median_ape_pct"]), "latest_coverage": _share(latest["model_coverage"]),
        "latest_naive": _pct(latest["common_naive_median_ape_pct"]),
        "latest_model_common": _pct(latest["common_model_median_ape_pct"]),
        "calibrated": _share(backtest["calibrated_share"]),
        "by_round": _comparison_table("Round forecast", [_comparison_row(f["fold"], f) for f in backtest["folds"]],
                                      interval_pct),
        "by_family": _comparison_table("Family", [_comparison_row(f["family"], f) for f in backtest["families"]],
                                       interval_pct),
        "by_kind": _table(["Kind of forecast", "Forecasts", "Median error", "90th percentile",
                           f"Inside the {interval_pct} interval"],
                          [[k["kind"], str(k["model_n"]), _pct(k["model_median_ape_pct"]),
                            _pct(k["model_p90_ape_pct"]), _share(k["model_coverage"])] for k in backtest["kinds"]],
                          numeric=(1, 2, 3, 4)),
    }


def _embedded(png: bytes, benchmark: str, alt: str, caption: str) -> dict[str, Any]:
    width, height = struct.unpack(">II", png[16:24])  # the PNG header's IHDR chunk
    return {"data": base64.b64encode(png).decode("ascii"), "alt": f"{benchmark}: {alt}", "caption": caption,
            "width": width, "height": height}


def figure_name(file_name: str) -> str:
    """The short name of one of `FIGURES` ("decide_fit.png" -> "fit")."""
    return file_name.removeprefix("decide_").removesuffix(".png")


def load_summary(benchmark: str) -> dict[str, Any] | None:
    """decide.json of a benchmark, or None when the stage has not run."""
    path = paths.decide_json(benchmark)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _rounded(value: float | None) -> float | None:
    # Two decimals of a percentage: finer digits are noise in a held-out error and clutter `dvc metrics show`.
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
    not run) and its figures by file name, as pre-formatted text."""
    if summary is None:
        return {"benchmark": benchmark, "status": "missing", "backtest": None,
                "reason": f"the decide stage has not run (python -m pipeline.analysis.decide {benchmark})"}
    base = {"benchmark": benchmark, "status": summary["status"], "reason": summary["reason"],
            "floor": f"{summary['efficiency_floor']:g}", "floor_cost": f"{1 / summary['efficiency_floor']:.2f}",
            "interval_pct": f"{100 * summary['interval']:.0f}%"}
    base["backtest"] = backtest_fragment(summary.get("backtest"), base["interval_pct"])
    if summary["status"] != "ok":
        return base
    families = summary["families"]
    trusted = [f for f in families if f["trusted"]]
    return {
        **base,
        "loco_median": _pct(summary["loco_median_ape_pct"]), "loco_n": summary["loco_n"],
        "loro_median": _pct(summary["loro_median_ape_pct"]), "loro_n": summary["loro_n"],
        "coverage": _share(summary["loco_interval_coverage"]),
        "n_modelled": summary["n_families_modelled"], "n_trusted": summary["n_families_trusted"],
        "models": _models_table(families, base["interval_pct"]), "break_even": _break_even_table(families),
        "forecasts": _forecasts_table(summary.get("forecasts", []), base["interval_pct"]),
        "forecast_round": summary["forecasts"][0]["rounds"][-1] if summary.get("forecasts") else None,
        "doubling": _doubling_table(families), "n_doubling_rows": sum(len(f["doubling"]) for f in families),
        "largest_errors": _largest_errors_table(summary["largest_errors"]),
        "untrusted": [f"{f['family']}: {'; '.join(f['caveats'])}" for f in families if not f["trusted"]],
        "not_modelled": [f"{f['family']} ({f['reason']})" for f in summary["not_modelled"]],
        # For the report's overview across benchmarks: the most-published trusted families' break-even.
        "trusted_break_even": [f"{f['family']}: {break_even_text(f)}" for f in trusted[:OVERVIEW_FAMILIES]],
        "figures": {figure_name(name): _embedded(pngs[name], benchmark, *text)
                    for name, text in FIGURES.items()},
    }


def report_section(benchmark: str, summary: dict[str, Any] | None) -> dict[str, Any]:
    """`fragment` of decide.json's `summary` (load_summary) and the figures on disk."""
    figures_written = summary is not None and summary["status"] == "ok"  # a skipped one embeds none
    pngs = {name: paths.decide_figure(benchmark, figure_name(name)).read_bytes() for name in FIGURES} \
        if figures_written else {}
    return fragment(benchmark, summary, pngs)
