"""The site's interactive charts: Vega-Lite specifications built with Altair, embedded inline in the pages and drawn
in the browser by the Vega library the site copies from vl-convert-python (no network).

Each function takes plain frames and returns a `Chart`: the spec as a dict, a title, a one-line reading and a
text alternative. Colours are fixed per accelerator family across every page (`family_colours`); hovering a mark
names the submitter, system, round, accelerator count, time and accelerator-hours; clicking a legend entry filters
by family; a round selector appears where rounds mix. Parameters are named explicitly, so the same data give the
same spec (Altair would number unnamed ones with a process-wide counter).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
import pandas as pd

# Colour-blind-safe hues, most distinct first: Okabe and Ito's palette, then Paul Tol's muted scheme (yellow,
# unreadable on white, left out). Families beyond the list reuse it from the start; the newest families come first
# (`family_order`), so the ones shown together on today's pages never share a colour.
FAMILY_PALETTE = ("#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#332288", "#999933",
                  "#882255", "#44aa99", "#000000", "#cc6677", "#117733", "#aa4499", "#88ccee", "#ddcc77")
# Marks: the non-dominated results larger and outlined in black.
POINT_SIZE, FRONT_SIZE = 60, 150
SHAPES = ("circle", "square", "triangle-up", "cross")
HEIGHT = 340
# Log axes end at the data (padded a little), not at the next power of ten.
LOG = alt.Scale(type="log", nice=False, padding=8)
TOOLTIP = [alt.Tooltip("submitter:N", title="Submitter"), alt.Tooltip("system:N", title="System"),
           alt.Tooltip("round:N", title="Round"), alt.Tooltip("family:N", title="Accelerator"),
           alt.Tooltip("count:Q", title="Accelerators", format=",d"),
           alt.Tooltip("time:Q", title="Time to train (min)", format=",.3~g"),
           alt.Tooltip("hours:Q", title="Accelerator-hours", format=",.3~g")]


@dataclass(frozen=True)
class Chart:
    """A chart as a page shows it: its spec, title, the one line saying what it shows, and a text alternative."""
    key: str  # unique within a page: the element id
    title: str
    reading: str
    alt: str
    spec: dict[str, Any]


def family_order(configurations: pd.DataFrame) -> list[str]:
    """Every accelerator family of `configurations`, the newest round's first (most results first), then the rest
    by number of results; ties by name."""
    rounds = configurations["round"].map(_round_key)
    newest = configurations.loc[rounds == rounds.max(), "accelerator_family"].dropna().value_counts()
    rest = configurations["accelerator_family"].dropna().value_counts()
    ordered = sorted(newest.items(), key=lambda item: (-item[1], item[0]))
    ordered += sorted(((f, n) for f, n in rest.items() if f not in newest.index), key=lambda item: (-item[1], item[0]))
    return [str(family) for family, _ in ordered]


def family_colours(order: Sequence[str]) -> dict[str, str]:
    """One colour per family, by its place in `family_order`: the same on every page and chart."""
    return {family: FAMILY_PALETTE[i % len(FAMILY_PALETTE)] for i, family in enumerate(order)}


def _round_key(name: str) -> float:
    major, _, minor = str(name).lstrip("v").partition(".")
    return int(major) * 100 + int(minor or 0)


def _colour(frame: pd.DataFrame, colours: dict[str, str], title: str = "Accelerator") -> alt.Color:
    shown = [f for f in colours if f in set(frame["family"])]
    return alt.Color("family:N", title=title, sort=shown,
                     scale=alt.Scale(domain=shown, range=[colours[f] for f in shown]),
                     legend=alt.Legend(orient="bottom", symbolLimit=40))


def _shape(frame: pd.DataFrame, colours: dict[str, str], title: str = "Accelerator") -> alt.Shape:
    """A second channel per family, fixed like its colour: the first len(FAMILY_PALETTE) families in `colours`'
    order are circles, the next squares, and so on, so two families never share both colour and shape. Same field
    and title as `_colour`, so the two make one legend."""
    order = list(colours)
    shown = [f for f in colours if f in set(frame["family"])]
    return alt.Shape("family:N", title=title, sort=shown,
                     scale=alt.Scale(domain=shown,
                                     range=[SHAPES[order.index(f) // len(FAMILY_PALETTE) % len(SHAPES)]
                                            for f in shown]))


def _legend_filter(key: str) -> alt.Parameter:
    return alt.selection_point(name=f"{key}_family", fields=["family"], bind="legend")


def _round_selector(key: str, rounds: Sequence[str]) -> alt.Parameter:
    """A drop-down of rounds (all of them by default)."""
    return alt.param(name=f"{key}_round", value="all",
                     bind=alt.binding_select(options=["all", *rounds], labels=["every round", *rounds],
                                             name="Round: "))


def _spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    # Labels that would overlap are dropped (log axes crowd their minor ticks' labels).
    axes = chart.configure_view(stroke=None).configure_axis(labelFontSize=11, titleFontSize=12,
                                                            labelOverlap="greedy", labelSeparation=4)
    spec = axes.configure_axisY(labelLimit=220).configure_legend(columns=4, labelLimit=110).to_dict(validate=False)
    spec.pop("$schema", None)  # the bundled library is the one version; the URL would only be a link out
    return spec


def _points_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The columns every scatter shows, named as in TOOLTIP."""
    return pd.DataFrame({"submitter": frame["submitter"].astype(str), "system": frame["system"].astype(str),
                         "round": frame["round"].astype(str), "family": frame["accelerator_family"].astype(str),
                         "count": frame["accelerator_count"].astype(float),
                         "time": frame["time_to_train_min"].astype(float),
                         "hours": frame["accelerator_hours"].astype(float)}).reset_index(drop=True)


