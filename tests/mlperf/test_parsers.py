"""Tests of pipeline.mlperf.hardware.freetext: hand-written examples, then every distinct value in the real MLPerf
archives.

The archive tests read the mirror at <repo>/../shared/mlperf at test time and skip when it is absent; no MLPerf
data is copied into the repository.
"""
from __future__ import annotations

import dataclasses
import json
import math
import re
import tarfile
from collections.abc import Callable

import pytest

from pipeline.mlperf.hardware import accelerators
from pipeline.mlperf.hardware import freetext as parsers
from pipeline.mlperf.hardware.freetext import Accelerator, HostCpu, Interconnect
from tests.conftest import MIRROR

SYSTEM_MEMBER = re.compile(r"[^/]+/[^/]+/systems/[^/]+\.json")


# ---------------------------------------------------------------------------------------------- examples

@pytest.mark.parametrize("value", [
    None, math.nan, float("nan"), "", "  ", "N/A", "n/a", "NA", "TODO", "todo", "TBD", "-", "none", "None",
    "unknown", "Unknown", "null", " N/A ",
])
def test_missing_values(value: object) -> None:
    assert parsers.is_missing(value)


@pytest.mark.parametrize("value", [0, 0.0, "0", "80 GB", "NVLink", [], {}, "Nonexistent"])
def test_present_values(value: object) -> None:
    assert not parsers.is_missing(value)


def test_pandas_missing_values() -> None:
    pandas = pytest.importorskip("pandas")
    assert parsers.is_missing(pandas.NA)
    assert parsers.is_missing(pandas.NaT)


@pytest.mark.parametrize(("value", "expected"), [
    ("8", 8), (8, 8), ("8.0", 8), (1.0, 1), (" 16 ", 16),
    ("N/A", None), ("", None), (None, None), (math.nan, None), ("0", None), (0, None), ("-2", None),
    ("8.5", None), ("eight", None), (True, None),
])
def test_parse_count(value: object, expected: int | None) -> None:
    assert parsers.parse_count(value) == expected


@pytest.mark.parametrize(("value", "expected"), [
    ("80 GB", 80.0), ("80GB", 80.0), ("80G", 80.0), ("80GiB", 80.0), ("24 GiB", 24.0),
    ("81559 MiB", 81559 / 1024), ("512 MB", 0.5), ("1048576 KB", 1.0),
    ("2TiB", 2048.0), ("1.5TB", 1536.0), ("2.0 TB", 2048.0), ("2T GB", 2048.0), ("1,024 GB", 1024.0),
    ("2x 24 GB", 48.0), ("24 x 32GB RDIMM, 3200MT/s, Dual Rank", 768.0), ("16x 64GB DDR5", 1024.0),
    ("16x64GB", 1024.0), ("512GB (16 x 32GB)", 512.0), ("22.056640625 GB", 22.056640625),
    ("96", 96.0), (80, 80.0), (1.5, 1.5), ("1,024", 1024.0),
])
def test_parse_memory_gib(value: object, expected: float) -> None:
    assert parsers.parse_memory_gib(value) == pytest.approx(expected)


@pytest.mark.parametrize("value", [
    None, "", "N/A", "TODO", "tbd", math.nan, "0 GB", 0, "See notes", "HBM3", "100000", True,
    "Node1: 2.2 TB, Node2: 1.5 TB",
])
def test_parse_memory_gib_gives_none(value: object) -> None:
    assert parsers.parse_memory_gib(value) is None


