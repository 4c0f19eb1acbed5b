"""Normalise the free-text fields of MLPerf Training system descriptions.

Every parser is pure and total: it accepts whatever a JSON field holds (str, int, float, None, ...) and returns
a normalised value, or None when the field is missing (see `is_missing`) or states nothing usable. A missing
value is never turned into 0.

Unit rules:
- Memory (`parse_memory_gib`) is reported in GiB. Decimal and binary prefixes are read alike, because vendors
  write "80 GB" for 80 GiB of HBM and "2 TB" for 2 TiB of DIMMs: GB = GiB = G, TB = TiB = T -> x 1024,
  MB = MiB = M -> / 1024, KB = KiB = K -> / 1024**2. A multiplier in front of a size gives the total
  ("24 x 32GB RDIMM" -> 768); only the first size is read, so "512GB (16 x 32GB)" -> 512. A bare number is
  taken as GB, up to `BARE_NUMBER_MAX_GB`; beyond that its unit cannot be guessed and the result is None.
- Bandwidth (`parse_interconnect`) is reported in Gbit/s with decimal prefixes: b = bit, B = byte
  ("900 GB/s" -> 7200), Mb = 0.001 Gb, Tb = 1000 Gb. InfiniBand speed grades stand for their link rate when
  no number is given ("NDR" -> 400, "HDR100" -> 100). A link or port count in front of a rate gives the total
  ("8x ConnectX-7 IB NDR 400Gb/s" -> 3200, "2x ConnectX-6, 100Gb/s" -> 200, a "Dual Port" adapter -> 2 ports);
  an InfiniBand lane width is no count ("100 Gb/sec (4X EDR)" -> 100). Only the network the accelerators use
  counts: the "Compute:" part of a labelled value, never a management or storage NIC, never a PCIe bus rate.
  These parsers report the figure as the text states it. The features' conventions are then applied by
  `pipeline.mlperf.hardware.description` against the package's tables: interconnect_intra_gbps is per accelerator and
  direction (links.csv: a stated "900 GB/s" NVLink of an H100, the sum of both directions, becomes 3600), and
  interconnect_inter_gbps per node = ports x the rate of one port, as parsed here.
- Host CPU cores (`parse_host_cpu`) are per node, as the description's arithmetic gives them (core count per
  processor x processors); `pipeline.mlperf.hardware.description` replaces them with sockets x the model's cores per
  socket where cpus.csv knows the model.
- Accelerator families, vendors, single form factors and launch years come from accelerators.csv
  (`pipeline.mlperf.hardware.accelerators`), CPU model aliases from cpus.csv (`pipeline.mlperf.hardware.cpus`).
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from pipeline.mlperf.hardware import accelerators, cpus

MISSING_TOKENS: frozenset[str] = frozenset({
    "", "-", "--", "?", "n/a", "na", "n.a.", "none", "null", "nil", "nan", "todo", "tbd", "tba",
    "unknown", "not applicable", "not available",
})

KNOWN_UNPARSEABLE: dict[str, str] = {
    "CPUName": "template placeholder left unfilled",
    "core_count": "template placeholder left unfilled",
    "TPU": "names the vendor (Google) but not the TPU generation",
    "Node1: 2.2 TB, Node2: 1.5 TB": "heterogeneous nodes: there is no single per-node value",
    "Node1: AMD EPYC 9755, Node2: AMD EPYC 9575F": "heterogeneous nodes: there is no single per-node value",
    "Node1: 128, Node2: 64": "heterogeneous nodes: there is no single per-node value",
    "Mellanox ConnectX-6": "NIC model only: ConnectX runs InfiniBand or Ethernet, and no rate is given",
    "MT2910 Family [ConnectX-7]": "NIC model only: ConnectX runs InfiniBand or Ethernet, and no rate is given",
    "CUDA 11.6": "names the GPU toolkit, not the training framework",
    "CUDA 12.0": "names the GPU toolkit, not the training framework",
    "CUDA 12.3": "names the GPU toolkit, not the training framework",
    "ROCm 6.4.0-47": "names the GPU toolkit, not the training framework",
    "NGC MLPerf v2.1/2.0": "names NVIDIA's MLPerf container release, which bundles several frameworks",
    "NGC MLPerf Training v3.0": "names NVIDIA's MLPerf container release, which bundles several frameworks",
    "NGC MLPerf Training v3.1": "names NVIDIA's MLPerf container release, which bundles several frameworks",
    "NGC MLPerf v4.0": "names NVIDIA's MLPerf container release, which bundles several frameworks",
    "custom": "says the interconnect is custom, but neither its kind nor its rate",
    "SSD": "names a storage medium, not a memory size",
    "2 x MT2894 Family [ConnectX-6 Lx], 2 x MT2910 Family [ConnectX-7]":
        "NIC models only: ConnectX runs InfiniBand or Ethernet, and no rate is given",
}

BARE_NUMBER_MAX_GB = 16 * 1024
MAX_CORES_PER_NODE = 2048
# Published values are under 200 characters; a longer text states no single value, and would make the
# patterns below slow.
MAX_TEXT_CHARS = 1000


def is_missing(value: object) -> bool:
    """True for None, NaN and placeholder strings such as "", "N/A", "TODO" (case and spaces ignored)."""
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip().casefold() in MISSING_TOKENS
    if isinstance(value, float):
        return math.isnan(value)
    try:
        return bool(value != value)  # NaN-like scalars of other types
    except TypeError:  # pandas.NA refuses to be truth-tested
        return True
    except ValueError:  # an array is not a placeholder
        return False


def _as_text(value: object) -> str | None:
    """The value as stripped text, or None when it is missing, not a scalar a description can hold, or longer
    than `MAX_TEXT_CHARS`."""
    if is_missing(value) or isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        return text if len(text) <= MAX_TEXT_CHARS else None
    if isinstance(value, float):
        return str(value)
    if isinstance(value, int):
        # int() and str() refuse thousands of digits; such a number is no count or size anyway.
        return str(value) if value.bit_length() <= 64 else None
    return None


def _clean_trademarks(text: str) -> str:
    return " ".join(re.sub(r"\((?:R|TM)\)|[®™]", " ", text, flags=re.IGNORECASE).split())


# A digit run that does not continue a word or a decimal; "x" after a digit may precede it, as in "2x100Gb/s"
# or "16x64GB", but a model number such as "X550T" (an Ethernet controller) is no size or rate.
_NUMBER_START = r"(?:(?<![0-9A-Za-z_.])|(?<=\d[xX×]))"
_NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
# Several nodes described one by one ("Node1: 2.2 TB, Node2: 1.5 TB") have no single per-node value.
_PER_NODE_LISTING = re.compile(r"\bnode\s*\d+\s*:", re.IGNORECASE)


def _number(text: str) -> float:
    return float(text.replace(",", ""))


# ---------------------------------------------------------------------------------------------------- counts

_WHOLE_NUMBER = re.compile(r"\d+(?:\.0*)?")


def parse_count(value: object) -> int | None:
    """A positive whole count from "8", 8, "8.0" or 8.0; None for missing, zero, negative or fractional values."""
    text = _as_text(value)
    if text is None or not _WHOLE_NUMBER.fullmatch(text):
        return None
    number = float(text)
    if not math.isfinite(number):  # hundreds of digits: beyond any float, and no count
        return None
    count = int(number)
    return count if count > 0 else None


# ---------------------------------------------------------------------------------------------------- memory

_GIB_PER_UNIT = {"K": 1 / 1024**2, "M": 1 / 1024, "G": 1.0, "T": 1024.0}
_MEMORY_SIZE = re.compile(
    rf"(?:(?<![\w.])(?P<count>\d{{1,4}})\s*[x×]\s*)?"
    rf"{_NUMBER_START}(?P<number>{_NUMBER})\s*(?P<unit>[KMGT])(?:i?B)?(?![A-Za-z])",
    re.IGNORECASE,
)
_BARE_NUMBER = re.compile(_NUMBER)


def _memory_parts(value: object) -> tuple[int, float] | None:
    """(count, GiB each) of the first size in the value; count is 1 unless a multiplier precedes the size."""
    text = _as_text(value)
    if text is None or _PER_NODE_LISTING.search(text):
        return None
    if _BARE_NUMBER.fullmatch(text):
        size = _number(text)
        return (1, size) if 0 < size <= BARE_NUMBER_MAX_GB else None
    match = _MEMORY_SIZE.search(text)
    if match is None:
        return None
    count = int(match["count"] or 1)
    size = _number(match["number"]) * _GIB_PER_UNIT[match["unit"].upper()]
    return (count, size) if count > 0 and size > 0 else None


def parse_memory_gib(value: object) -> float | None:
    """Total memory in GiB from a free-text size; the unit rules are in the module docstring.

    "80 GB" -> 80, "81559 MiB" -> 79.6, "2TiB" -> 2048, "1,024 GB" -> 1024, "24 x 32GB RDIMM" -> 768,
    "512GB (16 x 32GB)" -> 512, "96" -> 96; None for missing or unparseable values and for zero.
    """
    parts = _memory_parts(value)
    return None if parts is None else parts[0] * parts[1]


# ---------------------------------------------------------------------------------------------- accelerators

@dataclass(frozen=True)
class Accelerator:
    """An accelerator as a description names it: vendor, family and form factor (None where the text says nothing)."""
    vendor: str | None
    family: str | None
    form_factor: str | None
    memory_gib: float | None
    year: int | None
    # The size the model name states ("H200-NVL-141GB"), GiB per accelerator, whichever field memory_gib came from.
    name_memory_gib: float | None = None


@dataclass(frozen=True)
class _Family:
    name: str
    pattern: re.Pattern[str]
    vendor: str
    year: int
    only_form_factor: str | None = None


def _families() -> tuple[_Family, ...]:
    table = accelerators.specifications()
    return tuple(_Family(str(name), re.compile(row["pattern"], re.IGNORECASE), row["vendor"], int(row["launch_year"]),
                         row["only_form_factor"] or None) for name, row in table.iterrows())


# Derived from `pipeline.mlperf.hardware.accelerators` (accelerators.csv), the one home of these facts: its row order is
# the matching priority (first match wins), `year` its launch_year, `only_form_factor` set for families that ship
# in a single form factor.
ACCELERATOR_FAMILIES: tuple[_Family, ...] = _families()

# For names that state a vendor but no family we know.
_ACCELERATOR_VENDORS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (vendor, re.compile(pattern, re.IGNORECASE)) for vendor, pattern in (
        ("NVIDIA", r"\bnvidia\b|\btesla\b|\bgeforce\b"),
        ("Google", r"\bTPU\b"),
        ("Intel", r"\bhabana\b|\bgaudi\b|\bintel\b"),
        ("AMD", r"\bAMD\b|\binstinct\b|\bradeon\b"),
        ("Graphcore", r"\bgraphcore\b|\bIPU\b"),
        ("Huawei", r"\bascend\b|\bhuawei\b"),
    )
)

# First match wins: an "H100 NVL ... (PCIe)" is an NVL.
_FORM_FACTORS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (form_factor, re.compile(pattern, re.IGNORECASE)) for form_factor, pattern in (
        ("NVL", r"\bNVL\b"),
        ("Superchip", r"\bsuperchip\b"),
        ("SXM", r"\bSXM\d*\b"),
        ("OAM", r"\bOAM\b|\bHL-205\b"),
        ("PCIe", r"\bPCI-?E\b"),
    )
)


def parse_accelerator(model_name: object, memory_capacity: object = None) -> Accelerator:
    """Vendor, family, form factor, memory per accelerator (GiB) and family launch year.

    The form factor is the one the name states, else the only one the family ships in. The memory comes from
    `memory_capacity`, else from a size in the name ("H100-SXM5-80GB"). `memory_capacity` is per accelerator,
    so a multiplier there lists several cards: "2x 24 GB" is 24 GiB each.
    """
    text = _as_text(model_name)
    name = None if text is None else _clean_trademarks(text)
    # A bare number is a size only in a memory field: a model name of "12345" states no memory.
    in_name = None if name is None or _BARE_NUMBER.fullmatch(name) else _memory_parts(name)
    name_memory_gib = None if in_name is None else in_name[1]
    memory = _memory_parts(memory_capacity) or in_name
    memory_gib = None if memory is None else memory[1]
    if name is None:
        return Accelerator(vendor=None, family=None, form_factor=None, memory_gib=memory_gib, year=None)
    stated_form_factor = next((form_factor for form_factor, pattern in _FORM_FACTORS if pattern.search(name)), None)
    family = next((family for family in ACCELERATOR_FAMILIES if family.pattern.search(name)), None)
    if family is None:
        vendor = next((vendor for vendor, pattern in _ACCELERATOR_VENDORS if pattern.search(name)), None)
        return Accelerator(vendor=vendor, family=None, form_factor=stated_form_factor, memory_gib=memory_gib,
                           year=None, name_memory_gib=name_memory_gib)
    return Accelerator(vendor=family.vendor, family=family.name,
                       form_factor=stated_form_factor or family.only_form_factor, memory_gib=memory_gib,
                       year=family.year, name_memory_gib=name_memory_gib)


# -------------------------------------------------------------------------------------------------- host CPU

@dataclass(frozen=True)
class HostCpu:
    """A node's host CPU: vendor, model and cores per node (None where unknown)."""
    vendor: str | None
    model: str | None
    cores_per_node: int | None


