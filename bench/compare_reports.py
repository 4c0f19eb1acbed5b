"""Where two copies of the per-benchmark reports differ: every JSON value that changed, and whether CSVs are equal.

    python bench/compare_reports.py OLD NEW [PATTERN ...]    # e.g. OLD = a saved copy of reports/

OLD and NEW are folders laid out as `reports/` is (one folder per stage, one file per benchmark:
pipeline/core/paths.py); PATTERN (a glob under them) defaults to importance/*.json, clusters/*.json, rank/*.json
and rank/*.csv. For a JSON file it prints each changed value by its path
(`targets.log_time_to_train.oof_r2: 0.81 -> 0.8`); the verdicts to watch are under `gate`, `selected_features`,
`k_verdict`, `profiles` and `findings.*.verdict`. Exit status 1 when anything differs.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python bench/<name>.py`: the project root first, as under pytest
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import arguments

PATTERNS = ("importance/*.json", "clusters/*.json", "rank/*.json", "rank/*.csv")


def changes(old: Any, new: Any, path: str = "") -> Iterator[str]:
    """`path: old -> new` for every leaf that differs between two parsed JSON documents."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in dict.fromkeys([*old, *new]):
            yield from changes(old.get(key, "<absent>"), new.get(key, "<absent>"), f"{path}.{key}".lstrip("."))
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, (before, after) in enumerate(zip(old, new)):
            label = before.get("key", index) if isinstance(before, dict) else index
            yield from changes(before, after, f"{path}[{label}]")
    elif old != new:
        yield f"{path}: {old!r} -> {new!r}"


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    old_root, new_root, patterns = Path(argv[0]), Path(argv[1]), argv[2:] or PATTERNS
    different = False
    for before in sorted(path for pattern in patterns for path in old_root.glob(pattern)):
        name = before.relative_to(old_root).as_posix()
        after = new_root / name
        if not after.is_file():
            print(f"{name}: missing in {new_root}")
            different = True
        elif name.endswith(".json"):
            lines = list(changes(json.loads(before.read_text(encoding="utf-8")),
                                 json.loads(after.read_text(encoding="utf-8"))))
            different |= bool(lines)
            print("\n".join(f"{name} {line}" for line in lines) or f"{name}: same")
        else:
            same = before.read_bytes() == after.read_bytes()
            different |= not same
            print(f"{name}: {'same' if same else 'differs'}")
    return 1 if different else 0


if __name__ == "__main__":
    options = arguments(__doc__, (("old",), {"metavar": "OLD", "help": "a saved copy of reports/"}),
                        (("new",), {"metavar": "NEW", "help": "the reports/ to compare with it"}),
                        (("patterns",), {"nargs": "*", "metavar": "PATTERN", "help": "files to compare (globs)"}))
    sys.exit(main([options.old, options.new, *options.patterns]))
