"""How current the site is, for every page's first screen: the round analysed and when it was published, the
prices' date, the build's commit and its date, the round the forecasts are for, and a newer round: upstream, or
published by the build date as this project's table of publication dates knows.

The build date is the date of the commit built (the last one that changed the code, params.yaml or dvc.yaml;
not the clock), so the same code and inputs give the same page.
A newer round upstream is read from the validate stage's record of what MLCommons answered
(`data/.upstream.json`, `pipeline.mlperf.upstream`), as of the last `dvc repro` that could reach it.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from pipeline.analysis.pricing.price_table import MAX_PRICE_AGE_DAYS, price_dates_text
from pipeline.core import paths
from pipeline.mlperf.catalogue import ROUND_PUBLISHED, published_text, round_version, successors
from pipeline.mlperf.upstream import read_upstream_record
from pipeline.report.provenance import Revision


def newer_upstream(newest: str, record: Path = paths.UPSTREAM_RECORD) -> dict[str, str] | None:
    """The newest round upstream answered for when last asked, if newer than `newest`, with when it was asked."""
    found = read_upstream_record(record)
    newer = found.newer_than(newest)
    return None if newer is None else {"round": newer, "checked": found.checked or "unknown"}


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


def currency(newest: str | None, provenance: Revision, record: Path = paths.UPSTREAM_RECORD,
             max_age_days: int = MAX_PRICE_AGE_DAYS) -> dict[str, Any]:
    """The first screen's dates; `newest` is the newest round analysed (None: nothing analysed), `max_age_days` the
    age limit of the prices whose dates it gives (params `report.max_price_age_days`). `dates` and `notice` are the
    words every page's masthead and every brief print (`dates_text`, `notice_text`)."""
    found: dict[str, Any] = {
        "round": newest, "published": published_text(newest) if newest else None,
        "prices_read": price_dates_text(max_age_days=max_age_days), "commit": provenance.get("commit", "unknown"),
        "build_date": provenance.get("commit_date", "unknown"),
        "forecast_round": successors(newest)[0] if newest else None,
        "newer_upstream": newer_upstream(newest, record) if newest else None,
        "newer_catalogued": (newer_catalogued(newest, str(provenance.get("commit_date", "unknown")))
                             if newest else None)}
    return {**found, "dates": dates_text(found), "notice": notice_text(found)}


def dates_text(found: dict[str, Any]) -> str:
    """"Analyses MLPerf Training v5.1, published November 2025; prices read ...; built ... from commit ...": the
    round, its publication, the prices' dates and the build, from `currency`'s fields."""
    return (f"Analyses MLPerf Training {found['round']}, {found['published']}; prices read {found['prices_read']}; "
            f"built {found['build_date']} from commit {str(found['commit'])[:12]}.")


def notice_text(found: dict[str, Any]) -> str:
    """The newer-round notice from `currency`'s fields: a round upstream, or one published by the build date that
    the data lacks; empty when neither."""
    if found["newer_upstream"]:
        newer = found["newer_upstream"]
        return (f"A newer round, {newer['round']}, is published upstream (found {newer['checked']}): dvc repro "
                "with network fetches it (fetch.rounds: all), or add its archive to the mirror.")
    if found["newer_catalogued"]:
        newer = found["newer_catalogued"]
        return (f"MLPerf Training {newer['round']} was {newer['published']} and is not in this build's data: add "
                "its archive to the mirror, or run dvc repro with network (fetch.rounds: all).")
    return ""
