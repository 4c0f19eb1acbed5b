"""Which lines of an MLPerf log the official parser reads (`mlperf_logging.compliance_checker.mlp_parser`,
rulesets 0.7.0 on), asked fast.

The parser splits a log at `\n`, `\r\n` and `\r` (Python's universal newlines) and reads, on each line holding
`:::MLLOG `, the text after the line's last token as one JSON record; a line whose record it cannot read (not JSON,
such as two processes' writes interleaved, or cut off) is a parse error and left out of the records its checks
see. `readable` gives the log as the parser reads it, those lines blanked, and whether it is MLLOG lines alone;
`damaged_lines` finds them, first with a test of the whole log at once (`_read_whole`), then line by line in the
parser's own terms (`official_reads`) for the few logs that test does not clear. `record_lines` gives the text after
each line's token (pipeline.mlperf.logs.power reads its power logs' records from it). Used by
`pipeline.mlperf.logs.logparse`.
"""
from __future__ import annotations

import json
import operator
import re
from typing import NamedTuple

import msgspec

MLLOG_TOKEN = b":::MLLOG "
TOKEN_LENGTH = len(MLLOG_TOKEN)

# A record the official parser certainly reads, as MLLOG writes it: its keys in MLLOG's order, strings without
# escapes or control characters, values nested at most three deep, an integer time_ms. It is a subset of what
# json.loads reads (an integer of more than 4,300 digits is a ValueError to it, and float() of one of more than
# 308 overflows: 300 digits at most here), so a line it matches is never a parse error; `damaged_lines` asks the
# exact question, in the official parser's own terms, of the few lines it does not match. A pass of it costs
# about what decoding every line with orjson would (about 1 s of CPU per 250 MB of log), without building any
# object; it is run only on a log that `_read_whole` does not clear (18 of the 20,661 of twelve rounds).
_STRING = rb'"[^"\\\x00-\x1f]*+"'
_INTEGER = rb"-?+(?:0|[1-9][0-9]{0,299}+)"
_NUMBER = _INTEGER + rb"(?:\.[0-9]++)?+(?:[eE][-+]?+[0-9]++)?+"
_SCALAR = rb"(?:null|" + _NUMBER + rb"|" + _STRING + rb"|true|false|NaN|-?Infinity)"


def _array(item: bytes) -> bytes:
    return rb"\[ ?(?:" + item + rb"(?:, ?" + item + rb")*+)?+ ?\]"


def _object(item: bytes) -> bytes:
    return rb"\{ ?(?:" + _STRING + rb": ?" + item + rb"(?:, ?" + _STRING + rb": ?" + item + rb")*+)?+ ?\}"


_FLAT = rb"(?:" + _SCALAR + rb"|" + _array(_SCALAR) + rb"|" + _object(_SCALAR) + rb")"
_VALUE = rb"(?:" + _SCALAR + rb"|" + _array(_FLAT) + rb"|" + _object(_FLAT) + rb")"
_PLAIN_RECORD = (rb'\{"namespace": ' + _STRING + rb', "time_ms": ' + _INTEGER + rb'(?:, "event_type": ' + _STRING
                 + rb')?+, "key": ' + _STRING + rb', "value": ' + _VALUE + rb', "metadata": ?' + _object(_FLAT)
                 + rb"\}[ \t]*+(?:\r?\n|\Z)")
