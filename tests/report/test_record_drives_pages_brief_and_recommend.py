"""One record of today: the buyer stage's record of a benchmark (data/processed/buyer/<b>.json) is what the entry
page and the benchmark page draw, what the brief draws and marks its answers from and what `recommend` answers from.
Changing the record changes all of them, on a scratch project of synthetic resnet results
(`tests.conftest.decide_project`)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.analysis.buyer import (
    BuyerReport,
    buyer_answer,
    family_efficiency,
    median_interval,
    options_frame,
    published_options,
)
from pipeline.analysis.pricing import price_table
from pipeline.commands import recommend
from pipeline.core import paths
from pipeline.report.brief import BriefInputs, cheapest_within, unlisted_choices
from pipeline.report.buyer_section import buyer_view, option_table_row
from pipeline.report.site import family_comparison, round_view


def _listed(capsys: pytest.CaptureFixture[str]) -> dict[str, float]:
    """recommend's candidates for resnet: label -> time to train (min)."""
    recommend.main(["--benchmark", "resnet", "--limit", "50", "--json"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return {row["label"]: row["time_to_train_min"] for row in rows}


def test_changing_the_record_changes_the_page_the_brief_and_recommend(decide_project: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = decide_project / paths.buyer_json("resnet")
    report = BuyerReport.read(path)
    answer = report.answer
    assert answer is not None and answer.options
    assert [option.label for option in answer.options] == options_frame(answer.options)["label"].tolist()
    result = answer.options[0]  # the round's one published result here (Gaudi2, republished from v3.0)
    assert _listed(capsys)[result.label] == pytest.approx(result.time_to_train_min)

    # the record says the result took 0.5 min: recommend, the entry page and the brief follow it
    faster = result.model_copy(update={"time_to_train_min": 0.5, "time_low_min": 0.5, "time_high_min": 0.5})
    changed = answer.model_copy(update={"options": [faster], "fastest": faster,
                                        "deadlines": [choice.model_copy(update={"option": faster})
                                                      for choice in answer.deadlines]})
    path.write_text(report.model_copy(update={"answer": changed}).model_dump_json(), encoding="utf-8")

    assert _listed(capsys)[result.label] == pytest.approx(0.5)  # recommend answers from the record
    assert buyer_view(changed)["fastest"]["time"] == "0.500"  # the entry page draws it
    assert round_view("resnet", changed, {})["fastest"]["time"] == "0.500"  # and the benchmark page
    rows = BriefInputs(changed, None, {}).rows  # the brief draws the record's results
    assert rows["time_to_train_min"].tolist() == [0.5]
    marked = cheapest_within(rows, changed)  # and rings the record's answer to every deadline
    assert marked == {choice.limit: 0 for choice in changed.deadlines}
    assert unlisted_choices(rows.iloc[0:0], changed)  # and names one it has no row for


def _published(rows: pd.DataFrame) -> pd.DataFrame:
    return published_options(rows.assign(scaling_efficiency=math.nan))


def test_the_records_cost_is_your_price_or_the_public_range_or_says_why_there_is_none() -> None:
    unpriced = price_table.families_without_price()[0]
    rows = pd.DataFrame({"round": "v3.0", "submitter": ["Acme", "Globex", "Initech"], "system": ["a", "b", "c"],
                         "accelerator_family": ["H100", "A100", unpriced], "accelerator_count": [8.0, 16.0, 4.0],
                         "time_to_train_min": [30.0, 45.0, 90.0], "accelerator_hours": [4.0, 12.0, 6.0]})
    answer = buyer_answer("rgat", _published(rows), _published(rows).iloc[0:0], (), (), prices={"H100": 3.0})
    mine, public_option, none = (next(o for o in answer.options if o.system == system) for system in "abc")
    assert mine.cost_low_usd == mine.cost_high_usd == 12.0 and mine.cost == "12 USD (your price file)"
    assert mine.price_type is None and mine.price_dates == []
    public = price_table.cost_range(12.0, "A100")  # the buyer's prices name no A100: the public range
    assert (public_option.cost_low_usd, public_option.cost_high_usd) == pytest.approx((public.low, public.high))
    assert public_option.price_type == "on-demand" and public.cheapest is not None
    assert public.cheapest.provider in public_option.cost and public.cheapest.date in public_option.price_dates
    assert none.cost_low_usd is None and none.cost == price_table.no_price_text(unpriced)
    assert option_table_row(none)["cost"] == ""  # the table's cell is left to its "no public price"


def test_a_republished_result_joins_the_round_and_the_front_and_efficiency_count_it() -> None:
    """A result republished in the round that beats the others on both joins the record's results, marked; the front
    and the round efficiency are over them all."""
    rows = pd.DataFrame({"round": "v5.1", "submitter": "Acme", "system": ["a", "b", "b_again"],
                         "accelerator_family": "H100", "accelerator_count": [8.0, 64.0, 32.0],
                         "time_to_train_min": [30.0, 5.0, 4.0], "accelerator_hours": [4.0, 5.33, 2.13],
                         "republished_of": [None, None, "v5.0/Acme/b0"], "precision": [None, "bf16", "fp8"]})
    answer = buyer_answer("rgat", _published(rows), _published(rows).iloc[0:0], (), ())
    assert [option.system for option in answer.front] == ["b_again"] and answer.n_republished == 1
    efficiency = {option.system: option.round_efficiency for option in answer.options}
    assert efficiency == pytest.approx({"b_again": 1.0, "b": 2.13 / 5.33, "a": 2.13 / 4.0})
    assert option_table_row(answer.front[0])["name"] == "Acme b_again (republished from v5.0)"
    hardware = {option.system: option_table_row(option)["hardware"] for option in answer.options}
    assert hardware == {"b_again": "32 × H100 (fp8)", "b": "64 × H100 (bf16)", "a": "8 × H100"}  # where known


def test_each_familys_efficiency_has_a_bootstrap_interval_of_its_median() -> None:
    values = np.array([0.2, 0.4, 0.5, 0.6, 0.9])
    low, high = median_interval(values)
    assert 0.2 <= low <= 0.5 <= high <= 0.9 and low < high
    assert median_interval(values) == (low, high)  # seeded by the values: the record is the same on every run
    assert median_interval(np.array([0.7])) == (0.7, 0.7)  # one result: no interval
    found = family_efficiency(pd.DataFrame({"accelerator_family": ["A", "A", "A", "B"],
                                            "round_efficiency": [0.2, 0.5, 0.9, 1.0]}))
    assert [item.accelerator_family for item in found] == ["B", "A"]  # the most efficient median first
    rows = family_comparison([{"model": "BERT", "family_efficiency": found}]).set_index("family")
    assert rows.loc["A", "median"] == 0.5 and rows.loc["A", "ci_low"] <= 0.5 <= rows.loc["A", "ci_high"]
    assert (rows.loc["B", "ci_low"], rows.loc["B", "ci_high"], rows.loc["B", "n"]) == (1.0, 1.0, 1)
