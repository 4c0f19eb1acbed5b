"""The buyer's answer for one benchmark: today's options, priced, and what meets a deadline or a budget.

Today's options are every result the newest round published, a result republished from an earlier round included
and marked ("republished from vX.Y": it is on offer in that round, though the statistics count it once, see
`pipeline.analysis.scope`), beside trusted forecasts of unpublished counts (`predicted_candidates`, from the decide
stage's saved models; a forecast says so, with its interval and trust).

The buyer's objective replaces any one "best" configuration:
- with a deadline T (minutes), the cheapest option that finishes within T: a forecast only when the upper end of
  its interval does;
- with a budget B (USD per training run), the fastest option whose cost fits B.
Cost is decided at one basis of the public range (`cost_cap_usd`: that price per accelerator-hour x accelerator-hours,
at the upper end of a forecast's interval; params `report.price_basis`, `recommend --price-basis`): by default the
dearest listed price, so a cap holds whichever listed provider one rents from. `cheapest_rule` states the rule in
the words every page and the brief print (`recommend` words its order alike; its --help, static text, says the
same). A configuration without a price is never called cheapest nor fits a budget: it is counted apart. Every cost
is derived, not an MLPerf result (`pipeline.analysis.pricing.costs`).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from pipeline.analysis.forecasting.answers import FittedBenchmark, answer, interval_text
from pipeline.analysis.forecasting.models_artifact import read_models
from pipeline.analysis.pricing.costs import COST_COLUMNS, ENERGY_COLUMNS, cost_text, training_costs
from pipeline.analysis.pricing.electricity import DEFAULT_ELECTRICITY_PRICE, ElectricityPrice
from pipeline.analysis.pricing.energy_estimate import EnergyModel, rated_hours_kwh
from pipeline.analysis.pricing.price_table import MAX_PRICE_AGE_DAYS, chosen_providers
from pipeline.analysis.scope import on_offer, republication, republished_from
from pipeline.analysis.statistics.ranking import nondominated_fronts
from pipeline.core import paths
from pipeline.core.artifacts import Artifact, Record
from pipeline.mlperf.catalogue import published_text, round_version
from pipeline.settings import AnalysisSettings, DecideTrustSettings, Settings

# The energy estimate of a result without a measurement (pipeline.analysis.pricing.energy_estimate), as the
# configurations table holds it; a forecast's is made from the same model (`priced`).
ESTIMATE_COLUMNS = ["energy_estimated_kwh", "energy_estimate_error", "energy_estimate_worst_error"]
# The measured energy of a result (the features stage's), and at DC where the same runs were also measured there.
MEASURED_COLUMNS = [*ENERGY_COLUMNS, "energy_dc_kwh"]
OPTION_COLUMNS = ["kind", "label", "round", "submitter", "system", "accelerator_family", "accelerator_count",
                  "time_to_train_min", "time_low_min", "time_high_min", "accelerator_hours", "scaling_efficiency",
                  "republished_of", "precision", "detail", "forecast", "target_coverage", *MEASURED_COLUMNS,
                  *ESTIMATE_COLUMNS]
PUBLISHED, FORECAST = "published", "forecast"
# The price of a configuration's range that "cheapest" and a budget are decided at: its cheapest, its typical (the
# middle on a log scale, the geometric mean of both ends, as the price table's bands are centred) or its dearest listed
# price. Dearest by default: the answer then holds whichever listed provider one rents from.
PriceBasis = Literal["cheapest", "typical", "dearest"]
PRICE_BASES: tuple[PriceBasis, ...] = ("cheapest", "typical", "dearest")
DEFAULT_PRICE_BASIS: PriceBasis = "dearest"
BASIS_WORDS = {"cheapest": "at the cheapest listed on-demand price of each configuration's range (the best case: it "
                           "holds only at that provider)",
               "typical": "at the middle of each configuration's listed on-demand prices (the geometric mean of the "
                          "cheapest and the dearest)",
               "dearest": "at the dearest listed on-demand price of each configuration's range, so it holds whichever "
                          "listed provider you rent from"}
DECISION_DIGITS = 9  # significant digits of a time or cost compared or sorted on: the same order on every machine


def _stored(values: pd.Series) -> pd.Series:
    return values.astype(float).map(lambda value: value if math.isnan(value) else float(f"{value:.{DECISION_DIGITS}g}"))


# ------------------------------------------------------------------------------------------------- the options

def today_published(configurations: pd.DataFrame, analysis: AnalysisSettings, benchmark: str) -> pd.DataFrame:
    """Every result of `benchmark`'s newest round in the analysis scope, republished ones included (whatever
    `analysis.republished` says: they are on offer in the round), as options (OPTION_COLUMNS)."""
    scope = on_offer(configurations, analysis, benchmark)
    if scope.empty:
        return pd.DataFrame(columns=OPTION_COLUMNS)
    newest = max(scope["round"], key=round_version)
    rows = scope[scope["round"] == newest].reset_index(drop=True)
    return published_options(rows)


def published_options(rows: pd.DataFrame) -> pd.DataFrame:
    """Published results (a ranking or configurations frame) as options (OPTION_COLUMNS): a republished one names
    the original it repeats in its `detail`; energy where measured."""
    rows = rows.assign(**{column: None for column in ["republished_of", "precision", "power_measurement",
                                                      "target_coverage"] if column not in rows},
                       **{column: math.nan for column in ["energy_kwh", "energy_dc_kwh", *ESTIMATE_COLUMNS]
                          if column not in rows})
    return rows.assign(
        kind=PUBLISHED, label=rows["round"] + " " + rows["submitter"] + " " + rows["system"],
        time_low_min=rows["time_to_train_min"], time_high_min=rows["time_to_train_min"], forecast=None,
        republished_of=[None if pd.isna(original) else str(original) for original in rows["republished_of"]],
        precision=[None if pd.isna(precision) else str(precision) for precision in rows["precision"]],
        detail=["published result" + ("" if pd.isna(original) else f"; {republication(str(original))}")
                for original in rows["republished_of"]]).astype(
            {"energy_kwh": float, "energy_dc_kwh": float, **{column: float for column in ESTIMATE_COLUMNS}}
    )[OPTION_COLUMNS]


def predicted_candidates(fitted: FittedBenchmark, rule: DecideTrustSettings,
                         families: Sequence[str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Trusted forecasts (`pipeline.analysis.forecasting.answers.answer` on the decide stage's saved models) at
    the unpublished powers of two inside each family's published count range per form factor, as options
    (OPTION_COLUMNS); and the families not forecast, with the reasons. `families`: only these (all when None)."""
    rows, untrusted = [], []
    # Each family's published counts per form factor (form factors in order of appearance), read once: a frame
    # filtered per family and form factor costs more than the forecasts themselves.
    units: dict[str, dict[str, list[float]]] = {}
    for family, form_factor, count in zip(fitted.published["accelerator_family"].tolist(),
                                           fitted.published["form_factor"].tolist(),
                                           fitted.published["accelerator_count"].tolist()):
        units.setdefault(family, {}).setdefault(form_factor, []).append(count)
    for family in families or fitted.families():
        for form_factor, counts in units.get(family, {}).items():
            low, high = float(min(counts)), float(max(counts))
            reference = answer(fitted, family, form_factor, low, rule)
            if not reference.trusted:
                untrusted.append(f"{family} {form_factor} ({'; '.join(reference.reasons)})")
                continue
            published_counts = set(counts)
            powers = 2.0 ** np.arange(math.ceil(math.log2(low)), math.floor(math.log2(high)) + 1)
            for count in (count for count in powers if count not in published_counts):
                forecast = answer(fitted, family, form_factor, count, rule)
                if not forecast.trusted:
                    continue
                rows.append({
                    "kind": FORECAST, "label": f"{family} {form_factor} x {count:g}", "round": None,
                    "submitter": None, "system": None, "accelerator_family": family, "accelerator_count": count,
                    "time_to_train_min": forecast.predicted_min,
                    "time_low_min": math.nan if forecast.low_min is None else forecast.low_min,
                    "time_high_min": forecast.high_min, "accelerator_hours": count * forecast.predicted_min / 60,
                    "scaling_efficiency": reference.predicted_min * low / (forecast.predicted_min * count),
                    "republished_of": None, "forecast": forecast.model_dump(),
                    "target_coverage": fitted.target_coverage, "energy_kwh": math.nan,
                    "energy_dc_kwh": math.nan, "power_measurement": None,
                    **dict.fromkeys(ESTIMATE_COLUMNS, math.nan),
                    "detail": f"forecast for the next round by the {forecast.method} ({forecast.kind}), trusted, "
                              f"{100 * fitted.target_coverage:.0f}% interval "
                              f"{interval_text(forecast.low_min, forecast.high_min)}: not a published result"})
    return pd.DataFrame(rows, columns=OPTION_COLUMNS), untrusted


