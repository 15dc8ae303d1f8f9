"""A dominating pair of DP-SGD resolved down to tiny ``δ`` (docs/interval.md, "DP-SGD below the PLD's tail"): every
mass is a sum or product of non-negative float64 terms, so it is known within a *relative* error, and the
truncated tails are ``≤ 1e-45``; an FFT composition (dp-accounting's) carries absolute round-off of about
``1e-16`` on every mass, which no truncation can push below.

One step of DP-SGD is a pair of normal mixtures with a privacy loss ``ℓ`` increasing in the output ``x``
(:data:`STEP_PAIRS`: remove ``M = (1 − q) N(0, σ²) + q N(1, σ²)`` against ``N₀ = N(0, σ²)``, add ``N₀`` against
``(1 − q) N(0, σ²) + q N(−1, σ²)`` (the add pair mirrored), replace-one ``M`` against ``(1 − q) N(0, σ²) + q N(−1,
σ²)``, the pair dp-accounting's replace-one PLD is built on). Cut the line where ``ℓ`` crosses multiples of a width
``w``; the ``P``-mass ``P_j`` and ``Q``-mass ``Q_j`` of a bucket are differences of normal CDFs.

*Splitting an atom is dominating.* Mass with losses in ``[a, b]`` and total masses ``(P_j, Q_j)`` is a
post-processing (merging) of two atoms at losses ``a`` and ``b`` with ``P``-masses
``p_b = P_j (1 − e^{a−l}) / (1 − e^{a−b})``, ``p_a = P_j − p_b`` (``l = log(P_j/Q_j)``, so both ``P`` and ``Q``
are kept; each infinitesimal piece of the bucket splits the same way). With ``l`` replaced by an upper bound
``l̂ ∈ [l, b]`` the ``Q``-mass of the two atoms is smaller (the rest of ``Q`` goes to an atom at loss ``−∞``): losses
rounded up, dominating again. This is the connect-the-dots discretization (Doroshenko et al., PETS 2022) computed
without cancellation: the split weights are ``expm1`` ratios.

*Composition and coarsening.* The pair is held as the law of the loss under ``P`` on a grid of width ``w 2^s``
(``Q``-mass ``p e^{−l}`` at each atom); ``T`` steps compose by direct convolution (repeated squaring). Labels are
coarsened by splitting every odd label ``2m + 1`` between ``2m`` and ``2m + 2`` (weights ``1/(1 + e^{−w})`` up,
``e^{−w}/(1 + e^{−w})`` down: dominating, ``P`` and ``Q`` kept); labels below the range whose tails exceed
:data:`DEEP_TAIL` are moved up to its first label (losses rounded up), labels above it to ``+∞``. Every operation
adds non-negative terms, so the relative error of every mass is tracked as in :mod:`symsel.pairs.dpsgd`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from symsel.pairs.loss import UNIT, DominatingPair, loss_pair, onto_loss_grid, split_between

#: tail mass (under ``P``) moved to ``+∞`` (upper) or to the first kept label (lower) after each convolution.
DEEP_TAIL = 1e-45
#: the most labels a convolved vector keeps before labels are coarsened (the convolutions cost its square).
DEEP_LABELS = 8000
#: one step's buckets span ``[−STEP_SPAN σ, 1 + STEP_SPAN σ]``: normal tails beyond carry about 1e-89.
STEP_SPAN = 20.0
#: the most buckets of one step (the width grows beyond it) and the widest bucket in loss.
STEP_BUCKETS = 8192
STEP_WIDTH = 2e-3
#: the finest loss grid of one step: the float slack of a loss (about 1e-12) is far wider than a finer grid (a
#: sampling rate of 1e-300 would ask for widths near 1e-301 and labels beyond any array).
MIN_STEP_WIDTH = 1e-10
#: the narrowest cell between two cuts, in standard deviations (:func:`_spaced`).
MIN_CELL = 1e-3
#: relative allowance on one value of scipy's ``ndtr`` (a generous multiple of its measured accuracy).
NDTR_ERROR = 64 * UNIT


@dataclass(frozen=True)
class NormalMixturePair:
    """``P = Σ_i p_i N(m_i, σ²)`` against ``Q = Σ_i q_i N(n_i, σ²)``, whose privacy loss increases in ``x``."""

    p_weights: tuple[float, ...]
    p_means: tuple[float, ...]
    q_weights: tuple[float, ...]
    q_means: tuple[float, ...]
    sigma: float

    def loss(self, x: np.ndarray) -> np.ndarray:
        """``log(P(x)/Q(x))`` (densities), in log space."""
        def log_density(weights: tuple[float, ...], means: tuple[float, ...]) -> np.ndarray:
            terms = [math.log(w) - (x - m) ** 2 / (2 * self.sigma**2) for w, m in zip(weights, means, strict=True)
                     if w > 0]
            return np.logaddexp.reduce(np.stack(terms), axis=0)

        return log_density(self.p_weights, self.p_means) - log_density(self.q_weights, self.q_means)

    def masses(self, edges: np.ndarray, which: str) -> tuple[np.ndarray, float]:
        """The masses of the cells between consecutive ``edges`` (``±∞`` allowed) under ``P`` or ``Q``, and a
        relative error bound valid for every one: each normal's mass is a difference of two CDFs taken on the side
        of its median that avoids cancellation, within ``NDTR_ERROR (F₁ + F₂)/(F₂ − F₁)`` of the exact one."""
        weights, means = (self.p_weights, self.p_means) if which == "P" else (self.q_weights, self.q_means)
        total = np.zeros(edges.size - 1)
        error = 0.0
        for w, m in zip(weights, means, strict=True):
            if w <= 0:
                continue
            z = (edges - m) / self.sigma
            low, high = ndtr(z), ndtr(-z)
            lower_side = z[1:] <= 0
            ends_sum = np.where(lower_side, low[1:] + low[:-1], high[1:] + high[:-1])
            cell = np.where(lower_side, low[1:] - low[:-1], high[:-1] - high[1:])
            live = cell > 0
            if np.any(live):
                error = max(error, float(np.max(NDTR_ERROR * ends_sum[live] / cell[live])) + 4 * UNIT)
            total += w * np.maximum(cell, 0.0)
        # a cell computed as 0 may hold a positive mass below the ndtr resolution: only normals' far tails, where
        # both CDFs are below 1e-300 (checked by the caller's span), so at most 1e-300 absolute, ignored here
        return total, error + 4 * UNIT


def step_pairs(q: float, sigma: float, relation: str) -> tuple[tuple[str, NormalMixturePair], ...]:
    """One DP-SGD step's pairs, one per direction (module docstring): remove and add for ``add_remove`` and
    ``replace_special``, one symmetric pair for ``replace_one``."""
    mixed = ((1 - q, q), (0.0, 1.0))
    remove = NormalMixturePair(mixed[0], mixed[1], (1.0,), (0.0,), sigma)
    add = NormalMixturePair((1.0,), (0.0,), mixed[0], (0.0, -1.0), sigma)
    replace = NormalMixturePair(mixed[0], (0.0, 1.0), mixed[0], (0.0, -1.0), sigma)
    if relation == "replace_one":
        return (("replace", replace),)
    return (("remove", remove), ("add", add))


def _spaced(cuts: np.ndarray, gap: float) -> np.ndarray:
    """``cuts`` sorted, without the cuts closer than ``gap`` to the one kept before them (the last one is kept, its
    predecessor dropped): a narrow cell's mass, a difference of two normal CDFs, would lose its relative accuracy.
    A bucket made of merged cells spans more than one grid step in loss; its split is as valid."""
    cuts = np.unique(cuts)
    close = np.flatnonzero(np.diff(cuts) < gap)
    if close.size == 0:
        return cuts
    kept = [float(cuts[0])]
    for c in cuts[1:-1].tolist():
        if c - kept[-1] >= gap:
            kept.append(c)
    while len(kept) > 1 and cuts[-1] - kept[-1] < gap:
        kept.pop()
    return np.array([*kept, float(cuts[-1])])


def _inverse(loss: Callable[[np.ndarray], np.ndarray], targets: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Approximate points where the increasing ``loss`` crosses ``targets`` (vectorized bisection on ``[lo, hi]``).
    Exactness is not needed: the buckets' loss ranges are measured at the cuts actually used."""
    a, b = np.full(targets.shape, lo), np.full(targets.shape, hi)
    for _ in range(64):
        mid = 0.5 * (a + b)
        below = loss(mid) < targets
        a, b = np.where(below, mid, a), np.where(below, b, mid)
    return 0.5 * (a + b)


