"""The hardware features of a hand-checked golden sample of real system descriptions (issue 22 item 3).

`tests/data/golden_systems.csv` holds, for about a hundred descriptions chosen across every round and every
accelerator vendor of the mirror, the value each hardware feature should take, written by hand from the raw JSON
and the parts' spec sheets, never copied from the parser; its `comment` column says what the JSON says and why
the value was chosen where the text is ambiguous. An empty cell is a value expected missing.

The descriptions are read from the mirror with the ingest's own reading (`pipeline.mlperf.rounds`, so v0.6's
line form and per-node listings are read as the pipeline reads them), turned into features by
`description.hardware_features`, and every field is held to the sample; a failure lists every mismatch at once
(round, submitter, system, field, expected, got), with the count per field.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from importlib import resources
from pathlib import Path

import pandas as pd
import pytest

from pipeline.core import schemas
from pipeline.mlperf import rounds
from pipeline.mlperf.hardware import audit, freetext
from pipeline.mlperf.hardware.description import hardware_features
from pipeline.mlperf.sources import Kind, classify, iter_members
from tests.conftest import MIRROR, ROOT

GOLDEN = ROOT / "tests" / "data" / "golden_systems.csv"
KEY = ["round", "submitter", "system"]
NUMERIC = ["accelerator_memory_gib", "n_nodes", "accelerators_per_node", "host_cpu_cores", "host_memory_gib",
           "interconnect_intra_gbps", "interconnect_inter_gbps"]
TEXT = ["accelerator_vendor", "accelerator_family", "accelerator_form_factor", "host_cpu_model",
        "interconnect_intra", "interconnect_inter", "framework"]
# In the order of the CSV's columns.
FIELDS = ["accelerator_vendor", "accelerator_family", "accelerator_form_factor", "accelerator_memory_gib",
          "n_nodes", "accelerators_per_node", "host_cpu_model", "host_cpu_cores", "host_memory_gib",
          "interconnect_intra", "interconnect_intra_gbps", "interconnect_inter", "interconnect_inter_gbps",
          "framework"]
ROUNDS = ["v0.6", "v0.7", "v1.0", "v1.1", "v2.0", "v2.1", "v3.0", "v3.1", "v4.0", "v4.1", "v5.0", "v5.1"]
VENDORS = {"NVIDIA", "Google", "Intel", "AMD", "Graphcore", "Huawei"}
FORM_FACTORS = {"NVL", "Superchip", "SXM", "OAM", "PCIe", "CPU socket"}


def read_golden() -> pd.DataFrame:
    """The golden sample, every cell as text ("" for a value expected missing)."""
    return pd.read_csv(GOLDEN, dtype=str, keep_default_na=False)


def read_descriptions(mirror: Path, keys: list[tuple[str, str, str]]) -> pd.DataFrame:
    """The systems rows of the given descriptions, read from the mirror's archives as the ingest reads them."""
    wanted: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for round_, submitter, system in keys:
        wanted[round_].add((submitter, system))
    rows = []
    for round_, names in sorted(wanted.items()):
        archive = mirror / f"training_results_{round_}.tar.gz"
        tables = rounds.RoundTables(round=round_, source=str(archive))
        for member in iter_members(archive):
            kind, parts = classify(member.path)
            if kind is Kind.SYSTEM and member.data is not None and (parts["submitter"], parts["system"]) in names:
                rounds._read_system(member, parts, tables)
        rows += tables.systems
    return rounds._frame(rows, schemas.SYSTEM_KEY_COLUMNS)


def report(found: pd.DataFrame, n_values: int) -> str:
    """The mismatches (`audit.golden_mismatches`) in one readable message, with a count per field."""
    per_field = Counter(found["field"])
    lines = [f"{len(found)} of {n_values} golden values differ from the parser's "
             f"(per field: {', '.join(f'{field} {count}' for field, count in per_field.most_common())}):"]
    lines += [f"  {round_} {submitter} {system} | {field}: expected {expected}, got {got}"
              for round_, submitter, system, field, expected, got in found.itertuples(index=False)]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ the sample itself

def test_the_golden_sample_covers_every_round_vendor_and_kind_of_system() -> None:
    golden = read_golden()
    assert list(golden.columns) == [*KEY, *FIELDS, "comment"]
    assert len(golden) >= 60
    assert not golden.duplicated(KEY).any(), golden[golden.duplicated(KEY, keep=False)][KEY]
    assert set(golden["round"]) == set(ROUNDS)
    assert VENDORS <= set(golden["accelerator_vendor"])
    assert golden["accelerator_family"].str.endswith(" (CPU)").any()  # CPU-only systems
    assert {"Gaudi", "Gaudi2", "GB200", "GB300", "B200", "MI300X", "GC200", "Ascend 910", "TPU-v4"} <= set(
        golden["accelerator_family"])
    assert (golden["n_nodes"].astype(float) > 1).any() and (golden["n_nodes"].astype(float) == 1).any()
    assert golden["comment"].str.strip().ne("").all()  # every row says what its JSON says


def test_the_golden_values_are_named_in_the_pipelines_vocabulary() -> None:
    golden = read_golden()
    with resources.files("pipeline.mlperf.hardware").joinpath("accelerators.csv").open(encoding="utf-8") as handle:
        families = set(pd.read_csv(handle)["family"])
    named = golden["accelerator_family"]
    assert (named.isin(families) | named.str.endswith(" (CPU)") | named.eq("")).all(), sorted(
        set(named) - families)
    assert set(golden["accelerator_form_factor"]) - {""} <= FORM_FACTORS
    kinds = {kind for kind, _ in freetext.INTERCONNECT_KINDS}
    assert set(golden["interconnect_intra"]) - {""} <= kinds
    assert set(golden["interconnect_inter"]) - {""} <= kinds
    frameworks = {family for family, _ in freetext.FRAMEWORK_FAMILIES}
    assert {part for value in golden["framework"] if value for part in value.split("+")} <= frameworks
    for column in NUMERIC:
        values = golden.loc[golden[column] != "", column].astype(float)
        assert (values > 0).all(), column


# ------------------------------------------------------------------------------ the parser against the sample

@pytest.fixture(scope="module")
def golden_and_parsed() -> tuple[pd.DataFrame, pd.DataFrame]:
    golden = read_golden()
    archives = [MIRROR / f"training_results_{round_}.tar.gz" for round_ in sorted(set(golden["round"]))]
    if not all(archive.is_file() for archive in archives):
        pytest.skip(f"the MLPerf mirror is not at {MIRROR}")
    systems = read_descriptions(MIRROR, [tuple(key) for key in golden[KEY].itertuples(index=False)])
    parsed, _ = hardware_features(systems)
    return golden, parsed


def test_every_golden_description_parses_to_its_hand_checked_values(
        golden_and_parsed: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    golden, parsed = golden_and_parsed
    found = audit.golden_mismatches(golden, parsed)
    if len(found):
        pytest.fail(report(found, len(golden) * len(FIELDS)), pytrace=False)
