"""Read the files of one MLPerf Training results round from a `.tar.gz` archive or a folder, trusting nothing.

Archive members are never extracted: they are streamed into memory one at a time, so an absolute path, a `..`
component, a link or a device file cannot write anywhere; such members are refused with a reason.
"""
from __future__ import annotations

import os
import re
import stat
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path, PurePosixPath

from .errors import SourceError

ROUND_PATTERN = re.compile(r"training_results_(v\d+\.\d+)")
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz")
# A folder of a fresh clone also holds git's own files, which are no results input.
SKIPPED_FOLDERS = frozenset({".git"})

SYSTEM_PATH = re.compile(r"^(?P<submitter>[^/]+)/systems/(?P<system>[^/]+)\.json$")
LOG_PATH = re.compile(
    r"^(?P<submitter>[^/]+)/results/(?P<system>[^/]+)/(?:(?P<benchmark>[^/]+)/)?result_(?P<run>\d+)\.txt$"
)
SCALING_PATH = re.compile(r"^(?P<submitter>[^/]+)/results/(?P<system>[^/]+)/(?P<benchmark>[^/]+)/scaling\.json$")


class Kind(Enum):
    SYSTEM = "system"
    LOG = "log"
    SCALING = "scaling"
    OTHER = "other"


@dataclass(frozen=True)
class Member:
    """One file of a round: `path` is relative to the round folder (e.g. `NVIDIA/systems/dgx.json`)."""

    path: str
    data: bytes | None
    refused: str | None = None

    @property
    def kind(self) -> Kind:
        return classify(self.path)[0]


def classify(path: str) -> tuple[Kind, dict[str, str]]:
    for kind, pattern in ((Kind.LOG, LOG_PATH), (Kind.SYSTEM, SYSTEM_PATH), (Kind.SCALING, SCALING_PATH)):
        match = pattern.match(path)
        if match:
            return kind, {name: value for name, value in match.groupdict().items() if value is not None}
    return Kind.OTHER, {}


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
    return source.name.endswith(ARCHIVE_SUFFIXES)


def iter_members(source: Path, on_progress: Callable[[int], object] | None = None) -> Iterator[Member]:
    """Every file of the source, in a stable order for folders and archive order for archives.

    `on_progress` is called with the number of bytes read since its last call (compressed bytes for archives).
    """
    report = on_progress or (lambda _: None)
    if is_archive(source) and source.is_file():
        yield from _iter_archive(source, report)
    elif source.is_dir():
        yield from _iter_folder(source, report)
    else:
        raise SourceError(f"{source} is neither a .tar.gz archive nor a folder: check the path")


def _iter_archive(archive: Path, report: Callable[[int], object]) -> Iterator[Member]:
    top = _stem(archive)
    try:
        with archive.open("rb") as raw, tarfile.open(fileobj=raw, mode="r|gz") as tar:
            position = 0
            for info in tar:
                report(raw.tell() - position)
                position = raw.tell()
                if info.isdir():
                    continue
                path, problem = _safe_relative(info.name, top)
                if problem is None and not info.isreg():
                    problem = f"archive member is a {_tar_type(info)}, not a regular file: refused"
                if problem is not None:
                    yield Member(path, None, problem)
                    continue
                handle = tar.extractfile(info)
                yield Member(path, handle.read() if handle else b"")
    except (tarfile.TarError, EOFError, OSError) as error:
        raise SourceError(f"{archive} is not a readable .tar.gz archive ({error}): download it again") from error


def _tar_type(info: tarfile.TarInfo) -> str:
    if info.issym():
        return "symbolic link"
    if info.islnk():
        return "hard link"
    if info.isdev() or info.isfifo():
        return "device or FIFO"
    return "special file"


def _safe_relative(name: str, top: str) -> tuple[str, str | None]:
    """Map an archive member name to a path inside the round folder; say why when it points elsewhere."""
    pure = PurePosixPath(name)
    if pure.is_absolute() or re.match(r"^[A-Za-z]:", name):
        return name, "archive member has an absolute path: refused"
    if ".." in pure.parts:
        return name, "archive member path contains '..': refused"
    parts = [part for part in pure.parts if part != "."]
    if parts and parts[0] == top:
        parts = parts[1:]
    return "/".join(parts), None


def _iter_folder(folder: Path, report: Callable[[int], object]) -> Iterator[Member]:
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS)
        for name in sorted(files):
            full = Path(root, name)
            path = full.relative_to(folder).as_posix()
            mode = full.lstat().st_mode
            if stat.S_ISLNK(mode):
                yield Member(path, None, "file is a symbolic link: refused")
            elif not stat.S_ISREG(mode):
                yield Member(path, None, "not a regular file: refused")
            else:
                data = full.read_bytes()
                report(len(data))
                yield Member(path, data)
        for name in list(dirs):
            if Path(root, name).is_symlink():
                dirs.remove(name)
                yield Member(Path(root, name).relative_to(folder).as_posix(), None,
                             "folder is a symbolic link: refused")
