"""The JSON files stages hand each other, with their declared structure, validated where they are read.

Each stage writes its per-benchmark JSON with `files.write_json`; a reader gets it through `read_artifact`, which
checks the keys every reader relies on (a stage may add more) and raises `ContractError` naming the file and
what is wrong, so a stale or hand-edited file fails early and clearly rather than as a KeyError deep in a stage.

    importance  reports/importance/<benchmark>.json  (pipeline.analysis.importance.analyse)
    clusters    reports/clusters/<benchmark>.json    (pipeline.analysis.clustering.cluster_benchmark)
    rank        reports/rank/<benchmark>.json        (pipeline.analysis.ranking.rank_benchmark)
    decide      reports/decide/<benchmark>.json      (pipeline.analysis.decide)
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from pipeline.core.errors import ContractError


class Artifact(BaseModel):
    """Keys every artifact has; the rest is the stage's own content."""

    model_config = ConfigDict(extra="allow", frozen=True)

    benchmark: str
    status: Literal["ok", "skipped"]


class Importance(Artifact):
    n_configurations: int
    selected_features: list[str]
    targets: dict[str, dict[str, Any]]
    gate: dict[str, Any] | None = None
    reason: str | None = None


class Clusters(Artifact):
    k: int
    features: list[str]
    profiles: list[dict[str, Any]]
    diagnostics: list[dict[str, Any]]
    k_verdict: dict[str, Any] | None = None  # pipeline.analysis.clustering.KVerdict.as_dict
    reason: str | None = None


class Rank(Artifact):
    pick: dict[str, Any] | None = None  # pipeline.analysis.ranking.Pick.as_dict
    clusters: list[dict[str, Any]] = []  # pipeline.analysis.ranking.ClusterStanding.as_dict, by cluster
    most_efficient_cluster: int | None = None
    reason: str | None = None


class Decide(Artifact):
    reason: str | None = None


KINDS: dict[str, type[Artifact]] = {"importance": Importance, "clusters": Clusters, "rank": Rank,
                                    "decide": Decide}


def read_artifact(kind: str, path: Path) -> dict[str, Any]:
    """The content of `path`, an artifact of `kind` (a key of `KINDS`), checked against its declared structure.

    Raises `ContractError` when the file is missing, not JSON or lacks a declared key.
    """
    model = KINDS[kind]
    if not path.is_file():
        raise ContractError(f"{path} not found: the {kind} stage writes it; run `dvc repro`")
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ContractError(f"{path} is not valid JSON ({error}); run `dvc repro` to write it again") from None
    try:
        model.model_validate(content)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, item['loc']))}: {item['msg']}" for item in error.errors())
        raise ContractError(f"{path} does not hold the declared {kind} content ({problems}); run `dvc repro` to "
                            f"write it again") from None
    return dict(content)
