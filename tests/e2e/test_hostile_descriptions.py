"""System descriptions, real and hostile: repairable ones used with a note (never inside strings), unusable ones
quarantined with their results still scored, v0.6's `key: {json}` descriptions read into the fields of later rounds
(hostile literals refused), and hostile feature values (wrong types, absurd values, division spellings) made missing
with a note; the parsers take any value quickly."""
from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pandas as pd
import pytest

from pipeline.analysis.configurations import build_configurations
from pipeline.core import paths
from pipeline.mlperf import decoding, rounds
from pipeline.mlperf.hardware import freetext as parsers
from pipeline.mlperf.hardware.description import NOTE_COLUMNS
from tests.conftest import run_log, run_stage, small_round, system_json
from tests.e2e.hostile_input import MIB, SYSTEM, ingest_checked, reasons_for


def note_of(tables: rounds.IngestTables, system: str = "box") -> str:
    return str(tables.systems.set_index("system").loc[system, "ingest_note"])



# ----------------------------------------------------------------------------------------- system descriptions

DESCRIPTION = system_json()


@pytest.mark.parametrize(("content", "note"), [
    (DESCRIPTION[:-1] + ",}", "repaired: trailing commas removed"),
    (DESCRIPTION.replace(', "framework"', ',\n  // a comment\n  "framework"'), "repaired: comments removed"),
    (DESCRIPTION.replace(', "framework"', ', /* a block\n comment */ "framework"')[:-1] + ",\n}",
     "repaired: trailing commas and comments removed"),
    (DESCRIPTION.replace('"acme box"', '"Acme ÿ box"').encode("latin-1"), "not UTF-8: read as Latin-1"),
    (DESCRIPTION.encode("utf-16"), "read as UTF-16"),
    (DESCRIPTION[:-1] + ', "framework": "JAX"}', "framework given twice with different values: the last value"),
])
def test_repairable_descriptions_are_used_with_a_note(make_archive, content: str | bytes, note: str) -> None:
    tables = ingest_checked([make_archive({**small_round(), SYSTEM: content})])
    assert note in note_of(tables)
    assert tables.tally.iloc[0]["systems_quarantined"] == 0
    assert tables.results.iloc[0]["time_to_train_min"] == pytest.approx(12.0)


def test_repair_never_touches_the_inside_of_strings() -> None:
    text = '{"note": "a, } // not a comment /* nor this */", "list": [1, 2,],}'
    description, note = decoding.decode_description(text.encode())
    assert description == {"note": "a, } // not a comment /* nor this */", "list": [1, 2]}
    assert note == "repaired: trailing commas removed"


@pytest.mark.parametrize(("content", "reason"), [
    ("", "system description is empty: not used"),
    ("  \n\t", "system description is empty: not used"),
    ("{not json", "not valid JSON"),
    ('{"a": "never closed', "not valid JSON"),
    ("[1/* a comment must not join */2]", "not valid JSON"),
    ('["a", "list"]', "is a JSON list, not an object: not used"),
    ("[" * 100_000 + "]" * 100_000, "nests too deeply to read: not used"),
    (b"\x00\x9f\xff binary \xfe", "not valid JSON"),
])
def test_unusable_descriptions_are_quarantined_and_their_results_still_scored(make_archive, content: str | bytes,
                                                                            reason: str) -> None:
    tables = ingest_checked([make_archive({**small_round(), SYSTEM: content})])
    assert any(reason in text for text in reasons_for(tables, SYSTEM))
    assert any("results folder has no usable system description" in text for text in reasons_for(tables, SYSTEM))
    assert tables.tally.iloc[0]["systems_quarantined"] == 1
    assert tables.results.iloc[0]["time_to_train_min"] == pytest.approx(12.0)


def test_missing_description_and_description_without_results(make_archive) -> None:
    files = small_round()
    files["Acme/systems/spare.json"] = system_json()
    files["Other/results/ghost/resnet/result_0.txt"] = run_log(3)
    tables = ingest_checked([make_archive(files)])
    assert reasons_for(tables, "Acme/results/spare/") == ["system description has no results folder: nothing to score"]
    assert "results folder has no usable system description" in reasons_for(tables, "Other/systems/ghost.json")[0]
    assert set(tables.results["system"]) == {"box", "ghost"}


