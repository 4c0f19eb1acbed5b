"""Read the files of one MLPerf Training results round from a `.tar.gz` archive or a folder, trusting nothing.

Archive members are never extracted: they are streamed into memory one at a time, so an absolute path, a `..`
component, a link or a device file cannot write anywhere; such members are refused with a reason. Folders are
walked without following symbolic links. A file larger than `MAX_FILE_BYTES` is refused unread, and a cut-off or
corrupt archive fails with a `SourceError` naming it (tarfile alone would stop early, silently).
"""
from __future__ import annotations

import io
import os
import re
import stat
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import BinaryIO

from isal import isal_zlib

from pipeline.core.errors import SourceError

ROUND_PATTERN = re.compile(r"training_results_(v\d+\.\d+)")
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz")
# A folder of a fresh clone also holds git's own files, which are no results input.
SKIPPED_FOLDERS = frozenset({".git"})
# GitHub refuses files over 100 MB, so no published input comes near this; reading a bigger one whole could
# exhaust memory.
MAX_FILE_BYTES = 256 * 1024 * 1024
COMPRESSED_CHUNK_BYTES = 256 * 1024
SKIP_CHUNK_BYTES = 1 << 20

SYSTEM_PATH = re.compile(r"(?P<submitter>[^/]+)/systems/(?P<system>[^/]+)\.json")
# A log is any `result_*.txt`, as the official summarizer's glob finds them (`*` may be empty): the run id is
# what follows `result_`, such as `5119-240510190348838227199_06` (v4.0 Sustainable Metal Cloud, v4.1 Lambda).
# A log nested deeper than its benchmark folder (v1.0 Habana) keeps the whole folder path as its results folder.
LOG_NAME = re.compile(r"result_(?P<run>[^/]*)\.txt")
LOG_PATH = re.compile(
    r"(?P<submitter>[^/]+)/results/(?P<system>[^/]+)/(?:(?P<benchmark>[^/]+(?:/[^/]+)*)/)?" + LOG_NAME.pattern
)
# A power log the official summarizer reads for energy to train: beside run log result_<run>.txt, one per node
# and per switch (v4.0 on).
POWER_PATH = re.compile(
    r"(?P<submitter>[^/]+)/results/(?P<system>[^/]+)/(?P<benchmark>[^/]+)/power/result_(?P<run>[^/]*)/"
    r"(?P<device>node|sw)_[^/]*\.txt"
)
SCALING_PATH = re.compile(r"(?P<submitter>[^/]+)/results/(?P<system>[^/]+)/(?P<benchmark>[^/]+)/scaling\.json")
# A launch configuration of an implementation (v4.0 on): the environment its runs were started with, read for the
# results' numeric precision (pipeline.mlperf.logs.precision); `name` keeps any folder below the implementation.
CONFIG_PATH = re.compile(
    r"(?P<submitter>[^/]+)/benchmarks/(?P<benchmark>[^/]+)/implementations/(?P<implementation>[^/]+)/"
    r"(?P<name>(?:[^/]+/)*config[^/]*\.sh)"
)


class Kind(Enum):
    """What a file of a round is, by its path: a system description, a result log, a scaling.json, a power log, a
    launch configuration, or other (not an input)."""
    SYSTEM = "system"
    LOG = "log"
    SCALING = "scaling"
    POWER = "power"
    CONFIG = "config"
    OTHER = "other"


@dataclass(frozen=True)
class Member:
    """One file of a round: `path` is relative to the round folder (e.g. `NVIDIA/systems/dgx.json`).

    `data` is None when the file was not read; `refused` then says why.
    """

    path: str
    data: bytes | None
    refused: str | None = None

    @property
    def kind(self) -> Kind:
        """The member's `Kind`, from its path within the round."""
        return classify(self.path)[0]


def classify(path: str) -> tuple[Kind, dict[str, str]]:
    """The `Kind` of the file at `path` (relative to the round) and the parts its path names (submitter, system,
    benchmark, run, ...); (Kind.OTHER, {}) for a file that is not an input."""
    for kind, pattern in ((Kind.LOG, LOG_PATH), (Kind.SYSTEM, SYSTEM_PATH), (Kind.SCALING, SCALING_PATH),
                          (Kind.POWER, POWER_PATH), (Kind.CONFIG, CONFIG_PATH)):
        match = pattern.fullmatch(path)
        if match:
            return kind, {name: value for name, value in match.groupdict().items() if value is not None}
    return Kind.OTHER, {}


