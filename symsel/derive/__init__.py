"""Symbolic derivations as a product: ``symsel.derive.derive(dist, base=None) -> Derivation``.

* :mod:`symsel.derive.corners` — the ``(eps1, delta1)`` polygon's corners and the ratio there;
* :mod:`symsel.derive.family` — the family recognized from ``phi'/phi''`` (symbolic parameters allowed);
* :mod:`symsel.derive.record` — the :class:`Derivation` record (each closed form an :class:`Expression`: LaTeX and
  a ``sympy.srepr`` string), its checks, and the LaTeX and Markdown renderers of its JSON data;
* :mod:`symsel.derive.engine` — :func:`derive` itself.

The package is callable: ``symsel.derive("poisson(3)")`` is ``symsel.derive.derive("poisson(3)")``, so one
``import symsel`` serves a notebook.
"""

import sys
import types
from typing import Any

from symsel.derive.corners import facts_latex, polygon_corners, polygon_vertex_ratios, segment_is_monotone
from symsel.derive.engine import derive, symbolic_law
from symsel.derive.record import Check, Derivation, Expression, render_latex, render_markdown

__all__ = [
    "Check",
    "Derivation",
    "Expression",
    "derive",
    "facts_latex",
    "polygon_corners",
    "polygon_vertex_ratios",
    "render_latex",
    "render_markdown",
    "segment_is_monotone",
    "symbolic_law",
]


class _CallablePackage(types.ModuleType):
    """``symsel.derive(...)`` calls :func:`derive` (module ``__class__`` assignment, Python >= 3.5)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Derivation:
        return derive(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
