"""The envelope bound: Theorem 4.1 of Koskela, Redberg & Wang taken per output (docs/envelope.md).

For a base mechanism with privacy profile ``δ_Q`` and a valid lower boundary ``L = q'_min`` of its
privacy region, and ``K`` with PGF ``φ``, let

    H(t) = sup_{u ∈ [0, 1]} [φ'(u) − t φ'(L(u))]_+          (t ≥ 0).

``H`` is convex and non-increasing. Written as a mixture of hinges plus a constant,
``H(t) ≤ C + Σ_i c_i [1 − t/t_i]_+``, it gives for every real ``ε`` (docs/envelope.md, proof there)

    δ_A(ε) ≤ C + Σ_i c_i δ_Q(ε − log t_i) + P[K = 0] [1 − e^ε]_+ .

The constant ``C`` is the part of ``H`` that never vanishes (laws with ``φ'(0) = 0`` at a region
corner ``L(u) = 0``); it is what keeps the bound finite where every ratio method is vacuous.

**Certified evaluation.** On a grid ``0 = u_0 < … < u_N = 1`` monotonicity of ``φ'`` and ``L`` gives,
on the cell ``[u_j, u_{j+1}]``, ``φ'(u) ≤ a_j = φ'(u_{j+1})`` and ``φ'(L(u)) ≥ b_j = φ'(L(u_j))``, so
``H(t) ≤ Ĥ(t) = max_j [a_j − t b_j]_+``: the upper envelope of ``N`` lines, computed exactly as a
convex hull. Because the grid point ``u_{j+1}`` itself attains the line ``(a_j, b_{j+1})``, a grid on
which ``log b_{j+1} − log b_j ≤ τ_u`` for every cell that matters gives ``Ĥ(t) ≤ H(t e^{−τ_u})``.
Cells with ``a_j ≤`` :data:`NEGLIGIBLE` are left coarse; they add at most that much to ``H``.
The hull is then thinned to chords on a geometric grid of ``t`` of ratio ``e^{τ_t}``; a convex
function lies below its chords and a chord over ``[T_k, T_{k+1}]`` is at most ``Ĥ(T_k)``, so the
thinned envelope is at most ``Ĥ(t e^{−τ_t})``. Altogether the reported profile is at most the exact
envelope bound (for the boundary ``L`` used) evaluated at ``ε − (τ_u + τ_t)``, plus ``NEGLIGIBLE``:
``eps_shift`` and ``delta_floor`` in :class:`EnvelopeCertificate`.

Floating point errs on the safe side: ``a_j`` is rounded up and ``b_j`` down by the larger of
:data:`VALUE_MARGIN` and 64 times the float64 error of ``φ'`` measured against mpmath
(:func:`symsel.bounds.precision.dphi_float_error`; arguments nudged outwards first), and every
breakpoint and weight of the final mixture is inflated by :data:`MIXTURE_MARGIN`, which covers the
rounding of the hull arithmetic (the inflation raises the envelope by at least ``MIXTURE_MARGIN``
times the intercept of the active line, far above the ``O(2^-52)`` relative error of each hull
operation).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import mpmath
import numpy as np

from symsel.bounds.mixture import HingeMixture, MixtureProfile
from symsel.bounds.precision import VALUE_MARGIN, usable_float_error
from symsel.bounds.ratio import initial_grid
from symsel.distributions import Distribution
from symsel.profiles import Profile

#: total ε shift allowed by default (split evenly between the ``u`` grid and the ``t`` chords).
DEFAULT_EPS_SHIFT = 1e-3
#: lines whose height ``a_j`` is below this are not refined; they add at most this to ``H`` (and to δ).
NEGLIGIBLE = 1e-45
#: relative inflation of the final breakpoints ``t_i`` and weights ``c_i`` (module docstring).
MIXTURE_MARGIN = 1e-9
#: arguments of ``φ'`` and ``L`` are moved outwards by this relative amount before evaluation.
ARGUMENT_NUDGE = 1e-13
#: refinement budget (cells); past it the bound stays valid and the achieved shift is reported.
MAX_CELLS = 2_000_000
#: largest number of pieces a cell is split into per refinement round.
MAX_SPLIT = 256
#: largest number of chords of the thinned hull (a wider ``t`` ratio is used, and reported, beyond it).
MAX_CHORDS = 200_000
#: the hull is followed up to this ``t`` (``log t ≈ 691``: ``δ_Q(ε − log t)`` is 1 for every usable ``ε``), flat after.
T_MAX = 1e300


@dataclass(frozen=True)
class EnvelopeCertificate:
    """How close the mixture is to the exact envelope bound for the boundary used.

    The reported profile is at most ``exact_envelope(ε − eps_shift) + delta_floor``.

    Attributes:
        eps_shift: the shift actually achieved: the ``u`` grid's worst cell, plus ``τ_t`` if the hull
            was thinned to chords.
        delta_floor: additive allowance for the cells left coarse (at most :data:`NEGLIGIBLE`).
        cells: number of ``u`` cells used.
        hull_lines: lines on the upper envelope ``Ĥ`` before thinning.
        terms: hinge terms ``(t_i, c_i)`` of the final mixture.
        converged: whether the requested shift was reached within :data:`MAX_CELLS` (and within the
            float resolution of ``u``).
        value_margin: the relative allowance given to every float64 ``φ'`` value
            (:func:`symsel.bounds.precision.dphi_float_error`).
    """

    eps_shift: float
    delta_floor: float
    cells: int
    hull_lines: int
    terms: int
    converged: bool
    value_margin: float = VALUE_MARGIN


# ----------------------------------------------------------------------------------- the u grid
def _dphi_up(dist: Distribution, u: np.ndarray, margin: float) -> np.ndarray:
    """``φ'(u)`` rounded up (an underflow to 0 or a subnormal is covered by the ``1e-300`` added)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        values = np.asarray(dist.dphi(np.minimum(1.0, u * (1 + ARGUMENT_NUDGE))), dtype=float)
    return np.nan_to_num(values, nan=np.inf) * (1 + margin) + 1e-300


