"""The selection handed back to dp-accounting: a pessimistic ``PrivacyLossDistribution`` of a selection bound.

The construction is dp-accounting's own pessimistic *connect-the-dots* (Doroshenko, Ghazi, Kamath, Kumar,
Manurangsi, *Connect the Dots*, PETS 2022, Algorithm 1): given ``δ_i = δ(ε_i)`` on an increasing grid it
builds the PLD supported on the grid (plus ``+∞`` with mass ``δ_n``) whose hockey-stick curve passes through
every ``(ε_i, δ_i)`` and is linear in ``e^ε`` between them.

Why it dominates. The true hockey-stick curve of any mechanism is convex in ``e^ε``. symsel's ``δ_i`` are
upper bounds on the selection's true curve, so the chords between them lie above the true curve, and past the
last grid point the PLD keeps ``δ_n``. The exported PLD is therefore a pessimistic PLD of the selection
mechanism itself, and composes in dp-accounting with anything else (DP-SGD for a final release, a second
tuning round). For the ``envelope`` method the bound itself is convex in ``e^ε`` (a sum of shifted base
profiles), so the PLD also dominates the bound between grid points, except next to the point where the bound
reaches its cap ``δ = 1``: a capped curve has a concave knee there that no PLD's (convex) curve can follow, and the
PLD dominates the true selection, not the capped bound. ``best`` (a pointwise minimum) need not be convex either.

The grid covers ``[-E, E]`` with ``E = ε(δ = 1e-300)`` of the bound (at most :data:`MAX_EPSILON`), in
``points`` steps rounded to dp-accounting's discretization interval; at ``ε < 0`` the bound is tightened by the
hockey-stick duality ``δ(ε) = 1 − e^ε + e^ε δ'(−ε)`` with the two-sided bound for ``δ'``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from symsel import validate
from symsel.errors import ParameterError
from symsel.profiles.base import Profile

#: the grid's half-width cap (``e^ε`` stays finite; δ there is far below float precision for any real bound).
MAX_EPSILON = 200.0
DEFAULT_POINTS = 4001
#: the most grid points of an export (``points``): each costs an evaluation of the bound and 8 bytes per array, and
#: dp-accounting's PLD spans the grid's range at ``discretization`` anyway.
MAX_POINTS = 1_000_001
DEFAULT_DISCRETIZATION = 1e-4
#: grid points at which the costly components of ``best`` (``interval``: 0.02–0.15 s per ``ε``) are evaluated; the
#: other points keep the cheaper components' values.
COSTLY_POINTS = 40


def split_costly(profile: Profile) -> tuple[Profile, list[Profile]]:
    """The part of ``profile`` cheap to evaluate at every grid point and its costly parts
    (:meth:`~symsel.profiles.Profile.split_costly`: for ``best``, the pointwise minimum of every component but
    ``interval``, and ``interval``); any other profile is returned whole, with no costly part."""
    return profile.split_costly()


def lowered_at_some_points(eps: np.ndarray, deltas: np.ndarray, costly: list[Profile]) -> np.ndarray:
    """``deltas`` lowered to the costly components' values at :data:`COSTLY_POINTS` grid points spread (in ``ε``)
    over the stretch where the curve lies in ``[1e-15, 0.5]``: the connect-the-dots PLD and its convex minorant
    then follow the tighter component between those points (module docstring: any upper bound at any grid point is
    valid)."""
    inside = np.flatnonzero((deltas >= 1e-15) & (deltas <= 0.5))
    if inside.size == 0:
        return deltas
    chosen = np.unique(inside[np.round(np.linspace(0, inside.size - 1, COSTLY_POINTS)).astype(int)])
    out = deltas.copy()
    for part in costly:
        out[chosen] = np.minimum(out[chosen], np.clip(_costly_values(part, eps[chosen], out[chosen]), 0.0, 1.0))
    return out


def _costly_values(part: Profile, eps: np.ndarray, cheap: np.ndarray) -> np.ndarray:
    """``part.delta(eps)`` where it is below ``cheap``; elsewhere possibly only some value above ``cheap`` (the
    minimum with ``cheap`` is the same): an interval bound over several dominating pairs (DP-SGD's two directions)
    stops at the first pair over ``cheap`` (:meth:`~symsel.bounds.interval.CellBoundProfile.delta_or_more_than`)."""
    ask = getattr(getattr(part, "profile", None), "delta_or_more_than", None)
    if ask is None:
        return np.asarray(part.delta(eps), dtype=float)
    return np.array([ask(float(e), float(c)) if e >= 0 else float(part.delta(float(e)))
                     for e, c in zip(eps, cheap, strict=True)])


def export_grid(profile: Profile, points: int = DEFAULT_POINTS, discretization: float = DEFAULT_DISCRETIZATION,
                floor: float = 1e-300) -> tuple[np.ndarray, np.ndarray]:
    """``(rounded ε indices, δ)``: the connect-the-dots grid of :func:`to_pld` (ε = index × discretization)."""
    points = validate.integer(points, "points", "to_pld", lo=3, hi=MAX_POINTS)
    discretization = validate.positive(discretization, "discretization", "to_pld")
    top = float(profile.epsilon(floor))
    top = MAX_EPSILON if not math.isfinite(top) or top > MAX_EPSILON else max(top, 10 * discretization)
    eps = np.linspace(-top, top, points)
    rounded = np.round(eps / discretization).astype(np.int64)
    rounded[-1] = math.ceil(top / discretization)  # the grid must reach the top: a bound with a finite largest loss
    rounded = np.unique(rounded)  # rounded below it would leave its last mass at +inf, and every ε infinite
    grid = rounded * discretization
    cheap, costly = split_costly(profile)  # best's interval only at COSTLY_POINTS points
    deltas = np.asarray(cheap.delta(grid), dtype=float)
    if costly:
        deltas = lowered_at_some_points(grid, deltas, costly)
    # ε < 0 by duality, H_{e^ε}(A‖A') = 1 − e^ε + e^ε H_{e^-ε}(A'‖A), with the (two-sided) bound at −ε: a capped
    # δ = 1 there would not be the curve of any PLD (connect-the-dots would then put more than mass 1 on it).
    negative = grid < 0
    mirrored = -np.expm1(grid[negative]) + np.exp(grid[negative]) * np.asarray(cheap.delta(-grid[negative]))
    deltas[negative] = np.minimum(deltas[negative], mirrored)
    return rounded, lower_convex_hull(np.exp(grid), np.clip(deltas, 0.0, 1.0))


def lower_convex_hull(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The greatest convex minorant of the points ``(x_i, y_i)`` and ``(0, 1)``, evaluated at ``x`` (sorted).

    The true hockey-stick curve ``δ`` of any pair is convex in ``x = e^ε`` with ``δ = 1`` at ``x = 0``; it lies
    below every bound ``y_i``, so it lies below this minorant too, which is itself convex: the curve of a proper
    PLD (non-negative masses summing to 1), as connect-the-dots needs."""
    px, py = np.concatenate([[0.0], x]), np.concatenate([[1.0], y])
    hull: list[int] = []
    for i in range(px.size):  # Andrew's monotone chain, lower half
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            cross = (px[b] - px[a]) * (py[i] - py[a]) - (py[b] - py[a]) * (px[i] - px[a])
            if cross > 0:
                break
            hull.pop()
        hull.append(i)
    values = np.interp(x, px[hull], py[hull])
    return np.minimum(values, y)


def to_pld(profile: Profile, points: int = DEFAULT_POINTS,
           discretization: float = DEFAULT_DISCRETIZATION) -> Any:
    """A dp-accounting ``PrivacyLossDistribution`` (symmetric: the same for add and remove) that dominates the
    selection whose bound is ``profile`` (module docstring); compose it with ``pld.compose(other)``. ``points``: at
    least 3, at most :data:`MAX_POINTS`."""
    from dp_accounting.pld import pld_pmf, privacy_loss_distribution

    if not isinstance(profile, Profile):
        raise ParameterError("profile", repr(profile), "a symsel Profile (e.g. symsel.bound(law, base))", "to_pld")
    rounded, deltas = export_grid(profile, points, discretization)
    pmf = pld_pmf.create_pmf_pessimistic_connect_dots(discretization, rounded, deltas)
    return privacy_loss_distribution.PrivacyLossDistribution(pmf)


def to_pld_arrays(profile: Profile, points: int = DEFAULT_POINTS,
                  discretization: float = DEFAULT_DISCRETIZATION) -> Any:
    """The masses of :func:`to_pld` as symsel's own :class:`~symsel.profiles.dpaccounting.PldArrays` (symmetric), for
    what needs the arrays (dominating pairs): the pessimistic connect-the-dots masses of the grid of
    :func:`export_grid` (Doroshenko et al., PETS 2022, Algorithm 1; the operations of dp-accounting's
    ``create_pmf_pessimistic_connect_dots``: at ``ε_i`` the mass ``(δ_i − δ_{i−1})/(e^{ε_{i−1} − ε_i} − 1) +
    (δ_{i+1} − δ_i)/(e^{ε_{i+1} − ε_i} − 1)``, with ``δ_0 = 1`` at ``−∞`` and no second term at the last point,
    negative masses raised to 0), zeros between grid points, and ``δ`` of the last point at ``+∞``."""
    from symsel.profiles.dpaccounting import PldArrays, PmfArrays

    if not isinstance(profile, Profile):
        raise ParameterError("profile", repr(profile), "a symsel Profile (e.g. symsel.bound(law, base))",
                             "to_pld_arrays")
    rounded, deltas = export_grid(profile, points, discretization)
    rounded = np.asarray(rounded, dtype=int)
    deltas = np.minimum.accumulate(np.asarray(deltas, dtype=float))
    gaps, steps = np.diff(rounded) * discretization, np.diff(deltas)
    masses = np.maximum(0.0, np.append(1 - deltas[0], steps / np.expm1(-gaps)) + np.append(steps / np.expm1(gaps), 0.0))
    probs = np.zeros(int(rounded[-1] - rounded[0]) + 1)
    probs[rounded - rounded[0]] = masses
    return PldArrays(PmfArrays(discretization, int(rounded[0]), probs, float(deltas[-1])))


def compose(profiles: list[Profile]) -> Any:
    """The dp-accounting composition of several mechanisms given by symsel profiles (selections, or base
    profiles such as ``dpsgd(...)``), each exported by :func:`to_pld` on the same discretization and composed
    exactly (no tail truncation: a mechanism with ``δ ≈ 1`` up to :data:`MAX_EPSILON`, such as
    ``gaussian(sigma=1e-3)``, has all but 1e-16 of its mass at ``+∞``, which dp-accounting's truncation would
    leave with no finite support at all)."""
    if not profiles:
        raise ParameterError("profiles", profiles, "at least one profile", "compose")
    pld = to_pld(profiles[0])
    for other in profiles[1:]:
        pld = pld.compose(to_pld(other), tail_mass_truncation=0.0)
    return pld
