"""The report as a small static site: what each page shows, from the stages' outputs, and the rendered pages.

    index.html              today: the newest round's current benchmarks (trade-offs, fastest, most
                            hardware-efficient, cost and energy where known), the accelerator families compared
                            across them, and the retired benchmarks under History
    benchmarks/<id>.html    one benchmark: its answer, interactive charts, and the long tables collapsed
    methods.html            findings with raw and adjusted p, diagnostics, backtest, definitions, the methods' names
    data.html               coverage, quarantine, republished results, provenance
    assets/                 site.css, site.js and vega.js: written by the `assets` stage (pipeline.report.assets)

`site_context` gathers what the pages need (pure: frames and dicts in, dicts out) and `render_site` renders the
pages as {relative path: text}. Every page loads only the assets, by relative path, so the site works from file:// and
from any static host.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import jinja2
import markupsafe
import pandas as pd

from pipeline.analysis.buyer import BuyerAnswer, Option, cheapest_rule, options_table
from pipeline.analysis.pricing.costs import measured_energy, with_measured_energy
from pipeline.analysis.pricing.energy_estimate import ESTIMATE_COLUMNS
from pipeline.analysis.pricing.energy_words import EnergyFigure, energy_words
from pipeline.analysis.pricing.price_table import age_limit_text, chosen_providers, price_dates_text
from pipeline.analysis.pricing.prices import Prices
from pipeline.analysis.scope import republished_from, retired_by, today_of
from pipeline.mlperf.catalogue import BY_ID
from pipeline.report import charts
from pipeline.report.buyer_section import buyer_view, option_table_row
from pipeline.report.currency import currency
from pipeline.report.formatting import hardware_name, missing, number, round_order
from pipeline.report.inputs import BenchmarkOutputs, SummaryCheck
from pipeline.report.provenance import Provenance
from pipeline.report.sections import benchmark_title, report_context
from pipeline.settings import Settings

# The configuration columns of measured power and energy (the features stage's, where a result published a power
# measurement); the pages show them when present and not all empty.
ENERGY_COLUMNS = ("energy_kwh", "energy_dc_kwh", "power_per_accelerator_w", "power_share_of_tdp",
                  "power_measurement")
# The one label of every figure derived from an MLPerf result (cost, power per accelerator, share of TDP).
DERIVED = "derived, not an MLPerf result"
KEYS = ["round", "submitter", "system", "division"]
INDEX, METHODS, DATA = "index.html", "methods.html", "data.html"
COST_NOTE = DERIVED


def benchmark_page(benchmark: str) -> str:
    """The path of a benchmark's page relative to reports/: "benchmarks/<benchmark>.html"."""
    return f"benchmarks/{benchmark}.html"


# -------------------------------------------------------------------------------------------- configurations

def with_energy(ranking: pd.DataFrame, configurations: pd.DataFrame | None, benchmark: str) -> pd.DataFrame:
    """The ranking with the configurations' energy columns (ENERGY_COLUMNS) that exist and hold a value, and the
    estimate of the results without a measurement (ESTIMATE_COLUMNS, where the table has them)."""
    if configurations is None:
        return ranking
    present = [c for c in ENERGY_COLUMNS if c in configurations and configurations[c].notna().any()]
    if present:
        ranking = with_measured_energy(ranking, measured_energy(configurations, benchmark, present, KEYS), KEYS)
    if not set(ESTIMATE_COLUMNS) <= set(configurations) or configurations["energy_estimated_kwh"].isna().all():
        return ranking
    estimates = configurations.loc[configurations["benchmark"] == benchmark, [*KEYS, *ESTIMATE_COLUMNS]]
    merged = ranking.drop(columns=[c for c in ESTIMATE_COLUMNS if c in ranking]).merge(
        estimates, on=KEYS, how="left", validate="many_to_one")
    merged.index = ranking.index
    return merged


def has_energy(frame: pd.DataFrame) -> bool:
    """True when `frame` has an energy_kwh column with at least one measured value."""
    return "energy_kwh" in frame and bool(frame["energy_kwh"].notna().any())


def has_any_energy(frame: pd.DataFrame) -> bool:
    """Whether any row has an energy, measured or estimated."""
    return has_energy(frame) or ("energy_estimated_kwh" in frame and bool(frame["energy_estimated_kwh"].notna().any()))


