"""The one runner of the stages that work benchmark by benchmark: a stage declares what differs, its `Plan`.

`per_benchmark_stage` makes the stage's `main`, and keeps what every such stage does the same way: `--help` and
`--version` print and run nothing (`cli.stage_arguments`); a mistake is one line and exit 1, Ctrl-C one line and
exit 130 (`errors.cli`); the output folders are written as temporaries and swapped in whole at the end, so a failure
or Ctrl-C keeps the previous ones (`files.atomic_dirs`); the work runs in worker processes, one benchmark each, with
a progress bar and the modules it imports loaded once before the workers start (`cli.for_each`); a line is printed
per benchmark as its result comes, in the benchmarks' order.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from pipeline.core.cli import for_each, stage_arguments
from pipeline.core.errors import cli
from pipeline.core.files import atomic_dirs

T = TypeVar("T")
R = TypeVar("R")


def _result_is_the_line(result: Any) -> str | None:
    return result


@dataclass(frozen=True)
class Plan(Generic[T, R]):
    """What a per-benchmark stage runs, as its plan function returns it when given the temporary output folders.

    work: called once per item in a worker process, so a module-level function or a functools.partial of one
    binding what every item shares (it is sent to the workers); it writes the item's files into the folders and
    returns a result. items: the benchmarks (or one input per benchmark), in the order the results are printed.
    say: the line printed for a result as it comes (None prints nothing); by default the result is that line.
    finish: run in this process on every result (in the items' order) after the last one, before the folders are
    swapped in: it may write what needs every result, or raise to keep the previous folders; the line it returns
    is printed once the new folders are in place."""
    work: Callable[[T], R]
    items: Sequence[T]
    say: Callable[[R], str | None] = _result_is_the_line
    finish: Callable[[list[R]], str | None] | None = None


class Main(Protocol):
    """A stage's `main(argv=None)`: runs it with the command line `argv` (None: the process's own)."""

    def __call__(self, argv: Sequence[str] | None = None) -> None: ...


def per_benchmark_stage(module: str, doc: str | None, plan: Callable[..., Plan[Any, Any]],
                        outputs: Sequence[Path], preload: Sequence[str] = ()) -> Main:
    """The `main(argv)` of the stage `python -m <module>` (`doc`: its docstring, for `--help`): it calls
    `plan(*folders)` with a temporary folder for each of `outputs` (read the inputs and params, bind the folders),
    runs the plan's work on every item in worker processes that import `preload` (module names) once, prints
    what the plan says, and swaps the folders in whole at the end. The progress bar is named after the stage."""
    description = module.rpartition(".")[2]

    @cli
    def main(argv: Sequence[str] | None = None) -> None:
        """Run the stage as DVC does: write its output folders, print a line per benchmark; returns None."""
        stage_arguments(module, doc, argv)
        with atomic_dirs(*outputs) as folders:  # swapped in whole at the end: Ctrl-C keeps the previous ones
            run = plan(*folders)
            results = []
            for result in for_each(run.work, run.items, description, preload=preload):
                line = run.say(result)
                if line is not None:
                    print(line)
                results.append(result)
            closing = None if run.finish is None else run.finish(results)
        if closing is not None:
            print(closing)

    return main
