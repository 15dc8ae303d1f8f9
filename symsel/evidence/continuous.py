"""Exact selection on continuous location pairs: Gaussian ``N(mu,1)`` vs ``N(0,1)`` and Laplace
``Lap(shift, b)`` vs ``Lap(0, b)``, with the monotone score (higher ``x`` is better).

Xiang, Wang & Wang (Section 5, Algorithm 3) reduce DP-SGD to the Gaussian pair and compute the
Rényi divergence of the selection with densities ``a(x) = phi'(F(x)) f(x)`` (plus the atom
``phi(0)`` at ``⊥``). Here:

* The hockey-stick divergence needs no quadrature: ``a`` is the derivative of ``phi(F(x))``, so for
  any set ``T`` that is a finite union of intervals, ``A(T)`` is a sum of differences of
  ``phi(F(.))`` at its end points. The set ``T = {x : a(x) > e^eps a'(x)}`` is found by scanning
  ``log a - log a'`` on a grid of quantiles and refining each sign change by bracketing root
  finding. ``A(T) - e^eps A'(T)`` is a lower bound on ``H_{e^eps}`` for *every* ``T`` (the
  hockey-stick divergence is a supremum over sets), so an inaccurate root only lowers the value.
* ``eps`` for a given ``delta`` iterates ``eps <- log((A(T) - delta) / A'(T))`` with
  ``T = {a > e^eps a'}``. Each iterate is certified -- for the explicit set ``T``,
  ``H_{e^eps}(A||A') >= A(T) - e^eps A'(T) > delta`` for every smaller ``eps`` -- and the
  iterates increase to the exact value (a Newton-type iteration on the convex profile). The
  reported number therefore errs low: it is safe as a lower bound.
* Rényi divergences use mpmath tanh-sinh quadrature split on the same quantile grid.

:func:`discretize` turns a pair into a :class:`~symsel.pairs.FinitePair` on bins (a
post-processing), whose selection value is below the continuous one and converges to it.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from typing import Any

import mpmath
import numpy as np

from symsel import validate
from symsel.errors import ParameterError
from symsel.evidence.exact import _check_delta, _renyi_order
from symsel.pairs.finite import FinitePair
from symsel.pairs.location import LocationPair, check_location_pair
from symsel.profiles.region import as_mpf

DEFAULT_DPS = 30


# --------------------------------------------------------------------- selection law pieces
def selection_cdf(pair: LocationPair, dist: Any, x: Any, side: int, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """``phi(F(x)) = P[K = 0] + P[K >= 1, best <= x]`` for one side (``x = ±inf`` allowed)."""
    with mpmath.workdps(dps):
        return dist.phi_mp(pair.cdf_mp(x, side), dps)


def selection_log_density(pair: LocationPair, dist: Any, x: Any, side: int, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """``log a(x) = log phi'(F(x)) + log f(x)`` for one side (Xiang et al., Algorithm 3)."""
    with mpmath.workdps(dps):
        d = dist.dphi_mp(pair.cdf_mp(x, side), dps)
        if d <= 0:
            return mpmath.mpf(-mpmath.inf)
        return mpmath.log(d) + pair.logpdf_mp(x, side)


