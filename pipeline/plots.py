"""Figure conventions shared by the stages: one theme, a colour-blind-safe palette, atomic PNG writes."""
from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # stages run headless, in CI and under DVC

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from .io import atomic_path  # noqa: E402

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
