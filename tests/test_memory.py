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


# ------------------------------------------------------------------------------ no reference cycle keeps arrays alive
def _clear_module_caches() -> None:
    """Empty every module-level cache of symsel (each is bounded; emptied here so that what the calls below leave
    behind is only what reference cycles hold)."""
    import functools

    from symsel.memory import CACHES

    for name, module in list(sys.modules.items()):
        if name == "symsel" or name.startswith("symsel."):
            for value in list(vars(module).values()):
                if isinstance(value, functools._lru_cache_wrapper):
                    value.cache_clear()
    for cache in list(CACHES):
        cache.clear()


#: what reference cycles may hold, in bytes of numpy arrays: a few scalars (SymPy's recursive closures, compiling a
#: law the first time in a process, refer to themselves: 17 bytes seen), never a bound's arrays (a cycle around
#: ``best``'s certificate or scipy's root finder held 117 KB to 32 MB in these tests).
SCALARS_ONLY = 4096


def _arrays_held_by_cycles(calls) -> tuple[int, int]:
    """Run ``calls`` with the garbage collector's automatic passes disabled; empty symsel's caches and collect,
    keeping what the collection finds (``gc.DEBUG_SAVEALL``).
    Returns the number and bytes of the numpy arrays that those unreachable objects held: what reference cycles kept
    alive. Without cycles reference counting frees everything at once and the collection finds none."""
    import gc

    import numpy as np

    gc.collect()
    was_enabled, flags = gc.isenabled(), gc.get_debug()
    gc.disable()
    try:
        calls()
        _clear_module_caches()
        gc.set_debug(flags | gc.DEBUG_SAVEALL)
        gc.collect()
        arrays = {id(a): a.nbytes for obj in gc.garbage for a in gc.get_referents(obj) if isinstance(a, np.ndarray)}
    finally:
        gc.set_debug(flags)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()
        gc.collect()
    return len(arrays), sum(arrays.values())


def test_repeated_dpsgd_selection_accounting_leaves_no_arrays_to_the_garbage_collector():
    """A calibration's step, a new accountant for a noise, for a random (geometric) and a fixed ``K`` on a short
    DP-SGD run: with automatic garbage collection off, the bounds, profiles and PLDs of every call
    are freed by reference counting alone. (``best``'s certificate held itself through a bound method, and scipy's
    ``brentq`` wraps the function it solves in a closure that refers to itself: each kept a bound's arrays alive,
    several MiB a call here and about 200 MiB a calibration on a 1000-step run, until a full collection.)"""
    from dp_accounting import dp_event

    from symsel.apps.accounting import SelectionAccountant, SelectionDpEvent

    def calls() -> None:
        run = dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)), 10)
        for event in (dp_event.RepeatAndSelectDpEvent(run, 10, 1), SelectionDpEvent(run, "point(k=10)")):
            SelectionAccountant().compose(event).get_epsilon(1e-6)

    count, size = _arrays_held_by_cycles(calls)
    assert size < SCALARS_ONLY, (count, size)


def test_a_best_bound_and_its_certificate_are_freed_without_the_garbage_collector():
    """``best`` on a Gaussian base, its ε and its certificate read, for several noises: nothing of it waits for a
    collection."""
    import symsel
    from symsel.profiles import GaussianProfile

    def calls() -> None:
        for sigma in (2.0, 3.0, 4.0):
            result = symsel.bound(symsel.geometric(mean=10), GaussianProfile(sigma))
            result.epsilon(1e-6)
            dict(result.certificate)

    count, size = _arrays_held_by_cycles(calls)
    assert size < SCALARS_ONLY, (count, size)


def test_a_plan_leaves_no_bound_to_the_garbage_collector():
    """A planner's search of the largest mean (a bound per mean tried): nothing of its bounds waits for a
    collection."""
    from symsel.apps.plan import max_mean
    from symsel.profiles import GaussianProfile

    def calls() -> None:
        max_mean("geometric(mean={mean})", GaussianProfile(4.0), 2.0, 1e-6)

    count, size = _arrays_held_by_cycles(calls)
    assert size < SCALARS_ONLY, (count, size)