def run_order(run: str) -> str:
    """A sort key for run ids in natural order (`2` before `10`, `x_2` before `x_10`); the score does not
    depend on the order, which only keeps runs.parquet readable and stable."""
    return re.sub(r"\d+", lambda number: f"{len(number[0].lstrip('0')):04d}{number[0].lstrip('0')}", run)


def round_of(source: Path) -> str:
    """The round (`v4.0`) a source holds, read from its name `training_results_v4.0[.tar.gz]`."""
    match = ROUND_PATTERN.fullmatch(_stem(source))
    if not match:
        raise SourceError(
            f"cannot tell the round of {source}: name it training_results_vX.Y.tar.gz (an archive) "
            "or training_results_vX.Y/ (a folder or clone), as MLCommons publishes them"
        )
    return match.group(1)


def _stem(source: Path) -> str:
    name = source.name
    for suffix in ARCHIVE_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def is_archive(source: Path) -> bool:
    """True when `source` is a compressed archive by its name (.tar.gz or .tgz), False for a folder."""
    return source.name.endswith(ARCHIVE_SUFFIXES)


def iter_members(source: Path, on_progress: Callable[[int], object] | None = None) -> Iterator[Member]:
    """Every file of the source, in a stable order for folders and archive order for archives.

    `on_progress` is called with the number of bytes read since its last call (compressed bytes for archives).
    """
    report = on_progress or (lambda _: None)
    if is_archive(source) and source.is_file():
        yield from _iter_archive(source, report)
    elif source.is_dir():
        yield from _iter_folder(source, "", report)
    elif not source.exists():
        raise SourceError(f"{source} does not exist: check the path")
    else:
        raise SourceError(f"{source} is neither a .tar.gz archive nor a folder: check the path")


class CheckedGzip:
    """A gzip stream for tarfile that fails on a corrupt or cut-off archive, and reads forward only.

    tarfile's own `r|gz` stream checks neither the CRC nor the length, and stops at the first damaged header
    as if the archive ended there; gzip mode (wbits=31) checks both. Concatenated gzip members are read in turn,
    as gzip does. ISA-L's inflate (python-isal, with zlib's interface) does it five times faster than zlib.
    A seek forward skips, which lets tarfile read the archive in its `r:` mode, where a member is one read of
    its size rather than tarfile's stream mode's reads of 10 KB at a time; a seek backward is refused.
    """

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._inflate = isal_zlib.decompressobj(wbits=31)
        self._buffer = b""
        self._offset = 0
        self._position = 0  # bytes handed out or skipped
        self._finished = False

    def read(self, size: int) -> bytes:
        """Up to `size` bytes of the decompressed stream (fewer only at its end); raises on a corrupt or cut-off
        archive."""
        parts = [self._buffer[self._offset: self._offset + size]]
        self._offset += len(parts[0])
        got = len(parts[0])
        while got < size and not self._finished:
            self._buffer = self._inflate_more()
            self._offset = min(len(self._buffer), size - got)
            parts.append(self._buffer[: self._offset])
            got += self._offset
        self._position += got
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def tell(self) -> int:
        """The position in the decompressed stream, in bytes read or skipped."""
        return self._position

    def seekable(self) -> bool:
        """True, so that tarfile seeks (forward only) rather than reading every member."""
        return True

    def seek(self, position: int, whence: int = io.SEEK_SET) -> int:
        """Skip forward to `position` (bytes from the start, `whence` SEEK_SET only) and return the position reached;
        io.UnsupportedOperation for a seek backward."""
        if whence != io.SEEK_SET or position < self._position:
            raise io.UnsupportedOperation("the archive is read forward only")
        while self._position < position and self.read(min(position - self._position, SKIP_CHUNK_BYTES)):
            pass
        return self._position

    def drain(self) -> None:
        """Read to the end, so that the CRC and length of the whole archive are checked."""
        while not self._finished:
            self._inflate_more()

    def _inflate_more(self) -> bytes:
        while True:
            if self._inflate.eof:
                data = self._inflate.unused_data or self._raw.read(COMPRESSED_CHUNK_BYTES)
                if not data:
                    self._finished = True
                    return b""
                self._inflate = isal_zlib.decompressobj(wbits=31)
            else:
                data = self._raw.read(COMPRESSED_CHUNK_BYTES)
                if not data:
                    raise EOFError("the compressed data ends early: the file is cut off")
            inflated = self._inflate.decompress(data)
            if inflated:
                return inflated


