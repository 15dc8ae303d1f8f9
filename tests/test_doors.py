"""Sound at every door: every command writes only files it is asked to write (regular files it creates or wrote
before: a device, a FIFO, a folder where a file is expected, an empty path, a user's own file are refused untouched,
one line naming the option), and a bad option gets one clear error (``--jobs`` out of range, ``--dask`` to a server
that is not a scheduler, options ``verify --example`` would ignore, ``run_sweep`` arguments of the wrong type); one
method's failure (composition out of memory) never takes ``bound --method all`` down.

Devices are made with ``os.mknod`` in the test's own folder (as root; skipped otherwise), never the real ``/dev``
ones: a symsel that wrongly replaced one must only harm a copy."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import sys
import threading
import types
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import joblib
import pytest
from click.testing import CliRunner

from symsel.apps.sweep import Cell, load_grid, run_sweep, write_parquet
from symsel.cli import main
from symsel.errors import NotApplicableError, ParameterError
from symsel.outputs import REPORT_MARKER, output_folder

GRID = '{"laws": ["geometric(mean=10)"], "bases": ["gaussian(sigma=4)"], "deltas": [1e-6], "methods": ["paper"]}'


@pytest.fixture
def grid(tmp_path: Path) -> Path:
    path = tmp_path / "g.json"
    path.write_text(GRID)
    return path


def one_line_error(result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("symsel: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.output and "internal error" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def fifo(folder: Path) -> Path:
    path = folder / "pipe"
    os.mkfifo(path)
    return path


def device(folder: Path) -> Path:
    """A copy of /dev/null (a character device) in ``folder``."""
    path = folder / "null"
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device file needs root")
    return path


SPECIALS = {"fifo": fifo, "device": device}


def kind(path: Path) -> int:
    return stat.S_IFMT(os.lstat(path).st_mode)


# ----------------------------------------------------------------------------------------------- sweep outputs
@pytest.mark.parametrize("special", sorted(SPECIALS))
@pytest.mark.parametrize("option", ["--out", "--parquet"])
def test_sweep_refuses_a_device_or_fifo_output_untouched(tmp_path: Path, grid: Path, special: str,
                                                        option: str) -> None:
    target = SPECIALS[special](tmp_path)
    before = kind(target)
    args = ["--out", str(target)] if option == "--out" else ["--out", str(tmp_path / "o.csv"), "--parquet", str(target)]
    result = CliRunner().invoke(main, ["sweep", str(grid), "--jobs", "1", *args])
    one_line_error(result, f"{option}='{target}'", "FIFO" if special == "fifo" else "character device")
    assert kind(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["g.json", target.name])  # nothing written, no lock


def test_sweep_refuses_an_empty_out_and_writes_nothing_in_the_working_folder(
        tmp_path: Path, grid: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    one_line_error(CliRunner().invoke(main, ["sweep", str(grid), "--out", "", "--jobs", "1"]), "--out=''",
                   "empty path")
    one_line_error(CliRunner().invoke(main, ["sweep", str(grid), "--out", str(tmp_path / "o.csv"), "--parquet", ""]),
                   "--parquet=''")
    assert list(work.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["g.json", "work"]
    with pytest.raises(ParameterError, match="--out"):
        run_sweep(load_grid(grid), "", jobs=1)


def test_sweep_refuses_a_folder_as_parquet_and_parquet_on_its_own_csv(tmp_path: Path, grid: Path) -> None:
    folder = tmp_path / "p.parquet"
    folder.mkdir()
    out = tmp_path / "o.csv"
    one_line_error(CliRunner().invoke(main, ["sweep", str(grid), "--out", str(out), "--parquet", str(folder)]),
                   "--parquet=", "folder")
    one_line_error(CliRunner().invoke(main, ["sweep", str(grid), "--out", str(out), "--parquet", str(out)]),
                   "--parquet=", "results CSV")
    assert not out.exists() and list(folder.iterdir()) == []


def test_parquet_rewrites_its_own_file_but_never_a_user_s(tmp_path: Path, grid: Path) -> None:
    pytest.importorskip("pyarrow")
    out, target, mine = tmp_path / "o.csv", tmp_path / "o.parquet", tmp_path / "mine.parquet"
    for _ in range(2):  # the second run rewrites the Parquet file the first wrote
        result = CliRunner().invoke(main, ["sweep", str(grid), "--out", str(out), "--jobs", "1", "--parquet",
                                           str(target), "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["rows"] == 1
    mine.write_bytes(b"PAR1 my own data")
    result = CliRunner().invoke(main, ["sweep", str(grid), "--out", str(out), "--parquet", str(mine)])
    one_line_error(result, f"--parquet='{mine}'", "did not write")
    assert mine.read_bytes() == b"PAR1 my own data"
    with pytest.raises(ParameterError, match="--parquet"):
        write_parquet(out, mine)
    assert mine.read_bytes() == b"PAR1 my own data"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_a_user_file_where_the_lock_goes_is_refused_untouched(tmp_path: Path, grid: Path) -> None:
    out = tmp_path / "o.csv"
    lock = tmp_path / "o.csv.lock"
    lock.write_text("my notes\n")
    one_line_error(CliRunner().invoke(main, ["sweep", str(grid), "--out", str(out), "--jobs", "1"]), "--out=",
                   "o.csv.lock")
    assert lock.read_text() == "my notes\n" and not out.exists()


def test_run_sweep_refuses_a_fifo_before_reading_it(tmp_path: Path, grid: Path) -> None:
    """Reading a FIFO would wait for a writer forever: refused before it is opened."""
    target = fifo(tmp_path)
    with pytest.raises(ParameterError, match="FIFO"):
        run_sweep(load_grid(grid), target, jobs=1)


# ---------------------------------------------------------------------------------------------- report --out
@pytest.mark.parametrize("out", ["", "pipe", "taken"])
def test_report_refuses_an_empty_path_a_fifo_or_a_file(tmp_path: Path, out: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    fifo(tmp_path)
    (tmp_path / "taken").write_text("mine\n")
    result = CliRunner().invoke(main, ["report", "--quick", "--out", out, "--no-progress"])
    one_line_error(result, f"report: parameter --out='{out}'")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe", "taken"] and (tmp_path / "taken").read_text() == \
        "mine\n"


def test_report_never_overwrites_a_user_s_summary(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "summary.md").write_text("my own summary\n")
    result = CliRunner().invoke(main, ["report", "--quick", "--out", str(folder), "--no-progress"])
    one_line_error(result, "--out=", "its summary.md exists and symsel did not write it")
    assert (folder / "summary.md").read_text() == "my own summary\n" and sorted(folder.iterdir()) == [
        folder / "summary.md"]


def test_a_report_folder_is_marked_and_only_its_files_are_rewritten(tmp_path: Path) -> None:
    """output_folder, which write_report calls first: a new folder gets a marker listing the files; a second run
    may rewrite them; a file the marker does not list, or a FIFO in a listed file's place, is refused."""
    folder = tmp_path / "r"
    assert output_folder(folder, "--out", "report", ["summary.md", "a.png"]) == folder
    assert (folder / REPORT_MARKER).read_text().splitlines()[1:] == ["a.png", "summary.md"]
    (folder / "summary.md").write_text("# symsel report\n")
    (folder / "notes.txt").write_text("mine\n")  # a user's file beside them: allowed, never touched
    output_folder(folder, "--out", "report", ["summary.md", "a.png"])
    with pytest.raises(ParameterError, match=r"its notes\.txt exists and symsel did not write it"):
        output_folder(folder, "--out", "report", ["summary.md", "notes.txt"])
    os.mkfifo(folder / "a.png")
    with pytest.raises(ParameterError, match=r"its a\.png is a FIFO"):
        output_folder(folder, "--out", "report", ["summary.md", "a.png"])
    (folder / "a.png").unlink()
    (folder / "a.png").symlink_to(folder / "notes.txt")  # a listed name now leading to a user's file
    with pytest.raises(ParameterError, match=r"its a\.png is a symbolic link"):
        output_folder(folder, "--out", "report", ["summary.md", "a.png"])
    (folder / REPORT_MARKER).write_text("summary.md\n")  # not a marker symsel wrote
    with pytest.raises(ParameterError, match="not a marker symsel wrote"):
        output_folder(folder, "--out", "report", ["summary.md"])
    assert (folder / "notes.txt").read_text() == "mine\n"


