"""Nothing escapes and nothing is left half-done: hostile archive members refused with nothing written, no link
followed out of a folder source nor copied by fetch, a failed fetch leaving the previous raw folder, nothing from the
data evaluated or executed, writes atomic (the old output kept, a killed writer's temporary removed), and a missing,
partial or corrupt mirror named in one clear line."""
from __future__ import annotations

import ast
import gzip
import io
import os
import re
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from pipeline.core import files as pipeline_io
from pipeline.core.errors import MirrorError, SourceError
from pipeline.mlperf import fetching, rounds, sources
from tests.conftest import (
    ROOT,
    RoundFiles,
    fetch_settings,
    project_params_with,
    run_log,
    run_stage,
    small_round,
    write_archive,
    write_folder,
)
from tests.e2e.hostile_input import SYSTEM, ingest_checked, reasons_for, run_of, tar_member, write_members

# ---------------------------------------------------------------------------------------------------- safety

def test_hostile_archive_members_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    top = "training_results_v3.0"
    escaped = tmp_path / "escaped.txt"
    hostile = {
        str(escaped): ("archive member has an absolute path: refused, not read", tar_member(str(escaped),
                                                                                              data=b"boo")),
        f"{top}/../../escaped.txt": ("archive member path contains '..': refused, not read",
                                     tar_member(f"{top}/../../escaped.txt", data=b"boo")),
        "Acme/results/box/resnet/result_7.txt": (
            "archive member is a symbolic link: refused, not followed; counted as a non-converged run",
            tar_member(f"{top}/Acme/results/box/resnet/result_7.txt", tarfile.SYMTYPE, "/etc/passwd")),
        "Acme/systems/copy.json": ("archive member is a hard link: refused, not followed",
                                   tar_member(f"{top}/Acme/systems/copy.json", tarfile.LNKTYPE, f"{top}/{SYSTEM}")),
        "Acme/results/box/resnet/console": ("archive member is a device or FIFO: refused, not read",
                                            tar_member(f"{top}/Acme/results/box/resnet/console", tarfile.CHRTYPE)),
        "Acme/results/box/resnet/pipe": ("archive member is a device or FIFO: refused, not read",
                                         tar_member(f"{top}/Acme/results/box/resnet/pipe", tarfile.FIFOTYPE)),
    }
    regular = [tar_member(f"{top}/{name}", data=content.encode()) for name, content in small_round().items()]
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
