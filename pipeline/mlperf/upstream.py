"""What MLCommons' repositories answered when last asked for rounds (`data/.upstream.json`): the validate stage's
declared output, which the pages read for their newer-round notice.

The validate stage writes it on every run (pipeline/mlperf/discovery.py asks upstream with `fetch.rounds: all`): the
new answer when upstream answered, else the previous record unchanged, else a record that upstream was never reached
(no time in it, so an offline build writes the same bytes every time and reruns nothing).
"""
from __future__ import annotations

from pathlib import Path

from pydantic import Field

from pipeline.core.artifacts import Record, read_record
from pipeline.core.files import write_json
from pipeline.mlperf.catalogue import round_version


class UpstreamRecord(Record):
    """What upstream answered when last reached."""

    upstream: str | None = None
    """params `fetch.upstream` (with {round}) as it was when it answered; None: never reached on this machine."""
    checked: str | None = None
    """When upstream last answered ("YYYY-MM-DD HH:MM UTC"); None: never."""
    answered: list[str] = Field(default_factory=list)
    """The rounds upstream had then, oldest first."""
    new: list[str] = Field(default_factory=list)
    """Of those, the rounds newer than this project's catalogue of rounds."""

    def newer_than(self, newest: str) -> str | None:
        """The newest round upstream answered for that is newer than `newest`; None when none is."""
        newer = [round_ for round_ in self.answered if round_version(round_) > round_version(newest)]
        return max(newer, key=round_version) if newer else None

    def write(self, path: Path) -> None:
        """The record at `path`, atomically (`files.write_json`)."""
        write_json(self.model_dump(mode="json"), path)


def read_upstream_record(path: Path) -> UpstreamRecord:
    """The record at `path`; a never-reached record when there is none (a build before the validate stage ran).
    Raises `ContractError` when the file is not JSON or not a record."""
    return read_record(UpstreamRecord, path, "validate") if path.is_file() else UpstreamRecord()