def test_a_summary_that_starts_like_symsel_s_does_not_make_a_folder_symsel_s(tmp_path: Path) -> None:
    """Ownership is the marker's alone: a user's edited copy of a report (summary.md still starting with
    "# symsel report") and their bounds.csv beside it, with no marker, are refused and left as they are."""
    from symsel.report.main import report_files

    folder = tmp_path / "rep"
    folder.mkdir()
    (folder / "summary.md").write_text("# symsel report\n\nmy notes on it\n")
    (folder / "bounds.csv").write_text("mine\n")
    with pytest.raises(ParameterError, match=r"exists and symsel did not write it"):
        output_folder(folder, "--out", "report", report_files(True))
    assert sorted(p.name for p in folder.iterdir()) == ["bounds.csv", "summary.md"]
    assert (folder / "summary.md").read_text() == "# symsel report\n\nmy notes on it\n"


def test_a_marker_that_is_a_symbolic_link_is_refused_and_never_written_through(tmp_path: Path) -> None:
    folder = tmp_path / "rep"
    output_folder(folder, "--out", "report", ["summary.md"])
    real = folder / REPORT_MARKER
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text(real.read_text())  # a copy of a genuine marker, reached through a link
    real.unlink()
    real.symlink_to(elsewhere)
    before = elsewhere.read_text()
    with pytest.raises(ParameterError, match="is a symbolic link"):
        output_folder(folder, "--out", "report", ["summary.md"])
    assert elsewhere.read_text() == before and real.is_symlink()
    # written by a rename: a link put in the marker's place after the check is replaced, not written through
    from symsel.outputs import write_marker

    write_marker(real, ["summary.md", "a.png"])
    assert not real.is_symlink() and elsewhere.read_text() == before


