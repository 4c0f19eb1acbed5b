"""One thread per process for every numeric library, so a result does not depend on the machine's core count.

A BLAS or OpenMP reduction split over threads adds its partial sums in an order that depends on the thread count
(and the core count sets the default), so the last bits of a least-squares fit or a boosted tree's split gain
change with the machine; a decision taken on such a value can flip. The stages get their parallelism from worker
processes, one benchmark each (`pipeline.core.cli.for_each`), so one thread per process costs them nothing.

The same holds for the BLAS kernel OpenBLAS picks for the CPU (SkylakeX, Haswell, ...): each sums a product in
its own order, so k-means' distances, and the clusters a resample converges to, differed between machines. On
x86-64 the kernel is pinned to OpenBLAS' baseline one (BLAS_KERNEL, which every x86-64 CPU runs), whatever the
CPU or a user's OPENBLAS_CORETYPE; the matrices here are small, so the faster kernels saved nothing measurable.

numpy picks its own code per CPU too: on x86-64 its sorts, sums and some ufuncs have AVX2 and AVX-512 versions
beside the baseline one (its dispatch targets X86_V3, X86_V4, AVX512_ICL and AVX512_SPR). A quicksort of equal
keys leaves them in another order under each, and a reduction adds its lanes in another order, so a clean clone
on an AVX2 machine did not reproduce the dvc.lock another machine had written (on one machine, AVX2 against
baseline code listed features of equal importance in another order). `NPY_DISABLE_CPU_FEATURES` turns every
dispatch target off, so each x86-64 CPU runs numpy's baseline code, as it runs OpenBLAS' baseline kernel.

`pin_threads_env()` runs when the `pipeline` package is imported, before any stage or command loads numpy, and
sets the variables the libraries read when they load; `pin_threads()` (run by the `errors.cli` wrapper of every
stage and command) also limits the libraries already loaded, for a caller that imported numpy first.
"""
from __future__ import annotations

import os
import platform
import sys

THREADS = 1
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS")


# OpenBLAS' kernel family for the oldest x86-64 CPUs (SSE3): the same on every x86-64 machine.
BLAS_KERNEL = "Prescott"
# numpy 2.4's dispatch targets on x86-64 (numpy._core._multiarray_umath.__cpu_dispatch__), all turned off; a
# test fails if a numpy upgrade adds one.
NUMPY_DISPATCH_OFF = "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"


def is_x86_64() -> bool:
    """Whether this machine is x86-64, the one architecture whose BLAS kernel and numpy code are pinned."""
    return platform.machine().lower() in {"x86_64", "amd64"}


def pin_threads_env() -> None:
    """Set the thread-count variables of OpenMP, OpenBLAS, MKL, numexpr and Accelerate to `THREADS`, and on x86-64
    OpenBLAS' kernel to `BLAS_KERNEL` and numpy's code to its baseline (`NUMPY_DISPATCH_OFF`)."""
    for name in THREAD_VARIABLES:
        os.environ[name] = str(THREADS)
    if is_x86_64():
        os.environ["OPENBLAS_CORETYPE"] = BLAS_KERNEL
        # numpy refuses to start when both variables are set; the user's choice of features is overridden.
        os.environ.pop("NPY_ENABLE_CPU_FEATURES", None)
        os.environ["NPY_DISABLE_CPU_FEATURES"] = NUMPY_DISPATCH_OFF


def pin_threads() -> None:
    """`pin_threads_env()`, and the numeric libraries already loaded limited to `THREADS` threads."""
    pin_threads_env()
    if "numpy" in sys.modules:  # otherwise the variables are read when it loads
        from threadpoolctl import threadpool_limits

        threadpool_limits(THREADS)
