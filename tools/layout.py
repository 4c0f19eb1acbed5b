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


# Package data and the module that reads it (templates: the folder, as dvc.yaml names it).
DATA_READERS = {
    "pipeline/mlperf/logs/compliance_rules.json": "pipeline.mlperf.logs.compliance",
    "pipeline/mlperf/benchmark_rules.json": "pipeline.mlperf.benchmark_rules",
    "pipeline/mlperf/hardware/accelerators.csv": "pipeline.mlperf.hardware.accelerators",
    "pipeline/mlperf/hardware/cpus.csv": "pipeline.mlperf.hardware.cpus",
    "pipeline/mlperf/hardware/links.csv": "pipeline.mlperf.hardware.links",
    "pipeline/analysis/pricing/price_table.csv": "pipeline.analysis.pricing.price_table",
    "pipeline/report/templates": "pipeline.report.sections",
    "pipeline/report/static": "pipeline.report.assets",
}


def data_files(modules_used: set[str]) -> set[str]:
    """Package data the modules read."""
    return {path for path, reader in DATA_READERS.items() if reader in modules_used}


def package_data() -> set[str]:
    """Every file of the package that is not Python, as DATA_READERS names it (folders whole)."""
    found = set()
    for path in PACKAGE.rglob("*"):
        if (path.is_file() and path.suffix not in {".py", ".pyc"} and "__pycache__" not in path.parts
                and path.name != "README.md"):
            relative = path.relative_to(ROOT).as_posix()
            folder = next((name for name in DATA_READERS if relative.startswith(name + "/")), None)
            found.add(folder or relative)
    return found


def packages(module: str) -> set[str]:
    """The packages Python imports before `module`: pipeline.report.sections -> pipeline, pipeline.report."""
    parts = module.split(".")
    return {".".join(parts[:end]) for end in range(1, len(parts))}


def stage_code(cmd: str, known: dict[str, Path]) -> set[str]:
    """The package files a stage's command runs: its module's import closure with the `__init__.py` of every
    package on the way (empty ones run nothing), as paths, and their data files."""
    module = cmd.split()[2]
    used = closure(module, known)
    run = used | {package for name in used for package in packages(name)}
    return {known[name].relative_to(ROOT).as_posix() for name in run
            if known[name].name != "__init__.py" or known[name].stat().st_size} | data_files(used)
