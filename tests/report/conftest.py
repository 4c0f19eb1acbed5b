"""The fixture site of tests/report/fixture_site.py, rendered once per test session: every page and asset
(`pages`), the same with the configurations' energy columns (`energy_pages`), and every page joined (`page`)."""
from __future__ import annotations

import pytest

from tests.report.fixture_site import render_fixture_site


@pytest.fixture(scope="session")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return render_fixture_site(tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="session")
def energy_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The fixture site with the configurations' energy columns."""
    return render_fixture_site(tmp_path_factory.mktemp("energy"), energy=True)


@pytest.fixture(scope="session")
def page(pages: dict[str, str]) -> str:
    """Every page of the site, one after the other: for checks that hold wherever a thing is shown."""
    return "\n".join(text for name, text in sorted(pages.items()) if name.endswith(".html"))
