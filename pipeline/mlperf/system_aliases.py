"""Results folders published under another name than their system description, matched by hand with the evidence.

The rules name a result's folder `<submitter>/results/<system>/` after its description
`<submitter>/systems/<system>.json`. Where a round breaks that and the description can still be identified beyond
doubt, `ALIASES` names it, with the evidence; the features stage then takes the result's hardware from that
description and writes the alias and its evidence into `data/processed/feature_notes.csv`. Any other result
without a description keeps its row with missing hardware (and a note): a match is never guessed.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Alias:
    """The description (`description`, the JSON file's stem) of results folder `results_folder`."""

    round: str
    submitter: str
    results_folder: str
    description: str
    evidence: str


# v0.7 Alibaba named its results folders by accelerator count (v100-256, ...) and its descriptions by node count
# (n32_pai_eflops, ...). Every log says submission_platform "PAI_EFLOPS", the system_name of the five n*_pai_eflops
# descriptions only (not of n1_A100, "HGX A100"); those list 8 NVIDIA V100-SXM2-32GB per node, and exactly one of
# them has the folder's count. n126 and n128 have no results.
_ALIBABA = ("the folder names {count} V100; of Alibaba's v0.7 descriptions only {stem}.json has {count} "
            "({nodes} nodes x 8 NVIDIA V100-SXM2-32GB), and its system_name PAI_EFLOPS is the logs' "
            "submission_platform")
ALIASES: tuple[Alias, ...] = tuple(
    Alias("v0.7", "Alibaba", f"v100-{count}", f"n{count // 8}_pai_eflops",
          _ALIBABA.format(count=count, stem=f"n{count // 8}_pai_eflops", nodes=count // 8))
    for count in (256, 512, 1280))
_BY_FOLDER = {(alias.round, alias.submitter, alias.results_folder): alias for alias in ALIASES}


def description_names(results: pd.DataFrame) -> pd.Series:
    """The system description's name for each row of `results` (columns round, submitter, system: the results
    folder): the folder's own name, or its `ALIASES` entry's description."""
    return pd.Series([alias.description if (alias := _BY_FOLDER.get(key)) else key[2]
                      for key in zip(results["round"], results["submitter"], results["system"])],
                     index=results.index, dtype=object)


def alias_of(round_: str, submitter: str, results_folder: str) -> Alias | None:
    """The description a results folder of a round and submitter stands for, or None when its name is its own."""
    return _BY_FOLDER.get((round_, submitter, results_folder))
