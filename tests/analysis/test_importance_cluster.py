"""The importance gate, the round as a covariate, and the clustering inputs, order, names and k verdict, on small
hand-checked cases (plus one check of the clustering inputs on the real configurations when they are built)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from pipeline.analysis.scope import ROUND_FEATURE, in_scope
from pipeline.analysis.statistics import cluster_profiles, importance
from pipeline.analysis.statistics import clustering as cluster
from pipeline.analysis.statistics.importance_result import ImportanceReport, TargetFit
from pipeline.core.errors import ContractError, ParamsError
from pipeline.core.paths import CONFIGURATIONS
from pipeline.report import sections, tables
from pipeline.settings import (
    AnalysisSettings,
    ClusterSettings,
    ImportanceModelSettings,
    ImportanceSettings,
    settings_from,
)
from tests.conftest import ROOT

PROJECT_PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text())
IMPORTANCE_SETTINGS = ImportanceSettings.model_validate({**PROJECT_PARAMS["importance"], "permutation_repeats": 5,
                                                 "bootstrap": 300,
                                                 "select": {"min_importance": 0.01, "max_features": 3,
                                                            "min_stability": 0.7}})
CLUSTER_SETTINGS = ClusterSettings.model_validate({**PROJECT_PARAMS["cluster"], "k": 3, "n_init": 4, "k_range": [2, 5],
                                           "bootstrap": 5})


def _synthetic(n: int = 60, seed: int = 0, software_only: bool = False) -> pd.DataFrame:
    """n results of six submitters on A100 (2020) or H100 (2022) in v2.0 or v3.0. Time falls as count^-0.8 and
    three times faster on H100; with `software_only`, it depends on the round alone (v3.0 three times faster)."""
    rng = np.random.default_rng(seed)
    counts = 2.0 ** rng.integers(0, 10, n)
    year = rng.choice([2020.0, 2022.0], n)
    rounds = rng.choice(["v2.0", "v3.0"], n)
    if software_only:
        minutes = 100.0 / np.where(rounds == "v3.0", 3.0, 1.0) * rng.lognormal(0, 0.05, n)
    else:
        minutes = 600.0 / counts ** 0.8 / np.where(year == 2022, 3.0, 1.0) * rng.lognormal(0, 0.05, n)
    frame = pd.DataFrame({
        "round": rounds, "benchmark": "resnet", "division": "closed", "availability": "available",
        "submitter": [f"s{i % 6}" for i in range(n)], "system": [f"sys{i}" for i in range(n)],
        "accelerator_family": np.where(year == 2022, "H100", "A100"), "accelerator_count": counts,
        "accelerator_year": year, "time_to_train_min": minutes,
    })
    for column in importance.NUMERIC_FEATURES + importance.CATEGORICAL_FEATURES:
        if column not in frame:
            frame[column] = np.nan if column in importance.NUMERIC_FEATURES else None
    frame["accelerator_hours"] = frame["accelerator_count"] * frame["time_to_train_min"] / 60
    frame["scaling_efficiency"] = 1.0
    frame["speedup"] = 1.0
    return frame


# FAMILIES: six accelerator families and their launch years, each 1.6x faster than a year older one.
FAMILIES = {"V100": 2017.0, "A100": 2020.0, "TPU-v4": 2021.0, "H100": 2022.0, "MI300X": 2023.0, "B200": 2024.0}


def _families(n: int = 90, seed: int = 0, software_only: bool = False) -> pd.DataFrame:
    """n results of eight submitters on the six FAMILIES in v2.0 to v4.0, drawn at random. Time falls as
    count^-0.8 and 1.6x per year of the family's launch; with `software_only`, it depends on the round alone."""
    rng = np.random.default_rng(seed)
    family = np.array(list(FAMILIES))[rng.integers(0, len(FAMILIES), n)]
    year = np.array([FAMILIES[name] for name in family])
    counts = 2.0 ** rng.integers(0, 10, n)
    rounds = rng.choice(["v2.0", "v3.0", "v4.0"], n)
    if software_only:
        minutes = 100.0 / np.select([rounds == "v3.0", rounds == "v4.0"], [2.0, 4.0], 1.0) * rng.lognormal(0, 0.05, n)
    else:
        minutes = 600.0 / counts ** 0.8 / 1.6 ** (year - 2017) * rng.lognormal(0, 0.05, n)
    frame = _synthetic(n, seed)
    return frame.assign(round=rounds, submitter=[f"s{i % 8}" for i in range(n)], accelerator_family=family,
                        accelerator_count=counts, accelerator_year=year, time_to_train_min=minutes,
                        accelerator_hours=counts * minutes / 60)


