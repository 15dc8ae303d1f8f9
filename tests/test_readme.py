"""The README and the guides are a contract: every `$ symsel …` example prints what the page shows, every ```python
block runs as a script, every name used from Python exists after one `import symsel`, the quick start is the two
commands CI runs, and every number of the README is read from benchmarks/results/*.json (through
benchmarks/results_page.py, which writes the results page from the same files)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
#: the pages whose examples the suite runs: the README and the guides it links to
PAGES = [ROOT / "README.md", ROOT / "docs" / "cli.md", ROOT / "docs" / "python.md"]


def _results_page():
    spec = importlib.util.spec_from_file_location("results_page", ROOT / "benchmarks" / "results_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _examples(text: str) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) for each `$ ` line of the ```text blocks of ``text``."""
    examples = []
    for block in re.findall(r"```text\n(.*?)```", text, re.S):
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


EXAMPLES = [(page.name, *example) for page in PAGES for example in _examples(page.read_text())]


def test_the_pages_have_command_examples():
    assert len(_examples(README)) >= 3
    assert len(EXAMPLES) >= 5


@pytest.mark.slow  # a process each (conftest.py runs the slow tests first)
@pytest.mark.parametrize(("page", "command", "expected"), EXAMPLES, ids=[f"{p}:{c[:60]}" for p, c, _ in EXAMPLES])
def test_command_prints_what_the_page_shows(page, command, expected):
    symsel = shutil.which("symsel", path=str(Path(sys.executable).parent)) or "symsel"
    env = {**os.environ, "COLUMNS": "200"}
    result = subprocess.run(command.replace("symsel ", f"{symsel} ", 1), shell=True, capture_output=True, text=True,
                            cwd=ROOT, env=env, timeout=300)
    printed = (result.stdout + result.stderr).rstrip("\n").split("\n")
    assert [line.rstrip() for line in printed] == [line.rstrip() for line in expected]


def test_every_python_name_of_the_pages_exists():
    """After one `import symsel`; a module path the pages name (`symsel.profiles.export`) by importing it."""
    import importlib

    import symsel

    names = {dotted for page in PAGES for dotted in re.findall(r"\bsymsel\.([a-zA-Z_][\w.]*)", page.read_text())}
    assert len(names) >= 10
    for dotted in names:
        obj, path = symsel, "symsel"
        for part in dotted.rstrip(".").split("."):
            if part in ("py", "md"):  # a file name (symsel/apps/opendp.py), not an attribute
                break
            path += f".{part}"
            obj = getattr(obj, part) if hasattr(obj, part) else importlib.import_module(path)


#: optional extras, by the module a block imports: a block is skipped when its extra is not installed
_EXTRA_MODULES = {"dask": "dask", "optuna": "optuna", "opendp": "opendp", "pyarrow": "pyarrow",
                  "symsel.apps.hpo": "optuna", "symsel.apps.opendp": "opendp", "opacus": "opacus", "torch": "torch"}
#: a sweep grid for the Dask block's `load_grid("grid.yaml")`: one cell, so the cluster's start-up is the cost
_GRID = 'laws: ["geometric(mean=10)"]\nbases: ["gaussian(sigma=4)"]\ndeltas: [1e-6]\nmethods: [paper]\n'

PYTHON_BLOCKS = [(page.name, block) for page in PAGES for block in re.findall(r"```python\n(.*?)```",
                                                                             page.read_text(), re.S)]


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


def test_the_pages_have_python_blocks():
    assert len(re.findall(r"```python\n", README)) >= 2
    assert len(PYTHON_BLOCKS) >= 5


@pytest.mark.slow  # a process each (conftest.py runs the slow tests first)
@pytest.mark.parametrize(("page", "block"), PYTHON_BLOCKS, ids=[f"{p}:{b.split(chr(10))[0][:50]}"
                                                               for p, b in PYTHON_BLOCKS])
