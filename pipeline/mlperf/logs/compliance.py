"""The official compliance checker's logging rules that decide, with convergence, whether a run counts.

`mlperf_logging.compliance_checker` reads every result log against YAML rule files of the round's ruleset:
`common.yaml`, then `<division>_common.yaml` (chosen by the log's `submission_division`), then
`<division>_<benchmark>.yaml` (by `submission_benchmark`) and for closed ResNet `closed_resnet_<opt_name>.yaml`.
A run it rejects does not count in the official score. The rule files hold Python expressions run on every
line; ingest does not run them, it applies the parts that reject published runs:

- how often a key must be logged (`REQ`: EXACTLY_ONE, AT_LEAST_ONE, AT_LEAST(n), AT_LEAST_ONE_OR(...)), where
  the last rule file to name a key decides, as in the checker. Only too few records are a violation here:
  every rejection of this kind in the published rounds is a missing record, and a key logged twice with the
  same value is only a warning to the checker;
- the set of initialised tensors (`weights_initialization` records) that the 1.1.0 to 2.1.0 closed rules
  demand;
- the limit on initialisation, init_stop minus the first init_start: 20 minutes (0.7.0), 30 (1.0.0, 1.1.0),
  and from 2.0.0 30 in the closed division and 240 in the open one.

A `:::MLLOG` line that the checker's parser cannot read (`readable.damaged_lines`: the record after the line's
last token is not JSON, such as two processes' writes interleaved) makes the checker reject the log, and the
rest of the log is checked without it (`parse_log` blanks it), so a key logged only there is also missing.

A key counts as logged where its record's text, `"key": "<name>"`, stands anywhere in the log. The keys some
rule file requires exactly once are noted by `parse_log` in its own pass over the log (ask it with
`also_find=presence_keys()`); any other is searched for from both ends of the log, where one of its many
records lies close (`_first_of`).

The quality target, which the checker also tests, is `benchmarks.Benchmark.reached`. The rules are read from
`compliance_rules.json`, extracted from the mlperf-logging package by `python -m pipeline.mlperf.logs.compliance`;
`tests/mlperf/test_compliance.py` checks that file against the installed package.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pipeline.core.cli import ArgumentParser
from pipeline.core.errors import UsageError, cli
from pipeline.core.files import write_json
from pipeline.mlperf.logs.logparse import RunFacts, key_pattern, records_of
from pipeline.mlperf.logs.readable import readable

RULES_FILE = "compliance_rules.json"
# Which log value names the next rule file, as the rule files' POST code does with enqueue_config().
ENQUEUE = re.compile(r"enqueue_config\('training_[\d.]+/(?P<template>\w*\{\}\w*)\.yaml'\.format\(v\['value'\]\)\)")
FIXED_INIT_LIMIT = re.compile(r"first_init_start'\] < \((?P<minutes>\d+)\*60\*1e3\)")
DIVISION_INIT_LIMIT = re.compile(r"compile_time_mins'\] = (?P<open>\d+) if v\['value'\] == 'open' else (?P<other>\d+)")
AT_LEAST = re.compile(r"AT_LEAST\((?P<n>\d+)\)")
AT_LEAST_ONE_OR = re.compile(r"AT_LEAST_ONE_OR\((?P<alternatives>[^)]*)\)")
TENSOR = re.compile(rb'"key":\s*"weights_initialization"[^\n]*?"tensor":\s*"(?P<name>(?:[^"\\\n]|\\.)*)"')
RULESET_DIR = re.compile(r"training_(?P<version>\d+\.\d+\.\d+)")
TENSOR_VALUE = re.compile(rb'"tensor": "([^"\\\n]*)"')
WEIGHTS_KEY = b'"weights_initialization"'
FIRST_WINDOW = 4 << 10
# A virtual key that a rule file's BEGIN code makes from the records of another key that carry a metric, one
# per value of a metadata field (Stable Diffusion's aggregated_eval_accuracy: its FID and CLIP evaluations, per
# samples_count, or step_num in 3.1.0).
VIRTUAL_KEY = re.compile(r'line\.key == "(?P<source>\w+)".*?= line\.value\[\'metadata\'\]\[\'(?P<group_by>\w+)\'\]'
                         r'.*new_line\.key = "(?P<virtual>\w+)"', re.S)


@dataclass(frozen=True)
class RuleFile:
    """The part of one YAML rule file that ingest applies."""

    requirements: dict[str, str | None]  # every key the file names -> its REQ, None where it has none
    enqueue: dict[str, str]  # key -> template of the rule file its value names, such as "{}_common"
    tensors: tuple[str, ...] | None  # the initialised tensors the END check demands
    init_limit_min: dict[str, float] | None  # {"open": minutes, "other": minutes}
    virtual_keys: dict[str, dict[str, str]]  # a key the BEGIN code makes -> {"source": key, "group_by": field}


def round_ruleset(round_: str) -> str:
    """The official tools' name of a round's ruleset: v5.0 -> 5.0.0."""
    return f"{round_.lstrip('v')}.0"


@cache
def _rules() -> dict[str, dict[str, RuleFile]]:
    text = resources.files(__package__).joinpath(RULES_FILE).read_text(encoding="utf-8")
    return {version: {name: RuleFile(requirements=rule["requirements"], enqueue=rule["enqueue"],
                                     tensors=tuple(rule["tensors"]) if rule["tensors"] is not None else None,
                                     init_limit_min=rule["init_limit_min"], virtual_keys=rule["virtual_keys"])
                      for name, rule in files.items()}
            for version, files in json.loads(text)["rulesets"].items()}


@dataclass(frozen=True)
class Checks:
    """What the chain of rule files that one kind of log gets asks of it."""

    ruleset: str
    # Keys that need one record, with the rule's REQ: a set, to subtract the keys a log is known to have.
    single: dict[str, str]
    counted: tuple[tuple[str, int, str], ...]  # (key, records needed, REQ) for more than one, or a virtual key
    alternatives: tuple[tuple[str, ...], ...]  # at least one record of one of these keys
    virtual_keys: dict[str, dict[str, str]]
    tensors: list[str] | None  # sorted
    init_limits: dict[str, float] | None
    missing_files: tuple[str, ...]  # rule files the log's values name that the checker does not have


def violations(data: bytes, facts: RunFacts, round_: str) -> list[str]:
    """The logging rules of the round's ruleset that the log breaks; empty when it meets them all, and for
    rounds whose ruleset the table does not hold (nothing is then checked)."""
    if facts.log_format != "mllog":
        return []
    checks = checks_for(round_ruleset(round_), facts.submission_division, facts.submission_benchmark,
                        facts.optimizer)
    if checks is None:
        return []
    ruleset = checks.ruleset
    broken = list(checks.missing_files)
    if facts.parse_errors:
        # The checker rejects a log any of whose :::MLLOG lines does not parse ("Log lines had parsing errors"),
        # and checks the rest of the log without those lines: a key logged only there is missing too.
        broken.append(f"{facts.parse_errors} :::MLLOG line(s) that do not parse (the checker rejects a log with "
                      "parsing errors)")
        data = readable(data)[0]
    present = _Presence(data, facts, checks.virtual_keys)
    for key in sorted(checks.single.keys() - present.known):
        if not present.has(key):
            broken.append(f"no {key} record ({ruleset} requires {checks.single[key]})")
    for key, needed, requirement in checks.counted:
        if not present.has(key, needed):
            broken.append(f"no {key} record ({ruleset} requires {requirement})" if needed == 1 else
                          f"fewer than {needed} {key} records ({ruleset} requires {requirement})")
    for names in checks.alternatives:
        if not present.has_one_of(names):
            broken.append(f"none of {' / '.join(names)} logged ({ruleset} requires one of them)")
    if checks.tensors is not None and present.has("weights_initialization"):
        tensors = sorted(_tensor_names(data))
        if tensors != checks.tensors:
            broken.append(f"weights_initialization records name {len(tensors)} tensor{'s' * (len(tensors) != 1)}, "
                          f"not the {len(checks.tensors)} the {ruleset} rules list "
                          f"({_tensor_difference(Counter(tensors), Counter(checks.tensors))})")
    if checks.init_limits is not None and facts.init_time_ms >= 0:
        limit = checks.init_limits["open" if facts.submission_division == "open" else "other"]
        if facts.init_time_ms >= limit * 60_000:
            broken.append(f"initialisation took {facts.init_time_ms / 60_000:.1f} min, over the {limit:g} min "
                          f"the {ruleset} rules allow")
    return broken


@cache
def checks_for(ruleset: str, division: str | None, benchmark: str | None, optimizer: str | None) -> Checks | None:
    """The checks of the rule files the checker reads for a log with these values, in its order: a later file
    that names a key replaces what an earlier one asked of it. None for a ruleset the table does not hold."""
    files = _rules().get(ruleset)
    if files is None:
        return None
    values = {"submission_division": division, "submission_benchmark": benchmark, "opt_name": optimizer}
    requirements: dict[str, str | None] = {}
    virtual: dict[str, dict[str, str]] = {}
    tensors: tuple[str, ...] | None = None
    init_limits: dict[str, float] | None = None
    missing: list[str] = []
    queue, seen = ["common"], set()
    while queue:
        name = queue.pop(0)
        if name in seen:
            continue
        seen.add(name)
        rule = files[name]
        requirements.update(rule.requirements)
        virtual.update(rule.virtual_keys)
        tensors = rule.tensors if rule.tensors is not None else tensors
        init_limits = rule.init_limit_min or init_limits
        for key, template in rule.enqueue.items():
            value = values.get(key)
            if value is None:
                continue  # the key's own REQ reports that it is missing
            target = template.format(value)
            if target in files:
                queue.append(target)
            else:
                missing.append(f"{key} {value!r} names rule file {target}.yaml, which the checker does not have")
    at_least: list[tuple[str, int, str]] = []
    alternatives: set[tuple[str, ...]] = set()
    for key, requirement in requirements.items():
        if requirement is None or requirement == "OPTIONAL":
            continue
        if (choice := AT_LEAST_ONE_OR.fullmatch(requirement)) is not None:
            alternatives.add(tuple(sorted({key, *(other.strip() for other in choice["alternatives"].split(","))})))
        elif (count := AT_LEAST.fullmatch(requirement)) is not None:
            at_least.append((key, int(count["n"]), requirement))
        else:
            at_least.append((key, 1, requirement))
    single = {key: requirement for key, needed, requirement in at_least if needed == 1 and key not in virtual}
    counted = tuple(entry for entry in at_least if entry[0] not in single)
    return Checks(ruleset, single, counted, tuple(sorted(alternatives)), virtual,
                  sorted(tensors) if tensors is not None else None, init_limits, tuple(missing))


@cache
def presence_keys() -> frozenset[str]:
    """The keys whose presence `violations` asks `parse_log` to note as it reads a log: those that a rule file
    requires exactly once. They are logged once, so noting them costs little; the others (AT_LEAST_ONE: blocks,
    epochs, evaluations, initialised tensors) are logged many times, and a search finds one quickly."""
    return frozenset(key for files in _rules().values() for rule in files.values()
                     for key, requirement in rule.requirements.items() if requirement == "EXACTLY_ONE")


class _Presence:
    """Which keys a log has: those that `parse_log` found, and any other by a search of the log from both ends
    (see `_first_of`); what a search learns is kept for the next question."""

    def __init__(self, data: bytes, facts: RunFacts, virtual_keys: dict[str, dict[str, str]]) -> None:
        self.data = data
        self.virtual_keys = virtual_keys
        self.known = set(facts.keys_found)
        self.absent: set[str] = set()

    def has(self, key: str, needed: int = 1) -> bool:
        if key in self.virtual_keys:
            return _virtual_count(self.data, **self.virtual_keys[key]) >= needed
        if needed > 1:
            return sum(1 for _ in key_pattern(key).finditer(self.data)) >= needed
        return self.has_one_of((key,))

    def has_one_of(self, keys: tuple[str, ...]) -> bool:
        if not self.known.isdisjoint(keys):
            return True
        unknown = tuple(key for key in keys if key not in self.absent)
        if not unknown:
            return False
        found = _first_of(self.data, tuple(f'"key": "{key}"'.encode() for key in unknown))
        if found is not None:
            self.known.add(unknown[found])
            return True
        # No record spelled as MLLOG writes it: look for other spellings only where the name occurs at all.
        if (any(f'"{key}"'.encode() in self.data for key in unknown)
                and _any_key_pattern(unknown).search(self.data) is not None):
            return True
        self.absent.update(unknown)
        return False


def _first_of(data: bytes, needles: tuple[bytes, ...]) -> int | None:
    """The index of a needle that occurs in the data, or None. The data is searched from both ends in turn,
    in windows that grow fourfold: a key logged all through a run (block_stop) has a record near the end, one
    logged during initialisation (weights_initialization) near the start, so either is found after a look at
    little more of the log than lies between its nearest record and an end, and an absent one after one look
    at each byte. rfind in every window: it is twice as fast as find."""
    overlap = max(map(len, needles)) - 1  # each look covers the matches that start in its window
    low, high, window = 0, len(data), FIRST_WINDOW
    while low < high:
        step = min(window, high - low)
        for index, needle in enumerate(needles):
            if data.rfind(needle, low, low + step + overlap) >= 0:
                return index
        low += step
        step = min(window, high - low)
        for index, needle in enumerate(needles):
            if data.rfind(needle, high - step, high + overlap) >= 0:
                return index
        high -= step
        window *= 4
    return None


@cache
def _any_key_pattern(keys: tuple[str, ...]) -> re.Pattern[bytes]:
    return re.compile(rb'"key":\s*"(?:' + b"|".join(re.escape(key.encode()) for key in keys) + rb')"')


def _tensor_names(data: bytes) -> list[str]:
    """The tensor names of the weights_initialization records. Only between the first and the last mention of
    the key: the records sit together, before run_start."""
    first, last = data.find(WEIGHTS_KEY), data.rfind(WEIGHTS_KEY)
    if first < 0:
        return []
    region_start = data.rfind(b"\n", 0, first) + 1
    region_end = data.find(b"\n", last)
    region_end = len(data) if region_end < 0 else region_end
    names = TENSOR_VALUE.findall(data, region_start, region_end)
    if len(names) == data.count(WEIGHTS_KEY, region_start, region_end):
        # One plain name per record, the common case, read and decoded a list at a time (no name holds a
        # newline): three times faster than a look at each record.
        return b"\n".join(names).decode("utf-8", "replace").split("\n") if names else []
    names = TENSOR.findall(data, region_start, region_end)
    return [json.loads(b'"' + name + b'"') if b"\\" in name else name.decode("utf-8", "replace") for name in names]


def _virtual_count(data: bytes, source: str, group_by: str) -> int:
    """How many records the checker makes up from `source` records with a metric: one per `group_by` value."""
    groups = set()
    for _, record in records_of(data, source):
        metadata = record.get("metadata")
        if isinstance(metadata, dict) and "metric" in metadata:
            groups.add(json.dumps(metadata.get(group_by), sort_keys=True))
    return len(groups)


def _tensor_difference(logged: Counter[str], expected: Counter[str]) -> str:
    missing, extra = sorted((expected - logged).elements()), sorted((logged - expected).elements())
    parts = [f"{len(names)} {what}, such as {names[0]}" for names, what in ((missing, "missing"), (extra, "not listed"))
             if names]
    return "; ".join(parts)


# Extraction from the mlperf-logging package (maintainers only: it needs the package, a dev dependency).

def extract_rules(checker_dir: Path) -> dict[str, Any]:
    """Every training ruleset's rule files, reduced to what `violations` applies."""
    rulesets: dict[str, Any] = {}
    for folder in sorted(checker_dir.iterdir()):
        match = RULESET_DIR.fullmatch(folder.name)
        if match is None:
            continue  # the hpc rulesets, and the "_warn" variant of 0.7.0 the checker uses on request only
        rulesets[match["version"]] = {path.stem: _rule_file(path) for path in sorted(folder.glob("*.yaml"))}
    return rulesets


