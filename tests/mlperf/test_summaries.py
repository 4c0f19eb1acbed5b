"""The round's own summary as a check: a submitter's shipped summary.json (the summarizer's records) against
our scores."""
from __future__ import annotations

import json
from pathlib import Path

from pipeline.mlperf import rounds
from tests.conftest import run_log, small_round, system_json, write_archive


def summary(**scores: float | None) -> str:
    """Acme's summary.json as the summarizer writes it: one record per system, scores between private_id and
    details_url."""
    records = [{"division": "closed", "availability": "available", "submitter": "Acme", "system": system,
                "accelerator_model_name": "X", "private_id": "abc", "resnet": score,
                "details_url": f"https://github.com/mlcommons/training_results_v6.0/blob/main/Acme/systems/{system}.json"}
               for system, score in scores.items()]
    return json.dumps(records, indent=2)


def test_shipped_scores_are_compared_with_ours(tmp_path: Path) -> None:
    files = {**small_round(), "Acme/systems/other.json": system_json()}
    for run, value in enumerate([20.0, 21.0, 22.0, 23.0, 24.0]):
        files[f"Acme/results/other/resnet/result_{run}.txt"] = run_log(value)
    files["Acme/summary.json"] = summary(box=12.0, other=22.5, ghost=3.0)
    tables = rounds.ingest([write_archive(tmp_path / "training_results_v3.0.tar.gz", files)])
    [check] = tables.summary_check
    assert check["round"] == "v3.0" and check["shipped"] == 3 and check["equal"] == 1 and check["differing"] == 1
    assert check["not_scored_here"] == 1 and check["files"] == ["Acme/summary.json"]
    assert check["largest_difference"]["system"] == "other" and check["largest_difference"]["ours_min"] == 22.0
    assert abs(check["largest_difference"]["relative"] - 0.5 / 22.5) < 1e-6
    assert "Acme/summary.json" not in set(tables.quarantine["path"])  # a repository file, read as a check
    tables.write(tmp_path / "interim")
    assert json.loads((tmp_path / "interim" / "summary_check.json").read_text()) == tables.summary_check


def test_a_round_without_a_summary_has_no_check(tmp_path: Path) -> None:
    assert rounds.ingest([write_archive(tmp_path / "training_results_v3.0.tar.gz", small_round())]).summary_check == []
