"""The printable brief: one page (PDF) per current benchmark, for a procurement request, readable without the site.

For each of today's benchmarks (`pipeline.analysis.scope.today`: the entry page's), every result today's round
offers in the analysis scope (`pipeline.analysis.scope.on_offer`, as the buyer's answer), republished ones included
and marked, `write_brief` draws with seaborn, on matplotlib's Agg backend:

- the front: time to train against accelerator-hours, the non-dominated configurations joined;
- the cost at a deadline: each configuration's cost of one run (the range over the providers' current prices of
  on-demand prices only, drawn at the price "cheapest" is decided at, `buyer.cheapest_rule`) against
  its time to train, the deadlines of params `report.deadlines_min` drawn and the buyer stage's answer to each
  (`pipeline.analysis.buyer`: the one rule the site and `recommend` follow too) marked;
- the scaling curve of each family of the round with its forecast band (the decide stage's reports/decide/<b>.json:
  `predict`'s next-round answer and its interval per count), over the round's published results;
- the table a request needs: configuration, submitter and system, round, time to train, accelerator-hours, cost
  range with its price type and the prices' dates, energy (measured, or estimated and labelled so).

The PDF is byte-identical for the same inputs: no creation date, a fixed producer, fonts embedded as TrueType and a
fixed hash salt.
"""
from __future__ import annotations

import logging
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
# The standard Helvetica has one weight: matplotlib says so for every text it measures ("using medium").
logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
import matplotlib.pyplot as plt  # noqa: E402  (the backend first)
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

from pipeline.analysis.buyer import BuyerAnswer, cheapest_rule, options_table  # noqa: E402
from pipeline.analysis.forecasting.decide import DecideSummary  # noqa: E402
from pipeline.analysis.pricing.costs import COST_LABEL, usd  # noqa: E402
from pipeline.analysis.pricing.electricity import ElectricityPrice  # noqa: E402
from pipeline.analysis.pricing.energy_estimate import ESTIMATE_LABEL  # noqa: E402
from pipeline.analysis.pricing.energy_words import EnergyFigure, energy_words  # noqa: E402
from pipeline.analysis.pricing.price_table import age_limit_text, price_dates_text  # noqa: E402
from pipeline.core.files import atomic_path  # noqa: E402
from pipeline.mlperf.catalogue import BY_ID  # noqa: E402

UNKNOWN_COLOUR = "#949494"  # a family the site's colours do not know, and results of no known family
# Rows of the table at most (front and cheapest-within-a-deadline configurations, fastest first).
MAX_ROWS = 14
PAGE_INCHES = (11.69, 8.27)  # A4 landscape
# The page's layout, in figure fractions: the table sits on the footnotes, the charts fill what it leaves up to the
# introduction (at most CHART_MAX_HEIGHT tall, CHART_GAP above the table for their axis labels).
TABLE_BOTTOM = 0.13
CHART_TOP = 0.87
CHART_TITLE_SPACE = 0.035  # between the introduction's last line and the charts' tops, for their titles
CHART_GAP = 0.075
CHART_MAX_HEIGHT = 0.5
PRODUCER = "mlperf-efficiency brief (matplotlib, seaborn)"
ABOUT = "~"  # the standard Helvetica's encoding has no "≈": it printed as "?"
# Fonts: the PDF standard Helvetica (every reader has it; nothing to embed, which would take most of the time);
# `pdf.fonttype` and the hash salt fixed so the file does not change between runs.
STYLE: Any = {  # matplotlib rc parameters (typed as its literal keys)
         "pdf.use14corefonts": True, "pdf.fonttype": 3, "svg.hashsalt": "mlperf-brief", "font.family": "sans-serif",
         "font.sans-serif": ["Helvetica"], "axes.unicode_minus": False, "font.size": 7.5,
         "axes.titlesize": 8.5, "axes.labelsize": 7.5, "legend.fontsize": 6.5, "xtick.labelsize": 6.5,
         "ytick.labelsize": 6.5}


