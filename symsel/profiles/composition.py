"""The ``k``-fold composition of a base's dominating pair: what each base answers with when the ``composition``
bound (:mod:`symsel.bounds.composition`, docs/composition.md) asks for ``δ_{Q^⊗k}``.

``δ_{Q^⊗k}`` is exact for a Gaussian/GDP base (``μ√k``-GDP, :mod:`symsel.profiles.analytic`), exact for finite pairs
(pure, randomized response, ``(ε, δ)``, ``pair``) by summing over the multinomial law of the ``k`` losses
(:class:`ComposedFinitePair`), and a pessimistic dp-accounting PLD self-composition for every other base (DP-SGD,
Laplace, tabulated and RDP-only profiles, selections fed on as bases: :func:`composed_pld`). Each base says which
through the composition protocol of :class:`~symsel.profiles.Profile` (:meth:`~symsel.profiles.Profile.self_composed`,
:attr:`~symsel.profiles.Profile.exact_composition`, :meth:`~symsel.profiles.Profile.weighted_compositions`,
:attr:`~symsel.profiles.Profile.finite_loss_bound`, :attr:`~symsel.profiles.Profile.pld_discretization`); the generic
route (the profile's connect-the-dots PLD, :func:`composed`) serves any other.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import special

from symsel.errors import NotApplicableError
from symsel.memory import MIB, bounded_cache
from symsel.profiles.base import ROUTE_PESSIMISTIC_PLD, Profile
from symsel.profiles.export import to_pld_arrays

if TYPE_CHECKING:
    from symsel.profiles.finite import FinitePairProfile

#: largest number of atoms of an exactly composed finite pair; larger compositions use dp-accounting.
MAX_EXACT_ATOMS = 2_000_000
#: relative allowance on every float64 mass and term (rounding of log-gamma sums and of ``exp``).
ROUNDING = 1e-12
#: the PLD discretization of the pessimistic (dp-accounting) compositions.
PLD_INTERVAL = 1e-4
#: the most points a dp-accounting PLD of ``k`` runs may need (the limit of a DP-SGD profile's own PLD, a few hundred
#: MB while dp-accounting composes it); a larger one is refused before anything is allocated
#: (:func:`check_pld_size`).
MAX_PLD_POINTS = 2e7
#: the tail mass dp-accounting's self-composition may truncate (its default), which sets the loss range it keeps.
PLD_TAIL_MASS = 1e-15
#: the Rényi orders of the size estimate of a base known through its RDP curve.
_ESTIMATE_ORDERS = tuple(float(x) for x in np.geomspace(1.05, 4096.0, 48))


# ------------------------------------------------------------------------ k-fold composition of a base
class ComposedFinitePair(Profile):
    """``δ`` of the ``k``-fold product of a finite pair, both directions, summed exactly over the
    multinomial law of the ``k`` privacy losses (float64 in log space, rounded up by :data:`ROUNDING`)."""

    family = "composed"

    def __init__(self, base: FinitePairProfile, k: int):
        self.base, self.k = base, k
        P, Pp = (np.asarray(x, dtype=float) for x in base.finite_pair())
        self._directions = [_composed_losses(P, Pp, k), _composed_losses(Pp, P, k)]

    @property
    def spec(self) -> str:
        return f"compose(base={self.base.spec}, k={self.k})"

    @property
    def delta_at_infinity(self) -> float:
        return max(d[2] for d in self._directions)

    @property
    def max_privacy_loss(self) -> float | None:
        loss = self.base.max_privacy_loss
        return None if loss is None else loss * self.k

    def _log_delta_finite(self, eps: np.ndarray) -> np.ndarray:
        out = np.full(eps.shape, -np.inf)
        for losses, log_mass, inf_mass in self._directions:
            out = np.maximum(out, _log_hockey_stick(eps, losses, log_mass, inf_mass))
        return out

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        with np.errstate(under="ignore"):
            return np.exp(self._log_delta_finite(eps))


def _composed_losses(P: np.ndarray, Pp: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, float]:
    """The law under ``P^⊗k`` of the summed privacy loss ``Σ log(P/P')``: finite atoms (losses rounded up,
    log-masses rounded up) and the mass at ``+∞`` (some coordinate had ``P' = 0``)."""
    finite = (P > 0) & (Pp > 0)
    loss = np.log(P[finite]) - np.log(Pp[finite])
    # equal losses are one atom (randomized response's indifferent outcomes, the two ±ε of (ε, δ))
    values, inverse = np.unique(loss, return_inverse=True)
    mass = np.bincount(inverse, weights=P[finite], minlength=values.size)
    p_inf = float(P[(P > 0) & (Pp == 0)].sum())
    n = values.size
    if n == 0:
        return np.empty(0), np.empty(0), min(1.0, 1.0 - (1.0 - p_inf) ** k if p_inf < 1 else 1.0)
    if math.comb(k + n - 1, n - 1) > MAX_EXACT_ATOMS:
        raise NotApplicableError(f"exact composition of {n} loss atoms {k} times is too large")
    counts = _compositions(n, k)
    log_mass = special.gammaln(k + 1) - special.gammaln(counts + 1).sum(axis=1) + counts @ np.log(mass)
    losses = counts @ values
    slack = ROUNDING * (1.0 + np.abs(counts) @ np.abs(values))
    inf_mass = -math.expm1(k * math.log1p(-p_inf)) if p_inf < 1 else 1.0
    return losses + slack, log_mass + ROUNDING * (1.0 + np.abs(log_mass)), min(1.0, inf_mass * (1 + ROUNDING))


def _compositions(n: int, k: int) -> np.ndarray:
    """Every vector of ``n`` non-negative integers summing to ``k`` (rows)."""
    if n == 1:
        return np.array([[k]], dtype=np.int64)
    blocks = []
    for first in range(k + 1):
        rest = _compositions(n - 1, k - first)
        blocks.append(np.column_stack([np.full(rest.shape[0], first, dtype=np.int64), rest]))
    return np.concatenate(blocks)


def _log_hockey_stick(eps: np.ndarray, losses: np.ndarray, log_mass: np.ndarray, inf_mass: float) -> np.ndarray:
    """``log(inf_mass + Σ_j m_j [1 − e^{ε − L_j}]_+)``, each term formed as ``m_j (−expm1(ε − L_j))``."""
    flat = eps.ravel()
    out = np.empty(flat.shape)
    chunk = max(1, 4_000_000 // max(1, losses.size))
    log_inf = math.log(inf_mass) if inf_mass > 0 else -math.inf
    for start in range(0, flat.size, chunk):
        part = flat[start:start + chunk]
        gap = np.minimum(part[:, None] - losses[None, :], 0.0)
        with np.errstate(divide="ignore"):
            terms = log_mass[None, :] + np.log(-np.expm1(gap))
        terms = np.concatenate([terms, np.full((part.size, 1), log_inf)], axis=1)
        out[start:start + chunk] = special.logsumexp(terms, axis=1) + ROUNDING
    return out.reshape(eps.shape)


class ComposedPld(Profile):
    """A dp-accounting PLD (pessimistic) on the loss grid ``discretization``, held as a profile (queried through
    dp-accounting's public methods; many ``ε`` at once through arrays rebuilt from them,
    :func:`symsel.profiles.dpaccounting.arrays_from_queries`)."""

    family = "composed"

    def __init__(self, pld: Any, label: str, discretization: float = PLD_INTERVAL, arrays: object = None):
        self.pld, self._label, self.discretization, self.arrays = pld, label, discretization, arrays

    @property
    def spec(self) -> str:
        return self._label

    @cached_property
    def _tables(self) -> list[tuple[object, ...]] | None:
        from symsel.profiles.dpaccounting import pld_suffix_tables

        return pld_suffix_tables(self.arrays if self.arrays is not None else self.pld, self.discretization)

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        if self._tables is not None:  # every epsilon in one pass (the mixture asks many k at many epsilon)
            from symsel.profiles.dpaccounting import suffix_tables_delta

            return suffix_tables_delta(self._tables, eps.ravel()).reshape(eps.shape)
        values = [float(self.pld.get_delta_for_epsilon(float(e))) for e in eps.ravel()]
        return np.clip(np.asarray(values, dtype=float), 0.0, 1.0).reshape(eps.shape)

    @cached_property
    def delta_at_infinity(self) -> float:
        return float(np.clip(self.pld.get_delta_for_epsilon(math.inf), 0.0, 1.0))


@bounded_cache(max_entries=512, max_bytes=128 * MIB)
def composed(base: Profile, k: int) -> tuple[Profile, str]:
    """The profile of the ``k``-fold composition of ``base``'s dominating pair, and how it was obtained
    (``"exact GDP"``, ``"exact finite pair"``, ``"pessimistic PLD"``): the base's own
    :meth:`~symsel.profiles.Profile.self_composed`, else its connect-the-dots PLD self-composed by dp-accounting.
    Cached (at most 512 entries and 128 MiB: a composed PLD of a DP-SGD run is megabytes)."""
    if k == 1:
        return base, "the base itself"
    own = base.self_composed(k)
    if own is not None:
        return own
    return composed_pld(base, k, lambda: _exported_pld(base)), ROUTE_PESSIMISTIC_PLD


def pld_points(base: Profile, k: int) -> tuple[float, str] | None:
    """An estimate of the points of dp-accounting's PLD of ``k`` runs of ``base`` (its loss range over the
    discretization), and how it was estimated; ``None`` when the base gives no handle on its range.

    * a bounded privacy loss ``|L| ≤ a`` per run (Laplace: ``a = Δ/b``; finite pairs: the largest finite
      ``|log(P/P')|``): one run spans ``2a``, and ``k`` runs at most ``2ka``, or ``2a√(2k log(2/τ))`` once
      dp-accounting truncates a tail mass ``τ`` = :data:`PLD_TAIL_MASS` (Hoeffding);
    * an RDP curve: the loss that matters is at most ``ε(τ)`` of ``k`` runs, ``min_λ k·rdp(λ) + log(1/τ)/(λ−1)``
      (as a DP-SGD profile estimates its own PLD)."""
    interval = base.pld_discretization
    if interval is None:
        interval = PLD_INTERVAL
    a = base.finite_loss_bound
    if a is not None:
        spread = a * math.sqrt(2 * k * math.log(2 / PLD_TAIL_MASS))
        return max(2 * a, min(2 * k * a, 2 * spread)) / interval + 1, f"privacy loss up to {a:.4g} per run"
    curve = _rdp_curve(base)
    if not curve:
        return None
    eps = min(k * value + math.log(1 / PLD_TAIL_MASS) / (order - 1) for order, value in curve)
    return eps / interval, f"epsilon({PLD_TAIL_MASS:g}) of {k} runs about {eps:.4g} by RDP"


@bounded_cache(max_entries=16, max_bytes=32 * MIB)  # the key holds the base, and a base may hold its PLD
def _rdp_curve(base: Profile) -> tuple[tuple[float, float], ...]:
    """``(order, rdp)`` of the base at :data:`_ESTIMATE_ORDERS` (finite values only; none without a curve)."""
    if base.rdp(2.0) is None:
        return ()
    values = ((order, base.rdp(order)) for order in _ESTIMATE_ORDERS)
    return tuple((order, float(value)) for order, value in values if value is not None and math.isfinite(value))


def check_pld_size(base: Profile, k: int) -> None:
    """Refuse, before dp-accounting allocates it, a PLD of ``k`` runs of ``base`` estimated (:func:`pld_points`) to
    need more than :data:`MAX_PLD_POINTS` points."""
    estimate = pld_points(base, k)
    if estimate is not None and not estimate[0] <= MAX_PLD_POINTS:
        raise NotApplicableError(
            f"method 'composition': dp-accounting's PLD of {k} runs of {base.spec} would need about "
            f"{estimate[0]:.1e} points ({estimate[1]}), more than the {MAX_PLD_POINTS:.0e} it may hold; the other "
            "methods still apply")


def composed_pld(base: Profile, k: int, build: Callable[[], Any]) -> Profile:
    """``k`` runs of ``base`` as dp-accounting's (pessimistic) self-composition of the PLD that ``build()`` returns
    (one run of the base), refused first if too large (:func:`check_pld_size`); for
    :meth:`~symsel.profiles.Profile.self_composed` and the generic route of :func:`composed`."""
    check_pld_size(base, k)
    return _self_composed(build(), k, f"compose(base={base.spec}, k={k})")


def _self_composed(one: Any, k: int, label: str) -> ComposedPld:
    """``k`` runs of the PLD ``one`` (symsel's :class:`~symsel.profiles.dpaccounting.PldArrays`, or a dp-accounting
    PLD, whose arrays are then rebuilt from its public queries: a PLD that dominates it,
    :func:`~symsel.profiles.dpaccounting.arrays_from_queries`), self-composed as dp-accounting self-composes a dense
    pmf (its public FFT self-convolution), held with the dp-accounting PLD made from the result."""
    from symsel.profiles.dpaccounting import pld_arrays

    arrays = pld_arrays(one, PLD_INTERVAL)
    if arrays is None:  # no grid to query on: dp-accounting composes it
        return ComposedPld(one.self_compose(k), label)
    composed = arrays.self_compose(k)
    return ComposedPld(composed.to_pld(), label, PLD_INTERVAL, composed)


def composed_finite_pair_plds(base: FinitePairProfile, k: int) -> Profile:
    """``k`` runs of a finite pair through dp-accounting: the larger of its two directions' pessimistic PLDs
    (:func:`_finite_pair_plds`), each self-composed ``k`` times; refused first if too large
    (:func:`check_pld_size`). The fallback of a finite pair too large to compose exactly."""
    check_pld_size(base, k)
    label = f"compose(base={base.spec}, k={k})"
    forward, backward = _finite_pair_plds(*base.finite_pair())
    return LargerOf(ComposedPld(forward.self_compose(k), label), ComposedPld(backward.self_compose(k), label), label)


@bounded_cache(max_entries=16, max_bytes=64 * MIB)
def _exported_pld(base: Profile) -> object:
    """The base exported once as a connect-the-dots PLD (:func:`symsel.profiles.export.to_pld_arrays`), for every
    ``k``."""
    return to_pld_arrays(base, discretization=PLD_INTERVAL)


def _finite_pair_plds(P: Sequence[float], Pp: Sequence[float]) -> tuple[Any, Any]:
    """dp-accounting's pessimistic PLDs of a finite pair, one per direction (``P`` against ``P'``, then ``P'``
    against ``P``): its constructor from two pmfs builds one direction only."""
    from dp_accounting.pld import privacy_loss_distribution

    def logs(masses: Sequence[float]) -> dict[int, float]:
        return {i: math.log(m) for i, m in enumerate(masses) if m > 0}

    def one_way(upper: Sequence[float], lower: Sequence[float]) -> object:
        return privacy_loss_distribution.from_two_probability_mass_functions(
            logs(lower), logs(upper), pessimistic_estimate=True, value_discretization_interval=PLD_INTERVAL)

    return one_way(P, Pp), one_way(Pp, P)


class LargerOf(Profile):
    """``δ(ε) = max(δ_1(ε), δ_2(ε))``: the profile of a pair from the profiles of its two directions."""

    family = "composed"

    def __init__(self, first: Profile, second: Profile, label: str):
        self.first, self.second, self._label = first, second, label

    @property
    def spec(self) -> str:
        return self._label

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        return np.maximum(self.first.delta(eps), self.second.delta(eps))

    @property
    def delta_at_infinity(self) -> float:
        return max(self.first.delta_at_infinity, self.second.delta_at_infinity)


class BasicComposition(Profile):
    """The basic composition theorem on profiles: mechanisms with profiles ``δ_1, …, δ_n`` run one after the other
    (adaptively) satisfy ``(ε_1 + … + ε_n, δ_1(ε_1) + … + δ_n(ε_n))``-DP for every split ``ε_i ≥ 0`` of ``ε``
    (docs/composition.md, "Basic composition"). Every split gives a valid profile, so ``δ(ε)`` is the least sum
    over two splits, ``ε_i = w_i ε``: the even one (``w_i = 1/n``) and the one in proportion to each part's own
    ``ε_i(10⁻⁶)`` (which suits parts of very different strength); each sum is rounded up. At ``ε < 0`` the trivial
    bound 1. :meth:`epsilon` splits ``δ`` evenly instead. Loose next to a composition of
    dominating pairs, but it needs nothing from the parts beyond their own profiles: the fallback where a part's pair
    cannot be built."""

    family = "composed"
    #: the ``δ`` at which each part's ``ε`` sets the proportional split.
    REFERENCE_DELTA = 1e-6

    def __init__(self, parts: Sequence[Profile], label: str):
        if len(parts) < 1:
            raise ValueError("BasicComposition needs at least one profile")
        self.parts = tuple(parts)
        self._label = label

    @property
    def spec(self) -> str:
        return self._label

    @cached_property
    def _splits(self) -> tuple[np.ndarray, ...]:
        n = len(self.parts)
        even = np.full(n, 1.0 / n)
        reference = np.array([part.epsilon(self.REFERENCE_DELTA) for part in self.parts])
        if not np.all(np.isfinite(reference)) or reference.sum() <= 0:
            return (even,)
        return even, reference / reference.sum()

    def _sum_at(self, eps: np.ndarray, weights: np.ndarray) -> np.ndarray:
        total = sum(np.asarray(part.delta(w * eps), dtype=float) for part, w in zip(self.parts, weights, strict=True))
        return np.minimum(1.0, np.asarray(total) * (1 + 4 * len(self.parts) * ROUNDING))

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        share = np.maximum(eps, 0.0)
        best = np.minimum.reduce([self._sum_at(share, w) for w in self._splits])
        return np.where(eps < 0, 1.0, best)

    @property
    def delta_at_infinity(self) -> float:
        return min(1.0, sum(part.delta_at_infinity for part in self.parts) * (1 + 4 * len(self.parts) * ROUNDING))

    def epsilon(self, delta: float) -> float:
        """``Σ_i ε_i(δ/n)`` (the even split of ``δ``, the sum rounded up): the basic composition theorem at that split,
        at the cost of one ``ε`` search per part (a search on :meth:`delta` would evaluate every part dozens of times;
        each part's ``ε`` depends on ``log δ``, so the split of ``δ`` moves the sum little)."""
        d = self._check_delta(delta)
        return sum(part.epsilon(d / len(self.parts)) for part in self.parts) * (1 + 4 * len(self.parts) * ROUNDING)