_CPU_NOISE = re.compile(r"@\s*[\d.]+\s*GHz|\b\d+-Core\b|\bCPU\b|\bProcessor\b", re.IGNORECASE)
_XEON_SKU = re.compile(
    r"\bXeon\s+(?:(?P<tier>Platinum|Gold|Silver|Bronze)\s+)?(?P<sku>\d{4}[A-Z]*\+?|E\d-\d{4}[A-Z]*)"
    r"(?:\s+(?P<version>v\d))?(?![\w+])",
    re.IGNORECASE,
)
_XEON_CODENAME = re.compile(
    r"\b(?P<codename>Skylake|Cascade Lake|Cooper Lake|Ice Lake|Sapphire Rapids|Emerald Rapids|Granite Rapids)",
    re.IGNORECASE,
)
_XEON = re.compile(r"\bXeon\b", re.IGNORECASE)
_EPYC_SKU = re.compile(r"\bE(?:PYC|YPC)\s+(?P<sku>\w{4,5})\b", re.IGNORECASE)  # "EYPC" is a real typo
_EPYC_CODENAME = re.compile(r"\bAMD\s+(?P<codename>Naples|Rome|Milan|Genoa|Bergamo|Turin)\b", re.IGNORECASE)
_KUNPENG = re.compile(r"\bKunpeng\s*(?P<sku>\d+)", re.IGNORECASE)
_NEOVERSE = re.compile(r"\bNeoverse[\s-]*(?P<core>[NVE]\d+)\b", re.IGNORECASE)
_GRACE = re.compile(r"\bGrace\b", re.IGNORECASE)


