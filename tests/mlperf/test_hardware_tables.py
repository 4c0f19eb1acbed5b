"""The package's reference tables (accelerators.csv, cpus.csv, links.csv), the checks of the description features
against them (issue 22: one value per piece of hardware, in one convention per field), and the audit.

The examples are the description texts quoted in issue 22. The real-round test reads the mirror at
<repo>/../shared/mlperf and skips when it is absent.
"""
from __future__ import annotations

import json
import math
import re
import tarfile
from pathlib import Path

import pandas as pd
import pytest

from pipeline.core.errors import ContractError
from pipeline.mlperf.hardware import accelerators, audit, cpus, freetext, links
from pipeline.mlperf.hardware.description import NOTE_COLUMNS, hardware_features

SYSTEM_MEMBER = re.compile(r"[^/]+/[^/]+/systems/[^/]+\.json")


# ------------------------------------------------------------------------------------------------ the tables

def test_the_packaged_tables_load() -> None:
    assert len(accelerators.specifications()) >= 39
    assert cpus.cores_per_socket("Xeon Gold 6248R") == 24
    assert cpus.cores_per_socket("Grace") == 72
    assert cpus.cores_per_socket("Xeon") is None
    assert set(links.link_table()["family"]) <= set(accelerators.specifications().index)


def test_siblings_share_a_generation() -> None:
    table = accelerators.specifications()["generation"]
    assert table["B200"] == table["GB200"] == "Blackwell" and table["B300"] == table["GB300"] == "Blackwell Ultra"
    assert table["H100"] == table["H200"] == table["GH200"] == "Hopper"
    assert table["MI300X"] == table["MI325X"] != table["MI350X"] == table["MI355X"]
    assert table["Gaudi2"] != table["Gaudi3"] and table["A100"] == "Ampere" and table["V100"] == "Volta"
    families = pd.Series(["H200", "unlisted", None])
    assert accelerators.generations(families).tolist() == ["Hopper", "unlisted", "?"]


def test_the_peaks_by_precision_are_dense_and_sourced() -> None:
    table = accelerators.specifications()
    # every family with an MLPerf result and an FP8 or 4-bit format has its dense peaks (half the sparse figures)
    assert table.loc[["H100", "H200", "B200", "GB200", "B300", "GB300"], "fp8_tflops"].tolist() == [
        1979, 1979, 4500, 5000, 4500, 5000]
    assert table.loc[["MI300X", "MI325X", "MI350X", "MI355X"], "fp8_tflops"].tolist() == [2615, 2615, 4614, 5033]
    assert table.loc[["B200", "GB200", "B300", "GB300", "MI350X", "MI355X"], "fp4_tflops"].tolist() == [
        9000, 10000, 13500, 15000, 9228, 10066]
    # GB300 against GB200: the same BF16 and FP8 peaks, 1.5 times the 4-bit one
    assert table.at["GB300", "fp8_tflops"] == table.at["GB200", "fp8_tflops"]
    assert table.at["GB300", "fp4_tflops"] / table.at["GB200", "fp4_tflops"] == 1.5
    # no 4-bit peak where the hardware has none; none below the FP8 peak, none of those below BF16
    assert table.loc[["H100", "A100", "TPU-v6e", "MI300X", "Gaudi3"], "fp4_tflops"].isna().all()
    peaks = table[accelerators.PEAKS]
    assert not (peaks["fp4_tflops"] < peaks["fp8_tflops"]).any()
    assert not (peaks["fp8_tflops"] < peaks["bf16_tflops"]).any()
    # each figure beyond BF16 is said where it comes from
    for family in table.index[table["fp4_tflops"].notna()]:
        assert "FP4" in table.at[family, "note"], family


def test_the_a40_launched_in_2020() -> None:
    assert accelerators.specifications().at["A40", "launch_year"] == 2020


