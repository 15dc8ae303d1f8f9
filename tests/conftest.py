"""Hypothesis profiles for the suite.

The default profile, ``ci``, is derandomized: every property test draws the same examples on every run and machine,
so the suite's verdict depends on the code only (a randomized run once failed CI on an example no earlier run had
drawn, and then spent five minutes shrinking it). The ``explore`` profile draws fresh random examples on every run
and keeps Hypothesis's example database; run it on demand, repeatedly, to hunt for new counterexamples::

    SYMSEL_HYPOTHESIS=explore python3 run.py test tests/test_properties.py

A counterexample it finds becomes a pinned test (see test_properties.py), not a reason to change the profile.

Each test process (each xdist worker) runs the numerical libraries on one thread, as the report's workers do
(symsel/report/parallel.py): two workers on two cores with two BLAS threads each spent 5-10x the CPU on DP-SGD steps.
Set before numpy is imported; a variable already set by the caller wins.
"""

from __future__ import annotations

import os

from symsel.memory import keep_freed_memory
from symsel.report.threads import one_thread_each

one_thread_each(os.environ)
keep_freed_memory(os.environ)  # for this worker, and the kernels and scripts it starts (symsel/memory.py)

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("SYMSEL_HYPOTHESIS", "ci"))


def pytest_collection_modifyitems(items: list) -> None:
    """The longest tests first: the first test that needs the shared quick report (about 30 s, then read by the other
    report tests), then those marked ``slow`` (the notebooks, about 10 s each), then the rest in their order. On two
    workers the long ones then run side by side at the start instead of one of them running alone at the end."""
    first_report = next((item for item in items if "report" in getattr(item, "fixturenames", ())), None)

    def rank(item) -> int:
        if item is first_report:
            return 0
        return 1 if item.get_closest_marker("slow") is not None else 2

    items.sort(key=rank)
