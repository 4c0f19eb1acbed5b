"""Break-even per benchmark and unit (accelerator family and form factor), before and after a change: the forecast
curve's (`break_even_count`, from `reference_count`) and the data's (the first published count whose median
within-series efficiency is below the floor), and whether they agree (`break_even_agreement`,
`pipeline.analysis.forecasting.decide.compare_break_even`).

    python bench/break_even.py [--before DIR] [--after reports/decide] [--units N]

The last lines count every unit by agreement (agree only on a bracket of published counts at most
`decide.MAX_BRACKET` wide; "beyond the data" where neither the data nor the curve cross the floor inside the
published counts) and give the widest bracket an agreement rests on. DIR and the after folder hold the decide
stage's <benchmark>.json (copy reports/decide aside before the change, then `python -m pipeline.stages.features` and
`python -m pipeline.stages.decide`). A field the before outputs lack prints as "-". Prints the N most-published
units of each benchmark, then each disagreement's note.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import format_table  # noqa: E402
from pipeline.analysis.forecasting.decide import AGREE, BREAK_EVEN_AGREEMENTS  # noqa: E402


def units(folder: Path) -> dict[tuple[str, str, str], dict]:
    """Every unit of every decide.json in `folder`, by (benchmark, family, form factor)."""
    found = {}
    for path in sorted(folder.glob("*.json")):
        if path.name.endswith(".models.json"):
            continue
        summary = json.loads(path.read_text())
        for unit in summary.get("units", []):
            found[(summary["benchmark"], unit["family"], unit["form_factor"])] = unit
    return found


def _count(value: float | None) -> str:
    return "none" if value is None else f"{value:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, default=None)
    parser.add_argument("--after", type=Path, default=ROOT / "reports" / "decide")
    parser.add_argument("--units", type=int, default=3, help="most-published units shown per benchmark")
    arguments = parser.parse_args()
    before = {} if arguments.before is None else units(arguments.before)
    after = units(arguments.after)
    rows, notes, shown = [], [], {}
    for key, unit in after.items():
        shown[key[0]] = shown.get(key[0], 0) + 1
        if shown[key[0]] > arguments.units:
            continue
        old = before.get(key, {})
        rows.append([*key, _count(old.get("reference_count")), _count(old.get("break_even_count")),
                     _count(old.get("observed_first_count_below_floor")), _count(unit["reference_count"]),
                     _count(unit["break_even_count"]), _count(unit["observed_first_count_below_floor"]),
                     unit["break_even_agreement"]])
        if unit["break_even_agreement"] != "agree":
            notes.append(f"{key[0]} {key[1]} {key[2]}: {unit['break_even_note']}")
    print(format_table(["benchmark", "family", "form", "ref before", "model before", "data before", "ref after",
                        "model after", "data after", "agreement"], rows))
    every = list(after.values())
    models = Counter(unit.get("break_even_model", "not recorded") for unit in every)
    print("\nthe model's break-even from: " + ", ".join(f"{model} ({n} units)" for model, n in sorted(models.items())))
    counts = Counter(unit["break_even_agreement"] for unit in every)
    print(f"\nevery unit (of {len(every)}): " + ", ".join(f"{counts[name]} {name}" for name in BREAK_EVEN_AGREEMENTS))
    agreeing = [unit for unit in every if unit["break_even_agreement"] == AGREE]
    widths = [unit["observed_first_count_below_floor"] / unit["observed_last_count_at_floor"] for unit in agreeing]
    print(f"agreements: {len(agreeing)}, every one on a bracket of published counts, the widest "
          f"{max(widths, default=float('nan')):.2f}x; open-ended among them: "
          f"{sum(unit['observed_first_count_below_floor'] is None for unit in agreeing)}")
    print("\n".join(["", "disagreements and unobserved (shown units):", *notes]))


if __name__ == "__main__":
    main()