def _spec_rows() -> pd.DataFrame:
    with (Path(accelerators.__file__).parent / accelerators.SPEC_FILE).open(encoding="utf-8") as handle:
        return pd.read_csv(handle, dtype=dict.fromkeys(accelerators.TEXT_COLUMNS, str), keep_default_na=False,
                           na_values={c: [""] for c in accelerators.COLUMNS if c not in accelerators.TEXT_COLUMNS})


def _cpu_rows() -> pd.DataFrame:
    return pd.DataFrame([
        {"model": "EPYC 7742", "vendor": "AMD", "cores_per_socket": 64, "aliases": "",
         "source": "https://www.amd.com/", "note": ""},
        {"model": "Xeon Platinum 8280", "vendor": "Intel", "cores_per_socket": 28, "aliases": "Xeon Gold 8280",
         "source": "https://www.intel.com/", "note": ""},
    ])


def _link_rows() -> pd.DataFrame:
    return pd.DataFrame([{"family": "H100", "form_factor": "SXM", "link": "NVLink", "link_generation": "NVLink 4",
                          "gbps_per_direction": 3600.0, "source": "https://www.nvidia.com/", "note": ""}])


@pytest.mark.parametrize(("change", "message"), [
    (lambda t: t.drop(columns="pattern"), "columns must be"),
    (lambda t: pd.concat([t, t.iloc[[0]]]), "listed twice: V100S"),
    (lambda t: t.assign(pattern=t["pattern"].where(t["family"] != "A100", r"\bA100(")), "A100 is not a valid regular"),
    (lambda t: t.assign(pattern=t["pattern"].where(t["family"] != "A100", "")), "A100 has no pattern"),
    (lambda t: t.assign(source=t["source"].where(t["family"] != "L4", "http://nvidia.com")), "missing for L4"),
    (lambda t: t.assign(only_form_factor=t["only_form_factor"].where(t["family"] != "L4", "Card")), "found Card"),
    (lambda t: t.assign(launch_year=t["launch_year"].where(t["family"] != "L4", float("nan"))), "launch_year"),
    (lambda t: t.assign(generation=t["generation"].where(t["family"] != "L4", "")), "needs a generation"),
    (lambda t: t.assign(fp8_tflops=t["fp8_tflops"].where(t["family"] != "H100", 500.0)),
     "fp8_tflops must be at least bf16_tflops where both are present; not so for H100"),
    (lambda t: t.assign(fp4_tflops=t["fp4_tflops"].where(t["family"] != "B300", 4000.0)),
     "fp4_tflops must be at least fp8_tflops where both are present; not so for B300"),
])
def test_the_accelerator_table_loader_rejects_a_bad_table(change, message: str) -> None:
    with pytest.raises(ContractError, match=re.escape(message) if "(" not in message else message):
        accelerators.validate(change(_spec_rows()))


@pytest.mark.parametrize(("change", "message"), [
    (lambda t: t.drop(columns="aliases"), "columns must be"),
    (lambda t: pd.concat([t, t.iloc[[0]]]), "listed twice: EPYC 7742"),
    (lambda t: t.assign(cores_per_socket=[64, 0]), "positive whole number; not so for Xeon Platinum 8280"),
    (lambda t: t.assign(cores_per_socket=[64, 27.5]), "positive whole number"),
    (lambda t: t.assign(aliases=["Xeon Gold 8280", "Xeon Gold 8280"]), "an alias must name one model"),
    (lambda t: t.assign(aliases=["", "EPYC 7742"]), "an alias must name one model"),
    (lambda t: t.assign(source=["https://www.amd.com/", "www.intel.com"]), "missing for Xeon Platinum 8280"),
    (lambda t: t.assign(model=["EPYC 7742", "Xeon Platinum 8174"]), "cannot be listed: Xeon Platinum 8174"),
])
def test_the_cpu_table_loader_rejects_a_bad_table(change, message: str) -> None:
    with pytest.raises(ContractError, match=re.escape(message)):
        cpus.validate(change(_cpu_rows()))


def test_the_cpu_table_loader_accepts_a_good_table() -> None:
    assert cpus.validate(_cpu_rows()).at["Xeon Platinum 8280", "cores_per_socket"] == 28