def _xeon_model(match: re.Match[str]) -> str:
    parts = ("Xeon", match["tier"] and match["tier"].title(), match["sku"].upper(),
             match["version"] and match["version"].lower())
    return " ".join(part for part in parts if part)


# (vendor, pattern, canonical model from the match); first match wins.
_CPU_MODELS: tuple[tuple[str, re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    ("Intel", _XEON_SKU, _xeon_model),
    ("Intel", _XEON_CODENAME, lambda m: f"Xeon {m['codename'].title()}"),
    ("Intel", _XEON, lambda m: "Xeon"),
    ("AMD", _EPYC_SKU, lambda m: f"EPYC {m['sku'].upper()}"),
    ("AMD", _EPYC_CODENAME, lambda m: f"EPYC {m['codename'].title()}"),
    ("Huawei", _KUNPENG, lambda m: f"Kunpeng {m['sku']}"),
    ("ARM", _NEOVERSE, lambda m: f"Neoverse-{m['core'].upper()}"),
    ("NVIDIA", _GRACE, lambda m: "Grace"),
)

# At most six digits each: int() refuses thousands of digits, and no node has a million cores.
_CORE_COUNT = re.compile(r"(?:(?P<processors>\d{1,6})\s*[x×]\s*)?(?P<cores>\d{1,6})\b")
_CORES_IN_NAME = re.compile(r"\b(?P<cores>\d{1,6})-Core\b", re.IGNORECASE)


def _cpu_model(name: str) -> tuple[str, str] | None:
    text = " ".join(_CPU_NOISE.sub(" ", _clean_trademarks(name)).split())
    for vendor, pattern, canonical in _CPU_MODELS:
        match = pattern.search(text)
        if match is not None:
            return vendor, canonical(match)
    return None


def _cores_per_node(model_name: str | None, core_count: object, processors_per_node: object) -> int | None:
    text = _as_text(core_count)
    match = None if text is None else _CORE_COUNT.match(text)
    if match is None:
        return None
    cores = int(match["cores"])
    named = None if model_name is None else _CORES_IN_NAME.search(model_name)
    if match["processors"]:  # "2x 64": the field already spells out the node
        total: int | None = int(match["processors"]) * cores
    elif named is not None and cores > int(named["cores"]):
        # More cores than the model name gives one processor: the submitter wrote the node total.
        total = cores
    else:
        processors = parse_count(processors_per_node)
        total = None if processors is None else cores * processors
    return total if total is not None and 0 < total <= MAX_CORES_PER_NODE else None


def parse_host_cpu(model_name: object, core_count: object, processors_per_node: object) -> HostCpu:
    """Vendor, short canonical model ("Xeon Platinum 8480C", "EPYC 7763") and cores per node as stated.

    The model is the name cpus.csv lists when the description uses one of its aliases ("Xeon Gold 8280" ->
    "Xeon Platinum 8280"). MLPerf asks for `core_count` per processor, so cores per node = core_count x
    processors_per_node, except that "2x 64" is read as a node total and so is a count above the
    per-processor count the model name states ("AMD EPYC 9454 48-Core Processor" with 96). None for missing
    inputs and for totals outside 1..`MAX_CORES_PER_NODE`. `pipeline.mlperf.hardware.description` checks the count
    against cpus.csv.
    """
    name = _as_text(model_name)
    if name is not None and _PER_NODE_LISTING.search(name):
        name = None
    vendor_and_model = None if name is None else _cpu_model(name)
    vendor, model = vendor_and_model if vendor_and_model is not None else (None, None)
    if model is not None:  # a name the CPU table knows under another one ("Xeon Gold 8280" is a Platinum)
        model = cpus.aliases().get(model, model)
    return HostCpu(vendor=vendor, model=model, cores_per_node=_cores_per_node(name, core_count, processors_per_node))


# --------------------------------------------------------------------------------------------- interconnects

@dataclass(frozen=True)
class Interconnect:
    """A stated link: its kind and its rate in Gbit/s (None where the text gives none)."""
    kind: str | None
    bandwidth_gbps: float | None
    # Why a stated network gives no kind or rate (only a management or storage network is named), else None.
    note: str | None = None
    # How the bandwidth is made up: links or ports, the rate of one (Gbit/s), and the InfiniBand speed grade
    # named beside them ("NDR", "HDR100"). Details of `bandwidth_gbps`, left out of comparisons.
    ports: int | None = field(default=None, compare=False)
    port_gbps: float | None = field(default=None, compare=False)
    grade: str | None = field(default=None, compare=False)


# In priority order: a description naming several (a management Ethernet beside a compute InfiniBand) is
# reported as the first kind here, the one that carries the training traffic.
INTERCONNECT_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in (
        ("NVLink", r"NV\s*(?:Link|Switch)"),  # no \b: "12xNVLink"
        ("ICI", r"\bICI\b"),
        ("IPU-Link", r"\bIPU\s*-?\s*Link"),
        ("HCCS", r"\bHCCS\b"),
        ("Infinity Fabric", r"\bInfinity\s*Fabric\b|\bxGMI\b"),
        ("InfiniBand", r"\bInfini\s*Band\b|\bIB\b|\b[EFHNX]DR(?:100|200)?\b|\bQuantum\b"),
        ("Omni-Path", r"\bOmni\s*-?\s*Path\b|\bOPA\b"),
        ("RoCE", r"\bRoCE"),
        ("Ethernet", r"Ethernet|\dG(?:b)?E\b|\bGbE\b"),
        ("PCIe", r"\bPCI\s*-?\s*E"),
    )
)

