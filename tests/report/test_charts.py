"""The site's charts: their frames (the same hardware across rounds, the forecasts and break-even from decide.json,
the family comparison's bootstrap interval), their specs (each point named, a family filter and a round selector, one
colour per family on every page, a title, a reading and a text alternative) and every spec valid Vega-Lite."""
from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

import pandas as pd

from pipeline.report import assets, charts, decide_section
from tests.report.fixture_site import DECIDE, FAMILY_YEAR, HEADLINE, OTHER


def test_the_same_hardware_across_rounds_keeps_each_rounds_best_of_counts_published_twice() -> None:
    frame = pd.DataFrame({"accelerator_family": ["A100", "A100", "A100", "H100", "TPU-v4"],
                          "accelerator_count": [8.0, 8.0, 8.0, 8.0, 16.0],
                          "round": ["v1.0", "v1.0", "v2.0", "v2.0", "v1.0"],
                          "time_to_train_min": [10.0, 7.0, 5.0, 2.0, 9.0], "submitter": "Acme", "system": list("abcde"),
                          "accelerator_hours": 1.0})
    progress = charts.progress_frame(frame)
    assert progress[["family", "count", "round", "time"]].astype(object).values.tolist() == [
        ["A100", 8.0, "v1.0", 7.0], ["A100", 8.0, "v2.0", 5.0]]
    assert progress["hardware"].tolist() == ["8 × A100", "8 × A100"]


def test_decide_charts_come_from_decide_json() -> None:
    colours = charts.family_colours(["A100", "H100", "TPU-v4"])
    bands, forecasts = charts.forecast_frames(DECIDE, {"A100", "H100"})
    assert sorted(bands["unit"].unique()) == ["A100 (SXM)", "H100 (SXM)"] and len(bands) == 8
    assert (bands["low"] <= bands["time"]).all() and (bands["time"] <= bands["high"]).all()
    assert forecasts["unit"].tolist() == ["A100 (SXM)"]
    curves, observed, crossings = charts.break_even_frames(DECIDE, {"A100", "H100", "TPU-v4"})
    assert len(curves) == len(observed) == 3 and crossings["count"].tolist() == [40.0] * 3
    assert crossings["agreement"].tolist() == ["yes"] * 3
    chart = charts.break_even_chart("b", DECIDE, ["A100", "H100", "TPU-v4"], colours, "BERT")
    assert chart is not None and "0.7" in chart.reading
    backtest = charts.backtest_chart("bt", DECIDE, "BERT")
    assert backtest is not None and "3 BERT results of 1 round," in backtest.alt
    skipped = DECIDE.model_copy(update={"status": "skipped", "backtest_points": []})
    assert charts.backtest_chart("bt", skipped, "BERT") is None
    assert charts.break_even_chart("b", None, ["A100"], colours, "BERT") is None
    cell = decide_section.fragment(HEADLINE, DECIDE)["break_even"]["rows"][0]
    assert any(c["text"].startswith("yes: the data cross the floor") for c in cell)


def _specs(page_html: str) -> dict[str, dict[str, Any]]:
    return {key: json.loads(spec) for key, spec in
            re.findall(r'<script type="application/json" id="spec-([^"]+)">(.*?)</script>', page_html, re.S)}


def test_charts_name_each_point_filter_by_family_and_select_rounds_with_fixed_colours(pages: dict[str, str]) -> None:
    specs = {key: spec for name, text in pages.items() if name.endswith(".html") for key, spec in _specs(text).items()}
    assert {f"{HEADLINE}_tradeoff", f"{HEADLINE}_scaling", f"{HEADLINE}_progress", f"{OTHER}_tradeoff",
            "family_comparison"} <= set(specs)
    trade_off = json.dumps(specs[f"{HEADLINE}_tradeoff"])
    for field in ("submitter", "system", "round", "count", "time", "hours"):
        assert f'"field": "{field}"' in trade_off
    params = [param["name"] for param in specs[f"{HEADLINE}_tradeoff"]["params"]]
    assert params == [f"{HEADLINE}_tradeoff_family", f"{HEADLINE}_tradeoff_round"]  # legend filter, round selector
    assert specs[f"{HEADLINE}_tradeoff"]["params"][1]["bind"]["input"] == "select"
    # the forecast and its interval from decide.json: A100's 5 min (4 to 6) at 64 accelerators
    scaling = json.dumps(specs[f"{HEADLINE}_scaling"])
    assert '"high": 6.0' in scaling and '"low": 4.0' in scaling and '"time": 5.0' in scaling
    # one colour per family, the same in every chart of every page
    colour_of: dict[str, str] = {}
    for spec in specs.values():
        for found in re.finditer(r'"domain": \[([^\]]*)\], "range": \[([^\]]*)\]', json.dumps(spec, sort_keys=True)):
            domain, colours = json.loads(f"[{found[1]}]"), json.loads(f"[{found[2]}]")
            if all(isinstance(c, str) and c.startswith("#") for c in colours):
                for family, colour in zip(domain, colours):
                    assert colour_of.setdefault(family, colour) == colour, family
    assert {"A100", "H100", "TPU-v4"} <= set(colour_of) and len({colour_of[f] for f in FAMILY_YEAR}) == 3
    # each chart: a title, a one-line reading and a text alternative
    for name, text in pages.items():
        for figure in re.findall(r'<figure class="vchart".*?</figure>', text, re.S):
            assert re.search(r"<strong>[^<]+</strong><span class=\"reading\">[^<]+</span>", figure), name
            assert re.search(r'role="img" aria-label="[^"]{40,}"', figure), name


def test_every_chart_is_valid_vega_lite(energy_pages: dict[str, str]) -> None:
    """Every kind of chart the site draws, checked against the JSON schema of the Vega-Lite version the site bundles
    (assets.VEGA_LITE_VERSION), as Altair ships it."""
    import altair
    import jsonschema

    assert altair.SCHEMA_VERSION.startswith(f"v{assets.VEGA_LITE_VERSION}.")
    schema = resources.files("altair.vegalite.v6.schema").joinpath("vega-lite-schema.json").read_text("utf-8")
    validator = jsonschema.Draft7Validator(json.loads(schema))
    specs = {key: spec for name, text in energy_pages.items() if name.endswith(".html")
             for key, spec in _specs(text).items()}
    kinds = {"tradeoff", "scaling", "progress", "cost", "energy", "break_even", "backtest"}
    assert {kind for kind in kinds for key in specs if key.endswith(f"_{kind}")} == kinds
    assert "family_comparison" in specs
    for key, spec in specs.items():
        assert [error.message for error in validator.iter_errors(spec)] == [], key


def test_family_order_puts_the_newest_rounds_families_first() -> None:
    frame = pd.DataFrame({"round": ["v1.0", "v1.0", "v1.0", "v2.0", "v2.0", "v2.0"],
                          "accelerator_family": ["A100", "A100", "V100", "H100", "B200", "B200"]})
    assert charts.family_order(frame) == ["B200", "H100", "A100", "V100"]
    palette = charts.FAMILY_PALETTE
    assert charts.family_colours(["B200", "H100"]) == {"B200": palette[0], "H100": palette[1]}


