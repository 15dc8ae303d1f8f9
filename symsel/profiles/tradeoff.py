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
#: the first step of the bracketing search from ``ε = 0``; steps double from there.
FIRST_STEP = 0.25
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


def advantage_upper(profile: Profile) -> float:
    """A certified upper bound on the attack advantage ``sup_φ (TPR − FPR) = sup_α (1 − α − β(α))``: ``δ(0)``, the
    total variation distance (docs/tradeoff.md, Corollary 2)."""
    return float(profile.delta(0.0))


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
        """For each ``α``, an interval ``[a, b]`` of ``s`` holding the minimum of ``F`` (a unimodal ``F``): step from
        0 towards the side where ``F`` decreases, doubling the step, until ``F`` stops decreasing."""
        n = idx.size
        zero = np.zeros(n)
        f0, g0 = self.evaluate(zero, idx)
        fp, gp = self.evaluate(zero + FIRST_STEP, idx)
        fm, gm = self.evaluate(zero - FIRST_STEP, idx)
        right = self._better(fp, gp, f0, g0)
        left = ~right & self._better(fm, gm, f0, g0)
        a = np.full(n, -FIRST_STEP)
        b = np.full(n, FIRST_STEP)
        fa, ga, fb, gb = fm.copy(), gm.copy(), fp.copy(), gp.copy()
        # walking: prev (the best so far) and cur (one step further), direction ±1
        direction = np.where(right, 1.0, -1.0)
        walking = right | left
        prev = np.where(walking, direction * FIRST_STEP, 0.0)
        fprev, gprev = np.where(right, fp, fm), np.where(right, gp, gm)
        back = np.zeros(n)  # the point before prev (0 at first)
        fback, gback = f0.copy(), g0.copy()
        step = FIRST_STEP
        while np.any(walking):
            step *= 2.0
            at = np.flatnonzero(walking)
            cur = np.clip(prev[at] + direction[at] * step, -MAX_EPSILON, MAX_EPSILON)
            fc, gc = self.evaluate(cur, idx[at])
            improving = self._better(fc, gc, fprev[at], gprev[at]) & (np.abs(cur) < MAX_EPSILON)
            done = at[~improving]
            lo_end = np.minimum(back[done], cur[~improving])
            hi_end = np.maximum(back[done], cur[~improving])
            a[done], b[done] = lo_end, hi_end
            from_right = direction[done] > 0
            fa[done] = np.where(from_right, fback[done], fc[~improving])
            ga[done] = np.where(from_right, gback[done], gc[~improving])
            fb[done] = np.where(from_right, fc[~improving], fback[done])
            gb[done] = np.where(from_right, gc[~improving], gback[done])
            walking[done] = False
            moving = at[improving]
            back[moving], fback[moving], gback[moving] = prev[moving], fprev[moving], gprev[moving]
            prev[moving], fprev[moving], gprev[moving] = cur[improving], fc[improving], gc[improving]
        return a, b, fa, ga, fb, gb

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