@pytest.mark.parametrize(("change", "message"), [
    (lambda t: t.drop(columns="note"), "columns must be"),
    (lambda t: pd.concat([t, t]), "listed twice: H100 / SXM / NVLink"),
    (lambda t: t.assign(family="H1000"), "families missing from accelerators.csv: H1000"),
    (lambda t: t.assign(form_factor="Card"), "found Card"),
    (lambda t: t.assign(link="NVLink5"), "found NVLink5"),
    (lambda t: t.assign(gbps_per_direction=-1.0), "positive number"),
    (lambda t: t.assign(source=""), "missing for H100"),
])
def test_the_link_table_loader_rejects_a_bad_table(change, message: str) -> None:
    with pytest.raises(ContractError, match=re.escape(message)):
        links.validate(change(_link_rows()))


@pytest.mark.parametrize(("family", "form_factor", "kind", "stated", "expected"), [
    ("H100", "SXM", "NVLink", math.nan, ("NVLink", 3600.0)),
    ("A100", None, "NVLink", 4800.0, ("NVLink", 2400.0)),  # SXM and the PCIe bridge agree
    ("H100", None, "NVLink", 7200.0, ("NVLink", 3600.0)),  # only SXM's 3600 explains 7200 (both directions)
    ("H100", None, "NVLink", math.nan, None),  # SXM 3600 or NVL 2400: cannot tell
    ("Gaudi2", "OAM", "Ethernet", 2400.0, ("RoCE", 2100.0)),
    ("Gaudi", None, "Ethernet", 1000.0, ("RoCE", 700.0)),
    ("H100", "SXM", "PCIe", math.nan, ("NVLink", 3600.0)),  # an SXM module's peers are on NVLink
    ("A100", "PCIe", "PCIe", math.nan, ("PCIe", 256.0)),
    ("A100", "PCIe", "Ethernet", math.nan, None),  # a PCIe card has two links: no guess
    ("A10G", "PCIe", "NVLink", math.nan, None),  # the A10G has no NVLink
    ("TPU-v5p", None, "ICI", math.nan, ("ICI", 4800.0)),
    ("TPU-v5p", None, None, math.nan, None),
])
def test_intra_link(family: str, form_factor: str | None, kind: str | None, stated: float,
                    expected: tuple[str, float] | None) -> None:
    link = links.intra_link(family, form_factor, kind, stated, 8.0)
    assert (None if link is None else (link.link, link.gbps_per_direction)) == expected


# --------------------------------------------------------------------------------- the description features

def _systems(*rows: dict[str, object]) -> pd.DataFrame:
    """A systems table: round, submitter, system, then the description fields given (text, as ingested)."""
    frame = pd.DataFrame([{"round": "v5.0", "submitter": "Acme", "system": f"box{i}", "number_of_nodes": "1",
                           "accelerators_per_node": "8", "host_processors_per_node": "2", **row}
                          for i, row in enumerate(rows)])
    return frame.astype(object).where(frame.notna(), None)


def _one(**fields: object) -> tuple[pd.Series, pd.DataFrame]:
    features, notes = hardware_features(_systems(fields))
    assert list(notes.columns) == NOTE_COLUMNS
    return features.iloc[0], notes


