"""The report's job runner: results in the order of the jobs whatever order they finish in, one ``finished`` call per
job, the longest started first, errors raised with their message, and a serial run where no process starts."""

from __future__ import annotations

import concurrent.futures
import math
import operator
import os

import pytest

from symsel.errors import SymselError
from symsel.report import parallel
from symsel.report.parallel import Job, run_jobs
from symsel.validate import probability

JOBS = [Job(("small",), 1.0, operator.add, (1, 2)), Job(("big",), 9.0, math.factorial, (20,)),
        Job(("middle", "also"), 5.0, operator.mul, (6, 7))]


@pytest.mark.parametrize("workers", [1, 2])
def test_results_come_in_the_order_of_the_jobs(workers) -> None:
    seen: list[Job] = []
    assert run_jobs(JOBS, seen.append, workers=workers) == [3, math.factorial(20), 42]
    assert sorted(seen, key=JOBS.index) == JOBS  # each job reported once
    if workers == 1:  # here, in the order they start: the longest first
        assert [job.steps[0] for job in seen] == ["big", "middle", "small"]


@pytest.mark.parametrize("workers", [1, 2])
def test_an_error_in_a_job_is_raised_with_its_message(workers) -> None:
    jobs = [*JOBS, Job(("bad",), 3.0, probability, (2.0, "delta", "report"))]
    with pytest.raises(SymselError, match=r"report: parameter delta=2\.0 is out of range"):
        run_jobs(jobs, lambda job: None, workers=workers)


def test_the_jobs_run_here_when_no_process_can_start(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise OSError("no semaphores here")

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", refuse)
    seen: list[Job] = []
    assert run_jobs(JOBS, seen.append, workers=2) == [3, math.factorial(20), 42]
    assert len(seen) == len(JOBS)


def test_the_jobs_left_run_here_when_the_pool_breaks(monkeypatch) -> None:
    class Broken(concurrent.futures.ProcessPoolExecutor):
        def submit(self, *args, **kwargs):
            raise concurrent.futures.process.BrokenProcessPool("a worker died")

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", Broken)
    seen: list[Job] = []
    assert run_jobs(JOBS, seen.append, workers=2) == [3, math.factorial(20), 42]
    assert len(seen) == len(JOBS)


def test_workers_run_one_thread_per_numerical_library(monkeypatch) -> None:
    """The pool's workers start with OpenBLAS and the others on one thread (the pool uses every core already);
    this process's environment is left as it was, and a value set by the user is kept."""
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    jobs = [Job(("a",), 1.0, os.getenv, ("OPENBLAS_NUM_THREADS",)), Job(("b",), 1.0, os.getenv, ("OMP_NUM_THREADS",))]
    assert run_jobs(jobs, lambda job: None, workers=2) == ["1", "3"]
    assert "OPENBLAS_NUM_THREADS" not in os.environ and os.environ["OMP_NUM_THREADS"] == "3"