@pytest.mark.parametrize(("name", "memory", "expected"), [
    ("NVIDIA A100-SXM4-80GB (400W)", "80 GB", Accelerator("NVIDIA", "A100", "SXM", 80.0, 2020)),
    ("NVIDIA A100-PCIe-40GB(250W)", None, Accelerator("NVIDIA", "A100", "PCIe", 40.0, 2020)),
    ("NVIDIA A100 - PCIe - 80 GB", "N/A", Accelerator("NVIDIA", "A100", "PCIe", 80.0, 2020)),
    ("NVIDIA H100-SXM5-80GB", "81559 MiB", Accelerator("NVIDIA", "H100", "SXM", 81559 / 1024, 2022)),
    ("H100 NVL Tensor Core GPU (PCIe)", "94 GB", Accelerator("NVIDIA", "H100", "NVL", 94.0, 2022)),
    ("NVIDIA H100 80GB HBM3", "", Accelerator("NVIDIA", "H100", None, 80.0, 2022)),
    ("NVIDIA H200-NVL-141GB", "141GB", Accelerator("NVIDIA", "H200", "NVL", 141.0, 2024)),
    ("NVIDIA Blackwell GPU (B200-SXM-180GB)", "TODO", Accelerator("NVIDIA", "B200", "SXM", 180.0, 2024)),
    ("NVIDIA Blackwell GPU (GB200)", "186GB", Accelerator("NVIDIA", "GB200", "Superchip", 186.0, 2024)),
    ("NVIDIA GH200 Grace Hopper Superchip", "96 GB", Accelerator("NVIDIA", "GH200", "Superchip", 96.0, 2023)),
    ("Nvidia Tesla V100S-PCIe-32GB", None, Accelerator("NVIDIA", "V100S", "PCIe", 32.0, 2019)),
    ("NVIDIA V100-SXM3-32GB (450W)", None, Accelerator("NVIDIA", "V100", "SXM", 32.0, 2017)),
    ("NVIDIA A10G", "24 GB", Accelerator("NVIDIA", "A10G", "PCIe", 24.0, 2021)),
    ("NVIDIA A40", None, Accelerator("NVIDIA", "A40", "PCIe", None, 2020)),  # launched October 2020
    ("NVIDIA A10", None, Accelerator("NVIDIA", "A10", "PCIe", None, 2021)),
    ("NVIDIA A30-PCIE-24GB", None, Accelerator("NVIDIA", "A30", "PCIe", 24.0, 2021)),
    ("NVIDIA L4", None, Accelerator("NVIDIA", "L4", "PCIe", None, 2023)),
    ("NVIDIA L40S", "48 GB", Accelerator("NVIDIA", "L40S", "PCIe", 48.0, 2023)),
    ("NVIDIA RTX A5000", "2x 24 GB", Accelerator("NVIDIA", "RTX A5000", "PCIe", 24.0, 2021)),
    ("NVIDIA GeForce RTX 4090", "24GB", Accelerator("NVIDIA", "RTX 4090", "PCIe", 24.0, 2022)),
    ("AMD Radeon RX 7900 XTX", "24 GiB", Accelerator("AMD", "RX 7900 XTX", "PCIe", 24.0, 2022)),
    ("AMD Instinct MI300X 192GB HBM3", None, Accelerator("AMD", "MI300X", "OAM", 192.0, 2023)),
    ("AMD Instinct MI325X 256GB HBM3E DLC", "256 GB", Accelerator("AMD", "MI325X", "OAM", 256.0, 2024)),
    ("AMD Instinct MI250X", "128 GB", Accelerator("AMD", "MI250", "OAM", 128.0, 2021)),
    ("AMD Instinct MI350X", "294912 MiB", Accelerator("AMD", "MI350X", "OAM", 288.0, 2025)),
    ("AMD Instinct MI355X", "288G", Accelerator("AMD", "MI355X", "OAM", 288.0, 2025)),
    ("NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)", "275 GB", Accelerator("NVIDIA", "B300", "SXM", 275.0, 2025)),
    ("NVIDIA Blackwell Ultra GPU (GB300)", "288GB", Accelerator("NVIDIA", "GB300", "Superchip", 288.0, 2025)),
    ("NVIDIA RTX Pro 6000 SE PCIe 96GB", None, Accelerator("NVIDIA", "RTX Pro 6000", "PCIe", 96.0, 2025)),
    ("TPU v3", None, Accelerator("Google", "TPU-v3", None, None, 2018)),
    ("TPU-v4", "32 GiB", Accelerator("Google", "TPU-v4", None, 32.0, 2021)),
    ("TPU-v5e", None, Accelerator("Google", "TPU-v5e", None, None, 2023)),
    ("TPU-v5p", "95GB", Accelerator("Google", "TPU-v5p", None, 95.0, 2023)),
    ("TPU-trillium", None, Accelerator("Google", "TPU-v6e", None, None, 2024)),
    ("Habana Gaudi HL-205", "32 GB", Accelerator("Intel", "Gaudi", "OAM", 32.0, 2019)),
    ("Habana Gaudi2", "96 GB", Accelerator("Intel", "Gaudi2", "OAM", 96.0, 2022)),
    ("Intel(R) Gaudi(R) 2 AI Accelerator", None, Accelerator("Intel", "Gaudi2", "OAM", None, 2022)),
    ("Intel Gaudi 3", "128 GB", Accelerator("Intel", "Gaudi3", None, 128.0, 2024)),
    ("Graphcore IPU GC200", None, Accelerator("Graphcore", "GC200", None, None, 2020)),
    ("Graphcore Bow IPU", None, Accelerator("Graphcore", "Bow", None, None, 2022)),
    ("Ascend910", "32 GB", Accelerator("Huawei", "Ascend 910", None, 32.0, 2019)),
    ("Ascend 910 Pro A", None, Accelerator("Huawei", "Ascend 910", None, None, 2019)),
    ("TPU", None, Accelerator("Google", None, None, None, None)),
    ("N/A", "N/A", Accelerator(None, None, None, None, None)),
    (None, "80 GB", Accelerator(None, None, None, 80.0, None)),
])
def test_parse_accelerator(name: object, memory: object, expected: Accelerator) -> None:
    assert dataclasses.replace(parsers.parse_accelerator(name, memory), name_memory_gib=None) == expected


