"""The findings' result types (a test, a finding, the page's correction; their JSON records) and the findings stage's
artifact, one benchmark's published findings tested, as the rank stage reads them
(`pipeline.analysis.statistics.findings` runs the tests)."""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import Field

from pipeline.core.artifacts import Artifact, Record

SUPPORTED, CONTRADICTED, INCONCLUSIVE = "supported", "contradicted", "inconclusive"
VERDICTS = (SUPPORTED, CONTRADICTED, INCONCLUSIVE)
CORRECTION = "Holm"  # the multiple-testing correction, over every test of the page
# The note of a test whose units all share one value (every series wholly below linear): the interval has no width.
NO_SPREAD = ("no spread: every unit has the same value, so the interval has no width; p is the exact sign-flip "
             "test's over the submitters, the smallest it can give")
# The scope of the sublinear claim's one test (`pool_sublinear`), shown on every benchmark's page.
EVERY_BENCHMARK = "every benchmark"

# The claims, in the order of the study, as short headers and sentences.
CLAIMS = {
    "sublinear": ("Sublinear speed-up", "Speed-up from adding accelerators is sublinear (within a series)"),
    "diminishing": ("Shrinking gain per chip", "Within a series, efficiency falls as accelerators are added"),
    "moderate": ("Best: 4 to 16 accelerators",
                 "The most hardware-efficient results use a moderate number (4 to 16) of accelerators"),
    "latest": ("Best: latest generation",
               "The most hardware-efficient results use accelerators of the newest generation available then"),
    "host": ("Best: strong host, fast links",
             "The most hardware-efficient results have more host CPU cores and faster intra-node links"),
    "largest_fastest": ("Largest systems fastest", "The largest systems of a round have the shortest times"),
    "largest_inefficient": ("Largest systems least efficient",
                            "The largest systems of a round use the most hardware time per training"),
}


# ------------------------------------------------------------------------------------------ results, typed

@dataclass(frozen=True)
class Test:
    """One test of a finding, as the page shows it.

    `estimate`, `low` and `high` are the effect and its 1 - alpha interval on the reported scale: a ratio (no
    effect = 1) when `ratio`, else a difference (no effect = 0). `n` results of `submitters` submitters (for a
    comparison of two groups: the fewer of the two groups' submitters). `p_raw` is the two-sided p-value of the
    clustered t test (CR2 standard error, `df` Bell-McCaffrey degrees of freedom; None when the test was not run:
    `note` says why), `p_adjusted` it Holm-adjusted over the page (None before `adjust`); `verdict_raw` judges
    `p_raw`, `verdict` judges `p_adjusted` (before `adjust`: the same as `verdict_raw`).
    """
    label: str
    effect: str
    ratio: bool
    claim_above: bool  # the claim says the effect is above "no effect"
    n: int
    submitters: int
    estimate: float | None = None
    low: float | None = None
    high: float | None = None
    p_raw: float | None = None
    df: float | None = None
    p_adjusted: float | None = None
    verdict_raw: str = INCONCLUSIVE
    verdict: str = INCONCLUSIVE
    note: str = ""
    scope: str = ""  # empty: the benchmark's own results; EVERY_BENCHMARK: the one test of every benchmark together
    descriptive: bool = False  # an estimate with its interval and no test (no p, not corrected, no verdict)

    @property
    def null(self) -> float:
        """The effect under no difference: 1 for a ratio, 0 for a difference."""
        return 1.0 if self.ratio else 0.0

    def direction(self) -> str:
        """SUPPORTED when the estimate is on the claimed side of no effect, else CONTRADICTED."""
        assert self.estimate is not None
        return SUPPORTED if (self.estimate > self.null) == self.claim_above else CONTRADICTED

    def evidence(self) -> str:
        """The test in words: effect, interval, n, submitters, p with its degrees of freedom and the adjusted p (or
        why it was not run)."""
        size = f"n = {self.n}, {self.submitters} submitter{'s' if self.submitters != 1 else ''}"
        if self.descriptive and self.estimate is not None:
            return f"{self.label}: {self.effect} {self.effect_text()}, {size} (an estimate, not a test)"
        if self.p_raw is None or self.estimate is None:
            return f"{self.label}: not tested, {self.note} ({size})"
        adjusted = "not adjusted" if self.p_adjusted is None else f"{CORRECTION}-adjusted p = {p_text(self.p_adjusted)}"
        degrees = "" if self.df is None else f" ({self.df:.1f} degrees of freedom)"
        method = "exact sign-flip p" if self.note == NO_SPREAD else "CR2 p"
        return (f"{self.label}: {self.effect} {self.effect_text()}, {size}; {method} = {p_text(self.p_raw)}{degrees}, "
                f"{adjusted}")

    def effect_text(self) -> str:
        """The estimate and its interval: "0.75 (95% CI 0.64 to 0.89)", or "+29 points (95% CI +14 to +43)" for a
        difference in shares; empty when the test did not run."""
        if self.estimate is None or self.low is None or self.high is None:
            return ""
        if self.ratio:
            return f"{self.estimate:.2f} (95% CI {self.low:.2f} to {self.high:.2f})"
        return f"{self.estimate * 100:+.0f} points (95% CI {self.low * 100:+.0f} to {self.high * 100:+.0f})"