def test_a_field_named_like_our_columns_keeps_its_value(make_archive) -> None:
    description = system_json(path="their path", desc_path="their desc_path", ingest_note="their note")
    tables = ingest_checked([make_archive({**small_round(), SYSTEM: description})])
    row = tables.systems.iloc[0]
    assert row["path"] == SYSTEM and pd.isna(row["ingest_note"])
    assert (row["desc_path"], row["desc_desc_path"], row["desc_ingest_note"]) == (
        "their desc_path", "their path", "their note")


# -------------------------------------------------------------------------- v0.6's `key: {json}` descriptions

# Real v0.6 descriptions, as published (training_results_v0.6/NVIDIA/systems/dgx2_ngc19.05_pytorch.json and the
# entry line of dgx1_n130_ngc19.05_mxnet.json, the other lines of which are those of the first).
V06_DGX2 = r"""org: {"value": "NVIDIA", "metadata": {"file": "mlperf_log_utils.py", "lineno": 181}}
division: {"value": "closed", "metadata": {"file": "mlperf_log_utils.py", "lineno": 185}}
status: {"value": "onprem", "metadata": {"file": "mlperf_log_utils.py", "lineno": 189}}
platform: {"value": "1xNVIDIA DGX-2", "metadata": {"file": "mlperf_log_utils.py", "lineno": 193}}
entry: {"value": "{'hardware': 'NVIDIA DGX-2', 'framework': 'PyTorch NVIDIA Release 19.05', 'power': 'N/A', 'notes': 'N/A', 'interconnect': 'InfiniBand 10 Gb/sec (4X)', 'os': 'Ubuntu 18.04.2 LTS / NVIDIA DGX Server', 'libraries': \"{'container_base': 'Ubuntu-16.04', 'openmpi_version': '3.1.3', 'mofed_version': '4.4-2.0.7', 'cuda_version': '10.1.163', 'cuda_driver_version': '418.67', 'nccl_version': '2.4.6', 'cudnn_version': '7.6.0.64', 'cublas_version': '10.2.0.163', 'trt_version': '5.1.5.0', 'dali_version': '0.9.1'}\", 'compilers': 'gcc (Ubuntu 5.4.0-6ubuntu1~16.04.11) 5.4.0 20160609', 'nodes': \"{'num_nodes': '1', 'cpu': '2x Intel(R) Xeon(R) Platinum 8168 CPU @ 2.70GHz', 'num_cores': '48', 'num_vcpus': '96', 'accelerator': 'Tesla V100-SXM3-32GB', 'num_accelerators': '16', 'sys_mem_size': '1510 GB', 'sys_storage_type': 'NVMe SSD', 'sys_storage_size': '2x 894.3G + 8x 3.5T', 'cpu_accel_interconnect': 'UPI', 'network_card': 'Mellanox Technologies MT27800 Family [ConnectX-5]', 'num_network_cards': '8', 'notes': ''}\"}", "metadata": {"file": "mlperf_log_utils.py", "lineno": 197}}
poc_name: {"value": "Paulius Micikevicius", "metadata": {"file": "mlperf_log_utils.py", "lineno": 201}}
poc_email: {"value": "pauliusm@nvidia.com", "metadata": {"file": "mlperf_log_utils.py", "lineno": 205}}
"""
V06_DGX1_N130_ENTRY = r"""entry: {"value": "{'os': 'Ubuntu 18.04.2 LTS / NVIDIA DGX Server 4.0.5', 'notes': 'N/A', 'nodes': \"{'notes': '', 'sys_storage_type': 'SATA SSD', 'sys_mem_size': '503 GB', 'sys_storage_size': '1x 7T + 1x 446.6G', 'num_cores': '40', 'network_card': 'Mellanox Technologies MT27700 Family [ConnectX-4]', 'cpu': '2x Intel(R) Xeon(R) CPU E5-2698 v4 @ 2.20GHz', 'accelerator': 'Tesla V100-SXM2-16GB', 'num_accelerators': '8', 'num_network_cards': '4', 'num_vcpus': '80', 'num_nodes': '130', 'cpu_accel_interconnect': 'QPI'}\", 'hardware': 'DGX-1 with V100', 'interconnect': 'InfiniBand 100 Gb/sec (4X EDR)', 'libraries': \"{'nccl_version': '2.4.6', 'cuda_driver_version': '418.67', 'mofed_version': '4.4-2.0.7', 'cudnn_version': '7.6.0.64', 'trt_version': '5.1.5.0', 'dali_version': '0.9.1', 'openmpi_version': '3.1.3', 'container_base': 'Ubuntu-16.04', 'cublas_version': '10.2.0.163'}\", 'framework': 'MXNet NVIDIA Release 19.05', 'compilers': 'gcc (Ubuntu 5.4.0-6ubuntu1~16.04.11) 5.4.0 20160609', 'power': 'N/A'}", "metadata": {"file": "mlperf_log_utils.py", "lineno": 247}}"""