def _dphi_down(dist: Distribution, x: np.ndarray, margin: float) -> np.ndarray:
    """``φ'(x)`` rounded down (subnormal values, whose relative error is large, become 0)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        values = np.asarray(dist.dphi(np.maximum(0.0, x * (1 - ARGUMENT_NUDGE))), dtype=float)
    values = np.nan_to_num(values, nan=0.0) * max(0.0, 1 - margin)
    return np.where(values >= 1e-300, values, 0.0)


def _boundary(boundary: Callable[[np.ndarray], float | np.ndarray], u: np.ndarray) -> np.ndarray:
    """``L`` at ``u`` moved left first (``L`` is non-decreasing, so this rounds the boundary down)."""
    values = np.asarray(boundary(np.maximum(0.0, u * (1 - ARGUMENT_NUDGE))), dtype=float)
    return np.clip(np.nan_to_num(values, nan=0.0), 0.0, 1.0) * (1 - ARGUMENT_NUDGE)


def _cell_floor(u: np.ndarray, lows: np.ndarray, corner_slope: float) -> np.ndarray:
    """``r_j u_{j+1}`` for each cell, where ``L(u) ≥ r_j u`` holds on the cell: ``L`` is convex with
    ``L(0) = 0``, so ``L(u)/u`` is non-decreasing and ``r_j = L(u_j)/u_j`` (``corner_slope`` on the
    first cell, where ``u_0 = 0``). Clipped to ``L(u_{j+1})``, which it can only exceed by rounding."""
    with np.errstate(divide="ignore", invalid="ignore"):
        stretch = np.where(u[:-1] > 0, u[1:] / u[:-1], 0.0)
    floor = lows[:-1] * stretch
    floor = np.where(u[:-1] > 0, floor, corner_slope * u[1:])
    return np.minimum(floor, lows[1:])


def _cell_slopes(dist: Distribution, u: np.ndarray, a: np.ndarray, floor: np.ndarray, margin: float) -> np.ndarray:
    """``b_j = φ'(r_j u_{j+1})`` rounded down; where that underflows (but ``r_j u_{j+1} > 0``) the
    equivalent ``a_j / R_j`` with ``log R_j = log φ'(u_{j+1}) − log φ'(r_j u_{j+1})`` from the log-space
    evaluator, so tiny lines keep their slope instead of becoming flat (see :func:`_cell_lines`)."""
    b = _dphi_down(dist, floor, margin)
    redo = np.nonzero((b == 0) & (floor > 0))[0]
    if redo.size:
        up = np.minimum(1.0, u[1:][redo] * (1 + ARGUMENT_NUDGE))
        down = floor[redo] * (1 - ARGUMENT_NUDGE)
        log_ratio = np.asarray(dist.log_dphi(up), dtype=float) - np.asarray(dist.log_dphi(down), dtype=float)
        log_ratio = np.nan_to_num(log_ratio, nan=np.inf) * (1 + margin) + 2 * margin
        with np.errstate(under="ignore", over="ignore"):
            b[redo] = a[redo] * np.exp(-log_ratio)
    return b


def _cell_lines(
    dist: Distribution, boundary: Callable[[np.ndarray], float | np.ndarray], corner_slope: float, tau_u: float,
    max_cells: int, margin: float,
) -> tuple[np.ndarray, np.ndarray, float, int, bool, float]:
    """Lines ``(a_j, b_j)`` that bound ``[φ'(u) − t φ'(L(u))]_+`` on each cell, on a grid refined
    until every cell that matters has ``log(φ'(L(u_{j+1}))/b_j) ≤ tau_u``.

    ``a_j = φ'(u_{j+1})`` and ``b_j = φ'(r_j u_{j+1})``: on the cell ``L(u) ≥ r_j u``, so
    ``φ'(u) − t φ'(L(u)) ≤ φ'(u) (1 − t/R_j)`` with ``R_j = φ'(u_{j+1})/φ'(r_j u_{j+1})`` (the ratio
    ``φ'(u)/φ'(r u)`` is non-decreasing in ``u``: ``s ↦ log φ'(e^s)`` is convex), which is at most
    ``a_j (1 − t/R_j) ≤ a_j − t b_j`` for ``t ≤ R_j`` (and negative after) whenever ``b_j ≤ a_j/R_j``.
    Since ``r_j u_{j+1} ≥ L(u_j)`` this is never
    worse than the plain ``φ'(L(u_j))``, and it is exact on pure-DP corners (``L(u) = e^{−ε} u``).

    Returns the lines, the achieved worst gap, the number of cells, whether the tolerance was met and the largest
    ``a_j`` of a flat line that is exact (``b_j = 0`` because ``φ'(L) = 0`` on the cell, not by underflow)."""
    u = initial_grid()
    u = np.unique(np.concatenate([u, np.logspace(-300, -16, 36)]))
    lows = _boundary(boundary, u)
    a_pts = _dphi_up(dist, u, margin)
    b_pts = _dphi_down(dist, lows, margin)
    while True:
        a = a_pts[1:]
        floor = _cell_floor(u, lows, corner_slope)
        b = _cell_slopes(dist, u, a, floor, margin)
        # a flat line is exact only where φ'(L) is 0 on its cell (a corner of the region); one whose slope
        # underflowed even in log space stands for a falling line, and its height counts in the δ floor
        exact_flat = float(np.max(a[(b <= 0) & (floor <= 0)], initial=0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            gap = np.where(b > 0, np.log(b_pts[1:]) - np.log(b), np.where(b_pts[1:] > 0, np.inf, 0.0))
        gap = np.nan_to_num(gap, nan=np.inf, posinf=np.inf, neginf=0.0)
        matters = a > NEGLIGIBLE
        worst = float(np.max(np.where(matters, gap, 0.0), initial=0.0))
        bad = matters & (gap > tau_u) & ((u[1:] - u[:-1]) > 4e-16 * u[1:])
        if not bad.any() or u.size >= max_cells:  # cells too narrow to split do not count as converged
            return a, b, max(0.0, worst), int(u.size - 1), worst <= tau_u, exact_flat
        idx = np.nonzero(bad)[0]
        pieces = np.where(np.isfinite(gap[idx]), np.ceil(gap[idx] / tau_u), MAX_SPLIT)
        pieces = np.clip(pieces, 2, MAX_SPLIT).astype(int)
        room = max_cells - u.size
        if pieces.sum() > room:  # spend what is left on the worst cells
            keep = np.argsort(-gap[idx], kind="stable")
            fits = np.cumsum(pieces[keep]) <= room
            idx, pieces = idx[keep][fits], pieces[keep][fits]
            if idx.size == 0:
                return a, b, max(0.0, worst), int(u.size - 1), False, exact_flat
        extra = np.unique(_split_points(u, b, idx, pieces))
        extra = extra[(extra > 0) & (extra < 1)]
        lows_new = _boundary(boundary, extra)
        merged = np.concatenate([u, extra])
        order = np.argsort(merged, kind="stable")
        u = merged[order]
        lows = np.concatenate([lows, lows_new])[order]
        a_pts = np.concatenate([a_pts, _dphi_up(dist, extra, margin)])[order]
        b_pts = np.concatenate([b_pts, _dphi_down(dist, lows_new, margin)])[order]
        distinct = np.concatenate([[True], u[1:] > u[:-1]])
        u, lows, a_pts, b_pts = u[distinct], lows[distinct], a_pts[distinct], b_pts[distinct]


def _split_points(u: np.ndarray, b: np.ndarray, idx: np.ndarray, pieces: np.ndarray) -> np.ndarray:
    """The points that cut each cell ``[u_j, u_{j+1}]`` (``j`` in ``idx``) into ``pieces_j`` equal parts,
    ``u_j + (u_{j+1} − u_j) k / pieces_j`` for ``k = 1 … pieces_j − 1``, all cells at once; a first cell towards a
    corner with ``φ'(L) = 0`` (``u_0 = 0``, ``b_0 = 0``) is cut by decades below ``u_1`` instead."""
    corner = (u[idx] == 0.0) & (b[idx] == 0.0)
    parts = [(u[idx[corner] + 1][:, None] * np.logspace(-1, -8, 8)[None, :]).ravel()]
    j, count = idx[~corner], pieces[~corner]
    reps = count - 1
    k = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps) + 1
    lo, hi, count = np.repeat(u[j], reps), np.repeat(u[j + 1], reps), np.repeat(count, reps)
    parts.append(lo + (hi - lo) * k / count)
    return np.concatenate(parts)


# ----------------------------------------------------------------------------------- the hull
def upper_envelope(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The upper envelope on ``t ≥ 0`` of the lines ``t ↦ a_j − t b_j`` and of the flat line at
    ``C = max(0, max{a_j : b_j = 0})``.

    Returns ``(kinks, intercepts, slopes)`` of the lines on the envelope in the order they are met
    as ``t`` grows: line ``k`` (value ``intercepts[k] − t slopes[k]``) is active between
    ``kinks[k-1]`` and ``kinks[k]``; the last line is the flat one (slope 0, intercept ``C``).

    The lines are taken by decreasing slope ``b``; each new line overtakes the last one kept at
    ``x = (a_last − a_new)/(b_last − b_new)``, and the last one is dropped while ``x`` is not beyond
    the point where it became active. The kinks are therefore strictly increasing by construction,
    whatever the rounding: nearly identical lines (cells near a corner, values equal to 1e-17) can
    move a kink, which changes the envelope by a few ulps of the intercepts, but never break its
    convexity (comparing products of differences instead, as an earlier version did, could)."""
    flat = b <= 0
    constant = float(np.max(a[flat], initial=0.0))
    keep = ~flat & (a > constant)
    a, b = a[keep], b[keep]
    order = np.lexsort((-a, -b))  # by decreasing b; for equal b the highest a first
    a, b = a[order], b[order]
    first = np.concatenate([[True], b[1:] != b[:-1]]) if a.size else np.zeros(0, dtype=bool)
    hull_a: list[float] = []
    hull_b: list[float] = []
    starts: list[float] = []
    for ai, bi in zip([*a[first].tolist(), constant], [*b[first].tolist(), 0.0], strict=True):
        start = 0.0
        while hull_a:
            start = (hull_a[-1] - ai) / (hull_b[-1] - bi)
            if start > starts[-1]:
                break
            hull_a.pop()
            hull_b.pop()
            starts.pop()
            start = 0.0
        hull_a.append(ai)
        hull_b.append(bi)
        starts.append(start)
    return np.array(starts[1:]), np.array(hull_a), np.array(hull_b)


def _evaluate_hull(t: np.ndarray, kinks: np.ndarray, ha: np.ndarray, hb: np.ndarray) -> np.ndarray:
    """``Ĥ(t)``: the largest of the line found active at each ``t`` and its two neighbours (a kink
    moved by rounding then costs nothing)."""
    k = np.searchsorted(kinks, t, side="left")
    last = ha.size - 1
    return np.max([ha[np.clip(k + s, 0, last)] - t * hb[np.clip(k + s, 0, last)] for s in (-1, 0, 1)], axis=0)


def hinge_mixture(a: np.ndarray, b: np.ndarray, tau_t: float) -> tuple[HingeMixture, int, float]:
    """A hinge mixture ``G ≥ Ĥ`` with ``G(t) ≤ Ĥ(t e^{−s})``: ``s = tau_t`` where the hull is thinned to
    chords on a geometric ``t`` grid (it has more kinks than that grid has points), else ``s = 0``.

    Returns the mixture, the number of lines on the hull and ``s``."""
    kinks, ha, hb = upper_envelope(a, b)
    constant = float(ha[-1])
    if kinks.size == 0:
        return HingeMixture(np.empty(0), np.empty(0), constant), 1, 0.0
    if kinks[-1] > T_MAX:  # lines with subnormal slopes put kinks past any usable t (even at +inf): G is
        # flat at Ĥ(T_MAX) from T_MAX on, above Ĥ there since Ĥ is non-increasing (envelope_profile reports it)
        constant = float(_evaluate_hull(np.array([T_MAX]), kinks, ha, hb)[0])
        kinks = np.append(kinks[kinks < T_MAX], T_MAX)
    lo, hi = float(kinks[0]), float(kinks[-1])
    span = math.log(hi) - math.log(lo) if hi > lo else 0.0  # hi / lo itself can overflow (E[K] = 1e6, small σ)
    count = math.ceil(span / tau_t) + 1 if span > 0 else 1
    if count > MAX_CHORDS:  # a wider chord grid: coarser, still above Ĥ, and its shift is reported
        tau_t = span / (MAX_CHORDS - 1)
        count = MAX_CHORDS
    thinned = count < kinks.size
    if thinned:  # fewer chords than kinks: thin to a geometric grid
        grid = np.geomspace(lo, hi, count)
        grid[0], grid[-1] = lo, hi
    else:
        grid = kinks
    values = _evaluate_hull(grid, kinks, ha, hb)
    # G is piecewise linear through (0, Ĥ(0)) and (grid_k, Ĥ(grid_k)), flat at C after grid[-1].
    xs = np.concatenate([[0.0], grid])
    ys = np.concatenate([[ha[0]], values])
    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = np.where(np.diff(xs) > 0, np.diff(ys) / np.diff(xs), 0.0)
    slopes = np.append(slopes, 0.0)
    # convexity makes the slopes increase; a negative jump from rounding is raised to 0 (G only grows)
    weights = grid * np.maximum(0.0, slopes[1:] - slopes[:-1])
    keep = weights > 0
    inflate = 1 + MIXTURE_MARGIN
    mixture = HingeMixture(
        log_breakpoints=np.log(grid[keep]) + math.log(inflate),
        weights=weights[keep] * inflate,
        constant=constant * inflate,
    )
    return mixture, int(ha.size), tau_t if thinned else 0.0


# ----------------------------------------------------------------------------------- the profile
class EnvelopeProfile(MixtureProfile):
    """The envelope bound as a profile, with the certificate of its numerical steps.

    Where the mixture has no constant, its largest breakpoint ``t_max`` is at least the ratio supremum ``R``
    (``G ≥ H`` and ``G(t) = 0`` for ``t ≥ t_max``), so the one-term recipe ``m δ_Q(ε − log t_max)`` of
    docs/ratio-methods.md is valid too; for ``ε ≥ 0`` the profile is the smaller of the two. The recipe has no
    rounding allowance on its weight (``m`` rounded up only where it is not a float), which keeps the exact edge
    ``δ = m δ_Q(∞)`` finite: one run of an ``(ε, δ)`` base at its own ``δ`` answers ``ε``, as ``fdp`` does."""

    def __init__(self, dist: Distribution, base: Profile, mixture: HingeMixture, certificate: EnvelopeCertificate):
        super().__init__(dist, base, mixture, "envelope")
        self.certificate = certificate
        self._recipe = _one_term_recipe(dist, mixture)

    def _log_delta_finite(self, eps: np.ndarray) -> np.ndarray:
        out = super()._log_delta_finite(eps)
        if self._recipe is None:
            return out
        mean, log_t = self._recipe
        nonneg = np.asarray(eps) >= 0
        if np.any(nonneg):
            recipe = math.log(mean) + np.asarray(self.base.log_delta(np.asarray(eps)[nonneg] - log_t), dtype=float)
            out = out.copy()
            out[nonneg] = np.minimum(out[nonneg], recipe if mean == 1.0 else np.nextafter(recipe, np.inf))
        return out

    @property
    def delta_at_infinity(self) -> float:
        mixture = super().delta_at_infinity
        if self._recipe is None:
            return mixture
        return min(mixture, self._recipe[0] * self.base.delta_at_infinity if self._recipe[0] == 1.0
                   else math.nextafter(self._recipe[0] * self.base.delta_at_infinity, math.inf))

    def epsilon(self, delta: float) -> float:
        """The smaller of the mixture's ``ε`` and the recipe's ``log t_max + ε_Q(δ/m)`` (``δ/m`` rounded down)."""
        value = super().epsilon(delta)
        if self._recipe is None:
            return value
        mean, log_t = self._recipe
        d = self._check_delta(delta)
        target = d if mean == 1.0 else math.nextafter(d / mean, 0.0)
        return min(value, max(0.0, log_t + self.base.epsilon(min(1.0, target))))


def _one_term_recipe(dist: Distribution, mixture: HingeMixture) -> tuple[float, float] | None:
    """``(m, log t_max)`` with ``m ≥ E[K]`` (the float mean, one step up unless exact), or ``None`` when the
    mixture has a constant (``H`` never reaches 0) or no terms."""
    if mixture.constant > 0 or mixture.weights.size == 0:
        return None
    log_t = float(mixture.log_breakpoints.max())
    if not math.isfinite(log_t):
        return None
    exact = dist.mean_mp(50)
    mean = float(exact)
    if mpmath.mpf(mean) < exact:
        mean = math.nextafter(mean, math.inf)
    return mean, log_t


def envelope_profile(dist: Distribution, base: Profile, eps_shift: float = DEFAULT_EPS_SHIFT,
                     max_cells: int = MAX_CELLS) -> EnvelopeProfile:
    """The envelope bound of docs/envelope.md (Koskela, Redberg & Wang, Theorem 4.1 taken per output).

    ``eps_shift`` is the total slack allowed against the exact envelope bound for the base's region
    boundary ``base.region_lower``: the result is at most that bound at ``ε − eps_shift`` plus
    :data:`NEGLIGIBLE` (see :class:`EnvelopeCertificate`). The boundary is valid for both
    directions of the neighbouring relation (it is derived from the symmetric profile), so the
    bound is two-sided."""
    tau = eps_shift / 2
    loss = base.max_privacy_loss
    corner = math.exp(-loss) if loss is not None and math.isfinite(loss) else 0.0
    margin = usable_float_error(dist, "envelope")
    a, b, worst, cells, converged, exact_flat = _cell_lines(dist, base.region_lower, corner, tau, max_cells, margin)
    mixture, hull_lines, chord_shift = hinge_mixture(a, b, tau)
    # the mixture's constant beyond the exact flat lines (those at a corner of the region) is a δ floor: a hull cut
    # at T_MAX keeps Ĥ(T_MAX), and lines whose slope underflowed stand flat for lines that fall
    flat = exact_flat * (1 + MIXTURE_MARGIN)
    certificate = EnvelopeCertificate(
        eps_shift=float(worst + chord_shift), delta_floor=NEGLIGIBLE + max(0.0, mixture.constant - flat), cells=cells,
        hull_lines=hull_lines,
        terms=int(mixture.weights.size), converged=converged, value_margin=margin,
    )
    return EnvelopeProfile(dist, base, mixture, certificate)
