"""Keep freed memory in the process instead of handing it back to the kernel at once (glibc's malloc, Linux).

By default glibc serves every allocation above 128 KiB (a threshold it raises on its own up to 32 MiB) with a fresh
``mmap`` and unmaps it when freed, and trims the heap's top above 128 KiB. A program that allocates and frees large
numpy arrays thousands of times (the PLD convolutions of DP-SGD, the grids of exact evaluations) then faults their
pages in again each time. With allocations up to 32 MiB kept on the heap and up to 1 GiB of freed heap kept for
reuse, that kernel time goes away; the price is memory that stays with the process after a peak (at most its largest
working set).

This is a setting for a process, so only a program that owns its process applies it: the command line
(:func:`symsel.cli.main`), the report's workers and the test suite's workers, through :func:`keep_freed_memory`,
which sets it for the running process (``mallopt``) and, through glibc's environment variables, for the processes it
starts; a variable the caller already set wins. ``import symsel`` applies nothing: the library leaves the allocator
of the program that imports it alone. Elsewhere (macOS, Windows, musl) it does nothing.
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
