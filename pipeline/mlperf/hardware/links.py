"""The curated accelerator-to-accelerator link table (links.csv, package data) and its loader.

One row per accelerator family, form factor and link kind: the link an accelerator of that family uses to reach
the other accelerators of its node. Columns:

- family: as in accelerators.csv; form_factor: as `pipeline.mlperf.hardware.freetext` reports it, empty for "every form
  factor of the family" (TPUs, IPUs and the first Gaudi are described without one);
- link: the kind `pipeline.mlperf.hardware.freetext.parse_interconnect` reports (NVLink, ICI, IPU-Link, HCCS,
  Infinity Fabric, RoCE for Gaudi's on-chip RDMA Ethernet ports, PCIe);
- link_generation: the generation and the number of links or ports;
- gbps_per_direction: the bandwidth of one accelerator to the others of its node, in one direction, Gbit/s
  (decimal). Vendors mostly quote the sum of both directions (NVIDIA's "900 GB/s" for H100 NVLink); the `note`
  says what the vendor states and how it was halved;
- source: the vendor's page, note.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd

from pipeline.core.errors import ContractError
from pipeline.mlperf.hardware import accelerators, freetext
from pipeline.mlperf.hardware.tables import check_columns, check_sources, check_unique, read_package_table

LINK_FILE = "links.csv"
COLUMNS = ["family", "form_factor", "link", "link_generation", "gbps_per_direction", "source", "note"]
TEXT_COLUMNS = ("family", "form_factor", "link", "link_generation", "source", "note")
KEY = ["family", "form_factor", "link"]


@dataclass(frozen=True)
class Link:
    """One row of the table: what `family` (in `form_factor`, "" for all) reaches its node's other
    accelerators with, and its rate per accelerator and direction in Gbit/s."""

    family: str
    form_factor: str
    link: str
    generation: str
    gbps_per_direction: float

    def describe(self) -> str:
        """"H100 SXM NVLink 4 (18 links): 3600 Gb/s per accelerator each way"."""
        name = " ".join(part for part in (self.family, self.form_factor) if part)
        return f"{name} {self.generation}: {self.gbps_per_direction:g} Gb/s per accelerator each way"


@lru_cache(maxsize=1)
def link_table() -> pd.DataFrame:
    """The table of the package, checked (see `validate`)."""
    return validate(read_package_table(LINK_FILE, TEXT_COLUMNS))


def validate(table: pd.DataFrame) -> pd.DataFrame:
    """`table` after checking its columns, one row per family + form factor + link, families of accelerators.csv,
    known form factors and link kinds, a positive rate and an https source on every row. Raises ContractError,
    naming the rows at fault, otherwise."""
    check_columns(table, LINK_FILE, COLUMNS)
    check_unique(table, LINK_FILE, KEY)
    check_sources(table, LINK_FILE, "family")
    unknown_families = sorted(set(table["family"]) - set(accelerators.specifications().index))
    if unknown_families:
        raise ContractError(f"{LINK_FILE}: families missing from {accelerators.SPEC_FILE}: "
                            f"{', '.join(unknown_families)}")
    unknown_forms = sorted(set(table["form_factor"]) - {"", *accelerators.FORM_FACTORS})
    if unknown_forms:
        raise ContractError(f"{LINK_FILE}: form_factor must be one of {', '.join(accelerators.FORM_FACTORS)} or "
                            f"empty; found {', '.join(unknown_forms)}")
    kinds = [kind for kind, _ in freetext.INTERCONNECT_KINDS]
    unknown_links = sorted(set(table["link"]) - set(kinds))
    if unknown_links:
        raise ContractError(f"{LINK_FILE}: link must be one of {', '.join(kinds)}; found {', '.join(unknown_links)}")
    rates = pd.to_numeric(table["gbps_per_direction"], errors="coerce")
    if (rates.isna() | (rates <= 0)).any():
        raise ContractError(f"{LINK_FILE}: gbps_per_direction must be a positive number; not so for "
                            f"{', '.join(table.loc[rates.isna() | (rates <= 0), 'family'])}")
    return table.assign(gbps_per_direction=rates.astype(float))


def _explains(stated: float, rate: float, per_node: float) -> bool:
    """Whether a stated rate is `rate` as written, or summed over both directions, or over the node's
    `per_node` accelerators, or both."""
    multiples = [1.0, 2.0] + ([per_node, 2 * per_node] if not math.isnan(per_node) else [])
    return not math.isnan(stated) and any(math.isclose(stated, rate * m, rel_tol=1e-6) for m in multiples)


def intra_link(family: str | None, form_factor: str | None, kind: str | None,
               stated_gbps: float = math.nan, per_node: float = math.nan) -> Link | None:
    """The table's accelerator-to-accelerator link for a description of an accelerator of `family` in
    `form_factor` that names a link of `kind` (and states `stated_gbps`, NaN for no rate, with `per_node`
    accelerators per node), or None when the table cannot tell.

    - The rows of that form factor win over the family's rows for every form factor (empty form_factor).
    - A stated Ethernet is RoCE for a family whose table link is RoCE (Gaudi's on-chip RDMA ports).
    - A kind the table lacks for a form factor that has a single accelerator link other than PCIe (SXM,
      Superchip, OAM) gives that link: "PCIe 4.0" on an H100 SXM names the host's link, not the GPUs' NVLink.
    - With the form factor unknown, the family's rows of that kind are used when they agree on the rate (A100
      NVLink: 2400 Gb/s in SXM and over the PCIe bridge) or when one rate alone explains the stated one as
      written, doubled or summed over the node (H100 NVLink stated 7200: SXM's 3600 both ways).
    The returned `link` is the table's kind, which may differ from `kind`."""
    if family is None or kind is None:
        return None
    rows = _links_by_family().get(family, [])
    if form_factor is not None:
        of_form = form_factor if any(row.form_factor == form_factor for row in rows) else ""
        rows = [row for row in rows if row.form_factor == of_form]
    of_kind = [row for row in rows if row.link == kind]
    if not of_kind and kind == "Ethernet":
        of_kind = [row for row in rows if row.link == "RoCE"]
    if not of_kind and form_factor is not None and len({row.link for row in rows}) == 1 and rows[0].link != "PCIe":
        of_kind = rows
    if len({row.gbps_per_direction for row in of_kind}) > 1:
        explaining = [row for row in of_kind if _explains(stated_gbps, row.gbps_per_direction, per_node)]
        of_kind = explaining if len({row.gbps_per_direction for row in explaining}) == 1 else []
    if not of_kind:
        return None
    return Link(family=family, form_factor=of_kind[0].form_factor if len(of_kind) == 1 else "",
                link=of_kind[0].link, generation=" or ".join(sorted({row.generation for row in of_kind})),
                gbps_per_direction=of_kind[0].gbps_per_direction)


@lru_cache(maxsize=1)
def _links_by_family() -> dict[str, list[Link]]:
    """The rows of `link_table` by family, in table order: `intra_link` is asked once per description, and
    filtering plain rows costs a fraction of filtering the table."""
    table = link_table()
    by_family: dict[str, list[Link]] = {}
    for row in zip(table["family"].tolist(), table["form_factor"].tolist(), table["link"].tolist(),
                   table["link_generation"].tolist(), table["gbps_per_direction"].tolist()):
        by_family.setdefault(row[0], []).append(Link(*row))
    return by_family
