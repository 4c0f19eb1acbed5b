"""A result's numeric precision (pipeline/mlperf/logs/precision.py): the framework lines, launcher lines and MLLOG
records of small hand-written logs, small launch configurations, the order of the sources, the ingest's columns and
tally, and a handful of real v5.0 and v5.1 results read by hand (skipped without the mirror)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pipeline.core import schemas
from pipeline.mlperf.logs import precision
from pipeline.mlperf.logs.precision import LaunchConfig, RunPrecision
from pipeline.mlperf.rounds import ingest, read_source
from tests.conftest import MIRROR, run_log, small_round


def mllog(key: str, value: object, prefix: str = "") -> str:
    record = {"namespace": "", "time_ms": 1_700_000_000_000, "event_type": "POINT_IN_TIME", "key": key,
              "value": value, "metadata": {"file": "train.py", "lineno": 1}}
    return f"{prefix}:::MLLOG {json.dumps(record)}"


def log(*lines: str) -> bytes:
    """A log: the given lines before run_start, then a timed run whose progress lines must not be read."""
    return "\n".join([*lines, mllog("run_start", None), "0: step 1 fp8: false precision: fp32",
                      mllog("run_stop", None), ""]).encode()


@pytest.mark.parametrize(("lines", "expected"), [
    # NeMo's YAML dump, with the rank prefix of srun
    (["0:   precision: bf16-mixed", "0:   fp8: true", "0:   fp8_e4m3: false", "0:   fp8_param_gather: 0"], "fp8"),
    ([" 0:   precision: bf16-mixed", " 0:   fp8: e4m3", " 0:   fp8_recipe: mxfp8"], "mxfp8"),
    (["0:       precision: bf16", "0:   fp4: true", "0:   fp4_recipe: nvfp4"], "nvfp4"),
    (["  0:   precision: bf16-mixed"], "bf16"),
    # Megatron's argument list: a recipe printed as a default, with fp8 off, is not FP8
    (["Namespace(keep_fp8_transpose_cache=False, fp8_recipe='tensorwise', fp16=False, bf16=True, fp8='hybrid', "
      "reuse_grad_buf_for_mxfp8_param_ag=False, params_dtype=torch.bfloat16)"], "fp8"),
    (["Namespace(fp8=None, fp8_recipe='delayed', fp4='e2m1', fp4_recipe='nvfp4', fp16=False, bf16=True)"], "nvfp4"),
    (["Namespace(fp8=None, fp8_recipe='delayed', fp4=None, fp4_recipe='nvfp4', fp16=False, bf16=True)"], "bf16"),
    # names that only contain a key, and torch's warning about matmul precision, say nothing
    (["0:   num_layers_at_start_in_bf16: 0", "keep_fp8_transpose_cache=False",
      "set `torch.set_float32_matmul_precision('medium' | 'high')` which will trade-off precision for perf"], None),
    ([], None),
])
def test_framework_output_before_the_timed_run(lines: list[str], expected: str | None) -> None:
    assert precision.read_run(log(*lines)).log == expected


def test_a_log_without_run_start_is_read_whole() -> None:
    assert precision.log_precision(b"0: step 1\n0:   fp8: true\n") == "fp8"
    assert precision.outside_run(b"no MLPerf lines") == ((0, 15),)


@pytest.mark.parametrize(("lines", "expected"), [
    # NVIDIA's launcher names DGXSYSTEM last, quoted and escaped as the shell echoed it
    ([r"""+ echo ':::DLPAL /mnt/llama3_8b.sqsh 78 1 GPU-380 '\''unknown'\'' DGXB200_1x8x2xtp1pp1cp1_8b_fp4'""",
      ":::DLPAL /mnt/llama3_8b.sqsh 78 1 GPU-380 'unknown' DGXB200_1x8x2xtp1pp1cp1_8b_fp4"],
     "config_DGXB200_1x8x2xtp1pp1cp1_8b_fp4.sh"),
    (["Config shell script: config_MI300X_1x8x1.sh"], "config_MI300X_1x8x1.sh"),
    ([mllog("config_filename", "configs/config_GB300_18x4x1.sh", "0: ")], "config_GB300_18x4x1.sh"),
    (["my_config_x.sh is not a configuration name"], None),
])
def test_the_launch_configuration_a_log_names(lines: list[str], expected: str | None) -> None:
    assert precision.read_run(log(*lines)).config_name == expected