def trade_off_chart(key: str, ranking: pd.DataFrame, colours: dict[str, str], model: str) -> Chart:
    """Time to train against accelerator-hours, every ranked result; the non-dominated ones of their round
    (`round_front` 1) filled and larger. A round selector when rounds mix."""
    data = _points_frame(ranking).assign(
        front=ranking["round_front"].eq(1).map({True: "not beaten on both", False: "beaten on both"}).to_numpy())
    rounds = sorted(data["round"].unique(), key=_round_key, reverse=True)
    legend = _legend_filter(key)
    base = alt.Chart(data).mark_point(filled=True).encode(
        x=alt.X("hours:Q", scale=LOG, title="Accelerator-hours (lower is better)"),
        y=alt.Y("time:Q", scale=LOG, title="Time to train (min, lower is better)"),
        color=_colour(data, colours), shape=_shape(data, colours),
        size=alt.Size("front:N", sort=["not beaten on both", "beaten on both"], title="In its round",
                      scale=alt.Scale(domain=["not beaten on both", "beaten on both"], range=[FRONT_SIZE, POINT_SIZE]),
                      legend=alt.Legend(orient="bottom")),
        stroke=alt.condition("datum.front === 'not beaten on both'", alt.value("#000000"), alt.value(None)),
        strokeWidth=alt.value(1.2),
        opacity=alt.condition(legend, alt.value(0.9), alt.value(0.08)),
        tooltip=[*TOOLTIP, alt.Tooltip("front:N", title="In its round")]).add_params(legend)
    if len(rounds) > 1:
        selector = _round_selector(key, rounds)
        base = base.add_params(selector).transform_filter(f"{key}_round == 'all' || datum.round == {key}_round")
    front = int((data["front"] == "not beaten on both").sum())
    return Chart(key, "Time to train against hardware time",
                 "Lower left is better: the large outlined points are results no other result of their round beats "
                 "on both.",
                 f"Scatter plot, log scales: time to train in minutes against accelerator-hours for {len(data)} "
                 f"{model} results in {len(rounds)} round{'s' if len(rounds) != 1 else ''}, coloured by accelerator; "
                 f"{front} are not beaten on both by a result of their round.",
                 _spec(base.properties(width="container", height=HEIGHT)))


