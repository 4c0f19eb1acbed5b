"""Clusters of distinct configurations: k-means on the distinct points weighted by their results (the partition of
k-means on every row, the diagnostics and stability measured on the distinct points), numbered from the most
hardware-efficient; on the real data, cluster 0 is the group each benchmark's page calls most hardware-efficient
(issue 23)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

from pipeline.analysis.statistics import clustering, ranking
from pipeline.analysis.statistics.clustering import Clustering
from pipeline.analysis.statistics.ranking import Ranking
from pipeline.core import paths
from pipeline.report import inputs, sections
from pipeline.settings import ClusterSettings
from tests.conftest import ROOT

PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
SETTINGS = ClusterSettings.model_validate({**PARAMS["cluster"], "k": 3, "k_range": [2, 4], "bootstrap": 4})


# --- clusters of distinct configurations -------------------------------------------------------------------------

def _groups(seed: int = 0) -> np.ndarray:
    """Three well-separated groups of points in the plane, many of them repeated (as results of one configuration
    are): 40 rows, 9 distinct points."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [8.0, 0.0], [0.0, 8.0]])
    points = np.vstack([centre + rng.normal(0, 0.3, (3, 2)) for centre in centres])
    return points[rng.choice(len(points), 40)]


def test_weighted_kmeans_of_the_distinct_points_is_kmeans_of_the_rows() -> None:
    """The oracle: sklearn's k-means on every row (repeats included) finds the same partition and inertia as the
    weighted fit on the distinct points."""
    rows = _groups()
    distinct = clustering.distinct_points(rows)
    assert len(distinct.points) == 9 and distinct.counts.sum() == 40
    assert (distinct.points[distinct.inverse] == rows).all()
    assert distinct.share_repeated == pytest.approx(1 - 9 / 40)
    weighted = clustering._kmeans(distinct.points, distinct.counts, 3, 10, 0)
    plain = KMeans(n_clusters=3, n_init=10, random_state=0).fit(rows)
    assert adjusted_rand_score(plain.labels_, weighted.labels_[distinct.inverse]) == 1.0
    assert weighted.inertia_ == pytest.approx(plain.inertia_)


def test_diagnostics_and_stability_are_measured_on_the_distinct_points() -> None:
    distinct = clustering.distinct_points(_groups())
    fitted: dict = {}
    rows = clustering.diagnostics(distinct, range(2, 9), 4, 0, fitted)
    assert [row.k for row in rows] == list(range(2, 9))  # up to one below the 9 distinct points
    best = max(rows, key=lambda row: row.silhouette)
    assert best.k == 3
    support, ari = clustering.k_support(distinct, fitted, 0, 5)
    assert support.most_supported == 3 and support.resamples == 5
    assert ari[3] == [1.0] * 5  # three groups this clear never move


def _efficiency_fixture() -> pd.DataFrame:
    """Three hardware groups whose round efficiencies are known: 64 accelerators of 2018 (0.2), 8 of 2022 (0.9)
    and 8 of 2018 (0.5)."""
    groups = [(64.0, 2018.0, 0.2, "V100", 5.0), (8.0, 2022.0, 0.9, "H100", 20.0), (8.0, 2018.0, 0.5, "V100", 60.0)]
    rows = []
    for count, year, efficiency, family, minutes in groups:
        for i in range(6):
            rows.append({"accelerator_count": count * (1 + (i % 2)), "accelerator_year": year,
                         "round_efficiency": efficiency + 0.01 * i, "accelerator_family": family,
                         "accelerator_vendor": "NVIDIA", "accelerator_form_factor": "SXM",
                         "interconnect_intra": "NVLink", "time_to_train_min": minutes,
                         "accelerator_hours": count * minutes / 60, "scaling_efficiency": np.nan})
    return pd.DataFrame(rows)


def test_clusters_are_numbered_from_the_most_hardware_efficient_on_a_fixture_of_known_order() -> None:
    clustered, summary = clustering.cluster_benchmark(_efficiency_fixture(), ["accelerator_count", "accelerator_year"],
                                                      SETTINGS, "default", benchmark="fixture")
    medians = clustered.groupby("cluster")["round_efficiency"].median()
    assert medians.round(3).tolist() == [0.925, 0.525, 0.225]  # H100 8-16, then V100 8-16, then V100 64-128
    assert [profile.name for profile in summary.profiles] == ["8-16 H100, NVLink", "8-16 V100, NVLink",
                                                             "64-128 V100, NVLink"]
    assert summary.ordered_by == "round_efficiency" and summary.n_distinct == 6
    standings = ranking.cluster_standings(clustered)
    assert ranking.most_efficient_cluster(standings) == 0
    # the trade-off is named apart: the 64-128 V100 group is the fastest, the H100 group the least hardware time
    assert [item.trade_off_front for item in standings] == [1, 2, 1]


# --- the real data -----------------------------------------------------------------------------------------------

needs_outputs = pytest.mark.skipif(not (ROOT / paths.RANK).is_dir() or not (ROOT / paths.CONFIGURATIONS).is_file(),
                                   reason="run the pipeline first (dvc repro)")


def _analysed(root: Path) -> list[str]:
    return [benchmark for benchmark in (path.stem for path in sorted((root / paths.RANK).glob("*.json")))
            if Ranking.read(root / paths.rank_json(benchmark)).analysed]


@needs_outputs
def test_on_the_real_data_cluster_0_is_the_most_hardware_efficient_and_the_page_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23: in every analysed benchmark, cluster 0 has the highest median round efficiency, and it is the group
    the page calls most hardware-efficient."""
    monkeypatch.chdir(ROOT)
    benchmarks = _analysed(ROOT)
    assert len(benchmarks) >= 15
    for benchmark in benchmarks:
        page_path = ROOT / paths.REPORTS / "benchmarks" / f"{benchmark}.html"  # the benchmark's page of the site
        page = page_path.read_text(encoding="utf-8") if page_path.is_file() else None
        clustered = pd.read_parquet(paths.clusters_table(benchmark))
        medians = clustered.groupby("cluster")["round_efficiency"].median()
        assert medians.idxmax() == 0 and medians.is_monotonic_decreasing, benchmark
        ranked = Ranking.read(paths.rank_json(benchmark))
        assert ranked.most_efficient_cluster == 0, benchmark
        outputs = inputs.BenchmarkOutputs(benchmark, ranked, pd.read_csv(paths.ranking_csv(benchmark)),
                                          Clustering.read(paths.clusters_json(benchmark)), {}, clustered)
        answer = sections.answer_of(outputs)
        assert answer.efficient is not None and answer.efficient.cluster == 0, benchmark
        if page is not None:
            section = page[page.index('<section id="groups"'):]
            section = section[:section.index("</section>")]
            assert "The most hardware-efficient group is" in section, benchmark
            assert re.search(r'</span>0: [^<]*<span class="pill">most hardware-efficient</span>', section), benchmark
