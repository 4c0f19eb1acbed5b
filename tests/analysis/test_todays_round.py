"""Today's round on the real data: the buyer's answer for each analysed benchmark counts every result the newest
round published, the results republished from an earlier round included (issue 35), and no result on the front is
beaten on both time and accelerator-hours by any of them. Skipped before `dvc repro features`."""
from __future__ import annotations

import pandas as pd
import pytest
import yaml

from pipeline.analysis import buyer
from pipeline.analysis.scope import analysed_benchmarks
from pipeline.core import paths
from pipeline.settings import AnalysisSettings
from tests.conftest import ROOT

PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))


@pytest.mark.skipif(not (ROOT / paths.CONFIGURATIONS).is_file(), reason="run `dvc repro features` first")
def test_on_the_real_data_today_counts_every_result_the_round_published() -> None:
    """Issue 35: the newest round's fastest counts the results republished from an earlier round (RetinaNet v5.1:
    1.39 min on 512 x GB200, republished from v5.0, not 10.1; R-GAT 0.837 min, not 3.15), and no result on a
    round's front is beaten on both time and accelerator-hours by any result the round published."""
    analysis = AnalysisSettings.model_validate(PARAMS["analysis"])
    configurations = pd.read_parquet(ROOT / paths.CONFIGURATIONS)
    fastest = {}
    for benchmark in analysed_benchmarks(analysis, configurations):
        published = buyer.today_published(configurations, analysis, benchmark)
        answer = buyer.buyer_answer(benchmark, published, published.iloc[0:0], [60.0], [1000.0])
        fastest[benchmark] = answer.fastest
        times, hours = published["time_to_train_min"].to_numpy(), published["accelerator_hours"].to_numpy()
        for option in answer.front:
            beaten = ((times <= option.time_to_train_min) & (hours <= option.accelerator_hours)
                      & ((times < option.time_to_train_min) | (hours < option.accelerator_hours)))
            assert not beaten.any(), (benchmark, option.label)
    if "retinanet" in fastest and fastest["retinanet"].label.startswith("v5.1"):
        assert fastest["retinanet"].time_to_train_min == pytest.approx(1.39, abs=0.005)
        assert fastest["retinanet"].republished == "republished from v5.0"
        assert fastest["retinanet"].accelerator_count == 512 and fastest["retinanet"].accelerator_family == "GB200"
    if "rgat" in fastest and fastest["rgat"].label.startswith("v5.1"):
        assert fastest["rgat"].time_to_train_min == pytest.approx(0.837, abs=0.001)
