"""Where each round comes from, and putting it under `data/raw/`: a mirror of archives or folders, else a shallow,
sparse clone of MLCommons' repository packed into the mirror's archive format.

`plan` decides, for each round of params `fetch.rounds` (or, for `all`, each round found:
`pipeline.mlperf.discovery`), its source (the mirror's `training_results_<round>.tar.gz`
or `training_results_<round>/`, or a clone of `fetch.upstream`); `mirror_listing` describes those sources by
content (the archives' SHA-256, cached by size and time), so the fetch stage, which depends on that listing, reruns
when an archive of the mirror is replaced and never when it is only touched. `fetch` places every round, all or
nothing: the rounds are gathered in a hidden folder that replaces `data/raw/` only once every round is in.

A `fetch.mirror` that does not exist is announced on stderr and every round is then cloned (the default
`../shared/mlperf` is absent on most machines); one that is a file is a mistake. `fetch.mirror: null` says there is
no mirror. A round that is cloned is announced on stderr with the reason and its download size before the clone
starts. The validate stage reads each archive of the mirror to its end (`check_archive`) and checks it against
the mirror's SHA256SUMS before the fetch stage may copy it.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, cast

from isal import igzip, isal_zlib

from pipeline.core import paths
from pipeline.core.cli import for_each
from pipeline.core.errors import MirrorError
from pipeline.core.files import atomic_dir, show_progress, write_json

# The inputs: descriptions, results and the implementations' launch configurations (read for each result's
# numeric precision, pipeline.mlperf.logs.precision); not the benchmark code.
SPARSE_PATTERNS = ("/*/systems/", "/*/results/", "/*/benchmarks/*/implementations/**/config*.sh")
CHECKSUMS = "SHA256SUMS"
# A clone's download (its systems/ and results/, compressed) in MB, as the packed archives of those rounds
# measured in 2025: what the announcement of a clone quotes. A round not listed has an unknown size.
DOWNLOAD_MB = {"v0.6": 1, "v0.7": 1, "v1.0": 10, "v1.1": 15, "v2.0": 25, "v2.1": 15, "v3.0": 21, "v3.1": 17,
               "v4.0": 18, "v4.1": 18, "v5.0": 4, "v5.1": 15}
# Seconds to wait for an upstream repository to answer `git ls-remote` before calling it unreachable.
REACH_TIMEOUT_S = 60
# Bytes read at a time when a check reads an archive's gzip stream to its end.
READ_CHUNK = 1 << 20
# What the decompressor raises on damaged deflate data (isal's stub declares it an instance; it is a class).
DEFLATE_ERROR = cast("type[Exception]", isal_zlib.IsalError)


class FetchSettings(Protocol):
    """params `fetch` (pipeline.settings.FetchSettings, which this layer cannot import)."""

    @property
    def mirror(self) -> str | None:
        """The folder of round archives to read first, or None for none (every round from `upstream`)."""

    @property
    def upstream(self) -> str:
        """The git URL of MLCommons' results repositories, "{round}" standing for the round ("vX.Y")."""

    @property
    def rounds(self) -> Sequence[str] | str:
        """The rounds to fetch ("vX.Y" names), or "all" for every round found."""


def source_name(round_: str) -> str:
    """The name MLCommons gives a round's repository and archive stem: "training_results_<round>"."""
    return f"training_results_{round_}"


@dataclass(frozen=True)
class Source:
    """Where one round comes from: `path` in the mirror (an archive or a folder), or None to clone `url`."""

    round: str
    path: Path | None
    url: str


def plan(mirror: str | None, upstream: str, rounds: Sequence[str]) -> list[Source]:
    """Each round's source. MirrorError when `mirror` (params `fetch.mirror`) exists but is not a folder; a
    mirror that does not exist is announced on stderr, and every round is cloned from `upstream`."""
    folder = mirror_folder(mirror, upstream)
    return [Source(round_, None if folder is None else _in_mirror(folder, round_), upstream.format(round=round_))
            for round_ in rounds]


def mirror_folder(mirror: str | None, upstream: str) -> Path | None:
    """The mirror's folder, or None (announced on stderr) when params `fetch.mirror` names no existing path."""
    if mirror is None:
        return None
    folder = Path(mirror)
    if folder.exists() and not folder.is_dir():
        raise MirrorError(f"fetch.mirror {mirror} is not a folder: set it in params.yaml to the folder that holds "
                          "the training_results_<round>.tar.gz archives, or to null to clone every round from "
                          f"{upstream.format(round='<round>')}")
    if not folder.exists():
        print(f"fetch.mirror {mirror} does not exist, so rounds are cloned from {upstream.format(round='<round>')}: "
              "set fetch.mirror in params.yaml to the folder of training_results_<round>.tar.gz archives (or to "
              "null to say there is none)", file=sys.stderr)
        return None
    return folder


