"""Report Noisy Max (RNM) over additive-noise mechanisms: Koskela, Redberg & Wang, *Privacy Profiles for
Private Selection*, ICML 2024, Section 3 (docs/rnm.md).

``M(X) = argmax_{i ∈ [m]} f_i(X) + Z_i`` with sensitivity-1 queries ``f_i`` and i.i.d. noise ``Z_i``.
Write ``δ_Δ`` for the privacy profile of the additive-noise mechanism ``f + Z`` at sensitivity ``Δ``;
``Δ = 2`` in general and ``Δ = 1`` when the queries move monotonically (all up or all down).

* **Theorem 3.2**: ``H_{e^ε}(M(X)‖M(X')) ≤ m δ_Δ(ε)`` for every real ``ε`` (:class:`ReportNoisyMaxProfile`).
* **Theorem 3.3**: ``k`` adaptive rounds: ``m^k δ_{Δ,k}(ε)`` with ``δ_{Δ,k}`` the ``k``-fold composition of
  the noise mechanism -- exact ``μ√k``-GDP for Gaussian noise (Dong, Roth, Su 2022), dp-accounting's PLD
  self-composition for Laplace noise or a PLD-backed profile.
* **Corollary 3.4** (Gaussian noise, proof in App. A.3): the privacy loss of ``N(0, σ²)`` vs ``N(Δ, σ²)`` is
  ``ω ~ N(μ²/2, μ²)`` with ``μ = Δ/σ``; ``δ_Δ(ε) ≤ P(ω ≥ ε)`` (Balle & Wang 2018, Lemma 3) and the Chernoff
  bound ``P(ω ≥ ε) ≤ exp(−(ε − μ²/2)²/(2μ²))`` for ``ε ≥ μ²/2`` give, with Theorem 3.2,

      ε(δ) = μ²/2 + μ sqrt(2 log(m/δ)),   i.e.  ε = 2/σ² + (2/σ) sqrt(2 log(m/δ))  for Δ = 2,

  (:class:`GaussianTailRnmProfile`; for ``k`` rounds ``μ = Δ√k/σ`` and ``m^k`` in place of ``m``).
* **Theorem 3.1** (Zhu & Wang 2022, Thm 8), the RDP baseline: ``ε(λ) + log m/(λ − 1)`` with ``ε(λ)`` the
  RDP of the noise mechanism at sensitivity ``Δ`` (``λΔ²/(2σ²)`` for Gaussian noise), converted to
  ``(ε, δ)`` by :class:`~symsel.profiles.RdpProfile` (Canonne et al. 2020, as in the paper's App. D). The
  paper states it for ``Δ = 2``; the proof of Theorem 3.2 (App. A.1) holds for every f-divergence, so
  ``Δ = 1`` is used for monotone queries as well.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from dp_accounting import dp_event

from symsel import validate
from symsel.bounds.renyi import base_rdp_curve
from symsel.errors import NotApplicableError, ParameterError
from symsel.profiles import GaussianProfile, LaplaceProfile, PldProfile, Profile, RdpProfile
from symsel.profiles.base import delta_by_symmetry

_METHODS = ("profile", "rdp", "gaussian_tail")


def _union_factor(m: Any, rounds: Any, where: str) -> tuple[int, int, float]:
    """``(m, k, k log m)``: the ``m^k`` factor of Theorems 3.2/3.3, with ``m, k >= 1`` checked."""
    mm = validate.integer(m, "m", where, lo=1)
    k = validate.integer(rounds, "rounds", where, lo=1)
    return mm, k, k * math.log(mm)


class ReportNoisyMaxProfile(Profile):
    """Koskela et al. Theorems 3.2 / 3.3: ``δ_M(ε) = min(1, m^k δ_noise(ε))`` for every real ``ε``.

    Args:
        noise: the profile of the (``k``-fold composed) noise mechanism at the theorem's sensitivity.
        m: number of queries.
        rounds: number of adaptive RNM rounds ``k`` (``noise`` must already be the ``k``-fold composition).
    """

    family = "report_noisy_max"

    def __init__(self, noise: Profile, m: int, rounds: int = 1):
        where = self.family
        if not isinstance(noise, Profile):
            raise ParameterError("noise", noise, "a symsel Profile", where)
        self.noise = noise
        self.m, self.rounds, self.log_factor = _union_factor(m, rounds, where)

    @property
    def spec(self) -> str:
        return f"report_noisy_max(m={self.m!r}, rounds={self.rounds!r}, noise={self.noise.spec})"

    def _log_delta_finite(self, eps: np.ndarray) -> np.ndarray:
        return np.minimum(0.0, self.log_factor + np.asarray(self.noise.log_delta(eps), dtype=float))

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        return np.exp(self._log_delta_finite(eps))

    @property
    def delta_at_infinity(self) -> float:
        d = self.noise.delta_at_infinity
        return 0.0 if d == 0 else min(1.0, math.exp(self.log_factor + math.log(d)))

    @property
    def max_privacy_loss(self) -> float | None:
        return self.noise.max_privacy_loss

    def epsilon(self, delta: float) -> float:
        """``noise.epsilon(δ / m^k)`` (the generic log-space search when ``δ / m^k`` underflows)."""
        d = self._check_delta(delta)
        if d >= 1.0:
            return 0.0
        if d == 0.0:
            return super().epsilon(d)
        log_target = math.log(d) - self.log_factor
        if log_target < -700.0:
            return super().epsilon(d)
        return max(0.0, float(self.noise.epsilon(math.exp(log_target))))

    def rdp(self, order: float) -> float | None:
        """``ε_noise(λ) + k log m/(λ − 1)`` (Theorem 3.1; the proof of Theorem 3.2 with ``f(z) = z^λ``)."""
        lam = self._check_order(order)
        r = self.noise.rdp(lam)
        if r is None:
            return None
        return float(r) if math.isinf(lam) else float(r) + self.log_factor / (lam - 1.0)


class GaussianTailRnmProfile(Profile):
    """Koskela et al. Corollary 3.4: ``δ(ε) ≤ m^k exp(−(ε − μ²/2)²/(2μ²))`` for ``ε ≥ μ²/2`` (else 1), i.e.
    ``ε(δ) = μ²/2 + μ sqrt(2 log(m^k/δ))``; ``μ = Δ√k/σ`` (Gaussian noise only)."""

    family = "rnm_gaussian_tail"

    def __init__(self, mu: float, m: int, rounds: int = 1):
        where = self.family
        self.mu = validate.positive(mu, "mu", where)
        self.m, self.rounds, self.log_factor = _union_factor(m, rounds, where)

    @property
    def spec(self) -> str:
        return f"rnm_gaussian_tail(mu={self.mu!r}, m={self.m!r}, rounds={self.rounds!r})"

    def _log_delta_finite(self, eps: np.ndarray) -> np.ndarray:
        mu = self.mu
        excess = np.maximum(np.asarray(eps, dtype=float) - mu * mu / 2.0, 0.0)
        return np.minimum(0.0, self.log_factor - excess**2 / (2.0 * mu * mu))

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        return delta_by_symmetry(eps, lambda x: np.exp(self._log_delta_finite(x)))

    @property
    def max_privacy_loss(self) -> float:
        return math.inf

    def epsilon(self, delta: float) -> float:
        """``μ²/2 + μ sqrt(2 (k log m − log δ))`` (closed form), 0 for ``δ ≥ 1``, ``inf`` for ``δ = 0``."""
        d = self._check_delta(delta)
        if d >= 1.0:
            return 0.0
        if d == 0.0:
            return math.inf
        mu = self.mu
        return mu * mu / 2.0 + mu * math.sqrt(2.0 * max(0.0, self.log_factor - math.log(d)))


def gaussian_tail_epsilon(m: int, sigma: float, delta: float, rounds: int = 1, monotone: bool = False) -> float:
    """Koskela et al. Corollary 3.4 as a number: ``μ²/2 + μ sqrt(2 log(m^k/δ))``, ``μ = Δ√k/σ``, ``Δ = 1`` or 2."""
    where = "gaussian_tail_epsilon"
    s = validate.positive(sigma, "sigma", where)
    k = validate.integer(rounds, "rounds", where, lo=1)
    sens = 1.0 if _flag(monotone, "monotone", where) else 2.0
    return GaussianTailRnmProfile(sens * math.sqrt(k) / s, validate.integer(m, "m", where, lo=1), k).epsilon(delta)


# --------------------------------------------------------------------------- noise mechanism


def noise_profile(base: Profile, monotone: bool = False, prescaled: bool = False) -> Profile:
    """The profile ``δ_Δ`` of the additive-noise mechanism at the sensitivity Theorem 3.2 needs.

    ``base`` describes one noisy query ``f_i + Z`` with the queries' sensitivity (1): a Gaussian
    (``gaussian``/``gdp``) or Laplace profile, whose sensitivity is doubled unless ``monotone``. Any other
    profile must already be the noise mechanism at sensitivity ``Δ`` (``prescaled=True``).
    """
    where = "report_noisy_max"
    scale = 1.0 if _flag(monotone, "monotone", where) else 2.0
    if _flag(prescaled, "prescaled", where):
        return base
    if isinstance(base, GaussianProfile):
        if scale == 1.0:
            return base
        if base.family == "gdp":
            return GaussianProfile.from_mu(base.mu * scale)
        return GaussianProfile(base.sigma, base.sensitivity * scale)
    if isinstance(base, LaplaceProfile):
        return base if scale == 1.0 else LaplaceProfile(base.scale, base.sensitivity * scale)
    raise NotApplicableError(
        f"{where}: cannot rescale the sensitivity of {base.spec} (only gaussian, gdp and laplace noise); pass the "
        "profile of the noise mechanism at sensitivity 2 (1 for monotone queries) with prescaled=True"
    )


def compose_noise(noise: Profile, rounds: int) -> Profile:
    """The ``k``-fold composition of the noise mechanism (Theorem 3.3): exact GDP for Gaussian noise,
    dp-accounting's PLD accountant for Laplace noise and PLD-backed profiles."""
    k = validate.integer(rounds, "rounds", "report_noisy_max", lo=1)
    if k == 1:
        return noise
    if isinstance(noise, GaussianProfile):
        return noise.compose(k)
    if isinstance(noise, LaplaceProfile):
        event = dp_event.LaplaceDpEvent(noise.scale / noise.sensitivity)
        return PldProfile(dp_event.SelfComposedDpEvent(event, k))
    if isinstance(noise, PldProfile):
        return PldProfile(
            dp_event.SelfComposedDpEvent(noise.event, k),
            neighbouring=noise.neighbouring,
            value_discretization_interval=noise.value_discretization_interval,
        )
    raise NotApplicableError(
        f"report_noisy_max: no composition for {noise.spec} (Gaussian, Laplace and PLD-backed profiles only)"
    )


