"""symsel.memory: freed large arrays stay with the process (glibc), so allocating them again faults no new pages, in
the processes symsel owns (the CLI, the report's and the suite's workers); ``import symsel`` leaves a user's process
alone."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

from symsel.memory import MALLOC_ENVIRONMENT, keep_freed_memory

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

#: a child that 50 times holds three 24 MiB arrays at once and frees them (as a PLD convolution does with its
#: temporaries), printing its minor page faults meanwhile
CHILD = """
import resource, sys
import numpy as np
if sys.argv[1] == "keep":
    from symsel.memory import keep_freed_memory
    keep_freed_memory()
if sys.argv[1] == "library":  # a user's process that imports symsel and uses it
    import symsel
    symsel.bound(symsel.point(3), symsel.parse_profile("gaussian(sigma=4)"), method="envelope").epsilon(1e-6)
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
def test_importing_and_using_the_library_leaves_the_allocator_as_glibc_set_it():
    """A process that imports symsel and computes a bound frees and allocates three 8 MiB arrays as a plain process
    does: glibc's defaults hand them back to the kernel and fault them in again (about 75,000 page faults for the 50
    rounds), where :func:`keep_freed_memory` would leave almost none."""
    plain, library = _faults("plain", 8), _faults("library", 8)
    assert plain > 10_000 and library > 10_000, (plain, library)


#: a child that records every ``mallopt`` call made through ctypes and the environment, imports symsel and uses it
IMPORT_CHILD = """
import ctypes, json, os
calls = []
class Recording(ctypes.CDLL):
    def __getattr__(self, name):
        if name == "mallopt":
            return lambda *args: calls.append(args) or 1
        return super().__getattr__(name)
ctypes.CDLL = Recording
before = dict(os.environ)
import symsel
symsel.bound(symsel.point(3), symsel.parse_profile("gaussian(sigma=4)"), method="envelope").epsilon(1e-6)
print(json.dumps({"calls": calls, "changed": sorted(set(os.environ.items()) ^ set(before.items()))}))
"""


def test_importing_the_library_calls_no_mallopt_and_sets_no_environment_variable():
    env = {k: v for k, v in os.environ.items() if k not in MALLOC_ENVIRONMENT}
    result = subprocess.run([sys.executable, "-c", IMPORT_CHILD], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) == {"calls": [], "changed": []}


def test_the_environment_carries_the_settings_and_a_callers_choice_wins():
    environ: dict[str, str] = {}
    applied = keep_freed_memory(environ)
    assert environ == (MALLOC_ENVIRONMENT if GLIBC else {})
    assert applied is GLIBC
    chosen = {"MALLOC_TRIM_THRESHOLD_": "131072"}
    assert keep_freed_memory(chosen) is False  # the caller chose: this process's allocator is left as it is
    assert chosen["MALLOC_TRIM_THRESHOLD_"] == "131072"