@pytest.mark.parametrize(("name", "memory", "in_name"), [
    ("NVIDIA H200-NVL-141GB", "96000 MiB", 141.0),  # the field's size stands in memory_gib; the name's is kept
    ("NVIDIA A100-SXM4-80GB (400W)", "80 GB", 80.0),
    ("NVIDIA L4", "24 GB", None),
    ("12345", None, None),  # a bare number is no size in a name
])
def test_parse_accelerator_keeps_the_size_its_name_states(name: str, memory: object, in_name: float | None) -> None:
    assert parsers.parse_accelerator(name, memory).name_memory_gib == in_name


def test_accelerator_families_are_the_tables_rows_in_order() -> None:
    table = accelerators.specifications()
    assert [family.name for family in parsers.ACCELERATOR_FAMILIES] == list(table.index)
    for family in parsers.ACCELERATOR_FAMILIES:
        row = table.loc[family.name]
        assert (family.pattern.pattern, family.vendor, family.year, family.only_form_factor or "") == (
            row["pattern"], row["vendor"], row["launch_year"], row["only_form_factor"])


def test_accelerator_memory_field_wins_over_the_name() -> None:
    assert parsers.parse_accelerator("NVIDIA A100-PCIE-80GB (300W)", "40 GB").memory_gib == 40.0


def test_results_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsers.parse_accelerator("NVIDIA A100").family = "H100"  # type: ignore[misc]


@pytest.mark.parametrize(("name", "vendor", "model"), [
    ("Intel(R) Xeon(R) Platinum 8480C", "Intel", "Xeon Platinum 8480C"),
    (" Intel(R) Xeon(R) Platinum 8481C", "Intel", "Xeon Platinum 8481C"),
    ("Intel(R) Xeon(R) Platinum 8480+ @ 2.00GHz", "Intel", "Xeon Platinum 8480+"),
    ("INTEL(R) XEON(R) PLATINUM 8568Y+", "Intel", "Xeon Platinum 8568Y+"),
    ("Intel(R)Xeon(R)Platinum 8490H", "Intel", "Xeon Platinum 8490H"),
    ("Intel(R) Xeon (R) Platinum 8352V", "Intel", "Xeon Platinum 8352V"),
    ("Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", "Intel", "Xeon Gold 6148"),
    ("Intel(R) Xeon(R) CPU E5-2698 v4 @ 2.20GHz", "Intel", "Xeon E5-2698 v4"),
    ("Intel(R) Xeon(R) 6960P", "Intel", "Xeon 6960P"),
    ("Intel(R) Xeon(R) code named Sapphire Rapids", "Intel", "Xeon Sapphire Rapids"),
    ("Pre-released Intel® Xeon Scalable processor codenamed Cooper Lake-6", "Intel", "Xeon Cooper Lake"),
    ("Intel(R) Xeon(R) CPU @ 2.20GHz", "Intel", "Xeon"),
    ("AMD EPYC 7763 64-Core Processor", "AMD", "EPYC 7763"),
    ("AMD EPYC 7B12", "AMD", "EPYC 7B12"),
    ("AMD EPYC 9575F", "AMD", "EPYC 9575F"),
    ("AMD EYPC 7513", "AMD", "EPYC 7513"),
    ("AMD Rome", "AMD", "EPYC Rome"),
    ("Kunpeng 920", "Huawei", "Kunpeng 920"),
    ("Neoverse-V2", "ARM", "Neoverse-V2"),
    ("NVIDIA Grace", "NVIDIA", "Grace"),
    # Names cpus.csv lists under another tier: the part's own name is reported.
    ("Intel(R) Xeon(R) Gold 8280 CPU @ 2.60GHz", "Intel", "Xeon Platinum 8280"),
    ("Intel(R) Xeon(R) Platinum 6458Q", "Intel", "Xeon Gold 6458Q"),
    ("CPUName", None, None),
    ("Node1: AMD EPYC 9755, Node2: AMD EPYC 9575F", None, None),
    ("N/A", None, None),
])
def test_parse_host_cpu_model(name: object, vendor: str | None, model: str | None) -> None:
    cpu = parsers.parse_host_cpu(name, None, None)
    assert (cpu.vendor, cpu.model) == (vendor, model)


