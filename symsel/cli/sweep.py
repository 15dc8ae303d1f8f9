"""`symsel sweep`: a grid of bounds, in parallel and resumable."""

from __future__ import annotations

from typing import Any

import click

from symsel.cli._app import _fail, emit, main, user_errors


@main.command("sweep")
@click.argument("grid", type=click.Path(dir_okay=False))
@click.option("--out", default=None,
              help="Results CSV (appended to, by one sweep at a time; default GRID's name + '-results.csv').")
@click.option("--jobs", type=int, default=-1, show_default=True,
              help="Local worker processes: -1 (every core) or 1 to 512 (never more than the cells to run or the "
                   "cores).")
@click.option("--dask", "dask_address", default=None, help="Run on an existing Dask cluster at this address.")
@click.option("--parquet", default=None,
              help="Also write every result to this Parquet file (needs pyarrow: pip install 'symsel[parquet]').")
@click.option("--progress", is_flag=True, help="Show a progress bar on stderr.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@user_errors
def sweep_command(grid: str, out: str | None, jobs: int, dask_address: str | None, parquet: str | None,
                  progress: bool, as_json: bool) -> None:
    """Run every cell of a GRID file (YAML, JSON or CSV: laws x bases x deltas x methods); cells already in the
    output are skipped, so an interrupted sweep (Ctrl-C, SIGTERM) resumes where it stopped."""
    from pathlib import Path

    from symsel.apps.sweep import (
        ALLOWED_OUT,
        ALLOWED_PARQUET,
        SweepInterrupted,
        check_jobs,
        is_sweep_parquet,
        load_grid,
        run_sweep,
        write_parquet,
    )
    from symsel.errors import ParameterError
    from symsel.outputs import output_file

    check_jobs(jobs, dask_address)
    cells = load_grid(grid)
    # every output checked before the grid runs: a refused --parquet must not cost the sweep
    target = output_file(out if out is not None else Path(grid).with_name(Path(grid).stem + "-results.csv"),
                         "--out", "sweep", ALLOWED_OUT)
    if parquet is not None:
        chosen = output_file(parquet, "--parquet", "sweep", ALLOWED_PARQUET, ours=is_sweep_parquet)
        for other, what in ((target, "the results CSV (--out)"), (Path(grid), "the grid")):
            if chosen.resolve() == other.resolve():
                raise ParameterError("--parquet", parquet, f"{ALLOWED_PARQUET}; it is {what}", "sweep")
    try:
        summary: dict[str, Any] = run_sweep(cells, target, jobs=jobs, dask_address=dask_address, progress=progress,
                                            notify=lambda message: click.echo(f"symsel: note: {message}", err=True))
    except SweepInterrupted as stop:
        _fail(f"symsel: interrupted: {stop} stopped the sweep; every finished cell is in {target}: run the same "
              "command again to resume", 128 + stop.signum)
    if parquet is not None:
        summary.update(write_parquet(target, parquet))
    emit(summary, as_json, lambda s: (f"{s['cells']} cells: {s['ran']} run ({s['errors']} with errors), "
                                      f"{s['skipped']} already in {s['out']}"
                                      + (f"; {s['rows']} rows in {s['parquet']}" if "parquet" in s else "")))
