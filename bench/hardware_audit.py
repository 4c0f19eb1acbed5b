"""Print issue 22's hardware audit on the real data: for each one-hardware-one-value check (intra-node link per
accelerator family + form factor + link kind, host cores per socket per CPU model, inter-node port rate per
fabric + InfiniBand grade) how many distinct values each piece of hardware gets, the share of systems for which
the check holds (target: at least 98%) and the systems where it does not, with the reason; the values the
reference tables (links.csv, cpus.csv) cannot check; and the golden sample's error rate per field when
tests/data/golden_systems.csv exists.

    python bench/hardware_audit.py [--all-groups] [--golden PATH]

--all-groups lists the hardware with a single value too; --golden reads another golden sample file.

Reads data/interim/systems.parquet (run `dvc repro ingest` first), from the root.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd

from bench._common import ROOT
from pipeline.core import paths
from pipeline.mlperf.hardware import audit, cpus

GOLDEN = ROOT / "tests" / "data" / "golden_systems.csv"
TARGET = 0.98


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all-groups", action="store_true")
    parser.add_argument("--golden", type=Path, default=GOLDEN)
    arguments = parser.parse_args(argv)
    all_groups = arguments.all_groups
    systems = pd.read_parquet(ROOT / paths.SYSTEMS)
    table = audit.audit_table(systems)
    print(f"{len(table)} system descriptions ({paths.SYSTEMS.name})")
    for check in audit.CHECKS:
        groups, exceptions = audit.consistency(table, check)
        holding, applies = audit.share_holding(table, check)
        share = holding / applies if applies else 1.0
        print(f"\n== {check.name} ({check.value}, {check.unit}): holds for {holding} of {applies} systems "
              f"({share:.1%}; target {TARGET:.0%}: {'met' if share >= TARGET else 'NOT met'}); "
              f"{len(groups)} pieces of hardware, {int((groups['distinct'] > 1).sum())} with several values")
        shown = groups if all_groups else groups[groups["distinct"] > 1]
        for _, group in shown.iterrows():
            print(f"  {group['hardware']:<48} {group['systems']:>4} systems, {group['distinct']} value(s): "
                  f"{group['values']}")
        for _, row in exceptions.iterrows():
            print(f"  - {row['round']} {row['submitter']} {row['system']}: {row['reason']}")
    unchecked = audit.unchecked(table)
    print(f"\n== kept as stated, not in links.csv or cpus.csv: {len(unchecked)} values")
    for (field, hardware), group in unchecked.groupby(["field", "hardware"], sort=True):
        stated = group["value"].dropna()
        values = ", ".join(f"{value:g}" for value in sorted(stated.unique())) or "none stated"
        why = cpus.NOT_LISTED.get(hardware, "not in cpus.csv") if field == "host_cpu_cores" else "not in links.csv"
        print(f"  {field:<24} {hardware:<28} {len(group):>3} systems, stated: {values}; {why}")
    golden_report(table, arguments.golden)


def golden_report(table: pd.DataFrame, golden_file: Path) -> None:
    if not golden_file.exists():
        print(f"\n== golden sample: {golden_file} absent, skipped")
        return
    golden = pd.read_csv(golden_file, dtype=str, keep_default_na=False)
    mismatches = audit.golden_mismatches(golden, table)
    fields = [column for column in golden.columns if column not in audit.KEY and column in table.columns]
    print(f"\n== golden sample: {len(golden)} descriptions, {len(mismatches)} of {len(golden) * len(fields)} "
          f"values differ")
    for field in fields:
        errors = int((mismatches["field"] == field).sum())
        print(f"  {field:<26} {errors:>3} errors ({errors / len(golden):.1%})")
    for _, row in mismatches.iterrows():
        print(f"  - {row['round']} {row['submitter']} {row['system']} | {row['field']}: expected {row['expected']}, "
              f"got {row['got']}")


if __name__ == "__main__":
    main(sys.argv[1:])
