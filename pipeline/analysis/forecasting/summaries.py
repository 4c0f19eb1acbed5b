"""The backtest summarised: `predict`'s answers against the model and the naive rule, overall and per fold,
family and kind (`compare`, `summarise_backtest`), and the records decide.json keeps of them.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from pipeline.analysis.forecasting.backtest import common_rows, result_keys
from pipeline.analysis.forecasting.intervals import UNCALIBRATED
from pipeline.analysis.forecasting.model import ANSWER, KINDS, MODEL, NAIVE, NAIVE_METHOD
from pipeline.core.artifacts import Record
from pipeline.mlperf.catalogue import round_version

# Two median errors (percentage points) closer than this are a tie (the answer wins it): the curves' rounding to
# CURVE_DECIMALS moves an error by up to about 1e-7 points.
TIE_PCT = 1e-6

# --- summaries ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ErrorSummary:
    """Absolute percentage errors (%) of a set of forecasts (columns ape_pct and inside_interval): count,
    median, 90th percentile, and the share inside their interval."""

    n: int
    median_ape_pct: float | None
    p90_ape_pct: float | None
    coverage: float | None
    inside: int

    @classmethod
    def of(cls, points: pd.DataFrame) -> ErrorSummary:
        """The summary of backtest points (`ape_pct`, the absolute error in %, and `inside_interval`)."""
        return cls.of_arrays(points["ape_pct"].to_numpy(dtype=float), points["inside_interval"].astype(bool).to_numpy())

    @classmethod
    def of_arrays(cls, ape: np.ndarray, inside: np.ndarray) -> ErrorSummary:
        """The summary of errors `ape` (%) and whether each was inside its interval (`inside`, booleans)."""
        if not len(ape):
            return cls(0, None, None, None, 0)
        return cls(len(ape), float(np.median(ape)), float(np.quantile(ape, 0.9)), float(inside.mean()),
                   int(inside.sum()))

    def as_dict(self, prefix: str) -> dict[str, Any]:
        """The summary as `<prefix>_n`, `_median_ape_pct`, `_p90_ape_pct` (%) and `_coverage` (0 to 1)."""
        return {f"{prefix}_n": self.n, f"{prefix}_median_ape_pct": self.median_ape_pct,
                f"{prefix}_p90_ape_pct": self.p90_ape_pct, f"{prefix}_coverage": self.coverage}


@dataclass(frozen=True)
class Comparison:
    """One set of backtest points summarised: `predict`'s answers (all, trusted, untrusted), the model's and
    the naive rule's forecasts; the three on the results each answer and the naive rule forecast (`common_*`);
    `better` names the lower median there ("answer" or "naive"), the naive rule only if strictly lower."""

    answer: ErrorSummary
    trusted: ErrorSummary
    untrusted: ErrorSummary
    model: ErrorSummary
    naive: ErrorSummary
    common_n: int
    common_answer_median_ape_pct: float | None
    common_model_median_ape_pct: float | None
    common_naive_median_ape_pct: float | None
    methods: dict[str, int]  # how many answers each method gave

    @property
    def better(self) -> str:
        """"naive" when the naive rule's median error on the common results is strictly lower, else "answer"."""
        if self.common_n and self.common_naive_median_ape_pct is not None and \
                self.common_answer_median_ape_pct is not None and \
                self.common_naive_median_ape_pct < self.common_answer_median_ape_pct - TIE_PCT:
            return NAIVE_METHOD
        return ANSWER

    def as_dict(self) -> dict[str, Any]:
        """Every summary flattened with its prefix, the common results' medians (%) and the methods' counts."""
        return {**self.answer.as_dict("answer"), **self.trusted.as_dict("trusted"),
                **self.untrusted.as_dict("untrusted"), **self.model.as_dict("model"),
                **self.naive.as_dict("naive"), "common_n": self.common_n,
                "common_answer_median_ape_pct": self.common_answer_median_ape_pct,
                "common_model_median_ape_pct": self.common_model_median_ape_pct,
                "common_naive_median_ape_pct": self.common_naive_median_ape_pct,
                "answer_methods": dict(sorted(self.methods.items())), "better": self.better}

    def record(self) -> ComparisonRecord:
        """`as_dict` as the declared record."""
        return ComparisonRecord.model_validate(self.as_dict())