def test_the_mllog_precision_record_of_the_v6_1_rules() -> None:
    facts = precision.read_run(log(mllog("lowest_numerical_precision_in_linear", "bfloat16", "0: "),
                                   "0:   fp8: true"))
    assert facts == RunPrecision(mllog="bf16", log="fp8", config_name=None)
    assert precision.read_run(log(mllog("lowest_numerical_precision_in_linear", "nvfp4"))).mllog == "nvfp4"
    assert precision.read_run(log(mllog("lowest_numerical_precision_in_linear", "fp12"))).mllog is None



def test_a_log_of_mllog_lines_alone_is_read_for_its_records_only() -> None:
    """Such a log (`RunFacts.records_only`) prints no framework or launcher output: its records are read, and text
    inside them is not taken for a framework's settings."""
    records = [mllog("lowest_numerical_precision_in_linear", "nvfp4"), mllog("config_filename", "config_B300.sh"),
               mllog("tensor_parallelism", 4), mllog("note", "precision: fp32 fp8: true tensor_model_parallel_size: 2")]
    data = "\n".join([*records, mllog("run_start", None), mllog("run_stop", None), ""]).encode()
    assert precision.read_run(data, records_only=True) == RunPrecision(
        mllog="nvfp4", config_name="config_B300.sh", mllog_layout=(4, None, None, None, None))
    assert precision.read_run(data).log == "fp8"  # read as framework output, the note would tell


def test_the_rules_vocabulary_is_known() -> None:
    """Every spelling the installed mlperf_logging allows for the precision key maps into the vocabulary."""
    import yaml
    from mlperf_logging import compliance_checker

    rules = Path(compliance_checker.__file__).parent / "training_6.1.0" / "common.yaml"
    if not rules.is_file():
        pytest.skip("the installed mlperf_logging has no 6.1.0 rules")
    (key,) = [item["KEY"] for item in yaml.safe_load(rules.read_text())
              if item.get("KEY", {}).get("NAME") == precision.MLLOG_PRECISION_KEY]
    spellings = re.findall(r"'([^']+)'", key["CHECK"].split(" in ", 1)[1])
    assert spellings and all(precision._MLLOG_SPELLINGS[text.lower()] in precision.PRECISIONS for text in spellings)
    assert precision.PRECISIONS == schemas.PRECISIONS and precision.SOURCES == schemas.PRECISION_SOURCES


COMMON = """#!/bin/bash
export FP8=True
export FP8_RECIPE="tensorwise"   # per-tensor scales
export BATCHSIZE=${BATCHSIZE:-256}
"""
FILES = {
    "config_common.sh": COMMON,
    "config_common_fp4.sh": 'export FP4=True\nexport FP8=False\nexport FP4_RECIPE="nvfp4"\n',
    "config_common_gbs_256.sh": "export LR=0.0005\n",
    "config_GB200_2x4x2xtp1pp1cp1_8b_fp4.sh": ("source $(dirname ${BASH_SOURCE[0]})/config_common.sh\n"
                                               "source $(dirname ${BASH_SOURCE[0]})/config_common_fp4.sh\n"
                                               "export DGXNNODES=2\nexport DGXNGPU=4\n"),
    "config_GB200_18x4x1xtp1pp1cp2_8b.sh": ("source $(dirname ${BASH_SOURCE[0]})/config_common.sh\n"
                                            "source $(dirname ${BASH_SOURCE[0]})/config_common_gbs_${BATCHSIZE}.sh\n"
                                            "export DGXNNODES=18\nexport DGXNGPU=4\n"),
    "config_GB300_128x4x72xtp2pp8cp2_405b.sh": "source ./config_common.sh\nexport DGXNNODES=128\n",
}