def _in_mirror(mirror: Path, round_: str) -> Path | None:
    for candidate in (mirror / f"{source_name(round_)}.tar.gz", mirror / source_name(round_)):
        if candidate.exists():
            return candidate
    return None


def clone_reason(source: Source, mirror: str | None) -> str:
    """One line saying why and what a round's clone downloads (for a source without a mirror path)."""
    why = "there is no mirror (fetch.mirror: null)" if mirror is None else (
        f"the mirror {mirror} has neither {source_name(source.round)}.tar.gz nor {source_name(source.round)}/")
    size = f"about {DOWNLOAD_MB[source.round]} MB" if source.round in DOWNLOAD_MB else "of unknown size (a new round)"
    return (f"round {source.round}: {why}, so its systems/, results/ and launch configurations are cloned from "
            f"{source.url}, a download {size}")


def check_reachable(source: Source, mirror: str | None) -> None:
    """MirrorError, before anything is fetched or deleted, when the repository of a round to clone does not
    answer (a round that does not exist, no network)."""
    try:
        _git("ls-remote", "--exit-code", source.url, "HEAD", timeout=REACH_TIMEOUT_S)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as error:
        where = "there is no mirror" if mirror is None else (
            f"it is not in the mirror {mirror} (looked for {source_name(source.round)}.tar.gz and "
            f"{source_name(source.round)}/)")
        raise MirrorError(
            f"round {source.round}: {where}, and {source.url} cannot be reached ({_detail(error)}). Put the archive "
            "in the mirror, set fetch.mirror in params.yaml to where it is, or drop the round from fetch.rounds."
        ) from None


def mirror_listing(sources: list[Source], hashes: Path) -> list[dict[str, object]]:
    """What each round's fetch copies, by content: an archive's name, bytes and SHA-256; a folder's name, file
    count, bytes and a SHA-256 over its files' paths and sizes; a clone's URL. `hashes` caches the archives'
    SHA-256 by path, size and modification time (a JSON file of this machine, never an output). MirrorError,
    naming the mirror's file, for an archive that is not gzip and tar readable to its end or does not match its
    line in the mirror's SHA256SUMS: checked here, in the validate stage that runs on every `dvc repro` before
    any output is deleted, so a bad archive never replaces a good copy (and the fetch stage, which depends on
    this listing, is never replayed from DVC's run cache for an archive that fails)."""
    cache = json.loads(hashes.read_text(encoding="utf-8")) if hashes.is_file() else {}
    archives = [source for source in sources if source.path is not None and source.path.is_file()]
    keys = {source.round: _cache_key(source.path) for source in archives if source.path is not None}
    # Read to the end in as many processes as the machine gives (about 2 s of CPU for the twelve rounds), the
    # largest first so that they finish together.
    unchecked = sorted(((source.path, source.url) for source in archives
                        if source.path is not None and keys[source.round] not in cache),
                       key=lambda item: (-item[0].stat().st_size, item[0].name))
    for (archive, _), sha256 in zip(unchecked, for_each(_checked_sha256, unchecked, "checking archives",
                                                        unit="archive")):
        cache[_cache_key(archive)] = sha256
    listing: list[dict[str, object]] = []
    for source in sources:
        if source.path is None:
            listing.append({"round": source.round, "clone": source.url})
        elif source.path.is_file():
            stat = source.path.stat()
            key = keys[source.round]
            _check_sha256(source.path, cache[key], source.url)
            listing.append({"round": source.round, "archive": source.path.name, "bytes": stat.st_size,
                            "sha256": cache[key]})
        else:
            files = sorted(path for path in source.path.rglob("*") if path.is_file() and not path.is_symlink())
            sizes = [(path.relative_to(source.path).as_posix(), path.stat().st_size) for path in files]
            listing.append({"round": source.round, "folder": source.path.name, "files": len(sizes),
                            "bytes": sum(size for _, size in sizes),
                            "sha256": hashlib.sha256(json.dumps(sizes).encode()).hexdigest()})
    write_json(cache, hashes)
    return listing


def _cache_key(archive: Path) -> str:
    """An archive's key in the checksum cache: its path, size and modification time."""
    stat = archive.stat()
    return f"checked:{archive.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"


def _checked_sha256(archive_and_url: tuple[Path, str]) -> str:
    """The SHA-256 of an archive that `check_archive` reads to its end (`url`: where its round is cloned from)."""
    archive, url = archive_and_url
    check_archive(archive, url)
    return _sha256(archive)


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


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


