"""The dominated pair of DP-SGD (docs/lower-bounds.md, "Bases known through a PLD"): a finite pair the base
dominates, for the certified lower bounds of :mod:`symsel.evidence.pld_lower`.

One step of DP-SGD (Poisson rate ``q``, noise ``σ``, sensitivity 1) has the pair ``M = (1 − q) N(0, σ²) + q N(1, σ²)``
against ``N₀ = N(0, σ²)`` (remove; add is the swapped pair), with loss ``ℓ(x) = log(1 − q + q e^{(2x − 1)/(2σ²)})``
increasing in ``x``. Cut the line into buckets of loss width ``w`` (:func:`step_width`; normal CDFs give each
bucket's exact masses) and label a bucket by the integer ``round(ℓ/w)`` of a point of it. Label a run of ``T`` steps
by the sum of its steps' labels: a function of the run's output, so a post-processing of the composed pair, whose
masses under ``M^T`` and ``N₀^T`` are the ``T``-fold convolutions of the one-step vectors. Convolutions are direct
sums of non-negative terms (not FFTs), so every computed mass is within a known relative error of the exact one;
labels are merged in pairs (``⌊label/2⌋``, again a post-processing) whenever a vector grows past :data:`MAX_LABELS`.
The result is a finite pair that the base dominates (a :class:`~symsel.pairs.loss.DominatedPair`), ordered by label,
which is close to loss order.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.special import ndtr

from symsel.pairs.loss import UNIT, DominatedPair, loss_pair

#: the most labels a convolved vector keeps before neighbouring labels are merged.
MAX_LABELS = 6000
#: atoms of the final pair (neighbouring labels merged down to this many).
FINAL_ATOMS = 1500
#: tail mass (under both vectors together) merged into the end labels after each convolution.
TAIL = 1e-24
#: the widest loss width of one step's buckets (the labels' sum misses each step's loss within its bucket, a spread
#: that grows like the width times the root of the steps: on ``dpsgd(q=0.01, sigma=1.1, steps=1000)``, 40 runs at
#: δ = 1e-6, 2e-3 gave 7.8324, 1e-3 7.8417 and 5e-4 7.8441, against an upper bound of 7.8476) ...
STEP_WIDTH = 1e-3
#: ... and the share of the step's loss spread (:func:`step_width`) it is cut to when that is narrower.
STEP_SHARE = 0.2


#: the most buckets of one step (about: the width stays at most STEP_WIDTH): a heavy loss tail (tiny ``q``, small
#: ``σ``) widens them beyond :func:`step_width`'s share of the spread (``q = 1e-6, σ = 0.5``: 8 million buckets of
#: 1.5e-6 across losses up to 12).
MAX_STEP_BUCKETS = 8192


def _step_loss(q: float, sigma: float) -> Callable[[np.ndarray], np.ndarray]:
    """One step's privacy loss ``ℓ(x) = log(1 − q + q e^{(2x − 1)/(2σ²)})``."""
    return lambda x: np.log((1 - q) + q * np.exp((2 * x - 1) / (2 * sigma * sigma)))


def _step_range(q: float, sigma: float) -> tuple[float, float, float, float]:
    """The outputs ``[−12σ, 1 + 12σ]`` the buckets cover and the losses at their ends (the lower one at least
    ``log(1 − q)``, the loss's infimum)."""
    lo_x, hi_x = -12.0 * sigma, 1.0 + 12.0 * sigma
    loss = _step_loss(q, sigma)
    loss_lo = math.log1p(-q) if q < 1 else -math.inf
    return lo_x, hi_x, max(float(loss(np.array(lo_x))), loss_lo), float(loss(np.array(hi_x)))


