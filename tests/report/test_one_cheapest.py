"""One rule for "cheapest" everywhere (issue 52): for every current benchmark and every deadline of
`report.deadlines_min`, the printable brief, the site's entry page and `recommend` name the same configuration, the
buyer stage's answer. Runs on this checkout's real outputs; skipped, saying so, before `dvc repro`."""
from __future__ import annotations

import json
import re

import pytest

from pipeline.analysis.buyer import BuyerReport
from pipeline.commands import recommend
from pipeline.core import paths
from pipeline.report.brief import brief_rows, cheapest_within
from pipeline.settings import load_settings
from tests.conftest import ROOT


def _answers() -> list[BuyerReport]:
    folder = ROOT / paths.BUYER
    if not folder.is_dir() or not (ROOT / paths.CONFIGURATIONS).is_file():
        pytest.skip("the buyer stage's answers are absent: run `dvc repro` first")
    return [BuyerReport.read(path) for path in sorted(folder.glob("*.json"))]


def test_brief_site_and_recommend_name_the_same_cheapest_within_each_deadline(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.analysis.pricing.electricity import electricity_price
    from pipeline.analysis.scope import on_offer, read_configurations, today

    monkeypatch.chdir(ROOT)
    settings = load_settings()
    configurations = read_configurations()
    electricity = electricity_price(settings.report.electricity_usd_per_kwh)
    index = (ROOT / "reports" / "index.html").read_text(encoding="utf-8")
    compared = 0
    current = set(today(settings.analysis, configurations).benchmarks)  # the entry page's and the briefs'
    for report in _answers():
        answer = report.answer
        if answer is None or answer.benchmark not in current:
            continue
        assert [choice.limit for choice in answer.deadlines] == list(settings.report.deadlines_min)
        rows = brief_rows(on_offer(configurations, settings.analysis, answer.benchmark), answer.benchmark,
                          answer.round, None, electricity, settings.report.max_price_age_days)
        marked = cheapest_within(rows, answer)
        for choice in answer.deadlines:
            if choice.option is None:
                continue
            label = choice.option.label
            # the brief rings the buyer's answer (a forecast it names below its table)
            if choice.option.kind == "published":
                row = rows.loc[marked[choice.limit]]
                assert f"{row['round']} {row['submitter']} {row['system']}" == label
            # the site's entry page names it
            assert re.search(re.escape(choice.option.label.split(" ", 1)[1]), index), (answer.benchmark, label)
            # recommend lists it first
            recommend.main(["--benchmark", answer.benchmark, "--deadline-min", f"{choice.limit:g}", "--json",
                            "--limit", "1"])
            first = json.loads(capsys.readouterr().out.splitlines()[0])
            assert first["label"] == label, (answer.benchmark, choice.limit)
            compared += 1
    assert compared >= len(settings.report.deadlines_min)