# --------------------------------------------------------------------------- entry points


def report_noisy_max_bound(
    m: int,
    base: Profile,
    rounds: int = 1,
    monotone: bool = False,
    method: str = "profile",
    prescaled: bool = False,
) -> Profile:
    """A privacy profile of Report Noisy Max over ``m`` sensitivity-1 queries (Koskela et al., Section 3).

    Args:
        m: number of queries (``≥ 1``).
        base: one noisy query (see :func:`noise_profile`).
        rounds: ``k`` adaptive RNM rounds (Theorem 3.3).
        monotone: the queries move monotonically (sensitivity 1 instead of 2 in the theorems).
        method: ``"profile"`` (Theorems 3.2/3.3), ``"rdp"`` (Theorem 3.1, Zhu & Wang), ``"gaussian_tail"``
            (Corollary 3.4, Gaussian noise only).
        prescaled: ``base`` is already the noise mechanism at the theorem's sensitivity.
    """
    where = "report_noisy_max"
    mm = validate.integer(m, "m", where, lo=1)
    k = validate.integer(rounds, "rounds", where, lo=1)
    if method not in _METHODS:
        raise ParameterError("method", method, "one of " + ", ".join(map(repr, _METHODS)), where)
    if not isinstance(base, Profile):
        raise ParameterError("base", base, "a symsel Profile", where)
    noise = noise_profile(base, monotone, prescaled)
    if method == "profile":
        return ReportNoisyMaxProfile(compose_noise(noise, k), mm, k)
    if method == "gaussian_tail":
        if not isinstance(noise, GaussianProfile):
            raise NotApplicableError(f"{where}: Corollary 3.4 needs Gaussian noise, not {noise.spec}")
        return GaussianTailRnmProfile(noise.mu * math.sqrt(k), mm, k)
    base_rdp_curve(noise, [2.0])  # NotApplicableError when the noise has no RDP curve
    log_m = math.log(mm)

    def curve(lam: np.ndarray) -> np.ndarray:
        lam = np.asarray(lam, dtype=float)
        return k * (base_rdp_curve(noise, lam) + log_m / (lam - 1.0))

    spec = f"rnm_rdp(m={mm!r}, rounds={k!r}, noise={noise.spec})"
    return RdpProfile(curve, name="rnm_rdp", spec=spec)