# b/B is case-sensitive here: it tells bits from bytes.
_RATE = re.compile(
    rf"{_NUMBER_START}(?P<number>{_NUMBER})\s*(?P<prefix>[MGT])(?:(?P<bytes>B)|b(?:it)?)?"
    r"(?:ps|\s*/\s*[sS](?:ec)?\b|[eE]\b)?(?![A-Za-z])"
)
_GBPS_PER_PREFIX = {"M": 0.001, "G": 1.0, "T": 1000.0}
_INFINIBAND_GRADE = re.compile(r"\b(?P<grade>[EFHNX]DR)(?P<lanes>100|200)?\b", re.IGNORECASE)
_INFINIBAND_GBPS = {"FDR": 56.0, "EDR": 100.0, "HDR": 200.0, "NDR": 400.0, "XDR": 800.0}
_GIGABIT = re.compile(r"\bGig(?:a|abit)?\b", re.IGNORECASE)
_LINK_COUNT = re.compile(r"(?<![\w.])(?P<count>\d{1,3})\s*[xX×]")
# InfiniBand's lane width ("4X EDR", "(4X)"): one port of 4 lanes, not 4 ports. Upper-case X with no space,
# before a speed grade or a closing bracket, as the InfiniBand specification writes it.
_LANE_WIDTH = re.compile(r"(?<![\w.])(?:1|2|4|8|12)X(?=\s*(?:[EFHNX]DR|\)))")
# A rate of the host's PCIe bus quoted beside the network ("Data bandwidth for GPU-PCIe: 504 GB/s; PCIe-NIC:
# 500 GB/s"): not a network rate.
_HOST_BUS_RATE = re.compile(
    rf"(?:\bData\s+bandwidth\s+for\s+)?\b(?:GPU\s*-\s*PCIe|PCIe\s*-\s*NIC)\s*:\s*{_NUMBER}\s*[MGT]?B?\s*(?:/\s*s(?:ec)?)?",
    re.IGNORECASE)
