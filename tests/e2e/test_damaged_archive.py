"""A damaged archive in the mirror loses nothing (issue 53): random or zeroed bytes inside it, its gzip CRC
overwritten or its end cut off, with no SHA256SUMS to compare with, and the validate stage, which DVC runs first on
every `dvc repro`, stops with exit status 1 and one line naming the mirror's file (never a worker's traceback),
before the fetch could replace the good copy in data/raw. Ctrl-C during the fetch keeps data/raw, and an output
folder that cannot be written is one line too."""
from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipeline.mlperf import fetching
from tests.conftest import ROOT, fetch_settings, project_params_with, run_stage, small_round, write_archive


def _damaged(data: bytes, how: str) -> bytes:
    """`data` (a .tar.gz) with `how` done to it: random bytes or zeros inside the deflate stream, the gzip trailer's
    CRC zeroed, or its last bytes cut off."""
    middle = len(data) // 2
    if how == "random bytes":
        rng = random.Random(0)
        return data[:middle] + bytes(rng.randrange(256) for _ in range(16)) + data[middle + 16:]
    if how == "zeroed bytes":
        return data[:middle] + bytes(16) + data[middle + 16:]
    if how == "zeroed CRC":
        return data[:-8] + bytes(4) + data[-4:]
    return data[:-10]  # cut off


@pytest.fixture
def damaged_project(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A project whose mirror (no SHA256SUMS) holds a good v3.0 and a damaged v3.1 archive, and whose data/raw
    holds the good copies of both from an earlier fetch."""
    mirror, raw = tmp_path / "mirror", tmp_path / "data" / "raw"
    mirror.mkdir()
    raw.mkdir(parents=True)
    # enough files that the damage falls inside the deflate data, not in the gzip header
    files = {**small_round(), **{f"Acme/results/box/resnet/result_{i}.txt": f"{i}\n" * 400 for i in range(1, 30)}}
    for round_ in ("v3.0", "v3.1"):
        good = write_archive(raw / f"training_results_{round_}.tar.gz", files)
        (mirror / good.name).write_bytes(good.read_bytes())
    bad = mirror / "training_results_v3.1.tar.gz"
    bad.write_bytes(_damaged(bad.read_bytes(), request.param))
    params = project_params_with("fetch", {"mirror": str(mirror), "upstream": "file:///nowhere/{round}",
                                           "rounds": ["v3.0", "v3.1"]})
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    return tmp_path


def _raw(project: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted((project / "data" / "raw").iterdir())}


@pytest.mark.parametrize("damaged_project", ["random bytes", "zeroed bytes", "zeroed CRC", "cut off"],
                         indirect=True)
def test_a_damaged_archive_stops_validate_naming_it_and_loses_nothing(damaged_project: Path) -> None:
    before = _raw(damaged_project)
    done = run_stage("validate", cwd=damaged_project, check=False)
    bad = damaged_project / "mirror" / "training_results_v3.1.tar.gz"
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{bad} ({bad.stat().st_size} bytes) is not a readable .tar.gz" in lines[0]
    assert "training_results_v3.0" not in lines[0]
    assert _raw(damaged_project) == before and not (damaged_project / "data" / "mirror.json").exists()


@pytest.mark.parametrize("how", ["random bytes", "zeroed bytes", "zeroed CRC", "cut off"])
def test_every_damage_is_named_from_the_worker_processes(tmp_path: Path, how: str) -> None:
    """The archives are read side by side in worker processes: the damaged one is named by a MirrorError (the
    decompressor's own exception, which cannot be pickled back, never escapes a worker)."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    files = {**small_round(), **{f"Acme/results/box/resnet/result_{i}.txt": f"{i}\n" * 400 for i in range(1, 30)}}
    write_archive(mirror / "training_results_v3.0.tar.gz", files)
    bad = write_archive(mirror / "training_results_v3.1.tar.gz", files)
    bad.write_bytes(_damaged(bad.read_bytes(), how))
    sources = fetching.plan(str(mirror), "file:///nowhere/{round}", ["v3.0", "v3.1"])
    with pytest.raises(fetching.MirrorError, match=rf"{bad} \(\d+ bytes\) is not a readable \.tar\.gz"):
        fetching.mirror_listing(sources, tmp_path / "hashes.json")


def test_ctrl_c_during_the_fetch_keeps_data_raw(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C after the first round is copied: data/raw keeps every previous file and no temporary is left; and
    DVC does not delete data/raw before the stage runs (dvc.yaml: persist)."""
    mirror, raw = tmp_path / "mirror", tmp_path / "raw"
    mirror.mkdir()
    raw.mkdir()
    for round_ in ("v3.0", "v3.1"):
        write_archive(mirror / f"training_results_{round_}.tar.gz", small_round())
    (raw / "training_results_v3.0.tar.gz").write_bytes(b"the previous copy")
    copy = fetching._copy_from_mirror
    copied: list[Path] = []

    def copy_then_interrupt(found: Path, raw_dir: Path, url: str) -> Path:
        if copied:
            raise KeyboardInterrupt
        copied.append(copy(found, raw_dir, url))
        return copied[-1]

    monkeypatch.setattr(fetching, "_copy_from_mirror", copy_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        fetching.fetch(fetch_settings(mirror, "file:///nowhere/{round}", "v3.0", "v3.1"), raw)
    assert [path.name for path in tmp_path.iterdir() if path.name != "mirror"] == ["raw"]
    assert {path.name: path.read_bytes() for path in raw.iterdir()} == {"training_results_v3.0.tar.gz":
                                                                        b"the previous copy"}
    stage = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]["fetch"]
    assert stage["outs"] == [{"data/raw": {"persist": True}}]


def test_an_output_folder_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    """reports/ is a file where the stage writes a folder (root writes into a read-only folder, so that is how this
    test, run as root in CI, gets one that cannot be written): one line naming it, exit status 1."""
    (tmp_path / "reports").write_text("not a folder")
    done = subprocess.run([sys.executable, "-m", "pipeline.stages.assets"], cwd=tmp_path, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "reports" in done.stderr and "Traceback" not in done.stderr
    assert (tmp_path / "reports").read_text() == "not a folder"
