"""Stage `fetch`: put each round of params.yaml's `fetch.rounds` under `data/raw/`, from the mirror or from
MLCommons.

For each round it takes `training_results_<round>.tar.gz` or a folder `training_results_<round>/` from
`fetch.mirror`; where the mirror lacks it (or there is no mirror at all), it clones `fetch.upstream` (shallow
and sparse: only `*/systems/` and `*/results/`, the files the analysis reads) and packs that work tree, without
`.git`, into `training_results_<round>.tar.gz` like the mirror's: a cloned round takes a tenth of its unpacked
size in `data/raw/` and in the DVC cache. The archive is byte-identical for the same clone (sorted members, no
times or owners), so DVC sees an unchanged round as unchanged.

Nothing is written outside `data/raw/`, and nothing half-done is left there: the rounds are gathered in a hidden
folder beside it, which replaces `data/raw/` only once every round is in, so a failed or interrupted fetch
leaves the previous `data/raw/` as it was. An archive listed in the mirror's `SHA256SUMS` must match its
checksum. Symbolic links and special files of a mirror folder are not copied (a link could point anywhere on
the machine); each is named on stderr.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path

from isal import igzip
from tqdm import tqdm

from pipeline.core import paths
from pipeline.core.cli import ArgumentParser
from pipeline.core.errors import MirrorError, cli
from pipeline.core.files import atomic_dir, show_progress
from pipeline.settings import Fetch, load_settings

SPARSE_PATTERNS = ("/*/systems/", "/*/results/")
CHECKSUMS = "SHA256SUMS"


def source_name(round_: str) -> str:
    return f"training_results_{round_}"


def find_in_mirror(mirror: Path, round_: str) -> Path | None:
    for candidate in (mirror / f"{source_name(round_)}.tar.gz", mirror / source_name(round_)):
        if candidate.exists():
            return candidate
    return None


def clone_round(url: str, destination: Path) -> None:
    """Shallow, sparse clone of a results repository, packed into the archive `destination` (which must not
    exist, and is named `training_results_<round>.tar.gz`)."""
    with tempfile.TemporaryDirectory(dir=destination.parent, prefix=".clone-") as scratch:
        work = Path(scratch) / destination.name.removesuffix(".tar.gz")
        _git("clone", "--quiet", "--depth", "1", "--filter=blob:none", "--no-checkout", url, str(work))
        _git("-C", str(work), "sparse-checkout", "set", "--no-cone", *SPARSE_PATTERNS)
        _git("-C", str(work), "checkout", "--quiet")
        shutil.rmtree(work / ".git")
        pack_folder(work, destination)


def pack_folder(folder: Path, archive: Path) -> None:
    """Write the plain files below `folder` into the .tar.gz `archive`, under the folder's name.

    Members are sorted, with no time, owner or permission bits of this machine, and the gzip header holds no
    time, so the same files always give the same bytes. Links and special files are left out and named on
    stderr (a link could point anywhere on the machine).
    """
    files = []
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            print(f"fetch: not packed, not a plain file or folder (a link could point anywhere): {path}",
                  file=sys.stderr)
        elif path.is_file():
            files.append(path)
    with archive.open("wb") as raw, igzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as compressed, \
            tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in files:
            info = tarfile.TarInfo(f"{folder.name}/{path.relative_to(folder).as_posix()}")
            info.size = path.stat().st_size
            info.mode = 0o644
            with path.open("rb") as handle:
                tar.addfile(info, handle)


def _git(*args: str) -> None:
    # No prompt for credentials: an unreachable repository must fail, not wait for a person.
    subprocess.run(["git", *args], check=True, capture_output=True, text=True, timeout=3600,
                   env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})


def fetch_round(round_: str, mirror: Path, upstream: str, raw_dir: Path) -> Path:
    """Place one round in `raw_dir` and return its path there; `upstream` is params `fetch.upstream`, whose
    `{round}` the round's name replaces."""
    url = upstream.format(round=round_)
    found = find_in_mirror(mirror, round_)
    if found is not None:
        return _copy_from_mirror(found, raw_dir, url)
    target = raw_dir / f"{source_name(round_)}.tar.gz"
    try:
        clone_round(url, target)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as error:
        detail = "; ".join(line.strip() for line in (getattr(error, "stderr", None) or str(error)).splitlines()
                           if line.strip())
        missing = "" if mirror.is_dir() else ", which is not a folder" if mirror.exists() else ", which does not exist"
        raise MirrorError(
            f"round {round_} is not in the mirror {mirror}{missing} (looked for {source_name(round_)}.tar.gz and "
            f"{source_name(round_)}/), and cloning {url} failed ({detail}). Put the archive in the mirror, "
            "set fetch.mirror in params.yaml to where it is, or drop the round from fetch.rounds."
        ) from None
    return target


def _copy_from_mirror(found: Path, raw_dir: Path, url: str) -> Path:
    target = raw_dir / found.name
    try:
        if found.is_file():
            shutil.copyfile(found, target)
            _check_sha256(found, target, url)
        else:
            shutil.copytree(found, target, symlinks=True, ignore=_not_copied)
    except OSError as error:
        raise MirrorError(f"cannot read {found} from the mirror ({error.strerror or error}): check that it is "
                          f"readable, or remove it from the mirror so that the round is cloned from {url}") from None
    return target


def _check_sha256(found: Path, copy: Path, url: str) -> None:
    expected = expected_sha256(found.parent / CHECKSUMS, found.name)
    if expected is None:
        return
    with copy.open("rb") as handle:
        actual = hashlib.file_digest(handle, "sha256").hexdigest()
    if actual != expected:
        raise MirrorError(
            f"{found} does not match its checksum in {found.parent / CHECKSUMS} (the file is cut off or corrupt): "
            f"replace it with a good copy, or remove it from the mirror so that the round is cloned from {url}"
        )


def expected_sha256(checksums: Path, name: str) -> str | None:
    """The checksum `sha256sum` listed for `name`, or None when there is no such list or line."""
    if not checksums.is_file():
        return None
    for line in checksums.read_text(encoding="utf-8", errors="replace").splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[1].lstrip("*") == name:
            return fields[0].lower()
    return None


def _not_copied(folder: str, names: list[str]) -> set[str]:
    """copytree's ignore: git's own files, and what is not a plain file or folder (named on stderr)."""
    skipped = {".git"} & set(names)
    for name in sorted(set(names) - skipped):
        path = Path(folder, name)
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            print(f"fetch: not copied, not a plain file or folder (a link could point anywhere): {path}",
                  file=sys.stderr)
            skipped.add(name)
    return skipped


def fetch(settings: Fetch, raw_dir: Path = paths.RAW) -> list[Path]:
    """Place every round of `settings.rounds` in `raw_dir` (replaced as a whole, once all are in); their paths."""
    mirror = Path(settings.mirror)
    with atomic_dir(raw_dir) as staging:
        placed = [fetch_round(round_, mirror, settings.upstream, staging)
                  for round_ in tqdm(settings.rounds, desc="fetch", unit="round", disable=not show_progress())]
    return [raw_dir / path.name for path in placed]


@cli
def main(argv: Sequence[str] | None = None) -> None:
    ArgumentParser("pipeline.stages.fetch", __doc__).parse_args(argv)
    paths = fetch(load_settings().fetch)
    for path in paths:
        print(f"fetched {path}")


if __name__ == "__main__":
    main()
