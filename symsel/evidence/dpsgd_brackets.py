"""Lower bounds on DP-SGD under each neighbouring relation, at every δ (docs/lower-bounds.md, "DP-SGD under each
neighbouring relation").

**Which pairs a relation realizes.** One step of DP-SGD (Poisson rate ``q``, noise ``σ``, every example's gradient
clipped to norm 1) releases the sum of the sampled examples' gradients plus ``N(0, σ² I)``. Take a run where every
example but one has gradient 0 at every step, and let that example's gradient be a fixed unit vector ``e``:

* *add/remove*: removing it gives the pair ``M = (1 − q) N(0, σ²) + q N(1, σ²)`` against ``N₀ = N(0, σ²)`` along
  ``e`` (the other coordinates are the same noise on both sides);
* *replace-special*: replacing it by the special example, whose gradient is 0, gives the same pair;
* *replace-one*: replacing it by an example of gradient ``−e`` gives ``M₊ = (1 − q) N(0, σ²) + q N(1, σ²)`` against
  ``M₋ = (1 − q) N(0, σ²) + q N(−1, σ²)`` (the example at that index is sampled with probability ``q`` in both
  datasets). Replacing it by an example of gradient 0 is a replace-one neighbour too, so replace-one also realizes
  the add/remove pair; ``M₊`` against ``M₋`` is the stronger of the two.

These pairs are *realized*, not merely dominated: each is the output law of a real DP-SGD run on two neighbouring
datasets, the ``T`` steps composed non-adaptively (the gradients do not change). No assumption about an accountant
enters the lower side; the assumption that dp-accounting's pairs *dominate* DP-SGD (docs/interval.md) is one about the
upper side only.

**The replace-one pair, bucketed.** Its loss
``ℓ(x) = log(1 − q + q e^{(2x−1)/(2σ²)}) − log(1 − q + q e^{(−2x−1)/(2σ²)})`` increases with ``x`` and is odd
(the pair is symmetric: swapping its laws is the reflection ``x ↦ −x``, so one direction is enough). The line is
cut where ``ℓ`` crosses multiples of a width ``w`` (cuts found by bisection; any cuts would do: intervals of ``x``
are a post-processing), each bucket's masses are exact differences of normal CDFs and it is labelled ``round(ℓ/w)``
at its lower edge; the steps' labels are summed exactly as for add/remove
(:func:`symsel.pairs.dpsgd.composed_steps`).

**Small δ.** The composed label vectors merge the labels whose tail mass is below a threshold into the end labels (a
post-processing, hence still valid, but it hides the loss beyond). At ``δ`` the threshold is :func:`lower_tail`,
far below ``δ``, so the atoms that carry ``δ`` are resolved down to ``δ = 1e-30``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import ndtr

from symsel.evidence.pld_lower import PldLowerBound, _largest_epsilon, split_dominated_pairs
from symsel.pairs.dpsgd import (
    FINAL_ATOMS,
    MAX_LABELS,
    MAX_STEP_BUCKETS,
    TAIL,
    composed_steps,
    dpsgd_dominated_pairs,
    step_width,
)
from symsel.pairs.loss import UNIT, DominatedPair, loss_pair

#: one replace-one step's buckets cover the outputs ``[−1 − R σ, 1 + R σ]`` (the two outer buckets take the rest):
#: a normal tail beyond ``R = 14`` standard deviations holds less than 1e-44.
REPLACE_REACH = 14.0
#: the tail threshold at ``δ`` is ``δ`` times this (and at most :data:`symsel.pairs.dpsgd.TAIL`).
TAIL_SHARE = 1e-10
#: the smallest tail threshold (float64 sums of masses stay far above the underflow threshold).
TAIL_FLOOR = 1e-200


def lower_tail(delta: float) -> float:
    """The tail threshold of the dominated pairs built for a lower bound at ``delta``: :data:`TAIL_SHARE` of it, at
    most :data:`~symsel.pairs.dpsgd.TAIL`, at least :data:`TAIL_FLOOR`."""
    return float(min(TAIL, max(TAIL_FLOOR, float(delta) * TAIL_SHARE)))


def _replace_loss(q: float, sigma: float, x: np.ndarray) -> np.ndarray:
    """``ℓ(x)`` of one replace-one step (module docstring), in logs without overflow."""
    s2 = 2.0 * sigma * sigma
    up = np.logaddexp(math.log1p(-q), math.log(q) + (2 * x - 1) / s2)
    down = np.logaddexp(math.log1p(-q), math.log(q) + (-2 * x - 1) / s2)
    return up - down


def _normal_masses(edges: np.ndarray, shift: float, sigma: float) -> np.ndarray:
    """Masses of ``N(shift, σ²)`` on the intervals between ``edges``, each as a difference of normal CDFs on the
    side of the mean that avoids cancellation."""
    z = (edges - shift) / sigma
    lower = np.diff(ndtr(z))
    upper = -np.diff(ndtr(-z))
    return np.where(z[1:] <= 0, lower, upper).clip(min=0.0)


def replace_one_step_buckets(q: float, sigma: float, width: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One replace-one step's buckets: masses under ``M₊`` and ``M₋`` and integer labels ``round(ℓ/width)`` at each
    bucket's lower edge (the lowest bucket carries the loss of its upper edge)."""
    lo_x, hi_x = -1.0 - REPLACE_REACH * sigma, 1.0 + REPLACE_REACH * sigma
    bottom, top = (float(v) for v in _replace_loss(q, sigma, np.array([lo_x, hi_x])))
    width = max(float(width), (top - bottom) / MAX_STEP_BUCKETS)
    levels = np.arange(math.ceil(bottom / width), math.floor(top / width) + 1) * width
    lo, hi = np.full(levels.shape, lo_x), np.full(levels.shape, hi_x)
    for _ in range(60):  # bisection for the x where ℓ crosses each level (ℓ is increasing)
        mid = 0.5 * (lo + hi)
        below = _replace_loss(q, sigma, mid) < levels
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    cuts = np.unique(np.clip(0.5 * (lo + hi), lo_x, hi_x))
    edges = np.concatenate([[-np.inf], cuts, [np.inf]])
    up = (1 - q) * _normal_masses(edges, 0.0, sigma) + q * _normal_masses(edges, 1.0, sigma)
    down = (1 - q) * _normal_masses(edges, 0.0, sigma) + q * _normal_masses(edges, -1.0, sigma)
    left = np.concatenate([[cuts[0]], cuts])
    labels = np.round(_replace_loss(q, sigma, left) / width).astype(np.int64)
    return up, down, labels