def rnm_figure1_curves(
    m_values: Sequence[int], sigma: float = 4.0, delta: float = 1e-6, monotone: bool = False
) -> dict[str, np.ndarray]:
    """The curves of Koskela et al. Figure 1: ``ε(δ)`` of RNM with Gaussian noise ``N(0, σ²)`` over ``m``
    sensitivity-1 queries, by Theorem 3.2 (``"profile"``), Theorem 3.1 (``"rdp"``) and Corollary 3.4
    (``"gaussian_tail"``); ``"m"`` holds the query counts. The paper's figure: ``σ = 4``, ``δ = 1e-6``,
    ``m`` from 10 to 1e5."""
    where = "rnm_figure1_curves"
    if isinstance(m_values, str | bytes) or not hasattr(m_values, "__iter__"):
        raise ParameterError("m_values", m_values, "a list of integers >= 1", where)
    ms = [validate.integer(x, "m", where, lo=1) for x in m_values]
    base = GaussianProfile(validate.positive(sigma, "sigma", where))
    out: dict[str, list[float]] = {"profile": [], "rdp": [], "gaussian_tail": []}
    for mm in ms:
        for method in out:
            out[method].append(report_noisy_max_bound(mm, base, monotone=monotone, method=method).epsilon(delta))
    return {"m": np.array(ms), **{key: np.array(vals) for key, vals in out.items()}}


# --------------------------------------------------------------------------- validation




def _flag(value: Any, name: str, where: str) -> bool:
    if not isinstance(value, bool):
        raise ParameterError(name, value, "True or False", where)
    return value
