"""Certified lower bounds on the worst-case privacy of private selection.

Any post-processing of a base mechanism's dominating pair -- here a discretization of a continuous
pair into bins, or a Markov kernel applied to a finite pair -- ordered by *any* score order, is a
valid base mechanism with (at most) that privacy profile. Its selection law is exact
(:mod:`symsel.evidence.exact`), so the exact ``eps(delta)`` of the selection on it is a certified lower
bound on the worst case over all base mechanisms with that profile (docs/lower-bounds.md; Xiang,
Wang & Wang, Example 1 and Section 5; Papernot & Steinke, Appendix D).

:func:`lower_bound` takes a :data:`~symsel.pairs.Pair` (or a profile's
:meth:`~symsel.profiles.Profile.dominating_pair`) and tries two constructions:

* a search over few bins, kernels and score orders: structured seeds (the monotone threshold;
  "zigzag" orders that put the middle of the output space lowest and then alternate between the two
  tails, which generalize Xiang et al.'s Example 1), Nelder-Mead polishing of the cut points or
  kernel weights, then simulated annealing over cuts, kernels and orders;
* slice insertion (docs/lower-bounds.md): many thin slices, the low-ratio ones on top (most extreme highest),
  each high-ratio slice inserted where ``phi'(u) p - e^eps phi'(u') p'`` is largest
  (:func:`slice_insertion_order`), iterated on the target ``eps``;
* expanding intervals (docs/lower-bounds.md): the same thin slices, sorted by likelihood ratio, added one
  at a time just below or just above the interval of ratios used so far, the best such order found by a
  dynamic program over intervals (:func:`expanding_interval_order`), iterated on the target ``eps``.

All run on the float64 fast path; each winner is re-evaluated exactly with mpmath and the largest
exact value is reported, rounded down.

Monotone orders are not always worst: for geometric ``K`` with mean 30, a Gaussian base with
``sigma = 4`` and ``delta = 1e-6`` the monotone order gives ``eps ~ 1.236``, a zigzag order on
seven bins 1.7866, and slice insertion on 1000 slices 1.78859 (the envelope upper bound of
docs/envelope.md is about 1.7891).
"""

from __future__ import annotations

import functools
import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import mpmath
import numpy as np
from scipy.optimize import minimize

from symsel import validate
from symsel.certified import Lower
from symsel.errors import InconsistentBoundsError, NotApplicableError, ParameterError
from symsel.evidence.continuous import discretize
from symsel.evidence.exact import (
    _check_delta,
    epsilon_for_delta_float,
    selection_epsilon,
    selection_epsilon_float,
    selection_law_float,
)
from symsel.pairs import Pair, as_pair
from symsel.pairs.finite import FinitePair, masses_mp, to_mpf
from symsel.pairs.location import LocationPair
from symsel.profiles import Profile
from symsel.spec import as_distribution


