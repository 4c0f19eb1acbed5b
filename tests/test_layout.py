"""The package's architecture, held by tests over its import statements and dvc.yaml.

Layers, lowest first (docs/architecture.md): a module imports only from its own layer or lower ones, and nothing
imports a stage or a command. Outside the package, nothing imports a stage either: tests, bench/ and tools/ call
the library functions a stage calls, or run the stage as DVC does (`python -m pipeline.stages.<stage>`).

    core       paths, settings-free helpers: files, errors, cli, schemas, artifacts, colours
    mlperf     what MLPerf publishes: catalogue, sources, logparse, compliance, hardware, accelerators
    settings   params.yaml validated against the catalogue
    analysis   configurations, efficiency, scope, importance, clustering, ranking, findings, forecast, decide
    report     the page
    stages     one module per DVC stage (a thin main)
    commands   predict and recommend
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from tools.layout import (
    LAYERS,
    PACKAGE,
    ROOT,
    TOP,
    closure,
    imported,
    layer,
    modules,
    package_data,
    stage_code,
)

STAGES = "pipeline.stages"
# The code outside the package that uses it: none of it imports a stage.
USERS = [ROOT / "tests", ROOT / "bench", ROOT / "tools"]
# Calls that import the module their first argument names.
IMPORTING_CALLS = {"import_module", "__import__"}


def test_every_module_sits_in_a_layer():
    strays = [name for name in modules() if layer(name) not in LAYERS and name != "pipeline"]
    assert not strays, f"modules outside the layers {LAYERS}: {strays}"


@pytest.mark.parametrize("module", sorted(modules()))
def test_imports_follow_the_layers(module):
    known = modules()
    own = layer(module)
    for target in imported(known[module], known):
        other = layer(target)
        assert other not in TOP, f"{module} imports {target}: nothing imports a stage or a command"
        if own in LAYERS and other in LAYERS:
            assert LAYERS.index(other) <= LAYERS.index(own), \
                f"{module} ({own}) imports {target} ({other}), a higher layer"


def test_dvc_deps_are_the_code_each_stage_runs():
    known = modules()
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    problems = []
    for name, stage in stages.items():
        expanded = {dep for dep in stage.get("deps", []) if dep == "pipeline" or dep.startswith("pipeline/")}
        needed = stage_code(stage["cmd"], known)
        if needed - expanded:
            problems.append(f"{name} lacks deps {sorted(needed - expanded)}")
        if expanded - needed:
            problems.append(f"{name} has deps it does not run {sorted(expanded - needed)}")
    assert not problems, "; ".join(problems)


def test_dvc_lock_records_only_the_stages_of_dvc_yaml():
    """DVC never drops the entry of a removed or renamed stage, and every dvc command parses the whole lock file
    (once more for each stage a repro runs): stale entries made a no-op `dvc repro` 5 s instead of 2 s."""
    stages = set(yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"])
    recorded = set(yaml.load((ROOT / "dvc.lock").read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)["stages"])
    assert recorded <= stages, (f"dvc.lock records stages dvc.yaml no longer has: {sorted(recorded - stages)}; "
                                f"delete their entries from dvc.lock")


# Sibling sub-packages that must not import each other: each builds on its parent's top-level modules only.
SIBLINGS = {
    "pipeline.analysis": ["forecasting", "pricing", "statistics"],
    "pipeline.mlperf": ["hardware", "logs"],
}


def package_folders() -> list[Path]:
    """Every package of `pipeline/` (a folder with an __init__.py), the top one included."""
    return sorted(path.parent for path in PACKAGE.rglob("__init__.py"))


@pytest.mark.parametrize("folder", package_folders(), ids=lambda path: path.relative_to(ROOT).as_posix())
def test_every_package_has_a_readme_naming_its_modules(folder: Path):
    readme = folder / "README.md"
    assert readme.is_file(), f"{readme.relative_to(ROOT)} is missing: say what lives there and what it may import"
    text = readme.read_text(encoding="utf-8")
    assert "## What it may import" in text, f"{readme.relative_to(ROOT)} does not say what the package may import"
    children = [path.stem for path in folder.glob("*.py") if path.name != "__init__.py"]
    children += [path.name for path in folder.iterdir() if (path / "__init__.py").is_file()]
    unnamed = [name for name in children if f"`{name}" not in text]
    assert not unnamed, f"{readme.relative_to(ROOT)} does not name {unnamed}"


@pytest.mark.parametrize("parent", sorted(SIBLINGS))
def test_sibling_sub_packages_do_not_import_each_other(parent: str):
    known = modules()
    problems = []
    for child in SIBLINGS[parent]:
        others = [f"{parent}.{other}" for other in SIBLINGS[parent] if other != child]
        for name in (name for name in known if name.startswith(f"{parent}.{child}.")):
            problems += [f"{name} imports {target}" for target in imported(known[name], known)
                         if any(target == other or target.startswith(other + ".") for other in others)]
    assert not problems, "; ".join(problems)


def test_every_package_data_file_lies_in_a_layer_folder():
    """A stage depends on whole layer folders (tools/layout.py `stage_code`): a data file elsewhere in the package
    would be read by a stage that does not depend on it."""
    outside = {path for path in package_data() if len(path.split("/")) < 3 or path.split("/")[1] == "stages"}
    assert not outside, f"package data outside the layer folders: {sorted(outside)}"


def written_prefix(node: ast.expr) -> str | None:
    """The text a string argument is known to start with: all of a literal, the literal head of an f-string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        head = []
        for value in node.values:
            if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                break
            head.append(value.value)
        return "".join(head)
    return None


