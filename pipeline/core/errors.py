"""One exception type per kind of failure a user can meet; the CLI turns each into a message and exit 1."""
from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import TypeVar


class PipelineError(Exception):
    """Base of every user-facing failure: the message says what was wrong and what to do."""


class MirrorError(PipelineError):
    """A round is neither in the mirror nor reachable upstream."""


class SourceError(PipelineError):
    """An ingest SOURCE is not an archive or folder we can read."""


class ContractError(PipelineError):
    """A table between stages does not have the documented columns or values."""


class ParamsError(PipelineError):
    """params.yaml is missing a key or holds a value out of range."""


class NothingAnalysedError(PipelineError):
    """The analysis scope leaves no benchmark with enough configurations: every one was skipped."""


class UsageError(PipelineError):
    """A command-line argument names something that does not exist."""


class ImplausiblePriceError(PipelineError):
    """A user's price lies outside its family's plausibility band (a unit slip or a typo)."""


F = TypeVar("F", bound=Callable[..., object])


def cli(main: F) -> F:
    """Wrap a stage's main(): a PipelineError becomes one readable line on stderr and exit status 1."""

    @functools.wraps(main)
    def wrapper(*args: object, **kwargs: object) -> object:
        try:
            return main(*args, **kwargs)
        except PipelineError as error:
            print(f"error: {error}", file=sys.stderr)
            raise SystemExit(1) from None

    return wrapper  # type: ignore[return-value]