def _rule_file(path: Path) -> dict[str, Any]:
    import yaml  # maintainers only: ingest reads the extracted JSON

    records = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    requirements: dict[str, str | None] = {}
    enqueue: dict[str, str] = {}
    tensors: list[str] | None = None
    init_limit: dict[str, float] | None = None
    virtual_keys: dict[str, dict[str, str]] = {}
    for record in records:
        if "KEY" in record:
            key = record["KEY"]
            requirements[key["NAME"]] = str(key["REQ"]).strip() if "REQ" in key else None
            code = " ".join(str(key.get(part, "")) for part in ("PRE", "CHECK", "POST"))
            if (queued := ENQUEUE.search(code)) is not None:
                enqueue[key["NAME"]] = queued["template"]
            if (fixed := FIXED_INIT_LIMIT.search(code)) is not None:
                init_limit = {"open": float(fixed["minutes"]), "other": float(fixed["minutes"])}
            if (by_division := DIVISION_INIT_LIMIT.search(code)) is not None:
                init_limit = {"open": float(by_division["open"]), "other": float(by_division["other"])}
        elif "END" in record and "initialized_tensors" in str(record["END"].get("CHECK", "")):
            tensors = _expected_tensors(str(record["END"]["CHECK"]))
        elif "BEGIN" in record and (made := VIRTUAL_KEY.search(str(record["BEGIN"].get("CODE", "")))) is not None:
            virtual_keys[made["virtual"]] = {"source": made["source"], "group_by": made["group_by"]}
    return {"requirements": requirements, "enqueue": enqueue, "tensors": tensors, "init_limit_min": init_limit,
            "virtual_keys": virtual_keys}


