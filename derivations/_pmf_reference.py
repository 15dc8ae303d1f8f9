"""Brute-force pmf references for the Papernot & Steinke derivations: each law's masses typed from its definition
(P&S Definition 1 for the truncated negative binomial), independent of symsel's PGF machinery."""

from __future__ import annotations

from collections.abc import Callable

import mpmath
import sympy as sp


def masses(first: mpmath.mpf, ratio: Callable[[int], mpmath.mpf], start: int,
           stop: int | None = None) -> dict[int, mpmath.mpf]:
    """P[K = j] for j = start, start+1, … from P[K = start] and the ratio P[K = j+1]/P[K = j] = ratio(j), until the
    support ends at ``stop`` or the terms fall below 1e-70 (at least ten terms)."""
    out, term, j = {}, first, start
    while term > mpmath.mpf(10) ** -70 or j < start + 10:
        out[j] = term
        if stop is not None and j == stop:
            break
        term, j = term * ratio(j), j + 1
    return out


def mp(v: object) -> mpmath.mpf:
    """An exact SymPy (or decimal) number at 60 digits."""
    return mpmath.mpf(sp.N(sp.nsimplify(v), 60))


def tnb_masses(e: mpmath.mpf, g: mpmath.mpf) -> dict[int, mpmath.mpf]:
    """D_{η,γ} (P&S Definition 1, eqs. (3)-(4)): P[K = 1] and the ratio (j + η)/(j + 1) (1 − γ)."""
    first = (1 - g) / mpmath.log(1 / g) if e == 0 else e * (1 - g) / (g ** (-e) - 1)
    return masses(first, lambda j: (j + e) / (j + 1) * (1 - g), 1)
