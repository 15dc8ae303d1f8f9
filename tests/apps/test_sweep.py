"""`symsel sweep`: a 100-cell grid runs on 2 processes, every cell's bound equals the direct computation, a
re-run skips what is done, and a sweep killed midway resumes without losing or repeating a cell. Its output loses
nothing: rows written whole and fsync'ed, a torn last row dropped and computed again, a damaged or foreign file
refused untouched, one sweep at a time on a file, and a bad Dask address refused before the file exists
(interruptions by real signals: test_sweep_interrupt.py)."""

from __future__ import annotations

import csv
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

import symsel
from symsel import sweep
from symsel.apps.sweep import load_grid, run_sweep, write_parquet
from symsel.cli import main
from symsel.errors import ParameterError

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
    while process.poll() is None and (not out.exists() or len(out.read_text().splitlines()) < 6):
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


def test_a_bad_cell_records_its_error_and_bad_grids_are_refused(tmp_path: Path, monkeypatch) -> None:
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
    from symsel.apps import sweep

    monkeypatch.setattr(sweep, "CONNECT_SECONDS", 0.5)  # nothing listens there: the same error, 9.5 s sooner
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


# --------------------------------------------------------------------------- an output that loses nothing

SMALL = {"laws": ["geometric(mean=10)", "geometric(mean=30)"], "bases": ["gaussian(sigma=4)"], "deltas": [1e-6],
         "methods": ["paper", "fdp"]}


def values(results: Path | bytes) -> set[tuple]:
    """A results file's rows (or its bytes') as a set, numbers parsed, without the timings (which differ from run
    to run)."""
    text = results.decode() if isinstance(results, bytes) else results.read_text()
    numbers = {"value", "epsilon", "delta", "mean_K"}
    return {tuple((float(r[k]) if r[k] else None) if k in numbers else r[k] for k in sweep.COLUMNS if k != "seconds")
            for r in csv.DictReader(text.splitlines())}


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """A 4-cell grid and its results file, run whole."""
    folder = tmp_path_factory.mktemp("small")
    grid = folder / "grid.json"
    grid.write_text(json.dumps(SMALL))
    run_sweep(load_grid(grid), folder / "reference.csv", jobs=1)
    return grid, (folder / "reference.csv").read_bytes()


def sweep_into(grid: Path, out: Path, *extra: str):
    return CliRunner().invoke(main, ["sweep", str(grid), "--out", str(out), "--jobs", "1", "--json", *extra])


