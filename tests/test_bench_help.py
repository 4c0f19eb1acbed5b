"""Every script of bench/ answers `--help` with its usage and runs nothing (a benchmark takes seconds to minutes,
and a user asking what it does should not start one)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

SCRIPTS = sorted(path.name for path in (ROOT / "bench").glob("*.py") if not path.name.startswith("_"))


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_help_prints_the_usage_and_runs_nothing(script: str) -> None:
    done = subprocess.run([sys.executable, f"bench/{script}", "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: "), done.stdout[:200]
    assert len(done.stdout.splitlines()) < 80  # the usage and the docstring, not a benchmark's output
