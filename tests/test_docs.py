"""The docs cannot drift: generated pages match the code, column descriptions match the tables their writers
declare, every setting has a description, every page is linked, the README stays a few screens."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from pydantic import BaseModel

from pipeline.analysis.forecasting.backtest import POINT_COLUMNS
from pipeline.analysis.statistics.ranking import RANKING_COLUMNS
from pipeline.core import columns, schemas
from pipeline.mlperf.accounting import tally
from pipeline.mlperf.hardware.description import NOTE_COLUMNS
from pipeline.settings import Settings
from tests.conftest import ROOT
from tools.generate_docs import pages

DOCS = ROOT / "docs"


@pytest.mark.parametrize("path", sorted(pages()), ids=lambda path: path.name)
def test_generated_page_is_up_to_date(path: Path) -> None:
    assert path.is_file() and path.read_text(encoding="utf-8") == pages()[path], (
        f"docs/{path.name} is out of date with the code: run python tools/generate_docs.py and commit the page")


def _tally_columns() -> list[str]:
    empty = pd.DataFrame({"round": pd.Series(dtype=str), "time_to_train_min": pd.Series(dtype=float)})
    return list(tally({"v1.0": Counter()}, empty, empty, empty, empty).columns)


@pytest.mark.parametrize(("table", "declared"), [
    (columns.SYSTEMS, schemas.SYSTEM_KEY_COLUMNS),
    (columns.RUNS, schemas.RUN_COLUMNS),
    (columns.RESULTS, schemas.RESULT_COLUMNS),
    (columns.QUARANTINE, schemas.QUARANTINE_COLUMNS),
    (columns.TALLY, None),
    (columns.CONFIGURATIONS, schemas.CONFIGURATION_COLUMNS),
    (columns.FEATURE_NOTES, NOTE_COLUMNS),
    (columns.BACKTEST, POINT_COLUMNS),
    (columns.RANKING, RANKING_COLUMNS),
], ids=lambda value: value.path if isinstance(value, columns.Table) else "")
def test_every_column_is_described_in_table_order(table: columns.Table, declared: list[str] | None) -> None:
    expected = _tally_columns() if declared is None else declared
    assert list(table.columns) == list(expected), f"pipeline/core/columns.py: {table.path} lists other columns"


def test_every_output_table_is_a_listed_file() -> None:
    assert {table.path for table in columns.TABLES} <= set(columns.FILES)


def _fields(model: type[BaseModel], prefix: str = "") -> list[tuple[str, str | None]]:
    found = []
    for name, field in model.model_fields.items():
        found.append((prefix + name, field.description))
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found += _fields(annotation, f"{prefix}{name}.")
    return found


def test_every_setting_has_a_description() -> None:
    missing = [key for key, description in _fields(Settings) if not description]
    assert not missing, f"settings without a docstring in pipeline/settings.py: {missing}"


def test_readme_is_a_few_screens() -> None:
    size = len((ROOT / "README.md").read_text(encoding="utf-8"))
    assert size < 10_000, f"README.md has {size} characters: move the detail to a page of docs/"


def _links(path: Path) -> set[str]:
    return set(re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")))


def test_every_page_is_linked_from_the_readme_and_the_index() -> None:
    every_page = {path.name for path in DOCS.glob("*.md")} - {"index.md"}
    from_readme = {Path(link).name for link in _links(ROOT / "README.md") if link.startswith("docs/")}
    from_index = {Path(link).name for link in _links(DOCS / "index.md")}
    assert every_page <= from_index, f"docs/index.md does not link {sorted(every_page - from_index)}"
    assert every_page <= from_readme, f"README.md does not link {sorted(every_page - from_readme)}"
