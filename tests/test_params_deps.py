"""Each stage's params in dvc.yaml are exactly the settings its code reads (its module's PARAMS), as
tools/sync_dvc_params.py writes them; and each declared key is one params.yaml has."""
from __future__ import annotations

import importlib.util

import pytest
import yaml

from tests.conftest import ROOT

STAGES = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
_spec = importlib.util.spec_from_file_location("sync_dvc_params", ROOT / "tools" / "sync_dvc_params.py")
assert _spec is not None and _spec.loader is not None
sync = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sync)
# The figures stage is being removed (its figures move into the page); every other stage declares its PARAMS.
UNDECLARED = {"figures"}


def test_dvc_yaml_is_what_the_sync_script_writes() -> None:
    text = (ROOT / "dvc.yaml").read_text(encoding="utf-8")
    assert sync.rewrite(text) == text, "dvc.yaml's deps or params differ from the code: run " \
                                       "python tools/sync_dvc_params.py"


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_each_stage_declares_the_params_it_reads(stage: str) -> None:
    declared = sync.declared(stage)
    if stage in UNDECLARED:
        return
    assert declared is not None, f"pipeline/stages/{stage}.py declares no PARAMS"
    assert list(declared) == STAGES[stage].get("params", []), stage
    for key in declared:
        node = PARAMS
        for part in key.split("."):
            assert isinstance(node, dict) and part in node, f"{stage} declares {key}, which params.yaml lacks"
            node = node[part]


def test_a_stage_that_reads_the_analysis_scope_declares_all_of_it() -> None:
    """analysed_benchmarks reads every key of `analysis` (min_configurations, and benchmark, which it checks), so a
    stage that calls it (or `today`, which does) depends on the whole section: the backtest stage once missed
    min_configurations."""
    for stage in ("importance", "kscan", "cluster", "findings", "rank", "backtest", "decide", "buyer", "report",
                  "brief"):
        source = (ROOT / "pipeline" / "stages" / f"{stage}.py").read_text(encoding="utf-8")
        assert any(name in source for name in ("analysed_benchmarks", "model_inputs_by_benchmark", "today(")), stage
        assert "analysis" in (sync.declared(stage) or ()), stage


def test_the_script_inserts_and_replaces_a_params_list() -> None:
    text = ("stages:\n  fetch:\n    cmd: python -m pipeline.stages.fetch\n    deps:\n      - data/no-such-dep  # kept\n"
            "      - pipeline/no_such_module.py\n    outs:\n      - data/raw\n")
    written = sync.rewrite(text)
    assert "    params:\n      - fetch\n    outs:" in written
    assert "      - data/no-such-dep  # kept\n" in written and "pipeline/no_such_module.py" not in written
    assert "      - pipeline/mlperf\n      - pipeline/settings.py\n      - pipeline/stages/fetch.py\n" in written
    assert sync.rewrite(written) == written


@pytest.mark.parametrize("stage", sorted(set(STAGES) - UNDECLARED))
def test_a_stage_declares_params_if_and_only_if_it_reads_them(stage: str) -> None:
    source = (ROOT / "pipeline" / "stages" / f"{stage}.py").read_text(encoding="utf-8")
    reads = "load_settings(" in source or "load_params(" in source
    assert bool(sync.declared(stage)) == reads, stage
