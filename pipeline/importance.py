"""Stage `importance`: which hardware features explain time to train and efficiency, for one benchmark.

    python -m pipeline.importance BENCHMARK

A gradient-boosted model predicts log10(time to train) and log10(accelerator-hours) from the hardware features;
folds are grouped by system family (submitter and accelerator family) so one family's results never sit on both
sides of a split. Reported: the out-of-fold R^2 and median absolute error, permutation importance on the
held-out folds (mean and spread over folds x repeats), and mutual information as a model-free second view.

Selection rule (params `importance.select`): a numeric feature is selected for clustering when its mean
permutation importance for either target is at least `min_importance` (in units of R^2 lost); the strongest
`max_features` are kept, ranked by the larger of the two importances.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.feature_selection import mutual_info_regression
from sklearn.inspection import permutation_importance
from sklearn.metrics import median_absolute_error, r2_score
from sklearn.model_selection import GroupKFold
from threadpoolctl import threadpool_limits

from . import plots, schemas
from .errors import cli
from .io import load_params, section, write_json
from .scope import CATEGORICAL_FEATURES, CONFIGURATIONS, NUMERIC_FEATURES, benchmark_args, in_scope

TARGETS = {"log_time_to_train": "time_to_train_min", "log_accelerator_hours": "accelerator_hours"}


def reports_dir(benchmark: str) -> Path:
    return Path("reports/benchmarks") / benchmark


def feature_columns(frame: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The features that vary in this data: a constant column explains nothing."""
    numeric = [c for c in NUMERIC_FEATURES if frame[c].nunique(dropna=True) > 1]
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


def make_model(n_categorical: int, n_numeric: int, seed: int) -> HistGradientBoostingRegressor:
    mask = [True] * n_categorical + [False] * n_numeric
    return HistGradientBoostingRegressor(max_iter=100, learning_rate=0.1, min_samples_leaf=3,
                                         categorical_features=mask if n_categorical else None, random_state=seed)


def system_families(frame: pd.DataFrame) -> np.ndarray:
    return (frame["submitter"].astype(str) + "|" + frame["accelerator_family"].fillna("?").astype(str)).to_numpy()


def cross_validated_importance(frame: pd.DataFrame, target: str, folds: int, repeats: int,
                               seed: int) -> dict[str, Any]:
    """Out-of-fold score and permutation importance of one target; `frame` holds features and the target."""
    numeric, categorical = feature_columns(frame)
    columns = categorical + numeric
    x = encode(frame, numeric, categorical)
    y = np.log10(frame[target].to_numpy(dtype=float))
    groups = system_families(frame)
    splitter = GroupKFold(n_splits=min(folds, len(set(groups))))
    predicted = np.full(len(y), np.nan)
    samples: dict[str, list[float]] = {column: [] for column in columns}
    for train, test in splitter.split(x, y, groups):
        model = make_model(len(categorical), len(numeric), seed).fit(x[train], y[train])
        predicted[test] = model.predict(x[test])
        if len(test) < 2:
            continue
        result = permutation_importance(model, x[test], y[test], n_repeats=repeats, random_state=seed,
                                        scoring="r2")
        for column, values in zip(columns, result.importances):
            samples[column].extend(values.tolist())
    importance = {column: {"mean": float(np.mean(values)), "std": float(np.std(values))}
                  for column, values in samples.items() if values}
    return {
        "oof_r2": float(r2_score(y, predicted)),
        "oof_median_abs_error_log10": float(median_absolute_error(y, predicted)),
        "permutation_importance": importance,
        "mutual_information": mutual_information(frame, numeric, categorical, y, seed),
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
    return {column: float(value) for column, value in zip(columns, values)}


def select_features(targets: dict[str, dict[str, Any]], min_importance: float, max_features: int) -> list[str]:
    strength: dict[str, float] = {}
    for report in targets.values():
        for column, stats in report["permutation_importance"].items():
            if column in NUMERIC_FEATURES:
                strength[column] = max(strength.get(column, -np.inf), stats["mean"])
    ranked = sorted((column for column, value in strength.items() if value >= min_importance),
                    key=lambda column: (-strength[column], column))
    return ranked[:max_features]


def analyse(frame: pd.DataFrame, params: dict[str, Any], min_configurations: int) -> dict[str, Any]:
    if len(frame) < min_configurations:
        return {"status": "skipped", "n_configurations": len(frame),
                "reason": f"{len(frame)} configurations in scope, fewer than analysis.min_configurations "
                          f"= {min_configurations}", "targets": {}, "selected_features": []}
    # One OpenMP thread: on data this small, thread start-up dominates and is 8x slower than serial.
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore", UserWarning)  # sklearn warns on all-NaN columns in small folds
        targets = {name: cross_validated_importance(frame, column, params["folds"], params["repeats"],
                                                    params["seed"]) for name, column in TARGETS.items()}
    selected = select_features(targets, params["select"]["min_importance"], params["select"]["max_features"])
    return {"status": "ok", "n_configurations": len(frame), "n_system_families": len(set(system_families(frame))),
            "targets": targets, "selected_features": selected}


def plot_importance(report: dict[str, Any], benchmark: str, target: Path) -> None:
    rows = [{"target": name, "feature": column, "mean": stats["mean"], "std": stats["std"]}
            for name, result in report["targets"].items()
            for column, stats in result["permutation_importance"].items()]
    figure, axis = plots.plt.subplots(figsize=(7.5, 4.5))
    if rows:
        data = pd.DataFrame(rows).sort_values("mean", ascending=False)
        order = data.groupby("feature")["mean"].max().sort_values(ascending=False).index.tolist()
        plots.sns.barplot(data=data, y="feature", x="mean", hue="target", order=order, ax=axis, errorbar=None)
        for container, (_, group) in zip(axis.containers, data.groupby("target", sort=False)):
            spread = group.set_index("feature").reindex(order)
            axis.errorbar(spread["mean"], [bar.get_y() + bar.get_height() / 2 for bar in container],
                          xerr=spread["std"], fmt="none", ecolor="black", elinewidth=1, capsize=2)
        axis.axvline(0, color="grey", linewidth=0.8)
    else:
        axis.text(0.5, 0.5, report.get("reason", "no data"), ha="center", va="center", wrap=True)
    axis.set_xlabel("Permutation importance (R² lost when the feature is shuffled)")
    axis.set_ylabel("Hardware feature")
    axis.set_title(f"{benchmark}: what explains time to train and accelerator-hours")
    plots.save(figure, target)


@cli
def main(argv: Sequence[str] | None = None) -> None:
    args = benchmark_args("importance", __doc__, argv)
    params = load_params()
    analysis = section(params, "analysis")
    frame = in_scope(schemas.validate_configurations(pd.read_parquet(CONFIGURATIONS)), analysis, args.benchmark)
    report = {"benchmark": args.benchmark, **analyse(frame, section(params, "importance"),
                                                     analysis["min_configurations"])}
    out = reports_dir(args.benchmark)
    write_json(report, out / "importance.json")
    plot_importance(report, args.benchmark, out / "importance.png")
    print(f"{args.benchmark}: {report['status']}, selected {report['selected_features']}")


if __name__ == "__main__":
    main()