def cheapest_rule(basis: str = DEFAULT_PRICE_BASIS, providers: Sequence[str] = ()) -> str:
    """The one rule for "cheapest" and a budget, in the words every page and the brief print (`recommend` prints its
    order in the same words, `recommendation.order_words`); among `providers` alone when given."""
    among = f" among the prices of {', '.join(providers)}" if providers else ""
    return (f'"Cheapest" within a deadline and a budget are decided {BASIS_WORDS[basis]}{among}; a configuration '
            "without an on-demand price there is never called cheapest nor fits a budget.")


def decision_price(costs: pd.DataFrame, basis: str = DEFAULT_PRICE_BASIS) -> pd.Series:
    """Per row of `training_costs`' columns, the price per accelerator-hour "cheapest" and a budget are decided at
    (`PRICE_BASES`: the range's low end, its geometric middle or its high end; the user's one price whatever the
    basis); NaN without a price."""
    if basis not in PRICE_BASES:
        raise ValueError(f"unknown price basis {basis!r}; known: {', '.join(PRICE_BASES)}")
    low = costs["cost_low_usd_per_accelerator_hour"].astype(float)
    high = costs["cost_high_usd_per_accelerator_hour"].astype(float)
    return low if basis == "cheapest" else high if basis == "dearest" else np.sqrt(low * high)


