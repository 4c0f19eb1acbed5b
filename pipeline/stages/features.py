"""Stage `features`: one row per scored result, with normalised hardware features and efficiency metrics.

    python -m pipeline.stages.features

The logic lives in `pipeline.mlperf.hardware.description` (what a description says) and
`pipeline.analysis.configurations`
(the efficiency metrics); this stage reads the ingest's tables and writes the configurations and the notes on
description values set missing or taken from elsewhere.
"""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from pipeline.analysis.configurations import build_configurations
from pipeline.core import paths, schemas
from pipeline.core.cli import stage_arguments
from pipeline.core.errors import cli
from pipeline.core.files import interrupts_held, write_csv, write_parquet

# The settings this stage reads, itself or through the library (tools/sync_dvc_params.py writes them
# into dvc.yaml; tests/test_params_deps.py checks).
PARAMS: tuple[str, ...] = ()


@cli
def main(argv: Sequence[str] | None = None) -> None:
    """Run the features stage: write data/processed/configurations.parquet (one row per scored result) and the
    feature notes CSV, and print their counts; returns None."""
    stage_arguments("pipeline.stages.features", __doc__, argv)
    systems = schemas.validate_systems(pd.read_parquet(paths.SYSTEMS))
    results = schemas.validate_results(pd.read_parquet(paths.RESULTS))
    runs = schemas.validate_runs(pd.read_parquet(paths.RUNS))
    configurations, notes = build_configurations(systems, results, runs)
    with interrupts_held():  # Ctrl-C: both tables of the previous run or both of this one
        write_parquet(configurations, paths.CONFIGURATIONS)
        write_csv(notes, paths.FEATURE_NOTES)
    n_missing = int(configurations["accelerator_count"].isna().sum())
    n_republished = int(configurations["republished_of"].notna().sum())
    print(f"{len(configurations)} configurations, {n_missing} without an accelerator count, {n_republished} "
          f"republished from an earlier round, {len(notes)} description values set missing or corrected (see "
          f"{paths.FEATURE_NOTES})")


if __name__ == "__main__":
    main()
