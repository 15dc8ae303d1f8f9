"""One thread per numerical library in a process that shares the cores with others (the report's workers, the test
suite's xdist workers). This module imports nothing numerical: its variables act only if set before numpy loads."""

from __future__ import annotations

from collections.abc import MutableMapping

#: the thread pools of the numerical libraries (OpenMP, OpenBLAS, MKL, Accelerate, numexpr). With OpenBLAS's default
#: of one thread per core, two processes on two cores spent up to ten times the CPU on a Fig. 7 cell (threads
#: waiting on each other over small dot products).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                    "NUMEXPR_NUM_THREADS")


def one_thread_each(environ: MutableMapping[str, str]) -> list[str]:
    """Set every :data:`THREAD_VARIABLES` not yet in ``environ`` to ``"1"`` (a value already set wins); returns the
    names it set."""
    added = [name for name in THREAD_VARIABLES if name not in environ]
    for name in added:
        environ[name] = "1"
    return added