def error_sentence(record: ComparisonRecord | None) -> str:
    """The one error figure of a benchmark's answers, as the page, reports/metrics (`backtest_median_ape_pct`,
    `naive_median_ape_pct`), the decide stage's log and `predict` give it: the median absolute percentage error of
    every answer `predict` would have given in the forward backtest, with the naive rule's on the results it also
    forecast beside it."""
    if record is None or not record.answer_n or record.answer_median_ape_pct is None:
        return "no backtest (no round of the benchmark has an earlier one to be forecast from)"
    naive = ("" if record.common_naive_median_ape_pct is None else
             f"; the naive rule {record.common_naive_median_ape_pct:.1f}% on the {record.common_n} of them it also "
             f"forecast")
    return (f"backtest median error {record.answer_median_ape_pct:.1f}% over {record.answer_n} answers, each round "
            f"forecast from the ones before it{naive}")


def new_family_sentence(record: AnswerErrors) -> str:
    """The error `predict` states for an answer about a family's first round in a benchmark (from a sibling or the
    specifications): every benchmark's backtest answers of that kind, their median error and coverage."""
    if not record.answer_n or record.answer_median_ape_pct is None:
        return "no backtest of a family's first round in a benchmark yet"
    return (f"a family's first round in a benchmark: backtest median error {record.answer_median_ape_pct:.1f}% "
            f"over {record.answer_n} such answers on every benchmark, {100 * (record.answer_coverage or 0):.0f}% "
            f"inside their interval")


def compare(points: pd.DataFrame) -> Comparison:
    """The Comparison of a set of backtest points (POINT_COLUMNS)."""
    return _PointArrays.of(points).compare(np.ones(len(points), dtype=bool))


@dataclass(frozen=True)
class _PointArrays:
    """The columns of backtest points (POINT_COLUMNS) that `compare` reads, as arrays, one entry per point, with
    each point's result (`result_keys`): the summaries compare many subsets of the same points."""

    keys: np.ndarray
    method: np.ndarray
    ape: np.ndarray
    inside: np.ndarray
    trusted: np.ndarray
    chosen: np.ndarray

    @classmethod
    def of(cls, points: pd.DataFrame) -> _PointArrays:
        return cls(result_keys(points), points["method"].to_numpy(dtype=object),
                   points["ape_pct"].to_numpy(dtype=float), points["inside_interval"].astype(bool).to_numpy(),
                   points["trusted"].astype(bool).to_numpy(), points["chosen"].to_numpy(dtype=object))

    def compare(self, subset: np.ndarray) -> Comparison:
        """The Comparison of the points where `subset` (booleans) holds."""
        rows = np.flatnonzero(subset)
        method, ape, inside = self.method[rows], self.ape[rows], self.inside[rows]
        answers = method == ANSWER
        trusted = answers & self.trusted[rows]
        common = dict(zip((ANSWER, MODEL, NAIVE_METHOD),
                          common_rows(self.keys[rows], method, (ANSWER, MODEL, NAIVE_METHOD))))

        def summary(mask: np.ndarray) -> ErrorSummary:
            return ErrorSummary.of_arrays(ape[mask], inside[mask])

        def median(method_rows: np.ndarray) -> float | None:
            return float(np.median(ape[method_rows])) if len(method_rows) else None

        return Comparison(
            answer=summary(answers), trusted=summary(trusted), untrusted=summary(answers & ~trusted),
            model=summary(method == MODEL), naive=summary(method == NAIVE_METHOD), common_n=len(common[ANSWER]),
            common_answer_median_ape_pct=median(common[ANSWER]), common_model_median_ape_pct=median(common[MODEL]),
            common_naive_median_ape_pct=median(common[NAIVE_METHOD]),
            methods={str(name): n for name, n in Counter(self.chosen[rows][answers].tolist()).items()
                     if isinstance(name, str)})  # (a Counter: a pandas Series per comparison cost more)


class AnswerErrors(Record):
    """Absolute percentage errors of `predict`'s answers in the backtest (`ErrorSummary`)."""

    answer_n: int
    """Answers."""
    answer_median_ape_pct: float | None
    """Their median absolute percentage error (%; lower: better); None without an answer."""
    answer_p90_ape_pct: float | None
    """Its 90th percentile (%)."""
    answer_coverage: float | None
    """The share of published times inside the answers' interval (0 to 1; the aim: params `decide.target_coverage`)."""


