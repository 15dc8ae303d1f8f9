"""The trade-off curve and the attack risk implied by a certified privacy profile (docs/tradeoff.md).

An adversary who tests "the input was ``X``" against "it was ``X'``" with a rejection rule ``φ`` has type I error
(false-positive rate) ``α = E_{M(X)} φ`` and type II error ``β = 1 − E_{M(X')} φ`` (one minus the true-positive
rate). For every real ``ε``, a profile ``δ(·)`` valid for both orders of the neighbouring pair gives
(docs/tradeoff.md, Theorem 1)

    TPR ≤ δ(ε) + e^ε α          and          β ≥ e^{−ε} (1 − α − δ(ε)),

so ``β ≥ f(α) = sup_{ε ≥ 0} max(1 − δ(ε) − e^ε α, e^{−ε} (1 − δ(ε) − α), 0)`` (Dong, Roth, Su, *Gaussian
Differential Privacy*, JRSS-B 2022, Proposition 2.12 and Remark 2.13; Kairouz, Oh, Viswanath, ICML 2015).
Each ``ε`` gives a valid bound on its own, so the value at any finite set of ``ε`` is certified; the set only
decides how close it comes to ``f``.

Writing the second family at ``−ε`` (``s = −ε``), both are one function of a real ``s``,
``F(s) = δ(s) + e^s α`` (``δ`` at negative ``s`` by the symmetry identity of :mod:`symsel.profiles.base`), the
value of the convex conjugate of ``f`` at slope ``−e^s``: for an exact profile ``F`` is convex in ``e^s``, hence
unimodal in ``s``. :func:`tradeoff_points` minimizes it for every ``α`` at once by bracketing and golden-section
search in ``s``, evaluating ``δ`` only at ``|s|`` (``ε ≥ 0``), each family in the form that keeps its small number
accurate (``δ + e^ε α`` for a small TPR, ``e^{−ε}(1 − α − δ)`` for a small ``β``), rounded to the safe side. The
search stops when convexity in ``e^s`` shows the remaining bracket cannot lower ``F`` by more than a relative
``rtol`` (the reported ``gap``); the answer is certified whether or not the profile is convex, only its
closeness relies on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from symsel.errors import ParameterError
from symsel.profiles.region import ArrayLike, as_probabilities, scalar_or_array

if TYPE_CHECKING:
    from symsel.profiles.base import Profile

#: unit roundoff of float64.
UNIT = 2.0**-53
#: the safety margin, in units of :data:`UNIT`, by which a computed bound is moved to its safe side (each value
#: below carries at most six roundings; see :func:`_bounds_at`).
MARGIN = 16.0 * UNIT
#: default relative tolerance of the search: it stops when the bracket can lower the TPR bound (or raise the
#: ``β`` bound, whichever is the smaller number) by at most this fraction of it.
DEFAULT_RTOL = 1e-6
#: the largest ``|ε|`` searched (``e^ε`` stays finite in float64).
MAX_EPSILON = 700.0
#: the points ``s`` scanned for every ``α`` before the golden-section search: 0 and ``±2^j``, ``j = −5 … 9``.
SCAN = np.concatenate([-(2.0 ** np.arange(9, -6, -1)), [0.0], 2.0 ** np.arange(-5, 10)])
#: golden-section steps per ``α`` at most (the bracket shrinks by 0.618 per step: 1e-17 of its width after 80).
MAX_GOLDEN_STEPS = 80
_INV_PHI = (math.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True)
class TradeoffPoints:
    """The trade-off bound at each requested false-positive rate.

    Attributes:
        alpha: the false-positive rates (type I errors) asked for.
        beta: certified lower bounds on the adversary's type II error at each ``alpha`` (``f(α)``).
        tpr: certified upper bounds on the true-positive rate at each ``alpha`` (``1 − f(α)``, computed in its own
            accurate form).
        epsilon: the ``ε`` of the constraint that gave each value (negative: the second family,
            ``β ≥ e^{ε}(1 − α − δ(−ε))``); ``nan`` where ``α`` is 0 or 1 (closed answers).
        gap: how much the search could still lower ``tpr`` (or raise ``beta``) at each ``alpha`` if the profile is
            convex in ``e^ε`` (every exact profile is); 0 where the answer is closed.
        evaluations: points ``ε`` at which ``δ`` was evaluated.
    """

    alpha: np.ndarray
    beta: np.ndarray
    tpr: np.ndarray
    epsilon: np.ndarray
    gap: np.ndarray
    evaluations: int


#: the ``ε`` at which :func:`advantage_upper` first evaluates ``δ`` (one vectorized call).
ADVANTAGE_GRID = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0)
#: rounds of refinement of :func:`advantage_upper` at most (each evaluates ``δ`` at up to four more ``ε``).
ADVANTAGE_ROUNDS = 12


def advantage_upper(profile: Profile, rtol: float = 1e-4) -> float:
    """A certified upper bound on the attack advantage ``sup_φ (TPR − FPR) = sup_α (1 − α − β(α))``
    (docs/tradeoff.md, Corollary 2): the exact supremum over ``α`` of ``1 − α − f_E(α)`` for the constraints of a
    finite set ``E`` of ``ε``, at most ``δ(0)`` (``0 ∈ E``) and much below it where a bound is loose at ``ε = 0``.
    ``E`` starts at :data:`ADVANTAGE_GRID` and is refined around the two constraints that meet at the supremum,
    until two rounds in a row lower it by less than a relative ``rtol``."""
    grid = np.array(ADVANTAGE_GRID)
    deltas = np.asarray(profile.delta(grid), dtype=float)
    value, used = _advantage_of_lines(grid, deltas)
    idle = 0
    for _ in range(ADVANTAGE_ROUNDS):
        new = set()
        for i in used:
            if i > 0:
                new.add(0.5 * (grid[i - 1] + grid[i]))
            new.add(0.5 * (grid[i] + grid[i + 1]) if i + 1 < grid.size else 2.0 * grid[i] + 1.0)
        points = np.array(sorted(new - set(grid.tolist())))
        if points.size == 0:
            break
        grid = np.concatenate([grid, points])
        deltas = np.concatenate([deltas, np.asarray(profile.delta(points), dtype=float)])
        order = np.argsort(grid)
        grid, deltas = grid[order], deltas[order]
        previous = value
        value, used = _advantage_of_lines(grid, deltas)
        idle = idle + 1 if previous - value <= rtol * value else 0
        if idle == 2:  # two rounds in a row without progress
            break
    return min(value, float(deltas[0]))  # δ(0), the profile's own number, needs no rounding allowance


def _advantage_of_lines(eps: np.ndarray, deltas: np.ndarray) -> tuple[float, tuple[int, ...]]:
    """``sup_{α ∈ [0,1]} min(A(α), B(α))`` with ``A(α) = min_ε (δ(ε) + (e^ε − 1) α)`` (first family: non-decreasing
    in ``α``) and ``B(α) = min(1 − α, min_ε ((1 − α)(1 − e^{−ε}) + e^{−ε} δ(ε)))`` (second family: non-increasing),
    the two ways Theorem 1 bounds ``1 − α − β``; and the indices of the constraints active at the supremum. The
    supremum is where ``A`` meets ``B``: bisection on ``α``, and the value ``min(A(hi), B(lo))`` on the final
    bracket bounds ``min(A, B)`` on it from above; every term is rounded up by :data:`MARGIN`."""
    up = 1.0 + MARGIN
    rise, fall, shrink = np.expm1(eps), -np.expm1(-eps), np.exp(-eps)

    def a(alpha: float) -> tuple[float, int]:
        values = (deltas + rise * alpha) * up
        i = int(np.argmin(values))
        return float(values[i]), i

    def b(alpha: float) -> tuple[float, int]:
        values = ((1.0 - alpha) * fall + shrink * deltas) * up * up
        i = int(np.argmin(values))
        return min(float(values[i]), (1.0 - alpha) * up), i

    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if a(mid)[0] < b(mid)[0]:
            lo = mid
        else:
            hi = mid
    (value_a, i), (value_b, j) = a(hi), b(lo)
    return min(1.0, value_a, value_b), tuple(sorted({i, j}))


def tradeoff_of_points(alpha: ArrayLike, epsilons: ArrayLike, deltas: ArrayLike) -> TradeoffPoints:
    """The trade-off bound implied by a few certified ``(ε, δ)`` points alone (docs/tradeoff.md, Theorem 1 at each
    point, both families): ``δ`` need not be evaluated again, so a display that has already computed ``ε(δ)`` at a
    few ``δ`` shows the attack risk those points imply at no further cost. Each point must hold for both orders of
    the neighbouring pair (``δ(ε) ≤ δ`` for every symsel profile and selection bound); the values are certified,
    and looser than :func:`tradeoff_points`, which searches the whole profile."""
    arr, _ = as_probabilities(alpha, "alpha", "tradeoff_of_points")
    eps = np.asarray(epsilons, dtype=float).reshape(-1)
    dlt = np.asarray(deltas, dtype=float).reshape(-1)
    if eps.shape != dlt.shape or np.any(np.isnan(eps)) or np.any(eps < 0) or np.any(~((dlt >= 0) & (dlt <= 1))):
        raise ParameterError("epsilons, deltas", (epsilons, deltas), "two arrays of equal length, epsilon >= 0 and "
                             "0 <= delta <= 1", "tradeoff_of_points")
    keep = np.isfinite(eps)
    eps, dlt = eps[keep], dlt[keep]
    flat = arr.reshape(-1)
    beta, tpr = np.zeros(flat.size), np.ones(flat.size)
    if eps.size:
        s = np.concatenate([eps, -eps])[:, None]
        f, g = _bounds_at(s, flat[None, :], np.concatenate([dlt, dlt])[:, None])
        tpr = np.clip(np.min(f, axis=0), 0.0, 1.0)
        beta = np.clip(np.max(g, axis=0), 0.0, 1.0)
    shape = arr.shape
    return TradeoffPoints(arr, beta.reshape(shape), tpr.reshape(shape), np.full(shape, np.nan), np.zeros(shape),
                          0)


def advantage_of_points(epsilons: ArrayLike, deltas: ArrayLike) -> float:
    """The certified upper bound on the attack advantage implied by a few ``(ε, δ)`` points alone (docs/tradeoff.md,
    Corollary 2; see :func:`tradeoff_of_points`)."""
    eps = np.asarray(epsilons, dtype=float).reshape(-1)
    dlt = np.asarray(deltas, dtype=float).reshape(-1)
    keep = np.isfinite(eps)
    if not np.any(keep):
        return 1.0
    return _advantage_of_lines(eps[keep], dlt[keep])[0]


def tradeoff_points(profile: Profile, alpha: ArrayLike, rtol: float = DEFAULT_RTOL) -> TradeoffPoints:
    """The certified trade-off bound of ``profile`` at every false-positive rate in ``alpha`` (docs/tradeoff.md).

    ``profile``: a certified upper bound on a mechanism's privacy profile, valid for both orders of every
    neighbouring pair (every symsel profile and selection bound). ``alpha``: a number or array in ``[0, 1]``.
    ``rtol`` in ``(0, 0.1]``: the relative closeness the search aims for (see :data:`DEFAULT_RTOL`).
    """
    arr, _ = as_probabilities(alpha, "alpha", "tradeoff")
    if not (isinstance(rtol, int | float) and not isinstance(rtol, bool) and 0.0 < rtol <= 0.1):
        raise ParameterError("rtol", rtol, "a real number in (0, 0.1]", "tradeoff")
    flat = arr.reshape(-1)
    n = flat.size
    beta = np.zeros(n)
    tpr = np.ones(n)
    eps = np.full(n, np.nan)
    gap = np.zeros(n)
    evaluations = 0
    zero = flat == 0.0
    if np.any(zero):  # TPR ≤ inf_ε δ(ε) = δ(∞)
        d_inf = float(profile.delta_at_infinity)
        tpr[zero] = min(1.0, d_inf * (1.0 + MARGIN))
        beta[zero] = max(0.0, math.nextafter(1.0 - d_inf, 0.0)) if d_inf > 0 else 1.0
    inner = (flat > 0.0) & (flat < 1.0)  # α = 1: β ≥ 0 and TPR ≤ 1 are the answer
    if np.any(inner):
        search = _Search(profile, flat[inner], rtol)
        search.run()
        beta[inner], tpr[inner], eps[inner], gap[inner] = search.results()
        evaluations = search.evaluations
    shape = arr.shape
    return TradeoffPoints(arr, beta.reshape(shape), tpr.reshape(shape), eps.reshape(shape), gap.reshape(shape),
                          evaluations)


def beta_lower(profile: Profile, alpha: ArrayLike, rtol: float = DEFAULT_RTOL) -> float | np.ndarray:
    """The certified lower bound on the type II error at type I error ``alpha`` (scalar in, float out)."""
    points = tradeoff_points(profile, alpha, rtol)
    return scalar_or_array(points.beta, points.alpha.ndim == 0)


def tpr_upper(profile: Profile, fpr: ArrayLike, rtol: float = DEFAULT_RTOL) -> float | np.ndarray:
    """The certified upper bound on the true-positive rate of any attack at false-positive rate ``fpr``."""
    points = tradeoff_points(profile, fpr, rtol)
    return scalar_or_array(points.tpr, points.alpha.ndim == 0)


def _bounds_at(s: np.ndarray, alpha: np.ndarray, delta_abs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The TPR upper bound ``F`` and the ``β`` lower bound ``G`` given by the constraint at ``s`` (``δ`` evaluated at
    ``|s|``), each moved to its safe side by :data:`MARGIN`.

    ``s ≥ 0``: ``F = δ(s) + e^s α`` (two non-negative terms: relative error ≤ 3u), ``G = 1 − δ(s) − e^s α``
    (absolute error ≤ 3u (1 + e^s α)). ``s < 0``, ``t = −s``: ``G = e^{−t} (1 − α − δ(t))`` (absolute error ≤
    4u e^{−t} (1 − α + δ(t)) + 2u |G|), ``F = 1 − G``."""
    with np.errstate(over="ignore", invalid="ignore"):
        pos = s >= 0
        scale = np.exp(np.where(pos, s, -s))  # e^{|s|}
        scaled_alpha = np.where(pos, scale * alpha, 0.0)  # e^s α for s ≥ 0 (inf beyond float64)
        f_pos = (delta_abs + scaled_alpha) * (1.0 + MARGIN)
        g_pos = (1.0 - delta_abs) - scaled_alpha - MARGIN * (1.0 + scaled_alpha)
        shrink = 1.0 / scale  # e^{−t} for s = −t < 0
        rest = 1.0 - alpha
        g_neg_raw = shrink * (rest - delta_abs)
        g_neg = g_neg_raw - MARGIN * (shrink * (rest + delta_abs) + np.abs(g_neg_raw))
        f_neg = (1.0 - g_neg) + MARGIN
        f = np.where(pos, f_pos, f_neg)
        g = np.where(pos, g_pos, g_neg)
    f = np.where(np.isnan(f), np.inf, f)
    g = np.where(np.isnan(g), -np.inf, g)
    return f, g


