"""Symbolic derivations as a product: ``symsel.derive.derive(dist, base=None) -> Derivation``.

* :mod:`symsel.derive.corners` — the ``(eps1, delta1)`` polygon's corners and the ratio there;
* :mod:`symsel.derive.family` — the family recognized from ``phi'/phi''`` (symbolic parameters allowed);
* :mod:`symsel.derive.record` — the :class:`Derivation` record, its checks and renderers;
* :mod:`symsel.derive.engine` — :func:`derive` itself.
"""

from symsel.derive.corners import facts_latex, polygon_corners, polygon_vertex_ratios, segment_is_monotone
from symsel.derive.engine import derive, symbolic_law
from symsel.derive.record import Check, Derivation

__all__ = [
    "Check",
    "Derivation",
    "derive",
    "facts_latex",
    "polygon_corners",
    "polygon_vertex_ratios",
    "segment_is_monotone",
    "symbolic_law",
]
