"""The hostile-input run's harness (benchmarks/hostile.py): a case that runs into its memory cap is counted as a
memory blow-up, a case well under it is not, and each case's own peak RSS is recorded."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _hostile():
    spec = importlib.util.spec_from_file_location("symsel_benchmarks_hostile", ROOT / "benchmarks" / "hostile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


HOSTILE = _hostile()
CAP_MIB = 256


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    root = tmp_path / "sandbox"
    root.mkdir()
    HOSTILE._make_sandbox(root)
    return root


def _run_case_from_a_fresh_process(code: str, sandbox: Path) -> dict:
    """``run_case`` called from a new, small Python process, as the hostile run calls it. A forked child's peak RSS
    starts at its parent's RSS at the fork (Linux carries it over the exec), and a test worker of the suite can be
    gigabytes large after other tests."""
    import json
    import subprocess

    driver = ("import importlib.util, json, sys\n"
              f"spec = importlib.util.spec_from_file_location('hostile', {str(ROOT / 'benchmarks' / 'hostile.py')!r})\n"
              "module = importlib.util.module_from_spec(spec); sys.modules['hostile'] = module\n"
              "spec.loader.exec_module(module)\n"
              "case = module.Case('cli:probe:python', ['-c', sys.argv[1]], invalid=False, program=(sys.executable,))\n"
              f"record = module.run_case(case, module.Path(sys.argv[2]), cpu=20, wall=60, memory_mib={CAP_MIB})\n"
              "print(json.dumps(record, default=str))\n")
    done = subprocess.run([sys.executable, "-c", driver, code, str(sandbox)], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_case_allocating_far_beyond_the_cap_is_a_memory_blowup(sandbox: Path):
    """1 GiB asked under a cap of 256 MiB: the allocation fails (MemoryError) and the case counts, not as a hang."""
    record = _run_case_from_a_fresh_process("data = b'x' * 2**30", sandbox)
    assert record["memory_blowup"] and not record["hang"]
    assert record["peak_rss_mib"] < CAP_MIB  # the cap held: nothing near 1 GiB was touched
    summary = HOSTILE.summarize([record])
    assert summary["total"]["memory_blowup"] == 1 and summary["by_group"]["cli:probe"]["memory_blowup"] == 1


def test_a_case_under_the_cap_is_not_a_blowup_and_its_own_peak_rss_is_recorded(sandbox: Path):
    """64 MiB written under a cap of 256 MiB: no blow-up, a peak RSS of the case's process (not of an earlier one)
    between 64 MiB and the cap."""
    record = _run_case_from_a_fresh_process("data = b'x' * (64 * 2**20); print(len(data))", sandbox)
    assert record["rc"] == 0 and not record["memory_blowup"] and not record["traceback"], record
    assert 64 <= record["peak_rss_mib"] < CAP_MIB, record
    small = _run_case_from_a_fresh_process("pass", sandbox)
    assert small["peak_rss_mib"] < 64, small  # its own, after a larger case


@pytest.mark.parametrize("out, err, rc, hang, peak, expected", [
    ("", "", 0, False, 3100.0, True),  # a peak RSS past the cap (memory written through a file or shared mapping)
    ("", "", -9, False, 100.0, True),  # SIGKILL before the CPU limit: the out-of-memory killer
    ("", "", -9, True, 100.0, False),  # SIGKILL at the CPU limit: a hang, counted as such
    ("", "symsel: error: not enough memory for these parameters (try fewer steps)", 2, False, 900.0, True),
    ('HOSTILE-RESULT {"outcome": "raised", "type": "MemoryError"}', "", 0, False, 900.0, True),
    ("", "numpy._core._exceptions._ArrayMemoryError: Unable to allocate 8.00 GiB", 1, False, 900.0, True),
    ("", "A new study created in memory with name: no-name", 0, False, 900.0, False),
    ("", "symsel: error: parameter delta=nan is out of range", 2, False, 900.0, False),
])
def test_what_counts_as_a_memory_blowup(out, err, rc, hang, peak, expected):
    assert HOSTILE.memory_blowup(out, err, rc, hang, peak, 3072) is expected


def test_records_of_a_run_without_a_cap_count_no_blowup_and_are_named():
    """``--merge`` with an earlier run that had no memory cap: its records are named as not measured."""
    now = {"name": "cli:a:1", "traceback": False, "hang": False, "accepted_invalid": False, "bad_output": False,
           "damaged": [], "memory_blowup": True}
    earlier = {**now, "name": "cli:a:2"}
    del earlier["memory_blowup"]
    summary = HOSTILE.summarize([earlier, now])
    assert summary["total"]["memory_blowup"] == 1 and summary["memory_not_measured"] == ["cli:a:2"]
