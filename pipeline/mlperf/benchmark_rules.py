"""The official package's word on each round's benchmarks: which benchmarks a round's rules allow, how many
runs a result needs, how many of the fastest runs the olympic mean drops, and each benchmark's quality target.

Read from `benchmark_rules.json`, extracted from the mlperf-logging package (`mlperf_logging.benchmark_meta`, the
result summarizer's olympic scoring, and the compliance checker's `closed_<benchmark>.yaml` of each ruleset) by
`python -m pipeline.mlperf.benchmark_rules`; `tests/mlperf/test_benchmark_rules.py` checks that file against the
installed package, so a new package (a new round's rules) shows up as a failing test until it is extracted again.
The catalogue (`pipeline.mlperf.catalogue`) keeps what the package lacks: display names, tasks, folder aliases.
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pipeline.core.cli import ArgumentParser
from pipeline.core.errors import UsageError, cli
from pipeline.core.files import write_json

RULES_FILE = "benchmark_rules.json"
# The result summarizer's olympic scoring: `max_dropped_scores = 4 if benchmark == "unet3d" else 1`.
DROPPED = re.compile(r"max_dropped_scores\s*=\s*(?P<drop>\d+)\s+if\s+benchmark\s*==\s*[\"'](?P<benchmark>\w+)[\"']"
                     r"\s+else\s+(?P<default>\d+)")
# A quality target in a closed rule file's eval_accuracy check, such as "(v['value'] <= 3.34) and v['value'] > 0.0".
TARGET = re.compile(r"v\['value'\]\s*(?P<direction><=|>=)\s*(?P<threshold>\d+(?:\.\d+)?)")
RULESET_DIR = re.compile(r"training_(?P<major>\d+)\.(?P<minor>\d+)\.0")


@dataclass(frozen=True)
class Rules:
    """benchmark_rules.json: rounds (vX.Y -> benchmark folder names its rules allow), runs per result and
    quality targets by folder name, and the olympic mean's drop count."""

    rounds: dict[str, tuple[str, ...]]
    runs: dict[str, int]
    targets: dict[str, tuple[str, float]]
    dropped: dict[str, int]
    dropped_otherwise: int

    def olympic_drop(self, folder: str) -> int:
        """The fastest runs the olympic mean of a result of `folder` drops."""
        return self.dropped.get(folder, self.dropped_otherwise)


@cache
def rules() -> Rules:
    """The official rules shipped in benchmark_rules.json: each round's benchmarks, the runs per result, the quality
    targets and the olympic drop (read once, cached)."""
    document = json.loads(resources.files(__package__).joinpath(RULES_FILE).read_text(encoding="utf-8"))
    return Rules(rounds={round_: tuple(names) for round_, names in document["rounds"].items()},
                 runs=document["runs"],
                 targets={name: (direction, threshold) for name, (direction, threshold) in document["targets"].items()},
                 dropped=document["olympic"]["dropped"], dropped_otherwise=document["olympic"]["otherwise"])


# Extraction from the mlperf-logging package (maintainers only: it needs the package, a dev dependency).

def rules_document() -> dict[str, Any]:
    """benchmark_rules.json's content from the installed mlperf-logging."""
    try:
        from mlperf_logging import benchmark_meta, compliance_checker
        from mlperf_logging.result_summarizer import result_summarizer
    except ImportError:
        raise UsageError("the mlperf-logging package is not installed: pip install -e '.[dev]'") from None
    from importlib.metadata import version

    import yaml

    allowed = benchmark_meta._ALL_ALLOWED_BENCHMARKS["training"]
    rounds = {f"v{name}": sorted(set(names)) for name, names in allowed.items()}
    drop = DROPPED.search(Path(result_summarizer.__file__).read_text(encoding="utf-8"))
    if drop is None:
        raise UsageError("the result summarizer's olympic scoring (max_dropped_scores) was not found")
    targets: dict[str, list[object]] = {}
    for folder in sorted(Path(compliance_checker.__file__).parent.iterdir(), key=_ruleset_order):
        if RULESET_DIR.fullmatch(folder.name) is None:
            continue
        for path in sorted(folder.glob("closed_*.yaml")):
            for record in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
                key = record.get("KEY", {}) if isinstance(record, dict) else {}
                if key.get("NAME") == "eval_accuracy" and (found := TARGET.search(str(key.get("ATLEAST_ONE_CHECK")))):
                    targets[path.stem.removeprefix("closed_")] = [found["direction"], float(found["threshold"])]
    return {"source": f"mlperf-logging {version('mlperf-logging')}: benchmark_meta, result_summarizer, "
                      "compliance_checker/training_*/closed_*.yaml (the newest ruleset's target of each benchmark)",
            "rounds": dict(sorted(rounds.items(), key=lambda item: _version(item[0]))),
            "runs": dict(sorted(benchmark_meta._ALL_RESULT_FILE_COUNTS["training"].items())),
            "targets": dict(sorted(targets.items())),
            "olympic": {"dropped": {drop["benchmark"]: int(drop["drop"])}, "otherwise": int(drop["default"])}}


def _version(round_: str) -> tuple[int, int]:
    major, minor = round_.removeprefix("v").split(".")
    return int(major), int(minor)


def _ruleset_order(folder: Path) -> tuple[int, int]:
    match = RULESET_DIR.fullmatch(folder.name)
    return (int(match["major"]), int(match["minor"])) if match else (-1, -1)


@cli
def main(argv: Sequence[str] | None = None) -> None:
    """Rewrite benchmark_rules.json (or `--out`) from the installed mlperf-logging's rules; returns None."""
    parser = ArgumentParser("pipeline.mlperf.benchmark_rules",
                            "Extract each round's benchmarks, runs, olympic drop and targets from mlperf-logging.")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name(RULES_FILE), metavar="FILE",
                        help=f"where to write the rules (default: the package's {RULES_FILE})")
    args = parser.parse_args(argv)
    write_json(rules_document(), args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
