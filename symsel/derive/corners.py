"""Symbolic derivations: what SymPy can say in closed form about a law of K and its bounds.

* :func:`facts_latex` — ``phi``, ``phi'``, mean and variance of a distribution as LaTeX.
* :func:`polygon_vertex_ratios` — the ratio ``phi'(q)/phi'(q')`` at the corners of the
  ``(eps1, delta1)`` polygon (docs/setting.md) as exact SymPy numbers. Where the ratio is monotone along
  each segment (Koskela et al. Lemma C.5 for Möbius-type ratios; every truncated negative binomial,
  Poisson and binomial law), the supremum over the polygon is the largest corner value, and the
  certified numeric supremum of :mod:`symsel.bounds.ratio` must agree with it.
* :func:`segment_is_monotone` — that monotonicity on one segment, judged by sampling the derivative's sign
  (:func:`symsel.derive.segments.sampled_segment_sign`: numerical evidence, not a proof).
"""

from __future__ import annotations

from typing import Any

import sympy

from symsel.distributions import Distribution, z


def _exact(x: Any) -> sympy.Expr:
    """An exact SymPy number for a float (its decimal repr), anything else sympified (symbols stay)."""
    return sympy.Rational(repr(x)) if isinstance(x, float) else sympy.sympify(x)


def facts_latex(dist: Distribution) -> dict[str, str]:
    """LaTeX of ``phi``, ``phi'`` (symbolic in the parameters), the mean and the variance."""
    return {
        "pgf": sympy.latex(dist.pgf_symbolic),
        "dpgf": sympy.latex(dist.dpgf_symbolic),
        "mean": sympy.latex(dist.mean_symbolic),
        "variance": sympy.latex(dist.variance_symbolic),
    }


def polygon_corners(eps1: Any, delta1: Any) -> dict[str, tuple[sympy.Expr, sympy.Expr]]:
    """Corners of the lower-right boundary of the ``(eps1, delta1)`` polygon, exactly:
    ``(delta1, 0)``, the vertex ``V`` and ``(1, 1 - delta1)``."""
    e1, d1 = _exact(eps1), _exact(delta1)
    ee = sympy.exp(e1)
    return {
        "start": (d1, sympy.Integer(0)),
        "vertex": ((ee + d1) / (1 + ee), (1 - d1) / (1 + ee)),
        "end": (sympy.Integer(1), 1 - d1),
    }


def polygon_vertex_ratios(dist: Distribution, eps1: Any, delta1: Any) -> dict[str, sympy.Expr]:
    """``log phi'(q) - log phi'(q')`` at each corner, as exact SymPy expressions (``oo`` where
    ``phi'(q') = 0``)."""
    out = {}
    for name, (q, qp) in polygon_corners(eps1, delta1).items():
        den = dist.dpgf.subs(z, qp)
        out[name] = sympy.oo if den == 0 else sympy.log(dist.dpgf.subs(z, q)) - sympy.log(den)
    return out


def segment_is_monotone(dist: Distribution, eps1: Any, delta1: Any, segment: str, samples: int = 64) -> bool:
    """Whether ``log phi'(q(t)) - log phi'(q'(t))`` is monotone along ``segment`` ("S1": start to
    vertex, "S2": vertex to end), judged by the sign of its derivative at ``samples - 1`` points at 30 digits."""
    from symsel.derive.segments import sampled_segment_sign

    corners = polygon_corners(eps1, delta1)
    a, b = (corners["start"], corners["vertex"]) if segment == "S1" else (corners["vertex"], corners["end"])
    return sampled_segment_sign(dist.dpgf, a, b, samples=samples) is not None
