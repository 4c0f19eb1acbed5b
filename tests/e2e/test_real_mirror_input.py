"""The real mirror's input (skipped without it): its known defects quarantined with their reason, its repairs
noted, every v0.6 description read into hardware, its free-text values read or noted and its job-named logs scored."""
from __future__ import annotations

import pytest

from pipeline.analysis.configurations import build_configurations
from pipeline.mlperf import rounds
from tests.conftest import MIRROR
from tests.e2e.hostile_input import ingest_checked

# --------------------------------------------------------------------------------------- the real mirror

REAL_ROUNDS = ("v0.6", "v0.7", "v1.0", "v1.1", "v2.1", "v4.0", "v5.0", "v5.1")


@pytest.fixture(scope="module")
def real() -> rounds.IngestTables:
    archives = [MIRROR / f"training_results_{round_}.tar.gz" for round_ in REAL_ROUNDS]
    if not all(archive.is_file() for archive in archives):
        pytest.skip(f"the MLPerf mirror is not at {MIRROR}")
    return ingest_checked(archives)


def _reason(tables: rounds.IngestTables, round_: str, path: str) -> list[str]:
    quarantine = tables.quarantine
    return quarantine.loc[(quarantine["round"] == round_) & (quarantine["path"] == path), "reason"].tolist()


@pytest.mark.parametrize(("round_", "path", "reason"), [
    ("v0.6", "Alibaba/results/sinian/resnet/result_1.txt", "result log is empty (0 bytes)"),
    ("v0.6", "NVIDIA/results/dgx1_ngc19.05_tensorflow/minigo/result_0.txt", "result log has no run_stop line"),
    ("v0.6", "Intel/results/clx-9282-2s-x1/", "system description has no results folder"),
    ("v0.7", "Alibaba/systems/v100-256.json", "results folder has no usable system description"),
    ("v0.7", "Alibaba/results/v100-256/result_1.txt", "result log sits in the system folder"),
    ("v0.7", "Alibaba/results/n1_A100/", "system description has no results folder"),
    ("v1.0", "Dell/results/XE8545x4A100-SXM-80GB/bert/",
     "results folder holds fewer result logs than the rules require: not scored"),
    ("v1.0", "Supermicro/results/as-4142gs-tnr/unet3d/",
     "results folder holds fewer result logs than the rules require: scored from the runs present"),
    ("v1.0", "Supermicro/results/as-4142gs-tnr/unet3d/result_2.txt", "result log has no run_stop line"),
    ("v1.0", "Habana/results/SYS-420GH-TNGR/resnet/bert/result_0.txt",
     "result log is nested below a benchmark folder"),
    ("v1.1", "Azure/results/nd96amsr_a100_v4_ngc21.09_pytorch/maskrcnn/.!65506!result_4.txt",
     "hidden or temporary file"),
    ("v2.1", "Azure-HazyResearch/results/ND96amsr_A100_v4_n8_pytorch/bert/",
     "results folder holds no result logs (the published logs are absent): not scored"),
    ("v2.1", "ASUSTeK/results/ESCN4A-E11/dlrm/result_2.txt", "result log has no run_start line"),
    # The mirror holds every published result log of v4.0, v4.1 and v5.0 (job-named ones included); this
    # folder's logs were never published.
    ("v4.0", "JuniperNetworks/results/h100_n4_ngc23.09_merlin_hugectr/dlrm_dcnv2/",
     "results folder holds no result logs"),
    ("v5.1", "Dell/results/1xXE9680Lx8H200-SXM-141GB/rgat/result_7.txt", "result log has no run_stop line"),
    ("v5.1", "Dell/results/1xXE7745x8H200-NVL-141GB/", "system description has no results folder"),
])
def test_real_defects_are_quarantined_with_their_reason(real: rounds.IngestTables, round_: str, path: str,
                                                        reason: str) -> None:
    assert any(reason in text for text in _reason(real, round_, path)), _reason(real, round_, path)


@pytest.mark.parametrize(("round_", "submitter", "system", "note"), [
    ("v0.7", "Alibaba", "n32_pai_eflops", "repaired: trailing commas removed"),
    ("v1.0", "GIGABYTE", "G492-ZD2_A100_20210517.tensorflow", "accelerator_model_name given twice"),
    ("v2.1", "Azure", "ND96amsr_A100_v4_n16_pytorch", "system name also used by Azure-HazyResearch"),
    ("v4.0", "smc-ac-power", "1xSMC-H100-SXM-80GB", "system name also used by smc, smc-dc-power"),
    ("v5.0", "Dell", "1xXE9680Lx8H200-SXM-141GB", "accelerator_interconnect"),
])
def test_real_repairs_are_noted(real: rounds.IngestTables, round_: str, submitter: str, system: str,
                                note: str) -> None:
    notes = real.systems.set_index(["round", "submitter", "system"])["ingest_note"]
    assert note in notes[round_, submitter, system]


def test_real_v06_descriptions_are_all_read_and_give_hardware(real: rounds.IngestTables) -> None:
    systems = real.systems[real.systems["round"] == "v0.6"]
    assert real.tally.set_index("round").loc["v0.6", "systems_quarantined"] == 0
    line_form = systems[systems["ingest_note"].str.contains("line form", na=False)]
    assert len(line_form) == 22 and set(line_form["submitter"]) == {"NVIDIA"}
    configurations, _ = build_configurations(real.systems, real.results, real.runs)
    v06 = configurations[configurations["round"] == "v0.6"]
    assert len(v06) == 58  # every scored v0.6 result (Alibaba's has no description and no score)
    assert v06["accelerator_family"].notna().all() and v06["accelerator_count"].notna().all()
    nvidia = v06.set_index(["system", "benchmark"]).loc[("dgx2h_n96_ngc19.05_mxnet", "resnet")]
    assert (nvidia["accelerator_family"], nvidia["accelerator_count"], nvidia["n_nodes"]) == ("V100", 1536, 96)


def test_real_free_text_values_are_read_or_noted(real: rounds.IngestTables) -> None:
    configurations, notes = build_configurations(real.systems, real.results, real.runs)
    assert configurations["accelerator_count"].notna().mean() > 0.95
    assert configurations["host_memory_gib"].notna().mean() > 0.9
    heterogeneous = notes.set_index(["round", "system", "field"]).loc[
        ("v5.0", "AS-4126GS-NBR-LCC_N2", "host_memory_capacity")]
    assert heterogeneous["reason"].startswith("heterogeneous nodes")
    assert (real.tally["other_files"] <= real.tally["quarantined"]).all()


def test_real_job_named_logs_are_scored(real: rounds.IngestTables) -> None:
    """v4.0 Sustainable Metal Cloud names its logs after the job; the mirror holds them all, so the folder the
    old mirror left empty is scored from its runs."""
    results = real.results.set_index(["round", "submitter", "system", "benchmark"])
    resnet = results.loc[("v4.0", "smc", "1xSMC-H100-SXM-80GB", "resnet")]
    assert resnet["n_runs"] >= 5 and resnet["time_to_train_min"] > 0
    assert real.tally.set_index("round").loc["v4.0", ["log_files", "results"]].tolist() == [2418, 203]
