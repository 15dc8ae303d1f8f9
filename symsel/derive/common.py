"""Shared pieces of :mod:`symsel.derive`: the symbols, the 50-digit precision, the parameter points at which
free symbols are instantiated, the numeric law the engine evaluates at such a point, and the *size budget*.

Budgets are sizes, never time (docs/numerics.md): which symbolic steps run is decided from the input alone
(:class:`LawSize` of ``phi``; :func:`expansion_bound` before an expansion; operation counts), so the same input
gives the same derivation, byte for byte, on a quiet and on a loaded machine."""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Any

import sympy

from symsel.derive.family import _simple
from symsel.distributions import Distribution, z
from symsel.errors import SpecError, SymselError
from symsel.spec import parse_distribution

DPS = 50
EPS, EPS0, EPS1, DELTA1 = sympy.symbols("varepsilon varepsilon_0 varepsilon_1 delta_1", positive=True)
#: the Rényi order ``lambda > 1`` (P&S Lemma 7), the hat order of P&S Thm 2, the candidates ``c``, the tail ``k``.
LAM, LAM_HAT, EPS_HAT, DELTA_HAT = sympy.symbols(r"lambda \hat{\lambda} \hat{\varepsilon} \hat{\delta}", positive=True)
CAND, KK, TT = sympy.symbols("c k t", positive=True)
#: parameter points at which free symbols are instantiated for the 50-digit checks.
SAMPLE_VALUES = (sympy.Rational(1, 2), sympy.Rational(3), sympy.Rational(40), sympy.Rational(1, 5),
                 sympy.Rational(9, 10), sympy.Rational(7))
#: at most this many parameter points are checked, found among at most this many candidates.
MAX_POINTS, MAX_TRIED = 3, 40


#: ``sympy.limit`` is tried on expressions of at most this many operations (:func:`at`).
LIMIT_OPS = 200

#: what SymPy raises when it gives up on an expression (an undecidable sign, an uncomparable Max argument, a
#: series whose assumption queries recurse without end).
SYMPY_FAILURES = (ArithmeticError, TypeError, ValueError, NotImplementedError, RecursionError)


def at(expr: sympy.Expr, point: Any) -> sympy.Expr:
    """``expr`` at ``z = point``, by a one-sided limit where substitution gives ``nan``/``zoo`` (kept as an
    unevaluated ``Limit`` when SymPy cannot take it, or when ``expr`` has more than :data:`LIMIT_OPS` operations)."""
    value = expr.subs(z, point)
    if value.has(sympy.nan, sympy.zoo) or value.is_finite is False:
        side = "-" if point == 1 else "+"
        if sympy.count_ops(expr) > LIMIT_OPS:
            return sympy.Limit(expr, z, point, side)
        try:
            value = sympy.limit(expr, z, point, side)
        except SYMPY_FAILURES:  # depends on a free parameter's range (z^a at 0): kept as a limit
            return sympy.Limit(expr, z, point, side)
    return _simple(value)


def free_points(phi: sympy.Expr) -> tuple[dict[sympy.Symbol, sympy.Expr], ...]:
    """Parameter points for the checks: up to :data:`MAX_POINTS` assignments of :data:`SAMPLE_VALUES` to the free
    symbols of ``phi`` at which the engine accepts ``phi`` as a PGF (``g`` in ``(1 - g) z/(1 - g z)`` must stay
    below 1, ``n`` in ``(1 - p + p z)^n`` must be an integer): first every symbol at the same value, then mixed
    values. :class:`SpecError` when none of the first :data:`MAX_TRIED` is a PGF."""
    free = tuple(sorted(phi.free_symbols - {z}, key=str))
    return _valid_points(phi, free) if free else ({},)


