"""params.yaml validated before any work: names in any case, and each mistake named with what may go there."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pipeline.core.errors import ParamsError
from pipeline.settings import settings_from
from tests.conftest import project_params_with

ROOT = Path(__file__).resolve().parents[1]
PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text())


def test_the_project_params_are_valid() -> None:
    settings = settings_from(PARAMS)
    assert settings.analysis.division == "closed" and "v5.1" in settings.fetch.rounds


def test_names_are_matched_in_any_case() -> None:
    settings = settings_from(project_params_with("analysis.division", "Closed"))
    assert settings.analysis.division == "closed"
    assert settings_from(project_params_with("analysis.benchmark", "ResNet")).analysis.benchmark == "resnet"
    assert settings_from(project_params_with("fetch.rounds", ["V5.1"])).fetch.rounds == ["v5.1"]


@pytest.mark.parametrize(("path", "value", "expected"), [
    ("analysis.division", "closd", "analysis.division"),
    ("analysis.benchmarks", ["resnet", "resnet50"], "'resnet50' is not a benchmark"),
    ("analysis.benchmark", "resnet50", "not a benchmark of the catalogue"),
    ("analysis.min_configurations", "many", "analysis.min_configurations"),
    ("analysis.availability", ["onprem", "clowd"], "clowd"),
    ("fetch.rounds", "v5.1", "must be a list of rounds"),
    ("fetch.rounds", ["5.1"], "rounds are written vX.Y"),
    ("fetch.upstream", "https://github.com/mlcommons/training_results", "{round}"),
    ("fetch.upstream", "https://github.com/{owner}/training_results_{round}", "no other braces"),
    ("fetch.mirror", KeyError, "fetch.mirror: is missing"),
])
def test_mistakes_name_the_key_and_the_valid_values(path: str, value: object, expected: str) -> None:
    with pytest.raises(ParamsError) as error:
        settings_from(project_params_with(path, value))
    assert expected in str(error.value)


def test_a_misspelt_key_is_named() -> None:
    params = project_params_with("analysis.divison", "closed")
    with pytest.raises(ParamsError, match=r"analysis\.divison: is not a setting here"):
        settings_from(params)