@dataclass(frozen=True)
class GridLaw:
    """The law of a loss under ``P``: mass ``p[i]`` at loss ``(first + i) · width``, ``infinity`` at ``+∞``; every
    mass within ``err`` (relative) of that of a pair that dominates the mechanism."""

    p: np.ndarray
    first: int
    width: float
    infinity: float
    err: float

    def coarsened(self) -> GridLaw:
        """Labels on a grid twice as wide, odd labels split between their neighbours (module docstring)."""
        p, first = self.p, self.first
        if first % 2:
            p, first = np.concatenate([[0.0], p]), first - 1
        if p.size % 2 == 0:
            p = np.append(p, 0.0)
        up = 1.0 / (1.0 + math.exp(-self.width))  # within 3 u
        down = math.exp(-self.width) * up  # within 5 u
        even, odd = p[0::2].copy(), p[1::2]
        even[1:] += up * odd
        even[:-1] += down * odd
        err = self.err + 10 * UNIT  # a product and a sum of three terms
        return GridLaw(even, first // 2, 2 * self.width, self.infinity, err)

    def clipped(self, tail: float) -> GridLaw:
        """The labels whose lower tail is at most ``tail`` moved up to the first label kept (losses rounded up), and
        those whose upper tail is at most ``tail`` moved to ``+∞``."""
        below = np.cumsum(self.p)
        above = np.cumsum(self.p[::-1])
        lo = int(np.searchsorted(below, tail, side="right"))
        drop = int(np.searchsorted(above, tail, side="right"))
        hi = self.p.size - drop
        if (lo == 0 and drop == 0) or lo >= hi:
            return self
        kept = self.p[lo:hi].copy()
        kept[0] += self.p[:lo].sum()
        infinity = self.infinity + float(self.p[hi:].sum()) * (1 + self.err + self.p.size * UNIT)
        return GridLaw(kept, self.first + lo, self.width, infinity, self.err + (max(lo, 1) + 1) * UNIT)

    def fit(self, labels: int, tail: float) -> GridLaw:
        out = self.clipped(tail)
        while out.p.size > labels:
            out = out.coarsened()
        return out

    def compose(self, other: GridLaw, labels: int, tail: float) -> GridLaw:
        a, b = self, other
        while a.width < b.width:
            a = a.coarsened()
        while b.width < a.width:
            b = b.coarsened()
        terms = min(a.p.size, b.p.size)
        infinity = a.infinity + b.infinity  # P[either at +∞] ≤ the sum
        composed = GridLaw(np.convolve(a.p, b.p), a.first + b.first, a.width, infinity,
                           a.err + b.err + (terms + 1) * UNIT)
        return composed.fit(labels, tail)


def step_law(pair: NormalMixturePair, q: float, sigma: float, width: float | None = None) -> GridLaw:
    """One step of ``pair`` split onto a loss grid (module docstring)."""
    lo_x, hi_x = -STEP_SPAN * sigma, 1.0 + STEP_SPAN * sigma
    ends = pair.loss(np.array([lo_x, hi_x]))
    bottom, top = float(ends[0]), float(ends[1])
    if width is None:
        spread = q * math.sqrt(math.expm1(min(1.0 / (sigma * sigma), 700.0)))
        width = min(STEP_WIDTH, max(0.2 * spread, (top - bottom) / STEP_BUCKETS, MIN_STEP_WIDTH))
    grid = np.arange(math.ceil(bottom / width), math.floor(top / width) + 1) * width
    cuts = _spaced(np.concatenate([[lo_x], _inverse(pair.loss, grid, lo_x, hi_x), [hi_x]]), MIN_CELL * sigma)
    edges = np.concatenate([[-np.inf], cuts, [np.inf]])
    p_mass, p_err = pair.masses(edges, "P")
    q_mass, q_err = pair.masses(edges, "Q")
    losses_at_cuts = pair.loss(cuts)
    slack = 16 * UNIT * (1.0 + np.abs(losses_at_cuts)) + 1e-12  # float error of the loss at a cut
    # bucket j spans [cuts[j], cuts[j+1]]; its losses lie in [loss(lower cut), loss(upper cut)] (monotone), widened
    # by the float error of the loss
    lo_edge, hi_edge = losses_at_cuts[:-1] - slack[:-1], losses_at_cuts[1:] + slack[1:]
    inner_p, inner_q = p_mass[1:-1], q_mass[1:-1]
    err = max(p_err, q_err)
    with np.errstate(divide="ignore", invalid="ignore"):
        # an upper bound on the bucket's log(P_j/Q_j) (its masses within err, the logs within a few u)
        loss_hat = np.log(inner_p) - np.log(inner_q) + 2.5 * err + 8 * UNIT * (
            2 + np.abs(np.log(inner_p)) + np.abs(np.log(inner_q)))
    loss_hat = np.where(inner_q > 0, loss_hat, hi_edge)
    # the bucket split onto the ends of its loss range, then each end onto its two grid neighbours
    labels, masses = [], []
    for mass, loss in zip(split_between(inner_p, loss_hat, lo_edge, hi_edge), (lo_edge, hi_edge), strict=True):
        for label, part in onto_loss_grid(mass, loss, width):
            labels.append(label)
            masses.append(part)
    all_labels = np.concatenate(labels)
    # the bottom bucket (−∞, lo_x]: its losses are at most loss(lo_x), rounded up to the label above it
    bottom_label = math.ceil((bottom + 1e-12 + 16 * UNIT * (1 + abs(bottom))) / width)
    first_label = min(int(all_labels.min()), bottom_label)
    dense = np.zeros(int(all_labels.max()) - first_label + 1)
    np.add.at(dense, all_labels - first_label, np.concatenate(masses))
    if bottom_label - first_label >= dense.size:
        # a loss range narrower than the float slack (a sampling rate such as 1e-300): the bottom's label, rounded
        # up, lies above the others; the grid is extended to it (mass at a higher loss only dominates more)
        dense = np.concatenate([dense, np.zeros(bottom_label - first_label + 1 - dense.size)])
    dense[bottom_label - first_label] += p_mass[0]
    infinity = float(p_mass[-1]) * (1 + err)  # the top bucket [hi_x, ∞): loss up to +∞
    # per mass: its bucket masses (err), two splits (a log, exp, expm1 and three products each, a few u), and the
    # sums of np.add.at (as many terms as contributions to the label)
    counts = np.bincount(all_labels - first_label, minlength=dense.size)
    return GridLaw(dense, first_label, width, infinity, err + (64 + int(counts.max())) * UNIT)


def composed_law(pair: NormalMixturePair, q: float, sigma: float, steps: int, labels: int = DEEP_LABELS,
                 tail: float = DEEP_TAIL) -> GridLaw:
    """``steps`` compositions of one step's :func:`step_law` (repeated squaring, direct convolutions)."""
    power = step_law(pair, q, sigma).fit(labels, tail)
    result: GridLaw | None = None
    t = int(steps)
    while t:
        if t & 1:
            result = power if result is None else result.compose(power, labels, tail)
        t >>= 1
        if t:
            power = power.compose(power, labels, tail)
    assert result is not None
    return result


def dpsgd_deep_pairs(q: float, sigma: float, steps: int, relation: str = "add_remove",
                     labels: int = DEEP_LABELS, tail: float = DEEP_TAIL) -> tuple[DominatingPair, ...]:
    """The dominating pairs of ``steps`` DP-SGD steps under ``relation`` (one per direction, module docstring),
    with ``Q``-mass ``p e^{−l}`` at each loss and the rest of ``Q`` at loss ``−∞``."""
    pairs = []
    for direction, pair in step_pairs(q, sigma, relation):
        law = composed_law(pair, q, sigma, steps, labels, tail)
        losses = (np.arange(law.p.size) + law.first) * law.width
        keep = law.p > 0
        a, losses = law.p[keep], losses[keep]
        with np.errstate(over="ignore"):
            b = a * np.exp(-losses)
        free = max(0.0, 1.0 - math.fsum(b.tolist()) * (1 + law.err) - 4 * UNIT)
        source = (f"dpsgd(q={q!r}, sigma={sigma!r}, steps={steps!r}) {direction}, split on a loss grid of "
                  f"{law.width:.3g}, composed exactly")
        pairs.append(loss_pair(np.append([0.0], a), np.append([free], b), DominatingPair, direction, source,
                               a_infinity=law.infinity,
                               relative_error=law.err + (8 + 2 * float(np.max(np.abs(losses)))) * UNIT))
    return tuple(pairs)