@pytest.mark.parametrize(("name", "core_count", "processors", "expected"), [
    ("Intel(R) Xeon(R) Platinum 8480C", "56", "2", 112),
    (None, 64, 2, 128),
    (None, "64", "1", 64),
    (None, "56 (112 threads)", "2", 112),
    (None, "2x 64", "2", 128),
    (None, "2x 64", None, 128),
    ("AMD EPYC 9454 48-Core Processor", "96", "2", 96),  # above one processor's 48: a node total
    ("AMD EPYC 7763 64-Core Processor", "64", "2", 128),
    (None, "64", "N/A", None),
    (None, "N/A", "2", None),
    (None, "", "2", None),
    (None, "core_count", "2", None),
    (None, "0", "2", None),
    (None, "-4", "2", None),
    (None, "4096", "1", None),
    (None, "Node1: 128, Node2: 64", "2", None),
])
def test_parse_host_cpu_cores(name: object, core_count: object, processors: object, expected: int | None) -> None:
    assert parsers.parse_host_cpu(name, core_count, processors).cores_per_node == expected


def test_parse_host_cpu_whole_result() -> None:
    assert parsers.parse_host_cpu("AMD EPYC 7742", "64", "2") == HostCpu("AMD", "EPYC 7742", 128)


@pytest.mark.parametrize(("value", "expected"), [
    ("NVLINK Gen4 900 GB/s + NVSWITCH Gen3", Interconnect("NVLink", 7200.0)),
    ("NVLINK 3.0, NVSWITCH 2.0 600GB/s", Interconnect("NVLink", 4800.0)),
    ("4th Gen NVLINK - 900 GB /Sec ", Interconnect("NVLink", 7200.0)),
    ("18x 4th Gen NVLink, 900GB/s", Interconnect("NVLink", 7200.0)),  # 900 is already the total
    ("12xNVLink 25GB/s + 6xNVSwitch", Interconnect("NVLink", 2400.0)),
    ("NVLINK 600 GB/s + PCIe Gen5", Interconnect("NVLink", 4800.0)),
    ("6x 25GT/s NVLink", Interconnect("NVLink", None)),  # a transfer rate is not a bandwidth
    ("NVLink, NVSWITCH", Interconnect("NVLink", None)),
    ("PCIe+NVLink", Interconnect("NVLink", None)),
    ("PCIe Gen4: 64 GB / s", Interconnect("PCIe", 512.0)),
    ("PCIe gen4 x16", Interconnect("PCIe", None)),
    ("XGMI", Interconnect("Infinity Fabric", None)),
    ("Infinity Fabric Link", Interconnect("Infinity Fabric", None)),
    ("IPULINK", Interconnect("IPU-Link", None)),
    ("HCCS", Interconnect("HCCS", None)),
    ("ICI", Interconnect("ICI", None)),
    ("10x 100Gb/s Ethernet", Interconnect("Ethernet", 1000.0)),
    ("2 x 200Gbe Ethernet", Interconnect("Ethernet", 400.0)),
    ("7x 100GbE", Interconnect("Ethernet", 700.0)),
    ("400Gb/Sec", Interconnect(None, 400.0)),
    ("100Gbps", Interconnect(None, 100.0)),
    ("NDR 400", Interconnect("InfiniBand", 400.0)),
    ("HDR 200Gbps", Interconnect("InfiniBand", 200.0)),
    ("8x 400Gb", Interconnect(None, 3200.0)),
    ("1x ConnectX-5 IB EDR 100Gb/Sec", Interconnect("InfiniBand", 100.0)),
    ("8x ConnectX-7 IB NDR 400Gb/s + 200Gb/s Ethernet NIC", Interconnect("InfiniBand", 3200.0)),
    ("1x Ethernet 40Gb/Sec, 8x ConnectX-6 IB HDR 200Gb/Sec", Interconnect("InfiniBand", 1600.0)),
    ("Storage: 2x ConnectX-7 IB NDR 400Gb/s, Compute: 8x ConnectX-7 IB NDR 400Gb/s, "
     "Management: 100Gb/s Ethernet NIC", Interconnect("InfiniBand", 3200.0)),
    ("Management: 1 x 25 Gb / Sec Ethernet, Compute: 1 x ConnectX - 6 IB HDR100 100 Gb / Sec",
     Interconnect("InfiniBand", 100.0)),
    ("Compute: 8x MT43244 BlueField-3 200Gb/s, Management: 2x100Gb/s Ethernet NIC", Interconnect(None, 1600.0)),
    ("BF3 200Gbps for NS and 2xBF3 400Gbps for EW", Interconnect(None, 800.0)),
    ("NetXtreme BCM5719 Gigabit Ethernet PCIe 4x1Gb", Interconnect("Ethernet", 4.0)),
    ("Gig Ethernet", Interconnect("Ethernet", 1.0)),
    # "X550T" is a controller's model number, not 550 Tbit/s.
    ("2 x Ethernet Controller X710 for 10GBASE-T, 2 x Ethernet Controller 10G X550T", Interconnect("Ethernet", 20.0)),
    ("Intel X710 2x10GbE SFP+", Interconnect("Ethernet", 20.0)),
    ("BCM57414 NetXtreme-E 10Gb/25Gb RDMA Ethernet Controller", Interconnect("Ethernet", 25.0)),
    ("1x Cornelis Networks Omni-Path HFI Adapter 100 Series 100Gb/Sec", Interconnect("Omni-Path", 100.0)),
    ("Ethernet(RoCEv2)", Interconnect("RoCE", None)),
    ("Ethernet, Infiniband", Interconnect("InfiniBand", None)),
    ("Infiniband; Data bandwidth for GPU-PCIe: 504GB/s; PCIe-NIC: 500GB/s", Interconnect("InfiniBand", None)),
    ("18x 5th Gen NVLink, 14.4 TB/s aggregated bandwidth", Interconnect("NVLink", 115200.0)),
    # Issue 22: a lane width is no port count, a count before the rate's part counts, management NICs never do.
    ("InfiniBand 100 Gb/sec (4X EDR)", Interconnect("InfiniBand", 100.0)),
    ("InfiniBand 10 Gb/sec (4X)", Interconnect("InfiniBand", 10.0)),
    ("2x Mellanox ConnectX-6, 100Gb/s Ethernet", Interconnect("Ethernet", 200.0)),
    ("2x Mellanox ConnectX-5 Ex 100Gb/s Ethernet", Interconnect("Ethernet", 200.0)),
    ("4x ConnectX-7 IB NDR 400Gb/s", Interconnect("InfiniBand", 1600.0)),
    ("Management: 1x Ethernet 10GB/Sec", Interconnect(None, None, parsers.MANAGEMENT_ONLY)),
    ("Management: 1x ConnectX-5 Ethernet 100Gb/Sec", Interconnect(None, None, parsers.MANAGEMENT_ONLY)),
    ("Management: iDRAC9, ExpressX5 Compute: Mellanox ConnectX-5 Dual Port 40/ 100GbE QSFP Adapter PCIe",
     Interconnect("Ethernet", 200.0)),  # two ports of one adapter
    ("Storage: 1x ConnectX-6 Ethernet 100Gb/sec, Management: 1x Ethernet 1Gb/Sec, "
     "Compute: 4x ConnectX-6 IB HDR 200Gb/Sec", Interconnect("InfiniBand", 800.0)),
    ("Storage&Compute: 4x ConnectX-7 IB NDR 400Gb/s, Management: 25Gb/s Ethernet NIC",
     Interconnect("InfiniBand", 1600.0)),
    ("Infiniband:Data bandwidth for GPU-PCIe: 504GB/s; PCIe-NIC: 500GB/s", Interconnect("InfiniBand", None)),
    ("ROCE2; Data bandwidth for GPU-PCIe: 504 GB/s; PCIe-NIC: 500 GB/s", Interconnect("RoCE", None)),
    ("100Gb OPA", Interconnect("Omni-Path", 100.0)),
    ("Mellanox ConnectX-6", Interconnect(None, None)),
    ("N/A", Interconnect(None, None)),
    ("None", Interconnect(None, None)),
    ("", Interconnect(None, None)),
    (None, Interconnect(None, None)),
])
def test_parse_interconnect(value: object, expected: Interconnect) -> None:
    assert parsers.parse_interconnect(value) == expected


