"""A family's sibling: the family a new one learns from on a benchmark where it has no result yet (B300 from B200,
GB300 from GB200, MI355X from MI325X), read from the specification table
(`pipeline/mlperf/hardware/accelerators.csv`: vendor, form factor, launch year, generation, peak dense BF16 TFLOPS).

The sibling of family f among the families with results on a benchmark is the one of f's vendor, in f's form
factor when one is (else any), launched in f's year or before and most recently, nearest in peak BF16 throughput
(log scale) on a tie, then by name. Without one of its vendor, the family nearest in peak BF16 throughput and
launch year of any vendor is its **stand-in** (a weaker guide, said so): every family with specifications gets a
forecast on every benchmark with results.

Which ratio carries the sibling's results to the family is **chosen** (`choose_law`) among candidate laws
(`LAWS`): the ratio of their peak dense BF16 TFLOPS (`BF16_COMPUTE`), of their dense peaks at the precision the
forecast assumes (`PRECISION_COMPUTE`, `assumed_precision`: FP8 for the Llama, GPT and FLUX benchmarks from v4.0
on, BF16 otherwise, or the sibling's own where the data say it), the geometric mean of peak dense BF16 and memory
bandwidth (`COMPUTE_BANDWIDTH`, `law_log_ratio`) and, where the two have results in one round at one count of other
benchmarks, their **measured ratio** (`measured_ratios`), by the median |log error| of each on the earlier rounds'
first appearances (`first_appearances`: a family's first round in a benchmark, met there by its sibling at one
count), never on the round forecast (`pipeline.analysis.forecasting.model`).
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

# The candidate laws of a new family's ratio to its sibling, simplest first (a tie goes to the simpler): the
# specifications' three, then the ratio measured on other benchmarks where there is one.
BF16_COMPUTE, PRECISION_COMPUTE, COMPUTE_BANDWIDTH = "bf16 compute", "compute at the precision", "compute and bandwidth"
MEASURED_LAW = "measured ratio"
SPEC_LAWS = (BF16_COMPUTE, PRECISION_COMPUTE, COMPUTE_BANDWIDTH)
LAWS = (*SPEC_LAWS, MEASURED_LAW)
# The peak of the specification table a precision runs at (`configurations.parquet`'s `precision` vocabulary):
# MXFP6 runs at the FP8 rate on Blackwell (at the 4-bit one on CDNA 4: the FP8 peak is the cautious one).
PEAK_OF_PRECISION = {"fp32": "bf16_tflops", "tf32": "bf16_tflops", "fp16": "bf16_tflops", "bf16": "bf16_tflops",
                     "fp8": "fp8_tflops", "mxfp8": "fp8_tflops", "mxfp6": "fp8_tflops", "int8": "fp8_tflops",
                     "nvfp4": "fp4_tflops", "mxfp4": "fp4_tflops", "int4": "fp4_tflops"}
PEAK_NAMES = {"bf16_tflops": "BF16", "fp8_tflops": "FP8", "fp4_tflops": "4-bit"}
# Without a `precision` column: MLPerf's LLM and diffusion-transformer submissions train in FP8 from H100 on (v4.0
# on, where every such benchmark's leading families have an FP8 peak); the others in BF16.
FP8_BENCHMARK_PREFIXES = ("llama", "gpt", "flux")
FP8_FROM_ROUND = "v4.0"


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


def assumed_precision(benchmark: str, target_time: float, sibling_precision: str | None = None) -> str:
    """The precision a new family's forecast on `benchmark` for the round published at `target_time` assumes: the
    sibling's typical one there where the data say it (`sibling_precision`, of `configurations.parquet`'s
    `precision` column), else "fp8" for the Llama, GPT and FLUX benchmarks from FP8_FROM_ROUND on, else "bf16"."""
    if sibling_precision in PEAK_OF_PRECISION:
        return str(sibling_precision)
    fp8 = benchmark.startswith(FP8_BENCHMARK_PREFIXES) and target_time >= round_published(FP8_FROM_ROUND)
    return "fp8" if fp8 else "bf16"


def compute_log_ratio(family: str, sibling: str, precision: str = "bf16") -> tuple[float, str]:
    """log(time of `family` / time of `sibling`) by the ratio of their dense peaks at `precision` (minus the log of
    `family`'s peak over `sibling`'s), and the peak column used: the BF16 one where either lacks the precision's
    peak (a part without FP8 trains in BF16); NaN where either lacks that too or is not in the table."""
    table = specifications()
    if family not in table.index or sibling not in table.index:
        return math.nan, "bf16_tflops"
    wanted = PEAK_OF_PRECISION.get(precision, "bf16_tflops")
    peaks = table.loc[[family, sibling], wanted].to_numpy(dtype=float)
    if not np.isfinite(peaks).all():
        wanted = "bf16_tflops"
        peaks = table.loc[[family, sibling], wanted].to_numpy(dtype=float)
    return (-float(np.log(peaks[0] / peaks[1])) if np.isfinite(peaks).all() else math.nan), wanted


def spec_log_ratio(law: str, family: str, sibling: str, precision: str) -> float:
    """log(time of `family` / time of `sibling`) by one of SPEC_LAWS (NaN where the table cannot say)."""
    if law == COMPUTE_BANDWIDTH:
        return law_log_ratio(family, sibling)
    return compute_log_ratio(family, sibling, precision if law == PRECISION_COMPUTE else "bf16")[0]


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
class LawChoice:
    """The law a new family's ratio to its sibling follows (`choose_law`): `law`, one of SPEC_LAWS, and whether a
    measured ratio replaces it where one exists (`measured`), chosen on `cases` earlier first appearances
    (`first_appearances`; `measured_cases` of them with a measured ratio); `errors`, each law's median |log error|
    there (None without a case), the measured ratio's and the chosen law's on the cases with one."""

    law: str = BF16_COMPUTE
    measured: bool = False
    cases: int = 0
    measured_cases: int = 0
    errors: tuple[tuple[str, float | None], ...] = tuple((law, None) for law in SPEC_LAWS)
    measured_error: float | None = None
    law_error_on_measured: float | None = None

    def why(self) -> str:
        """Why this law, in a few words."""
        if not self.cases:
            return "no earlier first appearance to choose on: the simplest law"
        text = f"chosen on {self.cases} earlier first appearance{'s' if self.cases != 1 else ''}"
        if self.measured_cases:
            text += (f", a measured ratio {'where there is one' if self.measured else 'not'} on "
                     f"{self.measured_cases} earlier meeting{'s' if self.measured_cases != 1 else ''}")
        return text


SIMPLEST = LawChoice()  # the choice without any earlier first appearance


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
    law: str = COMPUTE_BANDWIDTH  # the law of `log_ratio` (MEASURED_LAW with `measured`)
    precision: str = "bf16"  # the precision the forecast assumes (`assumed_precision`)
    peak: str = "bf16_tflops"  # the peak a compute law took (`compute_log_ratio`)
    choice: LawChoice = SIMPLEST

    def ratio_text(self) -> str:
        """The ratio in words: which law, at which precision, and why (`LawChoice`)."""
        choice = self.choice
        if self.measured is not None:
            what = (f"their ratio measured on {self.measured.benchmarks} other "
                    f"benchmark{'s' if self.measured.benchmarks > 1 else ''}")
            why = (f"a measured ratio, chosen over the {choice.law} law on {choice.measured_cases} earlier meetings "
                   f"of two families of one vendor")
        else:
            what = ("the geometric mean of the ratios of their peak dense BF16 TFLOPS and memory bandwidth"
                    if self.law == COMPUTE_BANDWIDTH else
                    f"the ratio of their dense {PEAK_NAMES.get(self.peak, self.peak)} peaks")
            why = (f"the {self.law} law, {choice.why()}" if self.own_vendor else
                   f"the {COMPUTE_BANDWIDTH} law, kept for another vendor's family")
        lacking = (", which one of them has no peak for" if self.law == PRECISION_COMPUTE
                   and PEAK_OF_PRECISION.get(self.precision) != self.peak else "")
        return (f"{what} ({math.exp(self.log_ratio):.3f} of its time; {why}; the forecast assumes "
                f"{self.precision.upper()} training{lacking})")


def new_family_source(family: str, with_results: Collection[str],
                      measured: Mapping[tuple[str, str], MeasuredRatio], choice: LawChoice | None = None,
                      precision: str = "bf16") -> NewFamilySource | None:
    """The `NewFamilySource` of `family`'s forecasts on a benchmark whose families `with_results` have results: its
    own curve in another form factor where it has one, else its sibling's (`sibling_of`), by the law of `choice`
    (`choose_law`; the simplest without one) at `precision` (`assumed_precision`), or by their `measured` ratio (by
    family and sibling) where there is one and `choice` takes it (a stand-in, another vendor's family, never:
    `pipeline.analysis.forecasting.model`); None when neither it nor any of them has specifications."""
    choice = choice or SIMPLEST
    if family in with_results:
        return NewFamilySource(family, True, 0.0, None, choice=choice, precision=precision)
    found = sibling_of(family, with_results)
    if found is None:
        return None
    ratio = measured.get((family, found[0])) if found[1] and choice.measured else None
    if ratio is not None:
        return NewFamilySource(found[0], True, ratio.log_ratio, ratio, MEASURED_LAW, precision, choice=choice)
    # a stand-in (another vendor's family) keeps the compute and bandwidth law: its gap is not one of generations
    law = choice.law if found[1] else COMPUTE_BANDWIDTH
    value = spec_log_ratio(law, family, found[0], precision)
    peak = compute_log_ratio(family, found[0], precision)[1] if law == PRECISION_COMPUTE else "bf16_tflops"
    return NewFamilySource(found[0], found[1], value if math.isfinite(value) else 0.0, None, law, precision, peak,
                           choice)


# --- the choice of the law ------------------------------------------------------------------------------------------

CASE_COLUMNS = ["fold", "time", "benchmark", "family", "sibling", "first", "precision", "actual", *LAWS]


def first_appearances(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The cases the law is chosen on (`choose_law`), from `frames` (model inputs by benchmark; an optional
    `precision` column), preview systems left out as in `ratio_cells`; columns CASE_COLUMNS:

    - `first`: a family's **first appearance** in a benchmark: results in a round and none there before, its
      sibling (`sibling_of`, of its vendor, among the families with results there before) with results in that
      round at one of its counts (the specifications' laws are chosen on these);
    - the others: two families of one vendor meeting at one count in a round of a benchmark, the later launched
      one the `family`, with a ratio measured on other benchmarks before the round (first appearances with one
      are few: the measured ratio is judged on these too).

    Each with the round (`fold`, its publication `time`), the precision assumed (`assumed_precision`, from the
    sibling's results there before the round), `actual` (log of the family's time over the sibling's in that round:
    the median over shared counts of the difference of their median log times) and each of LAWS' log ratio (the
    measured one from the rounds before, on other benchmarks; NaN without one)."""
    table = specifications()
    cells = ratio_cells(frames)
    rows = []
    for name in sorted(frames):
        frame = frames[name]
        times = frame["round"].map(round_published).to_numpy(dtype=float)
        families = frame["accelerator_family"].astype(str).to_numpy()
        own, others = cells[cells["benchmark"] == name], cells[cells["benchmark"] != name]
        for fold, time in sorted({(str(r), float(t)) for r, t in zip(frame["round"], times)}, key=lambda x: x[1]):
            earlier = set(families[times < time].tolist())
            here = own[own["round"] == fold]
            measured = {(ratio.family, ratio.sibling): ratio.log_ratio
                        for ratio in pooled_ratios(cell_ratios(others, time))}
            pairs = set(zip(here["family"].tolist(), here["sibling"].tolist()))
            firsts = {}
            for family in sorted(set(families[times == time].tolist()) - earlier):
                found = sibling_of(family, earlier) if earlier else None
                if found is not None and found[1] and (family, found[0]) in pairs:
                    firsts[family] = found[0]
            for family, sibling in sorted(pairs):
                first = firsts.get(family) == sibling
                if not first and (family not in table.index or sibling not in table.index
                                  or table.loc[family, "vendor"] != table.loc[sibling, "vendor"]
                                  or (int(table.loc[family, "launch_year"]), family)
                                  <= (int(table.loc[sibling, "launch_year"]), sibling)
                                  or (family, sibling) not in measured):
                    continue
                pair = here[(here["family"] == family) & (here["sibling"] == sibling)]
                precision = assumed_precision(name, time, _typical_precision(frame, sibling, times < time))
                rows.append({"fold": fold, "time": time, "benchmark": name, "family": family, "sibling": sibling,
                             "first": first, "precision": precision, "actual": float(pair["log_ratio"].median()),
                             **{law: spec_log_ratio(law, family, sibling, precision) for law in SPEC_LAWS},
                             MEASURED_LAW: measured.get((family, sibling), math.nan)})
    return pd.DataFrame(rows, columns=CASE_COLUMNS).sort_values(["time", "benchmark", "family", "sibling"],
                                                                ignore_index=True)


