"""Figure conventions shared by the stages: one theme, a colour-blind-safe palette, atomic PNG writes."""
from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # stages run headless, in CI and under DVC

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib import ticker  # noqa: E402

from pipeline.core.files import atomic_path  # noqa: E402

PALETTE = "colorblind"
sns.set_theme(style="whitegrid", palette=PALETTE, context="notebook")
# Fixed metadata so the same data gives byte-identical PNGs.
PNG_METADATA = {"Software": None}


def png_bytes(figure: plt.Figure) -> bytes:
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, metadata=PNG_METADATA)
    plt.close(figure)
    return buffer.getvalue()


def save(figure: plt.Figure, target: Path | str) -> None:
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
    low, high = axis.get_xlim() if which == "x" else axis.get_ylim()
    steps = (1.0, 2.0, 5.0) if math.log10(high / low) < (1.5 if which == "x" else 3) else (1.0,)
    target = axis.xaxis if which == "x" else axis.yaxis
    target.set_major_locator(ticker.LogLocator(base=10, subs=steps))
    target.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:,.10g}"))
    # No minor ticks: the theme draws no tick marks, and a log axis's minor ticks cost most of a figure's time.
    target.set_minor_locator(ticker.NullLocator())
