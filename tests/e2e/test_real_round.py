"""The real stages, in order, over a real round of the mirror (v0.7, the smallest), in a scratch project."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipeline.core import paths
from tests.conftest import ROOT, run_stage


@pytest.fixture
def project(tmp_path: Path, mirror: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["fetch"].update(mirror=str(mirror), rounds=["v0.7"])
    params["analysis"].update(benchmarks=["resnet", "bert"], min_configurations=8)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def params_of(project: Path) -> dict:
    """The scratch project's params.yaml."""
    return yaml.safe_load((project / "params.yaml").read_text())


@pytest.mark.slow
def test_stages_over_a_real_round(project: Path) -> None:
    # each stage as DVC runs it: its own process, from the project folder
    for stage, *arguments in (["validate"], ["fetch"], ["ingest", "data/raw", "--out", "data/interim"], ["features"],
                              ["importance"], ["kscan"], ["cluster"], ["findings"], ["rank"],
                              ["buyer"], ["report"]):
        run_stage(stage, *arguments, cwd=project)

    results = pd.read_parquet("data/interim/results.parquet")
    assert results["round"].unique().tolist() == ["v0.7"]
    assert results["time_to_train_min"].notna().sum() > 100
    configurations = pd.read_parquet("data/processed/configurations.parquet")
    assert (configurations["accelerator_family"].notna().mean()) > 0.9
    # every scored result of a catalogued benchmark is a configuration, v0.7 Alibaba's three included
    scored = results[results["time_to_train_min"].notna() & results["benchmark_id"].notna()]
    assert len(configurations) == len(scored)
    assert (configurations["submitter"] == "Alibaba").sum() == 3
    ranking = pd.read_csv("reports/ranking.csv")
    assert set(ranking["benchmark"]) == {"resnet", "bert"}
    assert ranking.groupby("benchmark")["rank"].min().eq(1).all()
    metrics = json.loads(Path("reports/metrics.json").read_text())
    assert metrics["resnet"]["status"] == "ok" and metrics["resnet"]["n_configurations"] >= 8
    clusters = pd.read_parquet(paths.clusters_table("resnet"))
    # k = 5 clusters, a cluster of fewer than cluster.min_size results merged into its nearest: none is that small
    sizes = clusters["cluster"].value_counts()
    assert 2 <= len(sizes) <= 5 and sizes.min() >= params_of(project)["cluster"]["min_size"]
    html = Path("reports/index.html").read_text()  # the site's entry links each benchmark's page
    assert 'href="benchmarks/resnet.html"' in html and "ResNet-50 v1.5" in html
    assert "ResNet-50 v1.5" in Path("reports/benchmarks/resnet.html").read_text()
    shutil.rmtree("data/raw")  # leave the scratch project small