@functools.lru_cache(maxsize=32)
def _valid_points(phi: sympy.Expr, free: tuple[sympy.Symbol, ...]) -> tuple[dict[sympy.Symbol, sympy.Expr], ...]:
    same = ((v,) * len(free) for v in SAMPLE_VALUES)
    mixed = (c for c in itertools.product(SAMPLE_VALUES, repeat=len(free)) if len(set(c)) > 1)
    points = []
    for values in itertools.islice(itertools.chain(same, mixed), MAX_TRIED):
        try:
            _law_at(phi, tuple(zip(free, values, strict=True)))
        except SymselError:
            continue
        points.append(dict(zip(free, values, strict=True)))
        if len(points) == MAX_POINTS:
            break
    if not points:
        names = ", ".join(s.name for s in free)
        raise SpecError(f"derive: no values of the free parameters {names} among "
                        f"{', '.join(str(v) for v in SAMPLE_VALUES)} make this expression a PGF, so its claims cannot "
                        "be checked; bind the parameters (e.g. pgf(expr=..., g=0.9))")
    return tuple(points)


def engine_law(spec: str, phi: sympy.Expr, point: dict, dist: Distribution | None) -> Distribution:
    """The numeric engine's :class:`Distribution` for ``phi`` at a parameter ``point`` (``dist`` when bound)."""
    if dist is not None:
        return dist
    return _law_at(phi, tuple(point.items()))


@functools.lru_cache(maxsize=64)
def _law_at(phi: sympy.Expr, point: tuple[tuple[sympy.Symbol, sympy.Expr], ...]) -> Distribution:
    """``phi`` at ``point`` as a validated ``pgf(expr=..., name=value, ...)`` law (cached: the checks reuse it)."""
    text = sympy.sstr(phi.subs({s: sympy.Symbol(s.name) for s, _ in point}))
    args = ", ".join(f"{s.name}={float(v)!r}" for s, v in point)
    return parse_distribution(f"pgf(expr={text!r}{', ' + args if args else ''})")


def n50(expr: sympy.Expr) -> sympy.Float:
    """``expr`` at 50 digits."""
    return sympy.N(expr, DPS)


def rel(a: Any, b: Any) -> float:
    """``|a - b| / max(1, |b|)`` as a float (the disagreement reported by a check)."""
    a, b = sympy.Float(a, DPS), sympy.Float(b, DPS)
    return float(abs(a - b) / max(sympy.Float(1), abs(b)))


def checked_simplify(expr: sympy.Expr, max_ops: int) -> sympy.Expr:
    """``sympy.simplify(expr)`` when ``expr`` has fewer than ``max_ops`` operations and the simplified form has the
    same value at a generic point (each free symbol at a distinct rational in (0, 1), 50 digits), else ``expr``
    unchanged. SymPy's simplify can pick a wrong branch of ``log`` on negative constants (``log(3/(e^3 - 1))``
    became complex); a form that is not the same number is never printed."""
    if sympy.count_ops(expr) >= max_ops:
        return expr
    simpler = sympy.simplify(expr)
    point = {s: sympy.Rational(13 + 7 * i, 100 + i) for i, s in enumerate(sorted(expr.free_symbols, key=str))}
    try:
        before, after = (complex(sympy.N(e.subs(point), DPS)) for e in (expr, simpler))
    except (TypeError, ValueError):  # not a number at the point (a pole, nan): keep the form as derived
        return expr
    return simpler if abs(before - after) <= 1e-30 * max(1.0, abs(before)) else expr


def tidy_log_ratio(num: sympy.Expr, den: sympy.Expr, eps: sympy.Symbol) -> sympy.Expr:
    """``log(num/den)`` in a readable form: with ``X = e^eps`` the ratio is cancelled and factored when it is
    rational in ``X`` (fast, exact); a small non-rational form is simplified; a large one is left alone."""
    x = sympy.Symbol("X", positive=True)
    ratio = sympy.together((num / den).subs(sympy.exp(eps), x))
    if not ratio.has(sympy.exp) and ratio.is_rational_function(x) and sympy.count_ops(ratio) < 400:
        ratio = sympy.factor(sympy.cancel(ratio))
        return sympy.expand_log(sympy.log(ratio), force=True).subs(x, sympy.exp(eps))
    log_r = sympy.log(num) - sympy.log(den)
    return checked_simplify(log_r, 100)


