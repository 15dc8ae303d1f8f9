"""One entry point over every selection bound, and the one result type they all return.

``bound(dist, base, method)`` is a pure function of the law of ``K``, the base mechanism's
:class:`~symsel.profiles.Profile` and a method name; it returns a :class:`SelectionBound`, itself a
Profile (so it can be fed on: plotted, inverted, composed), carrying which theorem produced it and
how close its numerical steps are to the exact statement. Methods are independent of each other;
only ``best`` combines them, by the pointwise minimum of ``δ(ε)`` — valid because each component is
a valid upper bound on the same privacy profile.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import sympy

from symsel import validate
from symsel.bounds.precision import usable_float_error
from symsel.certified import Upper
from symsel.distributions import Distribution
from symsel.errors import NotApplicableError, ParameterError
from symsel.memory import MIB, bounded_cache
from symsel.profiles import Profile
from symsel.profiles.region import ArrayLike
from symsel.rendering import renderer

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: every method, in the order reports list them (``best`` last: it combines the others).
METHODS = ("paper", "polygon", "fdp", "envelope", "composition", "interval", "rdp", "rdp_lemma7", "best")
#: the methods ``best`` takes the minimum of: every method but ``polygon`` (its region contains ``fdp``'s,
#: so it is never below ``fdp`` beyond its certificate's gap) and ``rdp_lemma7`` (seconds per call; it can
#: beat ``envelope`` by a fraction of a percent on bases known only by an RDP curve). ``composition`` is
#: taken for concentrated laws only (:func:`_composition_may_help`), ``interval`` for concentrated laws on
#: bases with a dominating pair (:func:`_interval_may_help`), ``paper`` only where ``fdp`` does not apply: its
#: region contains the polygon's, so it is never below ``fdp`` either (docs/ratio-methods.md).
BEST_COMPONENTS = ("envelope", "composition", "interval", "fdp", "paper", "rdp")
#: ``best`` takes ``composition`` on bases without a closed-form composition only for laws with at most
#: this many support points (each needs one dp-accounting self-composition).
BEST_COMPOSITION_MAX_PLD = 8
#: ``best`` takes ``composition`` only for laws with a bounded support of at most this many points.
BEST_COMPOSITION_MAX_SUPPORT = 512
#: ``best`` takes ``interval`` for a concentrated law with a larger (or unbounded) support when its ``φ'`` is a
#: short expression (at most this many SymPy operations: Poisson, binomial, fixed ``K`` of any size), whose
#: float64 evaluation is cheap at the ~10⁷ points the cells need per ``ε``, and its mean is at least
#: :data:`BEST_INTERVAL_MIN_MEAN`: below it the envelope wins on such laws (Poisson(10), σ = 4, δ = 1e-6: envelope
#: 1.9705, interval 1.9711; Poisson(30): 3.5138 against 3.4735), and ``interval`` costs ~0.1 s per ``ε``, which a PLD
#: export pays a few hundred times.
BEST_INTERVAL_MAX_OPS = 64
#: the order in which a planner's "does it fit?" question (:meth:`PointwiseMinimum.log_delta_within`) asks
#: ``best``'s components: closed forms first, the interval bound (~0.1 s per ``ε`` on a PLD) last.
COST_ORDER = ("rdp", "paper", "envelope", "fdp", "composition", "interval")
#: the order in which :meth:`PointwiseMinimum.epsilon` asks the components for a fixed ``K`` whose envelope has at
#: least :data:`FIXED_K_COSTLY_TERMS` terms: ``interval`` before ``envelope`` and ``composition``. For a fixed ``K``
#: ``interval`` is the one that wins where it applies; its search then starts from the closed forms' ``ε`` instead
#: of the envelope's (one or two more evaluations, 0–25 ms), and the envelope's own root search, whose cost grows
#: with its terms (80 ms for point(40) on gaussian(σ = 4): 43,000 terms; 110 ms on DP-SGD: 67,000), becomes one
#: evaluation at ``interval``'s ``ε`` (DP-SGD's composition is ruled out there by its floor). On weak runs the
#: envelope is small and cheap (3,900 terms at σ = 40: 9 ms) and a close start for ``interval``, whose evaluations
#: cost most there (0.1 s): the usual order stays. On a base known by a dp-accounting PLD (a DP-SGD run) the usual
#: order stays too: there every evaluation of ``interval`` costs 50-150 ms (the two directions' pairs of ~16,000
#: atoms each), and its search from the closed forms' ``ε`` (40-75 % above the answer for point(40) at σ = 1.1-2)
#: took 14-20 of them, from the envelope's 10. Only the work depends on the order.
FIXED_K_SEARCH_ORDER = ("rdp", "paper", "fdp", "interval", "envelope", "composition")
FIXED_K_COSTLY_TERMS = 20_000
BEST_INTERVAL_MIN_MEAN = 20.0
#: on a Gaussian base with ``μ`` below this (σ above 13.3), ``best`` takes ``interval`` for every law with a cheap
#: ``φ'``, spread laws included: there the envelope is looser than ``interval`` (mean-10 laws at σ = 20: 0.17–0.20 %
#: above the certified lower bound against 0.07–0.09 %; at σ = 40: 0.34–0.40 % against 0.08–0.10 %). Up to σ ≈ 13
#: the two differ by at most 0.05 % (σ = 10: both about 0.1 %; σ = 12: 0.10–0.12 % against 0.02–0.07 %) and the
#: envelope costs a tenth (benchmarks/RESULTS.md, "Weak runs").
BEST_INTERVAL_WEAK_MU = 0.075

Scalar = float | int | bool | str | None


class _Delegating(Profile):
    """A profile whose values are another's (:meth:`_inner`): a bound wrapping its profile, a deferred component
    wrapping the bound it builds."""

    def _inner(self) -> Profile:
        raise NotImplementedError

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        return np.asarray(self._inner().delta(eps), dtype=float)

    def _log_delta_finite(self, eps: np.ndarray) -> np.ndarray:
        return np.asarray(self._inner().log_delta(eps), dtype=float)

    def log_delta_within(self, eps: float, log_target: float) -> float:
        return self._inner().log_delta_within(eps, log_target)

    def delta_within(self, eps: float, target: float) -> float:
        return self._inner().delta_within(eps, target)

    @property
    def delta_at_infinity(self) -> float:
        return self._inner().delta_at_infinity

    @property
    def max_privacy_loss(self) -> float | None:
        return self._inner().max_privacy_loss


@dataclass(frozen=True, eq=False)
class SelectionBound(_Delegating):
    """A certified upper bound on the privacy profile of the best of ``K`` runs of a base mechanism.

    Attributes:
        method: one of :data:`METHODS`.
        theorem: the statement the bound implements (paper, theorem number).
        profile: the bound itself, as a :class:`~symsel.profiles.Profile` (``δ(ε)``, ``ε(δ)``).
        dist, base: the law of ``K`` and the base mechanism's profile.
        certificate: how the numerical steps relate to the exact statement (tolerances, cells,
            convergence); empty for closed forms.
        details: method-specific numbers (``eps1``, ``log_ratio``, orders, components of ``best``…).
        rtol: the search tolerance asked for (``bound(..., rtol=)``; ``None``: the default), kept for pickling.
    """

    method: str
    theorem: str
    profile: Profile = field(repr=False)
    dist: Distribution = field(repr=False)
    base: Profile = field(repr=False)
    certificate: Mapping[str, Scalar] = field(default_factory=dict)
    details: Mapping[str, Scalar] = field(default_factory=dict)
    rtol: float | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.certificate, LazyMapping):  # best's (and a deferred component's) on first read
            object.__setattr__(self, "certificate", MappingProxyType(dict(self.certificate)))
        if not isinstance(self.details, LazyMapping):
            object.__setattr__(self, "details", MappingProxyType(dict(self.details)))

    family = "selection"

    def __reduce__(self) -> tuple[Callable[..., SelectionBound], tuple[Distribution, Profile, str, float | None]]:
        """Pickled as its question (law, base, method, rtol), not its numbers: unpickling asks :func:`bound` again,
        which gives the same bound, so a bound can be sent to a Dask or multiprocessing worker (at the cost of
        computing it there once)."""
        return bound, (self.dist, self.base, self.method, self.rtol)

    @property
    def spec(self) -> str:
        return f"selection(dist={self.dist.spec}, base={self.base.spec}, method={self.method!r})"

    def _inner(self) -> Profile:
        return self.profile

    @property
    def floor(self) -> Profile | None:  # type: ignore[override]
        """The inner profile's cheap lower profile (:attr:`symsel.profiles.Profile.floor`), if it has one."""
        return self.profile.floor

    def epsilon(self, delta: float) -> Upper:
        """Smallest ``ε ≥ 0`` with the bound ``≤ delta`` (conservative; see the inner profile): an upper bound on the
        selection's ``ε(δ)``, typed :class:`~symsel.certified.Upper`."""
        return Upper(self.profile.epsilon(self._check_delta(delta)))

    def delta(self, eps: ArrayLike) -> Upper | np.ndarray:
        """The bound's ``δ(ε)`` (:meth:`symsel.profiles.Profile.delta`): at a scalar ``ε`` an upper bound on the
        selection's ``δ(ε)`` typed :class:`~symsel.certified.Upper`, at an array of them an array."""
        value = super().delta(eps)
        return Upper(value) if isinstance(value, float) else value

    def epsilon_below(self, delta: float, upper: float) -> float:
        return self.profile.epsilon_below(self._check_delta(delta), upper)

    @property
    def vacuous(self) -> bool:
        """Whether the bound says nothing (``δ(ε) = 1`` for every ``ε``)."""
        return self.profile.delta_at_infinity >= 1.0

    def __repr__(self) -> str:
        return f"<SelectionBound {self.method}: {self.dist.spec} on {self.base.spec}>"

    def split_costly(self) -> tuple[Profile, list[Profile]]:
        """For ``best``, the pointwise minimum of its cheap components (every one but ``interval``) and the list of its
        costly ones; any other bound is returned whole, with no costly part. Every value of either is an upper bound
        on the selection's curve, so any mix of them per grid point is too (:mod:`symsel.profiles.export`)."""
        inner = self.profile
        if self.method != "best" or not isinstance(inner, PointwiseMinimum):
            return self, []
        costly: list[Profile] = [part for part in inner.parts if part.method == "interval"]
        cheap = [part for part in inner.parts if part.method != "interval"]
        if not costly or not cheap:
            return self, []
        merged: Profile = cheap[0] if len(cheap) == 1 else PointwiseMinimum(tuple(cheap))
        return merged, costly

    def _repr_html_(self) -> str:
        """Jupyter's ``text/html`` display: ``ε`` at δ ∈ {1e-3, 1e-6, 1e-10} (each ``self.epsilon(δ)``, evaluated
        when displayed), method, theorem, a one-line certificate summary and the attack risk those three points imply
        (TPR and ``β(α)`` at FPR ∈ {1e-3, 1e-2, 0.1}, the advantage; docs/tradeoff.md); no lower-bound search and no
        search of the trade-off curve (:func:`symsel.display.bound_html`, through :mod:`symsel.rendering`)."""
        return renderer().bound_html(self)

    def plot(self, ax: Axes | None = None, deltas: Sequence[float] | None = None, lower: bool = False) -> Axes:
        """``ε`` against ``δ`` on a log ``δ`` axis: the bound at each of ``deltas`` (default 1e-12 … 1e-2, one
        ``self.epsilon(δ)`` each), with ``lower=True`` the certified lower bound (a search per ``δ``, where it is
        cheap), and one run of the base; drawn on ``ax`` (a new figure when ``None``), which is returned. Needs
        matplotlib (the ``notebooks`` extra) (:func:`symsel.display.plot_bound`, through :mod:`symsel.rendering`)."""
        return renderer().plot_bound(self, ax, deltas, lower)

    def plot_tradeoff(self, ax: Axes | None = None, fprs: Sequence[float] | None = None) -> Axes:
        """The certified trade-off curve ``β(α)`` (a lower bound on any attack's false-negative rate) against the
        false-positive rate on a log axis, beside one run of the base (:func:`symsel.display.plot_tradeoff`, through
        :mod:`symsel.rendering`; docs/tradeoff.md). Needs matplotlib (the ``notebooks`` extra)."""
        return renderer().plot_tradeoff(self, ax, fprs)


