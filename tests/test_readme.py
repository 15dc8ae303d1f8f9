"""The README is a contract: every `$ symsel …` example in its command-line block prints what the README shows,
the results table's fixed-K rows are what the library computes, and every name the README uses from Python exists
after one `import symsel`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _examples() -> list[tuple[str, list[str]]]:
    """(command, expected output lines) for each `$ ` line of the README's ```text blocks."""
    examples = []
    for block in re.findall(r"```text\n(.*?)```", README, re.S):
        lines = block.rstrip("\n").split("\n")
        i = 0
        while i < len(lines):
            if not lines[i].startswith("$ "):
                i += 1
                continue
            command = lines[i][2:]
            while command.endswith("\\"):
                i += 1
                command = command[:-1] + " " + lines[i].strip()
            i += 1
            expected = []
            while i < len(lines) and not lines[i].startswith("$ "):
                expected.append(lines[i])
                i += 1
            while expected and not expected[-1].strip():
                expected.pop()
            examples.append((command, expected))
    return examples


EXAMPLES = _examples()


def test_the_readme_has_command_examples():
    assert len(EXAMPLES) >= 5


@pytest.mark.slow  # a process each (conftest.py runs the slow tests first)
@pytest.mark.parametrize(("command", "expected"), EXAMPLES, ids=[c[:60] for c, _ in EXAMPLES])
def test_readme_command_prints_what_the_readme_shows(command, expected):
    symsel = shutil.which("symsel", path=str(Path(sys.executable).parent)) or "symsel"
    env = {**os.environ, "COLUMNS": "200"}
    result = subprocess.run(command.replace("symsel ", f"{symsel} ", 1), shell=True, capture_output=True, text=True,
                            cwd=ROOT, env=env, timeout=300)
    printed = (result.stdout + result.stderr).rstrip("\n").split("\n")
    assert [line.rstrip() for line in printed] == [line.rstrip() for line in expected]


def _results_rows() -> dict[str, dict[str, str]]:
    """The README's results table, by law spec."""
    section = README[README.index("## Results"):]
    lines = [line for line in section.split("\n") if line.startswith("| `")]
    header = next(line for line in section.split("\n") if line.startswith("| law of K"))
    names = [cell.strip() for cell in header.strip("|").split("|")]
    rows = {}
    for line in lines:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == len(names):
            rows[cells[0].strip("`")] = dict(zip(names, cells, strict=True))
    return rows


@pytest.mark.parametrize("spec", ["point(k=2)", "point(k=3)", "point(k=10)", "point(k=40)"])
def test_readme_fixed_k_rows_are_what_the_library_computes(spec):
    """composition, envelope, interval and best to the 4 decimals shown (σ = 4, δ = 1e-6), and the certified lower bound
    (the report's budget of 20) to the same 4 decimals, with the bracket best / lower."""
    import symsel

    row = _results_rows()[spec]
    dist, base = symsel.parse_distribution(spec), symsel.parse_profile("gaussian(sigma=4)")
    for method in ("composition", "envelope", "interval", "best"):
        assert row[method] == f"{symsel.bound(dist, base, method).epsilon(1e-6):.4f}", method
    lower = symsel.lower_bound(base, dist, 1e-6, budget=20).epsilon
    assert row["lower"] == f"{lower:.4f}"
    assert float(row["best / lower"]) == pytest.approx(float(row["best"]) / float(row["lower"]), abs=1e-4)


def test_every_python_name_of_the_readme_exists_after_one_import():
    import symsel

    section = README[README.index("## Python"):README.index("### Adding a distribution")]
    for dotted in set(re.findall(r"symsel\.([a-zA-Z_][\w.]*)", section)):
        obj = symsel
        for part in dotted.rstrip(".").split("."):
            obj = getattr(obj, part)


#: optional extras, by the module a README block imports: a block is skipped when its extra is not installed
_EXTRA_MODULES = {"dask": "dask", "optuna": "optuna", "opendp": "opendp", "pyarrow": "pyarrow",
                  "symsel.apps.hpo": "optuna", "symsel.apps.opendp": "opendp", "opacus": "opacus", "torch": "torch"}
#: a sweep grid for the Dask block's `load_grid("grid.yaml")`: one cell, so the cluster's start-up is the cost
_GRID = 'laws: ["geometric(mean=10)"]\nbases: ["gaussian(sigma=4)"]\ndeltas: [1e-6]\nmethods: [paper]\n'


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README, re.S)


def _needs(block: str) -> set[str]:
    """The optional packages a block imports."""
    import ast

    names = set()
    for node in ast.walk(ast.parse(block)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return {package for name in names for module, package in _EXTRA_MODULES.items()
            if name == module or name.startswith(module + ".")}


PYTHON_BLOCKS = _python_blocks()


def test_the_readme_has_python_blocks():
    assert len(PYTHON_BLOCKS) >= 5


@pytest.mark.slow  # a process each (conftest.py runs the slow tests first)
@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=[b.split("\n")[0][:50] for b in PYTHON_BLOCKS])
def test_readme_python_block_runs_as_a_script(block, tmp_path):
    """Every ```python block of the README runs pasted into a script of its own, in a fresh folder (so the Dask block
    needs its `__main__` guard, and the Optuna block defines its objective)."""
    import importlib.util

    missing = sorted(package for package in _needs(block) if importlib.util.find_spec(package) is None)
    if missing:
        pytest.skip(f"needs the optional {', '.join(missing)} (an extra that is not installed)")
    (tmp_path / "grid.yaml").write_text(_GRID)
    script = tmp_path / "readme_block.py"
    script.write_text(block)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                            env={**os.environ, "MPLBACKEND": "Agg"})
    assert result.returncode == 0, result.stdout + result.stderr
    if "run_sweep" in block:
        assert len((tmp_path / "grid-results.csv").read_text().strip().split("\n")) == 2  # the header and one cell
