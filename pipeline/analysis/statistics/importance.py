"""Which hardware features explain time to train and accelerator-hours, for one benchmark, on accelerator
generations the model has not seen: what the `importance` stage (`python -m pipeline.stages.importance`) runs for
every benchmark analysed.

- **Folds hold out whole architecture generations**, one at a time (`LeaveOneGroupOut` on the `generation` of
  pipeline/mlperf/hardware/accelerators.csv): every family of a generation (B200 with GB200, H100 with H200 and
  GH200) and every submitter's copies of them are on the same side of a split, so the out-of-fold R^2 measures how
  the model carries over to a generation it has not seen, not to a sibling of one it has. The family's name is no
  feature (it never carries to an unseen family). The split involves no randomness.
- **Baseline**: least squares of the log target on log2(accelerator count) and the round's publication date
  (`round_year`: the same hardware often trains twice as fast two rounds later), fitted on the same folds: the
  scaling law and the software era, no hardware description.
- **Model**: the baseline plus a gradient-boosted model (params `importance.model`) fitted to its residuals from
  every hardware feature and the round date: the trees learn what the hardware adds, and for a held-out family
  beyond the trained ones (trees predict flat there) the prediction keeps the baseline's trend.
- **Gain** = out-of-fold R^2 of the model - the baseline's, with a 95% percentile interval from a cluster bootstrap
  over the generations (`importance.bootstrap` resamples of the generations; the out-of-fold predictions fixed,
  the target's variance held at the data's, `resampled_mse`).
- **Permutation importance** of a feature = out-of-fold R^2 lost when the feature is shuffled over all rows (values
  then come from other generations) and every row is predicted by the model that did not see its generation; mean
  and s.d. over `permutation_repeats` shuffles.
- **Gate** (per target): hardware features are credited only when the benchmark has at least
  `importance.min_families` accelerator families (and two generations, for a fold to hold out), the model's
  out-of-fold R^2 is at least `importance.min_r2` and the gain's interval lies above 0.
- **Selection by stability** (params `importance.select`): in each bootstrap resample of the generations, the rule
  "numeric hardware features (never the round, nor the baseline's own term accelerator_count) costing at least
  `min_importance` R^2 for a target that passed the gate, the strongest `max_features`" picks a set; a feature is
  selected when it is picked in at least `min_stability` of the resamples (the most stable first, at most
  `max_features`). No target passes: nothing is selected.

Spearman's rank correlation and mutual information with each target are reported as model-free views.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from sklearn import config_context
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.feature_selection import mutual_info_regression
from sklearn.metrics import median_absolute_error, r2_score
from sklearn.model_selection import LeaveOneGroupOut
from threadpoolctl import threadpool_limits

from pipeline.analysis.scope import ROUND_FEATURE
from pipeline.analysis.statistics.importance_result import (
    Gate,
    ImportanceReport,
    RankCorrelation,
    Spread,
    TargetFit,
    TargetVerdict,
)
from pipeline.core.features import CATEGORICAL_FEATURES, NUMERIC_FEATURES
from pipeline.mlperf.catalogue import round_published
from pipeline.mlperf.hardware.accelerators import generations
from pipeline.settings import ImportanceModelSettings, ImportanceSettings

TARGETS = {"log_time_to_train": "time_to_train_min", "log_accelerator_hours": "accelerator_hours"}
DIGITS = 4  # stored statistics: enough for a 0.001 R^2 difference, stable across platforms
MIN_SPEARMAN_PAIRS = 5  # fewer complete pairs than this give no rank correlation
CONFIDENCE_LEVEL = 0.95  # of the gain's bootstrap interval
GROUP = "accelerator_family"  # the column whose generation a fold holds out
# The baseline's own term: its importance is shown, but it is never selected as a hardware feature.
BASELINE_TERMS = ("accelerator_count",)
BASELINE = "least squares on log2 accelerator count and round date"


def with_round_year(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` plus the round's publication date as a fractional year (column `round_year`)."""
    return frame.assign(**{ROUND_FEATURE: frame["round"].map(round_published).astype(float)})