class PointwiseMinimum(Profile):
    """``δ(ε) = min_i δ_i(ε)`` of valid bounds on the same profile (itself valid)."""

    family = "selection"

    def __init__(self, parts: tuple[SelectionBound, ...]):
        self.parts = parts

    @property
    def spec(self) -> str:
        return "minimum(" + ", ".join(p.method for p in self.parts) + ")"

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        return self._minimum(lambda profile: profile.delta(eps))

    def _log_delta_finite(self, eps: np.ndarray) -> np.ndarray:
        return self._minimum(lambda profile: profile.log_delta(eps))

    def _minimum(self, value_of: Callable[[Profile], Any]) -> np.ndarray:
        """The components' pointwise minimum of ``value_of``, cheapest first; a component with a
        :attr:`~symsel.profiles.Profile.floor` is left out where its floor is nowhere below the minimum so far
        (it is at least its floor, so it cannot lower the minimum: the result is the same)."""
        out: np.ndarray | None = None
        for part in self._cheapest_first():
            floor = part.floor
            if out is not None and floor is not None and np.all(np.asarray(value_of(floor), dtype=float) >= out):
                continue
            value = np.asarray(value_of(part), dtype=float)
            out = value if out is None else np.minimum(out, value)
        assert out is not None  # best has at least one component
        return out

    @property
    def delta_at_infinity(self) -> float:
        return float(self._minimum(lambda profile: profile.delta_at_infinity))

    @property
    def max_privacy_loss(self) -> float | None:
        smallest: float | None = None
        for part in self._cheapest_first():
            floor = part.floor  # at most the part's own largest loss, where both are known
            floor_loss = None if floor is None else floor.max_privacy_loss
            if smallest is not None and floor_loss is not None and floor_loss >= smallest:
                continue
            loss = part.max_privacy_loss
            if loss is not None:
                smallest = loss if smallest is None else min(smallest, loss)
        return smallest

    def epsilon(self, delta: float) -> float:
        """``min_i ε_i(δ)``: the smallest ``ε`` where the minimum reaches ``δ`` is the smallest of the
        components' (each computed conservatively). The components are asked in :meth:`_search_order`, each only
        below the smallest ``ε`` so far
        (:meth:`~symsel.profiles.Profile.epsilon_below`): a component whose ``δ`` there is over ``delta`` cannot win
        and costs one evaluation instead of a root search."""
        value, leader = math.inf, None
        for part in self._cheapest_first(self._search_order()):
            found = _epsilon_below(part, delta, value, leader)
            if found < value:
                value, leader = found, part
        return value

    def _search_order(self) -> tuple[str, ...]:
        """:data:`FIXED_K_SEARCH_ORDER` for a fixed ``K`` with a costly envelope (at least
        :data:`FIXED_K_COSTLY_TERMS` terms) on a base not known by a PLD, else :data:`COST_ORDER`."""
        dist = self.parts[0].dist
        if dist.support_max is None or dist.support_min != dist.support_max:
            return COST_ORDER
        if self.parts[0].base.pld_discretization is not None:  # interval's evaluations cost most there
            return COST_ORDER
        envelope = next((part for part in self.parts if part.method == "envelope"), None)
        terms = 0 if envelope is None else envelope.details.get("terms", 0)
        large = isinstance(terms, int | float) and terms >= FIXED_K_COSTLY_TERMS
        return FIXED_K_SEARCH_ORDER if large else COST_ORDER

    def _cheapest_first(self, order: tuple[str, ...] = COST_ORDER) -> list[SelectionBound]:
        """The components in ``order``, with ``rdp`` last when it is Lemma 7 (about a hundred certified suprema; it
        has a floor, which the others do not need to wait for)."""
        def rank(part: SelectionBound) -> tuple[bool, int]:
            lemma7 = part.method == "rdp" and part.floor is not None  # a closed-form rdp has no floor
            return lemma7, order.index(part.method) if part.method in order else 0

        return sorted(self.parts, key=rank)

    def _first_within(self, value_of: Callable[[Profile], float], target: float) -> float:
        value = math.inf
        for part in self._cheapest_first():
            floor = part.floor
            if floor is not None and value_of(floor) >= value:
                continue  # it is at least its floor: it cannot lower the value
            value = min(value, value_of(part))
            if value <= target:
                break
        return value

    def log_delta_within(self, eps: float, log_target: float) -> float:
        """The components in :data:`COST_ORDER`, stopping at the first within ``log_target`` (its value is an upper
        bound on the minimum, and within the target); else the minimum of all: ``log δ(ε)`` exactly."""
        return self._first_within(lambda part: part.log_delta_within(eps, log_target), log_target)

    def delta_within(self, eps: float, target: float) -> float:
        """:meth:`log_delta_within` in ``δ``."""
        return self._first_within(lambda part: part.delta_within(eps, target), target)