# --------------------------------------------------------------------- result
@dataclass(frozen=True)
class LowerBoundResult:
    """A certified lower bound: the exact ``eps(delta)`` of the selection on ``pair`` (a valid
    post-processing of the base's dominating pair) with score ``order``.

    Attributes:
        epsilon: the exact value rounded down to a float, typed :class:`~symsel.certified.Lower` (``inf`` when the
            selection is not ``(eps, delta)``-DP for any finite ``eps``).
        epsilon_mp: the exact value at ``dps`` digits.
        pair: the finite base mechanism found (bins of the continuous pair, or the kernel image).
        order: its score order (lowest first).
        evaluations: number of float64 exact-formula evaluations spent by the search.
        monotone_epsilon: exact value of the monotone order (natural bin order for continuous
            pairs, likelihood-ratio order for finite ones, loss order for a base known through dominated pairs) on
            the same bins (NaN when not asked for: ``lower_bound(..., monotone=False)``). Evaluated on first
            access when its float64 value showed that it cannot exceed ``epsilon`` (:func:`lower_bound`).
        search_epsilon: the float64 value that the search saw for the winner.
        cuts: cut points of the bins (continuous bases), else ``None``.
        kernel: the row-stochastic kernel (finite bases), else ``None``.
        seconds: wall time.
        base: the dominating pair searched.
        construction: ``"search"`` (few bins or kernels, searched) or ``"slice-insertion"``
            (docs/lower-bounds.md, :func:`slice_insertion_order`): which one gave ``epsilon``.
        slice_evaluations: float64 evaluations spent by the slice-insertion construction (not
            counted in ``evaluations``, which is bounded by the search ``budget``).
    """

    epsilon: float
    epsilon_mp: Any
    pair: FinitePair
    order: tuple[int, ...]
    evaluations: int
    delta: float
    search_epsilon: float
    cuts: tuple[float, ...] | None = None
    kernel: tuple[tuple[float, ...], ...] | None = None
    seconds: float = 0.0
    base: Pair | None = field(default=None, repr=False)
    construction: str = "search"
    slice_evaluations: int = 0
    #: the monotone order's exact value, or a function computing it (then called once, on first access).
    monotone: float | Callable[[], float] = field(default=math.nan, repr=False, compare=False)

    def __post_init__(self) -> None:
        """``epsilon`` carries its direction: a :class:`~symsel.certified.Lower`."""
        object.__setattr__(self, "epsilon", Lower(self.epsilon))

    @property
    def monotone_epsilon(self) -> float:
        """See the class docstring."""
        value = self.monotone
        if callable(value):
            value = value()
            object.__setattr__(self, "monotone", value)
        return value

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (or deep-copied) with the monotone order's value evaluated: its deferred evaluation holds the law,
        whose sampler need not pickle."""
        state = dict(self.__dict__)
        state["monotone"] = self.monotone_epsilon
        return state

    @property
    def improvement(self) -> float:
        """``epsilon - monotone_epsilon``."""
        return self.epsilon - self.monotone_epsilon


def _exact_rounded_down(pair: FinitePair, dist: Any, delta: float, dps: int) -> float:
    """The exact ``eps(delta)`` of the selection on ``pair``, rounded down to a float."""
    return _round_down(selection_epsilon(pair, dist, delta, dps))


def _round_down(x: mpmath.mpf) -> float:
    if x == mpmath.inf:
        return math.inf
    f = float(x)
    return math.nextafter(f, -math.inf) if mpmath.mpf(f) > x else f


# --------------------------------------------------------------------- float objective
class _Objective:
    """Counts evaluations; returns the float64 two-sided ``eps(delta)`` of the selection."""

    def __init__(self, dist: Any, delta: float, budget: int):
        self.dist, self.delta, self.budget = dist, float(delta), int(budget)
        self.calls = 0
        self.best = -math.inf
        self.best_state: Any = None

    @property
    def left(self) -> int:
        return self.budget - self.calls

    def __call__(self, p: np.ndarray, q: np.ndarray, order: Sequence[int], state: Any) -> float:
        if self.calls >= self.budget:  # hard stop: optimizers may ask for one more point
            return -math.inf
        self.calls += 1
        try:
            a = selection_law_float(p, order, self.dist, check=False)
            b = selection_law_float(q, order, self.dist, check=False)
            value = epsilon_for_delta_float(a / a.sum(), b / b.sum(), self.delta)
        except (ValueError, ZeroDivisionError, FloatingPointError):
            value = -math.inf
        if not value == value:  # NaN
            value = -math.inf
        if value > self.best:
            self.best, self.best_state = value, state
        return value


def zigzag_order(k_low: int, k_high: int, high_first: bool = True) -> tuple[int, ...]:
    """Score order over ``k_low + 1 + k_high`` bins laid out as ``k_low`` lower-tail bins (outermost
    first), the middle bin, ``k_high`` upper-tail bins (innermost first): the middle scores lowest,
    then the tails alternate outward (Xiang et al., Example 1, is ``k_low = k_high = 1``)."""
    mid = k_low
    highs = [mid + 1 + i for i in range(k_high)]
    lows = [mid - 1 - i for i in range(k_low)]
    first, second = (highs, lows) if high_first else (lows, highs)
    order = [mid]
    for i in range(max(k_low, k_high)):
        if i < len(first):
            order.append(first[i])
        if i < len(second):
            order.append(second[i])
    return tuple(order)


# --------------------------------------------------------------------- continuous search
class _ContinuousSearch:
    def __init__(self, pair: LocationPair, obj: _Objective, rng: np.random.Generator, max_bins: int):
        self.pair, self.obj, self.rng, self.max_bins = pair, obj, rng, max_bins

    def value(self, cuts: Sequence[float], order: Sequence[int]) -> float:
        c = np.sort(np.asarray(cuts, dtype=float))
        if len(c) > 1 and np.any(np.diff(c) <= 0):
            return -math.inf
        p, q = self.pair.bin_masses_float(cast(Sequence[float], c))
        return self.obj(p, q, order, (tuple(c), tuple(order)))

    def quantile(self, u: float, side: int = 1) -> float:
        return float(self.pair.isf_float(u, side))

    def polish(self, cuts: Sequence[float], order: Sequence[int], maxfev: int) -> tuple[np.ndarray, float]:
        if maxfev < 4 or len(cuts) == 0:
            return np.asarray(cuts, dtype=float), -math.inf
        x0 = np.asarray(cuts, dtype=float)
        step = 0.25 * self.pair.scale
        simplex = np.vstack([x0] + [x0 + step * np.eye(len(x0))[i] for i in range(len(x0))])
        res = minimize(lambda c: -self.value(c, order), x0, method="Nelder-Mead",
                       options={"maxfev": maxfev, "initial_simplex": simplex, "xatol": 1e-6, "fatol": 1e-10})
        return np.sort(res.x), -float(res.fun)

    def run(self) -> tuple[tuple[float, ...], tuple[int, ...]]:
        obj = self.obj
        # 1. monotone threshold: scan upper-tail quantiles of P', refine
        us = np.exp(np.linspace(math.log(1e-12), math.log(0.5), 14))
        scan = [(self.value([self.quantile(u)], (0, 1)), self.quantile(u)) for u in us if obj.left > 0]
        t_best = max(scan)[1]
        (t_best,), _ = self.polish([t_best], (0, 1), min(12, obj.left // 10))
        # 2. zigzag on three bins (both orientations): scan the lower cut, polish both cuts
        candidates = []
        lows = [self.quantile(1 - u) for u in np.exp(np.linspace(math.log(1e-8), math.log(0.45), 10))]
        for high_first in (True, False):
            order = zigzag_order(1, 1, high_first)
            scored = [(self.value([c, t_best], order), c) for c in lows if c < t_best and obj.left > 0]
            if scored:
                v, c = max(scored)
                candidates.append((v, [c, t_best], order))
        candidates.sort(key=lambda t: -t[0])
        zig3 = []
        for _, cuts, order in candidates[:2]:
            polished, value = self.polish(cuts, order, min(60, obj.left // 4))
            zig3.append((value, list(polished), order))
        # 3. deeper zigzags (5, 7, ... bins): split the outermost tail bins, polish all cuts
        if zig3:
            _, cuts, order3 = max(zig3, key=lambda t: t[0])
            high_first = order3 == zigzag_order(1, 1, True)
            w = 0.2 * self.pair.scale
            k = 1
            while 2 * (k + 1) + 1 <= self.max_bins and obj.left > 16:
                k += 1
                cuts = [cuts[0] - w, *cuts, cuts[-1] + w]
                polished, _ = self.polish(cuts, zigzag_order(k, k, high_first), min(60 * k, obj.left // 2))
                cuts = list(polished)
        # 4. simulated annealing from the best state
        self.anneal()
        return obj.best_state

    def anneal(self) -> None:
        obj, rng = self.obj, self.rng
        if obj.best_state is None or obj.left <= 0:
            return
        cuts, order = list(obj.best_state[0]), list(obj.best_state[1])
        current = obj.best
        total = max(obj.left, 1)
        temp0 = 0.02
        while obj.left > 0:
            frac = 1 - obj.left / total
            temp = temp0 * (1 - frac) + 1e-6
            new_cuts, new_order = list(cuts), list(order)
            move = rng.integers(0, 4)
            n = len(new_order)
            if move == 0 and new_cuts:  # move a cut point
                i = int(rng.integers(0, len(new_cuts)))
                new_cuts[i] += rng.normal(0, 0.3 * self.pair.scale) * (1 - 0.9 * frac)
            elif move == 1 and n >= 2:  # swap two bins in the order
                i, j = rng.choice(n, 2, replace=False)
                new_order[i], new_order[j] = new_order[j], new_order[i]
            elif move == 2 and n < self.max_bins and new_cuts:  # split a bin
                i = int(rng.integers(0, n))
                lo = new_cuts[i - 1] if i > 0 else new_cuts[0] - 3 * self.pair.scale
                hi = new_cuts[i] if i < len(new_cuts) else new_cuts[-1] + 3 * self.pair.scale
                c = float(rng.uniform(lo, hi))
                new_cuts = sorted([*new_cuts, c])
                pos = new_order.index(i)
                new_order = [b + 1 if b > i else b for b in new_order]
                new_order.insert(pos + int(rng.integers(0, 2)), i + 1)
            elif n > 2:  # merge two adjacent bins
                i = int(rng.integers(0, len(new_cuts)))
                del new_cuts[i]
                new_order = [b for b in new_order if b != i + 1]
                new_order = [b - 1 if b > i + 1 else b for b in new_order]
            value = self.value(new_cuts, new_order)
            if value >= current or rng.random() < math.exp((value - current) / temp):
                cuts, order, current = sorted(new_cuts), new_order, value


# --------------------------------------------------------------------- finite search
class _FiniteSearch:
    """Kernels ``W`` (base outcomes x bins, rows summing to 1) and orders over the bins."""

    def __init__(self, p: np.ndarray, q: np.ndarray, obj: _Objective, rng: np.random.Generator, max_bins: int):
        self.p, self.q, self.obj, self.rng, self.max_bins = p, q, obj, rng, max_bins
        self.n = len(p)

    def value(self, w: np.ndarray, order: Sequence[int]) -> float:
        w = np.clip(np.asarray(w, dtype=float), 0.0, None)
        rows = w.sum(axis=1, keepdims=True)
        if np.any(rows <= 0):
            return -math.inf
        w = w / rows
        return self.obj(self.p @ w, self.q @ w, order, (w.copy(), tuple(order)))

    def split_kernel(self, hi: int, lo: int, alpha: float, beta: float) -> np.ndarray:
        """Bins ``[rest, alpha of outcome hi, beta of outcome lo]``."""
        w = np.zeros((self.n, 3))
        w[:, 0] = 1.0
        w[hi, 0], w[hi, 1] = 1 - alpha, alpha
        w[lo, 0], w[lo, 2] = 1 - beta, beta
        return w

    def run(self) -> tuple[np.ndarray, tuple[int, ...]]:
        obj = self.obj
        with np.errstate(divide="ignore"):
            lr = np.log(self.p) - np.log(self.q)
        # 1. the identity kernel in the likelihood-ratio order
        ident = np.eye(self.n)
        self.value(ident, tuple(int(i) for i in np.argsort(lr, kind="stable")))
        # 2. Xiang-type splits: a piece of a high-ratio outcome above the rest, a piece of a
        #    low-ratio outcome on top
        highs = [i for i in range(self.n) if lr[i] > 0]
        lows = [i for i in range(self.n) if lr[i] < 0]
        grid = [1e-4, 1e-3, 1e-2, 1e-1, 0.5]
        seeds = []
        for hi, lo in itertools.product(highs, lows):
            for order in ((0, 1, 2), (0, 2, 1)):
                scored = [(self.value(self.split_kernel(hi, lo, a, b), order), a, b)
                          for a, b in itertools.product(grid, grid) if obj.left > 0]
                if scored:
                    v, a, b = max(scored)
                    seeds.append((v, hi, lo, a, b, order))
        seeds.sort(key=lambda t: -t[0])
        for _v, hi, lo, a, b, order in seeds[:2]:
            if obj.left < 8:
                break

            def neg(x: np.ndarray, hi: int = hi, lo: int = lo, order: tuple = order) -> float:
                a, b = 1 / (1 + np.exp(-np.clip(x, -700, 700)))
                return -self.value(self.split_kernel(hi, lo, a, b), order)

            x0 = np.log(np.array([a, b]) / (1 - np.array([a, b])))
            minimize(neg, x0, method="Nelder-Mead", options={"maxfev": min(80, obj.left // 3), "xatol": 1e-8})
        # 3. simulated annealing over kernels and orders
        self.anneal()
        w, order = self.obj.best_state
        return w, order

    def anneal(self) -> None:
        obj, rng = self.obj, self.rng
        if obj.best_state is None or obj.left <= 0:
            return
        w, order = obj.best_state[0].copy(), list(obj.best_state[1])
        current = obj.best
        total = max(obj.left, 1)
        while obj.left > 0:
            frac = 1 - obj.left / total
            temp = 0.02 * (1 - frac) + 1e-6
            nw, no = w.copy(), list(order)
            move = rng.integers(0, 4)
            nb = nw.shape[1]
            if move == 0:  # rescale one weight on a log scale
                i, j = rng.integers(0, self.n), rng.integers(0, nb)
                nw[i, j] = (nw[i, j] if nw[i, j] > 0 else 1e-3 * nw[i].max()) * math.exp(rng.normal(0, 1.5))
            elif move == 1 and nb >= 2:
                i, j = rng.choice(nb, 2, replace=False)
                no[i], no[j] = no[j], no[i]
            elif move == 2 and nb < self.max_bins:  # new bin: a piece of one outcome
                i = rng.integers(0, self.n)
                col = np.zeros((self.n, 1))
                col[i, 0] = nw[i].sum() * 10 ** rng.uniform(-4, 0)
                nw = np.hstack([nw, col])
                no.insert(int(rng.integers(0, nb + 1)), nb)
            else:  # zero one weight
                i, j = rng.integers(0, self.n), rng.integers(0, nb)
                nw[i, j] = 0.0
            value = self.value(nw, no)
            if value >= current or rng.random() < math.exp((value - current) / temp):
                rows = nw.sum(axis=1, keepdims=True)
                w, order, current = nw / rows, no, value


# --------------------------------------------------------------------- slice insertion (docs/lower-bounds.md)
#: largest ``eps`` used in the insertion criterion (``e^eps`` must stay finite).
_EPS_CAP = 700.0


def _log_ratios(p: Sequence[float] | np.ndarray, q: Sequence[float] | np.ndarray,
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """The masses as float arrays, their log-likelihood ratios ``log(P/P')``, which outcomes have mass on either
    side, and the outcomes of mass 0 on both (which every order puts at the bottom)."""
    pa = np.asarray(p, dtype=float)
    qa = np.asarray(q, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        lr = np.log(pa) - np.log(qa)
    live = (pa > 0) | (qa > 0)
    return pa, qa, lr, live, [int(i) for i in np.flatnonzero(~live)]


def slice_insertion_order(p: Sequence[float] | np.ndarray, q: Sequence[float] | np.ndarray, dist: Any,
                          eps: float) -> tuple[int, ...]:
    """The slice-insertion score order (lowest score first) for the direction ``H(A || A')``
    (docs/lower-bounds.md).

    The outcomes (thin slices of a dominating pair) with ``P <= P'`` go on top of the order, the most
    extreme (smallest ``P/P'``) highest. The outcomes with ``P > P'`` are then inserted one at a time,
    least extreme first, each at the position where its own contribution to the hockey-stick
    divergence of the selection, ``phi'(u) P(y) - e^eps phi'(u') P'(y)``, is largest; ``u`` and
    ``u'`` are the ``P``- and ``P'``-masses below that position (the selection's density at a thin
    slice is ``phi'(u) P(y)``, docs/setting.md). Outcomes of mass 0 on both sides go to the bottom.

    Any order is a valid score order: this only chooses a good one. The reverse direction is the
    same construction with ``p`` and ``q`` swapped.
    """
    pa, qa, lr, live, null = _log_ratios(p, q)
    lows = np.flatnonzero(live & ~(lr > 0))
    highs = np.flatnonzero(live & (lr > 0))
    # lowest first: the low slices by decreasing ratio, so the most extreme ends on top
    order = [int(i) for i in lows[np.argsort(-lr[lows], kind="stable")]]
    e = math.exp(min(float(eps), _EPS_CAP))
    for i in highs[np.argsort(lr[highs], kind="stable")]:
        idx = np.asarray(order, dtype=np.int64)
        u = np.minimum(np.concatenate(([0.0], np.cumsum(pa[idx]))), 1.0)
        v = np.minimum(np.concatenate(([0.0], np.cumsum(qa[idx]))), 1.0)
        gain = np.asarray(dist.dphi(u), dtype=float) * pa[i] - e * np.asarray(dist.dphi(v), dtype=float) * qa[i]
        gain = np.where(np.isnan(gain), -np.inf, gain)
        order.insert(int(np.argmax(gain)), int(i))
    return tuple(null + order)


#: Gauss-Legendre nodes of the increments ``phi(Y + a) - phi(Y) = a int_0^1 phi'(Y + t a) dt`` in
#: :func:`expanding_interval_order` (the order only has to be good: its value is evaluated exactly afterwards). Four
#: nodes found the same orders as eight on DP-SGD (point(10), point(100)), Gaussian and Laplace bases, at half the
#: cost of ``phi'`` (most of the lower bound's time for large K).
_INTERVAL_NODES = 4
#: ``phi'`` values at most this small count as 0 in :func:`expanding_interval_order`'s increments (their share of any
#: increment is below 1e-290); below the point where ``phi'`` reaches it (``phi'`` is non-decreasing: a PGF's
#: coefficients are non-negative) ``phi'`` is not evaluated. For ``point(k=40)`` that is ``u < 3e-8``, where float64
#: ``u^39`` underflows through libm's slow path (140 ns a value instead of 4): the DP on DP-SGD's pair took twice as
#: long.
_NEGLIGIBLE_DPHI = 1e-290


def _negligible_below(dist: Any) -> float:
    """The largest ``u`` found (bisection, 60 steps) with ``phi'(u) <= _NEGLIGIBLE_DPHI`` (0 when ``phi'(0)`` is
    above it): ``phi'`` is at most that on ``[0, u]``."""
    if not float(dist.dphi(0.0)) <= _NEGLIGIBLE_DPHI:
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if float(dist.dphi(mid)) <= _NEGLIGIBLE_DPHI else (lo, mid)
    return lo


class ExpandingIntervals:
    """The best *expanding-interval* score orders (lowest score first) for ``H_{e^eps}(A || A')`` on one pair, for
    any ``eps`` (docs/lower-bounds.md).

    Sort the outcomes by their likelihood ratio ``P/P'``. An expanding-interval order starts at one
    outcome and adds the outcomes one at a time, each time the neighbour just below or just above the
    interval used so far in ratio order: the outputs below any point of the order form an interval of
    ratios that grows outwards, and the last (highest-scored) outcomes are the most extreme ones. The
    contribution of the next outcome, ``[phi(Y + a) - phi(Y) - e^eps (phi(X + b) - phi(X))]_+`` with
    ``(X, Y)`` the ``(P', P)``-masses of the interval, depends only on the interval, so the best such
    order is a dynamic program over the ``n (n + 1) / 2`` intervals (``O(n^2)`` time and memory).
    Outcomes of mass 0 on both sides go to the bottom.

    The two increments ``phi(Y + a) - phi(Y)`` and ``phi(X + b) - phi(X)`` of every step do not depend on ``eps``
    (float64 Gauss-Legendre integrals of ``phi'``, most of the time): they are computed once, here, and
    :meth:`order` runs the dynamic program for each target ``eps`` of a fixed-point iteration from them. The
    orders are float for float those found by computing the increments again for each ``eps`` (the same operations
    on the same arrays). Memory: four floats per interval (about ``2 n^2`` floats in all).
    """

    def __init__(self, p: Sequence[float] | np.ndarray, q: Sequence[float] | np.ndarray, dist: Any):
        pa, qa, lr, live, self._null = _log_ratios(p, q)
        cells = np.flatnonzero(live)
        self._cells = cells[np.argsort(lr[cells], kind="stable")]
        n = self._n = self._cells.size
        fp = np.concatenate(([0.0], np.cumsum(pa[self._cells])))
        fq = np.concatenate(([0.0], np.cumsum(qa[self._cells])))
        nodes, weights = np.polynomial.legendre.leggauss(_INTERVAL_NODES)
        nodes, weights = (nodes + 1.0) / 2.0, weights / 2.0
        negligible = _negligible_below(dist)

        def increment(base: np.ndarray, mass: np.ndarray) -> np.ndarray:
            u = np.minimum(base[:, None] + nodes[None, :] * mass[:, None], 1.0)
            if negligible > 0:
                slope = np.zeros_like(u)
                live = u > negligible
                slope[live] = np.asarray(dist.dphi(u[live]), dtype=float)
            else:
                slope = np.asarray(dist.dphi(u), dtype=float)
            return mass * (slope @ weights)

        def increments(lo: np.ndarray, hi: np.ndarray, cell: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            a, b = fp[cell + 1] - fp[cell], fq[cell + 1] - fq[cell]
            return increment(fp[hi] - fp[lo], a), increment(fq[hi] - fq[lo], b)

        # per interval length, longest first: the increments of adding the cell above (hi < n) and below (lo > 0)
        self._up: list[tuple[np.ndarray, np.ndarray]] = []
        self._down: list[tuple[np.ndarray, np.ndarray]] = []
        for length in range(n - 1, -1, -1):
            lo = np.arange(0, n - length + 1)
            hi = lo + length
            m = hi < n
            self._up.append(increments(lo[m], hi[m], hi[m]))
            m = lo > 0
            self._down.append(increments(lo[m], hi[m], lo[m] - 1))

    def order(self, eps: float) -> tuple[int, ...]:
        """The best expanding-interval order for ``H_{e^eps}(A || A')``."""
        n, e = self._n, math.exp(min(float(eps), _EPS_CAP))

        def gain(increments: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
            value = increments[0] - e * increments[1]
            return np.where(np.isnan(value), 0.0, np.maximum(value, 0.0))

        value = np.full((n + 1, n + 1), -np.inf)  # value[lo, hi]: the best remainder once [lo, hi) is used
        down = np.zeros((n + 1, n + 1), dtype=bool)  # whether the best next step adds lo - 1 (else hi)
        value[0, n] = 0.0
        for step, length in enumerate(range(n - 1, -1, -1)):
            lo = np.arange(0, n - length + 1)
            hi = lo + length
            up_value = np.full(lo.shape, -np.inf)
            down_value = np.full(lo.shape, -np.inf)
            m = hi < n
            up_value[m] = gain(self._up[step]) + value[lo[m], hi[m] + 1]
            m = lo > 0
            down_value[m] = gain(self._down[step]) + value[lo[m] - 1, hi[m]]
            value[lo, hi] = np.maximum(up_value, down_value)
            down[lo, hi] = down_value > up_value
        start = int(np.argmax(np.diag(value)))
        order: list[int] = []
        low = high = start
        while high - low < n:
            if down[low, high]:
                low -= 1
                order.append(int(self._cells[low]))
            else:
                order.append(int(self._cells[high]))
                high += 1
        return tuple(self._null + order)


def expanding_interval_order(p: Sequence[float] | np.ndarray, q: Sequence[float] | np.ndarray, dist: Any,
                             eps: float) -> tuple[int, ...]:
    """The best *expanding-interval* score order (lowest score first) for ``H_{e^eps}(A || A')``
    (:class:`ExpandingIntervals`; docs/lower-bounds.md).

    Any order is a valid score order: this only chooses a good one. For a pair whose likelihood ratio has no
    atoms (the Gaussian pair), the worst orders of thin slices are of this kind (docs/interval.md, Theorem 1),
    so on fine slices this construction approaches the exact worst case. For several ``eps`` on one pair,
    ``ExpandingIntervals(p, q, dist).order(eps)`` computes the increments once.
    """
    return ExpandingIntervals(p, q, dist).order(eps)


def _float_epsilon(p: np.ndarray, q: np.ndarray, order: Sequence[int], dist: Any, delta: float,
                   two_sided: bool = True) -> float:
    """Float64 ``eps(delta)`` of the selection on ``(p, q)`` with score ``order`` (``-inf`` on failure)."""
    try:
        a = selection_law_float(p, order, dist, check=False)
        b = selection_law_float(q, order, dist, check=False)
        value = epsilon_for_delta_float(a / a.sum(), b / b.sum(), delta, two_sided=two_sided)
    except (ValueError, ZeroDivisionError, FloatingPointError):
        return -math.inf
    return value if value == value else -math.inf


def _slice_search(p: np.ndarray, q: np.ndarray, dist: Any, delta: float, eps0: float, both_directions: bool,
                  max_iter: int = 40, construction: OrderConstruction | None = None,
                  ) -> tuple[float, tuple[int, ...] | None, int]:
    """Fixed-point iteration on the target ``eps`` of an order construction (:func:`slice_insertion_orders`, the
    default, or :class:`ExpandingIntervals`): build the order for ``eps``, evaluate it, use the value as the next
    target (docs/lower-bounds.md). Returns the best two-sided float value, its order and the number of
    evaluations."""
    construction = construction or slice_insertion_orders
    best, best_order, calls = -math.inf, None, 0
    for a, b in ((p, q), (q, p)) if both_directions else ((p, q),):
        eps, tried = eps0, []
        order_for = construction(a, b, dist)
        for _ in range(max_iter):
            order = order_for(eps)
            calls += 1
            tried.append(eps)
            value = _float_epsilon(p, q, order, dist, delta)
            if value > best:
                best, best_order = value, order
            one_sided = _float_epsilon(a, b, order, dist, delta, two_sided=False)
            # a target tried before gives the same order again (the constructions are deterministic): the
            # iteration has converged or entered a cycle, and nothing new can come of it
            if not math.isfinite(one_sided) or any(abs(one_sided - t) <= 1e-10 * (1 + abs(t)) for t in tried):
                break
            eps = one_sided
    return best, best_order, calls


#: an order construction on one pair ``(p, q, dist)``: the score order for a target ``eps``
OrderConstruction = Callable[[np.ndarray, np.ndarray, Any], Callable[[float], tuple[int, ...]]]


def slice_insertion_orders(p: np.ndarray, q: np.ndarray, dist: Any) -> Callable[[float], tuple[int, ...]]:
    """:func:`slice_insertion_order` on ``(p, q)`` for any target ``eps``."""
    return functools.partial(slice_insertion_order, p, q, dist)


def expanding_interval_orders(p: np.ndarray, q: np.ndarray, dist: Any) -> Callable[[float], tuple[int, ...]]:
    """:class:`ExpandingIntervals` on ``(p, q)`` (its increments computed once) for any target ``eps``."""
    return ExpandingIntervals(p, q, dist).order


#: the constructions on thin slices that :func:`lower_bound` tries, by name.
_SLICE_CONSTRUCTIONS: tuple[tuple[str, OrderConstruction], ...] = (
    ("slice-insertion", slice_insertion_orders), ("expanding-interval", expanding_interval_orders))


def _slice_orders(ps: np.ndarray, qs: np.ndarray, dist: Any, delta: float, eps0: float, both_directions: bool,
                  ) -> list[tuple[tuple[int, ...], dict[str, Any]]]:
    """The order each of :data:`_SLICE_CONSTRUCTIONS` finds on the slices ``(ps, qs)``, with its name, number of
    evaluations and float value; each construction starts from the best target found so far."""
    found, seed = [], max(eps0, 0.0)
    for name, construction in _SLICE_CONSTRUCTIONS:
        value, order, calls = _slice_search(ps, qs, dist, delta, seed, both_directions=both_directions,
                                            construction=construction)
        seed = max(seed, value)
        if order is not None and value > -math.inf:
            found.append((order, {"construction": name, "calls": calls, "search_epsilon": value}))
    return found


def slice_cuts(pair: LocationPair, slices: int, delta: float) -> list[np.ndarray]:
    """Cut points of ``slices`` bins of a location pair, equally spaced in ``x`` (hence in the privacy loss, for the
    Gaussian pair) between the ``tail``-quantiles of ``P'`` (lower) and ``P`` (upper), ``tail = delta / 1000``
    clipped to ``[1e-16, 1e-4]``; the two outer bins take the rest. On a pair whose loss is constant outside a ramp
    (:meth:`~symsel.pairs.location.LocationPair.ramp`; Laplace) a second set: the same cuts and ``slices / 2`` more
    equally spaced on the ramp. Equal spacing put 25 of 1000 bins on Laplace(1)'s ramp: ``point(40)`` at
    ``δ = 1e-6`` got 30.699, the second set 30.7607 (the upper bound: 30.7725); on ``laplace(scale=40)`` the first
    set is the better one (0.27194 against 0.27172), so both are searched."""
    tail = min(1e-4, max(1e-16, float(delta) * 1e-3))
    hi = float(pair.isf_float(tail, 0))
    lo = 2 * pair.loc(1) - float(pair.isf_float(tail, 1))  # the standard laws are symmetric
    cuts = np.linspace(lo, hi, int(slices) - 1)
    ramp = pair.ramp()
    if ramp is None or not lo < ramp[0] < ramp[1] < hi:
        return [cuts]
    return [cuts, np.union1d(cuts, np.linspace(ramp[0], ramp[1], int(slices) // 2))]


def _split_kernel(n: int, pieces: int) -> np.ndarray:
    """Kernel cutting each of ``n`` outcomes into ``pieces`` sub-outcomes of equal share
    (block-diagonal, rows sum to 1): every piece keeps its outcome's likelihood ratio."""
    w = np.zeros((n, n * pieces))
    for i in range(n):
        w[i, i * pieces:(i + 1) * pieces] = 1.0 / pieces
    return w


# --------------------------------------------------------------------- entry point
#: :func:`lower_bound` evaluates exactly (mpmath) only the constructions whose float64 value is within this relative
#: distance of the best one (a NaN or infinite float value is always evaluated): every value it reports is still an
#: exact evaluation of a real pair; only the work on pairs that cannot win is saved. The float64 values were within
#: 3e-15 (relative) of the exact ones on Gaussian, Laplace and finite bases, spread and fixed laws, δ from 1e-6 to
#: 1e-30, so a construction this far behind cannot win; 1e-4 evaluated the runner-up in almost every call (the
#: constructions usually end within 1e-5 of each other), at 0.3-1 s of mpmath each.
EXACT_WINDOW = 1e-9
#: the most slices of :func:`lower_bound` (each slice is an atom of the exact mpmath evaluation of the winner: 1000,
#: the default, takes seconds; 1e9 would not fit in memory).
MAX_SLICES = 100_000
#: the most bins the search of :func:`lower_bound` may use (the search's orders grow factorially with the bins).
MAX_BINS = 64
#: ... and of constructions whose float64 values agree within this relative distance, only the first (their exact
#: values agree to about as much: at most that is lost of the lower bound, which stays a value of a real pair).
TWIN_WINDOW = 1e-12


def lower_bound(base: Pair | Profile, dist: Any, delta: float, budget: int = 200, seed: int = 0, dps: int = 30,
                max_bins: int = 7, slices: int = 1000, monotone: bool = True) -> LowerBoundResult:
    """Certified lower bound on the worst-case ``eps(delta)`` of private selection with ``K ~ dist``
    over all base mechanisms dominated by ``base`` (docs/lower-bounds.md): :func:`lower_bound_at`. For several
    ``δ`` at once, :func:`lower_bounds` also takes the running maximum over ``δ``."""
    return lower_bound_at(base, dist, delta, budget, seed, dps, max_bins, slices, monotone)


def lower_bounds(base: Pair | Profile, dist: Any, deltas: Sequence[float], **options: Any) -> list[LowerBoundResult]:
    """:func:`lower_bound_at` at each of ``deltas``, then the running maximum over ``δ``
    (:func:`symsel.evidence.monotone.running_maximum`: a bound found at a larger ``δ`` holds at every smaller one,
    since ``ε(δ)`` is non-increasing), so the bounds returned never rise with ``δ``. ``options``: those of
    :func:`lower_bound_at`."""
    from symsel.evidence.monotone import running_maximum

    if isinstance(deltas, str | bytes) or not isinstance(deltas, Sequence) or not deltas:
        raise ParameterError("deltas", deltas, "a non-empty sequence of numbers in [0, 1]", "lower_bounds")
    return running_maximum([lower_bound_at(base, dist, delta, **options) for delta in deltas])


def lower_bound_at(base: Pair | Profile, dist: Any, delta: float, budget: int = 200, seed: int = 0, dps: int = 30,
                   max_bins: int = 7, slices: int = 1000, monotone: bool = True) -> LowerBoundResult:
    """Certified lower bound on the worst-case ``eps(delta)`` of private selection with ``K ~ dist``
    over all base mechanisms dominated by ``base`` (docs/lower-bounds.md), from the constructions at ``delta`` alone.

    Three constructions are tried and the best one is reported:

    * a search over few bins (continuous pairs) or kernels (finite pairs) and their score orders
      (structured seeds, Nelder-Mead, simulated annealing; ``budget`` float64 evaluations);
    * slice insertion: the pair cut into ``slices`` thin slices (continuous pairs: equally spaced
      in ``x``, and for Laplace also refined on its ramp, :func:`slice_cuts`; finite pairs: each outcome into
      ``slices // n`` equal pieces),
      ordered by :func:`slice_insertion_order`, iterated on its target ``eps``;
    * expanding intervals: the same slices ordered by :func:`expanding_interval_order`, iterated likewise.

    The winners are evaluated exactly (mpmath, :func:`symsel.evidence.exact.selection_epsilon`); the largest
    exact value is reported, rounded down.

    Args:
        base: a :data:`~symsel.pairs.Pair` (finite, Gaussian or Laplace), or a
            :class:`~symsel.profiles.Profile` with a :meth:`~symsel.profiles.Profile.dominating_pair`.
        dist: the :class:`~symsel.distributions.Distribution` of ``K``, or its spec string.
        delta: target ``delta`` in [0, 1].
        budget: number of float64 evaluations of the exact selection formula for the search (at most
            :data:`~symsel.validate.MAX_LOWER_BOUND_BUDGET`, the cap of ``symsel verify --budget`` too).
        seed: seed of the search's random moves.
        dps: digits of the final exact (mpmath) evaluation of the winner.
        max_bins: largest number of bins the search may use (at most :data:`MAX_BINS`).
        slices: number of slices of the slice-insertion and expanding-interval constructions (0 turns both off; at
            most :data:`MAX_SLICES`).
        monotone: also evaluate the winner's bins in their monotone order (``monotone_epsilon``; taken when it
            is larger: ties of the likelihood ratio on a finite pair). It is evaluated in float64 first; when that
            value is more than :data:`EXACT_WINDOW` behind the winner it cannot be taken, and its exact value (about
            a third of the time on a Gaussian base, where slices have no ties) is computed only when
            ``monotone_epsilon`` is read. ``False`` reports NaN.
    """
    where = "lower_bound"
    _check_delta(delta, where)
    dps = validate.dps(dps, where)
    budget = validate.integer(budget, "budget", where, lo=1, hi=validate.MAX_LOWER_BOUND_BUDGET)
    max_bins = validate.integer(max_bins, "max_bins", where, lo=2, hi=MAX_BINS)
    slices = validate.integer(slices, "slices", where, lo=0, hi=MAX_SLICES)
    dist = as_distribution(dist, "dist", where)
    monotone = validate.flag(monotone, "monotone", where)
    if isinstance(base, Profile) and base.family == "tabulated":
        from symsel.evidence.tabulated_lower import tabulated_pair

        base = tabulated_pair(base)  # a member of the class the table stands for (docs/lower-bounds.md)
    if isinstance(base, Profile) and base.dominating_pair() is None and base.dominated_loss_pairs():
        return _dominated_pairs_lower_bound(base, dist, float(delta))
    result = _searched_lower_bound(base, dist, delta, budget, seed, dps, max_bins, slices, monotone)
    if isinstance(base, Profile):
        below_upper_bound(result.epsilon, _cheap_upper_bound(dist, base, float(delta)), "lower_bound")
    return result


def below_upper_bound(lower: float, upper: float, where: str) -> float:
    """``lower`` itself when it is at most ``upper`` (a valid upper bound on the same ``ε(δ)``); else
    :class:`~symsel.errors.InconsistentBoundsError`: a lower bound above an upper bound means one of them is wrong,
    and a certified value is never reported on the wrong side of another."""
    if lower > upper:
        raise InconsistentBoundsError(
            f"{where}: the certified lower bound eps={lower!r} exceeds a valid upper bound eps={upper!r} for the same "
            "question; refusing to report either (please report this)")
    return lower


def _cheap_upper_bound(dist: Any, base: Profile, delta: float) -> float:
    """A valid upper bound on the selection's ``ε(δ)`` at the cost of a closed form: the ``rdp`` method (Papernot
    & Steinke's Rényi-DP bounds on the base's RDP curve); ``inf`` when the base has none."""
    from symsel.bounds.api import bound

    try:
        return bound(dist, base, "rdp").epsilon(delta)
    except NotApplicableError:
        return math.inf


def _searched_lower_bound(base: Pair | Profile, dist: Any, delta: float, budget: int, seed: int, dps: int,
                          max_bins: int, slices: int, monotone: bool) -> LowerBoundResult:
    """:func:`lower_bound`'s three constructions on a base with a dominating pair (arguments validated)."""
    pair = as_pair(base, "lower_bound")
    delta = float(delta)
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    obj = _Objective(dist, delta, int(budget))
    candidates: list[tuple[FinitePair, dict[str, Any]]] = []
    if isinstance(pair, FinitePair):
        reduced = _without_null_outcomes(pair)
        p, q = np.asarray(reduced.p_float), np.asarray(reduced.q_float)
        w, order = _FiniteSearch(p, q, obj, rng, max_bins).run()
        found = _kernel_pair(reduced, w, order, dps + 30)
        candidates.append((found, {"kernel": w, "construction": "search", "mono": found.monotone_order()}))
        if slices >= 2 * reduced.n and math.isfinite(obj.best):
            pieces = slices // reduced.n
            w = _split_kernel(reduced.n, pieces)
            for order, info in _slice_orders(p @ w, q @ w, dist, delta, obj.best, both_directions=True):
                sliced = _kernel_pair(reduced, w, order, dps + 30)
                candidates.append((sliced, {**info, "kernel": w, "mono": sliced.monotone_order()}))
    else:
        cuts, order = _ContinuousSearch(pair, obj, rng, max_bins).run()
        candidates.append((discretize(pair, cuts, order, dps=dps + 30),
                           {"cuts": cuts, "construction": "search", "mono": None}))
        if slices >= 3 and math.isfinite(obj.best):
            for cut_set in slice_cuts(pair, slices, delta):
                c = cast(Sequence[float], cut_set)
                ps, qs = pair.bin_masses_float(c)
                for order, info in _slice_orders(ps, qs, dist, delta, obj.best, both_directions=False):
                    candidates.append((discretize(pair, c, order, dps=dps + 30), {**info, "cuts": c, "mono": None}))
    best: tuple[Any, FinitePair, dict[str, Any]] | None = None
    floats = [float(info.get("search_epsilon", obj.best)) for _, info in candidates]
    top = max((f for f in floats if math.isfinite(f)), default=math.nan)
    scale = max(1.0, abs(top)) if math.isfinite(top) else 1.0
    evaluated: list[float] = []
    for (found, info), value in zip(candidates, floats, strict=True):
        if math.isfinite(value) and value < top - EXACT_WINDOW * scale:
            continue  # clearly behind another construction in float64: not worth its exact evaluation
        if math.isfinite(value) and any(abs(value - seen) <= TWIN_WINDOW * scale for seen in evaluated):
            continue  # the same float64 value as a construction evaluated already (often the same pair)
        evaluated.append(value)
        exact = selection_epsilon(found, dist, delta, dps)
        if best is None or exact > best[0]:
            best = (exact, found, info)
    assert best is not None
    exact, found, info = best
    mono: float | Callable[[], float] = math.nan
    if monotone:
        mono_pair = found.with_order(info["mono"])
        mono_float = selection_epsilon_float(mono_pair, dist, delta)
        if math.isfinite(mono_float) and mono_float < float(exact) - EXACT_WINDOW * max(1.0, abs(float(exact))):
            # behind the winner in float64, as for the constructions above: it cannot be taken, so its exact
            # value (a third of the time on a Gaussian base) is computed only if someone reads it
            mono = functools.partial(_exact_rounded_down, mono_pair, dist, delta, dps)
        else:
            mono_exact = selection_epsilon(mono_pair, dist, delta, dps)
            if mono_exact > exact:  # ties of the likelihood ratio can make the "monotone" order the better one
                found, exact = mono_pair, mono_exact
            mono = _round_down(mono_exact)
    found_cuts = info.get("cuts")
    kernel = info.get("kernel")
    return LowerBoundResult(
        epsilon=_round_down(exact), epsilon_mp=exact, pair=found, order=tuple(int(i) for i in found.order),
        evaluations=obj.calls, monotone=mono, delta=delta,
        search_epsilon=float(info.get("search_epsilon", obj.best)),
        cuts=None if found_cuts is None else tuple(float(x) for x in found_cuts),
        kernel=None if kernel is None else tuple(tuple(float(x) for x in row) for row in kernel),
        seconds=time.perf_counter() - start, base=pair, construction=info["construction"],
        slice_evaluations=int(sum(i.get("calls", 0) for _, i in candidates)),
    )


def _dominated_pairs_lower_bound(base: Profile, dist: Any, delta: float) -> LowerBoundResult:
    """The lower bound on a base known through dominated pairs ordered by loss (DP-SGD;
    :func:`symsel.evidence.pld_lower.loss_pair_lower_bound`), started at ``best``'s upper bound (the closest one,
    and the cheapest: ``interval`` alone, searched in full, took 6.5 s on ``dpsgd(q=1e-6, sigma=0.5, steps=10)``,
    where composition wins). ``monotone_epsilon`` (the atoms by increasing loss) is evaluated when read."""
    from symsel.bounds.api import bound
    from symsel.evidence.dpsgd_brackets import dpsgd_lower_pairs, searched_lower_bound
    from symsel.evidence.pld_lower import loss_pair_lower_bound

    start = time.perf_counter()
    guess = bound(dist, base).epsilon(delta)
    # DP-SGD: the pairs its neighbouring relation realizes, resolved down to δ (docs/lower-bounds.md)
    pairs = dpsgd_lower_pairs(base, delta) if base.family == "dpsgd" else base.dominated_loss_pairs()
    search = searched_lower_bound if base.family == "dpsgd" else loss_pair_lower_bound
    found = search(pairs, dist, delta, guess if math.isfinite(guess) else 10.0)
    below_upper_bound(found.epsilon, guess, "lower_bound")  # best: an upper bound, computed anyway
    if found.a is None or found.b is None:  # no atom tells the pair apart (q = 1e-300): the trivial lower bound 0
        return LowerBoundResult(
            epsilon=0.0, epsilon_mp=mpmath.mpf(0), pair=FinitePair([1.0], [1.0], (0,), label="identical outputs"),
            order=(0,), evaluations=0, delta=delta, search_epsilon=0.0, seconds=time.perf_counter() - start,
            base=None, construction="the trivial lower bound (no outcome tells the dominated pair apart)",
            monotone=0.0)
    pair = FinitePair(list(found.a / found.a.sum()), list(found.b / found.b.sum()), found.order,
                      label=f"{found.construction} ({found.direction})")
    return LowerBoundResult(
        epsilon=found.epsilon, epsilon_mp=mpmath.mpf(found.epsilon), pair=pair, order=found.order, evaluations=0,
        delta=delta, search_epsilon=found.epsilon, seconds=time.perf_counter() - start,
        base=None, construction=f"expanding-interval on a dominated pair ({found.direction})",
        monotone=functools.partial(found.monotone_epsilon, dist))


def _without_null_outcomes(pair: FinitePair) -> FinitePair:
    """The pair without the outcomes of mass exactly 0 on both sides (they never occur)."""
    keep = [i for i in range(pair.n) if not (to_mpf(pair.p[i], 30) == 0 and to_mpf(pair.q[i], 30) == 0)]
    if len(keep) == pair.n:
        return pair
    return FinitePair([pair.p[i] for i in keep], [pair.q[i] for i in keep], label=pair.label)


def _kernel_pair(base: FinitePair, w: np.ndarray, order: Sequence[int], dps: int) -> FinitePair:
    """The exact image ``(P W, P' W)`` of the base pair under the (float) kernel ``W``, rows
    renormalized at ``dps`` digits so that the kernel is exactly stochastic."""
    with mpmath.workdps(dps):
        p = masses_mp(base.p, dps)
        q = masses_mp(base.q, dps)
        rows = []
        for row in w:
            vals = [mpmath.mpf(float(x)) for x in row]
            total = mpmath.fsum(vals)
            rows.append([v / total for v in vals])
        nb = len(rows[0])
        cols = [[i for i in range(len(p)) if rows[i][j] != 0] for j in range(nb)]
        pm = [mpmath.fsum(p[i] * rows[i][j] for i in cols[j]) for j in range(nb)]
        qm = [mpmath.fsum(q[i] * rows[i][j] for i in cols[j]) for j in range(nb)]
    return FinitePair(pm, qm, order, label=f"kernel image on {nb} bins")
