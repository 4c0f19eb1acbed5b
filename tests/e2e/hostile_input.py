"""What the hostile-input tests of tests/e2e share: an ingest whose accounting is checked whatever the input, a
file's quarantine reasons, a run's row, and archives of tar members written by hand (any name or type)."""
from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pandas as pd

from pipeline.mlperf import rounds
from tests.conftest import assert_accounted

LOG = "Acme/results/box/resnet/result_0.txt"
SYSTEM = "Acme/systems/box.json"
MIB = 1 << 20


def ingest_checked(sources_: list[Path]) -> rounds.IngestTables:
    """Ingest and check the accounting, which must hold whatever the input."""
    tables = rounds.ingest(sources_)
    assert_accounted(tables.tally)
    return tables


def reasons_for(tables: rounds.IngestTables, path: str) -> list[str]:
    return tables.quarantine.loc[tables.quarantine["path"] == path, "reason"].tolist()


def run_of(tables: rounds.IngestTables, path: str = LOG) -> pd.Series:
    return tables.runs.set_index("path").loc[path]


def tar_member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", data: bytes = b"") -> tuple[
        tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = kind, link, len(data)
    if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        info.devmajor, info.devminor = 1, 3
    return info, data


def write_members(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    """A .tar.gz of exactly these members, whatever their names and types (tarfile's own `add` would refuse
    or rewrite some of them)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(buffer.getvalue(), mtime=0))
    return path
