"""The interval bound: the worst case of private selection on a Gaussian base, from above (docs/interval.md).

For a base whose dominating pair is the Gaussian pair ``Q = N(μ, 1)``, ``Q' = N(0, 1)`` (the Gaussian mechanism,
``μ``-GDP) and a law of ``K`` with ``P[K ≥ 2] > 0``, the worst score order of the base's outputs is an *expanding
interval* (docs/interval.md, Theorem 1): the outputs below any contributing output form an interval ``[l, h]`` of
the real line ending at that output. Hence, for every ``ε ≥ 0``,

    δ_A(ε) ≤ ∫ sup_{l ≤ h} [ r(h) φ'(Q[l, h]) − e^ε φ'(Q'[l, h]) ]_+ dQ'(h),     r(h) = e^{μh − μ²/2},

(docs/interval.md, Corollary 2). Outputs with ``r(h)^D ≤ e^ε`` contribute nothing (``D`` the largest ``k`` with
``P[K = k] > 0``; ``D = ∞`` otherwise, and then ``r(h) ≤ 1``): on an interval below ``h`` the ``Q``-mass is at
most ``r(h)`` times the ``Q'``-mass.

Certified evaluation (docs/interval.md, "Certified evaluation"). ``h``-cells of width ``min(H_STEP / μ,
H_MAX_WIDTH)`` (after a first pass ``H_COARSE`` times wider that leaves the smallest cells, at most ``COARSE_SHARE``
of its sum and ``COARSE_FINAL_SHARE`` of the result, with their wide bound) from that cutoff to ``μ + TOP_FIRST`` or
``μ + TOP`` (the ``Q``-mass above is charged ``φ'(1)``); ``l``-cells of width :data:`L_COARSE`, refined by branch
and bound as :data:`REFINEMENTS` says. On a cell pair the integrand is bounded by the smaller of the corner bound
``r(h_b) φ'(Q[l_a, h_b]) − e^ε φ'(Q'[l_b, h_a])`` (first order) and the linearized bound of
:func:`_linear_cell_bound` (second order: ``φ'`` is convex, and the linear form's supremum over the cell is at two
points). Masses carry a relative allowance of ``1e-12`` outwards, the float64 ``φ'`` values the law's measured
allowance (:mod:`symsel.bounds.precision`), the sum ``1e-9``; an overflow makes a bound ``+inf``, never NaN. Every
number is an upper bound on the statement, exact in the limit of small cells; for fixed ``K`` it is within 0.13 % of
the certified lower bound (``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
from scipy.special import ndtr

from symsel.bounds.precision import usable_float_error
from symsel.distributions import Distribution
from symsel.errors import NotApplicableError
from symsel.memory import MIB, Scratch, Take, gather
from symsel.numeric import last_feasible
from symsel.pairs.location import GaussianPair
from symsel.profiles import Profile
from symsel.profiles.base import SKIP_TEST_MAX_EPSILON, delta_by_symmetry

#: width of the cells of the contributing output ``h``, as ``μ · width`` (``r(h)`` changes by a factor
#: ``e^{H_STEP}`` across a cell) ...
H_STEP = 2.5e-3
#: ... and at most this wide in ``h`` itself (:func:`h_width`): a cell moves ``ε`` by about its loss width, and a
#: weak run's ``ε`` is about proportional to ``μ``, so the loss width must shrink with ``μ`` to keep the bound as
#: close in relative terms (point(k=3) at ``σ = 20``: 0.33554 with the fixed loss width, 0.33169 with this cap,
#: certified lower bound 0.33126).
H_MAX_WIDTH = 0.01
#: the first pass over ``h`` uses cells ``H_COARSE`` times wider; the smallest of them, carrying together at most
#: ``COARSE_SHARE`` of its sum, keep their (valid, looser) coarse bound, unless they would then carry more than
#: ``COARSE_FINAL_SHARE`` of the result (:func:`coarse_then_fine`).
H_COARSE = 8
COARSE_SHARE = 1e-3
COARSE_FINAL_SHARE = 1e-2
#: width of the coarse cells of the interval's lower end ``l``, which every ``h``-cell evaluates over the whole axis.
L_COARSE = 0.4
#: the refinements of the ``l``-axis, finest last (:func:`branch_and_bound`): each cuts the cells still in play into
#: ``SPLIT`` pieces (the finest cells are ``L_COARSE / 4096 ≈ 9.8e-5`` wide); the second entry is unused.
REFINEMENTS: tuple[tuple[int, int], ...] = ((8, 24), (8, 24), (8, 24), (8, 24))
#: the most cells of one ``h``-cell's row cut at each level (the largest bounds); the others keep their bound.
REFINE_CELLS = 24
#: the most times :func:`branch_and_bound` takes up the cells it set aside over its cap, and how far above a row's
#: result (relative) a set-aside cell's bound must be to be taken up ...
DEFERRED_PASSES = 4
DEFERRED_TOLERANCE = 1e-2
#: ... and the most cells the rounds may bound, as a share of the first descent's (a nearly flat integrand at a tiny
#: ``ε``, ``dpsgd(q=1e-6, sigma=0.5, steps=10)``, would otherwise take up cell after cell: 3.3 → 9.4 s for one ``ε``).
DEFERRED_WORK = 1.0
#: the ``h``-axis ends at ``μ + TOP`` (``Q``-mass above: about ``1e-44``) unless the ``Q``-mass above ``μ + TOP_FIRST``,
#: charged ``φ'(1)``, is below :data:`TOP_SHARE` of the rest; the ``l``-axis starts at ``−L_BOTTOM`` (everything
#: below is one cell).
TOP = 14.0
TOP_FIRST = 8.0
TOP_SHARE = 1e-4
L_BOTTOM = 12.0
#: outward allowances for rounding (masses, and the final sum).
MASS_ALLOWANCE = 1e-12
SUM_ALLOWANCE = 1e-9
#: ``h``-cells evaluated at once (:meth:`IntervalProfile._row_bounds`; memory: about this times the number of coarse
#: ``l``-cells floats). Fewer, the branch and bound's per-level work in Python dominates (an evaluation of
#: point(k=40) on ``gaussian(sigma=1)`` takes about half the time with 256 as with 64); more, its index arrays
#: outgrow glibc's default mmap threshold and a warm evaluation faults its pages in again
#: (``tests/bounds/test_interval_memory.py``) ...
CHUNK = 256
#: ... and cells of one level of the branch and bound bounded at once (:meth:`IntervalProfile._cell_bounds`, and the
#: same on pairs, :mod:`symsel.bounds.interval_pairs`), in arrays of :data:`SCRATCH`: each block's working arrays are
#: the same memory from block to block and call to call, not arrays allocated and freed (glibc's default settings
#: give a freed heap top of more than 128 KiB back to the kernel, so a fresh process would fault those pages in again
#: at every block: ``import symsel`` leaves the allocator as the process has it; ``benchmarks/bench_first_call.py``).
#: Few enough that the index arrays still allocated per block stay below that size.
CELL_BLOCK = 8192
#: the working arrays of a block (about 100 arrays of :data:`CELL_BLOCK` numbers, 6 MiB at most): at most this many
#: bytes per thread that evaluates an interval bound.
SCRATCH = Scratch("symsel.bounds.interval", 8 * MIB)


def h_width(mu: float) -> float:
    """The width of the final ``h``-cells for the ``μ``-GDP pair: ``H_STEP / μ``, at most :data:`H_MAX_WIDTH`."""
    return min(H_STEP / mu, H_MAX_WIDTH)


def _mass(a: np.ndarray, b: np.ndarray, shift: float) -> np.ndarray:
    """``N(shift, 1)[a, b]`` in float64, from the side of the median that avoids cancellation (0 if ``b ≤ a``)."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float) - shift, np.asarray(b, dtype=float) - shift)
    with np.errstate(invalid="ignore"):
        out = np.where(b <= 0, ndtr(b) - ndtr(a), ndtr(-a) - ndtr(-b))
    return np.where(b > a, np.maximum(out, 0.0), 0.0)


