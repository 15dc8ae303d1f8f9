"""Sweeps: a grid of laws × bases × (δ or ε) × methods, every cell a certified bound, run in parallel and resumable.

A grid file (YAML, JSON or CSV) describes the cells:

* YAML/JSON, cartesian: ``{"laws": [...], "bases": [...], "deltas": [...], "methods": [...]}`` (``epsilons``
  instead of, or beside, ``deltas``; ``methods`` defaults to ``["best"]``);
* YAML/JSON, explicit: ``{"cells": [{"dist": ..., "base": ..., "delta": ..., "method": ...}, ...]}``;
* CSV: one cell per row, columns ``dist, base, delta`` (or ``epsilon``) and optionally ``method``.

Each cell is :func:`symsel.bounds.bound_summary` of its law and base. Cells run over local processes with joblib
(or on an existing Dask cluster through joblib's dask backend) and each finished cell is appended to the output
CSV at once, flushed: an interrupted sweep loses only the cells that were running, and running it again skips
every cell already in the output (a cell is identified by dist, base, quantity, value and method). A cell with
invalid inputs records its one-line error; it does not stop the sweep.
"""

from __future__ import annotations

import csv
import json
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from symsel.errors import ParameterError, SymselError

COLUMNS = ["dist", "base", "quantity", "value", "method", "epsilon", "delta", "theorem", "mean_K", "seconds", "error"]
#: the most cells a grid may have.
MAX_CELLS = 100_000


@dataclass(frozen=True)
class Cell:
    """One bound to compute: ``quantity`` is ``"delta"`` (report ε at that δ) or ``"epsilon"`` (report δ)."""

    dist: str
    base: str
    quantity: str
    value: float
    method: str

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return (self.dist, self.base, self.quantity, repr(float(self.value)), self.method)


def load_grid(path: str | Path) -> list[Cell]:
    """The cells of a grid file (module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise ParameterError("grid", str(path), "an existing YAML, JSON or CSV file", "sweep")
    suffix = path.suffix.lower()
    try:
        text = path.read_text()
        if suffix == ".csv":
            cells = [_cell(row, path) for row in csv.DictReader(text.splitlines())]
        else:
            data = json.loads(text) if suffix == ".json" else _yaml(text)
            cells = _cells_from_mapping(data, path)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ParameterError("grid", str(path), f"a readable grid file ({' '.join(str(exc).split())[:120]})",
                             "sweep") from None
    if not cells:
        raise ParameterError("grid", str(path), "a grid with at least one cell", "sweep")
    if len(cells) > MAX_CELLS:
        raise ParameterError("grid", f"{len(cells)} cells", f"at most {MAX_CELLS} cells", "sweep")
    return cells


def _yaml(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ParameterError("grid", "YAML", f"valid YAML ({' '.join(str(exc).split())[:120]})", "sweep") from None


def _cells_from_mapping(data: Any, path: Path) -> list[Cell]:
    if not isinstance(data, dict):
        raise ParameterError("grid", str(path), "a mapping with laws/bases/deltas/methods or cells", "sweep")
    if "cells" in data:
        if not isinstance(data["cells"], list):
            raise ParameterError("cells", data["cells"], "a list of cells", "sweep")
        return [_cell(row, path) for row in data["cells"]]
    laws, bases = _list(data, "laws"), _list(data, "bases")
    methods = _list(data, "methods", default=["best"])
    points = [("delta", v) for v in _list(data, "deltas", default=[])]
    points += [("epsilon", v) for v in _list(data, "epsilons", default=[])]
    if not points:
        raise ParameterError("deltas", None, "a list of deltas and/or epsilons", "sweep")
    return [Cell(str(law), str(base), quantity, _number(value, quantity), str(method))
            for law in laws for base in bases for quantity, value in points for method in methods]


def _list(data: dict, key: str, default: list | None = None) -> list:
    value = data.get(key, default)
    if value is None:
        raise ParameterError(key, None, f"a list of {key}", "sweep")
    if not isinstance(value, list):
        value = [value]
    return value


def _number(value: Any, name: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ParameterError(name, value, "a number", "sweep") from None
    if math.isnan(x):
        raise ParameterError(name, value, "a number", "sweep")
    return x


def _cell(row: dict, path: Path) -> Cell:
    if not isinstance(row, dict) or not row.get("dist") or not row.get("base"):
        raise ParameterError("cell", row, "dist, base and delta (or epsilon) in every cell", f"sweep {path.name}")
    has_delta = row.get("delta") not in (None, "")
    has_epsilon = row.get("epsilon") not in (None, "")
    if has_delta == has_epsilon:
        raise ParameterError("cell", row, "exactly one of delta or epsilon per cell", f"sweep {path.name}")
    quantity = "delta" if has_delta else "epsilon"
    return Cell(str(row["dist"]), str(row["base"]), quantity, _number(row[quantity], quantity),
                str(row.get("method") or "best"))


def run_cell(cell: Cell) -> dict[str, Any]:
    """One cell's record (``COLUMNS``); an invalid input is recorded as its one-line error."""
    from symsel.bounds import bound_summary
    from symsel.spec import parse_distribution, parse_profile

    start = time.perf_counter()
    record: dict[str, Any] = {"dist": cell.dist, "base": cell.base, "quantity": cell.quantity,
                              "value": repr(float(cell.value)), "method": cell.method}
    try:
        law, base = parse_distribution(cell.dist), parse_profile(cell.base)
        kwargs = {cell.quantity: cell.value}
        summary = bound_summary(law, base, cell.method, **kwargs)
        record.update(epsilon=summary.get("epsilon"), delta=summary.get("delta"), theorem=summary.get("theorem"),
                      mean_K=summary.get("mean_K"), error=summary.get("reason"))
    except (SymselError, RecursionError, MemoryError) as exc:
        record["error"] = " ".join(str(exc).split())[:300] or type(exc).__name__
    record["seconds"] = round(time.perf_counter() - start, 4)
    return record


