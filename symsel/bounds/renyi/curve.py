"""The selection's RDP curve as an object, its (ε, δ) profile, and the order grids (P&S Remark 5;
optimal RDP conversion by :class:`symsel.profiles.RdpProfile`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from symsel.distributions import Distribution
from symsel.errors import NotApplicableError, ParameterError
from symsel.profiles import Profile, RdpProfile
from symsel.profiles.base import check_order, delta_by_symmetry
from symsel.profiles.dpaccounting import DpsgdProfile, rdp_poisson_subsampled_gaussian
from symsel.profiles.rdp import DEFAULT_ORDERS, SUBSAMPLED_ORDERS

#: orders of the generic Lemma 7 curve (each needs a certified sup, about 10 ms): 160 log-spaced
#: orders on [1.01, 1e4] and the integers 2..32.
LEMMA7_ORDERS = np.unique(np.concatenate([np.geomspace(1.01, 1e4, 160), np.arange(2.0, 33.0)]))
#: at most this many orders of a base's own grid are used by Lemma 7.
LEMMA7_MAX_ORDERS = 200
_METHODS = ("closed", "lemma7", "cor4")
_REGIONS = ("profile", "polygon")



# --------------------------------------------------------------------------- the curve


@dataclass(frozen=True, eq=False)
class SelectionCurve:
    """An RDP curve ``λ ↦ ε'(λ)`` of the selection, callable on arrays of orders ``λ > 1``.

    ``raw(λ)`` is a valid bound at each ``λ`` on its own; the call returns
    ``min(raw(λ), min_{λ_j ∈ grid, λ_j ≥ λ} raw(λ_j), pure_eps)`` (monotonicity of Rényi divergence,
    P&S Remark 5; ``D_λ ≤ D_∞``).

    Attributes:
        theorem: which result the curve implements (e.g. ``"Papernot-Steinke Theorem 2"``).
        raw: the per-order bound (vectorized).
        grid: the orders used for the monotone envelope (and for the conversion to ``(ε, δ)``).
        pure_eps: a bound on ``D_∞`` of the selection, when one is known.
        details: optimized parameters (``λ̂``, ``ε̂``, …) and the constants used.
        floor: a curve on the same grid that is at most this one at every order and cheap to evaluate (Lemma 7's
            attained values, :func:`~symsel.bounds.ratio.attained_log_sup`), or ``None``. Whatever changes
            ``raw`` must change ``floor`` the same monotone way (:func:`~symsel.bounds.renyi.with_bottom_output`).
    """

    theorem: str
    raw: Callable[[np.ndarray], np.ndarray]
    grid: np.ndarray
    pure_eps: float | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    floor: SelectionCurve | None = None

    @cached_property
    def _memo(self) -> dict[float, float]:
        return {}

    def raw_values(self, orders: Any) -> np.ndarray:
        """``raw`` at ``orders`` (memoized per order: Lemma 7 costs a certified sup per order)."""
        lam = np.atleast_1d(np.asarray(orders, dtype=float))
        todo = np.array(sorted({float(x) for x in lam.ravel()} - set(self._memo)))
        if todo.size:
            vals = np.asarray(self.raw(todo), dtype=float).reshape(todo.shape)
            vals = np.where(np.isnan(vals), np.inf, vals)
            self._memo.update(zip(todo.tolist(), np.maximum(vals, 0.0).tolist(), strict=True))
        return np.array([self._memo[float(x)] for x in lam.ravel()]).reshape(lam.shape)

    @cached_property
    def _suffix_min(self) -> np.ndarray:
        vals = self.raw_values(self.grid)
        return np.append(np.minimum.accumulate(vals[::-1])[::-1], np.inf)

    def __call__(self, orders: Any) -> np.ndarray:
        lam = np.asarray(orders, dtype=float)
        flat = lam.ravel()
        for x in flat[~(flat > 1)]:
            check_order(float(x), "renyi_selection")  # raises ParameterError naming the order
        finite = np.isfinite(flat)
        out = np.full(flat.shape, np.inf)
        if finite.any():
            vals = self.raw_values(flat[finite])
            idx = np.searchsorted(self.grid, flat[finite], side="left")
            out[finite] = np.minimum(vals, self._suffix_min[idx])
        if self.pure_eps is not None:
            out = np.minimum(out, self.pure_eps)
        return out.reshape(lam.shape)


class RenyiSelectionProfile(RdpProfile):
    """The ``(ε, δ)`` profile of a selection from its RDP curve (optimal conversion of
    :class:`~symsel.profiles.RdpProfile` on ``orders``).

    Attributes:
        curve: the :class:`SelectionCurve` (its ``theorem`` and ``details`` say how it was obtained).
        distribution, base: the law of ``K`` and the base mechanism's profile.
        method: ``"closed"``, ``"lemma7"`` or ``"cor4"``.
    """

    family = "renyi_selection"

    def __init__(self, curve: SelectionCurve, distribution: Distribution, base: Profile, method: str):
        spec = f"renyi_selection(dist={distribution.spec}, base={base.spec}, method={method!r})"
        super().__init__(curve, orders=curve.grid, name="renyi_selection", spec=spec, pure_eps=curve.pure_eps)
        self.curve = curve
        self.distribution = distribution
        self.base = base
        self.method = method
        self.floor: RdpProfile | None = None  # the curve's floor converted alike: below this profile (Profile.floor)
        if curve.floor is not None:
            self.floor = RdpProfile(curve.floor, orders=curve.grid, name="renyi_selection_floor",
                                    pure_eps=curve.floor.pure_eps)

    @property
    def theorem(self) -> str:
        return self.curve.theorem

    @property
    def details(self) -> Mapping[str, Any]:
        return self.curve.details


class ApproximateRenyiProfile(Profile):
    """``δ_L``-approximate RDP (P&S Lemma 20) as an ``(ε, δ)`` profile.

    With ``A = (1 − δ_L) A_1 + δ_L P`` and ``A' = (1 − δ_L) A'_1 + δ_L P'`` (the decomposition in the proof
    of Lemma 20) and joint convexity of the hockey-stick divergence,
    ``H_{e^ε}(A‖A') ≤ δ_L + (1 − δ_L) δ_inner(ε)`` for ``ε ≥ 0``, where ``inner`` bounds ``(A_1, A'_1)``.
    """

    family = "approx_renyi_selection"

    def __init__(self, inner: Profile, delta_extra: float, theorem: str, details: Mapping[str, Any] | None = None):
        if not 0.0 <= delta_extra <= 1.0:
            raise ParameterError("delta_extra", delta_extra, "a number in [0, 1]", self.family)
        self.inner = inner
        self.delta_extra = float(delta_extra)
        self.theorem = theorem
        self.details = dict(details or {})

    @property
    def spec(self) -> str:
        return f"approx_renyi_selection(inner={self.inner.spec}, delta_extra={self.delta_extra!r})"

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        d = self.delta_extra

        def nonneg(x: np.ndarray) -> np.ndarray:
            return d + (1.0 - d) * np.asarray(self.inner.delta(x), dtype=float)

        return np.clip(delta_by_symmetry(eps, nonneg), 0.0, 1.0)

    @property
    def delta_at_infinity(self) -> float:
        return self.delta_extra + (1.0 - self.delta_extra) * self.inner.delta_at_infinity

    @property
    def max_privacy_loss(self) -> float:
        inner = self.inner.max_privacy_loss
        return math.inf if self.delta_extra > 0 or inner is None else inner

    def epsilon(self, delta: float) -> float:
        """``inner.epsilon((δ − δ_L)/(1 − δ_L))``: ``inf`` for ``δ < δ_L``; at ``δ = δ_L`` the inner curve's own
        ``ε`` at ``δ = 0`` (its bound on ``D_∞``, where it has one: one run of ``approx(ε0, δ0)`` at ``δ = δ0`` answers
        ``ε0`` as every other method does)."""
        d = self._check_delta(delta)
        if d >= 1.0:
            return 0.0
        if d < self.delta_extra:
            return math.inf
        return self.inner.epsilon(min(1.0, (d - self.delta_extra) / (1.0 - self.delta_extra)))


# --------------------------------------------------------------------------- helpers


def base_rdp_curve(base: Profile, orders: Any) -> np.ndarray:
    """The base mechanism's RDP ``ε(λ)`` at ``orders`` (vectorized where the profile allows).

    Raises :class:`NotApplicableError` when the profile has no RDP curve.
    """
    lam = np.atleast_1d(np.asarray(orders, dtype=float))
    if isinstance(base, RdpProfile):
        vals = np.asarray(base._rdp_fn(lam), dtype=float).reshape(lam.shape)
    elif isinstance(base, DpsgdProfile) and base.neighbouring == "add_remove":
        vals = base.steps * rdp_poisson_subsampled_gaussian(base.q, base.sigma, lam)
    else:
        curve = base.rdp_curve(lam)
        if curve is None:
            raise NotApplicableError(
                f"renyi: the base profile {base.spec} has no RDP curve (profile.rdp returns None); "
                "the Rényi route needs D_λ(Q‖Q') — use the hockey-stick bounds instead"
            )
        vals = np.asarray(curve, dtype=float)
    vals = np.where(np.isnan(vals), np.inf, vals)
    return np.maximum(vals, 0.0)


def default_orders(base: Profile, method: str = "closed") -> np.ndarray:
    """The order grid used when none is given: the base's own grid for RDP-curve bases, the
    subsampled-Gaussian grid for DP-SGD (dp-accounting's RDP is unreliable at large fractional orders),
    else ``DEFAULT_ORDERS``. Lemma 7 (a certified sup per order) uses :data:`LEMMA7_ORDERS`, or at most
    :data:`LEMMA7_MAX_ORDERS` evenly picked orders of the base's own grid."""
    if isinstance(base, RdpProfile):
        grid = np.asarray(base.orders, dtype=float)
    elif isinstance(base, DpsgdProfile):
        grid = SUBSAMPLED_ORDERS
    else:
        return LEMMA7_ORDERS if method == "lemma7" else DEFAULT_ORDERS
    if method == "lemma7" and grid.size > LEMMA7_MAX_ORDERS:
        grid = grid[np.unique(np.linspace(0, grid.size - 1, LEMMA7_MAX_ORDERS).round().astype(int))]
    return grid


def _orders(orders: Any, base: Profile, method: str) -> np.ndarray:
    if orders is None:
        return np.unique(np.asarray(default_orders(base, method), dtype=float))
    if isinstance(orders, str | bytes) or not hasattr(orders, "__iter__"):
        raise ParameterError("orders", orders, "a list of Rényi orders > 1", "renyi")
    grid = np.asarray(list(orders), dtype=float)
    if grid.ndim != 1 or grid.size == 0 or np.any(~(grid > 1)) or np.any(~np.isfinite(grid)):
        bad = grid[~(grid > 1) | ~np.isfinite(grid)]
        shown = float(bad[0]) if bad.size else list(orders)
        raise ParameterError("orders", shown, "finite Rényi orders > 1", "renyi")
    return np.unique(grid)


def _check_inputs(dist: Any, base: Any, method: str, where: str) -> None:
    if not isinstance(dist, Distribution):
        raise ParameterError("dist", dist, "a symsel Distribution", where)
    if not isinstance(base, Profile):
        raise ParameterError("base", base, "a symsel Profile", where)
    if method not in _METHODS:
        raise ParameterError("method", method, "one of " + ", ".join(map(repr, _METHODS)), where)


def _pure_loss(base: Profile) -> float | None:
    """``D_∞`` of the base when finite (pure DP), else ``None``."""
    loss = base.max_privacy_loss
    if loss is None or not math.isfinite(loss):
        return None
    return float(loss)
