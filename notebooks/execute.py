"""Execute the notebooks and write their outputs in place, exactly as tests/test_notebooks.py executes them.

Usage, from the repository root (with the dev or notebooks extra installed)::

    .venv/bin/python notebooks/execute.py                      # every notebook
    .venv/bin/python notebooks/execute.py notebooks/02_*.ipynb  # some of them

Each notebook runs in a fresh ``python3`` kernel with notebooks/ as working directory (nbclient, no timings
recorded), and prints its CPU time (the kernel's ``process_time``) and wall time. The outputs committed are those of
this run; the test re-executes every notebook and compares its text outputs with the committed ones
(:func:`text_outputs`).
"""

from __future__ import annotations

import copy
import re
import sys
import time
from pathlib import Path
from typing import Any

import nbclient
import nbformat

NOTEBOOK_DIR = Path(__file__).resolve().parent
#: the MIME types whose text is compared (images are compared by type only: their bytes need not match).
TEXT_MIME = ("text/plain", "text/markdown", "text/latex", "text/html")
#: a kernel-side clock read at the start and end of a run (not written to the notebook).
_CPU = "import time as _t; print(_t.process_time())"


def execute(path: Path, timeout: int = 600) -> tuple[nbformat.NotebookNode, float]:
    """The notebook at ``path`` executed (a fresh ``python3`` kernel, working directory notebooks/, no timings in
    the cells' metadata) and the kernel's CPU seconds, read by one more cell run last and then removed. Raises
    :class:`nbclient.exceptions.CellExecutionError` on the first failing cell."""
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(_CPU))
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=timeout, record_timing=False,
                                     resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    client.execute()
    probe = nb.cells.pop()
    texts = [o.get("text", "") for o in probe.outputs if o.get("output_type") == "stream"]
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = coalesced(cell.outputs)
    return nb, float(texts[0]) if texts else float("nan")


def coalesced(outputs: list[Any]) -> list[Any]:
    """The outputs with consecutive stream outputs of one stream merged into one: how a kernel splits a cell's
    printing into messages depends on timing, not on the notebook."""
    merged: list[Any] = []
    for out in outputs:
        last = merged[-1] if merged else None
        if (out.get("output_type") == "stream" and last is not None and last.get("output_type") == "stream"
                and last.get("name") == out.get("name")):
            last["text"] = _joined(last["text"]) + _joined(out["text"])
        else:
            merged.append(out)
    return merged


def _joined(text: Any) -> str:
    return "".join(text) if isinstance(text, list) else str(text)


def _normalised(text: Any) -> str:
    if isinstance(text, list):
        text = "".join(text)
    return "\n".join(line.rstrip() for line in str(text).splitlines()).strip("\n")


def text_outputs(nb: nbformat.NotebookNode) -> list[list[dict[str, Any]]]:
    """Per code cell, its outputs as comparable data: the output type, a stream's name and text (consecutive
    outputs of one stream merged: :func:`coalesced`), a display's text MIME bundles (:data:`TEXT_MIME`, trailing
    whitespace removed) and the set of its other MIME types."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for out in coalesced(copy.deepcopy(cell.outputs)):
            kind = out["output_type"]
            if kind == "stream":
                outputs.append({"type": kind, "name": out["name"], "text": _normalised(out["text"])})
            elif kind in ("display_data", "execute_result"):
                data = out.get("data", {})
                outputs.append({"type": kind, **{m: _normalised(data[m]) for m in TEXT_MIME if m in data},
                                "other": sorted(set(data) - set(TEXT_MIME))})
            else:
                outputs.append({"type": kind, "ename": out.get("ename"), "evalue": out.get("evalue")})
        cells.append(outputs)
    return cells


def mime_types(nb: nbformat.NotebookNode) -> set[str]:
    """Every MIME type of the notebook's display outputs."""
    return {m for c in nb.cells if c.cell_type == "code" for o in c.outputs for m in o.get("data", {})}


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def problems(nb: nbformat.NotebookNode) -> list[str]:
    """What would make the committed outputs non-deterministic or machine-specific: errors, object addresses,
    absolute paths of this machine."""
    found = []
    home = str(Path.home())
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for out in text_outputs(nbformat.v4.new_notebook(cells=[cell]))[0]:
            text = " ".join(str(v) for k, v in out.items() if k not in ("type", "other"))
            if out["type"] == "error":
                found.append(f"cell {index}: error {text}")
            if _ADDRESS.search(text):
                found.append(f"cell {index}: an object address in {text[:80]!r}")
            if str(NOTEBOOK_DIR.parent) in text or home in text:
                found.append(f"cell {index}: an absolute path in {text[:80]!r}")
    return found


def main(paths: list[str]) -> int:
    targets = [Path(p).resolve() for p in paths] or sorted(NOTEBOOK_DIR.glob("*.ipynb"))
    status = 0
    for path in targets:
        start = time.perf_counter()
        nb, cpu = execute(path)
        wall = time.perf_counter() - start
        found = problems(nb)
        for problem in found:
            print(f"{path.name}: {problem}", file=sys.stderr)
        status |= bool(found)
        nbformat.validate(nb)
        nbformat.write(nb, path)
        print(f"{path.name}: kernel CPU {cpu:.1f} s, wall {wall:.1f} s", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
