"""The site's interactive charts: Vega-Lite specifications written as plain dicts, embedded inline in the pages and
drawn in the browser by the Vega library the site copies from vl-convert-python (no network).

Each function takes plain frames and returns a `Chart`: the spec as a dict, a title, a one-line reading and a
text alternative. Colours are fixed per accelerator family across every page (`family_colours`); hovering a mark
names the submitter, system, round, accelerator count, time and accelerator-hours; clicking a legend entry filters
by family; a round selector appears where rounds mix. Parameters are named explicitly, so the same data give the
same spec.

The specs follow what Altair 6.3 wrote before (dataset names by content hash, the same defaults); a view that
carries a selection is named by its place in the layer. tests/report/test_charts.py checks each spec against
Vega-Lite's JSON schema.
"""
from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from pipeline.report.formatting import round_order

if TYPE_CHECKING:
    from pipeline.analysis.forecasting.decide import DecideSummary

# Colour-blind-safe hues, most distinct first: Okabe and Ito's palette, then Paul Tol's muted scheme (yellow,
# unreadable on white, left out). Families beyond the list reuse it from the start; the newest families come first
# (`family_order`), so the ones shown together on today's pages never share a colour.
FAMILY_PALETTE = ("#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#332288", "#999933",
                  "#882255", "#44aa99", "#000000", "#cc6677", "#117733", "#aa4499", "#88ccee", "#ddcc77")
# Marks: the non-dominated results larger and outlined in black.
POINT_SIZE, FRONT_SIZE = 60, 150
SHAPES = ("circle", "square", "triangle-up", "cross")
HEIGHT = 340
Spec = dict[str, Any]
# Vega-Lite's encoding types by the one-letter code of a shorthand ("time:Q").
TYPES = {"Q": "quantitative", "N": "nominal", "O": "ordinal"}


def _log() -> Spec:
    """Log axes end at the data (padded a little), not at the next power of ten."""
    return {"type": "log", "nice": False, "padding": 8}


def _channel(shorthand: str, **properties: Any) -> Spec:
    """An encoding channel of a field, from "name:T" (T a key of TYPES) and further Vega-Lite properties."""
    name, _, code = shorthand.rpartition(":")
    return {"field": name, "type": TYPES[code], **properties}


def _tip(shorthand: str, title: str, format_: str | None = None) -> Spec:
    """A tooltip line: the field's value under `title`, with a d3 number format."""
    return _channel(shorthand, title=title, **({} if format_ is None else {"format": format_}))


def _when(param: str, selected: Any, other: Any) -> Spec:
    """A value that depends on a selection: `selected` for the marks it holds, `other` for the rest."""
    return {"condition": {"param": param, "value": selected}, "value": other}


TOOLTIP = [_tip("submitter:N", "Submitter"), _tip("system:N", "System"), _tip("round:N", "Round"),
           _tip("family:N", "Accelerator"), _tip("count:Q", "Accelerators", ",d"),
           _tip("time:Q", "Time to train (min)", ",.3~g"), _tip("hours:Q", "Accelerator-hours", ",.3~g")]
# The forecast's tooltip in the scaling chart (its band and its next-round point and bar).
FORECAST_TIPS = [_tip("count:Q", "Accelerators"), _tip("time:Q", "Forecast (min)", ",.3~g"),
                 _tip("low:Q", "Interval from (min)", ",.3~g"), _tip("high:Q", "Interval to (min)", ",.3~g")]


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
    rounds = configurations["round"].map(round_order)
    newest = configurations.loc[rounds == rounds.max(), "accelerator_family"].dropna().value_counts()
    rest = configurations["accelerator_family"].dropna().value_counts()
    ordered = sorted(newest.items(), key=lambda item: (-item[1], item[0]))
    ordered += sorted(((f, n) for f, n in rest.items() if f not in newest.index), key=lambda item: (-item[1], item[0]))
    return [str(family) for family, _ in ordered]


def family_colours(order: Sequence[str]) -> dict[str, str]:
    """One colour per family, by its place in `family_order`: the same on every page and chart."""
    return {family: FAMILY_PALETTE[i % len(FAMILY_PALETTE)] for i, family in enumerate(order)}