@pytest.mark.parametrize("text", [
    "{head}\nsummary.md",  # no final newline
    "{head}\nsummary.md\nsummary.md\n",  # a name twice
    "{head}\nb.png\na.png\n",  # not sorted
    "{head}\n../x\n",  # not a plain name
    "{head}\n\n",  # an empty name
    "{head} \nsummary.md\n",  # another head
])
def test_a_marker_is_read_only_when_it_is_exactly_what_symsel_writes(tmp_path: Path, text: str) -> None:
    from symsel.outputs import _MARKER_HEAD

    folder = tmp_path / "rep"
    folder.mkdir()
    (folder / REPORT_MARKER).write_text(text.format(head=_MARKER_HEAD))
    with pytest.raises(ParameterError, match="not a marker symsel wrote"):
        output_folder(folder, "--out", "report", ["summary.md"])


def test_every_file_the_report_writes_is_planned() -> None:
    """write_report checks report_files() before it runs: each figure step's PNG, PDF and CSV, and the tables."""
    from symsel.report.main import REPORT_TABLES, TABLE_STEPS, report_files, report_steps

    for quick in (True, False):
        names = report_files(quick)
        assert len(names) == len(set(names)) == 3 * (len(report_steps(quick)) - len(TABLE_STEPS)) + len(REPORT_TABLES)
        assert {"summary.md", "bounds.csv", "candidates_vs_budget.png", "epsilon_vs_mean-cells.csv"} <= set(names)


# ----------------------------------------------------------------------------------------- --jobs and --dask
class RecordingParallel:
    """joblib.Parallel's stand-in: records n_jobs, runs the tasks here (no process is started)."""

    calls: ClassVar[list[int | None]] = []

    def __init__(self, n_jobs: int | None = None, **_: object) -> None:
        RecordingParallel.calls.append(n_jobs)

    def __call__(self, tasks: Iterator) -> Iterator:
        return (function(*args, **kwargs) for function, args, kwargs in tasks)


