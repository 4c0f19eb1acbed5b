"""v0.6 system descriptions: the `key: {json}` line form, its Python-literal values, and the per-node listing.

v0.6 NVIDIA descriptions are written like v0.6 logs, one `key: {"value": ..., "metadata": ...}` line per key
(`org`, `division`, `status`, `platform`, `entry`, ...). `entry`'s value is the text of a Python dict (single
quotes), and its `nodes` value is itself such a text, describing each kind of node:

    entry: {"value": "{'framework': 'MXNet NVIDIA Release 19.05', 'nodes': \"{'num_nodes': '130', ...}\"}"}

Other v0.6 descriptions are JSON, some with the same per-node listing as a `nodes` list. Both are read into
the raw fields a JSON description of later rounds has (`accelerator_model_name`, `accelerators_per_node`,
`number_of_nodes`, `host_processor_model_name`, ...), so that the features stage reads every round alike.

The literals are parsed by `parse_literal`, which walks the syntax tree of the text and accepts only literal
nodes (strings, numbers, booleans, None, dicts, lists, tuples): nothing is evaluated, so a call, a name or an
attribute access is refused, and so are an oversized text and a nesting deeper than `MAX_LITERAL_DEPTH`.
"""
from __future__ import annotations

import ast
import json
import re
from typing import Any

# Published `entry` values are under 2 KB; the limit keeps the parser's work and memory small.
MAX_LITERAL_CHARS = 64 * 1024
# A description is a dict of node dicts holding dicts of versions: four levels; eight leaves room.
MAX_LITERAL_DEPTH = 8
LINE = re.compile(r"(?P<key>[A-Za-z_][\w ]*):\s*(?P<json>\{.*\})\s*")
# The per-node keys of v0.6 and the raw field of later rounds that holds the same fact.
NODE_FIELDS = {
    "accelerator": "accelerator_model_name",
    "num_accelerators": "accelerators_per_node",
    "num_vcpus": "host_processor_vcpu_count",
    "sys_mem_size": "host_memory_capacity",
    "sys_storage_type": "host_storage_type",
    "sys_storage_size": "host_storage_capacity",
    "cpu_accel_interconnect": "accelerator_host_interconnect",
}
# The keys of v0.6's `entry` (or of a v0.6 JSON description) that later rounds name otherwise.
ENTRY_FIELDS = {"framework": "framework", "os": "operating_system", "interconnect": "host_networking",
                "compilers": "compilers"}
LINE_FIELDS = {"org": "submitter", "division": "division", "status": "status", "platform": "system_name"}
NOT_GIVEN = frozenset({"", "-", "na", "n/a", "none"})
# "2x Intel(R) Xeon(R) CPU E5-2698 v4 @ 2.20GHz": processors per node, then the model.
PROCESSORS_AND_MODEL = re.compile(r"(?P<processors>\d{1,3})\s*[x×]\s+(?P<model>.+)")


class LiteralRefused(ValueError):
    """A text that `parse_literal` will not read; the message says why, to be quoted in a quarantine reason."""


def parse_literal(text: str, max_chars: int = MAX_LITERAL_CHARS, max_depth: int = MAX_LITERAL_DEPTH) -> object:
    """The value of a Python literal (str, int, float, bool, None, and dicts and lists of them; tuples become
    lists), read without evaluating anything. Raises `LiteralRefused` for anything else."""
    if not isinstance(text, str):
        raise LiteralRefused(f"is a {type(text).__name__}, not the text of a Python literal")
    if len(text) > max_chars:
        raise LiteralRefused(f"is {len(text)} characters long, more than the {max_chars} allowed")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError) as error:
        raise LiteralRefused(f"is not a Python literal ({getattr(error, 'msg', error)})") from None
    except (RecursionError, MemoryError):
        raise LiteralRefused("nests too deeply to read") from None
    return _literal(tree.body, 1, max_depth)


def _literal(node: ast.expr, depth: int, max_depth: int) -> object:
    if depth > max_depth:
        raise LiteralRefused(f"nests deeper than {max_depth} levels")
    if isinstance(node, ast.Constant) and (node.value is None or type(node.value) in (str, int, float, bool)):
        return node.value
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd))
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float)):
        number: float = node.operand.value  # type: ignore[assignment]  # an int or a float, checked above
        return -number if isinstance(node.op, ast.USub) else number
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(item, depth + 1, max_depth) for item in node.elts]
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            raise LiteralRefused("holds a ** unpacking, which is not a literal")
        keys = [_literal(key, depth + 1, max_depth) for key in node.keys]  # type: ignore[arg-type]
        if any(isinstance(key, (list, dict)) for key in keys):
            raise LiteralRefused("has a list or dict as a key")
        return dict(zip(keys, (_literal(value, depth + 1, max_depth) for value in node.values)))
    raise LiteralRefused(f"holds {_what(node)}, which is not a literal: nothing is evaluated")


