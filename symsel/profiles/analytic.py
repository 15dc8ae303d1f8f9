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
from collections.abc import Callable, Sequence
from typing import Any

import mpmath
import numpy as np
from scipy import special

from symsel import validate as v
from symsel.errors import ParameterError
from symsel.pairs.location import GaussianPair, LaplacePair
from symsel.pairs.loss import DominatedPair, DominatingPair, laplace_pairs
from symsel.profiles.base import ROUTE_EXACT_GDP, ROUTE_PESSIMISTIC_PLD, Profile
from symsel.profiles.composition import PLD_INTERVAL, composed_pld
from symsel.profiles.region import (
    ArrayLike,
    as_mpf,
    gaussian_lower,
    gaussian_lower_mp,
    laplace_lower,
    laplace_lower_mp,
)

#: where the error bound of the float log-space Gaussian formula exceeds this (absolute, in
#: ``log δ``; relative ``≈ 1e-7`` in ``δ``), the value is taken from mpmath instead. Below it the bound
#: is added (the value rounds up); it grows like ``ε`` in the far tail (1.6e-9 at ε = 100 for μ = 1/4),
#: and a stricter threshold sent every tiny-δ evaluation of a many-term envelope to mpmath.
_GAUSSIAN_MAX_LOG_ERROR = 1e-7
#: ... or, far below the float range of ``δ`` (``|log δ| > 1e5``), exceeds this fraction of ``|log δ|``: there the
#: rounding of ``μ`` alone moves ``log δ ≈ −a²/2`` by ``≈ a²u`` (0.01 at ``|a| = 1e7``), more than any absolute
#: threshold, while the relative error stays a few ``u``.
_GAUSSIAN_MAX_LOG_RTOL = 1e-12
#: below ``a = −_FAR_TAIL`` the value is the closed-form upper bound of :func:`_far_tail_log_delta` (its excess over
#: the exact value is below ``15/a⁴ ≤ 1.5e-11`` in ``log δ``).
_FAR_TAIL = 1e3
_GAUSSIAN_FALLBACK_DPS = 40
_UNIT = 2.0**-53  # unit roundoff of float64
#: relative error allowed for ``scipy.special.log_ndtr`` (it is accurate to a few ulp; 64 is generous).
_LOG_NDTR_RTOL = 64 * _UNIT
_TINY = 5e-324  # smallest positive float64
#: relative error allowed for ``scipy.special.erfcx`` (Faddeeva package, a few ulp; 64 is generous).
_ERFCX_RTOL = 64 * _UNIT
_SQRT2 = math.sqrt(2.0)


