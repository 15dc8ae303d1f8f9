"""One DP-SGD step's PLD, as dp-accounting builds it, about five times sooner.

dp-accounting builds the PLD of a Poisson-subsampled Gaussian by "connect the dots" (Doroshenko et al., PETS 2022):
it evaluates the step's hockey-stick divergence ``δ(ε)`` on every point of its loss grid, about 47,000 points a
direction for ``q = 0.01, σ = 1.1`` at the default grid of 1e-4. Each ``δ(ε)`` needs the output ``x`` at which the
privacy loss equals ``ε`` (the inverse privacy loss), and dp-accounting finds it one ``ε`` at a time in Python: 0.37
of the 0.43 s the step's PLD takes, and a DP-SGD base with a new noise (a calibration, a planner) builds a new one.

Without subsampling (``q = 1``, one direction: the PLD is symmetric) the inverse is ``x = −Δ/2 − ε σ²/Δ``, and
dp-accounting solves it one ``ε`` at a time too: 45 of the 60 ms a Gaussian run's PLD takes at ``σ = 4`` (a final
release composed after a tuning, each step of a calibration). For the add and the remove direction of a subsampled
Gaussian with ``0 < q < 1`` the inverse has a closed form too:
with ``l'(ε) = log(1 + (e^ε − 1)/q)`` the loss of the Gaussian without subsampling (for remove; add uses
``−l'(−ε)``), the Gaussian's inverse is ``x = −Δ/2 − l' σ²/Δ`` (remove) and ``x = Δ/2 − l' σ²/Δ`` (add).
:class:`_TabledGaussianLoss` (a subclass of dp-accounting's public ``GaussianPrivacyLoss``) computes it for the whole
grid at once, with the same floating-point operations in the same order as dp-accounting's scalar code, and its
public ``get_delta_for_epsilon`` reads that table instead of solving per point. Points where that code takes a special
branch (``ε = 0``, ``ε`` at or next to the ``±log(1 − q)`` limit, a logarithm of a non-positive number) are not in
the table and go through dp-accounting's own scalar code. The PLD is then formed from dp-accounting's public pieces
as its ``from_gaussian_mechanism`` forms it (:func:`subsampled_gaussian_arrays`), as arrays symsel keeps: the very
masses of ``from_gaussian_mechanism``, array for array (the numpy functions used, ``log``, ``exp``, ``log1p``, give the
same bits on an array as on each of its elements); tests/profiles/test_subsampled_gaussian_pld.py compares the two
builds bit for bit.

Not sped up (dp-accounting's own ``from_gaussian_mechanism``): the replace-one relation.
"""

from __future__ import annotations

import math
import numbers
from functools import lru_cache
from typing import Any

import numpy as np

from symsel.errors import NotApplicableError

#: ``math.isclose``'s default relative tolerance, widened tenfold: points this close to the ``±log(1 − q)`` limit
#: are left to dp-accounting's scalar code, which treats points within its tolerance specially.
_NEAR_LIMIT = 1e-8
#: the most loss-grid points of one direction of one step's PLD: a wider one (little noise, e.g. ``σ = 0.019``: 12
#: million points at ``q = 1e-300``, 19 million at ``q = 0.01``; ``q = 0.01, σ = 1.1`` has 47,000) is refused before
#: its ``δ`` is evaluated on the grid (tens of seconds and GBs).
MAX_STEP_GRID = 4_000_000


def subsampled_gaussian_pld(rate: float, sigma: float, relation: Any, interval: float) -> Any:
    """``from_gaussian_mechanism(standard_deviation=sigma, value_discretization_interval=interval,
    sampling_prob=rate, neighboring_relation=relation)``, made from :func:`subsampled_gaussian_arrays` (the same
    masses, sooner) when that builds it, else dp-accounting's own call."""
    arrays = subsampled_gaussian_arrays(rate, sigma, relation, interval)
    if arrays is not None:
        return arrays.to_pld()
    from dp_accounting.pld import privacy_loss_distribution as pld_module

    return pld_module.from_gaussian_mechanism(standard_deviation=sigma, value_discretization_interval=interval,
                                              sampling_prob=rate, neighboring_relation=relation)


