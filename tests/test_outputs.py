"""Stored floats: the same value, computed with last-bit differences, gives the same output bytes."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipeline.core import files as pipeline_io


def test_json_floats_lose_last_bit_jitter_and_negative_zero(tmp_path: Path) -> None:
    a, b = 0.1 + 0.2, 0.3
    assert a != b
    pipeline_io.write_json({"x": a, "zero": -0.0, "missing": float("nan")}, tmp_path / "a.json")
    pipeline_io.write_json({"x": b, "zero": 0.0, "missing": None}, tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert json.loads((tmp_path / "a.json").read_text()) == {"missing": None, "x": 0.3, "zero": 0.0}


def test_csv_floats_keep_ten_significant_digits(tmp_path: Path) -> None:
    pipeline_io.write_csv(pd.DataFrame({"x": [0.1 + 0.2, 1 / 3, 12.5]}), tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_text() == "x\n0.3\n0.3333333333\n12.5\n"