def _mass_above(b: np.ndarray, below: tuple[np.ndarray, np.ndarray], shift: float,
                at_b: tuple[np.ndarray, np.ndarray], take: Take) -> np.ndarray:
    """``N(shift, 1)[a, b]`` from the CDF and survival values ``below`` of ``N(shift, 1)`` at ``a`` and ``at_b`` at
    ``b`` (one-dimensional, computed once for many cells), from the side of the median that avoids cancellation; may
    be negative where ``b < a``. Into an array of ``take`` (:meth:`~symsel.memory.Scratch.frame`)."""
    (cdf, sf), (cdf_b, sf_b) = below, at_b
    out, other, above = take(b.size), take(b.size), take(b.size, bool)
    np.less_equal(np.subtract(b, shift, out=other), 0, out=above)
    np.logical_not(above, out=above)  # b above the median, or not a number
    np.subtract(cdf_b, cdf, out=out)
    np.copyto(out, np.subtract(sf, sf_b, out=other), where=above)
    return out


def upper_difference(positive: np.ndarray, negative: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``positive − negative`` (into ``out`` when given), ``+inf`` where both overflowed to ``inf`` (the sign is then
    unknown: the conservative answer)."""
    difference = np.subtract(positive, negative, out=out)
    np.copyto(difference, np.inf, where=np.isnan(difference))
    return difference


def _likelihood_ratio(mu: float, h: np.ndarray | float) -> np.ndarray:
    """``r(h) = e^{μh − μ²/2}``, the ratio of the densities of ``Q = N(μ, 1)`` and ``Q' = N(0, 1)`` at ``h``
    (``+inf`` where it overflows)."""
    with np.errstate(over="ignore"):
        return np.exp(np.asarray(mu * h - mu * mu / 2.0))


def _charge(mass: np.ndarray, row: np.ndarray) -> np.ndarray:
    """``mass × row`` for ``h``-cells, ``+inf`` where a float64 mass of 0 meets an infinite row bound."""
    with np.errstate(invalid="ignore"):
        product = mass * row
    return np.where(np.isnan(product), np.inf, product)


def _sides(x: np.ndarray, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """CDF and survival function of ``N(shift, 1)`` at ``x`` (an array), each computed in the array it returns."""
    cdf, sf = np.subtract(x, shift), np.subtract(shift, x)
    return ndtr(cdf, out=cdf), ndtr(sf, out=sf)


def _gather_sides(take: Take, sides: tuple[np.ndarray, np.ndarray], index: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~symsel.memory.gather` of a CDF and a survival table."""
    return gather(take, sides[0], index), gather(take, sides[1], index)


def _sides_into(take: Take, x: np.ndarray, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_sides` into arrays of ``take``."""
    moved = take(x.size)
    return (ndtr(np.subtract(x, shift, out=moved), out=take(x.size)),
            ndtr(np.subtract(shift, x, out=moved), out=take(x.size)))


class _HCells(NamedTuple):
    """A chunk of ``h``-cells ``[ha, hb]`` with ``r = r(h_b)`` and the CDF and survival values of ``Q`` and ``Q'``
    at both ends (``{"q": (cdf, sf), "q_prime": (cdf, sf)}``), indexed by the branch and bound's rows."""

    ha: np.ndarray
    hb: np.ndarray
    r: np.ndarray
    at_ha: dict
    at_hb: dict


def _cell_mass(take: Take, low: np.ndarray, high: np.ndarray, at_low: tuple[np.ndarray, np.ndarray],
               at_high: tuple[np.ndarray, np.ndarray], shift: float, factor: float, at_most_one: bool) -> np.ndarray:
    """``N(shift, 1)[low, high]`` (:func:`_mass_above`) times ``factor`` (an allowance outwards), at most 1 when
    ``at_most_one``; 0 where ``low < high`` fails. Into an array of ``take``."""
    mass = _mass_above(high, at_low, shift, at_high, take)
    np.multiply(mass, factor, out=mass)
    if at_most_one:
        np.minimum(mass, 1.0, out=mass)
    below = np.less(low, high, out=take(high.size, bool))
    np.copyto(mass, 0.0, where=np.logical_not(below, out=below))
    return mass


#: the ``l``-edges and the standard normal CDF and survival values there (``Q'``'s, the same for every ``μ``),
#: shared by every :class:`IntervalProfile`: ``(per_coarse, edges, (cdf, sf))``, read-only, grown when needed.
_STANDARD_EDGES: tuple[int, np.ndarray, tuple[np.ndarray, np.ndarray]] | None = None


def _standard_edges(count: int, per_coarse: int) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """The first ``count`` ``l``-edges ``−L_BOTTOM + k L_COARSE / per_coarse`` and ``_sides(edges, 0)`` there, as
    read-only views of one table: every edge is the same float for any ``count`` (a prefix of one ``arange``), so a
    calibration that builds a profile per ``σ`` computes these normal CDFs once instead of at each ``σ``."""
    global _STANDARD_EDGES
    table = _STANDARD_EDGES
    if table is None or table[0] != per_coarse or table[1].size < count:
        edges = np.arange(count, dtype=float)  # -L_BOTTOM + step k, in place (the same floats as from integers)
        np.add(-L_BOTTOM, np.multiply(L_COARSE / per_coarse, edges, out=edges), out=edges)
        cdf, sf = _sides(edges, 0.0)
        for array in (edges, cdf, sf):
            array.flags.writeable = False
        table = _STANDARD_EDGES = (per_coarse, edges, (cdf, sf))
    _, edges, (cdf, sf) = table
    return edges[:count], (cdf[:count], sf[:count])


def coarse_then_fine(coarse: np.ndarray, fine_total: Callable[[np.ndarray], float]) -> float:
    """A sum of upper bounds over cells, from a coarse pass: ``coarse`` (one charge per coarse cell, each an upper
    bound) and ``fine_total(cells)``, the sum of the fine charges of those coarse cells (each at most its coarse
    one). Every coarse cell is charged finely except the smallest, which together carry at most
    :data:`COARSE_SHARE` of the coarse sum and keep their coarse charge. Where the coarse pass is so loose that
    those kept cells would carry more than :data:`COARSE_FINAL_SHARE` of the result, the largest of them are charged
    finely too, until the rest is at most that share:
    point(40) on a Gaussian of σ = 20 had a coarse sum of 0.15 at ε = 1.5, so one kept cell's 6.4e-5 was the whole
    result (1.4e-12 with it recomputed), and δ rose from ε = 1 to 1.5. Any mix of coarse and fine charges is an
    upper bound; the rule only decides how close to the fine sum it is."""
    by_size = np.argsort(coarse, kind="stable")
    kept = np.cumsum(coarse[by_size]) <= COARSE_SHARE * float(np.sum(coarse))
    kept_total = float(np.sum(coarse[by_size[kept]]))
    refine = np.sort(by_size[~kept])
    total = fine_total(refine) if refine.size else 0.0
    if kept_total > COARSE_FINAL_SHARE * (kept_total + total):
        # keep the smallest cells whose sum s has s ≤ share · (total + s) (so at most that share of the result,
        # whatever the rest adds), charge the others finely
        small = by_size[kept]
        cumulative = np.cumsum(coarse[small])
        still = cumulative <= COARSE_FINAL_SHARE / (1.0 - COARSE_FINAL_SHARE) * total
        kept_total = float(np.sum(coarse[small[still]]))
        total += fine_total(np.sort(small[~still]))
    return kept_total + total


def _linear_cell_bound(profile: IntervalProfile, ha: np.ndarray, hb: np.ndarray, r: np.ndarray, la: np.ndarray,
                       lb: np.ndarray, e: float, q_side: tuple, p_side: tuple, at_h: tuple[dict, dict],
                       take: Take) -> np.ndarray:
    """An upper bound on ``r(h) φ'(Q[l, h]) − e^ε φ'(Q'[l, h])`` over ``h ∈ [h_a, h_b]``, ``l ∈ [l_a, l_b]``,
    ``l_b ≤ h_a``, exact to second order in the cell (docs/interval.md, "Certified evaluation").

    On the cell ``A = Q[l, h] ∈ [A_lo, A_hi]`` and ``B = Q'[l, h] ≥ B_lo``. ``φ'`` is convex (a power series with
    non-negative coefficients), so ``φ'(A)`` lies below its chord over ``[A_lo, A_hi]`` and ``φ'(B)`` above its
    tangent at ``B_lo``, whose slope is at least the secant slope just left of ``B_lo``. With ``r(h) ≤ r(h_b)``
    the integrand is at most ``c + λ₁ A − λ₂ B`` with ``λ₁, λ₂ ≥ 0``. That is separable:
    ``λ₁ A − λ₂ B = g(h) − g(l)`` with ``g = λ₁ F_Q − λ₂ F_{Q'}``, whose derivative ``q'(x)(λ₁ r(x) − λ₂)`` changes
    sign once, from − to +. So its supremum over the cell is at ``h ∈ {h_a, h_b}`` and at ``l`` the point of
    ``[l_a, l_b]`` nearest to ``r(l) = λ₂ / λ₁``. One-dimensional arrays; ``at_h``: CDF and survival values at
    ``h_a`` and ``h_b`` (:meth:`IntervalProfile._h_sides`). Into an array of ``take``."""
    mu, n = profile.mu, ha.size
    q_lo, q_hi, _ = q_side
    p_lo, _, dphi_p_lo = p_side
    dphi_q_lo, chord, steep, secant = chord_and_secant(profile, q_side, p_side, take)
    with np.errstate(divide="ignore", invalid="ignore"):
        # the critical l: r(l) = λ₂ / λ₁ = e^ε secant / (r(h_b) chord), in logs (the products may overflow)
        l_star = np.add(np.log(e), np.log(secant, out=take(n)), out=take(n))
        np.subtract(l_star, np.add(np.log(r, out=take(n)), np.log(chord, out=take(n)), out=take(n)), out=l_star)
        np.divide(np.add(l_star, mu * mu / 2.0, out=l_star), mu, out=l_star)
    np.clip(np.nan_to_num(l_star, copy=False, nan=np.inf), la, lb, out=l_star)
    best = take(n)
    best.fill(-np.inf)
    at_q, at_q_prime = _sides_into(take, l_star, mu), _sides_into(take, l_star, 0.0)
    a, b = take(n), take(n)
    for h, at in zip((ha, hb), at_h, strict=True):
        np.clip(np.multiply(_mass_above(h, at_q, mu, at["q"], take), 1 + MASS_ALLOWANCE, out=a), q_lo, q_hi, out=a)
        np.maximum(np.multiply(_mass_above(h, at_q_prime, 0.0, at["q_prime"], take), 1 - MASS_ALLOWANCE, out=b),
                   p_lo, out=b)
        np.maximum(best, linearized_value(r, e, (a, q_lo, dphi_q_lo, chord), (b, p_lo, dphi_p_lo, secant), take),
                   out=best)
    np.copyto(best, np.inf, where=steep)
    return best


def chord_and_secant(profile: CellBoundProfile, q_side: tuple, p_side: tuple, take: Take
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The slopes of the linearized bound (docs/interval.md, "Certified evaluation"), for ``A ∈ [A_lo, A_hi]`` and
    ``B ≥ B_lo`` (``q_side = (A_lo, A_hi, φ'(A_hi))``, ``p_side = (B_lo, B_hi, φ'(B_lo))``, the ``φ'`` values with
    their allowance): ``φ'(A_lo)`` from above, the chord of ``φ'`` over ``[A_lo, A_hi]`` (rounded up; 0 where the
    cell has no width), where that chord is too steep for float64 (the linearized bound then gives up), and the
    secant of ``φ'`` just left of ``B_lo`` (at most the tangent's slope there; 0 where it is not a number). Into
    arrays of ``take``."""
    q_lo, q_hi, dphi_q_hi = q_side
    p_lo, p_hi, dphi_p_lo = p_side
    n = q_lo.size
    grow = 1 + profile.value_margin
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        dphi_q_lo = np.multiply(profile._dphi(q_lo, take), grow, out=take(n))
        chord = np.divide(np.subtract(dphi_q_hi, dphi_q_lo, out=take(n)), np.subtract(q_hi, q_lo, out=take(n)),
                          out=take(n))
        np.copyto(chord, 0.0, where=np.logical_not(np.greater(q_hi, q_lo, out=take(n, bool)), out=take(n, bool)))
        steep = np.logical_not(np.isfinite(chord, out=take(n, bool)), out=take(n, bool))
        np.maximum(chord, 0.0, out=chord)
        np.copyto(chord, 0.0, where=steep)
        np.multiply(chord, 1 + 1e-12, out=chord)
        left = np.maximum(np.subtract(p_lo, np.maximum(np.subtract(p_hi, p_lo, out=take(n)), 1e-300, out=take(n)),
                                      out=take(n)), 0.0, out=take(n))
        run = np.subtract(p_lo, left, out=take(n))
        secant = np.subtract(dphi_p_lo, np.multiply(profile._dphi(left, take), grow, out=take(n)), out=take(n))
        np.divide(secant, np.multiply(run, 1 + 1e-12, out=take(n)), out=secant)
        np.copyto(secant, 0.0, where=np.logical_not(np.greater(run, 0, out=take(n, bool)), out=take(n, bool)))
        np.copyto(secant, 0.0, where=np.logical_not(np.isfinite(secant, out=take(n, bool)), out=take(n, bool)))
        np.maximum(secant, 0.0, out=secant)
    return dphi_q_lo, chord, steep, secant


def linearized_value(r: np.ndarray, e: float, a_side: tuple, b_side: tuple, take: Take) -> np.ndarray:
    """The linearized bound at ``A = a``, ``B = b`` (``a_side = (a, A_lo, φ'(A_lo), chord)``, ``b_side = (b, B_lo,
    φ'(B_lo), secant)``): ``r (φ'(A_lo) + chord (a − A_lo)) − e^ε (φ'(B_lo) + secant (b − B_lo))``
    (:func:`upper_difference`). Into an array of ``take``."""
    a, a_lo, dphi_a_lo, chord = a_side
    b, b_lo, dphi_b_lo, secant = b_side
    positive, negative = take(a.size), take(a.size)
    with np.errstate(over="ignore", invalid="ignore"):
        np.multiply(r, np.add(dphi_a_lo, np.multiply(chord, np.subtract(a, a_lo, out=positive), out=positive),
                              out=positive), out=positive)
        np.multiply(e, np.add(dphi_b_lo, np.multiply(secant, np.subtract(b, b_lo, out=negative), out=negative),
                              out=negative), out=negative)
        return upper_difference(positive, negative, out=positive)


def branch_and_bound(end: np.ndarray, coarse: int, splits: Sequence[int], cap: int,
                     bounds: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray],
                     points: Callable[[np.ndarray, np.ndarray], np.ndarray], settle: float = 0.0,
                     least: float = -math.inf) -> np.ndarray:
    """For each row ``i`` (an ``h``-cell), an upper bound on the integrand over the row and every ``l``-cell of a
    grid of finest cells ``[0, end[i])``, by branch and bound on the ``l``-axis (docs/interval.md, "Certified
    evaluation"). ``bounds(row, lo, hi, floor)`` bounds the integrand over the finest cells ``[lo, hi)`` of each row;
    ``points(row, lo)`` is its value (float64, uncertified) at the start of cell ``lo``. ``floor`` is the row's
    estimate ``L`` at that level (the point values of the level's cells included): a cell whose bound is at most it is
    dropped, so ``bounds`` may answer any value ``≤ floor`` for a cell it finds at most ``floor`` by a cheaper bound
    (the second-order bound is then not computed: the result is the same).

    The rows start from cells of ``coarse`` finest cells. At every level the point values raise each row's estimate
    ``L``; a cell whose bound is at most ``L`` is dropped, the others (at most ``cap`` per row, the largest bounds)
    are cut into ``split`` cells of the next level, down to ``coarse / Π splits``. The cells over the cap are set
    aside with their bound. Once the cut cells are done, a set-aside cell whose bound is above the row's result by
    more than :data:`DEFERRED_TOLERANCE` of it is taken up again, and cut as before (at most
    :data:`DEFERRED_PASSES` times, and at most :data:`DEFERRED_WORK` times the cells of the first descent: a flat
    integrand, as in a weakly private run, has many cells near its maximum).
    A cell whose bound is within ``settle · |L|`` above ``L`` is not cut further either (its bound is kept): cutting
    it could lower the row's bound by at most that share (the tolerance of the search, :func:`settle_share`).
    ``L`` starts at ``least``: where only the positive part of each row's bound is wanted (the charges), ``least=0``
    drops every cell whose bound is at most 0, and a row whose integrand is negative throughout answers 0.
    The row's bound is the largest of ``L`` and the bounds of the cells not cut further. Sound whatever ``L`` is:
    every dropped cell's bound is at most ``L``, so every part of the axis is covered by a bound at most the one
    returned; ``L`` only decides the work. A NaN bound counts as ``+inf``."""
    end = np.asarray(end, dtype=np.int64)
    size = end.size
    widths = [int(coarse)]
    for split in splits:
        if widths[-1] == 1:
            break
        widths.append(max(1, widths[-1] // split))
    estimate = np.full(size, float(least))
    result = np.full(size, -np.inf)
    set_aside: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []

    def split_cells(row: np.ndarray, lo: np.ndarray, level: int) -> tuple[np.ndarray, np.ndarray]:
        """Cells of ``widths[level]`` cut into the cells of the next level that start below their row's end."""
        offsets = np.arange(0, widths[level], widths[level + 1])
        row = np.repeat(row, offsets.size)
        lo = (lo[:, None] + offsets[None, :]).ravel()
        live = lo < end[row]
        return row[live], lo[live]

    bounded = [0]  # cells bounded so far

    def descend(row: np.ndarray, lo: np.ndarray, level: int) -> None:
        while row.size:
            width = widths[level]
            bounded[0] += row.size
            np.maximum.at(estimate, row, points(row, lo))
            floor = estimate[row]
            bound = bounds(row, lo, np.minimum(lo + width, end[row]), floor)
            bound = np.where(np.isnan(bound), np.inf, bound)
            keep = bound > floor
            row, lo, bound = row[keep], lo[keep], bound[keep]
            if level == len(widths) - 1:
                np.maximum.at(result, row, bound)
                return
            if settle > 0:  # within the tolerance of the row's estimate: kept with its bound
                floor = floor[keep]
                settled = bound <= floor + settle * np.abs(floor)
                np.maximum.at(result, row[settled], bound[settled])
                row, lo, bound = row[~settled], lo[~settled], bound[~settled]
            order = np.lexsort((-bound, row))  # within each row, the largest bounds first
            row, lo, bound = row[order], lo[order], bound[order]
            cut = np.arange(row.size) - np.searchsorted(row, row, side="left") < cap
            if not np.all(cut):
                set_aside.append((row[~cut], lo[~cut], bound[~cut], level))
            row, lo = split_cells(row[cut], lo[cut], level)
            level += 1

    cells = math.ceil(int(end.max(initial=1)) / coarse)
    row = np.repeat(np.arange(size), cells)
    lo = np.tile(np.arange(cells, dtype=np.int64) * coarse, size)
    live = lo < end[row]
    descend(row[live], lo[live], 0)
    budget = bounded[0] * (1 + DEFERRED_WORK)
    for _ in range(DEFERRED_PASSES):
        waiting, set_aside = set_aside, []
        done = np.maximum(np.maximum(result, estimate), 0.0)
        for row, lo, bound, level in waiting:
            again = bound > done[row] * (1 + DEFERRED_TOLERANCE)
            room = int(max(0.0, budget - bounded[0]) // (widths[level] // widths[level + 1]))
            if np.count_nonzero(again) > room:  # the cells furthest above their row's result first
                excess = np.where(again, bound - done[row], -np.inf)
                again = np.zeros(again.size, dtype=bool)
                again[np.argsort(-excess, kind="stable")[:room]] = True
            np.maximum.at(result, row[~again], bound[~again])
            if np.any(again):
                descend(*split_cells(row[again], lo[again], level), level + 1)
    for row, _, bound, _ in set_aside:
        np.maximum.at(result, row, bound)
    return np.maximum(result, estimate)


#: the interval bound's ``ε`` is a checked point within ``SEARCH_XTOL + SEARCH_RTOL · ε`` above the crossing (the
#: default of ``bound(..., rtol=)``, :attr:`CellBoundProfile.search_rtol`). A tolerance of 1e-4 or more (a hundredth
#: of a percent of ``ε``, far below the bounds' own distance to the truth, 0.1-0.6 %) lets a Newton guess from
#: ``best``'s cheaper components land within it on random laws (measured 1e-5 to 3e-5 on DP-SGD): three evaluations
#: of the interval bound instead of five to seven (:data:`NEWTON_MIN_RTOL`).
SEARCH_XTOL = 1e-6
SEARCH_RTOL = 1e-6
#: at most this many model guesses (two evaluations each) per search, before the steps and Brent's method alone.
SEARCH_PROBES = 2
#: the largest relative step below ``upper`` at which a Newton guess from a hinted slope is tried
#: (:meth:`CellBoundProfile.epsilon_below`): farther, the hinting profile's slope is no guide (fixed ``K``, where the
#: interval bound is 10-15 % below the others and the guess misses by about 1 %).
NEWTON_MAX_STEP = 0.1
#: the smallest search tolerance at which that guess is tried: on random laws on DP-SGD it misses the crossing by
#: 1e-5 to 3e-5 of ``ε``, and a probe pair that brackets nothing costs two evaluations more than the plain steps.
NEWTON_MIN_RTOL = 3e-5
#: farther than :data:`NEWTON_MAX_STEP`, the search's first step below ``upper`` is this share of the Newton step (in
#: place of 1 % of ``upper``): on a fixed ``K`` on DP-SGD the interval bound's ``log δ`` is slightly concave in ``ε``
#: and the hinting profile's slope slightly steeper, so the full step lands 1-2 % above the crossing; the share keeps
#: a flatter hint from overshooting it by much (:func:`_far_step_below`).
FAR_NEWTON_SHARE = 0.98
#: the largest relative step below ``upper`` taken as that first step: farther, the hinting profile says little of
#: this one's slope (a Gaussian base, where the interval bound is 30-50 % below the others).
FAR_NEWTON_MAX_STEP = 0.25
#: the widest bracket, relative to its top, inside which the search places probes around a model's crossing
#: (:func:`_bracket_estimate`) before Brent's method: wider, the points' curvature says little of the crossing (two
#: pairs whose largest changes inside it), and Brent's first secant step does as well.
BRACKET_MODEL_MAX_WIDTH = 0.05
#: the share of the search's tolerance (:attr:`CellBoundProfile.search_rtol`) by which a cell's bound may exceed its
#: row's estimate and still be kept uncut (:func:`branch_and_bound`'s ``settle``; docs/interval.md, "Branch and bound
#: on the l-axis"): each row's bound, so the sum, is then at most that share above the bound refined to the finest
#: cells, which moves ``ε`` by that share divided by ``ε |d log δ / dε|`` (relative; about ``2 log(1/δ)`` on a
#: Gaussian-like tail), well within the search's own tolerance.
SETTLE_SHARE = 1.0


def settle_share(rtol: float) -> float:
    """How far (relative) above its row's estimate a cell's bound may be kept uncut at search tolerance ``rtol``
    (:data:`SETTLE_SHARE` of it)."""
    return SETTLE_SHARE * rtol


def _crossing_estimate(points: list[tuple[float, float]]) -> float | None:
    """Where ``gap`` crosses 0, from the last (up to three) points checked within the target (``(ε, gap ≤ 0)``,
    their gaps exact): the root of the parabola (or line) of the gap through them that is nearest the last one;
    ``None`` when there is none."""
    xs = np.array([x for x, _ in points], dtype=float)
    gs = np.array([g for _, g in points], dtype=float)
    if xs.size < 2 or not np.all(np.isfinite(gs)) or np.unique(xs).size < xs.size:
        return None
    with np.errstate(all="ignore"):
        roots = np.roots(np.polyfit(xs - xs[-1], gs, xs.size - 1))
    roots = roots[np.isreal(roots)].real + xs[-1]
    if roots.size == 0 or not np.all(np.isfinite(roots)):
        return None
    return float(roots[np.argmin(np.abs(roots - xs[-1]))])


def _probe_close(gap: Callable[[float], float], hi: float, feasible: list[tuple[float, float]],
                 width_of: Callable[[float], float]) -> tuple[str, float, float]:
    """Two evaluations around the crossing estimated from the points within the target (:func:`_crossing_estimate`;
    ``hi`` is the lowest of them): :func:`_probe_around` that estimate; ``("none", hi, nan)``: no estimate below
    ``hi``."""
    estimate = _crossing_estimate(feasible[-3:])
    if estimate is None or not 0.0 < estimate < hi:
        return "none", hi, math.nan
    return _probe_around(gap, hi, estimate, feasible, width_of(estimate))


def _probe_around(gap: Callable[[float], float], hi: float, estimate: float, feasible: list[tuple[float, float]],
                  width: float, lo: float | None = None) -> tuple[str, float, float]:
    """Two evaluations around an estimate of the crossing below ``hi`` (the lowest point known, or estimated, within
    the target): the point half a ``width`` above the estimate, then one ``width`` below it. Returns ``("done", x,
    gap)``: ``x`` is within the target and the point one ``width`` below it is not, so ``x`` is the answer;
    ``("over", x, g)``: ``x`` is over the target (its gap at least ``g > 0``), the crossing is in ``[x, hi]``;
    ``("within", x, g)``: both were within it, ``x`` (gap ``g``) is the lower, and both are appended to
    ``feasible``. ``lo``, when given, is a point checked over the target: the lower probe is not taken below it,
    and not evaluated when it is ``lo`` itself. Only the work depends on the estimate: every point it returns was
    checked."""
    above = min(estimate + 0.5 * width, hi)
    g_above = gap(above)
    if g_above > 0:
        return "over", above, g_above
    below = max(above - width, 0.0 if lo is None else lo)
    if lo is not None and below <= lo:  # the point one width below is at most lo, known over the target
        return "done", above, g_above
    g_below = gap(below)
    if g_below > 0:
        return "done", above, g_above
    feasible += [(above, g_above), (below, g_below)]
    return "within", below, g_below


def _next_below(lo: float, g_lo: float, hi: float, g_hi: float, upper: float) -> float:
    """The next point to try below ``lo`` when ``lo`` and ``hi > lo`` are both within the target (gaps ``g ≤ 0``,
    non-increasing): where the secant through them crosses 0, a little further down (``log δ`` is close to linear
    in ``ε``, and where it is convex the secant's crossing is already below the true one), by at least 0.5 % and at
    most 25 % of ``upper``; 5 % when the secant says nothing (a flat or infinite gap). Only the work depends on it:
    :meth:`CellBoundProfile._search` checks every point it brackets with."""
    step = 0.05 * upper
    if math.isfinite(g_lo) and math.isfinite(g_hi) and g_lo > g_hi:
        step = g_lo * (hi - lo) / (g_hi - g_lo) + 0.002 * upper  # g_lo ≤ 0: the distance to the crossing, ≥ 0
        step = min(max(step, 0.005 * upper), 0.25 * upper)
    return max(0.0, lo - step)


def _bracket_estimate(over: list[tuple[float, float]], feasible: list[tuple[float, float]]) -> float | None:
    """Where ``gap`` crosses 0 inside the bracket between the highest point over the target (``over``, gaps
    ``> 0``, each at most the point's gap) and the lowest within it (``feasible``, gaps exact): the root of the
    parabola through those two and the next point nearest the bracket on either side (:func:`_crossing_estimate`),
    else of the line through the two; ``None`` when neither falls inside the bracket."""
    below, above = sorted(over)[-2:], sorted(feasible)[:2]
    lo, hi = below[-1], above[0]
    third = sorted(below[:-1] + above[1:], key=lambda point: min(abs(point[0] - lo[0]), abs(point[0] - hi[0])))[:1]
    for points in ([*third, hi, lo], [hi, lo]):
        estimate = _crossing_estimate(points)
        if estimate is not None and lo[0] < estimate < hi[0]:
            return estimate
    return None


def _far_step_below(upper: float, gap_upper: float, slope: float | None) -> float | None:
    """The search's first step below ``upper`` (gap ``gap_upper ≤ 0``) when the Newton step along the hinted
    ``slope`` (``< 0``) is farther than :data:`NEWTON_MAX_STEP` and at most :data:`FAR_NEWTON_MAX_STEP` of ``upper``:
    :data:`FAR_NEWTON_SHARE` of that step (a guess near and above the crossing, :meth:`CellBoundProfile._search`
    brackets it); else ``None`` (1 % of ``upper``)."""
    if slope is None or not (math.isfinite(slope) and slope < 0 and math.isfinite(gap_upper) and gap_upper <= 0):
        return None
    step = gap_upper / slope
    if not NEWTON_MAX_STEP * upper < step <= FAR_NEWTON_MAX_STEP * upper:
        return None
    return max(0.0, upper - FAR_NEWTON_SHARE * step)


class CellBoundProfile(Profile):
    """What the interval bounds share: a certified ``δ`` at each ``ε ≥ 0`` (:meth:`delta_nonnegative`, cached by
    the subclass), negative ``ε`` by the profile's symmetry, and ``ε(δ)`` from above by the one root finder."""

    family = "selection"
    #: the relative width of the final bracket of ``ε(δ)``: the answer is a checked point within
    #: ``SEARCH_XTOL + search_rtol · ε`` above the crossing (an instance may set a wider one, ``bound(..., rtol=)``).
    search_rtol: float = SEARCH_RTOL
    #: during a search from above that a Newton guess within :data:`NEWTON_MAX_STEP` steers (:meth:`epsilon_below`),
    #: the hinted slope of ``log δ`` in ``ε`` (else ``None``): a bound made of parts may use it to place work below
    #: the points asked (:meth:`symsel.bounds.interval_pairs.PairIntervalProfile.search_value`). Only the work
    #: depends on it.
    search_slope: float | None = None
    #: the law of ``K`` and the relative error allowed to its float64 ``φ'`` (:mod:`symsel.bounds.precision`).
    dist: Distribution
    value_margin: float

    def _dphi(self, u: np.ndarray, take: Take | None = None) -> np.ndarray:
        """``φ'(u)`` in float64 on ``u`` clipped to ``[0, 1]`` (the clipped values in an array of ``take`` when given;
        ``φ'`` returns a new array)."""
        clipped = np.clip(u, 0.0, 1.0) if take is None else np.clip(u, 0.0, 1.0, out=take(u.size))
        return np.asarray(self.dist.dphi(clipped), dtype=float)

    def delta_nonnegative(self, eps: float) -> float:
        raise NotImplementedError

    def delta_or_more_than(self, eps: float, target: float) -> float:
        """:meth:`delta_nonnegative`, or any value above ``target`` that it is at least: all the search needs to
        know of a point over the target (a bound made of several parts may stop at the first part over it)."""
        return self.delta_nonnegative(eps)

    def search_value(self, eps: float, target: float) -> float:
        """What the ``ε`` search reads at one point: :meth:`delta_or_more_than` (a bound may answer from fewer of
        its parts where that decides the point's side of ``target`` as surely)."""
        return self.delta_or_more_than(eps, target)

    def search_estimate(self, eps: float, target: float) -> tuple[float, bool]:
        """What the ``ε`` search from above reads first at its ``upper``: ``(value, exact)``, ``value`` the
        :meth:`search_value` when ``exact``, else an estimate of it from the bound's cheapest part (a bound made of
        parts; :meth:`symsel.bounds.interval_pairs.PairIntervalProfile.search_estimate`), which only steers the work:
        the search checks ``upper`` itself once it needs it (:meth:`_search`)."""
        return self.search_value(eps, target), True

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        def nonnegative(x: np.ndarray) -> np.ndarray:
            return np.array([min(1.0, self.delta_nonnegative(v)) for v in np.ravel(x)]).reshape(np.shape(x))

        return delta_by_symmetry(eps, nonnegative)

    def epsilon(self, delta: float) -> float:
        """The smallest ``ε ≥ 0`` with the bound ``≤ delta``, from above (checked, :func:`last_feasible`)."""
        return self._search(delta, None)

    def epsilon_below(self, delta: float, upper: float, slope: float | None = None) -> float:
        """:meth:`epsilon` when at most ``upper`` (else ``inf``), searched from ``upper`` down instead of doubling from
        1. At a search tolerance of at least :data:`NEWTON_MIN_RTOL` the bound at ``upper`` is first only estimated
        (:meth:`search_estimate`; tighter, the parabola of the final probes needs its exact value): over ``delta`` there
        and checked so, the answer is ``inf``; else the search steps down, 1 % first, then along the secant
        (:func:`_next_below`), and ``upper`` is checked within ``delta`` only if no lower point is. ``slope``, when
        given, is the slope in ``ε`` of ``log δ`` of a profile this one is expected to follow near ``upper`` (``best``'s
        cheaper components): with the Newton step from ``upper`` within :data:`NEWTON_MAX_STEP` (random laws), the first
        two probes are placed around it (:func:`_probe_around`), which finds the crossing within a fraction of the
        tolerance; farther, up to :data:`FAR_NEWTON_MAX_STEP` (a fixed ``K`` on DP-SGD), the first step is
        :data:`FAR_NEWTON_SHARE` of it (:func:`_far_step_below`). Once a point over ``delta`` brackets the crossing, up
        to :data:`SEARCH_PROBES` probe pairs are placed around a parabola's crossing inside the bracket while it is at
        most :data:`BRACKET_MODEL_MAX_WIDTH` wide (:func:`_bracket_estimate`) before Brent's method. Only the work
        depends on ``slope`` and the estimates: the answer is a point checked within ``delta``, and a point checked over
        it lies within the search's width below (:func:`_probe_around`, or Brent's method, :func:`last_feasible`)."""
        if not 0 < upper <= SKIP_TEST_MAX_EPSILON:
            return self.epsilon(delta) if upper > 0 else Profile.epsilon_below(self, delta, upper)
        try:
            return self._search(delta, upper, slope)
        finally:
            self.search_slope = None

    def _width(self, estimate: float) -> float:
        """The width of the final bracket around an ``ε`` near ``estimate``: :data:`SEARCH_XTOL` plus
        :attr:`search_rtol` times ``ε``."""
        return SEARCH_XTOL + self.search_rtol * estimate

    def _search(self, delta: float, upper: float | None, slope: float | None = None) -> float:
        d = self._check_delta(delta)
        if d <= 0:
            return math.inf
        if upper is not None:  # estimated at a wide tolerance only: a tight one's final probes need upper's exact gap
            wide = self.search_rtol >= NEWTON_MIN_RTOL
            value, exact = self.search_estimate(upper, d) if wide else (self.search_value(upper, d), True)
            if value > d:
                value, exact = self.search_value(upper, d), True
                if value > d:
                    return math.inf
        if upper is None and self.delta_nonnegative(0.0) <= d:  # from above, 0 is asked only if the steps reach it
            return 0.0
        log_target = math.log(d)

        def gap(eps: float) -> float:  # > 0 (infeasible) is exact in sign; every feasible point is fully checked
            value = self.search_value(eps, d)
            return math.log(value) - log_target if value > 0 else -math.inf

        if upper is None:  # double from 1 to a bracket
            lo, hi = 0.0, 1.0
            while gap(hi) > 0:
                lo, hi = hi, 2.0 * hi
                if hi > 1e4:
                    return math.inf
        else:  # down from upper: steps, and once three points are known a model's guess
            # upper is checked within delta only when the bracket's top is still upper (a lower point found within
            # delta makes it moot); until then its gap is the estimate's, which only steers the steps and models
            hi = upper
            g_hi = math.log(value) - log_target if value > 0 else -math.inf
            feasible, probes, outcome = [(hi, g_hi)], SEARCH_PROBES, "none"
            newton = _newton_below(hi, g_hi, slope, self.search_rtol)
            self.search_slope = None if newton is None else slope
            if newton is not None:  # a first guess from the slope of a profile this one follows
                outcome, x, y = _probe_around(gap, hi, newton, feasible, self._width(newton))
            while True:
                if outcome == "within":
                    hi, g_hi = x, y
                while outcome == "within" and probes > 0 and len(feasible) >= 3:
                    probes -= 1
                    outcome, x, y = _probe_close(gap, hi, feasible, self._width)
                    if outcome == "within":
                        hi, g_hi = x, y
                if outcome == "done":
                    return x
                if outcome == "over":
                    lo, g_lo = x, y
                    break
                if len(feasible) >= 2:
                    lo = _next_below(hi, g_hi, *feasible[-2], upper)
                else:
                    far = _far_step_below(hi, g_hi, slope)
                    lo = 0.99 * hi if far is None else far
                g_lo = gap(lo)
                if g_lo > 0:
                    break
                if lo == 0.0:
                    return 0.0
                feasible.append((lo, g_lo))
                outcome, x, y = "within", lo, g_lo
            if hi == upper and not exact:  # the bracket's top: checked now
                g_hi = gap(hi)
                if g_hi > 0:
                    return math.inf
                feasible[0] = (hi, g_hi)
            over = [(lo, g_lo)]
            while probes > 0 and hi - lo <= BRACKET_MODEL_MAX_WIDTH * hi:  # a narrow bracket: a model's guesses
                estimate = _bracket_estimate(over, feasible)
                if estimate is None:
                    break
                probes -= 1
                outcome, x, y = _probe_around(gap, hi, estimate, feasible, self._width(estimate), lo)
                if outcome == "done":
                    return x
                if outcome == "over":
                    lo = x
                    over.append((x, y))
                else:
                    hi = x
        return last_feasible(gap, lo, hi, xtol=SEARCH_XTOL, rtol=self.search_rtol)


def _newton_below(upper: float, gap_upper: float, slope: float | None, rtol: float) -> float | None:
    """The Newton step from ``upper`` (gap ``gap_upper ≤ 0``) along ``slope`` (``< 0``), when it lands within
    :data:`NEWTON_MAX_STEP` of ``upper`` below it and the search's tolerance ``rtol`` is at least
    :data:`NEWTON_MIN_RTOL`: a guess of the crossing; else ``None``."""
    if slope is None or not (math.isfinite(slope) and slope < 0 and math.isfinite(gap_upper) and gap_upper <= 0):
        return None
    if rtol < NEWTON_MIN_RTOL:  # the guess would miss the final bracket: the probes would cost more than they save
        return None
    guess = upper - gap_upper / slope
    return guess if upper * (1 - NEWTON_MAX_STEP) <= guess < upper else None


class IntervalProfile(CellBoundProfile):
    """``δ(ε)`` of the interval bound for ``K ~ dist`` on the ``μ``-GDP pair (module docstring)."""

    def __init__(self, dist: Distribution, mu: float, value_margin: float = 0.0):
        self.dist = dist
        self.mu = float(mu)
        self.value_margin = float(value_margin)  # relative error allowed to the float64 φ' (bounds/precision.py)
        self.support_max = None if dist.support_max is None else int(dist.support_max)
        self._dphi_one = float(np.asarray(dist.dphi(np.array([1.0])), dtype=float)[0])
        self._cache: dict[float, float] = {}
        # the l-axis asked the longest yet (:meth:`_edges`): per_coarse, edges, Q's and Q''s (CDF, survival) there
        self._edge_table: tuple[int, np.ndarray, tuple, tuple] | None = None

    @property
    def spec(self) -> str:
        return f"interval(dist={self.dist.spec}, mu={self.mu!r})"

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
        start = max(self._cutoff(eps), mu / 2.0)
        total, edge = 0.0, start
        for top in (mu + TOP_FIRST, mu + TOP):
            tail = float(_mass(np.array(top), np.array(np.inf), mu)) * self._dphi_one
            if top > edge:
                total += self._rows(edge, top, e)
                edge = top
            if tail <= TOP_SHARE * total:
                break
        return total * (1 + SUM_ALLOWANCE) + tail

    def _rows(self, start: float, stop: float, e: float) -> float:
        """``∫_{start}^{stop} sup_l [...]_+ dQ'(h)`` from above. First on ``h``-cells :data:`H_COARSE` times the
        final width :func:`h_width`; then every coarse cell is recomputed on the final width except the smallest
        ones, which keep their coarse bound, an upper bound too (:func:`coarse_then_fine`)."""
        mu = self.mu
        if math.isinf(float(_likelihood_ratio(mu, stop))):  # the top row's bound is +inf (_row_bounds): so is the sum
            return math.inf
        h = np.append(np.arange(start, stop, H_COARSE * h_width(mu)), stop)
        h_a, h_b = h[:-1], h[1:]
        coarse = _charge(_mass(h_a, h_b, 0.0), self._row_bounds(h_a, h_b, e))

        def fine_total(refine: np.ndarray) -> float:
            steps = np.arange(H_COARSE + 1) / H_COARSE
            fine = h_a[refine, None] + (h_b[refine] - h_a[refine])[:, None] * steps[None, :]
            fine[:, -1] = h_b[refine]
            f_a, f_b = fine[:, :-1].ravel(), fine[:, 1:].ravel()
            return float(np.sum(_charge(_mass(f_a, f_b, 0.0), self._row_bounds(f_a, f_b, e))))

        return coarse_then_fine(coarse, fine_total)

    def _row_bounds(self, h_a: np.ndarray, h_b: np.ndarray, e: float) -> np.ndarray:
        """For each ``h``-cell ``[h_a, h_b]`` (sorted), an upper bound on ``sup_l [...]_+`` over the cell."""
        mu = self.mu
        ratio = _likelihood_ratio(mu, h_b)  # r = inf (μ > 26) makes every cell +inf: δ = 1, conservative
        # the l-axis: the finest edges, every `per_coarse`-th one a coarse edge; below the first one unbounded cell
        per_coarse = math.prod(split for split, _ in REFINEMENTS)
        coarse_cells = math.ceil((float(h_b.max()) + L_BOTTOM) / L_COARSE)
        edges, sides = self._edges(coarse_cells, per_coarse)
        rows = np.empty(h_a.size)
        for s in range(0, h_a.size, CHUNK):
            rows[s:s + CHUNK] = self._chunk_rows(h_a[s:s + CHUNK], h_b[s:s + CHUNK], ratio[s:s + CHUNK], edges,
                                                 sides, per_coarse, e)
        return rows

    def _edges(self, coarse_cells: int, per_coarse: int) -> tuple[np.ndarray, dict]:
        """The finest ``l``-edges of ``coarse_cells`` coarse cells from ``−L_BOTTOM``, with the CDF and survival values
        of ``Q`` and ``Q'`` there (independent of ``ε``): prefixes of one table per profile, computed once for the
        longest axis an evaluation uses (``h`` up to ``μ +`` :data:`TOP`), or longer when asked. Every edge and value
        is the same float whatever the table's length (:func:`_standard_edges`)."""
        count = coarse_cells * per_coarse + 1
        table = self._edge_table
        if table is None or table[0] != per_coarse or table[1].size < count:
            longest = max(coarse_cells, math.ceil((self.mu + TOP + L_BOTTOM) / L_COARSE)) * per_coarse + 1
            edges, standard = _standard_edges(longest, per_coarse)
            table = self._edge_table = (per_coarse, edges, _sides(edges, self.mu), standard)
        _, edges, (q_cdf, q_sf), (cdf, sf) = table
        return edges[:count], {"q": (q_cdf[:count], q_sf[:count]), "q_prime": (cdf[:count], sf[:count])}

    def _h_sides(self, h: np.ndarray) -> dict:
        """CDF and survival values of ``Q`` and ``Q'`` at the ``h``-cell ends ``h``."""
        return {"q": _sides(h, self.mu), "q_prime": _sides(h, 0.0)}

    def _chunk_rows(self, ha: np.ndarray, hb: np.ndarray, r: np.ndarray, edges: np.ndarray, sides: dict,
                    per_coarse: int, e: float) -> np.ndarray:
        """:meth:`_row_bounds` for one chunk of ``h``-cells: the cell below the first edge, and
        :func:`branch_and_bound` over the edges from coarse cells of ``per_coarse`` finest cells."""
        bottom = self._upper(ha[:, None], hb[:, None], r[:, None], np.full((1, 1), -np.inf), edges[None, :1], e)[:, 0]
        end = np.minimum(np.searchsorted(edges, hb, side="right"), edges.size - 1)  # l-cells starting at most at h_b
        cells = _HCells(ha, hb, r, self._h_sides(ha), self._h_sides(hb))
        refined = branch_and_bound(
            end, per_coarse, [split for split, _ in REFINEMENTS], REFINE_CELLS,
            lambda row, lo, hi, floor: self._cell_bounds(cells, row, lo, hi, edges, sides, e, floor),
            lambda row, lo: self._point_values(cells, row, lo, sides, e), settle=settle_share(self.search_rtol),
            least=0.0)
        return np.maximum(refined, np.maximum(bottom, 0.0))

    def _point_values(self, cells: _HCells, row: np.ndarray, lower: np.ndarray, sides: dict, e: float) -> np.ndarray:
        """The integrand (float64, uncertified: it only steers :func:`branch_and_bound`) at ``l`` the edge ``lower``
        and ``h = h_b`` of the ``h``-cell ``row``; ``−inf`` where it is not a number."""

        def fill(part: slice, take: Take, out: np.ndarray) -> None:
            rows, low = row[part], lower[part]
            hb = gather(take, cells.hb, rows)
            q = _mass_above(hb, _gather_sides(take, sides["q"], low), self.mu,
                            _gather_sides(take, cells.at_hb["q"], rows), take)
            p = _mass_above(hb, _gather_sides(take, sides["q_prime"], low), 0.0,
                            _gather_sides(take, cells.at_hb["q_prime"], rows), take)
            np.clip(q, 0.0, 1.0, out=q)
            np.clip(p, 0.0, 1.0, out=p)
            with np.errstate(over="ignore", invalid="ignore"):
                np.subtract(np.multiply(gather(take, cells.r, rows), self._dphi(q, take), out=q),
                            np.multiply(e, self._dphi(p, take), out=p), out=out)
            np.copyto(out, -np.inf, where=np.isnan(out))

        return SCRATCH.blocks(row.size, CELL_BLOCK, fill)

    def _upper_on_grid(self, ha: np.ndarray, hb: np.ndarray, r: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                       edges: np.ndarray, sides: dict, e: float) -> np.ndarray:
        """An upper bound on the integrand over each ``l``-cell ``[edges[lower], edges[upper]]`` and ``h``-cell
        ``[ha, hb]`` with ``r = r(h_b)`` (arrays broadcasting against each other; ``sides``: the CDF and survival
        values of ``Q`` and ``Q'`` at the edges): :meth:`_cell_bounds` of every cell."""
        shape = np.broadcast_shapes(*(np.shape(x) for x in (ha, hb, r, lower, upper)))
        ha, hb, r, lower, upper = (np.broadcast_to(x, shape).ravel() for x in (ha, hb, r, lower, upper))
        cells = _HCells(ha, hb, r, self._h_sides(ha), self._h_sides(hb))
        return self._cell_bounds(cells, np.arange(ha.size), lower, upper, edges, sides, e).reshape(shape)

    def _cell_bounds(self, cells: _HCells, row: np.ndarray, lower: np.ndarray, upper: np.ndarray, edges: np.ndarray,
                     sides: dict, e: float, floor: np.ndarray | None = None) -> np.ndarray:
        """An upper bound on the integrand over each ``h``-cell ``row`` of ``cells`` and ``l``-cell
        ``[edges[lower], edges[upper]]`` (one-dimensional index arrays): the smaller of the corner bound of
        :meth:`_upper` and, where the ``l``-cell lies below the ``h``-cell, the linearized bound of
        :func:`_linear_cell_bound`; ``−inf`` where the ``l``-cell starts above ``h_b``. ``sides``: the CDF and survival
        values of ``Q`` and ``Q'`` at the edges. With ``floor`` (one value per cell: :func:`branch_and_bound`) the
        linearized bound is computed only where the corner bound is above it. In blocks of :data:`CELL_BLOCK` cells
        whose working arrays are :data:`SCRATCH`'s."""
        mu = self.mu
        up, down = 1 + MASS_ALLOWANCE, 1 - MASS_ALLOWANCE
        grow, shrink = 1 + self.value_margin, 1 - self.value_margin

        def fill(part: slice, take: Take, out: np.ndarray) -> None:
            rows, low, high = row[part], lower[part], upper[part]
            n = rows.size
            ha, hb, r = (gather(take, values, rows) for values in (cells.ha, cells.hb, cells.r))
            la, lb = gather(take, edges, low), gather(take, edges, high)
            q_hi = _cell_mass(take, la, hb, _gather_sides(take, sides["q"], low),
                              _gather_sides(take, cells.at_hb["q"], rows), mu, up, at_most_one=True)
            p_lo = _cell_mass(take, lb, ha, _gather_sides(take, sides["q_prime"], high),
                              _gather_sides(take, cells.at_ha["q_prime"], rows), 0.0, down, at_most_one=False)
            dphi_q_hi = np.multiply(self._dphi(q_hi, take), grow, out=take(n))
            dphi_p_lo = np.multiply(self._dphi(p_lo, take), shrink, out=take(n))
            with np.errstate(over="ignore", invalid="ignore"):
                upper_difference(np.multiply(r, dphi_q_hi, out=take(n)), np.multiply(e, dphi_p_lo, out=take(n)),
                                 out=out)  # the corner bound
            apart = np.less_equal(lb, ha, out=take(n, bool))  # the l-cell lies below the h-cell: the linearization
            if floor is not None:
                np.logical_and(apart, np.greater(out, floor[part], out=take(n, bool)), out=apart)
            i = np.flatnonzero(apart)
            if i.size:
                rows_i, low_i, high_i = (gather(take, index, i) for index in (rows, low, high))
                ha_i, hb_i, r_i, la_i, lb_i = (gather(take, values, i) for values in (ha, hb, r, la, lb))
                at_ha, at_hb = ({name: _gather_sides(take, at[name], rows_i) for name in ("q", "q_prime")}
                                for at in (cells.at_ha, cells.at_hb))
                q_lo = _cell_mass(take, lb_i, ha_i, _gather_sides(take, sides["q"], high_i), at_ha["q"], mu, down,
                                  at_most_one=True)
                p_hi = _cell_mass(take, la_i, hb_i, _gather_sides(take, sides["q_prime"], low_i), at_hb["q_prime"],
                                  0.0, up, at_most_one=True)
                linear = _linear_cell_bound(
                    self, ha_i, hb_i, r_i, la_i, lb_i, e,
                    (q_lo, gather(take, q_hi, i), gather(take, dphi_q_hi, i)),
                    (gather(take, p_lo, i), p_hi, gather(take, dphi_p_lo, i)), (at_ha, at_hb), take)
                out[i] = np.minimum(gather(take, out, i), linear, out=linear)
            starts_below = np.less_equal(la, hb, out=take(n, bool))
            np.copyto(out, -np.inf, where=np.logical_not(starts_below, out=starts_below))

        return SCRATCH.blocks(row.size, CELL_BLOCK, fill)

    def _upper(self, ha: np.ndarray, hb: np.ndarray, r: np.ndarray, la: np.ndarray, lb: np.ndarray,
               e: float) -> np.ndarray:
        """``r(h_b) φ'(Q[l_a, h_b]) − e^ε φ'(Q'[l_b, h_a])`` (``−inf`` where ``l_a > h_b``): at least the
        integrand anywhere on the cell pair."""
        q = np.minimum(_mass(la, hb, self.mu) * (1 + MASS_ALLOWANCE), 1.0)
        q_prime = _mass(lb, ha, 0.0) * (1 - MASS_ALLOWANCE)
        up, down = 1 + self.value_margin, 1 - self.value_margin
        with np.errstate(over="ignore", invalid="ignore"):
            value = upper_difference(r * self._dphi(q) * up, e * self._dphi(q_prime) * down)
        return np.where(la <= hb, value, -np.inf)


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
