"""`dvc repro` in a fresh copy of the project with no mirror beside it: the round is cloned from a local bare
repository standing in for github.com/mlcommons, built from the real v0.7 round."""
from __future__ import annotations

import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, bare_upstream, run_dvc, run_dvc_repro, run_git


def _bare_upstream(tmp_path: Path, archive: Path) -> str:
    """A bare repository holding the archive's round, as `training_results_<round>.git`; returns the URL pattern."""
    work = tmp_path / "upstream-work"
    with tarfile.open(archive) as tar:
        tar.extractall(work, filter="data")
    [round_folder] = list(work.iterdir())
    (round_folder / "README.md").write_text("benchmark code and documentation that fetch must leave behind\n")
    return bare_upstream(round_folder, tmp_path / "remote", round_folder.name.removeprefix("training_results_"))


def _project_copy(target: Path) -> Path:
    """The project's tracked files, as a fresh clone has them, without the committed dvc.lock."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file() and name != "dvc.lock":
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target / name)
    run_git("init", "-q", "-b", "main", str(target))
    return target


@pytest.mark.parametrize("override", ["cluster.k=6", "importance.seed=1", "report.prices=examples/prices.yaml",
                                      "decide.trust.coverage=[0.8,0.9]"])
def test_dvc_exp_run_set_param_changes_only_that_line(tmp_path: Path, override: str) -> None:
    """params.yaml is written as DVC writes it (`dvc exp run -S key=value` applies the override with this same
    function): block lists, comments before keys or at the end of a line, empty for null. Changing one value
    then changes one line, and keeps every comment."""
    from dvc.utils.hydra import apply_overrides

    copy = tmp_path / "params.yaml"
    shutil.copyfile(ROOT / "params.yaml", copy)
    apply_overrides(copy, [override])
    before, after = (ROOT / "params.yaml").read_text().splitlines(), copy.read_text().splitlines()
    changed = [(old, new) for old, new in zip(before, after, strict=True) if old != new]
    key, value = override.split("=")
    assert len(changed) == (2 if value.startswith("[") else 1), changed
    assert all(key.split(".")[-1] in new or new.lstrip().startswith("- ") for _, new in changed)


@pytest.mark.slow
def test_dvc_repro_without_a_mirror_clones_and_builds_the_report(tmp_path: Path, mirror: Path) -> None:
    upstream = _bare_upstream(tmp_path, mirror / "training_results_v0.7.tar.gz")
    project = _project_copy(tmp_path / "project")
    params = yaml.safe_load((project / "params.yaml").read_text())
    params["fetch"].update(mirror=None, rounds=["v0.7"], upstream=upstream)
    params["analysis"].update(benchmarks=["resnet", "bert"], min_configurations=8)
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))

    repro = run_dvc_repro(project, timeout=1200)

    assert repro.returncode == 0, repro.stdout[-3000:] + repro.stderr[-3000:]
    raw = project / "data" / "raw"
    assert [path.name for path in raw.iterdir()] == ["training_results_v0.7.tar.gz"]
    with tarfile.open(raw / "training_results_v0.7.tar.gz") as archive:
        assert not any(name.endswith("README.md") for name in archive.getnames())
    html = (project / "reports" / "index.html").read_text()  # the site's entry links each benchmark's page
    assert 'href="benchmarks/resnet.html"' in html and 'href="benchmarks/bert.html"' in html
    assert (project / "reports" / "benchmarks" / "resnet.html").is_file()
    status = run_dvc("status", cwd=project)
    # validate runs on every repro (DVC lists it as "always changed"); nothing else is out of date
    stale = [line for line in status.stdout.splitlines() if "changed" in line and "always changed" not in line]
    assert status.returncode == 0 and stale == [], status.stdout
    assert sorted(path.name for path in (project / "reports" / "metrics").iterdir()) == ["bert.json", "resnet.json",
                                                                                   "summary.json"]

    # `dvc pull` into a copy without outputs (as a fresh clone of the committed project) restores the report.
    store = tmp_path / "store"
    for command in (["remote", "add", "-f", "-d", "store", str(store)], ["push", "-q"]):
        done = run_dvc(*command, cwd=project)
        assert done.returncode == 0, done.stdout + done.stderr
    clone = tmp_path / "clone"
    shutil.copytree(project, clone, ignore=shutil.ignore_patterns("data", "cache", "tmp", "index.html", "*.parquet",
                                                                  "importance", "clusters", "rank", "decide",
                                                                  "benchmarks", "assets", "methods.html", "data.html",
                                                                  "ranking.csv", "importance.json", "metrics.json"))
    assert not (clone / "reports" / "index.html").exists()
    pull = run_dvc("pull", "-q", cwd=clone)
    assert pull.returncode == 0, pull.stdout + pull.stderr
    for page in ("index.html", "methods.html", "benchmarks/resnet.html", "assets/vega.js"):
        assert (clone / "reports" / page).read_bytes() == (project / "reports" / page).read_bytes()
