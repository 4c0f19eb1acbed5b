"""Measure the report site in headless Chromium: per page its size, its height at 1400 x 900 in screens (collapsed
parts closed), its charts (and how many drew marks, with every collapsed part open), its tables, and the elements
wider than their container at 1366 px and at 390 px.

    python bench/site.py [reports]

Needs Debian's chromium and chromium-driver (as tests/report/test_browser.py). Console errors and any request that
leaves the site's folder are printed too.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

if __package__ in (None, ""):  # run as `python bench/<name>.py`: the project root first, as under pytest
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver

from bench._common import arguments

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SCREEN = (1400, 900)
WIDTHS = (1366, 390)

# With every collapsed part opened: visible elements that reach past the viewport's right edge, or boxes (tables,
# charts, their wrappers) whose content is wider than they are; the skip link and a phone's hidden table headers
# sit off-screen on purpose.
OVERFLOW_JS = """
for (const details of document.querySelectorAll('details')) details.open = true;
const width = document.documentElement.clientWidth;
const found = [];
const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
  (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
for (const el of document.querySelectorAll('body *')) {
  if (!el.getClientRects().length || el.closest('.skip, thead, #vg-tooltip-element')) continue;
  const box = el.getBoundingClientRect();
  const boxed = el.matches('table, .table-wrap, .vega, figure, svg, canvas, pre');
  if (box.right > width + 1 || (boxed && el.scrollWidth > el.clientWidth + 1 && el.tagName !== 'svg')) {
    found.push(name(el) + ' (' + Math.round(box.width) + ' px)');
  }
}
return found;
"""
# Charts on the page and those whose drawing has marks (an SVG with paths, shapes or text, or a drawn canvas); a chart
# inside a closed <details> is drawn when it opens, so it counts only then.
CHARTS_JS = """
const charts = Array.from(document.querySelectorAll('div.vega')).filter(el => !el.closest('details:not([open])'));
const drawn = charts.filter(el => el.querySelector('svg .mark-symbol path, svg .mark-rule line, svg .mark-line path,'
  + ' svg .mark-rect path, svg .mark-area path, canvas'));
return [charts.length, drawn.length];
"""
# Requests the page made outside its own folder tree (file:// of the site is fine).
REQUESTS_JS = """
return performance.getEntriesByType('resource').map(e => e.name).filter(u => !u.startsWith('file://'));
"""


def start_browser(profile: Path, size: tuple[int, int] = SCREEN) -> WebDriver:
    """Headless Chromium with a fresh profile, no background network, and the console log kept."""
    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                     "--disable-dev-shm-usage", f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
                     "--hide-scrollbars"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


@contextmanager
def browser(size: tuple[int, int] = SCREEN) -> Iterator[WebDriver]:
    with TemporaryDirectory() as profile:
        driver = start_browser(Path(profile), size)
        try:
            yield driver
        finally:
            driver.quit()


def open_page(driver: WebDriver, path: Path, timeout: float = 20) -> None:
    """Load `path` and wait until every chart has drawn (or failed) and the layout is still."""
    driver.get(path.resolve().as_uri())
    wait_for_charts(driver, timeout)


def wait_for_charts(driver: WebDriver, timeout: float = 20) -> None:
    """Wait until every chart outside a closed <details> has drawn (or failed) and the layout is still."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        charts, drawn = driver.execute_script(CHARTS_JS)
        if drawn == charts and driver.execute_script("return document.readyState") == "complete":
            break
        time.sleep(0.1)
    time.sleep(0.2)


def set_width(driver: WebDriver, width: int, height: int = SCREEN[1]) -> None:
    """Resize so the page's viewport (not the window with its frame) is `width` x `height` CSS pixels."""
    driver.set_window_size(width, height)
    inner = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    driver.set_window_size(2 * width - inner[0], 2 * height - inner[1])


def measure(driver: WebDriver, path: Path) -> dict[str, Any]:
    """One page's figures (see the module docstring)."""
    set_width(driver, SCREEN[0])
    open_page(driver, path)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    charts, drawn = driver.execute_script(CHARTS_JS)
    tables = driver.execute_script("return document.querySelectorAll('table').length")
    overflow = {}
    for width in WIDTHS:
        set_width(driver, width)
        open_page(driver, path)  # as a reader of that width opens it (the charts size their legends on load)
        overflow[width] = driver.execute_script(OVERFLOW_JS)
    wait_for_charts(driver)  # OVERFLOW_JS opened every collapsed part: their charts draw now
    charts, drawn = driver.execute_script(CHARTS_JS)
    errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    return {"bytes": path.stat().st_size, "screens": height / SCREEN[1], "charts": charts, "drawn": drawn,
            "tables": tables, "overflow": overflow, "errors": errors,
            "requests": driver.execute_script(REQUESTS_JS)}


def pages(site: Path) -> list[Path]:
    return [site / "index.html", *sorted((site / "benchmarks").glob("*.html")), site / "methods.html",
            site / "data.html"]


def main(argv: list[str]) -> None:
    site = Path(argv[0] if argv else "reports")
    print(f"{'page':34} {'KiB':>6} {'screens':>7} {'charts':>7} {'tables':>6}  overflowing at 1366 / 390 px")
    with browser() as driver:
        for path in pages(site):
            m = measure(driver, path)
            over = " / ".join(", ".join(m["overflow"][w]) or "none" for w in WIDTHS)
            print(f"{path.relative_to(site)!s:34} {m['bytes'] // 1024:6d} {m['screens']:7.1f} "
                  f"{m['drawn']:3d}/{m['charts']:<3d} {m['tables']:6d}  {over}")
            for line in m["errors"]:
                print(f"    console error: {line[:200]}")
            for url in m["requests"]:
                print(f"    network request: {url}")
    assets = site / "assets"
    print("shared assets: " + ", ".join(f"{p.name} {p.stat().st_size // 1024} KiB" for p in sorted(assets.iterdir())))


if __name__ == "__main__":
    main([arguments(__doc__, (("site",), {"nargs": "?", "default": "reports",
                                          "help": "the site's folder (default: reports)"})).site])