class KindErrors(AnswerErrors):
    """The answers of one kind of forecast."""

    kind: str
    """The kind (one of KINDS, or the naive rule)."""


class ComparisonRecord(AnswerErrors):
    """A set of backtest points summarised (`Comparison`): `predict`'s answers (all, trusted, untrusted), the
    model's and the naive rule's forecasts, each as count, median and 90th-percentile error (%) and coverage, and
    the three on the results both the answer and the naive rule forecast (`common_*`)."""

    trusted_n: int
    """Trusted answers."""
    trusted_median_ape_pct: float | None
    """Their median error (%)."""
    trusted_p90_ape_pct: float | None
    """Their 90th-percentile error (%)."""
    trusted_coverage: float | None
    """Their share inside the interval."""
    untrusted_n: int
    """Untrusted answers."""
    untrusted_median_ape_pct: float | None
    """Their median error (%)."""
    untrusted_p90_ape_pct: float | None
    """Their 90th-percentile error (%)."""
    untrusted_coverage: float | None
    """Their share inside the interval."""
    model_n: int
    """The model's forecasts."""
    model_median_ape_pct: float | None
    """Their median error (%)."""
    model_p90_ape_pct: float | None
    """Their 90th-percentile error (%)."""
    model_coverage: float | None
    """Their share inside the interval."""
    naive_n: int
    """The naive rule's forecasts."""
    naive_median_ape_pct: float | None
    """Their median error (%)."""
    naive_p90_ape_pct: float | None
    """Their 90th-percentile error (%)."""
    naive_coverage: float | None
    """Their share inside the interval."""
    common_n: int
    """Results forecast by both the answer and the naive rule."""
    common_answer_median_ape_pct: float | None
    """The answers' median error on them (%)."""
    common_model_median_ape_pct: float | None
    """The model's median error on them (%)."""
    common_naive_median_ape_pct: float | None
    """The naive rule's median error on them (%)."""
    answer_methods: dict[str, int]
    """How many answers each method gave."""
    better: str
    """The lower median on the common results: "answer", or "naive" only if strictly lower."""


class FoldComparison(ComparisonRecord):
    """The answers for one round, forecast from the rounds before it."""

    fold: str
    """The round forecast."""


class FamilyComparison(ComparisonRecord):
    """The answers for one accelerator family."""

    family: str
    """The accelerator family."""


class BacktestSummary(ComparisonRecord):
    """decide.json's `backtest` (`summarise_backtest`): every answer, then by round, family and kind."""

    folds: list[FoldComparison]
    """By round forecast, oldest first."""
    latest_fold: FoldComparison | None
    """The latest round forecast on its own."""
    families: list[FamilyComparison]
    """By accelerator family, by name."""
    kinds: list[KindErrors]
    """By kind of forecast, for the kinds answered."""
    calibrated_share: float | None
    """The share of answers whose interval is calibrated on earlier forecasts (0 to 1)."""


def summarise_backtest(points: pd.DataFrame) -> BacktestSummary:
    """decide.json's `backtest`: overall, the latest fold on its own, and per fold, family and model kind."""
    folds = sorted(points["fold"].unique(), key=round_version) if len(points) else []
    answers = points[points["method"] == ANSWER]
    arrays = _PointArrays.of(points)
    fold, family = points["fold"].to_numpy(dtype=object), points["accelerator_family"].to_numpy(dtype=object)
    return BacktestSummary.model_validate({
        **arrays.compare(np.ones(len(points), dtype=bool)).as_dict(),
        "folds": [{"fold": name, **arrays.compare(fold == name).as_dict()} for name in folds],
        "latest_fold": {"fold": folds[-1], **arrays.compare(fold == folds[-1]).as_dict()} if folds else None,
        "families": [{"family": name, **arrays.compare(family == name).as_dict()}
                     for name in sorted(points["accelerator_family"].unique())],
        "kinds": [{"kind": kind, **ErrorSummary.of(answers[answers["kind"] == kind]).as_dict("answer")}
                  for kind in (*KINDS, NAIVE) if (answers["kind"] == kind).any()],
        "calibrated_share": float((answers["calibration"] != UNCALIBRATED).mean()) if len(answers) else None,
    })
