"""Runtime dependencies are exactly what the package imports: none declared for nothing, none used undeclared."""
from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata

from tests.conftest import ROOT

# Declared runtime dependencies that `pipeline/` does not import, each with the reason it is one.
NOT_IMPORTED = {
    "dvc": "runs the pipeline (`dvc repro`): the README's main command",
    "ruamel.yaml.clib": "DVC parses dvc.yaml and dvc.lock in C only with it",
    "pyarrow": "pandas' Parquet engine, which every table between stages is written with",
}
# Imported modules that come with a declared dependency rather than being one: module -> the dependency.
COMES_WITH = {"markupsafe": "jinja2", "pydantic_core": "pydantic"}
# Development tools the package calls only from a maintainer's command, never from a stage or a user's command.
DEVELOPMENT_ONLY = {"mlperf_logging": "python -m pipeline.mlperf.logs.compliance regenerates compliance_rules.json"}


def _distribution(requirement: str) -> str:
    return re.split(r"[=<>!~\[; ]", requirement, maxsplit=1)[0]


def runtime_dependencies() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [_distribution(requirement) for requirement in project["dependencies"]]


def development_dependencies() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [_distribution(requirement) for requirement in project["optional-dependencies"]["dev"]]


def imported_modules() -> set[str]:
    """The top-level names of every third-party module `pipeline/` imports, lazily or not."""
    found: set[str] = set()
    for path in (ROOT / "pipeline").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return {name for name in found if name not in sys.stdlib_module_names and name != "pipeline"}


def modules_of(distribution: str) -> set[str]:
    """The top-level modules an installed distribution provides."""
    provided = metadata.packages_distributions()
    return {module for module, owners in provided.items()
            if any(owner.lower().replace("_", "-") == distribution.lower().replace("_", "-") for owner in owners)}


def test_every_runtime_dependency_is_imported_by_the_package() -> None:
    imported = imported_modules()
    unused = [name for name in runtime_dependencies()
              if name not in NOT_IMPORTED and not modules_of(name) & imported]
    assert not unused, (f"runtime dependencies pipeline/ never imports: {unused}; move them to the dev extra "
                        "(or to NOT_IMPORTED here, with the reason)")


def test_every_imported_module_is_declared() -> None:
    runtime = {module for name in runtime_dependencies() for module in modules_of(name)}
    development = {module for name in development_dependencies() for module in modules_of(name)}
    undeclared = sorted(name for name in imported_modules() - runtime - set(COMES_WITH)
                        if not (name in DEVELOPMENT_ONLY and name in development))
    assert not undeclared, f"pipeline/ imports {undeclared}, which pyproject.toml's dependencies do not declare"
