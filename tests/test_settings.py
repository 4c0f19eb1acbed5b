"""params.yaml validated before any work: names in any case, and each mistake named with what may go there."""
from __future__ import annotations

import re

import pytest
import yaml

from pipeline.core.errors import ParamsError
from pipeline.settings import settings_from
from tests.conftest import ROOT, project_params_with

PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text())


def test_the_project_params_are_valid() -> None:
    settings = settings_from(PARAMS)
    assert settings.analysis.division == "closed" and settings.fetch.rounds == "all"


def test_names_are_matched_in_any_case() -> None:
    settings = settings_from(project_params_with("analysis.division", "Closed"))
    assert settings.analysis.division == "closed"
    assert settings_from(project_params_with("analysis.benchmarks", ["ResNet"])).analysis.benchmarks == ["resnet"]
    assert settings_from(project_params_with("fetch.rounds", ["V5.1"])).fetch.rounds == ["v5.1"]


@pytest.mark.parametrize(("path", "value", "expected"), [
    ("analysis.division", "closd", "analysis.division"),
    ("analysis.benchmarks", ["resnet", "resnet50"], "'resnet50' is not a benchmark"),
    ("analysis.min_configurations", "many", "analysis.min_configurations"),
    ("analysis.availability", ["onprem", "clowd"], "clowd"),
    ("fetch.rounds", "v5.1", "must be all or a list of rounds"),
    ("fetch.rounds", ["5.1"], "rounds are written vX.Y"),
    ("fetch.upstream", "https://github.com/mlcommons/training_results", "{round}"),
    ("fetch.upstream", "https://github.com/{owner}/training_results_{round}", "no other braces"),
    ("fetch.mirror", KeyError, "fetch.mirror: is missing"),
    ("report.max_price_age_days", 0, "report.max_price_age_days: must be a whole number of days, at least 1"),
    ("report.max_price_age_days", "a year", "such as 365"),
    ("report.max_price_age_days", 30.5, "must be a whole number of days"),
    ("report.max_price_age_days", True, "must be a whole number of days"),
])
def test_mistakes_name_the_key_and_the_valid_values(path: str, value: object, expected: str) -> None:
    with pytest.raises(ParamsError) as error:
        settings_from(project_params_with(path, value))
    assert expected in str(error.value)


def test_the_old_name_of_the_target_coverage_says_to_rename_it() -> None:
    decide = {("interval" if key == "target_coverage" else key): value for key, value in PARAMS["decide"].items()}
    with pytest.raises(ParamsError) as error:
        settings_from({**PARAMS, "decide": decide})
    assert str(error.value) == ("params.yaml has 1 problem: decide: interval is now called target_coverage (the share "
                                "of published times a forecast's interval should hold): rename the key in params.yaml")


def test_the_price_age_limit_defaults_to_a_year_where_params_yaml_leaves_it_out() -> None:
    """Issue 52: report.max_price_age_days has one default, in pipeline.settings, which the price table's functions
    take when they are not given the param."""
    from pipeline.analysis.pricing.price_table import MAX_PRICE_AGE_DAYS

    assert settings_from(project_params_with("report.max_price_age_days", KeyError)).report.max_price_age_days == 365
    assert MAX_PRICE_AGE_DAYS == 365
    assert settings_from(project_params_with("report.max_price_age_days", 30)).report.max_price_age_days == 30


def test_a_misspelt_key_is_named() -> None:
    params = project_params_with("analysis.divison", "closed")
    with pytest.raises(ParamsError, match=r"analysis\.divison: is not a setting here"):
        settings_from(params)


# Every list param: an empty, short or unknown list is named by its key with what it needs (issue 28).
@pytest.mark.parametrize(("path", "value", "expected"), [
    ("analysis.rounds", [], "analysis.rounds: is an empty list: write all, or the rounds to analyse"),
    ("analysis.rounds", "v4.0", "analysis.rounds: must be all or a list of rounds"),
    ("analysis.benchmarks", [], "analysis.benchmarks: is empty or too short: it needs at least 1 item"),
    ("analysis.availability", [], "analysis.availability: is an empty list"),
    ("fetch.rounds", [], "fetch.rounds: is empty or too short"),
    ("cluster.default_features", [], "cluster.default_features: is empty or too short"),
    ("cluster.k_range", [2], "cluster.k_range: has too few values: it is a list of a fixed length"),
    ("findings.bands", [], "findings.bands: is empty or too short"),
    ("findings.moderate", [4], "findings.moderate: has too few values"),
    ("decide.trust.coverage", [], "decide.trust.coverage: has too few values"),
    ("rank.criteria", {}, "rank.criteria: is empty or too short"),
])
def test_every_list_mistake_is_named_once(path: str, value: object, expected: str) -> None:
    with pytest.raises(ParamsError) as error:
        settings_from(project_params_with(path, value))
    message = str(error.value)
    assert expected in message and message.startswith("params.yaml has 1 problem: "), message
    assert "literal" not in message and "Input should be 'all'" not in message


@pytest.mark.parametrize(("rounds", "expected"), [
    (["v9.9"], "analysis.rounds: v9.9 is not among fetch.rounds"),
    (["v4.0", "v4.5"], "v4.5 is not among fetch.rounds (v4.0, v5.1)"),
])
def test_a_listed_fetch_restricts_the_rounds_analysed(rounds: list[str], expected: str) -> None:
    params = project_params_with("fetch.rounds", ["v4.0", "v5.1"])
    params["analysis"]["rounds"] = rounds
    with pytest.raises(ParamsError, match=re.escape(expected)):
        settings_from(params)


def test_no_mirror_is_null() -> None:
    assert settings_from(project_params_with("fetch.mirror", None)).fetch.mirror is None
