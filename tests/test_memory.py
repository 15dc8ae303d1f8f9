"""symsel.memory: freed large arrays stay with the process (glibc), so allocating them again faults no new pages."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from symsel.memory import MALLOC_ENVIRONMENT, keep_freed_memory, keep_freed_memory_in_library

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

#: a child that 50 times holds three 24 MiB arrays at once and frees them (as a PLD convolution does with its
#: temporaries), printing its minor page faults meanwhile
CHILD = """
import resource, sys
import numpy as np
if sys.argv[1] == "keep":
    from symsel.memory import keep_freed_memory
    keep_freed_memory()
if sys.argv[1] == "library":  # a user's process: the library's milder settings, taken at import
    import symsel
n = int(sys.argv[2])
def round_trip():
    a, b, c = np.ones(n), np.ones(n), np.ones(n)
    return float(a[-1] + b[-1] + c[-1])
round_trip()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):
    round_trip()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str, mib: int = 24, chosen: dict[str, str] | None = None) -> int:
    env = {k: v for k, v in os.environ.items() if k not in MALLOC_ENVIRONMENT} | (chosen or {})
    result = subprocess.run([sys.executable, "-c", CHILD, mode, str(mib * 2**17)], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    return int(result.stdout)


@pytest.mark.skipif(not GLIBC, reason="glibc's allocator only")
def test_freed_arrays_are_reused_without_new_page_faults():
    """Without the settings glibc hands the freed top of its heap back to the kernel and the next round faults its
    pages in again (about 77,000 page faults for the 50 rounds here); with them the memory is reused (none)."""
    plain, kept = _faults("plain"), _faults("keep")
    assert plain > 10_000 and kept < 1_000, (plain, kept)


@pytest.mark.skipif(not GLIBC, reason="glibc's allocator only")
def test_importing_the_library_keeps_freed_arrays_up_to_its_milder_limit_unless_the_caller_chose():
    """``import symsel`` alone: three 8 MiB arrays (24 MiB of heap, within the library's 64 MiB) are reused; about
    75,000 page faults without it, and with the caller's own ``MALLOC_TRIM_THRESHOLD_``, which wins."""
    plain, library = _faults("plain", 8), _faults("library", 8)
    chosen = _faults("library", 8, {"MALLOC_TRIM_THRESHOLD_": "131072"})
    assert plain > 10_000 and library < 1_000 and chosen > 10_000, (plain, library, chosen)
    assert keep_freed_memory_in_library({"MALLOC_MMAP_THRESHOLD_": "131072"}) is False  # (no mallopt here)


def test_the_environment_carries_the_settings_and_a_callers_choice_wins():
    environ: dict[str, str] = {}
    applied = keep_freed_memory(environ)
    assert environ == (MALLOC_ENVIRONMENT if GLIBC else {})
    assert applied is GLIBC
    chosen = {"MALLOC_TRIM_THRESHOLD_": "131072"}
    assert keep_freed_memory(chosen) is False  # the caller chose: this process's allocator is left as it is
    assert chosen["MALLOC_TRIM_THRESHOLD_"] == "131072"
