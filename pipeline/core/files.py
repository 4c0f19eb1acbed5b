"""Small shared helpers: atomic writes, stored floats, progress bars."""
from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

# Floats in every output (JSON, CSV and Parquet) keep this many significant digits, rounded here, at the write
# boundary, by `stored_float` and `stored_frame`: far more than any quantity here means (a time to train of 1000
# minutes to 1e-6 min, a microsecond of a minute; a share to 1e-10), and few enough that the last-bit
# differences of another CPU, a BLAS thread count or a summation order do not change the bytes DVC hashes (a
# fresh clone's `dvc repro` must give the committed dvc.lock on any machine). Whole numbers are kept whole.
STORED_SIGNIFICANT_DIGITS = 10
# Where significant digits do not fit a column's meaning: a time since 1970 in ms (`*_ms`, 13 digits) is kept to
# the microsecond, and a seed, an identifier, exactly.
STORED_DECIMALS_BY_SUFFIX = {"_ms": 3}
STORED_EXACT = frozenset({"seed"})
_STORED_FLOAT = f"%.{STORED_SIGNIFICANT_DIGITS}g"


@contextlib.contextmanager
def atomic_path(target: Path | str) -> Iterator[Path]:
    """Yield a temporary path beside `target`; rename it over `target` only if the block succeeds.

    An interrupted run therefore never leaves a half-written output that DVC would cache. The temporary file
    is hidden (`.<name>.<pid>.<random>.tmp`) and removed when the block fails; one left by a killed process
    (whose pid no longer runs) is removed by the next write of the same target.
    """
    target = Path(target)
    with writable(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(target)
        fd, tmp = tempfile.mkstemp(prefix=_temporary_prefix(target), suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        _flush_to_disk(tmp_path)
        os.chmod(tmp_path, 0o644)  # mkstemp makes files private; outputs are meant to be read and shared
        os.replace(tmp_path, target)
    finally:
        tmp_path.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_dir(target: Path | str) -> Iterator[Path]:
    """Yield an empty temporary folder beside `target`; it replaces `target` only if the block succeeds.

    A failure or Ctrl-C in the block leaves the old `target` as it was. A folder cannot be renamed over a non-empty
    one, so the swap is two renames (the old folder aside, the new one in) with Ctrl-C held back between them, and
    the old folder is removed after: `target` is never absent nor partial.
    """
    with atomic_dirs(target) as (folder,):
        yield folder


@contextlib.contextmanager
def atomic_dirs(*targets: Path | str) -> Iterator[tuple[Path, ...]]:
    """`atomic_dir` of several folders at once: an empty temporary folder beside each target, swapped in, one
    after the other, only if the block succeeds (a stage with two folder outputs). A block that fails leaves no
    trace: the parent folders made for the temporaries are removed with them (a stage that stops on a mistake in
    params.yaml has written nothing)."""
    folders = [Path(target) for target in targets]
    temporaries: list[Path] = []
    made: list[Path] = []
    succeeded = False
    try:
        for target in folders:
            with writable(target):
                made += _missing_folders(target.parent)
                target.parent.mkdir(parents=True, exist_ok=True)
                remove_stale_temporaries(target)
                temporaries.append(Path(tempfile.mkdtemp(prefix=_temporary_prefix(target), suffix=".tmp",
                                                         dir=target.parent)))
        yield tuple(temporaries)
        succeeded = True
        for target, tmp_path in zip(folders, temporaries, strict=True):
            os.chmod(tmp_path, 0o755)  # mkdtemp makes folders private; outputs are meant to be read and shared
            _swap_in(tmp_path, target)
    finally:
        for tmp_path in temporaries:
            if tmp_path.exists():
                shutil.rmtree(tmp_path)
        if not succeeded:
            for folder in reversed(made):  # innermost first; one that holds anything else stays
                with contextlib.suppress(OSError):
                    folder.rmdir()


def _missing_folders(folder: Path) -> list[Path]:
    """`folder` and those of its parents that do not exist, outermost first."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing[::-1]


def _swap_in(new: Path, target: Path) -> None:
    """Rename `new` to `target`, the old `target` renamed aside first and removed after; SIGINT is held back
    (delivered after) between the two renames."""
    old = Path(f"{new}.old")
    with interrupts_held():
        if target.exists() or target.is_symlink():
            os.replace(target, old)
        os.replace(new, target)
    _remove(old)


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Ctrl-C (SIGINT) held back in the block and delivered after it (in the main thread; elsewhere a no-op): a
    stage that writes several outputs at its end writes all or none of them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


@contextlib.contextmanager
def writable(target: Path) -> Iterator[None]:
    """The block's OSError (a read-only folder, a file where a folder goes, a full disk) as an OutputError naming
    `target` and what to do: one line, not a traceback; nothing was replaced yet."""
    from pipeline.core.errors import OutputError

    try:
        yield
    except OSError as error:
        where = error.filename or target.parent
        raise OutputError(f"cannot write {target} ({error.strerror or error}: {where}): make {target.parent} a "
                          "writable folder, then run again; the previous outputs are as they were") from None


def _temporary_prefix(target: Path) -> str:
    return f".{target.name}.{os.getpid()}."


def remove_stale_temporaries(target: Path) -> None:
    """Remove the temporary files or folders of `target` that belong to processes no longer running."""
    pattern = re.compile(rf"\.{re.escape(target.name)}\.(\d+)\.\w+\.tmp(\.old)?")
    for candidate in target.parent.iterdir():
        match = pattern.fullmatch(candidate.name)
        if match and not _is_running(int(match.group(1))):
            _remove(candidate)


def _is_running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:  # running, as another user
        return True
    return True


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _flush_to_disk(path: Path) -> None:
    """The rename is only atomic after a power loss if the data it points to reached the disk first."""
    if path.is_file():
        with path.open("rb") as handle:
            os.fsync(handle.fileno())


def write_parquet(frame: pd.DataFrame, target: Path | str) -> None:
    """Write `frame` to `target` as Parquet, atomically, floats rounded to the stored digits; returns nothing."""
    with atomic_path(target) as tmp:
        stored_frame(frame).to_parquet(tmp, index=False)


def write_csv(frame: pd.DataFrame, target: Path | str) -> None:
    """Write `frame` to `target` as CSV, atomically, floats rounded to the stored digits; returns nothing."""
    with atomic_path(target) as tmp:
        stored_frame(frame).to_csv(tmp, index=False, lineterminator="\n", float_format=_STORED_FLOAT)


def stored_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with every float column as the outputs store it (`stored_float`, NaN kept as NaN); the caller's
    frame is not changed."""
    floats = [column for column in frame.select_dtypes("floating").columns if column not in STORED_EXACT]
    if not floats:
        return frame
    stored = frame.copy()
    for column in floats:
        decimals = next((places for suffix, places in STORED_DECIMALS_BY_SUFFIX.items()
                         if str(column).endswith(suffix)), None)
        values = frame[column].round(decimals) + 0.0 if decimals is not None else frame[column].map(_significant)
        stored[column] = values.astype(frame[column].dtype)
    return stored


def _significant(value: float) -> float:
    # A whole number (a count, or a time in ms since 1970, stored as a float because some are missing) is exact
    # and is kept whole; no rounding noise makes a fraction whole.
    if not math.isfinite(value) or value.is_integer():
        return value + 0.0
    return float(_STORED_FLOAT % value) + 0.0


def write_text(text: str, target: Path | str) -> None:
    """Write `text` to `target` atomically (UTF-8); returns nothing."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(data: Any, target: Path | str) -> None:
    """JSON with sorted keys and floats to `STORED_SIGNIFICANT_DIGITS` (-0.0 as 0.0); NaN and infinities,
    which JSON lacks, become null."""
    write_text(json.dumps(_plain(data), indent=2, sort_keys=True, allow_nan=False) + "\n", target)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, float):
        return stored_float(value)
    return value


def stored_float(value: float) -> float | None:
    """`value` as the outputs store it: `STORED_SIGNIFICANT_DIGITS` significant digits, no negative zero, and
    None for NaN and infinities."""
    return _significant(value) if math.isfinite(value) else None


def show_progress() -> bool:
    """Progress bars on a terminal, none in CI logs or pipes."""
    return sys.stderr.isatty() and not os.environ.get("CI")


@contextlib.contextmanager
def byte_progress(total: int | None, description: str, position: int = 0) -> Iterator[Callable[[int], object]]:
    """A progress bar of bytes (`total` of them, None where unknown) on a terminal, as a function to call with
    the bytes just read; elsewhere a function that does nothing, and no tqdm to import."""
    if not show_progress():
        yield lambda _: None
        return
    from tqdm import tqdm

    with tqdm(total=total, desc=description, unit="B", unit_scale=True, position=position, leave=True) as bar:
        yield bar.update
