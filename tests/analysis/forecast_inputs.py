"""Small model inputs the forecasting tests share: results written as (round, family, count, minutes) rows, one
series checkable by hand, a trust rule, and a backtest's evidence for it."""
from __future__ import annotations

import pandas as pd

from pipeline.analysis.forecasting import trust
from pipeline.settings import DecideTrustSettings

RULE = DecideTrustSettings(min_rounds=2, min_backtest_points=5, max_error=0.2, max_count_factor=2.0,
                           coverage=(0.85, 0.95))


def results(rows: list[tuple[str, str, float, float]], submitter: str = "Acme") -> pd.DataFrame:
    """Model inputs from (round, family, count, minutes) rows, all SXM."""
    return pd.DataFrame([{"round": round_, "accelerator_family": family, "form_factor": "SXM",
                          "accelerator_count": float(count), "time_to_train_min": float(minutes),
                          "submitter": submitter, "system": f"{family}-{count:g}-{round_}", "republished_of": None}
                         for round_, family, count, minutes in rows])


# v1.0: t = 100 (n/8)^-0.5 at 8 and 32; v1.1: 20% faster at 8 (half a year later: June and December 2021).
SERIES = results([("v1.0", "H100", 8, 100.0), ("v1.0", "H100", 32, 50.0), ("v1.1", "H100", 8, 80.0)])


def evidence(inside: int, total: int, median: float | None = 5.0) -> trust.Evidence:
    """A backtest's evidence for the trust rule: `inside` of `total` forecasts inside their interval, and their median
    error (percent; None without a forecast)."""
    return inside, total, median
