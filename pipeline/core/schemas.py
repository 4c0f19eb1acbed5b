"""The contracts between stages: every Parquet table's columns, checked where a stage writes and reads it.

A broken contract raises `ContractError` naming the table and the failing checks, so it fails loudly and early.
Column meanings are declared in pipeline/core/columns.py (docs/outputs.md is generated from it).
"""
from __future__ import annotations

import pandas as pd
import pandera.pandas as pa
from pandera.errors import SchemaError, SchemaErrors

from pipeline.core.errors import ContractError

SYSTEM_KEY_COLUMNS = ["round", "submitter", "system", "path", "ingest_note"]

RUN_COLUMNS = [
    "round", "submitter", "system", "benchmark", "run", "path", "status", "converged", "time_to_train_min",
    "log_format", "run_start_ms", "run_stop_ms", "eval_metric", "eval_value", "target_value",
    "epochs_to_converge", "samples_to_converge", "global_batch_size", "train_samples",
    "gradient_accumulation_steps", "optimizer", "seed", "submission_benchmark", "submission_org",
    "submission_division", "submission_status", "submission_platform", "log_number_of_nodes",
    "log_accelerators_per_node", "init_time_ms", "throughput_samples_per_s", "bad_lines", "reached_target",
    "compliance",
]

# A result's parallel layout and where it was read (pipeline.mlperf.logs.precision: LAYOUT_FIELDS, then the source).
PARALLEL_COLUMNS = ["tensor_parallel", "pipeline_parallel", "context_parallel", "expert_parallel", "micro_batch_size",
                    "parallel_source"]

RESULT_COLUMNS = [
    "round", "submitter", "system", "benchmark", "benchmark_id", "division", "n_runs", "n_converged",
    "runs_required", "complete", "scaling_factor", "time_to_train_min", "score_note",
    "energy_j", "energy_rule", "power_measurement", "power_conversion_eff", "power_nodes", "power_switches",
    "precision", "precision_source", *PARALLEL_COLUMNS,
]

QUARANTINE_COLUMNS = ["round", "path", "reason"]


_ROUND = pa.Column(str, pa.Check.str_matches(r"^v\d+\.\d+$"))
_TEXT = pa.Column(str)
_OPTIONAL_TEXT = pa.Column(str, nullable=True)
_MINUTES = pa.Column(float, pa.Check.gt(0), nullable=True)
# A result's numeric training precision and where it was read (pipeline.mlperf.logs.precision documents both).
PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8", "mxfp8", "mxfp6", "nvfp4", "mxfp4", "int8", "int4")
PRECISION_SOURCES = ("mllog", "log", "config", "config_match", "inferred")
_PRECISION = pa.Column(str, pa.Check.isin(PRECISIONS), nullable=True)
_PRECISION_SOURCE = pa.Column(str, pa.Check.isin(PRECISION_SOURCES), nullable=True)
_PARALLEL = {**{column: pa.Column("Int64", pa.Check.ge(1), nullable=True) for column in PARALLEL_COLUMNS[:-1]},
             PARALLEL_COLUMNS[-1]: _PRECISION_SOURCE}

SYSTEMS = pa.DataFrameSchema(
    {"round": _ROUND, "submitter": _TEXT, "system": _TEXT, "path": _TEXT, "ingest_note": _OPTIONAL_TEXT},
    unique=["round", "submitter", "system"], strict=False, coerce=True,
)

RUNS = pa.DataFrameSchema(
    {
        "round": _ROUND, "submitter": _TEXT, "system": _TEXT, "benchmark": _TEXT,
        "run": _TEXT, "path": _TEXT, "status": _TEXT, "converged": pa.Column(bool),
        "time_to_train_min": _MINUTES, "throughput_samples_per_s": pa.Column(float, nullable=True),
    },
    unique=["round", "path"], strict=False, coerce=True,
)

RESULTS = pa.DataFrameSchema(
    {
        "round": _ROUND, "submitter": _TEXT, "system": _TEXT, "benchmark": _TEXT,
        "benchmark_id": _OPTIONAL_TEXT, "division": _OPTIONAL_TEXT,
        "n_runs": pa.Column(int, pa.Check.ge(0)), "n_converged": pa.Column(int, pa.Check.ge(0)),
        "runs_required": pa.Column(float, nullable=True), "complete": pa.Column(bool),
        "scaling_factor": pa.Column(float, nullable=True), "time_to_train_min": _MINUTES,
        "score_note": _OPTIONAL_TEXT,
        # Energy to train (J) where the runs have power logs, by the round's summarizer rule
        # (pipeline.mlperf.logs.power)
        "energy_j": pa.Column(float, pa.Check.gt(0), nullable=True), "energy_rule": _OPTIONAL_TEXT,
        "power_measurement": pa.Column(str, pa.Check.isin(["AC", "DC", "AC and DC"]), nullable=True),
        "power_conversion_eff": pa.Column(float, [pa.Check.gt(0), pa.Check.le(1)], nullable=True),
        "power_nodes": pa.Column(float, pa.Check.ge(0), nullable=True),
        "power_switches": pa.Column(float, pa.Check.ge(0), nullable=True),
        # pipeline.mlperf.logs.precision
        "precision": _PRECISION, "precision_source": _PRECISION_SOURCE, **_PARALLEL,
    },
    unique=["round", "submitter", "system", "benchmark"], strict=True, coerce=True,
)