#: the relative step of the one-sided difference that gives the slope of ``log δ`` handed to a costly component's
#: search (:func:`_epsilon_below`).
SLOPE_STEP = 1e-3


def _epsilon_below(part: SelectionBound, delta: float, upper: float, leader: SelectionBound | None) -> float:
    """``part.epsilon_below(delta, upper)``; for an interval bound (a root search, ~0.1 s per evaluation) with the
    slope of ``log δ`` of ``leader`` (the component that gave ``upper``) at ``upper`` as a hint: near ``upper`` the two
    curves run nearly parallel on random laws, so the search's first probes land on the crossing
    (:meth:`~symsel.bounds.interval.CellBoundProfile.epsilon_below`). The hint only steers the work: every point the
    search returns is checked."""
    from symsel.bounds.interval import CellBoundProfile

    inner = part.profile
    if leader is None or not isinstance(inner, CellBoundProfile) or not 0 < upper < math.inf:
        return part.epsilon_below(delta, upper)
    step = SLOPE_STEP * upper
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.asarray(leader.log_delta(np.array([upper - step, upper])), dtype=float)
    slope = float((logs[1] - logs[0]) / step)
    return inner.epsilon_below(delta, upper, slope if math.isfinite(slope) else None)


# ------------------------------------------------------------------------------------ methods
def _hockey_stick(dist: Distribution, base: Profile, method: str) -> SelectionBound:
    from symsel.bounds.hockey_stick import hockey_stick_bound

    if method != "paper":  # the certified ratio sups evaluate phi' in float64
        usable_float_error(dist, method)
    selection = hockey_stick_bound(dist, base, method)
    ratio = selection.ratio
    certificate: dict[str, Scalar] = {}
    if ratio.certificate is not None:
        certificate = {"sup_cells": ratio.certificate.cells, "converged": ratio.certificate.converged,
                       "attained_log_ratio": ratio.certificate.lower}
    details = {"eps1": ratio.eps1, "log_ratio": ratio.log_ratio}
    return SelectionBound(method, ratio.theorem, selection, dist, base, certificate, details)


