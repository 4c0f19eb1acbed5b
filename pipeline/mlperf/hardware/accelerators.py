"""The curated accelerator table (accelerators.csv, package data) and its loader: the one home of what the project
knows about an accelerator family.

One row per accelerator family, including current parts not yet in the data (Trainium, Trainium2). Columns, per
accelerator (one GPU, one TPU chip, one IPU):

- family: the name `pipeline.mlperf.hardware.freetext.parse_accelerator` reports;
- vendor;
- pattern: the regular expression (case ignored) that finds the family in a model name. The table's row order is
  the matching priority (first match wins), so a family precedes any family whose pattern also matches its
  names ("Gaudi 2" matches `\\bgaudi\\b` as well as Gaudi2's pattern);
- only_form_factor: the form factor of families that ship in a single one (empty otherwise);
- bf16_tflops: peak dense BF16 tensor TFLOPS (FP16 where the part has no BF16; the `note` says so);
- fp8_tflops: peak dense FP8 TFLOPS, empty where the part has no FP8 (the note says "no FP8 or 4-bit matrix
  format on the datasheet" where that is so);
- fp4_tflops: peak dense 4-bit TFLOPS (NVFP4 on Blackwell, MXFP4 on CDNA 4), empty where the part has none;
  where present, fp4_tflops >= fp8_tflops >= bf16_tflops (a lower precision never runs slower);
- memory_gib: on-package memory as the vendor states it (HBM sizes are binary, so GB there are GiB);
- bandwidth_tbps: memory bandwidth, TB/s (empty for the IPUs, whose memory is on-chip SRAM);
- tdp_w: board or module power, W (empty where the vendor does not publish it);
- launch_year: the year the vendor launched the family (announced it with a product page and availability),
  even where volume shipments followed the next year (A40: October 2020); the clustering feature
  `accelerator_year` is this value;
- generation: the architecture generation by the vendor's naming (Hopper for H100, H200 and GH200; CDNA 3 for MI300X
  and MI325X; TPU v5 for v5e and v5p): families of one generation share their design, so the importance stage holds
  them out together;
- source (the vendor's datasheet or product page), note (anything estimated or uncertain).

Dense is half of the "with sparsity" figure most datasheets lead with. Figures were transcribed from the
vendors' pages; where a vendor publishes only rack or node figures the per-accelerator value is divided out
and the note says so.
"""
from __future__ import annotations

import re
from functools import lru_cache

import numpy as np
import pandas as pd

from pipeline.core.errors import ContractError
from pipeline.mlperf.hardware.tables import check_columns, check_sources, check_unique, read_package_table

SPEC_FILE = "accelerators.csv"
COLUMNS = ["family", "vendor", "pattern", "only_form_factor", "bf16_tflops", "fp8_tflops", "fp4_tflops",
           "memory_gib", "bandwidth_tbps", "tdp_w", "launch_year", "generation", "source", "note"]
FIGURES = ["bf16_tflops", "fp8_tflops", "fp4_tflops", "memory_gib", "bandwidth_tbps", "tdp_w"]
# The peaks by precision, widest format first: where two are present, the narrower is at least the wider.
PEAKS = ["bf16_tflops", "fp8_tflops", "fp4_tflops"]
# The form factors `pipeline.mlperf.hardware.freetext` recognises in a model name.
FORM_FACTORS = ("NVL", "Superchip", "SXM", "OAM", "PCIe")
# What the specification-based model reads: log of each (a twice-as-fast part should take about half the time).
SPEC_FEATURES = ["bf16_tflops", "bandwidth_tbps"]
TEXT_COLUMNS = ("family", "vendor", "pattern", "only_form_factor", "generation", "source", "note")


@lru_cache(maxsize=1)
def specifications() -> pd.DataFrame:
    """The table of the package (see `validate`), indexed by family in its row order, the matching priority."""
    return validate(read_package_table(SPEC_FILE, TEXT_COLUMNS))


def validate(table: pd.DataFrame) -> pd.DataFrame:
    """`table` indexed by family, after checking its columns, one row per family, a valid pattern on every row,
    a known single form factor, positive figures, peaks that never fall with the precision (fp4_tflops >=
    fp8_tflops >= bf16_tflops where present), a whole launch year, a generation and an https source on every row.
    Raises ContractError, naming the rows at fault, otherwise."""
    check_columns(table, SPEC_FILE, COLUMNS)
    check_unique(table, SPEC_FILE, ["family"])
    check_sources(table, SPEC_FILE, "family")
    for family, pattern in zip(table["family"], table["pattern"]):
        if not pattern:
            raise ContractError(f"{SPEC_FILE}: {family} has no pattern to find it in a model name")
        try:
            re.compile(pattern)
        except re.error as error:
            raise ContractError(f"{SPEC_FILE}: the pattern of {family} is not a valid regular expression: "
                                f"{error}") from None
    unknown = sorted(set(table["only_form_factor"]) - {"", *FORM_FACTORS})
    if unknown:
        raise ContractError(f"{SPEC_FILE}: only_form_factor must be one of {', '.join(FORM_FACTORS)} or empty; "
                            f"found {', '.join(unknown)}")
    if (table[FIGURES] <= 0).any().any():
        raise ContractError(f"{SPEC_FILE}: every figure must be positive (leave it empty when unknown)")
    peaks = table[PEAKS].to_numpy(dtype=float)
    for wide, narrow in ((0, 1), (1, 2), (0, 2)):
        falling = table.loc[peaks[:, narrow] < peaks[:, wide], "family"].tolist()  # NaN compares False: skipped
        if falling:
            raise ContractError(f"{SPEC_FILE}: {PEAKS[narrow]} must be at least {PEAKS[wide]} where both are "
                                f"present; not so for {', '.join(falling)}")
    unnamed = table.loc[table["generation"].str.strip() == "", "family"].tolist()
    if unnamed:
        raise ContractError(f"{SPEC_FILE}: every family needs a generation (its architecture, by the vendor's "
                            f"naming); missing for {', '.join(unnamed)}")
    years = pd.to_numeric(table["launch_year"], errors="coerce")
    if years.isna().any() or (years != years.round()).any():
        raise ContractError(f"{SPEC_FILE}: every family needs a whole launch_year; missing or fractional for "
                            f"{', '.join(table.loc[years.isna() | (years != years.round()), 'family'])}")
    return table.assign(launch_year=years.astype(int)).set_index("family")


def generations(families: pd.Series) -> pd.Series:
    """The architecture generation of each family (column `generation`), the family's own name for one the table
    lacks (or a missing family: "?"), as text, on `families`' index."""
    table = specifications()["generation"]
    return pd.Series([str(table.get(family, family)) if isinstance(family, str) else "?" for family in families],
                     index=families.index, dtype=object)


def spec_features(families: pd.Series | np.ndarray) -> np.ndarray:
    """log of SPEC_FEATURES per family, shape (len(families), len(SPEC_FEATURES)); NaN rows for families the
    table lacks or leaves a figure of empty."""
    table = specifications()
    known = table.reindex(pd.Index(np.asarray(families, dtype=object)))
    return np.log(known[SPEC_FEATURES].to_numpy(dtype=float))