def _expected_tensors(check: str) -> list[str]:
    """The literal list of `sorted(s['initialized_tensors']) == sorted([...])`."""
    expression = ast.parse(check.strip(), mode="eval").body
    if not (isinstance(expression, ast.Compare) and isinstance(expression.comparators[0], ast.Call)):
        raise ValueError(f"unexpected tensor check: {check[:80]}")
    return sorted(ast.literal_eval(expression.comparators[0].args[0]))


def checker_dir() -> Path:
    """The folder of the installed mlperf_logging compliance checker (its rule YAMLs); a UsageError when
    mlperf-logging is not installed."""
    try:
        from mlperf_logging import compliance_checker
    except ImportError:
        raise UsageError("the mlperf-logging package is not installed: pip install -e '.[dev]'") from None
    return Path(compliance_checker.__file__).parent


def rules_document(checker: Path) -> dict[str, Any]:
    """The JSON document of compliance_rules.json: the mlperf-logging version read (`source`) and each ruleset's
    rules extracted from `checker`."""
    from importlib.metadata import version
    return {"source": f"mlperf-logging {version('mlperf-logging')}, mlperf_logging/compliance_checker",
            "rulesets": extract_rules(checker)}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line parsed: `out`, where to write the rules (default: the package's compliance_rules.json)."""
    parser = ArgumentParser("pipeline.mlperf.logs.compliance",
                            "Extract the logging rules ingest applies from mlperf-logging.")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name(RULES_FILE), metavar="FILE",
                        help=f"where to write the rules (default: the package's {RULES_FILE})")
    return parser.parse_args(argv)


@cli
def main(argv: Sequence[str] | None = None) -> None:
    """Rewrite compliance_rules.json (or `--out`) from the installed mlperf-logging's checker; returns None."""
    args = parse_args(argv)
    write_json(rules_document(checker_dir()), args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