@dataclass(frozen=True)
class BriefInputs:
    """What one brief is drawn from: the benchmark's record of today (the buyer stage's `BuyerAnswer`: its round,
    every result on offer priced, its front and its answers) and the decide stage's summary (None where there is
    none), with the site's colour of each family and the dates every page prints."""
    answer: BuyerAnswer
    decide: DecideSummary | None
    colours: Mapping[str, str]  # by family: `charts.family_colours`, the site's
    currency: dict[str, Any] | None = None  # `pipeline.report.currency.currency`: the dates and the notice

    @property
    def benchmark(self) -> str:
        """The benchmark (pipeline.mlperf.catalogue id)."""
        return self.answer.benchmark

    @property
    def round(self) -> str:
        """The round the record holds: today's."""
        return self.answer.round

    @cached_property
    def rows(self) -> pd.DataFrame:
        """The record's results (`BuyerAnswer.options`), one row each, fastest first (`brief_rows`)."""
        return brief_rows(self.answer)


def brief_rows(answer: BuyerAnswer) -> pd.DataFrame:
    """The record's published options as a frame (the `Option` fields as columns, `front` for `on_front`), fastest
    first as the record keeps them; the charts and the table draw it."""
    return options_table(answer.options).assign(front=lambda frame: frame["on_front"].astype(bool))


def cheapest_within(rows: pd.DataFrame, answer: BuyerAnswer) -> dict[float, int | None]:
    """Per deadline of the buyer's `answer` (minutes): the row (index) of `rows` its cheapest option is; None where
    no option meets the deadline or the option is not among the rows (a forecast: `unlisted_choices` names it)."""
    labels = {str(label): int(index) for index, label in rows["label"].items()}
    return {choice.limit: None if choice.option is None else labels.get(choice.option.label)
            for choice in answer.deadlines}


def unlisted_choices(rows: pd.DataFrame, answer: BuyerAnswer) -> list[str]:
    """The buyer's answers to a deadline that are not among `rows` (a trusted forecast), in words."""
    listed = cheapest_within(rows, answer)
    return [f"cheapest within {choice.limit:g} min: {choice.option.label} ({choice.option.detail}, "
            f"{choice.option.cost})" for choice in answer.deadlines
            if choice.option is not None and listed.get(choice.limit) is None]


def _front_axes(ax: Any, rows: pd.DataFrame, colours: Mapping[str, str]) -> None:
    data = rows.assign(family=rows["accelerator_family"].fillna("unknown"))
    sns.scatterplot(data=data, x="accelerator_hours", y="time_to_train_min", hue="family", palette=colours,
                    hue_order=list(colours), style="front", style_order=[True, False], markers={True: "o", False: "X"},
                    s=22, ax=ax, legend=False)
    front = data[data["front"]].sort_values("accelerator_hours")
    ax.plot(front["accelerator_hours"], front["time_to_train_min"], color="#333333", linewidth=0.8, zorder=0)
    ax.set(xscale="log", yscale="log", xlabel="accelerator-hours (hardware time, lower is better)",
           ylabel="time to train, min (lower is better)", title="The front: none beaten on both (joined, circles)")
    _log_axes(ax)