def replace_one_dominated_pair(q: float, sigma: float, steps: int, width: float | None = None,
                               tail: float = TAIL, max_labels: int = MAX_LABELS,
                               final_atoms: int = FINAL_ATOMS) -> tuple[DominatedPair, ...]:
    """The replace-one pair of ``dpsgd(q, sigma, steps)`` bucketed and composed (module docstring): one
    :class:`~symsel.pairs.loss.DominatedPair` (the pair is symmetric), each mass within its
    ``relative_error`` of the exact mass of a post-processing of the realized pair."""
    width = 2.0 * step_width(q, sigma) if width is None else float(width)
    final = composed_steps(*replace_one_step_buckets(q, sigma, width), steps, max_labels, final_atoms, tail)
    source = (f"dpsgd(q={q!r}, sigma={sigma!r}, steps={steps!r}, neighbouring='replace_one') buckets of loss width "
              f"{width:g}, labels summed")
    return (loss_pair(final.p, final.n, DominatedPair, "replace", source, relative_error=final.err),)


def dpsgd_lower_pairs(base: Any, delta: float) -> tuple[DominatedPair, ...]:
    """The dominated pairs a lower bound at ``delta`` uses on a ``dpsgd`` base (module docstring): the add/remove pairs
    (both directions) for add/remove and replace-special, the replace-one pair for replace-one; labels resolved down
    to :func:`lower_tail` of ``delta``."""
    tail = lower_tail(delta)
    if getattr(base, "neighbouring", "add_remove") == "replace_one":
        return replace_one_dominated_pair(base.q, base.sigma, base.steps, tail=tail)
    return dpsgd_dominated_pairs(base.q, base.sigma, base.steps, tail=tail)


#: relative margin by which the float64 value of an order must exceed ``δ`` for the search to count it (the value
#: only steers the search; the reported bound is certified at high precision).
SEARCH_MARGIN = 1e-3
#: bisection steps on the target ``ε`` of :func:`searched_lower_bound`, in ``[SEARCH_FROM · guess, 1.05 guess]``.
SEARCH_STEPS = 10
SEARCH_FROM = 0.6
#: Gauss-Legendre nodes of the float64 increments of :func:`order_value`.
_NODES = 4


