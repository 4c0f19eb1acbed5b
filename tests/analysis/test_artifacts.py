"""The typed results the stages hand on (`pipeline.analysis.statistics.importance_result.ImportanceReport`,
`pipeline.analysis.statistics.clustering.Clustering`, `pipeline.analysis.statistics.ranking.Ranking`,
`pipeline.analysis.forecasting.decide.DecideSummary`): written by `Artifact.write` and read back into the same model,
and the
real reports/importance, reports/clusters, reports/rank and reports/decide files load into them and are written
again byte for byte."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipeline.analysis.forecasting.decide import DecideSummary
from pipeline.analysis.statistics import findings, importance
from pipeline.analysis.statistics.clustering import Clustering, cluster_benchmark
from pipeline.analysis.statistics.findings_result import FindingsReport
from pipeline.analysis.statistics.importance_result import ImportanceReport
from pipeline.analysis.statistics.ranking import Ranking, rank_benchmark
from pipeline.core import paths
from pipeline.core.artifacts import Artifact
from pipeline.core.errors import ContractError
from pipeline.settings import ClusterSettings, FindingsSettings, ImportanceSettings, RankSettings
from tests.conftest import ROOT, configurations, power_law

PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
CLUSTER = ClusterSettings.model_validate({**PARAMS["cluster"], "k": 3, "n_init": 3, "k_range": [2, 4], "bootstrap": 3})
FINDINGS = FindingsSettings.model_validate({**PARAMS["findings"], "bootstrap": 100})
RANK = RankSettings.model_validate(PARAMS["rank"])
SKIPPED_IMPORTANCE = ImportanceReport(benchmark="fixture", status="skipped", reason="too few", n_configurations=3,
                                      targets={}, selected_features=[])


def _configurations() -> pd.DataFrame:
    """Three hardware groups over two rounds (one result per system), with known round efficiencies."""
    groups = [(64.0, 2018.0, 0.2, "V100", 5.0), (8.0, 2022.0, 0.9, "H100", 20.0), (8.0, 2018.0, 0.5, "V100", 60.0)]
    rows = []
    for g, (count, year, efficiency, family, minutes) in enumerate(groups):
        for i in range(6):
            accelerators = count * (1 + (i % 2))
            rows.append({"round": f"v{1 + i % 2}.0", "submitter": f"S{i % 3}", "system": f"sys{g}{i}",
                         "division": "closed", "accelerator_count": accelerators, "accelerator_year": year,
                         "round_efficiency": efficiency + 0.01 * i, "accelerator_family": family,
                         "accelerator_vendor": "NVIDIA", "accelerator_form_factor": "SXM",
                         "interconnect_intra": "NVLink", "time_to_train_min": minutes * (1 + 0.1 * i),
                         "accelerator_hours": accelerators * minutes * (1 + 0.1 * i) / 60,
                         "scaling_efficiency": 0.9 if i % 2 else 1.0, "series": f"{g}{i // 2}",
                         "host_cpu_cores": 32.0 + 32 * g, "interconnect_intra_gbps": 600.0 / (1 + g)})
    return pd.DataFrame(rows)


def _results() -> tuple[pd.DataFrame, Clustering, Ranking]:
    clustered, clustering = cluster_benchmark(_configurations(), ["accelerator_count", "accelerator_year"], CLUSTER,
                                              "default", benchmark="fixture")
    _, ranking = rank_benchmark(clustered, clustering, SKIPPED_IMPORTANCE, RANK, FINDINGS)
    adjusted, correction = findings.across_benchmarks({"fixture": findings.evaluate(clustered, FINDINGS)}, FINDINGS)
    return clustered, clustering, ranking.with_findings(FindingsReport.of("fixture", adjusted["fixture"],
                                                                                   correction))


def _round_trip(result: Artifact, folder: Path) -> None:
    """model -> JSON -> model gives the model as stored; writing that again gives the same bytes."""
    first, second = folder / "first.json", folder / "second.json"
    result.write(first)
    read = type(result).read(first)
    assert isinstance(read, type(result)) and read.model_fields_set == result.model_fields_set
    read.write(second)
    assert second.read_bytes() == first.read_bytes()
    assert type(result).read(second) == read


def test_a_clustering_reads_back_into_the_same_model(tmp_path: Path) -> None:
    _, clustering, _ = _results()
    assert clustering.status == "ok" and clustering.k_verdict is not None and len(clustering.profiles) == 3
    _round_trip(clustering, tmp_path)
    clustering.write(tmp_path / "clusters.json")
    assert Clustering.read(tmp_path / "clusters.json") == clustering  # its numbers are stored rounded already


def test_a_ranking_with_its_findings_reads_back_into_the_same_model(tmp_path: Path) -> None:
    _, _, ranking = _results()
    assert ranking.analysed and ranking.latest_front_size and ranking.findings_correction is not None
    assert [item.key for item in ranking.findings] == list(findings.CLAIMS)
    assert ranking.findings[0].bands and isinstance(ranking.findings[0].tests[0], findings.Test)
    _round_trip(ranking, tmp_path)
    assert set(ranking.scalars()) >= {"n_configurations", "latest_front_size", "silhouette", "findings_supported"}


def test_the_findings_stage_file_reads_back_and_gives_the_ranking_its_findings(tmp_path: Path) -> None:
    clustered, _, ranking = _results()
    adjusted, correction = findings.across_benchmarks({"fixture": findings.evaluate(clustered, FINDINGS)}, FINDINGS)
    report = FindingsReport.of("fixture", adjusted["fixture"], correction)
    _round_trip(report, tmp_path)
    report.write(tmp_path / "findings.json")
    assert ranking.with_findings(FindingsReport.read(tmp_path / "findings.json")) == ranking


def test_an_importance_result_reads_back_into_the_same_model(tmp_path: Path) -> None:
    settings = ImportanceSettings.model_validate({**PARAMS["importance"], "bootstrap": 100, "permutation_repeats": 3,
                                          "min_families": 2})
    rows = power_law("H100", [8, 16, 32, 64], 100.0, -0.9) + power_law("A100", [8, 16, 32], 200.0, -0.8)
    result = importance.analyse(configurations(rows), settings, min_configurations=10, benchmark="fixture")
    assert result.status == "ok" and result.gate is not None and result.targets["log_time_to_train"].importance_draws
    _round_trip(result, tmp_path)
    result.write(tmp_path / "importance.json")
    assert ImportanceReport.read(tmp_path / "importance.json") == result  # the draws are never stored
    assert "importance_draws" not in (tmp_path / "importance.json").read_text()


def test_a_skipped_result_writes_only_what_its_step_reached(tmp_path: Path) -> None:
    clustered, clustering = cluster_benchmark(_configurations().head(2), ["accelerator_count"], CLUSTER,
                                              benchmark="tiny")
    _, ranking = rank_benchmark(clustered, clustering, SKIPPED_IMPORTANCE, RANK, FINDINGS)
    assert set(clustering.as_json()) == {"benchmark", "status", "reason", "k", "features", "profiles",
                                         "diagnostics", "stability_ari"}
    assert ranking.as_json() == {"benchmark": "tiny", "status": "skipped", "reason": clustering.reason}
    _round_trip(clustering, tmp_path)
    _round_trip(ranking, tmp_path)


def test_a_stale_or_missing_file_is_a_contract_error(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="not found: the rank stage writes it"):
        Ranking.read(tmp_path / "rank.json")
    (tmp_path / "clusters.json").write_text('{"benchmark": "x", "status": "ok", "k": 5, "old_key": 1}')
    with pytest.raises(ContractError, match="old_key: Extra inputs are not permitted"):
        Clustering.read(tmp_path / "clusters.json")
    (tmp_path / "clusters.json").write_text('{"benchmark": "x", "status": "ok"}')
    with pytest.raises(ContractError, match="k: Field required"):
        Clustering.read(tmp_path / "clusters.json")


@pytest.mark.parametrize(("folder", "model"), [(paths.IMPORTANCE, ImportanceReport), (paths.CLUSTERS, Clustering),
                                               (paths.RANK, Ranking), (paths.DECIDE, DecideSummary)])
def test_the_real_outputs_load_into_the_models_and_are_written_again_byte_for_byte(
        folder: Path, model: type[Artifact], tmp_path: Path) -> None:
    files = sorted(path for path in (ROOT / folder).glob("*.json") if not path.name.endswith(".models.json"))
    if not files:
        pytest.skip(f"no {folder}/*.json: run `dvc repro` first")
    for path in files:
        result = model.read(path)
        assert result.benchmark == path.stem
        result.write(tmp_path / path.name)
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path