@pytest.fixture
def parallel(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    RecordingParallel.calls = []
    monkeypatch.setattr(joblib, "Parallel", RecordingParallel)
    return RecordingParallel.calls


@pytest.mark.parametrize("jobs", ["100000", "513", "0", "-2"])
def test_jobs_out_of_range_is_one_line_and_starts_nothing(tmp_path: Path, grid: Path, jobs: str,
                                                          parallel: list) -> None:
    out = tmp_path / "o.csv"
    result = CliRunner().invoke(main, ["sweep", str(grid), "--out", str(out), "--jobs", jobs])
    one_line_error(result, f"--jobs={jobs}", "512")
    assert parallel == [] and not out.exists()


def test_workers_are_capped_by_cells_and_cores(tmp_path: Path, grid: Path, parallel: list) -> None:
    assert run_sweep(load_grid(grid), tmp_path / "a.csv", jobs=512)["ran"] == 1
    assert run_sweep(load_grid(grid), tmp_path / "b.csv", jobs=-1)["ran"] == 1
    three = [Cell(f"geometric(mean={m})", "gaussian(sigma=4)", "delta", 1e-6, "paper") for m in (5, 10, 20)]
    run_sweep(three, tmp_path / "c.csv", jobs=-1)
    assert parallel == [1, 1, min(3, len(os.sched_getaffinity(0)))]


def test_jobs_may_be_any_integer_type(tmp_path: Path, grid: Path, parallel: list) -> None:
    import numpy as np

    assert run_sweep(load_grid(grid), tmp_path / "a.csv", jobs=np.int64(2))["ran"] == 1 and parallel == [1]


def test_jobs_with_dask_is_refused(tmp_path: Path, grid: Path) -> None:
    result = CliRunner().invoke(main, ["sweep", str(grid), "--out", str(tmp_path / "o.csv"), "--jobs", "2", "--dask",
                                       "tcp://127.0.0.1:1"])
    one_line_error(result, "--jobs=2", "--dask")


def test_a_server_that_is_not_a_scheduler_is_named_not_out_of_memory(tmp_path: Path, grid: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """dask's client reads a foreign server's first bytes as a huge frame length and raises MemoryError."""
    def client(address: str, timeout: float) -> None:
        raise MemoryError

    monkeypatch.setitem(sys.modules, "dask", types.ModuleType("dask"))
    monkeypatch.setitem(sys.modules, "dask.distributed", types.SimpleNamespace(Client=client))
    out = tmp_path / "o.csv"
    result = CliRunner().invoke(main, ["sweep", str(grid), "--out", str(out), "--dask", "tcp://127.0.0.1:9"])
    one_line_error(result, "--dask='tcp://127.0.0.1:9'", "Dask scheduler")
    assert "memory" not in result.stderr and not out.exists()


@contextlib.contextmanager
def http_server() -> Iterator[int]:
    """A local server answering every connection with HTTP, as a web server on a mistyped port would."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                connection, _ = server.accept()
                with connection:
                    connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 8)
                    stop.wait(2)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        server.close()


def test_a_real_client_on_a_web_server_port_gets_one_line(tmp_path: Path, grid: Path) -> None:
    pytest.importorskip("dask.distributed")
    out = tmp_path / "o.csv"
    with http_server() as port:
        result = CliRunner().invoke(main, ["sweep", str(grid), "--out", str(out), "--dask", f"tcp://127.0.0.1:{port}"])
    one_line_error(result, f"--dask='tcp://127.0.0.1:{port}'")
    assert "memory" not in result.stderr and not out.exists()


# ---------------------------------------------------------------------------------------- run_sweep's arguments
@pytest.mark.parametrize(("kwargs", "name"), [
    ({"cells": None}, "cells"), ({"cells": "geometric(mean=10)"}, "cells"), ({"cells": [1, 2]}, "cells"),
    ({"out": None}, "out"), ({"out": 3}, "out"), ({"out": b"o.csv"}, "out"),
    ({"jobs": "2"}, "jobs"), ({"jobs": 2.5}, "jobs"), ({"jobs": True}, "jobs"), ({"jobs": 0}, "jobs"),
    ({"dask_address": 5}, "dask"), ({"dask_address": ""}, "dask"),
    ({"progress": "yes"}, "progress"), ({"notify": 5}, "notify"), ({"keep_other_cells": None}, "keep_other_cells"),
])
def test_run_sweep_names_a_wrong_argument(tmp_path: Path, grid: Path, kwargs: dict, name: str) -> None:
    arguments = {"cells": load_grid(grid), "out": tmp_path / "o.csv", "jobs": 1, **kwargs}
    with pytest.raises(ParameterError, match=name) as error:
        run_sweep(**arguments)
    assert isinstance(error.value, ValueError)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json"]


@pytest.mark.parametrize("path", [None, 3, ""])
def test_load_grid_names_a_wrong_path(path: object) -> None:
    with pytest.raises(ParameterError, match="grid"):
        load_grid(path)


# ------------------------------------------------------------------------------------------- verify and audit
@pytest.mark.parametrize("extra", [("--delta", "0.5"), ("--dist", "point(k=2)"), ("--base", "gaussian(sigma=1)"),
                                   ("--budget", "50"), ("--seed", "0")])
def test_verify_refuses_an_option_its_example_would_ignore(extra: tuple[str, str]) -> None:
    result = CliRunner().invoke(main, ["verify", "--example", "xiang-example-1", *extra])
    one_line_error(result, f"verify: parameter {extra[0]}=", "--example")


def test_verify_list_and_audit_example_refuse_ignored_options() -> None:
    one_line_error(CliRunner().invoke(main, ["verify", "--list", "--delta", "0.5"]), "--delta=0.5", "--list")
    one_line_error(CliRunner().invoke(main, ["verify", "--list", "--example", "xiang-example-1"]), "--example=")
    result = CliRunner().invoke(main, ["audit", "--example", "xiang-example-1", "--dist", "point(k=2)", "--delta", "0",
                                       "--trials", "10"])
    one_line_error(result, "audit: parameter --dist='point(k=2)'", "--example")


# ------------------------------------------------------------------------------------- composition's PLD size
def test_composition_refuses_a_huge_pld_before_allocating_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """laplace(scale=1e-9): a privacy loss of 1e9 per run is 2e13 PLD points at the 1e-4 discretization."""
    from dp_accounting.pld import privacy_loss_distribution

    import symsel

    built: list[float] = []
    original = privacy_loss_distribution.from_laplace_mechanism

    def spy(*args: object, **kwargs: object) -> object:
        built.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(privacy_loss_distribution, "from_laplace_mechanism", spy)
    base = symsel.parse_profile("laplace(scale=1e-9)")
    for law in ("geometric(mean=30)", "point(k=2)"):
        with pytest.raises(NotApplicableError, match=r"method 'composition'.*2e\+07"):
            symsel.bound(symsel.parse_distribution(law), base, "composition")
    assert built == []
    # a base of moderate loss still composes through dp-accounting
    small = symsel.bound(symsel.parse_distribution("point(k=2)"), symsel.parse_profile("laplace(scale=1)"),
                         "composition")
    assert built == [1.0] and 2.0 >= small.epsilon(1e-6) > 1.0


def test_one_method_failing_leaves_the_rest_of_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    result = CliRunner().invoke(main, ["bound", "--dist", "geometric(mean=30)", "--base", "laplace(scale=1e-9)",
                                       "--delta", "1e-6", "--method", "all", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["method"]: row for row in json.loads(result.stdout)["results"]}
    assert rows["composition"]["epsilon"] is None and "2e+07" in rows["composition"]["reason"]
    assert rows["envelope"]["epsilon"] == pytest.approx(1e9, rel=1e-6) and rows["best"]["epsilon"] is not None
    # whatever else a method raises (here: out of memory) is its row's reason, not the table's end
    from symsel.bounds import api

    computed = api._computed

    def fails_for_paper(law: object, base: object, method: str, rtol: float | None = None) -> object:
        if method == "paper":
            raise MemoryError
        return computed(law, base, method, rtol)

    monkeypatch.setattr(api, "_computed", fails_for_paper)
    result = CliRunner().invoke(main, ["bound", "--dist", "geometric(mean=30)", "--base", "gaussian(sigma=4)",
                                       "--delta", "1e-6", "--method", "all", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["method"]: row for row in json.loads(result.stdout)["results"]}
    assert rows["paper"]["reason"] == "method 'paper': not enough memory for these parameters"
    assert rows["envelope"]["epsilon"] > 1.0
    bad = CliRunner().invoke(main, ["bound", "--dist", "geometric(mean=30)", "--base", "gaussian(sigma=4)",
                                    "--delta", "2", "--method", "all"])
    one_line_error(bad, "delta=2")



def test_an_output_file_that_ends_with_a_separator_is_refused(tmp_path: Path) -> None:
    from symsel.outputs import output_file

    with pytest.raises(ParameterError, match="names a folder"):
        output_file(str(tmp_path / "newdir") + os.sep, "--out", "sweep", "a new file")