def _envelope(dist: Distribution, base: Profile) -> SelectionBound:
    from symsel.bounds.envelope import envelope_profile

    selection = envelope_profile(dist, base)
    cert = selection.certificate
    certificate = {"eps_shift": cert.eps_shift, "delta_floor": cert.delta_floor, "cells": cert.cells,
                   "hull_lines": cert.hull_lines, "converged": cert.converged, "value_margin": cert.value_margin}
    details = {"terms": cert.terms, "constant": selection.mixture.constant,
               "log_t_max": float(selection.mixture.log_breakpoints.max(initial=-math.inf))}
    theorem = "Koskela et al. Thm 4.1 per output (symsel envelope bound, docs/envelope.md)"
    return SelectionBound("envelope", theorem, selection, dist, base, certificate, details)


def _composition(dist: Distribution, base: Profile) -> SelectionBound:
    from symsel.bounds.composition import composition_profile

    selection, certificate = composition_profile(dist, base)
    theorem = "sum_k P[K=k] delta of the k-fold composition of the base (docs/composition.md)"
    return SelectionBound("composition", theorem, selection, dist, base, cast("dict[str, Scalar]", certificate), {})


def _interval(dist: Distribution, base: Profile, rtol: float) -> SelectionBound:
    from symsel.bounds import interval
    from symsel.pairs.location import GaussianPair

    if not isinstance(base.dominating_pair(), GaussianPair):
        return _pair_interval(dist, base, rtol)
    selection = interval.interval_profile(dist, base)
    selection.search_rtol = rtol
    finest = interval.L_COARSE / math.prod(split for split, _ in interval.REFINEMENTS)
    certificate = {"h_width": interval.h_width(selection.mu), "l_width": finest, "l_coarse": interval.L_COARSE,
                   "h_top": selection.mu + interval.TOP,
                   "mass_allowance": interval.MASS_ALLOWANCE, "sum_allowance": interval.SUM_ALLOWANCE,
                   "search_rtol": rtol, "cell_tolerance": interval.settle_share(rtol)}
    theorem = "worst case over expanding-interval orders on a Gaussian base (symsel interval bound, docs/interval.md)"
    return SelectionBound("interval", theorem, selection, dist, base, certificate, {"mu": selection.mu})