def v06_description(entry: str) -> str:
    """The real DGX-2 description with its entry line replaced by `entry: {"value": <entry as a JSON string>}`."""
    lines = [line if not line.startswith("entry:") else f"entry: {json.dumps({'value': entry})}"
             for line in V06_DGX2.splitlines()]
    return "\n".join(lines) + "\n"


def test_a_real_v06_description_reads_into_the_fields_of_later_rounds() -> None:
    description, note = decoding.decode_description(V06_DGX2.encode())
    assert isinstance(description, dict)
    assert {name: description[name] for name in (
        "submitter", "division", "status", "system_name", "accelerator_model_name", "accelerators_per_node",
        "number_of_nodes", "host_processor_model_name", "host_processors_per_node", "host_processor_core_count",
        "host_memory_capacity", "host_networking", "framework")} == {
        "submitter": "NVIDIA", "division": "closed", "status": "onprem", "system_name": "1xNVIDIA DGX-2",
        "accelerator_model_name": "Tesla V100-SXM3-32GB", "accelerators_per_node": "16", "number_of_nodes": "1",
        "host_processor_model_name": "Intel(R) Xeon(R) Platinum 8168 CPU @ 2.70GHz",
        "host_processors_per_node": "2", "host_processor_core_count": "24", "host_memory_capacity": "1510 GB",
        "host_networking": "InfiniBand 10 Gb/sec (4X)", "framework": "PyTorch NVIDIA Release 19.05"}
    assert "accelerator_memory_capacity" not in description  # v0.6 gives it only inside the model name
    assert "line form" in note


def test_real_v06_descriptions_give_hardware_features(make_archive) -> None:
    dgx1 = "\n".join(V06_DGX1_N130_ENTRY if line.startswith("entry:") else line for line in V06_DGX2.splitlines())
    files = {**small_round(), "Acme/systems/box.json": V06_DGX2, "Acme/systems/dgx1.json": dgx1}
    files.update({path.replace("/box/", "/dgx1/"): log for path, log in small_round().items() if "/results/" in path})
    # Read alike in any round; v3.0's logging rules are the ones run_log meets.
    tables = ingest_checked([make_archive(files)])
    configurations, _ = build_configurations(tables.systems, tables.results, tables.runs)
    by_system = configurations.set_index("system")
    assert by_system.loc["box", ["accelerator_family", "accelerator_count", "host_cpu_cores"]].tolist() == [
        "V100", 16, 48]
    assert by_system.loc["dgx1", ["accelerator_family", "accelerator_count", "n_nodes", "host_memory_gib"]].tolist() \
        == ["V100", 1040, 130, 503]
    assert tables.tally.iloc[0]["systems_quarantined"] == 0


@pytest.mark.parametrize(("entry", "reason"), [
    ("__import__('os').system('touch /tmp/pwned-by-v06')", "a call expression"),
    ("{'nodes': open('/tmp/pwned-by-v06', 'w')}", "a call expression"),
    ("{'accelerator': os}", "a name (os)"),
    ("{'accelerator': os.environ}", "an attribute access"),
    ("{'nodes': [n for n in range(10)]}", "a comprehension"),
    ("{'a': 1, **other}", "** unpacking"),
    ("{'a': 2 ** 1000000}", "an expression (BinOp)"),
    ("{'a': lambda: 0}", "an expression (Lambda)"),
    ("[" * 50 + "]" * 50, "nests deeper than 8 levels"),
    ("(" * 300 + ")" * 300, "not a Python literal (too many nested parentheses)"),
    ("{'a': '" + "x" * (1 << 17) + "'}", "more than the 65536 allowed"),
    ("{'a': 1" + "9" * 5000 + "}", "not a Python literal"),
    ("{'nodes': \"{'accelerator': __import__('os')}\"}", "its `nodes` value holds a call expression"),
    ("['not', 'a', 'dict']", "not a dict"),
])
def test_hostile_v06_literals_are_refused_with_a_reason(make_archive, entry: str, reason: str) -> None:
    tables = ingest_checked([make_archive({**small_round(), SYSTEM: v06_description(entry)})])
    [text] = [text for text in reasons_for(tables, SYSTEM) if text.startswith("system description in v0.6's")]
    assert text.startswith("system description in v0.6's `key: {json}` line form cannot be read: its `")
    assert reason in text
    assert tables.tally.iloc[0]["systems_quarantined"] == 1
    assert not Path("/tmp/pwned-by-v06").exists()
    assert tables.results.iloc[0]["time_to_train_min"] == pytest.approx(12.0)  # still scored, without hardware


