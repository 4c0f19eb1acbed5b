"""The entry page's buyer's answer per current benchmark (`pipeline.analysis.buyer.BuyerAnswer`) as the templates
show it: the round's fastest and least-hardware results (republished ones included, marked), its front, and the
cheapest option within each deadline and the fastest within each budget (params `report.deadlines_min`,
`report.budgets_usd`), each with its cost per run and energy."""
from __future__ import annotations

from typing import Any

from pipeline.analysis.buyer import FORECAST, BuyerAnswer, Choice, Option
from pipeline.analysis.pricing.costs import span
from pipeline.analysis.pricing.energy_words import EnergyFigure, energy_words
from pipeline.report.formatting import number


def option_row(option: Option) -> dict[str, Any]:
    """One option as the page lists it, every number through the one formatter."""
    if option.kind == FORECAST:
        coverage = "" if option.target_coverage is None else f"{number(option.target_coverage, 'share')} "
        mark = (f"forecast, not a result: {number(option.time_low_min)} to {number(option.time_high_min)} min "
                f"({coverage}interval), trusted")
        name = option.label
    else:
        mark = option.republished
        name = option.label.split(" ", 1)[1]
    energy = energy_words(_figure(option), kwh=number)
    low, high = option.cost_low_usd, option.cost_high_usd
    priced = low is not None and high is not None
    short = f"{span(low, high)} USD" if low is not None and high is not None else option.cost
    return {"name": name, "hardware": f"{number(option.accelerator_count)} × {option.accelerator_family}",
            "precision": option.precision or "",
            "family": option.accelerator_family, "time": number(option.time_to_train_min),
            "hours": number(option.accelerator_hours), "cost": option.cost, "cost_short": short, "priced": priced,
            "energy": energy.long, "energy_short": energy.short, "energy_cell": energy.cell, "mark": mark,
            "forecast": option.kind == FORECAST, "on_front": option.on_front}


def option_table_row(option: Option) -> dict[str, Any]:
    """One published option as a round's configuration table lists it (macros' `config_table`): `option_row` with
    the precision it trained in beside its hardware (as the ranking table's "H100 (fp8)"), its hardware efficiency
    in the round and its energy as a table cell."""
    row = option_row(option)
    return {**row, "name": row["name"] + (f" ({row['mark']})" if row["mark"] else ""),
            "hardware": row["hardware"] + (f" ({option.precision})" if option.precision else ""),
            "efficiency": "" if option.round_efficiency is None else number(option.round_efficiency, "ratio"),
            "cost": option.cost if row["priced"] else "", "energy": row["energy_cell"]}


def _figure(option: Option) -> EnergyFigure:
    """The option's energy figure: measured (and at DC where also measured there), or estimated, with its cost."""
    return EnergyFigure(measured_kwh=option.energy_kwh, measured_dc_kwh=option.energy_dc_kwh,
                        point=option.power_measurement,
                        estimated_kwh=None if option.energy_kwh is not None else option.energy_estimated_kwh,
                        estimate_error=option.energy_estimate_error,
                        cost_usd=option.energy_cost_usd if option.energy_kwh is not None
                        else option.energy_estimated_cost_usd)


def choice_row(choice: Choice) -> dict[str, Any]:
    """One deadline or budget and its answer (None without a priced option meeting it)."""
    question = (f"within {number(choice.limit)} min" if choice.unit == "min"
                else f"at most {number(choice.limit)} USD per run")
    unpriced = (f"and {len(choice.unpriced)} without an on-demand price, not compared" if choice.unpriced else "")
    return {"question": question, "deadline": choice.unit == "min",
            "option": None if choice.option is None else option_row(choice.option),
            "matched": choice.matched, "unpriced": unpriced}


def buyer_view(answer: BuyerAnswer) -> dict[str, Any]:
    """What the entry page shows of one benchmark's `BuyerAnswer`."""
    fastest, least = option_row(answer.fastest), option_row(answer.least_hardware)
    return {"round": answer.round, "n": answer.n_published, "n_republished": answer.n_republished,
            "n_forecasts": answer.n_forecasts, "fastest": fastest, "least": least,
            "same": answer.fastest.label == answer.least_hardware.label,
            "front": [option_row(option) for option in answer.front],
            "deadlines": [choice_row(choice) for choice in answer.deadlines],
            "budgets": [choice_row(choice) for choice in answer.budgets],
            "equal_size": [{"count": number(group.accelerator_count),
                            "rows": [{**option_row(option), "vs_fastest": number(ratio, "ratio")}
                                     for option, ratio in zip(group.options, group.time_vs_fastest)]}
                           for group in answer.equal_size],
            "equal_size_energy": any(option.energy_kwh is not None or option.energy_estimated_kwh is not None
                                     for group in answer.equal_size for option in group.options)}