def test_a_configuration_is_read_as_the_shell_sets_it() -> None:
    read: list[str] = []
    environment = precision.config_environment("config_GB200_18x4x1xtp1pp1cp2_8b.sh", FILES, read)
    assert environment["FP8"] == "True" and environment["FP8_RECIPE"] == "tensorwise"
    assert environment["LR"] == "0.0005" and environment["DGXNNODES"] == "18"
    assert read == ["config_GB200_18x4x1xtp1pp1cp2_8b.sh", "config_common.sh", "config_common_gbs_256.sh"]
    later = precision.config_environment("config_GB200_2x4x2xtp1pp1cp1_8b_fp4.sh", FILES)
    assert (later["FP8"], later["FP4"], later["FP4_RECIPE"]) == ("False", "True", "nvfp4")


@pytest.mark.parametrize(("environment", "benchmark", "expected"), [
    ({"FP8": "True", "FP8_RECIPE": "tensorwise"}, "llama31_8b", "fp8"),
    ({"FP8": "False", "FP4": "True", "FP4_RECIPE": "nvfp4"}, "llama31_8b", "nvfp4"),
    ({"FP8_RECIPE": "mxfp8"}, "flux1", "mxfp8"),  # NVIDIA's FLUX.1: the recipe alone switches FP8 on
    ({"FP8_PARAMS": "1"}, "llama31_8b", "fp8"),  # AMD's Llama 3.1 8B
    ({}, "flux1", "bf16"),
    ({}, "rgat", None),  # no base precision known for this benchmark
])
def test_what_a_configuration_selects(environment: dict[str, str], benchmark: str, expected: str | None) -> None:
    assert precision.config_precision(environment, benchmark) == expected


def test_launch_configurations_of_the_benchmarks_model_size_with_missing_files_from_a_sibling() -> None:
    configs = precision.launch_configs({"nemo": FILES}, "llama31_8b")
    assert [(c.name, c.precision, c.nodes, c.per_node) for c in configs] == [
        ("config_GB200_18x4x1xtp1pp1cp2_8b.sh", "fp8", 18, 4),
        ("config_GB200_2x4x2xtp1pp1cp1_8b_fp4.sh", "nvfp4", 2, 4)]  # the 405b one is another model's
    incomplete = {"config_B200_1x8x1.sh": "source $(dirname ${BASH_SOURCE[0]})/config_common.sh\nexport DGXNNODES=1\n"}
    alone = precision.launch_configs({"site": incomplete}, "llama31_8b")
    assert [(c.precision, c.per_node) for c in alone] == [(None, 8)]  # common file absent: no base guessed
    with_sibling = precision.launch_configs({"site": incomplete, "nemo": FILES}, "llama31_8b")
    assert [c.precision for c in with_sibling if c.implementation == "site"] == ["fp8"]


CONFIGS = [LaunchConfig("config_GB200_2x4x2_fp4.sh", "nemo", "nvfp4", 2, 4),
           LaunchConfig("config_GB300_2x4x2.sh", "nemo", "fp8", 2, 4),
           LaunchConfig("config_GB200_18x4x1.sh", "nemo", "fp8", 18, 4)]


def test_the_sources_in_order() -> None:
    resolve = precision.resolve
    assert resolve([RunPrecision(mllog="fp8", log="bf16")], CONFIGS, "box") == ("fp8", "mllog", None)
    assert resolve([RunPrecision(log="bf16", config_name="config_GB200_18x4x1.sh")], CONFIGS, "box") == \
        ("bf16", "log", None)
    assert resolve([RunPrecision(), RunPrecision(config_name="config_GB200_2x4x2_fp4.sh")], CONFIGS, "box") == \
        ("nvfp4", "config", "config_GB200_2x4x2_fp4.sh")
    # matched by count; the two 2x4 configurations disagree until the accelerator tells them apart
    assert resolve([RunPrecision()], CONFIGS, "box", 18, 4) == ("fp8", "config_match", "config_GB200_18x4x1.sh")
    assert resolve([RunPrecision()], CONFIGS, "box", 2, 4) == (None, None, None)
    assert resolve([RunPrecision()], CONFIGS, "box", 2, 4, "NVIDIA GB300") == \
        ("fp8", "config_match", "config_GB300_2x4x2.sh")
    # no match: every configuration must agree
    assert resolve([RunPrecision()], CONFIGS[1:], "box", 1, 8) == ("fp8", "inferred", None)
    assert resolve([RunPrecision()], CONFIGS, "box", 1, 8) == (None, None, None)
    assert resolve([RunPrecision()], [], "box") == (None, None, None)
    # configurations for another vendor's accelerator say nothing of the system's
    assert resolve([RunPrecision()], CONFIGS[1:], "box", 1, 8, "AMD Instinct MI350X") == (None, None, None)
    assert resolve([RunPrecision()], CONFIGS[1:], "box", 1, 8, "NVIDIA GB300 (A126 board)") == \
        ("fp8", "inferred", None)