class _Search:
    """Bracketing, then golden-section search in ``s`` for every ``α`` at once (one vectorized ``δ`` evaluation per
    round, at the points of the ``α`` still searching)."""

    def __init__(self, profile: Profile, alpha: np.ndarray, rtol: float):
        self.profile = profile
        self.alpha = alpha
        self.rtol = rtol
        n = alpha.size
        self.best_f = np.full(n, np.inf)
        self.best_g = np.full(n, -np.inf)
        self.best_s = np.zeros(n)
        self.gap = np.full(n, np.inf)
        self.evaluations = 0

    # ---------------------------------------------------------------- evaluation
    def evaluate(self, s: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``F`` and ``G`` at ``s[j]`` for ``α[idx[j]]``, recording the best seen for each ``α``."""
        s = np.clip(s, -MAX_EPSILON, MAX_EPSILON)
        points, inverse = np.unique(np.abs(s), return_inverse=True)
        deltas = np.asarray(self.profile.delta(points), dtype=float)
        self.evaluations += points.size
        f, g = _bounds_at(s, self.alpha[idx], deltas[inverse])
        better_f = f < self.best_f[idx]
        self.best_f[idx[better_f]] = f[better_f]
        self.best_s[idx[better_f]] = s[better_f]
        better_g = g > self.best_g[idx]
        self.best_g[idx[better_g]] = g[better_g]
        return f, g

    @staticmethod
    def _better(f1: np.ndarray, g1: np.ndarray, f2: np.ndarray, g2: np.ndarray) -> np.ndarray:
        """Whether point 1 has the smaller ``F`` (equivalently the larger ``G = 1 − F``), compared in the form that is
        accurate: ``G`` where both ``β`` bounds are small, ``F`` otherwise."""
        small_beta = np.minimum(g1, g2) < 0.25
        return np.where(small_beta, g1 > g2, f1 < f2)

    # ---------------------------------------------------------------- the search
    def run(self) -> None:
        n = self.alpha.size
        every = np.arange(n)
        loss = self.profile.max_privacy_loss
        if loss is not None and 0.0 < loss <= MAX_EPSILON:  # a pure or finite pair: the kink of F sits at ±loss
            self.evaluate(np.full(n, float(loss)), every)
            self.evaluate(np.full(n, -float(loss)), every)
        a, b, fa, ga, fb, gb = self._bracket(every)
        self._golden(a, b, fa, ga, fb, gb)

    def _bracket(self, idx: np.ndarray) -> tuple[np.ndarray, ...]:
        """For each ``α``, an interval ``[a, b]`` of ``s`` around the best point of the scan :data:`SCAN` (``0`` and
        ``±2^j``, ``j = −5 … 9``: sixteen evaluations of ``δ`` shared by every ``α``), its two neighbours: it holds
        the minimum of a unimodal ``F``, and the scan keeps a bound that is not convex (flat at ``δ = 1`` near
        ``ε = 0``, or the minimum of several bounds) from trapping the search in a local minimum far from the best."""
        n, m = idx.size, SCAN.size
        f, g = self.evaluate(np.tile(SCAN, n), np.repeat(idx, m))
        f, g = f.reshape(n, m), g.reshape(n, m)
        rows = np.arange(n)
        by_g = np.argmax(g, axis=1)
        best = np.where(g[rows, by_g] < 0.25, by_g, np.argmin(f, axis=1))
        lo = np.clip(best - 1, 0, m - 2)
        hi = np.clip(best + 1, 1, m - 1)
        return SCAN[lo], SCAN[hi], f[rows, lo], g[rows, lo], f[rows, hi], g[rows, hi]

    def _golden(self, a: np.ndarray, b: np.ndarray, fa: np.ndarray, ga: np.ndarray, fb: np.ndarray,
                gb: np.ndarray) -> None:
        """Golden-section search on every bracket until :meth:`_gap` is within ``rtol``."""
        n = a.size
        every = np.arange(n)
        c = b - _INV_PHI * (b - a)
        d = a + _INV_PHI * (b - a)
        fc, gc = self.evaluate(c, every)
        fd, gd = self.evaluate(d, every)
        active = np.ones(n, dtype=bool)
        for _ in range(MAX_GOLDEN_STEPS):
            self.gap = np.where(active, self._gap(a, c, d, b, fa, fc, fd, fb, ga, gc, gd, gb), self.gap)
            active &= ~self._settled()
            active &= (b - a) > 1e-15 * np.maximum(1.0, np.abs(a))
            if not np.any(active):
                break
            at = np.flatnonzero(active)
            left = self._better(fc[at], gc[at], fd[at], gd[at])  # the minimum is in [a, d]
            li, ri = at[left], at[~left]
            b[li], fb[li], gb[li] = d[li], fd[li], gd[li]
            d[li], fd[li], gd[li] = c[li], fc[li], gc[li]
            c[li] = b[li] - _INV_PHI * (b[li] - a[li])
            a[ri], fa[ri], ga[ri] = c[ri], fc[ri], gc[ri]
            c[ri], fc[ri], gc[ri] = d[ri], fd[ri], gd[ri]
            d[ri] = a[ri] + _INV_PHI * (b[ri] - a[ri])
            new = np.where(left, c[at], d[at])
            fn, gn = self.evaluate(new, at)
            fc[li], gc[li] = fn[left], gn[left]
            fd[ri], gd[ri] = fn[~left], gn[~left]

    def _settled(self) -> np.ndarray:
        """Whether the gap is within ``rtol`` of the smaller of the TPR and ``β`` bounds, or the bracket can only
        confirm ``β = 0``."""
        target = self.rtol * np.maximum(np.minimum(self.best_f, np.maximum(self.best_g, 0.0)), 0.0)
        return (self.gap <= target) | (self.gap <= 1e-300)

    @staticmethod
    def _gap(a: np.ndarray, c: np.ndarray, d: np.ndarray, b: np.ndarray, fa: np.ndarray, fc: np.ndarray,
             fd: np.ndarray, fb: np.ndarray, ga: np.ndarray, gc: np.ndarray, gd: np.ndarray,
             gb: np.ndarray) -> np.ndarray:
        """How far below the best of four values a function convex in ``x = e^s`` can go between ``a`` and ``b``:
        outside a chord's own interval a convex function lies above the chord's line. Computed on ``F`` where the
        ``β`` bounds are large, and on ``−G`` (also convex: ``F = 1 − G``) where they are small."""
        use_g = np.minimum.reduce([ga, gc, gd, gb]) < 0.25
        va, vc, vd, vb = (np.where(use_g, -g, f) for f, g in ((fa, ga), (fc, gc), (fd, gd), (fb, gb)))
        xa, xc, xd, xb = (np.exp(np.clip(v, -MAX_EPSILON, MAX_EPSILON)) for v in (a, c, d, b))
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            def line(x0: np.ndarray, v0: np.ndarray, x1: np.ndarray, v1: np.ndarray, x: np.ndarray) -> np.ndarray:
                return v0 + (v1 - v0) / (x1 - x0) * (x - x0)

            # [a, c]: above the chord (c, d) extended left; [d, b]: extended right (each line's least value at an
            # end); [c, d]: above the larger of the chords (a, c) extended right and (d, b) extended left, a convex
            # broken line whose least value is at an end or where the two lines cross.
            low_ac = np.minimum(line(xc, vc, xd, vd, xa), vc)
            low_db = np.minimum(line(xc, vc, xd, vd, xb), vd)
            slope_l = (vc - va) / (xc - xa)
            slope_r = (vb - vd) / (xb - xd)
            cross = np.clip(xc + (vd - vc - slope_r * (xd - xc)) / (slope_l - slope_r), xc, xd)
            cross = np.where(np.isfinite(cross), cross, xc)

            def upper_pair(x: np.ndarray) -> np.ndarray:
                return np.maximum(vc + slope_l * (x - xc), vd + slope_r * (x - xd))

            low_cd = np.minimum.reduce([upper_pair(xc), upper_pair(xd), upper_pair(cross)])
            lowest = np.minimum.reduce([low_ac, low_db, low_cd])
            best = np.minimum.reduce([va, vc, vd, vb])
            out = best - lowest
            out = np.where(use_g & (lowest >= 0.0), 0.0, out)  # G ≤ 0 on the whole bracket: β = 0 is the answer
        out = np.where(np.isfinite(out), np.maximum(out, 0.0), np.inf)
        return out

    def results(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        beta = np.clip(self.best_g, 0.0, 1.0)
        tpr = np.clip(np.minimum(self.best_f, 1.0), 0.0, 1.0)
        return beta, tpr, self.best_s, self.gap
