"""A result's numeric training precision, read from its logs and launch configurations.

The precision of a result is the lowest numeric format its linear layers (the matrix multiplications) train in,
as the v6.1 logging rules define `lowest_numerical_precision_in_linear`, in a closed vocabulary (`PRECISIONS`):
`fp32`, `tf32`, `fp16`, `bf16` (BF16 mixed precision), `fp8` (FP8 with per-tensor scales: delayed, current or
tensorwise), `mxfp8` (FP8 with MX block scales), `mxfp6`, `nvfp4`, `mxfp4` (4-bit with NVIDIA's or MX block
scales), `int8`, `int4`. Its source (`SOURCES`) is the first of, in order:

- `mllog`: the log's own `lowest_numerical_precision_in_linear` record (optional in the 6.0.0 rules, required
  from 6.1.0; `bfloat16` is read as `bf16`);
- `log`: the framework output printed in the log: YAML dumps (`fp8: true`, `fp4: true`, `fp4_recipe: nvfp4`,
  `fp8_recipe: mxfp8`, `precision: bf16-mixed`, after any `0: ` prefix) and Megatron's argument list
  (`fp8='hybrid'`, `fp4='e2m1'`, `bf16=True`);
- `config`: the launch configuration the log names (`config_filename` record, the launcher's
  `:::DLPAL ... <DGXSYSTEM>` line, which names `config_<DGXSYSTEM>.sh`, or a `config_*.sh` it prints), read
  from the round's `<submitter>/benchmarks/<benchmark>/implementations/*/config*.sh`;
- `config_match`: the submitter's launch configurations for the benchmark that match the result: those of the
  implementation folder named after the system when there is one, with the system's node count and
  accelerators per node (`DGXNNODES`/`NNODES`, `DGXNGPU`/`GPUS_PER_NODE`) and, where that leaves several, its
  accelerator (`GB300` in the name); they must all agree;
- `inferred`: every launch configuration of the submitter for the benchmark agrees (those whose names name an
  accelerator of another vendor than the system's left out);
- else the precision is unknown (both columns empty).

A configuration is read as the shell would set its variables, without running it: `export NAME=value` and
`NAME=value` lines in order, `${NAME:-default}` and `$NAME` expanded, and `source`d files of the same
implementation folder read in place (`FP8=True`, `FP8_PARAMS=1`, `FP8_RECIPE=mxfp8`, `FP4=True`,
`FP4_RECIPE=nvfp4`). A launch configuration is one that sets the node count; one that switches no low
precision on means BF16 for the benchmarks whose implementations train in BF16 (`BF16_BENCHMARKS`), and
nothing elsewhere.

The same sources, in the same order, give a result's parallel layout (`LAYOUT_FIELDS`: tensor, pipeline, context
and expert parallel sizes, micro batch size), whole from the first that states any of them: the v6.1 MLLOG keys
(`tensor_parallelism`, `pipeline_parallelism`, `context_parallelism`, `expert_parallelism`, `micro_batch_size`),
the framework's `tensor_model_parallel_size`, `pipeline_model_parallel_size`, `context_parallel_size`,
`expert_model_parallel_size`, `micro_batch_size`, and the configurations' `TENSOR_MODEL_PARALLEL` or `TP`,
`PIPELINE_MODEL_PARALLEL` or `PP`, `CONTEXT_PARALLEL` or `CP`, `EXPERT_MODEL_PARALLEL` or `EP`, `MICRO_BATCH_SIZE`,
`MINIBS` or `MBS`. Everything here is a pure function of bytes and text.
"""
from __future__ import annotations

import re
from collections import ChainMap, Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from pipeline.core import schemas
from pipeline.mlperf.logs.logparse import records_of

PRECISIONS = schemas.PRECISIONS
SOURCES = schemas.PRECISION_SOURCES

# The v6.1 rules' precision key and spellings (mlperf_logging, training_6.1.0/common.yaml).
MLLOG_PRECISION_KEY = "lowest_numerical_precision_in_linear"
MLLOG_CONFIG_KEY = "config_filename"
_MLLOG_SPELLINGS = {"fp64": "fp32", "fp32": "fp32", "tf32": "tf32", "fp16": "fp16", "bfloat16": "bf16",
                    "bf16": "bf16", "fp8": "fp8", "mxfp8": "mxfp8", "mxfp6": "mxfp6", "nvfp4": "nvfp4",
                    "mxfp4": "mxfp4", "graphcore float 16.16": "fp16", "int8": "int8", "uint8": "int8",
                    "int4": "int4", "uint4": "int4"}

