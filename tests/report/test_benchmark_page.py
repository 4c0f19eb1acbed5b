"""A benchmark's page: its answer (the front, the fastest, the least hardware time and the most
hardware-efficient group), plain words above its long tables, the cost per run (your price file's price or the
public range, labelled derived; an unknown family in a price file refused) and energy where
measured (nothing changes without the columns)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.analysis import buyer
from pipeline.analysis.pricing.energy_estimate import fit as fit_energy
from pipeline.analysis.pricing.prices import load_price_table
from pipeline.core.errors import ParamsError
from pipeline.report import formatting, sections, site
from pipeline.settings import settings_from
from tests.report.fixture_site import (
    HEADLINE,
    JARGON,
    OTHER,
    PARAMS,
    analysed_outputs,
    fixture_configurations,
    fixture_outputs,
    headline_page,
    page_text,
)


def test_the_headline_page_answers_with_the_front_fastest_least_hardware_time_and_groups(
        pages: dict[str, str], tmp_path: Path) -> None:
    outputs = analysed_outputs(HEADLINE, 60, 0, tmp_path)
    answer = sections.answer_of(outputs)
    latest = outputs.ranking[outputs.ranking["round"] == "v3.0"]
    # the most hardware-efficient group is the highest median round efficiency: cluster 0
    medians = outputs.clustered.groupby("cluster")["round_efficiency"].median()
    assert answer.efficient is not None and answer.efficient.cluster == medians.idxmax() == 0
    # the page's answer is the record of today's: the round's results, the one it republished included
    configurations = fixture_configurations(fixture_outputs(tmp_path))
    record = buyer.answer_for(HEADLINE, configurations, settings_from(PARAMS), fit_energy(configurations))
    assert record is not None and record.n_published == len(latest) + 1 and record.n_republished == 1
    text = page_text(headline_page(pages))
    assert f"{record.n_published} results in v3.0" in text
    assert f"Fastest: {record.fastest.submitter} {record.fastest.system}" in text
    assert f"{formatting.number(record.least_hardware.accelerator_hours)} accelerator-hours" in text
    assert f"These {len(record.front)} are not beaten on both time and hardware time" in text
    for option in record.front:
        assert f"{option.submitter} {option.system}" in text
    assert "pick" not in text  # no single configuration is called the best: a deadline or a budget decides
    assert "The most hardware-efficient group is" in text and answer.efficient.name in text


def test_a_benchmark_page_speaks_plainly_until_its_long_tables(pages: dict[str, str]) -> None:
    for benchmark in (HEADLINE, OTHER):
        page_html = pages[site.benchmark_page(benchmark)]
        top = page_text(page_html[:page_html.index('id="results"')])
        assert [word for word in JARGON if word in top] == [], benchmark
    assert "silhouette" in page_text(pages[site.METHODS]).lower() and "Holm" in pages[site.METHODS]


def test_a_price_file_with_an_unknown_family_is_an_error_listing_the_known_ones(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("h100: 3.0\nH10O: 2.0\n", encoding="utf-8")
    with pytest.raises(ParamsError, match=r"unknown accelerator families: H10O; known families: .*H100"):
        load_price_table(prices)
    prices.write_text("h100: 3.0\ntpu-V4: 2.0\n", encoding="utf-8")
    assert load_price_table(prices).per_hour == {"H100": 3.0, "TPU-v4": 2.0}  # the catalogue's spelling
    assert load_price_table(None) is None


def test_costs_are_labelled_derived_and_the_example_prices_illustrative(pages: dict[str, str]) -> None:
    text = page_text(headline_page(pages))
    assert "Cost per run (USD, derived)" in text and "derived, not an MLPerf result" in text
    assert "prices from examples/prices.yaml are illustrative, not market data" in text
    assert "Cost = accelerator-hours × public price per accelerator-hour" in text


def test_energy_shows_where_measured_and_nothing_changes_without_the_columns(
        tmp_path: Path, pages: dict[str, str], energy_pages: dict[str, str]) -> None:
    with_energy = energy_pages
    headline = with_energy[site.benchmark_page(HEADLINE)]
    assert "Energy per run (kWh; measured, or estimated" in headline and f'id="{HEADLINE}_energy"' in headline
    assert "12.5 kWh measured (node wall power)" in page_text(headline)  # each energy figure with its measurement point
    # the energy view: every measured result named (round, submitter, system), the derived figures labelled
    assert 'id="energy"' in headline and "W per accelerator (derived)" in headline
    assert "derived, not an MLPerf result" in headline and "650" in page_text(headline) and "93%" in page_text(headline)
    assert 'id="energy"' not in with_energy[site.benchmark_page(OTHER)]
    assert "Energy per run (kWh" not in with_energy[site.benchmark_page(OTHER)]  # no measurement there
    # without the columns (or with them all empty) the pages are as they were
    plain = headline_page(pages)
    assert "Energy" not in plain and 'id="energy"' not in plain and f'id="{HEADLINE}_energy"' not in plain
    configurations = fixture_configurations(fixture_outputs(tmp_path / "again"))
    empty = configurations.assign(**dict.fromkeys(site.ENERGY_COLUMNS, np.nan))
    assert site.with_energy(analysed_outputs(HEADLINE, 60, 0, tmp_path).ranking, empty, HEADLINE).columns.tolist() == \
        pd.read_csv(tmp_path / "ranking.csv").columns.tolist()
