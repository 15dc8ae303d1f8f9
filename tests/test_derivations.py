"""Every script in derivations/ runs to completion: its SymPy derivation and its numerical cross-checks
against symsel (each an ``assert``) hold, and it prints its result as LaTeX.

The scripts follow Koskela, Redberg & Wang (ICML 2024): Theorem 5.2 / Corollary 5.3 (truncated negative
binomial), Corollary 5.8 (Poisson) and the polygon / f-DP regions of Theorem 4.1 (see each docstring).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DERIVATIONS = sorted((ROOT / "derivations").glob("[!_]*.py"))  # _index.py writes the README


def test_there_are_derivations():
    names = {p.name for p in DERIVATIONS}
    assert {"tnb_polygon_vertex.py", "poisson_fdp_ratio.py", "cor_5_3_pure.py", "cor_5_8_poisson.py",
            "beta_binomial_new_law.py", "thm_5_2_5_7_families.py"} <= names


def test_the_index_lists_every_derivation_as_verified():
    index = (ROOT / "derivations" / "README.md").read_text()
    for script in DERIVATIONS:
        row = next((line for line in index.splitlines() if f"`{script.name}`" in line), None)
        assert row is not None, f"{script.name} is missing from derivations/README.md (run derivations/_index.py)"
        assert row.endswith("| verified |"), row


@pytest.mark.parametrize("script", DERIVATIONS, ids=lambda p: p.name)
def test_derivation_has_a_docstring_naming_its_source(script: Path):
    doc = ast.get_docstring(ast.parse(script.read_text()))
    assert doc, f"{script.name} has no module docstring"
    assert "Koskela" in doc or "Papernot" in doc, f"{script.name}: the docstring should name the paper it follows"


@pytest.mark.parametrize("script", DERIVATIONS, ids=lambda p: p.name)
def test_derivation_assertions_hold(script: Path):
    result = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{script.name} failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    assert "$$" in result.stdout, f"{script.name} printed no LaTeX"
