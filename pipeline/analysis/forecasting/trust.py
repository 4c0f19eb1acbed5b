"""Trust (`trust_reasons`, one rule for the backtest, `predict` and the page): a forecast is trusted when the family
has results from `decide.trust.min_rounds` rounds, its count lies between the smallest published and
`max_count_factor` x the largest (of the family's latest round, for a method resting on the naive rule), and the
method's earlier backtest forecasts of
the family (or, with fewer than `decide.trust.min_backtest_points`, of the benchmark and kind) are covered
consistently with `decide.trust.coverage` and have a median error within `decide.trust.max_error`. A family new to
the benchmark (a sibling's curve, `NEW_FAMILY_KINDS`) earns trust by the same rule: the rounds and counts are those
of the family it learns from (its sibling; the benchmark's for the regression on specifications) and the evidence
its kind's own earlier backtest forecasts, on every benchmark (a benchmark sees few first rounds). Counts beyond
the trusted range are "extrapolated"; more than `ABSURD_COUNT` accelerators are refused.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from pipeline.settings import DecideTrustSettings

Evidence = tuple[int, int, float | None]  # earlier answers inside their interval, all of them, median error %


@lru_cache(maxsize=4096)
def coverage_consistent(inside: int, n: int, coverage: tuple[float, float], confidence_level: float = 0.9) -> bool:
    """Whether `inside` of `n` forecasts inside their interval is consistent with a coverage in the range
    `coverage` (params `decide.trust.coverage`): the Clopper-Pearson interval (at `confidence_level`) of the
    observed share overlaps it. Small samples are judged fairly: 5 of 5 is consistent, 3 of 10 is not."""
    from scipy.special import betaincinv  # the exact interval's beta quantiles (scipy.stats costs 0.6 s to import)

    tail = (1 - confidence_level) / 2
    low = 0.0 if inside == 0 else float(betaincinv(inside, n - inside + 1, tail))
    high = 1.0 if inside == n else float(betaincinv(inside + 1, n - inside, 1 - tail))
    return low <= coverage[1] and high >= coverage[0]


def trust_reasons(n_rounds: int, count: float, published: tuple[float, float] | None,
                  family_evidence: Evidence, kind_evidence: Evidence, rule: DecideTrustSettings,
                  latest_round_only: bool = False, learned_from: str | None = None) -> list[str]:
    """Why a forecast is not trusted (empty: trusted), the one rule of the backtest and `predict`. `published`
    is the family's (smallest, largest) published count, None for a forecast with nothing to learn from;
    `family_evidence` (inside the interval, forecasts, median error %) of the family's earlier backtest
    forecasts by the answering method; `kind_evidence` the same of the benchmark's by that method and kind, the
    fallback (for a new family, its kind's on every benchmark). `latest_round_only`: `published` is the family's
    latest round's range (a method resting on the naive rule scales linearly beyond it). `learned_from`: a family
    new to the benchmark, forecast from this family's results (`n_rounds` and `published` are its)."""
    reasons = []
    owner = "the benchmark's" if learned_from == "the benchmark" else f"{learned_from}'s"
    whose = "results" if learned_from is None else f"{owner} results (learned from)"
    if n_rounds < rule.min_rounds:
        reasons.append(f"{whose} from {n_rounds} round{'s' if n_rounds != 1 else ''} (needs {rule.min_rounds})")
    evidence: Evidence | None = None
    kind_source = ("the benchmark's (the family has too few)" if learned_from is None
                   else "its kind's, on every benchmark (a family new to the benchmark)")
    if family_evidence[1] >= rule.min_backtest_points:
        evidence, source = family_evidence, "the family's"
    elif kind_evidence[1] >= rule.min_backtest_points:
        evidence, source = kind_evidence, kind_source
    else:
        reasons.append(f"{family_evidence[1]} backtest forecasts of the family and {kind_evidence[1]} of its kind "
                       f"(needs {rule.min_backtest_points})")
    if evidence is not None:
        if not coverage_consistent(evidence[0], evidence[1], rule.coverage):
            reasons.append(f"{source} backtest coverage {evidence[0]} of {evidence[1]} is out of the "
                           f"{100 * rule.coverage[0]:.0f}-{100 * rule.coverage[1]:.0f}% range")
        if evidence[2] is not None and evidence[2] > 100 * rule.max_error:
            reasons.append(f"{source} backtest median error {evidence[2]:.0f}% is above "
                           f"{100 * rule.max_error:.0f}%")
    if published is None:
        reasons.append("no published results of the family or of one to learn from on this benchmark")
    elif not published[0] <= count <= rule.max_count_factor * published[1]:
        where = ("the family's latest round's published" if latest_round_only else "the published"
                 if learned_from is None else f"{owner} published")
        reasons.append(f"{count:g} accelerators is outside {where} {published[0]:g} to {published[1]:g} "
                       f"(up to {rule.max_count_factor:g}x the largest allowed)")
    return reasons


def backtest_evidence(points: pd.DataFrame, by: str) -> dict[tuple[str, str], Evidence]:
    """(inside, n, median error %) of the forecasts of `points` per method and value of column `by` (sorted;
    rows missing either are left out)."""
    groups: dict[tuple[Any, Any], list[int]] = {}
    for row, key in enumerate(zip(points["method"].tolist(), points[by].tolist())):
        if not (pd.isna(key[0]) or pd.isna(key[1])):
            groups.setdefault(key, []).append(row)
    inside, ape = points["inside_interval"].to_numpy(), points["ape_pct"].to_numpy(dtype=float)
    return {(str(method), str(key)): (int(inside[rows].sum()), len(rows), float(np.median(ape[rows])))
            for (method, key), rows in sorted(groups.items())}
