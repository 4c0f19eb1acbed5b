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

The page's part of these outputs is `pipeline.report.decide_section`.
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

from pipeline.analysis.forecast import (
    MODEL,
    ErrorSummary,
    FittedBenchmark,
    answer,
    fit_benchmark,
    summarise_backtest,
)
from pipeline.analysis.models_artifact import ModelsRecord, models_record, not_analysed_record
from pipeline.analysis.scaling import UNSPECIFIED, FamilyAssessment, ScalingModel, all_held_out
from pipeline.core import plots
from pipeline.core.colours import COLOURBLIND
from pipeline.settings import Decide, Trust

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
# Beyond this many times a family's largest published count a break-even is a power law's tail, not an estimate
# (the figure's dashed extrapolation stops there too).
EXTRAPOLATION_LIMIT = 4.0


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


def summarise(frame: pd.DataFrame, assessments: dict[str, FamilyAssessment], settings: Decide,
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


def next_round_forecasts(fitted: FittedBenchmark, rule: Trust) -> list[dict[str, Any]]:
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


def figure_name(file_name: str) -> str:
    """The short name of one of `FIGURES` ("decide_fit.png" -> "fit")."""
    return file_name.removeprefix("decide_").removesuffix(".png")