CONFIGURATION_COLUMNS = [
    "round", "submitter", "system", "benchmark", "benchmark_folder", "division", "availability",
    "republished_of", "time_to_train_min", "accelerator_name", "accelerator_vendor", "accelerator_family",
    "accelerator_form_factor", "accelerator_memory_gib", "accelerator_year", "accelerator_count", "n_nodes",
    "accelerators_per_node", "host_cpu_vendor", "host_cpu_model", "host_cpu_cores", "host_memory_gib",
    "interconnect_intra", "interconnect_intra_gbps", "interconnect_inter", "interconnect_inter_gbps",
    "framework", "throughput_samples_per_s", "samples_to_converge", "epochs_to_converge", "series",
    "accelerator_hours", "speedup", "scaling_efficiency", "round_efficiency", "throughput_per_accelerator",
    "throughput_scaling", "convergence_work_ratio", "same_runs_as", "energy_kwh", "energy_dc_kwh",
    "energy_dc_source", "power_measurement", "power_conversion_eff", "power_per_accelerator_w", "power_share_of_tdp",
    "energy_basis", "energy_estimated_kwh", "energy_estimate_error", "energy_estimate_worst_error",
    "precision", "precision_source", *PARALLEL_COLUMNS,
]

CONFIGURATIONS = pa.DataFrameSchema(
    {
        "round": _ROUND, "submitter": _TEXT, "system": _TEXT, "benchmark": _TEXT, "benchmark_folder": _TEXT,
        "division": _OPTIONAL_TEXT,
        "availability": _OPTIONAL_TEXT,  # a category of pipeline.mlperf.availability.CATEGORIES, or missing
        "republished_of": pa.Column(str, pa.Check.str_matches(r"^v\d+\.\d+/[^/]+/.+$"), nullable=True),
        "time_to_train_min": pa.Column(float, pa.Check.gt(0)),
        "accelerator_count": pa.Column(float, pa.Check.gt(0), nullable=True),
        "accelerator_hours": pa.Column(float, pa.Check.gt(0), nullable=True),
        "series": _OPTIONAL_TEXT,
        "scaling_efficiency": pa.Column(float, pa.Check.gt(0), nullable=True),
        "round_efficiency": pa.Column(float, [pa.Check.gt(0), pa.Check.le(1)], nullable=True),
        "samples_to_converge": pa.Column(float, pa.Check.ge(0), nullable=True),
        "epochs_to_converge": pa.Column(float, pa.Check.ge(0), nullable=True),
        "throughput_scaling": pa.Column(float, pa.Check.gt(0), nullable=True),
        "convergence_work_ratio": pa.Column(float, pa.Check.gt(0), nullable=True),
        # pipeline.analysis.pricing.energy
        "same_runs_as": pa.Column(str, pa.Check.str_matches(r"^v\d+\.\d+/[^/]+/.+$"), nullable=True),
        "energy_kwh": pa.Column(float, pa.Check.gt(0), nullable=True),
        "energy_dc_kwh": pa.Column(float, pa.Check.gt(0), nullable=True),
        "energy_dc_source": pa.Column(str, pa.Check.str_matches(r"^v\d+\.\d+/[^/]+/.+$"), nullable=True),
        "power_measurement": pa.Column(str, pa.Check.isin(["AC", "DC", "AC and DC"]), nullable=True),
        "power_per_accelerator_w": pa.Column(float, pa.Check.gt(0), nullable=True),
        "power_share_of_tdp": pa.Column(float, pa.Check.gt(0), nullable=True),
        # pipeline.analysis.pricing.energy_estimate
        "energy_basis": pa.Column(str, pa.Check.isin(["measured", "estimated"]), nullable=True),
        "energy_estimated_kwh": pa.Column(float, pa.Check.gt(0), nullable=True),
        "energy_estimate_error": pa.Column(float, pa.Check.ge(0), nullable=True),
        "energy_estimate_worst_error": pa.Column(float, pa.Check.ge(0), nullable=True),
        # pipeline.mlperf.logs.precision, carried from results.parquet
        "precision": _PRECISION, "precision_source": _PRECISION_SOURCE, **_PARALLEL,
    },
    unique=["round", "submitter", "system", "benchmark"], strict=False, coerce=True,
)


def _validator(schema: pa.DataFrameSchema, table: str):
    def validate(frame: pd.DataFrame) -> pd.DataFrame:
        try:
            return schema.validate(frame, lazy=True)
        except (SchemaError, SchemaErrors) as error:
            raise ContractError(f"table {table} breaks its contract:\n{error}") from None

    validate.__name__ = f"validate_{table}"
    return validate


validate_systems = _validator(SYSTEMS, "systems")
validate_runs = _validator(RUNS, "runs")
validate_results = _validator(RESULTS, "results")
validate_configurations = _validator(CONFIGURATIONS, "configurations")