def _what(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        return "a call expression"
    if isinstance(node, ast.Name):
        return f"a name ({node.id})"
    if isinstance(node, ast.Attribute):
        return "an attribute access"
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return "a comprehension"
    if isinstance(node, ast.Constant):
        return f"a {type(node.value).__name__} constant"
    return f"an expression ({type(node).__name__})"


def is_line_form(text: str) -> bool:
    """Whether a description is written in v0.6's `key: {json}` line form rather than as JSON."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    return LINE.fullmatch(first.strip()) is not None


def read_line_form(text: str) -> tuple[dict[str, Any], list[str]]:
    """The raw fields of a `key: {json}` description, and notes on what was left out.

    Raises `LiteralRefused` (a ValueError) naming the line or value that cannot be read.
    """
    values: dict[str, object] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = LINE.fullmatch(line.strip())
        if match is None:
            raise LiteralRefused(f"line {number} is not of the form `key: {{json}}`")
        try:
            record = json.loads(match["json"])
        except (ValueError, RecursionError) as error:
            raise LiteralRefused(f"line {number} ({match['key']}) is not valid JSON ({error})") from None
        values[match["key"]] = record.get("value") if isinstance(record, dict) else record
    entry = values.get("entry")
    if entry is None:
        raise LiteralRefused("has no `entry` line, which holds the hardware")
    try:
        entry = parse_literal(entry) if isinstance(entry, str) else entry
    except LiteralRefused as refused:
        raise LiteralRefused(f"its `entry` value {refused}") from None
    if not isinstance(entry, dict):
        raise LiteralRefused(f"its `entry` value is a {type(entry).__name__}, not a dict")
    fields = {field: values[key] for key, field in LINE_FIELDS.items() if _given(values.get(key))}
    node_fields, notes = read_legacy_entry(entry)
    return {**fields, **node_fields}, notes


def read_legacy_entry(entry: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The raw fields that a v0.6 entry (or JSON description) gives through its v0.6 keys and `nodes` listing.

    Where kinds of node differ in a value, the field is left missing and a note says so. Raises
    `LiteralRefused` when `nodes` is given but cannot be read.
    """
    fields = {field: entry[key] for key, field in ENTRY_FIELDS.items() if _given(entry.get(key))}
    nodes = entry.get("nodes")
    if nodes is None:
        return fields, []
    try:
        nodes = parse_literal(nodes) if isinstance(nodes, str) else nodes
    except LiteralRefused as refused:
        raise LiteralRefused(f"its `nodes` value {refused}") from None
    nodes = [nodes] if isinstance(nodes, dict) else nodes
    if not isinstance(nodes, list) or not nodes or not all(isinstance(node, dict) for node in nodes):
        raise LiteralRefused("its `nodes` value is neither a dict nor a list of dicts")
    per_node, notes = _common_node_values(nodes)
    fields.update(per_node)
    counts = [_whole_number(node.get("num_nodes")) for node in nodes]
    if all(count is not None for count in counts):
        fields["number_of_nodes"] = str(sum(counts))  # type: ignore[arg-type]
    return fields, notes


def _common_node_values(nodes: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """The per-node fields every kind of node agrees on; a note naming those on which they differ."""
    fields: dict[str, Any] = {}
    differing = []
    for key, field in {**NODE_FIELDS, "cpu": "host_processor_model_name", "num_cores": "num_cores"}.items():
        given = [node[key] for node in nodes if _given(node.get(key))]
        if not given:
            continue
        if len({json.dumps(value, sort_keys=True) for value in given}) > 1 or len(given) < len(nodes):
            differing.append(key)
            continue
        fields[field] = given[0] if isinstance(given[0], str) else json.dumps(given[0])
    if not any(_given(node.get("accelerator")) for node in nodes) and _whole_number(
            fields.get("accelerators_per_node")) != 0:
        # A count of nothing named; a zero stays, as later rounds write it: a CPU-only node trains on its hosts.
        fields.pop("accelerators_per_node", None)
    _split_processors(fields)
    notes = [f"kinds of node differ in {', '.join(differing)}: left missing"] if differing else []
    return fields, notes


def _split_processors(fields: dict[str, Any]) -> None:
    """"2x <model>" with 40 cores per node -> 2 processors of <model>, 20 cores each, as later rounds write it."""
    cores = _whole_number(fields.pop("num_cores", None))
    match = PROCESSORS_AND_MODEL.fullmatch(str(fields.get("host_processor_model_name", "")).strip())
    if match is None:
        return
    processors = int(match["processors"])
    fields["host_processor_model_name"] = match["model"].strip()
    fields["host_processors_per_node"] = str(processors)
    if cores is not None and processors > 0 and cores % processors == 0:
        fields["host_processor_core_count"] = str(cores // processors)


def _given(value: object) -> bool:
    return value is not None and not (isinstance(value, str) and value.strip().lower() in NOT_GIVEN)


def _whole_number(value: object) -> int | None:
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    return int(text) if text.isdigit() and len(text) <= 9 else None