def subsampled_gaussian_arrays(rate: float, sigma: float, relation: Any, interval: float) -> Any:
    """The masses of ``from_gaussian_mechanism(standard_deviation=sigma, value_discretization_interval=interval,
    sampling_prob=rate, neighboring_relation=relation)`` as symsel's own
    :class:`~symsel.profiles.dpaccounting.PldArrays`, for the add-or-remove and replace-special relations and
    ``0 < rate ≤ 1`` (else ``None``). dp-accounting's construction, from its public pieces: per direction (remove;
    add too when ``rate < 1``) the ``GaussianPrivacyLoss`` it builds (sensitivity 1, pessimistic, truncation bound
    −50), the loss grid between the rounded ends of its ``connect_dots_bounds``, the loss's ``δ`` on that grid (its
    public ``get_delta_for_epsilon``, with the inverse privacy loss tabled: module docstring) and the connect-the-dots
    masses of those ``δ`` (:func:`~symsel.profiles.dpaccounting.connect_dots_masses`, the operations of its fixed-gap
    construction)."""
    from dp_accounting import privacy_accountant
    from dp_accounting.pld.privacy_loss_mechanism import AdjacencyType

    from symsel.profiles.dpaccounting import PldArrays, PmfArrays, connect_dots_masses

    relations = privacy_accountant.NeighboringRelation
    loss_class = _tabled_gaussian_loss_class()
    if relation not in (relations.ADD_OR_REMOVE_ONE, relations.REPLACE_SPECIAL) or not 0.0 < rate <= 1.0 \
            or loss_class is None:
        return None

    def one_direction(adjacency: Any) -> PmfArrays:
        # the arguments from_gaussian_mechanism passes with its defaults (sensitivity 1, pessimistic, truncation
        # bound -50, connect the dots); the test against it fails if a dp-accounting release changes them
        loss = loss_class(sigma, sensitivity=1, pessimistic_estimate=True, log_mass_truncation_bound=-50,
                          sampling_prob=rate, adjacency_type=adjacency)
        bounds = loss.connect_dots_bounds()
        lower = math.floor(bounds.epsilon_lower / interval)
        upper = math.ceil(bounds.epsilon_upper / interval)
        if upper - lower + 1 > MAX_STEP_GRID:
            raise NotApplicableError(
                f"dpsgd: one step's PLD at q={rate:g}, sigma={sigma:g} spans losses {bounds.epsilon_lower:.4g} to "
                f"{bounds.epsilon_upper:.4g}, {upper - lower + 1:.2e} points of {interval:g}, more than the "
                f"{MAX_STEP_GRID:.0e} allowed: use more noise (a larger sigma) or a coarser "
                "value_discretization_interval")
        deltas = loss.get_delta_for_epsilon(np.arange(lower, upper + 1) * interval)
        probs, infinity = connect_dots_masses(np.asarray(deltas, dtype=float), interval)
        return PmfArrays(interval, lower, probs, infinity)

    remove = one_direction(AdjacencyType.REMOVE)
    return PldArrays(remove, None if rate == 1.0 else one_direction(AdjacencyType.ADD))


@lru_cache(maxsize=1)
def _tabled_gaussian_loss_class() -> type | None:
    """:class:`GaussianPrivacyLoss` with the inverse privacy loss read from a table on a grid query (defined on
    first use: it subclasses a dp-accounting class); ``None`` when dp-accounting's class does not have the
    attributes it relies on."""
    from dp_accounting.pld import privacy_loss_mechanism as mechanisms

    base = getattr(mechanisms, "GaussianPrivacyLoss", None)
    if base is None or not all(hasattr(base, name) for name in ("get_delta_for_epsilon", "inverse_privacy_loss")):
        return None

    class _TabledGaussianLoss(base):  # type: ignore[misc, valid-type]
        _table: dict[float, float] | None = None

        def get_delta_for_epsilon(self, epsilon: Any) -> Any:
            if isinstance(epsilon, numbers.Number):
                return super().get_delta_for_epsilon(epsilon)
            unsubsampled = unsubsampled_delta(self, np.asarray(epsilon, dtype=float))
            if unsubsampled is not None:
                return unsubsampled
            self._table = inverse_loss_table(self, np.asarray(epsilon, dtype=float).ravel())
            try:
                return super().get_delta_for_epsilon(epsilon)
            finally:
                self._table = None

        def inverse_privacy_loss(self, privacy_loss: float) -> float:
            if self._table is not None:
                x = self._table.get(privacy_loss)
                if x is not None:
                    return x
            return super().inverse_privacy_loss(privacy_loss)

    return _TabledGaussianLoss