# Benchmarks (results folder names) whose implementations train in BF16 unless a low-precision switch is on.
BF16_BENCHMARKS = frozenset({"llama2_70b_lora", "llama31_8b", "llama31_405b", "flux1", "gpt3",
                             "deepseek_v3_671b", "gpt_oss_20b"})

# Framework settings as printed: a YAML key (`fp8: true`) or a Python argument (`fp8='hybrid'`); the key must not
# be part of a longer name (`keep_fp8_transpose_cache=`, `fp8_param_gather:`).
# One pattern per leading literal, which re scans for quickly (an alternation of keys would be tried at every
# byte); the character before a key is checked apart.
_VALUE = rb"[ \t]*[:=][ \t]*['\"]?([\w.-]*)"
_SETTINGS = tuple(re.compile(rb"(" + keys + rb")" + _VALUE)
                  for keys in (rb"fp(?:8|4)(?:_recipe)?|fp16", rb"bf16", rb"precision"))
_NAME_CHARACTERS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-")
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")
_RUN_START, _RUN_STOP = b'"key": "run_start"', b'"key": "run_stop"'
_DLPAL = re.compile(rb":::DLPAL [^\r\n]*")
_CONFIG_MENTION = re.compile(rb"config_[\w.+-]+\.sh")
_ON = frozenset({"true", "1", "yes", "on", "hybrid", "e4m3", "e5m2", "e2m1"})
_RECIPES = {"mxfp8": "mxfp8", "nvfp4": "nvfp4", "mxfp4": "mxfp4"}

# A run's parallel layout: tensor, pipeline, context and expert parallel sizes and micro batch size, in this order.
LAYOUT_FIELDS = tuple(schemas.PARALLEL_COLUMNS[:-1])
Layout = tuple[int | None, ...]
_MLLOG_LAYOUT = {"tensor_parallelism": "tensor_parallel", "pipeline_parallelism": "pipeline_parallel",
                 "context_parallelism": "context_parallel", "expert_parallelism": "expert_parallel",
                 "micro_batch_size": "micro_batch_size"}
# The MLLOG keys read here, which the ingest asks the log parser to note (`read_run`'s `present`).
MLLOG_KEYS = frozenset({MLLOG_PRECISION_KEY, MLLOG_CONFIG_KEY, *_MLLOG_LAYOUT})
_LOG_LAYOUT = {"tensor_model_parallel_size": "tensor_parallel", "pipeline_model_parallel_size": "pipeline_parallel",
               "context_parallel_size": "context_parallel", "expert_model_parallel_size": "expert_parallel",
               "micro_batch_size": "micro_batch_size"}
_LAYOUT_SETTINGS = tuple(re.compile(rb"(" + key + rb")[ \t]*[:=][ \t]*(\d+)\b")
                         for key in (rb"_parallel_size", rb"micro_batch_size"))
_KEY_CHARACTERS = frozenset(b"abcdefghijklmnopqrstuvwxyz_")
_CONFIG_LAYOUT = {"tensor_parallel": ("TENSOR_MODEL_PARALLEL", "TP"),
                  "pipeline_parallel": ("PIPELINE_MODEL_PARALLEL", "PP"),
                  "context_parallel": ("CONTEXT_PARALLEL", "CP"),
                  "expert_parallel": ("EXPERT_MODEL_PARALLEL", "EP"),
                  "micro_batch_size": ("MICRO_BATCH_SIZE", "MINIBS", "MBS")}
