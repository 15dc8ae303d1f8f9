"""A profile known only on a grid of ``ε``: conservative interpolation.

Given upper bounds ``δ_i ≥ δ(ε_i)`` on a strictly increasing grid, two facts about every privacy profile
make the values between grid points safe:

* ``δ`` is non-increasing in ``ε``: ``δ(ε) ≤ δ_i`` on ``[ε_i, ε_{i+1})`` and ``δ(ε) ≤ δ_last`` beyond
  the grid (``interpolation="step"``, the default);
* ``δ`` is convex in ``γ = e^ε`` (a supremum of hockey-stick divergences ``Σ[P − γR]_+``, each convex
  in ``γ``): the chord in ``γ`` between two grid points is also an upper bound
  (``interpolation="convex"``, tighter than the step).

Below the first grid point (including negative ``ε``) the chord in ``γ`` from ``(γ = 0, δ = 1)`` to
``(e^ε_0, δ_0)`` is used: ``δ(ε) ≤ 1 − (1 − δ_0) e^(ε − ε_0)``. This is always valid (convexity and
``H_0 = 1``) and tighter than the trivial bound 1; the tempting ``max(δ_0, 1 − e^ε)`` is a *lower*
bound and is not safe. For ``ε < 0`` the symmetry identity ``δ(ε) = 1 − e^ε + e^ε δ(−ε)`` applied
to the table is used too when ``−ε`` lies on the grid's range, and the smaller of the two is taken.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from symsel import validate as v
from symsel.errors import ParameterError
from symsel.profiles.base import Profile


class TabulatedProfile(Profile):
    """A profile tabulated as ``deltas[i] ≥ δ(eps_grid[i])`` and interpolated conservatively."""

    family = "tabulated"

    def __init__(self, eps_grid: Sequence[float], deltas: Sequence[float], interpolation: str = "step"):
        where = "tabulated"
        eps = _as_list(eps_grid, "eps_grid", where)
        dels = _as_list(deltas, "deltas", where)
        if len(eps) != len(dels):
            raise ParameterError("deltas", dels, f"a list of the same length as eps_grid ({len(eps)})", where)
        for e in eps:
            v.real(e, "eps_grid", where, allowed="finite real numbers, strictly increasing")
            if not math.isfinite(float(e)):
                raise ParameterError("eps_grid", eps, "finite real numbers, strictly increasing", where)
        for d in dels:
            v.probability(d, "deltas", where)
        e_arr, d_arr = np.asarray(eps, dtype=float), np.asarray(dels, dtype=float)
        if np.any(np.diff(e_arr) <= 0):
            raise ParameterError("eps_grid", eps, "finite real numbers, strictly increasing", where)
        if np.any(np.diff(d_arr) > 0):
            raise ParameterError("deltas", dels, "numbers in [0, 1], non-increasing", where)
        self.eps_grid = e_arr
        self.deltas = d_arr
        self.interpolation = v.choice(interpolation, "interpolation", where, ("step", "convex"))

    @property
    def spec(self) -> str:
        extra = "" if self.interpolation == "step" else f", interpolation={self.interpolation!r}"
        grid = [float(x) for x in self.eps_grid]
        deltas = [float(x) for x in self.deltas]
        return f"tabulated(eps_grid={grid!r}, deltas={deltas!r}{extra})"

    def _table(self, eps: np.ndarray) -> np.ndarray:
        """The table's bound for ``ε ≥ ε_0`` (step or γ-chord), ``+inf`` for ``ε < ε_0``."""
        g, d = self.eps_grid, self.deltas
        i = np.searchsorted(g, eps, side="right") - 1  # ε_i ≤ ε < ε_{i+1}
        inside = i >= 0
        ic = np.clip(i, 0, g.size - 1)
        out = np.where(inside, d[ic], np.inf)
        if self.interpolation == "convex" and g.size > 1:
            j = np.clip(ic + 1, 0, g.size - 1)
            has_next = inside & (i < g.size - 1)
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                # weight of the right point in γ: (e^ε − e^ε_i)/(e^ε_{i+1} − e^ε_i), computed stably
                w = np.expm1(eps - g[ic]) / np.expm1(g[j] - g[ic])
            chord = d[ic] + np.clip(w, 0.0, 1.0) * (d[j] - d[ic])
            out = np.where(has_next, np.minimum(out, chord), out)
        return out

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        g0, d0 = self.eps_grid[0], self.deltas[0]
        below = 1.0 - (1.0 - d0) * np.exp(np.minimum(eps - g0, 0.0))
        out = np.where(eps >= g0, self._table(eps), below)
        neg = eps < 0
        if np.any(neg):
            en = eps[neg]
            via_symmetry = -np.expm1(en) + np.exp(en) * np.minimum(self._table(-en), 1.0)
            # δ is non-increasing, so the symmetric bound at every reflected grid point -ε_i ≤ ε also
            # applies: min over {i : ε_i ≥ −ε} of 1 − e^(−ε_i)(1 − δ_i) (a suffix minimum).
            g, d = self.eps_grid, self.deltas
            at_points = -np.expm1(-g) + np.exp(-g) * d
            suffix_min = np.minimum.accumulate(at_points[::-1])[::-1]
            j = np.searchsorted(g, -en, side="left")
            from_points = np.where(j < g.size, suffix_min[np.minimum(j, g.size - 1)], np.inf)
            out[neg] = np.minimum(out[neg], np.minimum(via_symmetry, from_points))
        return np.clip(out, 0.0, 1.0)

    @property
    def delta_at_infinity(self) -> float:
        return float(self.deltas[-1])

    def region_eps_grid(self) -> np.ndarray:
        """Step: the grid points ``≥ 0`` and 0 (exact: a constraint at ``ε > ε_i`` with the same
        ``δ_i`` is weaker than the one at ``ε_i``); convex: those plus the generic uniform grid."""
        points = np.concatenate([[0.0], self.eps_grid[self.eps_grid >= 0]])
        if self.interpolation == "convex":
            points = np.concatenate([points, super().region_eps_grid()])
        return np.unique(points)

    @property
    def max_privacy_loss(self) -> float:
        zero = np.flatnonzero(self.deltas == 0)
        return float(self.eps_grid[zero[0]]) if zero.size else math.inf

    def epsilon(self, delta: float) -> float:
        """Step interpolation: the first grid point with ``δ_i ≤ delta`` (exact for the step profile)."""
        if self.interpolation != "step":
            return super().epsilon(delta)
        d = self._check_delta(delta)
        if self.delta(0.0) <= d:
            return 0.0
        ok = np.flatnonzero(self.deltas <= d)
        return max(0.0, float(self.eps_grid[ok[0]])) if ok.size else math.inf


def _as_list(values: object, name: str, where: str) -> list:
    if isinstance(values, str | bytes) or not hasattr(values, "__iter__"):
        raise ParameterError(name, values, "a non-empty list of numbers", where)
    out = list(values)
    if not out:
        raise ParameterError(name, out, "a non-empty list of numbers", where)
    return out