def _iter_archive(archive: Path, report: Callable[[int], object]) -> Iterator[Member]:
    top = _stem(archive)
    try:
        with archive.open("rb") as raw:
            stream = CheckedGzip(raw)
            with tarfile.open(fileobj=stream, mode="r:") as tar:  # type: ignore[call-overload]
                position = 0
                for info in tar:
                    report(raw.tell() - position)
                    position = raw.tell()
                    if info.isdir():
                        continue
                    path, problem = _safe_relative(info.name, top, archive)
                    problem = problem or _member_problem(info)
                    if problem is not None:
                        yield Member(path, None, problem)
                        continue
                    handle = tar.extractfile(info)
                    yield Member(path, handle.read() if handle else b"")
            stream.drain()
    except (tarfile.TarError, EOFError, OSError, isal_zlib.error) as error:  # type: ignore[misc]
        raise SourceError(f"{archive} is not a readable .tar.gz archive ({error}): download it again") from None


def _member_problem(info: tarfile.TarInfo) -> str | None:
    if info.issym():
        return "archive member is a symbolic link: refused, not followed"
    if info.islnk():
        return "archive member is a hard link: refused, not followed"
    if info.isdev() or info.isfifo():
        return "archive member is a device or FIFO: refused, not read"
    if not info.isreg():
        return "archive member is not a regular file: refused, not read"
    if info.size > MAX_FILE_BYTES:
        return _too_big("archive member")
    return None


def _too_big(what: str) -> str:
    return f"{what} is larger than {MAX_FILE_BYTES >> 20} MiB, more than any published MLPerf file: refused, not read"


def _safe_relative(name: str, top: str, source: Path) -> tuple[str, str | None]:
    """Map an archive member name to a path inside the round folder; say why when it points elsewhere."""
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return name, "archive member has an absolute path: refused, not read"
    # As PurePosixPath reads it, without its cost for each of thousands of members: empty and "." parts go.
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        return name, "archive member path contains '..': refused, not read"
    if parts and parts[0] == top:
        parts = parts[1:]
    if len(parts) > 1:
        _refuse_nested_round(parts[0], top, source)
    return "/".join(parts), None


def _refuse_nested_round(name: str, top: str, source: Path) -> None:
    """A round folder where submitter folders belong means the source is named after another round, or was
    unpacked into a folder of its own name: reading it would file every result under the wrong round or none."""
    if ROUND_PATTERN.fullmatch(name):
        raise SourceError(
            f"{source} holds a round folder {name}/ where submitter folders belong (expected {top}/<submitter>/"
            f"systems/...): give the round folder itself, named after the round it holds"
        )


def _iter_folder(folder: Path, relative: str, report: Callable[[int], object]) -> Iterator[Member]:
    """Files under `folder/relative`, depth first in name order; symbolic links are reported, not followed."""
    try:
        with os.scandir(folder / relative) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError as error:
        yield Member(f"{relative}/", None, f"folder cannot be read ({error.strerror}): its files are not read")
        return
    for entry in entries:
        path = f"{relative}/{entry.name}" if relative else entry.name
        if entry.is_symlink():
            what = "folder" if entry.is_dir() else "file"
            yield Member(path, None, f"{what} is a symbolic link: refused, not followed")
        elif entry.is_dir(follow_symlinks=False):
            if entry.name in SKIPPED_FOLDERS:
                continue
            if not relative:
                _refuse_nested_round(entry.name, folder.name, folder)
            yield from _iter_folder(folder, path, report)
        elif entry.is_file(follow_symlinks=False):
            yield _read_file(Path(entry.path), path, report)
        else:
            yield Member(path, None, "not a regular file (a device, FIFO or socket): refused, not read")


def _read_file(full: Path, path: str, report: Callable[[int], object]) -> Member:
    try:
        # O_NOFOLLOW: a file swapped for a link after the walk looked at it is still not followed.
        descriptor = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(descriptor, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return Member(path, None, "not a regular file (a device, FIFO or socket): refused, not read")
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        return Member(path, None, f"file cannot be read ({error.strerror}): not read")
    if len(data) > MAX_FILE_BYTES:
        return Member(path, None, _too_big("file"))
    report(len(data))
    return Member(path, data)