def _fit(r2: float, baseline: float, low: float, high: float, **views: dict) -> TargetFit:
    """A target's fit with these R^2 and gain interval (and, in `views`, its permutation importance, stability,
    mutual information and Spearman's rho; empty when not given)."""
    empty = {"permutation_importance": {}, "stability": {}, "mutual_information": {}, "spearman": {}}
    return TargetFit.model_validate({"oof_r2": r2, "baseline_r2": baseline, "gain": r2 - baseline, "gain_low": low,
                                     "gain_high": high, "oof_median_abs_error_log10": 0.1, **empty, **views})


def test_the_gate_credits_hardware_only_beyond_the_baseline_on_enough_families() -> None:
    fits = {"a": _fit(0.8, 0.6, 0.05, 0.4), "b": _fit(0.8, 0.75, -0.01, 0.2), "c": _fit(0.45, 0.1, 0.2, 0.5),
            "d": _fit(0.6, 0.5, 0.0, 0.3)}
    verdict = importance.gate(fits, 0.5, 5, 6, 4)
    # a: gain interval above 0; b: it holds 0; c: R^2 below 0.5 however large the gain; d: a lower bound of 0 is
    # not above 0
    assert verdict.passing == ["a"] and verdict.explained
    assert verdict.targets["b"].reason == "gain over the baseline +0.05 (95% CI -0.01 to +0.20) not above 0"
    assert verdict.targets["c"].reason == "R^2 0.45 on held-out generations, below 0.5"
    assert not verdict.targets["d"].passes
    few = importance.gate(fits, 0.5, 5, 4, 3)
    assert few.passing == [] and few.targets["a"].reason == "4 accelerator families, fewer than 5"
    assert "not credited: a (4 accelerator families, fewer than 5)" in few.message


def test_folds_hold_out_whole_families_and_the_baseline_is_least_squares_per_fold() -> None:
    from sklearn.linear_model import LinearRegression
    frame = importance.with_round_year(_families())
    groups = importance.generation_groups(frame)
    folds = importance.generation_folds(groups)
    assert len(folds) == len(FAMILIES)
    for train, test in folds:
        assert len(set(groups[test])) == 1 and set(groups[test]).isdisjoint(groups[train])
    y = np.log10(frame["time_to_train_min"].to_numpy())
    design = importance.baseline_design(frame["accelerator_count"].to_numpy(), frame["round_year"].to_numpy())
    predicted = importance.baseline_predictions(design, y, folds)
    for train, test in folds:
        oracle = LinearRegression().fit(design[train][:, 1:], y[train])
        np.testing.assert_allclose(predicted[test], oracle.predict(design[test][:, 1:]), atol=1e-9)


def test_resampled_errors_are_the_errors_of_the_resampled_rows() -> None:
    from sklearn.metrics import mean_squared_error
    rng = np.random.default_rng(3)
    groups = np.array([0, 0, 1, 2, 2, 2, 3])
    errors = rng.random((2, len(groups)))
    weights = importance.group_weights(groups, 50, seed=1)
    assert weights.shape == (50, 4) and (weights.sum(axis=1) == 4).all()
    drawn = importance.resampled_mse(errors, groups, weights)
    for resample in range(50):
        rows = np.concatenate([np.flatnonzero(groups == family)
                               for family, times in enumerate(weights[resample].astype(int)) for _ in range(times)])
        for model in range(2):  # squared errors of a prediction 0 of sqrt(error)
            expected = mean_squared_error(np.sqrt(errors[model, rows]), np.zeros(len(rows)))
            assert drawn[model, resample] == pytest.approx(expected)


def test_out_of_fold_permutation_importance_equals_sklearns_on_the_fold_models() -> None:
    from sklearn.base import BaseEstimator, RegressorMixin
    from sklearn.inspection import permutation_importance as sklearn_permutation_importance
    frame = importance.with_round_year(_families(60))
    numeric, categorical = importance.feature_columns(frame)
    columns = categorical + numeric
    x = importance.encode(frame, numeric, categorical)
    y = np.log10(frame["time_to_train_min"].to_numpy())
    folds = importance.generation_folds(importance.generation_groups(frame))
    model = importance.OutOfFold(x, y, folds, len(categorical),
                                 IMPORTANCE_SETTINGS.model, 0, columns.index("accelerator_count"),
                                 columns.index(ROUND_FEATURE))
    class Fitted(RegressorMixin, BaseEstimator):  # the predictor as sklearn's estimator, fitted already
        def fit(self, x: np.ndarray, y: np.ndarray) -> Fitted:
            return self

        def predict(self, x: np.ndarray) -> np.ndarray:
            return model.predict(x)

    expected = sklearn_permutation_importance(Fitted(), x, y, n_repeats=4, random_state=5, scoring="r2").importances
    np.testing.assert_allclose(importance.stacked_permutation_importance(model, x, y, 4, 5), expected, atol=1e-12)


