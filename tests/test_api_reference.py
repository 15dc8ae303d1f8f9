"""The API reference (docs/api.rst, built by `python3 run.py docs`) documents every public name: each name of
``symsel.__all__`` and each application module is listed there, and each has a docstring of its own for autodoc to
render. The build itself (warnings as errors) is `python3 run.py docs`; it takes too long for the suite."""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path

import pytest

import symsel

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = (ROOT / "docs" / "api.rst").read_text()
LISTED = set(re.findall(r"^   (symsel[\w.]*)$", REFERENCE, re.M))
#: the public modules beyond ``symsel.__all__``: the applications and the export to dp-accounting
MODULES = ["symsel.apps.plan", "symsel.apps.tuning", "symsel.apps.ptr", "symsel.apps.sweep", "symsel.apps.accounting",
           "symsel.apps.hpo", "symsel.apps.opendp", "symsel.profiles.export", "symsel.spec"]


def _own_doc(obj: object, name: str) -> str:
    """``obj``'s docstring, or for a constant the ``#:`` comment above its definition in a symsel module (what
    docs/conf.py renders instead of its type's docstring)."""
    if inspect.isroutine(obj) or inspect.isclass(obj) or inspect.ismodule(obj):
        return inspect.getdoc(obj) or ""
    for module_name, module in sorted(sys.modules.items()):
        if module_name.startswith("symsel.") and getattr(module, name, None) is obj:
            source = inspect.getsource(module)
            found = re.search(rf"((?:^#:.*\n)+)^{name}\b[^=\n]*=", source, re.M)
            if found:
                return " ".join(line[2:].strip() for line in found.group(1).splitlines())
    return ""


@pytest.mark.parametrize("name", symsel.__all__)
def test_every_public_name_is_in_the_reference_with_a_docstring(name):
    assert f"symsel.{name}" in LISTED, f"symsel.{name} is missing from docs/api.rst"
    obj = getattr(symsel, name)
    doc = _own_doc(obj, name)
    assert len(doc.split()) >= 3, f"symsel.{name} has no docstring of its own"
    if not (inspect.isroutine(obj) or inspect.isclass(obj) or inspect.ismodule(obj)):
        assert doc != inspect.getdoc(type(obj))


@pytest.mark.parametrize("module", MODULES)
def test_every_public_module_is_in_the_reference_with_a_docstring(module):
    assert module in LISTED, f"{module} is missing from docs/api.rst"
    imported = importlib.import_module(module)
    assert len((imported.__doc__ or "").split()) >= 5
    for name in getattr(imported, "__all__", ()):
        assert len((inspect.getdoc(getattr(imported, name)) or "").split()) >= 3, f"{module}.{name}"


def test_the_reference_lists_only_what_exists():
    for dotted in LISTED:
        module, _, attribute = dotted.rpartition(".")
        try:
            importlib.import_module(dotted)
        except ImportError:
            assert hasattr(importlib.import_module(module), attribute), dotted


def test_the_site_renders_the_pages_and_the_notebooks():
    """docs/conf.py reads the pages the site is made of, and the notebooks without executing them."""
    text = (ROOT / "docs" / "conf.py").read_text()
    assert 'nb_execution_mode = "off"' in text
    for pattern in ("README.md", "docs/*.md", "docs/api.rst", "benchmarks/RESULTS.md", "notebooks/*.ipynb"):
        assert f'"{pattern}"' in text
    index = (ROOT / "docs" / "index.md").read_text()
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.stem != "index":
            assert re.search(rf"^(.*<)?{re.escape(page.stem)}>?$", index, re.M), f"{page.name} is in no toctree"


def test_run_py_docs_builds_the_site_with_warnings_as_errors():
    """`python3 run.py docs`: the docs extra, then sphinx-build -W with docs/conf.py over the repository."""
    import importlib.util
    import tomllib

    spec = importlib.util.spec_from_file_location("symsel_run_py", ROOT / "run.py")
    run_py = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_py)
    assert run_py.EXTRAS["docs"] == "[docs]"
    command = run_py.docs_command(Path("python"), run_py.docs_options([]))
    assert command[:3] == ["python", "-m", "sphinx"] and "-W" in command
    assert command[command.index("-c") + 1] == str(ROOT / "docs")
    assert command[-2:] == [str(ROOT), str(ROOT / "docs" / "_build" / "html")]
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["docs"]
    pins = (ROOT / "constraints.txt").read_text().split("\n")
    pinned = {line.split("==")[0].lower() for line in pins if "==" in line}
    for package in ("sphinx", "myst-parser", "myst-nb"):
        assert any(requirement.lower().startswith(package + ">=") for requirement in extra), package
        assert package in pinned, package
    ignored = (ROOT / ".gitignore").read_text().split()
    assert "docs/_build/" in ignored and "docs/_generated/" in ignored
