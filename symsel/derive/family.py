"""The family of a law of ``K`` recognized from its PGF, with parameters left symbolic where they are.

``h(z) = phi'(z)/phi''(z)`` is affine in ``z`` exactly for the three families with paper closed forms
(docs/ratio-methods.md, Koskela et al. §5): Poisson(``mu``) has ``h = 1/mu`` (slope 0), ``Bin(n, p)`` has slope
``1/(n - 1) > 0`` and intercept ``(1 - p)/((n - 1) p)``, the truncated negative binomial ``D_{eta,gamma}`` has
slope ``-1/(eta + 1) < 0`` and intercept ``1/((eta + 1)(1 - gamma))``. The parameters read off ``h`` are then
confirmed by SymPy: the family's own ``phi`` must equal the given one identically.
"""

from __future__ import annotations

import sympy

from symsel.distributions import z

_SIMPLIFY_OPS = 400


def _simple(expr: sympy.Expr) -> sympy.Expr:
    if all(s.name in ("z", "q", "q'") for s in expr.free_symbols) and expr.is_rational_function():
        return sympy.cancel(expr)  # exact numbers: cancel decides; simplify is slow on large polynomials
    return sympy.simplify(expr) if sympy.count_ops(expr) <= _SIMPLIFY_OPS else sympy.cancel(expr)


def family_pgf(name: str, params: dict[str, sympy.Expr]) -> sympy.Expr:
    """``phi`` of a family (P&S Definition 1 for ``tnb``; binomial; Poisson)."""
    if name == "poisson":
        return sympy.exp(params["mu"] * (z - 1))
    if name == "binomial":
        return (1 - params["p"] + params["p"] * z) ** params["n"]
    eta, gamma = params["eta"], params["gamma"]
    return ((1 - (1 - gamma) * z) ** (-eta) - 1) / (gamma ** (-eta) - 1)


def recognize(pgf: sympy.Expr) -> tuple[str, dict[str, sympy.Expr]] | None:
    """``(name, params)`` when ``pgf`` is Poisson, binomial or truncated negative binomial (``eta != 0``),
    proved by a symbolic identity; ``None`` otherwise (always safe: no closed form is then claimed)."""
    d1 = sympy.diff(pgf, z)
    d2 = sympy.diff(pgf, z, 2)
    if d2 == 0:
        return None
    h = _simple(d1 / d2)
    if h.has(sympy.zoo, sympy.nan) or not h.is_rational_function(z):
        return None
    if sympy.degree(sympy.together(h).as_numer_denom()[1], z) != 0:
        return None
    h = sympy.expand(sympy.cancel(h))
    if sympy.degree(h, z) > 1:
        return None
    slope, intercept = _simple(h.coeff(z, 1)), _simple(h.coeff(z, 0))
    if slope == 0:
        candidate = ("poisson", {"mu": _simple(1 / intercept)})
    elif slope.is_positive:
        n = _simple(1 / slope + 1)
        candidate = ("binomial", {"n": n, "p": _simple(1 / (1 + (n - 1) * intercept))})
    elif slope.is_negative:
        eta = _simple(-1 / slope - 1)
        if eta == 0:
            return None
        candidate = ("tnb", {"eta": eta, "gamma": _simple(1 - 1 / ((eta + 1) * intercept))})
    else:
        return None
    difference = family_pgf(*candidate) - pgf
    if sympy.simplify(sympy.expand(difference)) != 0 and sympy.simplify(sympy.logcombine(sympy.expand_log(
            sympy.log(family_pgf(*candidate)) - sympy.log(pgf), force=True), force=True)) != 0:
        return None
    return candidate
