"""Where the site comes from and how current it says it is: the input hashes from dvc.lock's fetch and ingest
stages, the commit of the code (not of the dvc.lock committed after it; unknown outside a checkout), the provenance
section, and every page's masthead naming the round analysed, its publication, the prices' dates, the build and its
commit, and a newer round published by the build date. This checkout's real pages and briefs are checked in
test_currency_everywhere.py."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from pipeline.report import provenance, site
from tests.conftest import run_git
from tests.report.fixture_site import DVC_LOCK, PARAMS, page_text


def test_input_hashes_come_from_the_fetch_and_ingest_stages(tmp_path: Path) -> None:
    lock = tmp_path / "dvc.lock"
    lock.write_text(yaml.safe_dump(DVC_LOCK), encoding="utf-8")
    rows = provenance.input_hashes(lock)
    assert [(row["stage"], row["kind"], row["path"]) for row in rows] == [
        ("fetch", "dep", "../shared/mlperf"), ("fetch", "out", "data/raw"), ("ingest", "dep", "data/raw"),
        ("ingest", "out", "data/interim/quarantine.csv")]
    assert rows[0]["md5"] == "625dc9c9cca63ee7ef0aa7c7bf3c1785.dir" and rows[0]["nfiles"] == "12"
    assert provenance.input_hashes(tmp_path / "missing.lock") == []


def test_every_page_s_first_screen_says_how_current_it_is(pages: dict[str, str]) -> None:
    """The round analysed and its publication, the prices' date, the build date and commit, on every page (the
    masthead); the entry also names the round the forecasts are for."""
    from pipeline.analysis.pricing.price_table import price_dates_text

    for name, page in pages.items():
        if not name.endswith(".html"):
            continue
        masthead = page_text(page[:page.index("</header>")])
        assert "Analyses MLPerf Training v3.0, published June 2023;" in masthead, name
        assert f"prices read {price_dates_text()}; built " in masthead and " from commit " in masthead, name
    assert "Forecasts are for v3.1, the round after v3.0." in page_text(pages[site.INDEX])


def test_a_round_published_by_the_build_date_but_not_in_the_data_is_named(tmp_path: Path) -> None:
    """Offline, with no upstream record, the masthead still says a newer round is out when the catalogue's table
    of publication dates has it by the build date (v6.0, June 2026), and says nothing before it."""
    from pipeline.report.currency import currency, newer_catalogued

    assert newer_catalogued("v5.1", "2026-12-06") == {"round": "v6.0", "published": "published June 2026"}
    assert newer_catalogued("v5.1", "2026-05-31") is None and newer_catalogued("v6.0", "2026-12-06") is None
    assert newer_catalogued("v5.1", "unknown") is None
    dates = currency("v5.1", {"commit": "abc", "commit_date": "2026-12-06"}, tmp_path / "no-record.json")
    assert dates["newer_upstream"] is None and dates["newer_catalogued"]["round"] == "v6.0"


def test_the_page_names_the_commit_of_its_code_not_the_lock_committed_after_it(tmp_path: Path) -> None:
    """Committing dvc.lock and the metrics after a run changes no page: the commit named is the last that changed
    the code, params.yaml or dvc.yaml (a clean clone's `dvc repro` then leaves git status clean)."""
    run_git("init", "-q", cwd=tmp_path)
    (tmp_path / "pipeline").mkdir()
    (tmp_path / "pipeline" / "stage.py").write_text("x = 1\n")
    run_git("add", "-A", cwd=tmp_path)
    run_git("commit", "-qm", "code", cwd=tmp_path)
    code = run_git("rev-parse", "HEAD", cwd=tmp_path)
    (tmp_path / "dvc.lock").write_text("stages: {}\n")
    run_git("add", "-A", cwd=tmp_path)
    run_git("commit", "-qm", "lock", cwd=tmp_path)
    assert run_git("rev-parse", "HEAD", cwd=tmp_path) != code and provenance.git_revision(tmp_path)["commit"] == code


def test_git_revision_is_unknown_outside_a_checkout(tmp_path: Path) -> None:
    assert provenance.git_revision(tmp_path) == {"revision": "unknown", "dirty": False, "commit": "unknown",
                                                 "commit_date": "unknown"}
    here = provenance.git_revision(Path(__file__).parent)["revision"]
    assert here == "unknown" or re.fullmatch(r"[0-9a-f]{40}", here)


def test_provenance_renders_revision_hashes_and_params(page: str) -> None:
    shown = page[page.index('id="provenance"'):]
    assert "unknown" in shown and "8fd54aec2896ff4dab2357b3f6e41f5f.dir" in shown
    assert "0" * 32 not in shown  # the features stage is not an input
    for name in PARAMS:
        assert f"<code>{name}</code>" in shown
    assert "k_range: [2, 5]" in shown
