"""Sweeps: a grid of laws × bases × (δ or ε) × methods, every cell a certified bound, run in parallel and resumable.

A grid file (YAML, JSON or CSV) describes the cells:

* YAML/JSON, cartesian: ``{"laws": [...], "bases": [...], "deltas": [...], "methods": [...]}`` (``epsilons``
  instead of, or beside, ``deltas``; ``methods`` defaults to ``["best"]``);
* YAML/JSON, explicit: ``{"cells": [{"dist": ..., "base": ..., "delta": ..., "method": ...}, ...]}``;
* CSV: one cell per row, columns ``dist, base, delta`` (or ``epsilon``) and optionally ``method``.

Each cell is :func:`symsel.bounds.bound_summary` of its law and base. Cells run over local processes with joblib
(or on an existing Dask cluster through joblib's dask backend) and each finished cell is appended to the output
CSV at once, as one complete line in one write, fsync'ed: an interrupted sweep loses only the cells that were
running, and running it again skips every cell already in the output (a cell is identified by dist, base,
quantity, value and method). A cell with invalid inputs records its one-line error; it does not stop the sweep.

Resuming checks every row already in the output: a last row cut off (or otherwise invalid) is dropped and its
cell computed again; an invalid row before the last, or a file that is not a sweep's results, is refused and
left untouched; a row is invalid when it is cut off, lacks a column, or holds a number that no sweep writes (NaN,
ε < 0, δ outside [0, 1], a missing bound without an error saying why). One sweep at a time writes an output file (an
exclusive lock on ``<out>.lock``), and SIGINT or SIGTERM stop a sweep between two rows, never inside one.

Outputs are checked by :func:`symsel.outputs.output_file` before anything is read or written: a device, a FIFO, a
folder, an empty path or (for ``--parquet``) a file that is not a Parquet copy of a sweep is refused untouched.
Local workers: ``jobs`` processes (``-1``: every core; at most :data:`MAX_JOBS`), never more than the cells to run or
the machine's cores.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import io
import json
import math
import numbers
import os
import secrets
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Collection, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from symsel import validate
from symsel.errors import ParameterError, SymselError
from symsel.outputs import output_file, path_kind

COLUMNS = ["dist", "base", "quantity", "value", "method", "epsilon", "delta", "theorem", "mean_K", "seconds", "error"]
#: the columns that identify a cell (``Cell.key``), the text columns, and the numbers (empty where a cell failed).
KEY_COLUMNS = ("dist", "base", "quantity", "value", "method")
TEXT_COLUMNS = ("dist", "base", "quantity", "method", "theorem", "error")
NUMBER_COLUMNS = tuple(name for name in COLUMNS if name not in TEXT_COLUMNS)
#: what ``out`` may be, in the errors that refuse it.
ALLOWED_OUT = f"a new file, or a CSV that symsel sweep wrote (header {COLUMNS[0]},...,{COLUMNS[-1]})"
#: the most cells a grid may have.
MAX_CELLS = 100_000
#: the most local worker processes ``jobs`` may ask for (the processes started are also at most the cells to run and
#: the machine's cores).
MAX_JOBS = 512
#: what ``--parquet`` may be, in the errors that refuse it.
ALLOWED_PARQUET = "a new file, or a Parquet file that symsel sweep wrote (its columns those of the results CSV)"


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
    if isinstance(path, bool) or not isinstance(path, str | os.PathLike) or not os.fspath(path):
        raise ParameterError("grid", repr(path), "the path of an existing YAML, JSON or CSV file", "sweep")
    path = Path(path)
    if not path.is_file():
        raise ParameterError("grid", str(path), "an existing YAML, JSON or CSV file", "sweep")
    suffix = path.suffix.lower()
    try:
        text = path.read_text()
        if suffix == ".csv":
            cells = _csv_cells(text, path)
        else:
            data = json.loads(text) if suffix == ".json" else _yaml(text)
            cells = _cells_from_mapping(data, path)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ParameterError("grid", str(path), f"a readable grid file ({' '.join(str(exc).split())[:120]})",
                             "sweep") from None
    if not cells:
        raise ParameterError("grid", str(path), "a grid with at least one cell", "sweep")
    _check_cell_count(len(cells))
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
        _known_keys(data, ("cells",), "grid", path)
        if not isinstance(data["cells"], list):
            raise ParameterError("cells", data["cells"], "a list of cells", "sweep")
        _check_cell_count(len(data["cells"]))
        return [_cell(row, path) for row in data["cells"]]
    _known_keys(data, GRID_KEYS, "grid", path)
    laws, bases = _list(data, "laws", text=True), _list(data, "bases", text=True)
    methods = _list(data, "methods", default=["best"], text=True)
    points = [("delta", v) for v in _list(data, "deltas", default=[])]
    points += [("epsilon", v) for v in _list(data, "epsilons", default=[])]
    if not points:
        raise ParameterError("deltas", None, "a list of deltas and/or epsilons", "sweep")
    _check_cell_count(len(laws) * len(bases) * len(points) * len(methods))  # before the product is built
    return [Cell(law, base, quantity, _number(value, quantity), method)
            for law in laws for base in bases for quantity, value in points for method in methods]


def _check_cell_count(count: int) -> None:
    """A grid of more than :data:`MAX_CELLS` cells is refused from its size alone: a three-line YAML file with
    anchors names a billion cells, which would not fit in memory if built."""
    if count > MAX_CELLS:
        raise ParameterError("grid", f"{count} cells", f"at most {MAX_CELLS} cells", "sweep")


#: the keys of a cartesian grid, and of a cell (a CSV's columns, an entry of ``cells``).
GRID_KEYS = ("laws", "bases", "deltas", "epsilons", "methods")
CELL_KEYS = ("dist", "base", "delta", "epsilon", "method")


def _known_keys(keys: Any, known: tuple[str, ...], what: str, path: Path) -> None:
    """Every key (or column) of ``keys`` is one of ``known``, and none is given twice: a typo (``method:``) or a second
    ``dist`` column would otherwise be ignored, or silently win."""
    keys = list(keys)
    for key in keys:
        if key not in known:
            raise ParameterError(what, f"{path.name}: {' '.join(str(key).split())[:60]!r}",
                                 f"only the keys {', '.join(known)}", "sweep")
    twice = sorted({key for key in keys if keys.count(key) > 1})
    if twice:
        raise ParameterError(what, f"{path.name}: {twice[0]!r} given twice", f"each of {', '.join(known)} once",
                             "sweep")


def _csv_cells(text: str, path: Path) -> list[Cell]:
    """The cells of a CSV grid: its header names only :data:`CELL_KEYS`, each once."""
    reader = csv.DictReader(text.splitlines())
    _known_keys(reader.fieldnames or [], CELL_KEYS, "columns", path)
    return [_cell(row, path) for row in reader]


def _list(data: dict, key: str, default: list | None = None, text: bool = False) -> list:
    """``data[key]`` as a list; with ``text``, every entry must be a spec string (a nested list, a mapping or a number
    is refused, naming ``key``, rather than written into the results as its repr: a YAML alias bomb expands to
    hundreds of kilobytes per cell)."""
    value = data.get(key, default)
    if value is None:
        raise ParameterError(key, None, f"a list of {key}", "sweep")
    if not isinstance(value, list):
        value = [value]
    if text:
        for item in value:
            _text(item, key)
    return value


def _text(item: Any, key: str) -> str:
    """A spec string of the grid (a law, a base or a method), or a one-line error naming ``key``."""
    if not isinstance(item, str) or not item.strip():
        shown = " ".join(repr(item).split())
        raise ParameterError(key, shown if len(shown) <= 80 else shown[:77] + "...",
                             f"a spec string for each entry of {key} (e.g. \"geometric(mean=10)\")", "sweep")
    return item


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool):  # YAML's true/yes: not the number 1
        raise ParameterError(name, value, "a number", "sweep")
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
    _known_keys(row, CELL_KEYS, "cell", path)
    has_delta = row.get("delta") not in (None, "")
    has_epsilon = row.get("epsilon") not in (None, "")
    if has_delta == has_epsilon:
        raise ParameterError("cell", row, "exactly one of delta or epsilon per cell", f"sweep {path.name}")
    quantity = "delta" if has_delta else "epsilon"
    return Cell(_text(row["dist"], "dist"), _text(row["base"], "base"), quantity, _number(row[quantity], quantity),
                _text(row.get("method") or "best", "method"))


#: one cell at a time in a process: symsel is not thread-safe (mpmath's precision is one global setting, and two
#: threads changing it corrupt each other's evaluations), and a Dask worker may run tasks in several threads.
_CELL_LOCK = threading.Lock()


def run_cell(cell: Cell) -> dict[str, Any]:
    """One cell's record (``COLUMNS``); an invalid input is recorded as its one-line error. Cells run one at a time
    in a process (:data:`_CELL_LOCK`), even on a Dask worker with several threads."""
    with _CELL_LOCK:
        return _run_cell(cell)


def _run_cell(cell: Cell) -> dict[str, Any]:
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


# --------------------------------------------------------------------------- reading a results file


@dataclass(frozen=True)
class Results:
    """The valid rows of a results CSV; ``end``: the byte offset where the last of them (or the header) ends, 0 when
    the file has no header yet; ``dropped``: which torn or invalid last row was left out, and why (else ``None``)."""

    rows: list[dict[str, str]]
    end: int
    dropped: str | None = None

    @property
    def keys(self) -> set[tuple[str, ...]]:
        """The cells these rows hold (as ``Cell.key``)."""
        return {_key(row) for row in self.rows}


@dataclass(frozen=True)
class _Record:
    """One CSV record of a file: the number of its first line, the byte offset just after it, its fields, and
    whether it ends with a line break (a record written whole always does)."""

    line: int
    end: int
    fields: list[str]
    complete: bool


def read_results(out: str | Path, keys: Collection[tuple[str, ...]] | None = None) -> Results:
    """The rows of a sweep's results CSV, each checked: whole, every column, numbers that parse and (given ``keys``)
    a cell of the grid. A missing or empty file has none. A torn or invalid last row is left out
    (``Results.dropped``); a file that is not a sweep's results, an invalid row before the last, or a whole row of a
    cell outside ``keys`` (anywhere: it cannot be computed again, so it is never dropped) is refused
    (:class:`ParameterError` naming ``--out``)."""
    out = Path(out)
    data = _read_bytes(out)
    if b"\n" not in data and _csv_line(COLUMNS).encode().startswith(data):  # empty, or its header cut off
        return Results([], 0, "line 1 (the header, cut off before its end)" if data else None)
    records = list(_csv_records(data))
    header = records[0]
    if header.fields != COLUMNS or not header.complete:
        raise _refuse(out, f"its first line is {_shown(header.fields)}")
    rows: list[dict[str, str]] = []
    end = header.end
    for record in records[1:]:
        problem = _problem(record)
        if problem is not None:
            if record is not records[-1]:
                raise _refuse(out, f"line {record.line} is invalid ({problem}) and not the last row: repair or move "
                                   "the file")
            return Results(rows, end, f"line {record.line} ({problem})")
        row = dict(zip(COLUMNS, record.fields, strict=True))
        if keys is not None and _key(row) not in keys:
            raise _refuse(out, f"line {record.line} holds a cell not in this grid ({_shown(list(_key(row)))}): use "
                               "the grid that wrote it, or another --out")
        rows.append(row)
        end = record.end
    return Results(rows, end)


def _read_bytes(out: Path) -> bytes:
    """The bytes of ``out`` (none if it does not exist); a folder or an unreadable file is refused."""
    if out.is_dir():
        raise _refuse(out, "it is a folder")
    try:
        return out.read_bytes()
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise _refuse(out, f"it cannot be read ({exc.strerror})") from None


def _csv_records(data: bytes) -> Iterator[_Record]:
    """The CSV records of ``data`` with where each ends; bytes that are not UTF-8 become surrogates, which
    :func:`_problem` refuses."""
    consumed, lines = 0, 0
    last = ""

    def feed() -> Iterator[str]:
        nonlocal consumed, lines, last
        for line in io.StringIO(data.decode("utf-8", "surrogateescape"), newline=""):
            consumed += len(line.encode("utf-8", "surrogateescape"))
            lines += 1
            last = line
            yield line

    first = 1
    for fields in csv.reader(feed()):  # the reader takes exactly the lines of one record before yielding it
        yield _Record(first, consumed, fields, last.endswith("\n"))
        first = lines + 1


def _key(row: dict[str, str]) -> tuple[str, ...]:
    """The cell a row holds (as ``Cell.key``)."""
    return tuple(row[name] for name in KEY_COLUMNS)


def _problem(record: _Record) -> str | None:
    """Why a record is not a valid row of results (``None``: it is one)."""
    if not record.complete:
        return "cut off before its end"
    if len(record.fields) != len(COLUMNS):
        return f"{len(record.fields)} columns, not {len(COLUMNS)}"
    if not _is_text(record.fields):
        return "bytes that are not UTF-8 text"
    row = dict(zip(COLUMNS, record.fields, strict=True))
    for name in (*KEY_COLUMNS, "seconds"):
        if not row[name]:
            return f"no {name}"
    for name in NUMBER_COLUMNS:
        if row[name] and not _is_number(row[name]):
            return f"{name} {_shown([row[name]])} is not a number"
    return _bad_value(row)


#: the numbers a sweep writes, by column: (lowest, highest, what the column may hold). ``value`` is the grid's own
#: number (any but NaN: a cell with an invalid value records its error); ``epsilon`` may be ``inf`` (a vacuous bound).
_RANGES = {"value": (-math.inf, math.inf, "a number"), "epsilon": (0.0, math.inf, "a number >= 0"),
           "delta": (0.0, 1.0, "a number in [0, 1]"), "mean_K": (0.0, math.inf, "a number >= 0"),
           "seconds": (0.0, math.inf, "a finite number >= 0")}


def _bad_value(row: dict[str, str]) -> str | None:
    """Why a row's numbers are not ones a sweep writes (``None``: they are): NaN anywhere, ε < 0, δ outside [0, 1], a
    negative or infinite time, a bound without ε or δ and no error saying why, or the cell's own δ (ε) not the one
    in its ``delta`` (``epsilon``) column."""
    for name, (lo, hi, allowed) in _RANGES.items():
        if row[name]:
            x = float(row[name])
            if math.isnan(x) or not lo <= x <= hi or (name == "seconds" and math.isinf(x)):
                return f"{name} {_shown([row[name]])} is not {allowed}"
    if not row["error"]:
        for name in ("epsilon", "delta"):
            if not row[name]:
                return f"no {name} and no error"
        quantity = row["quantity"]
        if quantity in ("delta", "epsilon") and float(row[quantity]) != float(row["value"]):
            return f"{quantity} {_shown([row[quantity]])} is not the cell's value {_shown([row['value']])}"
    return None


def _is_text(fields: list[str]) -> bool:
    try:
        "".join(fields).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _shown(fields: list[str]) -> str:
    """Fields as they may be printed in a one-line error: undecodable bytes and control characters as escapes, at
    most 60 characters."""
    text = "".join(_printable(char) for char in ",".join(fields))
    return "'" + (text if len(text) <= 60 else text[:57] + "...") + "'"


def _printable(char: str) -> str:
    if "\udc80" <= char <= "\udcff":  # an undecodable byte (surrogateescape)
        return f"\\x{ord(char) - 0xDC00:02x}"
    return char if char.isprintable() else repr(char)[1:-1]


def _refuse(out: Path, why: str) -> ParameterError:
    """The error refusing ``out``: what it may be, and why it is not."""
    return ParameterError("--out", str(out), f"{ALLOWED_OUT}; {why}", "sweep")


# --------------------------------------------------------------------------- writing a results file


class SweepInterrupted(KeyboardInterrupt):
    """A sweep stopped by SIGINT or SIGTERM between two rows: every row in its output is whole, and running the
    same sweep again resumes it."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _Stop:
    """While installed, SIGINT and SIGTERM raise :class:`SweepInterrupted`, except inside :meth:`deferred` (a row
    being written), where the signal waits for the block's end. A signal is also remembered, and raised again at
    the end of the next :meth:`deferred` block: the handler's exception is lost when it lands in code that swallows
    it (a ``weakref.finalize`` callback run by the garbage collector). Installed only in the main thread (the one
    where Python runs signal handlers), and never over a signal the process ignores."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.writing = False
        self.pending: int | None = None

    def _handle(self, signum: int, frame: Any) -> None:
        self.pending = signum
        if not self.writing:
            raise SweepInterrupted(signum)

    @contextlib.contextmanager
    def installed(self) -> Iterator[_Stop]:
        """The handlers in place for the block, the previous ones back after it (and a lost
        :class:`SweepInterrupted` not reported as an "Exception ignored" traceback)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {signum: signal.signal(signum, self._handle) for signum in self.SIGNALS
                    if signal.getsignal(signum) is not signal.SIG_IGN}
        hook = sys.unraisablehook
        sys.unraisablehook = lambda info: None if isinstance(info.exc_value, SweepInterrupted) else hook(info)
        try:
            yield self
        finally:
            sys.unraisablehook = hook
            for signum, handler in previous.items():
                signal.signal(signum, signal.SIG_DFL if handler is None else handler)

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """A block no signal interrupts: one that arrived inside it, or before it and was lost, is raised at its
        end."""
        self.writing = True
        try:
            yield
        finally:
            self.writing = False
        if self.pending is not None:
            raise SweepInterrupted(self.pending)


