"""The :class:`Profile` base class: what is known about a mechanism's privacy.

A privacy profile is ``δ(ε) = sup_{X~X'} H_{e^ε}(M(X)‖M(X'))`` for every real ``ε``
(Balle, Barthe, Gaboardi, *Privacy Amplification by Subsampling*, NeurIPS 2018, Def. of the
privacy profile; docs/setting.md). The neighbouring relation is symmetric, which gives the identity

    δ(ε) = 1 − e^ε + e^ε δ(−ε)        for every real ε,

because ``Σ[P − γR]_+ = 1 − γ + γ Σ[R − P/γ]_+``. Subclasses that only know ``ε ≥ 0`` in closed form
use it (:func:`delta_by_symmetry`) to answer for negative ``ε``; it also shows ``δ(ε) ≥ 1 − e^ε``.

The base class supplies, from ``δ(·)`` alone:

* ``epsilon(δ)`` by monotone bracketing in ``log δ`` space (conservative: it returns the upper end
  of the final bracket, where ``δ(ε) ≤ δ`` has been checked);
* ``region_lower(q)``, the f-DP boundary implied by the profile on a grid of ``ε1`` (the envelope of
  :func:`symsel.profiles.region.fdp_lower_from_profile` on :meth:`Profile.region_eps_grid`, built once and
  cached), which is conservative.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any

import mpmath
import numpy as np

from symsel import validate as v
from symsel.errors import ParameterError
from symsel.numeric import last_feasible
from symsel.profiles.region import ArrayLike, LinesEnvelope, as_float_array, profile_envelope, scalar_or_array
from symsel.profiles.tradeoff import (
    DEFAULT_RTOL,
    TradeoffPoints,
    advantage_upper,
    beta_lower,
    tpr_upper,
    tradeoff_points,
)

if TYPE_CHECKING:
    from symsel.pairs import Pair
    from symsel.pairs.loss import DominatedPair, DominatingPair, LossPair

#: number of ε1 points of the generic region grid (uniform on ``[0, ε(REGION_DELTA_FLOOR)]``).
REGION_GRID_POINTS = 16001
#: the grid stops where the profile falls to this δ (constraints beyond it only matter for q below it).
REGION_DELTA_FLOOR = 1e-60
#: largest ε searched by the generic ε(δ) before answering ``inf``.
EPSILON_SEARCH_CAP = 1e18
#: the largest ``ε`` at which :meth:`Profile.epsilon_below` trusts one evaluation of ``δ`` to rule a profile out.
SKIP_TEST_MAX_EPSILON = 700.0
#: relative width of the final bracket of the generic ε(δ).
EPSILON_RTOL = 1e-12
#: factor that rounds the mirrored ``δ(ε)``, ε < 0, up (see :func:`delta_by_symmetry`).
MIRROR_ROUNDING = 1.0 + 2.0**-50
#: how :meth:`Profile.self_composed` obtained a composition (the ``composition`` certificate reports them).
ROUTE_EXACT_GDP = "exact GDP (mu sqrt(k))"
ROUTE_EXACT_FINITE_PAIR = "exact finite pair"
ROUTE_PESSIMISTIC_PLD = "pessimistic PLD (dp-accounting self-composition)"


def delta_by_symmetry(eps: np.ndarray, delta_nonneg: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``δ(ε)`` for any finite real ``ε`` from a function valid on ``ε ≥ 0``.

    Uses ``δ(ε) = 1 − e^ε + e^ε δ(−ε)`` (symmetric neighbouring relation) for ``ε < 0``;
    ``1 − e^ε`` is formed as ``−expm1(ε)``. ``delta_nonneg`` is an upper bound, so the mirrored value is
    rounded up: its two non-negative terms carry at most ``3u`` relative error (``expm1``, ``exp``, one product,
    one sum; ``u = 2^-53``), covered by the factor ``1 + 2^-50`` and one more ulp (which also covers subnormals).
    Without it ``−expm1(−0.5)`` rounds below ``1 − e^{−0.5}``, the exact value of every profile there whose
    ``δ(0.5)`` is 0 (found by tests/test_properties.py).
    """
    eps = np.asarray(eps, dtype=float)
    out = np.asarray(delta_nonneg(np.abs(eps)), dtype=float).copy()
    neg = eps < 0
    if np.any(neg):
        en = eps[neg]
        mirrored = (-np.expm1(en) + np.exp(en) * out[neg]) * MIRROR_ROUNDING
        out[neg] = np.minimum(np.nextafter(mirrored, np.inf), 1.0)
    return out


