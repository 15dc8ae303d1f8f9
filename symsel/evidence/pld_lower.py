"""Certified lower bounds on bases known through privacy-loss distributions: DP-SGD (docs/lower-bounds.md,
"Bases known through a PLD").

The pair searched is one the base dominates: DP-SGD's buckets of loss with the steps' labels summed
(:func:`symsel.pairs.dpsgd.dpsgd_dominated_pairs`), or any other :class:`~symsel.pairs.loss.DominatedPair`.

**The lower bound.** On such a pair the best expanding-interval order is found in float64
(:class:`symsel.evidence.lower.ExpandingIntervals`), and its selection's ``δ(ε)`` is evaluated at 30 digits with
every mass moved to the side that can only lower ``δ`` (:func:`selection_delta_below`): the result is at most the
exact ``δ`` of a real selection on a base dominated by the base's pair, so the largest ``ε`` where it still exceeds
the target, rounded down, is a certified lower bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np

from symsel.distributions import Distribution
from symsel.errors import NotApplicableError
from symsel.pairs.loss import UNIT, DominatedPair, require


@dataclass(frozen=True)
class PldLowerBound:
    """A certified lower bound: ``epsilon`` (rounded down) for the largest direction, with the pair it was found on."""

    epsilon: float
    delta: float
    direction: str
    atoms: int
    construction: str
    a: np.ndarray | None = None
    b: np.ndarray | None = None
    order: tuple[int, ...] = ()
    #: the relative error of the masses ``a`` and ``b`` (as :func:`selection_delta_below` takes it)
    relative_error: float = 0.0

    def monotone_epsilon(self, dist: Distribution) -> float:
        """The same certified evaluation in the monotone order (the atoms by increasing loss, ``a`` and ``b`` as
        found): the value a monotone score gets on this pair, itself a lower bound."""
        assert self.a is not None and self.b is not None
        return _largest_epsilon(self.a, self.b, np.arange(self.a.size), dist, self.delta, self.relative_error,
                                self.epsilon)


def selection_delta_below(a: np.ndarray, b: np.ndarray, order: np.ndarray, dist: Distribution, eps: float,
                          relative_error: float, dps: int = 30) -> mpmath.mpf:
    """A lower bound on ``H_{e^ε}`` of the selection on the pair ``(a, b)`` taken in ``order`` (lowest first), when
    every mass is known within ``relative_error``: each term
    ``[φ(y + a) − φ(y) − e^ε (φ(x + b) − φ(x))]_+`` grows with ``a`` and ``y`` and shrinks as ``b`` and ``x`` grow
    (``φ`` convex and non-decreasing), so ``a``, ``y`` are taken low and ``b``, ``x`` high; the window of
    ``φ(x + b) − φ(x)`` is kept inside ``[0, 1]`` by sliding it down (which can only raise it). The terms' two
    differences do not depend on ``ε``: :class:`SelectionTerms` computes them once for many ``ε``."""
    return SelectionTerms(a, b, order, dist, relative_error, dps).delta_below(eps)


class SelectionTerms:
    """The ``ε``-free parts of :func:`selection_delta_below`'s terms: per atom taken in ``order``, the gain
    ``φ(y + a) − φ(y)`` taken from below and the cost ``φ(x + b) − φ(x)`` from above, at ``dps`` digits, ``a`` lowered
    and ``b`` raised by ``relative_error``. :meth:`delta_below` then sums ``[gain − e^ε cost]_+`` for any ``ε``
    without a new ``φ``: a bisection over ``ε`` (:func:`_largest_epsilon`) pays the ``φ`` evaluations once.

    Directed, whatever the masses' sizes: the positions ``x`` and ``y`` are accumulated rounding up and down, and a
    difference of two ``φ`` values is moved by :func:`_difference_allowance` (two roundings of values at most 1).
    An allowance alone would leave a mass below ``10^−dps`` with a cost of about ``10^−dps`` (a lower bound far below
    the truth), and a plain difference, with no allowance, a cost of exactly 0 (a ``δ`` that never falls with ``ε``:
    a "lower bound" above every upper bound). So each difference is also bounded by convexity (``φ'`` is
    non-decreasing on [0, 1]): ``φ(y + a) − φ(y) ≥ a φ'(y)`` and ``φ(x + b) − φ(x) ≤ b φ'(x + b)``, which keeps
    the relative size of a tiny difference; the tighter of the two bounds is taken."""

    def __init__(self, a: np.ndarray, b: np.ndarray, order: np.ndarray, dist: Distribution, relative_error: float,
                 dps: int = 30):
        # a mass below 10^-dps is lost in φ(x + b) − φ(x) at x near 1: the digits grow with the smallest mass, so
        # every mass is resolved to dps digits (the directed allowance below then stays small against each term)
        self.dps = dps = dps + _mass_digits(a, b)
        gains, costs = [], []
        with mpmath.workdps(dps):
            allowance = _difference_allowance()
            low, high = 1 - mpmath.mpf(relative_error), 1 + mpmath.mpf(relative_error)
            slope_low, slope_high = 1 - allowance, 1 + allowance  # φ' evaluated within a few units
            x = y = mpmath.mpf(0)
            one = mpmath.mpf(1)
            phi_y = dist.phi_mp(y, dps)
            for i in order:
                ai = mpmath.fmul(mpmath.mpf(float(a[i])), low, rounding="d")
                bi = mpmath.fmul(mpmath.mpf(float(b[i])), high, rounding="u")
                y_next = mpmath.fadd(y, ai, rounding="d")
                phi_next = dist.phi_mp(min(y_next, one), dps)
                if ai > 0:
                    # the window [end − b, end], end = min(x + b, 1), or all of [0, 1] when b ≥ 1
                    end = min(mpmath.fadd(x, bi, rounding="u"), one) if bi < 1 else one
                    begin = mpmath.fsub(end, bi, rounding="d") if bi < 1 else mpmath.mpf(0)
                    cost = dist.phi_mp(end, dps) - dist.phi_mp(begin, dps) + allowance
                    cost = min(cost, min(bi, one) * dist.dphi_mp(end, dps) * slope_high)
                    gain = phi_next - phi_y - allowance
                    width = mpmath.fsub(min(y_next, one), y, rounding="d")
                    gain = max(gain, width * dist.dphi_mp(y, dps) * slope_low, mpmath.mpf(0))
                    gains.append(gain)
                    costs.append(cost)
                x, y, phi_y = mpmath.fadd(x, bi, rounding="u"), y_next, phi_next
        self.gains, self.costs = gains, costs
        # float64 ratios gain / cost only choose which terms to form exactly (with a margin): a term whose float
        # ratio is below e^ε (1 - 1e-6) is negative, the float error of either difference being far below 1e-6
        with np.errstate(divide="ignore", invalid="ignore"):
            self.ratios = np.asarray([float(g) for g in gains]) / np.asarray([float(c) for c in costs])

    def delta_below(self, eps: float) -> mpmath.mpf:
        """``Σ [gain − e^ε cost]_+`` at ``dps`` digits (every positive term is formed exactly; none is skipped)."""
        with mpmath.workdps(self.dps):
            e = mpmath.exp(mpmath.mpf(eps))
            total = mpmath.mpf(0)
            threshold = math.exp(min(eps, 700.0)) * (1 - 1e-6)
            for i in np.flatnonzero(~(self.ratios < threshold)).tolist():  # NaN and inf: formed
                term = self.gains[i] - e * self.costs[i]
                if term > 0:
                    total += term
            return total


def _difference_allowance() -> mpmath.mpf:
    """An upper bound on the error of a difference of two values of ``φ`` in [0, 1] at the current precision: each
    value is within a unit of its last place (:meth:`~symsel.distributions.Distribution.phi_mp` rounds once) and
    the subtraction rounds once more; eight units of 1 cover the three with room."""
    return mpmath.ldexp(mpmath.mpf(1), 3 - mpmath.mp.prec)


def _mass_digits(a: np.ndarray, b: np.ndarray) -> int:
    """Decimal digits below 1 of the smallest positive mass of ``a`` and ``b`` (0 when all are at least 1)."""
    masses = np.concatenate([np.asarray(a, dtype=float), np.asarray(b, dtype=float)])
    positive = masses[masses > 0]
    return max(0, math.ceil(-math.log10(float(positive.min())))) if positive.size else 0


def split_dominated_pairs(pairs: tuple[DominatedPair, ...], pieces: int
                          ) -> list[tuple[DominatedPair, np.ndarray, np.ndarray]]:
    """Each pair with its atoms cut into ``pieces`` equal parts (a post-processing: the finer pair is still one the
    base dominates) and its mass at ``+∞`` as a last atom: ``(pair, a, b)``. A pair that dominates the base
    (:class:`~symsel.pairs.loss.DominatingPair`) is refused: a selection on it can leak more than the base allows,
    so its value is no lower bound."""
    pairs = require(pairs, DominatedPair, "lower bound")
    if not pairs:
        raise NotApplicableError("lower bound: the base hands out no dominated pair")
    out = []
    for pair in pairs:
        a = np.repeat(pair.a / pieces, pieces)
        b = np.repeat(pair.b / pieces, pieces)
        if pair.a_infinity > 0:
            a, b = np.append(a, pair.a_infinity), np.append(b, 0.0)
        out.append((pair, a, b))
    return out


def loss_pair_lower_bound(pairs: tuple[DominatedPair, ...], dist: Distribution, delta: float, eps_guess: float,
                          pieces: int = 2, rounds: int = 3) -> PldLowerBound:
    """The certified lower bound on dominated pairs (module docstring): per pair, the best expanding-interval
    order for a target ``ε`` (started at ``eps_guess``, then at the value found, ``rounds`` times), ``δ`` from below
    at 30 digits, the largest ``ε`` on a 1e-6 grid where it exceeds ``delta``; the largest over the pairs. A pair
    that dominates the base (:class:`~symsel.pairs.loss.DominatingPair`) is refused: a selection on it can leak more
    than the base allows, so its value is no lower bound."""
    from symsel.evidence.lower import ExpandingIntervals

    best: PldLowerBound | None = None
    for pair, a, b in split_dominated_pairs(pairs, pieces):
        target, found, found_order = float(eps_guess), 0.0, np.arange(a.size)
        intervals = ExpandingIntervals(a, b, dist)  # the orders' ε-free increments, once for every round
        for _ in range(rounds):
            order = np.asarray(intervals.order(target), dtype=int)
            value = _largest_epsilon(a, b, order, dist, delta, pair.relative_error + 4 * UNIT, target)
            if value <= found:
                break
            found, target, found_order = value, value, order
        if best is None or found > best.epsilon:
            best = PldLowerBound(found, float(delta), pair.direction, int(a.size), pair.source, a, b,
                                 tuple(int(i) for i in found_order), pair.relative_error + 4 * UNIT)
    assert best is not None
    return best


def _largest_epsilon(a: np.ndarray, b: np.ndarray, order: np.ndarray, dist: Distribution, delta: float,
                     relative_error: float, guess: float) -> float:
    """The largest ``ε`` (bisection to 1e-6, rounded down) with :func:`selection_delta_below` above ``delta``
    (0 when none)."""
    terms = SelectionTerms(a, b, order, dist, relative_error)

    def above(eps: float) -> bool:
        return terms.delta_below(eps) > delta

    lo, hi = 0.0, max(guess, 1e-3) * 1.05
    if not above(lo):
        return 0.0
    while above(hi):
        lo, hi = hi, hi * 2
        if hi > 1e4:
            return lo
    while hi - lo > 1e-6 * max(1.0, lo):
        mid = 0.5 * (lo + hi)
        if above(mid):
            lo = mid
        else:
            hi = mid
    return lo