def done_keys(out: Path) -> set[tuple[str, ...]]:
    """Cells already in the output file."""
    if not out.is_file():
        return set()
    with out.open(newline="") as handle:
        return {(r["dist"], r["base"], r["quantity"], r["value"], r["method"]) for r in csv.DictReader(handle)}


def run_sweep(cells: list[Cell], out: str | Path, jobs: int = -1, dask_address: str | None = None,
              progress: bool = False) -> dict[str, Any]:
    """Run the cells not yet in ``out`` (CSV, appended to), in parallel; returns counts of what happened."""
    if dask_address is not None:
        _require_dask(dask_address)
    out = Path(out)
    done = done_keys(out)
    todo = list({cell.key: cell for cell in cells if cell.key not in done}.values())
    summary = {"out": str(out), "cells": len(cells), "skipped": len(cells) - len(todo), "ran": 0, "errors": 0}
    if not todo:
        return summary
    new_file = not out.is_file()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        if new_file:
            writer.writeheader()
            handle.flush()
        for record in _records(todo, jobs, dask_address, progress):
            writer.writerow({k: ("" if record.get(k) is None else record.get(k)) for k in COLUMNS})
            handle.flush()
            summary["ran"] += 1
            summary["errors"] += bool(record.get("error"))
    return summary


def _records(cells: list[Cell], jobs: int, dask_address: str | None, progress: bool) -> Iterator[dict[str, Any]]:
    import joblib

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(cells), unit="cell", file=None)
    tasks = (joblib.delayed(run_cell)(cell) for cell in cells)
    if dask_address is not None:
        client = _require_dask(dask_address)(dask_address)
        try:
            with joblib.parallel_backend("dask"):
                yield from _tick(joblib.Parallel(return_as="generator_unordered")(tasks), bar)
        finally:
            client.close()
        return
    yield from _tick(joblib.Parallel(n_jobs=jobs, return_as="generator_unordered")(tasks), bar)


TEXT_COLUMNS = ("dist", "base", "quantity", "method", "theorem", "error")


def write_parquet(results: str | Path, target: str | Path) -> dict[str, Any]:
    """Copy a sweep's results CSV to a Parquet file (typed columns: text, and float64 with nulls for the numbers),
    for dataframes and query engines. Needs pyarrow (``pip install 'symsel[parquet]'``)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ParameterError("parquet", str(target), "an installed pyarrow (pip install 'symsel[parquet]') to write "
                             "Parquet", "sweep") from None
    results, target = Path(results), Path(target)
    with results.open(newline="") as handle:
        rows = list(csv.DictReader(handle))

    def column(name: str) -> Any:
        values = [row.get(name) or None for row in rows]
        if name in TEXT_COLUMNS:
            return pa.array(values, type=pa.string())
        return pa.array([None if v is None else float(v) for v in values], type=pa.float64())

    table = pa.table({name: column(name) for name in COLUMNS})
    try:
        pq.write_table(table, target)
    except OSError as exc:
        raise ParameterError("parquet", str(target), f"a file symsel can write ({exc})", "sweep") from None
    return {"parquet": str(target), "rows": table.num_rows}


def _require_dask(address: str) -> Any:
    """``dask.distributed.Client``, or a one-line error naming the missing package."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise ParameterError("dask", address, "an installed dask.distributed (pip install 'dask[distributed]') to "
                             "use a Dask cluster", "sweep") from None
    return Client


def _tick(records: Iterator[dict[str, Any]], bar: Any) -> Iterator[dict[str, Any]]:
    for record in records:
        if bar is not None:
            bar.update(1)
        yield record
    if bar is not None:
        bar.close()
