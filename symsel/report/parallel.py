"""The report's jobs on every core: independent jobs in a process pool, the longest started first.

A :class:`Job` is one call of a module-level function (so that it can be sent to another process) together with
the report steps it completes and its estimated cost. :func:`run_jobs` returns the results in the order of the
jobs, whatever order they finish in, so that everything assembled from them is the same as in a serial run. The
pool starts fresh processes (``spawn``: never a fork of a parent that may hold threads), each with one thread per
numerical library (:mod:`symsel.report.threads`), as joblib's workers have. Where no process can be started, or the
pool breaks, the jobs left run in this process.
"""

from __future__ import annotations

import multiprocessing
import os
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from symsel.errors import SymselError
from symsel.report.threads import one_thread_each


@dataclass(frozen=True)
class Job:
    """``function(*args)`` run in a worker process.

    Attributes:
        steps: the report steps this job is part of (a step is done when all its jobs are).
        seconds: its estimated cost on one core; jobs start longest first (ties: in the order listed).
        function: a module-level function (sent to the worker by reference).
        args: its arguments (picklable).
    """

    steps: tuple[str, ...]
    seconds: float
    function: Callable[..., Any]
    args: tuple[Any, ...] = ()


def usable_cores() -> int:
    """The number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def run_jobs(jobs: Sequence[Job], finished: Callable[[Job], None], workers: int | None = None) -> list[Any]:
    """Run ``jobs`` on ``workers`` processes (default: :func:`usable_cores`; 1 runs them here), longest first,
    calling ``finished(job)`` in this process as each one ends; returns their results in the order of ``jobs``.

    A :class:`~symsel.errors.SymselError` in a job is raised here with the same message (its own class may not
    survive the way back: :class:`~symsel.errors.ParameterError` takes four arguments); the jobs not started
    are cancelled."""
    order = sorted(range(len(jobs)), key=lambda i: -jobs[i].seconds)
    workers = usable_cores() if workers is None else workers
    results: dict[int, Any] = {}
    if workers > 1 and len(jobs) > 1:
        _run_in_pool(jobs, order, min(workers, len(jobs)), results, finished)
    for i in order:  # serial: one core, no process could start, or the pool broke (then only the jobs left)
        if i not in results:
            results[i] = jobs[i].function(*jobs[i].args)
            finished(jobs[i])
    return [results[i] for i in range(len(jobs))]


def _run_in_pool(jobs: Sequence[Job], order: list[int], workers: int, results: dict[int, Any],
                 finished: Callable[[Job], None]) -> None:
    """The pool's part of :func:`run_jobs`: fills ``results``; returns early, leaving jobs undone, when no process
    can be started or the pool breaks."""
    try:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_start_worker, initargs=(np.geterr(), list(warnings.filters)))
    except (OSError, ValueError, NotImplementedError, ImportError):
        return
    pending: dict[Future, int] = {}
    try:
        with _one_thread_each():  # the workers start as the first jobs are submitted, with this environment
            for i in order:  # the pool hands them out in this order
                pending[pool.submit(_call, jobs[i].function, jobs[i].args)] = i
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=pending.__getitem__):
                i = pending.pop(future)
                outcome = future.result()
                if isinstance(outcome, _Failure):
                    raise SymselError(outcome.message)
                results[i] = outcome
                finished(jobs[i])
    except (BrokenProcessPool, OSError):
        pass  # a worker died or none could start: run_jobs runs the jobs left in this process
    finally:
        if pending:  # an error or an interruption: the jobs still running are not waited for
            _stop_workers(pool)
        pool.shutdown(wait=not pending, cancel_futures=True)


@contextmanager
def _one_thread_each() -> Iterator[None]:
    """:data:`symsel.report.threads.THREAD_VARIABLES` set to 1 in this process's environment (those not set already),
    for the processes started meanwhile; restored after."""
    added = one_thread_each(os.environ)
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """End the pool's worker processes now (Python 3.14 has ``terminate_workers``; before, its process table)."""
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()


@dataclass(frozen=True)
class _Failure:
    """A job's :class:`~symsel.errors.SymselError`, as its message."""

    message: str


def _call(function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    try:
        return function(*args)
    except SymselError as exc:
        return _Failure(str(exc))


def _start_worker(errors: Mapping[str, Any], filters: list[Any]) -> None:
    """A worker takes the parent's floating-point error handling and warning filters (the command line silences
    RuntimeWarning), and runs the cells of a figure itself (the pool already uses every core)."""
    from symsel.report import figures

    np.seterr(**errors)
    warnings.filters[:] = filters  # type: ignore[index]  # a list at run time (typeshed says Sequence)
    figures.JOBS = 1