# An adapter with several ports of the stated rate ("ConnectX-5 Dual Port 40/ 100GbE"), when no count is given.
_PORTS_IN_NAME = re.compile(r"\b(?P<ports>single|dual|quad)[\s-]*port\b", re.IGNORECASE)
_PORTS_PER_WORD = {"single": 1, "dual": 2, "quad": 4}
_SEGMENT_SEPARATOR = re.compile(r"[,;]|\s+\+\s+|\band\b")
# "Storage: ..., Management: ..., Compute: ...": the network each part serves. A label holds until the next one.
_ROLE = r"(?:compute|storage|management)"
_ROLE_LABEL = re.compile(rf"\b(?P<roles>{_ROLE}(?:\s*[&+/]\s*{_ROLE})*)\s*:", re.IGNORECASE)
MANAGEMENT_ONLY = "names only a management or storage network, which the accelerators do not train over"


def _kind(segment: str) -> str | None:
    return next((kind for kind, pattern in INTERCONNECT_KINDS if pattern.search(segment)), None)


def _rates(segment: str) -> list[float]:
    """Every rate stated in `segment`, Gbit/s; an InfiniBand grade or "Gigabit" where no number is given."""
    rates = [_number(m["number"]) * _GBPS_PER_PREFIX[m["prefix"]] * (8 if m["bytes"] else 1)
             for m in _RATE.finditer(segment)]
    if not rates and (grade := _INFINIBAND_GRADE.search(segment)):
        rates = [float(grade["lanes"]) if grade["lanes"] else _INFINIBAND_GBPS[grade["grade"].upper()]]
    if not rates and _GIGABIT.search(segment):
        rates = [1.0]
    return rates