def _csv_line(values: list[Any]) -> str:
    """One CSV line, ``\\r\\n``-terminated (as :mod:`csv` writes)."""
    buffer = io.StringIO()
    csv.writer(buffer).writerow(values)
    return buffer.getvalue()


def _write_line(fd: int, values: list[Any], stop: _Stop) -> None:
    """Append one whole CSV line with one write (more only if the system takes part of it), then fsync; a signal
    arriving meanwhile waits for the line's end."""
    data = memoryview(_csv_line(values).encode("utf-8"))
    with stop.deferred():
        while data:
            data = data[os.write(fd, data):]
        os.fsync(fd)


@contextlib.contextmanager
def _locked(out: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``<out>.lock`` (``fcntl.flock``, without waiting), removed on release; a second
    sweep on the same output is refused. A lock file that a killed sweep left behind holds no lock."""
    path = out.with_name(out.name + ".lock")
    # the lock file is symsel's, empty, and removed at the end: anything else of that name is never opened
    kind = path_kind(path)
    if kind not in (None, "file") or (kind == "file" and path.stat().st_size > 0):
        raise _refuse(out, f"{path} is a {kind if kind != 'file' else 'file symsel did not write'}, not its lock "
                           "file (move it, or choose another --out)")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd = _lock(path)
    except OSError as exc:
        raise _refuse(out, f"its lock file {path} cannot be created ({exc.strerror})") from None
    if fd is None:
        raise ParameterError("--out", str(out), f"an output no other sweep is writing; another symsel sweep holds "
                             f"{path} (wait for it to end, or choose another --out)", "sweep")
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        os.close(fd)


def _lock(path: Path) -> int | None:
    """A descriptor of ``path`` holding its exclusive lock, or ``None`` if another process holds it. A lock taken on
    a file that its holder removed meanwhile (at its release) is retaken on the file now at ``path``."""
    for _ in range(100):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            with contextlib.suppress(FileNotFoundError):
                if os.path.samestat(os.stat(path), os.fstat(fd)):
                    return fd
        except BlockingIOError:
            pass
        os.close(fd)
    return None


@contextlib.contextmanager
def _appending(out: Path, end: int, stop: _Stop) -> Iterator[int]:
    """A descriptor appending to ``out``, cut back to ``end`` bytes (its last valid row) and given the header if it
    has none."""
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    except OSError as exc:
        raise _refuse(out, f"it cannot be written ({exc.strerror})") from None
    try:
        if os.fstat(fd).st_size > end:
            os.ftruncate(fd, end)
            os.fsync(fd)
        if end == 0:
            _write_line(fd, COLUMNS, stop)
        yield fd
    finally:
        os.close(fd)


#: how long a Dask scheduler has to answer the connection (a network wait, not a computing budget: the cells' results
#: never depend on it).
CONNECT_SECONDS = 10


@contextlib.contextmanager
def _cluster(address: str | None) -> Iterator[None]:
    """Connected to the Dask scheduler at ``address``, joblib's dask backend on (nothing to do for local processes);
    an address that does not answer is refused here, before any file is written."""
    if address is None:
        yield
        return
    import joblib

    client_class = _require_dask(address)
    try:
        client = client_class(address, timeout=CONNECT_SECONDS)
    except MemoryError:  # a server that is not a Dask scheduler: its first bytes read as a huge message length
        raise ParameterError("--dask", address, "the address of a running Dask scheduler, e.g. tcp://host:8786 (the "
                             "server there does not speak Dask's protocol)", "sweep") from None
    except Exception as exc:  # whatever the client raises (OSError, TimeoutError, ValueError, a protocol error)
        raise ParameterError("--dask", address, "the address of a running Dask scheduler, e.g. tcp://host:8786 "
                             f"({type(exc).__name__}: {' '.join(str(exc).split())[:120]})", "sweep") from None
    try:
        with joblib.parallel_backend("dask"):
            yield
    finally:
        client.close()


def run_sweep(cells: list[Cell], out: str | Path, jobs: int = -1, dask_address: str | None = None,
              progress: bool = False, notify: Callable[[str], None] | None = None,
              keep_other_cells: bool = False) -> dict[str, Any]:
    """Run the cells not yet in ``out`` (CSV, appended to), in parallel; returns counts of what happened.

    The rows already in ``out`` are checked first (:func:`read_results`): a torn or invalid last row is cut off
    (``notify`` is told which) and its cell run again; a whole row of a cell not in ``cells`` refuses the file,
    unless ``keep_other_cells`` (a file that several grids share, such as a figure's cache). While it runs, the
    sweep holds ``<out>.lock``, and SIGINT or SIGTERM raise :class:`SweepInterrupted` between two rows.

    ``out`` must be a new file or a results CSV (:func:`symsel.outputs.output_file`); ``jobs`` is ``-1`` (every core)
    or 1 to :data:`MAX_JOBS` local processes (at most one per cell to run and per core; ``-1`` with ``dask_address``,
    whose cluster decides). Arguments of the wrong type or range raise :class:`ParameterError`."""
    cells = _checked_cells(cells)
    if dask_address is not None and (not isinstance(dask_address, str) or not dask_address.strip()):
        raise ParameterError("--dask", dask_address, "the address of a Dask scheduler, e.g. tcp://host:8786", "sweep")
    jobs = check_jobs(jobs, dask_address)
    if dask_address is not None:
        _require_dask(dask_address)
    for name, flag in (("progress", progress), ("keep_other_cells", keep_other_cells)):
        if not isinstance(flag, bool):
            raise ParameterError(name, flag, "True or False", "sweep")
    if notify is not None and not callable(notify):
        raise ParameterError("notify", notify, "None or a function taking one message", "sweep")
    out = output_file(out, "--out", "sweep", ALLOWED_OUT)
    with _Stop().installed() as stop, _locked(out):
        found = read_results(out, None if keep_other_cells else {cell.key for cell in cells})
        if found.dropped is not None and notify is not None:
            notify(f"{out}: dropped {found.dropped}, left by an interrupted or damaged write; resuming from the "
                   "last whole row")
        done = found.keys
        todo = list({cell.key: cell for cell in cells if cell.key not in done}.values())
        summary: dict[str, Any] = {"out": str(out), "cells": len(cells), "skipped": len(cells) - len(todo), "ran": 0,
                                   "errors": 0}
        if todo or found.dropped is not None:
            workers = None if dask_address else min(jobs if jobs > 0 else MAX_JOBS, len(todo) or 1, _cores())
            with (_cluster(dask_address if todo else None), _appending(out, found.end, stop) as fd,
                  contextlib.closing(_records(todo, workers, progress)) as records):
                for record in records:
                    _write_line(fd, ["" if record.get(k) is None else record.get(k) for k in COLUMNS], stop)
                    summary["ran"] += 1
                    summary["errors"] += bool(record.get("error"))
    return summary


def check_jobs(jobs: Any, dask_address: str | None = None) -> int:
    """``jobs`` checked: ``-1`` (every core) or an integer from 1 to :data:`MAX_JOBS` (``-1`` only, with a Dask
    cluster: its workers run the cells)."""
    if isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral) or not (jobs == -1
                                                                            or 1 <= int(jobs) <= MAX_JOBS):
        raise ParameterError("--jobs", jobs, f"-1 (every core) or an integer from 1 to {MAX_JOBS} local processes",
                             "sweep")
    jobs = int(jobs)
    if dask_address is not None and jobs != -1:
        raise ParameterError("--jobs", jobs, "no --jobs with --dask (the Dask cluster's workers run the cells)",
                             "sweep")
    if jobs != 1 and dask_address is None:  # joblib's process pool (loky) reads it, and fails on anything but a number
        validate.environment_integer("LOKY_MAX_CPU_COUNT", "sweep")
    return jobs


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _checked_cells(cells: Any) -> list[Cell]:
    """``cells`` as a list of :class:`Cell` (any iterable of them), else a :class:`ParameterError`."""
    if isinstance(cells, str | bytes | dict) or not isinstance(cells, Collection):
        raise ParameterError("cells", type(cells).__name__, "a list of symsel.apps.sweep.Cell (see load_grid)", "sweep")
    cells = list(cells)
    for cell in cells:
        if not isinstance(cell, Cell):
            raise ParameterError("cells", f"an element {cell!r}"[:120], "a list of symsel.apps.sweep.Cell (see "
                                 "load_grid)", "sweep")
    if len(cells) > MAX_CELLS:
        raise ParameterError("cells", f"{len(cells)} cells", f"at most {MAX_CELLS} cells", "sweep")
    return cells


def _records(cells: list[Cell], n_jobs: int | None, progress: bool) -> Generator[dict[str, Any], None, None]:
    """The cells' records as they finish (joblib; ``n_jobs=None``: the backend's own, e.g. Dask's)."""
    if not cells:
        return
    import joblib

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(cells), unit="cell", file=None)
    tasks = (joblib.delayed(run_cell)(cell) for cell in cells)
    outputs = joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered", initializer=_ignore_ctrl_c)(tasks)
    try:
        yield from _tick(outputs, bar)
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # joblib's note on the cells it cancels: the interruption says it all
            outputs.close()


def _ignore_ctrl_c() -> None:
    """Run in each local worker process as it starts: Ctrl-C, which a terminal sends to every process of the group,
    is the main process's to handle (it stops the workers); a worker would only print a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def write_parquet(results: str | Path, target: str | Path) -> dict[str, Any]:
    """Copy a sweep's results CSV to a Parquet file (typed columns: text, and float64 with nulls for the numbers),
    for dataframes and query engines; only valid rows are copied (:func:`read_results`), and the file appears whole
    or not at all. Needs pyarrow (``pip install 'symsel[parquet]'``)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ParameterError("--parquet", str(target), "an installed pyarrow (pip install 'symsel[parquet]') to write "
                             "Parquet", "sweep") from None
    target = output_file(target, "--parquet", "sweep", ALLOWED_PARQUET, ours=is_sweep_parquet)
    results = output_file(results, "results", "sweep", ALLOWED_OUT)
    if target.exists() and results.exists() and os.path.samefile(target, results):
        raise ParameterError("--parquet", str(target), f"{ALLOWED_PARQUET}; it is the results CSV itself", "sweep")
    rows = read_results(results).rows

    def column(name: str) -> Any:
        values = [row.get(name) or None for row in rows]
        if name in TEXT_COLUMNS:
            return pa.array(values, type=pa.string())
        return pa.array([None if v is None else float(v) for v in values], type=pa.float64())

    table = pa.table({name: column(name) for name in COLUMNS})
    partial: Path | None = None
    try:  # a new file of its own beside the target (never a name someone else holds), then renamed over it
        name = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.partial")
        os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        partial = name
        pq.write_table(table, partial)
        os.replace(partial, target)
    except OSError as exc:
        if partial is not None:
            with contextlib.suppress(OSError):
                os.unlink(partial)
        raise ParameterError("--parquet", str(target), f"a file symsel can write ({exc})", "sweep") from None
    return {"parquet": str(target), "rows": table.num_rows}


def is_sweep_parquet(path: Path) -> bool:
    """Whether ``path`` is a Parquet file with the columns :func:`write_parquet` writes."""
    try:
        with path.open("rb") as handle:
            if handle.read(4) != b"PAR1":
                return False
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names) == COLUMNS
    except Exception:  # unreadable, or not Parquet after all: not ours
        return False


def _require_dask(address: str) -> Any:
    """``dask.distributed.Client``, or a one-line error naming the missing package."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise ParameterError("--dask", address, "an installed dask.distributed (pip install 'dask[distributed]') to "
                             "use a Dask cluster", "sweep") from None
    return Client


def _tick(records: Iterator[dict[str, Any]], bar: Any) -> Iterator[dict[str, Any]]:
    for record in records:
        if bar is not None:
            bar.update(1)
        yield record
    if bar is not None:
        bar.close()