def stages_imported(source: str) -> list[str]:
    """The stage modules (or the stages package) `source` imports: by import statements anywhere in it, and by
    importlib.import_module or __import__ with the name written out. (A test's dynamic import whose name this cannot
    read fails that test: tests/conftest.py.)"""
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = ([node.module] if node.module.startswith(STAGES + ".")
                     else [f"{node.module}.{alias.name}" for alias in node.names])
        elif isinstance(node, ast.Call) and node.args:
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            prefix = written_prefix(node.args[0]) if called in IMPORTING_CALLS else None
            names = [prefix] if prefix is not None else []
        found += [name for name in names if name == STAGES or name.startswith(STAGES + ".")]
    return found


def users() -> list[Path]:
    return sorted(path for folder in USERS for path in folder.rglob("*.py"))


@pytest.mark.parametrize(("source", "imported"), [
    ("from pipeline.stages import ingest", ["pipeline.stages.ingest"]),
    ("from pipeline.stages.ingest import main", ["pipeline.stages.ingest"]),
    ("import pipeline.stages.decide as decide_stage", ["pipeline.stages.decide"]),
    ("from pipeline import stages", ["pipeline.stages"]),
    ("def f():\n    from pipeline.stages import report", ["pipeline.stages.report"]),
    ("importlib.import_module('pipeline.stages.fetch')", ["pipeline.stages.fetch"]),
    ("import_module(f'pipeline.stages.{stage}')", ["pipeline.stages."]),
    ("__import__('pipeline.stages.rank')", ["pipeline.stages.rank"]),
    # running a stage, reading its source or naming it is not importing it
    ("subprocess.run([sys.executable, '-m', f'pipeline.stages.{stage}'])", []),
    ("(ROOT / 'pipeline' / 'stages' / f'{stage}.py').read_text()", []),
    ("from pipeline.mlperf.rounds import ingest\nfrom pipeline.commands import predict", []),
])
def test_a_stage_import_is_recognised(source: str, imported: list[str]) -> None:
    assert stages_imported(source) == imported


def test_tests_bench_and_tools_import_no_stage() -> None:
    """A stage is a thin shell (arguments, settings, read, call the library, write) that DVC runs: what it does is
    reached through the library, what it is by running it (`tests.conftest.run_stage`)."""
    checked = users()
    assert len(checked) > 30 and all(folder in {path.parent for path in checked} for folder in USERS)
    importers = {path.relative_to(ROOT).as_posix(): names for path in checked
                 if (names := stages_imported(path.read_text(encoding="utf-8")))}
    assert not importers, (f"these import a stage {importers}: call the library function the stage calls (move logic "
                           "out of the stage if needed), or run it with tests.conftest.run_stage")


# Modules that reach out of this machine (git, the network): the pages and the brief draw the analysis' outputs and
# the records the stages declare, never asking upstream themselves.
REACHING_OUT = ("pipeline.mlperf.discovery", "pipeline.mlperf.fetching")


@pytest.mark.parametrize("module", sorted(name for name in modules() if layer(name) == "report"))
def test_the_report_never_imports_what_fetches(module: str):
    reached = closure(module, modules()) & set(REACHING_OUT)
    assert not reached, f"{module} imports {sorted(reached)}, directly or through another module"
