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

    # ----------------------------------------------------------------- symbolic side
    @cached_property
    def pgf(self) -> sympy.Expr:
        """``phi(z)`` with the parameter values substituted (exact)."""
        return self.pgf_symbolic.subs(self.values)

    @cached_property
    def dpgf_symbolic(self) -> sympy.Expr:
        """``phi'(z)``, symbolic in the parameters."""
        return _simplify(sympy.diff(self.pgf_symbolic, z))

    @cached_property
    def dpgf(self) -> sympy.Expr:
        """``phi'(z)`` with the parameter values substituted (differentiated, not simplified:
        simplification can introduce removable singularities such as ``(z^6 + z)/z``)."""
        return sympy.diff(self.pgf, z)

    @cached_property
    def mean_symbolic(self) -> sympy.Expr:
        """``E[K] = phi'(1)`` in simplified closed form."""
        if self.moments_closed is not None:
            return self.moments_closed[0]
        return _simplify(_at_one(sympy.diff(self.pgf_symbolic, z)))

    @cached_property
    def variance_symbolic(self) -> sympy.Expr:
        """``Var[K] = phi''(1) + phi'(1) - phi'(1)^2`` in simplified closed form."""
        if self.moments_closed is not None:
            return self.moments_closed[1]
        d1 = _at_one(sympy.diff(self.pgf_symbolic, z))
        d2 = _at_one(sympy.diff(self.pgf_symbolic, z, 2))
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


def tnb(eta: Number, gamma: Number | None = None, mean: Number | None = None) -> Distribution:
    """Truncated negative binomial ``D_{eta,gamma}`` (Papernot & Steinke, Definition 1).

    ``phi(z) = ((1 - (1-gamma) z)^(-eta) - 1) / (gamma^(-eta) - 1)`` for ``eta != 0`` and
    ``log(1 - (1-gamma) z) / log(gamma)`` for ``eta = 0`` (logarithmic); ``eta = 1`` is geometric.
    Support ``{1, 2, ...}``. Give either ``gamma`` in (0, 1) or the ``mean`` (gamma is then
    solved for at 60 digits).
    """
    where = "tnb"
    e = exact_number(eta, "eta", where)
    _check(e > -1, "eta", eta, "eta > -1", where)
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
    _check(km.is_integer and 1 <= km <= 5000, "k_max", k_max, "an integer 1 <= k_max <= 5000", where)
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
    """A finite mixture ``sum_i w_i phi_i(z)`` (weights positive, summing to 1)."""
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
    validate_pgf(dist)
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


def validate_pgf(dist: Distribution) -> None:
    """Check that ``dist.pgf`` is a PGF: finite and real on [0, 1], ``phi(1) = 1`` to 25 digits,
    the first Taylor coefficients non-negative, and a finite mean ``phi'(1)``."""
    where = dist.name
    with mpmath.workdps(40):
        for x in (0, 0.25, 0.5, 0.75, 0.999, 1):
            try:
                value = dist.phi_mp(x, 40)
            except (ZeroDivisionError, ValueError, TypeError, OverflowError) as exc:
                raise ParameterError(
                    "expr", str(dist.pgf), f"a PGF defined on [0, 1] (fails at z={x}: {exc})", where
                ) from None
            if not isinstance(value, mpmath.mpf) or not mpmath.isfinite(value):
                raise ParameterError(
                    "expr", str(dist.pgf), f"a PGF real and finite on [0, 1] (phi({x}) = {value})", where
                )
            if value < -1e-30 or value > 1 + 1e-25:
                raise ParameterError(
                    "expr",
                    str(dist.pgf),
                    f"a PGF with 0 <= phi(z) <= 1 on [0, 1] (phi({x}) = {mpmath.nstr(value, 8)})",
                    where,
                )
        one = dist.phi_mp(1, 40)
        if abs(one - 1) > 1e-25:
            raise ParameterError("expr", str(dist.pgf), f"a PGF with phi(1) = 1 (it is {mpmath.nstr(one, 15)})", where)
    terms = _SERIES_TERMS_CHECKED if dist.support_max is None else min(_SERIES_TERMS_CHECKED, dist.support_max + 1)
    for i, c in enumerate(dist._series_coefficients(terms)):
        cval = complex(sympy.N(c, 30))
        if abs(cval.imag) > 1e-25 or cval.real < -1e-25:
            raise ParameterError(
                "expr", str(dist.pgf), f"a PGF with non-negative coefficients (P[K={i}] = {cval.real:.3g})", where
            )
    try:
        m = dist.mean
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        raise ParameterError("expr", str(dist.pgf), f"a PGF with a finite mean ({exc})", where) from None
    if not math.isfinite(m) or m < 0:
        raise ParameterError("expr", str(dist.pgf), f"a PGF with a finite mean (phi'(1) = {m})", where)


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