def priced(options: pd.DataFrame, prices: Mapping[str, float] | None = None,
           electricity: ElectricityPrice = DEFAULT_ELECTRICITY_PRICE,
           energy_model: EnergyModel | None = None, basis: str = DEFAULT_PRICE_BASIS,
           providers: tuple[str, ...] | None = None, max_age_days: int = MAX_PRICE_AGE_DAYS) -> pd.DataFrame:
    """`options` with the cost columns (`pipeline.analysis.pricing.costs.training_costs`: the public range, the
    user's `prices` overriding it family by family), `cost_cap_usd` (the cost a deadline's "cheapest" and a budget
    are decided on: the price per accelerator-hour of `basis` (`decision_price`) x the accelerator-hours at the
    upper end of the time, of the interval for a forecast; empty without a price) and `on_front` (not beaten on both
    time to train and accelerator-hours by another of `options`). With `energy_model` (`energy_estimate.fit` on the
    configurations), a forecast's energy is estimated as a result's is, from its central time: estimated, not an
    MLPerf result. `providers` (`price_table.chosen_providers`): the public prices of those providers alone;
    `max_age_days` (params `report.max_price_age_days`): none more than that older than the table's newest."""
    options = with_forecast_energy(options.reset_index(drop=True), energy_model)
    costs = training_costs(options, prices, electricity=electricity, providers=providers, max_age_days=max_age_days)
    cap_hours = options["accelerator_count"].astype(float) * options["time_high_min"].astype(float) / 60
    front = (nondominated_fronts(_stored(options["time_to_train_min"]).to_numpy(),
                                 _stored(options["accelerator_hours"]).to_numpy()) if len(options)
             else np.zeros(0, dtype=int))
    return pd.concat([options.drop(columns=[c for c in COST_COLUMNS if c in options]), costs], axis=1).assign(
        cost_cap_usd=_stored(cap_hours * decision_price(costs, basis)),
        on_front=front == 1)


def with_forecast_energy(options: pd.DataFrame, model: EnergyModel | None) -> pd.DataFrame:
    """`options` with the energy estimate (ESTIMATE_COLUMNS) of each forecast: accelerators x its central time x
    rated power x the model's share of rated power; unchanged without a model."""
    if model is None or options.empty:
        return options
    forecast = (options["kind"] == FORECAST).to_numpy()
    estimate = rated_hours_kwh(options) * model.share_of_rated_power
    return options.assign(
        energy_estimated_kwh=options["energy_estimated_kwh"].astype(float).where(~forecast, estimate),
        energy_estimate_error=options["energy_estimate_error"].astype(float).where(
            ~forecast | estimate.isna(), model.median_error),
        energy_estimate_worst_error=options["energy_estimate_worst_error"].astype(float).where(
            ~forecast | estimate.isna(), model.worst_error))


