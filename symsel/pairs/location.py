"""Continuous location pairs: Gaussian ``N(mu, 1)`` vs ``N(0, 1)`` and Laplace ``Lap(shift, b)`` vs
``Lap(0, b)``, the dominating pairs of the Gaussian (and ``mu``-GDP) and Laplace mechanisms.

Each side's CDF, log density and bin masses are available at any mpmath precision (bin masses
without cancellation in the tails) and in float64. Exact selection on these pairs is in
:mod:`symsel.evidence.continuous`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import mpmath
import numpy as np
import scipy.special as sc

from symsel.errors import ParameterError

_GRID_LOGIT = 80.0  # quantile grid from about 1e-35 to 1 - 1e-35
_GRID_POINTS = 241  # per side


# --------------------------------------------------------------------- pairs
@dataclass(frozen=True)
class LocationPair:
    """Base class: ``P`` (side 0, input ``X``) is the standard law shifted by ``shift`` and scaled
    by ``scale``; ``P'`` (side 1, input ``X'``) is the same law at location 0."""

    shift: float
    scale: float

    def __post_init__(self) -> None:
        name = type(self).__name__
        for attr in ("shift", "scale"):
            value = getattr(self, attr)
            if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
                raise ParameterError(attr, value, "a finite real number", name)
            if not math.isfinite(float(value)):
                raise ParameterError(attr, value, "a finite real number", name)
        if not float(self.scale) > 0:
            raise ParameterError("scale", self.scale, "scale > 0", name)
        object.__setattr__(self, "shift", float(self.shift))
        object.__setattr__(self, "scale", float(self.scale))

    # ---- standardized law (subclasses) ----
    def _cdf0(self, z: mpmath.mpf) -> mpmath.mpf:
        raise NotImplementedError

    def _logpdf0(self, z: mpmath.mpf) -> mpmath.mpf:
        raise NotImplementedError

    def _isf0_float(self, u: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _bin_masses0_float(self, z: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _bin_mass0_mp(self, a: mpmath.mpf, b: mpmath.mpf) -> mpmath.mpf:
        raise NotImplementedError

    #: whether the log-likelihood ratio of the pair is unbounded (then ``D_inf`` is infinite)
    unbounded_ratio: ClassVar[bool] = False

    # ---- public, per side ----
    def loc(self, side: int) -> float:
        """Location of side 0 (``P``, shifted) or side 1 (``P'``, at 0)."""
        return self.shift if side == 0 else 0.0

    def ramp(self) -> tuple[float, float] | None:
        """The outputs outside which the pair's privacy loss is constant (``None`` when it varies everywhere)."""
        return None

    def _z(self, x: Any, side: int) -> mpmath.mpf:
        return (mpmath.mpf(x) - self.loc(side)) / self.scale

    def cdf_mp(self, x: Any, side: int) -> mpmath.mpf:
        """CDF of one side at the current mpmath precision (``x = ±inf`` allowed)."""
        if x == mpmath.inf or x == math.inf:
            return mpmath.mpf(1)
        if x == -mpmath.inf or x == -math.inf:
            return mpmath.mpf(0)
        return self._cdf0(self._z(x, side))

    def logpdf_mp(self, x: Any, side: int) -> mpmath.mpf:
        """Log density of one side at the current mpmath precision."""
        return self._logpdf0(self._z(x, side)) - mpmath.log(self.scale)

    def isf_float(self, u: Any, side: int) -> np.ndarray:
        """Inverse survival function of one side in float64 (``u`` = upper-tail probability)."""
        return self.loc(side) + self.scale * self._isf0_float(np.asarray(u, dtype=float))

    def bin_masses_float(self, cuts: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """Masses of the bins ``(-inf, c_1], (c_1, c_2], ..., (c_{n-1}, inf)`` under both sides,
        in float64 without cancellation (log-space differences in the tails)."""
        c = np.asarray(cuts, dtype=float)
        edges = np.concatenate(([-np.inf], c, [np.inf]))
        return tuple(self._bin_masses0_float((edges - self.loc(s)) / self.scale) for s in (0, 1))  # type: ignore[return-value]

    def bin_masses_mp(self, cuts: Sequence[float], dps: int) -> tuple[list[mpmath.mpf], list[mpmath.mpf]]:
        """Masses of the bins under both sides, correct to ``dps`` significant digits (computed once per pair,
        cuts and digits in a process: a lower bound cuts its pair into the same slices for every law at one δ)."""
        p, q = _bin_masses_mp(self, tuple(cuts), dps)
        return list(p), list(q)

    def grid(self) -> np.ndarray:
        """Scan points: quantiles of both sides on a logit grid (from about 1e-35 to
        1 - 1e-35), plus the locations."""
        t = np.linspace(-_GRID_LOGIT, _GRID_LOGIT, _GRID_POINTS)
        u = sc.expit(t)
        pts = np.concatenate([self.isf_float(u, 0), self.isf_float(u, 1), [self.shift, 0.0]])
        pts = np.unique(pts[np.isfinite(pts)])
        return pts


@lru_cache(maxsize=8)
def _bin_masses_mp(pair: LocationPair, cuts: tuple[float, ...], dps: int) -> tuple[tuple[mpmath.mpf, ...], ...]:
    """:meth:`LocationPair.bin_masses_mp` (a pure function of an immutable pair, the cuts and the digits)."""
    out = []
    cap = 20 * dps + 400
    for side in (0, 1):
        masses = []
        for a, b in zip([-math.inf, *cuts], [*cuts, math.inf], strict=True):
            work = dps + 15
            while True:
                with mpmath.workdps(work):
                    za = mpmath.mpf(-mpmath.inf) if a == -math.inf else pair._z(a, side)
                    zb = mpmath.inf if b == math.inf else pair._z(b, side)
                    m = pair._bin_mass0_mp(za, zb)
                    scale = _tail_mass(pair, za, zb)
                    lost = 0 if m == 0 else max(0, int(mpmath.ceil(mpmath.log10(scale / abs(m)))) - 2)
                if lost + dps + 10 <= work or work >= cap:
                    break
                work = min(dps + lost + 20, cap)
            with mpmath.workdps(dps):
                masses.append(+m)
        out.append(tuple(masses))
    return out[0], out[1]


def _tail_mass(pair: LocationPair, za: mpmath.mpf, zb: mpmath.mpf) -> mpmath.mpf:
    """The size of the terms whose difference is the bin ``(za, zb]``'s mass under the standard (symmetric) law: the
    mass below ``zb`` for a bin left of 0, above ``za`` for a bin right of 0, else 1. Digits are lost to the
    difference only as far as the mass is below it: a bin of mass 1e-200000 deep in a tail is a difference of two
    numbers of about that size (a floating exponent costs no digits), not of two numbers near 1."""
    if zb <= 0:
        return pair._cdf0(zb)
    if za >= 0:
        return pair._cdf0(-za)
    return mpmath.mpf(1)


@dataclass(frozen=True)
class GaussianPair(LocationPair):
    """``P = N(mu, 1)`` (input ``X``) vs ``P' = N(0, 1)`` (input ``X'``): the dominating pair of
    the Gaussian mechanism with ``mu = sensitivity / sigma`` (and of ``mu``-GDP)."""

    unbounded_ratio: ClassVar[bool] = True

    def __init__(self, mu: float):
        object.__setattr__(self, "shift", mu)
        object.__setattr__(self, "scale", 1.0)
        self.__post_init__()

    @property
    def mu(self) -> float:
        return self.shift

    def __repr__(self) -> str:
        return f"GaussianPair(mu={self.shift!r})"

    def _cdf0(self, z: mpmath.mpf) -> mpmath.mpf:
        return mpmath.ncdf(z)

    def _logpdf0(self, z: mpmath.mpf) -> mpmath.mpf:
        return -z * z / 2 - mpmath.log(2 * mpmath.pi) / 2

    def _isf0_float(self, u: np.ndarray) -> np.ndarray:
        return -sc.ndtri(u)  # scipy.stats.norm.isf, without importing scipy.stats (about 0.45 s)

    def _bin_masses0_float(self, z: np.ndarray) -> np.ndarray:
        a, b = z[:-1], z[1:]
        out = np.empty(len(a))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            low = b <= 0
            high = a >= 0
            mid = ~(low | high)
            lb, la = sc.log_ndtr(b[low]), sc.log_ndtr(a[low])
            out[low] = np.exp(lb) * -np.expm1(la - lb)
            sa, sb = sc.log_ndtr(-a[high]), sc.log_ndtr(-b[high])
            out[high] = np.exp(sa) * -np.expm1(sb - sa)
            out[mid] = 0.5 * (sc.erf(b[mid] / math.sqrt(2)) - sc.erf(a[mid] / math.sqrt(2)))
        return np.where(np.isfinite(out), np.maximum(out, 0.0), 0.0)

    def _bin_mass0_mp(self, a: mpmath.mpf, b: mpmath.mpf) -> mpmath.mpf:
        r2 = mpmath.sqrt(2)
        if b <= 0:
            return (mpmath.erfc(-b / r2) - mpmath.erfc(-a / r2)) / 2
        if a >= 0:
            return (mpmath.erfc(a / r2) - mpmath.erfc(b / r2)) / 2
        return (mpmath.erf(b / r2) - mpmath.erf(a / r2)) / 2


@dataclass(frozen=True)
class LaplacePair(LocationPair):
    """``P = Lap(shift, scale)`` (input ``X``) vs ``P' = Lap(0, scale)`` (input ``X'``): the
    dominating pair of the Laplace mechanism (``eps = shift / scale``-DP)."""

    def __repr__(self) -> str:
        return f"LaplacePair(shift={self.shift!r}, scale={self.scale!r})"

    def ramp(self) -> tuple[float, float]:
        """Between the two locations: the loss is ``−|shift|/scale`` below both, ``|shift|/scale`` above both."""
        return min(self.shift, 0.0), max(self.shift, 0.0)

    def _cdf0(self, z: mpmath.mpf) -> mpmath.mpf:
        return mpmath.exp(z) / 2 if z < 0 else 1 - mpmath.exp(-z) / 2

    def _logpdf0(self, z: mpmath.mpf) -> mpmath.mpf:
        return -abs(z) - mpmath.log(2)

    def _isf0_float(self, u: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.where(u <= 0.5, -np.log(2 * u), np.log(2 * (1 - u)))

    def _bin_masses0_float(self, z: np.ndarray) -> np.ndarray:
        a, b = z[:-1], z[1:]
        out = np.empty(len(a))
        with np.errstate(invalid="ignore", over="ignore"):
            low = b <= 0
            high = a >= 0
            mid = ~(low | high)
            out[low] = -0.5 * np.exp(b[low]) * np.expm1(a[low] - b[low])
            out[high] = -0.5 * np.exp(-a[high]) * np.expm1(a[high] - b[high])
            out[mid] = -0.5 * np.expm1(a[mid]) - 0.5 * np.expm1(-b[mid])
        return np.where(np.isfinite(out), np.maximum(out, 0.0), 0.0)

    def _bin_mass0_mp(self, a: mpmath.mpf, b: mpmath.mpf) -> mpmath.mpf:
        if b <= 0:
            return (mpmath.exp(b) - mpmath.exp(a)) / 2
        if a >= 0:
            return (mpmath.exp(-a) - mpmath.exp(-b)) / 2
        return -mpmath.expm1(a) / 2 - mpmath.expm1(-b) / 2


def check_location_pair(pair: Any, where: str) -> LocationPair:
    if not isinstance(pair, LocationPair):
        raise ParameterError("pair", pair, "a GaussianPair or LaplacePair", where)
    return pair