# ------------------------------------------------------------------------------------ the size budget
#: SymPy's symbolic steps (family recognition, simplification, sign proofs, the envelope's closed form, the pure-DP
#: region, the Rényi route, the utility's integral and optimal t) run on a law whose ``phi`` has at most
#: ``SYMBOLIC_OPS`` operations (``sympy.count_ops``), is an exact polynomial of degree at most ``SYMBOLIC_DEGREE`` (or
#: no exact polynomial), and nests exp/log/... of ``z`` at most ``SYMBOLIC_DEPTH`` deep. Measured: every law of the
#: tests and of derivations/ within these limits derives in seconds; beyond them SymPy's simplification and sign
#: proofs ran for minutes (a degree-20 binomial, ``exp(exp(z - 1) - 1)``).
SYMBOLIC_OPS, SYMBOLIC_DEGREE, SYMBOLIC_DEPTH = 400, 4, 1
#: a *huge* law (more operations or a higher degree) also skips the utility and the symbolic sup with a base:
#: its ``phi'`` is only evaluated numerically (a 5000-term pmf, E[K] = 10^6 as a 10^6-degree polynomial).
HUGE_OPS, HUGE_DEGREE = 3000, 60
#: an expansion (``sympy.expand``, ``Poly`` of a product) is attempted only when :func:`expansion_bound` shows it
#: cannot produce more terms than this (a product of powers of sums can grow exponentially).
MAX_EXPANDED_TERMS = 2000
#: LaTeX of an expression with more operations is not printed (its ``sympy`` form in the record holds it).
LATEX_OPS = 2000
#: an exact number of more digits is recorded unevaluated (``P[K = 0]`` of ``binomial(n=2000000, p=1/2)`` is
#: ``2^-2000000``: 600 000 digits, beyond Python's integer-to-text limit of 4300); the spec's own limit is 2000.
MAX_DIGITS = 2000


@dataclass(frozen=True)
class LawSize:
    """The sizes of ``phi`` that decide, before any SymPy work, which sections of a derivation run.

    Attributes:
        ops: ``sympy.count_ops(phi)``.
        degree: the degree of ``phi`` as an exact polynomial in ``z`` (read off the expression tree, not expanded),
            ``None`` when ``phi`` is not an exact polynomial (free parameters, exp, negative powers...).
        depth: how deep functions of ``z`` nest (``exp(mu (z - 1))``: 1; ``exp(exp(z - 1) - 1)``: 2).
    """

    ops: int
    degree: int | None
    depth: int

    @property
    def symbolic(self) -> bool:
        """Whether SymPy's symbolic steps run (:data:`SYMBOLIC_OPS`, :data:`SYMBOLIC_DEGREE`,
        :data:`SYMBOLIC_DEPTH`)."""
        return (self.ops <= SYMBOLIC_OPS and (self.degree is None or self.degree <= SYMBOLIC_DEGREE)
                and self.depth <= SYMBOLIC_DEPTH)

    @property
    def huge(self) -> bool:
        """Whether the law is too large even for the utility and the symbolic sup with a base."""
        return self.ops > HUGE_OPS or (self.degree is not None and self.degree > HUGE_DEGREE)

    def describe(self) -> str:
        """The sizes in words (the same words for the same input)."""
        shape = "no exact polynomial" if self.degree is None else f"an exact polynomial of degree {self.degree}"
        return f"phi has {self.ops} operations, is {shape}, function nesting depth {self.depth}"

    def symbolic_reason(self) -> str:
        """Why the symbolic steps are skipped (only meaningful when :attr:`symbolic` is false)."""
        return (f"skipped by size: {self.describe()}; SymPy's symbolic steps run only up to {SYMBOLIC_OPS} "
                f"operations, degree {SYMBOLIC_DEGREE} and nesting depth {SYMBOLIC_DEPTH}")

    def huge_reason(self) -> str:
        """Why the sections kept for large laws are skipped too (only meaningful when :attr:`huge` is true)."""
        return (f"skipped by size: {self.describe()}; above {HUGE_OPS} operations or degree {HUGE_DEGREE} phi is "
                "only evaluated numerically")