class Profile(ABC):
    """A privacy profile ``δ(ε)`` with its inverse ``ε(δ)``, privacy region and (when known) RDP curve.

    Subclasses implement :meth:`_delta_finite` (``δ`` at finite real ``ε``, float64 arrays) and
    :attr:`spec`; they override :meth:`_log_delta_finite`, :attr:`delta_at_infinity`,
    :attr:`max_privacy_loss`, :meth:`epsilon`, :meth:`region_lower`, :meth:`rdp`, :meth:`delta_mp`
    and :meth:`region_lower_mp` where they know better than the generic versions, and the composition
    protocol (:meth:`self_composed`, :attr:`exact_composition`, :meth:`weighted_compositions`,
    :attr:`finite_loss_bound`, :attr:`pld_discretization`; docs/composition.md) where they compose better
    than dp-accounting's PLD of the generic profile.
    """

    #: spec-family name (the key in :data:`symsel.profiles.FAMILIES`).
    family: str = "profile"
    #: whether :meth:`self_composed` is exact and cheap for every ``k`` (closed form or finite sums, no
    #: dp-accounting FFT): the ``composition`` method then evaluates more ``k`` per law
    #: (:data:`symsel.bounds.composition.MAX_ANCHORS` instead of ``MAX_PLD_ANCHORS``), does not estimate the size
    #: of a PLD first, and ``best`` takes it for larger laws (:func:`symsel.bounds.api._composition_may_help`).
    exact_composition: bool = False
    #: a profile at most this one at every ``ε`` and much cheaper to evaluate, or ``None``: a pointwise minimum
    #: (``best``) asks it first and skips this profile where the floor already reaches the other components
    #: (:class:`symsel.bounds.api.PointwiseMinimum`; set by Lemma 7's selection profiles).
    floor: Profile | None = None

    def __getstate__(self) -> dict[str, Any]:
        """The attributes without the cached ones (``cached_property`` values: tables, compiled functions, a
        dp-accounting PLD), which are computed again on use: a profile pickles (Dask, multiprocessing) whatever it
        has cached."""
        cached = {name for klass in type(self).__mro__ for name, value in vars(klass).items()
                  if isinstance(value, cached_property)}
        return {name: value for name, value in self.__dict__.items() if name not in cached}

    # ------------------------------------------------------------------ hooks for subclasses
    @abstractmethod
    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        """``δ(ε)`` for a float64 array of finite real ``ε`` (either sign)."""

    def _log_delta_finite(self, eps: np.ndarray) -> np.ndarray:
        """``log δ(ε)`` for finite ``ε`` (``-inf`` where ``δ = 0``); override to avoid underflow."""
        with np.errstate(divide="ignore"):
            return np.log(self._delta_finite(eps))

    @property
    def delta_at_infinity(self) -> float:
        """``lim_{ε→∞} δ(ε)``: the mass where the worst pair's privacy loss is ``+inf``."""
        return 0.0

    @property
    def max_privacy_loss(self) -> float | None:
        """The least ``ε`` with ``δ(ε) = 0`` (``inf`` if none; ``None`` if unknown)."""
        return None

    @property
    @abstractmethod
    def spec(self) -> str:
        """A spec string, ``family(name=value, …)``, that rebuilds the profile via ``FAMILIES``."""

    # ------------------------------------------------------------------ δ(ε)
    def _eps_array(self, eps: Any, where: str) -> tuple[np.ndarray, bool]:
        return as_float_array(eps, "eps", f"{self.family}.{where}")

    def delta(self, eps: ArrayLike) -> float | np.ndarray:
        """``δ(ε)`` for real ``ε`` (any sign, ``±inf`` allowed); vectorized, scalar in → float out."""
        arr, scalar = self._eps_array(eps, "delta")
        out = np.empty_like(arr, dtype=float)
        finite = np.isfinite(arr)
        if np.any(finite):
            out[finite] = self._delta_finite(arr[finite])
        out[arr == math.inf] = self.delta_at_infinity
        out[arr == -math.inf] = 1.0
        if np.isnan(out).any():  # a bug, never a result: refuse rather than return NaN
            bad = float(arr[np.isnan(out)].flat[0])
            raise FloatingPointError(f"{self.spec}: δ(ε) evaluated to NaN at ε={bad!r}")
        return scalar_or_array(np.clip(out, 0.0, 1.0), scalar)

    def log_delta(self, eps: ArrayLike) -> float | np.ndarray:
        """``log δ(ε)`` (``-inf`` where ``δ = 0``), without underflow where the subclass supports it."""
        arr, scalar = self._eps_array(eps, "log_delta")
        out = np.empty_like(arr, dtype=float)
        finite = np.isfinite(arr)
        if np.any(finite):
            out[finite] = np.minimum(self._log_delta_finite(arr[finite]), 0.0)
        with np.errstate(divide="ignore"):
            out[arr == math.inf] = math.log(self.delta_at_infinity) if self.delta_at_infinity > 0 else -math.inf
        out[arr == -math.inf] = 0.0
        return scalar_or_array(out, scalar)

    def delta_mp(self, eps: Any, dps: int) -> mpmath.mpf:
        """``δ(ε)`` at ``dps`` decimal digits, where the profile is analytic."""
        raise NotImplementedError(f"{self.family}: no mpmath evaluation of the profile")

    def log_delta_within(self, eps: float, log_target: float) -> float:
        """An upper bound on ``log δ(ε)`` at one ``ε``, equal to ``log δ(ε)`` whenever that is above ``log_target``:
        a profile made of several bounds (``best``) may stop at the first one that is within the target. A planner's
        question "does ``δ(ε)`` fit the budget?" has the same answer either way."""
        return float(self.log_delta(eps))

    def delta_within(self, eps: float, target: float) -> float:
        """``δ(ε)`` at one ``ε`` in the same sense as :meth:`log_delta_within`: exact when above ``target``, else
        any upper bound within it."""
        return float(self.delta(eps))

    def epsilon_below(self, delta: float, upper: float) -> float:
        """:meth:`epsilon` when it is at most ``upper``, else ``math.inf``: ``δ(upper) > delta`` shows (``δ`` is
        non-increasing) that every ``ε`` at most ``upper`` is over ``delta``, at the cost of one evaluation. How
        ``best`` skips a component that cannot win (:meth:`symsel.bounds.api.PointwiseMinimum.epsilon`). Not tried
        above :data:`SKIP_TEST_MAX_EPSILON`, where ``e^ε`` overflows float64 and a computed profile, capped there to
        stay conservative, need not be non-increasing any more."""
        if upper <= SKIP_TEST_MAX_EPSILON:
            floor = self.floor  # below this profile: its δ over delta rules this one out at less cost
            if floor is not None and float(floor.delta(max(upper, 0.0))) > delta:
                return math.inf
            if float(self.delta(max(upper, 0.0))) > delta:
                return math.inf
        return self.epsilon(delta)

    # ------------------------------------------------------------------ ε(δ)
    def epsilon(self, delta: float) -> float:
        """The smallest ``ε ≥ 0`` with ``δ(ε) ≤ delta`` (reported as ``max(0, ·)``).

        Profiles are defined for negative ``ε`` too, but an ``(ε, δ)`` guarantee with ``ε < 0`` is
        not reported: the answer is 0.0 whenever ``delta ≥ δ(0)``. Returns ``math.inf`` when no
        finite ``ε`` works (``delta < δ(∞)``, or ``delta = 0`` with unbounded privacy loss).

        Generic method: double ``ε`` until ``log δ(ε) ≤ log delta``, then shrink the bracket by
        32-section to a relative width ``1e-12``; the upper end is returned, so ``δ(ε) ≤ delta``
        holds at the answer (conservative).
        """
        d = self._check_delta(delta)
        log_target = math.log(d) if d > 0 else -math.inf
        if self.log_delta(0.0) <= log_target:
            return 0.0
        if d < self.delta_at_infinity:
            return math.inf
        if d == 0 and self.max_privacy_loss is not None:
            return max(0.0, float(self.max_privacy_loss))
        answer = _bracket_epsilon(self.log_delta, log_target)
        loss = self.max_privacy_loss  # δ(loss) = 0 by definition: never answer above it
        return answer if loss is None or not math.isfinite(loss) else min(answer, max(0.0, float(loss)))

    def _check_delta(self, delta: Any) -> float:
        return v.probability(delta, "delta", f"{self.family}.epsilon")

    # ------------------------------------------------------------------ region
    #: the number of ε1 points of :meth:`region_eps_grid` (a coarse profile of a DP-SGD run takes fewer:
    #: :data:`symsel.profiles.dpaccounting.COARSE_REGION_GRID_POINTS`).
    region_grid_points: int = REGION_GRID_POINTS

    def region_eps_grid(self) -> np.ndarray:
        """The ε1 grid of the generic region boundary.

        :attr:`region_grid_points` (``REGION_GRID_POINTS``, 16001) uniform points on ``[0, E]``, ``E = ε(δ = 1e-60)``
        (or the point where the profile reaches ``δ(∞)``; capped at 700 so that ``e^ε1`` stays finite). Any grid
        gives a region containing the profile's own (every ``(ε1, δ(ε1))`` line is a valid constraint): fewer points
        only loosen it.
        """
        floor = max(REGION_DELTA_FLOOR, self.delta_at_infinity * (1 + 1e-9))
        top = self.epsilon(min(floor, 1.0))
        if not math.isfinite(top) or top > 700:
            top = 700.0
        top = max(top, 1e-6)
        return np.linspace(0.0, top, self.region_grid_points)

    def region_lower(self, q: ArrayLike) -> float | np.ndarray:
        """Lower boundary ``q'_min(q)`` of the privacy region implied by the profile (docs/setting.md).

        Generic: the max of the ``(ε1, δ(ε1))`` polygon constraints over :meth:`region_eps_grid`
        (:func:`symsel.profiles.region.profile_envelope`, built once and cached); a finite grid gives a smaller
        ``q'_min``, so the region is larger and the answer conservative. The loss shrinks like
        ``1/N²``; measured against the exact Gaussian boundary ``Φ(Φ⁻¹(q) − μ)`` with the default
        16001 points it is at most 5e-8 (μ = 1), 3e-7 (μ = 4), 3e-8 (μ = 10) absolute in ``q'``
        (``tests/profiles/test_profiles_base.py``). :func:`symsel.profiles.region.fdp_upper_from_profile` certifies
        the loss for any profile.
        """
        return self._generic_envelope(q)

    @cached_property
    def _generic_envelope(self) -> LinesEnvelope:
        grid = self.region_eps_grid()
        return profile_envelope(grid, np.asarray(self.delta(grid), dtype=float))

    def region_lower_mp(self, q: Any, dps: int) -> mpmath.mpf:
        """``q'_min(q)`` at ``dps`` digits, where the boundary is analytic."""
        raise NotImplementedError(f"{self.family}: no mpmath evaluation of the region boundary")

    # ------------------------------------------------------------------ trade-off curve and attack risk
    def tradeoff(self, alpha: ArrayLike, rtol: float = DEFAULT_RTOL) -> float | np.ndarray:
        """A certified lower bound on the adversary's type II error ``β`` at type I error ``alpha`` (the trade-off
        curve ``f(α)`` of f-DP), for a number or an array of ``alpha`` in ``[0, 1]``; scalar in, float out.

        ``f(α) = sup_ε max(0, 1 − δ(ε) − e^ε α, e^{−ε}(1 − δ(ε) − α))`` (docs/tradeoff.md, Theorem 1), searched
        per ``α`` to a relative ``rtol`` (:func:`symsel.profiles.tradeoff.tradeoff_points`): each value evaluates
        ``δ`` at 15-40 points."""
        return beta_lower(self, alpha, rtol)

    def tpr_at_fpr(self, fpr: ArrayLike, rtol: float = DEFAULT_RTOL) -> float | np.ndarray:
        """A certified upper bound on the true-positive rate of any membership attack at false-positive rate ``fpr``
        (``1 − f(fpr)``, computed in its own accurate form: it stays exact in relative terms for a tiny ``fpr``)."""
        return tpr_upper(self, fpr, rtol)

    def tradeoff_points(self, alpha: ArrayLike, rtol: float = DEFAULT_RTOL) -> TradeoffPoints:
        """:meth:`tradeoff` and :meth:`tpr_at_fpr` together, with the ``ε`` of each answer and the search's gap
        (:class:`symsel.profiles.tradeoff.TradeoffPoints`)."""
        return tradeoff_points(self, alpha, rtol)

    def advantage(self) -> float:
        """A certified upper bound on the attack advantage ``sup (TPR − FPR)``, at most ``δ(0)`` (the total
        variation distance, which it equals for an exact profile) and below it where a bound is loose at ``ε = 0``
        (docs/tradeoff.md, Corollary 2; :func:`symsel.profiles.tradeoff.advantage_upper`): 14-60 evaluations of
        ``δ``."""
        return advantage_upper(self)

    # ------------------------------------------------------------------ dominating pair
    def dominating_pair(self) -> Pair | None:
        """The mechanism's dominating pair (docs/lower-bounds.md), or ``None`` when
        none is known.

        Any post-processing of it, under any score order, is a valid base mechanism with (at most)
        this profile, which is what exact evaluation, lower bounds and audits need
        (:func:`symsel.pairs.as_pair`). The generic profile knows none.
        """
        return None

    def dominating_loss_pairs(self) -> tuple[DominatingPair, ...]:
        """The base's discrete pairs ordered by privacy loss that dominate it (:mod:`symsel.pairs.loss`), one per
        direction that the base's neighbouring pairs can take: upper bounds computed on them hold for the base.
        Empty when none is known; the generic profile knows none. This is the one protocol through which
        ``interval`` reaches a non-Gaussian base (docs/interval.md, "Every base with a dominating pair")."""
        return ()

    #: whether :meth:`deep_dominating_loss_pairs` hands out pairs (known without building them).
    has_deep_loss_pairs: bool = False

    #: the largest mass of one piece into which ``interval`` cuts the atoms of :meth:`dominating_loss_pairs`
    #: (``None``: its default, :data:`symsel.bounds.interval_pairs.PIECE_MASS`). Any cut gives a certified bound; a
    #: coarser one is cheaper and a little looser.
    interval_piece_mass: float | None = None

    def deep_dominating_loss_pairs(self) -> tuple[DominatingPair, ...]:
        """Dominating pairs resolved further into the tail than :meth:`dominating_loss_pairs` (for ``interval`` at
        small ``δ``), built on demand; empty when the base has none (:attr:`has_deep_loss_pairs`)."""
        return ()

    def dominated_loss_pairs(self) -> tuple[DominatedPair, ...]:
        """The base's discrete pairs ordered by privacy loss that it dominates (post-processings of its pairs), one
        per direction: the exact value of a selection on one is a lower bound on the base's worst case (the lower
        bounds take only these). Empty when none is known."""
        return ()

    def loss_pairs(self, role: str = "dominating") -> tuple[LossPair, ...]:
        """:meth:`dominating_loss_pairs` (``role="dominating"``) or :meth:`dominated_loss_pairs`
        (``"dominated"``) by name; the pairs keep their type, so a consumer still refuses the wrong kind."""
        if role == "dominating":
            return self.dominating_loss_pairs()
        if role == "dominated":
            return self.dominated_loss_pairs()
        raise ParameterError("role", role, "'dominating' or 'dominated'", "loss_pairs")

    def split_costly(self) -> tuple[Profile, list[Profile]]:
        """For an export on a grid (:func:`symsel.profiles.export.export_grid`): a profile cheap to evaluate at every
        grid point and the costly profiles to evaluate at a few points only, every one an upper bound on the same
        curve (so any mix of them per point is too). The generic profile is all cheap: ``(self, [])``; a selection
        bound that combines costly methods answers for itself (:class:`symsel.bounds.SelectionBound`)."""
        return self, []

    # ------------------------------------------------------------------ composition protocol
    def self_composed(self, k: int) -> tuple[Profile, str] | None:
        """The profile of ``k ≥ 2`` independent runs of the base's dominating pair, and how it was obtained
        (:data:`ROUTE_EXACT_GDP`, :data:`ROUTE_EXACT_FINITE_PAIR`, :data:`ROUTE_PESSIMISTIC_PLD`), for the
        ``composition`` method (:func:`symsel.profiles.composition.composed`, docs/composition.md).

        ``None``, the generic answer, means the profile knows no route of its own: the caller composes the
        pessimistic connect-the-dots PLD of ``δ(·)`` (:func:`symsel.profiles.export.to_pld`) through
        dp-accounting, which is valid for every profile. A subclass that overrides this returns a valid upper
        bound on the ``k``-fold composition's profile, and refuses with a
        :class:`~symsel.errors.NotApplicableError` a PLD too large to build
        (:func:`symsel.profiles.composition.check_pld_size`)."""
        return None

    def weighted_compositions(self, ks: tuple[int, ...], weights: tuple[float, ...]) -> tuple[Profile, str] | None:
        """One profile bounding ``Σ_j w_j δ_{Q^⊗k_j}(ε)`` for the ``k_j ≥ 1`` in ``ks`` and weights ``w_j ≥ 0``, and
        the route, when the base evaluates many compositions at once faster than one at a time (the Gaussian: every
        ``μ√k`` in one vectorized call). ``None`` (generic): the caller sums :meth:`self_composed` anchor by
        anchor."""
        return None

    @property
    def finite_loss_bound(self) -> float | None:
        """The largest finite ``|privacy loss|`` of one run of the dominating pair (losses at ``±∞``, which
        dp-accounting keeps as a mass at infinity, excluded), when the base bounds it; ``None`` if unknown (the
        generic profile, the Gaussian). Unlike :attr:`max_privacy_loss` it is finite for a pair with mass where the
        other has none (``approx`` with ``δ > 0``). Sizes a dp-accounting PLD of ``k`` runs
        (:func:`symsel.profiles.composition.pld_points`)."""
        return None

    def at_tolerance(self, rtol: float) -> Profile:
        """The profile ``best`` computes on when asked for the relative tolerance ``rtol`` (``bound(..., rtol=)``): a
        profile that also dominates the mechanism, on a coarser numerical grid where that saves work and the
        tolerance allows it (a DP-SGD run: :meth:`symsel.profiles.dpaccounting.DpsgdProfile.at_tolerance`); by
        default the profile itself."""
        return self

    @property
    def pld_discretization(self) -> float | None:
        """The loss grid of the dp-accounting PLD that :meth:`self_composed` builds, when the profile sets its own
        (a PLD-backed profile's ``value_discretization_interval``); ``None``: the composition's default
        (:data:`symsel.profiles.composition.PLD_INTERVAL`)."""
        return None

    # ------------------------------------------------------------------ RDP
    def rdp(self, order: float) -> float | None:
        """The Rényi-DP curve ``ε(λ)`` at ``order = λ > 1`` (``inf`` allowed), or ``None`` if unknown."""
        self._check_order(order)
        return None

    def rdp_curve(self, orders: np.ndarray) -> np.ndarray | None:
        """:meth:`rdp` at every one of ``orders`` (an array of orders > 1), or ``None`` if the curve is unknown;
        one :meth:`rdp` call per order unless a profile vectorizes it."""
        out = []
        for order in np.asarray(orders, dtype=float):
            value = self.rdp(float(order))
            if value is None:
                return None
            out.append(float(value))
        return np.array(out)

    def _check_order(self, order: Any) -> float:
        return check_order(order, f"{self.family}.rdp")

    # ------------------------------------------------------------------ misc
    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec}>"


