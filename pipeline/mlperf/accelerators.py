"""The curated accelerator specification table (accelerators.csv, package data) and its loader.

One row per accelerator family, named as `pipeline.mlperf.hardware.ACCELERATOR_FAMILIES` names it, plus current parts
not yet in the data (Trainium, Trainium2). Columns, per accelerator (one GPU, one TPU chip, one IPU):

- bf16_tflops: peak dense BF16 tensor TFLOPS (FP16 where the part has no BF16; the `note` says so);
- fp8_tflops: peak dense FP8 TFLOPS, empty where the part has no FP8;
- memory_gib: on-package memory as the vendor states it (HBM sizes are binary, so GB there are GiB);
- bandwidth_tbps: memory bandwidth, TB/s (empty for the IPUs, whose memory is on-chip SRAM);
- tdp_w: board or module power, W (empty where the vendor does not publish it);
- launch_year, source (the vendor's datasheet or product page), note (anything estimated or uncertain).

Dense is half of the "with sparsity" figure most datasheets lead with. Figures were transcribed from the
vendors' pages; where a vendor publishes only rack or node figures the per-accelerator value is divided out
and the note says so.
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources

import numpy as np
import pandas as pd

from pipeline.core.errors import ContractError

SPEC_FILE = "accelerators.csv"
COLUMNS = ["family", "vendor", "bf16_tflops", "fp8_tflops", "memory_gib", "bandwidth_tbps", "tdp_w", "launch_year",
           "source", "note"]
# What the specification-based model reads: log of each (a twice-as-fast part should take about half the time).
SPEC_FEATURES = ["bf16_tflops", "bandwidth_tbps"]


@lru_cache(maxsize=1)
def specifications() -> pd.DataFrame:
    """The table, indexed by family; checked for its columns, one row per family, positive figures and a
    source URL on every row."""
    with resources.files(__package__).joinpath(SPEC_FILE).open(encoding="utf-8") as handle:
        table = pd.read_csv(handle, dtype={"family": str, "vendor": str, "source": str, "note": str})
    if list(table.columns) != COLUMNS:
        raise ContractError(f"{SPEC_FILE}: columns must be {', '.join(COLUMNS)}")
    if table["family"].duplicated().any():
        raise ContractError(f"{SPEC_FILE}: families listed twice: "
                            f"{', '.join(table.loc[table['family'].duplicated(), 'family'])}")
    numeric = table[["bf16_tflops", "fp8_tflops", "memory_gib", "bandwidth_tbps", "tdp_w"]]
    if (numeric <= 0).any().any():
        raise ContractError(f"{SPEC_FILE}: every figure must be positive (leave it empty when unknown)")
    if not table["source"].str.startswith("https://").all():
        raise ContractError(f"{SPEC_FILE}: every row needs a vendor datasheet URL in `source`")
    return table.assign(note=table["note"].fillna("")).set_index("family")


def spec_features(families: pd.Series | np.ndarray) -> np.ndarray:
    """log of SPEC_FEATURES per family, shape (len(families), len(SPEC_FEATURES)); NaN rows for families the
    table lacks or leaves a figure of empty."""
    table = specifications()
    known = table.reindex(pd.Index(np.asarray(families, dtype=object)))
    return np.log(known[SPEC_FEATURES].to_numpy(dtype=float))
