"""Decoding a system description: JSON (repaired only where the repair is certain) or v0.6's line form.

A description is JSON, or v0.6's `key: {json}` line form (`pipeline.mlperf.hardware.legacy_description`); nothing in a
file
is ever evaluated. `decode_description` returns the fields and a note of what was done, or why a file is unusable.
"""
from __future__ import annotations

import codecs
import json
import re
from typing import Any

from pipeline.mlperf.hardware.legacy_description import LiteralRefused, is_line_form, read_legacy_entry, read_line_form

# The repair of malformed JSON steps over strings (an opening quote, then STRING_REST), so that a comment or a
# comma is removed only outside them: that is what makes the repair certain.
STRING_OR_SLASH = re.compile(r'["/]')
STRING_REST = re.compile(r'(?:[^"\\\n]|\\.)*"')
STRING_OR_TRAILING_COMMA = re.compile(r'("(?:[^"\\\n]|\\.)*")|,(?=\s*[}\]])')
# Published descriptions are under 3 KB; the limit keeps a hostile file from making the repair slow.
MAX_REPAIRED_BYTES = 1 << 20
LINE_FORM_NOTE = ("read from v0.6's `key: {json}` line form: Python-literal `entry` and `nodes` values parsed without "
                  "evaluating anything")

def decode_description(data: bytes) -> tuple[object, str]:
    """Decode a description; repair it only where the repair is certain, and say what was done.

    A description is JSON, or v0.6's `key: {json}` line form (see `pipeline.mlperf.hardware.legacy_description`); a v0.6
    per-node listing is read into the fields later rounds use. Returns the fields (a dict when usable) and a
    note: the repairs and readings made, or why it is unusable. Nothing in the file is ever evaluated.
    """
    text, notes = _decode_text(data)
    if not text.strip():
        return None, "system description is empty: not used"
    if is_line_form(text):
        return _decode_line_form(text, notes)
    duplicates: set[str] = set()
    try:
        parsed = _load_json(text, duplicates)
    except RecursionError:
        return None, "system description nests too deeply to read: not used"
    except ValueError as error:
        unrepairable = (None, f"system description is not valid JSON ({error}), and removing trailing commas "
                              "and comments does not make it valid: not used")
        repair = repair_json(text) if len(data) <= MAX_REPAIRED_BYTES else None
        if repair is None:
            return unrepairable
        try:
            parsed = _load_json(repair[0], duplicates)
        except (ValueError, RecursionError):
            return unrepairable
        notes.append(f"repaired: {' and '.join(repair[1])} removed")
    if not isinstance(parsed, dict):
        return None, f"system description is a JSON {type(parsed).__name__}, not an object: not used"
    if duplicates:
        notes.append(f"{', '.join(sorted(duplicates))} given twice with different values: the last value used, "
                     "as JSON readers do")
    if "nodes" in parsed:
        return _with_node_listing(parsed, notes)
    return parsed, "; ".join(notes)


def _decode_line_form(text: str, notes: list[str]) -> tuple[object, str]:
    """A v0.6 `key: {json}` description, its Python-literal values read without evaluating anything."""
    try:
        fields, node_notes = read_line_form(text)
    except LiteralRefused as refused:
        return None, f"system description in v0.6's `key: {{json}}` line form cannot be read: {refused}: not used"
    return fields, "; ".join([*notes, LINE_FORM_NOTE, *node_notes])


def _with_node_listing(description: dict[str, Any], notes: list[str]) -> tuple[object, str]:
    """A v0.6 JSON description with its `nodes` listing: the fields it gives that the description lacks added."""
    try:
        listed, node_notes = read_legacy_entry(description)
    except LiteralRefused as refused:
        return None, f"system description's v0.6 `nodes` listing cannot be read: {refused}: not used"
    # v0.6 JSON writes some keys with spaces ("number of nodes"), which the features stage reads too.
    given = {name.replace(" ", "_") for name in description}
    added = {field: value for field, value in listed.items() if field not in given}
    if added:
        node_notes.insert(0, f"{', '.join(sorted(added))} read from its v0.6 `nodes` listing")
    return {**description, **added}, "; ".join([*notes, *node_notes])


def _decode_text(data: bytes) -> tuple[str, list[str]]:
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), ["read as UTF-16, as its byte-order mark says"]
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError:
        return data.decode("latin-1"), ["not UTF-8: read as Latin-1"]


def _load_json(text: str, duplicates: set[str]) -> object:
    """json.loads that collects the keys an object gives twice with different values."""
    def keep_last(pairs: list[tuple[str, object]]) -> dict[str, object]:
        seen: dict[str, object] = {}
        for key, value in pairs:
            if key in seen and seen[key] != value:
                duplicates.add(key)
            seen[key] = value
        return seen

    return json.loads(text, object_pairs_hook=keep_last)


def repair_json(text: str) -> tuple[str, list[str]] | None:
    """The text without comments and trailing commas outside strings, and which of the two it had; None when
    a string or comment is never closed, which no certain repair can fix. Time is linear in the text's length.
    """
    repairs = []
    without_comments = _remove_comments(text)
    if without_comments is None:
        return None
    if without_comments != text:
        repairs.append("comments")

    def drop_comma(match: re.Match[str]) -> str:
        return match[1] if match[1] is not None else ""

    repaired = STRING_OR_TRAILING_COMMA.sub(drop_comma, without_comments)
    if repaired != without_comments:
        repairs.insert(0, "trailing commas")
    return repaired, repairs


def _remove_comments(text: str) -> str | None:
    """`//` and `/* */` comments outside strings, each replaced by a space so that it cannot join two tokens."""
    kept, position = [], 0
    while (found := STRING_OR_SLASH.search(text, position)) is not None:
        start = found.start()
        kept.append(text[position:start])
        if text[start] == '"':
            rest = STRING_REST.match(text, start + 1)
            if rest is None:
                return None
            kept.append(text[start:rest.end()])
            position = rest.end()
        elif text.startswith("//", start):
            line_end = text.find("\n", start)
            kept.append(" ")
            position = len(text) if line_end < 0 else line_end
        elif text.startswith("/*", start):
            close = text.find("*/", start + 2)
            if close < 0:
                return None
            kept.append(" ")
            position = close + 2
        else:
            kept.append("/")
            position = start + 1
    kept.append(text[position:])
    return "".join(kept)


def field_text(value: object) -> str | None:
    """A description value as the systems table holds it: text as it is, anything else as sorted JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)