def scaling_chart(key: str, clustered: pd.DataFrame, decide: dict[str, Any] | None, colours: dict[str, str],
                  model: str) -> Chart:
    """Time to train against accelerators per family (points: results of each family's latest round), with the
    decide stage's forecast curve per family (line) and each family's forecast for the next round at its largest
    count with the interval (bar)."""
    data = _points_frame(clustered)
    latest = data.groupby("family")["round"].transform(lambda r: max(r, key=_round_key))
    data = data[data["round"] == latest]
    legend = _legend_filter(key)
    colour = _colour(data, colours)
    x = alt.X("count:Q", scale=LOG, title="Accelerators")
    y = alt.Y("time:Q", scale=LOG, title="Time to train (min)")
    points = alt.Chart(data).mark_point(filled=True, size=POINT_SIZE).encode(
        x=x, y=y, color=colour, shape=_shape(data, colours),
        opacity=alt.condition(legend, alt.value(0.85), alt.value(0.08)),
        tooltip=TOOLTIP).add_params(legend)
    rounds = sorted(data["round"].unique(), key=_round_key, reverse=True)
    if len(rounds) > 1:  # families' latest rounds differ: a reader can keep one round's results
        selector = _round_selector(key, rounds)
        points = points.add_params(selector).transform_filter(f"{key}_round == 'all' || datum.round == {key}_round")
    layers = [points]
    bands, forecasts = forecast_frames(decide, set(data["family"]))
    if not bands.empty:
        band_tips = [alt.Tooltip("unit:N", title="Forecast"), alt.Tooltip("count:Q", title="Accelerators"),
                     alt.Tooltip("time:Q", title="Forecast (min)", format=",.3~g"),
                     alt.Tooltip("low:Q", title="Interval from (min)", format=",.3~g"),
                     alt.Tooltip("high:Q", title="Interval to (min)", format=",.3~g")]
        layers.append(alt.Chart(bands).mark_area().encode(
            x=x, y=alt.Y("low:Q", scale=LOG), y2="high:Q", color=colour, detail="unit:N", tooltip=band_tips,
            opacity=alt.condition(legend, alt.value(0.12), alt.value(0.02))))
        layers.append(alt.Chart(bands).mark_line(strokeDash=[5, 3], strokeWidth=1.5).encode(
            x=x, y=y, color=colour, detail="unit:N",
            opacity=alt.condition(legend, alt.value(0.9), alt.value(0.05)), tooltip=band_tips))
    if not forecasts.empty:
        tips = [alt.Tooltip("unit:N", title="Next-round forecast"), alt.Tooltip("count:Q", title="Accelerators"),
                alt.Tooltip("time:Q", title="Forecast (min)", format=",.3~g"),
                alt.Tooltip("low:Q", title="Interval from (min)", format=",.3~g"),
                alt.Tooltip("high:Q", title="Interval to (min)", format=",.3~g"),
                alt.Tooltip("trusted:N", title="Trusted")]
        layers.append(alt.Chart(forecasts).mark_rule(strokeWidth=3).encode(
            x=x, y="low:Q", y2="high:Q", color=colour, tooltip=tips,
            opacity=alt.condition(legend, alt.value(0.6), alt.value(0.05))))
        layers.append(alt.Chart(forecasts).mark_point(shape="triangle-down", size=FRONT_SIZE, filled=True).encode(
            x=x, y=y, color=colour, tooltip=tips, opacity=alt.condition(legend, alt.value(1), alt.value(0.05))))
    reading = ("Each family's latest results (dots), the next round's forecast (dashed) with its interval (band, "
               "wider outside the published counts) and at the largest count (triangle and bar)"
               if not forecasts.empty else "Each family's results in its latest round; no forecast for this benchmark")
    return Chart(key, "Time to train against accelerators, by family, with the next round's forecast", reading + ".",
                 f"Scatter plot, log scales: time to train in minutes against the number of accelerators for "
                 f"{len(data)} {model} results, one colour per accelerator family"
                 + (f", with forecast bands for {bands['unit'].nunique()} families." if not bands.empty else "."),
                 _spec(alt.layer(*layers).properties(width="container", height=HEIGHT)))


