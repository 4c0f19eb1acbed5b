"""Write each stage's code deps and `params:` list in dvc.yaml from the code, so nobody edits them by hand.

    python tools/sync_dvc_params.py [--check]

Code deps: the code a stage's command runs (its own module and the layer folders of its import closure, as
tools/layout.py derives them); the stage's other deps (data, with their comments) stay first, as written.
Params: every stage module `pipeline/stages/<stage>.py` declares `PARAMS`, the params.yaml keys (a section, or a
dotted key) its code reads, itself or through the library functions it calls; the stage's `params:` list becomes
exactly that, so a param is never missing (its change would leave the outputs stale) nor extra (its change would
rerun the stage for nothing). Nothing else in the file changes. tests/test_params_deps.py fails when dvc.yaml
differs from what this script writes; with --check the script only says so (exit 1).
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tools.layout import modules, stage_code  # noqa: E402  (the one derivation of code deps)

DVC_YAML = ROOT / "dvc.yaml"
STAGES = ROOT / "pipeline" / "stages"
_STAGE = re.compile(r"^  (\w+):\s*(#.*)?$")
_KEY = re.compile(r"^    (\w+):")
_ITEM = "      "
_CODE = re.compile(r"^      - pipeline(/\S*)?\s*$")  # a code dep: the package or a path in it


def declared(stage: str) -> tuple[str, ...] | None:
    """The `PARAMS` tuple of `pipeline/stages/<stage>.py` (read from its source, not imported), or None when the
    module declares none."""
    for node in ast.parse((STAGES / f"{stage}.py").read_text(encoding="utf-8")).body:
        value: ast.expr | None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        else:
            continue
        if any(getattr(target, "id", None) == "PARAMS" for target in targets) and value is not None:
            return tuple(ast.literal_eval(value))
    return None


def rewrite(text: str) -> str:
    """dvc.yaml's text with each stage's code deps and (for a stage declaring PARAMS) `params:` rewritten."""
    lines, out, known = text.split("\n"), [], modules()
    stage: str | None = None
    cmd = ""
    index = 0
    while index < len(lines):
        line = lines[index]
        if line and not line.startswith(" "):
            stage = None
        elif match := _STAGE.match(line):
            stage, cmd = match.group(1), _cmd(lines, index)
        key_match = _KEY.match(line) if stage else None
        key = key_match.group(1) if key_match else None
        params = declared(stage) if stage and (STAGES / f"{stage}.py").is_file() else None
        if key in {"deps", "params"}:
            end = index + 1
            while end < len(lines) and lines[end].startswith(_ITEM):
                end += 1
            if key == "deps":
                kept = [item for item in lines[index + 1:end] if not _CODE.match(item)]
                out += [line, *kept, *(f"{_ITEM}- {path}" for path in sorted(stage_code(cmd, known)))]
            elif params is None:
                out += lines[index:end]
            else:
                out += _params(params, line)
            index = end
            continue
        if key == "outs" and params and not _has_params(lines, index):
            out += _params(params, "    params:")
        out.append(line)
        index += 1
    return "\n".join(out)


def _cmd(lines: list[str], start: int) -> str:
    for line in lines[start + 1:]:
        if _STAGE.match(line) or (line and not line.startswith(" ")):
            break
        if line.startswith("    cmd:"):
            return line.split(":", 1)[1].strip()
    return ""


def _params(params: tuple[str, ...], header: str) -> list[str]:
    return [header, *(f"{_ITEM}- {name}" for name in params)] if params else []


def _has_params(lines: list[str], outs: int) -> bool:
    """Whether the stage whose `outs:` is at line `outs` has a `params:` key (before or after it)."""
    start = outs
    while start > 0 and not _STAGE.match(lines[start]):
        start -= 1
    end = outs + 1
    while end < len(lines) and not _STAGE.match(lines[end]) and not (lines[end] and not lines[end].startswith(" ")):
        end += 1
    return any(line.startswith("    params:") for line in lines[start:end])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if dvc.yaml is out of date")
    args = parser.parse_args()
    text = DVC_YAML.read_text(encoding="utf-8")
    new = rewrite(text)
    if args.check:
        sys.exit(0 if new == text else "dvc.yaml's deps or params differ from the code: run "
                 "python tools/sync_dvc_params.py")
    if new != text:
        DVC_YAML.write_text(new, encoding="utf-8")
    print("dvc.yaml " + ("rewritten" if new != text else "already up to date"))


if __name__ == "__main__":
    main()
