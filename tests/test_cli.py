"""The command line: JSON on stdout, one-line errors with a non-zero exit."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from click.testing import CliRunner

from symsel.cli import main


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_dist_json_tnb_mean_1000():
    result = run("dist", "tnb(eta=1, gamma=0.001)", "--json")
    assert result.exit_code == 0, result.output
    facts = json.loads(result.output)
    assert facts["mean"] == pytest.approx(1000, rel=1e-12)
    for key in ("mean", "variance", "p0", "expected_quantile", "pgf", "dpgf"):
        assert key in facts
    # Geometric with gamma = 1e-3: variance (1 - gamma) / gamma^2.
    assert facts["variance"] == pytest.approx(0.999 / 1e-6, rel=1e-12)


def test_dist_json_user_pgf_poisson():
    result = run("dist", "pgf(expr='exp(mu*(z-1))', mu=10)", "--json", "--candidates", "10")
    facts = json.loads(result.output)
    assert facts["mean"] == pytest.approx(10, rel=1e-14)
    assert facts["p0"] == pytest.approx(math.exp(-10), rel=1e-14)
    assert facts["success_probability"] == pytest.approx(1 - math.exp(-1), rel=1e-12)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["dist", "tnb(eta=-2, gamma=0.5)"], "parameter eta=-2"),
        (["dist", "tnbb(eta=1)"], "unknown name 'tnbb'"),
        (["dist", "poisson(mean=1"], "syntax error"),
        (["dist", "--candidates", "0.5", "poisson(mean=1)"], "parameter candidates=0.5"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(args, fragment):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("symsel: error:")
    assert fragment in lines[0]
    assert "Traceback" not in result.output


def test_report_json_lists_the_defaults():
    result = run("report", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    specs = [row["spec"] for row in report["distributions"]]
    assert any(s.startswith("poisson") for s in specs) and any(s.startswith("geometric") for s in specs)


def test_console_entry_point_runs_as_a_module():
    proc = subprocess.run([sys.executable, "-m", "symsel", "dist", "poisson(mean=2)", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["mean"] == pytest.approx(2)
    bad = subprocess.run([sys.executable, "-m", "symsel", "dist", "poisson(mean=-2)"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "parameter mean=-2" in bad.stderr