def test_the_implementation_named_after_the_system_and_the_configuration_named_after_it() -> None:
    configs = [LaunchConfig("config_GB200_18x04x32.sh", "tyche_ngpu72_ngc25.09_nemo", "mxfp8", 18, 4),
               LaunchConfig("config_GB200_18x04x32.sh", "tyche_ngpu512_ngc25.09_nemo", "bf16", 18, 4)]
    assert precision.resolve([RunPrecision()], configs, "tyche_ngpu72_ngc25.09_nemo", 18, 4).precision == "mxfp8"
    family = [LaunchConfig("config_DGXB200_1x8x2_8b.sh", "hpg.dgxb200x8", "fp8", 1, 8),
              LaunchConfig("config_DGXB200_1x8x2_8b.sh", "b200_nemo", "bf16", 1, 8)]
    assert precision.matching(family, "hpg.dgxb200x8.n1", 1, 8) == family[:1]
    named = [LaunchConfig("config_1xXE9680Lx8B200-SXM-180GB.sh", "nemo", "nvfp4", 1, 8),
             LaunchConfig("config_DGXB200_1x8x1xtp1pp1cp1.sh", "nemo", "fp8", 1, 8)]
    assert precision.matching(named, "1xXE9680Lx8B200-SXM-180GB", 1, 8) == named[:1]


def test_ingest_carries_the_precision_and_counts_the_configurations(make_archive) -> None:
    files = small_round()
    for run in range(5):
        files[f"Acme/results/box/resnet/result_{run}.txt"] = "0:   precision: bf16-mixed\n" + run_log(10.0 + run)
    files["Acme/benchmarks/resnet/implementations/mxnet/config_DGXA100.sh"] = "export DGXNNODES=1\nexport FP8=1\n"
    files["Acme/benchmarks/resnet/implementations/mxnet/config_common.sh"] = "export AMP=1\n"
    tables = ingest([make_archive(files)])
    result = tables.results.iloc[0]
    assert (result["precision"], result["precision_source"]) == ("bf16", "log")
    assert tables.tally.iloc[0]["config_files"] == 2 and tables.tally.iloc[0]["repository_files"] == 0
    files.update({f"Acme/results/box/resnet/result_{run}.txt": run_log(10.0 + run) for run in range(5)})
    result = ingest([make_archive(files, "v3.1")]).results.iloc[0]
    assert (result["precision"], result["precision_source"]) == ("fp8", "config_match")