def _gaussian_log_error(eps: np.ndarray, mu: float | np.ndarray, a: np.ndarray, b: np.ndarray, la: np.ndarray,
                        lb: np.ndarray, x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """A bound on the absolute error of the float64 ``log δ = log Φ(a) + log(−expm1(x))``,
    ``x = ε + log Φ(b) − log Φ(a)``, as an approximation of the exact value for the profile's
    ``μ = Δ/σ`` (itself a rounded quotient).

    * ``a = −ε/μ + μ/2`` carries an absolute error ``e_a ≤ 4u (|ε|/μ + μ + |a|)`` (rounding of ``μ``,
      of the quotient and of the sum; ``u = 2^-53``); ``b = a − μ`` carries the same error plus
      ``e_b ≤ 2u (μ + |b|)`` of its own. Through ``d log Φ(z)/dz = s(z) = φ(z)/Φ(z)`` they move
      ``log Φ(a)`` by ``s(a) e_a`` and ``log Φ(b)`` by ``s(b) (e_a + e_b)``, plus the relative error
      of ``log_ndtr`` itself (:data:`_LOG_NDTR_RTOL`).
    * In ``x = ε + log Φ(b) − log Φ(a)`` the common error ``e_a`` cancels up to ``|s(b) − s(a)| e_a``
      (``≈ μ e_a`` in the far tail, where ``s(z) ≈ |z|``); the two additions add
      ``4u (|ε| + |log Φ(a)| + |log Φ(b)|)``.
    * For ``a < 0``, ``x`` is computed as ``log(M(b)/M(a))`` (Mills ratio ``M = Φ/φ``, from
      ``erfcx``): its error is ``|d log M/dz| = |s(z) + z| ≈ 1/|z|`` times the errors of ``a, b``
      plus the relative error of ``erfcx`` (:data:`_ERFCX_RTOL`), with no ``|log Φ|``-sized terms.
    * ``d log(−expm1(x))/dx = 1/expm1(−x)`` turns the error of ``x`` into an error of ``log δ``
      (large when ``x → 0``: cancellation); the final additions add ``4u (|log Φ(a)| + |log δ| + 1)``.

    The sum is doubled, which covers the second-order terms whenever it is below 1e-3 (larger
    bounds only send the value to mpmath).
    """
    def slope(z: np.ndarray, lz: np.ndarray) -> np.ndarray:  # φ(z)/Φ(z), in log space
        return np.exp(-0.5 * z * z - 0.5 * math.log(2 * math.pi) - lz)

    sa, sb = slope(a, la), slope(b, lb)
    e_a = 4 * _UNIT * (np.abs(eps) / mu + mu + np.abs(a))
    e_b = 2 * _UNIT * (mu + np.abs(b))
    err_la = sa * e_a + _LOG_NDTR_RTOL * np.abs(la)
    # x from log Φ values (a >= 0) ...
    err_x = ((np.abs(sb - sa) + 16 * _UNIT * (sa + sb)) * e_a + sb * e_b
             + _LOG_NDTR_RTOL * (np.abs(la) + np.abs(lb)) + 4 * _UNIT * (np.abs(eps) + np.abs(la) + np.abs(lb)))
    # ... or from Mills ratios (a < 0): d log M(z)/dz = s(z) + z, erfcx to _ERFCX_RTOL each
    ma, mb = np.abs(sa + a) + 4 * _UNIT * sa, np.abs(sb + b) + 4 * _UNIT * sb
    err_mills = (ma + mb) * e_a + mb * e_b + 2 * _ERFCX_RTOL + 4 * _UNIT * (np.abs(x) + 1.0)
    err_x = np.where(a < 0, err_mills, err_x)
    amplify = 1.0 / np.expm1(-x)  # x <= 0; inf at x = 0
    total = err_la + err_x * amplify + 4 * _UNIT * (np.abs(la) + np.abs(out) + 1.0)
    return 2.0 * np.where(np.isnan(total), np.inf, total)


def _far_tail_log_delta(eps: np.ndarray, mu: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An upper bound on ``log δ(ε)`` of ``μ``-GDP for ``a = −ε/μ + μ/2 ≤ −1000``, and a bound on its float64 error.

    With ``x = −a``, ``y = x + μ`` and the Mills ratio ``R(t) = Φ(−t)/φ(t)``, ``e^ε φ(b) = φ(a)`` gives
    ``δ = Φ(a) − e^ε Φ(b) = φ(a) (R(x) − R(y)) = φ(a) ∫_x^y (1 − t R(t)) dt`` (``R′ = tR − 1``). The asymptotic
    series ``t R(t) ~ Σ_k (−1)^k (2k−1)!!/t^(2k)`` envelops its sum for ``t > 0`` (each partial sum errs by less than
    the first omitted term, with its sign; Abramowitz & Stegun 7.1.24), so ``1/t² − 3/t⁴ ≤ 1 − t R(t) ≤
    1/t² − 3/t⁴ + 15/t⁶``. Integrated over ``[x, y]``:

        δ ≤ φ(a) · μ/(x y) · (1 − c + 15/x⁴),   c = 1/x² + 1/(x y) + 1/y²,

    (``∫ 3/t⁴ = μ/(x y) · c`` exactly, ``∫ 15/t⁶ ≤ μ/(x y) · 15/x⁴``), at most ``log(1 + 15/x⁴/(1 − c))`` above
    the exact value, the lower bound being ``φ(a) μ/(x y) (1 − c)``. No cancellation: the error comes from the inputs
    (``a`` within ``e_a``, ``b`` within ``e_a + e_b``, as in :func:`_gaussian_log_error`; ``|∂/∂x| ≤ x + 2/x``,
    ``|∂/∂y| ≤ 2/y``, ``|∂/∂μ| = 1/μ`` times ``u μ``) and from the float operations (``8u`` times the sum of the
    magnitudes of the terms); the sum is doubled, as there."""
    x = -a
    y = x + mu
    with np.errstate(over="ignore"):
        half_square = (0.5 * x) * x
    c = 1.0 / (x * x) + 1.0 / (x * y) + 1.0 / (y * y)
    lmu, lx, ly = np.log(mu), np.log(x), np.log(y)
    value = (-half_square - 0.5 * math.log(2 * math.pi) + lmu - lx - ly) + np.log1p(15.0 / (x * x) ** 2 - c)
    e_a = 4 * _UNIT * (np.abs(eps) / mu + mu + x)
    e_b = 2 * _UNIT * (mu + y)
    inputs = (x + 2.0 / x) * e_a + (2.0 / y) * (e_a + e_b) + _UNIT
    operations = 8 * _UNIT * (half_square + np.abs(lmu) + np.abs(lx) + np.abs(ly) + 1.0)
    return value, 2.0 * (inputs + operations)


def _float_up(value: mpmath.mpf) -> float:
    """The smallest float64 ``>= value`` (``float`` rounds to nearest; one step up covers it)."""
    f = float(value)
    return f if mpmath.mpf(f) >= value else math.nextafter(f, math.inf)


def gaussian_log_delta(eps: np.ndarray, mu: float | np.ndarray,
                       exact: Callable[[float, float], mpmath.mpf]) -> np.ndarray:
    """``log δ(ε)`` of ``μ``-GDP in float64, rounded **up**, elementwise over ``eps`` and ``mu`` (broadcast): the
    log-space formula plus a bound on its error (:func:`_gaussian_log_error`), below ``a = −1000`` the closed-form
    bound of :func:`_far_tail_log_delta` plus its error; where that bound exceeds :data:`_GAUSSIAN_MAX_LOG_ERROR`
    (and :data:`_GAUSSIAN_MAX_LOG_RTOL` of ``|log δ|``: cancellation in ``1 − e^x``), ``δ`` is taken from
    ``exact(ε, μ)`` (mpmath) and its log rounded up. An array of ``μ`` evaluates many compositions ``μ√k`` at once."""
    eps, mu = np.broadcast_arrays(np.asarray(eps, dtype=float), np.asarray(mu, dtype=float))
    a = -eps / mu + mu / 2.0
    b = a - mu
    la = special.log_ndtr(a)
    lb = special.log_ndtr(b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x = np.minimum(eps + lb - la, 0.0)
        tail = a < 0
        # in the lower tail, e^ε φ(b) = φ(a) gives x = log(M(b)/M(a)) with the Mills ratio
        # M(z) = Φ(z)/φ(z) ∝ erfcx(−z/√2): no cancellation between large log Φ values
        ea, eb = special.erfcx(-a[tail] / _SQRT2), special.erfcx(-b[tail] / _SQRT2)
        x[tail] = np.minimum(np.log1p((eb - ea) / ea), 0.0)
        out = la + np.log(-np.expm1(x))
        err = _gaussian_log_error(eps, mu, a, b, la, lb, x, out)
        far = a < -_FAR_TAIL
        out[far], err[far] = _far_tail_log_delta(eps[far], mu[far], a[far])
        out = out + err
        allowed = np.maximum(_GAUSSIAN_MAX_LOG_ERROR, _GAUSSIAN_MAX_LOG_RTOL * np.abs(out))
    # log Φ(a) = -inf: δ < Φ(a) is below every float, even in log space (|a| > 1e154).
    out = np.where(np.isneginf(la), -np.inf, out)
    bad = ~(err <= allowed) & np.isfinite(la)
    for i in np.flatnonzero(bad):
        try:
            d = exact(float(eps.flat[i]), float(mu.flat[i]))
        except (OverflowError, ArithmeticError):  # absurd magnitudes: keep the (safe) bound
            continue
        with mpmath.workdps(_GAUSSIAN_FALLBACK_DPS):
            out.flat[i] = _float_up(mpmath.log(d)) if d > 0 else -np.inf
    return np.where(np.isnan(out), 0.0, out)  # no usable bound at all: δ ≤ 1


class GaussianProfile(Profile):
    """The Gaussian mechanism ``N(f(X), σ²)`` with L2 sensitivity ``Δ``: μ-GDP with ``μ = Δ/σ``.

    ``δ(ε)`` is evaluated as ``log δ = log Φ(a) + log(−expm1(ε + log Φ(b) − log Φ(a)))`` with
    ``a = −ε/μ + μ/2``, ``b = a − μ`` and ``log Φ`` from ``scipy.special.log_ndtr``, so it stays
    accurate far below 1e-300 (where ``δ`` itself underflows, :meth:`log_delta` still answers).
    """

    family = "gaussian"
    #: composed exactly in closed form (:meth:`self_composed`).
    exact_composition = True

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

    def self_composed(self, k: int) -> tuple[Profile, str]:
        """Exact: ``k`` runs of ``N(μ, 1)`` vs ``N(0, 1)`` are ``μ√k``-GDP (Dong, Roth, Su 2022, Cor. 3.3),
        :meth:`compose`."""
        return self.compose(k), ROUTE_EXACT_GDP

    def weighted_compositions(self, ks: tuple[int, ...], weights: tuple[float, ...]) -> tuple[Profile, str]:
        """Every ``μ√k`` of ``ks`` in one vectorized evaluation
        (:class:`GaussianCompositions`), each exact as in :meth:`self_composed`."""
        return GaussianCompositions(self, ks, weights), ROUTE_EXACT_GDP

    # ------------------------------------------------------------------ δ(ε)
    def _log_delta_finite(self, eps: np.ndarray) -> np.ndarray:
        """``log δ(ε)`` in float64, rounded **up** (:func:`gaussian_log_delta`)."""
        return gaussian_log_delta(eps, self.mu, lambda e, _mu: self.delta_mp(e, _GAUSSIAN_FALLBACK_DPS))

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        """``δ(ε)`` rounded up: ``exp`` of the rounded-up log times ``1 + 4u`` (numpy's ``exp`` is
        correct to 1 ulp); where that underflows, the smallest positive float (``δ > 0`` always)."""
        with np.errstate(under="ignore"):
            out = np.exp(self._log_delta_finite(eps)) * (1.0 + 4 * _UNIT)
        return np.maximum(out, _TINY)

    def delta_mp(self, eps: Any, dps: int) -> mpmath.mpf:
        """``δ(ε) = Φ(a) − e^ε Φ(b)`` at ``dps`` digits (``mpmath.ncdf``; for ``a < −1e3`` the Mills-ratio
        series, since ``e^ε φ(b) = φ(a)`` gives ``δ = φ(a) [R(|a|) − R(|b|)]`` with ``R(x) = Φ(−x)/φ(x)``).
        The working precision is raised until the subtraction keeps ``dps`` significant digits."""
        dps = v.dps(dps, "gaussian.delta_mp")
        where = f"{self.family}.delta_mp"
        with mpmath.workdps(dps):
            e = as_mpf(eps, "eps", where)
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
        return lam * self.mu * self.mu / 2.0  # inf (no Rényi privacy) rather than an OverflowError for huge mu

    def rdp_curve(self, orders: np.ndarray) -> np.ndarray | None:
        """:meth:`rdp` at every one of ``orders`` at once (the same float64 operations, in the same order); orders
        not all ``> 1`` (or NaN) go through :meth:`rdp`, which refuses them."""
        lam = np.asarray(orders, dtype=float)
        if not np.all(lam > 1.0):
            return super().rdp_curve(orders)
        with np.errstate(over="ignore"):
            return lam * self.mu * self.mu / 2.0


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


#: loss width of the bins of the Laplace pair's loss-ordered pairs, and their largest and smallest number (a weak
#: Laplace run is cut into LAPLACE_MIN_BINS bins narrower than the width: ``laplace(scale=40)``, point(k=40), moves
#: from 0.27302 to 0.27271 with 2000 bins of 2.5e-5 instead of 50)
LAPLACE_LOSS_WIDTH = 1e-3
LAPLACE_MAX_BINS = 20_000
LAPLACE_MIN_BINS = 2_000


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
        """``log δ(ε)`` rounded **up**: ``a = Δ/b`` is replaced by the next float above it, the
        difference ``ε − a`` is stepped down by one ulp, and ``4u (|log δ| + 1)`` covers the rounding
        of ``expm1`` and ``log`` (each within 1 ulp; ``u = 2^-53``). Near ``ε = a`` the relative
        excess is ``≈ ulp(a)/(a − ε)``, absolute ``≈ 1e-16``."""
        a_hi = math.nextafter(self.a, math.inf)
        with np.errstate(divide="ignore"):
            t = np.nextafter(np.minimum(eps, a_hi) - a_hi, -np.inf) / 2.0
            mid = np.log(-np.expm1(t))
            low = np.log(-np.expm1(np.minimum(eps, 0.0)))
        out = np.where(eps >= a_hi, -np.inf, np.where(eps >= -a_hi, mid, low))
        finite = np.isfinite(out)
        out[finite] += 4 * _UNIT * (np.abs(out[finite]) + 1.0)
        return out

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        with np.errstate(under="ignore"):
            return np.exp(self._log_delta_finite(eps)) * (1.0 + 4 * _UNIT)

    def delta_mp(self, eps: Any, dps: int) -> mpmath.mpf:
        dps = v.dps(dps, "laplace.delta_mp")
        with mpmath.workdps(dps):
            e = as_mpf(eps, "eps", "laplace.delta_mp")
            a = mpmath.mpf(self.sensitivity) / mpmath.mpf(self.scale)
            if e >= a:
                return mpmath.mpf(0)
            if e >= -a:
                return -mpmath.expm1((e - a) / 2)
            return -mpmath.expm1(e)

    def dominating_pair(self) -> LaplacePair:
        """``Lap(Δ, b)`` vs ``Lap(0, b)``: the mechanism's own output pair, whose profile is this one."""
        return LaplacePair(self.sensitivity, self.scale)

    def self_composed(self, k: int) -> tuple[Profile, str]:
        """Pessimistic: dp-accounting's PLD of the Laplace mechanism (``from_laplace_mechanism``, losses rounded up
        on the grid :data:`symsel.profiles.composition.PLD_INTERVAL`; Koskela et al. 2020, Doroshenko et al. 2022)
        self-composed ``k`` times by FFT (:func:`symsel.profiles.composition.composed_pld`, which first refuses a PLD
        too large to hold)."""
        from dp_accounting.pld import privacy_loss_distribution

        def build() -> object:
            return privacy_loss_distribution.from_laplace_mechanism(
                self.scale, sensitivity=self.sensitivity, pessimistic_estimate=True,
                value_discretization_interval=PLD_INTERVAL)

        return composed_pld(self, k, build), ROUTE_PESSIMISTIC_PLD

    @property
    def finite_loss_bound(self) -> float:
        """``a = Δ/b``: the privacy loss of one run lies in ``[−a, a]``."""
        return self.sensitivity / self.scale

    def dominating_loss_pairs(self) -> tuple[DominatingPair, ...]:
        """The Laplace pair's middle cut into bins of loss width at most :data:`LAPLACE_LOSS_WIDTH` (at least
        :data:`LAPLACE_MIN_BINS` and at most :data:`LAPLACE_MAX_BINS` bins), each bin's loss rounded up to dominate
        (:func:`symsel.pairs.loss.laplace_pairs`); the pair is symmetric, so one direction serves."""
        return (self._laplace_pairs()[0],)

    def dominated_loss_pairs(self) -> tuple[DominatedPair, ...]:
        """The same bins kept whole: a post-processing of the Laplace pair (:meth:`dominating_loss_pairs`)."""
        return (self._laplace_pairs()[1],)

    def _laplace_pairs(self) -> tuple[DominatingPair, DominatedPair]:
        bins = min(LAPLACE_MAX_BINS, max(LAPLACE_MIN_BINS, math.ceil(2.0 * self.a / LAPLACE_LOSS_WIDTH)))
        return laplace_pairs(self.a, bins)

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


class GaussianCompositions(Profile):
    """``Σ_j w_j δ_{μ√k_j}(ε)`` for a Gaussian/GDP base: the weighted μ√k-GDP profiles of many ``k`` evaluated in
    one call of :func:`gaussian_log_delta` (each rounded up, as for one profile)."""

    family = "composed"

    def __init__(self, base: GaussianProfile, ks: Sequence[int], weights: Sequence[float]):
        self.base = base
        kept = [(k, w) for k, w in zip(ks, weights, strict=True) if w > 0]  # a mass that underflowed adds nothing
        self.mus = np.array([base.compose(k).mu for k, _ in kept], dtype=float)
        self.log_weights = np.log(np.array([w for _, w in kept], dtype=float))

    @property
    def spec(self) -> str:
        return f"compositions(base={self.base.spec}, count={self.mus.size})"

    def _log_delta_finite(self, eps: np.ndarray) -> np.ndarray:
        flat = np.asarray(eps, dtype=float).ravel()
        logs = gaussian_log_delta(flat[:, None], self.mus[None, :],
                                  lambda e, mu: GaussianProfile.from_mu(mu).delta_mp(e, 40))
        total = special.logsumexp(logs + self.log_weights[None, :], axis=1) + (self.mus.size + 1) * 1e-15
        return total.reshape(np.shape(eps))

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        with np.errstate(under="ignore"):
            return np.exp(self._log_delta_finite(eps)) * (1 + 1e-15)
