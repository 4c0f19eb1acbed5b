"""A family's sibling: the family a new one learns from on a benchmark where it has no result yet (B300 from B200,
GB300 from GB200, MI355X from MI325X), read from the specification table
(`pipeline/mlperf/hardware/accelerators.csv`: vendor, form factor, launch year, generation, peak dense BF16 TFLOPS).

The sibling of family f among the families with results on a benchmark is the one of f's vendor, in f's form
factor when one is (else any), launched in f's year or before and most recently, nearest in peak BF16 throughput
(log scale) on a tie, then by name. Without one of its vendor, the family nearest in peak BF16 throughput and
launch year of any vendor is its **stand-in** (a weaker guide, said so): every family with specifications gets a
forecast on every benchmark with results.

Where a family and its sibling both have results on other benchmarks, in one round at one count, their **measured
ratio** (`measured_ratios`) replaces the ratio of their specifications (`pipeline.analysis.forecasting.model`).
"""
from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.analysis.forecasting.curve import CURVE_DECIMALS
from pipeline.mlperf.catalogue import round_published
from pipeline.mlperf.hardware.accelerators import spec_features, specifications


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


def law_log_ratio(family: str, sibling: str) -> float:
    """log(time of `family` / time of `sibling`) by the specifications' law: minus the mean, over the figures of
    `spec_features` (peak dense BF16 TFLOPS, memory bandwidth) both have, of log(figure of `family` / figure of
    `sibling`) (a part with twice every figure takes half the time); NaN when they share none or either is not in
    the specification table."""
    # The board power (TDP) as a third figure was tried and not kept: docs/predictions.md.
    gaps = np.subtract(*spec_features(np.array([family, sibling], dtype=object)))
    known = gaps[np.isfinite(gaps)]
    return -float(known.mean()) if len(known) else math.nan


@dataclass(frozen=True)
class MeasuredRatio:
    """How much slower `family` trained than `sibling` where both have results (`measured_ratios`): log_ratio, the
    median over benchmarks of each benchmark's median log(time of family / time of sibling) (log minutes, negative:
    the family is faster), from `benchmarks` benchmarks."""

    family: str
    sibling: str
    log_ratio: float
    benchmarks: int


def benchmark_ratios(frames: Mapping[str, pd.DataFrame], before: float) -> pd.DataFrame:
    """Each benchmark's ratio of every ordered pair of families with results there (columns benchmark, family,
    sibling, log_ratio), from the results of `frames` (model inputs by benchmark: round, accelerator_family,
    accelerator_count, time_to_train_min, availability) published before `before` (years), preview systems left
    out (H100's preview round understated its lead over A100 by a fifth): in each round and at each accelerator
    count where both have results, the difference of each family's median log time there (the typical
    submitter's, as the count curves are: a best time is one submitter's tuning); log_ratio, the median of those
    differences."""
    return cell_ratios(ratio_cells(frames), before)


def ratio_cells(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The differences `benchmark_ratios` takes the median of, at any time: in each round and at each count of a
    benchmark of `frames`, every ordered pair of families' difference of median log times (preview systems left
    out: a preview system's software is not yet the one it ships with); columns benchmark, round, count, time
    (the round's publication, years), family, sibling and log_ratio. A cell lies in one round, so the cells
    before any time are those of the rounds before it: worked out once for the ratios at many times
    (`cell_ratios`)."""
    cells = []
    for name in sorted(frames):
        frame = frames[name]
        if "availability" in frame.columns:
            frame = frame[frame["availability"].astype(str).to_numpy() != "preview"]
        cells.append(pd.DataFrame({"benchmark": name, "round": frame["round"].astype(str),
                                   "count": frame["accelerator_count"].astype(float),
                                   "time": frame["round"].map(round_published).to_numpy(dtype=float),
                                   "family": frame["accelerator_family"].astype(str),
                                   "log_time": np.log(frame["time_to_train_min"].to_numpy(dtype=float))}))
    key = ["benchmark", "round", "count", "time"]  # (the time is the round's: it splits no cell)
    medians = (pd.concat(cells, ignore_index=True) if cells else pd.DataFrame(columns=[*key, "family", "log_time"])
               ).groupby([*key, "family"], sort=True, as_index=False)["log_time"].median()
    pairs = medians.merge(medians, on=key, suffixes=("", "_sibling"))
    pairs = pairs[pairs["family"] != pairs["family_sibling"]]
    return pairs.assign(log_ratio=pairs["log_time"] - pairs["log_time_sibling"], sibling=pairs["family_sibling"])


def cell_ratios(cells: pd.DataFrame, before: float) -> pd.DataFrame:
    """`benchmark_ratios` of the `ratio_cells` published before `before` (years)."""
    return (cells[cells["time"].to_numpy(dtype=float) < before]
            .groupby(["benchmark", "family", "sibling"], sort=True, as_index=False)["log_ratio"].median())


def measured_ratios(frames: Mapping[str, pd.DataFrame], before: float) -> tuple[MeasuredRatio, ...]:
    """Every ordered pair of families' `MeasuredRatio`: the median over benchmarks of their `benchmark_ratios`
    (`frames`, `before`). Sorted by family and sibling; values rounded to CURVE_DECIMALS (they decide forecasts).
    A family's results on a benchmark it is new to are none, so that benchmark never enters its own ratio."""
    return pooled_ratios(benchmark_ratios(frames, before))


def pooled_ratios(per_benchmark: pd.DataFrame) -> tuple[MeasuredRatio, ...]:
    """`measured_ratios` of `benchmark_ratios` rows."""
    pooled = per_benchmark.groupby(["family", "sibling"], sort=True)["log_ratio"].agg(["median", "size"])
    return tuple(MeasuredRatio(str(family), str(sibling), float(np.round(value, CURVE_DECIMALS)), int(size))
                 for (family, sibling), value, size in zip(pooled.index, pooled["median"], pooled["size"]))


@dataclass(frozen=True)
class NewFamilySource:
    """Where the model takes the forecast of a family without results on a benchmark (`new_family_source`): the
    curve and drift of `family` (the family itself in another form factor, its vendor's sibling, or, with
    `own_vendor` False, another vendor's family, a stand-in), plus `log_ratio` (log of the family's time over the
    source's; 0 for itself), `measured` on other benchmarks (`measured_ratios`) or, with `measured` None, by the
    specifications' law (`law_log_ratio`; 0 where the two share no figure)."""

    family: str
    own_vendor: bool
    log_ratio: float
    measured: MeasuredRatio | None


def new_family_source(family: str, with_results: Collection[str],
                      measured: Mapping[tuple[str, str], MeasuredRatio]) -> NewFamilySource | None:
    """The `NewFamilySource` of `family`'s forecasts on a benchmark whose families `with_results` have results: its
    own curve in another form factor where it has one, else its sibling's (`sibling_of`), by their `measured` ratio
    (by family and sibling) where there is one; None when neither it nor any of them has specifications."""
    if family in with_results:
        return NewFamilySource(family, True, 0.0, None)
    found = sibling_of(family, with_results)
    if found is None:
        return None
    ratio = measured.get((family, found[0])) if found[1] else None
    if ratio is not None:
        return NewFamilySource(found[0], True, ratio.log_ratio, ratio)
    law = law_log_ratio(family, found[0])
    return NewFamilySource(found[0], found[1], law if math.isfinite(law) else 0.0, None)
