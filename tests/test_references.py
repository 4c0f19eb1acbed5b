"""References that cannot go stale: every module, file, command and README section named in the code (comments
and docstrings included), the templates, the YAML files and the Markdown pages must exist.

- `pipeline.x.y` (and `pipeline.x.y.name`): the module imports and has the attribute;
- `pipeline/x/y.py`, `tests/...`, `bench/...`, `tools/...`, `docs/...`, `examples/...`, `.ci/...`: the file or
  folder exists (a `<placeholder>` or `*` stands for any name);
- `data/...` and `reports/...`: an output the pipeline writes (`pipeline.core.columns.FILES`), or a folder of one;
- `python -m module` and `python bench/x.py` / `python tools/x.py`: the module can be found, the script exists;
- `README "Section"` and Markdown links `[text](page.md#anchor)`: the section, page and anchor exist.
A path whose name says `no-such` or `no_such` is a test's deliberately missing file.
"""
from __future__ import annotations

import fnmatch
import importlib
import importlib.util
import re
from functools import cache
from pathlib import Path

import pytest

from pipeline.core.columns import FILES
from tests.conftest import ROOT

SCANNED = [
    *sorted(ROOT.glob("pipeline/**/*.py")), *sorted(ROOT.glob("pipeline/report/templates/*")),
    *sorted(ROOT.glob("tests/**/*.py")), *sorted(ROOT.glob("bench/*.py")), *sorted(ROOT.glob("tools/*.py")),
    *sorted(ROOT.glob("examples/*")), ROOT / "params.yaml", ROOT / "dvc.yaml", ROOT / ".ci" / "run",
    ROOT / "pyproject.toml", ROOT / "README.md", *sorted(ROOT.glob("docs/*.md")),
]
SOURCE_ROOTS = ("pipeline", "tests", "bench", "tools", "docs", "examples", ".ci")
OUTPUT_ROOTS = ("data", "reports")

MODULE = re.compile(r"(?<![\w./-])pipeline(?:\.[A-Za-z_]\w*)+")
ROOTS = "|".join(re.escape(name) for name in SOURCE_ROOTS + OUTPUT_ROOTS)
PATH = re.compile(rf"(?<![\w./<>*-])((?:{ROOTS})/[\w.<>*/-]*[\w>*/])")
COMMAND = re.compile(r"python3? -m ([\w.<>]+)|python3? ((?:bench|tools)/[\w<>]+\.py)")
README_SECTION = re.compile(r"README(?:\.md)?(?:'s)? \(?[\"'“]([^\"'”]+)[\"'”]")
LINK = re.compile(r"\]\(([^)\s]+)\)")
# This file's own docstring names the patterns it checks, not files.
SELF = Path(__file__).resolve()


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


@cache
def anchors(page: Path) -> set[str]:
    return {slug(line.lstrip("#")) for line in page.read_text(encoding="utf-8").splitlines()
            if line.startswith("#")}


def wildcard(reference: str) -> str:
    return re.sub(r"<[^>]*>", "*", reference)


def module_exists(name: str) -> bool:
    """`name` is a module, or a module's attribute (`pipeline.analysis.scope.in_scope`)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if found and cut == len(parts):
            return True  # a module: found, not imported (nothing imports a stage; tests/test_layout.py)
        if found:
            target: object = importlib.import_module(module)
            for attribute in parts[cut:]:
                if not hasattr(target, attribute):
                    return False
                target = getattr(target, attribute)
            return True
    return False


def path_exists(reference: str) -> bool:
    pattern = wildcard(reference.rstrip("/"))
    if reference.startswith("bench/out/"):  # what the bench scripts write (ignored by git)
        return True
    if re.search(r"no[-_]such", reference):  # a test's deliberately missing file
        return True
    if reference.split("/")[0] in OUTPUT_ROOTS:
        outputs = [wildcard(path.rstrip("/")) for path in FILES]
        return any(fnmatch.fnmatch(output, pattern) or fnmatch.fnmatch(output, pattern + "/*")
                   or fnmatch.fnmatch(pattern, output) or fnmatch.fnmatch(pattern, output + "/*")
                   for output in outputs) or pattern.startswith("data/raw/")
    return bool(list(ROOT.glob(pattern))) if "*" in pattern else (ROOT / pattern).exists()


def stale_in(path: Path) -> list[str]:
    """Every reference in `path` that does not resolve, as `what: reference`."""
    text = path.read_text(encoding="utf-8")
    stale = []
    for name in sorted(set(MODULE.findall(text))):
        if not module_exists(name.rstrip(".")):
            stale.append(f"module {name}")
    for reference in sorted(set(PATH.findall(text))):
        if not path_exists(reference.rstrip(".")):
            stale.append(f"path {reference}")
    for module, script in sorted(set(COMMAND.findall(text))):
        if module and "<" not in module and not module.startswith("pipeline") and not module_exists(module):
            stale.append(f"command python -m {module}")
        if module and "<" in module and not (ROOT / Path(*module.split(".")[:-1])).is_dir():
            stale.append(f"command python -m {module}")
        if script and not path_exists(script):
            stale.append(f"command python {script}")
    readme = ROOT / "README.md"
    for section in sorted(set(README_SECTION.findall(text))):
        if slug(section) not in anchors(readme):
            stale.append(f'README section "{section}"')
    if path.suffix == ".md":
        for link in sorted(set(LINK.findall(text))):
            if re.match(r"[a-z]+:", link):
                continue
            target, _, anchor = link.partition("#")
            page = (path.parent / target).resolve() if target else path
            if not page.exists():
                stale.append(f"link {link}")
            elif anchor and page.suffix == ".md" and anchor not in anchors(page):
                stale.append(f"link {link} (no such section)")
    return stale


@pytest.mark.parametrize("path", [path for path in SCANNED if path.is_file() and path != SELF],
                         ids=lambda path: str(path.relative_to(ROOT)))
def test_references_resolve(path: Path) -> None:
    stale = stale_in(path)
    assert not stale, f"{path.relative_to(ROOT)} names what does not exist: " + "; ".join(stale)