# A token whose line may be damaged: what follows it is not a plain record up to the end of the line. Every
# token is looked at: one inside another record's string is the line's last, the one the official parser reads.
_MAYBE_DAMAGED = re.compile(MLLOG_TOKEN + rb"(?!" + _PLAIN_RECORD + rb")")
# Before that pass, a quicker test of a whole log at once (`_read_whole`): the text after each line's token,
# all of them decoded by msgspec as JSON lines into `_Stamped`, which reads only time_ms and checks the syntax of
# the rest without building it; the pass above is then needed only for the few logs this test does not clear.
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_TOO_MANY_DIGITS = b"0" * 301  # as in _INTEGER: json.loads refuses an integer of more than 4,300 digits
# A run of 301 digits or more covers at least 9 bytes in a row of the sample of every 32nd byte: the texts are
# searched in that sample first, a thirtieth of the work, and in full only where it holds 9 digits in a row (in no
# log of twelve rounds).
_SAMPLE_STRIDE = 32
_SAMPLED_RUN = b"0" * (len(_TOO_MANY_DIGITS) // _SAMPLE_STRIDE)


# Not tracked by the garbage collector (it holds a number, so it is in no cycle): a log's hundreds of thousands of
# them, alive together, would otherwise set off collections that look at each of them again and again.
class _Stamped(msgspec.Struct, gc=False):
    time_ms: int | float


_STAMPED_LINES = msgspec.json.Decoder(_Stamped)
_REST_OF_LINE = re.compile(rb"[^\n]*")
_LONE_CR = re.compile(rb"\r(?!\n)")


class Reading(NamedTuple):
    """A log as the official parser reads it (`data`), how many of its lines it cannot read (`damaged`), and
    whether every line of it is an MLLOG line that starts with the token and reads (`records_only`: the log
    holds no other output, such as a framework's or a launcher's)."""

    data: bytes
    damaged: int
    records_only: bool = False


def readable(data: bytes) -> Reading:
    """The log as the official parser reads it, and how many of its lines it cannot read: a `\r` that ends a line
    alone made `\n` (the parser splits lines at `\n`, `\r\n` and `\r`; a log whose only `\r`s end `\r\n`
    pairs is left as it is), and each line holding `:::MLLOG ` whose record does not parse blanked, since the
    parser leaves it out of the records the checks see. The log itself when nothing changes. Also whether the log is
    MLLOG lines alone (`Reading.records_only`), from what the quick test of its records made anyway."""
    if b"\r" in data and _LONE_CR.search(data) is not None:  # a CR alone ends a line too
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    lines = _read_whole(data)
    if lines is not None:
        return Reading(data, 0, _records_only(data, *lines))
    damaged = _asked_one_by_one(data)
    if not damaged:
        return Reading(data, 0)
    pieces, start = [], 0
    for line_start, line_end in damaged:
        pieces.append(data[start:line_start])
        start = line_end
    pieces.append(data[start:])
    return Reading(b"".join(pieces), len(damaged))


def damaged_lines(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each line of a log (lines ending in `\n` or `\r\n`, no `\r` standing alone) that holds
    `:::MLLOG ` and that the official parser cannot read (`official_reads`). A line whose last token is followed
    by a plain record, as MLLOG writes them, is readable without asking; the others are asked one by one."""
    return [] if _read_whole(data) is not None else _asked_one_by_one(data)


def _asked_one_by_one(data: bytes) -> list[tuple[int, int]]:
    damaged = []
    position = 0
    while (match := _MAYBE_DAMAGED.search(data, position)) is not None:
        line_start = data.rfind(b"\n", 0, match.start()) + 1
        line_end = _REST_OF_LINE.match(data, match.start()).end()  # type: ignore[union-attr]  # matches empty
        if not official_reads(data[line_start:line_end]):
            damaged.append((line_start, line_end))
        position = line_end
    return damaged


def _read_whole(data: bytes) -> tuple[bytes, int] | None:
    """`record_lines` of the log when the official parser certainly reads every line of it that holds `:::MLLOG `
    (see `official_reads`); None when it may not, and the lines are to be asked one by one. Each such line holds
    one token and what follows it to the line's end decodes, as one JSON line, into an object whose time_ms is
    a number: msgspec reads less than json.loads does (no NaN, no lone surrogate, no integer beyond its range,
    UTF-8 only), and the one thing it passes unread, an integer of thousands of digits in a value it skips,
    is ruled out by `record_lines`. Each line is one record, so the count of records says that no line was
    skipped or split."""
    lines = record_lines(data)
    if lines is None:
        return None
    joined, count = lines
    try:
        return lines if len(_STAMPED_LINES.decode_lines(joined)) == count else None
    except (msgspec.DecodeError, RecursionError):
        return None


def _records_only(data: bytes, joined: bytes, count: int) -> bool:
    """Whether every line of the log starts with the token, given what `record_lines` made of it (`count` records,
    each token but the last followed by a line end): then the log is its tokens, its records and the newlines
    between them (and one at its end), and nothing else, which its length tells."""
    return data.startswith(MLLOG_TOKEN) and len(data) - count * TOKEN_LENGTH - len(joined) in (0, 1)


def record_lines(data: bytes) -> tuple[bytes, int] | None:
    """The text after the token of each line of `data` that holds `:::MLLOG ` (lines end in `\n`), joined by
    `\n` to be decoded as JSON lines, and how many there are; None where a line holds more than one token (the
    official parser reads from the last) or the texts hold a run of more than 300 digits (json.loads refuses an
    integer of more than 4,300, and msgspec skips a value it is not asked for without reading its digits)."""
    pieces = data.split(MLLOG_TOKEN)[1:]  # bytes methods: a regular expression's pass over the text is slower
    texts = [piece.partition(b"\n")[0] for piece in pieces]
    # A piece without a line end, but the last, is followed by another token on the same line.
    if not all(map(operator.lt, map(len, texts[:-1]), map(len, pieces[:-1]))):
        return None
    joined = b"\n".join(texts)
    if (_SAMPLED_RUN in joined[::_SAMPLE_STRIDE].translate(_DIGITS_AS_ZERO)
            and _TOO_MANY_DIGITS in joined.translate(_DIGITS_AS_ZERO)):
        return None
    return joined, len(texts)


def official_reads(line: bytes) -> bool:
    """Whether the official parser reads a line holding `:::MLLOG ` as a record, asked as it asks: the file
    read as Latin-1, the text from the line's last token on (`re.sub(".*" + TOKEN, TOKEN, line)`), stripped,
    then `json.loads` of what follows the token and `float()` of its time_ms, where a ValueError is a parse
    error. Any other error (a record that is not an object, or has no time_ms) stops the official parser
    instead, so it is not a parse error here."""
    text = line.decode("latin-1")
    text = text[text.rfind(MLLOG_TOKEN.decode()):].strip()
    if not text.startswith(MLLOG_TOKEN.decode()):
        return False  # nothing after the token
    try:
        record = json.loads(text[TOKEN_LENGTH:])
        float(record["time_ms"])
    except ValueError:
        return False
    except (TypeError, KeyError, IndexError, RecursionError, OverflowError):
        return True
    return True
