"""The importance gate and the clusters of every analysed benchmark, as the importance and cluster stages wrote them.

    dvc repro cluster
    python bench/gate_and_clusters.py

Per benchmark: the R^2 of both targets on held-out accelerator families, the baseline's, and whether the gate
credits hardware (`python bench/importance_check.py` says why); the clustering features, where they came from, the
dropped ones and why; the distinct configurations clustered; the k the diagnostics prefer and the k they support
against `cluster.k`; the share of bootstrap resamples (each from its own k-means start) whose best k is each
candidate; cluster sizes after small clusters are merged, names, median round efficiencies (cluster 0 the highest)
and accelerator-count ranks; and a summary line.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import arguments  # noqa: E402
from pipeline.analysis.statistics.clustering import Clustering  # noqa: E402
from pipeline.analysis.statistics.importance_result import ImportanceReport  # noqa: E402
from pipeline.core import paths  # noqa: E402


def main() -> None:
    arguments(__doc__)
    benchmarks = sorted(path.stem for path in (ROOT / paths.CLUSTERS).glob("*.json"))
    if not benchmarks:
        sys.exit(f"no {paths.CLUSTERS}/*.json: run `dvc repro cluster` first")
    supported: dict[str, int | None] = {}
    repeated: list[float] = []
    smallest: list[int] = []
    for benchmark in benchmarks:
        importance = ImportanceReport.read(ROOT / paths.importance_json(benchmark))
        clusters = Clustering.read(ROOT / paths.clusters_json(benchmark))
        if importance.status != "ok" or importance.gate is None:
            print(f"{benchmark}: {importance.reason}")
            continue
        verdicts = importance.gate.targets
        r2 = "; ".join(f"{name.removeprefix('log_')} R2 {v.oof_r2:.2f} (baseline {v.baseline_r2:.2f}) "
                       f"{'credits hardware' if v.passes else 'not credited'}" for name, v in verdicts.items())
        print(f"{benchmark} (n = {importance.n_configurations}): {r2}")
        print(f"  selected: {importance.selected_features or 'none'}")
        verdict = clusters.k_verdict
        if clusters.status != "ok" or verdict is None or clusters.share_repeated is None:
            print(f"  clusters: {clusters.reason}")
            continue
        print(f"  clustered on ({clusters.feature_source}): {clusters.features}")
        for dropped in clusters.dropped_features:
            print(f"  dropped {dropped.feature}: {dropped.reason}")
        sizes = [profile.size for profile in clusters.profiles]
        supported[benchmark] = verdict.supported_k
        repeated.append(clusters.share_repeated)
        print(f"  {clusters.n_distinct} distinct configurations ({clusters.share_repeated:.0%} of the results "
              f"repeat one)")
        support = clusters.k_support
        shares = ", ".join(f"{k}: {share:.0%}" for k, share in sorted((support.best_k_share if support else {}).items())
                           if share > 0)
        print(f"  k = {clusters.k}: {'supported' if verdict.supported else 'NOT supported'} (silhouette "
              f"{verdict.silhouette_k:.2f}, best {verdict.silhouette_best:.2f}, bootstrap ARI "
              f"{clusters.stability_ari_mean:.2f}), preferred k = {verdict.preferred_k}, k supported by the "
              f"data = {verdict.supported_k}")
        if support is not None:
            print(f"  best k over {support.resamples} bootstrap resamples (each from its own start): {shares}; most "
                  f"often k = {support.most_supported}")
        print(f"  sizes {sizes} (min_size {clusters.min_size}: {clusters.merged_small} small cluster(s) merged); "
              f"smallest named group {min(sizes)}")
        print("  named groups (median round efficiency, accelerator count rank 1 = fewest): " + " | ".join(
            f"{profile.name} ({profile.round_efficiency_median or float('nan'):.2f}, count rank "
            f"{profile.count_rank})" for profile in clusters.profiles))
        smallest.append(min(sizes))
    k = Clustering.read(ROOT / paths.clusters_json(benchmarks[0])).k
    print(f"k the diagnostics support: {', '.join(f'{name} {value}' for name, value in supported.items())}; "
          f"k = {k} supported in {sum(value == k for value in supported.values())} of {len(supported)}; results "
          f"repeating a configuration: {min(repeated):.0%} to {max(repeated):.0%}; smallest named group: "
          f"{min(smallest)} results")


if __name__ == "__main__":
    main()
