"""Stage `fetch`: put each round of `fetch.rounds` under `data/raw/`, from the mirror or from MLCommons.

For each round it takes `training_results_<round>.tar.gz` or a folder `training_results_<round>/` from
`fetch.mirror`; where the mirror lacks it, it clones `fetch.upstream` (shallow and sparse: only `*/systems/` and
`*/results/`) and keeps the work tree without `.git`.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tqdm import tqdm

from .errors import MirrorError, cli
from .io import atomic_path, load_params, section, show_progress

RAW_DIR = Path("data/raw")
SPARSE_PATTERNS = ("/*/systems/", "/*/results/")


def source_name(round_: str) -> str:
    return f"training_results_{round_}"


def find_in_mirror(mirror: Path, round_: str) -> Path | None:
    for candidate in (mirror / f"{source_name(round_)}.tar.gz", mirror / source_name(round_)):
        if candidate.exists():
            return candidate
    return None


def clone_round(url: str, destination: Path) -> None:
    """Shallow, sparse clone of a results repository into `destination` (which must not exist), minus `.git`."""
    with tempfile.TemporaryDirectory(dir=destination.parent, prefix=".clone-") as scratch:
        work = Path(scratch) / destination.name
        _git("clone", "--quiet", "--depth", "1", "--filter=blob:none", "--no-checkout", url, str(work))
        _git("-C", str(work), "sparse-checkout", "set", "--no-cone", *SPARSE_PATTERNS)
        _git("-C", str(work), "checkout", "--quiet")
        shutil.rmtree(work / ".git")
        work.rename(destination)


def _git(*args: str) -> None:
    # No prompt for credentials: an unreachable repository must fail, not wait for a person.
    subprocess.run(["git", *args], check=True, capture_output=True, text=True, timeout=3600,
                   env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})


def fetch_round(round_: str, mirror: Path, upstream: str, raw_dir: Path) -> Path:
    """Place one round in `raw_dir` and return its path there."""
    found = find_in_mirror(mirror, round_)
    if found is not None:
        target = raw_dir / found.name
        if found.is_file():
            with atomic_path(target) as tmp:
                shutil.copyfile(found, tmp)
        else:
            shutil.copytree(found, target, ignore=shutil.ignore_patterns(".git"), symlinks=True)
        return target
    url = upstream.format(round=round_)
    target = raw_dir / source_name(round_)
    try:
        clone_round(url, target)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as error:
        detail = getattr(error, "stderr", None) or str(error)
        raise MirrorError(
            f"round {round_} is not in the mirror {mirror} (looked for {source_name(round_)}.tar.gz and "
            f"{source_name(round_)}/) and cloning {url} failed: {detail.strip()}. Put the archive in the mirror, "
            "set fetch.mirror in params.yaml to where it is, or drop the round from fetch.rounds."
        ) from None
    return target


def fetch(rounds: Sequence[str], mirror: Path, upstream: str, raw_dir: Path = RAW_DIR) -> list[Path]:
    if raw_dir.exists():
        shutil.rmtree(raw_dir)
    raw_dir.mkdir(parents=True)
    return [fetch_round(round_, mirror, upstream, raw_dir)
            for round_ in tqdm(rounds, desc="fetch", unit="round", disable=not show_progress())]


@cli
def main() -> None:
    params = section(load_params(), "fetch")
    paths = fetch(params["rounds"], Path(params["mirror"]), params["upstream"])
    for path in paths:
        print(f"fetched {path}")


if __name__ == "__main__":
    main()