def law_size(phi: sympy.Expr) -> LawSize:
    """:class:`LawSize` of ``phi`` (one walk of the expression tree; nothing is expanded)."""
    exact = not phi.free_symbols - {z}
    return LawSize(ops=int(sympy.count_ops(phi)), degree=polynomial_degree(phi) if exact else None,
                   depth=_depth(phi))


def polynomial_degree(expr: sympy.Expr) -> int | None:
    """The degree in ``z`` of ``expr`` as a polynomial (an upper bound when terms cancel), read off the tree:
    ``None`` when it is no polynomial in ``z``. ``(1 - p + p z)^5000`` is not expanded to find 5000."""
    if not expr.has(z):
        return 0
    if expr == z:
        return 1
    if expr.is_Add or expr.is_Mul:
        degrees = [polynomial_degree(a) for a in expr.args]
        parts = [d for d in degrees if d is not None]
        if len(parts) < len(degrees):
            return None
        return max(parts) if expr.is_Add else sum(parts)
    if expr.is_Pow and expr.exp.is_Integer and expr.exp >= 0:
        inner = polynomial_degree(expr.base)
        return None if inner is None else inner * int(expr.exp)
    return None


def _depth(expr: sympy.Expr) -> int:
    if not expr.has(z):
        return 0
    inner = max((_depth(a) for a in expr.args), default=0)
    if isinstance(expr, sympy.Function) or (expr.is_Pow and expr.exp.has(z)):
        return inner + 1
    return inner


def expansion_bound(expr: sympy.Expr, cap: int = MAX_EXPANDED_TERMS) -> int:
    """An upper bound on the number of terms ``sympy.expand(expr)`` produces (numerator and denominators alike),
    read off the tree without expanding, capped at ``cap + 1``: a sum adds its terms' bounds, a product multiplies
    them, an integer power ``n`` of ``k`` terms gives ``C(|n| + k - 1, k - 1)``."""

    def bound(e: sympy.Expr) -> int:
        if e.is_Atom:
            return 1
        if e.is_Add:
            return min(cap + 1, sum(bound(a) for a in e.args))
        if e.is_Mul:
            out = 1
            for a in e.args:
                out = min(cap + 1, out * bound(a))
            return out
        if e.is_Pow:
            k = bound(e.base)
            if e.exp.is_Integer and k > 1:
                n = abs(int(e.exp))
                return cap + 1 if n > cap else min(cap + 1, math.comb(n + k - 1, k - 1))
            return max(k, bound(e.exp))
        return max(bound(a) for a in e.args)

    return bound(sympy.sympify(expr))


def number_digits(expr: sympy.Expr) -> int:
    """The most decimal digits of an exact number in ``expr`` (from bit lengths: no conversion to text)."""
    bits = max((max(abs(int(r.p)).bit_length(), int(r.q).bit_length()) for r in expr.atoms(sympy.Rational)),
               default=0)
    return math.ceil(bits * math.log10(2))


def display_latex(expr: Any) -> str:
    """LaTeX of ``expr`` for the reports: a polynomial of more than 40 terms shows its first and last few terms, an
    expression of more than :data:`LATEX_OPS` operations is named, not printed (the record's ``sympy`` form holds
    every expression whole)."""
    expr = sympy.sympify(expr)
    if isinstance(expr, sympy.Add) and len(expr.args) > 40 and expr.is_polynomial(z) and not expr.free_symbols - {z}:
        terms = sympy.Poly(expr, z).terms()
        show = [sympy.latex(c * z**e[0]) for e, c in terms[:3]] + [r"\cdots"] + \
            [sympy.latex(c * z**e[0]) for e, c in terms[-2:]]
        return " + ".join(show) + rf" \quad \text{{({len(terms)} terms)}}"
    ops = sympy.count_ops(expr)
    if ops > LATEX_OPS:
        return rf"\text{{(an expression of {ops} operations; the record's sympy form holds it)}}"
    return sympy.latex(expr)
