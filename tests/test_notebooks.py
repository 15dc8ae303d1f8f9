"""The narrative notebooks in notebooks/ are committed with their outputs, and those outputs are what the notebooks
produce: each one is executed again exactly as notebooks/execute.py executed it to write them (nbclient, kernel
``python3``, working directory notebooks/), and its text outputs (text/plain, text/markdown, text/latex, text/html
and streams, trailing whitespace removed) must equal the committed ones; plots are compared by MIME type only. The
rich displays of symsel's objects must be there (a law as text/latex, a derivation as text/markdown, a bound as
text/html, a plot as image/png). Regenerate the outputs with ``.venv/bin/python notebooks/execute.py [NOTEBOOK]``."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))

#: the rich displays each notebook must show (:func:`rich_displays`).
RICH = {
    "01_tour.ipynb": {"law", "plot"},
    "02_new_distribution.ipynb": {"law", "derivation", "bound", "plot"},
    "03_high_precision_verification.ipynb": {"plot"},
    "04_planning_dp_sgd.ipynb": set(),
    "05_tuning_dp_sgd_end_to_end.ipynb": set(),
    "06_fixed_trials.ipynb": set(),
    "07_opacus_whole_search.ipynb": set(),
}


def _executor() -> ModuleType:
    spec = importlib.util.spec_from_file_location("notebook_execute", NOTEBOOK_DIR / "execute.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


execute = _executor()


def rich_displays(nb: nbformat.NotebookNode) -> set[str]:
    """Which rich displays the notebook's outputs hold: ``law`` (a ``Distribution(…)`` result with text/latex),
    ``derivation`` (a ``Derivation(…)`` result with text/markdown), ``bound`` (a ``<SelectionBound …>`` result with
    text/html), ``plot`` (an image/png)."""
    kinds = {"law": ("Distribution(", "text/latex"), "derivation": ("Derivation(", "text/markdown"),
             "bound": ("<SelectionBound ", "text/html")}
    found = set()
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" in data:
                found.add("plot")
            plain = "".join(data.get("text/plain", ""))
            found |= {kind for kind, (start, mime) in kinds.items() if plain.startswith(start) and mime in data}
    return found


def test_every_notebook_is_listed():
    assert [p.name for p in NOTEBOOKS] == sorted(RICH)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_valid_and_committed_executed(path: Path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    counts = [cell.execution_count for cell in nb.cells if cell.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1)), f"{path.name}: not executed top to bottom by execute.py"
    assert all("execution" not in cell.metadata for cell in nb.cells), f"{path.name}: timings in the metadata"
    assert execute.problems(nb) == []
    assert RICH[path.name] <= rich_displays(nb)


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_reproduces_its_committed_outputs(path: Path):
    committed = nbformat.read(path, as_version=4)
    executed, _ = execute.execute(path)  # raises CellExecutionError (with the cell and traceback) on an error
    assert RICH[path.name] <= rich_displays(executed)
    assert execute.problems(executed) == []
    expected, found = execute.text_outputs(committed), execute.text_outputs(executed)
    assert len(found) == len(expected)
    for index, (want, got) in enumerate(zip(expected, found, strict=True)):
        assert got == want, (f"{path.name}: code cell {index} differs from its committed outputs (when the change "
                             f"is meant: .venv/bin/python notebooks/execute.py notebooks/{path.name})")