def feature_columns(frame: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The model's features that vary in this data (a constant column explains nothing); numeric ones include the
    round when the frame has it."""
    candidates = NUMERIC_FEATURES + ([ROUND_FEATURE] if ROUND_FEATURE in frame else [])
    numeric = [c for c in candidates if frame[c].nunique(dropna=True) > 1]
    categorical = [c for c in CATEGORICAL_FEATURES if c != GROUP and frame[c].nunique(dropna=True) > 1]
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


def make_model(n_categorical: int, n_numeric: int, model: ImportanceModelSettings,
               seed: int) -> HistGradientBoostingRegressor:
    """The gradient-boosted model with params `importance.model` (HistGradientBoostingRegressor settings), the
    first `n_categorical` columns categorical."""
    mask = [True] * n_categorical + [False] * n_numeric
    return HistGradientBoostingRegressor(**model.model_dump(), categorical_features=mask if n_categorical else None,
                                         random_state=seed)


def generation_groups(frame: pd.DataFrame) -> np.ndarray:
    """One integer per row naming its accelerator's architecture generation (`accelerators.generations`; a family
    the table lacks is its own, missing families share one code): the folds' groups and the bootstrap's clusters."""
    return pd.factorize(generations(frame[GROUP]), sort=True)[0]


def generation_folds(groups: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, test) row indices holding out one generation at a time (`LeaveOneGroupOut`), in generation order."""
    return list(LeaveOneGroupOut().split(groups, groups=groups))


# Two targets whose residuals on the baseline agree to this (log10 units) in every fold share the boosted trees.
SHARED_RESIDUALS = 1e-9


class OutOfFold:
    """The fitted models of one cross-validation, as one predictor: row i of any (copies x n rows) stack is
    predicted by the model of the fold that held row i out.

    Each fold's model is the baseline (`baseline_design`: least squares on log2 accelerator count and round date)
    plus the boosted trees fitted to its residuals: the trees learn what the hardware adds to the scaling law and
    the software era, and where a held-out family lies beyond the trained ones (trees predict flat there) the
    prediction falls back on the baseline's trend rather than on the nearest family's level.

    A column with no known value in a fold's training rows is set to 0 for that fold's trees, in training and
    prediction alike: they cannot learn from it, and sklearn's binning fails on a column with no value
    (`ValueError: window shape cannot be larger than input array shape`, the crash of gnmt for seeds 2-5, where
    some shuffles left a family's only known values in the test fold).

    `shared`: the cross-validation of another target on the same rows and folds; when its residuals on the
    baseline are this target's (within `SHARED_RESIDUALS` in every fold) its trees are this one's too, not fitted
    again: log accelerator-hours is log time to train + log accelerator count - log 60, and log2 accelerator count
    is a term of the baseline, so the two targets differ by the baseline alone.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, folds: Sequence[tuple[np.ndarray, np.ndarray]],
                 n_categorical: int, model: ImportanceModelSettings, seed: int, count: int, round_: int | None,
                 shared: OutOfFold | None = None) -> None:
        self.n_rows, self.count, self.round = len(x), count, round_
        design = baseline_design(x[:, count], None if round_ is None else x[:, round_])
        self.folds = [(test, _unknown_in(x[train]), np.linalg.lstsq(design[train], y[train], rcond=None)[0])
                      for train, test in folds]
        self.residuals = [y[train] - design[train] @ coefficients
                          for (train, _), (_, _, coefficients) in zip(folds, self.folds)]
        self.models: list[HistGradientBoostingRegressor] = (
            shared.models if shared is not None and all(
                np.allclose(mine, theirs, rtol=0, atol=SHARED_RESIDUALS)
                for mine, theirs in zip(self.residuals, shared.residuals))
            else [make_model(n_categorical, x.shape[1] - n_categorical, model, seed).fit(
                _blank(x[train], unknown), residual)
                for (train, _), (_, unknown, _), residual in zip(folds, self.folds, self.residuals)])

    def tree_predictions(self, x: np.ndarray) -> np.ndarray:
        """The trees' part of `predict` for `x` ((copies x n rows) x features stacked as rows): copies x n rows."""
        stacked = x.reshape(-1, self.n_rows, x.shape[1])
        predicted = np.empty(stacked.shape[:2])
        for model, (test, unknown, _) in zip(self.models, self.folds):
            rows = _blank(stacked[:, test, :], unknown)
            predicted[:, test] = model.predict(rows.reshape(-1, x.shape[1])).reshape(len(stacked), len(test))
        return predicted

    def predict(self, x: np.ndarray, trees: np.ndarray | None = None) -> np.ndarray:
        """Predictions for `x`, (copies x n rows) x features stacked as rows, each row by its fold's model;
        `trees`: `tree_predictions(x)` when already computed (by a target sharing the trees)."""
        trees = self.tree_predictions(x) if trees is None else trees
        design = baseline_design(x[:, self.count], None if self.round is None else x[:, self.round])
        trend = design.reshape(len(trees), self.n_rows, -1)
        predicted = np.empty(trees.shape)
        for test, _, coefficients in self.folds:
            predicted[:, test] = trees[:, test] + trend[:, test, :] @ coefficients
        return predicted.reshape(-1)


