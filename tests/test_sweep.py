"""`symsel sweep`: a 100-cell grid runs on 2 processes, every cell's bound equals the direct computation, a
re-run skips what is done, and a sweep killed midway resumes without losing or repeating a cell."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import symsel
from symsel.cli import main
from symsel.errors import ParameterError
from symsel.sweep import load_grid, run_sweep

GRID = """
laws: ["geometric(mean=10)", "geometric(mean=30)", "poisson(mean=10)", "tnb(eta=0.5, mean=30)",
       "logarithmic(mean=30)"]
bases: ["gaussian(sigma=4)", "laplace(scale=1)"]
deltas: [1e-3, 1e-4, 1e-5, 1e-6, 1e-8]
methods: [paper, envelope]
"""


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_a_100_cell_grid_runs_and_resumes(tmp_path: Path) -> None:
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID)
    cells = load_grid(grid)
    assert len(cells) == 100
    out = tmp_path / "out.csv"
    first = run_sweep(cells[:40], out, jobs=2)  # an "interrupted" sweep: 40 cells done
    assert first["ran"] == 40
    result = CliRunner().invoke(main, ["sweep", str(grid), "--out", str(out), "--jobs", "2", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary == {"out": str(out), "cells": 100, "skipped": 40, "ran": 60, "errors": 0}
    table = rows(out)
    assert len(table) == 100 and len({(r["dist"], r["base"], r["value"], r["method"]) for r in table}) == 100
    for r in table[::17]:  # each cell is the engine's own answer
        expected = symsel.bound(symsel.parse_distribution(r["dist"]), symsel.parse_profile(r["base"]),
                                r["method"]).epsilon(float(r["value"]))
        assert float(r["epsilon"]) == pytest.approx(expected, rel=1e-12)


def test_a_killed_sweep_resumes_without_losing_or_repeating_cells(tmp_path: Path) -> None:
    grid = tmp_path / "grid.json"
    laws = [f"geometric(mean={m})" for m in range(5, 45)]
    grid.write_text(json.dumps({"laws": laws, "bases": ["gaussian(sigma=4)"], "deltas": [1e-6],
                                "methods": ["envelope", "fdp"]}))
    out = tmp_path / "out.csv"
    command = [sys.executable, "-m", "symsel", "sweep", str(grid), "--out", str(out), "--jobs", "1"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and (not out.exists() or len(out.read_text().splitlines()) < 6):
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    partial = len(rows(out))
    assert 5 <= partial < 80
    result = CliRunner().invoke(main, ["sweep", str(grid), "--out", str(out), "--jobs", "2", "--json"])
    summary = json.loads(result.stdout)
    assert summary["skipped"] == partial and summary["ran"] == 80 - partial
    table = rows(out)
    assert len(table) == 80 and len({(r["dist"], r["method"]) for r in table}) == 80


def test_a_bad_cell_records_its_error_and_bad_grids_are_refused(tmp_path: Path) -> None:
    grid = tmp_path / "grid.csv"
    grid.write_text("dist,base,delta,method\ngeometric(mean=30),gaussian(sigma=4),1e-6,paper\n"
                    "geometric(mean=-3),gaussian(sigma=4),1e-6,paper\n")
    out = tmp_path / "out.csv"
    summary = run_sweep(load_grid(grid), out, jobs=1)
    assert summary["ran"] == 2 and summary["errors"] == 1
    assert "mean=-3" in rows(out)[1]["error"] or "mean=-3" in rows(out)[0]["error"]
    (tmp_path / "bad.yaml").write_text("laws: [geometric(mean=30)]\nbases: [gaussian(sigma=4)]\n")
    with pytest.raises(ParameterError, match="deltas"):
        load_grid(tmp_path / "bad.yaml")
    result = CliRunner().invoke(main, ["sweep", str(tmp_path / "missing.yaml")])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    result = CliRunner().invoke(main, ["sweep", str(grid), "--dask", "tcp://127.0.0.1:1", "--out",
                                       str(tmp_path / "o2.csv")])
    assert result.exit_code == 2 and "dask" in result.stderr


def test_results_go_to_parquet_with_typed_columns(tmp_path: Path) -> None:
    """--parquet: the same rows as the CSV, numbers as float64 (nulls where a cell failed), read back by pyarrow."""
    import pyarrow.parquet as pq

    grid = tmp_path / "grid.csv"
    grid.write_text("dist,base,delta,method\ngeometric(mean=10),gaussian(sigma=4),1e-6,envelope\n"
                    "poisson(mean=10),gaussian(sigma=4),1e-6,paper\ngeometric(mean=0.5),gaussian(sigma=4),1e-6,best\n")
    out, parquet = tmp_path / "out.csv", tmp_path / "out.parquet"
    result = CliRunner().invoke(main, ["sweep", str(grid), "--out", str(out), "--jobs", "1", "--parquet",
                                       str(parquet), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rows"] == 3
    table = pq.read_table(parquet)
    assert str(table.schema.field("epsilon").type) == "double" and str(table.schema.field("dist").type) == "string"
    by_dist = {r["dist"]: r for r in table.to_pylist()}
    csv_rows = {r["dist"]: r for r in rows(out)}
    for dist, row in csv_rows.items():
        assert by_dist[dist]["epsilon"] == (float(row["epsilon"]) if row["epsilon"] else None)
    assert by_dist["geometric(mean=0.5)"]["epsilon"] is None and "mean" in by_dist["geometric(mean=0.5)"]["error"]
    bad = CliRunner().invoke(main, ["sweep", str(grid), "--out", str(out), "--parquet", str(tmp_path / "no" / "x.pq")])
    assert bad.exit_code == 2 and "parquet" in bad.output and "Traceback" not in bad.output