def _bracket_epsilon(log_delta: Callable[[Any], Any], log_target: float) -> float:
    """Smallest ``ε ≥ 0`` with ``log_delta(ε) ≤ log_target``, from above (see ``Profile.epsilon``):
    double ``ε`` to a bracket, then :func:`symsel.numeric.last_feasible` (checked on the safe side). Each ``ε`` is
    evaluated once: Brent's method starts by asking for the bracket's two ends, which the doubling has evaluated
    (on a selection bound's mixture of thousands of terms, two of its seven evaluations)."""
    seen: dict[float, float] = {}

    def value(eps: float) -> float:
        if eps not in seen:
            seen[eps] = float(log_delta(eps))
        return seen[eps]

    lo, hi = 0.0, 1.0
    while value(hi) > log_target:
        lo, hi = hi, hi * 2.0
        if hi > EPSILON_SEARCH_CAP:
            return math.inf
    return last_feasible(lambda e: value(e) - log_target, lo, hi, xtol=EPSILON_RTOL, rtol=EPSILON_RTOL)


def check_order(order: Any, where: str) -> float:
    """A Rényi order ``λ > 1`` (``inf`` allowed)."""
    return v.real(order, "order", where, lo=1.0, lo_open=True, allowed="a Rényi order > 1 (inf allowed)")
