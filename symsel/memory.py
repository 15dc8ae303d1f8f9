"""Memory: caches bounded in bytes, and freed memory kept in a process that symsel owns (glibc's malloc, Linux).

**Caches.** Every module-level cache of symsel that can hold large objects is a :class:`BoundedCache` (or made by
:func:`bounded_cache`; the few others hold one object, or a fixed handful of numbers an entry, as noted where they
are): least recently used entries are dropped beyond a number of entries *and* beyond a number of bytes, counted by
walking what each entry refers to (:func:`held_bytes`: the numpy arrays of a PLD, a bound's tables, a law's
expressions). A sweep or a calibration that asks for a new noise at every step then keeps a bounded amount alive,
whatever the size of each entry (a DP-SGD run's composed PLD is megabytes); :func:`cache_bytes` reports what each
holds.

**Freed memory.** By default glibc serves every allocation above 128 KiB (a threshold it raises on its own up to 32
MiB) with a fresh ``mmap`` and unmaps it when freed, and trims the heap's top above 128 KiB. A program that
allocates and frees large numpy arrays thousands of times (the PLD convolutions of DP-SGD, the grids of exact
evaluations) then faults their pages in again each time. With allocations up to 32 MiB kept on the heap and up to 1
GiB of freed heap kept for reuse, that kernel time goes away; the price is memory that stays with the process after
a peak (at most its largest working set).

This is a setting for a process, so only a program that owns its process applies it: the command line
(:func:`symsel.cli.main`), the report's workers and the test suite's workers, through :func:`keep_freed_memory`,
which sets it for the running process (``mallopt``) and, through glibc's environment variables, for the processes it
starts; a variable the caller already set wins. ``import symsel`` applies nothing: the library leaves the allocator
of the program that imports it alone. Elsewhere (macOS, Windows, musl) it does nothing.

**Scratch.** The library's hottest loop, the branch and bound of the interval bound, avoids that pattern itself,
whatever the allocator's settings: it bounds its cells in blocks whose working arrays are those of a
:class:`Scratch`, one buffer per thread kept from call to call (at most its ``max_bytes``), instead of arrays
allocated and freed at every step.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import os
import platform
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, MutableMapping
from types import BuiltinFunctionType, CodeType, FunctionType, MethodType, ModuleType
from typing import Any

import numpy as np

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


# ------------------------------------------------------------------------------------ caches bounded in bytes
#: every :class:`BoundedCache` alive in this process (the module-level caches), for :func:`cache_bytes`.
CACHES: weakref.WeakSet[BoundedCache] = weakref.WeakSet()

MIB = 2**20


def held_bytes(*roots: object, seen: set[int] | None = None, stops: set[int] | None = None) -> int:
    """The bytes of the objects reachable from ``roots`` (``sys.getsizeof`` of each, which for a numpy array that owns
    its data includes the data; a view leads to the array it views), each container counted once, also across calls
    given the same ``seen`` (numbers and strings are counted wherever they are referred to: an overestimate). The walk
    follows ``gc.get_referents`` and stops at modules, classes and the globals of modules (what a function refers to
    through them is not held by the cache that holds the function), and at the objects of :data:`_OPAQUE` and
    :data:`_OPAQUE_PACKAGES`; ``stops``: the ids of those globals (:func:`_module_globals`, computed once for many
    calls)."""
    seen = set() if seen is None else seen
    shared = _module_globals() if stops is None else stops
    size, referents, atoms, ndarray = sys.getsizeof, gc.get_referents, _ATOMS, np.ndarray
    opaque = _OPAQUE_TYPES
    total, stack = 0, list(roots)
    while stack:
        obj = stack.pop()
        kind = type(obj)
        stop = opaque.get(kind)
        if stop is None:
            stop = opaque[kind] = _is_opaque(kind)
        if stop or id(obj) in seen or id(obj) in shared:
            continue
        seen.add(id(obj))
        total += size(obj, 0)
        if isinstance(obj, ndarray):
            if obj.base is not None:
                stack.append(obj.base)
            continue
        refs = referents(obj)
        kinds = set(map(type, refs))
        if kinds <= atoms:  # e.g. a tuple of thousands of floats, counted without the loop
            total += len(refs) * _FLOAT_SIZE if kinds == _FLOATS else sum(map(size, refs))
            continue
        for ref in refs:
            if type(ref) in atoms:
                total += size(ref, 0)
            else:
                stack.append(ref)
    return total


#: leaves of the walk of :func:`held_bytes`: they refer to nothing.
_ATOMS = frozenset({float, int, bool, complex, str, bytes, type(None)})
_FLOATS, _FLOAT_SIZE = {float}, sys.getsizeof(0.0)
#: where the walk of :func:`held_bytes` stops (not counted): code, functions and methods (a law's compiled
#: callables; symsel's caches keep data in objects and containers, not in closures) and numpy's functions.
_OPAQUE = frozenset({CodeType, BuiltinFunctionType, FunctionType, MethodType, np.ufunc, type(np.sum)})
#: ... and at the objects of these packages: a SymPy expression (a law's PGF) refers into SymPy's assumption tables and
#: caches, shared by every expression of the process and held by SymPy itself, not by a symsel cache (walking them
#: made the accounting half of a warm ``best`` call on a Gaussian base); a law's own expression is a few KB.
_OPAQUE_PACKAGES = frozenset({"sympy"})
#: the verdict of :func:`_is_opaque` for each type met (a type's verdict never changes).
_OPAQUE_TYPES: dict[type, bool] = {}


def _is_opaque(kind: type) -> bool:
    """Whether :func:`held_bytes` stops at objects of type ``kind``: modules, classes, :data:`_OPAQUE` and the types
    of :data:`_OPAQUE_PACKAGES`."""
    package = str(getattr(kind, "__module__", "") or "").partition(".")[0]
    return kind in _OPAQUE or issubclass(kind, type | ModuleType) or package in _OPAQUE_PACKAGES


def _module_globals() -> set[int]:
    """The ids of the globals of every loaded module, found again only when the number of loaded modules changed
    (each cache insertion asks; a process running the tests has about 2000 modules). Between two changes a module
    may have been replaced by another: the dictionaries of the modules found last are kept alive with their ids, so
    no other object takes one of those ids, and the worst case is a walk entering the new module's globals (bytes
    counted in excess, never missed)."""
    count = len(sys.modules)
    if _FOUND_GLOBALS and _FOUND_GLOBALS[0] == count:
        return _FOUND_GLOBALS[2]
    dicts = [vars(module) for module in list(sys.modules.values()) if isinstance(module, ModuleType)]
    _FOUND_GLOBALS[:] = [count, dicts, {id(d) for d in dicts}]
    return _FOUND_GLOBALS[2]


#: the last answer of :func:`_module_globals`: the module count, the module dictionaries (kept alive) and their ids.
_FOUND_GLOBALS: list[Any] = []


class BoundedCache:
    """A least-recently-used cache bounded both by its number of entries (``max_entries``) and by the bytes it holds
    (``max_bytes``): each entry's bytes are :func:`held_bytes` of its key and value, measured alone (what entries
    share is counted in each: an overestimate), when it is stored and again when the next one is stored (by then
    the caller has filled its lazy tables). The least recently used entries beyond either bound are dropped, the
    newest always kept: at most ``max_bytes``, or the newest entry alone, stay alive. A hit costs a dictionary
    look-up, a miss one or two walks. Thread-safe; a value is computed outside the lock (two threads may compute it
    both)."""

    def __init__(self, name: str, max_entries: int, max_bytes: int):
        self.name, self.max_entries, self.max_bytes = name, max_entries, max_bytes
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()
        self._sizes: dict[Hashable, int] = {}  # each entry's bytes, measured alone (what entries share: in each)
        self._lock = threading.RLock()
        self.nbytes = 0
        CACHES.add(self)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def __repr__(self) -> str:
        return f"BoundedCache({self.name!r}, {len(self)}/{self.max_entries} entries, max_bytes={self.max_bytes})"

    def get(self, key: Hashable, default: Any = None) -> Any:
        """The value under ``key`` (now the most recently used), else ``default``."""
        with self._lock:
            if key not in self._entries:
                return default
            self._entries.move_to_end(key)
            return self._entries[key]

    def put(self, key: Hashable, value: Any) -> Any:
        """Store ``value`` under ``key`` as the most recently used, drop what exceeds the bounds; returns ``value``."""
        with self._lock:
            stops = _module_globals()
            if self._entries:  # the previous newest entry, measured again: its lazy attributes are filled by now
                last = next(reversed(self._entries))
                self._sizes[last] = held_bytes(last, self._entries[last], stops=stops)
            self._entries[key] = value
            self._entries.move_to_end(key)
            self._sizes[key] = held_bytes(key, value, stops=stops)
            while len(self._entries) > 1 and (len(self._entries) > self.max_entries
                                              or sum(self._sizes.values()) > self.max_bytes):
                oldest, _ = self._entries.popitem(last=False)
                del self._sizes[oldest]
            self.nbytes = sum(self._sizes.values())
        return value

    def pop(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            self._sizes.pop(key, None)
            return self._entries.pop(key, default)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._sizes.clear()
            self.nbytes = 0

    def measure(self) -> int:
        """The bytes the entries hold now (:func:`held_bytes`, what entries share counted once)."""
        with self._lock:
            seen: set[int] = set()
            stops = _module_globals()
            return sum(held_bytes(key, value, seen=seen, stops=stops) for key, value in self._entries.items())


def bounded_cache(max_entries: int, max_bytes: int) -> Callable[[Callable[..., Any]], Any]:
    """A decorator like ``functools.lru_cache`` whose cache is a :class:`BoundedCache` (``wrapper.cache``; also
    ``wrapper.cache_clear()``). Positional and keyword arguments must be hashable; exceptions are not cached."""

    def decorate(function: Callable[..., Any]) -> Any:
        cache = BoundedCache(f"{function.__module__}.{function.__qualname__}", max_entries, max_bytes)
        missing = object()

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = args if not kwargs else (*args, missing, *sorted(kwargs.items()))
            value = cache.get(key, missing)
            if value is missing:
                value = cache.put(key, function(*args, **kwargs))
            return value

        wrapper.cache = cache  # type: ignore[attr-defined]
        wrapper.cache_clear = cache.clear  # type: ignore[attr-defined]
        return wrapper

    return decorate


def cache_bytes() -> dict[str, int]:
    """The bytes each :class:`BoundedCache` of this process holds now, by its name (measured: a few milliseconds)."""
    return {cache.name: cache.measure() for cache in list(CACHES)}


# ------------------------------------------------------------------------------------ scratch memory for hot loops
#: the alignment of each array a :class:`Scratch` hands out, in bytes (a cache line).
_ALIGN = 64


class Scratch:
    """Working arrays of a hot loop, carved from one buffer per thread that is kept from call to call, so that a
    loop that needs many arrays of the same sizes at every step neither allocates nor frees them (under glibc's
    default settings a freed array of more than 128 KiB, or a heap top that a step's arrays grew by more than that,
    goes back to the kernel and the next step faults its pages in again).

    ``with scratch.frame() as take:`` opens a frame; ``take(size, dtype)`` hands out an uninitialized
    one-dimensional array that stays valid until the frame closes (frames nest: an inner frame's arrays are handed out
    again once it closes). No array of a frame may outlive it: what a caller returns is a fresh array. The buffer,
    ``max_bytes``, is reserved by a thread's first frame and never written as a whole: the operating system backs
    only the pages that frames use (:attr:`nbytes` is the reservation). A request beyond it gets an ordinary array
    (:func:`numpy.empty`)."""

    def __init__(self, name: str, max_bytes: int):
        self.name, self.max_bytes = name, int(max_bytes)
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"Scratch({self.name!r}, max_bytes={self.max_bytes})"

    def _state(self) -> _ScratchState:
        state = getattr(self._local, "state", None)
        if state is None:
            state = self._local.state = _ScratchState(self.max_bytes)
        return state

    @property
    def nbytes(self) -> int:
        """The bytes of this thread's buffer (0 before its first frame)."""
        state = getattr(self._local, "state", None)
        return 0 if state is None else state.buffer.nbytes

    @contextlib.contextmanager
    def frame(self) -> Iterator[Callable[..., np.ndarray]]:
        state = self._state()
        start, buffer, views = state.used, state.buffer, state.views
        limit = buffer.nbytes

        def take(size: int, dtype: Any = np.float64) -> np.ndarray:
            typed = views.get(dtype)
            if typed is None:  # the buffer seen as this type, and its item size
                kind = np.dtype(dtype)
                typed = views[dtype] = (buffer[:limit - limit % kind.itemsize].view(kind), kind.itemsize)
            view, itemsize = typed
            begin = state.used
            state.used = stop = begin - (-size * itemsize // _ALIGN) * _ALIGN
            if stop > limit:  # over the buffer: an ordinary array
                return np.empty(size, dtype=dtype)
            return view[begin // itemsize:begin // itemsize + size]

        try:
            yield take
        finally:
            state.used = start

    def blocks(self, size: int, block: int, fill: Callable[[slice, Take, np.ndarray], None]) -> np.ndarray:
        """A new array of ``size`` numbers, filled ``block`` at a time by ``fill(part, take, out)`` (``out``: that part
        of the result; ``take``: a frame for its working arrays, the same memory for every block)."""
        out = np.empty(size)
        for start in range(0, size, block):
            part = slice(start, start + block)
            with self.frame() as take:
                fill(part, take, out[part])
        return out


#: a :meth:`Scratch.frame`'s ``take(size, dtype=float)``: an uninitialized array of the frame.
Take = Callable[..., np.ndarray]


def gather(take: Take, values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``values[index]`` into an array of ``take`` (``index`` one-dimensional, every entry valid)."""
    return values.take(index, out=take(index.size, values.dtype), mode="wrap")  # "raise" would copy to out


class _ScratchState:
    """One thread's buffer of a :class:`Scratch` (uninitialized: no page of it is backed before it is written), the
    buffer seen as each type handed out, and the bytes handed out in its open frames."""

    def __init__(self, nbytes: int) -> None:
        self.buffer = np.empty(nbytes, dtype=np.uint8)
        self.views: dict[Any, tuple[np.ndarray, int]] = {}
        self.used = 0

