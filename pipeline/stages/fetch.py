"""Stage `fetch`: put each round of params.yaml's `fetch.rounds` under `data/raw/`, from the mirror or from
MLCommons. The rounds are those of `data/mirror.json`, the validate stage's listing (which resolves
`fetch.rounds: all` to every round found, pipeline/mlperf/discovery.py).

For each round it takes `training_results_<round>.tar.gz` or a folder `training_results_<round>/` from
`fetch.mirror`; where the mirror lacks it (or `fetch.mirror` is null), it clones `fetch.upstream` (shallow and
sparse: only `*/systems/`, `*/results/` and the launch configurations, the files the analysis reads), announced on
stderr with the reason and the download size, and packs it into `training_results_<round>.tar.gz` like the mirror's
archives (the same files give the same bytes). A `fetch.mirror` that is not a folder stops the stage: set it to
null to clone.

Nothing is written outside `data/raw/`, and a failed or interrupted fetch leaves the previous `data/raw/` as it
was. An archive listed in the mirror's `SHA256SUMS` must match its checksum. Symbolic links and special files of
a mirror folder are not copied; each is named on stderr. The stage depends on `data/mirror.json` (the validate
stage's listing of the mirror by content), so replacing an archive of the mirror reruns it.
"""
from __future__ import annotations

from collections.abc import Sequence

from pipeline.core import paths
from pipeline.core.cli import ArgumentParser
from pipeline.core.errors import cli
from pipeline.mlperf.fetching import fetch, listed_rounds
from pipeline.settings import load_settings

# The settings this stage reads (tools/sync_dvc_params.py writes them into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ("fetch",)


@cli
def main(argv: Sequence[str] | None = None) -> None:
    """Run the fetch stage: put each listed round's archive under data/raw/ and print its path; returns None."""
    ArgumentParser("pipeline.stages.fetch", __doc__).parse_args(argv)
    listing = paths.MIRROR_LISTING
    for path in fetch(load_settings().fetch, rounds=listed_rounds(listing) if listing.is_file() else None):
        print(f"fetched {path}")


if __name__ == "__main__":
    main()
