"""What ``K`` runs are worth, from the PGF alone (Papernot & Steinke, ICLR 2022, Section 3.6 and Appendix A.2.1):
the expected quantile of the best run (eq. (8)), the probability that the best run finds a single good
candidate, and a Chernoff bound on the tail ``P[K >= k]``.

:class:`UtilityMixin` is mixed into :class:`~symsel.distributions.core.Distribution` and reads its fields ``pgf``,
``values``, ``support_max`` and ``mean`` and its evaluators ``phi_mp``, ``_phi_mpf`` and ``_args_mp``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import mpmath
import sympy

from symsel.distributions.expressions import DEFAULT_DPS, z
from symsel.errors import ParameterError

if TYPE_CHECKING:  # pragma: no cover
    from symsel.distributions.core import Family

#: the largest degree of a polynomial PGF whose utility is summed exactly rather than integrated.
FINITE_SUM_MAX_TERMS = 5000


class UtilityMixin:
    """Expected quantile, success probability and tail bound of a :class:`~symsel.distributions.core.Distribution`."""

    if TYPE_CHECKING:  # what it reads from Distribution and EvaluationMixin
        name: str
        values: Mapping[sympy.Symbol, sympy.Expr]
        support_max: int | None
        known_family: Family | None

        @property
        def pgf(self) -> sympy.Expr: ...

        @property
        def mean(self) -> float: ...

        @property
        def _phi_mpf(self) -> Callable: ...

        def _args_mp(self) -> tuple[mpmath.mpf, ...]: ...

        def phi_mp(self, x: Any, dps: int = DEFAULT_DPS) -> mpmath.mpf: ...

    def expected_quantile(self, dps: int = DEFAULT_DPS) -> float:
        """``E[K/(K+1)] = 1 - int_0^1 phi(x) dx``: expected quantile of the best of ``K`` runs
        of a continuous score (Papernot & Steinke, eq. (8)); always in ``[0, 1]``."""
        return float(self.expected_quantile_mp(dps))

    def expected_quantile_mp(self, dps: int = DEFAULT_DPS) -> mpmath.mpf:
        """:meth:`expected_quantile` at ``dps`` digits: the exact sum ``sum_k P[K=k] k/(k+1)`` for a polynomial
        PGF; ``1 - E[1/(K+1)]`` in closed form for a Poisson, binomial or truncated negative binomial law given by
        its constructor (:func:`inverse_moment`, evaluated by ``sympy.N``, which raises its precision through
        cancellations: exact for ``geometric(mean=1e300)`` as for ``mean=1.000001``); else tanh-sinh quadrature
        of ``phi`` (:meth:`_quantile_quadrature`)."""
        if self.support_max is not None and self.support_max <= FINITE_SUM_MAX_TERMS and self.pgf.is_polynomial(z):
            coeffs = sympy.Poly(self.pgf.subs(self.values), z).all_coeffs()[::-1]
            total = sympy.Add(*[c * sympy.Rational(i, i + 1) for i, c in enumerate(coeffs)])
            with mpmath.workdps(dps):
                return _unit(mpmath.mpf(sympy.N(total, dps + 10)))
        closed = inverse_moment(self.known_family) if self.known_family is not None else None
        if closed is not None:
            with mpmath.workdps(dps):
                return _unit(1 - mpmath.mpf(sympy.N(closed, dps + 10)))
        return _unit(self._quantile_quadrature(dps))

    def _quantile_quadrature(self, dps: int) -> mpmath.mpf:
        """``1 - int_0^1 phi``, tanh-sinh. ``phi`` varies on the scale ``1/m`` near ``x = 1``: the breakpoints
        ``1 - 10^-j`` go down to that scale, computed in mpf at twice the working digits, so that they stay apart
        and ``phi`` is resolved between them. For a mean above ``10^(dps + 10)`` they stop at
        ``1 - 10^-(dps + 10)``: ``0 <= phi <= 1`` on ``[0, 1]``, so the piece left out is below ``10^-(dps + 10)``
        (the old float breakpoints all rounded to 1 beyond ``m = 1e16``, and ``geometric(mean=1e300)`` came out
        as ``-inf``)."""
        m = max(float(self.mean), 1.0)
        decades = int(math.log10(m)) + 2
        if decades <= 15:  # float breakpoints are exact enough
            with mpmath.workdps(dps + 10):
                points = sorted({0.0, *(1 - 10.0**-j for j in range(1, decades + 1)), 1.0})
                args = self._args_mp()
                integral = mpmath.quad(lambda x: self._phi_mpf(x, *args), points)
                with mpmath.workdps(dps):
                    return +(1 - integral)
        last = min(decades, dps + 10)
        with mpmath.workdps(2 * (dps + 10)):
            one = mpmath.mpf(1)
            points = [mpmath.mpf(0), *(one - mpmath.mpf(10) ** -j for j in range(1, last + 1))]
            if last == decades:
                points.append(one)
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


def _unit(value: mpmath.mpf) -> mpmath.mpf:
    """An expected quantile, in ``[0, 1]`` (rounding can only leave it by a few ulps); NaN or an infinity is a bug,
    never a result: it raises."""
    if not mpmath.isfinite(value):
        raise FloatingPointError(f"expected quantile evaluated to {value}")
    return min(max(value, mpmath.mpf(0)), mpmath.mpf(1))


def inverse_moment(family: Family) -> sympy.Expr | None:
    """``E[1/(K+1)]`` of a known family as an exact SymPy expression (``None`` for a family without one here):

    * Poisson(mu): ``sum_k e^-mu mu^k/(k+1)! = (1 - e^-mu)/mu``;
    * binomial(n, p): ``(1 - (1-p)^(n+1)) / ((n+1) p)``;
    * point(k): ``1/(k+1)``;
    * truncated negative binomial ``D_{eta,gamma}`` (support ``k >= 1``, ``q = 1 - gamma``): with
      ``sum_{k>=0} C(k+eta-1, k) q^k/(k+1) = (1/q) int_0^q (1-t)^-eta dt``,
      ``((gamma^(1-eta) - 1)/((eta - 1) q) - 1) / (gamma^-eta - 1)``; at ``eta = 1`` (geometric)
      ``gamma (-log(gamma) - q)/q^2``, at ``eta = 0`` (logarithmic) ``1 - 1/q + 1/log(1/gamma)``.
    """
    params = family.params
    if family.name == "poisson":
        mu = params["mu"]
        return (1 - sympy.exp(-mu)) / mu
    if family.name == "binomial":
        n, p = params["n"], params["p"]
        # unevaluated: (1 - p)^(n + 1) of an exact p and n = 1e9 would be a billion-digit fraction
        return (1 - sympy.Pow(1 - p, n + 1, evaluate=False)) / ((n + 1) * p)
    if family.name == "point":
        return 1 / (sympy.Integer(params["k"]) + 1) if "k" in params else None
    if family.name == "tnb":
        eta, gamma = params["eta"], params["gamma"]
        q = 1 - gamma
        if eta == 1:
            return gamma * (-sympy.log(gamma) - q) / q**2
        if eta == 0:
            return 1 - 1 / q + 1 / sympy.log(1 / gamma)
        return ((gamma ** (1 - eta) - 1) / ((eta - 1) * q) - 1) / (gamma ** (-eta) - 1)
    return None
