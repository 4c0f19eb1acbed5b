"""What `sklearn.inspection.permutation_importance` would cost the importance stage, against the hand-written
stacked copy it uses (`importance.stacked_permutation_importance`), on the real data.

    python bench/permutation_cost.py [BENCHMARK ...]   # default: every benchmark of analysis.benchmarks

Per benchmark and target: the out-of-fold model of the stage (`importance.OutOfFold`, generation folds), then the
permutation importance of every feature, `importance.permutation_repeats` shuffles, once by sklearn (one predict
call per feature and shuffle, each fold's trees on their rows) and once by the stacked copy (every shuffled copy in
one predict call); CPU seconds of each, summed over the benchmarks and both targets, and the largest difference
between their values (the test `test_permutation_importance_equals_sklearns` holds the copy to the library). The
copy stays only while sklearn costs more than 2 s of a full run (docs/architecture.md, "Hand-written copies").
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from sklearn import config_context
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.inspection import permutation_importance
from threadpoolctl import threadpool_limits

from bench._common import BENCHMARKS, arguments, format_table
from pipeline.analysis import scope
from pipeline.analysis.scope import ROUND_FEATURE
from pipeline.analysis.statistics import importance
from pipeline.settings import load_settings

LIMIT = 2.0  # CPU seconds of a full run above which a hand-written copy may stay


class Fitted(RegressorMixin, BaseEstimator):  # type: ignore[misc]
    """An `importance.OutOfFold` predictor as sklearn's estimator, fitted already."""

    def __init__(self, model: importance.OutOfFold | None = None) -> None:
        self.model = model

    def fit(self, x: np.ndarray, y: np.ndarray) -> Fitted:
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        assert self.model is not None
        return self.model.predict(x)


def main(argv: list[str]) -> None:
    project = load_settings()
    settings = project.importance
    configurations = scope.read_configurations()
    benchmarks = argv or scope.analysed_benchmarks(project.analysis, configurations)
    rows, totals, worst = [], [0.0, 0.0], 0.0
    for benchmark in benchmarks:
        frame = scope.in_scope(configurations, project.analysis, benchmark)
        if len(frame) < project.analysis.min_configurations:
            continue
        frame = importance.with_round_year(frame)
        numeric, categorical = importance.feature_columns(frame)
        columns = categorical + numeric
        x = importance.encode(frame, numeric, categorical)
        folds = importance.generation_folds(importance.generation_groups(frame))
        if len(folds) < 2:
            continue
        round_ = columns.index(ROUND_FEATURE) if ROUND_FEATURE in columns else None
        seconds = [0.0, 0.0]
        with threadpool_limits(1), config_context(assume_finite=True, skip_parameter_validation=True):
            for target in importance.TARGETS.values():
                y = np.log10(frame[target].to_numpy(dtype=float))
                model = importance.OutOfFold(x, y, folds, len(categorical), settings.model, settings.seed,
                                             columns.index("accelerator_count"), round_)
                start = time.process_time()
                library = permutation_importance(Fitted(model), x, y, n_repeats=settings.permutation_repeats,
                                                 random_state=settings.seed, scoring="r2").importances
                seconds[0] += time.process_time() - start
                start = time.process_time()
                copy = importance.stacked_permutation_importance(model, x, y, settings.permutation_repeats,
                                                                 settings.seed)
                seconds[1] += time.process_time() - start
                worst = max(worst, float(np.abs(library - copy).max()))
        totals = [totals[0] + seconds[0], totals[1] + seconds[1]]
        rows.append([benchmark, str(len(frame)), str(len(folds)), str(len(columns)), f"{seconds[0]:.2f}",
                     f"{seconds[1]:.2f}"])
    print(format_table(["benchmark", "results", "generation folds", "features", "sklearn s", "stacked copy s"], rows))
    extra = totals[0] - totals[1]
    print(f"\ntotal CPU s: sklearn.inspection.permutation_importance {totals[0]:.1f}, stacked copy {totals[1]:.1f} "
          f"(both targets, {settings.permutation_repeats} shuffles); the library would add {extra:.1f} s to a full "
          f"run, {'more' if extra > LIMIT else 'not more'} than {LIMIT:.0f} s: the copy "
          f"{'stays' if extra > LIMIT else 'should go'}; largest difference of the values {worst:.1e}")


if __name__ == "__main__":
    main(arguments(__doc__, BENCHMARKS).benchmarks)
