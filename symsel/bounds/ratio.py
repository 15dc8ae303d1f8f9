"""A certified supremum of monotone ratios of ``phi'`` over a privacy region (docs/ratio-methods.md, §6).

Both routes of symsel need ``sup_{(q, q') in region} G(q, q')`` with

* ``G = log phi'(q) - log phi'(q')`` (hockey-stick recipe derived from Theorem 4.1 of Koskela,
  Redberg & Wang, ICML 2024), and
* ``G = lam log phi'(q) - (lam - 1) log phi'(q')`` (Lemma 7 of Papernot & Steinke, ICLR 2022).

``phi'`` has non-negative Taylor coefficients, so it is non-decreasing on [0, 1]; ``G`` then grows
with ``q`` and shrinks with ``q'`` and the supremum lies on the lower boundary ``q' = L(q)`` of the
region, a non-decreasing function. On a grid ``0 = q_0 < ... < q_N = 1`` monotonicity gives, for
``q in [q_i, q_{i+1}]``,

    G(q, L(q)) <= a log phi'(q_{i+1}) - b log phi'(L(q_i)),

so the largest cell bound is a rigorous upper bound. Every boundary symsel builds is moreover convex
with ``L(0) = 0`` (the lower boundary of a convex region containing ``(0, 0)``), so ``L(q)/q`` is
non-decreasing and ``L(q) >= r_i q`` on the cell with ``r_i = L(q_i)/q_i``; since ``G(q, r q)`` is
non-decreasing in ``q`` (see below) the sharper cell bound ``G(q_{i+1}, r_i q_{i+1})`` is used. It is
exact on segments where ``L(q)/q`` is constant (pure-DP corners), where the plain bound would need
cells of vanishing relative width. Cells whose bound exceeds the best value seen
at grid points by more than ``tol`` are bisected until the gap is below ``tol`` (or the cell budget
is spent, in which case the still-valid, looser bound is returned).

Floating point is handled on the safe side: the numerator is evaluated slightly to the right and
the denominator slightly to the left of the grid points (by far more than their rounding error),
and a relative margin is added to the result.

The corner ``L(q) = 0`` with ``phi'(0) = 0`` (no mass at ``K = 1``) makes the cell bound infinite.
If the region satisfies ``L(q) >= c q`` (true with ``c = e^{-eps_max}`` for a base whose privacy loss
is bounded by ``eps_max``), the first cell is bounded instead by ``G(q_1, c q_1)``:
``log phi'(q) - log phi'(c q)`` is non-decreasing in ``q`` because ``t -> log phi'(e^t)`` is convex
(a log-sum-exp of linear functions), so on ``[0, q_1]`` the value at ``q_1`` dominates.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: relative safety margin added to every certified supremum (covers float64 rounding of phi').
RELATIVE_MARGIN = 1e-12
#: arguments are moved by this relative amount in the conservative direction before evaluation.
ARGUMENT_NUDGE = 1e-13
DEFAULT_TOL = 1e-7
DEFAULT_MAX_CELLS = 200_000

LogDphi = Callable[[np.ndarray], float | np.ndarray]
Boundary = Callable[[np.ndarray], float | np.ndarray]


@dataclass(frozen=True)
class SupCertificate:
    """The outcome of :func:`certified_log_sup`.

    Attributes:
        upper: certified upper bound on the supremum (``inf`` when it is unbounded or cannot be
            bounded: a vacuous bound).
        lower: the largest value attained at a grid point (the supremum is at least this, for the
            boundary given).
        argmax_q: the grid point where ``lower`` is attained.
        cells: the number of grid cells used.
        converged: whether ``upper - lower <= tol`` was reached within the cell budget.
    """

    upper: float
    lower: float
    argmax_q: float
    cells: int
    converged: bool

    @property
    def vacuous(self) -> bool:
        return not math.isfinite(self.upper)


def initial_grid(points: int = 257) -> np.ndarray:
    """A grid on [0, 1], uniform in the middle and geometric towards both ends (where the
    boundaries of privacy regions bend)."""
    uniform = np.linspace(0.0, 1.0, points)
    ends = np.logspace(-16, -1, 61)
    return np.unique(np.concatenate([uniform, ends, 1.0 - ends, [0.0, 1.0]]))


#: points of :func:`initial_grid` where :func:`attained_log_sup` samples the boundary.
FLOOR_SAMPLE_POINTS = 2049
#: relative allowance subtracted from every sampled value of :func:`attained_log_sup` (float64 rounding of
#: ``log φ'`` and of the boundary; :data:`RELATIVE_MARGIN` is 1000 times smaller).
FLOOR_MARGIN = 1e-9


def attained_log_sup(log_dphi: LogDphi, boundary: Boundary, num_weights: np.ndarray,
                     den_weights: np.ndarray) -> np.ndarray:
    """A lower bound on ``sup_q a log φ'(q) − b log φ'(L(q))`` for each pair ``(a, b)`` of ``num_weights`` and
    ``den_weights``, in one pass: the largest value at :data:`FLOOR_SAMPLE_POINTS` points ``(q, L(q))`` of the
    boundary, each less :data:`FLOOR_MARGIN` of its size. Every such point lies in the region, so its value is at
    most the supremum that :func:`certified_log_sup` bounds from above. Points whose ``φ'`` is 0 at either end are
    left out (their value is ``±inf``, and an underflowed boundary could fake ``+inf``); with none left the bound is
    ``-inf``. What lets ``best`` skip a costly component cheaply: a bound built on these values is below the
    certified one (``Profile.floor``)."""
    q = initial_grid(FLOOR_SAMPLE_POINTS)
    log_num = np.asarray(log_dphi(q), dtype=float)
    log_den = np.asarray(log_dphi(np.clip(np.asarray(boundary(q), dtype=float), 0.0, 1.0)), dtype=float)
    keep = np.isfinite(log_num) & np.isfinite(log_den)
    log_num, log_den = log_num[keep], log_den[keep]
    a = np.atleast_1d(np.asarray(num_weights, dtype=float))[:, None]
    b = np.atleast_1d(np.asarray(den_weights, dtype=float))[:, None]
    if log_num.size == 0:
        return np.full(a.shape[0], -np.inf)
    values = a * log_num - b * log_den
    size = a * (np.abs(log_num) + 1.0) + b * (np.abs(log_den) + 1.0)
    return np.max(values - FLOOR_MARGIN * size, axis=1)


def certified_log_sup(
    log_dphi: LogDphi,
    boundary: Boundary,
    weights: tuple[float, float] = (1.0, 1.0),
    corner_slope: float | None = None,
    tol: float = DEFAULT_TOL,
    max_cells: int = DEFAULT_MAX_CELLS,
    grid: np.ndarray | None = None,
) -> SupCertificate:
    """Certified ``sup_{q in [0,1]} a log phi'(q) - b log phi'(L(q))`` for ``(a, b) = weights``,
    ``a >= b >= 0``, ``phi'`` non-decreasing and ``L = boundary`` non-decreasing.

    Args:
        log_dphi: vectorized ``log phi'`` on [0, 1] (``-inf`` allowed where ``phi' = 0``).
        boundary: vectorized lower boundary ``q'_min(q)`` of the region (conservative: a smaller
            boundary is a larger region and a larger supremum); it must be convex with
            ``L(0) = 0``, as the lower boundary of every privacy region is.
        weights: ``(1, 1)`` for the hockey-stick ratio, ``(lam, lam - 1)`` for Lemma 7.
        corner_slope: ``c`` with ``L(q) >= c q`` on [0, 1], if known (see the module docstring).
        tol: stop refining when the certified bound is within ``tol`` of the attained value.
        max_cells: refinement budget.
        grid: initial grid (default :func:`initial_grid`).
    """
    a, b = weights
    if not (a >= b >= 0):
        raise ValueError(f"weights must satisfy a >= b >= 0, got {weights}")
    q = initial_grid() if grid is None else np.unique(np.clip(np.asarray(grid, dtype=float), 0, 1))
    if q[0] != 0.0 or q[-1] != 1.0:
        q = np.unique(np.concatenate([[0.0], q, [1.0]]))

    def point_values(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lx = np.clip(np.asarray(boundary(x), dtype=float), 0.0, 1.0)
        return _combine(a, b, log_dphi(x), log_dphi(lx)), lx

    values, lows = point_values(q)
    if corner_slope is None and lows[0] == 0.0 and b > 0 and np.isneginf(log_dphi(np.zeros(1)))[0]:
        # phi'(0) = 0 at a region corner L(0) = 0 with no linear lower bound on L: no finite
        # certificate exists (for the Gaussian boundary the supremum is indeed infinite).
        best = int(np.argmax(values))
        return SupCertificate(math.inf, float(values[best]), float(q[best]), int(q.size - 1), False)
    upper = _cell_bounds(q[:-1], q[1:], lows[:-1], log_dphi, a, b, corner_slope)
    while True:
        best = int(np.argmax(np.where(np.isnan(values), -np.inf, values)))
        attained = float(values[best])
        top = float(np.max(upper))
        gap_ok = top - attained <= tol * max(1.0, abs(attained))
        if gap_ok or q.size >= max_cells:
            break
        split = np.nonzero(upper > attained + 0.5 * tol * max(1.0, abs(attained)))[0]
        split = split[(q[split + 1] - q[split]) > 1e-300]
        if split.size == 0:
            break
        mids = 0.5 * (q[split] + q[split + 1])
        new_values, new_lows = point_values(mids)
        order = np.argsort(np.concatenate([q, mids]), kind="stable")
        old_cells = order[:-1]  # the old index of each new cell's left end (a mid's is >= the old size)
        q = np.concatenate([q, mids])[order]
        values = np.concatenate([values, new_values])[order]
        lows = np.concatenate([lows, new_lows])[order]
        # a cell between two old points is an old cell and keeps its bound; the halves of the split cells (one end
        # a mid) get theirs, by the same formula
        is_mid = order >= upper.size + 1
        fresh = np.nonzero(is_mid[:-1] | is_mid[1:])[0]
        kept = np.where(is_mid[:-1] | is_mid[1:], 0, old_cells)
        upper = upper[kept]
        upper[fresh] = _cell_bounds(q[fresh], q[fresh + 1], lows[fresh], log_dphi, a, b, corner_slope)
    top = float(np.max(upper))
    certified = top + RELATIVE_MARGIN * (abs(top) + a + b) if math.isfinite(top) else math.inf
    return SupCertificate(
        upper=certified,
        lower=attained,
        argmax_q=float(q[best]),
        cells=int(q.size - 1),
        converged=bool(gap_ok),
    )


def _combine(a: float, b: float, num: float | np.ndarray, den: float | np.ndarray) -> np.ndarray:
    """``a num - b den`` with the conventions ``x - (-inf) = +inf`` and ``-inf - x = -inf``."""
    with np.errstate(invalid="ignore"):
        out = a * num - b * den
    out = np.where(np.isneginf(den) & (b > 0), np.inf, out)
    out = np.where(np.isneginf(num), -np.inf, out)  # phi'(q) = 0: ratio 0 (0/0 is never "attained")
    return np.where(np.isnan(out), -np.inf, out)


def _cell_bounds(left: np.ndarray, right_end: np.ndarray, left_lows: np.ndarray, log_dphi: LogDphi, a: float,
                 b: float, corner_slope: float | None) -> np.ndarray:
    """The bound of each cell ``[left, right_end]`` (``left_lows = L(left)``) of the module docstring."""
    right = np.minimum(1.0, right_end * (1 + ARGUMENT_NUDGE) + 1e-300)
    # L convex with L(0) = 0 makes L(q)/q non-decreasing, so on the cell L(q) >= r q, r = L(q_i)/q_i,
    # and G(q, r q) is non-decreasing in q (module docstring): the cell is bounded by G(q_i+1, r q_i+1).
    with np.errstate(divide="ignore", invalid="ignore"):
        stretch = np.where(left > 0, right_end / left, 1.0)
    left_low = np.maximum(0.0, left_lows * stretch * (1 - ARGUMENT_NUDGE) - 1e-300)
    bounds = _combine(a, b, log_dphi(right), log_dphi(np.minimum(left_low, 1.0)))
    if corner_slope is not None and corner_slope > 0:
        corner = np.nonzero((left == 0.0) & ~np.isfinite(bounds))[0]  # the first cell, [0, q_1]
        if corner.size:
            q1 = right[corner]
            bounds[corner] = _combine(a, b, log_dphi(q1), log_dphi(q1 * corner_slope * (1 - ARGUMENT_NUDGE)))
    return bounds