_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_SOURCE = re.compile(r"^\s*(?:source|\.)\s+(?:\$\(dirname [^)]*\)/?)?(\S+)")
_EXPANSION = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_MAX_SOURCE_DEPTH = 8
# Accelerator models as configuration names spell them (`DGXB200`, `GB300`, `MI355X`); other letters and digits
# in a name (`AS-A126GS`) are not one.
_ACCELERATOR_TOKEN = re.compile(r"GB[23]00|B[23]00|H[128]00|A[18]00|MI\d{3}X?", re.IGNORECASE)
_MODEL_SIZE = re.compile(r"(?<![A-Za-z0-9])(\d+[bB])(?![A-Za-z0-9])")
_NAME_COUNTS = re.compile(r"_0*(\d+)x0*(\d+)(?:x|_|$)")


@dataclass(frozen=True)
class RunPrecision:
    """What one run's log says: its `mllog` and framework-output (`log`) precision, the launch configuration it
    names (`config_name`, a file name such as `config_GB200_18x4x1.sh`), and its parallel layout (`Layout`) from
    MLLOG records (`mllog_layout`) and framework output (`log_layout`); None where it says nothing."""

    mllog: str | None = None
    log: str | None = None
    config_name: str | None = None
    mllog_layout: Layout | None = None
    log_layout: Layout | None = None


@dataclass(frozen=True)
class LaunchConfig:
    """One launch configuration of an implementation: its file `name`, `implementation` folder, the `precision` it
    sets (None when it does not tell), node count, accelerators per node and parallel `layout` (None where not
    set)."""

    name: str
    implementation: str
    precision: str | None
    nodes: int | None
    per_node: int | None
    layout: Layout | None = None


def read_run(data: bytes, present: frozenset[str] | None = None, records_only: bool = False) -> RunPrecision:
    """The precision facts of one run's log: its MLLOG records (of the keys of `MLLOG_KEYS` in `present`, those the
    log holds, as `pipeline.mlperf.logs.logparse.parse_log` notes them in the pass it makes anyway; None: looked
    for here), the framework output before the timed run and the launcher's lines outside it (`outside_run`).
    A log of MLLOG lines alone (`records_only`, as `parse_log` notes it: every line starts with the token) prints
    no framework or launcher output, and only its records are read (in twelve rounds, no such log holds text that
    the framework's or the launcher's patterns match)."""
    present = _present(data, present)
    if records_only:
        return RunPrecision(mllog=mllog_precision(data, present), config_name=mllog_config(data, present),
                            mllog_layout=mllog_layout(data, present))
    spans = outside_run(data)
    return RunPrecision(mllog=mllog_precision(data, present),
                        log=settings_precision(log_settings(data, spans[:1])),
                        config_name=named_config(data, spans, present), mllog_layout=mllog_layout(data, present),
                        log_layout=log_layout(data, spans[:1]))


def _present(data: bytes, present: frozenset[str] | None) -> frozenset[str]:
    if present is None:
        return frozenset(key for key in MLLOG_KEYS if f'"{key}"'.encode() in data)
    return present & MLLOG_KEYS


def mllog_layout(data: bytes, present: frozenset[str] | None = None) -> Layout | None:
    """The parallel layout the log's v6.1 MLLOG records state (`tensor_parallelism`, ..., `micro_batch_size`),
    or None when it has none of them (`present`: as `read_run` takes it)."""
    present = _present(data, present)
    sizes: dict[str, int] = {}
    for key, field in _MLLOG_LAYOUT.items():
        if key not in present:
            continue
        for _, record in records_of(data, key):
            value = record.get("value")
            if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
                sizes.setdefault(field, value)
    return _layout(sizes)


def log_layout(data: bytes, spans: Sequence[tuple[int, int]] | None = None) -> Layout | None:
    """The parallel layout framework output states within `spans` (default the whole log): NeMo's YAML
    (`tensor_model_parallel_size: 4`) or Megatron's arguments (`context_parallel_size=2`), the first value of each;
    None when it states none."""
    sizes: dict[str, int] = {}
    for begin, end in spans or ((0, len(data)),):
        for pattern in _LAYOUT_SETTINGS:
            for match in pattern.finditer(data, begin, end):
                start = match.start()
                while start > begin and data[start - 1] in _KEY_CHARACTERS:
                    start -= 1
                field = _LOG_LAYOUT.get(data[start: match.end(1)].decode("ascii", "replace"))
                if field is not None:
                    sizes.setdefault(field, int(match.group(2)))
    return _layout(sizes)