def _typical_precision(frame: pd.DataFrame, family: str, rows: np.ndarray) -> str | None:
    """The most common precision of `family`'s results among `rows` of `frame`, in its latest round there (None
    without a `precision` column or a known one; ties by name)."""
    if "precision" not in frame.columns:
        return None
    chosen = frame[rows & (frame["accelerator_family"].astype(str).to_numpy() == family)]
    chosen = chosen[chosen["precision"].notna()]
    if chosen.empty:
        return None
    latest = chosen[chosen["round"].map(round_published) == chosen["round"].map(round_published).max()]
    counts = latest["precision"].astype(str).value_counts()
    return str(min(counts.index, key=lambda value: (-counts[value], value)))


def choose_law(cases: pd.DataFrame, before: float = math.inf) -> LawChoice:
    """The law of the new families' ratios forecast at `before` (years), from the `first_appearances` cases
    published before it: the one of SPEC_LAWS with the smallest median |log error| (log ratio - actual) on the first
    appearances every one of them covers (a tie: the simpler, SPEC_LAWS' order); then the measured ratio where
    there is one, if its median |log error| on the cases with one (first appearances and later meetings) is below
    that law's on the same cases (a tie: the law)."""
    earlier = cases[cases["time"].to_numpy(dtype=float) < before]
    actual = earlier["actual"].to_numpy(dtype=float)
    errors = {law: np.abs(earlier[law].to_numpy(dtype=float) - actual) for law in LAWS}
    specified = np.all([np.isfinite(errors[law]) for law in SPEC_LAWS], axis=0) if len(earlier) else np.zeros(0, bool)
    covered = specified & earlier["first"].to_numpy(dtype=bool)
    medians: dict[str, float | None] = {
        law: float(np.round(np.median(errors[law][covered]), CURVE_DECIMALS)) if covered.any() else None
        for law in SPEC_LAWS}
    law = min(SPEC_LAWS, key=lambda name: (math.inf if medians[name] is None else medians[name],
                                           SPEC_LAWS.index(name)))
    with_measured = specified & np.isfinite(errors[MEASURED_LAW])
    measured_error = law_error = None
    if with_measured.any():
        measured_error = float(np.round(np.median(errors[MEASURED_LAW][with_measured]), CURVE_DECIMALS))
        law_error = float(np.round(np.median(errors[law][with_measured]), CURVE_DECIMALS))
    return LawChoice(law=law, measured=measured_error is not None and law_error is not None
                     and measured_error < law_error, cases=int(covered.sum()),
                     measured_cases=int(with_measured.sum()), errors=tuple(medians.items()),
                     measured_error=measured_error, law_error_on_measured=law_error)