@pytest.mark.parametrize(("name", "text", "gbps", "reason"), [
    ("NVIDIA B200-SXM-180GB", "18x 5th Gen NVLink, 14.4 TB/s aggregated bandwidth", 7200.0,
     "both directions summed over the node's 8 accelerators"),
    ("NVIDIA B200-SXM-180GB", "NVLINK Gen5 1800 GB/s + NVSWITCH Gen5", 7200.0, "the sum of both directions"),
    ("NVIDIA A100-SXM4-80GB", "NVLINK 3.0, NVSWITCH 2.0 600GB/s", 2400.0, "the sum of both directions"),
    ("NVIDIA A100-SXM4-80GB", "12xNVLink 25GB/s + 6xNVSwitch", 2400.0, None),  # 12 links x 25 GB/s each way
    ("NVIDIA H100-SXM5-80GB", "NVLink", 3600.0, "names NVLink without a rate"),
    ("NVIDIA H100-SXM5-80GB", "PCIe 4.0", 3600.0, "which is not how a H100 SXM reaches"),
    ("NVIDIA V100-SXM2-32GB", "NVLINK2.0 300GB/s", 1200.0, "the sum of both directions"),
    ("NVIDIA A100-PCIe-80GB", "PCIe Gen4: 64 GB / s", 256.0, "the sum of both directions"),
    ("Habana Gaudi2", "24x 100Gb/s Ethernet", 2100.0, "on-chip Ethernet ports run RoCE"),
    ("NVIDIA A10G", "NVIDIA NVLink", math.nan, None),  # not in links.csv: kept as stated
    ("Graphcore IPU GC200", "IPULINK", 1280.0, "names IPU-Link without a rate"),
])
def test_intra_node_bandwidth_is_per_accelerator_and_direction(name: str, text: str, gbps: float,
                                                                reason: str | None) -> None:
    features, notes = _one(accelerator_model_name=name, accelerator_interconnect=text)
    assert features["interconnect_intra_gbps"] == pytest.approx(gbps, nan_ok=True)
    about = notes[notes["field"] == "accelerator_interconnect"]
    if reason is None:
        assert about.empty
    else:
        assert len(about) == 1 and reason in about["reason"].iloc[0] and about["value"].iloc[0] == text


@pytest.mark.parametrize(("name", "memory", "gib", "corrected"), [
    ("NVIDIA H200-NVL-141GB", "96000 MiB", 141.0, True),  # v5.1 Dell: another part's size in the memory field
    ("NVIDIA A100-PCIE-80GB", "40 GB", 80.0, True),  # v1.1 Dell
    ("NVIDIA B200-SXM-180GB", "192 GB", 192.0, False),  # physical against usable HBM of one part: the field stands
    ("NVIDIA A100-SXM4-40GB", "40 GB", 40.0, False),  # a variant the table does not hold, stated alike twice
    ("NVIDIA H100-SXM5-80GB", "81559 MiB", 81559 / 1024, False),
])
def test_a_memory_field_naming_another_part_yields_to_the_model_name(name: str, memory: str, gib: float,
                                                                      corrected: bool) -> None:
    features, notes = _one(accelerator_model_name=name, accelerator_memory_capacity=memory)
    assert features["accelerator_memory_gib"] == pytest.approx(gib)
    about = notes[notes["field"] == "accelerator_memory_capacity"]
    assert len(about) == corrected and (not corrected or "model name states" in about["reason"].iloc[0])


def test_one_b200_gets_one_intra_node_value_whatever_the_convention() -> None:
    texts = ["18x 5th Gen NVLink, 14.4 TB/s aggregated bandwidth", "NVLINK Gen5 1800 GB/s + NVSWITCH Gen5",
             "NVLINK Gen5", "NVLINK Gen4 900 GB/s + NVSWITCH Gen3"]
    features, _ = hardware_features(_systems(*({"accelerator_model_name": "NVIDIA B200-SXM-180GB",
                                                "accelerator_interconnect": text} for text in texts)))
    assert features["interconnect_intra_gbps"].tolist() == [7200.0] * 4
    assert features["interconnect_intra"].tolist() == ["NVLink"] * 4


@pytest.mark.parametrize(("text", "kind", "gbps"), [
    ("InfiniBand 100 Gb/sec (4X EDR)", "InfiniBand", 100.0),
    ("2x Mellanox ConnectX-6, 100Gb/s Ethernet", "Ethernet", 200.0),
    ("Storage: 2x ConnectX-7 IB NDR 400Gb/s, Compute: 8x ConnectX-7 IB NDR 400Gb/s, "
     "Management: 100Gb/s Ethernet NIC", "InfiniBand", 3200.0),
])
def test_inter_node_bandwidth_is_ports_times_the_port_rate(text: str, kind: str, gbps: float) -> None:
    features, notes = _one(accelerator_model_name="NVIDIA H100-SXM5-80GB", host_networking=text)
    assert (features["interconnect_inter"], features["interconnect_inter_gbps"]) == (kind, gbps)
    assert notes.empty


