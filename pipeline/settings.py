"""params.yaml, loaded once into validated, frozen settings: the one home of every knob.

Every key is checked before any work starts: its type, its range or allowed values, and names that are
names are matched in any case (`division: Closed` is `closed`). A missing, misspelt, extra or out-of-range key
is a `ParamsError` that names the key, says what it holds and what it may hold. Stages read
`load_settings().<section>.<key>`, never the raw mapping.

Names say what each type is. Every mapping of params.yaml, validated, is a `SettingsSection` named after its place
in the file with the suffix Settings: `FetchSettings` is the section `fetch`, `ImportanceModelSettings` the
sub-section `importance.model`, `RankCriterionSettings` one entry of `rank.criteria`, `DecideTrustSettings`
`decide.trust`; `Settings` is the whole file (`load_settings`, `settings_from`). A value type several keys share is
named for the values it allows (`Fraction`, `PositiveInt`). `load_params` is the file as written, unvalidated.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import ErrorDetails

from pipeline.core.errors import ParamsError
from pipeline.core.features import NUMERIC_FEATURES
from pipeline.core.paths import PARAMS as PARAMS_FILE
from pipeline.mlperf.availability import params_categories
from pipeline.mlperf.catalogue import BY_ID, round_version, unavailable_rounds

RANK_CRITERIA = ("time_to_train_min", "accelerator_hours")


class SettingsSection(BaseModel):
    """A mapping of params.yaml (a section, a sub-section or an entry), validated: frozen, unknown keys refused, each
    field documented by the docstring under it."""
    model_config = ConfigDict(frozen=True, extra="forbid", strict=False, use_attribute_docstrings=True)


def _round_name(value: object) -> str:
    """A round name as written in params and on the command line (any case, spaces around); ValueError saying
    how rounds are written otherwise."""
    text = str(value).strip().lower()
    try:
        round_version(text)
    except ValueError:
        raise ValueError(f"{value!r} is not a round: rounds are written vX.Y, such as v4.1") from None
    return text


def _all_or_list(value: object, example: str) -> Literal["all"] | list[object]:
    """"all" for all written in any case, the list `value` as it is; a ValueError naming `example` (what the list
    holds, "rounds, such as [v4.0, v4.1]") for anything else."""
    if isinstance(value, str) and value.strip().lower() == "all":
        return "all"
    if not isinstance(value, list):
        raise ValueError(f"must be all or a list of {example}")
    return value


def _round_names(value: object) -> Literal["all"] | list[str]:
    """params `fetch.rounds` or `analysis.rounds` as written: "all", or the rounds' names (`_round_name`)."""
    chosen = _all_or_list(value, "rounds, such as [v4.0, v4.1]")
    return chosen if chosen == "all" else [_round_name(item) for item in chosen]


class FetchSettings(SettingsSection):
    """params `fetch`: where the rounds come from (see pipeline/mlperf/fetching.py and docs/data.md)."""

    mirror: str | None
    """Folder of `training_results_vX.Y.tar.gz` archives or `training_results_vX.Y/` folders (a clone works too), or
    empty (null): every round is cloned from upstream."""
    rounds: Literal["all"] | Annotated[list[str], Field(min_length=1)]
    """The rounds to fetch and analyse: all (every round the mirror holds or upstream answers for, from v0.6 on),
    or a list written vX.Y."""
    upstream: str
    """URL cloned (shallow, sparse) for a round the mirror lacks, with {round} where the round goes."""

    @field_validator("rounds", mode="before")
    @classmethod
    def _rounds(cls, value: object) -> object:
        return _round_names(value)

    @field_validator("upstream")
    @classmethod
    def _upstream(cls, value: str) -> str:
        try:
            value.format(round="v0.0")
            well_formed = "{round}" in value
        except (KeyError, IndexError, ValueError):  # braces other than {round}
            well_formed = False
        if not well_formed:
            raise ValueError("must be a URL with {round} where the round goes, and no other braces, such as "
                             "https://github.com/mlcommons/training_results_{round}")
        return value


