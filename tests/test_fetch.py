"""Fetch from a mirror, from a (local, bare) upstream git repository, and the error when neither has a round."""
from __future__ import annotations

import subprocess
import tarfile
from pathlib import Path

import pytest

from pipeline.core.errors import MirrorError
from pipeline.mlperf import rounds
from pipeline.stages import fetch
from tests.conftest import fetch_settings, small_round, write_archive, write_folder


def _git(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def upstream(tmp_path: Path) -> str:
    """A bare repository laid out like github.com/mlcommons/training_results_v3.0, plus code we must not fetch."""
    work = write_folder(tmp_path / "upstream-work", {**small_round(), "Acme/benchmarks/resnet/train.py": "x = 1\n"})
    _git("init", "-q", "-b", "main", str(work))
    _git("-c", "user.name=t", "-c", "user.email=t@t", "add", ".", cwd=work)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "results", cwd=work)
    bare = tmp_path / "remote" / "training_results_v3.0.git"
    _git("clone", "-q", "--bare", str(work), str(bare))
    _git("config", "uploadpack.allowFilter", "true", cwd=bare)
    return (tmp_path / "remote").as_uri() + "/training_results_{round}.git"


def test_mirror_archive_and_folder_are_copied(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    write_archive(mirror / "training_results_v3.0.tar.gz", small_round())
    write_folder(mirror / "training_results_v3.1", small_round())
    paths = fetch.fetch(fetch_settings(mirror, "file:///nowhere/{round}", "v3.0", "v3.1"), tmp_path / "raw")
    assert [path.name for path in paths] == ["training_results_v3.0.tar.gz", "training_results_v3.1"]
    assert (tmp_path / "raw" / "training_results_v3.1" / "Acme" / "systems" / "box.json").is_file()


def test_round_missing_from_mirror_is_cloned_sparse_and_packed(tmp_path: Path, upstream: str) -> None:
    (tmp_path / "mirror").mkdir()
    [path] = fetch.fetch(fetch_settings(tmp_path / "mirror", upstream, "v3.0"), tmp_path / "raw")
    assert path == tmp_path / "raw" / "training_results_v3.0.tar.gz"
    with tarfile.open(path) as archive:
        names = archive.getnames()
    assert "training_results_v3.0/Acme/results/box/resnet/result_0.txt" in names
    assert not any("/benchmarks/" in name for name in names), "sparse checkout keeps only systems/ and results/"
    assert not any("/.git" in name for name in names)
    scores = rounds.ingest([path]).results["time_to_train_min"].tolist()
    assert scores == pytest.approx([12.0])


def test_no_mirror_at_all_clones_every_round(tmp_path: Path, upstream: str) -> None:
    [path] = fetch.fetch(fetch_settings(tmp_path / "no-such-mirror", upstream, "v3.0"), tmp_path / "raw")
    assert path.name == "training_results_v3.0.tar.gz" and path.is_file()


def test_a_packed_clone_is_the_same_bytes_every_time(tmp_path: Path, upstream: str) -> None:
    settings = fetch_settings(tmp_path / "no-such-mirror", upstream, "v3.0")
    first = fetch.fetch(settings, tmp_path / "raw1")[0].read_bytes()
    second = fetch.fetch(settings, tmp_path / "raw2")[0].read_bytes()
    assert first == second


def test_help_runs_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        fetch.main(["--help"])
    assert exit_.value.code == 0 and "fetch.rounds" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


def test_unreachable_round_names_round_mirror_and_url(tmp_path: Path) -> None:
    (tmp_path / "mirror").mkdir()
    with pytest.raises(MirrorError) as error:
        fetch.fetch(fetch_settings(tmp_path / "mirror", (tmp_path / "none").as_uri() + "/{round}", "v9.9"),
                    tmp_path / "raw")
    message = str(error.value)
    assert "v9.9" in message and str(tmp_path / "mirror") in message and "none/v9.9" in message