def test_a_management_nic_is_no_inter_node_fabric() -> None:
    features, notes = _one(accelerator_model_name="NVIDIA V100-SXM2-16GB",
                           host_networking="Management: 1x Ethernet 10GB/Sec")
    assert features[["interconnect_inter", "interconnect_inter_gbps"]].isna().all()
    assert notes[["field", "value"]].values.tolist() == [["host_networking", "Management: 1x Ethernet 10GB/Sec"]]
    assert "management or storage network" in notes["reason"].iloc[0]


@pytest.mark.parametrize(("model", "cores", "sockets", "expected", "reason"), [
    ("Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz", "48", "2", 48.0, "threads counted as cores"),
    ("AMD EPYC 7742", "64", "2", 128.0, None),
    ("AMD EPYC 7742", "128", "2", 128.0, "threads counted as cores"),  # 2 x 128 = 256 stated
    ("AMD EPYC 7V12 64-Core Processor", "48", "2", 128.0, "a cloud VM's share"),
    ("Intel(R) Xeon(R) Platinum 8260L CPU @ 2.40GHz", None, "2", 48.0, "no core count stated"),
    ("Intel(R) Xeon(R) CPU @ 2.20GHz", "56", "2", 112.0, None),  # no single part: kept as stated
    ("Kunpeng 920", "48", "4", 192.0, None),
])
def test_host_cores_are_sockets_times_the_parts_cores(model: str, cores: str | None, sockets: str,
                                                      expected: float, reason: str | None) -> None:
    features, notes = _one(accelerator_model_name="NVIDIA A100-SXM4-80GB", host_processor_model_name=model,
                           host_processor_core_count=cores, host_processors_per_node=sockets)
    assert features["host_cpu_cores"] == expected
    about = notes[notes["field"] == "host_processor_core_count"]
    assert (about.empty if reason is None else reason in about["reason"].iloc[0])


def test_a_grace_superchip_host_is_two_72_core_graces_per_tray() -> None:
    features, notes = _one(accelerator_model_name="NVIDIA Blackwell GPU (GB200)", accelerators_per_node="4",
                           host_processor_model_name="Neoverse-V2", host_processor_core_count="72",
                           host_processors_per_node="2")
    assert (features["host_cpu_vendor"], features["host_cpu_model"], features["host_cpu_cores"]) == \
        ("NVIDIA", "Grace", 144.0)
    assert notes.empty


def test_a_core_count_equal_to_the_vcpus_of_an_unlisted_part_is_threads() -> None:
    features, notes = _one(accelerator_model_name="TPU-v4", host_processor_model_name="AMD Rome",
                           host_processor_core_count="256", host_processor_vcpu_count="256")
    assert math.isnan(features["host_cpu_cores"])
    assert "threads" in notes.loc[notes["field"] == "host_processor_core_count", "reason"].iloc[0]


def test_notes_are_sorted_and_deterministic() -> None:
    rows = [{"accelerator_model_name": "NVIDIA H100-SXM5-80GB", "accelerator_interconnect": "NVLink",
             "host_networking": "Management: 1x Ethernet 1 Gb/Sec", "host_processor_model_name": "AMD EPYC 7742",
             "host_processor_core_count": "128"}] * 2
    first = hardware_features(_systems(*rows))
    second = hardware_features(_systems(*reversed(rows)))
    assert first[1].equals(second[1])
    assert list(first[1]["field"]) == ["accelerator_interconnect", "host_networking", "host_processor_core_count"] * 2


# ------------------------------------------------------------------------------------------------- the audit