def test_accelerator_hours_share_the_trees_of_time_and_predict_as_if_fitted_alone() -> None:
    frame = importance.with_round_year(_families(60))
    numeric, categorical = importance.feature_columns(frame)
    columns = categorical + numeric
    x = importance.encode(frame, numeric, categorical)
    folds = importance.generation_folds(importance.generation_groups(frame))
    arguments = (folds, len(categorical), IMPORTANCE_SETTINGS.model, 0, columns.index("accelerator_count"),
                 columns.index(ROUND_FEATURE))
    time = importance.OutOfFold(x, np.log10(frame["time_to_train_min"].to_numpy()), *arguments)
    hours = np.log10(frame["accelerator_hours"].to_numpy())
    shared = importance.OutOfFold(x, hours, *arguments, shared=time)
    alone = importance.OutOfFold(x, hours, *arguments)
    assert shared.models is time.models and alone.models is not time.models
    np.testing.assert_allclose(shared.predict(x), alone.predict(x), atol=1e-9)
    noise = importance.OutOfFold(x, np.random.default_rng(1).normal(size=len(x)), *arguments, shared=time)
    assert noise.models is not time.models  # other residuals: trees of its own


def test_a_model_that_explains_nothing_selects_nothing() -> None:
    frame = _families()
    frame["time_to_train_min"] = np.random.default_rng(1).lognormal(3, 1, len(frame))  # noise
    frame["accelerator_hours"] = np.random.default_rng(2).lognormal(3, 1, len(frame))
    report = importance.analyse(frame, IMPORTANCE_SETTINGS, min_configurations=10, benchmark="fixture")
    assert report.status == "ok"
    assert not report.explained and report.selected_features == []
    assert all(target.oof_r2 < 0.5 for target in report.targets.values())


def test_importance_finds_the_hardware_that_drives_time_on_unseen_families() -> None:
    report = importance.analyse(_families(), IMPORTANCE_SETTINGS, min_configurations=10, benchmark="fixture")
    assert report.gate is not None and report.n_families == len(FAMILIES)
    verdict = report.gate.targets["log_time_to_train"]
    assert verdict.passes and verdict.gain_low > 0 and verdict.oof_r2 > verdict.baseline_r2
    # the count drives time too, but it is the baseline's own term: never selected as a hardware feature
    assert set(report.selected_features) == {"accelerator_year"}
    assert "accelerator_count" not in report.selection_stability
    assert all(report.selection_stability[name] >= 0.7 for name in report.selected_features)
    time = report.targets["log_time_to_train"]
    assert time.spearman["accelerator_count"].rho < -0.5  # the model-free view: more accelerators, less time
    assert "accelerator_family" not in time.permutation_importance  # it names the held-out group
    content = report.as_json()
    assert "importance_draws" not in content["targets"]["log_time_to_train"]
    assert content["gate"]["targets"]["log_time_to_train"]["passes"]


def test_software_progress_is_the_baselines_and_credits_no_hardware() -> None:
    report = importance.analyse(_families(software_only=True), IMPORTANCE_SETTINGS, min_configurations=10,
                                benchmark="fixture")
    time = report.targets["log_time_to_train"]
    strongest = max(time.permutation_importance, key=lambda f: time.permutation_importance[f].mean)
    assert strongest == ROUND_FEATURE
    assert report.gate is not None and not report.gate.explained and report.selected_features == []
    assert report.gate.targets["log_time_to_train"].gain_high <= 0.01  # the baseline holds the round already


def test_few_families_are_never_credited() -> None:
    frame = _synthetic()  # A100 and H100 only
    report = importance.analyse(frame, IMPORTANCE_SETTINGS, min_configurations=10, benchmark="fixture")
    assert report.gate is not None and report.n_families == 2 and not report.gate.explained
    one = frame.assign(accelerator_family="A100")
    assert importance.analyse(one, IMPORTANCE_SETTINGS, 10, benchmark="fixture").reason == (
        "one accelerator generation: no generation can be held out")
    # H100 and H200 are one generation (Hopper): nothing to hold out apart
    siblings = frame.assign(accelerator_family=frame["accelerator_family"].replace({"A100": "H200"}))
    assert importance.analyse(siblings, IMPORTANCE_SETTINGS, 10, benchmark="fixture").status == "skipped"