def configuration_row(row: pd.Series | dict[str, Any]) -> dict[str, Any]:
    """One configuration as the pages list it, every number through the one formatter."""
    share = row.get("power_share_of_tdp")
    original = row.get("republished_of")
    mark = "" if missing(original) else f" ({republished_from(str(original))})"
    return {"name": f"{row['submitter']} {row['system']}{mark}", "submitter": row["submitter"], "system": row["system"],
            "round": row["round"], "hardware": hardware_name(row), "family": row["accelerator_family"],
            "time": number(row["time_to_train_min"]), "hours": number(row["accelerator_hours"]),
            "efficiency": number(row["round_efficiency"], "ratio"), "cost": row.get("cost_text") or "",
            "energy": energy_text(row),
            "power": "" if missing(row.get("power_per_accelerator_w")) else number(row["power_per_accelerator_w"]),
            "tdp": "" if missing(share) else number(share, "share")}


def energy_text(row: pd.Series | dict[str, Any]) -> str:
    """A result's energy to train as its table cell (`energy_words`; the column's header says what an estimate is
    not); blank without one."""
    return energy_words(EnergyFigure.of(row), kwh=number).cell


def energy_view(outputs: BenchmarkOutputs, ranking: pd.DataFrame, colours: Mapping[str, str]) -> dict[str, Any] | None:
    """Every ranked result of a benchmark, in any round, that published a power measurement: its energy to train
    (kWh, an MLPerf result) at its measurement point, and the derived average power per accelerator (W, host and
    switch share included) and share of the accelerator's TDP, newest round first; with its chart. None without
    one. Results of the same runs measured at AC and DC are one row (the features stage keeps one). `ranking`: the
    benchmark's ranking with its energy columns (`with_energy`)."""
    if not has_energy(ranking):
        return None
    rows = ranking[ranking["energy_kwh"].notna()]
    rows = rows.assign(order=rows["round"].map(round_order)).sort_values(
        ["order", "time_to_train_min", "submitter", "system"], ascending=[False, True, True, True]).drop(
        columns="order").reset_index(drop=True)
    records = [{**configuration_row(row), "name": f"{row['round']} {row['submitter']} {row['system']}",
                "energy": energy_text(row), "point": str(row.get("power_measurement") or "")}
               for _, row in rows.iterrows()]
    chart = charts.energy_chart(f"{outputs.benchmark}_energy", _chart_rows(rows), dict(colours),
                                benchmark_title(outputs.benchmark)["model"])
    return {"rows": records, "n": len(records), "rounds": sorted(set(rows["round"]), key=round_order),
            "chart": None if chart is None else embed(chart)}


def round_view(benchmark: str, answer: BuyerAnswer, colours: Mapping[str, str]) -> dict[str, Any]:
    """A benchmark's newest round as its record of today holds it (the buyer stage's `BuyerAnswer`): its
    non-dominated results (fastest first), the fastest and the one of least hardware time, with cost and energy,
    every result the round published (republished ones included) for the cost chart."""
    rows = _option_rows(answer.options)
    return {**benchmark_title(benchmark), "page": benchmark_page(benchmark), "round": answer.round,
            "n": answer.n_published, "front": [option_table_row(option) for option in answer.front],
            "fastest": option_table_row(answer.fastest), "efficient": option_table_row(answer.least_hardware),
            "same": answer.fastest.label == answer.least_hardware.label, "rows": rows,
            "family_efficiency": answer.family_efficiency,
            "priced": bool(rows["cost_low"].notna().any()), "energy": has_any_energy(rows),
            "measured_energy": has_energy(rows), "buyer": None,  # today's benchmarks: buyer_view of the answer
            "colours": {f: colours.get(f, "#949494") for f in rows["accelerator_family"].dropna().unique()}}


def _option_rows(options: Sequence[Option]) -> pd.DataFrame:
    """The record's published options (`options_table`) as the cost chart and the energy test read them: the chart's
    columns (charts.TOOLTIP's, before their renaming) beside the cost range, its words and the energies."""
    return options_table(options).rename(columns={"cost_low_usd": "cost_low", "cost_high_usd": "cost_high",
                                                  "cost": "cost_text"})[
        ["submitter", "system", "round", "accelerator_family", "accelerator_count", "time_to_train_min",
         "accelerator_hours", "cost_low", "cost_high", "cost_text", "energy_kwh", "energy_estimated_kwh"]]