def ordered(options: pd.DataFrame, deadline: bool, budget: bool) -> pd.DataFrame:
    """`options` in the buyer's order: with a deadline, cheapest first (`cost_cap_usd`, unpriced last), then
    faster; with a budget only, fastest first (`time_high_min`), then cheaper; with neither, the front first,
    fastest first."""
    return options.take(_order(options, deadline, budget)).reset_index(drop=True)


def _order(options: pd.DataFrame, deadline: bool, budget: bool) -> np.ndarray:
    """The positions of `options` in the buyer's order (`ordered`). The keys are sorted apart: sorting the wide
    options frame itself copies every column (its text columns slowly) several times."""
    keys = pd.DataFrame({"_cost": _stored(options["cost_cap_usd"]).to_numpy(),
                         "_time": _stored(options["time_high_min"]).to_numpy(),
                         "_off_front": ~options["on_front"].astype(bool).to_numpy(),
                         "label": options["label"].to_numpy()})
    by = (["_cost", "_time"] if deadline else ["_time", "_cost"] if budget else ["_off_front", "_time", "_cost"])
    return keys.sort_values([*by, "label"], kind="mergesort", na_position="last").index.to_numpy()


def _first(options: pd.DataFrame, deadline: bool, budget: bool) -> Option | None:
    """The first of `options` in the buyer's order (`ordered`) as an `Option`; None without options."""
    return None if options.empty else option_of(options.iloc[_order(options, deadline, budget)[0]])


# ------------------------------------------------------------------------------------------------- the answers

class Option(Record):
    """One configuration as the buyer's answer names it: published (a republished one marked) or forecast."""

    kind: Literal["published", "forecast"]
    """published: a result of the round; forecast: a trusted forecast for the next round, not a result."""
    label: str
    """"round submitter system" for a result; "family form factor x count" for a forecast."""
    round: str | None = None
    """The round that published the result; None for a forecast."""
    submitter: str | None = None
    """Who published it; None for a forecast."""
    system: str | None = None
    """The system's name as its description file is named; None for a forecast."""
    accelerator_family: str | None
    """The accelerator family; None when unknown."""
    accelerator_count: float
    """Accelerators."""
    time_to_train_min: float
    """Minutes (a forecast's central value; lower: faster)."""
    time_low_min: float
    """The lower end of a forecast's interval, minutes (the time itself for a result)."""
    time_high_min: float
    """The upper end of a forecast's interval, minutes (the time itself for a result)."""
    accelerator_hours: float
    """Accelerators x time to train, hours (lower: less hardware time)."""
    republished_of: str | None
    """The earlier result it republishes ("vX.Y/submitter/system"); None for a new result or a forecast."""
    scaling_efficiency: float | None = None
    """Within its series, its time x count against the series' smallest member's (1: linear); None: no series."""
    precision: str | None = None
    """The numeric format the result trained in (configurations' `precision`: bf16, fp8, nvfp4, ...); None: unknown,
    or a forecast."""
    on_front: bool
    """Not beaten on both time to train and accelerator-hours by another option."""
    round_efficiency: float | None = None
    """A published result's hardware efficiency in its round: the round's fewest accelerator-hours over its own (1:
    the least hardware time; 0.5: twice that); None for a forecast."""
    cost_low_usd: float | None
    """Cost of a training run at the cheapest listed price, USD (derived, not an MLPerf result); None: no price."""
    cost_high_usd: float | None
    """The same at the dearest listed price, USD."""
    cost_cap_usd: float | None
    """What caps and "cheapest" are decided on: the price of the answer's basis (`decision_price`) x
    accelerator-hours at the upper end of the time, USD; None: no price."""
    cost: str
    """The cost in words (`pipeline.analysis.pricing.costs.cost_text`: "1,234 to 5,678 USD (RunPod on-demand
    2025-05-29 to Azure on-demand 2026-11-09)"), or why there is none ("no public price")."""
    price_type: str | None = None
    """The price type of both ends of the cost (on-demand unless asked otherwise); None: no public price, or the
    buyer's own."""
    price_dates: list[str] = Field(default_factory=list)
    """The dates (ISO) of the prices at the cost's ends, oldest first; empty without a public price."""
    energy_kwh: float | None
    """Measured energy to train, kWh (MLPerf power results only); None: not measured."""
    energy_dc_kwh: float | None = None
    """The same runs' energy measured at DC, where they were measured at both points, kWh; None otherwise."""
    energy_cost_usd: float | None = None
    """The measured energy's cost at the electricity price (params `report.electricity_usd_per_kwh`), USD."""
    power_measurement: str | None = None
    """Where the energy was measured (AC, DC, "AC and DC"); None: not measured."""
    energy_estimated_kwh: float | None
    """Without a measurement: energy to train estimated from the accelerators' rated power, kWh (estimated, not an
    MLPerf result, `pipeline.analysis.pricing.energy_estimate`); None: measured, or no rated power to estimate from."""
    energy_estimate_error: float | None
    """The estimate's median relative error on submitters the model did not see (0.1 = 10%)."""
    energy_estimate_worst_error: float | None = None
    """Its worst relative error there (0.1 = 10%)."""
    energy_estimated_cost_usd: float | None = None
    """The estimated energy's cost at the electricity price, USD; None without an estimate."""
    detail: str
    """What it is: a published result (and what it republishes), or a forecast with its interval and trust."""
    target_coverage: float | None = None
    """A forecast's: the share of published times its interval is meant to hold (params `decide.target_coverage`);
    None for a result."""

    @property
    def republished(self) -> str:
        """"republished from vX.Y", or ""."""
        return "" if self.republished_of is None else republished_from(self.republished_of)


