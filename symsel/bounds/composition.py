"""The composition bound and the head/tail split (docs/composition.md).

Given ``K = k`` the selection only post-processes the ``k``-fold product of the base's dominating
pair, and the hockey-stick divergence is jointly convex, so for every real ``ε``

    δ_A(ε) ≤ Σ_k P[K=k] δ_{Q^⊗k}(ε)  +  P[K = 0] [1 − e^ε]_+ .

More generally, for any split of the law of ``K`` into a mixture ``Σ_j w_j L_j`` the selection's
output law is the same mixture of the selections under ``L_j`` (for both inputs), so
``δ_A ≤ Σ_j w_j δ_{A_j}`` with any valid bound for each part. The split used here puts every
``k ≤ k0`` in the head (composition, one ``k`` at a time) and ``K`` conditioned on ``K > k0`` in the
tail (the envelope bound, or any other method).

``δ_{Q^⊗k}`` is the base's own: each base answers for its ``k``-fold composition (:mod:`symsel.profiles.composition`,
through :meth:`~symsel.profiles.Profile.self_composed` and :meth:`~symsel.profiles.Profile.weighted_compositions`);
this module only weighs the ``δ_k`` by the law of ``K`` and knows no profile type.

Numerics. ``k ↦ δ_{Q^⊗k}(ε)`` is non-decreasing (dropping one of ``k + 1`` runs is a post-processing),
so the masses of a law with many support points are pooled into at most :data:`MAX_ANCHORS` bins of nearly equal
``k`` and each bin is charged ``δ`` at its largest ``k``: an upper bound. Mass outside the window of support
points that is evaluated (laws with more than :data:`MAX_SUPPORT` points) is charged ``δ = 1``.
Masses are summed at 50 digits and rounded up.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import mpmath
import numpy as np
from scipy import special

from symsel.distributions import Distribution
from symsel.errors import NotApplicableError
from symsel.memory import MIB, bounded_cache
from symsel.profiles.base import Profile
from symsel.profiles.composition import check_pld_size, composed

#: largest number of distinct ``k`` whose composed profile is evaluated (the rest are pooled, see above).
MAX_ANCHORS = 128
#: the same for bases composed by dp-accounting's PLD (each anchor is one FFT self-composition, ~0.2 s).
MAX_PLD_ANCHORS = 24
#: consecutive ``k`` are pooled while the largest is at most this multiple of the smallest.
POOL_RATIO = 1.05
#: the support is summed until the mass left is below this (it is then charged ``δ = 1``).
NEGLIGIBLE_MASS = 1e-60
#: largest number of support points of ``K`` whose masses are summed (a window around the mean).
MAX_SUPPORT = 2048
#: the same for a law known only by its PGF (no closed-form pmf): its masses are Taylor coefficients from SymPy.
MAX_SERIES_TERMS = 128


# ------------------------------------------------------------------------ a law's masses, pooled
def support_window(dist: Distribution) -> tuple[int, int]:
    """The support points whose masses are summed: all of them when there are at most
    :data:`MAX_SUPPORT`, else a window of that many centred on the mean."""
    lo = int(dist.support_min)
    if dist.support_max is not None and dist.support_max - lo + 1 <= MAX_SUPPORT:
        return lo, int(dist.support_max)
    size = MAX_SUPPORT if dist.pmf_symbolic is not None else MAX_SERIES_TERMS  # a series is expanded term by term
    mean = float(dist.mean)
    start = max(lo, int(mean) - size // 2)
    top = start + size - 1
    if dist.support_max is not None:
        top = min(top, int(dist.support_max))
    return start, top


@bounded_cache(max_entries=64, max_bytes=16 * MIB)  # a key holds its law
def pooled_masses(dist: Distribution, k_min: int = 1,
                  max_anchors: int = MAX_ANCHORS) -> tuple[tuple[int, ...], tuple[float, ...], float, bool]:
    """``(anchors, weights, outside, pooled)`` with ``Σ_{k ≥ k_min} P[K=k] δ_k ≤ Σ_j weights_j δ_{anchors_j} + outside``
    for every non-decreasing ``k ↦ δ_k ≤ 1``: consecutive support points are pooled into bins ``[k_lo, k_hi]`` with
    ``k_hi ≤ POOL_RATIO · k_lo`` (at most ``max_anchors`` bins: the ratio grows if needed), each charged at
    its largest ``k``, so a bin's ``δ`` is that of nearly the same number of runs; the mass of ``K ≥ k_min``
    outside the summed window is charged 1. Masses are summed at 50 digits and rounded up."""
    lo, hi = support_window(dist)
    lo = max(lo, k_min)
    with mpmath.workdps(50):
        head = mpmath.fsum(dist.pmf_mp(k, 50) for k in range(0, k_min))
        points, remaining = [], 1 - head
        for k in range(lo, hi + 1):
            m = dist.pmf_mp(k, 50)
            if m > 0:
                points.append((k, m))
                remaining -= m
            if remaining < NEGLIGIBLE_MASS and k >= dist.mean:  # the rest is charged in full, below
                break
        outside = max(mpmath.mpf(0), remaining)
        ratio = POOL_RATIO
        bin_start = 0
        while True:
            anchors: list[int] = []
            weights: list[mpmath.mpf] = []
            for k, m in points:
                if anchors and k <= ratio * bin_start:
                    anchors[-1] = k
                    weights[-1] += m
                else:
                    bin_start = k
                    anchors.append(k)
                    weights.append(m)
            if len(anchors) <= max_anchors:
                break
            ratio = 1 + 2 * (ratio - 1)
        up = 1 + 1e-15
        return (tuple(anchors), tuple(float(w) * up for w in weights),
                float(outside) * up + (1e-45 if outside > 0 else 0.0), len(anchors) < len(points))


# ------------------------------------------------------------------------ the bounds
class WeightedSum(Profile):
    """``δ(ε) = min(1, C + Σ_j w_j δ_j(ε) + P[K = 0] [1 − e^ε]_+)``, in log space: a split of the law of
    ``K`` into parts, each bounded by its own profile ``δ_j`` (joint convexity of the hockey-stick)."""

    family = "selection"

    def __init__(self, parts: Sequence[tuple[float, Profile]], constant: float, p0: float, label: str):
        self.parts = tuple((float(w), profile) for w, profile in parts if w > 0)
        self.constant, self.p0, self._label = float(constant), float(p0), label

    @property
    def spec(self) -> str:
        return self._label

    @property
    def delta_at_infinity(self) -> float:
        return min(1.0, self.constant + sum(w * p.delta_at_infinity for w, p in self.parts))

    @property
    def max_privacy_loss(self) -> float | None:
        if self.constant > 0:
            return math.inf
        losses = [p.max_privacy_loss for _, p in self.parts]
        return None if any(x is None for x in losses) else max((x for x in losses if x is not None), default=0.0)

    def _log_delta_finite(self, eps: np.ndarray) -> np.ndarray:
        eps = np.asarray(eps, dtype=float)
        logs = [math.log(w) + np.asarray(p.log_delta(eps), dtype=float) for w, p in self.parts]
        if self.constant > 0:
            logs.append(np.full(eps.shape, math.log(self.constant)))
        if self.p0 > 0:
            with np.errstate(divide="ignore"):
                logs.append(math.log(self.p0) + np.log(np.maximum(-np.expm1(np.minimum(eps, 0.0)), 0.0)))
        if not logs:
            return np.full(eps.shape, -np.inf)
        total = special.logsumexp(np.stack(logs), axis=0) + (len(logs) + 1) * 1e-15
        return np.minimum(total, 0.0)

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        with np.errstate(under="ignore"):
            return np.minimum(1.0, np.exp(self._log_delta_finite(eps)) * (1 + 1e-15))


def composition_profile(dist: Distribution, base: Profile) -> tuple[Profile, dict[str, object]]:
    """The composition bound ``Σ_k P[K=k] δ_{Q^⊗k}(ε) + P[K=0][1 − e^ε]_+`` (docs/composition.md), with
    the masses pooled by :func:`pooled_masses`; returns the profile and its certificate. A fixed ``K = k`` is
    the composed profile itself, with nothing added: at the edge ``δ = δ_{Q^⊗k}(∞)`` (one run of an
    ``(ε, δ)``-DP base asked at that ``δ``) the answer is the profile's own ``ε``, not ``inf``."""
    if dist.support_min == dist.support_max and dist.support_min >= 1:
        profile, route = composed(base, int(dist.support_min))
        return profile, {"anchors": 1, "pooled": False, "outside_mass": 0.0, "composition": route}
    check_spread(dist)
    exact_route = base.exact_composition
    anchors, weights, outside, pooled = pooled_masses(dist, 1, MAX_ANCHORS if exact_route else MAX_PLD_ANCHORS)
    together = base.weighted_compositions(anchors, weights)  # e.g. every μ√k in one vectorized evaluation
    parts: list[tuple[float, Profile]]
    if together is not None:
        parts, routes = [(1.0, together[0])], {together[1]}
    else:
        if not exact_route and max(anchors, default=1) > 1:  # through dp-accounting:
            check_pld_size(base, max(anchors))  # refused at once if too large, before any anchor is composed
        parts, routes = [], set()
        for k, w in zip(anchors, weights, strict=True):
            profile, route = composed(base, k)
            parts.append((w, profile))
            routes.add(route)
    label = f"selection(dist={dist.spec}, base={base.spec}, method='composition')"
    certificate = {"anchors": len(anchors), "pooled": pooled, "outside_mass": outside,
                   "composition": "; ".join(sorted(routes))}
    return WeightedSum(parts, outside, float(dist.p0), label), certificate


def check_spread(dist: Distribution) -> None:
    """Refuse laws whose mass around the mean spans more than :data:`MAX_SUPPORT` support points (12 standard
    deviations): the window summed would leave mass charged ``δ = 1`` that decides the answer."""
    if dist.support_max is not None and dist.support_max - dist.support_min + 1 <= MAX_SUPPORT:
        return
    spread = 12 * math.sqrt(max(0.0, float(dist.variance)))
    if not spread <= MAX_SUPPORT:
        raise NotApplicableError(
            f"method 'composition': {dist.spec} spreads over about {spread:.3g} support points around its mean (12 "
            f"standard deviations), more than the {MAX_SUPPORT} whose masses are summed; its composition bound would "
            "be vacuous anyway (that many composed runs leak far more than their best)")
