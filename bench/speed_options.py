"""What a faster analysis would cost in answers: each cheaper setting of the two costliest analysis steps, timed on
the real data, and what it changes against params.yaml's.

    python bench/speed_options.py      (after `dvc repro importance`; about five minutes on two cores)

The full-run and `cluster.k` time targets (docs/speed.md) cannot be met with today's outputs; this prints the
evidence for deciding which outputs may change. For each option it runs the step's pure function over every
analysed benchmark in this one process and prints the CPU seconds against params.yaml's settings and:
- importance options (`pipeline.analysis.statistics.importance.analyse`): the benchmarks whose gate verdict flips for a
  target, those for which other features are selected for clustering (their clusters change), and those whose
  selection only comes in another order (which decides which of a collinear pair is kept);
- cluster options (`pipeline.analysis.statistics.clustering.cluster_benchmark`, on the features reports/importance
holds):
  the benchmarks whose clusters change (labels not identical up to renumbering: adjusted Rand index below 1) or
  whose k verdict flips, and the largest change of a mean bootstrap ARI.
Nothing is written.
"""
from __future__ import annotations

import copy
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python bench/speed_options.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sklearn.metrics import adjusted_rand_score

from bench._common import arguments
from pipeline.analysis.scope import analysed_benchmarks, in_scope, read_configurations
from pipeline.analysis.statistics import clustering, importance
from pipeline.analysis.statistics.importance_result import ImportanceReport
from pipeline.core import paths
from pipeline.settings import Settings, load_params, settings_from

# Each option's name, with params.yaml's value filled in where it reads {section[key]}.
IMPORTANCE_OPTIONS = {
    "importance.permutation_repeats {importance[permutation_repeats]} -> 5": {"permutation_repeats": 5},
    "importance.bootstrap {importance[bootstrap]} -> 500": {"bootstrap": 500},
    "importance.model {importance[model][max_iter]} rounds at {importance[model][learning_rate]} -> 15 at 0.6":
        {"model": {"max_iter": 15, "learning_rate": 0.6}},
}
CLUSTER_OPTIONS = {
    "cluster.n_init {cluster[n_init]} -> 5": {"n_init": 5},
    "cluster.n_init {cluster[n_init]} -> 3": {"n_init": 3},
    "cluster.bootstrap {cluster[bootstrap]} -> 10": {"bootstrap": 10},
}


def with_section(params: dict[str, Any], section: str, change: dict[str, Any]) -> Settings:
    """params.yaml's settings with `change` merged into one section (one level of nesting)."""
    changed = copy.deepcopy(params)
    for key, value in change.items():
        if isinstance(value, dict):
            changed[section][key].update(value)
        else:
            changed[section][key] = value
    return settings_from(changed)


def cpu_seconds(work: Callable[[str], Any], benchmarks: list[str]) -> tuple[float, dict[str, Any]]:
    start = time.process_time()
    results = {benchmark: work(benchmark) for benchmark in benchmarks}
    return time.process_time() - start, results


def importance_changes(base: dict[str, Any], other: dict[str, Any]) -> str:
    flips, selections, reorders = [], [], []
    for benchmark, report in base.items():
        if report.gate is None or other[benchmark].gate is None:
            continue
        passes = {name: verdict.passes for name, verdict in report.gate.targets.items()}
        now = {name: verdict.passes for name, verdict in other[benchmark].gate.targets.items()}
        flips += [f"{benchmark} {name}" for name in passes if passes[name] != now[name]]
        selected, selected_now = report.selected_features, other[benchmark].selected_features
        if set(selected) != set(selected_now):
            selections.append(benchmark)
        elif selected != selected_now:
            reorders.append(benchmark)
    return (f"gate flips: {', '.join(flips) or 'none'}; other features selected: {', '.join(selections) or 'none'}; "
            f"the same features in another order: {', '.join(reorders) or 'none'}")


def cluster_changes(base: dict[str, Any], other: dict[str, Any]) -> str:
    changed, verdicts, largest = [], [], 0.0
    for benchmark, (labels, summary) in base.items():
        other_labels, other_summary = other[benchmark]
        if summary.status != "ok":
            continue
        if adjusted_rand_score(labels, other_labels) < 1:
            changed.append(benchmark)
        if summary.k_verdict.supported != other_summary.k_verdict.supported:
            verdicts.append(benchmark)
        largest = max(largest, abs(summary.stability_ari_mean - other_summary.stability_ari_mean))
    return (f"clusters change: {', '.join(changed) or 'none'}; k verdict flips: {', '.join(verdicts) or 'none'}; "
            f"largest change of a mean bootstrap ARI {largest:.3f}")


def main() -> None:
    arguments(__doc__)
    params = load_params()
    settings = settings_from(params)
    configurations = read_configurations()
    benchmarks = analysed_benchmarks(settings.analysis, configurations)
    frames = {benchmark: in_scope(configurations, settings.analysis, benchmark) for benchmark in benchmarks}

    def importance_work(chosen: Settings) -> Callable[[str], Any]:
        return lambda benchmark: importance.analyse(frames[benchmark], chosen.importance,
                                                    chosen.analysis.min_configurations, benchmark=benchmark)

    base_seconds, base = cpu_seconds(importance_work(settings), benchmarks)
    rows: list[tuple[str, float, str]] = [("importance with params.yaml", base_seconds, "")]
    for option, change in IMPORTANCE_OPTIONS.items():
        name = option.format(**params)
        print(f"timing {name} ...", file=sys.stderr)
        seconds, results = cpu_seconds(importance_work(with_section(params, "importance", change)), benchmarks)
        rows.append((name, seconds, importance_changes(base, results)))

    def cluster_work(chosen: Settings) -> Callable[[str], Any]:
        def work(benchmark: str) -> tuple[Any, clustering.Clustering]:
            features, source = clustering.candidate_features(
                ImportanceReport.read(paths.importance_json(benchmark)), chosen.cluster.default_features)
            clustered, summary = clustering.cluster_benchmark(frames[benchmark], features, chosen.cluster, source,
                                                              benchmark=benchmark)
            return clustered["cluster"].to_numpy(), summary
        return work

    base_seconds, clusters = cpu_seconds(cluster_work(settings), benchmarks)
    rows.append(("k-means with params.yaml", base_seconds, ""))
    for option, change in CLUSTER_OPTIONS.items():
        name = option.format(**params)
        print(f"timing {name} ...", file=sys.stderr)
        seconds, results = cpu_seconds(cluster_work(with_section(params, "cluster", change)), benchmarks)
        rows.append((name, seconds, cluster_changes(clusters, results)))
    references = {"importance": rows[0][1], "cluster": rows[len(IMPORTANCE_OPTIONS) + 1][1]}
    for name, seconds, changes in rows:
        reference = references["importance" if name.startswith("importance") else "cluster"]
        saving = f" ({100 * (1 - seconds / reference):.0f}% less)" if changes else ""
        print(f"{name}: {seconds:.1f} CPU s{saving}")
        if changes:
            print(textwrap.fill(changes, 110, initial_indent="    ", subsequent_indent="    "))


if __name__ == "__main__":
    main()