def test_the_audit_finds_one_value_per_hardware_and_lists_the_rest() -> None:
    systems = _systems(
        {"accelerator_model_name": "NVIDIA B200-SXM-180GB", "accelerator_interconnect": "NVLINK Gen5 1800 GB/s",
         "host_processor_model_name": "Intel(R) Xeon(R) CPU @ 2.20GHz", "host_processor_core_count": "56",
         "host_networking": "8x ConnectX-7 IB NDR 400Gb/s"},
        {"accelerator_model_name": "NVIDIA B200-SXM-180GB", "accelerator_interconnect": "18x 5th Gen NVLink, 14.4TB/s",
         "host_processor_model_name": "Intel(R) Xeon(R) CPU @ 2.20GHz", "host_processor_core_count": "56",
         "host_networking": "4x ConnectX-7 IB NDR 400Gb/s"},
        {"accelerator_model_name": "NVIDIA B200-SXM-180GB", "accelerator_interconnect": "NVLink",
         "host_processor_model_name": "Intel(R) Xeon(R) CPU @ 2.20GHz", "host_processor_core_count": "24",
         "host_networking": "InfiniBand 100 Gb/sec (4X EDR)"},
    )
    table = audit.audit_table(systems)
    intra, cores, port = audit.CHECKS
    assert audit.share_holding(table, intra) == (3, 3)
    assert audit.share_holding(table, port) == (3, 3)
    assert audit.share_holding(table, cores) == (2, 3)
    groups, exceptions = audit.consistency(table, cores)
    assert groups[["hardware", "distinct", "values"]].values.tolist() == [["Xeon", 2, "24 (1), 56 (2)"]]
    assert exceptions["system"].tolist() == ["box2"] and "24 cores where 2 of the 3" in exceptions["reason"].iloc[0]
    assert audit.unchecked(table)["hardware"].tolist() == ["Xeon"] * 3


def test_golden_mismatches() -> None:
    table = audit.audit_table(_systems({"accelerator_model_name": "NVIDIA H100-SXM5-80GB",
                                        "accelerator_interconnect": "NVLINK Gen4 900 GB/s"}))
    golden = pd.DataFrame([{"round": "v5.0", "submitter": "Acme", "system": "box0", "accelerator_family": "H100",
                            "interconnect_intra_gbps": "3600", "host_cpu_cores": "", "interconnect_inter": "RoCE"},
                           {"round": "v5.0", "submitter": "Acme", "system": "gone", "accelerator_family": "H100",
                            "interconnect_intra_gbps": "", "host_cpu_cores": "", "interconnect_inter": ""}])
    found = audit.golden_mismatches(golden, table)
    assert found[["system", "field", "expected", "got"]].values.tolist() == [
        ["box0", "interconnect_inter", "RoCE", "missing"], ["gone", "(description)", "present", "absent"]]


# -------------------------------------------------------------------------------------------- a real round

def _cpu_names(archive: Path) -> set[str]:
    names = set()
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            if member.isfile() and SYSTEM_MEMBER.fullmatch(member.name) and (handle := tar.extractfile(member)):
                try:
                    description = json.loads(re.sub(r",(\s*[\]}])", r"\1", handle.read().decode("utf-8", "replace")))
                except json.JSONDecodeError:
                    continue
                if isinstance(description, dict) and isinstance(description.get("host_processor_model_name"), str):
                    names.add(description["host_processor_model_name"])
    return names


@pytest.mark.parametrize("round_", ["v0.7", "v5.0"])
def test_every_cpu_model_of_a_real_round_resolves(mirror: Path, round_: str) -> None:
    """Each host CPU a real round names is in cpus.csv, or is a name it cannot list, with the reason."""
    models = {freetext.parse_host_cpu(name, None, None).model for name in _cpu_names(
        mirror / f"training_results_{round_}.tar.gz")} - {None}
    assert models
    unresolved = sorted(model for model in models
                        if cpus.cores_per_socket(model) is None and model not in cpus.NOT_LISTED)
    assert not unresolved, f"CPU models of {round_} neither in cpus.csv nor in cpus.NOT_LISTED: {unresolved}"