def test_selection_keeps_features_picked_in_enough_resamples() -> None:
    draws = {"time": {"accelerator_count": np.array([0.5, 0.4, 0.6, 0.5]),
                      "accelerator_year": np.array([0.02, 0.0, 0.03, 0.02]),
                      "n_nodes": np.array([0.0, 0.05, 0.0, 0.0]), ROUND_FEATURE: np.array([0.9, 0.9, 0.9, 0.9])},
             "hours": {"accelerator_year": np.array([0.0, 0.2, 0.0, 0.0])}}
    # The count is the strongest everywhere but the baseline's own term, and the round is the baseline's too: neither
    # is a candidate. max_features 1: a feature counts by its strongest target, so with hours year is first in all
    # four. With 2 for time alone: year costs at least 0.01 in three resamples, nodes in the other.
    assert importance.kept_shares(draws, 0.01, 1) == {"accelerator_year": 1.0}
    assert importance.kept_shares(draws, 0.01, 2) == {"accelerator_year": 1.0, "n_nodes": 0.25}
    assert importance.kept_shares({"time": draws["time"]}, 0.01, 2) == {"accelerator_year": 0.75, "n_nodes": 0.25}


@pytest.mark.parametrize("seed", range(10))
def test_the_study_runs_for_any_seed_when_a_feature_is_known_in_one_family_only(seed: int) -> None:
    # the gnmt crash of seeds 2-5: a feature whose only known values sit in the held-out fold left the training
    # rows without a value, and sklearn's binning raised ValueError
    frame = _families(40, seed=seed)
    frame["interconnect_intra_gbps"] = np.where(frame["accelerator_family"] == "H100", 3600.0, np.nan)
    frame["host_cpu_vendor"] = np.where(frame["accelerator_family"] == "B200", "AMD", None)
    settings = IMPORTANCE_SETTINGS.model_copy(update={"seed": seed})
    report = importance.analyse(frame, settings, min_configurations=10, benchmark="fixture")
    assert report.status == "ok" and set(report.targets) == set(importance.TARGETS)


@pytest.mark.skipif(not (ROOT / CONFIGURATIONS).is_file(), reason="run `dvc repro features` first")
@pytest.mark.parametrize("seed", range(10))
def test_the_study_runs_on_real_gnmt_for_seeds_0_to_9(seed: int) -> None:
    analysis = AnalysisSettings.model_validate(PROJECT_PARAMS["analysis"])
    frame = in_scope(pd.read_parquet(ROOT / CONFIGURATIONS), analysis, "gnmt")
    settings = ImportanceSettings.model_validate({**PROJECT_PARAMS["importance"], "seed": seed})
    report = importance.analyse(frame, settings, analysis.min_configurations, benchmark="gnmt")
    assert report.status == "ok" and report.gate is not None and report.gate.n_families == 4
    assert not report.explained


@pytest.mark.parametrize("seed", [0, 7])
def test_permutation_importance_equals_sklearns(seed: int) -> None:
    from sklearn.inspection import permutation_importance as sklearn_permutation_importance
    rng = np.random.default_rng(seed)
    x = np.column_stack([rng.integers(0, 3, 40).astype(float), rng.normal(size=(40, 3))])
    x[rng.random(x.shape) < 0.1] = np.nan
    y = 2 * np.nan_to_num(x[:, 1]) + np.nan_to_num(x[:, 0]) + rng.normal(0, 0.1, 40)
    x[30:, 3] = 5.0  # constant on the held-out rows: shuffling it changes nothing
    model = importance.make_model(1, 3, ImportanceModelSettings(max_iter=20, learning_rate=0.1, min_samples_leaf=3),
                                  seed)
    model.fit(x[:30], y[:30])
    expected = sklearn_permutation_importance(model, x[30:], y[30:], n_repeats=3, random_state=seed,
                                              scoring="r2").importances
    fast = importance.stacked_permutation_importance(model, x[30:], y[30:], 3, seed)
    assert fast.shape == (4, 3) and fast[3].tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(fast, expected, rtol=0, atol=1e-12)


def test_an_unknown_model_setting_is_a_params_error() -> None:
    model = {**PROJECT_PARAMS["importance"]["model"], "max_trees": 3}
    with pytest.raises(ParamsError, match=r"importance\.model\.max_trees: is not a setting here"):
        settings_from({**PROJECT_PARAMS, "importance": {**PROJECT_PARAMS["importance"], "model": model}})