@pytest.mark.parametrize(("value", "ports", "port_gbps", "grade"), [
    ("8x ConnectX-7 IB NDR 400Gb/s + 200Gb/s Ethernet NIC", 8, 400.0, "NDR"),
    ("InfiniBand 100 Gb/sec (4X EDR)", 1, 100.0, "EDR"),
    ("Management: 1 x 25 Gb / Sec Ethernet, Compute: 1 x ConnectX - 6 IB HDR100 100 Gb / Sec", 1, 100.0, "HDR100"),
    ("2x Mellanox ConnectX-6, 100Gb/s Ethernet", 2, 100.0, None),
    ("Mellanox ConnectX-6", None, None, None),
])
def test_parse_interconnect_reports_how_the_bandwidth_is_made_up(value: str, ports: int | None,
                                                                 port_gbps: float | None, grade: str | None) -> None:
    interconnect = parsers.parse_interconnect(value)
    assert (interconnect.ports, interconnect.port_gbps, interconnect.grade) == (ports, port_gbps, grade)


@pytest.mark.parametrize(("value", "expected"), [
    ("MXNet NVIDIA Release 23.04", "MXNet"),
    ("MxNet NVIDIA Release 22.04", "MXNet"),
    ("PyTorch NVIDIA Release 24.04", "PyTorch"),
    ("pytorch 1.9.0a0+2ecb2c7", "PyTorch"),
    ("TensorFlow 2.4.0", "TensorFlow"),
    ("TenorFLow 2.2", "TensorFlow"),
    ("tf2.0", "TensorFlow"),
    ("research-tf", "TensorFlow"),
    ("JAX/ Pax", "JAX"),
    ("PAX", "JAX"),
    ("maxtext", "JAX"),
    ("Lingvo-JAX", "JAX"),
    ("PaddlePaddle (branch: develop, commitID: 108aeb2)", "PaddlePaddle"),
    ("mindspore-0.3.1", "MindSpore"),
    ("NVIDIA NeMo Framework Release 24.04", "PyTorch"),
    ("DGL NVIDIA Release 24.04", "PyTorch"),
    ("merlin_hugectr NVIDIA Release 22.04", "HugeCTR"),
    ("PopART Poplar SDK 2.5.1", "PopART"),
    ("TensorFlow 1.15 Poplar SDK 2.3.0", "TensorFlow"),
    ("tinygrad, commit b399d98e414bbfdff4825bf5307a56b1a98c6a90", "tinygrad"),
    ("PyTorch v1.11.0+cu113 and MosaicML composer v0.7.0", "PyTorch"),
    ("MXNet NVIDIA Release 24.04 or PyTorch NVIDIA Release 24.04", "MXNet+PyTorch"),
    ("NGC MXNet 23.04, NGC Pytorch 23.04, NGC HugeCTR 23.04", "HugeCTR+MXNet+PyTorch"),
    ("NVIDIA Release 24.09 pytorch, dgl and 23.09 pytorch", "PyTorch"),
    ("CUDA 12.0", None),
    ("NGC MLPerf v4.0", None),
    ("N/A", None),
    ("", None),
    (None, None),
])
def test_parse_framework(value: object, expected: str | None) -> None:
    assert parsers.parse_framework(value) == expected