# Read by hand in the v5.0 and v5.1 archives: (round, submitter, system, benchmark) -> (precision, source), and
# the file that says so.
BY_HAND = {
    # config NVIDIA/benchmarks/llama31_8b/implementations/nemo/config_GB300_2x4x2xtp1pp1cp1_8b_fp4.sh (and its
    # GB200 twin): sources config_common_fp4.sh, FP4=True, FP4_RECIPE="nvfp4"; the system is 2 x 4 GB300
    ("v5.1", "NVIDIA", "theia_ngpu8_ngc25.09_nemo", "llama31_8b"): ("nvfp4", "config_match"),
    # config_GB300_18x4x1xtp1pp1cp2_8b.sh of the same folder: config_common.sh sets FP8=True, FP8_RECIPE="tensorwise"
    ("v5.1", "NVIDIA", "theia_ngpu72_ngc25.09_nemo", "llama31_8b"): ("fp8", "config_match"),
    # NVIDIA/benchmarks/flux1/implementations/theia_ngpu72_ngc25.09_nemo/config_GB300_18x04x32.sh:
    # export FP8_RECIPE="mxfp8"  # Use FP8 on Blackwell if mbs >= 4
    ("v5.1", "NVIDIA", "theia_ngpu72_ngc25.09_nemo", "flux1"): ("mxfp8", "config_match"),
    # .../tyche_ngpu512_ngc25.09_nemo/config_GB200_128x04x16xtp4.sh and its config_common*.sh set no FP8 at all
    ("v5.1", "NVIDIA", "tyche_ngpu512_ngc25.09_nemo", "flux1"): ("bf16", "config_match"),
    # Oracle/results/1xBM.GPU.B200.8/llama31_8b/result_0.txt: Namespace(... fp8=None ... fp4='e2m1',
    # fp4_recipe='nvfp4' ...)
    ("v5.1", "Oracle", "1xBM.GPU.B200.8", "llama31_8b"): ("nvfp4", "log"),
    # Oracle/results/2xBM.GPU.B200.8/flux1/result_0.txt lines 280-281: " 0:   fp8: e4m3", " 0:   fp8_recipe: mxfp8"
    ("v5.1", "Oracle", "2xBM.GPU.B200.8", "flux1"): ("mxfp8", "log"),
    # Dell/results/1xXE9680x8H200-SXM-141GB/llama2_70b_lora/result_0.txt: "0:   precision: bf16-mixed",
    # "0:   fp8: true"
    ("v5.1", "Dell", "1xXE9680x8H200-SXM-141GB", "llama2_70b_lora"): ("fp8", "log"),
    # AMD/benchmarks/llama31_8b/implementations/MI355X_EPYC_9575F_pytorch_llama3_8b/config_MI355X_1x8x1_8b.sh:
    # export FP8_PARAMS=1, NNODES=1, GPUS_PER_NODE=8
    ("v5.1", "AMD", "MI355X_EPYC_9575F_pytorch", "llama31_8b"): ("fp8", "config_match"),
    # NVIDIA/benchmarks/llama31_405b/implementations/theia_ngpu512_ngc25.09_nemo/: config_GB300_128x4x72xtp2pp8cp2_cg.sh
    # (FP8) and ..._cg_fp4.sh (NVFP4) both fit 128 x 4, and the logs hold MLLOG lines only: unknown
    ("v5.1", "NVIDIA", "theia_ngpu512_ngc25.09_nemo", "llama31_405b"): (None, None),
    # MangoBoost/results/MI300X-LLMBoost-GPUBoost-1node/llama2_70b_lora/result_0.txt prints "Config shell script:
    # config_MI300X_1x8x1.sh", whose FP8=True
    ("v5.0", "MangoBoost", "MI300X-LLMBoost-GPUBoost-1node", "llama2_70b_lora"): ("fp8", "config"),
}


@pytest.fixture(scope="module")
def real_precision() -> dict[tuple[str, str, str, str], tuple[str | None, str | None]]:
    archives = [MIRROR / f"training_results_{round_}.tar.gz" for round_ in ("v5.0", "v5.1")]
    if not all(archive.is_file() for archive in archives):
        pytest.skip(f"the MLPerf mirror is not at {MIRROR}")
    return {(row["round"], row["submitter"], row["system"], row["benchmark"]):
            (row["precision"], row["precision_source"])
            for archive in archives for row in read_source(archive).precision}


@pytest.mark.parametrize("key", list(BY_HAND), ids="/".join)
def test_real_results_read_as_by_hand(real_precision, key: tuple[str, str, str, str]) -> None:
    assert real_precision[key] == BY_HAND[key]


def test_the_parallel_layout_from_each_source() -> None:
    facts = precision.read_run(log(
        "0:   tensor_model_parallel_size: 4", "0:   virtual_pipeline_model_parallel_size: 3",
        "0:   pipeline_model_parallel_size: 1", "0:   context_parallel_size: 2", "0:   micro_batch_size: 1",
        "0:       val_micro_batch_size: 8", "0:       micro_batch_size: 2"))
    assert facts.log_layout == (4, 1, 2, None, 1)
    megatron = precision.read_run(log("Namespace(expert_model_parallel_size=1, encoder_tensor_model_parallel_size=0, "
                                      "tensor_model_parallel_size=2, micro_batch_size=32)"))
    assert megatron.log_layout == (2, None, None, 1, 32)
    records = [mllog(key, value, "0: ") for key, value in (("tensor_parallelism", 8), ("pipeline_parallelism", 4),
                                                          ("context_parallelism", 1), ("expert_parallelism", 16),
                                                          ("micro_batch_size", 1))]
    assert precision.read_run(log(*records)).mllog_layout == (8, 4, 1, 16, 1)
    assert precision.read_run(log("0:   fp8: true")).log_layout is None
    environment = precision.config_environment("config_GB200_18x4x1xtp1pp1cp2_8b.sh", {
        **FILES, "config_GB200_18x4x1xtp1pp1cp2_8b.sh": "export TENSOR_MODEL_PARALLEL=1\nexport CP=2\nexport MINIBS=1\n"
                                                        "export DGXNNODES=18\n"})
    assert precision.config_layout(environment) == (1, None, 2, None, 1)
    assert precision.config_layout({"FP8": "True"}) is None


