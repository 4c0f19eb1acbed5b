"""A family's sibling: the family a new one learns from on a benchmark where it has no result yet (B300 from B200,
GB300 from GB200, MI355X from MI325X), read from the specification table
(`pipeline/mlperf/hardware/accelerators.csv`: vendor, form factor, launch year, generation, peak dense BF16 TFLOPS).

The sibling of family f among the families with results on a benchmark is the one of f's vendor, in f's form
factor when one is (else any), launched in f's year or before and most recently, nearest in peak BF16 throughput
(log scale) on a tie, then by name. Without one of its vendor, the family nearest in peak BF16 throughput and
launch year of any vendor is its **stand-in** (a weaker guide, said so): every family with specifications gets a
forecast on every benchmark with results.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

from pipeline.mlperf.hardware.accelerators import specifications


def sibling_of(family: str, candidates: Iterable[str]) -> tuple[str, bool] | None:
    """The family of `candidates` (families with results) `family` learns from, and whether it is a sibling (its
    vendor's) rather than a stand-in; None when `family` or every candidate lacks a specification row."""
    table = specifications()
    if family not in table.index:
        return None
    row = table.loc[family]
    known = sorted(name for name in set(candidates) if name in table.index and name != family)
    if not known:
        return None

    def throughput_gap(name: str) -> float:
        own, other = float(row["bf16_tflops"]), float(table.loc[name, "bf16_tflops"])
        return abs(math.log(own / other)) if own > 0 and other > 0 else math.inf

    same_vendor = [name for name in known if table.loc[name, "vendor"] == row["vendor"]
                   and int(table.loc[name, "launch_year"]) <= int(row["launch_year"])]
    if same_vendor:
        form = str(row["only_form_factor"] or "")
        same_form = [name for name in same_vendor if str(table.loc[name, "only_form_factor"] or "") == form]
        pool = same_form or same_vendor
        best = min(pool, key=lambda name: (-int(table.loc[name, "launch_year"]), throughput_gap(name), name))
        return best, True
    best = min(known, key=lambda name: (throughput_gap(name), abs(int(table.loc[name, "launch_year"])
                                                                  - int(row["launch_year"])), name))
    return best, False