def _cost_axes(ax: Any, rows: pd.DataFrame, colours: Mapping[str, str], cheapest: Mapping[float, int | None],
               basis: str) -> None:
    rows = rows.assign(cost_basis_usd=rows["cost_cap_usd"].astype(float))  # a result's time is its interval's end
    priced = rows[rows["cost_low_usd"].notna()].assign(family=lambda f: f["accelerator_family"].fillna("unknown"))
    if priced.empty:
        ax.text(0.5, 0.5, "no public price for this round's accelerators", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
        return
    ax.vlines(priced["time_to_train_min"], priced["cost_low_usd"], priced["cost_high_usd"],
              colors=[colours[f] for f in priced["family"]], linewidth=1.0, alpha=0.7)
    sns.scatterplot(data=priced, x="time_to_train_min", y="cost_basis_usd", hue="family", palette=colours,
                    hue_order=[f for f in colours if f in set(priced["family"])], s=14, ax=ax, legend=False)
    for deadline, row in cheapest.items():
        ax.axvline(deadline, color="#888888", linestyle="--", linewidth=0.6)
        ax.text(deadline, 1.0, f" {deadline:g} min", transform=ax.get_xaxis_transform(), fontsize=6, va="top",
                color="#555555")
        if row is not None:
            ax.scatter([rows.at[row, "time_to_train_min"]], [rows.at[row, "cost_basis_usd"]], s=70,
                       facecolors="none", edgecolors="#000000", linewidths=0.9, zorder=5)
    ax.set(xscale="log", yscale="log", xlabel="time to train, min",
           ylabel=f"cost of one run, USD (dot: {basis} price, bar: range)",
           title=f"Cheapest within each deadline (ringed, at the {basis} price)")
    _log_axes(ax)


def _scaling_axes(ax: Any, rows: pd.DataFrame, colours: Mapping[str, str], decide: DecideSummary | None) -> None:
    families = [f for f in colours if f != "unknown"]
    units = [] if decide is None else [u for u in decide.units if u.family in families and u.band]
    for unit in units:
        band = pd.DataFrame([point.model_dump() for point in unit.band]).sort_values("accelerator_count")
        colour = colours[unit.family]
        ax.fill_between(band["accelerator_count"], band["low_min"].astype(float), band["high_min"], color=colour,
                        alpha=0.15, linewidth=0)  # no band below an interval unbounded there (low_min None)
        ax.plot(band["accelerator_count"], band["predicted_min"], color=colour, linewidth=1.0,
                linestyle="-" if unit.trusted else ":")
    data = rows.assign(family=rows["accelerator_family"].fillna("unknown"))
    sns.scatterplot(data=data, x="accelerator_count", y="time_to_train_min", hue="family", palette=colours,
                    hue_order=list(colours), s=16, ax=ax, legend=True)
    ax.legend(loc="upper right", frameon=False, ncols=2, title=None)
    ax.set(xscale="log", yscale="log", xlabel="accelerators", ylabel="time to train, min",
           title="Scaling: next-round forecast"
                 + ("" if decide is None else f" and {decide.target_coverage:.0%} band") + " (dotted: not trusted)")
    _log_axes(ax)


def _log_axes(ax: Any) -> None:
    """Both axes logarithmic, ticked at 1, 2 and 5 of each decade in plain numbers (10, 20, 50, not 2 x 10^1)."""
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axis.set_minor_formatter(NullFormatter())


def _energy_cell(row: Mapping[str, Any]) -> str:
    """"≈14.8 kWh estimated (2.16 USD)": the energy, measured or estimated, and its cost at the electricity price."""
    words = energy_words(EnergyFigure.of(row), usd=usd, about=ABOUT)
    return words.short if words.kind else "no rated power"


def _cost_cell(row: Mapping[str, Any]) -> str:
    """"1,230-4,560 on-demand (2026-11-09, 2026-12-05)": the cost range, its price type and the prices' dates."""
    if pd.isna(row["cost_low_usd"]):
        return str(row["cost"])  # why there is none
    if row["price_type"] is None:
        return f"{usd(row['cost_low_usd'])} (your price)"
    span = usd(row["cost_low_usd"]) if row["cost_low_usd"] == row["cost_high_usd"] else \
        f"{usd(row['cost_low_usd'])}-{usd(row['cost_high_usd'])}"
    return f"{span} {row['price_type']} ({', '.join(row['price_dates'])})"


def table_rows(rows: pd.DataFrame, cheapest: Mapping[float, int | None]) -> pd.DataFrame:
    """The table's rows: the front and the cheapest within each deadline, fastest first, at most MAX_ROWS."""
    marks = {index: [] for index in rows.index}  # type: dict[int, list[str]]
    for deadline, row in cheapest.items():
        if row is not None:
            marks[row].append(f"<={deadline:g}")
    chosen = rows[rows["front"] | rows.index.isin([r for r in cheapest.values() if r is not None])].head(MAX_ROWS)
    records = []
    for index, row in chosen.iterrows():
        republished = row.get("republished_of")
        round_text = str(row["round"]) + (f" (republ. {str(republished).split('/')[0]})"
                                          if isinstance(republished, str) else "")
        system = f"{row['submitter']} / {row['system']}"
        records.append({
            "configuration": f"{int(row['accelerator_count'])} x {row['accelerator_family']}"
                             + ("" if pd.isna(row.get("precision")) else f", {str(row['precision']).upper()}"),
            "submitter / system": system if len(system) <= 40 else system[:37] + "...",
            "round": round_text,
            "time (min)": f"{row['time_to_train_min']:.3g}",
            "acc.-hours": f"{row['accelerator_hours']:.3g}",
            "cost per run, USD (type, prices' dates)": _cost_cell(row),
            "energy (energy cost)": _energy_cell(row),
            "why listed": ", ".join((["front"] if row["front"] else [])
                                    + ([f"cheapest {', '.join(marks[index])} min"] if marks[index] else [])),
        })
    return pd.DataFrame(records)


def _footnotes(inputs: BriefInputs, electricity: ElectricityPrice) -> list[str]:
    rows = inputs.rows
    estimated = rows[rows["energy_kwh"].isna() & rows["energy_estimated_kwh"].notna()]
    errors = estimated[["energy_estimate_error", "energy_estimate_worst_error"]].dropna()
    error = ("" if estimated.empty else
             f" Estimated energy ({ESTIMATE_LABEL}): accelerators x time x rated power (TDP) x the median measured "
             f"system-to-rated power ratio; "
             + ("its error could not be measured (too few submitters measured power)." if errors.empty else
                f"its error on measured systems of submitters the fit did not see is "
                f"{errors.iloc[0, 0]:.0%} median, {errors.iloc[0, 1]:.0%} worst."))
    dated = f", {electricity.date}" if electricity.date else ""
    age = inputs.answer.max_price_age_days
    return [
        f"Cost ({COST_LABEL}) = accelerator-hours x the providers' public price per accelerator-hour, cheapest to "
        f"dearest provider, on-demand only, {age_limit_text(age)} (a family without a current on-demand price has no "
        f"cost here); prices read {price_dates_text(max_age_days=age)}, "
        f"sources in pipeline/analysis/pricing/price_table.csv. Rack-scale offers (NVL72) "
        f"are converted per GPU as each row states.",
        f"Energy: measured where the result published MLPerf power logs, otherwise estimated.{error} Energy cost "
        f"at {electricity.per_kwh:g} USD/kWh ({electricity.what}{dated}).",
        f"Times to train are MLPerf Training {inputs.round} results (republished ones marked; the round published "
        f"them and the system can be rented today). Accelerator-hours are hardware time, not a price. Forecasts "
        f"come from this project's model, not from MLPerf.",
        cheapest_rule(inputs.answer.price_basis, inputs.answer.providers)
        + " The report's entry page and `recommend` decide it so too."
        + "".join(f" Also {line}." for line in unlisted_choices(inputs.rows, inputs.answer)),
    ]


def draw_brief(inputs: BriefInputs, electricity: ElectricityPrice) -> Any:
    """The brief's figure (matplotlib Figure), one A4 landscape page."""
    entry = BY_ID.get(inputs.benchmark)
    title = entry.model if entry is not None else inputs.benchmark
    published = f", {inputs.answer.round_published}" if inputs.answer.round_published else ""
    rows = inputs.rows
    present = set(rows["accelerator_family"].fillna("unknown"))  # in the site's order, the legend's too
    colours = {**{family: colour for family, colour in inputs.colours.items() if family in present},
               **{family: UNKNOWN_COLOUR for family in sorted(present - set(inputs.colours))}}
    cheapest = cheapest_within(rows, inputs.answer)
    with plt.rc_context(STYLE), sns.axes_style("whitegrid", {"grid.color": "#e5e5e5"}):
        figure = plt.figure(figsize=PAGE_INCHES)
        figure.text(0.03, 0.965, f"{title} ({inputs.benchmark}): MLPerf Training {inputs.round}{published}",
                    fontsize=13, weight="bold")
        what = "" if entry is None else f"{entry.task}, {entry.dataset}, to {entry.quality_target}. "
        fronts = int(rows["front"].sum())
        dated = "" if inputs.currency is None else " ".join(
            filter(None, (inputs.currency["dates"], inputs.currency["notice"])))
        retired = "" if entry is None or entry.last_round is None else \
            f"Retired from MLPerf Training after {entry.last_round}: this round is its last. "
        intro = figure.text(0.03, 0.943, textwrap.fill(
            f"{what}{len(rows)} results in the round; {fronts} on the front (no other is both faster and uses fewer "
            f"accelerator-hours). {retired}Colours: accelerator family (legend at right). Derived figures are not "
            f"MLPerf results. {dated}", 200), fontsize=8, va="top")
        renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]  # Agg
        # The charts start below the introduction however many lines it takes (the newer-round notice adds one).
        intro_bottom = float(figure.transFigure.inverted().transform(
            (0.0, intro.get_window_extent(renderer).y0))[1])
        chart_top = min(CHART_TOP, intro_bottom - CHART_TITLE_SPACE)
        table = table_rows(rows, cheapest)
        ax = figure.add_axes((0.03, TABLE_BOTTOM, 0.94, 0.33))
        ax.set_axis_off()
        top = TABLE_BOTTOM
        if not table.empty:
            cells = ax.table(cellText=table.to_numpy().tolist(), colLabels=list(table.columns), loc="lower center",
                             cellLoc="left", colLoc="left",
                             colWidths=[0.09, 0.185, 0.085, 0.05, 0.055, 0.235, 0.16, 0.14])
            cells.auto_set_font_size(False)
            cells.set_fontsize(6.5)
            cells.scale(1.0, 1.25)
            for (line, _), cell in cells.get_celld().items():
                cell.set_edgecolor("#cccccc")
                if line == 0:
                    cell.set_text_props(weight="bold")
                    cell.set_facecolor("#f0f0f0")
            extent = cells.get_window_extent(renderer)
            top = float(figure.transFigure.inverted().transform((0.0, extent.y1))[1])
        # The charts take the height the table leaves (a short table no longer leaves the page's lower third empty).
        bottom = top + CHART_GAP
        height = min(CHART_MAX_HEIGHT, chart_top - bottom)
        axes = [figure.add_axes((0.055 + i * 0.325, bottom, 0.26, height)) for i in range(3)]
        _front_axes(axes[0], rows, colours)
        _cost_axes(axes[1], rows, colours, cheapest, inputs.answer.price_basis)
        _scaling_axes(axes[2], rows, colours, inputs.decide)
        figure.text(0.03, 0.115, "\n".join(textwrap.fill(line, 235) for line in _footnotes(inputs, electricity)),
                    fontsize=6.2, va="top", linespacing=1.5)
    return figure


def write_brief(inputs: BriefInputs, electricity: ElectricityPrice, path: Path) -> None:
    """Draw and write one brief as a PDF at `path` (byte-identical for the same inputs)."""
    figure = draw_brief(inputs, electricity)
    with plt.rc_context(STYLE), atomic_path(path) as temporary:
        figure.savefig(temporary, format="pdf", metadata={"CreationDate": None, "Producer": PRODUCER,
                                                          "Creator": PRODUCER})
    plt.close(figure)
