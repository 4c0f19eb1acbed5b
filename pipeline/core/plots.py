"""Figure conventions shared by the stages and the report: one theme, a colour-blind-safe palette, compact PNGs
written atomically, plain log axes."""
from __future__ import annotations

import io
import math
from functools import cache
from pathlib import Path
from typing import Any

from pipeline.core.colours import COLOURBLIND, STYLE
from pipeline.core.files import atomic_path

# Colours per PNG: the page holds about a hundred figures and must stay a few megabytes.
PNG_COLOURS = 256
DPI = 110


@cache
def pyplot() -> Any:
    """matplotlib.pyplot, headless (stages run in CI and under DVC), with the project's theme; imported on the
    first figure, so modules that may draw cost nothing to import."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from cycler import cycler

    plt.style.use(STYLE)
    plt.rcParams["axes.prop_cycle"] = cycler(color=COLOURBLIND)
    return plt


def subplots(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """`matplotlib.pyplot.subplots` in the project's theme."""
    return pyplot().subplots(*args, **kwargs)


def png_bytes(figure: Any, dpi: int = DPI, tight: bool = True) -> bytes:
    """The figure as a PNG of at most PNG_COLOURS colours (a third of the bytes; charts of flat colours look the
    same; octree quantisation keeps the colour of a small cluster that median cut merges into grey), and closed.
    `tight`: lay the figure out to its labels first (figures drawn with fixed margins pass False)."""
    from PIL import Image

    if tight:
        figure.tight_layout()
        # tight_layout leaves a placeholder layout engine, which makes savefig draw everything twice; the
        # layout is done, so the figure needs none.
        figure.set_layout_engine(None)
    # Raw pixels, not matplotlib's own PNG: encoding an image only to decode it again cost a sixth of a figure.
    figure.set_dpi(dpi)
    width, height = figure.canvas.get_width_height(physical=True)  # the size Agg renders at this dpi
    raw = io.BytesIO()
    figure.savefig(raw, format="rgba", dpi=dpi)
    pyplot().close(figure)
    image = Image.frombuffer("RGBA", (width, height), raw.getvalue(), "raw", "RGBA", 0, 1).convert("RGB")
    compact = io.BytesIO()
    image.quantize(colors=PNG_COLOURS, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(
        compact, format="PNG", optimize=True)
    return compact.getvalue()


def save(figure: Any, target: Path | str) -> None:
    data = png_bytes(figure)
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


def log_log(axis: Any, **labels: Any) -> None:
    """Both axes on log scales with plain tick labels; `labels` go to `axis.set` (xlabel, title, limits).
    Call after plotting."""
    axis.set(xscale="log", yscale="log", **labels)
    plain_log_ticks(axis, "x")
    plain_log_ticks(axis, "y")


def plain_log_ticks(axis: Any, which: str) -> None:
    """Log axes labelled 1, 10, 100 rather than 10^0, 10^1, 10^2, quicker to read; with 1-2-5 steps on a short
    span, where powers of ten alone leave one or two labels (shorter on x, whose labels sit side by side).
    Call after plotting."""
    from matplotlib import ticker

    low, high = axis.get_xlim() if which == "x" else axis.get_ylim()
    steps = (1.0, 2.0, 5.0) if math.log10(high / low) < (1.5 if which == "x" else 3) else (1.0,)
    target = axis.xaxis if which == "x" else axis.yaxis
    target.set_major_locator(ticker.LogLocator(base=10, subs=steps))
    target.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:,.10g}"))
    # No minor ticks: the theme draws no tick marks, and a log axis's minor ticks cost most of a figure's time.
    target.set_minor_locator(ticker.NullLocator())