def test_the_layout_resolves_as_the_precision() -> None:
    configs = [LaunchConfig("config_GB200_2x4x2_fp4.sh", "nemo", "nvfp4", 2, 4, (1, 1, 1, None, 2)),
               LaunchConfig("config_GB300_2x4x2.sh", "nemo", "fp8", 2, 4, (1, 1, 1, None, 2)),
               LaunchConfig("config_GB200_18x4x1.sh", "nemo", "fp8", 18, 4, (1, 1, 2, None, 1))]
    resolve = precision.resolve_layout
    # both 2 x 4 configurations give the same layout, though not the same precision
    assert resolve([RunPrecision()], configs, "box", 2, 4) == ((1, 1, 1, None, 2), "config_match", None)
    assert precision.resolve([RunPrecision()], configs, "box", 2, 4) == (None, None, None)
    assert resolve([RunPrecision(log_layout=(4, 1, 1, None, 1))], configs, "box", 2, 4).source == "log"
    assert resolve([RunPrecision()], configs, "box", 1, 8) == (None, None, None)


def test_ingest_carries_the_layout(make_archive) -> None:
    files = small_round()
    files.update({f"Acme/results/box/resnet/result_{run}.txt": "0:   tensor_model_parallel_size: 2\n"
                  "0:   micro_batch_size: 4\n" + run_log(10.0 + run) for run in range(5)})
    result = ingest([make_archive(files)]).results.iloc[0]
    assert (result["tensor_parallel"], result["micro_batch_size"], result["parallel_source"]) == (2, 4, "log")
    assert result[["pipeline_parallel", "context_parallel", "expert_parallel"]].isna().all()
    assert result[["precision", "precision_source"]].isna().all()


# Parallel layouts read by hand: (tensor, pipeline, context, expert, micro batch), source.
LAYOUT_BY_HAND = {
    # NVIDIA/benchmarks/llama31_8b/implementations/nemo/config_GB300_18x4x1xtp1pp1cp2_8b.sh: TENSOR_MODEL_PARALLEL=1,
    # PIPELINE_MODEL_PARALLEL=1, CONTEXT_PARALLEL=2, MICRO_BATCH_SIZE=1 (and its GB200 twin the same)
    ("v5.1", "NVIDIA", "theia_ngpu72_ngc25.09_nemo", "llama31_8b"): ((1, 1, 2, None, 1), "config_match"),
    # Oracle/results/2xBM.GPU.B200.8/flux1/result_0.txt lines 277-317 and CustomFluxConfig(...): micro_batch_size: 32,
    # tensor_model_parallel_size: 1, pipeline_model_parallel_size: 1, context_parallel_size: 1,
    # expert_model_parallel_size=1
    ("v5.1", "Oracle", "2xBM.GPU.B200.8", "flux1"): ((1, 1, 1, 1, 32), "log"),
}


@pytest.fixture(scope="module")
def real_layout() -> dict[tuple[str, str, str, str], tuple[tuple[object, ...], str | None]]:
    archive = MIRROR / "training_results_v5.1.tar.gz"
    if not archive.is_file():
        pytest.skip(f"the MLPerf mirror is not at {MIRROR}")
    return {(row["round"], row["submitter"], row["system"], row["benchmark"]):
            (tuple(row[field] for field in precision.LAYOUT_FIELDS), row["parallel_source"])
            for row in read_source(archive).precision}


@pytest.mark.parametrize("key", list(LAYOUT_BY_HAND), ids="/".join)
def test_real_layouts_read_as_by_hand(real_layout, key: tuple[str, str, str, str]) -> None:
    assert real_layout[key] == LAYOUT_BY_HAND[key]