@dataclass(frozen=True)
class Finding:
    """One finding of `CLAIMS` tested on one benchmark: its tests, the method in words and, for `sublinear`, the
    efficiency by accelerator-count band (descriptive)."""
    key: str
    method: str
    tests: tuple[Test, ...]
    bands: list[dict[str, Any]] = field(default_factory=list)
    # sublinear only: each series' (submitter, share of members below linear minus one half), which `pool_sublinear`
    # tests with every benchmark's; not in the record
    units: tuple[tuple[str, float], ...] = ()

    @property
    def short(self) -> str:
        """The claim's short name, as the page's table heads it."""
        return CLAIMS[self.key][0]

    @property
    def claim(self) -> str:
        """The claim in one sentence, as the published study makes it."""
        return CLAIMS[self.key][1]

    @property
    def verdict(self) -> str:
        """supported, contradicted or inconclusive after the correction, combined over the finding's tests (all must
        agree; a descriptive estimate is no test)."""
        return combined([test.verdict for test in self.tests if not test.descriptive])

    @property
    def verdict_raw(self) -> str:
        """The same verdict before the correction for the number of tests."""
        return combined([test.verdict_raw for test in self.tests if not test.descriptive])

    def evidence(self) -> str:
        """Each test's effect, interval and p-values in words, joined by semicolons."""
        return "; ".join(test.evidence() for test in self.tests)

    def as_json(self) -> dict[str, Any]:
        """rank.json's record of the finding (`FindingRecord`; NaN as null, floats to 4 significant digits)."""
        return plain({"key": self.key, "short": self.short, "claim": self.claim, "verdict": self.verdict,
                       "verdict_raw": self.verdict_raw, "test": self.method, "evidence": self.evidence(),
                       "tests": [dataclasses.asdict(test) for test in self.tests],
                       **({"bands": self.bands} if self.key == "sublinear" else {})})

    def record(self) -> FindingRecord:
        """rank.json's record of the finding, typed (`as_json` validated)."""
        return FindingRecord.model_validate(self.as_json())


class EfficiencyBand(Record):
    """The within-series scaling efficiency (1 = linear, higher: better) of the members above their series' base
    in one accelerator-count band (`efficiency_bands`, descriptive)."""

    band: str
    """Accelerator counts: "8 to 15", or "1024+" for the last."""
    n: int
    """Results."""
    median: float
    """Median efficiency."""
    low: float | None
    """Its bootstrap interval (params `findings.alpha`); None with fewer than `findings.min_group` results."""
    high: float | None
    """Its upper end."""
    share_below_1: float
    """Share of the results below 1 (sublinear), 0 to 1."""


class FindingRecord(Record):
    """rank.json's record of one finding tested on one benchmark (`Finding.record`), after the page's
    correction."""

    key: str
    """The finding (a key of `CLAIMS`)."""
    short: str
    """Its short header."""
    claim: str
    """The claim in a sentence."""
    verdict: str
    """One of `VERDICTS`, on the Holm-adjusted p-values."""
    verdict_raw: str
    """The same on the p-values before the correction."""
    test: str
    """The method in words."""
    evidence: str
    """Each test in words."""
    tests: list[Test]
    """Its tests."""
    bands: list[EfficiencyBand] = Field(default_factory=list)
    """The sublinear finding only: the efficiency by accelerator-count band."""


def combined(verdicts: Sequence[str]) -> str:
    """A finding's verdict from its tests': supported when all are, contradicted when any is."""
    if verdicts and all(verdict == SUPPORTED for verdict in verdicts):
        return SUPPORTED
    return CONTRADICTED if CONTRADICTED in verdicts else INCONCLUSIVE


@dataclass(frozen=True)
class Correction:
    """The multiple-testing correction of the page: Holm over `tests` p-values of `benchmarks` benchmarks at
    `alpha`, and how many tests and findings were supported before and after it."""
    method: str
    alpha: float
    benchmarks: int
    tests: int
    tests_supported_raw: int
    tests_supported: int
    findings: int
    findings_supported_raw: int
    findings_supported: int

    def statement(self) -> str:
        """The correction in one sentence: method, tests, benchmarks, alpha and how many findings it supports."""
        return (f"{self.method}'s correction over all {self.tests} tests of the {self.benchmarks} benchmarks at "
                f"alpha = {self.alpha:g}: {self.findings_supported} of {self.findings} findings supported "
                f"({self.findings_supported_raw} before correction)")


def plain(value: Any) -> Any:
    """JSON-ready: NaN to None, numpy scalars to Python, floats to 4 significant digits (stable output)."""
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {name: plain(item) for name, item in value.items()}
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(f"{float(value):.4g}")
    return value


def p_text(value: float) -> str:
    """A p-value as the pages print it: two significant digits, "n/a" for NaN."""
    return "n/a" if math.isnan(value) else f"{value:.2g}"


class FindingsReport(Artifact):
    """One benchmark's published findings tested (data/processed/findings/<benchmark>.json, the findings stage), the
    p-values adjusted over every benchmark analysed (`findings.across_benchmarks`)."""

    KIND = "findings"

    findings: list[FindingRecord] = Field(default_factory=list)
    """The findings, in the order of `findings.CLAIMS`."""
    correction: Correction | None = None
    """The page's multiple-testing correction (the same in every benchmark)."""

    @classmethod
    def of(cls, benchmark: str, found: Sequence[Finding], correction: Correction) -> FindingsReport:
        """The report of `benchmark`'s findings as `findings.across_benchmarks` returns them."""
        return cls(benchmark=benchmark, status="ok", findings=[item.record() for item in found],
                   correction=correction)
