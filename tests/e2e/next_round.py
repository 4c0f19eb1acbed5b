"""A next round for tests, built from real logs of the mirror: v5.1's results renamed as v6.0, the benchmarks
v6.0's rules retire (RetinaNet, R-GAT) dropped, and Llama 3.1 8B's results copied as a benchmark the catalogue does
not describe (gpt_oss_20b, as v6.0's rules name it), their logs saying so."""
from __future__ import annotations

import io
import tarfile
from pathlib import Path

from isal import igzip

SOURCE_ROUND, NEXT_ROUND = "v5.1", "v6.0"
RETIRED = ("retinanet", "rgat")
COPIED_AS = {"llama31_8b": "gpt_oss_20b"}


def _folder(name: str) -> str | None:
    """The benchmark folder of a member `training_results_<round>/<submitter>/results/<system>/<benchmark>/...`."""
    parts = name.split("/")
    return parts[4] if len(parts) > 5 and parts[2] == "results" else None


def write_next_round(source: Path, archive: Path) -> Path:
    """The next round's .tar.gz `archive` (named training_results_v6.0.tar.gz) from the source round's archive."""
    old_top, new_top = f"training_results_{SOURCE_ROUND}", f"training_results_{NEXT_ROUND}"
    with tarfile.open(source) as tar_in, archive.open("wb") as raw, \
            igzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as compressed, \
            tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as tar_out:
        for member in tar_in:
            folder = _folder(member.name)
            if not member.isfile() or folder in RETIRED:
                continue
            data = tar_in.extractfile(member).read()  # type: ignore[union-attr]
            copies = [(member.name, data)]
            if folder in COPIED_AS:
                new = COPIED_AS[folder]
                copies.append((member.name.replace(f"/{folder}/", f"/{new}/"),
                               data.replace(f'"value": "{folder}"'.encode(), f'"value": "{new}"'.encode())))
            for name, content in copies:
                info = tarfile.TarInfo(new_top + name.removeprefix(old_top))
                info.size, info.mode = len(content), 0o644
                tar_out.addfile(info, io.BytesIO(content))
    return archive