# ------------------------------------------------------------------------------ caches bounded in bytes
def test_a_bounded_cache_keeps_at_most_its_bytes_counting_what_entries_filled_since():
    """Ten 1 MiB arrays into a 3 MiB cache: the two newest stay (three would exceed the bytes). An entry that grew
    after it was stored (a lazy table filled) is measured again at the next insertion and dropped when the bytes
    no longer fit; the newest entry stays even alone above the bound; the entry bound holds as well."""
    import numpy as np

    from symsel.memory import MIB, BoundedCache, held_bytes

    cache = BoundedCache("test", max_entries=100, max_bytes=3 * MIB)
    for i in range(10):
        cache.put(i, np.ones(MIB // 8))
    assert list(cache._entries) == [8, 9]
    assert 2 * MIB < cache.measure() <= 3 * MIB
    grown: dict[str, object] = {}
    cache.put("lazy", grown)
    grown["table"] = np.ones(3 * MIB // 16)  # 1.5 MiB, filled after it was stored
    cache.put("next", np.ones(MIB // 8))
    assert list(cache._entries) == ["lazy", "next"] and cache.measure() <= 3 * MIB + 4096
    cache.put("huge", np.ones(5 * MIB // 8))
    assert list(cache._entries) == ["huge"]
    small = BoundedCache("test", max_entries=3, max_bytes=100 * MIB)
    for i in range(10):
        small.put(i, i)
    assert list(small._entries) == [7, 8, 9]
    array = np.ones(MIB // 8)
    assert MIB <= held_bytes([array, array[10:], array[::2]]) < MIB + 4096  # views lead to the array, counted once


def test_the_walk_stops_at_sympy_objects_and_still_counts_the_arrays_beside_them():
    """A law's PGF refers into SymPy's assumption tables, shared by the whole process: the walk does not enter it (a
    list holding an expression costs the list alone), and an array held next to it is still counted in full."""
    import numpy as np
    import sympy

    from symsel.memory import MIB, held_bytes

    z = sympy.Symbol("z")
    expression = sympy.exp(10 * (z - 1)) * (1 + z) ** 3
    assert expression.is_positive is None  # asked: its assumptions are filled (the tables the walk must not enter)
    assert held_bytes([expression]) == sys.getsizeof([expression], 0)
    array = np.ones(MIB // 8)
    assert MIB <= held_bytes({"pgf": expression, "table": array}) < MIB + 4096


def _symsel_module_bytes() -> int:
    """The bytes reachable from the globals of symsel's modules (caches included: an ``lru_cache``'s entries, a
    :func:`~symsel.memory.bounded_cache`'s), each object counted once."""
    from symsel.memory import _module_globals, held_bytes

    seen: set[int] = set()
    stops = _module_globals()  # where each walk stops, the same for all of them: found once, not once per global
    total = 0
    for name, module in list(sys.modules.items()):
        if name == "symsel" or name.startswith("symsel."):
            for value in list(vars(module).values()):
                total += held_bytes(value, getattr(value, "cache", None), seen=seen, stops=stops)
    return total


def test_module_level_caches_stop_growing_in_repeated_dpsgd_accounting(monkeypatch):
    """A calibration's steps (a new noise each: no cache answers), a fixed and a random ``K`` on a short DP-SGD run,
    every cache's byte bound lowered to 1 MiB: after the first noise, what symsel's module globals hold stays flat
    (each cache keeps its newest entry). A cache bounded by entries only (e.g. the composed profiles in an
    ``lru_cache(maxsize=512)``: about 8 MiB a noise here, 22 then 30 then 39 MiB held) grows at every noise and fails
    this."""
    from dp_accounting import dp_event

    from symsel.apps.accounting import SelectionAccountant, SelectionDpEvent
    from symsel.memory import CACHES, MIB

    _clear_module_caches()
    for cache in list(CACHES):
        monkeypatch.setattr(cache, "max_bytes", MIB)
    held = []
    for sigma in (1.0, 1.02, 1.04):
        run = dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(sigma)), 10)
        for event in (SelectionDpEvent(run, "point(k=10)"), dp_event.RepeatAndSelectDpEvent(run, 10, 1)):
            SelectionAccountant().compose(event).get_epsilon(1e-6)
        held.append(_symsel_module_bytes())
    _clear_module_caches()
    assert max(held[1:]) < 1.2 * held[0] + 4 * MIB, [round(h / MIB, 1) for h in held]


# ------------------------------------------------------------------------------ scratch memory for hot loops
def test_a_scratch_hands_out_disjoint_arrays_reused_from_frame_to_frame_within_its_bytes():
    """Arrays of one frame do not overlap (each keeps what was written to it); the next frame gets the same memory
    back (no allocation); an inner frame's arrays are handed out again once it closes; a request beyond the buffer is
    an ordinary array; another thread has its own buffer; no buffer exceeds ``max_bytes``."""
    import threading

    import numpy as np

    from symsel.memory import Scratch, gather

    scratch = Scratch("test", max_bytes=4096)
    with scratch.frame() as take:
        a, flags, index = take(100), take(7, bool), take(50, np.int64)
        a[:], flags[:], index[:] = 1.5, True, np.arange(50)
        b = take(200)
        b[:] = -2.0
        assert np.all(a == 1.5) and np.all(flags) and np.array_equal(index, np.arange(50))
        assert not any(np.shares_memory(x, y) for x, y in [(a, b), (a, flags), (a, index), (flags, index), (index, b)])
        assert all(np.shares_memory(x, scratch._local.state.buffer) for x in (a, flags, index, b))
        with scratch.frame() as inner:
            c = inner(10)
            assert not np.shares_memory(c, b)
        with scratch.frame() as inner:
            assert np.shares_memory(inner(10), c)  # the closed inner frame's memory, handed out again
        big = take(1000)  # beyond the 4096 bytes: an ordinary array
        assert big.size == 1000 and not np.shares_memory(big, scratch._local.state.buffer)
        np.testing.assert_array_equal(gather(take, np.arange(10.0) * 2, np.array([3, 0, 9])), [6.0, 0.0, 18.0])
    with scratch.frame() as take:
        assert np.shares_memory(take(100), a)
    assert scratch.nbytes == 4096
    other: list[int] = []
    thread = threading.Thread(target=lambda: other.append(scratch.nbytes))
    thread.start()
    thread.join()
    assert other == [0]  # the other thread opened no frame: it holds no buffer
    filled = scratch.blocks(10, 4, lambda part, take, out: out.__setitem__(slice(None), part.start))
    np.testing.assert_array_equal(filled, [0, 0, 0, 0, 4, 4, 4, 4, 8, 8])