def test_importance_skips_a_benchmark_with_too_few_configurations() -> None:
    report = importance.analyse(_synthetic(8), IMPORTANCE_SETTINGS, min_configurations=10, benchmark="fixture")
    assert report.status == "skipped" and report.reason is not None and "fewer than" in report.reason
    assert report.as_json() == {"benchmark": "fixture", "status": "skipped", "reason": report.reason,
                                "n_configurations": len(_synthetic(8)), "targets": {}, "selected_features": []}


# Clustering inputs

def test_candidates_come_from_importance_only_when_its_gate_passed() -> None:
    defaults = ["accelerator_count", "accelerators_per_node"]
    report = importance.analyse(_families(), IMPORTANCE_SETTINGS, min_configurations=10, benchmark="fixture")
    assert report.explained and report.selected_features
    failed = report.model_copy(update={"gate": report.gate.model_copy(update={"explained": False})})
    skipped = importance.analyse(_synthetic(8), IMPORTANCE_SETTINGS, min_configurations=10, benchmark="fixture")
    assert cluster.candidate_features(report, defaults) == (report.selected_features, "importance")
    assert cluster.candidate_features(failed, defaults) == (defaults, "default")
    assert cluster.candidate_features(skipped, defaults) == (defaults, "default")


def _configurations() -> pd.DataFrame:
    """Ten configurations; accelerators = nodes x per node exactly; intra-node bandwidth known for 8 of 10 (20%
    imputed), inter-node for 7 (30%)."""
    nodes = np.array([1, 1, 2, 2, 4, 4, 8, 8, 16, 32], dtype=float)
    per_node = np.array([4, 8, 4, 8, 4, 8, 4, 8, 8, 8], dtype=float)
    return pd.DataFrame({
        "n_nodes": nodes, "accelerators_per_node": per_node, "accelerator_count": nodes * per_node,
        "accelerator_year": [2020, 2022] * 5,
        "interconnect_intra_gbps": [600, 900, 600, 900, 600, 900, 600, 900, np.nan, np.nan],
        "interconnect_inter_gbps": [100, 200, 100, 200, 400, 400, 200, np.nan, np.nan, np.nan],
        "host_cpu_cores": [64.0] * 10,
    })


def test_an_exactly_collinear_feature_is_dropped_and_named() -> None:
    kept, dropped = cluster.choose_features(_configurations(), ["accelerator_count", "accelerators_per_node",
                                                                "n_nodes", "accelerator_year"], 0.2, 0.999)
    assert kept == ["accelerator_count", "accelerators_per_node", "accelerator_year"]
    assert [d.feature for d in dropped] == ["n_nodes"]
    assert "exactly collinear with accelerator_count, accelerators_per_node (R^2 1.0000 on 10" in dropped[0].reason


def test_collinear_r2_by_hand() -> None:
    values = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0, 5.0], "y": [2.0, 4.0, 6.0, 8.0, 10.0],
                           "z": [1.0, 0.0, 1.0, 0.0, 1.0]})
    assert cluster.collinear_r2(values, "y", ["x"]) == (pytest.approx(1.0), 5)
    # z on x: the fit is flat (slope 0, mean 0.6), so none of z's variance is explained
    assert cluster.collinear_r2(values, "z", ["x"])[0] == pytest.approx(0.0)


def test_a_feature_imputed_for_more_than_the_share_is_dropped() -> None:
    kept, dropped = cluster.choose_features(_configurations(), ["accelerator_count", "interconnect_intra_gbps",
                                                                "interconnect_inter_gbps", "host_cpu_cores"],
                                            0.2, 0.999)
    assert kept == ["accelerator_count", "interconnect_intra_gbps"]  # 20% missing is not above 20%
    assert dropped[0] == cluster.DroppedFeature(feature="interconnect_inter_gbps",
                                                reason="missing (would be imputed) for 30% of configurations, above "
                                                       "cluster.max_imputed_share = 20%")
    assert dropped[1] == cluster.DroppedFeature(feature="host_cpu_cores", reason="the same for every configuration")


def test_outcomes_are_never_clustering_inputs() -> None:
    for outcome in ("time_to_train_min", "accelerator_hours", ROUND_FEATURE):
        with pytest.raises(ParamsError, match="never inputs"):
            cluster.choose_features(_synthetic().assign(round_year=2022.0), ["accelerator_count", outcome], 0.2,
                                    0.999)


# The k verdict

def _diagnostics(silhouettes: dict[int, float]) -> list[cluster.KDiagnostics]:
    return [cluster.KDiagnostics(k=k, inertia=1.0, silhouette=value, davies_bouldin=1.0)
            for k, value in silhouettes.items()]


