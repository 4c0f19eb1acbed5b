"""One record of today (issue 53): the buyer stage's record of a benchmark (data/processed/buyer/<b>.json) is what the
entry page draws, what the brief marks its answers from and what `recommend` answers from. Changing the record
changes all three, on a scratch project of synthetic resnet results (`tests.conftest.decide_project`)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.analysis.buyer import BuyerReport, options_frame
from pipeline.commands import recommend
from pipeline.core import paths
from pipeline.report.brief import cheapest_within, unlisted_choices
from pipeline.report.buyer_section import buyer_view


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
    rows = options_frame(changed.options).assign(front=True)
    marked = cheapest_within(rows, changed)  # the brief rings the record's answer to every deadline
    assert marked == {choice.limit: 0 for choice in changed.deadlines}
    assert unlisted_choices(rows.iloc[0:0], changed)  # and names one it has no row for