def _unsubsampled_inverse(loss: Any, eps: np.ndarray) -> np.ndarray:
    """``x = −Δ/2 − ε σ²/Δ``, the inverse privacy loss of the Gaussian ``loss`` without subsampling (remove
    direction), in dp-accounting's order of operations."""
    return -0.5 * loss.sensitivity - eps * (loss.standard_deviation**2) / loss.sensitivity


def unsubsampled_delta(loss: Any, eps: np.ndarray) -> np.ndarray | None:
    """dp-accounting's ``get_delta_for_epsilon`` of the Gaussian ``loss`` without subsampling (remove direction) on
    the grid ``eps``, every point at once: ``δ(ε) = Q[X ≤ x] − e^ε Q'[X ≤ x]`` at the inverse privacy loss ``x``
    (its upper and lower CDFs, the latter in logs), clipped to ``[0, 1]``; the same operations as its per-point
    code, so the same numbers. ``None`` for any other loss, or a grid with a point that is not finite (left to
    dp-accounting)."""
    from dp_accounting.pld.privacy_loss_mechanism import AdjacencyType

    if loss.sampling_prob != 1.0 or loss.adjacency_type != AdjacencyType.REMOVE or not np.all(np.isfinite(eps)):
        return None
    x = _unsubsampled_inverse(loss, eps)
    return np.clip(loss.mu_upper_cdf(x) - np.exp(eps + loss.mu_lower_log_cdf(x)), 0, 1)


def inverse_loss_table(loss: Any, eps: np.ndarray) -> dict[float, float]:
    """``ε ↦ x``, the inverse privacy loss of the subsampled Gaussian ``loss`` (add or remove direction,
    ``0 < q < 1``; remove for ``q = 1``) at the points of ``eps`` where dp-accounting's scalar code takes its general
    branch, computed with that code's operations in its order: ``l' = d + log1p(−exp(log(1/q − 1) − d))`` with
    ``d = b + log(1/q)`` and ``b = ε`` (remove) or ``−ε`` (add), then ``x = −Δ/2 − l' σ²/Δ`` (remove) or
    ``Δ + (−Δ/2 − (−l') σ²/Δ)`` (add); for ``q = 1``, ``x = −Δ/2 − ε σ²/Δ`` at every finite ``ε``. Other points are
    left out (the caller falls back to the scalar code for them)."""
    from dp_accounting.pld.privacy_loss_mechanism import AdjacencyType

    q, sensitivity = loss.sampling_prob, loss.sensitivity
    if q == 1.0:
        if loss.adjacency_type != AdjacencyType.REMOVE:
            return {}
        finite = eps[np.isfinite(eps)]
        return dict(zip(finite.tolist(), _unsubsampled_inverse(loss, finite).tolist(), strict=True))
    if loss.adjacency_type == AdjacencyType.REMOVE:
        remove, limit = True, math.log(1 - q)
    elif loss.adjacency_type == AdjacencyType.ADD:
        remove, limit = False, -math.log(1 - q)
    else:
        return {}
    if not 0.0 < q < 1.0:
        return {}
    b = eps if remove else -eps
    log_a, log_minus_c = np.log(1 / q), np.log(-(1 - 1 / q))
    with np.errstate(all="ignore"):
        d = b + log_a
        general = (eps > limit) if remove else (eps < limit)
        general &= np.abs(eps - limit) > _NEAR_LIMIT * np.maximum(np.abs(eps), abs(limit))
        general &= (b != 0) & (log_minus_c < d) & np.isfinite(eps)
        unsubsampled = d + np.log1p(-np.exp(log_minus_c - d))
        variance = loss.standard_deviation**2
        if remove:
            x = -0.5 * sensitivity - unsubsampled * variance / sensitivity
        else:
            x = sensitivity + (-0.5 * sensitivity - (-unsubsampled) * variance / sensitivity)
    keep = general & ~np.isnan(x)
    return dict(zip(eps[keep].tolist(), x[keep].tolist(), strict=True))
