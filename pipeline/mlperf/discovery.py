"""Which rounds there are, for params `fetch.rounds: all`: the mirror's archives and folders, and MLCommons'
repositories asked with `git ls-remote` (no download).

Upstream is asked for each catalogued round the mirror lacks and for the rounds after the newest one known
(vX.1 after vX.0, then v(X+1).0), one step at a time until a round does not answer. What upstream answered is
recorded with the time (`pipeline.mlperf.upstream.UpstreamRecord`, which the validate stage writes to
`data/.upstream.json`): offline, the stages say which rounds the mirror holds and when upstream last answered, and
what it had then.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pipeline.core.errors import ParamsError
from pipeline.mlperf.catalogue import ROUND_PUBLISHED, round_version, successors, unavailable_rounds
from pipeline.mlperf.upstream import UpstreamRecord

# The oldest round the pipeline reads (v0.5's results predate the log format of v0.6 on).
FIRST_ROUND = "v0.6"
# Seconds a probe of one repository may take; a probe that fails is a round upstream does not have (or no network).
PROBE_TIMEOUT_S = 20
# Rounds after the newest known asked for at most (a chain of answers stops at the first silence anyway).
MAX_NEW_PROBES = 6
SOURCE_NAME = re.compile(r"training_results_(v\d+\.\d+)(?:\.tar\.gz)?")


def in_mirror(mirror: Path | None) -> list[str]:
    """The rounds (from v0.6 on) of which `mirror` holds an archive or a folder, oldest first."""
    if mirror is None or not mirror.is_dir():
        return []
    found = {match.group(1) for path in mirror.iterdir() if (match := SOURCE_NAME.fullmatch(path.name))
             and (path.is_dir() or path.name.endswith(".tar.gz"))}
    return sorted((round_ for round_ in found if round_version(round_) >= round_version(FIRST_ROUND)),
                  key=round_version)


def answers(url: str) -> bool:
    """Whether the git repository at `url` answers (`git ls-remote`, no credentials asked)."""
    try:
        subprocess.run(["git", "ls-remote", "--exit-code", url, "HEAD"], check=True, capture_output=True,
                       timeout=PROBE_TIMEOUT_S, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError):
        return False
    return True


@dataclass(frozen=True)
class Found:
    """The rounds to fetch, what to say about them, and the record of what upstream answered (the new one, or
    `previous` when upstream did not answer)."""

    rounds: list[str]
    notes: list[str]
    record: UpstreamRecord


def discover(mirror: Path | None, upstream: str, previous: UpstreamRecord) -> Found:
    """Every round the mirror holds, and every round upstream answers for (catalogued rounds the mirror lacks, and
    the rounds after the newest known). Without an answer from upstream, the mirror's rounds (or, with no mirror
    round either, the catalogued rounds, which the validate stage then reports as unreachable); `previous` is what
    upstream answered when last reached, which the notes quote then."""
    held = in_mirror(mirror)
    catalogued = [round_ for round_ in ROUND_PUBLISHED if round_version(round_) >= round_version(FIRST_ROUND)]
    answered = [round_ for round_ in catalogued if round_ not in held and answers(upstream.format(round=round_))]
    newest = max([*held, *catalogued], key=round_version)
    frontier, probed = [newest], 0
    while frontier and probed < MAX_NEW_PROBES:
        for candidate in successors(frontier.pop(0)):
            probed += 1
            if candidate not in held and answers(upstream.format(round=candidate)):
                answered.append(candidate)
                frontier.append(candidate)
    url = upstream.format(round="<round>")
    notes = [f"the mirror holds {_span(held)}" if held else "the mirror holds no round"]
    new_upstream = [round_ for round_ in answered if round_ not in catalogued]
    if answered or (held and any(answers(upstream.format(round=round_)) for round_ in held[-1:])):
        checked = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        record = UpstreamRecord(upstream=upstream, checked=checked, answered=sorted(answered, key=round_version),
                                new=new_upstream)
        notes.append(f"upstream {url} checked {checked}: "
                     + (f"found {', '.join(new_upstream)} (not in the catalogue yet)" if new_upstream
                        else "no round newer than " + newest)
                     + (f"; cloned: {', '.join(sorted(set(answered) - set(new_upstream), key=round_version))}"
                        if set(answered) - set(new_upstream) else ""))
    else:
        record = previous
        when = (f"last answered {previous.checked} (then it had {', '.join(previous.new) or 'no new round'})"
                if previous.checked else "never answered on this machine")
        notes.append(f"upstream {url} does not answer (offline?): {when}")
    rounds = sorted(set(held) | set(answered), key=round_version) or catalogued
    return Found(rounds, notes, record)


def _span(rounds: list[str]) -> str:
    return f"{len(rounds)} round{'s' if len(rounds) != 1 else ''} ({rounds[0]} to {rounds[-1]})"


def say(found: Found, stage: str) -> None:
    """Print the discovery's notes (rounds found, skipped or fetched upstream) on stderr, each prefixed with `stage`;
    returns None."""
    for note in found.notes:
        print(f"{stage}: {note}", file=sys.stderr)


def check_analysed_rounds(analysed: Sequence[str] | str, found: Sequence[str]) -> None:
    """Raise `ParamsError` when params `analysis.rounds` names a round that `fetch.rounds: all` did not find
    (`found`), so there would be no data for it (`unavailable_rounds`)."""
    problem = unavailable_rounds(analysed, found, "the rounds found (fetch.rounds: all)",
                                 "drop it from analysis.rounds, or add its archive to the mirror")
    if problem is not None:
        raise ParamsError(f"params.yaml has analysis.rounds: {problem}")
