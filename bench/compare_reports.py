"""Where two copies of the per-benchmark reports differ: every JSON value that changed, and whether CSVs are equal.

    python bench/compare_reports.py OLD NEW [FILE ...]    # e.g. OLD = a saved copy of reports/benchmarks

OLD and NEW are folders of `<benchmark>/` subfolders as `reports/benchmarks` holds them; FILE defaults to
importance.json, clusters.json, rank.json and ranking.csv. For a JSON file it prints each changed value by its path
(`targets.log_time_to_train.oof_r2: 0.81 -> 0.8`); the verdicts to watch are under `gate`, `selected_features`,
`k_verdict`, `profiles` and `findings.*.verdict`. Exit status 1 when anything differs.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FILES = ("importance.json", "clusters.json", "rank.json", "ranking.csv")


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
    old_root, new_root, files = Path(argv[0]), Path(argv[1]), argv[2:] or FILES
    different = False
    for folder in sorted(p for p in old_root.iterdir() if p.is_dir()):
        for name in files:
            before, after = folder / name, new_root / folder.name / name
            if not after.is_file():
                print(f"{folder.name}/{name}: missing in {new_root}")
                different = True
            elif name.endswith(".json"):
                lines = list(changes(json.loads(before.read_text(encoding="utf-8")),
                                     json.loads(after.read_text(encoding="utf-8"))))
                different |= bool(lines)
                print("\n".join(f"{folder.name}/{name} {line}" for line in lines) or f"{folder.name}/{name}: same")
            else:
                same = before.read_bytes() == after.read_bytes()
                different |= not same
                print(f"{folder.name}/{name}: {'same' if same else 'differs'}")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
