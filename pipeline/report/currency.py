"""How current the site is, for every page's first screen: the round analysed and when it was published, the
prices' date, the build's commit and its date, the round the forecasts are for, and a newer round: upstream, or
published by the build date as this project's table of publication dates knows.

The build date is the date of the commit built (the last one that changed the code, params.yaml or dvc.yaml;
not the clock), so the same code and inputs give the same page.
A newer round upstream is read from the validate stage's record of what MLCommons answered
(`data/.upstream.json`, pipeline/mlperf/discovery.py), as of the last `dvc repro` that could reach it.
"""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from pipeline.analysis.pricing.price_table import price_dates_text
from pipeline.core import paths
from pipeline.mlperf.catalogue import ROUND_PUBLISHED, round_published, round_version
from pipeline.mlperf.discovery import successors
from pipeline.report.provenance import Provenance


def published_text(round_: str) -> str:
    """'published June 2025', or for a round not in the catalogue's dated table, the calendar's month said so."""
    if round_ in ROUND_PUBLISHED:
        year, month = ROUND_PUBLISHED[round_]
        return f"published {dt.date(year, month, 1):%B %Y}"
    when = round_published(round_)
    year, month = int(when), round((when - int(when)) * 12) + 1
    return (f"published about {dt.date(year, month, 1):%B %Y} (MLCommons' usual calendar: the round is not in "
            "this project's table of publication dates)")


def newer_upstream(newest: str, record: Path = paths.UPSTREAM_RECORD) -> dict[str, str] | None:
    """The newest round upstream answered for when last asked, if newer than `newest`, with when it was asked."""
    if not record.is_file():
        return None
    document = json.loads(record.read_text(encoding="utf-8"))
    answered = [str(round_) for round_ in document.get("answered", [])]
    newer = [round_ for round_ in answered if round_version(round_) > round_version(newest)]
    if not newer:
        return None
    return {"round": max(newer, key=round_version), "checked": str(document.get("checked", "unknown"))}


def newer_catalogued(newest: str, build_date: str) -> dict[str, str] | None:
    """The newest round this project's table of publication dates (ROUND_PUBLISHED) knows as published by
    `build_date` (ISO; "unknown": none), if newer than `newest`: a round out, whatever the mirror and the network
    say."""
    try:
        built = dt.date.fromisoformat(build_date[:10])
    except ValueError:
        return None
    newer = [round_ for round_, (year, month) in ROUND_PUBLISHED.items()
             if round_version(round_) > round_version(newest) and dt.date(year, month, 1) <= built]
    if not newer:
        return None
    latest = max(newer, key=round_version)
    return {"round": latest, "published": published_text(latest)}


def currency(newest: str | None, provenance: Provenance, record: Path = paths.UPSTREAM_RECORD) -> dict[str, Any]:
    """The first screen's dates; `newest` is the newest round analysed (None: nothing analysed)."""
    return {"round": newest, "published": published_text(newest) if newest else None,
            "prices_read": price_dates_text(), "commit": provenance.get("commit", "unknown"),
            "build_date": provenance.get("commit_date", "unknown"),
            "forecast_round": successors(newest)[0] if newest else None,
            "newer_upstream": newer_upstream(newest, record) if newest else None,
            "newer_catalogued": (newer_catalogued(newest, str(provenance.get("commit_date", "unknown")))
                                 if newest else None)}
