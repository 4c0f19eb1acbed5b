"""The one wording of energy to train: a measurement reads as one, an estimate is marked as one."""
from __future__ import annotations

import math

from pipeline.analysis.pricing.costs import usd
from pipeline.analysis.pricing.energy_words import EnergyFigure, energy_words


def test_a_measurement_names_its_point_and_both_points_read_as_one_result() -> None:
    words = energy_words(EnergyFigure.of({"energy_kwh": 0.512, "power_measurement": "AC", "energy_cost_usd": 0.1}),
                         usd=usd)
    assert (words.kind, words.short, words.long) == (
        "measured", "0.512 kWh measured (AC) (0.1 USD)", "0.512 kWh measured (AC); energy cost 0.1 USD")
    both = energy_words(EnergyFigure.of({"energy_kwh": 0.512, "energy_dc_kwh": 0.498, "power_measurement": "AC"}))
    assert both.long == "0.512 kWh measured (AC) · 0.498 kWh (DC)"


def test_an_estimate_says_what_it_is_not_and_its_error() -> None:
    row = {"energy_kwh": math.nan, "energy_estimated_kwh": 1480.0, "energy_estimate_error": 0.076,
           "energy_estimated_cost_usd": 216.0}
    words = energy_words(EnergyFigure.of(row), usd=usd)
    assert words.kind == "estimated" and words.short == "≈1,480 kWh estimated (216 USD)"
    assert words.long == ("≈1,480 kWh estimated from rated power, median error 8%; not an MLPerf result; energy "
                          "cost 216 USD")


def test_neither_reads_as_not_measured() -> None:
    words = energy_words(EnergyFigure.of({"energy_kwh": None}))
    assert words.kind == "" and words.short == "not measured"


def test_a_table_cell_keeps_the_estimates_error_and_leaves_the_rest_to_its_header() -> None:
    row = {"energy_estimated_kwh": 5.68, "energy_estimate_error": 0.076}
    assert energy_words(EnergyFigure.of(row)).cell == "≈5.68 kWh estimated (median error 8%)"
    assert energy_words(EnergyFigure.of({})).cell == ""