def family_comparison(views: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Per benchmark view and accelerator family, its record's `FamilyEfficiency`: results, median round efficiency
    with its bootstrap interval, and the lowest and highest efficiency (the entry page's chart and table)."""
    rows = [{"benchmark": view["model"], "family": found.accelerator_family, "n": found.n, "median": found.median,
             "ci_low": found.low, "ci_high": found.high, "low": found.least, "high": found.most}
            for view in views for found in view["family_efficiency"]]
    return pd.DataFrame(rows, columns=["benchmark", "family", "n", "median", "ci_low", "ci_high", "low", "high"])


# ---------------------------------------------------------------------------------------------------- context

def current(outputs: BenchmarkOutputs, newest: str | None) -> bool:
    """Still in MLPerf Training in `newest`, the newest round analysed: the catalogue names no last round before
    it (a benchmark the package's rules drop from a round on is retired from that round on)."""
    return outputs.analysed and (newest is None or not retired_by(outputs.benchmark, newest))


def build_site(outputs: Sequence[BenchmarkOutputs], results: pd.DataFrame, quarantine: pd.DataFrame,
               settings: Settings, provenance_: Provenance, tally: pd.DataFrame | None = None,
               prices: Prices | None = None, configurations: pd.DataFrame | None = None,
               summary_check: Sequence[SummaryCheck] = (),
               answers: Mapping[str, BuyerAnswer | None] | None = None) -> dict[str, str]:
    """Every page of the site, by path relative to reports/ (`render_site` of `site_context`): the report stage's
    one call, so the pages' context, a Jinja context with no fixed shape, never leaves the package."""
    return render_site(site_context(outputs, results, quarantine, settings, provenance_, tally, prices,
                                    configurations, summary_check, answers))


def site_context(outputs: Sequence[BenchmarkOutputs], results: pd.DataFrame, quarantine: pd.DataFrame,
                 settings: Settings, provenance_: Provenance, tally: pd.DataFrame | None = None,
                 prices: Prices | None = None, configurations: pd.DataFrame | None = None,
                 summary_check: Sequence[SummaryCheck] = (),
                 answers: Mapping[str, BuyerAnswer | None] | None = None) -> dict[str, Any]:
    """Every page's context: the shared part (`sections.report_context`), today's views and charts, one context
    per benchmark page, the rounds' agreement with their shipped summaries (`summary_check`), and on the entry
    each of today's benchmarks with the buyer stage's answer (`answers`, by benchmark; none shown without)."""
    answers = answers or {}
    shared = report_context(outputs, results, quarantine, settings, provenance_, tally, prices, configurations)
    scope = configurations if configurations is not None else pd.concat(
        [item.clustered for item in outputs if item.analysed], ignore_index=True)
    colours = charts.family_colours(charts.family_order(scope))
    ranked = {item.benchmark: with_energy(item.ranking, configurations, item.benchmark)
              for item in outputs if item.analysed}
    views = {item.benchmark: round_view(item.benchmark, answer, colours) for item in outputs
             if item.analysed and (answer := answers.get(item.benchmark)) is not None}
    max_age_days = settings.report.max_price_age_days
    found = today_of({benchmark: view["round"] for benchmark, view in views.items()})
    newest, today = found.round, [views[benchmark] for benchmark in found.benchmarks]
    comparison = family_comparison(today)
    sections = {section["id"]: section for section in shared["sections"]}
    energy = {item.benchmark: energy_view(item, ranked[item.benchmark], colours) for item in outputs if item.analysed}
    for view in today:  # the entry says where measured energy exists, even when the newest round has none
        view["energy_view"] = energy.get(view["id"])
        answer = answers.get(view["id"])
        view["buyer"] = None if answer is None else buyer_view(answer)
    pages = [benchmark_context(item, sections[item.benchmark], views.get(item.benchmark), colours,
                               energy.get(item.benchmark), newest) for item in outputs]
    backtest = {item.benchmark: charts.backtest_chart(f"{item.benchmark}_backtest", item.decide_summary,
                                                      sections[item.benchmark]["model"]) for item in outputs}
    return {**shared, "newest": newest, "currency": currency(newest, provenance_, max_age_days=max_age_days),
            "today": today, "colours": colours,
            "backtest_charts": {name: embed(chart) for name, chart in backtest.items() if chart is not None},
            "comparison": None if comparison.empty else embed(
                charts.family_comparison_chart("family_comparison", comparison, colours, str(newest))),
            "comparison_rows": [{**row, **{name: number(row[name], "ratio")
                                           for name in ("median", "ci_low", "ci_high", "low", "high")}}
                                for row in comparison.to_dict("records")],
            "history": [page for page in pages if not page["current"]],
            "current_pages": [page for page in pages if page["current"]], "pages": pages,
            "cost_note": COST_NOTE, "derived": DERIVED, "prices_read": price_dates_text(max_age_days=max_age_days),
            "price_age": age_limit_text(max_age_days),
            "deadlines": settings.report.deadlines_min, "budgets": settings.report.budgets_usd,
            "trust_coverage": " to ".join(number(end, "share") for end in settings.decide.trust.coverage),
            "cheapest_rule": cheapest_rule(settings.report.price_basis,
                                           chosen_providers(settings.report.providers) or ()),
            "price_basis": settings.report.price_basis,
            "summary_check": list(summary_check)}


def benchmark_context(outputs: BenchmarkOutputs, section: dict[str, Any], view: dict[str, Any] | None,
                      colours: Mapping[str, str], energy: dict[str, Any] | None = None,
                      newest: str | None = None) -> dict[str, Any]:
    """One benchmark page: its section (sections.benchmark_section), its newest round's view, its charts and the
    break-even chart of its forecast section; `newest` is the newest round analysed (what retired means)."""
    page = {**section, "page": benchmark_page(outputs.benchmark), "current": current(outputs, newest), "view": view,
            "charts": [], "break_even_chart": None, "energy": None,
            "last_round": getattr(BY_ID.get(outputs.benchmark), "last_round", None),
            "brief": f"briefs/{outputs.benchmark}.pdf" if current(outputs, newest) else None}
    if not outputs.analysed or view is None:
        return page
    key, model = outputs.benchmark, section["model"]
    drawn = [charts.trade_off_chart(f"{key}_tradeoff", outputs.ranking, dict(colours), model),
             charts.scaling_chart(f"{key}_scaling", outputs.clustered, outputs.decide_summary, dict(colours), model),
             charts.progress_chart(f"{key}_progress", outputs.clustered, dict(colours), model),
             charts.cost_chart(f"{key}_cost", _chart_rows(view["rows"]), dict(colours), view["round"])]
    families = list(dict.fromkeys(outputs.clustered["accelerator_family"].dropna().astype(str)))
    break_even = charts.break_even_chart(f"{key}_break_even", outputs.decide_summary, families, dict(colours), model)
    return {**page, "charts": [embed(chart) for chart in drawn if chart is not None],
            "break_even_chart": None if break_even is None else embed(break_even),
            "energy": energy}


def _chart_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """A round view's rows with the chart's column names (charts.TOOLTIP) beside the cost and energy ones."""
    names = {"accelerator_family": "family", "accelerator_count": "count", "time_to_train_min": "time",
             "accelerator_hours": "hours"}
    energy = [c for c in ENERGY_COLUMNS if c in rows]
    # The columns kept are chosen before renaming: the rows are wide, and renaming copies every column.
    kept = ["submitter", "system", "round", *names, *[c for c in ("cost_low", "cost_high", "cost_text") if c in rows],
            *energy]
    named = rows[kept].rename(columns=names)
    if energy:
        named = named.assign(energy_text=[energy_text(row) for row in rows[energy].to_dict("records")])
    return named.astype({"submitter": str, "system": str, "round": str, "family": str})


def embed(chart: charts.Chart) -> dict[str, Any]:
    """A chart as the templates place it: its text and its spec as JSON safe inside a <script> element."""
    text = json.dumps(chart.spec, sort_keys=True, separators=(",", ":"), allow_nan=False)
    safe = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    return {"key": chart.key, "title": chart.title, "reading": chart.reading, "alt": chart.alt,
            "spec": markupsafe.Markup(safe)}


# ----------------------------------------------------------------------------------------------------- render

def environment() -> jinja2.Environment:
    """The Jinja environment of the site's templates: HTML autoescaped, undefined names an error, and the `readable`
    and `ratio` number filters."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("pipeline.report", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["readable"] = number
    env.filters["ratio"] = lambda value: number(value, "ratio")
    return env


def render_site(context: dict[str, Any]) -> dict[str, str]:
    """Every page of the site, by path relative to the site's folder (the shared assets: pipeline.report.assets)."""
    env = environment()
    site = {INDEX: env.get_template("index.html.j2").render(**context, root="", current_page=INDEX),
            METHODS: env.get_template("methods.html.j2").render(**context, root="", current_page=METHODS),
            DATA: env.get_template("data.html.j2").render(**context, root="", current_page=DATA)}
    for page in context["pages"]:
        site[page["page"]] = env.get_template("benchmark.html.j2").render(**context, s=page, root="../",
                                                                           current_page=page["page"])
    return site