def test_k_is_supported_within_the_tolerance_of_the_best_silhouette() -> None:
    verdict = cluster.k_verdict(_diagnostics({2: 0.40, 3: 0.50, 4: 0.62, 5: 0.60}), 5, 0.8, 0.05, 0.6)
    assert verdict.supported and verdict.preferred_k == 4 and verdict.supported_k == 5


def test_k_is_not_supported_when_another_k_separates_better() -> None:
    verdict = cluster.k_verdict(_diagnostics({2: 0.40, 5: 0.55, 8: 0.61, 10: 0.70}), 5, 0.8, 0.05, 0.6, 0.75)
    assert verdict.supported is False and verdict.preferred_k == 10 and verdict.supported_k == 10
    assert "silhouette 0.55 at k = 5 against 0.70 at k = 10" in verdict.message
    assert "they prefer k = 10 (bootstrap ARI 0.75)" in verdict.message
    assert "the largest k compared" in verdict.message
    unstable = cluster.k_verdict(_diagnostics({2: 0.40, 5: 0.55, 8: 0.61, 10: 0.70}), 5, 0.8, 0.05, 0.6, 0.3)
    assert unstable.supported_k is None and "not stable either" in unstable.message


def test_k_is_not_supported_when_its_clusters_are_unstable() -> None:
    verdict = cluster.k_verdict(_diagnostics({2: 0.50, 3: 0.50}), 3, 0.4, 0.05, 0.6)
    assert verdict.supported is False and verdict.preferred_k == 2  # a tie goes to the smaller k
    assert "bootstrap ARI 0.40 below 0.6" in verdict.message


# Order, names, sizes

def test_clusters_are_numbered_from_the_highest_median_round_efficiency() -> None:
    frame = pd.DataFrame({"accelerator_hours": [10.0, 12.0, 1.0, 2.0], "time_to_train_min": [5.0, 5.0, 9.0, 9.0]})
    labels = np.array([7, 7, 3, 3])
    assert cluster.order_by_efficiency(frame, labels).tolist() == [1, 1, 0, 0]  # fewest accelerator-hours first
    efficient = frame.assign(round_efficiency=[1.0, 0.9, 0.3, 0.2])  # 1 = the round's fewest accelerator-hours
    assert cluster.order_by_efficiency(efficient, labels).tolist() == [0, 0, 1, 1]


def test_cluster_name_from_its_profile() -> None:
    group = pd.DataFrame({"accelerator_count": [8.0, 16.0, 64.0, 8.0, 8.0],
                          "accelerator_family": ["H100", "H100", "A100", "H100", "H100"],
                          "accelerator_vendor": "NVIDIA",
                          "interconnect_intra": ["NVLink", "NVLink", None, "PCIe", "NVLink"]})
    assert cluster_profiles.cluster_name(group) == "8-64 mostly H100, NVLink"  # H100 holds 80%
    assert cluster_profiles.cluster_name(group[group["accelerator_family"] == "H100"]) == "8-16 H100, NVLink"
    mixed = group.iloc[:4].assign(accelerator_family=["H100", "A100", "TPU-v4", "TPU-v4"],
                                  accelerator_vendor=["NVIDIA", "NVIDIA", "Google", "Google"],
                                  accelerator_form_factor=["SXM", "SXM", None, None], interconnect_intra=None)
    # half is not most: mixed; each vendor's link by its name, a TPU's from the link table (ICI), never NVLink
    assert cluster_profiles.cluster_name(mixed) == "8-64 mixed, ICI (Google), NVLink (NVIDIA)"
    tpus = mixed.iloc[2:]
    assert cluster_profiles.cluster_name(tpus) == "8-64 TPU-v4, ICI"