def test_each_row_is_one_write_of_a_whole_line_then_fsync(tmp_path: Path, small: tuple[Path, bytes],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    grid, reference = small
    out = tmp_path / "out.csv"
    events: list[tuple[str, bytes]] = []
    write, fsync = os.write, os.fsync

    def ours(fd: int) -> bool:
        return out.exists() and os.path.samestat(os.fstat(fd), os.stat(out))

    def recording_write(fd: int, data: bytes) -> int:
        if ours(fd):
            events.append(("write", bytes(data)))
        return write(fd, data)

    def recording_fsync(fd: int) -> None:
        if ours(fd):
            events.append(("fsync", b""))
        fsync(fd)

    monkeypatch.setattr(os, "write", recording_write)
    monkeypatch.setattr(os, "fsync", recording_fsync)
    run_sweep(load_grid(grid), out, jobs=1)
    assert [kind for kind, _ in events] == ["write", "fsync"] * 5  # the header and 4 rows
    lines = [data for kind, data in events if kind == "write"]
    assert all(line.endswith(b"\r\n") and line.count(b"\n") == 1 for line in lines)
    assert b"".join(lines) == out.read_bytes() and values(out) == values(reference)


def cut_in_second_line(data: bytes) -> bytes:
    """The brief's case: a sweep stopped while writing its first row."""
    return data[:data.index(b"\n") + 40]


def cut_in_last_line(data: bytes) -> bytes:
    return data[:len(data) - 30]


def bad_number_in_last_line(data: bytes) -> bytes:
    head, last = data[:-1].rsplit(b"\n", 1)
    fields = last.split(b",")
    fields[5] = b"1.88x"
    return head + b"\n" + b",".join(fields) + b"\n"


def zeros_after_last_line(data: bytes) -> bytes:
    """A crash that extended the file without its data (a block of NUL bytes)."""
    return data + b"\0" * 100


def header_cut_off(data: bytes) -> bytes:
    return data[:20]


def edited_row(data: bytes, line: int, **values: str) -> bytes:
    """``data`` with the fields of row ``line`` (2: the first row) replaced by hand."""
    lines = data.split(b"\r\n")
    fields = next(csv.reader([lines[line - 1].decode()]))
    for name, value in values.items():
        fields[sweep.COLUMNS.index(name)] = value
    lines[line - 1] = ",".join(fields).encode()
    return b"\r\n".join(lines)


def nan_epsilon_negative_delta_in_last_line(data: bytes) -> bytes:
    """The user's case: a last row edited by hand to epsilon=nan, delta=-1e-6."""
    return edited_row(data, 5, epsilon="nan", delta="-1e-6")


def delta_above_one_in_last_line(data: bytes) -> bytes:
    return edited_row(data, 5, delta="1.5", value="1.5")


def negative_epsilon_in_last_line(data: bytes) -> bytes:
    return edited_row(data, 5, epsilon="-0.5")


def nan_seconds_in_last_line(data: bytes) -> bytes:
    return edited_row(data, 5, seconds="nan")


def no_bound_and_no_error_in_last_line(data: bytes) -> bytes:
    return edited_row(data, 5, epsilon="")


def another_delta_than_the_cell_s_in_last_line(data: bytes) -> bytes:
    return edited_row(data, 5, delta="1e-3")


@pytest.mark.parametrize(("damage", "good_rows", "line"), [
    (cut_in_second_line, 0, 2), (cut_in_last_line, 3, 5), (bad_number_in_last_line, 3, 5),
    (zeros_after_last_line, 4, 6), (header_cut_off, 0, 1), (nan_epsilon_negative_delta_in_last_line, 3, 5),
    (delta_above_one_in_last_line, 3, 5), (negative_epsilon_in_last_line, 3, 5), (nan_seconds_in_last_line, 3, 5),
    (no_bound_and_no_error_in_last_line, 3, 5), (another_delta_than_the_cell_s_in_last_line, 3, 5)])
def test_a_torn_last_row_is_dropped_said_once_and_computed_again(
        tmp_path: Path, small: tuple[Path, bytes], damage: Callable[[bytes], bytes], good_rows: int,
        line: int) -> None:
    grid, reference = small
    out = tmp_path / "out.csv"
    out.write_bytes(damage(reference))
    result = sweep_into(grid, out)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"out": str(out), "cells": 4, "skipped": good_rows, "ran": 4 - good_rows,
                                         "errors": 0}
    assert result.stderr.count("\n") == 1 and f"dropped line {line} " in result.stderr
    assert out.read_bytes().endswith(b"\r\n") and len(rows(out)) == 4
    assert values(out) == values(reference)
    again = sweep_into(grid, out)  # now whole: nothing to say, nothing to run
    assert again.stderr == "" and json.loads(again.stdout)["skipped"] == 4


def few_columns_in_second_line(data: bytes) -> bytes:
    return data.replace(b",paper,", b",pa", 1)


def bad_number_in_second_line(data: bytes) -> bytes:
    return data.replace(b",1e-06,paper,1.", b",1e-06,paper,x", 1)


def undecodable_second_line(data: bytes) -> bytes:
    return data.replace(b"geometric(mean=10)", b"geometric(mean=\xff10)", 1)


def blank_second_line(data: bytes) -> bytes:
    first = data.index(b"\n") + 1
    return data[:first] + b"\r\n" + data[first:]


def row_of_another_grid(data: bytes) -> bytes:
    return data + data[data.index(b"\n") + 1:].replace(b"geometric(mean=10)", b"geometric(mean=40)").split(b"\n")[0] \
        + b"\n"


def foreign_file(data: bytes) -> bytes:
    return b"a,b,c\n1,2,3\n"