def _none(value: Any) -> Any:
    """A missing value (None, NaN, pandas' NA) as None; anything else as it is."""
    return None if value is None or (not isinstance(value, str) and bool(pd.isna(value))) else value


def option_of(row: Mapping[str, Any]) -> Option:
    """One row of `priced` options as an `Option`."""
    return Option(kind=row["kind"], label=str(row["label"]), round=_none(row["round"]),
                  submitter=_none(row["submitter"]), system=_none(row["system"]),
                  accelerator_family=_none(row["accelerator_family"]),
                  accelerator_count=float(row["accelerator_count"]),
                  time_to_train_min=float(row["time_to_train_min"]), time_low_min=float(row["time_low_min"]),
                  time_high_min=float(row["time_high_min"]), accelerator_hours=float(row["accelerator_hours"]),
                  republished_of=_none(row["republished_of"]),
                  scaling_efficiency=_none(float(row["scaling_efficiency"])), precision=_none(row["precision"]),
                  on_front=bool(row["on_front"]), round_efficiency=_none(row.get("round_efficiency")),
                  cost_low_usd=_none(float(row["cost_low_usd"])), cost_high_usd=_none(float(row["cost_high_usd"])),
                  cost_cap_usd=_none(float(row["cost_cap_usd"])), cost=cost_text(row, lead=""),
                  price_type=_none(row["cost_low_price_type"]),
                  price_dates=sorted({str(row[f"cost_{end}_date"]) for end in ("low", "high")
                                      if _none(row[f"cost_{end}_date"]) is not None}),
                  energy_kwh=_none(float(row["energy_kwh"])), energy_dc_kwh=_none(float(row["energy_dc_kwh"])),
                  energy_cost_usd=_none(float(row["energy_cost_usd"])),
                  power_measurement=_none(row["power_measurement"]),
                  energy_estimated_kwh=_none(float(row["energy_estimated_kwh"])),
                  energy_estimate_error=_none(float(row["energy_estimate_error"])),
                  energy_estimate_worst_error=_none(float(row["energy_estimate_worst_error"])),
                  energy_estimated_cost_usd=_none(float(row["energy_estimated_cost_usd"])), detail=str(row["detail"]),
                  target_coverage=_none(row["target_coverage"]))


class Choice(Record):
    """The answer to one deadline (the cheapest option that finishes within it) or one budget (the fastest option
    whose cost fits it)."""

    limit: float
    """The deadline, minutes, or the budget, USD per training run."""
    unit: Literal["min", "USD"]
    """min: a deadline; USD: a budget."""
    option: Option | None
    """The answer; None when no priced option meets the limit."""
    matched: int
    """Priced options meeting the limit."""
    unpriced: list[str]
    """Options meeting the deadline without a price (not compared: none is called cheapest)."""


