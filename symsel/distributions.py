"""Distributions of the number of runs K, each held as one symbolic probability generating function.

A :class:`Distribution` is an immutable value: a SymPy expression ``phi(z) = E[z^K]`` whose free
symbols other than ``z`` are named parameters, together with their values. Everything else about
``K`` -- its derivative ``phi'``, mean, variance, pmf, CDF, the utility quantities of
Papernot & Steinke (ICLR 2022) Section 3.6 / eq. (8) and Appendix A.2.1, a Chernoff tail bound and a
sampler -- is derived from ``phi``. A new law of ``K`` is one PGF; nothing else needs to change
for the bounds of :mod:`symsel.bounds` to apply to it.

Numeric evaluation is offered in two flavours, both derived once from the symbolic form:

* float64, vectorized over numpy arrays (``phi``, ``dphi``);
* mpmath at an explicitly requested number of decimal digits (``phi_mp``, ``dphi_mp``). The
  precision is set with ``mpmath.workdps`` around each call and never leaks out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import mpmath
import numpy as np
import sympy
from sympy.codegen.cfunctions import expm1, log1p
from sympy.core.evalf import PrecisionExhausted

from symsel.errors import ParameterError, SymselError

z = sympy.Symbol("z")
k = sympy.Symbol("k", integer=True, nonnegative=True)

Number = int | float | sympy.Expr
DEFAULT_DPS = 30
_SERIES_TERMS_CHECKED = 16
_SAMPLER_TAIL = 1e-15


def exact_number(value: Any, name: str, where: str) -> sympy.Expr:
    """Turn a user number into an exact SymPy number (floats by their shortest decimal repr)."""
    if isinstance(value, bool):
        raise ParameterError(name, value, "a real number", where)
    if isinstance(value, sympy.Expr):
        number = value
    elif isinstance(value, int | np.integer):
        number = sympy.Integer(int(value))
    elif isinstance(value, float | np.floating):
        if not math.isfinite(float(value)):
            raise ParameterError(name, value, "a finite real number", where)
        number = sympy.Rational(repr(float(value)))
    elif isinstance(value, mpmath.mpf):
        number = sympy.Float(value, mpmath.mp.dps)
    else:
        raise ParameterError(name, value, "a real number", where)
    if not number.is_number or number.is_real is False or number.has(sympy.zoo, sympy.oo, sympy.nan):
        raise ParameterError(name, value, "a finite real number", where)
    return number


def _check(condition: bool, name: str, value: Any, allowed: str, where: str) -> None:
    if not condition:
        raise ParameterError(name, _plain(value), allowed, where)


def _plain(value: Any) -> Any:
    """A printable form of a parameter value (floats for SymPy numbers)."""
    if isinstance(value, sympy.Integer):
        return int(value)
    if isinstance(value, sympy.Expr) and value.is_number:
        return float(value)
    return value

FAMILY_PARAMETERS: dict[str, tuple[str, ...]] = {
    "point": ("k",),
    "tnb": ("eta", "gamma"),
    "binomial": ("n", "p"),
    "poisson": ("mu",),
}
"""The families that papers give closed forms for, and their parameters (:class:`Family`)."""


@dataclass(frozen=True)
class Family:
    """A known family of laws of ``K``, with exact parameter values.

    * ``point``: ``phi(z) = z^k`` (``k`` fixed runs);
    * ``tnb``: the truncated negative binomial ``D_{eta,gamma}`` of Papernot & Steinke, Definition 1
      (``eta = 0`` logarithmic, ``eta = 1`` geometric);
    * ``binomial``: ``(1 - p + p z)^n`` with ``0 < p < 1`` (``p = 1`` is the point mass ``k = n``);
    * ``poisson``: ``exp(mu (z - 1))``.

    Attributes:
        name: one of :data:`FAMILY_PARAMETERS`.
        params: parameter name -> exact SymPy number.
    """

    name: str
    params: Mapping[str, sympy.Expr]

    def __post_init__(self) -> None:
        if self.name not in FAMILY_PARAMETERS:
            raise ParameterError("name", self.name, "one of " + ", ".join(FAMILY_PARAMETERS), "Family")
        if tuple(self.params) != FAMILY_PARAMETERS[self.name]:
            raise ParameterError(
                "params", list(self.params), f"exactly {', '.join(FAMILY_PARAMETERS[self.name])}", "Family"
            )
        object.__setattr__(self, "params", {n: sympy.sympify(v) for n, v in self.params.items()})

    def __hash__(self) -> int:
        return hash((self.name, tuple(self.params.items())))

    def floats(self) -> dict[str, float]:
        """The parameters as floats."""
        return {n: float(v) for n, v in self.params.items()}


@dataclass(frozen=True, eq=False)
class Distribution:
    """The law of the number of runs ``K``, held as its PGF ``phi(z) = E[z^K]``.

    Attributes:
        name: family name, as used in spec strings.
        pgf_symbolic: ``phi`` as a SymPy expression in ``z`` and the parameter symbols.
        values: the parameter symbols and their exact values.
        pmf_symbolic: optional closed form of ``P[K = k]`` in the symbol ``k`` (and parameters),
            valid for ``k >= support_min``; below ``support_min`` the pmf is 0.
        support_min: the smallest ``k`` with positive mass, when known (0 otherwise).
        support_max: the largest possible ``k`` (``None`` when unbounded).
        sampler: optional fast sampler ``(rng, size) -> ndarray``; otherwise inverse-CDF sampling.
        label: the spec string of the distribution.
        moments_closed: optional known closed forms ``(mean, variance)`` in the parameters, for
            families whose PGF is too large for SymPy to simplify quickly (the tests check them
            against brute-force sums of the pmf).
        stable_form: optional expression equal to ``pgf_symbolic`` written with ``expm1``/``log1p``
            so that numeric evaluation does not cancel (used by the truncated negative binomial
            for ``eta`` near 0).
        known_family: the :class:`Family` when the constructor knows it (a fast path for
            :attr:`family`; user PGFs leave it ``None`` and are recognized from the PGF).
    """

    name: str
    pgf_symbolic: sympy.Expr
    values: Mapping[sympy.Symbol, sympy.Expr] = field(default_factory=dict)
    pmf_symbolic: sympy.Expr | None = None
    support_min: int = 0
    support_max: int | None = None
    sampler: Callable[[np.random.Generator, int], np.ndarray] | None = field(default=None, repr=False)
    label: str | None = None
    moments_closed: tuple[sympy.Expr, sympy.Expr] | None = None
    stable_form: sympy.Expr | None = field(default=None, repr=False)
    truncation_of: tuple[Distribution, int] | None = field(default=None, repr=False)
    log_dpgf_form: sympy.Expr | None = field(default=None, repr=False)
    known_family: Family | None = field(default=None, repr=False)

    @cached_property
    def family(self) -> Family | None:
        """The known family this law belongs to (point, truncated negative binomial, binomial,
        Poisson), recognized from the PGF itself (:func:`recognize_family`), so that a law typed as
        ``pgf(expr=...)``, ``pmf(...)``, a one-component mixture or a compound gets the same closed
        forms as the named constructor. ``None`` when no known family matches (always safe)."""
        if self.known_family is not None:
            return self.known_family
        return recognize_family(self)

    # ----------------------------------------------------------------- symbolic side
    @cached_property
    def pgf(self) -> sympy.Expr:
        """``phi(z)`` with the parameter values substituted (exact)."""
        return self.pgf_symbolic.subs(self.values)

    @cached_property
    def dpgf_symbolic(self) -> sympy.Expr:
        """``phi'(z)``, symbolic in the parameters."""
        return _simplify(_diff(self.pgf_symbolic))

    @cached_property
    def dpgf(self) -> sympy.Expr:
        """``phi'(z)`` with the parameter values substituted (differentiated, not simplified:
        simplification can introduce removable singularities such as ``(z^6 + z)/z``)."""
        return _diff(self.pgf)

    @cached_property
    def mean_symbolic(self) -> sympy.Expr:
        """``E[K] = phi'(1)`` in simplified closed form."""
        if self.moments_closed is not None:
            return self.moments_closed[0]
        return _simplify(_at_one(_diff(self.pgf_symbolic)))

    @cached_property
    def variance_symbolic(self) -> sympy.Expr:
        """``Var[K] = phi''(1) + phi'(1) - phi'(1)^2`` in simplified closed form."""
        if self.moments_closed is not None:
            return self.moments_closed[1]
        d1 = _at_one(_diff(self.pgf_symbolic))
        d2 = _at_one(_diff(self.pgf_symbolic, 2))
        return _simplify(d2 + d1 - d1**2)

    @property
    def parameters(self) -> dict[str, Any]:
        """Parameter names and values, as plain Python numbers."""
        return {str(s): _plain(v) for s, v in self.values.items()}

    @property
    def spec(self) -> str:
        """A spec string that rebuilds this distribution (when it is a named family)."""
        if self.label:
            return self.label
        args = ", ".join(f"{n}={v!r}" for n, v in self.parameters.items())
        return f"{self.name}({args})"

    def __repr__(self) -> str:
        return f"Distribution({self.spec})"

    # ----------------------------------------------------------------- exact numbers
    def _number(self, expr: sympy.Expr) -> sympy.Expr:
        return expr.subs(self.values)

    @cached_property
    def mean(self) -> float:
        """``E[K]`` as a float."""
        return float(self.mean_mp(DEFAULT_DPS))

    @cached_property
    def variance(self) -> float:
        """``Var[K]`` as a float."""
        return float(self.variance_mp(DEFAULT_DPS))

    def variance_mp(self, dps: int = DEFAULT_DPS) -> mpmath.mpf:
        """``Var[K]`` at ``dps`` decimal digits."""
        if self.stable_form is not None:
            with mpmath.workdps(dps + 10):
                d1, d2 = self._stable_derivative_at_one(1), self._stable_derivative_at_one(2)
                with mpmath.workdps(dps):
                    return +(d2 + d1 - d1**2)
        return _evaluate(self._number(self.variance_symbolic), dps, "variance", self.spec)

    def mean_mp(self, dps: int = DEFAULT_DPS) -> mpmath.mpf:
        """``E[K]`` at ``dps`` decimal digits."""
        if self.stable_form is not None:
            with mpmath.workdps(dps + 10):
                value = self._stable_derivative_at_one(1)
            with mpmath.workdps(dps):
                return +value
        return _evaluate(self._number(self.mean_symbolic), dps, "mean", self.spec)

    def _stable_derivative_at_one(self, order: int) -> mpmath.mpf:
        """``phi^(order)(1)`` from the cancellation-free form, at the current precision."""
        cache = self.__dict__.setdefault("_stable_derivatives", {})
        if order not in cache:
            cache[order] = sympy.lambdify([z, *self.values], sympy.diff(self.stable_form, z, order), "mpmath")
        return cache[order](mpmath.mpf(1), *self._args_mp())

    @cached_property
    def p0(self) -> float:
        """``P[K = 0] = phi(0)``."""
        return float(self.phi_mp(0, DEFAULT_DPS))

    # ----------------------------------------------------------------- numeric evaluators
    def _lambdify(self, derivative: bool, module: str) -> Callable:
        """Compile ``phi`` (or ``phi'``) once. With a ``stable_form`` the parameters stay
        arguments, so ``expm1``/``log1p`` are evaluated at run time instead of being folded by
        SymPy into a cancelling ``exp(x) - 1``; otherwise the values are substituted."""
        if self.stable_form is None:
            expr = self.dpgf if derivative else self.pgf
            if expr.is_Add and len(expr.args) > _HORNER_MIN_TERMS:
                coeffs = _monomials(expr)
                if coeffs is not None:
                    return _horner(coeffs, module)
            return sympy.lambdify([z], expr, module)
        expr = sympy.diff(self.stable_form, z) if derivative else self.stable_form
        return sympy.lambdify([z, *self.values], expr, module)

    @cached_property
    def _phi_np(self) -> Callable:
        return self._lambdify(False, "numpy")

    @cached_property
    def _dphi_np(self) -> Callable:
        return self._lambdify(True, "numpy")

    @cached_property
    def _phi_mpf(self) -> Callable:
        return self._lambdify(False, "mpmath")

    @cached_property
    def _dphi_mpf(self) -> Callable:
        return self._lambdify(True, "mpmath")

    def _args_float(self) -> tuple[float, ...]:
        return () if self.stable_form is None else tuple(float(v) for v in self.values.values())

    def _args_mp(self) -> tuple[mpmath.mpf, ...]:
        """Parameter values at the current mpmath precision (call inside ``workdps``)."""
        if self.stable_form is None:
            return ()
        return tuple(mpmath.mpf(sympy.N(v, mpmath.mp.dps + 10)) for v in self.values.values())

    def phi(self, x: Any) -> np.ndarray:
        """``phi(x)`` in float64, vectorized over ``x``."""
        return _broadcast(lambda a: self._phi_np(a, *self._args_float()), x)

    def dphi(self, x: Any) -> np.ndarray:
        """``phi'(x)`` in float64, vectorized over ``x``."""
        return _broadcast(lambda a: self._dphi_np(a, *self._args_float()), x)

    def log_dphi(self, x: Any) -> np.ndarray:
        """``log phi'(x)`` in float64, vectorized; where float64 underflows (``phi' < 1e-280``) the
        value is recomputed with mpmath, so it is ``-inf`` only where ``phi'(x) = 0`` exactly."""
        arr = np.atleast_1d(np.asarray(x, dtype=float))
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.log_dpgf_form is not None:
                values = [float(v) for v in self.values.values()]
                out = np.asarray(self._log_dphi_np(arr, *values), dtype=float) + np.zeros_like(arr)
                redo = ~np.isfinite(out)  # the log form itself does not underflow
            else:
                out = np.log(self.dphi(arr))
                redo = ~np.isfinite(out) | (out < -645)
        for i in np.nonzero(redo)[0]:
            value = self.dphi_mp(arr[i], DEFAULT_DPS)
            out[i] = float(mpmath.log(value)) if value > 0 else -math.inf
        return out if np.ndim(x) else out[0]

    @cached_property
    def _log_dphi_np(self) -> Callable:
        return sympy.lambdify([z, *self.values], self.log_dpgf_form, "numpy")

    def phi_mp(self, x: Any, dps: int = DEFAULT_DPS) -> mpmath.mpf:
        """``phi(x)`` in mpmath at ``dps`` decimal digits (``x`` is converted at that precision)."""
        with mpmath.workdps(dps):
            return +self._phi_mpf(mpmath.mpf(x), *self._args_mp())

    def dphi_mp(self, x: Any, dps: int = DEFAULT_DPS) -> mpmath.mpf:
        """``phi'(x)`` in mpmath at ``dps`` decimal digits."""
        with mpmath.workdps(dps):
            return +self._dphi_mpf(mpmath.mpf(x), *self._args_mp())

    # ----------------------------------------------------------------- pmf and CDF
    @cached_property
    def _pmf_closed(self) -> Callable | None:
        if self.pmf_symbolic is None:
            return None
        return sympy.lambdify(k, self.pmf_symbolic.subs(self.values), "mpmath")

    def pmf_exact(self, kk: int) -> sympy.Expr:
        """``P[K = kk]`` as an exact SymPy number (closed form, else a series coefficient)."""
        kk = _as_count(kk, "k", self.name)
        if kk < self.support_min or (self.support_max is not None and kk > self.support_max):
            return sympy.Integer(0)
        if self.pmf_symbolic is not None:
            return sympy.simplify(self.pmf_symbolic.subs(self.values).subs(k, kk))
        return self._series_coefficients(kk + 1)[kk]

    def _series_coefficients(self, n_terms: int) -> list[sympy.Expr]:
        cached = getattr(self, "_series_cache", None)
        if cached is not None and len(cached) >= n_terms:
            return cached
        expansion = sympy.series(self.pgf, z, 0, n_terms).removeO()
        coeffs = [sympy.simplify(expansion.coeff(z, i)) for i in range(n_terms)]
        object.__setattr__(self, "_series_cache", coeffs)
        return coeffs

    def pmf_mp(self, kk: int, dps: int = DEFAULT_DPS) -> mpmath.mpf:
        """``P[K = kk]`` at ``dps`` digits."""
        kk = _as_count(kk, "k", self.name)
        if kk < self.support_min or (self.support_max is not None and kk > self.support_max):
            return mpmath.mpf(0)
        with mpmath.workdps(dps):
            if self._pmf_closed is not None:
                return +self._pmf_closed(kk)
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

    # ----------------------------------------------------------------- utility (P&S Sec. 3.6)
    def expected_quantile(self, dps: int = DEFAULT_DPS) -> float:
        """``E[K/(K+1)] = 1 - int_0^1 phi(x) dx``: expected quantile of the best of ``K`` runs
        of a continuous score (Papernot & Steinke, eq. (8))."""
        return float(self.expected_quantile_mp(dps))

    def expected_quantile_mp(self, dps: int = DEFAULT_DPS) -> mpmath.mpf:
        """:meth:`expected_quantile` at ``dps`` digits (tanh-sinh quadrature)."""
        with mpmath.workdps(dps + 10):
            m = max(float(self.mean), 1.0)
            # phi varies on the scale 1/m near x = 1: give the quadrature those breakpoints.
            points = sorted({0.0, *(1 - 10.0**-j for j in range(1, 1 + int(math.log10(m)) + 2)), 1.0})
            args = self._args_mp()
            integral = mpmath.quad(lambda x: self._phi_mpf(x, *args), points)
            with mpmath.workdps(dps):
                return +(1 - integral)

    def success_probability(self, candidates: float) -> float:
        """``1 - phi(1 - 1/c)``: probability that the best run is the single good candidate among
        ``c`` equally likely ones is found at least once (Papernot & Steinke, Appendix A.2.1)."""
        c = float(candidates)
        if not c >= 1:
            raise ParameterError("candidates", candidates, "c >= 1", self.name)
        return float(1 - self.phi_mp(1 - mpmath.mpf(1) / mpmath.mpf(c)))

    def tail_bound(self, kk: float) -> float:
        """Chernoff bound ``P[K >= k] <= inf_{t >= 0} phi(e^t) e^{-t k}`` (any ``t`` is valid;
        the infimum is approximated from above by a bounded scalar search)."""
        from scipy.optimize import minimize_scalar

        kk = float(kk)
        if not kk >= 0:
            raise ParameterError("k", kk, "k >= 0", self.name)

        def log_bound(t: float) -> float:
            return math.log(self._safe_phi(math.exp(t))) - t * kk

        t_max = self._radius_log()
        res = minimize_scalar(log_bound, bounds=(0.0, t_max), method="bounded", options={"xatol": 1e-10})
        best = min(0.0, log_bound(float(res.x)) if math.isfinite(res.fun) else 0.0)
        return math.exp(best)

    def _radius_log(self) -> float:
        """Largest ``t`` (capped at 50) with ``phi(e^t)`` finite: log of the radius of convergence."""
        lo, hi = 0.0, 50.0
        if math.isfinite(self._safe_phi(math.exp(hi))):
            return hi
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            if math.isfinite(self._safe_phi(math.exp(mid))):
                lo = mid
            else:
                hi = mid
        return lo

    def _safe_phi(self, x: float) -> float:
        """``phi(x)`` as a float, ``inf`` where it is undefined or not positive (beyond the radius)."""
        try:
            value = self.phi_mp(x, 20)
        except (ZeroDivisionError, ValueError, OverflowError):
            return math.inf
        if not isinstance(value, mpmath.mpf) or not mpmath.isfinite(value) or value <= 0:
            return math.inf
        return float(value)

    # ----------------------------------------------------------------- sampling
    def rvs(self, size: int | tuple[int, ...] = 1, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Draw ``size`` samples of ``K`` with a numpy ``Generator`` (or a seed)."""
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        count = int(np.prod(size))
        draws = self.sampler(gen, count) if self.sampler is not None else self._inverse_sample(gen, count)
        return np.asarray(draws, dtype=np.int64).reshape(size)

    def _inverse_sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        table = self._inverse_cdf_table
        draws = self.support_min + np.searchsorted(table, rng.random(n), side="right")
        return np.minimum(draws, self.support_min + len(table) - 1)

    @cached_property
    def _inverse_cdf_table(self) -> np.ndarray:
        """Cumulative probabilities from ``support_min`` until the tail is below 1e-15."""
        probs: list[float] = []
        total = mpmath.mpf(0)
        i = self.support_min
        limit = self.support_max if self.support_max is not None else 10**7
        with mpmath.workdps(DEFAULT_DPS):
            while i <= limit:
                p = self.pmf_mp(i)
                total += p
                probs.append(float(total))
                if 1 - total < _SAMPLER_TAIL:
                    break
                i += 1
        table = np.array(probs)
        table[-1] = 1.0
        return table


# --------------------------------------------------------------------- helpers
def _at_one(expr: sympy.Expr) -> sympy.Expr:
    value = expr.subs(z, 1)
    if value.has(sympy.nan, sympy.zoo) or value.is_finite is False:
        value = sympy.limit(expr, z, 1, "-")
    return value


_SIMPLIFY_MAX_OPS = 400


def _simplify(expr: sympy.Expr) -> sympy.Expr:
    """``simplify`` for expressions small enough that SymPy answers quickly; large ones (long
    polynomials of truncations and mixtures) are returned as they are."""
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
        floats = np.array([float(c) for c in exact])
        return lambda x: np.polyval(floats, np.asarray(x, dtype=float))
    cache: dict[int, list] = {}

    def evaluate(x: Any) -> mpmath.mpf:
        prec = mpmath.mp.prec
        if prec not in cache:
            cache[prec] = [mpmath.mpf(sympy.N(c, mpmath.mp.dps + 5)) for c in exact]
        return mpmath.polyval(cache[prec], x)

    return evaluate


def _diff(expr: sympy.Expr, order: int = 1) -> sympy.Expr:
    """``d^order expr / dz^order``; a long polynomial ``sum_j c_j z^j`` (pmfs, truncations) is
    differentiated term by term, which is much faster than ``sympy.diff`` on it."""
    coeffs = _monomials(expr, numeric=False) if expr.is_Add and len(expr.args) > 50 else None
    if coeffs is None:
        return sympy.diff(expr, z, order)
    return sympy.Add(*[c * sympy.ff(j, order) * z ** (j - order) for j, c in coeffs.items() if j >= order])


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


def _as_count(value: Any, name: str, where: str) -> int:
    if isinstance(value, bool) or int(value) != value or value < 0:
        raise ParameterError(name, value, "a non-negative integer", where)
    return int(value)


def _symbols(*names: str) -> tuple[sympy.Symbol, ...]:
    return tuple(sympy.Symbol(n, real=True) for n in names)


# --------------------------------------------------------------------- family recognition
#: non-polynomial PGFs with more expression nodes than this are not recognized (returns ``None``).
_RECOGNIZE_MAX_NODES = 300
#: at most this many nodes go through ``sympy.simplify`` for the symbolic confirmation.
_SIMPLIFY_CONFIRM_MAX_NODES = 120
#: polynomial PGFs with more terms than this are not recognized.
_RECOGNIZE_MAX_TERMS = 5001
_RECOGNIZE_DPS = 50
_RECOGNIZE_POINTS = ("0", "0.0625", "0.1875", "0.3", "0.41", "0.5", "0.61", "0.7", "0.83", "0.9", "0.97", "1")
_RECOGNIZE_ERRORS = (ArithmeticError, ValueError, TypeError, AttributeError, SymselError, PrecisionExhausted)


def family_pgf(family: Family) -> sympy.Expr:
    """The PGF of a :class:`Family` in ``z`` with its exact parameter values."""
    par = family.params
    if family.name == "point":
        return z ** par["k"]
    if family.name == "poisson":
        return sympy.exp(par["mu"] * (z - 1))
    if family.name == "binomial":
        return (1 - par["p"] + par["p"] * z) ** par["n"]
    eta, gamma = par["eta"], par["gamma"]
    if eta == 0:
        return sympy.log(1 - (1 - gamma) * z) / sympy.log(gamma)
    return ((1 - (1 - gamma) * z) ** (-eta) - 1) / (gamma ** (-eta) - 1)


def recognize_family(dist: Distribution) -> Family | None:
    """The :class:`Family` whose PGF equals ``dist.pgf``, else ``None``.

    Polynomials (``sum_k c_k z^k`` or ``(a + b z)^n``) are matched exactly against the point mass
    and the binomial (``p`` from the two top coefficients, then every coefficient compared as an
    exact number). Other PGFs are candidates for Poisson and the truncated negative binomial, whose
    ``phi'/phi''`` is affine in ``z`` (``1/mu``; ``(1 - (1-gamma) z)/((eta+1)(1-gamma))``): its
    values at ``z = 1/4, 3/4`` (50 digits) give the parameters, which are rounded to nearby
    rationals; the candidate must then agree with ``phi`` at twelve points of [0, 1] to 1e-40
    and ``sympy.simplify`` must reduce the difference to 0. The work is bounded by the size of
    the expression (larger ones give ``None``), and ``None`` is always a safe answer: the generic
    bounds apply to every law.
    """
    pgf = dist.pgf
    if pgf.free_symbols - {z}:
        return None
    try:
        if _node_count(pgf, _RECOGNIZE_MAX_NODES) > _RECOGNIZE_MAX_NODES:
            if dist.support_max is None and not pgf.is_Add:
                return None
            coeffs = _monomials(pgf)
            return None if coeffs is None else _recognize_polynomial(coeffs)
        if dist.support_max is not None or pgf.is_polynomial(z):
            return _recognize_finite(pgf)
        return _recognize_analytic(dist)
    except _RECOGNIZE_ERRORS:
        return None


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


def _recognize_finite(pgf: sympy.Expr) -> Family | None:
    if pgf.is_Pow and pgf.exp.is_Integer and pgf.exp >= 1:
        base = _monomials(pgf.base)
        if base is not None and set(base) <= {0, 1} and 1 in base:
            a, b, n = base.get(0, sympy.Integer(0)), base[1], int(pgf.exp)
            if (a + b - 1).is_zero:
                if b == 1:
                    return Family("point", {"k": sympy.Integer(n)})
                return Family("binomial", {"n": sympy.Integer(n), "p": b})
            return None
    coeffs = _monomials(pgf)
    if coeffs is None:
        # a small polynomial written otherwise (a product, a mixture of powers): expand it when its
        # degree is small.
        if max((int(p.exp) for p in pgf.atoms(sympy.Pow) if p.exp.is_Integer), default=1) > 200:
            return None
        coeffs = _monomials(sympy.expand(pgf))
        if coeffs is None:
            return None
    return _recognize_polynomial(coeffs)


def _recognize_polynomial(coeffs: dict[int, sympy.Expr]) -> Family | None:
    """Point mass or binomial, decided by comparing every coefficient exactly."""
    if len(coeffs) == 1:
        ((j, c),) = coeffs.items()
        return Family("point", {"k": sympy.Integer(j)}) if j >= 1 and c == 1 else None
    n = max(coeffs)
    if set(coeffs) != set(range(n + 1)):
        return None
    top, below = coeffs[n], coeffs[n - 1]
    p = n * top / (below + n * top)  # c_{n-1}/c_n = n (1-p)/p
    q = 1 - p
    if not (p.is_positive and q.is_positive):
        return None
    if not (coeffs[0] - q**n).is_zero:
        return None
    ratio = p / q
    term = q**n
    for j in range(n + 1):
        if not (coeffs[j] - term).is_zero:
            return None
        term = term * (n - j) / (j + 1) * ratio
    return Family("binomial", {"n": sympy.Integer(n), "p": p})


def _exactify(value: mpmath.mpf) -> sympy.Expr:
    """A rational with denominator <= 1e12 within 1e-40 (relative) of ``value``, else a 50-digit Float."""
    from fractions import Fraction

    guess = Fraction(mpmath.nstr(value, _RECOGNIZE_DPS + 10)).limit_denominator(10**12)
    if abs(value - mpmath.mpf(guess.numerator) / guess.denominator) <= mpmath.mpf("1e-40") * max(1, abs(value)):
        return sympy.Rational(guess.numerator, guess.denominator)
    return sympy.Float(value, _RECOGNIZE_DPS)


def _recognize_analytic(dist: Distribution) -> Family | None:
    dps = _RECOGNIZE_DPS + 20
    candidates = []
    with mpmath.workdps(dps):
        mean = dist.mean_mp(dps)
        if mpmath.isfinite(mean) and mean > 0:
            candidates.append(Family("poisson", {"mu": _exactify(mean)}))
        d2 = sympy.lambdify([z], _diff(dist.dpgf), "mpmath")
        x1, x2 = mpmath.mpf(1) / 4, mpmath.mpf(3) / 4
        psi1, psi2 = dist.dphi_mp(x1, dps) / d2(x1), dist.dphi_mp(x2, dps) / d2(x2)
        slope = (psi2 - psi1) / (x2 - x1)
        intercept = psi1 - slope * x1
        if slope < 0 and intercept > 0:
            s, c = -1 / slope, -slope / intercept
            if s > 0 and 0 < c < 1:
                candidates.append(Family("tnb", {"eta": _exactify(s - 1), "gamma": _exactify(1 - c)}))
    for family in candidates:
        template = family_pgf(family)
        if _agree_numerically(dist, template) and _agree_symbolically(dist.pgf, template):
            return family
    return None


def _agree_numerically(dist: Distribution, template: sympy.Expr) -> bool:
    fn = sympy.lambdify([z], template, "mpmath")
    with mpmath.workdps(_RECOGNIZE_DPS + 10):
        for x in _RECOGNIZE_POINTS:
            value = dist.phi_mp(mpmath.mpf(x), _RECOGNIZE_DPS + 10)
            if not abs(value - fn(mpmath.mpf(x))) <= mpmath.mpf("1e-40"):
                return False
    return True


def _agree_symbolically(expr: sympy.Expr, template: sympy.Expr) -> bool:
    difference = expr - template
    if difference == 0 or sympy.expand(difference) == 0:
        return True
    if _node_count(difference, _SIMPLIFY_CONFIRM_MAX_NODES) > _SIMPLIFY_CONFIRM_MAX_NODES:
        return False
    return sympy.simplify(difference) == 0



# --------------------------------------------------------------------- families
def point(k: int) -> Distribution:
    """A fixed number ``k >= 1`` of runs: ``phi(z) = z^k`` (naive repetition)."""
    kk = exact_number(k, "k", "point")
    _check(kk.is_integer and kk >= 1, "k", k, "an integer k >= 1", "point")
    kk_int = int(kk)
    ks = sympy.Symbol("k_runs", positive=True, integer=True)
    return Distribution(
        "point",
        z**ks,
        {ks: sympy.Integer(kk_int)},
        sympy.KroneckerDelta(k, ks),
        support_min=kk_int,
        support_max=kk_int,
        sampler=lambda rng, n: np.full(n, kk_int),
        label=f"point(k={kk_int})",
        known_family=Family("point", {"k": sympy.Integer(kk_int)}),
    )


def _tnb_mean_expr(eta: sympy.Expr, gamma: sympy.Expr) -> sympy.Expr:
    if eta == 0:
        return (1 / gamma - 1) / sympy.log(1 / gamma)
    return eta * (1 - gamma) / (gamma * (1 - gamma**eta))


def _solve_gamma_for_mean(eta: sympy.Expr, mean: sympy.Expr, where: str) -> sympy.Expr:
    """Solve ``E[K](eta, gamma) = mean`` for ``gamma`` at 60 digits. The mean decreases as
    ``gamma`` grows, so bisection in ``log gamma`` on a bracket is safe; 260 halvings shrink any
    bracket within ``[-1e6, 0]`` below 1e-70."""
    if eta == 1:
        return 1 / mean
    dps = 60
    with mpmath.workdps(dps + 10):
        e, target = mpmath.mpf(sympy.N(eta, dps + 10)), mpmath.mpf(sympy.N(mean, dps + 10))

        def mean_at(log_gamma: mpmath.mpf) -> mpmath.mpf:
            one_minus_g = -mpmath.expm1(log_gamma)  # 1 - gamma without cancellation near gamma = 1
            if e == 0:
                return one_minus_g / (mpmath.exp(log_gamma) * -log_gamma)
            return e * one_minus_g / (mpmath.exp(log_gamma) * -mpmath.expm1(e * log_gamma))

        lo, hi = mpmath.mpf(-1), mpmath.mpf(-1e-30)
        while mean_at(lo) < target:
            lo *= 2
            if lo < -1e6:
                raise ParameterError("mean", _plain(mean), "a mean reachable by this family", where)
        if mean_at(hi) > target:
            raise ParameterError(
                "mean", _plain(mean), f"mean > {float(mean_at(hi)):.6g} (the limit as gamma -> 1)", where
            )
        for _ in range(260):
            mid = (lo + hi) / 2
            if mean_at(mid) > target:
                lo = mid
            else:
                hi = mid
        return sympy.Float(mpmath.exp((lo + hi) / 2), dps)


#: the largest shape of a truncated negative binomial law (``gamma^-eta`` is held exactly).
TNB_MAX_ETA = 1000
#: the largest ``k_max`` of :func:`truncated` (its PGF is a polynomial with exact coefficients).
TRUNCATION_MAX_K = 1000


def tnb(eta: Number, gamma: Number | None = None, mean: Number | None = None) -> Distribution:
    """Truncated negative binomial ``D_{eta,gamma}`` (Papernot & Steinke, Definition 1).

    ``phi(z) = ((1 - (1-gamma) z)^(-eta) - 1) / (gamma^(-eta) - 1)`` for ``eta != 0`` and
    ``log(1 - (1-gamma) z) / log(gamma)`` for ``eta = 0`` (logarithmic); ``eta = 1`` is geometric.
    Support ``{1, 2, ...}``. Give either ``gamma`` in (0, 1) or the ``mean`` (gamma is then
    solved for at 60 digits).
    """
    where = "tnb"
    e = exact_number(eta, "eta", where)
    _check(-1 < e <= TNB_MAX_ETA, "eta", eta, f"-1 < eta <= {TNB_MAX_ETA} (exact arithmetic on gamma^-eta)", where)
    if (gamma is None) == (mean is None):
        raise ParameterError("gamma", gamma, "exactly one of gamma or mean", where)
    if mean is not None:
        mu = exact_number(mean, "mean", where)
        _check(mu > 1, "mean", mean, "mean > 1", where)
        g = _solve_gamma_for_mean(e, mu, where)
    else:
        g = exact_number(gamma, "gamma", where)
        _check(0 < g < 1, "gamma", gamma, "0 < gamma < 1", where)
    eta_s, gamma_s = _symbols("eta", "gamma")
    stable = None
    if e == 0:
        pgf = sympy.log(1 - (1 - gamma_s) * z) / sympy.log(gamma_s)
        log_dpgf = sympy.log((1 - gamma_s) / -sympy.log(gamma_s)) - log1p(-(1 - gamma_s) * z)
        pmf = (1 - gamma_s) ** k / (k * sympy.log(1 / gamma_s))
        values = {gamma_s: g}
        name = "logarithmic"
    else:
        pgf = ((1 - (1 - gamma_s) * z) ** (-eta_s) - 1) / (gamma_s ** (-eta_s) - 1)
        stable = expm1(-eta_s * log1p(-(1 - gamma_s) * z)) / expm1(-eta_s * sympy.log(gamma_s))
        log_dpgf = sympy.log(eta_s * (1 - gamma_s) / expm1(-eta_s * sympy.log(gamma_s))) - (eta_s + 1) * log1p(
            -(1 - gamma_s) * z
        )
        pmf = sympy.binomial(k + eta_s - 1, k) * (1 - gamma_s) ** k / (gamma_s ** (-eta_s) - 1)
        values = {eta_s: e, gamma_s: g}
        name = "geometric" if e == 1 else "tnb"
    gf = float(g)
    ef = float(e)

    def sample(rng: np.random.Generator, n: int) -> np.ndarray:
        if ef == 0:
            return rng.logseries(1 - gf, n)
        if ef == 1:
            return rng.geometric(gf, n)
        if ef > 0:  # a negative binomial conditioned on K != 0, by rejection
            out = np.empty(0, dtype=np.int64)
            while out.size < n:
                draw = rng.negative_binomial(ef, gf, max(2 * (n - out.size), 16))
                out = np.concatenate([out, draw[draw > 0]])
            return out[:n]
        return dist._inverse_sample(rng, n)

    # The label keeps what the user gave (gamma, or the mean gamma was solved from).
    given = f"mean={_plain(exact_number(mean, 'mean', where))!r}" if mean is not None else f"gamma={_plain(g)!r}"
    label = f"tnb(eta={_plain(e)!r}, {given})" if name == "tnb" else f"{name}({given})"
    dist = Distribution(
        name,
        pgf,
        values,
        pmf,
        support_min=1,
        sampler=None if ef < 0 else sample,
        label=label,
        stable_form=stable,
        log_dpgf_form=log_dpgf,
        known_family=Family("tnb", {"eta": e, "gamma": g}),
    )
    return dist


def logarithmic(gamma: Number | None = None, mean: Number | None = None) -> Distribution:
    """Logarithmic law: the truncated negative binomial with ``eta = 0``."""
    return tnb(0, gamma=gamma, mean=mean)


def geometric(gamma: Number | None = None, mean: Number | None = None) -> Distribution:
    """Geometric law on ``{1, 2, ...}`` with success probability ``gamma`` (mean ``1/gamma``):
    the truncated negative binomial with ``eta = 1``."""
    return tnb(1, gamma=gamma, mean=mean)


def poisson(mean: Number) -> Distribution:
    """Poisson law: ``phi(z) = exp(mean (z - 1))`` (Papernot & Steinke, Section 2.2)."""
    mu = exact_number(mean, "mean", "poisson")
    _check(mu > 0, "mean", mean, "mean > 0", "poisson")
    (mu_s,) = _symbols("mu")
    mf = float(mu)
    return Distribution(
        "poisson",
        sympy.exp(mu_s * (z - 1)),
        {mu_s: mu},
        sympy.exp(-mu_s) * mu_s**k / sympy.factorial(k),
        sampler=lambda rng, n: rng.poisson(mf, n),
        label=f"poisson(mean={_plain(mu)!r})",
        log_dpgf_form=sympy.log(mu_s) + mu_s * (z - 1),
        known_family=Family("poisson", {"mu": mu}),
    )


def binomial(n: int, p: Number) -> Distribution:
    """Binomial law ``Bin(n, p)``: ``phi(z) = (1 - p + p z)^n`` (Koskela et al., Section 5.2)."""
    nn = exact_number(n, "n", "binomial")
    _check(nn.is_integer and nn >= 1, "n", n, "an integer n >= 1", "binomial")
    pp = exact_number(p, "p", "binomial")
    _check(0 < pp <= 1, "p", p, "0 < p <= 1", "binomial")
    n_s = sympy.Symbol("n", positive=True, integer=True)
    (p_s,) = _symbols("p")
    ni, pf = int(nn), float(pp)
    return Distribution(
        "binomial",
        (1 - p_s + p_s * z) ** n_s,
        {n_s: nn, p_s: pp},
        sympy.binomial(n_s, k) * p_s**k * (1 - p_s) ** (n_s - k),
        support_max=ni,
        sampler=lambda rng, size: rng.binomial(ni, pf, size),
        label=f"binomial(n={ni}, p={_plain(pp)!r})",
        log_dpgf_form=sympy.log(n_s * p_s) + (n_s - 1) * log1p(p_s * (z - 1)),
        known_family=Family("point", {"k": nn}) if pp == 1 else Family("binomial", {"n": nn, "p": pp}),
    )


def negative_binomial(eta: Number, gamma: Number | None = None, mean: Number | None = None) -> Distribution:
    """Untruncated negative binomial: ``phi(z) = (gamma / (1 - (1-gamma) z))^eta``, ``eta > 0``
    (support includes 0; Papernot & Steinke, Appendix A.2). The mean is ``eta (1-gamma)/gamma``."""
    where = "negative_binomial"
    e = exact_number(eta, "eta", where)
    _check(e > 0, "eta", eta, "eta > 0", where)
    if (gamma is None) == (mean is None):
        raise ParameterError("gamma", gamma, "exactly one of gamma or mean", where)
    if mean is not None:
        mu = exact_number(mean, "mean", where)
        _check(mu > 0, "mean", mean, "mean > 0", where)
        g = e / (e + mu)
    else:
        g = exact_number(gamma, "gamma", where)
        _check(0 < g < 1, "gamma", gamma, "0 < gamma < 1", where)
    eta_s, gamma_s = _symbols("eta", "gamma")
    ef, gf = float(e), float(g)
    return Distribution(
        "negative_binomial",
        (gamma_s / (1 - (1 - gamma_s) * z)) ** eta_s,
        {eta_s: e, gamma_s: g},
        sympy.binomial(k + eta_s - 1, k) * (1 - gamma_s) ** k * gamma_s**eta_s,
        sampler=lambda rng, n: rng.negative_binomial(ef, gf, n),
        label=f"negative_binomial(eta={_plain(e)!r}, "
        + (f"mean={_plain(exact_number(mean, 'mean', where))!r})" if mean is not None else f"gamma={_plain(g)!r})"),
    )


def beta_binomial(n: int, a: Number, b: Number) -> Distribution:
    """Beta-binomial law: ``K ~ Bin(n, P)`` with ``P ~ Beta(a, b)``; ``phi`` is the polynomial
    ``sum_k C(n,k) B(k+a, n-k+b)/B(a,b) z^k`` (a law no paper's theorem covers)."""
    where = "beta_binomial"
    nn = exact_number(n, "n", where)
    _check(nn.is_integer and 1 <= nn <= 2000, "n", n, "an integer 1 <= n <= 2000", where)
    aa = exact_number(a, "a", where)
    _check(aa > 0, "a", a, "a > 0", where)
    bb = exact_number(b, "b", where)
    _check(bb > 0, "b", b, "b > 0", where)
    ni = int(nn)
    a_s, b_s = sympy.symbols("a b", positive=True)
    coeff = [
        sympy.binomial(ni, i) * sympy.rf(a_s, i) * sympy.rf(b_s, ni - i) / sympy.rf(a_s + b_s, ni)
        for i in range(ni + 1)
    ]
    pgf = sympy.Add(*[c * z**i for i, c in enumerate(coeff)])
    pmf = sympy.binomial(ni, k) * sympy.rf(a_s, k) * sympy.rf(b_s, ni - k) / sympy.rf(a_s + b_s, ni)
    af, bf = float(aa), float(bb)
    mean = ni * a_s / (a_s + b_s)
    return Distribution(
        where,
        pgf,
        {a_s: aa, b_s: bb},
        pmf,
        support_max=ni,
        sampler=lambda rng, size: rng.binomial(ni, rng.beta(af, bf, size)),
        moments_closed=(mean, mean * b_s * (a_s + b_s + ni) / ((a_s + b_s) * (a_s + b_s + 1))),
        label=f"beta_binomial(n={ni}, a={_plain(aa)!r}, b={_plain(bb)!r})",
    )


def two_point(L: int, s: Number) -> Distribution:
    """Two-point law ``P[K=1] = s``, ``P[K=L] = 1 - s`` (Xiang et al., eq. (21)):
    ``phi(z) = s z + (1 - s) z^L``."""
    where = "two_point"
    ll = exact_number(L, "L", where)
    _check(ll.is_integer and ll >= 2, "L", L, "an integer L >= 2", where)
    ss = exact_number(s, "s", where)
    _check(0 < ss < 1, "s", s, "0 < s < 1", where)
    L_s = sympy.Symbol("L", positive=True, integer=True)
    (s_s,) = _symbols("s")
    li, sf = int(ll), float(ss)
    pmf = s_s * sympy.KroneckerDelta(k, 1) + (1 - s_s) * sympy.KroneckerDelta(k, L_s)
    return Distribution(
        where,
        s_s * z + (1 - s_s) * z**L_s,
        {L_s: ll, s_s: ss},
        pmf,
        support_min=1,
        support_max=li,
        sampler=lambda rng, n: np.where(rng.random(n) < sf, 1, li),
        label=f"two_point(L={li}, s={_plain(ss)!r})",
    )


# --------------------------------------------------------------------- combinators
def _as_distribution(value: Any, name: str, where: str) -> Distribution:
    if not isinstance(value, Distribution):
        raise ParameterError(name, value, "a distribution of K, e.g. poisson(mean=3)", where)
    return value


def truncated(dist: Distribution, k_max: int) -> Distribution:
    """``K`` conditioned on ``K <= k_max`` (Papernot & Steinke, Appendix E.1): the PGF is the
    polynomial ``sum_{k <= k_max} P[K=k] z^k / P[K <= k_max]`` with exact coefficients."""
    where = "truncated"
    dist = _as_distribution(dist, "dist", where)
    km = exact_number(k_max, "k_max", where)
    _check(km.is_integer and 1 <= km <= TRUNCATION_MAX_K, "k_max", k_max,
           f"an integer 1 <= k_max <= {TRUNCATION_MAX_K} (the truncated PGF is expanded with exact coefficients)",
           where)
    ki = int(km)
    _check(ki >= dist.support_min, "k_max", k_max, f"k_max >= {dist.support_min} (the smallest value of K)", where)
    top = ki if dist.support_max is None else min(ki, dist.support_max)
    masses = [dist.pmf_exact(i) for i in range(top + 1)]
    total = sympy.Add(*masses)
    pgf = sympy.Add(*[m * z**i for i, m in enumerate(masses)]) / total
    return Distribution(
        where,
        pgf,
        {},
        support_min=dist.support_min,
        support_max=top,
        label=f"truncated(dist={dist.spec}, k_max={ki})",
        truncation_of=(dist, ki),
    )


def mixture(components: Sequence[tuple[Number, Distribution]]) -> Distribution:
    """A finite mixture ``sum_i w_i phi_i(z)`` (weights positive, summing to 1). A mixture of one
    component is that component itself."""
    where = "mixture"
    allowed = "a non-empty list of (weight, distribution) pairs"
    if not isinstance(components, list | tuple) or not components:
        raise ParameterError("components", components, allowed, where)
    for item in components:
        if not isinstance(item, list | tuple) or len(item) != 2:
            raise ParameterError("components", item, allowed, where)
        _as_distribution(item[1], "components", where)
    weights = [exact_number(w, "weight", where) for w, _ in components]
    for w in weights:
        _check(w > 0, "weight", w, "weights > 0", where)
    total = sympy.Add(*weights)
    _check(abs(float(total) - 1) < 1e-12, "weights", [_plain(w) for w in weights], "weights summing to 1", where)
    if len(components) == 1:
        return components[0][1]
    pgf = sympy.Add(*[(w / total) * d.pgf for w, (_, d) in zip(weights, components, strict=True)])
    dists = [d for _, d in components]
    inner = ", ".join(f"({_plain(w)!r}, {d.spec})" for w, d in zip(weights, dists, strict=True))
    maxes = [d.support_max for d in dists]
    return Distribution(
        where,
        pgf,
        {},
        support_min=min(d.support_min for d in dists),
        support_max=None if None in maxes else max(maxes),
        label=f"mixture(components=[{inner}])",
    )


def compound(outer: Distribution, inner: Distribution) -> Distribution:
    """The compound ``K = sum_{i=1}^{T} K_i``: ``phi(z) = phi_T(phi_K(z))`` (e.g. Poisson of
    logarithmic is negative binomial, Papernot & Steinke Appendix A.2)."""
    outer = _as_distribution(outer, "outer", "compound")
    inner = _as_distribution(inner, "inner", "compound")
    pgf = outer.pgf.subs(z, inner.pgf)
    smax = None
    if outer.support_max is not None and inner.support_max is not None:
        smax = outer.support_max * inner.support_max
    return Distribution(
        "compound",
        pgf,
        {},
        support_min=outer.support_min * inner.support_min,
        support_max=smax,
        label=f"compound(outer={outer.spec}, inner={inner.spec})",
    )


def from_pgf(expr: sympy.Expr, params: Mapping[str, Number] | None = None, label: str | None = None) -> Distribution:
    """A user-given PGF expression in ``z`` with named parameters; validated by
    :func:`validate_pgf` (``phi(1) = 1``, defined on [0, 1], non-negative leading coefficients)."""
    where = "pgf"
    values, expr = _bind_params(expr, params or {}, where)
    dist = Distribution("pgf", expr, values, label=label)
    validate_pgf(dist)
    return dist


def from_pmf(
    expr: sympy.Expr,
    params: Mapping[str, Number] | None = None,
    k_min: int = 0,
    k_max: int | None = None,
    label: str | None = None,
) -> Distribution:
    """A user-given pmf expression in ``k`` (on ``k_min..k_max``, or ``k_min..inf`` when SymPy can
    sum the series in closed form); the PGF is ``sum_k pmf(k) z^k``."""
    where = "pmf"
    values, expr = _bind_params(expr, params or {}, where, extra=("k",))
    expr = expr.subs(sympy.Symbol("k"), k)
    lo = int(exact_number(k_min, "k_min", where))
    _check(lo >= 0, "k_min", k_min, "k_min >= 0", where)
    if k_max is None:
        total = sympy.summation(expr.subs(values) * z**k, (k, lo, sympy.oo))
        # SymPy guards the closed form with its convergence condition (|z| < radius, radius > 1
        # for a pmf summing to 1); on [0, 1] the first branch is the one that applies.
        total = total.replace(lambda e: isinstance(e, sympy.Piecewise), lambda e: e.args[0][0])
        if total.has(sympy.Sum):
            raise ParameterError("k_max", None, "a finite k_max (SymPy found no closed form for the series)", where)
        pgf, hi, vals = total, None, {}
    else:
        hi = int(exact_number(k_max, "k_max", where))
        _check(lo <= hi <= 5000, "k_max", k_max, f"{lo} <= k_max <= 5000", where)
        pgf = sympy.Add(*[expr.subs(k, i) * z**i for i in range(lo, hi + 1)])
        vals = values
    dist = Distribution(
        "pmf", pgf, vals, expr if k_max is not None else expr.subs(values), support_min=lo, support_max=hi, label=label
    )
    validate_pgf(dist, pmf=expr.subs(values) if k_max is None else None)
    return dist


def _bind_params(
    expr: sympy.Expr, params: Mapping[str, Number], where: str, extra: tuple[str, ...] = ()
) -> tuple[dict, sympy.Expr]:
    allowed = {"z", *extra}
    free = {str(s) for s in expr.free_symbols}
    missing = sorted(free - allowed - set(params))
    if missing:
        raise ParameterError(
            missing[0], None, f"a value for every symbol of the expression ({', '.join(missing)})", where
        )
    unused = sorted(set(params) - free)
    if unused:
        raise ParameterError(unused[0], params[unused[0]], "only symbols that appear in the expression", where)
    values: dict[sympy.Symbol, sympy.Expr] = {}
    renames = {}
    for name, value in params.items():
        sym = sympy.Symbol(name, real=True)
        renames[sympy.Symbol(name)] = sym
        values[sym] = exact_number(value, name, where)
    renames.update({s: z for s in expr.free_symbols if str(s) == "z"})
    return values, expr.xreplace(renames)


#: tolerance of ``phi(1) = 1`` and of ``0 <= phi <= 1`` (evaluated at 40 digits), as an mpmath number:
#: ``1 + 1e-25`` is exactly 1.0 in float64.
_PGF_TOLERANCE = "1e-25"
#: for a pmf with unbounded support, this many masses from ``k_min`` are checked to be non-negative.
_PMF_MASSES_CHECKED = 1000


def _short(expr: Any, width: int = 60) -> str:
    """A one-line, bounded rendering of an expression for error messages."""
    text = " ".join(str(expr).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def validate_pgf(dist: Distribution, pmf: sympy.Expr | None = None) -> None:
    """Check that ``dist.pgf`` is a PGF of a law on ``{0, 1, ...}``.

    * a polynomial ``sum_k c_k z^k`` (every finite ``pmf``/``truncated`` law, and user polynomials):
      every coefficient is a real number ``>= 0`` and they sum to 1 (exactly when SymPy can decide
      it, else to 25 digits);
    * otherwise: finite and real on [0, 1], ``0 <= phi <= 1`` there and ``phi(1) = 1`` to 25
      digits, the first 16 Taylor coefficients non-negative and, when the pmf formula ``pmf`` is
      given (unbounded support), its first 1000 masses non-negative;
    * a finite mean ``phi'(1)``.

    Raises :class:`ParameterError` (one line, the expression shortened) otherwise.
    """
    where = dist.name
    shown = _short(dist.pgf)
    coeffs = _monomials(dist.pgf)
    with mpmath.workdps(40):
        tol = mpmath.mpf(_PGF_TOLERANCE)
        if coeffs is not None:
            _check_masses(coeffs, shown, where)
        for x in (0, 0.25, 0.5, 0.75, 0.999, 1):
            try:
                value = dist.phi_mp(x, 40)
            except (ZeroDivisionError, ValueError, TypeError, OverflowError) as exc:
                raise ParameterError(
                    "expr", shown, f"a PGF defined on [0, 1] (fails at z={x}: {_short(exc)})", where
                ) from None
            if not isinstance(value, mpmath.mpf) or not mpmath.isfinite(value):
                raise ParameterError("expr", shown, f"a PGF real and finite on [0, 1] (phi({x}) = {value})", where)
            if value < -tol or value > 1 + tol:
                raise ParameterError(
                    "expr", shown, f"a PGF with 0 <= phi(z) <= 1 on [0, 1] (phi({x}) = {mpmath.nstr(value, 30)})", where
                )
        one = dist.phi_mp(1, 40)
        if abs(one - 1) > tol:
            raise ParameterError("expr", shown, f"a PGF with phi(1) = 1 (it is {mpmath.nstr(one, 30)})", where)
    if coeffs is None:
        _check_series(dist, shown, where)
        if pmf is not None:
            _check_pmf_formula(pmf, dist.support_min, shown, where)
    try:
        m = dist.mean
    except (TypeError, ValueError, ZeroDivisionError, SymselError) as exc:
        raise ParameterError("expr", shown, f"a PGF with a finite mean ({_short(exc)})", where) from None
    if not math.isfinite(m) or m < 0:
        raise ParameterError("expr", shown, f"a PGF with a finite mean (phi'(1) = {m})", where)


def _check_masses(coeffs: Mapping[int, sympy.Expr], shown: str, where: str) -> None:
    """Every coefficient of a polynomial PGF is a real number >= 0, and they sum to 1."""
    for i in sorted(coeffs):
        c = coeffs[i]
        value = complex(sympy.N(c, 30))
        if c.is_negative or c.is_extended_real is False or abs(value.imag) > 1e-25 or value.real < -1e-25:
            raise ParameterError(
                "expr", shown, f"a PGF with non-negative coefficients (P[K={i}] = {_short(c, 30)})", where
            )
    total = sympy.Add(*coeffs.values())
    exact = (total - 1).is_zero
    if exact is False or (exact is None and abs(complex(sympy.N(total - 1, 40))) > float(_PGF_TOLERANCE)):
        raise ParameterError(
            "expr", shown, f"probabilities summing to 1 (they sum to {sympy.N(total, 20)})", where
        )


def _check_series(dist: Distribution, shown: str, where: str) -> None:
    terms = _SERIES_TERMS_CHECKED if dist.support_max is None else min(_SERIES_TERMS_CHECKED, dist.support_max + 1)
    for i, c in enumerate(dist._series_coefficients(terms)):
        cval = complex(sympy.N(c, 30))
        if abs(cval.imag) > 1e-25 or cval.real < -1e-25:
            raise ParameterError(
                "expr", shown, f"a PGF with non-negative coefficients (P[K={i}] = {cval.real:.3g})", where
            )
    _check_absolutely_monotone(dist, shown, where)


#: points of [0, 1) where phi' and phi'' of a series PGF are checked to be >= 0.
_MONOTONE_GRID = 64


def _check_absolutely_monotone(dist: Distribution, shown: str, where: str) -> None:
    """Beyond the Taylor coefficients checked exactly: ``phi'`` and ``phi''`` non-negative at 40 digits on a grid
    of [0, 1) (a PGF is absolutely monotone there, Bernstein's theorem). The bounds use exactly these two
    facts (``phi'`` non-negative and non-decreasing); a negative far coefficient that leaves them intact is not
    certified absent, and the error says which derivative failed where."""
    second = sympy.diff(dist.dpgf, z)
    first_fn = sympy.lambdify([z], dist.dpgf, "mpmath")
    second_fn = sympy.lambdify([z], second, "mpmath")
    tol = mpmath.mpf("1e-25")
    with mpmath.workdps(40):
        for j in range(_MONOTONE_GRID):
            x = mpmath.mpf(j) / _MONOTONE_GRID
            for order, fn in ((1, first_fn), (2, second_fn)):
                try:
                    value = fn(x)
                except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                    continue  # evaluated at a removable point: the checks above already passed
                if isinstance(value, mpmath.mpc):
                    value = value.real if abs(value.imag) <= tol else mpmath.mpf(-1)
                if value < -tol:
                    derivative = "phi'" if order == 1 else "phi''"
                    raise ParameterError("expr", shown, f"a PGF, absolutely monotone on [0, 1) ({derivative}"
                                         f"({mpmath.nstr(x, 4)}) = {mpmath.nstr(value, 3)} < 0)", where)


def _check_pmf_formula(pmf: sympy.Expr, k_min: int, shown: str, where: str) -> None:
    """The first :data:`_PMF_MASSES_CHECKED` masses of a pmf formula are real and non-negative."""
    fn = sympy.lambdify([k], pmf, "mpmath")
    with mpmath.workdps(30):
        for i in range(k_min, k_min + _PMF_MASSES_CHECKED):
            try:
                value = fn(i)
            except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                continue  # the PGF checks above already passed; a formula that fails far out is not an error
            if isinstance(value, mpmath.mpc):
                if abs(value.imag) > mpmath.mpf("1e-25"):
                    raise ParameterError("expr", shown, f"a pmf with real masses (P[K={i}] = {value})", where)
                value = value.real
            if value < -mpmath.mpf("1e-25"):
                raise ParameterError(
                    "expr", shown, f"a pmf with non-negative masses (P[K={i}] = {mpmath.nstr(value, 3)})", where
                )


FAMILIES: dict[str, Callable[..., Distribution]] = {
    "point": point,
    "tnb": tnb,
    "logarithmic": logarithmic,
    "geometric": geometric,
    "poisson": poisson,
    "binomial": binomial,
    "negative_binomial": negative_binomial,
    "beta_binomial": beta_binomial,
    "two_point": two_point,
    "truncated": truncated,
    "mixture": mixture,
    "compound": compound,
}
"""Distribution families by spec name (``pgf`` and ``pmf`` are handled by :mod:`symsel.spec`)."""