def baseline_design(count: np.ndarray, round_year: np.ndarray | None) -> np.ndarray:
    """The baseline's design matrix: [1, log2 accelerator count, round date - 2020] (no round column when the
    round does not vary)."""
    columns = [np.ones(len(count)), np.log2(count)]
    if round_year is not None:
        columns.append(round_year - 2020.0)
    return np.column_stack(columns)


def _unknown_in(x: np.ndarray) -> np.ndarray:
    return np.isnan(x).all(axis=0)


def _blank(x: np.ndarray, columns: np.ndarray) -> np.ndarray:
    if not columns.any():
        return x
    x = x.copy()
    x[..., columns] = 0.0
    return x


def baseline_predictions(design: np.ndarray, y: np.ndarray, folds: Sequence[tuple[np.ndarray, np.ndarray]]
                         ) -> np.ndarray:
    """Out-of-fold predictions of the baseline: least squares of `y` on `design` (`baseline_design`, rows x terms)
    fitted on each fold's training rows (numpy's minimum-norm solution where a term does not vary there)."""
    predicted = np.full(len(y), np.nan)
    for train, test in folds:
        coefficients = np.linalg.lstsq(design[train], y[train], rcond=None)[0]
        predicted[test] = design[test] @ coefficients
    return predicted


@dataclass(frozen=True)
class PermutedCopies:
    """A matrix x (rows x features) and its copies with one column shuffled, `repeats` times per column, stacked
    as `rows` ((1 + shuffled columns x repeats) x rows) x features, copy 0 the unshuffled x, for one predict call.

    The shuffles are sklearn's `permutation_importance(model, x, y, n_repeats=repeats, random_state=seed)`: one
    seed drawn from `seed`, one shuffle sequence that every column replays, each shuffle applied to the previous
    one. A column with one value (or none) is the same after any shuffle: it is not copied, and its rows repeat
    the unshuffled prediction (`split`).
    """
    rows: np.ndarray
    shuffled: np.ndarray  # the columns shuffled
    shape: tuple[int, int]  # x's
    repeats: int

    @classmethod
    def of(cls, x: np.ndarray, repeats: int, seed: int) -> PermutedCopies:
        """The stacked copies of `x` (rows x features) with each non-constant column shuffled `repeats` times, drawn
        from `seed` as sklearn's permutation_importance draws them."""
        n_rows, n_features = x.shape
        shuffles = np.random.RandomState(np.random.RandomState(seed).randint(np.iinfo(np.int32).max + 1))
        index = np.arange(n_rows)
        orders = []  # orders[r][i]: which original row the i-th row's value comes from after r + 1 shuffles
        current = np.arange(n_rows)
        for _ in range(repeats):
            shuffles.shuffle(index)
            current = current[index]
            orders.append(current)
        constant = np.array([np.isnan(column).all() or (column == column[0]).all() for column in x.T])
        shuffled = np.flatnonzero(~constant)
        stacked = np.repeat(x[None], len(shuffled) * repeats + 1, axis=0)  # copy 0 is the unshuffled baseline
        for position, feature in enumerate(shuffled):
            for repeat, order in enumerate(orders):
                stacked[1 + position * repeats + repeat, :, feature] = x[order, feature]
        return cls(stacked.reshape(-1, n_features), shuffled, (n_rows, n_features), repeats)

    def split(self, predicted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A model's predictions of `rows` as those of x, (rows,), and of x with each column shuffled, (features,
        repeats, rows)."""
        n_rows, n_features = self.shape
        predicted = np.asarray(predicted).reshape(-1, n_rows)
        permuted = np.repeat(predicted[0][None, None], n_features, axis=0).repeat(self.repeats, axis=1)
        permuted[self.shuffled] = predicted[1:].reshape(len(self.shuffled), self.repeats, n_rows)
        return predicted[0], permuted


def permuted_predictions(model: Any, x: np.ndarray, repeats: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The predictions of `model` for `x` (rows x features), and for `x` with each column shuffled, `repeats`
    times: (rows,) and (features, repeats, rows). Every shuffled copy of the matrix (`PermutedCopies`) is stacked
    into one `model.predict` call (sklearn predicts once per feature and repeat, and on a few hundred rows the
    per-call overhead is nearly all of its time)."""
    copies = PermutedCopies.of(x, repeats, seed)
    return copies.split(model.predict(copies.rows))


