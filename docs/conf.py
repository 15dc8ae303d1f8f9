"""Sphinx configuration of symsel's documentation site.

Built by ``python3 run.py docs`` (``sphinx-build -W -c docs . docs/_build/html``): the source folder is the repository
itself, so that the pages under ``docs/``, the README, the results page and the committed notebooks link to each other
with the same relative links that work on a repository browser. Only the files matched by :data:`include_patterns`
are read. Notebooks are rendered with their committed outputs and never executed.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the symsel next to this file, not another installed copy
# autosummary writes a page per documented name here at each build; pages of names no longer listed would be orphans
shutil.rmtree(Path(__file__).resolve().parent / "_generated", ignore_errors=True)

project = "symsel"
author = "The symsel developers"
copyright = "The symsel developers"


def _version() -> str:
    import tomllib

    with (ROOT / "pyproject.toml").open("rb") as file:
        return str(tomllib.load(file)["project"]["version"])


release = version = _version()

extensions = [
    "myst_nb",  # Markdown (MyST) pages and notebooks
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.napoleon",  # the docstrings' Args:, Attributes:, Raises: sections
]

root_doc = "docs/index"
include_patterns = [
    "README.md",
    "docs/*.md",
    "docs/api.rst",
    "benchmarks/RESULTS.md",
    "derivations/README.md",
    "notebooks/*.ipynb",
    "docs/_generated/*.rst",  # autosummary's pages of the API reference (docs/api.md), written at each build
]
exclude_patterns = ["docs/_build", ".venv*", "**/.ipynb_checkpoints"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}

# MyST: $…$ and $$…$$ math as on a repository browser, heading anchors for the #fragment links between pages
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 4
nb_execution_mode = "off"  # the notebooks' committed outputs are shown; the test suite checks they are reproducible

autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autosummary_generate = True
autosummary_imported_members = False

html_theme = "furo"
html_title = f"symsel {release}"


def _data_docstring(app, what, name, obj, options, lines) -> None:
    """A constant re-exported by ``symsel`` (``symsel.METHODS``) is documented by the ``#:`` comment where it is
    defined, not by its type's docstring (a tuple's)."""
    if what != "data" or not name.startswith("symsel.") or _text(lines) != _text(_type_doc_lines(obj)):
        return
    from sphinx.pycode import ModuleAnalyzer

    attribute = name.rsplit(".", 1)[1]
    for module_name, module in sorted(sys.modules.items()):
        if module_name.startswith("symsel.") and getattr(module, attribute, None) is obj:
            found = ModuleAnalyzer.for_module(module_name).find_attr_docs().get(("", attribute))
            if found:
                lines[:] = list(found)
                return


def _text(lines: list[str]) -> list[str]:
    return [line.strip() for line in lines if line.strip()]


def _type_doc_lines(obj: object) -> list[str]:
    from sphinx.util.docstrings import prepare_docstring

    return prepare_docstring(type(obj).__doc__ or "")


def setup(app):
    app.connect("autodoc-process-docstring", _data_docstring)