def _pair_interval(dist: Distribution, base: Profile, rtol: float) -> SelectionBound:
    from symsel.bounds import interval_pairs as ip
    from symsel.bounds.interval import settle_share

    selection = ip.pair_interval_profile(dist, base)
    selection.search_rtol = rtol
    certificate: dict[str, Scalar] = {
        "piece_mass": selection.piece_mass, "l_coarse_pieces": ip.L_COARSE, "sum_allowance": ip.SUM_ALLOWANCE,
        "search_rtol": rtol, "cell_tolerance": settle_share(rtol),
        "pairs": "; ".join(f"{p.source} ({p.n} atoms, mass error {p.mass_error:.2g})" for p in selection.pairs)}
    theorem = ("worst case over expanding-interval orders of the base's dominating pairs ordered by privacy loss, "
               "atoms split (symsel interval bound, docs/interval.md, Theorem 3)")
    return SelectionBound("interval", theorem, selection, dist, base, certificate,
                          {"directions": ", ".join(p.direction for p in selection.pairs)})


def _interval_may_help(dist: Distribution, base: Profile) -> bool:
    """Whether ``best`` takes ``interval``; decided by the law and the kind of base alone, so the same inputs always
    take the same components.

    * On a base with a dominating loss-ordered pair (:meth:`~symsel.profiles.Profile.loss_pairs`: finite pairs,
      Laplace, PLDs and DP-SGD), for every law whose ``φ'`` is cheap to evaluate (a bounded support of at most
      :data:`BEST_COMPOSITION_MAX_SUPPORT` points, or at most :data:`BEST_INTERVAL_MAX_OPS` SymPy operations): there
      the envelope is 1–6 % above the certified lower bound for spread laws too (geometric, logarithmic, TNB of mean
      10 on DP-SGD; 28–32 % on a random finite pair) and ``interval`` within 0.3 % (benchmarks/RESULTS.md, "Every
      base").
    * On the Gaussian pair, for concentrated laws (variance at most the mean: fixed ``K``, binomial and Poisson laws,
      where many outputs contribute and the envelope is loose) with a bounded support of at most
      :data:`BEST_COMPOSITION_MAX_SUPPORT` points, or a mean of at least :data:`BEST_INTERVAL_MIN_MEAN` and a
      ``φ'`` of at most :data:`BEST_INTERVAL_MAX_OPS` operations (``poisson(mean=1e6)``). On spread laws the
      envelope is within 0.1 % there and much faster, except on weak runs (``μ`` below
      :data:`BEST_INTERVAL_WEAK_MU`), where every law with a cheap ``φ'`` takes ``interval``."""
    from symsel.pairs.location import GaussianPair

    small = dist.support_max is not None and (
        int(dist.support_max) - int(dist.support_min) + 1 <= BEST_COMPOSITION_MAX_SUPPORT)
    pair = base.dominating_pair()
    if not isinstance(pair, GaussianPair):
        return bool(base.dominating_loss_pairs()) and (small or sympy.count_ops(dist.dpgf) <= BEST_INTERVAL_MAX_OPS)
    if pair.mu < BEST_INTERVAL_WEAK_MU:
        return small or sympy.count_ops(dist.dpgf) <= BEST_INTERVAL_MAX_OPS
    if not dist.variance <= dist.mean:
        return False
    if not small and (dist.mean < BEST_INTERVAL_MIN_MEAN or sympy.count_ops(dist.dpgf) > BEST_INTERVAL_MAX_OPS):
        return False
    return True