def order_value(a: np.ndarray, b: np.ndarray, order: np.ndarray, dist: Any, eps: float) -> float:
    """The float64 ``Σ [φ(y + a) − φ(y) − e^ε (φ(x + b) − φ(x))]_+`` of the selection on ``(a, b)`` in ``order``, the
    increments as Gauss-Legendre integrals of ``φ'`` (no cancellation) from masses summed *along the order*. It only
    steers :func:`searched_lower_bound`: the expanding-interval program's own optimum is not used for that, since it
    forms each interval's mass as a difference of two cumulative sums, whose absolute error (about 1e-16) swamps the
    terms when ``δ`` is below about 1e-12."""
    nodes, weights = np.polynomial.legendre.leggauss(_NODES)
    nodes, weights = (nodes + 1.0) / 2.0, weights / 2.0
    ao, bo = a[order], b[order]
    y = np.concatenate([[0.0], np.cumsum(ao)[:-1]])
    x = np.concatenate([[0.0], np.cumsum(bo)[:-1]])

    def increment(base: np.ndarray, mass: np.ndarray) -> np.ndarray:
        u = np.minimum(base[:, None] + nodes[None, :] * mass[:, None], 1.0)
        return mass * (np.asarray(dist.dphi(u), dtype=float) @ weights)

    with np.errstate(over="ignore", invalid="ignore"):
        terms = increment(y, ao) - math.exp(min(eps, 700.0)) * increment(x, bo)
    return float(np.sum(terms[terms > 0]))


def _bisected_order(order_for: Any, a: np.ndarray, b: np.ndarray, dist: Any, delta: float,
                   eps_guess: float) -> tuple[float, np.ndarray] | None:
    """The largest target ``t`` (bisection from ``eps_guess``) whose order ``order_for(t)`` has a float64 ``δ(t)``
    (:func:`order_value`) above ``delta``, with that order; ``None`` when no target reaches it."""

    def reaches(target: float) -> np.ndarray | None:
        order = np.asarray(order_for(target), dtype=int)
        return order if order_value(a, b, order, dist, target) > delta * (1 + SEARCH_MARGIN) else None

    hi = max(float(eps_guess), 1e-3) * 1.05
    lo = SEARCH_FROM * hi
    lo_order = reaches(lo)
    while lo_order is None and lo > 1e-3:
        hi, lo = lo, lo * SEARCH_FROM
        lo_order = reaches(lo)
    if lo_order is None:
        return None
    while hi < 1e4 and (order := reaches(hi)) is not None:  # the guess was too low (or no finite upper bound)
        lo, lo_order, hi = hi, order, 2 * hi
    for _ in range(SEARCH_STEPS):
        mid = 0.5 * (lo + hi)
        order = reaches(mid)
        if order is None:
            hi = mid
        else:
            lo, lo_order = mid, order
    return lo, lo_order


def searched_lower_bound(pairs: tuple[DominatedPair, ...], dist: Any, delta: float, eps_guess: float,
                         pieces: int = 2) -> PldLowerBound:
    """The certified lower bound of :func:`symsel.evidence.pld_lower.loss_pair_lower_bound` with the target ``ε``
    found by bisection instead of a fixed-point iteration, for two order constructions on each pair: expanding
    intervals (the strongest for fixed and concentrated ``K``) and slice insertion (for spread laws: on
    ``dpsgd(q=0.05, sigma=1.5, steps=300)``, ``geometric(mean=25)``, ``δ = 1e-30``, 11.47 against 10.12). For each
    target ``t`` a construction gives an order and :func:`order_value` its float64 ``δ(t)``; the largest ``t`` where
    that exceeds ``delta`` (:func:`_bisected_order`, from ``eps_guess``, the best upper bound) gives the order that is
    evaluated at high precision. A fixed-point iteration started far from it can settle on a much worse order (on
    ``point(16)`` at ``δ = 1e-30``: from 20 it ends at 21.25, from 28 at 30.32). The float64 values choose the order
    only; the reported ``ε`` is :func:`symsel.evidence.pld_lower.selection_delta_below`'s."""
    from symsel.evidence.lower import ExpandingIntervals, slice_insertion_order

    best: PldLowerBound | None = None
    for pair, a, b in split_dominated_pairs(pairs, pieces):
        constructions = (ExpandingIntervals(a, b, dist).order,
                         lambda t, a=a, b=b: slice_insertion_order(a, b, dist, t))
        for order_for in constructions:
            found = _bisected_order(order_for, a, b, dist, delta, eps_guess)
            if found is None:
                continue
            target, order = found
            relative_error = pair.relative_error + 4 * UNIT
            value = _largest_epsilon(a, b, order, dist, delta, relative_error, target)
            if best is None or value > best.epsilon:
                best = PldLowerBound(value, float(delta), pair.direction, int(a.size), pair.source, a, b,
                                     tuple(int(i) for i in order), relative_error)
    if best is None:
        return PldLowerBound(0.0, float(delta), pairs[0].direction, 0, pairs[0].source)
    return best
