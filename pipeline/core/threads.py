"""One thread per process for every numeric library, so a result does not depend on the machine's core count.

A BLAS or OpenMP reduction split over threads adds its partial sums in an order that depends on the thread count
(and the core count sets the default), so the last bits of a least-squares fit or a boosted tree's split gain
change with the machine; a decision taken on such a value can flip. The stages get their parallelism from worker
processes, one benchmark each (`pipeline.core.cli.for_each`), so one thread per process costs them nothing.

`pin_threads_env()` runs when the `pipeline` package is imported, before any stage or command loads numpy, and
sets the variables the libraries read when they load; `pin_threads()` (run by the `errors.cli` wrapper of every
stage and command) also limits the libraries already loaded, for a caller that imported numpy first.
"""
from __future__ import annotations

import os
import sys

THREADS = 1
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS")


def pin_threads_env() -> None:
    """Set the thread-count variables of OpenMP, OpenBLAS, MKL, numexpr and Accelerate to `THREADS`."""
    for name in THREAD_VARIABLES:
        os.environ[name] = str(THREADS)


def pin_threads() -> None:
    """`pin_threads_env()`, and the numeric libraries already loaded limited to `THREADS` threads."""
    pin_threads_env()
    if "numpy" in sys.modules:  # otherwise the variables are read when it loads
        from threadpoolctl import threadpool_limits

        threadpool_limits(THREADS)
