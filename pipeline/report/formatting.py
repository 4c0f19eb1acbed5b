"""The page's one number formatter, one table builder, and the names and colours every section shares.

A table is `{"columns": [{"label", "numeric"}], "rows": [[{"text", "sort"?, "colour"?}]], "shown", "total"}`:
the text a reader sees and, for numeric columns, the value the page's script sorts by.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from pipeline.analysis.scope import republished_from
from pipeline.core.colours import COLOURBLIND
from pipeline.mlperf.catalogue import round_version

# How a number reads: `readable` as many digits as a reader needs (4,320 / 13.5 / 1.80 / 0.358), `ratio` two
# decimals (efficiencies, speed-ups, R²), `score` three (importances), `year` none (2023), `money` two with
# thousands separators (prices and costs), `percent` a value already in percent with one decimal (an error,
# 7.4%), `share` a fraction as a whole percentage (coverage, 0.913 -> 91%), `times` a factor (1.85×).
Style = Literal["readable", "ratio", "score", "year", "money", "percent", "share", "times"]
FIXED_STYLES: dict[str, Callable[[float], str]] = {
    "ratio": "{:.2f}".format, "score": "{:.3f}".format, "year": "{:.0f}".format, "money": "{:,.2f}".format,
    "percent": "{:.1f}%".format, "share": lambda value: f"{100 * value:.0f}%", "times": "{:.2f}×".format}

# seaborn's colour-blind palette reordered so that the first five clusters get the most distinct hues: its
# orange and vermillion are hard to tell apart side by side.
CLUSTER_PALETTE_ORDER = [0, 1, 2, 4, 9, 3, 5, 7, 6, 8]

FEATURE_LABELS = {
    "time_to_train_min": "time to train (min)", "accelerator_hours": "accelerator-hours",
    "scaling_efficiency": "scaling efficiency", "speedup": "speed-up",
    "accelerator_count": "accelerators", "n_nodes": "nodes", "accelerators_per_node": "accelerators per node",
    "accelerator_memory_gib": "accelerator memory (GiB)", "accelerator_year": "accelerator year",
    "host_cpu_cores": "host CPU cores per node", "host_memory_gib": "host memory (GiB)",
    "interconnect_intra_gbps": "intra-node link (Gbit/s)", "interconnect_inter_gbps": "inter-node link (Gbit/s)",
    "accelerator_vendor": "accelerator vendor", "accelerator_family": "accelerator family",
    "accelerator_form_factor": "accelerator form factor", "host_cpu_vendor": "host CPU vendor",
    "interconnect_intra": "intra-node link kind", "interconnect_inter": "inter-node link kind",
    "framework": "framework", "precision": "numeric precision", "round_year": "round (software era)",
    "round_efficiency": "round efficiency",
}
TARGET_LABELS = {"log_time_to_train": "time to train", "log_accelerator_hours": "accelerator-hours"}


def missing(value: Any) -> bool:
    """True when `value` is None, NaN or pandas' NA: what the pages leave blank."""
    return value is None or (isinstance(value, (float, np.floating)) and math.isnan(value)) or value is pd.NA


def number(value: Any, style: Style = "readable") -> str:
    """A value as the page shows it (see `Style`); blank when missing, yes/no for booleans, text as it is."""
    if missing(value):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if not isinstance(value, (int, float, np.integer, np.floating)):
        return str(value)
    value = float(value)
    if style in FIXED_STYLES:
        return FIXED_STYLES[style](value)
    magnitude = abs(value)
    if magnitude >= 100 or (value.is_integer() and (magnitude >= 1 or value == 0)):
        return f"{value:,.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def round_order(round_: str) -> float:
    """A sort key of round names: v0.7 < v1.0 < v4.1."""
    major, minor = round_version(round_)
    return major * 100 + minor


def configuration_name(row: pd.Series | dict[str, Any]) -> str:
    """"round submitter system", and "(republished from vX.Y)" for a result that repeats an earlier round's."""
    original = row.get("republished_of")
    suffix = "" if missing(original) else f" ({republished_from(str(original))})"
    return f"{row['round']} {row['submitter']} {row['system']}{suffix}"


def hardware_name(row: pd.Series | dict[str, Any]) -> str:
    """"8 × H100": the accelerator count and family of a configuration."""
    family = row.get("accelerator_family")
    return f"{number(row['accelerator_count'])} × {'unknown accelerator' if missing(family) else family}"


def cluster_colour(cluster: int) -> str:
    """One hex colour per cluster id, the same in every figure and table of the page."""
    return COLOURBLIND[CLUSTER_PALETTE_ORDER[int(cluster) % len(CLUSTER_PALETTE_ORDER)]]


@dataclass(frozen=True)
class Column:
    """A table column: `name` in the records, its header, and how its cells read and sort."""
    name: str
    label: str
    numeric: bool = True
    style: Style | None = "readable"  # None: the value as text
    sort_key: Callable[[Any], float] | None = None
    swatch: bool = False  # the value is a cluster id: show its colour, as in the figures


def _cell(column: Column, value: Any) -> dict[str, str]:
    cell = {"text": number(value, column.style) if column.style else ("" if missing(value) else str(value))}
    if column.numeric:
        # A word in a numeric column ("not evaluable") sorts with the blanks.
        key = column.sort_key(value) if column.sort_key else (
            math.nan if missing(value) or isinstance(value, str) else float(value))
        cell["sort"] = "" if math.isnan(key) else f"{key:.7g}"  # finer than any value shown
    if column.swatch and not missing(value):
        cell["colour"] = cluster_colour(int(value))
    return cell


def table(records: pd.DataFrame | Sequence[dict[str, Any]], columns: Sequence[Column],
          limit: int | None = None) -> dict[str, Any]:
    """The page's table (see the module docstring) of the first `limit` records (all when None)."""
    rows = records.to_dict(orient="records") if isinstance(records, pd.DataFrame) else list(records)
    shown = rows if limit is None else rows[:limit]
    return {"columns": [{"label": c.label, "numeric": c.numeric} for c in columns],
            "rows": [[_cell(column, record.get(column.name)) for column in columns] for record in shown],
            "shown": len(shown), "total": len(rows)}
