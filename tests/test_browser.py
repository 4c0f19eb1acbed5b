"""The report in a real browser: headless Chromium opens a page built from test_report.py's fixtures and checks
that it renders, that the ranking sorts and filters, that the console stays clean and that it fits a phone.

Skipped where Debian's chromium or chromium-driver is missing. To refresh docs/report.png from the real report
(after `dvc repro`):

    REFRESH_DOCS_SCREENSHOT=1 python -m pytest tests/test_browser.py -k docs
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait
from test_report import HEADLINE, OTHER, SKIPPED, render_fixture_report

from pipeline.analysis import decide

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ROOT = Path(__file__).resolve().parents[1]
DOCS_SCREENSHOT = ROOT / "docs" / "report.png"
DESKTOP, NARROW = (1280, 900), (420, 900)

pytestmark = pytest.mark.browser


def start_browser(profile: Path, size: tuple[int, int] = DESKTOP) -> WebDriver:
    """Headless Chromium with a fresh profile, no background network, and the console log kept."""
    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                     "--disable-dev-shm-usage", f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
                     "--hide-scrollbars"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


def open_page(driver: WebDriver, path: Path) -> None:
    driver.get(path.resolve().as_uri())
    WebDriverWait(driver, 20).until(
        lambda d: d.execute_script("return Array.from(document.images).every(image => image.complete)"))


def screenshot(driver: WebDriver, path: Path, target: Path, size: tuple[int, int]) -> None:
    """The top of the page at `size` (CSS pixels) as a PNG."""
    driver.set_window_size(*size)
    open_page(driver, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(target))


def console_errors(driver: WebDriver) -> list[dict]:
    """SEVERE console entries since the last call (the log is drained as it is read)."""
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip(f"needs {CHROMIUM} and {CHROMEDRIVER} (Debian packages chromium and chromium-driver)")
    browser = start_browser(tmp_path_factory.mktemp("chromium-profile"))
    yield browser
    browser.quit()


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("browser-report")
    path = folder / "index.html"
    path.write_text(render_fixture_report(folder), encoding="utf-8")
    return path


@pytest.fixture
def loaded(driver: WebDriver, page: Path) -> WebDriver:
    driver.set_window_size(*DESKTOP)
    open_page(driver, page)
    return driver


def ranking_column(driver: WebDriver, benchmark: str, column: int, attribute: str = "data-sort") -> list[str]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]), row => row.cells[arguments[1]])"
        ".map(cell => arguments[2] === 'text' ? cell.textContent.trim() : cell.getAttribute(arguments[2]))",
        f"#{benchmark}-table tbody tr", column, attribute)


def header_index(driver: WebDriver, benchmark: str, label: str) -> int:
    headers = driver.find_elements(By.CSS_SELECTOR, f"#{benchmark}-table thead th")
    return next(index for index, header in enumerate(headers) if header.text.rstrip(" ↕▲▼") == label)


def click_header(driver: WebDriver, benchmark: str, index: int) -> None:
    driver.find_elements(By.CSS_SELECTOR, f"#{benchmark}-table thead th button")[index].click()


def test_sections_and_figures_render(loaded: WebDriver) -> None:
    assert loaded.find_element(By.TAG_NAME, "h1").text == "Which hardware trains MLPerf models efficiently?"
    for anchor in ("summary", "findings", HEADLINE, OTHER, SKIPPED, "coverage", "method", "provenance"):
        assert loaded.find_element(By.ID, anchor).is_displayed()
    widths = loaded.execute_script("return Array.from(document.images, image => image.naturalWidth)")
    assert len(widths) == 14 + len(decide.FIGURES) and all(width > 0 for width in widths)
    assert "Not analysed" in loaded.find_element(By.ID, SKIPPED).text
    assert console_errors(loaded) == []


def test_decision_support_tables_fit_and_the_doubling_table_opens(loaded: WebDriver) -> None:
    assert loaded.find_element(By.ID, "decide").is_displayed()
    section = loaded.find_element(By.ID, f"{HEADLINE}-decide-break-even")
    assert section.is_displayed() and loaded.find_element(By.ID, f"{HEADLINE}-decide-trust").is_displayed()
    # Every decision-support table, wrapped headers included, fits a desktop window without scrolling sideways.
    overflowing = loaded.execute_script(
        "return Array.from(document.querySelectorAll('table.decide'), table => table.parentElement)"
        ".filter(wrap => wrap.offsetParent !== null && wrap.scrollWidth > wrap.clientWidth).length")
    assert overflowing == 0
    doubling = loaded.find_element(By.CSS_SELECTOR, f"#{HEADLINE} details")
    assert doubling.get_attribute("open") is None
    doubling.find_element(By.TAG_NAME, "summary").click()
    WebDriverWait(loaded, 5).until(lambda d: doubling.find_element(By.TAG_NAME, "table").is_displayed())
    assert console_errors(loaded) == []


def test_clicking_a_header_sorts_the_ranking(loaded: WebDriver) -> None:
    time_column = header_index(loaded, HEADLINE, "Time to train (min, lower is better)")
    by_rank = [float(value) for value in ranking_column(loaded, HEADLINE, time_column)]
    assert by_rank != sorted(by_rank)  # the page opens ranked by score, not by time

    click_header(loaded, HEADLINE, time_column)
    ascending = [float(value) for value in ranking_column(loaded, HEADLINE, time_column)]
    assert ascending == sorted(by_rank)
    click_header(loaded, HEADLINE, time_column)
    assert [float(value) for value in ranking_column(loaded, HEADLINE, time_column)] == sorted(by_rank, reverse=True)
    header = loaded.find_elements(By.CSS_SELECTOR, f"#{HEADLINE}-table thead th")[time_column]
    assert header.get_attribute("aria-sort") == "descending"

    system_column = header_index(loaded, HEADLINE, "System")
    click_header(loaded, HEADLINE, system_column)
    systems = ranking_column(loaded, HEADLINE, system_column, "text")
    assert systems == sorted(systems, key=str.lower)
    assert console_errors(loaded) == []


def test_the_filter_keeps_matching_rows(loaded: WebDriver) -> None:
    total = len(ranking_column(loaded, HEADLINE, 0))
    box = loaded.find_element(By.ID, f"{HEADLINE}-filter")
    box.send_keys("H100")
    visible = loaded.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).filter(row => !row.hidden)"
        ".map(row => row.textContent)", f"#{HEADLINE}-table tbody tr")
    assert 0 < len(visible) < total and all("H100" in text for text in visible)
    assert loaded.find_element(By.ID, f"{HEADLINE}-table-count").text == f"{len(visible)} of {total} rows"
    box.send_keys(" alert(1)")  # the escaped system name is plain text, and matches as text
    assert loaded.find_element(By.ID, f"{HEADLINE}-table-count").text in (f"1 of {total} rows", f"0 of {total} rows")
    box.clear()
    box.send_keys(" ")
    assert loaded.find_element(By.ID, f"{HEADLINE}-table-count").text == f"{total} of {total} rows"
    assert console_errors(loaded) == []


def test_the_quarantine_link_opens_its_table(loaded: WebDriver) -> None:
    details = loaded.find_element(By.ID, "quarantine")
    assert details.get_attribute("open") is None
    loaded.find_element(By.CSS_SELECTOR, '#summary a[href="#quarantine"]').click()
    WebDriverWait(loaded, 5).until(lambda d: details.get_attribute("open") is not None)
    assert details.find_element(By.CSS_SELECTOR, "td.path").is_displayed()
    assert console_errors(loaded) == []


def test_screenshots_on_a_desktop_and_a_phone(driver: WebDriver, page: Path, tmp_path: Path) -> None:
    for name, size in (("desktop", DESKTOP), ("narrow", NARROW)):
        target = tmp_path / f"report-{name}.png"
        screenshot(driver, page, target, size)
        assert target.stat().st_size > 10_000
        # Wide tables scroll inside their box; the page itself never scrolls sideways.
        assert driver.execute_script("return document.documentElement.scrollWidth") <= size[0]
    assert console_errors(driver) == []


def test_refresh_docs_screenshot(driver: WebDriver) -> None:
    if not os.environ.get("REFRESH_DOCS_SCREENSHOT"):
        pytest.skip("set REFRESH_DOCS_SCREENSHOT=1 to refresh docs/report.png from reports/index.html")
    real = ROOT / "reports" / "index.html"
    if not real.is_file():
        pytest.skip("no reports/index.html: run `dvc repro` first")
    screenshot(driver, real, DOCS_SCREENSHOT, (DESKTOP[0], 1000))
    from PIL import Image

    with Image.open(DOCS_SCREENSHOT) as image:  # the same pixels, compressed harder
        image.load()
    image.save(DOCS_SCREENSHOT, optimize=True)
    assert DOCS_SCREENSHOT.stat().st_size < 400_000
