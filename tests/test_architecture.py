"""The floors of the package (docs/architecture.md) hold: import-linter checks the contracts in pyproject.toml
(``[tool.importlinter]``) on every import of the package, module-level and inside functions alike."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = ("floors", "no-cycle-across-folders", "no-facade-inside")


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the package under ``root`` (its pyproject.toml's contracts), no cache written."""
    tool = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(tool).exists():
        pytest.fail("import-linter is not installed: install the dev extras (python3 run.py test does)")
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([tool, "--config", str(root / "pyproject.toml"), "--no-cache"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def test_every_floor_imports_only_the_floors_below_it():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count(" KEPT") == len(CONTRACTS), result.stdout


@pytest.mark.parametrize(("module", "line"), [
    # an import inside a function, from a low floor up to the display
    ("symsel/distributions/families.py", "def _up():\n    from symsel.display import format_upper\n"),
    # a base reaching up into the bounds that consume it
    ("symsel/profiles/tabulated.py", "def _up():\n    from symsel.bounds.composition import pooled_masses\n"),
    # a package module going through the facade
    ("symsel/apps/ptr.py", "def _up():\n    import symsel\n"),
])
def test_the_contract_refuses_an_import_that_breaks_a_floor(tmp_path, module, line):
    """The check above can fail: a copy of the package with one such import is refused."""
    shutil.copytree(ROOT / "symsel", tmp_path / "symsel", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with (tmp_path / module).open("a") as file:
        file.write("\n\n" + line)
    result = _lint_imports(tmp_path)
    assert result.returncode != 0 and "BROKEN" in result.stdout, result.stdout + result.stderr