def _layout(sizes: Mapping[str, int]) -> Layout | None:
    return tuple(sizes.get(field) for field in LAYOUT_FIELDS) if sizes else None


def outside_run(data: bytes) -> tuple[tuple[int, int], ...]:
    """The (start, end) offsets of a log's text before its run_start line and after its run_stop line, where
    launchers and frameworks print their settings (the timed run between them prints progress, most of a log's
    bytes, which need not be read); the whole log when it lacks either line."""
    start, stop = data.find(_RUN_START), data.rfind(_RUN_STOP)
    if start < 0 or stop < start:
        return ((0, len(data)),)
    tail = data.find(b"\n", stop)
    return ((0, data.rfind(b"\n", 0, start) + 1), (len(data) if tail < 0 else tail, len(data)))


def mllog_precision(data: bytes, present: frozenset[str] | None = None) -> str | None:
    """The log's first `lowest_numerical_precision_in_linear` value in the vocabulary, or None (`present`: as
    `read_run` takes it)."""
    if MLLOG_PRECISION_KEY not in _present(data, present):
        return None
    for _, record in records_of(data, MLLOG_PRECISION_KEY):
        value = record.get("value")
        if isinstance(value, str) and value.strip().lower() in _MLLOG_SPELLINGS:
            return _MLLOG_SPELLINGS[value.strip().lower()]
    return None


def log_settings(data: bytes, spans: Sequence[tuple[int, int]] | None = None) -> dict[str, str]:
    """The framework's precision settings printed in a log (within `spans`, offsets; default the whole log), the
    first value of each key, lower case."""
    settings: dict[str, str] = {}
    for begin, end in spans or ((0, len(data)),):
        for pattern in _SETTINGS:
            for match in pattern.finditer(data, begin, end):
                start = match.start()
                if start and data[start - 1] in _WORD:
                    continue
                settings.setdefault(match.group(1).decode(), match.group(2).decode("ascii", "replace").lower())
    return settings



def log_precision(data: bytes) -> str | None:
    """The precision the framework output of a whole log states, or None."""
    return settings_precision(log_settings(data))


def settings_precision(settings: Mapping[str, str], recipe_switches: bool = False,
                       base: str | None = None) -> str | None:
    """The precision that settings (keys `fp8`, `fp4`, `fp8_recipe`, `fp4_recipe`, `precision`, `bf16`, `fp16`,
    values lower case) select: 4-bit when `fp4` is on (its recipe names which), else FP8 when `fp8` is on (`mxfp8`
    by its recipe), else what `precision`, `bf16` or `fp16` say, else `base`. With `recipe_switches`, a named
    `fp8_recipe` without an `fp8` setting switches FP8 on (a launch configuration sets it only to use it; a
    framework prints its default)."""
    def on(key: str) -> bool:
        return settings.get(key, "") in _ON

    if on("fp4"):
        return _RECIPES.get(settings.get("fp4_recipe", ""))
    fp8_recipe = settings.get("fp8_recipe", "")
    if on("fp8") or (recipe_switches and "fp8" not in settings and fp8_recipe):
        return "mxfp8" if fp8_recipe == "mxfp8" else "fp8"
    precision = settings.get("precision", "")
    if precision.startswith("bf16"):
        return "bf16"
    if precision in ("16", "16-mixed", "fp16", "fp16-mixed"):
        return "fp16"
    if precision in ("32", "32-true", "fp32"):
        return "fp32"
    if on("bf16"):
        return "bf16"
    if on("fp16"):
        return "fp16"
    return base


def named_config(data: bytes, spans: Sequence[tuple[int, int]] | None = None,
                 present: frozenset[str] | None = None) -> str | None:
    """The launch configuration file a log names: its `config_filename` record, else, within `spans` (offsets;
    default the whole log), the last field of the launcher's `:::DLPAL` line (DGXSYSTEM: `config_<it>.sh`) or the
    first `config_*.sh` it prints; None if none (`present`: as `read_run` takes it)."""
    recorded = mllog_config(data, present)
    if recorded is not None:
        return recorded
    spans = spans or ((0, len(data)),)
    for begin, end in spans:
        found = data.find(b":::DLPAL ", begin, end)
        match = _DLPAL.match(data, found, end) if found >= 0 else None
        if match is not None:
            fields = match.group(0).decode("utf-8", "replace").split()
            system = fields[-1].strip("'\"\\") if len(fields) > 2 else ""
            if re.fullmatch(r"[\w.+-]+", system):
                return _config_file(system)
    for begin, end in spans:
        for mention in _CONFIG_MENTION.finditer(data, begin, end):
            if not mention.start() or data[mention.start() - 1] not in _NAME_CHARACTERS:
                return mention.group(0).decode()
    return None