def deadline_choice(options: pd.DataFrame, deadline_min: float) -> Choice:
    """The cheapest of `priced` options that finish within `deadline_min` (a forecast on its interval's upper
    end), decided on `cost_cap_usd`; faster first on a tie."""
    meets, has_price = _stored(options["time_high_min"]) <= deadline_min, options["cost_cap_usd"].notna()
    with_price = options[meets & has_price]
    return Choice(limit=deadline_min, unit="min", option=_first(with_price, deadline=True, budget=False),
                  matched=len(with_price), unpriced=sorted(options.loc[meets & ~has_price, "label"]))


def budget_choice(options: pd.DataFrame, budget_usd: float) -> Choice:
    """The fastest of `priced` options (a forecast on its interval's upper end) whose `cost_cap_usd` fits
    `budget_usd`; cheaper first on a tie."""
    fits = options[options["cost_cap_usd"].notna() & (_stored(options["cost_cap_usd"]) <= budget_usd)]
    return Choice(limit=budget_usd, unit="USD", option=_first(fits, deadline=False, budget=True),
                  matched=len(fits), unpriced=[])


class SizeGroup(Record):
    """One accelerator count at which two or more accelerator families published in the round: each family's
    fastest result there, fastest first, so families compare at equal size ("is GB300 worth it over B200?")."""

    accelerator_count: float
    """Accelerators."""
    options: list[Option]
    """Each family's fastest result at that count (republished ones included), fastest first."""
    time_vs_fastest: list[float]
    """Each one's time to train over the fastest's (1 for the fastest; 1.25: a quarter longer), in `options`'
    order."""


def equal_size_groups(results: pd.DataFrame) -> list[SizeGroup]:
    """The `SizeGroup`s of `priced` published options (`results`), by count, smallest first."""
    known = results[results["accelerator_family"].notna()]
    ordered = known.take(np.lexsort((known["label"].to_numpy(), _stored(known["time_to_train_min"]).to_numpy(),
                                     known["accelerator_count"].to_numpy(dtype=float))))
    groups = []
    for count, rows in ordered.groupby("accelerator_count", sort=True):
        fastest = rows.drop_duplicates("accelerator_family")  # the first of each family is its fastest there
        if len(fastest) < 2:
            continue
        times = fastest["time_to_train_min"].to_numpy(dtype=float)
        groups.append(SizeGroup(accelerator_count=float(count), options=[option_of(row) for _, row in
                                                                          fastest.iterrows()],
                                time_vs_fastest=[float(f"{time / times[0]:.{DECISION_DIGITS}g}") for time in times]))
    return groups


class FamilyEfficiency(Record):
    """One accelerator family's hardware efficiency in the round (`Option.round_efficiency` of its results): how
    close its results come to the round's least hardware time, over every count it published."""

    accelerator_family: str
    """The accelerator family."""
    n: int
    """Its results in the round (republished ones included)."""
    median: float
    """The median of their round efficiency (1: the round's least hardware time)."""
    low: float
    """The lower end of the median's percentile bootstrap interval (at EFFICIENCY_CONFIDENCE_LEVEL) over its
    results (the median itself with one result)."""
    high: float
    """Its upper end."""
    least: float
    """The least efficient of its results."""
    most: float
    """The most efficient of its results."""


# The family efficiency's interval: the median's percentile bootstrap over a family's results, seeded by the values
# so the record is the same on every run and machine.
EFFICIENCY_RESAMPLES, EFFICIENCY_CONFIDENCE_LEVEL = 2000, 0.95


def median_interval(values: np.ndarray) -> tuple[float, float]:
    """The percentile bootstrap interval (at EFFICIENCY_CONFIDENCE_LEVEL) of the median of `values` (1-d, at least
    one value; scipy's `bootstrap`, seeded by the values); a single value gives itself at both ends."""
    if len(values) == 1:
        return float(values[0]), float(values[0])
    from scipy.stats import bootstrap

    seed = np.random.default_rng([len(values), *np.round(np.sort(values) * 1e6).astype(np.int64)])
    found = bootstrap((values,), np.median, n_resamples=EFFICIENCY_RESAMPLES,
                      confidence_level=EFFICIENCY_CONFIDENCE_LEVEL, method="percentile", vectorized=True,
                      random_state=seed).confidence_interval
    return float(f"{found.low:.{DECISION_DIGITS}g}"), float(f"{found.high:.{DECISION_DIGITS}g}")