def _link_count(segment: str) -> int | None:
    links = _LINK_COUNT.search(_LANE_WIDTH.sub(" ", segment))
    if links is not None:
        return int(links["count"])
    ports = _PORTS_IN_NAME.search(segment)
    return None if ports is None else _PORTS_PER_WORD[ports["ports"].casefold()]


def _segment_links(segment: str) -> tuple[int, float] | None:
    """(links or ports, the rate of one in Gbit/s) that a part of a value states, or None without a rate."""
    rates = _rates(segment)
    return (_link_count(segment) or 1, max(rates)) if rates else None


def _joined_counts(segments: list[str]) -> list[str]:
    """`segments` with a count of adapters that states no kind and no rate joined to the rate that follows it:
    "2x ConnectX-6, 100Gb/s" is two 100 Gb/s adapters."""
    joined: list[str] = []
    for segment in segments:
        previous = joined[-1] if joined else None
        if (previous is not None and _link_count(previous) and not _rates(previous) and _kind(previous) is None
                and _rates(segment) and not _link_count(segment)):
            joined[-1] = f"{previous} {segment}"
        else:
            joined.append(segment)
    return joined


def _compute_text(text: str) -> str | None:
    """The part of a labelled value that serves the accelerators: the parts labelled Compute when there are
    any, else every part not labelled Management or Storage; None when only such parts remain."""
    labels = list(_ROLE_LABEL.finditer(text))
    if not labels:
        return text
    parts = [(None, text[:labels[0].start()])] + [
        (label["roles"].casefold(), text[label.end():following.start() if following else len(text)])
        for label, following in zip(labels, [*labels[1:], None])]
    compute = [part for roles, part in parts if roles is not None and "compute" in roles]
    kept = compute or [part for roles, part in parts if roles is None and part.strip(" ,;+")]
    return ", ".join(kept) if kept else None


