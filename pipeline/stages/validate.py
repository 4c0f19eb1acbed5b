"""Stage `validate`: check params.yaml, the price file and the mirror before any other stage deletes an output.

    python -m pipeline.stages.validate

DVC removes a stage's outputs before running it, so a mistake found by the stage itself would cost its outputs.
This stage runs first on every `dvc repro` (every other stage is downstream of it) and stops the run, exit 1
with a message naming the mistake, when params.yaml does not validate (`pipeline.settings`), when
`report.prices` names a price file that does not load, when `fetch.mirror` is not a folder, when an archive of
the mirror is not a readable .tar.gz (or does not match the mirror's SHA256SUMS), or when a round to clone
cannot be reached. With `fetch.rounds: all` it finds the rounds (pipeline/mlperf/discovery.py) and says which the
mirror holds and what upstream answered, or when it last did.
It writes `data/.upstream.json`, what upstream answered when last reached (the pages' newer-round notice reads
it; `pipeline.mlperf.upstream`), and `data/mirror.json`, what the fetch stage will copy, by content (each mirror
archive's SHA-256, each folder's file list, each clone's URL): the fetch stage depends on it, so a replaced
archive reruns the fetch, and an unchanged mirror writes the same bytes and reruns nothing.
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from pipeline.core import paths
from pipeline.core.cli import stage_arguments
from pipeline.core.errors import ParamsError, cli
from pipeline.core.files import write_json
from pipeline.mlperf.discovery import check_analysed_rounds, discover, say
from pipeline.mlperf.fetching import check_reachable, clone_reason, mirror_listing, plan
from pipeline.mlperf.upstream import read_upstream_record
from pipeline.settings import load_settings

# The settings this stage reads (tools/sync_dvc_params.py writes them into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ("fetch", "analysis", "importance", "cluster", "rank", "findings", "decide", "report")


@cli
def main(argv: Sequence[str] | None = None) -> None:
    """Run the validate stage: check params.yaml, the price file and the mirror, write data/mirror.json (the rounds
    and where each comes from); returns None, exit 1 on a mistake."""
    stage_arguments("pipeline.stages.validate", __doc__, argv)
    settings = load_settings()
    if settings.report.prices is not None:  # imported only then: pandas would double this stage's time
        from pipeline.analysis.pricing.prices import load_price_table

        load_price_table(settings.report.prices)
    if settings.report.providers:  # imported only then, as above
        from pipeline.analysis.pricing.price_table import chosen_providers

        try:
            chosen_providers(settings.report.providers)
        except ValueError as error:
            raise ParamsError(f"report.providers: {error}") from None
    fetch = settings.fetch
    record = read_upstream_record(paths.UPSTREAM_RECORD)
    if fetch.rounds == "all":
        found = discover(None if fetch.mirror is None else Path(fetch.mirror), fetch.upstream, record)
        say(found, "validate")
        rounds, record = found.rounds, found.record
        check_analysed_rounds(settings.analysis.rounds, rounds)
    else:
        rounds = fetch.rounds
    sources = plan(fetch.mirror, fetch.upstream, rounds)
    for source in sources:
        if source.path is None:
            print(f"validate: {clone_reason(source, fetch.mirror)}", file=sys.stderr)
            check_reachable(source, fetch.mirror)
    write_json(mirror_listing(sources, paths.MIRROR_HASHES), paths.MIRROR_LISTING)
    record.write(paths.UPSTREAM_RECORD)
    print(f"params.yaml is valid; {sum(source.path is not None for source in sources)} of {len(sources)} rounds "
          "are in the mirror")


if __name__ == "__main__":
    main()