def _composition_may_help(dist: Distribution, base: Profile) -> bool:
    """Whether ``best`` takes ``composition``: only for laws with at most :data:`BEST_COMPOSITION_MAX_SUPPORT`
    support points (a law with an unbounded support is spread enough for the envelope to be near-tight, and
    summing its masses costs a series expansion), and, on bases without a closed-form or exact composition
    (:attr:`~symsel.profiles.Profile.exact_composition` false; true for Gaussian/GDP and finite pairs), with at most
    :data:`BEST_COMPOSITION_MAX_PLD` of them. Decided by the law's size and the kind of base alone, so the same inputs
    always take the same components."""
    if dist.support_max is None:
        return False
    points = int(dist.support_max) - int(dist.support_min) + 1
    if base.exact_composition:
        return points <= BEST_COMPOSITION_MAX_SUPPORT
    return points <= BEST_COMPOSITION_MAX_PLD


def _renyi(dist: Distribution, base: Profile, method: str) -> SelectionBound:
    from symsel.bounds.renyi import renyi_bound

    if base.delta_at_infinity >= 1.0:
        raise NotApplicableError(
            f"method {method!r}: the base {base.spec} has delta = 1 at every epsilon (no privacy), so it has "
            "no Renyi curve; the hockey-stick methods still apply")
    if method == "rdp":
        try:
            selection = renyi_bound(dist, base, "closed")
        except NotApplicableError:
            if base.rdp(2.0) is None:  # no Rényi curve of the base: Lemma 7 cannot help either
                raise
            return replace(_computed(dist, base, "rdp_lemma7"), method="rdp")
    else:
        usable_float_error(dist, method)  # Lemma 7's certified sups evaluate phi' in float64
        selection = renyi_bound(dist, base, "lemma7")
    details = {k: v for k, v in selection.details.items() if isinstance(v, float | int | bool | str) or v is None}
    return SelectionBound(method, selection.theorem, selection, dist, base, {}, details)


def _best(dist: Distribution, base: Profile, rtol: float) -> SelectionBound:
    """The pointwise minimum of the components of :data:`BEST_COMPONENTS` that apply, computed on
    ``base.at_tolerance(rtol)`` (:meth:`~symsel.profiles.Profile.at_tolerance`: a coarser grid of the same base where
    the tolerance allows it, itself a certified profile of the mechanism; the result names ``base``)."""
    work = base.at_tolerance(rtol)
    result = _best_on(dist, work, rtol)
    if work is base:
        return result
    grid = work.pld_discretization
    return replace(result, base=base, details={**result.details, "loss_grid": grid, "base_computed": work.spec})


def _best_on(dist: Distribution, base: Profile, rtol: float) -> SelectionBound:
    parts: list[SelectionBound] = []
    skipped: dict[str, Scalar] = {}
    for method in BEST_COMPONENTS:
        try:
            if method == "composition" and not _composition_may_help(dist, base):
                skipped["skipped_composition"] = (
                    "taken by best only for laws with a bounded support of at most "
                    f"{BEST_COMPOSITION_MAX_SUPPORT} points ({BEST_COMPOSITION_MAX_PLD} on bases composed through "
                    "dp-accounting); ask for it by name")
                continue
            if method == "paper" and any(part.method == "fdp" for part in parts):
                skipped["skipped_paper"] = (
                    "taken by best only where fdp does not apply: the paper's region contains the f-DP region, so "
                    "its bound is never below fdp's (beyond fdp's certificate gap); ask for it by name")
                continue
            if method == "interval" and not _interval_may_help(dist, base):
                skipped["skipped_interval"] = (
                    "taken by best only on bases with a dominating pair, for laws with a bounded support of at "
                    f"most {BEST_COMPOSITION_MAX_SUPPORT} points or a phi' of at most {BEST_INTERVAL_MAX_OPS} "
                    "operations (on the Gaussian base with mu >= "
                    f"{BEST_INTERVAL_WEAK_MU:g}: also a variance at most the mean, and a mean of at least "
                    f"{BEST_INTERVAL_MIN_MEAN:g} unless the support is that small); ask for it by name")
                continue
            if method == "fdp":
                parts.append(_deferred_fdp(dist, base))
            else:
                parts.append(bound(dist, base, method, rtol if method == "interval" else None))
        except NotApplicableError as exc:
            skipped[f"not_applicable_{method}"] = str(exc)
    if not parts:
        raise NotApplicableError(f"no method applies to {dist.spec} on {base.spec}")
    minimum = PointwiseMinimum(tuple(parts))
    theorem = "pointwise minimum of " + ", ".join(p.method for p in parts)
    details: dict[str, Scalar] = {"components": ", ".join(p.method for p in parts), **skipped}
    return SelectionBound("best", theorem, minimum, dist, base, _best_certificate(parts), details)


