"""The masses of a law of ``K``: ``P[K = 0]``, the pmf and the CDF, exact (SymPy numbers), at a requested number of
mpmath digits, and in float64.

A mass comes from the law's closed-form pmf when it has one (compiled once, with the parameters as arguments),
else from the Taylor coefficients of the PGF at 0 (SymPy's ring series, else ``sympy.series``; cached and grown
at least twofold). :class:`MassesMixin` is mixed into :class:`~symsel.distributions.core.Distribution` and reads
its fields ``pgf``, ``values``, ``pmf_symbolic``, ``support_min``/``support_max`` and ``stable_form``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

import mpmath
import numpy as np
import sympy

from symsel.distributions.expressions import DEFAULT_DPS, _evaluate, k, z
from symsel.distributions.params import _as_count
from symsel.errors import SymselError

#: the largest integer exponent of a non-trivial base that :meth:`MassesMixin.p0_mp` lets SymPy raise exactly.
EXACT_POWER_MAX = 10_000


def _exact_power_too_large(expr: sympy.Expr) -> bool:
    """Whether ``expr`` at ``z = 0`` would make SymPy form a huge exact rational: a power with an integer exponent
    above :data:`EXACT_POWER_MAX` of a base other than ``z`` (``binomial(n=10**7, p=1e-300)``'s
    ``(1 - p + p z)^n`` at 0 is a rational of three billion digits). Such a value is taken from mpmath instead."""
    return any(isinstance(node, sympy.Pow) and node.exp.is_Integer and abs(int(node.exp)) > EXACT_POWER_MAX
               and node.base != z for node in sympy.preorder_traversal(expr))


class MassesMixin:
    """``P[K = k]`` and ``P[K <= k]`` of a :class:`~symsel.distributions.core.Distribution`."""

    if TYPE_CHECKING:  # what it reads from Distribution and EvaluationMixin
        name: str
        values: Mapping[sympy.Symbol, sympy.Expr]
        pmf_symbolic: sympy.Expr | None
        support_min: int
        support_max: int | None
        stable_form: sympy.Expr | None

        @property
        def pgf(self) -> sympy.Expr: ...

        @property
        def spec(self) -> str: ...

        def _number(self, expr: sympy.Expr) -> sympy.Expr: ...

        def phi_mp(self, x: Any, dps: int = DEFAULT_DPS) -> mpmath.mpf: ...

    @cached_property
    def p0(self) -> float:
        """``P[K = 0] = phi(0)``."""
        return float(self.p0_mp(DEFAULT_DPS))

    def p0_mp(self, dps: int = DEFAULT_DPS) -> mpmath.mpf:
        """``P[K = 0] = phi(0)`` at ``dps`` digits: SymPy's certified value of the exact ``phi(0)`` where it has
        one (a mixture's summed PGF, ``-10/19 + 1/(2(1 - z/2)) + 1/(38(1 - 19z/20))``, cancels to 0 at ``z = 0``
        and the float form gave ``-4e-32``), else the mpmath value, never below 0 (it is a probability)."""
        if self.stable_form is None and not _exact_power_too_large(self.pgf):
            try:
                return _evaluate(self._number(self.pgf.subs(z, 0)), dps, "P[K = 0]", self.spec)
            except SymselError:
                pass
        with mpmath.workdps(dps):
            return max(mpmath.mpf(0), self.phi_mp(0, dps))

    @cached_property
    def _pmf_closed(self) -> Callable | None:
        """The closed-form pmf compiled with ``k`` and the parameters as arguments: substituting the values first
        lets SymPy fold them into exact numbers (binomial(10**6, 1/2) gives 2**-1000000, millions of digits)."""
        if self.pmf_symbolic is None:
            return None
        fresh = {symbol: sympy.Dummy(f"param{i}") for i, symbol in enumerate(self.values)}  # `gamma` is mpmath's too
        return sympy.lambdify([k, *fresh.values()], self.pmf_symbolic.subs(fresh), "mpmath")

    def _parameters_mp(self, dps: int) -> tuple[mpmath.mpf, ...]:
        """The parameter values at ``dps`` digits (cached per precision)."""
        cache = self.__dict__.setdefault("_parameters_mp_cache", {})
        if dps not in cache:
            with mpmath.workdps(dps):
                cache[dps] = tuple(mpmath.mpf(sympy.N(v, dps)) for v in self.values.values())
        return cache[dps]

    def pmf_exact(self, kk: int) -> sympy.Expr:
        """``P[K = kk]`` as an exact SymPy number (closed form, else a series coefficient)."""
        kk = _as_count(kk, "k", self.name)
        if kk < self.support_min or (self.support_max is not None and kk > self.support_max):
            return sympy.Integer(0)
        if self.pmf_symbolic is not None:
            return sympy.simplify(self.pmf_symbolic.subs(self.values).subs(k, kk))
        return sympy.simplify(self._series_coefficients(kk + 1)[kk])

    def _series_coefficients(self, n_terms: int) -> list[sympy.Expr]:
        """The first (at least) ``n_terms`` Taylor coefficients of the PGF at 0, exact and unsimplified. The
        cache grows at least twofold, so reading the pmf term by term expands the series O(log n) times."""
        cached = getattr(self, "_series_cache", None)
        if cached is not None and len(cached) >= n_terms:
            return cached
        if cached is not None:
            n_terms = max(n_terms, 2 * len(cached))
        coeffs = _monomial_coefficients(self.pgf, n_terms)
        if coeffs is None:
            expansion = _ring_series(self.pgf, n_terms)
            if expansion is None:
                expansion = sympy.series(self.pgf, z, 0, n_terms).removeO()
            coeffs = [expansion.coeff(z, i) for i in range(n_terms)]
        object.__setattr__(self, "_series_cache", coeffs)
        return coeffs

    def pmf_mp(self, kk: int, dps: int = DEFAULT_DPS) -> mpmath.mpf:
        """``P[K = kk]`` at ``dps`` digits."""
        kk = _as_count(kk, "k", self.name)
        if kk < self.support_min or (self.support_max is not None and kk > self.support_max):
            return mpmath.mpf(0)
        with mpmath.workdps(dps):
            if self._pmf_closed is not None:  # k as an mpf: 10**(-k) with a Python int k would be a float64
                return +self._pmf_closed(mpmath.mpf(kk), *self._parameters_mp(dps + 10))
            return mpmath.mpf(sympy.N(self._series_coefficients(kk + 1)[kk], dps + 5))

    def pmf(self, kk: Any) -> np.ndarray | float:
        """``P[K = kk]`` in float64, elementwise over integer arrays."""
        arr = np.asarray(kk)
        out = np.array([float(self.pmf_mp(int(v))) for v in arr.ravel()]).reshape(arr.shape)
        return float(out) if out.ndim == 0 else out

    def cdf(self, kk: Any) -> np.ndarray | float:
        """``P[K <= kk]`` in float64, elementwise (summed at 30 digits)."""
        arr = np.asarray(kk)
        out = np.array([float(self.cdf_mp(int(v))) for v in arr.ravel()]).reshape(arr.shape)
        return float(out) if out.ndim == 0 else out

    def cdf_mp(self, kk: int, dps: int = DEFAULT_DPS) -> mpmath.mpf:
        """``P[K <= kk]`` at ``dps`` digits."""
        if kk < 0:
            return mpmath.mpf(0)
        with mpmath.workdps(dps):
            return mpmath.fsum(self.pmf_mp(i, dps) for i in range(self.support_min, int(kk) + 1))


def _monomial_coefficients(pgf: sympy.Expr, n_terms: int) -> list[sympy.Expr] | None:
    """The first ``n_terms`` Taylor coefficients of a PGF written as a number times a sum of monomials ``c z^j``
    (a truncated law's polynomial, a polynomial typed as a ``pgf`` expression), read off term by term, exactly and
    without expanding anything; None for any other form. A polynomial of degree at least ``n_terms`` is where ring
    series gives up (its answer would not be a polynomial below that degree) and ``sympy.series`` is slow."""
    factor, rest = pgf.as_independent(z, as_Add=False)
    coeffs: list[sympy.Expr] = [sympy.Integer(0)] * n_terms
    for term in sympy.Add.make_args(rest):
        number, monomial = term.as_independent(z, as_Add=False)
        if monomial == 1:
            power = 0
        elif monomial == z:
            power = 1
        elif monomial.is_Pow and monomial.base == z and monomial.exp.is_Integer and monomial.exp > 0:
            power = int(monomial.exp)
        else:
            return None
        if power < n_terms:
            coeffs[power] += factor * number
    return coeffs


def _ring_series(pgf: sympy.Expr, n_terms: int) -> sympy.Expr | None:
    """The Taylor polynomial of ``pgf`` at 0 to ``z^(n_terms-1)`` by SymPy's ring series (milliseconds where
    ``sympy.series`` takes minutes, e.g. ``exp(exp(z) - E)``), or None when it does not apply. Accepted only if
    it matches the PGF at z = 1/100 (an 80-digit float) to 25 digits (the tail of a PGF's series there is below
    1e-30)."""
    from sympy.polys.ring_series import rs_series

    try:
        poly = rs_series(pgf, z, n_terms)
        expansion = sympy.expand(poly.as_expr() if hasattr(poly, "as_expr") else poly)
        if (not isinstance(expansion, sympy.Expr) or expansion.free_symbols - {z} or not expansion.is_polynomial(z)
                or sympy.degree(expansion, z) >= n_terms):
            return None
        # a 80-digit float point, not the rational 1/100: exp(z**9999999 - 1) at z = 1/100 exactly is a rational
        # with twenty million digits (a check that would not end)
        point = sympy.Float("0.01", 80)
        gap = sympy.N(pgf.subs(z, point) - expansion.subs(z, point), 60)
        return expansion if gap.is_number and abs(complex(gap)) < 1e-25 else None
    except Exception:  # ring series rejects many expressions; sympy.series is the fallback
        return None
