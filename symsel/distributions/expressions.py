"""SymPy expression helpers shared by the laws of ``K``: the symbols ``z`` and ``k``, evaluation at ``z = 1``,
bounded simplification, long polynomials read as their coefficients (differentiated term by term and evaluated by
Horner's rule), certified evaluation to a number of digits, and short renderings for error messages."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import mpmath
import numpy as np
import sympy
from sympy.core.evalf import PrecisionExhausted

from symsel.errors import SymselError

z = sympy.Symbol("z")
k = sympy.Symbol("k", integer=True, nonnegative=True)

#: decimal digits of the mpmath evaluations of a law when none are asked for.
DEFAULT_DPS = 30

#: polynomials with more terms than this are not read as their coefficients (:func:`_monomials` gives ``None``).
_RECOGNIZE_MAX_TERMS = 5001


def _at_one(expr: sympy.Expr) -> sympy.Expr:
    value = expr.subs(z, 1)
    if value.has(sympy.nan, sympy.zoo) or value.is_finite is False:
        value = sympy.limit(expr, z, 1, "-")
    return value


_SIMPLIFY_MAX_OPS = 400


@functools.lru_cache(maxsize=1024)
def _simplify(expr: sympy.Expr) -> sympy.Expr:
    """``simplify`` for expressions small enough that SymPy answers quickly; large ones (long
    polynomials of truncations and mixtures) are returned as they are. Remembered per expression (SymPy
    expressions are immutable, and equal only when structurally equal: ``2.0`` is not ``2``): every law of a
    family shares its symbolic PGF, so its mean and variance in closed form are simplified once."""
    if sympy.count_ops(expr) > _SIMPLIFY_MAX_OPS:
        return expr
    if not expr.free_symbols:
        return sympy.nsimplify(expr) if expr.is_Float else sympy.simplify(expr)
    return sympy.simplify(expr)


#: polynomials with more terms than this are evaluated by Horner's rule from their coefficients
#: (``lambdify`` of a sum of thousands of terms is slow and can exceed Python's recursion limit).
_HORNER_MIN_TERMS = 300


def _horner(coeffs: Mapping[int, sympy.Expr], module: str) -> Callable:
    """An evaluator of ``sum_j c_j x^j`` by Horner's rule, in float64 (``numpy``) or at the current
    mpmath precision (``mpmath``; the coefficients are rounded once per precision)."""
    degree = max(coeffs)
    exact = [coeffs.get(j, sympy.Integer(0)) for j in range(degree, -1, -1)]
    if module == "numpy":
        return _blocked_horner(np.array([float(c) for c in reversed(exact)]))
    cache: dict[int, list] = {}

    def evaluate(x: Any) -> mpmath.mpf:
        prec = mpmath.mp.prec
        if prec not in cache:
            cache[prec] = [mpmath.mpf(sympy.N(c, mpmath.mp.dps + 5)) for c in exact]
        return mpmath.polyval(cache[prec], x)

    return evaluate


#: block length and points per chunk of :func:`_blocked_horner`.
_BLOCK, _CHUNK = 64, 4096


def _blocked_horner(ascending: np.ndarray) -> Callable:
    """A float64 evaluator of ``sum_j c_j x^j`` (``c = ascending``) by Horner's rule over blocks of
    :data:`_BLOCK` coefficients: each block ``sum_i c_{bB+i} x^i`` is one matrix product, then Horner in
    ``x^B`` runs over the blocks. The same rounding behaviour as Horner's rule (non-negative coefficients on
    [0, 1]: relative error a few ulps times the number of blocks plus the block length) at a fraction of
    ``numpy.polyval``'s cost, whose Python loop takes one array operation per coefficient (a 5000-term pmf
    spent 60 s there in one bound)."""
    blocks = -(-len(ascending) // _BLOCK)
    table: np.ndarray = np.zeros(blocks * _BLOCK)
    table[: len(ascending)] = ascending
    table = table.reshape(blocks, _BLOCK).T  # column b: the coefficients of x^(bB), ..., x^(bB + B - 1)
    exponents = np.arange(_BLOCK)

    def evaluate(x: Any) -> np.ndarray:
        arr = np.asarray(x, dtype=float)
        flat = arr.ravel()
        out = np.empty_like(flat)
        for start in range(0, flat.size, _CHUNK):
            part = flat[start : start + _CHUNK]
            with np.errstate(under="ignore"):
                per_block = (part[:, None] ** exponents) @ table
                step = part**_BLOCK
            total = per_block[:, -1]
            for b in range(blocks - 2, -1, -1):
                total = total * step + per_block[:, b]
            out[start : start + _CHUNK] = total
        return out.reshape(arr.shape)

    return evaluate


def _diff(expr: sympy.Expr, order: int = 1) -> sympy.Expr:
    """``d^order expr / dz^order``; a long polynomial ``sum_j c_j z^j`` (pmfs, truncations) is
    differentiated term by term, which is much faster than ``sympy.diff`` on it."""
    coeffs = _monomials(expr, numeric=False) if expr.is_Add and len(expr.args) > 50 else None
    if coeffs is None:
        return sympy.diff(expr, z, order)
    return sympy.Add(*[c * sympy.ff(j, order) * z ** (j - order) for j, c in coeffs.items() if j >= order])


def _derivative_at_one(expr: sympy.Expr, order: int) -> sympy.Expr:
    """``d^order expr / dz^order`` at ``z = 1``; for a long polynomial ``sum_j c_j z^j`` that is
    ``sum_j c_j j (j - 1) ... (j - order + 1)``, summed directly: the same exact number as differentiating and
    substituting, without building the derivative (``subs`` on 5000 terms took seconds)."""
    coeffs = _monomials(expr, numeric=False) if expr.is_Add and len(expr.args) > 50 else None
    if coeffs is None:
        return _at_one(_diff(expr, order))
    return sympy.Add(*[c * sympy.ff(j, order) for j, c in coeffs.items() if j >= order])


def _evaluate(expr: sympy.Expr, dps: int, what: str, where: str) -> mpmath.mpf:
    """Evaluate an exact SymPy number to ``dps`` digits, refusing to return digits SymPy could not
    certify (``strict=True`` raises instead of silently losing them to cancellation)."""
    try:
        value = sympy.N(expr, dps + 5, strict=True, maxn=10 * dps + 500)
    except PrecisionExhausted:
        raise SymselError(f"{where}: could not evaluate the {what} to {dps} digits") from None
    with mpmath.workdps(dps):
        return mpmath.mpf(value)


def _broadcast(fn: Callable, x: Any) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    out = np.asarray(fn(arr), dtype=float)
    if out.shape != arr.shape:
        out = np.broadcast_to(out, arr.shape).copy()
    return out if arr.ndim else out[()]


def _node_count(expr: sympy.Expr, limit: int) -> int:
    """Number of nodes of ``expr``, counting stops just above ``limit``."""
    count = 0
    for _ in sympy.preorder_traversal(expr):
        count += 1
        if count > limit:
            break
    return count


def _monomials(expr: sympy.Expr, numeric: bool = True) -> dict[int, sympy.Expr] | None:
    """``{j: c_j}`` when ``expr`` is literally a sum of coefficients times powers ``z^j`` (numbers,
    or with ``numeric=False`` any expressions free of ``z``)."""
    terms = expr.args if expr.is_Add else (expr,)
    if len(terms) > _RECOGNIZE_MAX_TERMS:
        return None
    out: dict[int, sympy.Expr] = {}
    for term in terms:
        split = _coefficient_and_power(term)
        if split is None:
            return None
        c, e = split
        if not (c.is_number if numeric else not c.has(z)):
            return None
        out[int(e)] = out.get(int(e), sympy.Integer(0)) + c
    return {j: c for j, c in out.items() if c != 0}


def _coefficient_and_power(term: sympy.Expr) -> tuple[sympy.Expr, int] | None:
    """``(c, j)`` when ``term`` is ``c z^j`` with ``c`` free of ``z`` and ``j >= 0`` an integer
    (structural: much faster than ``as_coeff_exponent`` on long sums)."""
    factors = term.args if term.is_Mul else (term,)
    power = 0
    rest = []
    for f in factors:
        if f == z:
            power += 1
        elif f.is_Pow and f.base == z and f.exp.is_Integer and f.exp >= 0:
            power += int(f.exp)
        elif f.has(z):
            return None
        else:
            rest.append(f)
    return sympy.Mul(*rest), power


def _short(expr: Any, width: int = 60) -> str:
    """A one-line, bounded rendering of an expression for error messages."""
    text = " ".join(str(expr).split())
    return text if len(text) <= width else text[: width - 3] + "..."