def _git(*args: str, timeout: float = 3600) -> None:
    # No prompt for credentials: an unreachable repository must fail, not wait for a person.
    subprocess.run(["git", *args], check=True, capture_output=True, text=True, timeout=timeout,
                   env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})


def _detail(error: Exception) -> str:
    return "; ".join(line.strip() for line in (getattr(error, "stderr", None) or str(error)).splitlines()
                     if line.strip()) or type(error).__name__


def fetch_round(source: Source, mirror: str | None, raw_dir: Path) -> Path:
    """Place one round in `raw_dir` and return its path there."""
    if source.path is not None:
        return _copy_from_mirror(source.path, raw_dir, source.url)
    print(f"fetch: {clone_reason(source, mirror)}", file=sys.stderr)
    target = raw_dir / f"{source_name(source.round)}.tar.gz"
    try:
        clone_round(source.url, target)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as error:
        where = "there is no mirror" if mirror is None else f"it is not in the mirror {mirror}"
        raise MirrorError(
            f"round {source.round}: {where} (looked for {source_name(source.round)}.tar.gz and "
            f"{source_name(source.round)}/), and cloning {source.url} failed ({_detail(error)}). Put the archive "
            "in the mirror, set fetch.mirror in params.yaml to where it is, or drop the round from fetch.rounds."
        ) from None
    return target


def _copy_from_mirror(found: Path, raw_dir: Path, url: str) -> Path:
    target = raw_dir / found.name
    try:
        if found.is_file():
            shutil.copyfile(found, target)
            _check_sha256(found, _sha256(target), url)
        else:
            shutil.copytree(found, target, symlinks=True, ignore=_not_copied)
    except OSError as error:
        raise MirrorError(f"cannot read {found} from the mirror ({error.strerror or error}): check that it is "
                          f"readable, or remove it from the mirror so that the round is cloned from {url}") from None
    return target


def _check_sha256(found: Path, sha256: str, url: str) -> None:
    expected = expected_sha256(found.parent / CHECKSUMS, found.name)
    if expected is not None and sha256 != expected:
        raise MirrorError(
            f"{found} does not match its checksum in {found.parent / CHECKSUMS} (the file is cut off or corrupt): "
            f"replace it with a good copy (the next dvc repro sees the change), or remove it from the mirror so "
            f"that the round is cloned from {url}"
        )


def check_archive(archive: Path, url: str) -> None:
    """MirrorError naming `archive` unless it is a .tar.gz whose tar members and whole gzip stream read to the end
    (its CRC and length checked)."""
    size = archive.stat().st_size
    try:
        with igzip.open(archive, "rb") as stream:
            with tarfile.open(fileobj=stream, mode="r|") as tar:
                for _ in tar:  # a stream read skips each member's data, so every byte is decompressed
                    pass
            # The tar reader stops at its end-of-archive blocks, which corrupt data can fake (a run of zeros
            # inflated from damaged bytes): read the gzip stream to its end, where its CRC is checked.
            while stream.read(READ_CHUNK):
                pass
    except (OSError, EOFError, tarfile.TarError, ValueError, DEFLATE_ERROR) as error:
        raise MirrorError(
            f"{archive} ({size} bytes) is not a readable .tar.gz (cut off or "
            f"corrupt: {_detail(error)}): replace it in the mirror with a good copy, or remove it so that the "
            f"round is cloned from {url}. Nothing was fetched or deleted."
        ) from None


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


def fetch(settings: FetchSettings, raw_dir: Path = paths.RAW, rounds: Sequence[str] | None = None) -> list[Path]:
    """Place every round of `rounds` (default: `settings.rounds`, which must then be a list) in `raw_dir`
    (replaced as a whole, once all are in); their paths."""
    chosen = settings.rounds if rounds is None else rounds
    if isinstance(chosen, str):
        raise MirrorError("fetch.rounds: all is resolved by the validate stage, which writes data/mirror.json: run "
                          "dvc repro (or python -m pipeline.stages.validate) first")
    sources = plan(settings.mirror, settings.upstream, chosen)
    shown: Sequence[Source] = sources
    if show_progress():  # tqdm imported only then: it is a tenth of the validate stage's start
        from tqdm import tqdm

        shown = tqdm(sources, desc="fetch", unit="round")
    with atomic_dir(raw_dir) as staging:
        placed = [fetch_round(source, settings.mirror, staging) for source in shown]
    return [raw_dir / path.name for path in placed]


def listed_rounds(listing: Path) -> list[str]:
    """The rounds of the validate stage's listing (`data/mirror.json`), in its order."""
    return [str(entry["round"]) for entry in json.loads(listing.read_text(encoding="utf-8"))]