def foreign_header_only(data: bytes) -> bytes:
    return b"a,b,c\n"


def undecodable_file(data: bytes) -> bytes:
    return b"\xff\xfe\x00\x01binary\n\x00"


def nan_epsilon_negative_delta_in_second_line(data: bytes) -> bytes:
    return edited_row(data, 2, epsilon="nan", delta="-1e-6")


def negative_mean_in_second_line(data: bytes) -> bytes:
    return edited_row(data, 2, mean_K="-1")


@pytest.mark.parametrize("damage", [few_columns_in_second_line, bad_number_in_second_line, undecodable_second_line,
                                    blank_second_line, row_of_another_grid, foreign_file, foreign_header_only,
                                    undecodable_file, nan_epsilon_negative_delta_in_second_line,
                                    negative_mean_in_second_line])
def test_a_damaged_or_foreign_output_is_refused_untouched(tmp_path: Path, small: tuple[Path, bytes],
                                                          damage: Callable[[bytes], bytes]) -> None:
    grid, reference = small
    out = tmp_path / "out.csv"
    out.write_bytes(damage(reference))
    before = out.read_bytes()
    result = sweep_into(grid, out)
    assert result.exit_code == 2 and '"ran"' not in result.stdout
    assert result.stderr.startswith("symsel: error: sweep: parameter --out=") and result.stderr.count("\n") == 1
    assert str(out) in result.stderr and "allowed: a new file, or a CSV that symsel sweep wrote" in result.stderr
    assert out.read_bytes() == before and sorted(tmp_path.iterdir()) == [out]  # untouched, no lock file left


def test_a_folder_as_output_is_refused(tmp_path: Path, small: tuple[Path, bytes]) -> None:
    folder = tmp_path / "out.csv"
    folder.mkdir()
    result = sweep_into(small[0], folder)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "--out=" in result.stderr
    assert "folder" in result.stderr and list(folder.iterdir()) == [] and sorted(tmp_path.iterdir()) == [folder]


