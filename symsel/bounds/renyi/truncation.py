"""Papernot & Steinke Lemma 22: ``K`` conditioned on ``K ≤ k_max``."""

from __future__ import annotations

import mpmath
import numpy as np

from symsel.bounds.renyi.curve import SelectionCurve
from symsel.distributions import Distribution
from symsel.errors import NotApplicableError, ParameterError

# --------------------------------------------------------------------------- Lemma 22 (truncation)


def truncation_terms(dist: Distribution, k_max: int, dps: int = 30) -> tuple[float, float]:
    """The two extra terms of P&S Lemma 22 for ``K`` conditioned on ``K ≤ k_max``:
    ``a = log(1/P[K ≤ k])`` (divided by ``λ − 1``) and ``b = log(1 + E[K·1{K>k}]/(E[K] − E[K·1{K>k}]))``
    ``= log(E[K] / E[K·1{K≤k}])``. Returns ``(a, b)`` rounded up."""
    kk = int(k_max)
    if kk != k_max or kk < 1:
        raise ParameterError("k_max", k_max, "an integer k_max >= 1", "truncation_terms")
    with mpmath.workdps(dps):
        masses = [dist.pmf_mp(j, dps) for j in range(kk + 1)]
        head_mass = mpmath.fsum(masses)
        head_mean = mpmath.fsum(j * p for j, p in enumerate(masses))
        mean = dist.mean_mp(dps)
        if head_mean <= 0:
            raise NotApplicableError(f"renyi: {dist.spec} has no mass on 1..{kk}; Lemma 22 does not apply")
        a = -mpmath.log(head_mass)
        b = mpmath.log(mean / head_mean)
        pad = mpmath.mpf(10) ** (-dps + 5)
        return float(max(a, 0) + pad), float(max(b, 0) + pad)


def _lemma22(inner: SelectionCurve, dist: Distribution, k_max: int) -> SelectionCurve:
    a, b = truncation_terms(dist, k_max)

    def raw(lam: np.ndarray) -> np.ndarray:
        # the inner *raw* bound: it bounds the Lemma 7 expression at λ itself (monotonicity is applied
        # only once, to the final curve of the truncated selection).
        return inner.raw_values(lam) + a / (np.asarray(lam, dtype=float) - 1.0) + b

    details = {**inner.details, "k_max": int(k_max), "log_inv_head_mass": a, "log_mean_ratio": b}
    return SelectionCurve(f"Papernot-Steinke Lemma 22 with {inner.theorem}", raw, inner.grid, None, details)


def split_truncated(dist: Distribution) -> tuple[Distribution, int] | None:
    """``(inner law, k_max)`` of a :func:`symsel.distributions.truncated` law, else ``None``."""
    return dist.truncation_of
