"""Fetch from a mirror, from a (local, bare) upstream git repository, and the error when neither has a round."""
from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from pipeline.core.errors import MirrorError
from pipeline.mlperf import fetching as fetch
from pipeline.mlperf import rounds
from pipeline.settings import FetchSettings
from tests.conftest import bare_upstream, fetch_settings, small_round, write_archive, write_folder


@pytest.fixture
def upstream(tmp_path: Path) -> str:
    """A bare repository laid out like github.com/mlcommons/training_results_v3.0, plus code we must not fetch."""
    work = write_folder(tmp_path / "upstream-work", {
        **small_round(), "Acme/benchmarks/resnet/train.py": "x = 1\n",
        "Acme/benchmarks/resnet/implementations/mxnet/config_DGXA100.sh": "export DGXNNODES=1\n",
        "Acme/benchmarks/resnet/implementations/mxnet/run.sub": "srun\n"})
    return bare_upstream(work, tmp_path / "remote", "v3.0")


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
    # sparse checkout keeps systems/, results/ and the launch configurations, not the code
    assert [name for name in names if "/benchmarks/" in name] == [
        "training_results_v3.0/Acme/benchmarks/resnet/implementations/mxnet/config_DGXA100.sh"]
    assert not any("/.git" in name for name in names)
    scores = rounds.ingest([path]).results["time_to_train_min"].tolist()
    assert scores == pytest.approx([12.0])


def no_mirror(upstream: str, *rounds_: str) -> FetchSettings:
    return FetchSettings(mirror=None, upstream=upstream, rounds=list(rounds_))


def test_no_mirror_at_all_clones_every_round_and_says_why(tmp_path: Path, upstream: str, capsys) -> None:
    [path] = fetch.fetch(no_mirror(upstream, "v3.0"), tmp_path / "raw")
    assert path.name == "training_results_v3.0.tar.gz" and path.is_file()
    announced = capsys.readouterr().err
    assert "round v3.0: there is no mirror (fetch.mirror: null)" in announced and "about 21 MB" in announced


def test_a_missing_mirror_falls_back_to_upstream_and_says_so(tmp_path: Path, upstream: str, capsys) -> None:
    [path] = fetch.fetch(fetch_settings(tmp_path / "no-such-mirror", upstream, "v3.0"), tmp_path / "raw")
    assert path.is_file()
    assert "no-such-mirror does not exist, so rounds are cloned from" in capsys.readouterr().err


def test_a_mirror_that_is_a_file_clones_nothing(tmp_path: Path, upstream: str) -> None:
    (tmp_path / "mirror").write_text("not a folder")
    with pytest.raises(MirrorError, match=r"fetch.mirror .*mirror is not a folder.* null"):
        fetch.fetch(fetch_settings(tmp_path / "mirror", upstream, "v3.0"), tmp_path / "raw")
    assert not (tmp_path / "raw").exists()


def test_a_truncated_archive_is_named_before_anything_is_fetched(tmp_path: Path) -> None:
    """No SHA256SUMS: the archive is read to its end, and the message names the mirror's file."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    archive = write_archive(mirror / "training_results_v3.0.tar.gz", small_round())
    archive.write_bytes(archive.read_bytes()[:-200])
    sources = fetch.plan(str(mirror), "file:///nowhere/{round}", ["v3.0"])
    with pytest.raises(MirrorError, match=rf"{archive} \(\d+ bytes\) is not a readable \.tar\.gz \(cut off"):
        fetch.mirror_listing(sources, tmp_path / "hashes.json")
    assert not (tmp_path / "hashes.json").exists()


def test_archives_checked_side_by_side_still_name_the_bad_one(tmp_path: Path) -> None:
    """Several archives are read in worker processes: the one cut off is named all the same, nothing is cached,
    and the good ones' listing is unchanged once it is replaced."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    write_archive(mirror / "training_results_v3.0.tar.gz", small_round())
    bad = write_archive(mirror / "training_results_v3.1.tar.gz", {**small_round(), "Acme/systems/other.json": "{}"})
    good_bytes = bad.read_bytes()
    bad.write_bytes(good_bytes[:-200])
    sources = fetch.plan(str(mirror), "file:///nowhere/{round}", ["v3.0", "v3.1"])
    with pytest.raises(MirrorError, match=rf"{bad} \(\d+ bytes\) is not a readable \.tar\.gz"):
        fetch.mirror_listing(sources, tmp_path / "hashes.json")
    assert not (tmp_path / "hashes.json").exists()
    bad.write_bytes(good_bytes)
    listing = fetch.mirror_listing(sources, tmp_path / "hashes.json")
    assert [entry["round"] for entry in listing] == ["v3.0", "v3.1"]
    assert [entry["sha256"] for entry in listing] == [fetch._sha256(mirror / "training_results_v3.0.tar.gz"),
                                                      fetch._sha256(bad)]


def test_a_checksum_mismatch_is_found_by_the_listing(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    write_archive(mirror / "training_results_v3.0.tar.gz", small_round())
    (mirror / "SHA256SUMS").write_text(f"{'0' * 64}  training_results_v3.0.tar.gz\n")
    sources = fetch.plan(str(mirror), "file:///nowhere/{round}", ["v3.0"])
    with pytest.raises(MirrorError, match="does not match its checksum"):
        fetch.mirror_listing(sources, tmp_path / "hashes.json")


def test_a_packed_clone_is_the_same_bytes_every_time(tmp_path: Path, upstream: str) -> None:
    settings = no_mirror(upstream, "v3.0")
    first = fetch.fetch(settings, tmp_path / "raw1")[0].read_bytes()
    second = fetch.fetch(settings, tmp_path / "raw2")[0].read_bytes()
    assert first == second


def test_unreachable_round_names_round_mirror_and_url(tmp_path: Path) -> None:
    (tmp_path / "mirror").mkdir()
    with pytest.raises(MirrorError) as error:
        fetch.fetch(fetch_settings(tmp_path / "mirror", (tmp_path / "none").as_uri() + "/{round}", "v9.9"),
                    tmp_path / "raw")
    message = str(error.value)
    assert "v9.9" in message and str(tmp_path / "mirror") in message and "none/v9.9" in message


def test_the_listing_is_by_content_and_sees_a_replaced_archive(tmp_path: Path, upstream: str) -> None:
    """The fetch stage depends on this listing: touching an archive changes nothing, replacing it changes it,
    and the archive's hash is read once per size and time."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    archive = write_archive(mirror / "training_results_v3.0.tar.gz", small_round())
    hashes = tmp_path / "hashes.json"
    sources = fetch.plan(str(mirror), upstream, ["v3.0", "v3.1"])
    first = fetch.mirror_listing(sources, hashes)
    assert first[0]["sha256"] == fetch._sha256(archive) and first[1] == {"round": "v3.1",
                                                                         "clone": upstream.format(round="v3.1")}
    archive.touch()
    assert fetch.mirror_listing(sources, hashes) == first
    write_archive(archive, {**small_round(), "Acme/systems/other.json": "{}"})
    assert fetch.mirror_listing(sources, hashes)[0]["sha256"] != first[0]["sha256"]


def test_a_round_to_clone_that_cannot_be_reached_is_found_before_anything_is_fetched(tmp_path: Path) -> None:
    [source] = fetch.plan(None, (tmp_path / "none").as_uri() + "/{round}", ["v9.9"])
    with pytest.raises(MirrorError, match=r"round v9\.9: there is no mirror, and .*none/v9\.9 cannot be reached"):
        fetch.check_reachable(source, None)
