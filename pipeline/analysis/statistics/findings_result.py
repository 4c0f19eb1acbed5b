"""The findings stage's result: one benchmark's published findings tested, as the rank stage reads them."""
from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from pipeline.analysis.statistics.findings import Correction, Finding, FindingRecord
from pipeline.core.artifacts import Artifact


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