def family_efficiency(results: pd.DataFrame) -> list[FamilyEfficiency]:
    """Per accelerator family of `results` (priced published options with `round_efficiency`), its
    `FamilyEfficiency`: the most efficient median first (by name on a tie)."""
    known = results[results["accelerator_family"].notna()]
    found = []
    for family, rows in known.groupby("accelerator_family", sort=False):
        values = _stored(rows["round_efficiency"]).to_numpy(dtype=float)
        low, high = median_interval(values)
        found.append(FamilyEfficiency(accelerator_family=str(family), n=len(values), median=float(np.median(values)),
                                      low=low, high=high, least=float(values.min()), most=float(values.max())))
    return sorted(found, key=lambda item: (-item.median, item.accelerator_family))


class BuyerAnswer(Record):
    """One benchmark's answer for a buyer: the newest round's fastest and least-hardware-time results (republished
    included), its front, and per deadline and per budget the option that answers it."""

    benchmark: str
    """The benchmark (pipeline.mlperf.catalogue id)."""
    round: str
    """The newest round of the benchmark in scope."""
    round_published: str = ""
    """When that round was published, in words ("published November 2025"; `catalogue.published_text`)."""
    price_basis: PriceBasis = DEFAULT_PRICE_BASIS
    """The price of each range "cheapest" and a budget were decided at (`PRICE_BASES`, `cheapest_rule`)."""
    providers: list[str] = Field(default_factory=list)
    """The providers whose prices the answer used (params `report.providers`); empty: every provider."""
    max_price_age_days: int = MAX_PRICE_AGE_DAYS
    """The age limit of the public prices it used: none more than this many days older than the price table's newest
    (params `report.max_price_age_days`)."""
    n_published: int
    """Results the round published (republished ones included)."""
    n_republished: int
    """Of those, republished from an earlier round."""
    n_forecasts: int
    """Trusted forecasts among the options."""
    fastest: Option
    """The round's fastest result (lowest time to train; fewer accelerator-hours on a tie)."""
    least_hardware: Option
    """The round's result of fewest accelerator-hours (faster on a tie)."""
    front: list[Option] = Field(default_factory=list)
    """The round's results none of its others beats on both time and accelerator-hours, fastest first."""
    deadlines: list[Choice] = Field(default_factory=list)
    """Per deadline (params `report.deadlines_min`), the cheapest option within it."""
    budgets: list[Choice] = Field(default_factory=list)
    """Per budget (params `report.budgets_usd`), the fastest option within it."""
    untrusted: list[str] = Field(default_factory=list)
    """Families and form factors not forecast, with the reasons."""
    equal_size: list[SizeGroup] = Field(default_factory=list)
    """The round's families compared at the counts two or more of them published (`equal_size_groups`)."""
    options: list[Option] = Field(default_factory=list)
    """Every result the round published, on offer (republished ones included), priced, fastest first: the one
    record of today that `recommend` answers from (`options_frame`), the site's tables and the brief draw."""
    family_efficiency: list[FamilyEfficiency] = Field(default_factory=list)
    """Each accelerator family's hardware efficiency in the round (`family_efficiency`), which the entry page
    compares across today's benchmarks."""