def test_one_sweep_at_a_time_writes_an_output(tmp_path: Path, small: tuple[Path, bytes],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    grid, _ = small
    out = tmp_path / "out.csv"
    lock = tmp_path / "out.csv.lock"
    with lock.open("w") as held:  # another sweep's lock
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        result = sweep_into(grid, out)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "--out=" in result.stderr and "another symsel sweep holds" in result.stderr and not out.exists()
    held_while_running: list[bool] = []
    cell_runner = sweep.run_cell

    def probing_run_cell(cell: sweep.Cell) -> dict:
        with lock.open("a") as probe:
            try:
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                held_while_running.append(True)
            else:
                held_while_running.append(False)
        return cell_runner(cell)

    monkeypatch.setattr(sweep, "run_cell", probing_run_cell)
    assert run_sweep(load_grid(grid), out, jobs=1)["ran"] == 4  # the stale lock file holds no lock
    assert held_while_running == [True] * 4 and not lock.exists()  # held throughout, released and removed


def test_a_bad_dask_address_fails_before_the_output_exists(tmp_path: Path, small: tuple[Path, bytes],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in dask.distributed whose Client cannot reach the scheduler, as the real one raises."""
    tried: list[str] = []

    def client(address: str, timeout: float) -> None:
        tried.append(address)
        assert timeout == 10  # sweep.CONNECT_SECONDS: a dead scheduler is given up on after 10 s, not dask's 30
        raise OSError(f"Timed out trying to connect to {address} after {timeout} s")

    monkeypatch.setitem(sys.modules, "dask", types.ModuleType("dask"))
    monkeypatch.setitem(sys.modules, "dask.distributed", types.SimpleNamespace(Client=client))
    out = tmp_path / "sub" / "out.csv"
    result = CliRunner().invoke(main, ["sweep", str(small[0]), "--out", str(out), "--dask", "tcp://127.0.0.1:1"])
    assert tried == ["tcp://127.0.0.1:1"]
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "dask='tcp://127.0.0.1:1'" in result.stderr
    assert not out.exists() and not out.with_name("out.csv.lock").exists()


def test_parquet_holds_only_whole_rows(tmp_path: Path, small: tuple[Path, bytes]) -> None:
    import pyarrow.parquet as pq

    _, reference = small
    results, target = tmp_path / "out.csv", tmp_path / "out.parquet"
    results.write_bytes(cut_in_last_line(reference))
    assert write_parquet(results, target) == {"parquet": str(target), "rows": 3}
    whole = [r for r in csv.DictReader(reference.decode().splitlines())][:3]
    assert [r["epsilon"] for r in pq.read_table(target).to_pylist()] == [float(r["epsilon"]) for r in whole]
    assert sorted(tmp_path.iterdir()) == [results, target]  # no partial file left beside it


def test_a_file_shared_by_grids_keeps_the_other_cells_when_asked(tmp_path: Path, small: tuple[Path, bytes]) -> None:
    """A figure's cache: a smaller grid on a file of a larger one skips its cells and keeps the others' rows."""
    grid, reference = small
    out = tmp_path / "out.csv"
    out.write_bytes(reference)
    half = load_grid(grid)[::2]
    with pytest.raises(ParameterError, match="not in this grid"):
        run_sweep(half, out, jobs=1)
    assert run_sweep(half, out, jobs=1, keep_other_cells=True) == {"out": str(out), "cells": 2, "skipped": 2, "ran": 0,
                                                                   "errors": 0}
    assert out.read_bytes() == reference


def test_a_billion_cell_grid_is_refused_before_a_cell_is_built(tmp_path, monkeypatch) -> None:
    """Three YAML lines with an anchor name 1000 × 1000 × 1000 cells: refused from the product of the list sizes,
    with no cell constructed (counted), rather than built and then counted."""
    from symsel.apps import sweep

    built = []
    real = sweep.Cell
    monkeypatch.setattr(sweep, "Cell", lambda *args: built.append(args) or real(*args))
    values = ", ".join(f"'geometric(mean={i + 2})'" for i in range(1000))
    deltas = ", ".join(f"{1e-6 + i * 1e-9!r}" for i in range(1000))
    grid = tmp_path / "grid.yaml"
    grid.write_text(f"laws: &specs [{values}]\nbases: *specs\ndeltas: [{deltas}]\n")
    with pytest.raises(ParameterError, match=r"grid='1000000000 cells'.*at most 100000 cells"):
        sweep.load_grid(grid)
    assert built == []


@pytest.mark.parametrize(("name", "text", "fragment"), [
    ("typo.yaml", "laws: ['geometric(mean=3)']\nbases: ['gaussian(sigma=4)']\ndeltas: [1e-6]\nmethod: [paper]\n",
     "'method'"),  # a typo of methods: was ignored, every cell run with best
    ("bool.yaml", "laws: ['geometric(mean=3)']\nbases: ['gaussian(sigma=4)']\ndeltas: [true]\n", "delta=True"),
    ("two.csv", "dist,base,delta,dist\ngeometric(mean=3),gaussian(sigma=4),1e-6,poisson(mean=3)\n",
     "'dist' given twice"),  # the second column silently won
    ("extra.csv", "dist,base,delta,mehtod\ngeometric(mean=3),gaussian(sigma=4),1e-6,paper\n", "'mehtod'"),
    ("cell.yaml", "cells:\n- {dist: 'geometric(mean=3)', base: 'gaussian(sigma=4)', delta: 1e-6, mthod: paper}\n",
     "'mthod'"),
])
def test_a_grid_with_an_unknown_key_a_boolean_or_a_repeated_column_is_refused(tmp_path, name, text, fragment):
    grid = tmp_path / name
    grid.write_text(text)
    with pytest.raises(ParameterError, match=fragment):
        load_grid(grid)


def test_an_out_path_that_ends_with_a_separator_is_refused(tmp_path):
    from symsel.apps.sweep import Cell

    cell = Cell("geometric(mean=3)", "gaussian(sigma=4)", "delta", 1e-6, "paper")
    with pytest.raises(ParameterError, match="names a folder"):
        run_sweep([cell], str(tmp_path / "newdir") + "/", jobs=1)
    assert list(tmp_path.iterdir()) == []