class _Direction:
    """Log-ratio ``L(x) = log a_s(x) - log a_t(x)`` of one direction on the scan grid."""

    def __init__(self, pair: LocationPair, dist: Any, s: int, dps: int):
        self.pair, self.dist, self.s, self.t = pair, dist, s, 1 - s
        self.dps = dps
        self.grid = [mpmath.mpf(float(x)) for x in pair.grid()]
        with mpmath.workdps(20):
            self.values = [self.ratio(x, 20) for x in self.grid]

    def ratio(self, x: Any, dps: int) -> mpmath.mpf:
        a = selection_log_density(self.pair, self.dist, x, self.s, dps)
        b = selection_log_density(self.pair, self.dist, x, self.t, dps)
        with mpmath.workdps(dps):
            if a == -mpmath.inf and b == -mpmath.inf:
                return mpmath.mpf(0)
            return a - b

    def root(self, lo: mpmath.mpf, hi: mpmath.mpf, f_lo: mpmath.mpf, f_hi: mpmath.mpf, eps: Any) -> mpmath.mpf:
        """A sign change of ``L - eps`` in ``[lo, hi]`` (Illinois method, keeps the bracket)."""
        work = self.dps + 10
        with mpmath.workdps(work):
            tol = mpmath.mpf(10) ** (-(self.dps // 2 + 4)) * (1 + abs(lo) + abs(hi))
            a, b, fa, fb = mpmath.mpf(lo), mpmath.mpf(hi), f_lo - eps, f_hi - eps
            side = 0
            for _ in range(200):
                if abs(b - a) < tol:
                    break
                c = (a * fb - b * fa) / (fb - fa) if fb != fa else (a + b) / 2
                if not a < c < b:
                    c = (a + b) / 2
                fc = self.ratio(c, work) - eps
                if fc == 0:
                    return c
                if (fc > 0) == (fb > 0):
                    b, fb = c, fc
                    if side == -1:
                        fa /= 2
                    side = -1
                else:
                    a, fa = c, fc
                    if side == 1:
                        fb /= 2
                    side = 1
            return (a + b) / 2

    def positive_set(self, eps: Any) -> list[tuple[Any, Any]]:
        """Intervals (open ends ``±inf`` allowed) where ``L(x) > eps``, from the grid scan."""
        with mpmath.workdps(self.dps + 10):
            e = mpmath.mpf(eps)
            signs = [v > e for v in self.values]
            intervals = []
            start = -mpmath.inf if signs[0] else None
            for i in range(1, len(self.grid)):
                if signs[i] != signs[i - 1]:
                    x = self.root(self.grid[i - 1], self.grid[i], self.values[i - 1], self.values[i], e)
                    if signs[i]:
                        start = x
                    else:
                        intervals.append((start, x))
                        start = None
            if start is not None:
                intervals.append((start, mpmath.inf))
            return intervals

    def masses(self, intervals: list[tuple[Any, Any]], dps: int) -> tuple[mpmath.mpf, mpmath.mpf]:
        """``(A_s(T), A_t(T))`` for the union ``T`` of ``intervals`` (``⊥`` not included)."""
        out = []
        for side in (self.s, self.t):
            with mpmath.workdps(dps):
                total = mpmath.mpf(0)
                for lo, hi in intervals:
                    total += selection_cdf(self.pair, self.dist, hi, side, dps) - selection_cdf(
                        self.pair, self.dist, lo, side, dps)
                out.append(total)
        return out[0], out[1]


@functools.lru_cache(maxsize=32)
def _direction(pair: LocationPair, dist: Any, s: int, dps: int) -> _Direction:
    """The scanned log-ratio of one direction (cached: the scan is the costly part)."""
    return _Direction(pair, dist, s, dps)


def selection_delta(pair: LocationPair, dist: Any, eps: Any, dps: int = DEFAULT_DPS,
                 direction: int | None = None) -> mpmath.mpf:
    """``H_{e^eps}`` of the selection on a continuous pair (monotone score), any real ``eps``.

    ``direction=0`` is ``H(A||A')`` (``A`` from ``P``), ``1`` is ``H(A'||A)``, ``None`` the max of
    both (the two-sided profile). The value is ``A(T) - e^eps A'(T)`` for the computed set
    ``T = {a > e^eps a'}``, which never exceeds the true divergence.
    """
    where = "continuous.selection_delta"
    check_location_pair(pair, where)
    dps = validate.dps(dps, where)
    dirs = [0, 1] if direction is None else [direction]
    values = []
    for s in dirs:
        d = _direction(pair, dist, s, dps)
        work = dps + 20
        with mpmath.workdps(work):
            e = as_mpf(eps, "eps", where)
            a, b = d.masses(d.positive_set(e), work)
            h = a - mpmath.exp(e) * b
            if e < 0:
                h += dist.p0_mp(work) * (1 - mpmath.exp(e))
            values.append(max(h, mpmath.mpf(0)))
    with mpmath.workdps(dps):
        return +max(values)


def selection_epsilon(pair: LocationPair, dist: Any, delta: Any, dps: int = DEFAULT_DPS,
                      direction: int | None = None, max_iter: int = 80) -> mpmath.mpf:
    """Smallest ``eps >= 0`` with ``H_{e^eps} <= delta`` for the selection on a continuous pair.

    The iteration ``eps <- log((A(T) - delta) / A'(T))`` increases to the exact value from below;
    every iterate is certified by its set ``T`` (see the module docstring), so the result never
    exceeds the truth: it is safe to use as a lower bound. ``delta = 0`` gives ``D_inf``.
    """
    where = "continuous.selection_epsilon"
    check_location_pair(pair, where)
    dps = validate.dps(dps, where)
    _check_delta(delta, where)
    if float(delta) == 0:
        return selection_renyi(pair, dist, math.inf, dps, direction=direction)
    dirs = [0, 1] if direction is None else [direction]
    results = []
    for s in dirs:
        d = _direction(pair, dist, s, dps)
        work = dps + 20
        with mpmath.workdps(work):
            dl = mpmath.mpf(delta) if not isinstance(delta, float) else mpmath.mpf(repr(delta))
            tol = mpmath.mpf(10) ** (-(dps + 2))
            eps = mpmath.mpf(0)
            best = mpmath.mpf(0)
            for _ in range(max_iter):
                a, b = d.masses(d.positive_set(eps), work)
                if a <= dl or b <= 0:
                    break
                new = mpmath.log((a - dl) / b)
                if new <= best + tol * (1 + abs(best)):
                    best = max(best, new)
                    break
                best = new
                eps = new
            # nudge down by more than the final rounding, so the reported value stays below
            results.append(best * (1 - mpmath.mpf(10) ** (1 - dps)) if best > 0 else best)
    with mpmath.workdps(dps):
        return +max(results)


def _split_points(pair: LocationPair, count: int = 12) -> list[mpmath.mpf]:
    """Quadrature break points: a subsample of the quantile grid plus the two locations (the
    kinks of the Laplace density)."""
    grid = pair.grid()
    idx = np.unique(np.linspace(0, len(grid) - 1, count).astype(int))
    pts = np.unique(np.concatenate([grid[idx], [pair.shift, 0.0]]))
    return [mpmath.mpf(float(x)) for x in pts]


def selection_renyi(pair: LocationPair, dist: Any, order: Any, dps: int = DEFAULT_DPS,
          direction: int | None = None) -> mpmath.mpf:
    """Rényi divergence of the selection on a continuous pair (Xiang et al., Algorithm 3), by
    tanh-sinh quadrature split on the quantile grid; the ``⊥`` atom contributes ``phi(0)``.

    ``order = inf`` gives ``sup_x log a(x)/a'(x)``: ``inf`` for the Gaussian pair; for the Laplace
    pair the supremum over the scan grid, refined locally (the log-ratio converges exponentially
    fast in the tails, which the grid reaches to quantiles of about 1e-35).
    """
    where = "continuous.selection_renyi"
    check_location_pair(pair, where)
    dps = validate.dps(dps, where)
    lam = _renyi_order(order, where)
    dirs = [0, 1] if direction is None else [direction]
    values = []
    for s in dirs:
        if lam == math.inf:
            values.append(_sup_log_ratio(pair, dist, s, dps))
            continue
        work = dps + 10
        with mpmath.workdps(work):
            lm = mpmath.mpf(lam) if not isinstance(lam, float) else mpmath.mpf(repr(lam))

            def integrand(x: mpmath.mpf, s: int = s, lm: mpmath.mpf = lm, work: int = work) -> mpmath.mpf:
                la = selection_log_density(pair, dist, x, s, work)
                lb = selection_log_density(pair, dist, x, 1 - s, work)
                if la == -mpmath.inf:
                    return mpmath.mpf(0)
                return mpmath.exp(lm * la + (1 - lm) * lb)

            pts = [-mpmath.inf, *_split_points(pair), mpmath.inf]
            total = mpmath.quad(integrand, pts) + dist.p0_mp(work)
            values.append(mpmath.log(total) / (lm - 1))
    with mpmath.workdps(dps):
        return +max(values)


def _sup_log_ratio(pair: LocationPair, dist: Any, s: int, dps: int) -> mpmath.mpf:
    if pair.unbounded_ratio and pair.shift != 0:
        return mpmath.inf
    d = _direction(pair, dist, s, dps)
    with mpmath.workdps(dps + 10):
        i = max(range(len(d.values)), key=lambda j: d.values[j])
        lo = d.grid[max(i - 1, 0)]
        hi = d.grid[min(i + 1, len(d.grid) - 1)]
        best = d.ratio(d.grid[i], dps + 10)
        # golden-section refinement of the maximum on [lo, hi]
        g = (mpmath.sqrt(5) - 1) / 2
        a, b = lo, hi
        c, e = b - g * (b - a), a + g * (b - a)
        fc, fe = d.ratio(c, dps + 10), d.ratio(e, dps + 10)
        for _ in range(60):
            if fc > fe:
                b, e, fe = e, c, fc
                c = b - g * (b - a)
                fc = d.ratio(c, dps + 10)
            else:
                a, c, fc = c, e, fe
                e = a + g * (b - a)
                fe = d.ratio(e, dps + 10)
        best = max(best, fc, fe, d.ratio(lo, dps + 10), d.ratio(hi, dps + 10))
        return max(best, mpmath.mpf(0) if dist.p0 > 0 else best)


# --------------------------------------------------------------------- discretization
def discretize(pair: LocationPair, cuts: Sequence[float], order: Sequence[int] | None = None,
               dps: int = 100) -> FinitePair:
    """The post-processing of ``pair`` into the bins ``(-inf, c_1], ..., (c_{n-1}, inf)``
    (``cuts`` increasing), with masses correct to ``dps`` digits and the given score order over
    the bins (default: the natural, monotone order)."""
    where = "discretize"
    check_location_pair(pair, where)
    c = [float(x) for x in cuts]
    if not all(math.isfinite(x) for x in c) or any(b <= a for a, b in itertools.pairwise(c)):
        raise ParameterError("cuts", c[:8], "finite, strictly increasing cut points", where)
    p, q = pair.bin_masses_mp(c, dps)
    return FinitePair(p, q, order, label=f"{pair!r} on {len(c) + 1} bins")
