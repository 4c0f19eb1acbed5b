"""One exception type per kind of failure a user can meet; the CLI turns each into a message and exit 1."""
from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from types import TracebackType
from typing import NoReturn, TypeVar

from pipeline.core.threads import pin_threads

# The exit status of a command stopped by Ctrl-C (128 + SIGINT), as a shell reports it.
INTERRUPTED = 130


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


class OutputError(PipelineError):
    """An output file or folder cannot be written where the stage writes it (a read-only folder, a file in a
    folder's place, a full disk)."""


class UsageError(PipelineError):
    """A command-line argument names something that does not exist."""


class ImplausiblePriceError(PipelineError):
    """A user's price lies outside its family's plausibility band (a unit slip or a typo)."""


F = TypeVar("F", bound=Callable[..., object])


def cli(main: F) -> F:
    """Wrap the main() of a stage or command: the numeric libraries run one thread each (`pin_threads`); a
    PipelineError becomes one readable line on stderr and exit status 1; Ctrl-C (SIGINT) one line and exit
    status 130, no traceback (a stage swaps its outputs in whole at the end, so the previous ones stay); a reader
    that stops reading the output (`| head`) ends the command quietly with exit status 1."""

    @functools.wraps(main)
    def wrapper(*args: object, **kwargs: object) -> object:
        pin_threads()
        try:
            result = main(*args, **kwargs)
        except BrokenPipeError:
            _reader_gone()
        except SystemExit:  # argparse's --help and usage errors: what they printed is flushed here too
            _flush_stdout()
            raise
        except PipelineError as error:
            print(f"error: {error}", file=sys.stderr)
            raise SystemExit(1) from None
        except (KeyboardInterrupt, Exception) as error:
            if not interrupted(error):
                raise
            _say_interrupted()
            raise SystemExit(INTERRUPTED) from None
        _flush_stdout()
        return result

    return wrapper  # type: ignore[return-value]


def interrupted(error: BaseException) -> bool:
    """Whether `error` is Ctrl-C or was raised because of it: Python 3.11 wraps a KeyboardInterrupt that lands in a
    descriptor's `__set_name__` (a dataclass field's, while a library defines its classes on import) in a
    RuntimeError, so the interrupt is found down the chain of causes and contexts."""
    seen: set[int] = set()
    found: BaseException | None = error
    while found is not None and id(found) not in seen:
        if isinstance(found, KeyboardInterrupt):
            return True
        seen.add(id(found))
        found = found.__cause__ or found.__context__
    return False


def _say_interrupted() -> None:
    print(f"interrupted: {_program()} stopped (Ctrl-C)", file=sys.stderr)


def _flush_stdout() -> None:
    """Standard output flushed now: a reader gone (`| head`) is found here, not by the interpreter's flush at exit,
    which would print a traceback-like complaint."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _reader_gone()


def _reader_gone() -> NoReturn:
    """Exit status 1, quietly: what is left in the output buffer goes nowhere, so the exit finds no pipe to complain
    about."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    raise SystemExit(1) from None


def quiet_interrupts() -> None:
    """Ctrl-C outside a wrapped main() too (while a stage or command imports its libraries) prints one line
    instead of a traceback, also when a library's import wrapped it in another exception (`interrupted`); the exit
    status stays that of Ctrl-C. Other uncaught exceptions print as before."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], value: BaseException, traceback: TracebackType | None) -> None:
        if not interrupted(value):
            previous(kind, value, traceback)
            return
        _say_interrupted()
        if not issubclass(kind, KeyboardInterrupt):  # a wrapped interrupt ends the process as Ctrl-C would
            sys.stderr.flush()
            os._exit(INTERRUPTED)

    sys.excepthook = hook


def _program() -> str:
    """`python -m <module>` as it was run (the module's name from its path under the project)."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return f"python -m {spec.name}" if spec is not None else sys.argv[0]
