"""Every module of pipeline/ and every public function, class and method in it says what it is in a docstring.

Public: a name not starting with "_", at a module's top level or in a top-level class (nested functions are
helpers of their function; pydantic and dataclass fields are documented by the docstring under them, which
`tests/test_docs.py` covers through docs/outputs.md and docs/parameters.md). What a docstring should say: what it
returns and in which units, shapes for arrays and frames (docs/architecture.md).
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "pipeline"
Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def public(tree: ast.Module) -> Iterator[tuple[str, Definition]]:
    """The module's public definitions with their qualified names: top-level functions and classes, and the
    methods of those classes."""
    for node in tree.body:
        if isinstance(node, Definition) and not node.name.startswith("_"):
            yield node.name, node
            if isinstance(node, ast.ClassDef):
                for member in node.body:
                    if isinstance(member, Definition) and not member.name.startswith("_"):
                        yield f"{node.name}.{member.name}", member


def undocumented(path: Path) -> Iterator[str]:
    """The names of the module's items without a docstring ("<module>" for the module itself)."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    if source.strip() and not ast.get_docstring(tree):
        yield "<module>"
    for name, node in public(tree):
        if not ast.get_docstring(node):
            yield name


def test_every_public_item_of_the_package_has_a_docstring() -> None:
    missing = {(path.relative_to(ROOT).as_posix(), name)
               for path in sorted(PACKAGE.rglob("*.py")) for name in undocumented(path)}
    assert not missing, "no docstring (say what it returns, in which units):\n" + "\n".join(
        f"{path}: {name}" for path, name in sorted(missing))


def test_the_check_finds_a_missing_docstring(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text('"""A module."""\n\n\ndef shown(x):\n    def nested():\n        pass\n    return x\n\n\n'
                      'class Kept:\n    """A class."""\n\n    def method(self):\n        return 1\n\n'
                      '    def _private(self):\n        return 2\n\n\ndef _hidden():\n    pass\n')
    assert list(undocumented(module)) == ["shown", "Kept.method"]
    module.write_text("x = 1\n")
    assert list(undocumented(module)) == ["<module>"]
