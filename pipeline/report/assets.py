"""The site's shared assets, `reports/assets/`: the stylesheet and the script (`pipeline/report/static/`) and
the chart library, Vega, Vega-Lite and vega-embed in one script as vl-convert-python bundles them (no network).

They change with this code and the installed vl-convert-python, never with the data, so the `assets` stage writes
them and the `report` stage, which reruns on every data or params change, does not pay for the bundle.
"""
from __future__ import annotations

from importlib import resources

# The Vega-Lite version the chart specs are written for (pipeline.report.charts): the site bundles its library.
VEGA_LITE_VERSION = "6.4"
# Copied as they are from pipeline/report/static/.
STATIC = ("site.css", "site.js")
LIBRARY = "vega.js"
# What the bundled library exposes to the pages' script (site.js calls window.vegaEmbed).
BUNDLE_GLOBALS = "window.vegaEmbed = vegaEmbed; window.vega = vega; window.vegaLite = vegaLite;"


def static_assets() -> dict[str, str]:
    """The stylesheet and the script, by path relative to the site's folder (`assets/<name>`)."""
    folder = resources.files("pipeline.report").joinpath("static")
    return {f"assets/{name}": folder.joinpath(name).read_text(encoding="utf-8") for name in STATIC}


def chart_library() -> str:
    """Vega, Vega-Lite and vega-embed in one script, for VEGA_LITE_VERSION (about 0.9 MB, 1.2 s of CPU)."""
    import vl_convert

    return str(vl_convert.javascript_bundle(snippet=BUNDLE_GLOBALS, vl_version=VEGA_LITE_VERSION))


def site_assets() -> dict[str, str]:
    """Every shared asset, by path relative to the site's folder."""
    return {**static_assets(), f"assets/{LIBRARY}": chart_library()}
