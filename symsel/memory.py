"""Keep freed memory in the process instead of handing it back to the kernel at once (glibc's malloc, Linux).

By default glibc serves every allocation above 128 KiB (a threshold it raises on its own up to 32 MiB) with a fresh
``mmap`` and unmaps it when freed, and trims the heap's top above 128 KiB. symsel allocates and frees large numpy
arrays thousands of times a run (the PLD convolutions of DP-SGD, the pieces and cells of the interval bound, the
grids of exact evaluations), so each new array faults its pages in again: in the test suite about 11 % of the CPU was
the kernel's (93 of 840 CPU-s), 8 of the 48 CPU-s of the interval bound's tests alone. With allocations up to 32 MiB
kept on the heap and up to 1 GiB of freed heap kept for reuse, that share falls to 1 %. The price is memory that
stays with the process after a peak (at most its largest working set).

:func:`keep_freed_memory` sets this for the running process (``mallopt``) and, through glibc's environment
variables, for the processes it starts (the report's workers, the test suite's workers and notebook kernels); a
variable the caller already set wins. Elsewhere (macOS, Windows, musl) it does nothing.

The library, imported by a user (``import symsel``), sets the milder :data:`LIBRARY_SETTINGS` for its own process
only: the values glibc's own rule climbs to once a 32 MiB array has been freed (the largest request served from
the heap then 32 MiB, freed heap kept up to twice that), fixed from the start instead of reached by chance. Without
them a query's speed depended on its process's history: an ``interval`` evaluation of point(40) on gaussian(σ = 40)
took 0.14 s in a fresh process, 300,000 page faults for eight evaluations and half of its CPU in the kernel, and
0.07 s after anything had freed a large array.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
from collections.abc import Mapping, MutableMapping

#: glibc's environment variables and the values set: the largest request served from the heap (its upper limit on
#: 64-bit systems, 32 MiB) and how much freed memory at the top of the heap is kept (1 GiB).
MALLOC_ENVIRONMENT = {"MALLOC_MMAP_THRESHOLD_": str(32 * 2**20), "MALLOC_TRIM_THRESHOLD_": str(2**30)}
#: the library's settings (:func:`keep_freed_memory_in_library`): glibc's own upper limits of its dynamic thresholds
#: on 64-bit systems (32 MiB for the heap's largest request, twice that of freed heap kept).
LIBRARY_SETTINGS = {"MALLOC_MMAP_THRESHOLD_": str(32 * 2**20), "MALLOC_TRIM_THRESHOLD_": str(64 * 2**20)}
#: ``mallopt``'s parameter numbers (malloc.h).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def keep_freed_memory(environ: MutableMapping[str, str] = os.environ) -> bool:
    """Apply :data:`MALLOC_ENVIRONMENT` to ``environ`` (names not set yet) and to this process; returns whether this
    process's allocator took the settings (``False`` off glibc, or where a variable was already set)."""
    if not _glibc():
        return False
    added = [name for name in MALLOC_ENVIRONMENT if name not in environ]
    for name in added:
        environ[name] = MALLOC_ENVIRONMENT[name]
    if len(added) < len(MALLOC_ENVIRONMENT):  # the caller chose: leave this process's allocator as it is
        return False
    return _mallopt(MALLOC_ENVIRONMENT)


def keep_freed_memory_in_library(environ: Mapping[str, str] = os.environ) -> bool:
    """Apply :data:`LIBRARY_SETTINGS` to this process only (``import symsel``), unless ``environ`` (the process's
    environment, read only) sets either variable: the caller's choice wins. Returns whether the allocator took
    them."""
    if not _glibc() or any(name in environ for name in LIBRARY_SETTINGS):
        return False
    return _mallopt(LIBRARY_SETTINGS)


def _glibc() -> bool:
    return sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


def _mallopt(settings: Mapping[str, str]) -> bool:
    """``mallopt`` of both thresholds in ``settings``; whether glibc took both."""
    try:
        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, int(settings["MALLOC_MMAP_THRESHOLD_"]))
                    and libc.mallopt(_M_TRIM_THRESHOLD, int(settings["MALLOC_TRIM_THRESHOLD_"])))
    except (OSError, AttributeError):
        return False