def _deferred_fdp(dist: Distribution, base: Profile) -> SelectionBound:
    """``fdp`` as a component of ``best``: its certified supremum (a few milliseconds; about a third of ``best`` on
    a Gaussian base, where the envelope is 3-10 % below it) is computed only where its floor
    (:func:`~symsel.bounds.hockey_stick.fdp_floor`, the ratio attained at sampled points) does not rule it out.
    Its applicability is checked now, as :func:`_hockey_stick` checks it."""
    from symsel.bounds.hockey_stick import FDP_THEOREM, fdp_floor

    usable_float_error(dist, "fdp")

    def computed() -> SelectionBound:
        return _computed(dist, base, "fdp")

    profile = DeferredProfile(computed, fdp_floor(dist, base), f"selection(dist={dist.spec}, base={base.spec}, "
                              "method='fdp')")
    return SelectionBound("fdp", FDP_THEOREM, profile, dist, base, LazyMapping(lambda: profile.computed.certificate),
                          LazyMapping(lambda: profile.computed.details))


#: the δ at which ``best``'s certificate names the component that wins.
CERTIFICATE_DELTAS = (1e-3, 1e-6, 1e-10)


class LazyMapping(Mapping):
    """A read-only mapping whose entries ``compute()`` gives on first read; its repr shows them, never an object
    address. A certificate or details that would cost a computation nobody may read (``best``'s, or those of a
    component that ``best`` defers: :class:`DeferredProfile`)."""

    def __init__(self, compute: Callable[[], Mapping[str, Scalar]]):
        self._compute = compute
        self._items: dict[str, Scalar] | None = None

    def _computed(self) -> dict[str, Scalar]:
        if self._items is None:
            self._items = dict(self._compute())
        return self._items

    def __getitem__(self, key: str) -> Scalar:
        return self._computed()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._computed())

    def __len__(self) -> int:
        return len(self._computed())

    def __repr__(self) -> str:
        """``<class name>({...})``: the entries (computing them on first read), never an object address."""
        return f"{type(self).__name__}({dict(self._computed())!r})"


class BestCertificate(LazyMapping):
    """``best``'s certificate: which component gives the smallest ε at each of :data:`CERTIFICATE_DELTAS`
    (``wins_at_delta_…``), and every component's own certificate (keys ``"<method>.<key>"``): a pointwise minimum
    is as certified as its parts. Computed on first read (it costs one ε per component and δ), read-only."""

    def __init__(self, parts: tuple[SelectionBound, ...]):
        # a function of the parts, not a bound method of self: the mapping would otherwise hold itself (a reference
        # cycle), and with it every component's arrays, until the garbage collector's next full pass
        super().__init__(partial(_best_entries, parts))


def _best_entries(parts: tuple[SelectionBound, ...]) -> dict[str, Scalar]:
    """The entries of :class:`BestCertificate` for ``parts``."""
    items: dict[str, Scalar] = {}
    for delta in CERTIFICATE_DELTAS:
        items[f"wins_at_delta_{delta:g}"] = _winner(parts, delta)
    for part in parts:
        items.update({f"{part.method}.{key}": value for key, value in part.certificate.items()})
    return items


class DeferredProfile(_Delegating):
    """A component of ``best`` that is computed only when its :attr:`floor` (a profile below it, much cheaper) does
    not already rule it out: :class:`PointwiseMinimum` asks the floor first and skips the component where the floor
    is nowhere below the other components, which leaves the minimum unchanged. ``make()`` builds the component's
    own bound (a :class:`SelectionBound`) on first use; every value is then that bound's."""

    family = "selection"

    def __init__(self, make: Callable[[], SelectionBound], floor: Profile, spec: str):
        self._make = make
        self.floor = floor
        self._spec = spec

    @cached_property
    def computed(self) -> SelectionBound:
        """The component's own bound (built on first use)."""
        return self._make()

    @property
    def spec(self) -> str:
        return self._spec

    def _inner(self) -> Profile:
        return self.computed

    def epsilon(self, delta: float) -> float:
        return self.computed.epsilon(delta)


def _winner(parts: tuple[SelectionBound, ...], delta: float) -> str:
    """The method with the smallest ``ε`` at ``delta`` (ties: the first name). A component with a floor is asked
    last and only below the others' smallest ``ε`` (:meth:`~symsel.profiles.Profile.epsilon_below`, which
    tries its floor first): above it, it cannot win."""
    plain = [(part.epsilon(delta), part.method) for part in parts if part.floor is None]
    smallest = min(plain)[0] if plain else math.inf
    floored = [(part.epsilon_below(delta, smallest), part.method) for part in parts if part.floor is not None]
    return min(plain + floored)[1]


def _best_certificate(parts: list[SelectionBound]) -> BestCertificate:
    return BestCertificate(tuple(parts))


