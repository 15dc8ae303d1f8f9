"""`symsel sweep` on a Dask cluster (``--dask ADDRESS``, ``run_sweep(dask_address=...)``): a small grid (2 laws x
2 bases x a δ and an ε x 2 fast methods) run by the command-line guide's example (docs/cli.md) on a local cluster
of two worker processes
gives, cell by cell, the numbers of the same grid run locally with joblib; and so does the command line on a worker
that runs tasks in two threads (symsel is not thread-safe: the sweep runs one cell at a time per process)."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from symsel.apps.sweep import COLUMNS, load_grid, run_sweep
from symsel.cli import main

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


def readme_block(heading: str) -> str:
    """The first ```python block after ``heading`` in the command-line guide (docs/cli.md)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    start = text.index("```python\n", text.index(heading)) + len("```python\n")
    return text[start:text.index("```\n", start)]


def test_the_readme_dask_example_equals_the_local_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command-line guide's example: the grid on a local cluster of two worker processes."""
    monkeypatch.chdir(tmp_path)
    Path("grid.yaml").write_text(GRID)
    cells = load_grid("grid.yaml")
    assert len(cells) == 16
    run_sweep(cells, tmp_path / "local.csv", jobs=1)
    namespace: dict[str, object] = {"__name__": "__main__"}  # the block runs under its script guard
    exec(readme_block("On a Dask cluster"), namespace)
    assert any("run_cell" in prefix for prefix in namespace["cluster"].scheduler.task_prefixes)  # on the workers
    local = rows(tmp_path / "local.csv")
    assert len(local) == 16 and all(not row["error"] for row in local.values())
    assert rows(tmp_path / "grid-results.csv") == local


def test_the_cli_on_a_threaded_worker_gives_the_local_numbers(tmp_path: Path) -> None:
    """`symsel sweep --dask ADDRESS`, on one worker running tasks in two threads of this process."""
    grid = tmp_path / "grid.yaml"
    grid.write_text(THREADED_GRID)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0") as local:
        result = CliRunner().invoke(main, ["sweep", str(grid), "--out", str(tmp_path / "threads.csv"), "--dask",
                                           local.scheduler_address, "--json"])
        assert result.exit_code == 0, result.output
        assert any("run_cell" in prefix for prefix in local.scheduler.task_prefixes)
    # the reference in a fresh process (this one has the laws cached now)
    subprocess.run([sys.executable, "-m", "symsel", "sweep", str(grid), "--out", str(tmp_path / "local.csv"),
                    "--jobs", "1"], check=True, capture_output=True)
    local = rows(tmp_path / "local.csv")
    assert len(local) == 8 and all(not row["error"] for row in local.values())
    assert rows(tmp_path / "threads.csv") == local
