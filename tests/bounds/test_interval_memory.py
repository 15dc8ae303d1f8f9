"""The interval bound's hot loop reuses freed memory under glibc's default allocator settings (``import symsel``
sets none): its arrays stay below the size glibc serves by ``mmap``, so a warm evaluation faults few new pages.
Page faults are counted, not timed."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from symsel.memory import MALLOC_ENVIRONMENT

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

CHILD = """
import resource
import symsel
from symsel.bounds.interval import interval_profile
law, base = symsel.point(40), symsel.parse_profile("gaussian(sigma=40)")
interval_profile(law, base).delta_nonnegative(0.9)  # the first evaluation: tables built, the heap grown
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
interval_profile(law, base).delta_nonnegative(0.9)  # a fresh profile: no cached result
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not GLIBC, reason="glibc's allocator only")
def test_a_warm_interval_evaluation_faults_few_pages_with_glibcs_defaults():
    """About 1,400 minor page faults with chunks of 64 ``h``-cells; about 30,000 with chunks of 512, whose arrays
    glibc maps and unmaps at every allocation."""
    env = {k: v for k, v in os.environ.items() if k not in MALLOC_ENVIRONMENT}
    result = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.split()[-1]) < 10_000
