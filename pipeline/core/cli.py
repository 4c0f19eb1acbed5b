"""The conventions every `python -m pipeline.<module>` command shares.

`--help` and `--version` print and exit 0 before anything runs; a usage mistake is a `UsageError`, so the
`errors.cli` wrapper prints one line and exits 1, as for every other user error; names of things (benchmarks,
accelerator families) are matched whatever their case.
"""
from __future__ import annotations

import argparse
import os
import signal
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from typing import Any, NoReturn, TypeVar

from pipeline.core.errors import UsageError
from pipeline.core.files import interrupts_held, show_progress

DISTRIBUTION = "mlperf-efficiency"


@cache
def version() -> str:
    """The installed version of the project's distribution (pyproject.toml's), or "unknown" when run from a source
    tree never installed."""
    from importlib import metadata  # here, not at the top: it costs a tenth of a second at every start

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


class _Version(argparse._VersionAction):
    """argparse's `--version`, with the version looked up only when it is asked for."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        self.version = f"%(prog)s {version()}"
        super().__call__(parser, namespace, values, option_string)


class ArgumentParser(argparse.ArgumentParser):
    """argparse for `python -m pipeline.<module>`: the description is the first paragraph of the module's
    docstring, `--version` is there, and a mistake raises `UsageError` (exit 1) instead of exiting 2."""

    def __init__(self, module: str, doc: str | None, **kwargs: object) -> None:
        description = (doc or "").split("\n\n")[0]
        super().__init__(prog=f"python -m {module}", description=description, **kwargs)  # type: ignore[arg-type]
        self.add_argument("--version", action=_Version)

    def error(self, message: str) -> NoReturn:
        """Never returns: raise a UsageError with argparse's `message` and the usage line, instead of argparse's exit
        2."""
        raise UsageError(f"{message}\n{self.format_usage().strip()}")


def canonical_spelling(name: str, known: Iterable[str]) -> str | None:
    """The one of `known` that `name` spells, whatever the case and surrounding spaces ("h100" is H100); None
    when none does."""
    wanted = name.strip().casefold()
    return next((choice for choice in sorted(set(known), key=str.casefold) if choice.casefold() == wanted), None)


def canonical_name(name: str, known: Iterable[str], what: str) -> str:
    """The one of `known` that `name` spells, whatever the case and surrounding spaces; otherwise a
    `UsageError` naming `what` and listing the valid choices."""
    choices = sorted(set(known), key=str.casefold)
    match = canonical_spelling(name, choices)
    if match is not None:
        return match
    raise UsageError(f"unknown {what} {name!r}; choose one of: {', '.join(choices) or '(none)'}")


def stage_arguments(module: str, doc: str | None, argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line of a stage that takes no arguments (everything comes from params.yaml): `--help` and
    `--version` only, so `python -m <module> --help` explains and runs nothing."""
    return ArgumentParser(module, doc, epilog="Settings come from params.yaml; run it through `dvc repro`.") \
        .parse_args(argv)


T = TypeVar("T")
R = TypeVar("R")


def progress(items: Iterable[T], description: str, total: int | None = None, unit: str = "benchmark"
             ) -> Iterator[T]:
    """`items` (each a `unit`) with a progress bar on a terminal (none in CI logs or pipes)."""
    if not show_progress():  # and no tqdm to import
        yield from items
        return
    from tqdm import tqdm

    yield from tqdm(items, desc=description, total=total, unit=unit, leave=False)


def for_each(work: Callable[[T], R], items: Sequence[T], description: str,
             preload: Sequence[str] = (), unit: str = "benchmark") -> Iterator[R]:
    """`work(item)` for every item, in as many processes as this machine gives the job (benchmarks are
    independent), yielded in the items' order with a progress bar. `work` must be a module-level function (or a
    functools.partial of one): it is sent to the worker processes. The workers ignore Ctrl-C (the terminal sends
    it to them too) and are stopped by this process when it stops early, so only the caller reports it.

    `preload`: modules `work` imports (by name), imported here before the workers start: the workers are forked
    from this process and share them, one import in all instead of one per worker (about a second of CPU each for
    sklearn or statsmodels)."""
    workers = min(len(os.sched_getaffinity(0)), len(items))
    if workers <= 1:
        yield from map(work, progress(items, description, unit=unit))
        return
    from importlib import import_module
    from multiprocessing import Pool

    for module in preload:
        import_module(module)

    # The workers start (fork) with Ctrl-C held back: a SIGINT during a fork is swallowed by the at-fork hooks
    # ("Exception ignored") and the parent would run on.
    with interrupts_held():
        pool = Pool(workers, initializer=_ignore_interrupts)
    try:
        yield from progress(pool.imap(work, items), description, total=len(items), unit=unit)
    except BaseException:  # an error, Ctrl-C or a consumer that stopped: the other items' work is not wanted
        pool.terminate()
        raise
    pool.close()
    pool.join()


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