def parse_interconnect(value: object) -> Interconnect:
    """Kind and bandwidth (Gbit/s) of an `accelerator_interconnect` or `host_networking` value, as the text
    states them; the unit rules are in the module docstring.

    Parts labelled by the network they serve ("Storage: ..., Compute: ..., Management: ...") are read as the
    compute part alone; a value naming only management or storage networks gives no kind and no rate, with a
    `note` saying so. Rates of the host's PCIe bus ("PCIe-NIC: 500 GB/s") are left out. The rest is split into
    parts at ",", ";", " + " and "and"; the kind is the highest-priority kind named in the parts
    (`INTERCONNECT_KINDS`: "NVSwitch" counts as NVLink and "xGMI" as Infinity Fabric); the bandwidth is the
    largest rate among the parts of that kind or of no stated kind, so a management NIC or a PCIe figure is not
    taken for the fabric. A count in front of a rate multiplies it ("8x ConnectX-7 IB NDR 400Gb/s" -> 3200), also
    when the rate follows in the next part ("2x ConnectX-6, 100Gb/s" -> 200); an InfiniBand lane width does not
    ("100 Gb/sec (4X EDR)" -> 100).
    """
    text = _as_text(value)
    if text is None:
        return Interconnect(kind=None, bandwidth_gbps=None)
    compute = _compute_text(_HOST_BUS_RATE.sub(" ", text))
    if compute is None:
        return Interconnect(kind=None, bandwidth_gbps=None, note=MANAGEMENT_ONLY)
    segments = _joined_counts([segment for segment in _SEGMENT_SEPARATOR.split(compute) if segment.strip()])
    segment_kinds = [_kind(segment) for segment in segments]
    kind = next((kind for kind, _ in INTERCONNECT_KINDS if kind in segment_kinds), None)
    stated = [(links[0] * links[1], links, segment) for segment, segment_kind in zip(segments, segment_kinds)
              if segment_kind in (kind, None) and (links := _segment_links(segment)) is not None]
    if not stated:
        return Interconnect(kind=kind, bandwidth_gbps=None)
    total, (ports, port_gbps), segment = max(stated, key=lambda item: item[0])  # the first of equal totals
    grade = _INFINIBAND_GRADE.search(segment)
    return Interconnect(kind=kind, bandwidth_gbps=total, ports=ports, port_gbps=port_gbps,
                        grade=None if grade is None else grade.group(0).upper())


# ------------------------------------------------------------------------------------------------ frameworks

# NeMo and DGL are reported as PyTorch: in MLPerf they are libraries running on it.
FRAMEWORK_FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (family, re.compile(pattern, re.IGNORECASE)) for family, pattern in (
        ("PyTorch", r"Py\s*Torch|\bNeMo\b|\bDGL\b"),
        ("TensorFlow", r"Tens?or\s*Flow|(?<![a-z])TF(?![a-z])"),  # "TenorFLow" is a real typo
        ("MXNet", r"MX\s*Net"),
        ("JAX", r"\bJAX\b|\bPax\b|\bMax(?:Text|Diffusion)\b"),
        ("PaddlePaddle", r"\bPaddle"),
        ("MindSpore", r"\bMind\s*Spore\b"),
        ("HugeCTR", r"Huge\s*CTR"),
        ("PopART", r"\bPopART\b"),
        ("tinygrad", r"\btinygrad\b"),
        ("LLMBoost", r"\bLLMBoost\b"),
    )
)


def parse_framework(value: object) -> str | None:
    """The framework family: "PyTorch NVIDIA Release 24.04" -> "PyTorch", "JAX/ Pax" -> "JAX".

    A value naming several families (one container per benchmark) gives them sorted and joined with "+",
    e.g. "MXNet+PyTorch"; the system description does not say which one a given result used.
    """
    text = _as_text(value)
    if text is None:
        return None
    families = sorted({family for family, pattern in FRAMEWORK_FAMILIES if pattern.search(text)}, key=str.casefold)
    return "+".join(families) if families else None
