"""Where the page comes from: the pipeline code's git tree, the input data's hashes from dvc.lock, the params."""
from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypedDict

import yaml

from pipeline.core import paths
from pipeline.report.formatting import number

# The stages whose hashes identify the input data of a report.
INPUT_STAGES = ("fetch", "ingest")
# What builds the site besides the data: the commit a page names is the last one that changed any of these.
BUILD_INPUTS = ("pipeline", "params.yaml", "dvc.yaml")


class Revision(TypedDict):
    """The code a site was built from: the git tree id of `pipeline/` (`revision`, "unknown" outside a checkout),
    whether it had uncommitted changes, and the commit with its date (YYYY-MM-DD)."""
    revision: str
    dirty: bool
    commit: str
    commit_date: str


class ParamsSection(TypedDict):
    """One section of params.yaml as the Data page shows it: its name and its YAML text."""
    name: str
    yaml: str


class Provenance(Revision):
    """What the pages state of how the site was built (`provenance`): the revision, the input stages' recorded
    files (`input_hashes`: stage, kind, path, md5, size and file count as text), whether dvc.lock was found, and
    params.yaml's sections."""
    hashes: list[dict[str, str]]
    lock_found: bool
    params: list[ParamsSection]


def git_revision(cwd: Path | str = ".") -> Revision:
    """The git tree id of the pipeline's code (`HEAD:pipeline`), whether it had uncommitted changes, and the
    commit built with its date (`commit`, `commit_date`, YYYY-MM-DD: the build date every page states, so the same
    checkout builds the same bytes).

    The tree identifies the code across commits. The commit is the last one that changed what builds the site
    (BUILD_INPUTS: the code, params.yaml, dvc.yaml), not HEAD: committing dvc.lock and the metrics after a run makes
    a new HEAD, and a page naming it could never match its own lock (a clean clone's `dvc repro` would rewrite
    every page). "unknown" outside a git checkout.
    """
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=20,
                                  check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    revision = git("rev-parse", "HEAD:pipeline")
    status = git("status", "--porcelain", "--untracked-files=no", "--", "pipeline") if revision else None
    commit = (git("log", "-1", "--format=%H %cs", "--", *BUILD_INPUTS) or "unknown unknown").split()
    return {"revision": revision or "unknown", "dirty": bool(status), "commit": commit[0], "commit_date": commit[-1]}


def input_hashes(lock: Path, stages: Sequence[str] = INPUT_STAGES) -> list[dict[str, str]]:
    """md5 of the deps and outs of the input stages, as DVC recorded them in `dvc.lock` (empty without one)."""
    if not lock.is_file():
        return []
    # libyaml's loader where PyYAML has it: the pure-Python one takes seconds over dvc.lock's thousands of lines.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    recorded = (yaml.load(lock.read_text(encoding="utf-8"), Loader=loader) or {}).get("stages", {})
    rows = []
    for stage in stages:
        for kind in ("deps", "outs"):
            for entry in recorded.get(stage, {}).get(kind, []):
                rows.append({"stage": stage, "kind": kind[:-1], "path": str(entry.get("path", "")),
                             "md5": str(entry.get("md5", "")), "size": number(entry.get("size")),
                             "nfiles": number(entry.get("nfiles"))})
    return rows


def provenance(params: Mapping[str, object], lock: Path = paths.DVC_LOCK, cwd: Path | str = ".") -> Provenance:
    """What the Data page shows of how the site was built: the git revision, the input hashes of dvc.lock and whether
    it was found, and each section of `params` as YAML text. `params` is params.yaml as written
    (`pipeline.settings.load_params`), shown for the record; every value the pages use comes from the validated
    settings."""
    return {**git_revision(cwd), "hashes": input_hashes(lock), "lock_found": lock.is_file(),
            "params": [{"name": name, "yaml": yaml.safe_dump(value, sort_keys=False, default_flow_style=None,
                                                             width=60).strip()}
                       for name, value in params.items()]}
