"""Real and hostile input: nothing lost (every file is used or quarantined with a reason), nothing crashes, nothing
escapes (no member is extracted, no link followed, nothing evaluated), and clear errors where nothing can be done."""
from __future__ import annotations

import ast
import gzip
import io
import json
import math
import os
import re
import subprocess
import sys
import tarfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipeline.analysis.configurations import build_configurations
from pipeline.core import files as pipeline_io
from pipeline.core import paths
from pipeline.core.errors import MirrorError, SourceError
from pipeline.mlperf import decoding, fetching, rounds, sources
from pipeline.mlperf.hardware import freetext as parsers
from pipeline.mlperf.hardware.description import NOTE_COLUMNS
from pipeline.mlperf.logs import scoring
from pipeline.mlperf.logs.logparse import parse_log
from tests.conftest import (
    MIRROR,
    ROOT,
    RoundFiles,
    assert_accounted,
    fetch_settings,
    mllog,
    project_params_with,
    run_log,
    run_stage,
    small_round,
    system_json,
    write_archive,
    write_folder,
)

LOG = "Acme/results/box/resnet/result_0.txt"
SYSTEM = "Acme/systems/box.json"
MIB = 1 << 20


def ingest_checked(sources_: list[Path]) -> rounds.IngestTables:
    """Ingest and check the accounting, which must hold whatever the input."""
    tables = rounds.ingest(sources_)
    assert_accounted(tables.tally)
    return tables


def reasons_for(tables: rounds.IngestTables, path: str) -> list[str]:
    return tables.quarantine.loc[tables.quarantine["path"] == path, "reason"].tolist()


def note_of(tables: rounds.IngestTables, system: str = "box") -> str:
    return str(tables.systems.set_index("system").loc[system, "ingest_note"])


def run_of(tables: rounds.IngestTables, path: str = LOG) -> pd.Series:
    return tables.runs.set_index("path").loc[path]


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


# ----------------------------------------------------------------------------------------------------- logs

@pytest.mark.parametrize(("log", "status", "reason"), [
    (mllog("run_stop", 5, status="success"), "no run_start", "result log has no run_start line: counted as a "
                                                            "non-converged run"),
    (mllog("run_start", 0), "no run_stop", "result log has no run_stop line: counted as a non-converged run"),
    (run_log(3)[:-25], "no run_stop", "result log has no run_stop line and 1 damaged MLPerf line(s)"),
    (run_log(3) + mllog("eval_accuracy", 9e12, 0.5)[:-9], "success",
     "result log has 1 damaged MLPerf line(s) (not valid JSON, or cut off): those lines were skipped"),
    (bytes(range(256)) * 40, "no MLPerf log lines", "result log has no MLPerf lines"),
    (b"", "no MLPerf log lines", "result log is empty (0 bytes): counted as a non-converged run"),
    (run_log(3).replace("1600000180000", "1e999"), "no run_stop", "1 damaged MLPerf line(s)"),
    (run_log(3).replace('"time_ms": 1600000180000', '"time_ms": [1]'), "no run_stop", "1 damaged"),
    ("\n".join([mllog("run_start", 0), ':::MLLOG {"key": "seed", "value": ' + "[" * 100_000 + "]" * 100_000 + "}",
                mllog("run_stop", 60_000, status="success")]), "success", "1 damaged MLPerf line(s)"),
], ids=["no run_start", "no run_stop", "cut-off run_stop", "cut-off last line", "binary garbage", "zero bytes",
        "infinite time", "time of the wrong type", "nested too deeply"])
def test_defective_logs_count_as_runs_with_a_reason(make_archive, log: str | bytes, status: str,
                                                   reason: str) -> None:
    files = {**small_round(), LOG: log}
    tables = ingest_checked([make_archive(files)])
    run = run_of(tables)
    assert run["status"] == status
    assert any(reason in text for text in reasons_for(tables, LOG)), reasons_for(tables, LOG)
    assert len(tables.runs) == 5 and tables.results.iloc[0]["n_runs"] == 5