def buyer_answer(benchmark: str, published: pd.DataFrame, forecasts: pd.DataFrame, deadlines: Sequence[float],
                 budgets: Sequence[float], prices: Mapping[str, float] | None = None,
                 electricity: ElectricityPrice = DEFAULT_ELECTRICITY_PRICE,
                 untrusted: Sequence[str] = (), energy_model: EnergyModel | None = None,
                 basis: PriceBasis = DEFAULT_PRICE_BASIS, providers: tuple[str, ...] | None = None,
                 max_age_days: int = MAX_PRICE_AGE_DAYS) -> BuyerAnswer:
    """The `BuyerAnswer` of one benchmark from its newest round's `published` options (`today_published`) and its
    trusted `forecasts` (`predicted_candidates`): the round's own front, fastest and least hardware time from the
    published results alone; the deadlines and budgets over both, decided at the price `basis` (`PRICE_BASES`) of
    `providers` alone when given, of public prices at most `max_age_days` older than the table's newest."""
    if published.empty:
        raise ValueError(f"{benchmark}: no published result to answer from")
    results = priced(published, prices, electricity, energy_model, basis, providers, max_age_days)
    time, hours = _stored(results["time_to_train_min"]), _stored(results["accelerator_hours"])
    results = results.assign(round_efficiency=_stored(hours.min() / hours))
    every = (priced(pd.concat([published, forecasts], ignore_index=True), prices, electricity, energy_model, basis,
                    providers, max_age_days) if len(forecasts) else results)
    fastest = results.assign(_t=time, _h=hours).sort_values(["_t", "_h", "label"], kind="mergesort").iloc[0]
    least = results.assign(_t=time, _h=hours).sort_values(["_h", "_t", "label"], kind="mergesort").iloc[0]
    front = results[results["on_front"]].assign(_t=time).sort_values(["_t", "label"], kind="mergesort")
    return BuyerAnswer(
        benchmark=benchmark, round=str(results["round"].iloc[0]), max_price_age_days=max_age_days,
        round_published=published_text(str(results["round"].iloc[0])), price_basis=basis,
        providers=list(providers or ()), n_published=len(results),
        n_republished=int(results["republished_of"].notna().sum()), n_forecasts=len(forecasts),
        fastest=option_of(fastest), least_hardware=option_of(least),
        front=[option_of(row) for _, row in front.iterrows()],
        deadlines=[deadline_choice(every, float(limit)) for limit in deadlines],
        budgets=[budget_choice(every, float(limit)) for limit in budgets], untrusted=list(untrusted),
        equal_size=equal_size_groups(results), family_efficiency=family_efficiency(results),
        options=[option_of(row) for _, row in results.assign(_t=time, _h=hours).sort_values(
            ["_t", "_h", "label"], kind="mergesort").iterrows()])


def answer_for(benchmark: str, configurations: pd.DataFrame, settings: Settings, energy_model: EnergyModel | None,
               prices: Mapping[str, float] | None = None,
               electricity: ElectricityPrice = DEFAULT_ELECTRICITY_PRICE) -> BuyerAnswer | None:
    """The `BuyerAnswer` of one benchmark from the configurations and the decide stage's saved models (no forecast
    without them); None when the benchmark has no result in scope. `energy_model`: `energy_estimate.fit` on the
    configurations (every benchmark's, fitted once by the caller), what a forecast's energy is estimated from."""
    published = today_published(configurations, settings.analysis, benchmark)
    if published.empty:
        return None
    models_path = paths.models_json(benchmark)
    fitted = read_models(models_path) if models_path.is_file() else None
    forecasts, untrusted = (predicted_candidates(fitted, settings.decide.trust)
                            if isinstance(fitted, FittedBenchmark) else (published.iloc[0:0], []))
    return buyer_answer(benchmark, published, forecasts, settings.report.deadlines_min, settings.report.budgets_usd,
                        prices, electricity, untrusted, energy_model, settings.report.price_basis,
                        chosen_providers(settings.report.providers), settings.report.max_price_age_days)


def options_table(options: Sequence[Option]) -> pd.DataFrame:
    """`options` one row each, every `Option` field a column (numbers without a value as NaN): the frame the pages
    and the brief draw a record's options from."""
    numbers = [name for name, field in Option.model_fields.items() if field.annotation in (float, float | None)]
    return pd.DataFrame([option.model_dump() for option in options], columns=list(Option.model_fields)).astype(
        dict.fromkeys(numbers, float))


def options_frame(options: Sequence[Option]) -> pd.DataFrame:
    """Options of a `BuyerAnswer` (`BuyerAnswer.options`) back as an options frame (OPTION_COLUMNS), as
    `today_published` gives it, for `priced` to price with a buyer's own prices, basis and providers."""
    return options_table(options).assign(forecast=None)[OPTION_COLUMNS]


def recorded_options(benchmark: str, path: Path | None = None) -> pd.DataFrame | None:
    """The options of `benchmark`'s record of today (the buyer stage's `BuyerReport` at `path`, by default
    data/processed/buyer/<benchmark>.json) as an options frame (`options_frame`); None without a record or an
    answer."""
    path = paths.buyer_json(benchmark) if path is None else path
    if not path.is_file():
        return None
    answer = BuyerReport.read(path).answer
    return None if answer is None else options_frame(answer.options)


class BuyerReport(Artifact):
    """One of today's benchmarks' answer for a buyer (data/processed/buyer/<benchmark>.json, the buyer stage), which
    the report's entry page shows. Skipped when the benchmark has no result in scope."""

    KIND = "buyer"

    answer: BuyerAnswer | None = None
    """The answer (`answer_for`)."""
