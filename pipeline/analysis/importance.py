"""Stage `importance`: which hardware features explain time to train and accelerator-hours, for one benchmark.

    python -m pipeline.stages.importance

A gradient-boosted model (settings in params `importance.model`) predicts log10(time to train) and
log10(accelerator-hours) from the hardware features and the round's publication date (`round_year`, the software
era: the same hardware often trains twice as fast two rounds later, and without this covariate accelerator year or
memory would be credited with that progress). Folds are grouped by system family (submitter and accelerator
family) so one family's results never sit on both sides of a split; the grouped split is repeated
`importance.repeats` times with shuffled fold assignments. Reported per target: the out-of-fold R^2 (mean and s.d.
over the repeats), the median absolute error, permutation importance on the held-out folds (mean and s.d. over
folds x repeats x `permutation_repeats`), and two model-free views: Spearman's rank correlation and mutual
information of each feature with the target.

Gate (params `importance.min_r2`): a target's importances count only when its out-of-fold R^2 minus one s.d. over
the repeats is at least `min_r2`; otherwise importance.json says the features do not explain it. Selection (params
`importance.select`): among the targets that pass, a numeric hardware feature is selected for clustering when its
mean permutation importance for either is at least `min_importance` (R^2 lost); the strongest `max_features` are
kept. The round is reported like any feature but never selected. No target passes: nothing is selected.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from sklearn import config_context
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.feature_selection import mutual_info_regression
from sklearn.metrics import median_absolute_error, r2_score
from sklearn.model_selection import GroupKFold
from threadpoolctl import threadpool_limits

from pipeline.analysis.scope import ROUND_FEATURE
from pipeline.core.features import CATEGORICAL_FEATURES, NUMERIC_FEATURES
from pipeline.mlperf.catalogue import round_published
from pipeline.settings import Importance, Model

TARGETS = {"log_time_to_train": "time_to_train_min", "log_accelerator_hours": "accelerator_hours"}
DIGITS = 4  # stored statistics: enough for a 0.001 R^2 difference, stable across platforms
MIN_SPEARMAN_PAIRS = 5  # fewer complete pairs than this give no rank correlation


def with_round_year(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` plus the round's publication date as a fractional year (column `round_year`)."""
    return frame.assign(**{ROUND_FEATURE: frame["round"].map(round_published).astype(float)})


