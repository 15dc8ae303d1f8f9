"""A question about an analytic base (Gaussian, Laplace, a finite pair) does not import dp-accounting or
scipy.stats: the two together cost about 0.6 s of a fresh process's 1.1 s (whole-process time matters). They
are imported by the code that needs them (a DP-SGD or PLD base, the accountant, the report). The checks run in a
fresh interpreter, since this test process has imported everything."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("dp_accounting", "scipy.stats")

CHILD = """
import json, sys
{body}
print(json.dumps(sorted(name for name in {heavy!r} if name in sys.modules)))
"""


def _heavy_modules_after(body: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", CHILD.format(body=body, heavy=HEAVY)], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


#: (law, base, method) asked in one fresh child (each child costs about a second of start-up)
ANALYTIC = [("geometric(mean=30)", "gaussian(sigma=4)", "best"), ("point(k=10)", "gaussian(sigma=4)", "best"),
            ("binomial(n=40, p=0.5)", "laplace(scale=1)", "envelope")]


def test_bounds_on_analytic_bases_from_python_and_the_command_line_do_not_import_dp_accounting():
    body = "import symsel\n"
    for law, base, method in ANALYTIC:
        body += (f"b = symsel.bound(symsel.parse_distribution({law!r}), symsel.parse_profile({base!r}), {method!r})\n"
                 f"assert 0 < b.epsilon(1e-6) < 100\n")
    body += ("from click.testing import CliRunner\n"
             "from symsel.cli import main\n"
             "result = CliRunner().invoke(main, ['bound', '--dist', 'geometric(mean=30)',"
             " '--base', 'gaussian(sigma=4)', '--delta', '1e-6'])\n"
             "assert result.exit_code == 0, result.output")
    assert _heavy_modules_after(body) == []


def test_a_dpsgd_base_imports_dp_accounting_when_it_is_asked_about():
    """The check above can fail: the same child sees dp-accounting once a DP-SGD profile is built."""
    body = ("import symsel\n"
            "p = symsel.parse_profile('dpsgd(q=0.01, sigma=1.1, steps=10)')\n"
            "assert 0 < p.epsilon(1e-5) < 10")
    assert "dp_accounting" in _heavy_modules_after(body)