def test_an_aborted_run_is_a_result_not_a_defect(make_archive) -> None:
    files = {**small_round(), LOG: run_log(3, status="aborted")}
    tables = ingest_checked([make_archive(files)])
    assert run_of(tables)["status"] == "aborted" and not run_of(tables)["converged"]
    assert reasons_for(tables, LOG) == []
    # the failure is the slowest: drop the fastest converged only, mean of 12, 13 and 14
    assert tables.results.iloc[0]["time_to_train_min"] == pytest.approx(13.0)


@pytest.mark.parametrize("line", [
    b"x" * (20 * MIB),
    (b':::MLLOG {"key": "run_start", "time_ms": 1, "value": null} ' * (20 * MIB // 60)),
    b"0: " + (b'"key": "seed" ' * (20 * MIB // 14)) + mllog("run_start", 0).encode(),
])
def test_a_single_line_of_20_mib_is_read_fast_and_lean(line: bytes) -> None:
    tracemalloc.start()
    start = time.perf_counter()
    facts = parse_log(line)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert not facts.converged
    assert seconds < 3.0, f"{seconds:.1f} s for one line of {len(line) >> 20} MiB"
    assert peak < 4 * len(line), f"{peak >> 20} MiB for a line of {len(line) >> 20} MiB"


def test_a_20_mib_log_in_an_archive_is_ingested(make_archive) -> None:
    tables = ingest_checked([make_archive({**small_round(), LOG: run_log(3) + "y" * (20 * MIB)})])
    assert run_of(tables)["converged"]


def test_an_oversized_file_is_refused_unread(make_archive, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "MAX_FILE_BYTES", 1000)
    files = {**small_round(), LOG: run_log(3) + "z" * 1000}
    for source in (make_archive(files), write_folder(tmp_path / "folder" / "training_results_v3.0", files)):
        tables = ingest_checked([source])
        assert run_of(tables)["status"] == "unreadable"
        [reason] = reasons_for(tables, LOG)
        assert "is larger than" in reason and reason.endswith("refused, not read; counted as a non-converged run")


# ------------------------------------------------------------------------------------------- results folders

def test_too_few_runs_and_no_runs(make_archive) -> None:
    files = small_round()
    for run in (3, 4):
        del files[f"Acme/results/box/resnet/result_{run}.txt"]
    files["Acme/results/box/bert/scaling.json"] = '{"scaling_factor": 1.1}'
    tables = ingest_checked([make_archive(files)])
    results = tables.results.set_index("benchmark")
    assert (results.loc["resnet", "n_runs"], results.loc["resnet", "runs_required"]) == (3, 5)
    assert not results.loc["resnet", "complete"] and results.loc["resnet", "time_to_train_min"] == 11.0
    assert reasons_for(tables, "Acme/results/box/resnet/") == [
        "results folder holds fewer result logs than the rules require: scored from the runs present"]
    assert reasons_for(tables, "Acme/results/box/bert/") == [
        "results folder holds no result logs (the published logs are absent): not scored"]


def test_files_that_are_no_input_are_listed(make_archive) -> None:
    files = small_round()
    extra = {
        "Acme/results/box/resnet/notes.md": "not an input, ignored",
        "Acme/results/box/resnet/.!123!result_4.txt": "hidden or temporary file",
        "Acme/results/result_3.txt": "result log is not at",
    }
    # The repository around the inputs: counted in the tally, not listed.
    repository = ["README.md", "Acme/benchmarks/resnet/implementations/train.py", "Acme/LICENSE"]
    nested = "Acme/results/box/resnet/bert/result_0.txt"
    files.update(dict.fromkeys([*extra, *repository, nested], run_log(2)))
    tables = ingest_checked([make_archive(files)])
    for path, reason in extra.items():
        assert reason in reasons_for(tables, path)[0]
    assert tables.tally.iloc[0]["other_files"] == len(extra)
    assert tables.tally.iloc[0]["repository_files"] == len(repository)
    assert not tables.quarantine["path"].isin(repository).any()
    assert "result log is nested below a benchmark folder" in reasons_for(tables, nested)[0]
    assert reasons_for(tables, "Acme/results/box/resnet/bert/")[0].startswith("unknown benchmark")
    assert tables.results.set_index("benchmark").loc["resnet", "time_to_train_min"] == pytest.approx(12.0)
    nested_result = tables.results.set_index("benchmark").loc["resnet/bert"]
    assert math.isnan(nested_result["time_to_train_min"]) and nested_result["score_note"] == scoring.NESTED_NOTE


def test_any_name_the_summarizer_globs_is_a_run(make_archive) -> None:
    files = small_round()
    for run in range(5):
        del files[f"Acme/results/box/resnet/result_{run}.txt"]
    names = ["result_.txt", "result_a b.txt", "result_x.txt.txt", "result_007.txt", "result_7.txt"]
    files.update({f"Acme/results/box/resnet/{name}": run_log(10.0 + i) for i, name in enumerate(names)})
    tables = ingest_checked([make_archive(files)])
    assert tables.runs["run"].tolist() == ["", "007", "7", "a b", "x.txt"]
    assert tables.results.iloc[0]["time_to_train_min"] == pytest.approx(12.0)


def test_a_path_twice_in_an_archive_is_read_once(tmp_path: Path) -> None:
    top = "training_results_v3.0"
    members = [_tar_member(f"{top}/{name}", data=content.encode()) for name, content in small_round().items()]
    archive = write_members(tmp_path / f"{top}.tar.gz", [*members, _tar_member(f"{top}/{LOG}", data=b"again")])
    tables = ingest_checked([archive])
    assert reasons_for(tables, LOG) == ["archive holds this path more than once: only its first copy is read"]
    assert run_of(tables)["time_to_train_min"] == pytest.approx(10.0)


def _tar_member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", data: bytes = b"") -> tuple[
        tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = kind, link, len(data)
    if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        info.devmajor, info.devminor = 1, 3
    return info, data


def write_members(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    """A .tar.gz of exactly these members, whatever their names and types (tarfile's own `add` would refuse
    or rewrite some of them)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(buffer.getvalue(), mtime=0))
    return path


# ------------------------------------------------------------------------------------------ names and rounds

def test_the_same_system_name_under_two_submitters_is_kept_twice(make_archive) -> None:
    files = small_round()
    files.update({path.replace("Acme", "Bolt"): content for path, content in small_round([1, 2, 3, 4, 5]).items()})
    tables = ingest_checked([make_archive(files)])
    keys = set(tables.systems[["submitter", "system"]].itertuples(index=False, name=None))
    assert keys == {("Acme", "box"), ("Bolt", "box")}
    notes = tables.systems.set_index("submitter")["ingest_note"]
    assert notes["Acme"] == "system name also used by Bolt: kept apart by submitter"
    assert notes["Bolt"] == "system name also used by Acme: kept apart by submitter"
    assert tables.results.set_index("submitter")["time_to_train_min"].to_dict() == {"Acme": 12.0, "Bolt": 3.0}


def test_an_unknown_benchmark_is_scored_but_not_analysed(make_archive) -> None:
    files = small_round()
    files.update({path.replace("/resnet/", "/quantum_chess/"): log for path, log in small_round().items()
                  if "/resnet/" in path})
    tables = ingest_checked([make_archive(files)])
    unknown = tables.results.set_index("benchmark").loc["quantum_chess"]
    assert unknown["benchmark_id"] is None or pd.isna(unknown["benchmark_id"])
    [reason] = reasons_for(tables, "Acme/results/box/quantum_chess/")
    assert reason.startswith("unknown benchmark") and reason.endswith("not analysed")
    configurations, _ = build_configurations(tables.systems, tables.results, tables.runs)
    assert configurations["benchmark_folder"].tolist() == ["resnet"]


@pytest.mark.parametrize("name", ["training_results_latest.tar.gz", "results_v3.0.tar.gz", "training_results_v3.zip"])
def test_a_source_with_an_unexpected_name_is_refused_with_exit_1(tmp_path: Path, name: str) -> None:
    source = write_archive(tmp_path / name, small_round(), top="training_results_v3.0")
    done = run_stage("ingest", str(source), "--out", str(tmp_path / "out"), cwd=tmp_path, check=False)
    assert done.returncode == 1
    error = done.stderr
    assert error.startswith("error: cannot tell the round of") and "training_results_vX.Y" in error
    assert error.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_an_archive_holding_another_round_folder_is_refused(tmp_path: Path) -> None:
    archive = write_archive(tmp_path / "training_results_v3.0.tar.gz", small_round(), top="training_results_v2.0")
    with pytest.raises(SourceError, match=r"holds a round folder training_results_v2\.0/"):
        rounds.ingest([archive])
    nested = write_folder(tmp_path / "x" / "training_results_v3.0" / "training_results_v3.0", small_round()).parent
    with pytest.raises(SourceError, match=r"holds a round folder training_results_v3\.0/"):
        rounds.ingest([nested])


def test_a_source_without_any_input_is_refused(make_archive) -> None:
    with pytest.raises(SourceError, match=r"holds no system description .* and no result log"):
        rounds.ingest([make_archive({"NVIDIA/benchmarks/resnet/train.py": "x = 1\n"})])


def test_a_missing_source_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        rounds.ingest([tmp_path / "training_results_v3.0.tar.gz"])


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


# ---------------------------------------------------------------------------------------------------- safety

def test_hostile_archive_members_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    top = "training_results_v3.0"
    escaped = tmp_path / "escaped.txt"
    hostile = {
        str(escaped): ("archive member has an absolute path: refused, not read", _tar_member(str(escaped),
                                                                                              data=b"boo")),
        f"{top}/../../escaped.txt": ("archive member path contains '..': refused, not read",
                                     _tar_member(f"{top}/../../escaped.txt", data=b"boo")),
        "Acme/results/box/resnet/result_7.txt": (
            "archive member is a symbolic link: refused, not followed; counted as a non-converged run",
            _tar_member(f"{top}/Acme/results/box/resnet/result_7.txt", tarfile.SYMTYPE, "/etc/passwd")),
        "Acme/systems/copy.json": ("archive member is a hard link: refused, not followed",
                                   _tar_member(f"{top}/Acme/systems/copy.json", tarfile.LNKTYPE, f"{top}/{SYSTEM}")),
        "Acme/results/box/resnet/console": ("archive member is a device or FIFO: refused, not read",
                                            _tar_member(f"{top}/Acme/results/box/resnet/console", tarfile.CHRTYPE)),
        "Acme/results/box/resnet/pipe": ("archive member is a device or FIFO: refused, not read",
                                         _tar_member(f"{top}/Acme/results/box/resnet/pipe", tarfile.FIFOTYPE)),
    }
    regular = [_tar_member(f"{top}/{name}", data=content.encode()) for name, content in small_round().items()]
    archive = write_members(tmp_path / "mirror" / f"{top}.tar.gz",
                            [*regular, *(member for _, member in hostile.values())])
    before = sorted(tmp_path.rglob("*"))

    tables = ingest_checked([archive])
    for path, (reason, _) in hostile.items():
        assert reasons_for(tables, path) == [reason]
    assert run_of(tables, "Acme/results/box/resnet/result_7.txt")["status"] == "unreadable"
    assert tables.tally.iloc[0]["systems_quarantined"] == 1
    assert sorted(tmp_path.rglob("*")) == before and not escaped.exists()


def test_a_folder_source_does_not_follow_links_out(tmp_path: Path) -> None:
    outside = write_folder(tmp_path / "outside", {"secret.txt": "s3cret", "bert/result_0.txt": run_log(1)})
    folder = write_folder(tmp_path / "clone" / "training_results_v3.0", small_round())
    results = folder / "Acme" / "results" / "box"
    (results / "resnet" / "result_7.txt").symlink_to(outside / "secret.txt")
    (results / "bert").symlink_to(outside / "bert", target_is_directory=True)
    os.mkfifo(results / "resnet" / "pipe")
    tables = ingest_checked([folder])
    assert reasons_for(tables, "Acme/results/box/resnet/result_7.txt") == [
        "file is a symbolic link: refused, not followed; counted as a non-converged run"]
    assert reasons_for(tables, "Acme/results/box/bert") == ["folder is a symbolic link: refused, not followed"]
    assert "not a regular file" in reasons_for(tables, "Acme/results/box/resnet/pipe")[0]
    assert set(tables.results["benchmark"]) == {"resnet"}
    assert not tables.runs["path"].str.contains("secret|bert").any()


def test_fetch_copies_no_link_and_writes_only_under_raw(tmp_path: Path, capsys) -> None:
    mirror = tmp_path / "mirror"
    folder = write_folder(mirror / "training_results_v3.1", small_round())
    (folder / "Acme" / "leak.txt").symlink_to("/etc/hostname")
    raw = tmp_path / "project" / "data" / "raw"
    fetching.fetch(fetch_settings(mirror, "file:///nowhere/{round}", "v3.1"), raw)
    copied = {path.relative_to(raw).as_posix() for path in raw.rglob("*")}
    assert "training_results_v3.1/Acme/systems/box.json" in copied
    assert "training_results_v3.1/Acme/leak.txt" not in copied
    assert not any(path.is_symlink() for path in raw.rglob("*"))
    assert {path.name for path in raw.parent.iterdir()} == {"raw"}
    assert "not copied" in capsys.readouterr().err


def test_a_failed_fetch_leaves_the_previous_raw_folder(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    write_archive(mirror / "training_results_v3.0.tar.gz", small_round())
    raw = tmp_path / "data" / "raw"
    fetching.fetch(fetch_settings(mirror, "file:///nowhere/{round}", "v3.0"), raw)
    with pytest.raises(MirrorError):
        fetching.fetch(fetch_settings(mirror, (tmp_path / "none").as_uri() + "/{round}", "v3.0", "v9.9"), raw)
    assert [path.name for path in raw.iterdir()] == ["training_results_v3.0.tar.gz"]
    assert {path.name for path in raw.parent.iterdir()} == {"raw"}


PROHIBITED_CALLS = {"eval", "exec", "compile", "__import__"}
PROHIBITED_ATTRIBUTES = {("pickle", "load"), ("pickle", "loads"), ("marshal", "loads"), ("yaml", "load"),
                         ("os", "system"), ("os", "popen"), ("subprocess", "getoutput")}


def test_nothing_from_the_data_is_evaluated_or_executed() -> None:
    offences = []
    for module in sorted((ROOT / "pipeline").glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            function = node.func
            if isinstance(function, ast.Name) and function.id in PROHIBITED_CALLS:
                offences.append(f"{module.name}:{node.lineno} {function.id}()")
            if (isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name)
                    and (function.value.id, function.attr) in PROHIBITED_ATTRIBUTES):
                offences.append(f"{module.name}:{node.lineno} {function.value.id}.{function.attr}()")
            if any(keyword.arg == "shell" and not (isinstance(keyword.value, ast.Constant)
                                                   and keyword.value.value is False) for keyword in node.keywords):
                offences.append(f"{module.name}:{node.lineno} shell=")
    assert not offences


# ------------------------------------------------------------------------------------- atomic writes

def test_a_failed_write_leaves_the_old_output_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out" / "table.csv"
    pipeline_io.write_text("old\n", target)
    with pytest.raises(RuntimeError), pipeline_io.atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old\n"
    assert [path.name for path in target.parent.iterdir()] == ["table.csv"]


def test_a_failed_folder_swap_leaves_the_old_folders_and_no_folder_it_made(tmp_path: Path) -> None:
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "old.json").write_text("old")
    with pytest.raises(RuntimeError), pipeline_io.atomic_dirs(tmp_path / "kept", tmp_path / "new" / "sub" / "out") \
            as (kept, made):
        (kept / "half.json").write_text("half")
        raise RuntimeError("a mistake in params.yaml")
    assert sorted(path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*")) == ["kept", "kept/old.json"]
    with pipeline_io.atomic_dirs(tmp_path / "new" / "sub" / "out") as (made,):
        (made / "whole.json").write_text("whole")
    assert (tmp_path / "new" / "sub" / "out" / "whole.json").read_text() == "whole"


def test_a_temporary_left_by_a_killed_writer_is_removed_by_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "table.csv"
    code = ("import os, signal, sys\nfrom pipeline.core.files import atomic_path\n"
            f"with atomic_path({str(target)!r}) as tmp:\n"
            "    tmp.write_text('half')\n    os.kill(os.getpid(), signal.SIGKILL)\n")
    killed = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=False)
    assert killed.returncode == -9
    [left] = list(tmp_path.iterdir())
    assert left.name.startswith(".table.csv.") and left.name.endswith(".tmp") and not target.exists()
    pipeline_io.write_text("whole\n", target)
    assert [path.name for path in tmp_path.iterdir()] == ["table.csv"]


# ------------------------------------------------------------------------------ missing, partial, corrupt mirror

def _run_fetch(project: Path, mirror: Path, upstream: str) -> tuple[int, str]:
    (project / "params.yaml").write_text(yaml.safe_dump(
        project_params_with("fetch", {"mirror": str(mirror), "rounds": ["v3.0"], "upstream": upstream})))
    done = run_stage("fetch", cwd=project, check=False)
    return done.returncode, done.stderr


def test_a_missing_mirror_is_named_and_upstream_is_tried(tmp_path: Path) -> None:
    """A fetch.mirror that does not exist is named, and the rounds are cloned from upstream (here unreachable)."""
    mirror = tmp_path / "no-mirror"
    code, error = _run_fetch(tmp_path, mirror, "file:///nowhere/{round}")
    assert code == 1 and "Traceback" not in error
    assert error.startswith(f"fetch.mirror {mirror} does not exist, so rounds are cloned from") and "null" in error
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").iterdir())


def test_a_round_missing_from_the_mirror_and_no_network_give_one_clear_line(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    upstream = (tmp_path / "nowhere").as_uri() + "/training_results_{round}"
    code, error = _run_fetch(tmp_path, mirror, upstream)
    assert code == 1
    lines = error.splitlines()
    assert lines[0].startswith("fetch: round v3.0: the mirror") and "about 21 MB" in lines[0]  # announced first
    assert lines[1].startswith("error: round v3.0: it is not in the mirror") and len(lines) == 2
    assert str(mirror) in lines[1] and "training_results_v3.0.tar.gz" in lines[1]
    assert upstream.format(round="v3.0") in lines[1] and "fetch.mirror" in lines[1]


def test_a_corrupt_archive_in_a_mirror_with_checksums_fails_in_fetch(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    archive = write_archive(mirror / "training_results_v3.0.tar.gz", small_round())
    (mirror / "SHA256SUMS").write_text(f"{'0' * 64}  {archive.name}\n")
    code, error = _run_fetch(tmp_path, mirror, "file:///nowhere/{round}")
    assert code == 1 and error.count("\n") == 1
    assert error.startswith(f"error: {archive} does not match its checksum in {mirror / 'SHA256SUMS'}")


@pytest.mark.parametrize("damage", [
    lambda data: data[: len(data) // 2],                       # cut off in the middle
    lambda data: data[:-6],                                    # only the checksum trailer is missing
    lambda data: data[:200] + bytes([data[200] ^ 0xFF]) + data[201:],  # one flipped bit of compressed data
    lambda data: b"",                                          # empty
    lambda data: b"<html>Not Found</html>",                    # an error page saved as the archive
])
def test_a_truncated_or_corrupt_archive_is_a_clear_source_error(make_archive, tmp_path: Path,
                                                               damage: Callable[[bytes], bytes]) -> None:
    files: RoundFiles = small_round() | {f"Acme/results/box/bert/result_{i}.txt": run_log(5 + i) * 30
                                         for i in range(10)}
    archive = make_archive(files)
    archive.write_bytes(damage(archive.read_bytes()))
    with pytest.raises(SourceError, match=f"{re.escape(str(archive))} is not a readable .tar.gz archive .*: "
                                          "download it again"):
        rounds.ingest([archive])
    done = run_stage("ingest", str(archive), "--out", str(tmp_path / "out"), cwd=tmp_path, check=False)
    error = done.stderr
    assert done.returncode == 1 and error.startswith(f"error: {archive}") and error.count("\n") == 1


def test_the_archive_stream_seeks_forward_only() -> None:
    data = bytes(range(256)) * 4096
    stream = sources.CheckedGzip(io.BytesIO(gzip.compress(data[:500_000]) + gzip.compress(data[500_000:])))
    assert stream.read(10) == data[:10] and stream.tell() == 10
    assert stream.seek(600_000) == 600_000  # skips, across the two gzip members
    assert stream.read(5) == data[600_000:600_005] and stream.tell() == 600_005
    with pytest.raises(io.UnsupportedOperation, match="forward only"):
        stream.seek(0)
    assert stream.seek(10 * len(data)) == len(data)  # past the end: stops at the end
    assert stream.read(1) == b""


# --------------------------------------------------------------------------------------- the real mirror

REAL_ROUNDS = ("v0.6", "v0.7", "v1.0", "v1.1", "v2.1", "v4.0", "v5.0", "v5.1")


@pytest.fixture(scope="module")
def real() -> rounds.IngestTables:
    archives = [MIRROR / f"training_results_{round_}.tar.gz" for round_ in REAL_ROUNDS]
    if not all(archive.is_file() for archive in archives):
        pytest.skip(f"the MLPerf mirror is not at {MIRROR}")
    return ingest_checked(archives)


def _reason(tables: rounds.IngestTables, round_: str, path: str) -> list[str]:
    quarantine = tables.quarantine
    return quarantine.loc[(quarantine["round"] == round_) & (quarantine["path"] == path), "reason"].tolist()


@pytest.mark.parametrize(("round_", "path", "reason"), [
    ("v0.6", "Alibaba/results/sinian/resnet/result_1.txt", "result log is empty (0 bytes)"),
    ("v0.6", "NVIDIA/results/dgx1_ngc19.05_tensorflow/minigo/result_0.txt", "result log has no run_stop line"),
    ("v0.6", "Intel/results/clx-9282-2s-x1/", "system description has no results folder"),
    ("v0.7", "Alibaba/systems/v100-256.json", "results folder has no usable system description"),
    ("v0.7", "Alibaba/results/v100-256/result_1.txt", "result log sits in the system folder"),
    ("v0.7", "Alibaba/results/n1_A100/", "system description has no results folder"),
    ("v1.0", "Dell/results/XE8545x4A100-SXM-80GB/bert/",
     "results folder holds fewer result logs than the rules require: not scored"),
    ("v1.0", "Supermicro/results/as-4142gs-tnr/unet3d/",
     "results folder holds fewer result logs than the rules require: scored from the runs present"),
    ("v1.0", "Supermicro/results/as-4142gs-tnr/unet3d/result_2.txt", "result log has no run_stop line"),
    ("v1.0", "Habana/results/SYS-420GH-TNGR/resnet/bert/result_0.txt",
     "result log is nested below a benchmark folder"),
    ("v1.1", "Azure/results/nd96amsr_a100_v4_ngc21.09_pytorch/maskrcnn/.!65506!result_4.txt",
     "hidden or temporary file"),
    ("v2.1", "Azure-HazyResearch/results/ND96amsr_A100_v4_n8_pytorch/bert/",
     "results folder holds no result logs (the published logs are absent): not scored"),
    ("v2.1", "ASUSTeK/results/ESCN4A-E11/dlrm/result_2.txt", "result log has no run_start line"),
    # The mirror holds every published result log of v4.0, v4.1 and v5.0 (job-named ones included); this
    # folder's logs were never published.
    ("v4.0", "JuniperNetworks/results/h100_n4_ngc23.09_merlin_hugectr/dlrm_dcnv2/",
     "results folder holds no result logs"),
    ("v5.1", "Dell/results/1xXE9680Lx8H200-SXM-141GB/rgat/result_7.txt", "result log has no run_stop line"),
    ("v5.1", "Dell/results/1xXE7745x8H200-NVL-141GB/", "system description has no results folder"),
])
def test_real_defects_are_quarantined_with_their_reason(real: rounds.IngestTables, round_: str, path: str,
                                                        reason: str) -> None:
    assert any(reason in text for text in _reason(real, round_, path)), _reason(real, round_, path)


@pytest.mark.parametrize(("round_", "submitter", "system", "note"), [
    ("v0.7", "Alibaba", "n32_pai_eflops", "repaired: trailing commas removed"),
    ("v1.0", "GIGABYTE", "G492-ZD2_A100_20210517.tensorflow", "accelerator_model_name given twice"),
    ("v2.1", "Azure", "ND96amsr_A100_v4_n16_pytorch", "system name also used by Azure-HazyResearch"),
    ("v4.0", "smc-ac-power", "1xSMC-H100-SXM-80GB", "system name also used by smc, smc-dc-power"),
    ("v5.0", "Dell", "1xXE9680Lx8H200-SXM-141GB", "accelerator_interconnect"),
])
def test_real_repairs_are_noted(real: rounds.IngestTables, round_: str, submitter: str, system: str,
                                note: str) -> None:
    notes = real.systems.set_index(["round", "submitter", "system"])["ingest_note"]
    assert note in notes[round_, submitter, system]


def test_real_v06_descriptions_are_all_read_and_give_hardware(real: rounds.IngestTables) -> None:
    systems = real.systems[real.systems["round"] == "v0.6"]
    assert real.tally.set_index("round").loc["v0.6", "systems_quarantined"] == 0
    line_form = systems[systems["ingest_note"].str.contains("line form", na=False)]
    assert len(line_form) == 22 and set(line_form["submitter"]) == {"NVIDIA"}
    configurations, _ = build_configurations(real.systems, real.results, real.runs)
    v06 = configurations[configurations["round"] == "v0.6"]
    assert len(v06) == 58  # every scored v0.6 result (Alibaba's has no description and no score)
    assert v06["accelerator_family"].notna().all() and v06["accelerator_count"].notna().all()
    nvidia = v06.set_index(["system", "benchmark"]).loc[("dgx2h_n96_ngc19.05_mxnet", "resnet")]
    assert (nvidia["accelerator_family"], nvidia["accelerator_count"], nvidia["n_nodes"]) == ("V100", 1536, 96)


def test_real_free_text_values_are_read_or_noted(real: rounds.IngestTables) -> None:
    configurations, notes = build_configurations(real.systems, real.results, real.runs)
    assert configurations["accelerator_count"].notna().mean() > 0.95
    assert configurations["host_memory_gib"].notna().mean() > 0.9
    heterogeneous = notes.set_index(["round", "system", "field"]).loc[
        ("v5.0", "AS-4126GS-NBR-LCC_N2", "host_memory_capacity")]
    assert heterogeneous["reason"].startswith("heterogeneous nodes")
    assert (real.tally["other_files"] <= real.tally["quarantined"]).all()


def test_real_job_named_logs_are_scored(real: rounds.IngestTables) -> None:
    """v4.0 Sustainable Metal Cloud names its logs after the job; the mirror holds them all, so the folder the
    old mirror left empty is scored from its runs."""
    results = real.results.set_index(["round", "submitter", "system", "benchmark"])
    resnet = results.loc[("v4.0", "smc", "1xSMC-H100-SXM-80GB", "resnet")]
    assert resnet["n_runs"] >= 5 and resnet["time_to_train_min"] > 0
    assert real.tally.set_index("round").loc["v4.0", ["log_files", "results"]].tolist() == [2418, 203]
