"""The quick report, run once for every test module of tests/report that reads it (fixture ``report``)."""

from __future__ import annotations

import fcntl
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from symsel.cli import main
from symsel.report import figures, parallel


@pytest.fixture(scope="session")
def report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    """The quick report, run once per test run: the xdist workers share it (the first to ask runs it, the others wait
    for its JSON), where each used to run its own. Returns the report's JSON and its folder."""
    root = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput"):  # an xdist worker: its base is one folder of this run's
        root = root.parent
    out, payload = root / "symsel-report-quick", root / "symsel-report-quick.json"
    with (root / "symsel-report-quick.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not payload.is_file():
            # in this process, one job after another: the pool (tests/report/test_parallel.py) would start two more
            # processes, each importing the whole stack again, beside the two xdist workers already on the two cores
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(parallel, "usable_cores", lambda: 1)
                patch.setattr(figures, "JOBS", 1)
                result = CliRunner().invoke(main, ["report", "--quick", "--out", str(out), "--no-progress", "--json"])
            assert result.exit_code == 0, result.output
            payload.write_text(result.stdout)
    return json.loads(payload.read_text()), out
