"""`symsel sweep` on a Dask cluster (``--dask ADDRESS``, ``run_sweep(dask_address=...)``): a small grid (2 laws x
2 bases x a δ and an ε x 2 fast methods) run on a local two-worker cluster gives, cell by cell, the numbers of the
same grid run locally with joblib; and on a worker that runs tasks in two threads too (symsel is not thread-safe:
the sweep runs one cell at a time per process)."""

from __future__ import annotations

import csv
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from symsel.cli import main
from symsel.sweep import COLUMNS, load_grid, run_sweep

distributed = pytest.importorskip("dask.distributed")  # the `dask` extra

GRID = """laws: ["geometric(mean=10)", "poisson(mean=10)"]
bases: ["gaussian(sigma=4)", "laplace(scale=1)"]
deltas: [1e-6]
epsilons: [2.0]
methods: [paper, rdp]
"""
#: other laws for the threaded worker, so that no law or bound is already cached in this process
THREADED_GRID = GRID.replace("mean=10", "mean=20").replace(', "laplace(scale=1)"', "")


def rows(path: Path) -> dict[tuple[str, ...], dict[str, str]]:
    """The cells of a results file, by key, without their timings."""
    with path.open(newline="") as handle:
        found = {tuple(row[k] for k in COLUMNS[:5]): {k: v for k, v in row.items() if k != "seconds"}
                 for row in csv.DictReader(handle)}
    return found


@pytest.fixture(scope="module")
def cluster() -> Iterator[object]:
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as local:
        yield local


def test_dask_cells_equal_the_local_run(tmp_path: Path, cluster: object) -> None:
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID)
    cells = load_grid(grid)
    assert len(cells) == 16
    run_sweep(cells, tmp_path / "local.csv", jobs=1)
    summary = run_sweep(cells, tmp_path / "dask.csv", dask_address=cluster.scheduler_address)
    assert summary == {"out": str(tmp_path / "dask.csv"), "cells": 16, "skipped": 0, "ran": 16, "errors": 0}
    assert any("run_cell" in prefix for prefix in cluster.scheduler.task_prefixes)  # ran on the workers
    local = rows(tmp_path / "local.csv")
    assert len(local) == 16 and all(not row["error"] for row in local.values())
    assert rows(tmp_path / "dask.csv") == local

    result = CliRunner().invoke(main, ["sweep", str(grid), "--out", str(tmp_path / "cli.csv"), "--dask",
                                       cluster.scheduler_address, "--json"])
    assert result.exit_code == 0, result.output
    assert rows(tmp_path / "cli.csv") == local


def test_a_threaded_worker_gives_the_local_numbers(tmp_path: Path) -> None:
    grid = tmp_path / "grid.yaml"
    grid.write_text(THREADED_GRID)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0") as local:
        run_sweep(load_grid(grid), tmp_path / "threads.csv", dask_address=local.scheduler_address)
    # the reference in a fresh process (this one has the laws cached now)
    subprocess.run([sys.executable, "-m", "symsel", "sweep", str(grid), "--out", str(tmp_path / "local.csv"),
                    "--jobs", "1"], check=True, capture_output=True)
    local = rows(tmp_path / "local.csv")
    assert len(local) == 8 and all(not row["error"] for row in local.values())
    assert rows(tmp_path / "threads.csv") == local