def mllog_config(data: bytes, present: frozenset[str] | None = None) -> str | None:
    """The launch configuration file the log's first usable `config_filename` record names, or None (`present`: as
    `read_run` takes it)."""
    if MLLOG_CONFIG_KEY in _present(data, present):
        for _, record in records_of(data, MLLOG_CONFIG_KEY):
            value = record.get("value")
            if isinstance(value, str) and value.strip():
                return _config_file(value.strip().rsplit("/", 1)[-1])
    return None


def _config_file(name: str) -> str:
    name = name if name.endswith(".sh") else f"{name}.sh"
    return name if name.startswith("config_") else f"config_{name}"


def config_environment(name: str, files: Mapping[str, str], read: list[str] | None = None,
                       missing: list[str] | None = None) -> dict[str, str]:
    """The variables the configuration `name` of an implementation folder sets (`files`: its config files by name,
    relative to the folder), read in order, `source`d files included: the names of the files read are appended to
    `read` and those of sourced files not in `files` to `missing`, when given."""
    environment: dict[str, str] = {}
    _evaluate(name, files, environment, 0, (set(), read if read is not None else [],
                                            missing if missing is not None else []))
    return environment


def _evaluate(name: str, files: Mapping[str, str], environment: dict[str, str], depth: int,
              track: tuple[set[str], list[str], list[str]]) -> None:
    seen, read, missing = track
    if name not in files:
        missing.append(name)
        return
    if name in seen or depth > _MAX_SOURCE_DEPTH:
        return
    seen.add(name)
    read.append(name)
    for line in files[name].splitlines():
        sourced = _SOURCE.match(line)
        if sourced:
            target = _expand(sourced.group(1).strip("'\""), environment).removeprefix("./")
            _evaluate(target, files, environment, depth + 1, track)
            continue
        assigned = _ASSIGNMENT.match(line)
        if assigned:
            environment[assigned.group(1)] = _value(assigned.group(2), environment)


def _value(text: str, environment: Mapping[str, str]) -> str:
    """A shell value: unquoted, its trailing comment and `;` dropped, its variables expanded."""
    text = text.strip()
    if text[:1] in ("'", '"') and text[0] in text[1:]:
        text = text[1: text.index(text[0], 1)]
    else:
        text = re.split(r"\s+#|;", text, maxsplit=1)[0].strip()
    return _expand(text, environment)


