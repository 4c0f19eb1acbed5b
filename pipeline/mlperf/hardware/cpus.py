"""The curated host CPU table (cpus.csv, package data) and its loader: the one home of the project's CPU facts.

One row per CPU model, keyed by the canonical name `pipeline.mlperf.hardware.freetext.parse_host_cpu` reports ("Xeon
Platinum 8480C", "EPYC 7763", "Grace"). Columns:

- model, vendor;
- cores_per_socket: physical cores of one processor (threads not counted);
- aliases: other canonical names descriptions use for the same part, separated by ";" (a wrong tier such as
  "Xeon Gold 8280" for the Xeon Platinum 8280); the parser reports the model instead;
- source: the vendor's product page (or, for a cloud provider's custom part, the provider's page), note.

The names descriptions use that the table cannot list are in `NOT_LISTED`, with the reason: names that identify
no single part (a bare "Xeon", codenames, "Kunpeng 920" sold with 24 to 64 cores) and custom parts whose core
count no public source states. Their core counts stay as the descriptions give them, and
`bench/hardware_audit.py` lists them.
"""
from __future__ import annotations

from functools import lru_cache

import pandas as pd

from pipeline.core.errors import ContractError
from pipeline.mlperf.hardware.tables import check_columns, check_sources, check_unique, read_package_table

CPU_FILE = "cpus.csv"
COLUMNS = ["model", "vendor", "cores_per_socket", "aliases", "source", "note"]
TEXT_COLUMNS = ("model", "vendor", "aliases", "source", "note")
ALIAS_SEPARATOR = ";"

_CODENAME = "a codename, not a part: its parts have different core counts"
_CUSTOM = "a cloud provider's or OEM's custom part: no public source states its core count"
# Canonical names (as `pipeline.mlperf.hardware.freetext.parse_host_cpu` gives them) that cpus.csv cannot list, and why.
NOT_LISTED: dict[str, str] = {
    "Xeon": "names no part (a bare Xeon, or a cloud VM's anonymous 'Intel(R) Xeon(R) CPU')",
    **dict.fromkeys(["Xeon Skylake", "Xeon Cascade Lake", "Xeon Cooper Lake", "Xeon Ice Lake",
                     "Xeon Sapphire Rapids", "Xeon Emerald Rapids", "Xeon Granite Rapids", "EPYC Naples",
                     "EPYC Rome", "EPYC Milan", "EPYC Genoa", "EPYC Bergamo", "EPYC Turin"], _CODENAME),
    "Kunpeng 920": "a family: Huawei sells the Kunpeng 920 with 24, 32, 48 and 64 cores",
    "Neoverse-V2": "an Arm core design, not a part (NVIDIA Grace, AWS Graviton4 and Google Axion use it); "
                   "the host of a Grace superchip is read as Grace",
    **dict.fromkeys(["Xeon Platinum 8163", "Xeon Platinum 8174", "Xeon Platinum 8186", "Xeon Platinum 8255C",
                     "Xeon Platinum 8269CY", "Xeon Platinum 8350C", "Xeon Platinum 8369B", "Xeon Platinum 8378A",
                     "Xeon Platinum 8480CL", "Xeon Platinum 8481C", "Xeon Platinum 8581C"], _CUSTOM),
    "Xeon Platinum 8468Y+": "no Intel part has this number (the 8468, 8468H and 8468V do): a misspelt name",
}


@lru_cache(maxsize=1)
def cpu_models() -> pd.DataFrame:
    """The table of the package (see `validate`), indexed by model."""
    return validate(read_package_table(CPU_FILE, TEXT_COLUMNS))


def validate(table: pd.DataFrame) -> pd.DataFrame:
    """`table` indexed by model, after checking its columns, one row per model, a positive whole core count,
    aliases that name no other row and no model twice, and an https source on every row. Raises ContractError,
    naming the rows at fault, otherwise."""
    check_columns(table, CPU_FILE, COLUMNS)
    check_unique(table, CPU_FILE, ["model"])
    check_sources(table, CPU_FILE, "model")
    cores = pd.to_numeric(table["cores_per_socket"], errors="coerce")
    bad = table.loc[cores.isna() | (cores <= 0) | (cores != cores.round()), "model"]
    if len(bad):
        raise ContractError(f"{CPU_FILE}: cores_per_socket must be a positive whole number; not so for "
                            f"{', '.join(bad)}")
    listed_anyway = sorted(set(table["model"]) & set(NOT_LISTED))
    if listed_anyway:
        raise ContractError(f"{CPU_FILE}: models that cpus.NOT_LISTED says cannot be listed: "
                            f"{', '.join(listed_anyway)}")
    aliases = [alias.strip() for cell in table["aliases"] for alias in cell.split(ALIAS_SEPARATOR) if alias.strip()]
    clashing = sorted({alias for alias in aliases if aliases.count(alias) > 1 or alias in set(table["model"])})
    if clashing:
        raise ContractError(f"{CPU_FILE}: an alias must name one model and no row of its own: {', '.join(clashing)}")
    return table.assign(cores_per_socket=cores.astype(int)).set_index("model")


@lru_cache(maxsize=1)
def aliases() -> dict[str, str]:
    """{alias: model} over the table."""
    return {alias.strip(): model for model, cell in cpu_models()["aliases"].items()
            for alias in cell.split(ALIAS_SEPARATOR) if alias.strip()}


def cores_per_socket(model: str | None) -> int | None:
    """The physical cores of one processor of `model` (a canonical name), or None when the table lacks it."""
    table = cpu_models()
    return None if model is None or model not in table.index else int(table.at[model, "cores_per_socket"])