def test_a_broken_v06_line_is_refused_with_its_number() -> None:
    description, reason = decoding.decode_description((V06_DGX2 + "poc_phone: {not json}\n").encode())
    assert description is None and "line 8 (poc_phone) is not valid JSON" in reason


def test_kinds_of_node_that_differ_leave_the_field_missing_with_a_note() -> None:
    nodes = [{"num_nodes": "2", "cpu": "2x AMD EPYC 7742", "num_cores": "128", "accelerator": "A100",
              "num_accelerators": "8", "sys_mem_size": "1 TB"},
             {"num_nodes": "3", "cpu": "2x AMD EPYC 7742", "num_cores": "128", "accelerator": "V100",
              "num_accelerators": "8"}]
    description, note = decoding.decode_description(v06_description(repr({"nodes": repr(nodes)})).encode())
    assert isinstance(description, dict)
    assert description["number_of_nodes"] == "5" and description["accelerators_per_node"] == "8"
    assert description["host_processor_model_name"] == "AMD EPYC 7742"
    assert description["host_processor_core_count"] == "64"
    assert "accelerator_model_name" not in description and "host_memory_capacity" not in description
    assert "kinds of node differ in accelerator, sys_mem_size: left missing" in note


def test_a_v06_json_description_with_a_nodes_listing_gains_the_fields_it_lacks() -> None:
    listing = {"division": "open", "interconnect": "InfiniBand EDR 100Gb/s", "number of nodes": "512",
               "nodes": [{"num_nodes": 512, "cpu": "2x Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", "num_cores": 40,
                          "accelerator": "Tesla V100-SXM2-16GB", "num_accelerators": 4, "sys_mem_size": 384}]}
    description, note = decoding.decode_description(json.dumps(listing).encode())
    assert isinstance(description, dict)
    assert description["accelerator_model_name"] == "Tesla V100-SXM2-16GB"
    assert description["accelerators_per_node"] == "4" and description["host_processor_core_count"] == "20"
    assert description["host_networking"] == "InfiniBand EDR 100Gb/s"
    assert "number_of_nodes" not in description  # given already, as "number of nodes"
    assert note.endswith("read from its v0.6 `nodes` listing")


# ------------------------------------------------------------------------------------------- feature values

HOSTILE_FIELDS = {
    "number_of_nodes": "two",
    "accelerators_per_node": "-8",
    "host_memory_capacity": "999999 TB",
    "accelerator_model_name": 12345,
    "host_processor_model_name": ["Xeon", "EPYC"],
    "framework": {"name": "PyTorch"},
    "accelerator_memory_capacity": True,
    "host_processor_core_count": "9" * 5000,
    "accelerator_interconnect": "-400 Gb/s NVLink",
    "host_networking": None,
}


@pytest.mark.parametrize(("fields", "expected_notes"), [
    (HOSTILE_FIELDS, {
        ("number_of_nodes", "two"): "cannot be read as a whole number of nodes: treated as missing",
        ("accelerators_per_node", "-8"): "negative accelerators per node: treated as missing",
        ("host_memory_capacity", "999999 TB"):
            "implausible: 1.024e+09 GiB, outside 1 to 65536: treated as missing",
        ("accelerator_interconnect", "-400 Gb/s NVLink"): "negative Gbit/s: treated as missing",
    }),
    ({"accelerators_per_node": "100000"}, {
        ("accelerators_per_node", "100000"): "implausible: 100000 accelerators per node, outside 1 to 4096: "
                                             "treated as missing"}),
    ({"accelerators_per_node": "0", "number_of_nodes": "0", "host_memory_capacity": "0 GB"}, {
        ("accelerators_per_node", "0"): "zero accelerators per node: treated as missing",
        ("number_of_nodes", "0"): "zero nodes: treated as missing",
        ("host_memory_capacity", "0 GB"): "zero GiB: treated as missing"}),
    ({"host_processors_per_node": "1e400", "number_of_nodes": [2, 2]}, {
        ("host_processors_per_node", "1e400"): "cannot be read as a whole number of processors: treated as missing",
        ("number_of_nodes", "[2, 2]"): "cannot be read as a whole number of nodes: treated as missing"}),
])
def test_wrong_types_and_absurd_values_become_missing_with_a_note(make_archive, fields: dict[str, object],
                                                                  expected_notes: dict[tuple[str, str], str]) -> None:
    files = {**small_round(), SYSTEM: json_dumps_description(fields)}
    tables = ingest_checked([make_archive(files)])
    configurations, notes = build_configurations(tables.systems, tables.results, tables.runs)
    assert len(configurations) == 1 and configurations.iloc[0]["time_to_train_min"] == pytest.approx(12.0)
    found = {(row.field, row.value): row.reason for row in notes.itertuples()}
    assert found == expected_notes
    row = configurations.iloc[0]
    for column in ("n_nodes", "accelerators_per_node", "host_memory_gib"):
        value = row[column]
        assert pd.isna(value) or 1 <= value <= 65536
    assert pd.isna(row["accelerator_count"]) or row["accelerator_count"] > 0


