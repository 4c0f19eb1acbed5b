"""What docs/prices.md reports of the price table's ranges: the rows that set each default range's ends, and the
unverified rows kept out that would have set or moved one (issue 52's verified ends). The answers never call it:
`price_table.current_prices` already leaves unverified rows out.
"""
from __future__ import annotations

import math

import pandas as pd

from pipeline.analysis.pricing.price_table import (
    DEFAULT_PRICE_TYPE,
    MAX_PRICE_AGE_DAYS,
    current_prices,
    price_table,
    unverified_prices,
    why_unverified,
)


def range_ends(table: pd.DataFrame | None = None, families: list[str] | None = None,
               max_age_days: int = MAX_PRICE_AGE_DAYS) -> pd.DataFrame:
    """The rows that set an end of a default cost range: per family (`families`, default every family with a current
    verified on-demand price), its cheapest and its dearest current verified on-demand row (`current_prices` at
    `max_age_days`), with `end` ("cheapest" or "dearest"; one row "only" where they are the same) and the table's
    columns."""
    prices = current_prices(table, max_age_days)
    prices = prices[prices["price_type"] == DEFAULT_PRICE_TYPE]
    rows = []
    for family in families if families is not None else sorted(set(prices["family"]), key=str.casefold):
        own = prices[prices["family"] == family].sort_values(["price_per_accelerator_hour", "date"],
                                                               ascending=[True, False])
        if own.empty:
            continue
        first, last = own.iloc[0], own.iloc[-1]
        rows += [first.to_dict() | {"end": "only"}] if len(own) == 1 else \
            [first.to_dict() | {"end": "cheapest"}, last.to_dict() | {"end": "dearest"}]
    return pd.DataFrame(rows, columns=[*prices.columns, "end"])


def excluded_ends(table: pd.DataFrame | None = None, max_age_days: int = MAX_PRICE_AGE_DAYS) -> pd.DataFrame:
    """The unverified current on-demand rows (at `max_age_days`) that would set or move an end of their family's
    default range if they were verified: cheaper than its verified cheapest or dearer than its verified dearest
    (every one, for a family with none verified), with `end` ("cheapest" or "dearest", the end it would set) and
    `reason` (`why_unverified`)."""
    table = price_table() if table is None else table
    ends = range_ends(table, max_age_days=max_age_days)
    unverified = unverified_prices(table, max_age_days)
    unverified = unverified[unverified["price_type"] == DEFAULT_PRICE_TYPE]
    rows = []
    for family, own in unverified.groupby("family", sort=True):
        verified = ends.loc[ends["family"] == family, "price_per_accelerator_hour"]
        low, high = (verified.min(), verified.max()) if len(verified) else (math.inf, -math.inf)
        middle = math.sqrt(own["price_per_accelerator_hour"].min() * own["price_per_accelerator_hour"].max())
        for row in own.to_dict(orient="records"):
            price = row["price_per_accelerator_hour"]
            if price < low or price > high:
                end = "cheapest" if (price < low if len(verified) else price <= middle) else "dearest"
                rows.append(row | {"end": end, "reason": why_unverified(row["note"])})
    return pd.DataFrame(rows, columns=[*unverified.columns, "end", "reason"])