# -------------------------------------------------------------------------------------- the real archives

def _is_parsed_accelerator(value: object) -> bool:
    accelerator = parsers.parse_accelerator(value)
    return accelerator.vendor is not None and accelerator.family is not None


def _is_parsed_cpu_model(value: object) -> bool:
    cpu = parsers.parse_host_cpu(value, None, None)
    return cpu.vendor is not None and cpu.model is not None


def _is_parsed_interconnect(value: object) -> bool:
    interconnect = parsers.parse_interconnect(value)
    # A value naming only a management network is read: it states no fabric, and says so in `note`.
    return interconnect.kind is not None or interconnect.bandwidth_gbps is not None or interconnect.note is not None


IS_PARSED: dict[str, Callable[[object], bool]] = {
    "accelerator_model_name": _is_parsed_accelerator,
    "accelerator_memory_capacity": lambda value: parsers.parse_memory_gib(value) is not None,
    "host_memory_capacity": lambda value: parsers.parse_memory_gib(value) is not None,
    "host_processor_model_name": _is_parsed_cpu_model,
    "host_processor_core_count": lambda value: parsers.parse_host_cpu(None, value, 1).cores_per_node is not None,
    "accelerator_interconnect": _is_parsed_interconnect,
    "host_networking": _is_parsed_interconnect,
    "framework": lambda value: parsers.parse_framework(value) is not None,
}