def test_python_block_runs_as_a_script(page, block, tmp_path):
    """Every ```python block runs pasted into a script of its own, in a fresh folder (so the Dask block needs its
    `__main__` guard, and the Optuna block defines its objective)."""
    missing = sorted(package for package in _needs(block) if importlib.util.find_spec(package) is None)
    if missing:
        pytest.skip(f"needs the optional {', '.join(missing)} (an extra that is not installed)")
    (tmp_path / "grid.yaml").write_text(_GRID)
    script = tmp_path / "page_block.py"
    script.write_text(block)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                            env={**os.environ, "MPLBACKEND": "Agg"})
    assert result.returncode == 0, result.stdout + result.stderr
    if "run_sweep" in block:
        assert len((tmp_path / "grid-results.csv").read_text().strip().split("\n")) == 2  # the header and one cell


# ----------------------------------------------------------------------------- the quick start and CI
def test_the_quick_start_is_the_two_commands_and_ci_runs_the_test_command():
    section = README[README.index("## Install and run"):]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    assert block.strip().split("\n") == ["python3 run.py report", "python3 run.py test"]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().split("\n")
          if line.strip() and not line.startswith("#") and not line.startswith(("set ", "cd "))]
    assert ci == ["python3 run.py test"]


def test_the_readme_is_a_short_page():
    assert len(README.split("\n")) <= 200


# ----------------------------------------------------------------------------- the README's numbers
NUMBERS = _results_page().readme_numbers()


def test_the_headline_is_read_from_the_results():
    best, peer = NUMBERS["headline"]
    assert f"symsel certifies **{best}** candidates where the Rényi route\nthat dp-accounting runs allows **{peer}**" \
        in README


def test_the_candidates_table_is_read_from_the_results():
    rows = re.findall(r"^\| (\S+) \| (\S+) \| (\S+) \|$", README[:README.index("## Install")], re.M)
    table = {law: (best, peer) for law, best, peer in rows if law not in ("law", "---")}
    assert table == NUMBERS["candidates"]


def test_the_candidates_setting_is_the_measured_one():
    setting = NUMBERS["setting"]
    intro = " ".join(README[:README.index("| law of K")].split())
    assert f"ε = {setting['epsilon']}, δ = {setting['delta']:g}".replace("1e-05", "1e-5") in intro
    assert f"sampling rate 16384/50000, σ = {setting['sigma']}, {setting['steps']} steps" in intro
    assert setting["q"] == pytest.approx(16384 / 50000)


def test_the_timings_line_is_read_from_the_results():
    timings = NUMBERS["timings"]
    line = " ".join(README[README.index("Measured on"):].split("\n\n")[0].split())
    report, test = (" to ".join(dict.fromkeys(timings[command])) for command in ("python3 run.py report",
                                                                              "python3 run.py test"))
    assert line == (f"Measured on {timings['date']} on fresh clones of a {timings['cores']}-core machine, each with "
                    f"its set-up: `python3 run.py report` {report}, `python3 run.py test` {test}.")


#: numbers of the README's prose that are not measurements: the Python version, citations (years, a theorem, a
#: figure), the setting's inputs checked above, and the digits of the 50-digit evaluation
_NOT_MEASURED = {"3.11", "2024", "2022", "4.1", "7", "16384/50000", "2.5", "1e-5", "21.1", "250", "50", "2", "1"}


def _prose_numbers(text: str) -> list[str]:
    """Every number in ``text`` outside code blocks, inline code, links' targets and tables."""
    text = re.sub(r"^(```|~~~).*?^\1[ \t]*$", "", text, flags=re.M | re.S)
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = "\n".join(line for line in text.split("\n") if not line.startswith("|"))
    # a date whole; not the digits of a name (CIFAR-10, Apache-2.0)
    return re.findall(r"\d{4}-\d{2}-\d{2}|(?<![\w.-])\d[\d.,/]*(?:e[+-]?\d+)?(?![\w])", text)


def test_every_number_of_the_readme_is_read_from_the_results_or_is_not_a_measurement():
    timings = NUMBERS["timings"]
    measured = {*NUMBERS["headline"], timings["date"], str(timings["cores"]),
                *(part for command in ("python3 run.py report", "python3 run.py test")
                  for span in timings[command] for part in re.findall(r"\d+", span))}
    strays = [number for number in _prose_numbers(README)
              if number.rstrip(".,") not in measured | _NOT_MEASURED]
    assert not strays, f"numbers in the README that no results file gives: {strays}"
