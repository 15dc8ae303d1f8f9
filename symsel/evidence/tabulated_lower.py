"""A finite pair for a tabulated base, so that it has a certified lower bound (docs/lower-bounds.md, "Tabulated
bases").

A ``tabulated(eps_grid, deltas)`` base stands for every mechanism whose two-sided profile is at most the table's
conservative interpolation ``δ̄`` (:mod:`symsel.profiles.tabulated`); ``best`` bounds the worst case over that class.
A lower bound needs one member of the class. Write ``γ = e^ε`` and take the points ``(1, δ̄(0))`` and
``(e^{ε_i}, δ_i)`` for ``ε_i > 0``, their lower convex hull ``h``, and beyond the last point the constant
``δ_last``. ``h`` is convex, non-increasing and piecewise linear; at each hull vertex ``γ_k`` its slope rises by
``c_k ≥ 0``. The pair

* for every vertex, an atom with masses ``(γ_k c_k, c_k)`` and its mirror ``(c_k, γ_k c_k)``;
* ``δ_last`` at loss ``+∞`` (``(δ_last, 0)``) and its mirror ``(0, δ_last)``;
* the rest, equal on both sides, in one atom of ratio 1,

is symmetric (swapping its laws mirrors its atoms), and ``H_γ(P ‖ Q) = Σ_k [γ_k c_k − γ c_k]_+ + δ_last = h(γ)``
for ``γ ≥ 1``: the mirrored atoms and the middle one have ratio at most 1 and add nothing. So its profile equals
``h`` for ``ε ≥ 0``, which is at most the table at its points and, ``h`` being convex, at most the chord (and the step)
between them; for ``ε < 0`` the symmetry identity ``δ(ε) = 1 − e^ε + e^ε δ(−ε)`` of a symmetric pair keeps it below
the table's bound there too. If the atoms need more than mass 1, all of them are scaled down (a smaller profile, still
in the class). The pair is a member of the class, so its selection's exact ``ε`` is a lower bound on ``best``'s
worst case, with no assumption on the table. If the table is also the *exact* profile of the mechanism at its points,
the pair has that profile at the points, and the bound speaks of that mechanism's class as tightly as the table
allows; between the points nothing is known, and the pair takes the smallest convex profile through them.
"""

from __future__ import annotations

import itertools
from typing import Any

import mpmath

from symsel.pairs.finite import FinitePair

#: digits of the pair's masses.
DPS = 50
#: every atom but the middle one shrunk by this relative amount, far above the rounding of :data:`DPS` digits: the
#: pair's profile stays strictly below the table.
SHRINK = mpmath.mpf("1e-30")
#: grid points beyond this ``ε`` are moved down to it (the table's δ there is at least theirs).
MAX_EPSILON = 700.0


def _lower_hull(points: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """The lower convex hull of points sorted by their first coordinate (monotone chain)."""
    hull: list[tuple[Any, Any]] = []
    for p in points:
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (p[1] - y1) - (y2 - y1) * (p[0] - x1) <= 0:  # hull[-1] on or above the chord
                hull.pop()
            else:
                break
        hull.append(p)
    return hull


def tabulated_pair(profile: Any) -> FinitePair:
    """The symmetric finite pair whose profile is the lower convex hull of ``profile``'s table (module docstring)."""
    with mpmath.workdps(DPS):
        grid = [float(e) for e in profile.eps_grid]
        deltas = [float(d) for d in profile.deltas]
        points = {mpmath.mpf(1): mpmath.mpf(float(profile.delta(0.0)))}
        for e, d in zip(grid, deltas, strict=True):
            if e > 0:  # a point beyond MAX_EPSILON is moved down to it: the table there is at least its δ
                gamma = mpmath.exp(mpmath.mpf(min(e, MAX_EPSILON)))
                points[gamma] = min(points.get(gamma, mpmath.mpf(1)), mpmath.mpf(d))
        hull = _lower_hull(sorted(points.items()))
        slopes = [(y2 - y1) / (x2 - x1) for (x1, y1), (x2, y2) in itertools.pairwise(hull)]
        slopes.append(mpmath.mpf(0))  # flat at the last point's δ beyond it
        last = hull[-1][1]
        up: list[Any] = []
        down: list[Any] = []
        for (gamma, _), left, right in zip(hull[1:], slopes[:-1], slopes[1:], strict=True):
            jump = right - left
            if jump > 0:
                up.append(gamma * jump)
                down.append(jump)
        shrink = 1 - SHRINK
        up = [x * shrink for x in up]
        down = [x * shrink for x in down]
        infinity = last * shrink
        used = mpmath.fsum(up) + mpmath.fsum(down) + infinity
        if used > 1:
            up = [x / used for x in up]
            down = [x / used for x in down]
            infinity /= used
            used = mpmath.mpf(1)
        middle = max(mpmath.mpf(0), 1 - used)
        p = [*up, *down, infinity, mpmath.mpf(0), middle]
        q = [*down, *up, mpmath.mpf(0), infinity, middle]
        keep = [i for i in range(len(p)) if p[i] > 0 or q[i] > 0]
        label = f"pair realizing the hull of {profile.spec}"
        return FinitePair([p[i] for i in keep], [q[i] for i in keep], label=label)