def bound(dist: Distribution, base: Profile, method: str = "best", rtol: float | None = None) -> SelectionBound:
    """A certified upper bound on the privacy profile of the best of ``K ~ dist`` runs of ``base``.

    * ``paper``, ``polygon``, ``fdp``: Koskela, Redberg & Wang (ICML 2024) Thm 4.1 with the
      hockey-stick divergence and a ratio supremum (closed forms of Thm 5.2/5.7/Cor 5.8; one
      ``(ε1, δ(ε1))`` polygon; the f-DP region) — :mod:`symsel.bounds.hockey_stick`;
    * ``envelope``: Thm 4.1 taken per output, a mixture of shifted base profiles (docs/envelope.md) —
      :mod:`symsel.bounds.envelope`;
    * ``composition``: ``Σ_k P[K=k] δ`` of the ``k``-fold composition of the base (post-processing and joint
      convexity; exact for fixed ``K = 2``) — :mod:`symsel.bounds.composition`;
    * ``interval``: the worst case over expanding-interval orders, which are the worst orders on a Gaussian base
      (docs/interval.md) — :mod:`symsel.bounds.interval`;
    * ``rdp``: Papernot & Steinke's closed forms (Thm 2 / Cor 3, Thm 6, Lemma 20, Lemma 22; what
      dp-accounting's ``RepeatAndSelectDpEvent`` runs), their Lemma 7 where none exists;
      ``rdp_lemma7``: Lemma 7 over the whole privacy region — :mod:`symsel.bounds.renyi`;
    * ``best``: the pointwise minimum of :data:`BEST_COMPONENTS` that apply.

    ``rtol`` (default :data:`~symsel.bounds.interval.SEARCH_RTOL`, 1e-6; from :data:`MIN_RTOL` to :data:`MAX_RTOL`) is
    the relative tolerance of the root searches of ``interval`` (alone or inside ``best``), the one component whose
    ``δ(ε)`` costs a computation per point: its ``ε(δ)`` is a point checked within the target, at most
    ``1e-6 + rtol · ε`` above where its ``δ`` crosses ``delta``. A certified upper bound at every setting; a larger
    ``rtol`` takes fewer evaluations (docs/interval.md, "Searching ε"). The other methods' searches ignore it. From
    :data:`~symsel.profiles.dpaccounting.COARSE_GRID_RTOL` (1e-3) on, ``best`` computes on
    ``base.at_tolerance(rtol)``: a DP-SGD run's PLD on a coarser loss grid (still pessimistic, so still certified; its
    ``ε`` measured at most 0.11 % above the default grid's, docs/interval.md).

    Raises :class:`~symsel.errors.NotApplicableError` when the method does not apply to the inputs.
    """
    validate.choice(method, "method", "bound", METHODS)
    if not isinstance(dist, Distribution):
        raise ParameterError("dist", repr(dist), "a Distribution (see symsel.parse_distribution)", "bound")
    if not isinstance(base, Profile):
        raise ParameterError("base", repr(base), "a Profile (see symsel.parse_profile)", "bound")
    tolerance = _search_rtol(rtol)  # checked whichever the method
    law = canonical_law(dist)
    result = _computed(law, base, method, tolerance if method in ("interval", "best") else None)
    if rtol is not None and method in ("interval", "best"):
        result = replace(result, rtol=tolerance)  # the same profile, with the question's tolerance for pickling
    return result if law is dist else replace(result, dist=dist)


#: the range of ``bound(..., rtol=)``: finer than ``MIN_RTOL`` the interval search meets float64 rounding of ``ε``;
#: coarser than ``MAX_RTOL`` the tolerance would hide the differences between the methods.
MIN_RTOL = 1e-9
MAX_RTOL = 1e-2


def _search_rtol(rtol: float | None) -> float:
    from symsel.bounds.interval import SEARCH_RTOL

    if rtol is None:
        return SEARCH_RTOL
    return validate.real(rtol, "rtol", "bound", lo=MIN_RTOL, hi=MAX_RTOL)


@bounded_cache(max_entries=16, max_bytes=128 * MIB)  # an entry keeps its base alive (a DP-SGD base holds its PLD)
def _computed(law: Distribution, base: Profile, method: str, rtol: float | None = None) -> SelectionBound:
    """One method on one (law, base) pair, computed once: laws and profiles are immutable and compared by
    identity, so ``best`` and ``--method all`` reuse the components they share instead of recomputing them.
    ``rtol``: the interval search's tolerance (``interval`` and ``best`` only)."""
    if method in ("paper", "polygon", "fdp"):
        return _hockey_stick(law, base, method)
    if method == "envelope":
        return _envelope(law, base)
    if method == "composition":
        return _composition(law, base)
    if method == "interval":
        return _interval(law, base, _search_rtol(rtol))
    if method in ("rdp", "rdp_lemma7"):
        return _renyi(law, base, method)
    return _best(law, base, _search_rtol(rtol))


def canonical_law(dist: Distribution) -> Distribution:
    """The law as its family's own constructor builds it, when the PGF is recognized as a known family
    (``dist.family``): every numerical step then sees the same PGF whichever way the law was typed,
    so ``pgf(expr='exp(10*(z-1))')`` and ``poisson(mean=10)`` get identical numbers."""
    family = dist.family
    if family is None or dist.known_family is not None:
        return dist
    from symsel import distributions as laws

    p = family.params
    if family.name == "point":
        return laws.point(int(p["k"]))
    if family.name == "tnb":
        return laws.tnb(p["eta"], gamma=p["gamma"])
    if family.name == "binomial":
        return laws.binomial(int(p["n"]), p["p"])
    return laws.poisson(p["mu"])
