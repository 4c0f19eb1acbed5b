"""The site's tables and the one number formatter: the ranking table (every row, collapsed and searchable; sort
keys numbers and blank when missing; republished results marked; a cost column), a word in a numeric column, each
number style, and the importance table's order for features of equal importance."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pipeline.analysis.statistics.importance_result import TargetFit
from pipeline.report import formatting, site, tables
from tests.report.fixture_site import HEADLINE, IMPORTANCE, IMPORTANCE_FITS, OTHER, analysed_outputs


def test_ranking_table_shows_every_row_collapsed_and_searchable(pages: dict[str, str], tmp_path: Path) -> None:
    ranking = analysed_outputs(OTHER, 40, 1, tmp_path).ranking
    table = tables.ranking_table(ranking, limit=10)
    assert (table["shown"], table["total"]) == (10, 40)
    assert [cell["text"] for cell in table["rows"][0]][:1] == ["1"]
    assert table["rows"][0][0]["sort"] == "1"
    for benchmark, rows in ((HEADLINE, 60), (OTHER, 40)):
        page_html = pages[site.benchmark_page(benchmark)]
        ranking_html = page_html[page_html.index(f'id="{benchmark}-table"'):]
        assert ranking_html[:ranking_html.index("</table>")].count("<tr>") == 1 + rows
        details = page_html[page_html.index(f'<details class="long" id="{benchmark}-ranking">'):]
        assert details.index(f'id="{benchmark}-table"') < details.index("</details>")  # collapsed
        assert f'data-filter="{benchmark}-table"' in details


def test_sort_keys_are_numbers_and_blank_when_missing() -> None:
    frame = pd.DataFrame({"round": ["v0.7", "v10.0"], "round_efficiency": [np.nan, 0.5]})
    columns = [column for column in tables.RANKING_COLUMNS if column.name in frame]
    rows = formatting.table(frame, columns)["rows"]
    assert [row[0]["text"] for row in rows] == ["v0.7", "v10.0"]
    assert float(rows[0][0]["sort"]) < float(rows[1][0]["sort"])  # by version, not as text
    assert rows[0][1] == {"text": "", "sort": ""} and rows[1][1] == {"text": "0.50", "sort": "0.5"}


def test_a_word_in_a_numeric_column_reads_as_written_and_sorts_with_the_blanks() -> None:
    rows = formatting.table([{"error": 7.44}, {"error": "not evaluable"}],
                            [formatting.Column("error", "Error", style="percent")])["rows"]
    assert [row[0] for row in rows] == [{"text": "7.4%", "sort": "7.44"}, {"text": "not evaluable", "sort": ""}]


@pytest.mark.parametrize(("value", "style", "text"), [
    (4320.0, "readable", "4,320"), (13.47, "readable", "13.5"), (1.8, "readable", "1.80"),
    (0.35816, "readable", "0.358"), (8.0, "readable", "8"), (np.nan, "readable", ""), (None, "ratio", ""),
    ("H100", "readable", "H100"), (True, "readable", "yes"), (0.8149, "ratio", "0.81"), (0.12345, "score", "0.123"),
    (2022.0, "year", "2022"), (1234.5, "money", "1,234.50"), (0, "readable", "0"), (7.44, "percent", "7.4%"),
    (0.913, "share", "91%"), (1.854, "times", "1.85×")])
def test_one_number_formatter_for_the_page(value: Any, style: formatting.Style, text: str) -> None:
    assert formatting.number(value, style) == text


def test_republished_results_say_so_in_the_tables() -> None:
    ranking = pd.DataFrame({"rank": [1, 2], "round": ["v2.1", "v2.0"], "submitter": "Acme", "system": ["b", "a"],
                            "republished_of": ["v2.0/Acme/a", None], "time_to_train_min": [5.0, 5.0],
                            "accelerator_count": 8.0, "accelerator_family": "A100", "accelerator_hours": 8 * 5 / 60})
    system = next(i for i, column in enumerate(tables.RANKING_COLUMNS) if column.name == "system")
    cells = [row[system]["text"] for row in tables.ranking_table(ranking, None)["rows"]]
    assert cells == ["b (republished from v2.0)", "a"]
    # every results table has a cost column: a run today at the dearest on-demand price, or your own
    cost = next(i for i, column in enumerate(tables.RANKING_COLUMNS) if column.name == "cost_high_usd")
    mine = [row[cost]["text"] for row in tables.ranking_table(ranking, None, {"A100": 3.0})["rows"]]
    assert mine == ["2", "2"]  # 8 x 5 min = 0.667 accelerator-hours x 3 USD
    assert formatting.configuration_name(ranking.iloc[0]) == "v2.1 Acme b (republished from v2.0)"
    assert tables.republished_rows(ranking.iloc[:1]) == [
        {"name": "v2.1 Acme b (republished from v2.0)", "hardware": "8 × A100", "time": "5", "original": "v2.0 Acme a"}]
    assert tables.republished_by_round(ranking) == [
        {"round": "v2.0", "results": 1, "republished": 0, "share": "0%"},
        {"round": "v2.1", "results": 1, "republished": 1, "share": "100%"}]


def test_features_of_equal_importance_are_listed_in_name_order() -> None:
    """Rows of equal permutation importance (often many at 0.000) keep one order, by feature name: an unstable sort
    left them in an order that changed with the CPU's sort code, and so did the methods page's bytes."""
    features = {f"feature_{i:02d}": {"mean": 0.0 if i % 3 else 0.5, "std": 0.0} for i in range(40, 0, -1)}
    fit = TargetFit.model_validate({**IMPORTANCE_FITS["log_time_to_train"].model_dump(),
                                    "permutation_importance": features})
    report = IMPORTANCE.model_copy(update={"targets": {"log_time_to_train": fit}})
    order = list(dict.fromkeys(tables.importance_frame(report, top=40)["feature"]))
    assert order == sorted(features, key=lambda name: (-features[name]["mean"], name))