def step_width(q: float, sigma: float) -> float:
    """The loss width of one step's buckets: :data:`STEP_SHARE` of ``q √(e^{1/σ²} − 1)`` (the standard deviation
    of the step's likelihood ratio under ``N₀``, about that of its loss when the loss is small), at most
    :data:`STEP_WIDTH`, and at least the loss range over :data:`MAX_STEP_BUCKETS`. A fixed width is loose where the
    losses are small: on ``dpsgd(q=0.01, sigma=4, steps=100)`` (spread 2.5e-3) buckets 2e-3 wide gave a lower bound
    of 0.3895 for 40 runs at δ = 1e-6, buckets 5e-4 wide 0.4005 (the upper bound: 0.4015).
    ``dpsgd(q=0.01, sigma=1.1, …)`` (spread 0.011) keeps :data:`STEP_WIDTH`."""
    spread = q * math.sqrt(math.expm1(min(1.0 / (sigma * sigma), 700.0)))
    _, _, bottom, top = _step_range(q, sigma)
    return min(STEP_WIDTH, max(STEP_SHARE * spread, (top - bottom) / MAX_STEP_BUCKETS))


def _step_buckets(q: float, sigma: float, width: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One step's buckets: masses under ``M`` and ``N₀`` and integer labels (``round(loss / width)`` at the bucket's
    lower edge; the outer buckets carry the loss of their inner edge)."""
    lo_x, hi_x, bottom, top = _step_range(q, sigma)
    loss = _step_loss(q, sigma)
    # loss is increasing in x: cut where the loss crosses multiples of the width
    grid = np.arange(math.ceil(bottom / width), math.floor(top / width) + 1) * width
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = (2 * sigma * sigma * np.log((np.exp(grid) - (1 - q)) / q) + 1) / 2
    cuts = np.unique(np.clip(inner[np.isfinite(inner)], lo_x, hi_x))
    if cuts.size == 0:  # the whole loss range inside one width (q = 1e-300): one bucket, all mass, a null pair
        return np.ones(1), np.ones(1), np.zeros(1, dtype=np.int64)
    edges = np.concatenate([[-np.inf], cuts, [np.inf]])

    def mass(shift: float) -> np.ndarray:
        z = (edges - shift) / sigma
        lower = np.diff(ndtr(z))
        upper = -np.diff(ndtr(-z))
        return np.where(z[1:] <= 0, lower, upper).clip(min=0.0)

    m_mass = (1 - q) * mass(0.0) + q * mass(1.0)
    n_mass = mass(0.0)
    left = np.concatenate([[cuts[0]], cuts])
    labels = np.round(loss(left) / width).astype(np.int64)
    return m_mass, n_mass, labels


def _labelled(masses: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, int]:
    """Masses summed per label, as a dense vector from the smallest label, and that label."""
    first = int(labels.min())
    dense = np.zeros(int(labels.max()) - first + 1)
    np.add.at(dense, labels - first, masses)
    return dense, first


def _halve(vec: np.ndarray, first: int) -> tuple[np.ndarray, int]:
    """Labels merged in pairs: label ``t`` becomes ``⌊t/2⌋`` (a post-processing)."""
    if first % 2:
        vec, first = np.concatenate([[0.0], vec]), first - 1
    if vec.size % 2:
        vec = np.append(vec, 0.0)
    return vec.reshape(-1, 2).sum(axis=1), first // 2


class _Labelled:
    """A pair of label vectors with a common unit (labels times ``2^shift``) and the relative error ``err`` of their
    entries: a sum of ``m`` non-negative float64 terms is within ``(m − 1) u`` of the exact sum of the terms, and a
    product adds ``u``, so a convolution of inputs within ``e₁``, ``e₂`` is within ``e₁ + e₂ + (m + 1) u`` (``m``
    the most terms of one output: the shorter input's length) and a merge of pairs within ``e + u``."""

    def __init__(self, p: np.ndarray, n: np.ndarray, first: int, shift: int, err: float, tail: float = TAIL):
        self.p, self.n, self.first, self.shift, self.err, self.tail = p, n, first, shift, err, tail

    def coarsened_to(self, shift: int) -> _Labelled:
        p, n, first = self.p, self.n, self.first
        for _ in range(shift - self.shift):
            p2, f2 = _halve(p, first)
            n, _ = _halve(n, first)
            p, first = p2, f2
        return _Labelled(p, n, first, shift, self.err + (shift - self.shift) * UNIT, self.tail)

    def clipped(self) -> _Labelled:
        """Labels outside the range where both vectors' tails exceed ``tail`` (:data:`TAIL`) merged into its end labels
        (``label := clip(label, lo, hi)``, a post-processing: exact sums of the merged masses)."""
        weight = self.p + self.n
        below = np.cumsum(weight)
        above = np.cumsum(weight[::-1])[::-1]
        lo = int(np.searchsorted(below, self.tail, side="right"))
        hi = int(weight.size - 1 - np.searchsorted(above[::-1], self.tail, side="right"))
        if lo >= hi or (lo == 0 and hi == weight.size - 1):
            return self

        def fold(v: np.ndarray) -> np.ndarray:
            out = v[lo:hi + 1].copy()
            out[0] += v[:lo].sum()
            out[-1] += v[hi + 1:].sum()
            return out

        return _Labelled(fold(self.p), fold(self.n), self.first + lo, self.shift,
                         self.err + max(lo, weight.size - 1 - hi, 1) * UNIT, self.tail)

    def fit(self, max_labels: int) -> _Labelled:
        """:meth:`clipped`, then labels merged in pairs until at most ``max_labels`` are left."""
        out = self.clipped()
        while out.p.size > max_labels:
            out = out.coarsened_to(out.shift + 1)
        return out

    def compose(self, other: _Labelled, max_labels: int) -> _Labelled:
        shift = max(self.shift, other.shift)
        a, b = self.coarsened_to(shift), other.coarsened_to(shift)
        terms = min(a.p.size, b.p.size)
        err = a.err + b.err + (terms + 1) * UNIT
        composed = _Labelled(np.convolve(a.p, b.p), np.convolve(a.n, b.n), a.first + b.first, shift, err,
                             min(a.tail, b.tail))
        return composed.fit(max_labels)


def dpsgd_dominated_pairs(q: float, sigma: float, steps: int, width: float | None = None,
                          max_labels: int = MAX_LABELS, final_atoms: int = FINAL_ATOMS,
                          tail: float = TAIL) -> tuple[DominatedPair, ...]:
    """The dominated pairs of ``dpsgd(q, sigma, steps)`` (remove and add), module docstring, with buckets of loss
    width ``width`` (default :func:`step_width`), at most ``max_labels`` labels while composing and ``final_atoms``
    atoms at the end (fewer: coarser and cheaper, the convolutions cost ``max_labels²``), labels whose tail mass is
    below ``tail`` merged into the end labels (smaller: the pair resolves smaller δ); each mass within the pair's
    ``relative_error`` of the exact mass of its garbling."""
    width = step_width(q, sigma) if width is None else float(width)
    final = composed_steps(*_step_buckets(q, sigma, width), steps, max_labels, final_atoms, tail)
    relative = final.err
    source = f"dpsgd(q={q!r}, sigma={sigma!r}, steps={steps!r}) buckets of loss width {width:g}, labels summed"
    return (loss_pair(final.p, final.n, DominatedPair, "remove", source, relative_error=relative),
            loss_pair(final.n, final.p, DominatedPair, "add", source, relative_error=relative))


def composed_steps(m_mass: np.ndarray, n_mass: np.ndarray, labels: np.ndarray, steps: int, max_labels: int,
                   final_atoms: int, tail: float = TAIL) -> _Labelled:
    """One step's buckets (masses under the two laws, integer labels) composed ``steps`` times by summing labels
    (repeated squaring, direct convolutions), labels beyond ``tail`` merged into the end labels, then merged in
    pairs down to ``final_atoms``: a post-processing of the ``steps``-fold composed pair (module docstring)."""
    p, first = _labelled(m_mass, labels)
    n, _ = _labelled(n_mass, labels)
    # one step: each bucket mass is a difference of two normal CDFs on the side that avoids cancellation, within
    # 64 u of the exact mass (a relative allowance generous for scipy's ndtr), and labels add masses
    power = _Labelled(p, n, first, 0, 64 * UNIT + labels.size * UNIT, tail).fit(max_labels)
    result: _Labelled | None = None
    t = int(steps)
    while t:
        if t & 1:
            result = power if result is None else result.compose(power, max_labels)
        t >>= 1
        if t:
            power = power.compose(power, max_labels)
    assert result is not None
    final = result
    while final.p.size > final_atoms:
        final = final.coarsened_to(final.shift + 1)
    return final
