"""Every script in derivations/ runs to completion: its SymPy derivation and its numerical cross-checks
against symsel (each an ``assert``) hold, and it prints its result as LaTeX.

The scripts re-prove Koskela, Redberg & Wang (ICML 2024) and Papernot & Steinke (ICLR 2022) from symsel's engine,
derive the envelope bound's closed forms (docs/envelope.md) and bounds for laws no paper analyses (see each docstring).
"""

from __future__ import annotations

import ast
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DERIVATIONS = sorted((ROOT / "derivations").glob("[!_]*.py"))  # _index.py writes the README


def test_there_are_derivations():
    names = {p.name for p in DERIVATIONS}
    koskela = {"koskela_thm_5_2_tnb.py", "koskela_cor_5_3_pure_dp.py", "koskela_cor_5_4_approx_dp.py",
               "koskela_thm_5_7_binomial.py", "koskela_cor_5_8_poisson.py", "koskela_remark_4_2_lemma_7.py",
               "koskela_thm_3_2_rnm.py", "koskela_cor_3_4_rnm_gaussian.py"}
    papernot_steinke = {"papernot_steinke_thm_2_tnb.py", "papernot_steinke_cor_3_cor_4.py",
                        "papernot_steinke_thm_6_poisson.py", "papernot_steinke_eq_8_utility.py",
                        "papernot_steinke_lemma_20_approximate.py", "papernot_steinke_lemma_22_truncation.py"}
    new_laws = {f"new_law_{name}.py" for name in ("beta_binomial", "two_point", "zero_truncated_poisson",
                                                  "discrete_uniform", "truncated_geometric", "mixture",
                                                  "no_single_run")}
    assert koskela | papernot_steinke | new_laws <= names, sorted(koskela | papernot_steinke | new_laws - names)


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
def test_derivation_assertions_hold(script: Path, capsys, monkeypatch):
    """Each script run as ``__main__`` in this process (its imports are shared with the other scripts, which saves
    a second of start-up per script); a failed ``assert`` in it fails the test."""
    monkeypatch.syspath_prepend(str(script.parent))
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(script), run_name="__main__")
    assert "$$" in capsys.readouterr().out, f"{script.name} printed no LaTeX"


def test_a_derivation_runs_as_a_script():
    """The README's way: ``python derivations/<name>.py`` from the repository, in a fresh interpreter."""
    script = ROOT / "derivations" / "koskela_cor_5_3_pure_dp.py"
    result = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{script.name} failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    assert "$$" in result.stdout, f"{script.name} printed no LaTeX"