def _lenient_json(raw: bytes) -> object:
    """Published descriptions hold trailing commas and, in other copies, // comment lines."""
    text = raw.decode("utf-8", errors="replace")
    text = re.sub(r"^\s*//[^\n]*", "", text, flags=re.MULTILINE)
    text = re.sub(r",(\s*[\]}])", r"\1", text)
    return json.loads(text)


@pytest.fixture(scope="module")
def systems() -> list[dict[str, object]]:
    """Every system description in every archive of the mirror that can be read as a JSON object."""
    archives = sorted(MIRROR.glob("training_results_v*.tar.gz"))
    if not archives:
        pytest.skip(f"no MLPerf archives in {MIRROR}")
    descriptions = []
    for archive in archives:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:
                if not (member.isfile() and SYSTEM_MEMBER.fullmatch(member.name)):
                    continue
                handle = tar.extractfile(member)
                try:
                    description = _lenient_json(handle.read()) if handle is not None else None
                except json.JSONDecodeError:
                    continue
                if isinstance(description, dict):
                    descriptions.append(description)
    return descriptions


def _distinct(systems: list[dict[str, object]], field: str) -> set[object]:
    return {description[field] for description in systems if field in description}


def _is_known_unparseable(value: object) -> bool:
    return isinstance(value, str) and value.strip() in parsers.KNOWN_UNPARSEABLE


def test_archives_hold_system_descriptions(systems: list[dict[str, object]]) -> None:
    assert len(systems) > 500


@pytest.mark.parametrize("field", sorted(IS_PARSED))
def test_every_archive_value_is_parsed_missing_or_known(systems: list[dict[str, object]], field: str) -> None:
    values = _distinct(systems, field)
    assert values, f"no system description has {field}"
    unhandled = sorted(repr(value) for value in values
                       if not (parsers.is_missing(value) or _is_known_unparseable(value) or IS_PARSED[field](value)))
    assert not unhandled, (
        f"{len(unhandled)} of {len(values)} distinct {field} values are neither parsed, missing nor in "
        "parsers.KNOWN_UNPARSEABLE:\n  " + "\n  ".join(unhandled))


def test_known_unparseable_values_occur_and_are_not_parsed(systems: list[dict[str, object]]) -> None:
    stale = []
    for value in parsers.KNOWN_UNPARSEABLE:
        fields = [field for field in IS_PARSED
                  if value in {str(seen).strip() for seen in _distinct(systems, field)}]
        if not fields or any(IS_PARSED[field](value) for field in fields):
            stale.append(value)
    assert not stale, f"KNOWN_UNPARSEABLE entries absent from the archives or now parsed: {stale}"


def test_parsed_archive_values_are_plausible(systems: list[dict[str, object]]) -> None:
    implausible = []
    for description in systems:
        accelerator = parsers.parse_accelerator(description.get("accelerator_model_name"),
                                                description.get("accelerator_memory_capacity"))
        if accelerator.memory_gib is not None and not 8 <= accelerator.memory_gib <= 512:
            implausible.append(("accelerator memory GiB", accelerator.memory_gib))
        host_memory = parsers.parse_memory_gib(description.get("host_memory_capacity"))
        if host_memory is not None and not 1 <= host_memory <= 64 * 1024:
            implausible.append(("host memory GiB", host_memory))
        for field in ("accelerator_interconnect", "host_networking"):
            rate = parsers.parse_interconnect(description.get(field)).bandwidth_gbps
            if rate is not None and not 1 <= rate <= 200_000:
                implausible.append((f"{field} Gbit/s", rate))
    assert not implausible, implausible
