"""A selection's profile as a mixture of shifted base profiles (docs/ratio-methods.md, §4b).

Every hockey-stick bound of symsel has the form

    δ_A(ε) ≤ min(1, C + Σ_i c_i δ_Q(ε − log t_i) + P[K = 0] [1 − e^ε]_+),

one term ``(c, t) = (E[K], R)`` for the ratio recipe of Koskela, Redberg & Wang's Theorem 4.1
(:mod:`symsel.bounds.hockey_stick`), many for the envelope bound (:mod:`symsel.bounds.envelope`), whose
hinge decomposition ``H(t) ≤ C + Σ_i c_i [1 − t/t_i]_+`` supplies them. The ``K = 0`` atom is the same
symbol ``⊥`` for both inputs and only counts for ``ε < 0``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from symsel.distributions import Distribution
from symsel.profiles import Profile
from symsel.profiles.region import ArrayLike

#: relative allowance per term for the rounding of the log-sum-exp (a few ulps per term).
SUM_ALLOWANCE = 1e-15
#: the most terms (ε values times breakpoints) evaluated in one array: a few MB, reused by the allocator (arrays of
#: tens of MB are mapped and unmapped by the system at every step: as much system time as computing).
CHUNK_TERMS = 200_000


@dataclass(frozen=True)
class HingeMixture:
    """``G(t) = constant + Σ_i weights_i [1 − t/breakpoints_i]_+`` with ``G ≥ H`` on ``t ≥ 0``."""

    log_breakpoints: np.ndarray
    weights: np.ndarray
    constant: float

    def __call__(self, t: ArrayLike) -> np.ndarray:
        """``G(t)`` (vectorized; for tests and plots)."""
        tt = np.atleast_1d(np.asarray(t, dtype=float))
        with np.errstate(over="ignore", invalid="ignore"):  # a subnormal breakpoint: e^{-log t_i} overflows
            scaled = tt[:, None] * np.exp(-self.log_breakpoints)[None, :]
        scaled = np.where(tt[:, None] == 0.0, 0.0, scaled)  # t = 0: every hinge is 1 (not 0 * inf)
        hinge = np.maximum(0.0, 1.0 - scaled)
        return self.constant + hinge @ self.weights

    @property
    def total(self) -> float:
        """``G(0)``: at least ``E[K]``."""
        return float(self.constant + self.weights.sum())


class MixtureProfile(Profile):
    """``δ_A(ε) = min(1, C + Σ_i c_i δ_Q(ε − log t_i) + P[K=0][1 − e^ε]_+)``, evaluated in log space."""

    family = "selection"

    def __init__(self, dist: Distribution, base: Profile, mixture: HingeMixture, method: str):
        self.dist = dist
        self.base = base
        self.mixture = mixture
        self.method = method
        self.p0 = float(dist.p0)
        with np.errstate(divide="ignore"):
            self._log_weights = np.log(mixture.weights)

    @property
    def spec(self) -> str:
        return f"selection(dist={self.dist.spec}, base={self.base.spec}, method={self.method!r})"

    def _terms(self, eps: np.ndarray) -> np.ndarray:
        shifted = eps[:, None] - self.mixture.log_breakpoints[None, :]
        return np.asarray(self.base.log_delta(shifted.ravel()), dtype=float).reshape(shifted.shape)

    def _log_delta_finite(self, eps: np.ndarray) -> np.ndarray:
        eps = np.asarray(eps, dtype=float)
        flat = eps.ravel()
        chunk = max(1, CHUNK_TERMS // max(1, self.mixture.weights.size))
        pieces = []
        for start in range(0, flat.size, chunk):
            part = flat[start:start + chunk]
            parts = [_logsumexp_rows(self._terms(part) + self._log_weights[None, :])] if self._log_weights.size else []
            if self.mixture.constant > 0:
                parts.append(np.full(part.shape, math.log(self.mixture.constant)))
            if self.p0 > 0:
                with np.errstate(divide="ignore", over="ignore"):  # e^ε overflows past ε = 709.8: the term is 0
                    parts.append(np.log(self.p0 * np.maximum(0.0, -np.expm1(part))))
            pieces.append(np.logaddexp.reduce(np.vstack(parts), axis=0) if parts else np.full(part.shape, -np.inf))
        out = np.concatenate(pieces).reshape(eps.shape) if pieces else np.full(eps.shape, -np.inf)
        return np.minimum(0.0, out + SUM_ALLOWANCE * (self.mixture.weights.size + 2))

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        return np.exp(self._log_delta_finite(eps))

    @property
    def delta_at_infinity(self) -> float:
        return self._delta_at_infinity

    @cached_property
    def _delta_at_infinity(self) -> float:
        """Computed once: the mixture and the base are fixed, and an envelope of many terms took 6-10 ms a call,
        which a pipeline or a search asks at every step."""
        with np.errstate(invalid="ignore"):
            tail = float(self.mixture.weights @ np.where(np.isinf(self.mixture.log_breakpoints), 1.0,
                                                         self.base.delta_at_infinity))
        return float(min(1.0, (tail + self.mixture.constant) * (1 + 1e-12)))

    @property
    def max_privacy_loss(self) -> float | None:
        loss = self.base.max_privacy_loss
        if loss is None:
            return None
        if self.mixture.constant > 0:
            return math.inf
        if self.mixture.weights.size == 0:
            return 0.0
        return loss + float(self.mixture.log_breakpoints.max())

    def epsilon(self, delta: float) -> float:
        """Smallest ``ε ≥ 0`` with the bound ``≤ delta``. One term and no constant: ``log t + ε_Q(δ/c)``
        (exact for this profile where it is ``≥ 0``, as conservative as ``ε_Q``); otherwise the generic
        conservative search."""
        d = self._check_delta(delta)
        if self.mixture.weights.size == 1 and self.mixture.constant == 0:
            if d > 0 and float(self.log_delta(0.0)) <= math.log(d):  # includes d = 1: δ_A(0) ≤ 1 always
                return 0.0
            log_t = float(self.mixture.log_breakpoints[0])
            if math.isinf(log_t):
                return 0.0 if d >= 1.0 else math.inf
            candidate = log_t + self.base.epsilon(min(1.0, d / float(self.mixture.weights[0])))
            if candidate > 0 or not math.isfinite(candidate):
                return candidate
        return super().epsilon(d)


def _logsumexp_rows(logs: np.ndarray) -> np.ndarray:
    top = np.max(logs, axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(under="ignore", divide="ignore", invalid="ignore"):
        total = np.log(np.sum(np.exp(logs - safe[:, None]), axis=1)) + safe
    return np.where(np.isneginf(top), -np.inf, np.where(np.isposinf(top), np.inf, total))
