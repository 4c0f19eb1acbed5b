"""The package's structure as its import statements give it: modules, their layer, each stage's code.

The one derivation of "the package files a stage runs": tools/sync_dvc_params.py writes it into dvc.yaml's deps
and tests/test_layout.py checks dvc.yaml and the layering against it (tools never import tests).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pipeline"
LAYERS = ["core", "mlperf", "settings", "analysis", "report", "stages", "commands"]
TOP = {"stages", "commands"}  # nothing imports these


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imported(path: Path, known: dict[str, Path]) -> set[str]:
    """The package modules `path` imports (anywhere in the file, lazy imports included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pipeline"):
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in known else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("pipeline"))
    return {name for name in found if name in known and name != "pipeline"}


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "pipeline"


def closure(module: str, known: dict[str, Path]) -> set[str]:
    """`module` and every package module it imports, directly or not."""
    seen, todo = set(), [module]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo.extend(imported(known[current], known) - seen)
    return seen


def package_data() -> set[str]:
    """Every file of the package that is neither Python nor a README, as a path from the repository's root."""
    return {path.relative_to(ROOT).as_posix() for path in PACKAGE.rglob("*")
            if path.is_file() and path.suffix not in {".py", ".pyc"} and "__pycache__" not in path.parts
            and path.name != "README.md"}


def packages(module: str) -> set[str]:
    """The packages Python imports before `module`: pipeline.report.sections -> pipeline, pipeline.report."""
    parts = module.split(".")
    return {".".join(parts[:end]) for end in range(1, len(parts))}


def stage_code(cmd: str, known: dict[str, Path]) -> set[str]:
    """The code a stage's command runs, as dvc.yaml names it: the stage's own module file, `pipeline/__init__.py`
    and `pipeline/settings.py` when run, and each layer folder (`pipeline/core`, `pipeline/mlperf`, ...) holding a
    module of its import closure, whole (its data files and sub-packages with it). A stage whose pages name the
    code's revision (it runs `pipeline.report.provenance`: the git tree of `pipeline/`) depends on `pipeline`
    whole, so any change to the code it names rebuilds it.

    Folders, not files: DVC parses and rewrites the whole dvc.lock once for every stage it runs, and one entry
    per imported file made the lock 2,000 lines and a no-op `dvc repro` 0.3 s slower (docs/speed.md). A change
    anywhere in a layer reruns every stage using that layer: more reruns, never a stale output."""
    module = cmd.split()[2]
    used = closure(module, known)
    if PROVENANCE in used:
        return {PACKAGE.name}
    return {_code_unit(known[name]) for name in used | {package for name in used for package in packages(name)}
            if known[name].name != "__init__.py" or known[name].stat().st_size}


# The module that names the code's revision on the pages it builds.
PROVENANCE = "pipeline.report.provenance"


def _code_unit(path: Path) -> str:
    """The dvc.yaml dep covering a package file: its layer folder, or the file itself directly under `pipeline/`
    or in `pipeline/stages/` (each stage depends on its own module only)."""
    parts = path.relative_to(ROOT).parts
    if len(parts) == 2 or parts[1] == "stages":
        return Path(*parts).as_posix()
    return Path(*parts[:2]).as_posix()
