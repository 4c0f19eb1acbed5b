"""What the predict and recommend commands share: --help and --version change nothing, an unknown option is a
one-line error, and the help is short and names the price options."""
from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.commands import predict, recommend
from tests.conftest import exit_message


@pytest.mark.parametrize("main", [predict.main, recommend.main])
def test_predict_and_recommend_follow_the_command_line_conventions(main, decide_project: Path, capsys) -> None:
    before = sorted(path.stat().st_mtime_ns for path in decide_project.rglob("*") if path.is_file())
    for flag in ("--help", "--version"):
        with pytest.raises(SystemExit) as exit_:
            main([flag])
        assert exit_.value.code == 0
    assert sorted(path.stat().st_mtime_ns for path in decide_project.rglob("*") if path.is_file()) == before
    assert "unrecognized arguments: --nope" in exit_message(main, ["--benchmark", "resnet", "--nope"], capsys)


@pytest.mark.parametrize("module", [recommend, predict])
def test_help_is_short_and_names_the_price_options(module, capsys) -> None:
    with pytest.raises(SystemExit):
        module.main(["--help"])
    out = capsys.readouterr().out
    assert "--prices" in out and "USD per" in out
    assert ("--max-energy-kwh" in out and "--max-cost" in out) if module is recommend else True
