"""The JSON files stages hand each other, with their declared structure, validated where they are read.

Every per-benchmark JSON is an `Artifact`: written by `Artifact.write` (`files.write_json`: sorted keys, floats to
the stored digits) and read back, validated, into the same model by `Artifact.read`, which raises `ContractError`
naming the file and what is wrong, so a stale or hand-edited file fails early and clearly rather than as an
AttributeError deep in a stage.

    importance  reports/importance/<benchmark>.json  pipeline.analysis.statistics.importance_result.ImportanceReport
    kscan       data/processed/kscan/<b>.json        pipeline.analysis.statistics.clustering.KScan
    clusters    reports/clusters/<benchmark>.json    pipeline.analysis.statistics.clustering.Clustering
    findings    data/processed/findings/<b>.json     pipeline.analysis.statistics.findings_result.FindingsReport
    rank        reports/rank/<benchmark>.json        pipeline.analysis.statistics.ranking.Ranking
    decide      reports/decide/<benchmark>.json      pipeline.analysis.forecasting.decide.DecideSummary
    decide      reports/decide/<b>.models.json       pipeline.analysis.forecasting.models_artifact.ModelsArtifact
    buyer       data/processed/buyer/<b>.json        pipeline.analysis.buyer.BuyerReport
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from pipeline.core.errors import ContractError
from pipeline.core.files import write_json


class Record(BaseModel):
    """A typed part of an artifact: frozen, no undeclared key, each field documented by the docstring under it."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class Artifact(Record):
    """A stage's per-benchmark result. A field the step never set (a skipped step stops early) is left out of
    the file and reads back as its default, so a file holds exactly what the step found."""

    benchmark: str
    """The benchmark (pipeline.mlperf.catalogue id)."""
    status: Literal["ok", "skipped"]
    """"skipped": the step could not run on this benchmark; `reason` says why."""
    reason: str | None = None
    """Why the step was skipped (a skipped result only)."""

    KIND: ClassVar[str] = "artifact"  # the stage writing it, for messages

    def as_json(self) -> dict[str, Any]:
        """The file's content: every field set, as plain Python values."""
        return self.model_dump(mode="python", exclude_unset=True)

    def write(self, path: Path) -> None:
        """`as_json` to `path`, atomically, as every JSON output is written (`files.write_json`)."""
        write_json(self.as_json(), path)

    @classmethod
    def read(cls, path: Path) -> Self:
        """The artifact at `path`. Raises `ContractError` when the file is missing, not JSON or not of this
        model."""
        return read_record(cls, path, cls.KIND)


RecordType = TypeVar("RecordType", bound=Record)


def read_record(model: type[RecordType], path: Path, kind: str) -> RecordType:
    """The `model` (a `Record`) at `path`, which the `kind` stage writes. Raises `ContractError` when the file is
    missing, not JSON or not of this model."""
    try:
        return model.model_validate(_content(path, kind))
    except ValidationError as error:
        raise contract_error(path, kind, error) from None


def _content(path: Path, kind: str) -> Any:
    if not path.is_file():
        raise ContractError(f"{path} not found: the {kind} stage writes it; run `dvc repro`")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ContractError(f"{path} is not valid JSON ({error}); run `dvc repro` to write it again") from None


def contract_error(path: Path, what: str, error: ValidationError) -> ContractError:
    """The ContractError for a file that does not validate into its model: names the file and the failing fields."""
    return ContractError(f"{path} does not hold the declared {what} content ({problems(error)}); run `dvc repro` "
                         f"to write it again")


def problems(error: ValidationError) -> str:
    """What a validation found wrong, in one line: "field.part: message; ..."."""
    return "; ".join(f"{'.'.join(map(str, item['loc']))}: {item['msg']}" for item in error.errors())
