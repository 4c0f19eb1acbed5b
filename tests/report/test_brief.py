"""The printable brief per current benchmark: one page each, naming the benchmark and the round, byte-identical across
runs, drawn from the record of today (the buyer stage's answer) of a small hand-made table so the fast lane stays
fast; and the real briefs of reports/briefs/ opened when the brief stage has run."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from pypdf import PdfReader

from pipeline.analysis.buyer import BuyerAnswer, buyer_answer, published_options
from pipeline.analysis.pricing.electricity import DEFAULT_ELECTRICITY_PRICE
from pipeline.analysis.scope import today
from pipeline.core import paths
from pipeline.report import brief
from pipeline.settings import load_settings
from tests.conftest import ROOT


def _configurations() -> pd.DataFrame:
    """Three H100 results of v5.1 (one republished from v5.0, one a DC twin) and one of v5.0."""
    rows = [("v5.1", "A", "a8", 8, 20.0, None, None, 3.0), ("v5.1", "B", "b64", 64, 4.0, "v5.0/B/b64", None, None),
            ("v5.1", "A", "a8-dc", 8, 20.0, None, "v5.1/A/a8", 2.9), ("v5.1", "C", "c16", 16, 30.0, None, None, None),
            ("v5.0", "B", "b64", 64, 4.0, None, None, None)]
    frame = pd.DataFrame(rows, columns=["round", "submitter", "system", "accelerator_count", "time_to_train_min",
                                        "republished_of", "same_runs_as", "energy_kwh"])
    frame = frame.assign(benchmark="llama31_8b", accelerator_family="H100",
                         accelerator_hours=frame["accelerator_count"] * frame["time_to_train_min"] / 60,
                         power_measurement=["AC", None, "DC", None, None])
    from pipeline.analysis.pricing.energy_estimate import with_energy_estimate
    return with_energy_estimate(frame)


def test_the_rows_are_the_records_results_and_the_front_is_marked() -> None:
    answer = _answer(_configurations(), (10, 25))
    rows = brief.brief_rows(answer)
    assert rows["system"].tolist() == ["b64", "a8", "c16"]  # the republished one in, the DC twin out
    assert rows["front"].tolist() == [True, True, False]  # c16 is slower and uses more accelerator-hours than a8
    cheapest = brief.cheapest_within(rows, answer)
    assert cheapest == {10: 0, 25: 1}
    assert brief.unlisted_choices(rows, answer) == []
    table = brief.table_rows(rows, cheapest)
    assert table["round"].tolist() == ["v5.1 (republ. v5.0)", "v5.1"]
    assert "on-demand" in table.iloc[0, 5] and "kWh measured (AC)" in table.iloc[1, 6]
    assert "kWh estimated" in table.iloc[0, 6] and table.iloc[0, 6].startswith("~")
    for cell in table.to_numpy().ravel():  # the PDF's standard Helvetica prints anything else as "?"
        str(cell).encode("latin-1")


def _answer(configurations: pd.DataFrame, deadlines: tuple[float, ...]) -> BuyerAnswer:
    """The buyer stage's answer on the fixture's v5.1 results on offer (the DC twin left out, as `on_offer` does;
    no forecast)."""
    rows = configurations[(configurations["round"] == "v5.1") & configurations["same_runs_as"].isna()]
    rows = rows.reset_index(drop=True)
    published = published_options(rows.assign(scaling_efficiency=float("nan")))
    return buyer_answer("llama31_8b", published, published.iloc[0:0], deadlines, ())


def test_the_brief_marks_the_buyer_stages_answer_and_names_one_not_among_its_rows() -> None:
    answer = _answer(_configurations(), (10, 25))
    rows = brief.brief_rows(answer)
    # the answer to 25 min is whatever the buyer stage says, even where it is not the brief's own cheapest
    other = answer.deadlines[1].model_copy(update={"option": answer.deadlines[0].option})
    assert brief.cheapest_within(rows, answer.model_copy(update={"deadlines": [answer.deadlines[0], other]})) \
        == {10: 0, 25: 0}
    forecast = answer.deadlines[1].option.model_copy(update={"kind": "forecast", "label": "H100 SXM x 32",
                                                             "detail": "forecast for the next round"})
    with_forecast = answer.model_copy(update={"deadlines": [answer.deadlines[0], answer.deadlines[1].model_copy(
        update={"option": forecast})]})
    assert brief.cheapest_within(rows, with_forecast) == {10: 0, 25: None}
    (line,) = brief.unlisted_choices(rows, with_forecast)
    assert line.startswith("cheapest within 25 min: H100 SXM x 32 (forecast for the next round, ")


def test_a_brief_is_one_page_naming_benchmark_and_round_and_is_byte_identical(tmp_path: Path) -> None:
    inputs = brief.BriefInputs(_answer(_configurations(), (10, 30)), None, {"H100": "#0072b2"})
    first, second = tmp_path / "a.pdf", tmp_path / "b.pdf"
    brief.write_brief(inputs, DEFAULT_ELECTRICITY_PRICE, first)
    brief.write_brief(inputs, DEFAULT_ELECTRICITY_PRICE, second)
    assert first.read_bytes() == second.read_bytes()
    _check(first, "llama31_8b", "v5.1")


def _check(path: Path, benchmark: str, round_: str) -> None:
    assert path.read_bytes().startswith(b"%PDF-")
    reader = PdfReader(path)
    assert len(reader.pages) == 1
    text = reader.pages[0].extract_text()
    assert benchmark in text and f"MLPerf Training {round_}" in text
    assert "prices read" in text and "not an MLPerf result" in text


def test_reports_hold_one_brief_per_current_benchmark() -> None:
    configurations_path = ROOT / paths.CONFIGURATIONS
    folder = ROOT / paths.BRIEFS
    if not configurations_path.exists() or not folder.exists():
        pytest.skip("the brief stage has not run in this checkout")
    found = today(load_settings(ROOT / "params.yaml").analysis, pd.read_parquet(configurations_path))
    assert found.round is not None
    assert sorted(path.stem for path in folder.glob("*.pdf")) == sorted(found.benchmarks)
    for benchmark in found.benchmarks:
        _check(folder / f"{benchmark}.pdf", benchmark, found.round)


def test_the_charts_start_below_the_introduction_however_long_it_is() -> None:
    """A newer-round notice adds a line to the introduction: the charts' titles stay clear of it."""
    notice = {"dates": "Analyses MLPerf Training v5.1, published November 2025; " * 3,
              "notice": "MLPerf Training v6.0 was published June 2026 and is not in this build's data. " * 5}
    counts = [8.0 * 2 ** i for i in range(12)]  # each faster but using more hardware time: a front of 12 rows
    many = pd.DataFrame({"round": "v5.1", "submitter": "A", "system": [f"a{count:g}" for count in counts],
                         "accelerator_family": "H100", "accelerator_count": counts,
                         "time_to_train_min": [100.0 / (count / 8) ** 0.8 for count in counts],
                         "same_runs_as": None, "energy_kwh": float("nan")})
    many = many.assign(accelerator_hours=many["accelerator_count"] * many["time_to_train_min"] / 60)
    inputs = brief.BriefInputs(_answer(many, (10, 30)), None, {"H100": "#0072b2"}, notice)
    figure = brief.draw_brief(inputs, DEFAULT_ELECTRICITY_PRICE)
    renderer = figure.canvas.get_renderer()
    to_figure = figure.transFigure.inverted()
    intro_bottom = to_figure.transform((0.0, figure.texts[1].get_window_extent(renderer).y0))[1]
    for ax in figure.axes:
        if ax.get_title():
            assert to_figure.transform((0.0, ax.title.get_window_extent(renderer).y1))[1] < intro_bottom
