"""The interval bound's hot loops reuse their working memory under glibc's default allocator settings (``import symsel``
sets none): the cells of the branch and bound are bounded block by block in the arrays of one scratch buffer
(:class:`symsel.memory.Scratch`), so neither a fresh process's first evaluation nor a warm one faults in new pages at
every block. Page faults are counted, not timed."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from symsel.memory import MALLOC_ENVIRONMENT

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

#: a fresh process: the minor page faults of its first evaluation of the bound, then of one on a fresh profile (no
#: cached result; the law's evaluators built, the shared tables computed)
CHILD = """
import resource, sys
import symsel
from symsel.bounds.interval import interval_profile
from symsel.bounds.interval_pairs import pair_interval_profile
build = interval_profile if sys.argv[1] == "gaussian" else pair_interval_profile
law, base = symsel.point(int(sys.argv[2])), symsel.parse_profile(sys.argv[3])

def faults():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    build(law, base).delta_nonnegative(float(sys.argv[4]))
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

print(faults(), faults())
"""


def _first_and_warm_faults(path: str, k: int, base: str, eps: float) -> tuple[int, int]:
    env = {k: v for k, v in os.environ.items() if k not in MALLOC_ENVIRONMENT}
    result = subprocess.run([sys.executable, "-c", CHILD, path, str(k), base, repr(eps)], capture_output=True,
                            text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    first, warm = map(int, result.stdout.split()[-2:])
    return first, warm


@pytest.mark.skipif(not GLIBC, reason="glibc's allocator only")
def test_a_first_and_a_warm_gaussian_interval_evaluation_fault_few_pages_with_glibcs_defaults():
    """point(40) on gaussian(σ = 40): about 2,700 minor page faults for the first evaluation and 1,000 for a warm one
    (the ``l``-axis tables: the shared one once, the profile's own each time); with the working arrays allocated and
    freed at every call of the branch and bound, about 30,000 and 1,400 (glibc gives the freed top of its heap back
    to the kernel until a large enough array has been freed once)."""
    first, warm = _first_and_warm_faults("gaussian", 40, "gaussian(sigma=40)", 0.9)
    assert first < 8_000 and warm < 3_000, (first, warm)


@pytest.mark.skipif(not GLIBC, reason="glibc's allocator only")
def test_a_warm_interval_evaluation_on_a_pair_faults_few_pages_with_glibcs_defaults():
    """point(10) on laplace(scale=1) through its pairs ordered by loss: about 500 minor page faults a warm evaluation;
    with the working arrays of the branch and bound (hundreds of thousands of cells a call) allocated and freed at
    every call, about 11,500 (every one of them larger than glibc serves from its heap)."""
    _, warm = _first_and_warm_faults("pairs", 10, "laplace(scale=1)", 3.0)
    assert warm < 4_000, warm