def json_dumps_description(fields: dict[str, object]) -> str:
    description = json.loads(system_json())
    description.update(fields)
    return json.dumps(description)


@pytest.mark.parametrize(("written", "division"), [("close", "closed"), (" Closed ", "closed"), ("OPEN", "open"),
                                                   ("research", "research")])
def test_division_spellings_are_normalised_and_others_kept(make_archive, written: str, division: str) -> None:
    # v1.0 PCL's descriptions say "close": without the fix its results fell out of the closed-division analysis.
    tables = ingest_checked([make_archive({**small_round(), SYSTEM: json_dumps_description({"division": written})})])
    configurations, _ = build_configurations(tables.systems, tables.results, tables.runs)
    assert configurations["division"].tolist() == [division]


def test_a_cpu_only_system_with_zero_accelerators_gets_no_note(make_archive) -> None:
    description = json_dumps_description({"accelerator_model_name": "N/A", "accelerators_per_node": "0",
                                          "accelerator_memory_capacity": "0"})
    tables = ingest_checked([make_archive({**small_round(), SYSTEM: description})])
    configurations, notes = build_configurations(tables.systems, tables.results, tables.runs)
    assert notes.empty
    assert configurations.iloc[0]["accelerator_family"] == "EPYC 7763 (CPU)"
    assert configurations.iloc[0]["accelerator_count"] == 2


def test_features_stage_writes_its_notes(make_archive, tmp_path: Path) -> None:
    files = {**small_round(), SYSTEM: json_dumps_description({"accelerators_per_node": "100000"})}
    ingest_checked([make_archive(files)]).write(tmp_path / "data" / "interim")
    run_stage("features", cwd=tmp_path)
    notes = pd.read_csv(tmp_path / paths.FEATURE_NOTES)
    assert notes.columns.tolist() == NOTE_COLUMNS
    assert notes[["submitter", "system", "field"]].values.tolist() == [["Acme", "box", "accelerators_per_node"]]


def test_features_of_a_round_with_no_score_do_not_crash(make_archive) -> None:
    files = {SYSTEM: system_json(), "Acme/results/box/bert/scaling.json": '{"scaling_factor": 2}'}
    tables = ingest_checked([make_archive(files)])
    configurations, notes = build_configurations(tables.systems, tables.results, tables.runs)
    assert configurations.empty and notes.empty


HOSTILE_VALUES = [
    None, True, 0, -1, 10**5000, 1e308, math.inf, math.nan, [], {}, [8], {"a": 1}, b"8", 3 + 4j, object(),
    "9" * 5000, "9" * 5000 + " GB", "9" * 5000 + "-Core", "2x" + "9" * 5000, "8x" + "9" * 400 + "Gb/s", "-8", "1e400",
    "\x00\xff", "８", "Ⅻ", " ", "999999 TB", "x" * (2 * MIB), "1," + "000," * 2000 + "000 GB", "Node1: 2 TB",
]


def test_parsers_take_any_value_quickly() -> None:
    start = time.perf_counter()
    for value in HOSTILE_VALUES:
        parsers.is_missing(value)
        parsers.parse_count(value)
        parsers.parse_memory_gib(value)
        parsers.parse_accelerator(value, value)
        parsers.parse_host_cpu(value, value, value)
        parsers.parse_interconnect(value)
        parsers.parse_framework(value)
    assert time.perf_counter() - start < 2.0
