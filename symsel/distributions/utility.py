"""What ``K`` runs are worth, from the PGF alone (Papernot & Steinke, ICLR 2022, Section 3.6 and Appendix A.2.1):
the expected quantile of the best run (eq. (8)), the probability that the best run finds a single good
candidate, and a Chernoff bound on the tail ``P[K >= k]``.

:class:`UtilityMixin` is mixed into :class:`~symsel.distributions.core.Distribution` and reads its fields ``pgf``,
``values``, ``support_max`` and ``mean`` and its evaluators ``phi_mp``, ``_phi_mpf`` and ``_args_mp``.
"""

from __future__ import annotations

import math

import mpmath
import sympy

from symsel.distributions.expressions import DEFAULT_DPS, z
from symsel.errors import ParameterError

#: the largest degree of a polynomial PGF whose utility is summed exactly rather than integrated.
FINITE_SUM_MAX_TERMS = 5000


class UtilityMixin:
    """Expected quantile, success probability and tail bound of a :class:`~symsel.distributions.core.Distribution`."""

    def expected_quantile(self, dps: int = DEFAULT_DPS) -> float:
        """``E[K/(K+1)] = 1 - int_0^1 phi(x) dx``: expected quantile of the best of ``K`` runs
        of a continuous score (Papernot & Steinke, eq. (8))."""
        return float(self.expected_quantile_mp(dps))

    def expected_quantile_mp(self, dps: int = DEFAULT_DPS) -> mpmath.mpf:
        """:meth:`expected_quantile` at ``dps`` digits: the exact sum ``sum_k P[K=k] k/(k+1)`` for a polynomial
        PGF, else tanh-sinh quadrature of ``phi``."""
        if self.support_max is not None and self.support_max <= FINITE_SUM_MAX_TERMS and self.pgf.is_polynomial(z):
            coeffs = sympy.Poly(self.pgf.subs(self.values), z).all_coeffs()[::-1]
            total = sympy.Add(*[c * sympy.Rational(i, i + 1) for i, c in enumerate(coeffs)])
            with mpmath.workdps(dps):
                return mpmath.mpf(sympy.N(total, dps + 10))
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
