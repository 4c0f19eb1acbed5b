"""Helpers shared by the loaders of the package's curated tables (accelerators.csv, cpus.csv, links.csv): read a
CSV of this package with fixed columns, and check it, raising ContractError with a message naming the bad rows."""
from __future__ import annotations

from importlib import resources

import pandas as pd

from pipeline.core.errors import ContractError


def read_package_table(file_name: str, text_columns: tuple[str, ...]) -> pd.DataFrame:
    """A CSV file of this package: the `text_columns` as text with empty cells as "", the others as numbers
    with empty cells as NaN."""
    with resources.files(__package__).joinpath(file_name).open(encoding="utf-8") as handle:
        header = handle.readline().strip().split(",")
        handle.seek(0)
        return pd.read_csv(handle, dtype=dict.fromkeys(text_columns, str), keep_default_na=False,
                           na_values={column: [""] for column in header if column not in text_columns})


def check_columns(table: pd.DataFrame, file_name: str, columns: list[str]) -> None:
    """`table` has exactly `columns`, in this order; raises ContractError otherwise."""
    if list(table.columns) != columns:
        raise ContractError(f"{file_name}: columns must be {', '.join(columns)}; found {', '.join(table.columns)}")


def check_sources(table: pd.DataFrame, file_name: str, key: str) -> None:
    """Every row of `table` cites an https source; raises ContractError naming the rows that do not."""
    unsourced = table.loc[~table["source"].str.startswith("https://"), key]
    if len(unsourced):
        raise ContractError(f"{file_name}: every row needs an https URL in `source`; missing for "
                            f"{', '.join(map(str, unsourced))}")


def check_unique(table: pd.DataFrame, file_name: str, keys: list[str]) -> None:
    """No two rows of `table` share `keys`; raises ContractError naming the repeated keys."""
    repeated = table.loc[table.duplicated(keys), keys]
    if len(repeated):
        listed = "; ".join(" / ".join(map(str, row)) for row in repeated.itertuples(index=False))
        raise ContractError(f"{file_name}: {' + '.join(keys)} listed twice: {listed}")