def test_clusters_are_profiled_ordered_and_small_ones_merged() -> None:
    frame = _synthetic()
    # one configuration far from the rest makes a cluster of its own
    frame.loc[0, ["accelerator_count", "accelerator_year"]] = [1e6, 2030.0]
    clustered, summary = cluster.cluster_benchmark(frame, ["accelerator_count", "accelerator_year"],
                                                   CLUSTER_SETTINGS.model_copy(update={"k": 4}), "default",
                                                   benchmark="synthetic")
    again, _ = cluster.cluster_benchmark(frame, ["accelerator_count", "accelerator_year"],
                                         CLUSTER_SETTINGS.model_copy(update={"k": 4}), "default", benchmark="synthetic")
    assert clustered["cluster"].tolist() == again["cluster"].tolist()
    assert summary.features == ["accelerator_count", "accelerator_year"] and summary.feature_source == "default"
    medians = clustered.groupby("cluster")["accelerator_hours"].median()
    assert medians.is_monotonic_increasing and summary.ordered_by == "accelerator_hours"
    assert summary.merged_small == 1 and summary.small_clusters == [] and summary.n_clusters == 3
    assert min(p.size for p in summary.profiles) >= CLUSTER_SETTINGS.min_size  # the lone one is never named
    assert sorted(p.count_rank for p in summary.profiles) == [1, 2, 3]
    assert all("count rank" in p.description for p in summary.profiles)
    assert summary.k_support is not None and sum(summary.k_support.best_k_share.values()) == pytest.approx(1)
    assert all(p.name and p.accelerator_hours_min <= p.accelerator_hours_median  # type: ignore[operator]
               for p in summary.profiles)
    assert [row.k for row in summary.diagnostics] == [2, 3, 4, 5]
    assert summary.k_verdict is not None and summary.k_verdict.preferred_k in {2, 3, 4, 5}


def test_the_k_scan_reads_no_k_and_its_file_gives_every_k_the_one_call_gives(tmp_path: Path) -> None:
    """The kscan stage's fits do not depend on `cluster.k`, so the cluster stage picks any k of the range from one
    scan, read back from its file, exactly as clustering at that k from scratch does (the table and every byte of
    the clusters' file)."""
    frame, features = _synthetic(), ["accelerator_count", "accelerator_year"]
    scans = [cluster.scan_benchmark(frame, features, CLUSTER_SETTINGS.model_copy(update={"k": k}), "default",
                                    benchmark="synthetic") for k in (2, 4)]
    assert scans[0] == scans[1] and sorted(scans[0].labels) == [2, 3, 4, 5]
    scans[0].write(tmp_path / "kscan.json")
    scan = cluster.KScan.read(tmp_path / "kscan.json")
    for k in (2, 3, 4, 5):
        settings = CLUSTER_SETTINGS.model_copy(update={"k": k})
        picked, picked_summary = cluster.clusters_from_scan(frame, scan, settings)
        direct, direct_summary = cluster.cluster_benchmark(frame, features, settings, "default", benchmark="synthetic")
        pd.testing.assert_frame_equal(picked, direct)
        picked_summary.write(tmp_path / "picked.json")
        direct_summary.write(tmp_path / "direct.json")
        assert (tmp_path / "picked.json").read_bytes() == (tmp_path / "direct.json").read_bytes(), k


def test_a_k_scan_of_other_configurations_is_refused_as_stale() -> None:
    frame = _synthetic()
    scan = cluster.scan_benchmark(frame.iloc[:30], ["accelerator_count", "accelerator_year"], CLUSTER_SETTINGS,
                                  "default", benchmark="synthetic")
    with pytest.raises(ContractError, match="stale; run `dvc repro`"):
        cluster.clusters_from_scan(frame, scan, CLUSTER_SETTINGS)


def test_no_usable_feature_skips_the_clustering() -> None:
    clustered, summary = cluster.cluster_benchmark(_synthetic(), ["host_cpu_cores"], CLUSTER_SETTINGS,
                                                   benchmark="synthetic")
    assert clustered.empty and summary.status == "skipped"
    assert summary.dropped_features[0].feature == "host_cpu_cores"
    # a skipped clustering's file holds what the step reached, no more
    assert set(summary.as_json()) == {"benchmark", "status", "reason", "k", "features", "profiles", "diagnostics",
                                      "stability_ari", "feature_source", "candidate_features", "dropped_features"}


@pytest.mark.skipif(not (ROOT / CONFIGURATIONS).is_file(), reason="run `dvc repro features` first")
def test_real_resnet_default_inputs_drop_nodes_and_sparse_bandwidths() -> None:
    analysis = AnalysisSettings.model_validate(PROJECT_PARAMS["analysis"])
    frame = in_scope(pd.read_parquet(ROOT / CONFIGURATIONS), analysis, "resnet")
    kept, dropped = cluster.choose_features(frame, PROJECT_PARAMS["cluster"]["default_features"],
                                            PROJECT_PARAMS["cluster"]["max_imputed_share"],
                                            PROJECT_PARAMS["cluster"]["max_collinear_r2"])
    reasons = {d.feature: d.reason for d in dropped}
    assert "exactly collinear" in reasons["n_nodes"]
    assert "missing" in reasons["interconnect_intra_gbps"]  # 58% of ResNet's values are unknown
    assert kept[:2] == ["accelerator_count", "accelerators_per_node"]
    assert all(frame[f].isna().mean() <= PROJECT_PARAMS["cluster"]["max_imputed_share"] for f in kept)


