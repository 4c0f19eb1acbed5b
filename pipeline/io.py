"""Small shared helpers: atomic writes, params, progress bars."""
from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from .errors import ParamsError

PARAMS_FILE = Path("params.yaml")


@contextlib.contextmanager
def atomic_path(target: Path | str) -> Iterator[Path]:
    """Yield a temporary path beside `target`; rename it over `target` only if the block succeeds.

    An interrupted run therefore never leaves a half-written output that DVC would cache.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o644)  # mkstemp makes files private; outputs are meant to be read and shared
        os.replace(tmp_path, target)
    finally:
        tmp_path.unlink(missing_ok=True)


def write_parquet(frame: pd.DataFrame, target: Path | str) -> None:
    with atomic_path(target) as tmp:
        frame.to_parquet(tmp, index=False)


def write_csv(frame: pd.DataFrame, target: Path | str) -> None:
    with atomic_path(target) as tmp:
        frame.to_csv(tmp, index=False, lineterminator="\n")


def write_text(text: str, target: Path | str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(data: Any, target: Path | str) -> None:
    """JSON with sorted keys; NaN and infinities, which JSON lacks, become null."""
    write_text(json.dumps(_plain(data), indent=2, sort_keys=True, allow_nan=False) + "\n", target)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def load_params(path: Path | str = PARAMS_FILE) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise ParamsError(f"{path} not found: run the stages from the project root, where params.yaml lives")
    with path.open(encoding="utf-8") as handle:
        params = yaml.safe_load(handle) or {}
    if not isinstance(params, dict):
        raise ParamsError(f"{path} must hold a mapping of sections (fetch, analysis, cluster, ...)")
    return params


def section(params: dict[str, Any], name: str) -> dict[str, Any]:
    value = params.get(name)
    if not isinstance(value, dict):
        raise ParamsError(f"params.yaml has no '{name}:' section; restore it from the project's params.yaml")
    return value


def show_progress() -> bool:
    """Progress bars on a terminal, none in CI logs or pipes."""
    return sys.stderr.isatty() and not os.environ.get("CI")
