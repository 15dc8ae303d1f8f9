"""Closed-form profiles of the additive Gaussian and Laplace mechanisms.

* Gaussian: ``δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)``, ``μ = Δ/σ`` (Balle & Wang, *Improving the
  Gaussian Mechanism for Differential Privacy*, ICML 2018, Thm 8), evaluated in log space; region
  boundary ``Φ(Φ⁻¹(q) − μ)`` and ``k``-fold composition ``μ√k`` (Dong, Roth, Su, *Gaussian Differential
  Privacy*, JRSS-B 2022, Cor. 3.3); RDP ``λμ²/2`` (Mironov, *Rényi Differential Privacy*, CSF 2017,
  Prop. 7).
* Laplace ``Lap(0, b)`` vs ``Lap(Δ, b)``, ``a = Δ/b``: with ``L`` the privacy loss (which lies in
  ``[−a, a]``),

      δ(ε) = 0                      for ε ≥ a,
      δ(ε) = 1 − exp((ε − a)/2)     for −a ≤ ε ≤ a,
      δ(ε) = 1 − e^ε                for ε ≤ −a.

  The middle formula on ``[0, a]`` is the direct integral; on ``[−a, 0]`` it follows from the symmetry
  identity ``δ(ε) = 1 − e^ε + e^ε δ(−ε)``, which yields the same expression; below ``−a`` every output
  has loss ``> ε``. RDP: Mironov 2017, Prop. 6.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
from scipy import special

from symsel import validate as v
from symsel.continuous import GaussianPair, LaplacePair
from symsel.errors import ParameterError
from symsel.profiles.base import Profile
from symsel.region import (
    ArrayLike,
    gaussian_lower,
    gaussian_lower_mp,
    laplace_lower,
    laplace_lower_mp,
)

#: below this |x| (relative to the magnitudes involved) the float log-space Gaussian formula hands
#: over to mpmath, because ``log δ = log Φ(a) + log(−expm1(x))`` would lose more than ~8 digits.
_GAUSSIAN_CANCELLATION = 1e-8
_GAUSSIAN_FALLBACK_DPS = 40


class GaussianProfile(Profile):
    """The Gaussian mechanism ``N(f(X), σ²)`` with L2 sensitivity ``Δ``: μ-GDP with ``μ = Δ/σ``.

    ``δ(ε)`` is evaluated as ``log δ = log Φ(a) + log(−expm1(ε + log Φ(b) − log Φ(a)))`` with
    ``a = −ε/μ + μ/2``, ``b = a − μ`` and ``log Φ`` from ``scipy.special.log_ndtr``, so it stays
    accurate far below 1e-300 (where ``δ`` itself underflows, :meth:`log_delta` still answers).
    """

    family = "gaussian"

    def __init__(self, sigma: float, sensitivity: float = 1.0):
        where = "gaussian"
        self.sigma = v.positive(sigma, "sigma", where)
        self.sensitivity = v.positive(sensitivity, "sensitivity", where)
        self.mu = self.sensitivity / self.sigma
        if not (math.isfinite(self.mu) and self.mu > 0):
            raise ParameterError("sigma", sigma, "sensitivity/sigma finite and > 0", where)
        self._spec = f"gaussian(sigma={self.sigma!r}, sensitivity={self.sensitivity!r})"

    @classmethod
    def from_mu(cls, mu: float) -> GaussianProfile:
        """μ-GDP (Dong, Roth, Su 2022): the Gaussian pair ``N(μ, 1)`` vs ``N(0, 1)``."""
        m = v.positive(mu, "mu", "gdp")
        obj = cls.__new__(cls)
        obj.sigma, obj.sensitivity, obj.mu = 1.0 / m, 1.0, m
        obj._spec = f"gdp(mu={m!r})"
        obj.family = "gdp"
        return obj

    @property
    def spec(self) -> str:
        return self._spec

    def compose(self, k: int) -> GaussianProfile:
        """``k``-fold composition: ``μ√k``-GDP, exact (Dong, Roth, Su 2022, Cor. 3.3)."""
        n = v.integer(k, "k", f"{self.family}.compose", lo=1)
        return GaussianProfile.from_mu(self.mu * math.sqrt(n))

    # ------------------------------------------------------------------ δ(ε)
    def _log_delta_finite(self, eps: np.ndarray) -> np.ndarray:
        mu = self.mu
        a = -eps / mu + mu / 2.0
        b = a - mu
        la = special.log_ndtr(a)
        lb = special.log_ndtr(b)
        with np.errstate(divide="ignore", invalid="ignore"):
            x = eps + lb - la
            out = la + np.log(-np.expm1(np.minimum(x, 0.0)))
        scale = np.maximum(1.0, np.maximum(np.abs(eps), np.abs(la)))
        # log Φ(a) = -inf: δ < Φ(a) is below every float, even in log space (|a| > 1e154).
        out = np.where(np.isneginf(la), -np.inf, out)
        bad = ~(x < -_GAUSSIAN_CANCELLATION * scale) & np.isfinite(la)
        for i in np.flatnonzero(bad):
            out.flat[i] = float(mpmath.log(self.delta_mp(float(eps.flat[i]), _GAUSSIAN_FALLBACK_DPS)))
        return out

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        return np.exp(self._log_delta_finite(eps))

    def delta_mp(self, eps: Any, dps: int) -> mpmath.mpf:
        """``δ(ε) = Φ(a) − e^ε Φ(b)`` at ``dps`` digits (``mpmath.ncdf``; for ``a < −1e3`` the Mills-ratio
        series, since ``e^ε φ(b) = φ(a)`` gives ``δ = φ(a) [R(|a|) − R(|b|)]`` with ``R(x) = Φ(−x)/φ(x)``).
        The working precision is raised until the subtraction keeps ``dps`` significant digits."""
        dps = v.dps(dps, "gaussian.delta_mp")
        where = f"{self.family}.delta_mp"
        try:
            with mpmath.workdps(dps):
                e = mpmath.mpf(eps)
        except (TypeError, ValueError):
            raise ParameterError("eps", eps, "a real number", where) from None
        if mpmath.isnan(e):
            raise ParameterError("eps", eps, "a real number (not NaN)", where)
        if mpmath.isinf(e):
            return mpmath.mpf(0) if e > 0 else mpmath.mpf(1)
        extra = 15
        while True:
            with mpmath.workdps(dps + extra):
                mu = self._mu_mp()
                a = -e / mu + mu / 2
                if a < -1000:
                    big = mpmath.npdf(a) * _mills_ratio(-a)
                    d = mpmath.npdf(a) * (_mills_ratio(-a) - _mills_ratio(mu - a))
                else:
                    big = mpmath.ncdf(a)
                    d = big - mpmath.exp(e) * mpmath.ncdf(a - mu)
                if d > 0 and mpmath.log10(big / d) < extra - 5:
                    with mpmath.workdps(dps):
                        return +d
            extra *= 2
            if extra > 100000:
                raise ArithmeticError(f"{where}: cancellation beyond 100000 digits at eps={eps!r}")

    def _mu_mp(self) -> mpmath.mpf:
        """μ at the working precision (``Δ/σ`` formed in mpmath for the ``gaussian`` family)."""
        if self.family == "gdp":
            return mpmath.mpf(self.mu)
        return mpmath.mpf(self.sensitivity) / mpmath.mpf(self.sigma)

    # ------------------------------------------------------------------ region, RDP, limits
    def dominating_pair(self) -> GaussianPair:
        """``N(μ, 1)`` vs ``N(0, 1)`` (Dong, Roth, Su 2022): its profile is exactly this one."""
        return GaussianPair(self.mu)

    @property
    def max_privacy_loss(self) -> float:
        return math.inf

    def region_lower(self, q: ArrayLike) -> float | np.ndarray:
        """Exact: ``Φ(Φ⁻¹(q) − μ)`` (Dong, Roth, Su 2022)."""
        return gaussian_lower(q, self.mu)

    def region_lower_mp(self, q: Any, dps: int) -> mpmath.mpf:
        return gaussian_lower_mp(q, self.mu, v.dps(dps, f"{self.family}.region_lower_mp"))

    def rdp(self, order: float) -> float:
        """``λμ²/2`` (Mironov 2017, Prop. 7)."""
        lam = self._check_order(order)
        return lam * self.mu**2 / 2.0


def _mills_ratio(x: mpmath.mpf) -> mpmath.mpf:
    """``Φ(−x)/φ(x)`` for ``x ≥ 1000`` by its asymptotic series ``(1/x) Σ_k (−1)^k (2k−1)!!/x^(2k)``,
    summed to the working precision (terms shrink by ``≥ 1e6/(2k)`` per step there)."""
    x2 = x * x
    total, term, k = mpmath.mpf(1), mpmath.mpf(1), 1
    tol = mpmath.eps
    while abs(term) > tol:
        term = -term * (2 * k - 1) / x2
        total += term
        k += 1
    return total / x


def gdp(mu: float) -> GaussianProfile:
    """μ-GDP: :class:`GaussianProfile` parametrized by ``μ``."""
    return GaussianProfile.from_mu(mu)


class LaplaceProfile(Profile):
    """The Laplace mechanism ``Lap(f(X), b)`` with L1 sensitivity ``Δ``; ``a = Δ/b`` is its pure ε."""

    family = "laplace"

    def __init__(self, scale: float, sensitivity: float = 1.0):
        where = "laplace"
        self.scale = v.positive(scale, "scale", where)
        self.sensitivity = v.positive(sensitivity, "sensitivity", where)
        self.a = self.sensitivity / self.scale
        if not (math.isfinite(self.a) and self.a > 0):
            raise ParameterError("scale", scale, "sensitivity/scale finite and > 0", where)

    @property
    def spec(self) -> str:
        return f"laplace(scale={self.scale!r}, sensitivity={self.sensitivity!r})"

    def _log_delta_finite(self, eps: np.ndarray) -> np.ndarray:
        a = self.a
        with np.errstate(divide="ignore"):
            mid = np.log(-np.expm1((np.minimum(eps, a) - a) / 2.0))
            low = np.log(-np.expm1(np.minimum(eps, 0.0)))
        return np.where(eps >= a, -np.inf, np.where(eps >= -a, mid, low))

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        return np.exp(self._log_delta_finite(eps))

    def delta_mp(self, eps: Any, dps: int) -> mpmath.mpf:
        dps = v.dps(dps, "laplace.delta_mp")
        with mpmath.workdps(dps):
            e = mpmath.mpf(eps)
            a = mpmath.mpf(self.sensitivity) / mpmath.mpf(self.scale)
            if mpmath.isnan(e):
                raise ParameterError("eps", eps, "a real number (not NaN)", "laplace.delta_mp")
            if e >= a:
                return mpmath.mpf(0)
            if e >= -a:
                return -mpmath.expm1((e - a) / 2)
            return -mpmath.expm1(e)

    def dominating_pair(self) -> LaplacePair:
        """``Lap(Δ, b)`` vs ``Lap(0, b)``: the mechanism's own output pair, whose profile is this one."""
        return LaplacePair(self.sensitivity, self.scale)

    @property
    def max_privacy_loss(self) -> float:
        return self.a

    def region_lower(self, q: ArrayLike) -> float | np.ndarray:
        """Exact: ``F(F⁻¹(q) − a)`` with ``F`` the standard Laplace CDF."""
        return laplace_lower(q, self.a)

    def region_lower_mp(self, q: Any, dps: int) -> mpmath.mpf:
        dps = v.dps(dps, "laplace.region_lower_mp")
        with mpmath.workdps(dps):
            a = mpmath.mpf(self.sensitivity) / mpmath.mpf(self.scale)
        return laplace_lower_mp(q, a, dps)

    def rdp(self, order: float) -> float:
        """``log(λ/(2λ−1) e^{(λ−1)a} + (λ−1)/(2λ−1) e^{−λa})/(λ−1)`` (Mironov 2017, Prop. 6); ``a`` at ``λ = ∞``."""
        lam = self._check_order(order)
        a = self.a
        if math.isinf(lam):
            return a
        first = math.log(lam / (2 * lam - 1)) + (lam - 1) * a
        second = math.log((lam - 1) / (2 * lam - 1)) - lam * a
        return max(0.0, float(np.logaddexp(first, second)) / (lam - 1))
