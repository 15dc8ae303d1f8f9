"""The package type-checks: ``mypy symsel`` (the configuration in pyproject.toml, [tool.mypy]) finds no error in any
module, the public API (symsel/__init__.py, whose names carry their real types for type checkers) included. symsel
ships py.typed, so a user's mypy reads these annotations."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (the dev extra has it)")
def test_the_package_is_mypy_clean():
    # the cache under .pytest_cache makes a run after a small change take seconds (a cold run about a minute)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(ROOT / ".pytest_cache" / "mypy"), "symsel"],
        capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout
