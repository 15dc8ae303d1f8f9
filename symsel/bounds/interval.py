"""The interval bound: the worst case of private selection on a Gaussian base, from above (docs/interval.md).

For a base whose dominating pair is the Gaussian pair ``Q = N(μ, 1)``, ``Q' = N(0, 1)`` (the Gaussian mechanism,
``μ``-GDP) and a law of ``K`` with ``P[K ≥ 2] > 0``, the worst score order of the base's outputs is an *expanding
interval* (docs/interval.md, Theorem 1): the outputs below any contributing output form an interval ``[l, h]`` of
the real line ending at that output. Hence, for every ``ε ≥ 0``,

    δ_A(ε) ≤ ∫ sup_{l ≤ h} [ r(h) φ'(Q[l, h]) − e^ε φ'(Q'[l, h]) ]_+ dQ'(h),     r(h) = e^{μh − μ²/2},

(docs/interval.md, Corollary 2). Outputs with ``r(h)^D ≤ e^ε`` contribute nothing (``D`` the largest ``k`` with
``P[K = k] > 0``; ``D = ∞`` otherwise, and then ``r(h) ≤ 1``): on an interval below ``h`` the ``Q``-mass is at
most ``r(h)`` times the ``Q'``-mass.

Certified evaluation. The ``h``-axis is cut into cells of width :data:`H_WIDTH` from that cutoff to
``μ + TOP`` (the mass above is charged ``Q(h > μ + TOP) φ'(1)``); the ``l``-axis into coarse cells of width
:data:`L_COARSE`. On a cell pair ``[h_a, h_b] × [l_a, l_b]`` the integrand is at most
``r(h_b) φ'(Q[l_a, h_b]) − e^ε φ'(Q'[l_b, h_a])`` (``φ'`` is non-decreasing): each ``h``-cell takes the largest
such value over the ``l``-cells, after cutting the :data:`REFINED` best coarse ``l``-cells into :data:`L_FINE`
pieces, times its ``Q'``-mass. Masses carry a relative allowance of ``1e-12`` outwards, the float64 ``φ'``
values the law's measured allowance (:mod:`symsel.bounds.precision`), the sum ``1e-9``.
Every number is an upper bound on the statement; the discretization costs about 10 % of ``δ`` at ``δ = 1e-6``
(0.01 in ``ε`` at ``point(10)``, σ = 4), and the bound is exact in the limit of small cells.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

from symsel.bounds.precision import usable_float_error
from symsel.distributions import Distribution
from symsel.errors import NotApplicableError
from symsel.numeric import last_feasible
from symsel.pairs.location import GaussianPair
from symsel.profiles import Profile
from symsel.profiles.base import delta_by_symmetry

#: width of the cells of the contributing output ``h``.
H_WIDTH = 1e-3
#: width of the coarse cells of the interval's lower end ``l``, and the pieces each refined cell is cut into.
L_COARSE = 0.05
L_FINE = 64
#: how many coarse ``l``-cells, around the one with the largest bound, each ``h``-cell refines, and how many times
#: (each time around the largest coarse bound left; one window already meets the lower bounds of point laws).
WINDOW = 24
WINDOWS = 1
#: the ``h``-axis ends at ``μ + TOP`` (``Q``-mass above: about ``1e-44``), the ``l``-axis starts at ``−L_BOTTOM``
#: (everything below is one cell).
TOP = 14.0
L_BOTTOM = 12.0
#: outward allowances for rounding (masses, and the final sum).
MASS_ALLOWANCE = 1e-12
SUM_ALLOWANCE = 1e-9
#: ``h``-cells evaluated at once (memory: about this times the number of ``l``-cells floats).
CHUNK = 512


def _mass(a: np.ndarray, b: np.ndarray, shift: float) -> np.ndarray:
    """``N(shift, 1)[a, b]`` in float64, from the side of the median that avoids cancellation (0 if ``b ≤ a``)."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float) - shift, np.asarray(b, dtype=float) - shift)
    with np.errstate(invalid="ignore"):
        out = np.where(b <= 0, ndtr(b) - ndtr(a), ndtr(-a) - ndtr(-b))
    return np.where(b > a, np.maximum(out, 0.0), 0.0)