def _expand(text: str, environment: Mapping[str, str]) -> str:
    def substitute(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        value = environment.get(name, "")
        return value if value or match.group(2) is None else match.group(2).strip("'\"")
    return _EXPANSION.sub(substitute, text)


def config_precision(environment: Mapping[str, str], benchmark: str, complete: bool = True) -> str | None:
    """The precision a launch configuration's variables select, for a results folder `benchmark`; unless it is
    `complete` (every file it sources was read), only a low-precision switch it sets tells."""
    settings = {key.lower(): environment[key].strip().lower()
                for key in ("FP8", "FP4", "FP8_RECIPE", "FP4_RECIPE") if key in environment}
    if settings.get("fp8", "") not in _ON and environment.get("FP8_PARAMS", "").strip().lower() in _ON:
        settings["fp8"] = "true"
    base = "bf16" if benchmark in BF16_BENCHMARKS and complete else None
    return settings_precision(settings, recipe_switches=True, base=base)


def launch_configs(implementations: Mapping[str, Mapping[str, str]], benchmark: str) -> list[LaunchConfig]:
    """The launch configurations (those that set a node count) of a submitter's benchmark, by implementation folder
    (`implementations`: folder -> config file name -> text), with what each sets. A file a configuration sources
    that its folder lacks is read from another implementation folder of the benchmark that has it (some
    submitters published a folder without its `config_common.sh`). Where an implementation serves models of
    several sizes (NVIDIA's Llama 3.1 8B and 405B share one), a configuration whose files name another size than
    the benchmark's (`config_common_405b.sh`, `..._8b.sh`) is left out."""
    size = _model_size(benchmark)
    configs = []
    for implementation, files in sorted(implementations.items()):
        siblings = [other for folder, other in sorted(implementations.items()) if folder != implementation]
        for name in sorted(files):
            read: list[str] = []
            missing: list[str] = []
            environment = config_environment(name, ChainMap(dict(files), *map(dict, siblings)), read, missing)
            nodes = _integer(environment.get("DGXNNODES", environment.get("NNODES")))
            sizes = {found for file in read if (found := _model_size(file)) is not None}
            if nodes is None or (size is not None and sizes and size not in sizes):
                continue
            per_node = _integer(environment.get("DGXNGPU", environment.get("GPUS_PER_NODE")))
            if per_node is None:
                counts = _NAME_COUNTS.search(name.removesuffix(".sh"))
                per_node = int(counts.group(2)) if counts and int(counts.group(1)) == nodes else None
            configs.append(LaunchConfig(name, implementation,
                                        config_precision(environment, benchmark, complete=not missing), nodes,
                                        per_node, config_layout(environment)))
    return configs


def config_layout(environment: Mapping[str, str]) -> Layout | None:
    """The parallel layout a launch configuration's variables set (`TENSOR_MODEL_PARALLEL` or `TP`, ...,
    `MICRO_BATCH_SIZE`, `MINIBS` or `MBS`), or None when it sets none."""
    sizes = {}
    for field, names in _CONFIG_LAYOUT.items():
        value = next((_integer(environment[name]) for name in names if name in environment), None)
        if value is not None and value >= 1:
            sizes[field] = value
    return _layout(sizes)


def _model_size(name: str) -> str | None:
    """The model size a benchmark or file name states (`8b` in `llama31_8b`, `config_common_405b.sh`), or None."""
    found = _MODEL_SIZE.search(name)
    return found.group(1).lower() if found else None


def _integer(text: str | None) -> int | None:
    return int(text) if text is not None and text.strip().isdigit() else None


class Resolved(NamedTuple):
    """A result's `precision` and its `source` (both None when unknown), and the launch configuration it was read
    from (`config`, None unless the source is a configuration)."""

    precision: str | None = None
    source: str | None = None
    config: str | None = None


def resolve(runs: Sequence[RunPrecision], configs: Sequence[LaunchConfig], system: str,
            nodes: int | None = None, per_node: int | None = None, accelerator: str = "") -> Resolved:
    """A result's precision from its runs' facts and the submitter's launch configurations for its benchmark, by the
    first source that tells (module docstring); `nodes`, `per_node` and `accelerator` describe the system."""
    matched = matching(configs, system, nodes, per_node, accelerator)
    return _first_told(runs, configs, system, matched, accelerator, lambda run, source: getattr(run, source),
                       lambda config: config.precision)


def resolve_layout(runs: Sequence[RunPrecision], configs: Sequence[LaunchConfig], system: str,
                   nodes: int | None = None, per_node: int | None = None, accelerator: str = "") -> Resolved:
    """A result's parallel layout (`Layout`, as `Resolved.precision`) and its source, by the same sources in the same
    order as its precision; the layout comes whole from the first source that states any of its sizes."""
    matched = matching(configs, system, nodes, per_node, accelerator)
    return _first_told(runs, configs, system, matched, accelerator,
                       lambda run, source: getattr(run, f"{source}_layout"), lambda config: config.layout)


def _first_told(runs: Sequence[RunPrecision], configs: Sequence[LaunchConfig], system: str,
                matched: Sequence[LaunchConfig], accelerator: str, of_run: Callable[[RunPrecision, str], Any],
                of_config: Callable[[LaunchConfig], Any]) -> Resolved:
    for source in ("mllog", "log"):
        told = _most_common(of_run(run, source) for run in runs)
        if told is not None:
            return Resolved(told, source)
    for name in _ordered(run.config_name for run in runs):
        named = [config for config in configs if config.name == name and of_config(config) is not None]
        named = [config for config in named if config.implementation == system] or named
        agreed = _agreed(map(of_config, named))
        if agreed is not None:
            return Resolved(agreed, "config", named[0].name)
    agreed = _agreed(map(of_config, matched))
    if agreed is not None:
        return Resolved(agreed, "config_match", matched[0].name if len(matched) == 1 else None)
    agreed = _agreed(map(of_config, compatible(configs, accelerator)))
    return Resolved(agreed, "inferred") if agreed is not None else Resolved()


def matching(configs: Sequence[LaunchConfig], system: str, nodes: int | None, per_node: int | None,
             accelerator: str = "") -> list[LaunchConfig]:
    """The launch configurations that fit a system: of the implementation folder named after it when there is one,
    with its node count and accelerators per node where both are known, then with its accelerator where the names
    say (a name without an accelerator token fits any); empty when the count is unknown or none fits."""
    own = [config for config in configs if _names_system(config.implementation, system)]
    candidates = own or list(configs)
    if nodes is None or per_node is None:
        return own if own else []
    fits = [config for config in candidates if config.nodes == nodes and config.per_node in (None, per_node)]
    fits = [config for config in fits if _named_after(config.name, system)] or fits
    wanted = _accelerator_tokens(accelerator)
    if len(fits) > 1 and wanted:
        fits = [config for config in fits if _accelerator_tokens(config.name) <= wanted] or fits
    return fits


def compatible(configs: Sequence[LaunchConfig], accelerator: str) -> list[LaunchConfig]:
    """The configurations whose names name no accelerator of another vendor than the system's (all of them when the
    system's vendor is not known): one submitter's NVIDIA configurations say nothing of its AMD system."""
    wanted = _vendors(accelerator)
    return [config for config in configs if not wanted or _vendors(config.name) <= wanted]


def _vendors(text: str) -> set[str]:
    """The accelerator vendors a name or description names: `amd` for an MI part or the word AMD, else `nvidia`."""
    vendors = {"amd" if token.startswith("MI") else "nvidia" for token in _accelerator_tokens(text)}
    words = set(re.findall(r"[A-Z]+", text.upper()))
    return vendors | {vendor for vendor in ("amd", "nvidia") if vendor.upper() in words}


def _names_system(implementation: str, system: str) -> bool:
    """Whether an implementation folder is named after the system (`theia_ngpu72_ngc25.09_nemo`) or its family
    (`hpg.dgxb200x8` for `hpg.dgxb200x8.n1`)."""
    return system == implementation or system.startswith((f"{implementation}.", f"{implementation}_"))


def _named_after(config: str, system: str) -> bool:
    """Whether a configuration's name holds the system's name or the system's holds its (`config_XE9780x8B300-SXM-
    270GB_1x8x1xtp1pp1cp1.sh` for `1xXE9780x8B300-SXM-270GB`); a short or generic name (`DGXB200`) is not enough."""
    own = re.sub(r"[^a-z0-9]", "", _NAME_COUNTS.split(config.removeprefix("config_").removesuffix(".sh"))[0].lower())
    wanted = re.sub(r"[^a-z0-9]", "", system.lower())
    return len(own) >= 8 and (own in wanted or wanted in own)


def _accelerator_tokens(text: str) -> set[str]:
    """The accelerator models a text names (`GB200`, `B200`, `H100`, `MI355X`), upper case."""
    return {token.upper() for token in _ACCELERATOR_TOKEN.findall(text)}


def _agreed(values: Iterable[Any]) -> Any:
    """The one value all give, or None (none given, several, or one that tells nothing)."""
    found = set(values)
    return found.pop() if len(found) == 1 and None not in found else None


def _most_common(values: Iterable[Any]) -> Any:
    counted = Counter(value for value in values if value is not None)
    return counted.most_common(1)[0][0] if counted else None


def _ordered(values: Iterable[str | None]) -> list[str]:
    return [value for value, _ in Counter(value for value in values if value is not None).most_common()]


def leading_integer(text: Any) -> int | None:
    """The whole number a description field starts with (`"18"`, `"4 "`), or None."""
    match = re.match(r"\s*(\d+)\b", text) if isinstance(text, str) else None
    return int(match.group(1)) if match else None