def _colour(frame: pd.DataFrame, colours: dict[str, str], title: str = "Accelerator") -> Spec:
    present = set(frame["family"])
    shown = [f for f in colours if f in present]
    return _channel("family:N", title=title, sort=shown, scale={"domain": shown, "range": [colours[f] for f in shown]},
                    legend={"orient": "bottom", "symbolLimit": 40})


def _shape(frame: pd.DataFrame, colours: dict[str, str], title: str = "Accelerator") -> Spec:
    """A second channel per family, fixed like its colour: the first len(FAMILY_PALETTE) families in `colours`'
    order are circles, the next squares, and so on, so two families never share both colour and shape. Same field
    and title as `_colour`, so the two make one legend."""
    order, present = list(colours), set(frame["family"])
    shown = [f for f in colours if f in present]
    return _channel("family:N", title=title, sort=shown,
                    scale={"domain": shown, "range": [SHAPES[order.index(f) // len(FAMILY_PALETTE) % len(SHAPES)]
                                                      for f in shown]})


def _legend_filter(name: str, field_: str = "family") -> Spec:
    """A selection of one `field_` value by clicking its legend entry."""
    return {"name": name, "select": {"type": "point", "fields": [field_]}, "bind": "legend"}


def _round_selector(key: str, rounds: Sequence[str]) -> list[Spec]:
    """A drop-down of rounds (all of them by default) and the filter that keeps the round chosen."""
    return [{"name": f"{key}_round", "value": "all",
             "bind": {"input": "select", "options": ["all", *rounds], "labels": ["every round", *rounds],
                      "name": "Round: "}},
            {"filter": f"{key}_round == 'all' || datum.round == {key}_round"}]


# ---------------------------------------------------------------------------------------------- spec assembly

@dataclass
class Layer:
    """One view of a chart: its data, mark and encoding, and the parameters and transforms it carries."""
    data: pd.DataFrame
    mark: Spec
    encoding: Spec
    params: list[Spec] = field(default_factory=list)
    transform: list[Spec] = field(default_factory=list)

    def body(self, datasets: dict[str, list[dict[str, Any]]], with_data: bool = True) -> Spec:
        """The view's spec (its rows added to the chart's `datasets`; none when the chart's top level holds them)."""
        spec: Spec = {"mark": self.mark, "encoding": self.encoding}
        if with_data:
            spec["data"] = {"name": _dataset(self.data, datasets)}
        if self.transform:
            spec["transform"] = self.transform
        return spec


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of `frame` as JSON values: Python scalars, missing values and infinities as null."""
    values = frame.to_numpy(dtype=object, na_value=None)
    for j, dtype in enumerate(frame.dtypes):
        if dtype.kind == "f":  # infinities are no JSON either
            column = values[:, j]
            column[[value is not None and math.isinf(value) for value in column]] = None
    names = frame.columns.tolist()  # once: zipping an Index walks it element by element, for every row
    return [dict(zip(names, row)) for row in values.tolist()]


def _dataset(frame: pd.DataFrame, datasets: dict[str, list[dict[str, Any]]]) -> str:
    """Adds `frame`'s rows to the spec's `datasets` under a name hashed from them, so layers drawing the same
    rows share one copy; returns the name."""
    values = _records(frame)
    name = "data-" + hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:32]
    datasets[name] = values
    return name


def _top_level(body: Spec, datasets: dict[str, list[dict[str, Any]]], height: int) -> Spec:
    """The spec's top level: the page's axis and legend style, the datasets and the size."""
    # Labels that would overlap are dropped (log axes crowd their minor ticks' labels). The view's continuous
    # size is Altair's default, which "container" width and the fixed height override.
    config = {"view": {"continuousWidth": 300, "continuousHeight": 300, "stroke": None},
              "axis": {"labelFontSize": 11, "titleFontSize": 12, "labelOverlap": "greedy", "labelSeparation": 4},
              "axisY": {"labelLimit": 220}, "legend": {"columns": 4, "labelLimit": 110}}
    return {"config": config, **body, "datasets": datasets, "height": height, "width": "container"}


def _single(layer: Layer, height: int = HEIGHT) -> Spec:
    """A chart of one view."""
    datasets: dict[str, list[dict[str, Any]]] = {}
    body = layer.body(datasets)
    if layer.params:
        body["params"] = layer.params
    return _top_level(body, datasets, height)


def _layered(layers: Sequence[Layer], height: int = HEIGHT) -> Spec:
    """Views drawn over each other. Data every layer shares sits once at the top; parameters sit at the top too,
    a selection naming the views it is made in (a view carrying one is named by its place: `view_<i>`)."""
    datasets: dict[str, list[dict[str, Any]]] = {}
    shared = all(layer.data is layers[0].data for layer in layers)
    body: Spec = {"data": {"name": _dataset(layers[0].data, datasets)}} if shared else {}
    params, views = [], []
    for i, layer in enumerate(layers):
        view = layer.body(datasets, with_data=not shared)
        if any("select" in param for param in layer.params):
            view["name"] = f"view_{i}"
        views.append(view)
        params += [{**param, "views": [view["name"]]} if "select" in param else param for param in layer.params]
    if params:
        body["params"] = params
    return _top_level({**body, "layer": views}, datasets, height)


# --------------------------------------------------------------------------------------------------- charts

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
    rounds = sorted(data["round"].unique(), key=round_order, reverse=True)
    legend = _legend_filter(f"{key}_family")
    fronts = ["not beaten on both", "beaten on both"]
    points = Layer(data, {"type": "point", "filled": True}, {
        "x": _channel("hours:Q", scale=_log(), title="Accelerator-hours (lower is better)"),
        "y": _channel("time:Q", scale=_log(), title="Time to train (min, lower is better)"),
        "color": _colour(data, colours), "shape": _shape(data, colours),
        "size": _channel("front:N", sort=fronts, title="In its round",
                         scale={"domain": fronts, "range": [FRONT_SIZE, POINT_SIZE]}, legend={"orient": "bottom"}),
        "stroke": {"condition": {"test": "datum.front === 'not beaten on both'", "value": "#000000"}, "value": None},
        "strokeWidth": {"value": 1.2},
        "opacity": _when(legend["name"], 0.9, 0.08),
        "tooltip": [*TOOLTIP, _tip("front:N", "In its round")]}, params=[legend])
    if len(rounds) > 1:
        selector, keep = _round_selector(key, rounds)
        points.params.append(selector)
        points.transform.append(keep)
    front = int((data["front"] == "not beaten on both").sum())
    return Chart(key, "Time to train against hardware time",
                 "Lower left is better: the large outlined points are results no other result of their round beats "
                 "on both.",
                 f"Scatter plot, log scales: time to train in minutes against accelerator-hours for {len(data)} "
                 f"{model} results in {len(rounds)} round{'s' if len(rounds) != 1 else ''}, coloured by accelerator; "
                 f"{front} are not beaten on both by a result of their round.",
                 _single(points))


def scaling_chart(key: str, clustered: pd.DataFrame, decide: DecideSummary | None, colours: dict[str, str],
                  model: str) -> Chart:
    """Time to train against accelerators per family (points: results of each family's latest round), with the
    decide stage's forecast curve per family (line) and each family's forecast for the next round at its largest
    count with the interval (bar)."""
    data = _points_frame(clustered)
    order = data["round"].map(round_order)
    data = data[order == order.groupby(data["family"]).transform("max")]
    legend = _legend_filter(f"{key}_family")
    colour = _colour(data, colours)
    x = _channel("count:Q", scale=_log(), title="Accelerators")
    y = _channel("time:Q", scale=_log(), title="Time to train (min)")
    points = Layer(data, {"type": "point", "filled": True, "size": POINT_SIZE}, {
        "x": x, "y": y, "color": colour, "shape": _shape(data, colours),
        "opacity": _when(legend["name"], 0.85, 0.08), "tooltip": TOOLTIP}, params=[legend])
    rounds = sorted(data["round"].unique(), key=round_order, reverse=True)
    if len(rounds) > 1:  # families' latest rounds differ: a reader can keep one round's results
        selector, keep = _round_selector(key, rounds)
        points.params.append(selector)
        points.transform.append(keep)
    layers = [points]
    bands, forecasts = forecast_frames(decide, set(data["family"]))
    if not bands.empty:
        band_tips = [_tip("unit:N", "Forecast"), *FORECAST_TIPS]
        layers.append(Layer(bands, {"type": "area"}, {
            "x": x, "y": _channel("low:Q", scale=_log()), "y2": {"field": "high"}, "color": colour,
            "detail": _channel("unit:N"), "tooltip": band_tips, "opacity": _when(legend["name"], 0.12, 0.02)}))
        layers.append(Layer(bands, {"type": "line", "strokeDash": [5, 3], "strokeWidth": 1.5}, {
            "x": x, "y": y, "color": colour, "detail": _channel("unit:N"),
            "opacity": _when(legend["name"], 0.9, 0.05), "tooltip": band_tips}))
    if not forecasts.empty:
        tips = [_tip("unit:N", "Next-round forecast"), *FORECAST_TIPS, _tip("trusted:N", "Trusted")]
        layers.append(Layer(forecasts, {"type": "rule", "strokeWidth": 3}, {
            "x": x, "y": _channel("low:Q"), "y2": {"field": "high"}, "color": colour, "tooltip": tips,
            "opacity": _when(legend["name"], 0.6, 0.05)}))
        layers.append(Layer(forecasts, {"type": "point", "shape": "triangle-down", "size": FRONT_SIZE, "filled": True},
                            {"x": x, "y": y, "color": colour, "tooltip": tips,
                             "opacity": _when(legend["name"], 1, 0.05)}))
    reading = ("Each family's latest results (dots), the next round's forecast (dashed) with its interval (band, "
               "wider outside the published counts) and at the largest count (triangle and bar)"
               if not forecasts.empty else "Each family's results in its latest round; no forecast for this benchmark")
    return Chart(key, "Time to train against accelerators, by family, with the next round's forecast", reading + ".",
                 f"Scatter plot, log scales: time to train in minutes against the number of accelerators for "
                 f"{len(data)} {model} results, one colour per accelerator family"
                 + (f", with forecast bands for {bands['unit'].nunique()} families." if not bands.empty else "."),
                 _layered(layers))


def forecast_frames(decide: DecideSummary | None, families: set[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """From decide.json (`summary`): the forecast band of each family shown, as (unit, family, count, time, low,
    high) from half its smallest to twice its largest published count, and its next-round forecast at its largest
    count (unit, family, count, time, low, high, trusted); only intervals a log axis can draw."""
    if decide is None or decide.status != "ok":
        return pd.DataFrame(), pd.DataFrame()
    bands = [{"unit": _unit(u.family, u.form_factor), "family": u.family, "count": row.accelerator_count,
              "time": _short(row.predicted_min), "low": _short(row.low_min), "high": _short(row.high_min)}
             for u in decide.units if u.family in families for row in u.band]
    forecasts = [{"unit": _unit(f.accelerator, f.form_factor), "family": f.accelerator, "count": f.count,
                  "time": f.predicted_min, "low": f.low_min, "high": f.high_min,
                  "trusted": "yes" if f.trusted else "no"}
                 for f in decide.forecasts if f.accelerator in families]
    return _on_log_scale(pd.DataFrame(bands)), _on_log_scale(pd.DataFrame(forecasts))


def _on_log_scale(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows whose interval a log axis can draw (low above 0; an interval from 0, such as a forecast far from its
    data, is in the tables and tooltips, not on the chart)."""
    return frame if frame.empty else frame[frame["low"].gt(0) & frame["high"].notna()].reset_index(drop=True)


def _short(value: float | None) -> float | None:
    """Four significant digits: finer than any axis or tooltip shows, and a third of the page's bytes."""
    return None if value is None else float(f"{value:.4g}")


def break_even_frames(decide: DecideSummary | None,
                      families: set[str]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """From decide.json: per unit of the families shown, its curve's and its observed scaling efficiency at each
    published count (unit, family, count, curve, observed, results) and its break-even (unit, family, count,
    agreement, note; only where the curve crosses the floor within EXTRAPOLATION_LIMIT times its largest count)."""
    from pipeline.analysis.forecasting.decide import EXTRAPOLATION_LIMIT

    if decide is None or decide.status != "ok":
        return pd.DataFrame(), pd.DataFrame(), pd.DataFrame()
    units = [u for u in decide.units if u.family in families]
    curves = [{"unit": _unit(u.family, u.form_factor), "family": u.family, "count": row.accelerator_count,
               "curve": _short(row.model_efficiency), "observed": _short(row.observed_efficiency),
               "results": row.n_results} for u in units for row in u.doubling]
    crossings = [{"unit": _unit(u.family, u.form_factor), "family": u.family, "count": _short(u.break_even_count),
                  "agreement": {"agree": "yes", "disagree": "no", "unobserved": "not measured"}.get(
                      u.break_even_agreement, u.break_even_agreement),
                  "note": u.break_even_note} for u in units
                 if u.break_even_count is not None and u.break_even_count <= EXTRAPOLATION_LIMIT * u.count_max]
    curve_frame = pd.DataFrame(curves)
    return curve_frame, curve_frame.dropna(subset=["observed"]) if curves else curve_frame, pd.DataFrame(crossings)


def break_even_chart(key: str, decide: DecideSummary | None, families: Sequence[str], colours: dict[str, str],
                     model: str) -> Chart | None:
    """Scaling efficiency against accelerators per family: the forecast curve's (line), the published results'
    median (dots), the floor (`decide.efficiency_floor`, dotted) and where the curve crosses it (cross, with
    whether the data agree). None without decide's units."""
    curves, observed, crossings = break_even_frames(decide, set(families))
    if curves.empty or decide is None:
        return None
    floor = float(decide.efficiency_floor)
    legend = _legend_filter(f"{key}_family")
    colour = _colour(curves, colours)
    opacity = _when(legend["name"], 0.9, 0.06)
    x = _channel("count:Q", scale=_log(), title="Accelerators")
    layers = [
        Layer(curves, {"type": "line", "strokeWidth": 1.5}, {
            "x": x, "y": _channel("curve:Q", title="Scaling efficiency (1 = linear)"), "color": colour,
            "detail": _channel("unit:N"), "opacity": opacity,
            "tooltip": [_tip("unit:N", "Curve"), _tip("count:Q", "Accelerators"),
                        _tip("curve:Q", "Curve efficiency", ".2f")]}, params=[legend]),
        Layer(observed, {"type": "point", "filled": True, "size": POINT_SIZE}, {
            "x": x, "y": _channel("observed:Q"), "color": colour, "opacity": opacity,
            "tooltip": [_tip("unit:N", "Family"), _tip("count:Q", "Accelerators"),
                        _tip("observed:Q", "Observed efficiency (median)", ".2f"), _tip("results:Q", "Results")]}),
        Layer(pd.DataFrame({"floor": [floor]}), {"type": "rule", "strokeDash": [2, 3], "color": "#000000"}, {
            "y": _channel("floor:Q"), "tooltip": [_tip("floor:Q", "Efficiency floor (decide.efficiency_floor)")]})]
    if not crossings.empty:
        layers.append(Layer(crossings.assign(floor=floor), {
            "type": "point", "shape": "cross", "size": FRONT_SIZE, "filled": True, "stroke": "#000000",
            "strokeWidth": 0.8}, {
            "x": x, "y": _channel("floor:Q"), "color": colour, "opacity": opacity,
            "tooltip": [_tip("unit:N", "Break-even of"), _tip("count:Q", "Accelerators"),
                        _tip("agreement:N", "Curve and data agree"), _tip("note:N", "How")]}))
    return Chart(key, "Scaling efficiency against accelerators, with the floor",
                 f"Each family's forecast curve (line) and its published results (dots, median per count): the cross "
                 f"is where the curve falls below the floor of {floor:g}; below the chart, whether the data agree.",
                 f"Line and dot chart, log count axis: scaling efficiency against the number of accelerators for "
                 f"{curves['unit'].nunique()} {model} families, with the efficiency floor {floor:g} and "
                 f"{len(crossings)} break-even points.",
                 _layered(layers))


def backtest_chart(key: str, decide: DecideSummary | None, model: str) -> Chart | None:
    """The backtest: each result forecast from the rounds before its own (decide.json's `backtest_points`)
    against its published time, coloured by the round forecast; the diagonal is an exact forecast. None without
    points."""
    points = decide.backtest_points if decide is not None else []
    if not points:
        return None
    data = pd.DataFrame({"round": [p.fold for p in points],
                         "family": [_unit(p.accelerator_family, p.form_factor) for p in points],
                         "submitter": [p.submitter for p in points], "system": [p.system for p in points],
                         "count": [p.accelerator_count for p in points],
                         "time": [_short(p.time_to_train_min) for p in points],
                         "forecast": [_short(p.predicted_min) for p in points],
                         "low": [_short(p.low_min) for p in points], "high": [_short(p.high_min) for p in points],
                         "trusted": ["yes" if p.trusted else "no" for p in points]})
    rounds = sorted(data["round"].unique(), key=round_order)
    legend = _legend_filter(f"{key}_round_legend", "round")
    span = [float(min(data["time"].min(), data["forecast"].min())), float(max(data["time"].max(),
                                                                           data["forecast"].max()))]
    x = _channel("time:Q", scale=_log(), title="Published time to train (min)")
    layers = [
        Layer(pd.DataFrame({"time": span, "forecast": span}), {"type": "line", "color": "#000000", "strokeWidth": 1},
              {"x": x, "y": _channel("forecast:Q", scale=_log())}),
        Layer(data, {"type": "point", "filled": True, "size": POINT_SIZE}, {
            "x": x, "y": _channel("forecast:Q", scale=_log(), title="Forecast from earlier rounds (min)"),
            "color": _channel("round:N", title="Round forecast", sort=rounds,
                              scale={"domain": rounds, "range": [FAMILY_PALETTE[i % len(FAMILY_PALETTE)]
                                                                 for i in range(len(rounds))]},
                              legend={"orient": "bottom"}),
            "opacity": _when(legend["name"], 0.85, 0.06),
            "tooltip": [_tip("round:N", "Round forecast"), _tip("family:N", "Accelerator"),
                        _tip("submitter:N", "Submitter"), _tip("system:N", "System"),
                        _tip("count:Q", "Accelerators", ",d"), _tip("time:Q", "Published (min)", ",.3~g"),
                        _tip("forecast:Q", "Forecast (min)", ",.3~g"), *FORECAST_TIPS[2:],
                        _tip("trusted:N", "Trusted")]}, params=[legend])]
    return Chart(key, "Forecast against published time, each round from the rounds before it",
                 "On the diagonal the forecast was exact; above it too slow, below it too fast.",
                 f"Scatter plot, log scales: {len(data)} {model} results of {len(rounds)} "
                 f"round{'s' * (len(rounds) != 1)}, each forecast from earlier rounds as predict would have "
                 f"answered, against its published time.",
                 _layered(layers))


def _unit(family: str, form_factor: str | None) -> str:
    """A unit's label: the family, with its form factor where the descriptions name one."""
    return family if form_factor in (None, "", "unspecified") else f"{family} ({form_factor})"


def progress_frame(clustered: pd.DataFrame) -> pd.DataFrame:
    """The best time per round of each (family, accelerator count) published in two rounds or more: the same
    hardware across rounds. Columns as TOOLTIP's plus `hardware` ("8 × H100")."""
    data = _points_frame(clustered)
    best = data.sort_values(["time", "submitter", "system"]).groupby(["family", "count", "round"], sort=False).head(1)
    rounds = best.groupby(["family", "count"])["round"].transform("nunique")
    best = best[rounds >= 2].copy()
    best["hardware"] = [f"{count:,.0f} × {family}" for count, family in zip(best["count"], best["family"])]
    return best.sort_values(["family", "count", "round"], key=lambda c: c.map(round_order) if c.name == "round"
                            else c).reset_index(drop=True)


def progress_chart(key: str, clustered: pd.DataFrame, colours: dict[str, str], model: str) -> Chart | None:
    """Software (and system) progress: the best time per round on the same accelerator family and count; None
    when no family and count appear in two rounds."""
    data = progress_frame(clustered)
    if data.empty:
        return None
    rounds = sorted(data["round"].unique(), key=round_order)
    legend = _legend_filter(f"{key}_family")
    encoding = {"x": _channel("round:O", sort=rounds, title="Round"),
                "y": _channel("time:Q", scale=_log(), title="Best time to train (min)"),
                "color": _colour(data, colours), "detail": _channel("hardware:N"),
                "opacity": _when(legend["name"], 0.9, 0.06)}
    tips = [_tip("hardware:N", "Hardware"), *TOOLTIP]
    layers = [Layer(data, {"type": "line"}, encoding, params=[legend]),
              Layer(data, {"type": "point", "filled": True, "size": POINT_SIZE},
                    {**encoding, "shape": _shape(data, colours), "tooltip": tips})]
    pairs = data["hardware"].nunique()
    return Chart(key, "The same hardware across rounds (software progress)",
                 "Each line is one accelerator at one count: a falling line is the same hardware training faster "
                 "in a later round, from software, tuning and system changes.",
                 f"Line chart: best time to train in minutes per round for {pairs} {model} combinations of "
                 f"accelerator family and count published in two rounds or more.",
                 _layered(layers))


def cost_chart(key: str, rows: pd.DataFrame, colours: dict[str, str], round_: str) -> Chart | None:
    """Derived cost per training run (a range over public prices) against time to train, for the configurations
    of `rows` with a price (columns as TOOLTIP's plus `cost_low`, `cost_high`, `cost_text`)."""
    data = rows[rows["cost_low"].notna()].reset_index(drop=True)
    if data.empty:
        return None
    legend = _legend_filter(f"{key}_family")
    colour = _colour(data, colours)
    y = _channel("time:Q", scale=_log(), title="Time to train (min)")
    tips = [*TOOLTIP, _tip("cost_text:N", "Cost per run (derived)")]
    opacity = _when(legend["name"], 0.9, 0.06)
    layers = [Layer(data, {"type": "rule", "strokeWidth": 2}, {
                  "x": _channel("cost_low:Q", scale=_log(), title="Cost of one training run (USD, derived)"),
                  "x2": {"field": "cost_high"}, "y": y, "color": colour, "opacity": opacity, "tooltip": tips},
                  params=[legend]),
              Layer(data, {"type": "point", "filled": True, "size": POINT_SIZE}, {
                  "x": _channel("cost_low:Q"), "y": y, "color": colour, "shape": _shape(data, colours),
                  "opacity": opacity, "tooltip": tips})]
    return Chart(key, f"Cost of a training run in {round_} (derived, not an MLPerf result)",
                 "Each bar runs from the cheapest to the dearest public price of the accelerator-hours: left and "
                 "low is cheaper and faster.",
                 f"Range plot, log scales: time to train against the derived cost of one run for {len(data)} "
                 f"configurations of {round_} with a public price.",
                 _layered(layers))


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
    rounds = sorted(data["round"].unique(), key=round_order, reverse=True)
    legend = _legend_filter(f"{key}_family")
    points = Layer(data[["submitter", "system", "round", "family", "count", "time", "hours", "energy_kwh",
                         "energy_text", "power_measurement", "power_per_accelerator_w", "power_share_of_tdp"]],
                   {"type": "point", "filled": True, "size": FRONT_SIZE}, {
                       "x": _channel("energy_kwh:Q", scale=_log(), title="Energy to train (kWh, measured)"),
                       "y": _channel("time:Q", scale=_log(), title="Time to train (min)"),
                       "color": _colour(data, colours), "shape": _shape(data, colours),
                       "opacity": _when(legend["name"], 0.9, 0.06),
                       "tooltip": [*TOOLTIP, _tip("energy_text:N", "Energy (kWh, measurement point)"),
                                   _tip("power_per_accelerator_w:Q", "W per accelerator (derived)", ",d"),
                                   _tip("power_share_of_tdp:Q", "System power / rated power (host in)",
                                        ".0%")]},
                   params=[legend])
    if len(rounds) > 1:
        selector, keep = _round_selector(key, rounds)
        points.params.append(selector)
        points.transform.append(keep)
    return Chart(key, "Energy to train, where a result measured it",
                 "Left is less energy, low is faster; each point is one MLPerf result with a power measurement "
                 "(the AC figure where the same runs were also measured at DC).",
                 f"Scatter plot, log scales: time to train against measured energy in kWh for {len(data)} {model} "
                 f"results in {len(rounds)} round{'s' if len(rounds) != 1 else ''}.",
                 _single(points))


def family_comparison_chart(key: str, rows: pd.DataFrame, colours: dict[str, str], round_: str) -> Chart:
    """Per current benchmark and accelerator family: the median hardware efficiency of its results in `round_`
    (diamond) with its 95% bootstrap interval over the results (thick bar) and the range from its least to its most
    efficient result (thin line). `rows`: benchmark, family, n, median, ci_low, ci_high, low, high."""
    legend = _legend_filter(f"{key}_family")
    colour = _colour(rows, colours)
    tips = [_tip("benchmark:N", "Benchmark"), _tip("family:N", "Accelerator"), _tip("n:Q", "Results"),
            _tip("median:Q", "Median efficiency", ".2f"),
            _tip("ci_low:Q", "95% interval of the median from", ".2f"),
            _tip("ci_high:Q", "95% interval of the median to", ".2f"),
            _tip("low:Q", "Least efficient", ".2f"), _tip("high:Q", "Most efficient", ".2f")]
    order = list(dict.fromkeys(rows["benchmark"]))  # the benchmarks in the page's order, each's best family first
    rows = rows.assign(row=[f"{b}: {f}" for b, f in zip(rows["benchmark"], rows["family"])],
                       place=rows["benchmark"].map(order.index)).sort_values(
        ["place", "median", "family"], ascending=[True, False, True]).drop(columns="place")
    y = _channel("row:N", title=None, sort=list(rows["row"]))
    opacity = _when(legend["name"], 0.95, 0.06)
    layers = [
        Layer(rows, {"type": "rule", "strokeWidth": 1}, {
            "x": _channel("low:Q", scale={"domain": [0, 1]}, title="Hardware efficiency (1 = best)"),
            "x2": {"field": "high"}, "y": y, "color": colour, "opacity": _when(legend["name"], 0.45, 0.04),
            "tooltip": tips}, params=[legend]),
        Layer(rows, {"type": "rule", "strokeWidth": 5}, {
            "x": _channel("ci_low:Q"), "x2": {"field": "ci_high"}, "y": y, "color": colour, "opacity": opacity,
            "tooltip": tips}),
        Layer(rows, {"type": "point", "filled": True, "size": POINT_SIZE, "shape": "diamond", "stroke": "#000000",
                     "strokeWidth": 0.6}, {
            "x": _channel("median:Q"), "y": y, "color": colour, "opacity": opacity, "tooltip": tips})]
    height = max(160, 18 * len(rows))
    return Chart(key, f"Which accelerators train efficiently in {round_}, across benchmarks",
                 "Right is better: the diamond is the family's median result, the thick bar its 95% bootstrap "
                 "interval over the family's results (none for a single result), the thin line its least to its "
                 "most efficient result.",
                 f"Dot and interval plot: for each of {rows['benchmark'].nunique()} current benchmarks, the hardware "
                 f"efficiency of each accelerator family's results in {round_} (median, 95% bootstrap interval of "
                 f"the median and range, {len(rows)} family-benchmark pairs).",
                 _layered(layers, height))