class IntervalProfile(Profile):
    """``δ(ε)`` of the interval bound for ``K ~ dist`` on the ``μ``-GDP pair (module docstring)."""

    family = "selection"

    def __init__(self, dist: Distribution, mu: float, value_margin: float = 0.0):
        self.dist = dist
        self.mu = float(mu)
        self.value_margin = float(value_margin)  # relative error allowed to the float64 φ' (bounds/precision.py)
        self.support_max = None if dist.support_max is None else int(dist.support_max)
        self._dphi_one = float(np.asarray(dist.dphi(np.array([1.0])), dtype=float)[0])
        self._cache: dict[float, float] = {}

    @property
    def spec(self) -> str:
        return f"interval(dist={self.dist.spec}, mu={self.mu!r})"

    def _dphi(self, u: np.ndarray) -> np.ndarray:
        return np.asarray(self.dist.dphi(np.clip(u, 0.0, 1.0)), dtype=float)

    def _cutoff(self, eps: float) -> float:
        """The smallest ``h`` that can contribute: ``r(h)^D = e^ε`` when the support ends at ``D``, else
        ``r(h) = 1`` (``h = μ/2``). Proof: ``Q[l, h] ≤ r(h) Q'[l, h]``, and ``φ'(r x) ≤ r^{D−1} φ'(x)`` for
        ``r ≥ 1`` (a polynomial of degree ``D − 1`` with non-negative coefficients)."""
        if self.support_max is None:
            return self.mu / 2.0
        return (eps / float(max(self.support_max, 1)) + self.mu * self.mu / 2.0) / self.mu

    def delta_nonnegative(self, eps: float) -> float:
        """The certified bound at one ``ε ≥ 0``."""
        eps = float(eps)
        if eps not in self._cache:
            self._cache[eps] = self._evaluate(eps)
        return self._cache[eps]

    def _evaluate(self, eps: float) -> float:
        mu, e = self.mu, math.exp(min(eps, 700.0))
        top = mu + TOP
        tail = float(_mass(np.array(top), np.array(np.inf), mu)) * self._dphi_one
        start = max(self._cutoff(eps), mu / 2.0)
        if start >= top:
            return tail * (1 + SUM_ALLOWANCE)
        h = np.append(np.arange(start, top, H_WIDTH), top)
        h_a, h_b = h[:-1], h[1:]
        cell_q_prime = _mass(h_a, h_b, 0.0)
        ratio = np.exp(mu * h_b - mu * mu / 2.0)
        # the l-axis: fine edges, every L_FINE-th one a coarse edge; below the first edge one unbounded cell
        fine_width = L_COARSE / L_FINE
        coarse_cells = math.ceil((top + L_BOTTOM) / L_COARSE)
        edges = -L_BOTTOM + fine_width * np.arange(coarse_cells * L_FINE + 1)
        sides = {name: (ndtr(edges - s), ndtr(s - edges)) for name, s in (("q", mu), ("q_prime", 0.0))}
        total = 0.0
        for s in range(0, h_a.size, CHUNK):
            ha, hb, r = h_a[s:s + CHUNK, None], h_b[s:s + CHUNK, None], ratio[s:s + CHUNK, None]
            bottom = self._upper(ha, hb, r, np.full((1, 1), -np.inf), edges[None, :1], e)[:, 0]
            lower_ends = edges[:-1:L_FINE]
            coarse = self._upper_on_grid(ha, hb, r, np.arange(0, edges.size - 1, L_FINE),
                                         np.arange(L_FINE, edges.size, L_FINE), edges, sides, e)
            outside = coarse.copy()
            fine_max = np.full(ha.shape[0], -np.inf)
            for _ in range(WINDOWS):  # refine around the largest coarse value not refined yet, WINDOWS times
                centre = np.argmax(outside, axis=1)
                first = np.clip(centre - WINDOW // 2, 0, max(lower_ends.size - WINDOW, 0))
                window = first[:, None] + np.arange(min(WINDOW, lower_ends.size))[None, :]  # coarse cells refined
                fine_first = (window[:, :1] * L_FINE) + np.arange(window.shape[1] * L_FINE)[None, :]
                fine = self._upper_on_grid(ha, hb, r, fine_first, fine_first + 1, edges, sides, e)
                fine_max = np.maximum(fine_max, fine.max(axis=1))
                np.put_along_axis(outside, window, -np.inf, axis=1)
            row = np.maximum.reduce([bottom, outside.max(axis=1), fine_max, np.zeros(ha.shape[0])])
            total += float(np.sum(cell_q_prime[s:s + CHUNK] * row))
        return total * (1 + SUM_ALLOWANCE) + tail

    def _upper_on_grid(self, ha: np.ndarray, hb: np.ndarray, r: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                       edges: np.ndarray, sides: dict, e: float) -> np.ndarray:
        """:meth:`_upper` for the ``l``-cells ``[edges[lower], edges[upper]]`` (index arrays broadcasting against
        the rows of ``h``-cells), from the CDF and survival values of the edges computed once."""
        cdf_q, sf_q = sides["q"]
        cdf_p, sf_p = sides["q_prime"]
        la, lb = edges[lower], edges[upper]
        below = hb - self.mu <= 0
        q = np.where(below, ndtr(hb - self.mu) - cdf_q[lower], sf_q[lower] - ndtr(self.mu - hb))
        q = np.where(la < hb, np.minimum(np.maximum(q, 0.0) * (1 + MASS_ALLOWANCE), 1.0), 0.0)
        q_prime = np.where(ha <= 0, ndtr(ha) - cdf_p[upper], sf_p[upper] - ndtr(-ha))
        q_prime = np.where(lb < ha, np.maximum(q_prime, 0.0) * (1 - MASS_ALLOWANCE), 0.0)
        up, down = 1 + self.value_margin, 1 - self.value_margin
        value = r * self._dphi(q) * up - e * self._dphi(q_prime) * down
        return np.where(la <= hb, value, -np.inf)

    def _upper(self, ha: np.ndarray, hb: np.ndarray, r: np.ndarray, la: np.ndarray, lb: np.ndarray,
               e: float) -> np.ndarray:
        """``r(h_b) φ'(Q[l_a, h_b]) − e^ε φ'(Q'[l_b, h_a])`` (``−inf`` where ``l_a > h_b``): at least the
        integrand anywhere on the cell pair."""
        q = np.minimum(_mass(la, hb, self.mu) * (1 + MASS_ALLOWANCE), 1.0)
        q_prime = _mass(lb, ha, 0.0) * (1 - MASS_ALLOWANCE)
        up, down = 1 + self.value_margin, 1 - self.value_margin
        value = r * self._dphi(q) * up - e * self._dphi(q_prime) * down
        return np.where(la <= hb, value, -np.inf)

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        def nonnegative(x: np.ndarray) -> np.ndarray:
            return np.array([min(1.0, self.delta_nonnegative(v)) for v in np.ravel(x)]).reshape(np.shape(x))

        return delta_by_symmetry(eps, nonnegative)

    def epsilon(self, delta: float) -> float:
        """The smallest ``ε ≥ 0`` with the bound ``≤ delta``, from above (checked, :func:`last_feasible`)."""
        d = self._check_delta(delta)
        if d <= 0:
            return math.inf
        if self.delta_nonnegative(0.0) <= d:
            return 0.0
        log_target = math.log(d)

        def gap(eps: float) -> float:
            value = self.delta_nonnegative(eps)
            return math.log(value) - log_target if value > 0 else -math.inf

        lo, hi = 0.0, 1.0
        while gap(hi) > 0:
            lo, hi = hi, 2.0 * hi
            if hi > 1e4:
                return math.inf
        return last_feasible(gap, lo, hi, xtol=1e-6, rtol=1e-9)


def interval_profile(dist: Distribution, base: Profile) -> IntervalProfile:
    """The interval bound of ``dist`` on ``base`` (docs/interval.md).

    Raises:
        NotApplicableError: the base's dominating pair is not the Gaussian pair (the theorem needs a continuous,
            strictly increasing likelihood ratio), or ``P[K ≥ 2] = 0`` (``φ'`` is then constant).
    """
    pair = base.dominating_pair()
    if not isinstance(pair, GaussianPair):
        raise NotApplicableError(
            f"method 'interval': needs a Gaussian or GDP base (a continuous, strictly increasing likelihood ratio), "
            f"not {base.spec}")
    if dist.support_max is not None and int(dist.support_max) < 2:
        raise NotApplicableError(f"method 'interval': needs P[K >= 2] > 0, and {dist.spec} has K <= 1")
    return IntervalProfile(dist, pair.mu, usable_float_error(dist, "interval"))