def stacked_permutation_importance(model: Any, x: np.ndarray, y: np.ndarray, repeats: int, seed: int) -> np.ndarray:
    """R^2 lost when each column of `x` (rows x features) is shuffled, `repeats` times: features x repeats; the
    values of `sklearn.inspection.permutation_importance(model, x, y, n_repeats=repeats, random_state=seed,
    scoring="r2")` (see `permuted_predictions`)."""
    n_rows = x.shape[0]
    if n_rows < 2 or len(y) != n_rows:
        raise ValueError(f"permutation importance needs at least two rows and one target per row (got {n_rows} "
                         f"rows, {len(y)} targets)")
    base, permuted = permuted_predictions(model, x, repeats, seed)
    return _r2(y, base) - _r2(y, permuted)


def _r2(y: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """r2_score along the last axis, with its conventions for a constant target (1 for a perfect prediction, else
    0)."""
    residual = ((y - predicted) ** 2).sum(axis=-1)
    total = ((y - y.mean()) ** 2).sum()
    return 1 - residual / total if total > 0 else np.where(residual == 0, 1.0, 0.0)


def group_weights(groups: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Cluster-bootstrap weights: how often each group (generation) is drawn in each of `resamples` resamples of the
    groups with replacement, (resamples x groups)."""
    families = int(groups.max()) + 1
    rng = np.random.default_rng(seed)
    return np.stack([np.bincount(draw, minlength=families)
                     for draw in rng.integers(0, families, (resamples, families))]).astype(float)


def resampled_mse(squared_errors: np.ndarray, groups: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Mean squared error in each cluster-bootstrap resample, a group drawn w times counting w times:
    `squared_errors` (..., rows), `weights` (resamples x groups) -> (..., resamples). Equals
    `mean_squared_error` on the resampled rows (a test checks it).

    Divided by the variance of the target, the difference of two models' resampled errors is the difference of
    their R^2 with the scale held at the data's: resampling the groups moves the errors, not the yardstick (a
    resample of few similar groups has a tiny variance, and R^2 computed on it swings by whole units).
    """
    membership = np.eye(weights.shape[1])[groups]  # rows x groups
    return (squared_errors @ membership @ weights.T) / (weights @ membership.sum(axis=0))


def cross_validated_targets(frame: pd.DataFrame, settings: ImportanceSettings) -> dict[str, TargetFit]:
    """The generation-held-out cross-validation of each target of `TARGETS` (see the module's docstring); `frame` holds
    the features and the positive target columns, modelled on log10. The targets share the folds, the shuffles of
    the permutation importance and the bootstrap's resamples, and when their residuals on the baseline agree, the
    boosted trees and their predictions (`OutOfFold`)."""
    numeric, categorical = feature_columns(frame)
    columns = categorical + numeric
    x = encode(frame, numeric, categorical)
    groups = generation_groups(frame)
    weights = group_weights(groups, settings.bootstrap, settings.seed)
    count = columns.index("accelerator_count")
    round_ = columns.index(ROUND_FEATURE) if ROUND_FEATURE in columns else None
    design = baseline_design(x[:, count], None if round_ is None else x[:, round_])
    folds = generation_folds(groups)
    copies = PermutedCopies.of(x, settings.permutation_repeats, settings.seed)
    fitted: list[tuple[OutOfFold, np.ndarray]] = []  # each set of trees with its predictions of the copies
    fits = {}
    for name, target in TARGETS.items():
        y = np.log10(frame[target].to_numpy(dtype=float))
        model = OutOfFold(x, y, folds, len(categorical), settings.model, settings.seed, count, round_,
                          fitted[0][0] if fitted else None)
        trees = next((predicted for other, predicted in fitted if other.models is model.models), None)
        if trees is None:
            trees = model.tree_predictions(copies.rows)
            fitted.append((model, trees))
        predicted, permuted = copies.split(model.predict(copies.rows, trees))
        fits[name] = _target_fit(frame, columns, numeric, categorical, y, predicted, permuted,
                                 baseline_predictions(design, y, folds), groups, weights, settings)
    return fits


def _target_fit(frame: pd.DataFrame, columns: list[str], numeric: list[str], categorical: list[str], y: np.ndarray,
                predicted: np.ndarray, permuted: np.ndarray, baseline: np.ndarray, groups: np.ndarray,
                weights: np.ndarray, settings: ImportanceSettings) -> TargetFit:
    """One target's statistics from its out-of-fold predictions: `predicted` (rows,), `permuted` (features x
    repeats x rows) and the baseline's (rows,)."""
    variance = float(y.var()) or 1.0
    drawn = resampled_mse(np.stack([(y - predicted) ** 2, (y - baseline) ** 2]), groups, weights) / variance
    gain_draws = drawn[1] - drawn[0]
    low, high = np.nanpercentile(gain_draws, [(1 - CONFIDENCE_LEVEL) / 2 * 100, (1 + CONFIDENCE_LEVEL) / 2 * 100])
    importances = _r2(y, predicted) - _r2(y, permuted)  # features x permutation repeats
    # features x resamples: R^2 lost in each resample, the mean over the shuffles
    draws = (resampled_mse((y - permuted) ** 2, groups, weights) / variance - drawn[0]).mean(axis=1)
    r2, baseline_r2 = float(r2_score(y, predicted)), float(r2_score(y, baseline))
    per_feature = {column: _stats(values) for column, values in zip(columns, importances)}
    by_feature = dict(zip(columns, draws))
    return TargetFit(
        oof_r2=round(r2, DIGITS), baseline_r2=round(baseline_r2, DIGITS), gain=round(r2 - baseline_r2, DIGITS),
        gain_low=round(float(low), DIGITS), gain_high=round(float(high), DIGITS),
        oof_median_abs_error_log10=round(float(median_absolute_error(y, predicted)), DIGITS),
        permutation_importance=per_feature,
        stability=_rounded(kept_shares({"target": by_feature}, settings.select.min_importance,
                                       settings.select.max_features)),
        mutual_information=mutual_information(frame, numeric, categorical, y, settings.seed),
        spearman=spearman(frame, numeric, y), importance_draws=by_feature)


def _stats(values: Sequence[float] | np.ndarray) -> Spread:
    return Spread(mean=round(float(np.mean(values)), DIGITS), std=round(float(np.std(values)), DIGITS))


def _rounded(values: dict[str, float]) -> dict[str, float]:
    return {name: round(value, DIGITS) for name, value in values.items()}


def kept_shares(draws: dict[str, dict[str, np.ndarray]], min_importance: float, max_features: int) -> dict[str, float]:
    """Per numeric hardware feature (never the round, nor the baseline's `BASELINE_TERMS`), the share of bootstrap
    resamples in which the selection rule keeps it: its importance (R^2 lost) for any target of `draws` (target ->
    feature -> one value per resample) is at least `min_importance` and among the `max_features` strongest of that
    resample. Features never kept are left out; the most often kept first."""
    names = [name for name in NUMERIC_FEATURES
             if name not in BASELINE_TERMS and any(name in by_feature for by_feature in draws.values())]
    if not names:
        return {}
    resamples = len(next(iter(next(iter(draws.values())).values())))
    missing = np.full(resamples, -np.inf)
    strength = np.max([[by_feature.get(name, missing) for name in names] for by_feature in draws.values()], axis=0)
    strength = np.nan_to_num(strength, nan=-np.inf)  # features x resamples
    ranks = (-strength).argsort(axis=0, kind="stable").argsort(axis=0, kind="stable")
    kept = ((strength >= min_importance) & (ranks < max_features)).mean(axis=1)
    shares = {name: float(share) for name, share in zip(names, kept) if share > 0}
    return dict(sorted(shares.items(), key=lambda item: (-item[1], item[0])))


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


def spearman(frame: pd.DataFrame, numeric: list[str], y: np.ndarray) -> dict[str, RankCorrelation]:
    """Model-free view: Spearman's rho of each numeric feature with the target, on the rows where it is known."""
    result = {}
    for column in numeric:
        values = frame[column].to_numpy(dtype=float)
        known = ~np.isnan(values)
        if known.sum() < MIN_SPEARMAN_PAIRS or np.unique(values[known]).size < 2:
            continue
        test = spearmanr(values[known], y[known])
        result[column] = RankCorrelation(rho=round(float(test.statistic), DIGITS),
                                         p_value=float(f"{test.pvalue:.3g}"), n=int(known.sum()))
    return result


def gate(targets: dict[str, TargetFit], min_r2: float, min_families: int, n_families: int,
         n_generations: int) -> Gate:
    """A target credits hardware features when the data hold at least `min_families` accelerator families, its
    generation-held-out R^2 is at least `min_r2` and the 95% interval of its gain over the baseline lies above 0."""
    verdicts = {}
    for name, fit in targets.items():
        if n_families < min_families:
            reason = f"{n_families} accelerator families, fewer than {min_families}"
        elif fit.oof_r2 < min_r2:
            reason = f"R^2 {fit.oof_r2:.2f} on held-out generations, below {min_r2}"
        elif not fit.gain_low > 0:
            reason = (f"gain over the baseline {fit.gain:+.2f} (95% CI {fit.gain_low:+.2f} to {fit.gain_high:+.2f}) "
                      "not above 0")
        else:
            reason = ""
        verdicts[name] = TargetVerdict(oof_r2=fit.oof_r2, baseline_r2=fit.baseline_r2, gain=fit.gain,
                                       gain_low=fit.gain_low, gain_high=fit.gain_high, passes=not reason,
                                       reason=reason)
    passing = [name for name, verdict in verdicts.items() if verdict.passes]
    failing = [name for name in verdicts if name not in passing]
    message = (f"targets crediting hardware (held-out generations: R^2 >= {min_r2} and gain over the baseline > 0): "
               f"{', '.join(passing) or 'none'}" +
               ("" if not failing else "; not credited: " + ", ".join(
                   f"{name} ({verdicts[name].reason})" for name in failing)))
    return Gate(min_r2=min_r2, min_families=min_families, n_families=n_families, n_generations=n_generations,
                rule=f"at least {min_families} accelerator families, R^2 on held-out generations (every family of "
                f"an architecture generation held out together) >= {min_r2}, and the 95% cluster-bootstrap interval "
                f"(over the generations) of the gain over the baseline ({BASELINE}) above 0",
                targets=verdicts, passing=passing, explained=bool(passing), message=message)


def select_features(targets: dict[str, TargetFit], passing: Sequence[str], min_importance: float, max_features: int,
                    min_stability: float) -> tuple[list[str], dict[str, float]]:
    """The selected features and every feature's selection share: the share of resamples in which the rule
    (`kept_shares`) keeps it for any `passing` target; selected when at least `min_stability`, most stable first
    (then the stronger mean importance), at most `max_features`."""
    if not passing:
        return [], {}
    shares = kept_shares({name: targets[name].importance_draws for name in passing}, min_importance, max_features)
    strength = {column: max(_mean_importance(targets[name], column) for name in passing) for column in shares}
    stable = sorted((column for column, share in shares.items() if share >= min_stability),
                    key=lambda column: (-shares[column], -strength[column], column))
    return stable[:max_features], _rounded(shares)


def _mean_importance(fit: TargetFit, column: str) -> float:
    spread = fit.permutation_importance.get(column)
    return -np.inf if spread is None else spread.mean


def analyse(frame: pd.DataFrame, settings: ImportanceSettings, min_configurations: int, *,
            benchmark: str) -> ImportanceReport:
    """The importance analysis of one benchmark's in-scope configurations (one row per result)."""
    n_families = int(frame[GROUP].fillna("?").nunique()) if GROUP in frame else 0
    n_generations = int(generations(frame[GROUP]).nunique()) if GROUP in frame else 0
    if len(frame) < min_configurations or n_generations < 2:
        reason = (f"{len(frame)} configurations in scope, fewer than analysis.min_configurations = "
                  f"{min_configurations}" if len(frame) < min_configurations else
                  "one accelerator generation: no generation can be held out")
        return ImportanceReport(benchmark=benchmark, status="skipped", reason=reason, n_configurations=len(frame),
                                targets={}, selected_features=[])
    frame = with_round_year(frame)
    # One OpenMP thread: on data this small, thread start-up dominates and is 8x slower than serial.
    # sklearn's per-call input checks are a good part of a fit or predict this small; the matrix is built and
    # checked here (missing values are NaN, which the model handles), so they are skipped.
    with warnings.catch_warnings(), threadpool_limits(1), \
            config_context(assume_finite=True, skip_parameter_validation=True):
        warnings.simplefilter("ignore", UserWarning)  # sklearn warns on all-NaN columns in small folds
        targets = cross_validated_targets(frame, settings)
    verdict = gate(targets, settings.min_r2, settings.min_families, n_families, n_generations)
    selected, shares = select_features(targets, verdict.passing, settings.select.min_importance,
                                       settings.select.max_features, settings.select.min_stability)
    return ImportanceReport(benchmark=benchmark, status="ok", n_configurations=len(frame), targets=targets,
                            selected_features=selected, n_families=n_families, n_generations=n_generations,
                            round_feature=ROUND_FEATURE,
                            baseline=BASELINE, gate=verdict, selection_stability=shares)