class AnalysisSettings(SettingsSection):
    """params `analysis`: what the analysis covers."""

    benchmarks: Literal["all"] | Annotated[list[str], Field(min_length=1)]
    """Benchmarks analysed: all (every catalogue benchmark with at least min_configurations in scope) or a list of
    catalogue ids."""
    division: Literal["closed", "open", "all"]
    """The division analysed: closed, open or all."""
    rounds: Literal["all"] | list[str]
    """The rounds analysed: all, or a list such as [v4.0, v4.1]."""
    availability: Literal["all"] | Annotated[list[str], Field(min_length=1)]
    """all, or availability categories (available_onprem, available_cloud, preview, research; the shorthands
    available, onprem, cloud and rdi are read too)."""
    republished: Literal["exclude", "include"] = "exclude"
    """Results that repeat an earlier round's (`republished_of`): exclude leaves them out of the analysis, include
    analyses them as results of the round that republished them."""
    min_configurations: Annotated[int, Field(ge=2)]
    """A benchmark with fewer configurations in scope is reported as not analysed."""

    @field_validator("benchmarks", mode="before")
    @classmethod
    def _benchmarks(cls, value: object) -> str | list[str]:
        chosen = _all_or_list(value, "benchmark ids, such as [resnet, bert]")
        return chosen if chosen == "all" else [_benchmark_id(item) for item in chosen]

    @field_validator("division", mode="before")
    @classmethod
    def _division(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("rounds", mode="before")
    @classmethod
    def _rounds(cls, value: object) -> object:
        if value == []:
            raise ValueError("is an empty list: write all, or the rounds to analyse, such as [v4.0, v4.1]")
        return _round_names(value)

    @field_validator("availability", mode="before")
    @classmethod
    def _availability(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().lower() == "all":
            return "all"
        if isinstance(value, str):
            raise ValueError("must be all or a list of availability categories, such as [available_onprem, "
                             "available_cloud]")
        if isinstance(value, list):
            if not value:
                raise ValueError("is an empty list: write all, or the availability categories to keep")
            return params_categories(value)
        return value

    @field_validator("republished", mode="before")
    @classmethod
    def _republished(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value


def _benchmark_id(value: object) -> str:
    text = str(value).strip().lower()
    if text not in BY_ID:
        raise ValueError(f"{value!r} is not a benchmark of the catalogue; the ids are {', '.join(sorted(BY_ID))}")
    return text


Fraction = Annotated[float, Field(gt=0, lt=1)]  # a value type: strictly between 0 and 1
PositiveInt = Annotated[int, Field(ge=1)]  # a value type: a whole number, at least 1


class ImportanceModelSettings(SettingsSection):
    """params `importance.model`: sklearn HistGradientBoostingRegressor settings of the importance model."""

    max_iter: PositiveInt
    """Boosting rounds."""
    learning_rate: Annotated[float, Field(gt=0, le=1)]
    """Learning rate."""
    min_samples_leaf: PositiveInt
    """Fewest results in a leaf."""


class ImportanceSelectSettings(SettingsSection):
    """params `importance.select`: which features the importance stage selects (R^2 lost when shuffled, count, share
    of resamples)."""
    min_importance: Annotated[float, Field(ge=0)]
    """A feature is a candidate when shuffling it costs at least this R^2."""
    max_features: PositiveInt
    """The strongest this many candidates, per resample."""
    min_stability: Annotated[float, Field(gt=0, le=1)]
    """Selected when kept in at least this share of the bootstrap resamples."""


class ImportanceSettings(SettingsSection):
    """params `importance`: which hardware features explain the outcomes (see
    pipeline/analysis/statistics/importance.py)."""

    permutation_repeats: PositiveInt
    """Shuffles per feature of the permutation importance."""
    seed: int
    """Random seed."""
    bootstrap: Annotated[int, Field(ge=100)]
    """Bootstrap resamples of the accelerator families (the gain's interval, the selection)."""
    min_families: Annotated[int, Field(ge=2)]
    """Gate: hardware is credited only with at least this many accelerator families."""
    min_r2: Annotated[float, Field(le=1)]
    """Gate: and an R^2 of at least this on families the model has not seen."""
    model: ImportanceModelSettings
    """The gradient-boosting model fitted to the baseline's residuals."""
    select: ImportanceSelectSettings
    """Selection by stability."""


class ClusterSettings(SettingsSection):
    """params `cluster`: k-means on the configuration (see pipeline/analysis/statistics/clustering.py)."""

    k: Annotated[int, Field(ge=2)]
    """Clusters (5, the published study's choice)."""
    n_init: PositiveInt
    """k-means restarts."""
    seed: int
    """Random seed."""
    k_range: tuple[Annotated[int, Field(ge=2)], Annotated[int, Field(ge=2)]]
    """The k of the diagnostics, [low, high]."""
    bootstrap: PositiveInt
    """Resamples of the results for the stability of each k."""
    default_features: Annotated[list[str], Field(min_length=1)]
    """Inputs when the importance gate selects nothing, in order of priority (of an exactly collinear set the later
    ones are dropped)."""
    max_imputed_share: Annotated[float, Field(ge=0, le=1)]
    """A feature missing for more of the configurations is dropped, not median-imputed."""
    max_collinear_r2: Annotated[float, Field(gt=0, le=1)]
    """R^2 of a feature on the ones kept before it at which it counts as exactly collinear."""
    min_size: PositiveInt
    """Smaller clusters are flagged."""
    silhouette_tolerance: Annotated[float, Field(ge=0)]
    """k is supported when its silhouette is this close to the best k's."""
    min_stability: Annotated[float, Field(ge=-1, le=1)]
    """And its mean bootstrap adjusted Rand index at least this."""

    @field_validator("default_features")
    @classmethod
    def _features(cls, value: list[str]) -> list[str]:
        unknown = [name for name in value if name not in NUMERIC_FEATURES]
        if unknown:
            raise ValueError(f"{', '.join(unknown)} is not a configuration feature; choose among "
                             f"{', '.join(NUMERIC_FEATURES)}")
        return value

    @model_validator(mode="after")
    def _k_in_range(self) -> ClusterSettings:
        low, high = self.k_range
        if not low <= self.k <= high:
            raise ValueError(f"k = {self.k} must lie within k_range [{low}, {high}]")
        return self


class RankCriterionSettings(SettingsSection):
    """One criterion of params `rank.criteria`: its weight in the trade-off score and whether lower (cost) or higher
    (benefit) is better."""
    weight: Annotated[float, Field(gt=0)]
    """Its weight in the trade-off score."""
    direction: Literal["cost", "benefit"]
    """cost (lower is better) or benefit."""

    @field_validator("direction", mode="before")
    @classmethod
    def _direction(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value


class RankSettings(SettingsSection):
    """params `rank`: how configurations are ranked (see pipeline/analysis/statistics/ranking.py)."""

    criteria: Annotated[dict[str, RankCriterionSettings], Field(min_length=1)]
    """The trade-off score's criteria (time_to_train_min, accelerator_hours) and their weights: the ranking's order
    within a front."""
    top: PositiveInt
    """The sensitivity check compares the top this many configurations."""
    sensitivity: Annotated[float, Field(ge=0, lt=1)]
    """Each weight is moved by +/- this share (then renormalised) in the sensitivity check."""

    @field_validator("criteria")
    @classmethod
    def _criteria(cls, value: dict[str, RankCriterionSettings]) -> dict[str, RankCriterionSettings]:
        unknown = [name for name in value if name not in RANK_CRITERIA]
        if unknown:
            raise ValueError(f"{', '.join(unknown)} is not a criterion; choose among {', '.join(RANK_CRITERIA)}")
        return value


class FindingsSettings(SettingsSection):
    """params `findings`: the published study's findings as hypothesis tests (see
    pipeline/analysis/statistics/findings.py)."""

    alpha: Fraction
    """Family-wise significance level: a verdict needs its Holm-adjusted two-sided p below this."""
    bootstrap: Annotated[int, Field(ge=100)]
    """Resamples of the efficiency bands' intervals (95%, descriptive)."""
    seed: int
    """Random seed."""
    bands: Annotated[list[Annotated[float, Field(gt=0)]], Field(min_length=1)]
    """Lower edges of the accelerator-count bands of within-series efficiency."""
    moderate: tuple[Annotated[float, Field(gt=0)], Annotated[float, Field(gt=0)]]
    """The study's moderate number of accelerators, inclusive."""
    top_share: Fraction
    """The most hardware-efficient share of each round (round_efficiency)."""
    largest_share: Fraction
    """The largest share of each round by accelerator count."""
    superlinear_threshold: Annotated[float, Field(ge=1)]
    """Within-series efficiencies above this are listed with their likely reason."""
    min_group: Annotated[int, Field(ge=2)]
    """Fewer results than this on a side of a comparison: not tested (inconclusive)."""
    min_submitters: Annotated[int, Field(ge=2)]
    """Fewer submitters than this on a side of a test: not tested (inconclusive)."""
    latest_peak_share: Annotated[float, Field(gt=0, le=1)]
    """Latest generation: peak BF16 at least this share of the highest among the families launched before the round."""

    @field_validator("bands")
    @classmethod
    def _bands(cls, value: list[float]) -> list[float]:
        if value != sorted(set(value)):
            raise ValueError("must be increasing lower edges of accelerator-count bands, such as [2, 4, 8]")
        return value


class DecideTrustSettings(SettingsSection):
    """params `decide.trust`: when a forecast is trusted (see docs/predictions.md and
    pipeline/analysis/forecasting/trust.py)."""

    min_rounds: PositiveInt
    """Results from at least this many rounds."""
    min_backtest_points: PositiveInt
    """Backtest forecasts of the family (else of its benchmark and kind) needed."""
    max_error: Annotated[float, Field(gt=0)]
    """Whose median error is at most this fraction."""
    max_count_factor: Annotated[float, Field(ge=1)]
    """A count from the smallest published up to this many times the largest."""
    coverage: tuple[Annotated[float, Field(gt=0, le=1)], Annotated[float, Field(gt=0, le=1)]]
    """The backtest coverage must be consistent with this range (Clopper-Pearson, 90%)."""

    @field_validator("coverage")
    @classmethod
    def _coverage(cls, value: tuple[float, float]) -> tuple[float, float]:
        if value[0] >= value[1]:
            raise ValueError("must be [low, high] with low < high, such as [0.85, 0.95]")
        return value


class DecideSettings(SettingsSection):
    """params `decide`: predictions and break-even (see docs/predictions.md)."""

    efficiency_floor: Fraction
    """Break-even: the accelerator count beyond which scaling efficiency falls below this."""
    target_coverage: Fraction
    """The share of published times a forecast's interval should hold (0.9: a 90% interval)."""
    trust: DecideTrustSettings
    """What a forecast needs to be trusted."""

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, value: object) -> object:
        if isinstance(value, dict) and "interval" in value:
            raise ValueError("interval is now called target_coverage (the share of published times a forecast's "
                             "interval should hold): rename the key in params.yaml")
        return value


class ReportSettings(SettingsSection):
    """params `report`: the page (see docs/report.md)."""

    prices: str | None = None
    """A price YAML (accelerator family -> USD per accelerator-hour) for the page's cost per training run, or null
    for none."""
    electricity_usd_per_kwh: Annotated[float, Field(gt=0, lt=10)] | None = None
    """USD per kWh for the energy cost of measured energy (MLPerf power results only); null: the dated, sourced
    default of pipeline/analysis/pricing/electricity.py."""
    deadlines_min: Annotated[list[Annotated[float, Field(gt=0)]], Field(min_length=1)] = [10.0, 30.0, 60.0, 240.0]
    """The deadlines (minutes) the entry page answers with the cheapest configuration that finishes within each."""
    budgets_usd: Annotated[list[Annotated[float, Field(gt=0)]], Field(min_length=1)] = [100.0, 500.0, 2000.0]
    """The budgets (USD per training run) the entry page answers with the fastest configuration within each."""
    providers: list[str] | None = None
    """The cloud providers whose public prices the buyer's answers use (names as pipeline/analysis/pricing/
    price_table.csv spells them, any case), or null for every provider; `recommend --provider` chooses per
    question."""
    price_basis: Literal["cheapest", "typical", "dearest"] = "dearest"
    """The price of each configuration's listed range that "cheapest" and a budget are decided at: dearest (the
    answer holds whichever listed provider you rent from), typical (the geometric middle of the range) or cheapest
    (the best case, at that provider only); `recommend --price-basis` chooses it per question."""
    max_price_age_days: int = 365
    """A public price more than this many days older than the price table's newest reading (the date of the table
    this build ships, not the day it runs, so the same table answers alike on any day) is history: listed on the
    prices page (docs/prices.md), never in an answer. Whole days, at least 1."""

    @field_validator("max_price_age_days", mode="before")
    @classmethod
    def _max_price_age_days(cls, value: object) -> object:
        # pydantic would take true as 1 and word a float's fraction in its own terms: say what the key holds.
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError("must be a whole number of days, at least 1, such as 365: a price older than that "
                             "(counted from the price table's newest reading) is history, never in an answer")
        return value


class Settings(SettingsSection):
    """The whole of params.yaml, validated: every section."""

    fetch: FetchSettings
    """Where the rounds come from."""
    analysis: AnalysisSettings
    """What the analysis covers."""
    importance: ImportanceSettings
    """Which hardware features explain the outcomes."""
    cluster: ClusterSettings
    """k-means on the configuration."""
    rank: RankSettings
    """How configurations are ranked."""
    findings: FindingsSettings
    """The published study's findings as tests."""
    decide: DecideSettings
    """Predictions and break-even."""
    report: ReportSettings
    """The page."""

    @model_validator(mode="after")
    def _rounds_are_fetched(self) -> Settings:
        if self.fetch.rounds != "all":
            problem = unavailable_rounds(self.analysis.rounds, self.fetch.rounds, "fetch.rounds",
                                         "add to fetch.rounds, or drop from analysis.rounds")
            if problem is not None:
                raise ValueError(f"analysis.rounds: {problem}")
        return self


def _location(error: ErrorDetails) -> str:
    # pydantic names the branch of a union (literal['all'], list[str]) and the validator function in the
    # location: the user wrote a key, so only the keys (and list positions) are shown.
    return ".".join(str(part) for part in error["loc"]
                    if not str(part).startswith("function-") and "[" not in str(part))


def _message(error: ErrorDetails) -> str:
    message = str(error["msg"]).removeprefix("Value error, ")
    given = error.get("input")
    if _fixed_length_short(error):
        return "has too few values: it is a list of a fixed length, as in the project's params.yaml"
    if error["type"] == "missing":
        return "is missing; restore it from the project's params.yaml"
    if error["type"] == "extra_forbidden":
        return "is not a setting here (misspelt?); see the project's params.yaml for the valid keys"
    if error["type"] == "too_short":
        return f"is empty or too short: it needs at least {error.get('ctx', {}).get('min_length', 1)} item(s)"
    shown = f" (got {given!r})" if given is not None and not isinstance(given, dict | list) else ""
    return f"{message}{shown}"


def _fixed_length_short(error: ErrorDetails) -> bool:
    return error["type"] == "missing" and isinstance(error["loc"][-1], int)


def _problems(errors: list[ErrorDetails]) -> list[str]:
    """One line per key: of a union's branches (`all` or a list), the error of the branch the value was
    written for, not 'Input should be all' beside it."""
    located = [(_location(item).rsplit(".", 1)[0] if _fixed_length_short(item) else _location(item), item)
               for item in errors]
    keys = {key for key, item in located if item["type"] != "literal_error"}
    lines = [f"{key}: {_message(item)}" if key else _message(item) for key, item in located
             if not (item["type"] == "literal_error" and key in keys)]
    return list(dict.fromkeys(lines))


def settings_from(params: object, source: str = "params.yaml") -> Settings:
    """Validate a parsed params mapping; every problem found is named in one `ParamsError`."""
    if not isinstance(params, dict):
        raise ParamsError(f"{source} must hold a mapping of sections (fetch, analysis, cluster, ...)")
    try:
        return Settings.model_validate(params)
    except ValidationError as error:
        problems = _problems(error.errors())
        raise ParamsError(f"{source} has {len(problems)} problem{'s' if len(problems) > 1 else ''}: "
                          + "; ".join(problems)) from None


def load_params(path: Path = PARAMS_FILE) -> dict[str, object]:
    """`path` as written, unvalidated (section -> its mapping): what the report shows of the params."""
    if not path.is_file():
        raise ParamsError(f"{path} not found: run the stages from the project root, where params.yaml lives")
    try:
        params = _safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as error:
        raise ParamsError(f"{path} is not valid YAML ({error}); fix the line it names") from None
    if not isinstance(params, dict):
        raise ParamsError(f"{path} must hold a mapping of sections (fetch, analysis, cluster, ...)")
    return params


def _safe_load(text: str) -> object:
    """`yaml.safe_load(text)` read by libyaml's safe loader where PyYAML has it: the same values in a tenth of the
    time (every stage reads params.yaml)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def load_settings(path: Path = PARAMS_FILE) -> Settings:
    """The validated settings of `path`."""
    return settings_from(load_params(path), str(path))
