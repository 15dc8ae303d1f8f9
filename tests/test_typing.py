"""The public API type-checks: mypy finds no error in symsel/__init__.py (whose names carry their real types for type
checkers) and the modules its names come from. symsel ships py.typed, so a user's mypy reads these annotations.
The rest of the package is not yet mypy-clean (`mypy symsel` still reports errors in internal modules)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: symsel/__init__.py and the modules of every name it exports (the _LAZY table there), checked with the modules
#: they import followed silently
PUBLIC_API = [
    "symsel/__init__.py",
    "symsel/errors.py",
    "symsel/spec.py",
    "symsel/bounds/__init__.py",
    "symsel/bounds/api.py",
    "symsel/distributions/__init__.py",
    "symsel/distributions/core.py",
    "symsel/distributions/families.py",
    "symsel/distributions/combinators.py",
    "symsel/distributions/user.py",
    "symsel/profiles/__init__.py",
    "symsel/profiles/base.py",
    "symsel/profiles/export.py",
    "symsel/evidence/lower.py",
    "symsel/evidence/examples.py",
    "symsel/apps/accounting.py",
    "symsel/derive/__init__.py",
    "symsel/derive/engine.py",
    "symsel/display.py",
    "symsel/apps/plan.py",
    "symsel/bounds/pipeline.py",
]


def test_the_list_covers_every_lazy_name():
    import symsel

    modules = {f"{module.replace('.', '/')}{'/__init__' if (ROOT / module.replace('.', '/')).is_dir() else ''}.py"
               for module in set(symsel._LAZY.values())}
    assert modules <= set(PUBLIC_API)


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (the dev extra has it)")
def test_the_public_api_is_mypy_clean():
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--cache-dir", str(ROOT / ".pytest_cache" / "mypy"),
         *PUBLIC_API],
        capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