def forecast_frames(decide: dict[str, Any] | None, families: set[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """From decide.json (`summary`): the forecast band of each family shown, as (unit, family, count, time, low,
    high) from half its smallest to twice its largest published count, and its next-round forecast at its largest
    count (unit, family, count, time, low, high, trusted)."""
    if not decide or decide.get("status") != "ok":
        return pd.DataFrame(), pd.DataFrame()
    bands = [{"unit": _unit(u), "family": u["family"], "count": row["accelerator_count"],
              "time": _short(row["predicted_min"]), "low": _short(row["low_min"]), "high": _short(row["high_min"])}
             for u in decide.get("units", []) if u["family"] in families for row in u.get("band", [])]
    forecasts = [{"unit": _unit({"family": f["accelerator"], "form_factor": f["form_factor"]}),
                  "family": f["accelerator"], "count": f["count"], "time": f["predicted_min"], "low": f["low_min"],
                  "high": f["high_min"], "trusted": "yes" if f["trusted"] else "no"}
                 for f in decide.get("forecasts", []) if f["accelerator"] in families]
    return pd.DataFrame(bands), pd.DataFrame(forecasts)


def _short(value: float | None) -> float | None:
    """Four significant digits: finer than any axis or tooltip shows, and a third of the page's bytes."""
    return None if value is None else float(f"{value:.4g}")


def break_even_frames(decide: dict[str, Any] | None,
                      families: set[str]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """From decide.json: per unit of the families shown, its curve's and its observed scaling efficiency at each
    published count (unit, family, count, curve, observed, results) and its break-even (unit, family, count,
    agreement, note; only where the curve crosses the floor within EXTRAPOLATION_LIMIT times its largest count)."""
    from pipeline.analysis.decide import EXTRAPOLATION_LIMIT

    if not decide or decide.get("status") != "ok":
        return pd.DataFrame(), pd.DataFrame(), pd.DataFrame()
    units = [u for u in decide.get("units", []) if u["family"] in families]
    curves = [{"unit": _unit(u), "family": u["family"], "count": row["accelerator_count"],
               "curve": _short(row["model_efficiency"]), "observed": _short(row["observed_efficiency"]),
               "results": row["n_results"]} for u in units for row in u["doubling"]]
    crossings = [{"unit": _unit(u), "family": u["family"], "count": _short(u["break_even_count"]),
                  "agreement": {"agree": "yes", "disagree": "no"}.get(u["break_even_agreement"], "not measured"),
                  "note": u["break_even_note"]} for u in units
                 if u["break_even_count"] is not None and u["break_even_count"] <= EXTRAPOLATION_LIMIT * u["count_max"]]
    curve_frame = pd.DataFrame(curves)
    return curve_frame, curve_frame.dropna(subset=["observed"]) if curves else curve_frame, pd.DataFrame(crossings)


def break_even_chart(key: str, decide: dict[str, Any] | None, families: Sequence[str], colours: dict[str, str],
                     model: str) -> Chart | None:
    """Scaling efficiency against accelerators per family: the forecast curve's (line), the published results'
    median (dots), the floor (`decide.efficiency_floor`, dotted) and where the curve crosses it (cross, with
    whether the data agree). None without decide's units."""
    curves, observed, crossings = break_even_frames(decide, set(families))
    if curves.empty or decide is None:
        return None
    floor = float(decide["efficiency_floor"])
    legend = _legend_filter(key)
    colour = _colour(curves, colours)
    opacity = alt.condition(legend, alt.value(0.9), alt.value(0.06))
    x = alt.X("count:Q", scale=LOG, title="Accelerators")
    y = alt.Y("curve:Q", title="Scaling efficiency (1 = linear)")
    layers = [
        alt.Chart(curves).mark_line(strokeWidth=1.5).encode(
            x=x, y=y, color=colour, detail="unit:N", opacity=opacity,
            tooltip=[alt.Tooltip("unit:N", title="Curve"), alt.Tooltip("count:Q", title="Accelerators"),
                     alt.Tooltip("curve:Q", title="Curve efficiency", format=".2f")]).add_params(legend),
        alt.Chart(observed).mark_point(filled=True, size=POINT_SIZE).encode(
            x=x, y=alt.Y("observed:Q"), color=colour, opacity=opacity,
            tooltip=[alt.Tooltip("unit:N", title="Family"), alt.Tooltip("count:Q", title="Accelerators"),
                     alt.Tooltip("observed:Q", title="Observed efficiency (median)", format=".2f"),
                     alt.Tooltip("results:Q", title="Results")]),
        alt.Chart(pd.DataFrame({"floor": [floor]})).mark_rule(strokeDash=[2, 3], color="#000000").encode(
            y="floor:Q", tooltip=[alt.Tooltip("floor:Q", title="Efficiency floor (decide.efficiency_floor)")])]
    if not crossings.empty:
        layers.append(alt.Chart(crossings.assign(floor=floor)).mark_point(
            shape="cross", size=FRONT_SIZE, filled=True, stroke="#000000", strokeWidth=0.8).encode(
            x=x, y="floor:Q", color=colour, opacity=opacity,
            tooltip=[alt.Tooltip("unit:N", title="Break-even of"), alt.Tooltip("count:Q", title="Accelerators"),
                     alt.Tooltip("agreement:N", title="Curve and data agree"),
                     alt.Tooltip("note:N", title="How")]))
    return Chart(key, "Scaling efficiency against accelerators, with the floor",
                 f"Each family's forecast curve (line) and its published results (dots, median per count): the cross "
                 f"is where the curve falls below the floor of {floor:g}; below the chart, whether the data agree.",
                 f"Line and dot chart, log count axis: scaling efficiency against the number of accelerators for "
                 f"{curves['unit'].nunique()} {model} families, with the efficiency floor {floor:g} and "
                 f"{len(crossings)} break-even points.",
                 _spec(alt.layer(*layers).properties(width="container", height=HEIGHT)))


def backtest_chart(key: str, decide: dict[str, Any] | None, model: str) -> Chart | None:
    """The backtest: each result forecast from the rounds before its own (decide.json's `backtest_points`)
    against its published time, coloured by the round forecast; the diagonal is an exact forecast. None without
    points."""
    points = (decide or {}).get("backtest_points") or []
    if not points:
        return None
    data = pd.DataFrame({"round": [p["fold"] for p in points],
                         "family": [_unit({"family": p["accelerator_family"], "form_factor": p["form_factor"]})
                                    for p in points],
                         "submitter": [p["submitter"] for p in points], "system": [p["system"] for p in points],
                         "count": [p["accelerator_count"] for p in points],
                         "time": [_short(p["time_to_train_min"]) for p in points],
                         "forecast": [_short(p["predicted_min"]) for p in points],
                         "low": [_short(p["low_min"]) for p in points], "high": [_short(p["high_min"]) for p in points],
                         "trusted": ["yes" if p["trusted"] else "no" for p in points]})
    rounds = sorted(data["round"].unique(), key=_round_key)
    legend = alt.selection_point(name=f"{key}_round_legend", fields=["round"], bind="legend")
    span = [float(min(data["time"].min(), data["forecast"].min())), float(max(data["time"].max(),
                                                                           data["forecast"].max()))]
    x = alt.X("time:Q", scale=LOG, title="Published time to train (min)")
    chart = alt.layer(
        alt.Chart(pd.DataFrame({"time": span, "forecast": span})).mark_line(color="#000000", strokeWidth=1).encode(
            x=x, y=alt.Y("forecast:Q", scale=LOG)),
        alt.Chart(data).mark_point(filled=True, size=POINT_SIZE).encode(
            x=x, y=alt.Y("forecast:Q", scale=LOG, title="Forecast from earlier rounds (min)"),
            color=alt.Color("round:N", title="Round forecast", sort=rounds,
                            scale=alt.Scale(domain=rounds, range=[FAMILY_PALETTE[i % len(FAMILY_PALETTE)]
                                                                  for i in range(len(rounds))]),
                            legend=alt.Legend(orient="bottom")),
            opacity=alt.condition(legend, alt.value(0.85), alt.value(0.06)),
            tooltip=[alt.Tooltip("round:N", title="Round forecast"), alt.Tooltip("family:N", title="Accelerator"),
                     alt.Tooltip("submitter:N", title="Submitter"), alt.Tooltip("system:N", title="System"),
                     alt.Tooltip("count:Q", title="Accelerators", format=",d"),
                     alt.Tooltip("time:Q", title="Published (min)", format=",.3~g"),
                     alt.Tooltip("forecast:Q", title="Forecast (min)", format=",.3~g"),
                     alt.Tooltip("low:Q", title="Interval from (min)", format=",.3~g"),
                     alt.Tooltip("high:Q", title="Interval to (min)", format=",.3~g"),
                     alt.Tooltip("trusted:N", title="Trusted")]).add_params(legend))
    return Chart(key, "Forecast against published time, each round from the rounds before it",
                 "On the diagonal the forecast was exact; above it too slow, below it too fast.",
                 f"Scatter plot, log scales: {len(data)} {model} results of {len(rounds)} rounds, each forecast "
                 f"from earlier rounds as predict would have answered, against its published time.",
                 _spec(chart.properties(width="container", height=HEIGHT)))


def _unit(unit: dict[str, Any]) -> str:
    form = unit.get("form_factor")
    return unit["family"] if form in (None, "", "unspecified") else f"{unit['family']} ({form})"


def progress_frame(clustered: pd.DataFrame) -> pd.DataFrame:
    """The best time per round of each (family, accelerator count) published in two rounds or more: the same
    hardware across rounds. Columns as TOOLTIP's plus `hardware` ("8 × H100")."""
    data = _points_frame(clustered)
    best = data.sort_values(["time", "submitter", "system"]).groupby(["family", "count", "round"], sort=False).head(1)
    rounds = best.groupby(["family", "count"])["round"].transform("nunique")
    best = best[rounds >= 2].copy()
    best["hardware"] = [f"{count:,.0f} × {family}" for count, family in zip(best["count"], best["family"])]
    return best.sort_values(["family", "count", "round"], key=lambda c: c.map(_round_key) if c.name == "round"
                            else c).reset_index(drop=True)


def progress_chart(key: str, clustered: pd.DataFrame, colours: dict[str, str], model: str) -> Chart | None:
    """Software (and system) progress: the best time per round on the same accelerator family and count; None
    when no family and count appear in two rounds."""
    data = progress_frame(clustered)
    if data.empty:
        return None
    rounds = sorted(data["round"].unique(), key=_round_key)
    legend = _legend_filter(key)
    encode = {"x": alt.X("round:O", sort=rounds, title="Round"),
              "y": alt.Y("time:Q", scale=LOG, title="Best time to train (min)"),
              "color": _colour(data, colours), "detail": "hardware:N",
              "opacity": alt.condition(legend, alt.value(0.9), alt.value(0.06))}
    tips = [alt.Tooltip("hardware:N", title="Hardware"), *TOOLTIP]
    chart = alt.layer(alt.Chart(data).mark_line().encode(**encode),
                      alt.Chart(data).mark_point(filled=True, size=POINT_SIZE).encode(
                          **encode, shape=_shape(data, colours), tooltip=tips)
                      ).add_params(legend)
    pairs = data["hardware"].nunique()
    return Chart(key, "The same hardware across rounds (software progress)",
                 "Each line is one accelerator at one count: a falling line is the same hardware training faster "
                 "in a later round, from software, tuning and system changes.",
                 f"Line chart: best time to train in minutes per round for {pairs} {model} combinations of "
                 f"accelerator family and count published in two rounds or more.",
                 _spec(chart.properties(width="container", height=HEIGHT)))


def cost_chart(key: str, rows: pd.DataFrame, colours: dict[str, str], round_: str) -> Chart | None:
    """Derived cost per training run (a range over public prices) against time to train, for the configurations
    of `rows` with a price (columns as TOOLTIP's plus `cost_low`, `cost_high`, `cost_text`)."""
    data = rows[rows["cost_low"].notna()].reset_index(drop=True)
    if data.empty:
        return None
    legend = _legend_filter(key)
    colour = _colour(data, colours)
    y = alt.Y("time:Q", scale=LOG, title="Time to train (min)")
    tips = [*TOOLTIP, alt.Tooltip("cost_text:N", title="Cost per run (derived)")]
    opacity = alt.condition(legend, alt.value(0.9), alt.value(0.06))
    chart = alt.layer(
        alt.Chart(data).mark_rule(strokeWidth=2).encode(
            x=alt.X("cost_low:Q", scale=LOG, title="Cost of one training run (USD, derived)"),
            x2="cost_high:Q", y=y, color=colour, opacity=opacity, tooltip=tips),
        alt.Chart(data).mark_point(filled=True, size=POINT_SIZE).encode(
            x="cost_low:Q", y=y, color=colour, shape=_shape(data, colours), opacity=opacity,
            tooltip=tips)).add_params(legend)
    return Chart(key, f"Cost of a training run in {round_} (derived, not an MLPerf result)",
                 "Each bar runs from the cheapest to the dearest public price of the accelerator-hours: left and "
                 "low is cheaper and faster.",
                 f"Range plot, log scales: time to train against the derived cost of one run for {len(data)} "
                 f"configurations of {round_} with a public price.",
                 _spec(chart.properties(width="container", height=HEIGHT)))


def energy_chart(key: str, rows: pd.DataFrame, colours: dict[str, str], model: str) -> Chart | None:
    """Measured energy to train against time to train, for the results of `rows` with `energy_kwh` (columns as
    TOOLTIP's plus `energy_text`, the measurement point and the derived power columns); a round selector where
    rounds mix."""
    if "energy_kwh" not in rows:
        return None
    data = rows[rows["energy_kwh"].notna()].reset_index(drop=True)
    if data.empty:
        return None
    data = data.assign(power_per_accelerator_w=data["power_per_accelerator_w"].round(0),
                       power_share_of_tdp=data["power_share_of_tdp"].round(3))
    rounds = sorted(data["round"].unique(), key=_round_key, reverse=True)
    legend = _legend_filter(key)
    chart = alt.Chart(data[["submitter", "system", "round", "family", "count", "time", "hours", "energy_kwh",
                            "energy_text", "power_measurement", "power_per_accelerator_w",
                            "power_share_of_tdp"]]).mark_point(filled=True, size=FRONT_SIZE).encode(
        x=alt.X("energy_kwh:Q", scale=LOG, title="Energy to train (kWh, measured)"),
        y=alt.Y("time:Q", scale=LOG, title="Time to train (min)"),
        color=_colour(data, colours), shape=_shape(data, colours),
        opacity=alt.condition(legend, alt.value(0.9), alt.value(0.06)),
        tooltip=[*TOOLTIP, alt.Tooltip("energy_text:N", title="Energy (kWh, measurement point)"),
                 alt.Tooltip("power_per_accelerator_w:Q", title="W per accelerator (derived)", format=",d"),
                 alt.Tooltip("power_share_of_tdp:Q", title="Share of TDP (derived)", format=".0%")]).add_params(legend)
    if len(rounds) > 1:
        selector = _round_selector(key, rounds)
        chart = chart.add_params(selector).transform_filter(f"{key}_round == 'all' || datum.round == {key}_round")
    return Chart(key, "Energy to train, where a result measured it",
                 "Left is less energy, low is faster; each point is one MLPerf result with a power measurement "
                 "(the AC figure where the same runs were also measured at DC).",
                 f"Scatter plot, log scales: time to train against measured energy in kWh for {len(data)} {model} "
                 f"results in {len(rounds)} round{'s' if len(rounds) != 1 else ''}.",
                 _spec(chart.properties(width="container", height=HEIGHT)))


def family_comparison_chart(key: str, rows: pd.DataFrame, colours: dict[str, str], round_: str) -> Chart:
    """Per current benchmark and accelerator family: the median hardware efficiency of its results in `round_`
    (diamond) with its 95% bootstrap interval over the results (thick bar) and the range from its least to its most
    efficient result (thin line). `rows`: benchmark, family, n, median, ci_low, ci_high, low, high."""
    legend = _legend_filter(key)
    colour = _colour(rows, colours)
    tips = [alt.Tooltip("benchmark:N", title="Benchmark"), alt.Tooltip("family:N", title="Accelerator"),
            alt.Tooltip("n:Q", title="Results"), alt.Tooltip("median:Q", title="Median efficiency", format=".2f"),
            alt.Tooltip("ci_low:Q", title="95% interval of the median from", format=".2f"),
            alt.Tooltip("ci_high:Q", title="95% interval of the median to", format=".2f"),
            alt.Tooltip("low:Q", title="Least efficient", format=".2f"),
            alt.Tooltip("high:Q", title="Most efficient", format=".2f")]
    order = list(dict.fromkeys(rows["benchmark"]))  # the benchmarks in the page's order, each's best family first
    rows = rows.assign(row=[f"{b}: {f}" for b, f in zip(rows["benchmark"], rows["family"])],
                       place=rows["benchmark"].map(order.index)).sort_values(
        ["place", "median", "family"], ascending=[True, False, True]).drop(columns="place")
    y = alt.Y("row:N", title=None, sort=list(rows["row"]))
    opacity = alt.condition(legend, alt.value(0.95), alt.value(0.06))
    chart = alt.layer(
        alt.Chart(rows).mark_rule(strokeWidth=1).encode(
            x=alt.X("low:Q", scale=alt.Scale(domain=[0, 1]), title="Hardware efficiency (1 = best)"),
            x2="high:Q", y=y, color=colour, opacity=alt.condition(legend, alt.value(0.45), alt.value(0.04)),
            tooltip=tips),
        alt.Chart(rows).mark_rule(strokeWidth=5).encode(
            x="ci_low:Q", x2="ci_high:Q", y=y, color=colour, opacity=opacity, tooltip=tips),
        alt.Chart(rows).mark_point(filled=True, size=POINT_SIZE, shape="diamond", stroke="#000000",
                                   strokeWidth=0.6).encode(
            x="median:Q", y=y, color=colour, opacity=opacity, tooltip=tips)).add_params(legend)
    height = max(160, 18 * len(rows))
    return Chart(key, f"Which accelerators train efficiently in {round_}, across benchmarks",
                 "Right is better: the diamond is the family's median result, the thick bar its 95% bootstrap "
                 "interval over the family's results (none for a single result), the thin line its least to its "
                 "most efficient result.",
                 f"Dot and interval plot: for each of {rows['benchmark'].nunique()} current benchmarks, the hardware "
                 f"efficiency of each accelerator family's results in {round_} (median, 95% bootstrap interval of "
                 f"the median and range, {len(rows)} family-benchmark pairs).",
                 _spec(chart.properties(width="container", height=height)))