# What the page says

def test_page_rows_say_which_targets_credit_hardware_and_why_not() -> None:
    fits = {name: _fit(r2, baseline, low, high,
                       permutation_importance={"accelerator_count": {"mean": 0.3, "std": 0.1},
                                               ROUND_FEATURE: {"mean": 0.2, "std": 0.05}},
                       stability={"accelerator_count": 0.9},
                       spearman={"accelerator_count": {"rho": -0.5, "p_value": 0.01, "n": 30}})
            for name, r2, baseline, low, high in (("log_time_to_train", 0.8, 0.6, 0.05, 0.4),
                                                  ("log_accelerator_hours", 0.7, 0.65, -0.02, 0.2))}
    report = ImportanceReport(benchmark="fixture", status="ok", n_configurations=30, targets=fits,
                              selected_features=["accelerator_count"], n_families=6, round_feature=ROUND_FEATURE,
                              baseline=importance.BASELINE, gate=importance.gate(fits, 0.5, 5, 6, 4),
                              selection_stability={"accelerator_count": 0.9})
    rows = tables.importance_rows(report)
    assert rows["targets"] == ["time to train", "accelerator-hours"]
    assert rows["passes"] == [True, False] and rows["explained"]
    assert rows["not_explained"] == ["accelerator-hours (gain over the baseline +0.05 (95% CI -0.02 to +0.20) not "
                                     "above 0)"]
    assert (rows["r2"], rows["baseline"]) == (["0.80", "0.70"], ["0.60", "0.65"])
    assert rows["gain"] == ["+0.20 (95% CI +0.05 to +0.40)", "+0.05 (95% CI -0.02 to +0.20)"]
    assert rows["stability"] == {"accelerators": "90%"} and rows["n_families"] == 6
    by_feature = {row["feature"]: row for row in rows["rows"]}
    assert by_feature["round (software era)"]["covariate"] and not by_feature["round (software era)"]["selected"]
    assert by_feature["accelerators"]["rho"] == ["-0.50", "-0.50"]
    assert by_feature["accelerators"]["kept"] == ["90%", "90%"]


def test_page_notes_name_dropped_features_the_k_verdict_and_small_clusters() -> None:
    frame = _synthetic()
    frame.loc[0, ["accelerator_count", "accelerator_year"]] = [1e6, 2030.0]
    _, summary = cluster.cluster_benchmark(frame, ["accelerator_count", "accelerator_year", "host_cpu_cores"],
                                           CLUSTER_SETTINGS.model_copy(update={"k": 4}), "default",
                                           benchmark="synthetic")
    notes = sections.cluster_notes(summary)
    assert notes["features"] == ["accelerators", "accelerator year"] and not notes["from_importance"]
    assert notes["dropped"] == [{"feature": "host CPU cores per node",
                                 "reason": "missing (would be imputed) for 100% of configurations, above "
                                           "cluster.max_imputed_share = 20%"}]
    assert notes["small"] == [] and notes["merged_small"] == 1 and notes["min_size"] == CLUSTER_SETTINGS.min_size
    assert notes["k_message"].startswith("The diagnostics")


def test_small_clusters_merge_into_the_nearest() -> None:
    """A cluster of fewer than min_size results joins the one of nearest centroid, smallest first; none is left."""
    x = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2], [5.3], [9.0], [20.0]])
    labels = np.array([0, 0, 0, 1, 1, 1, 1, 2, 3])
    merged, count = cluster.merge_small(labels, x, 3)
    assert count == 2
    assert merged.tolist() == [0, 0, 0, 1, 1, 1, 1, 1, 1]  # 9.0 joins 5.x; then 20.0 joins that group
    assert cluster.merge_small(labels, x, 1)[1] == 0


def test_standardised_equals_sklearns_scaler() -> None:
    from sklearn.preprocessing import StandardScaler

    x = np.random.default_rng(0).normal(size=(30, 3))
    np.testing.assert_allclose(cluster.standardised(x), StandardScaler().fit_transform(x), atol=1e-12)


def test_clustering_is_the_same_bytes_on_one_or_two_threads() -> None:
    """The stage holds sklearn to one thread: a two-thread limit around it changes nothing."""
    from threadpoolctl import threadpool_limits

    frame = _synthetic()
    settings = CLUSTER_SETTINGS
    outputs = []
    for threads in (1, 2):
        with threadpool_limits(threads):
            _, summary = cluster.cluster_benchmark(frame, list(settings.default_features), settings, "default",
                                                   benchmark="x")
        outputs.append(summary.model_dump_json())
    assert outputs[0] == outputs[1]