def feature_columns(frame: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The model's features that vary in this data (a constant column explains nothing); numeric ones include the
    round when the frame has it."""
    candidates = NUMERIC_FEATURES + ([ROUND_FEATURE] if ROUND_FEATURE in frame else [])
    numeric = [c for c in candidates if frame[c].nunique(dropna=True) > 1]
    categorical = [c for c in CATEGORICAL_FEATURES if frame[c].nunique(dropna=True) > 1]
    return numeric, categorical


def encode(frame: pd.DataFrame, numeric: list[str], categorical: list[str]) -> np.ndarray:
    """Categorical columns as integer codes (missing stays NaN) beside the numeric ones, as one float matrix.

    Coding categories before the folds leaks no target information and keeps each prediction a numpy call,
    which is what makes thousands of permutation predictions cheap.
    """
    codes = [pd.factorize(frame[column])[0].astype(float) for column in categorical]
    columns = [np.where(code < 0, np.nan, code) for code in codes]
    columns += [frame[column].to_numpy(dtype=float) for column in numeric]
    return np.column_stack(columns)


def make_model(n_categorical: int, n_numeric: int, model: Model, seed: int) -> HistGradientBoostingRegressor:
    """The gradient-boosted model with params `importance.model` (HistGradientBoostingRegressor settings), the
    first `n_categorical` columns categorical."""
    mask = [True] * n_categorical + [False] * n_numeric
    return HistGradientBoostingRegressor(**model.model_dump(), categorical_features=mask if n_categorical else None,
                                         random_state=seed)


def system_families(frame: pd.DataFrame) -> np.ndarray:
    return (frame["submitter"].astype(str) + "|" + frame["accelerator_family"].fillna("?").astype(str)).to_numpy()


def _stats(values: Sequence[float]) -> dict[str, float]:
    return {"mean": round(float(np.mean(values)), DIGITS), "std": round(float(np.std(values)), DIGITS)}


def stacked_permutation_importance(model: Any, x: np.ndarray, y: np.ndarray, repeats: int, seed: int) -> np.ndarray:
    """R^2 lost when each column of `x` (rows x features) is shuffled, `repeats` times: features x repeats.

    The same values as `sklearn.inspection.permutation_importance(model, x, y, n_repeats=repeats,
    random_state=seed, scoring="r2")`, with its shuffles (one seed drawn from `seed`, one shuffle sequence that
    every column replays, each shuffle applied to the previous one), but with every shuffled copy of the matrix
    stacked into one `model.predict` call: sklearn predicts once per feature and repeat, and on a few hundred rows
    the per-call overhead is nearly all of its time.
    """
    n_rows, n_features = x.shape
    if n_rows < 2 or len(y) != n_rows:
        raise ValueError(f"permutation importance needs at least two rows and one target per row (got {n_rows} "
                         f"rows, {len(y)} targets)")
    shuffles = np.random.RandomState(np.random.RandomState(seed).randint(np.iinfo(np.int32).max + 1))
    index = np.arange(n_rows)
    orders = []  # orders[r][i]: which original row the i-th row's value comes from after r + 1 shuffles
    current = np.arange(n_rows)
    for _ in range(repeats):
        shuffles.shuffle(index)
        current = current[index]
        orders.append(current)
    # A column with one value (or none) in these rows is the same after any shuffle: it loses exactly 0.
    constant = np.array([np.isnan(column).all() or (column == column[0]).all() for column in x.T])
    shuffled = np.flatnonzero(~constant)
    stacked = np.repeat(x[None], len(shuffled) * repeats + 1, axis=0)  # copy 0 is the unshuffled baseline
    for position, feature in enumerate(shuffled):
        for repeat, order in enumerate(orders):
            stacked[1 + position * repeats + repeat, :, feature] = x[order, feature]
    predicted = model.predict(stacked.reshape(-1, n_features)).reshape(len(stacked), n_rows)
    residual = ((y[None] - predicted) ** 2).sum(axis=1)
    total = ((y - y.mean()) ** 2).sum()
    # r2_score's conventions for a constant target: 1 for a perfect prediction, else 0
    r2 = 1 - residual / total if total > 0 else np.where(residual == 0, 1.0, 0.0)
    importances = np.zeros((n_features, repeats))
    importances[shuffled] = (r2[0] - r2[1:]).reshape(len(shuffled), repeats)
    return importances


def cross_validated_importance(frame: pd.DataFrame, target: str, settings: Importance) -> dict[str, Any]:
    """Out-of-fold R^2 (over repeated grouped splits) and permutation importance of one target.

    `frame` holds the features and the positive target column; the target is modelled on log10.
    """
    numeric, categorical = feature_columns(frame)
    columns = categorical + numeric
    x = encode(frame, numeric, categorical)
    y = np.log10(frame[target].to_numpy(dtype=float))
    groups = system_families(frame)
    folds = min(settings.folds, len(set(groups)))
    r2_by_repeat, error_by_repeat = [], []
    samples: dict[str, list[float]] = {column: [] for column in columns}
    for repeat in range(settings.repeats):
        seed = settings.seed + repeat
        predicted = np.full(len(y), np.nan)
        for train, test in GroupKFold(n_splits=folds, shuffle=True, random_state=seed).split(x, y, groups):
            model = make_model(len(categorical), len(numeric), settings.model, seed).fit(x[train], y[train])
            predicted[test] = model.predict(x[test])
            if len(test) < 2:
                continue
            importances = stacked_permutation_importance(model, x[test], y[test], settings.permutation_repeats, seed)
            for column, values in zip(columns, importances):
                samples[column].extend(values.tolist())
        r2_by_repeat.append(float(r2_score(y, predicted)))
        error_by_repeat.append(float(median_absolute_error(y, predicted)))
    r2 = _stats(r2_by_repeat)
    return {
        "oof_r2": r2["mean"], "oof_r2_std": r2["std"],
        "oof_r2_repeats": [round(value, DIGITS) for value in r2_by_repeat],
        "oof_median_abs_error_log10": round(float(np.mean(error_by_repeat)), DIGITS),
        "permutation_importance": {column: _stats(values) for column, values in samples.items() if values},
        "mutual_information": mutual_information(frame, numeric, categorical, y, settings.seed),
        "spearman": spearman(frame, numeric, y),
    }


def mutual_information(frame: pd.DataFrame, numeric: list[str], categorical: list[str], y: np.ndarray,
                       seed: int) -> dict[str, float]:
    """Model-free view: mutual information of each feature with the target (missing values as their own code)."""
    columns = categorical + numeric
    if not columns:
        return {}
    # Missing values get a code of their own (categorical) or the median (numeric): MI takes no NaN.
    encoded = np.column_stack([pd.factorize(frame[c])[0] for c in categorical]
                              + [frame[c].fillna(frame[c].median()).fillna(0.0).to_numpy() for c in numeric])
    discrete = [True] * len(categorical) + [False] * len(numeric)
    values = mutual_info_regression(encoded, y, discrete_features=discrete,
                                    n_neighbors=min(3, len(y) - 1), random_state=seed)
    return {column: round(float(value), DIGITS) for column, value in zip(columns, values)}


def spearman(frame: pd.DataFrame, numeric: list[str], y: np.ndarray) -> dict[str, dict[str, float]]:
    """Model-free view: Spearman's rho of each numeric feature with the target, on the rows where it is known."""
    result = {}
    for column in numeric:
        values = frame[column].to_numpy(dtype=float)
        known = ~np.isnan(values)
        if known.sum() < MIN_SPEARMAN_PAIRS or np.unique(values[known]).size < 2:
            continue
        test = spearmanr(values[known], y[known])
        result[column] = {"rho": round(float(test.statistic), DIGITS), "p_value": float(f"{test.pvalue:.3g}"),
                          "n": int(known.sum())}
    return result


def gate(targets: dict[str, dict[str, Any]], min_r2: float) -> dict[str, Any]:
    """Which targets the features explain: out-of-fold R^2 mean minus one s.d. over the repeats >= `min_r2`."""
    verdicts = {}
    for name, report in targets.items():
        lower = report["oof_r2"] - report["oof_r2_std"]
        verdicts[name] = {"oof_r2": report["oof_r2"], "oof_r2_std": report["oof_r2_std"],
                          "lower": round(lower, DIGITS), "passes": bool(lower >= min_r2)}
    passing = [name for name, verdict in verdicts.items() if verdict["passes"]]
    failing = [name for name in verdicts if name not in passing]
    explained = ", ".join(passing) or "none"
    message = (f"targets explained (out-of-fold R^2 - 1 s.d. >= {min_r2}): {explained}" +
               ("" if not failing else "; the hardware features do not explain " + ", ".join(
                   f"{name} (R^2 {verdicts[name]['oof_r2']:.2f} +- {verdicts[name]['oof_r2_std']:.2f})"
                   for name in failing)))
    return {"min_r2": min_r2, "rule": "out-of-fold R^2 mean - 1 s.d. over repeats >= min_r2",
            "targets": verdicts, "passing": passing, "explained": bool(passing), "message": message}


def select_features(targets: dict[str, dict[str, Any]], min_importance: float, max_features: int) -> list[str]:
    """The numeric hardware features (never the round) whose mean importance for any of `targets` is at least
    `min_importance`, strongest first, at most `max_features`."""
    strength: dict[str, float] = {}
    for report in targets.values():
        for column, stats in report["permutation_importance"].items():
            if column in NUMERIC_FEATURES:
                strength[column] = max(strength.get(column, -np.inf), stats["mean"])
    ranked = sorted((column for column, value in strength.items() if value >= min_importance),
                    key=lambda column: (-strength[column], column))
    return ranked[:max_features]


def analyse(frame: pd.DataFrame, settings: Importance, min_configurations: int) -> dict[str, Any]:
    """importance.json's content for one benchmark's in-scope configurations (one row per result)."""
    if len(frame) < min_configurations:
        return {"status": "skipped", "n_configurations": len(frame),
                "reason": f"{len(frame)} configurations in scope, fewer than analysis.min_configurations "
                          f"= {min_configurations}", "targets": {}, "selected_features": []}
    frame = with_round_year(frame)
    # One OpenMP thread: on data this small, thread start-up dominates and is 8x slower than serial.
    # sklearn's per-call input checks are a good part of a fit or predict this small; the matrix is built and
    # checked here (missing values are NaN, which the model handles), so they are skipped.
    with warnings.catch_warnings(), threadpool_limits(1), \
            config_context(assume_finite=True, skip_parameter_validation=True):
        warnings.simplefilter("ignore", UserWarning)  # sklearn warns on all-NaN columns in small folds
        targets = {name: cross_validated_importance(frame, column, settings) for name, column in TARGETS.items()}
    verdict = gate(targets, settings.min_r2)
    selected = select_features({name: targets[name] for name in verdict["passing"]},
                               settings.select.min_importance, settings.select.max_features)
    return {"status": "ok", "n_configurations": len(frame), "n_system_families": len(set(system_families(frame))),
            "round_feature": ROUND_FEATURE, "targets": targets, "gate": verdict, "selected_features": selected}
