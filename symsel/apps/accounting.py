"""Private selection inside dp-accounting: :class:`SelectionAccountant`, a pessimistic PLD ``PrivacyAccountant``.

``SelectionAccountant`` accounts everything dp-accounting's ``PLDAccountant`` accounts (it hands every such event
to a ``PLDAccountant`` it holds, which composes it exactly as it would on its own; a Gaussian event, subsampled or
not, gets the very PLD ``PLDAccountant`` would build, array for array, built about three to five times sooner by
:mod:`symsel.profiles.subsampled_gaussian_pld`), and in addition

* ``dp_event.RepeatAndSelectDpEvent(event, mean, shape)``: the best of ``K`` runs of ``event`` with ``K`` Poisson
  (``shape = inf``), geometric (``shape = 1``), logarithmic (``shape = 0``) or truncated negative binomial
  (``-1 < shape < inf``, ``eta = shape``) of the given ``mean`` (Papernot & Steinke, ICLR 2022), and
* :class:`SelectionDpEvent` ``(event, law)``: the best of ``K ~ law`` runs for any symsel law of ``K`` (a spec
  string such as ``"point(k=40)"`` or ``"binomial(n=20, p=1/2)"``, or a :class:`~symsel.distributions.Distribution`),

of any event the accountant supports, composed with the rest in any order and inside ``ComposedDpEvent`` and
``SelfComposedDpEvent``.

How a selection becomes a PLD. The inner event's privacy profile is taken exactly where it is known in closed
form (Gaussian events and compositions of them: ``μ``-GDP, :class:`~symsel.profiles.GaussianProfile`; one Laplace
event: :class:`~symsel.profiles.LaplaceProfile`), as :class:`~symsel.profiles.DpsgdProfile` for DP-SGD
(``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(σ)), steps)``, add/remove), and otherwise as
dp-accounting's own pessimistic PLD of the event (:class:`~symsel.profiles.PldProfile`; for an inner event that
itself contains selections, the PLD a nested ``SelectionAccountant`` composes). ``symsel.bound(law, profile,
method)`` (``"best"`` by default) bounds the selection's profile, and that bound is handed to dp-accounting as a
pessimistic connect-the-dots PLD (Doroshenko et al., PETS 2022; :mod:`symsel.profiles.export`): every ``δ_i`` on the
grid is
an upper bound on the selection's true ``δ(ε_i)``, the true curve is convex in ``e^ε``, so the chords between grid
points stay above it and the PLD dominates the selection mechanism. It then composes with the accountant's PLD.

A selection alone. While an accountant holds one selection composed once and nothing else (a calibration's fresh
accountant, a tuner accounting one study), ``get_epsilon`` is the bound's own: no PLD is exported (that export costs
1--2 s for ``point(k=40)``), and the answer is the certified bound itself, the ``ε`` that ``symsel.bound`` reports,
up to ``tolerance`` below the export's where the bound is convex in ``e^ε`` (small ``δ``); where it is not (its
knee, ``δ`` of 0.1 and more) the export, which follows the greatest convex minorant, can be a few percent lower
(``δ = 0.3``: 0.926 against 0.958). ``get_delta`` exports the PLD once and answers the smaller of the two ``δ``
(both upper bounds), so it is never above the bound's. The PLD is composed as soon as any other event (a no-op
excepted) or a second selection joins it, with one exception:

A selection and the final run. One event composed right after a selection that is alone (the final training run of
the chosen configuration: ``compose(SelectionDpEvent(run, "point(k=30)")).compose(run)``) is held beside it, and
``get_epsilon`` and ``get_delta`` answer :func:`symsel.bounds.pipeline.with_final_run` of the two, the pipeline's
number that every front-end quotes (docs/composition.md, "One number for the whole pipeline"), not a composition of
exported PLDs (which is within about 0.5 % above it). A third event composes the selection's PLD, then the held
run, then itself, as for any other events.

The grid. :func:`symsel.profiles.export.to_pld` evaluates the bound on 4001 uniform points, which costs seconds where
the
bound is a mixture of many shifted profiles (``envelope``: about 1.3 ms per point for a geometric law on a Gaussian
base, 20--40 ms for ``point(k=40)``). :func:`selection_pld` refines adaptively instead: it starts from 33 points on
``[0, ε(floor)]`` and splits an interval while the chord (linear in ``e^ε``) misses the bound inside it by more than
``tolerance`` (default ``5e-3``) times the chord's slope, on either side (``ε`` and its mirror ``−ε``): while the
chord lies more than about ``tolerance`` to the right of the bound. An interval at most ``tolerance`` wide is never
split (its chord is at most its width to the right). The exported curve is then within about ``tolerance`` of the
bound in ``ε`` at every ``δ``, and so is any composition with it (the composed curve averages shifted copies of it).
On the Gaussian and Laplace cases of ``benchmarks/bench_accounting.py`` 70--390 points suffice; the exported ε is
within 2e-4 (relative) of the bound's, and composed with a further Gaussian run within 3e-4 of the 4001-point
export's. For a base held as a dp-accounting PLD (DP-SGD) each round evaluates at least 257 points at once
(:class:`~symsel.profiles.PldProfile` queries fewer one float at a time, at about 15 ms each for 1000 DP-SGD steps).
``export_points=n`` uses :func:`symsel.profiles.export.to_pld` with ``n`` uniform points instead. Negative ``ε`` come
from
the hockey-stick duality ``δ(−ε) = 1 − e^{−ε} + e^{−ε} δ'(ε)`` with the two-sided bound; the grid stops where the
bound falls to ``floor`` (``1e-20``; the rest of the mass sits at ``+∞``, as dp-accounting's own PLDs do with their
truncated tails: about 2e-22 for a Gaussian, and below 1e-15 in its compositions).

dp-accounting's public API only. dp-accounting has no public way to put a PLD into a ``PLDAccountant`` or to read
one out of it, so the accountant keeps a PLD of its own. It is a ``PrivacyAccountant`` (the abstract base class every
dp-accounting accountant derives from) and implements that class's abstract hook ``_maybe_compose``, which the
base's public ``supports`` calls; ``compose``, ``ledger``, ``get_epsilon`` and ``get_delta`` are its own. An event
is supported exactly when a ``PLDAccountant`` under the same relation ``supports`` it (its public method), and it is
composed with the PLD that ``PLDAccountant`` builds for it, from the public constructors of
``dp_accounting.pld.privacy_loss_distribution`` with the same arguments (``_event_pld``; Gaussian events sooner,
through :mod:`symsel.profiles.subsampled_gaussian_pld`, array for array). An event type that ``_event_pld`` does
not know (one that a later dp-accounting adds) is composed with a pessimistic connect-the-dots export of a
``PLDAccountant``'s ``δ(ε)`` for it (within ``tolerance`` in ``ε``, above it). No dp-accounting version is pinned
above: ``python3 run.py test-latest`` shows any drift in the accounting tests.

Refusals follow dp-accounting: ``supports(event)`` is ``False`` and ``compose(event)`` raises
``privacy_accountant.UnsupportedEventError`` naming the event, for events the PLD accountant refuses (under the
accountant's neighbouring relation), for a ``RepeatAndSelectDpEvent`` whose mean is not a finite number ``> 0``
(``≥ 1`` for the truncated negative binomial laws, whose support starts at 1; mean 1 is ``K = 1``) or whose shape is
not ``> −1``, and for a ``SelectionDpEvent`` whose law does not parse. A selection of a non-private event (or one
whose bound is vacuous) is non-private: ``get_epsilon`` returns ``inf`` and ``get_delta`` 1, as dp-accounting does.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Hashable
from typing import Any, TypeAlias, cast

import numpy as np
from dp_accounting import dp_event, dp_event_builder, privacy_accountant
from dp_accounting.pld import pld_pmf, pld_privacy_accountant, privacy_loss_distribution

from symsel import validate
from symsel.bounds.api import MAX_RTOL, METHODS, MIN_RTOL, SelectionBound, bound
from symsel.distributions import Distribution
from symsel.distributions.core import MAX_MEAN
from symsel.errors import ParameterError, SymselError
from symsel.memory import MIB, BoundedCache
from symsel.profiles import DpsgdProfile, GaussianProfile, LaplaceProfile, PldProfile, Profile
from symsel.profiles.dpaccounting import HeldPld
from symsel.profiles.export import MAX_EPSILON, lower_convex_hull, lowered_at_some_points, split_costly, to_pld

__all__ = ["SelectionAccountant", "SelectionDpEvent", "selection_base", "selection_law", "selection_pld"]

NeighboringRelation: TypeAlias = privacy_accountant.NeighboringRelation
_CompositionErrorDetails = privacy_accountant.PrivacyAccountant.CompositionErrorDetails
_NEIGHBOURING = {
    NeighboringRelation.ADD_OR_REMOVE_ONE: "add_remove",
    NeighboringRelation.REPLACE_ONE: "replace_one",
    NeighboringRelation.REPLACE_SPECIAL: "replace_special",
}
#: default of ``tolerance``: how far (in ``ε``) the exported curve may lie to the right of the bound.
DEFAULT_TOLERANCE = 5e-3
#: the exported grid ends where the bound falls to this ``δ`` (its value there is the PLD's mass at ``+∞``).
DEFAULT_FLOOR = 1e-20
#: points of the first (uniform) grid on ``[0, ε(floor)]``.
INITIAL_POINTS = 33
#: the refinement stops adding rounds once the grid has this many points.
MAX_POINTS = 20001
#: the largest mean of a Poisson ``RepeatAndSelectDpEvent`` (``shape = inf``) accounted; larger means are refused,
#: naming this limit. Measured on 2 cores (2026-11-27): mean 10 takes 0.3 s, from mean 20 the ``interval`` method
#: of ``best`` dominates the export (1e3: 85 s, 1e6: 3 min), and a mean of 1e9 did not answer in hours.
#: Other shapes are accounted up to ``symsel.distributions.core.MAX_MEAN`` (1e300, excluded).
MAX_POISSON_MEAN = 1e6
#: the most times one selection may be composed (``count`` times the counts of the ``SelfComposedDpEvent`` around
#: it): its exported PLD is self-composed that many times by dp-accounting, which took 28 s for 1e5 (a Gaussian base,
#: 2 cores, 2026-11-27) and did not answer for 1e18. Larger counts are refused, naming this limit.
MAX_SELECTION_COUNT = 10**6
#: the most points of a uniform export (``export_points``): 4001 is :func:`symsel.profiles.export.to_pld`'s default;
#: each point is one evaluation of the bound (about 1.3 ms for ``envelope``), and 1e12 asked for 7 TiB at once.
MAX_EXPORT_POINTS = 100_001
#: the finest loss grid of an accountant: a PLD on it spans up to ``2 MAX_EPSILON / h`` grid points (the export's
#: range); a selection composed with a Laplace event takes tens of seconds at ``h = 1e-6``, minutes at 1e-7, and at
#: 1e-8 dp-accounting's own PLD of the Laplace event asks for 1.5 GiB.
MIN_DISCRETIZATION = 1e-6
#: the largest loss range, in grid points, of a Gaussian event's PLD (:func:`_check_gaussian_pld_size`; the estimate
#: is about three times the PLD's size). At the default grid of 1e-4: noise 0.05 (3.7e6 by the estimate) takes 3.4
#: CPU-s, 0.03 (8.3e6) 7.4 s and its ε overflows to inf in dp-accounting, 0.02 20 s, 0.01 (5.8e7) 76 s, 123 s in
#: ``PLDAccountant``.
MAX_GAUSSIAN_PLD_POINTS = 5e6


class UnsupportedSelectionError(privacy_accountant.UnsupportedEventError, ParameterError):
    """``compose`` of a selection whose law is out of range: dp-accounting's ``UnsupportedEventError`` (as for any
    event the accountant refuses) and symsel's :class:`~symsel.errors.ParameterError` (a ``ValueError``) naming the
    parameter, its value and the allowed range (``name``, ``value``, ``allowed``, ``where``)."""

    def __init__(self, event: dp_event.DpEvent, selection: dp_event.DpEvent, error: ParameterError):
        Exception.__init__(self, f"Unsupported event: {event}. Error: [{error}] caused by subevent {selection}.")
        self.name, self.value, self.allowed, self.where = error.name, error.value, error.allowed, error.where


@dataclasses.dataclass(frozen=True)
class SelectionDpEvent(dp_event.DpEvent):
    """The best of ``K`` independent runs of ``event`` is released, ``K ~ law`` (fixed ``K``: ``"point(k=40)"``).

    Attributes:
        event: the ``DpEvent`` that is run ``K`` times.
        law: the law of ``K``: a symsel spec string (``"geometric(mean=30)"``, ``"binomial(n=20, p=1/2)"``,
            ``"pgf(expr='...')"``; see ``symsel.parse_distribution``) or a :class:`~symsel.distributions.Distribution`.

    A frozen dataclass: equality, hashing and ``repr`` by value like dp-accounting's own (``attrs``) events, so the
    ledger merges repeats of one event; a :class:`~symsel.distributions.Distribution` law compares by identity. The
    law is parsed (and refused, if it does not parse) by the accountant, not here.
    """

    event: dp_event.DpEvent
    law: str | Distribution

    def to_named_tuple(self) -> dp_event.DpEventNamedTuple:
        """Not available (``ValueError``, as dp-accounting raises for events it cannot convert): its conversion reads
        ``attrs`` fields only, and would split a string law into characters."""
        raise ValueError("SelectionDpEvent has no NamedTuple form; keep the law's spec string and the inner event's "
                         "NamedTuple, and rebuild the event from them")


_SELECTION_EVENTS = (dp_event.RepeatAndSelectDpEvent, SelectionDpEvent)


def _clip(value: Any) -> str:
    """A bounded repr for error messages."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 80 else text[:77] + "..."


class _Marker:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


#: what a selection (or its inner event) amounts to when it is not a profile: nothing, or no privacy at all.
NOOP, NONPRIVATE = _Marker("NOOP"), _Marker("NONPRIVATE")


# ------------------------------------------------------------------------------------------- the law of K
def selection_law(event: dp_event.DpEvent) -> Distribution:
    """The law of ``K`` of a ``RepeatAndSelectDpEvent`` or a :class:`SelectionDpEvent`.

    Raises :class:`~symsel.errors.SymselError` (``ParameterError``, ``SpecError``) when it has none."""
    if isinstance(event, dp_event.RepeatAndSelectDpEvent):
        return _repeat_and_select_law(event.mean, event.shape)
    if isinstance(event, SelectionDpEvent):
        if isinstance(event.law, Distribution):
            return event.law
        if isinstance(event.law, str):
            return _parsed_law(event.law)
        raise ParameterError("law", event.law, "a spec string or a symsel Distribution", "SelectionDpEvent")
    raise ParameterError("event", event, "a RepeatAndSelectDpEvent or a SelectionDpEvent", "selection_law")


#: the laws of ``K`` of recent selection events, by their parameters: at most 64 entries and 16 MiB
#: (:class:`~symsel.memory.BoundedCache`).
_LAWS = BoundedCache("symsel.apps.accounting._LAWS", max_entries=64, max_bytes=16 * MIB)


def _memo(key: Hashable, make: Any) -> Distribution:
    """A small LRU of laws (solving a TNB's ``γ`` for its mean takes milliseconds; calibration asks again and
    again). Failures are not cached."""
    law = _LAWS.get(key)
    return law if law is not None else _LAWS.put(key, make())


def _parsed_law(spec: str) -> Distribution:
    from symsel.spec import parse_distribution

    return _memo(("spec", spec), lambda: parse_distribution(spec))


def _repeat_and_select_law(mean: Any, shape: Any) -> Distribution:
    from symsel import distributions as laws

    where = "RepeatAndSelectDpEvent"
    m = validate.positive(mean, "mean", where)
    s = validate.real(shape, "shape", where, lo=-1.0, lo_open=True,
                      allowed="shape > -1 (inf: Poisson, 1: geometric, 0: logarithmic, else truncated negative "
                              "binomial with eta = shape)")
    if s == math.inf:
        if m > MAX_POISSON_MEAN:
            raise ParameterError("mean", mean, f"mean <= {MAX_POISSON_MEAN:g} for shape=inf (a Poisson law; "
                                 "MAX_POISSON_MEAN: larger means do not answer in minutes)", where)
        return _memo(("poisson", m), lambda: laws.poisson(mean=m))
    if m < 1:
        raise ParameterError("mean", mean, f"mean >= 1 for shape={shape!r} (a truncated negative binomial law, "
                                           "support {1, 2, ...})", where)
    if not m < MAX_MEAN:
        raise ParameterError("mean", mean, f"mean < {MAX_MEAN:g} (every bound scales with E[K] in float64)", where)
    if m == 1:  # every truncated negative binomial of mean 1 is K = 1
        return _memo(("point", 1), lambda: laws.point(1))
    if s == 1:
        return _memo(("geometric", m), lambda: laws.geometric(mean=m))
    if s == 0:
        return _memo(("logarithmic", m), lambda: laws.logarithmic(mean=m))
    return _memo(("tnb", s, m), lambda: laws.tnb(s, mean=m))


# --------------------------------------------------------------------------------- the inner event's profile
def _contains_selection(event: dp_event.DpEvent) -> bool:
    if isinstance(event, _SELECTION_EVENTS):
        return True
    if isinstance(event, dp_event.SelfComposedDpEvent):
        return _contains_selection(event.event)
    if isinstance(event, dp_event.ComposedDpEvent):
        return any(_contains_selection(e) for e in event.events)
    return False


def _gaussian_mu2(event: dp_event.DpEvent, sensitivity: float) -> float | None:
    """``μ²`` of an event made only of Gaussian events (composed, self-composed, no-ops): the sum of
    ``count (Δ/σ)²`` (``inf`` if some ``σ = 0``); ``None`` for any other event."""
    if isinstance(event, dp_event.NoOpDpEvent):
        return 0.0
    if isinstance(event, dp_event.GaussianDpEvent):
        sigma = float(event.noise_multiplier)
        return math.inf if sigma == 0 else (sensitivity / sigma) ** 2
    if isinstance(event, dp_event.SelfComposedDpEvent):
        inner = _gaussian_mu2(event.event, sensitivity)
        return None if inner is None else (0.0 if inner == 0 else event.count * inner)
    if isinstance(event, dp_event.ComposedDpEvent):
        parts = [_gaussian_mu2(e, sensitivity) for e in event.events]
        return None if any(p is None for p in parts) else float(sum(parts))  # type: ignore[arg-type]
    return None


def _only_noops(event: dp_event.DpEvent) -> bool:
    if isinstance(event, dp_event.NoOpDpEvent):
        return True
    if isinstance(event, dp_event.SelfComposedDpEvent):
        return _only_noops(event.event)
    if isinstance(event, dp_event.ComposedDpEvent):
        return all(_only_noops(e) for e in event.events)
    return False


def _dpsgd(event: dp_event.DpEvent) -> tuple[float, float, int] | None:
    """``(q, σ, steps)`` of a DP-SGD event (Poisson-subsampled Gaussian, self-composed), else ``None``."""
    steps = 1
    if isinstance(event, dp_event.SelfComposedDpEvent):
        event, steps = event.event, int(event.count)
    if (isinstance(event, dp_event.PoissonSampledDpEvent) and isinstance(event.event, dp_event.GaussianDpEvent)
            and 0 < event.sampling_probability <= 1 and event.event.noise_multiplier > 0 and steps >= 1):
        return float(event.sampling_probability), float(event.event.noise_multiplier), steps
    return None


class _ComposedProfile(PldProfile):
    """The profile of the PLD a nested :class:`SelectionAccountant` composed (an inner event with selections)."""

    def __init__(self, event: dp_event.DpEvent, pld: Any, neighbouring: str, value_discretization_interval: float):
        # PldProfile.__init__ would ask dp-accounting's PLD accountant to support the event, which it does not
        self.event = event
        self.neighbouring = neighbouring
        self.value_discretization_interval = value_discretization_interval
        # PldProfile.accountant is a cached_property: this is its value (the PLD's public queries; its arrays, where
        # needed, come from those queries: symsel.profiles.dpaccounting.arrays_from_queries)
        self.__dict__["accountant"] = HeldPld(pld)
        self.build_seconds = 0.0


def selection_base(event: dp_event.DpEvent,
                   neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE,
                   value_discretization_interval: float = 1e-4, **accountant_options: Any) -> Profile | _Marker:
    """The privacy profile of one run of ``event`` (the inner event of a selection), as the accountant takes it:

    * Gaussian events and compositions of them: exact ``μ``-GDP (:class:`~symsel.profiles.GaussianProfile`;
      sensitivity 2 under ``REPLACE_ONE``, as dp-accounting takes it);
    * one ``LaplaceDpEvent``: :class:`~symsel.profiles.LaplaceProfile` (exact);
    * DP-SGD under add/remove: :class:`~symsel.profiles.DpsgdProfile` (pessimistic PLD, RDP below its tail);
    * an event containing selections: the PLD of a nested :class:`SelectionAccountant` (``accountant_options``
      are passed to it);
    * anything else: :class:`~symsel.profiles.PldProfile` (dp-accounting's pessimistic PLD of the event).

    Returns :data:`NOOP` for an event without privacy cost and :data:`NONPRIVATE` for one without privacy.
    The event is assumed supported (``SelectionAccountant(...).supports(event)``)."""
    relation = neighboring_relation
    name = _NEIGHBOURING[relation]
    if _only_noops(event):
        return NOOP
    if _contains_selection(event):
        nested = SelectionAccountant(relation, value_discretization_interval, **accountant_options)
        nested.compose(event)
        if nested.get_delta(math.inf) >= 1:
            return NONPRIVATE
        nested._materialize()
        if nested._empty:
            return NOOP
        return _ComposedProfile(event, nested._composed, name, value_discretization_interval)
    sensitivity = 2.0 if relation == NeighboringRelation.REPLACE_ONE else 1.0
    mu2 = _gaussian_mu2(event, sensitivity)
    if mu2 is not None:
        if mu2 == math.inf:
            return NONPRIVATE
        if isinstance(event, dp_event.GaussianDpEvent):
            return GaussianProfile(float(event.noise_multiplier), sensitivity)
        return GaussianProfile(1.0 / math.sqrt(mu2))
    if isinstance(event, dp_event.LaplaceDpEvent) and relation != NeighboringRelation.REPLACE_ONE:
        scale = float(event.noise_multiplier)
        return NONPRIVATE if scale == 0 else LaplaceProfile(scale)
    dpsgd = _dpsgd(event) if relation == NeighboringRelation.ADD_OR_REMOVE_ONE else None
    if dpsgd is not None:
        try:
            return DpsgdProfile(*dpsgd, value_discretization_interval=value_discretization_interval)
        except ParameterError:  # symsel's size limits for DP-SGD: dp-accounting's PLD, as PLDAccountant would build
            pass
    profile = PldProfile(event, neighbouring=name, value_discretization_interval=value_discretization_interval)
    return NONPRIVATE if profile.delta_at_infinity >= 1 else profile


# ------------------------------------------------------------------------------------------- the export
def selection_pld(profile: Profile, discretization: float = 1e-4, tolerance: float = DEFAULT_TOLERANCE,
                  floor: float = DEFAULT_FLOOR) -> Any:
    """A pessimistic connect-the-dots ``PrivacyLossDistribution`` (symmetric) above the bound ``profile`` on an
    adaptive grid (module docstring): the exported curve lies within about ``tolerance`` (in ``ε``) of the bound.

    Valid whatever the grid: its values are the bound's (a running minimum from the left and then the greatest
    convex minorant in ``e^ε``, as in :func:`symsel.profiles.export.export_grid`, both still above the true curve)."""
    where = "selection_pld"
    if not isinstance(profile, Profile):
        raise ParameterError("profile", repr(profile), "a symsel Profile (e.g. symsel.bound(law, base))", where)
    h = validate.real(discretization, "discretization", where, lo=0.0, hi=1.0, lo_open=True)
    tolerance = validate.positive(tolerance, "tolerance", where)
    floor = validate.real(floor, "floor", where, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    cheap, costly = split_costly(profile)
    index, deltas = _adaptive_grid(cheap, h, tolerance, floor, _batch(profile))
    if costly:
        deltas = lowered_at_some_points(index * h, deltas, costly)
    eps = index * h
    mirrored = -np.expm1(-eps[:0:-1]) + np.exp(-eps[:0:-1]) * deltas[:0:-1]  # δ(−ε) by duality, two-sided bound
    rounded = np.concatenate([-index[:0:-1], index])
    values = np.minimum.accumulate(np.clip(np.concatenate([mirrored, deltas]), 0.0, 1.0))  # the true δ decreases
    values = lower_convex_hull(np.exp(rounded * h), values)
    pmf = pld_pmf.create_pmf_pessimistic_connect_dots(h, rounded, values)
    return privacy_loss_distribution.PrivacyLossDistribution(pmf)


def _bound_delta(profile: Profile, eps: np.ndarray) -> np.ndarray:
    return np.clip(np.asarray(profile.delta(eps), dtype=float), 0.0, 1.0)


def _batch(profile: Profile) -> int:
    """How many points to evaluate at once: 1 (any number) for closed-form bases; for a base held as a
    dp-accounting PLD, more than :class:`~symsel.profiles.PldProfile` queries one float at a time (each such
    query walks the whole PLD, about 15 ms for DP-SGD with 1000 steps; an array takes one search)."""
    from symsel.profiles import dpaccounting

    if isinstance(getattr(profile, "base", None), PldProfile):
        return int(getattr(dpaccounting, "_SCALAR_QUERY_MAX", 256)) + 1
    return 1


def _adaptive_grid(profile: Profile, h: float, tolerance: float, floor: float,
                   batch: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``i ≥ 0`` (``ε = i h``) and the bound's ``δ`` there, refined until every chord (in ``e^ε``, of the
    curve at ``ε ≥ 0`` and of its mirror at ``ε ≤ 0``) is within ``tolerance`` of the curve at the points inside
    it, measured horizontally (the miss divided by the chord's slope), or the interval is one step wide.

    Each round cuts every interval still to refine into ``p`` equal pieces (``p = 2``: the midpoint; more when
    fewer than ``batch`` intervals are left, so that each round evaluates at least ``batch`` points at once)."""
    target = min(max(floor, 2.0 * profile.delta_at_infinity), 0.5)
    top = float(profile.epsilon(target))
    top = MAX_EPSILON if not math.isfinite(top) or top > MAX_EPSILON else max(top, 64 * h)
    last = math.ceil(top / h)  # rounded up: a grid ending below ε(floor) would leave δ there at +∞
    index = np.unique(np.round(np.linspace(0.0, last, max(INITIAL_POINTS, batch))).astype(np.int64))
    deltas = _bound_delta(profile, index * h)
    # an interval at most `tolerance` wide is never split: the chord at any point of it is at most its width to
    # the right of the curve (the curve is non-increasing and passes through both ends)
    narrowest = max(2, math.floor(tolerance / h) + 1)
    todo = np.diff(index) >= narrowest
    while todo.any() and index.size < MAX_POINTS:
        left = np.flatnonzero(todo)
        lo, hi = index[left], index[left + 1]
        steps = hi - lo
        pieces = np.minimum(steps, 1 + max(1, -(-batch // left.size)))
        parent = np.repeat(np.arange(left.size), pieces - 1)
        first = np.repeat(np.cumsum(pieces - 1) - (pieces - 1), pieces - 1)
        j = np.arange(parent.size) - first + 1
        inner = lo[parent] + (j * steps[parent]) // pieces[parent]  # strictly inside, increasing (pieces <= steps)
        a, b, m = lo[parent] * h, hi[parent] * h, inner * h
        da, db, dm = deltas[left][parent], deltas[left + 1][parent], _bound_delta(profile, m)
        width = b - a
        # ε >= 0: the chord through (e^a, da), (e^b, db) at e^m, against dm
        miss = da + (db - da) * (np.expm1(m - a) / np.expm1(width)) - dm
        slope = np.abs(da - db) / width
        # ε <= 0: the mirrored curve 1 - x + x δ(-log x) at x = e^-m; its linear part is exact on any chord,
        # so the miss is the chord of x δ(-log x) minus x_m δ(m) (here divided by x_m = e^-m)
        t = np.expm1(b - m) / np.expm1(width)
        xb, xa = np.exp(m - b), np.exp(m - a)
        miss_mirror = np.exp(-m) * (xb * db + t * (xa * da - xb * db) - dm)
        mirror_a, mirror_b = -np.expm1(-a) + np.exp(-a) * da, -np.expm1(-b) + np.exp(-b) * db
        slope_mirror = np.abs(mirror_a - mirror_b) / width
        far = (miss > tolerance * slope + floor) | (miss_mirror > tolerance * slope_mirror + floor)
        split = np.zeros(left.size, dtype=bool)
        np.logical_or.at(split, parent, far)
        counts = np.ones(todo.size, dtype=np.int64)
        counts[left] = pieces
        flags = np.zeros(todo.size, dtype=bool)
        flags[left] = split
        index = np.insert(index, left[parent] + 1, inner)
        deltas = np.insert(deltas, left[parent] + 1, dm)
        todo = np.repeat(flags, counts) & (np.diff(index) >= narrowest)
    return index, deltas


# ------------------------------------------------------------------------------------------- the accountant
class _Part:
    """One selection, accounted: its bound and its PLD (or NOOP / NONPRIVATE). The PLD is exported on first use
    (``export``, a function of nothing): an accountant that holds this selection alone answers from the bound."""

    def __init__(self, event: dp_event.DpEvent, result: SelectionBound | _Marker, export: Any = None):
        self.event, self.bound, self._export, self._pld = event, result, export, None

    @property
    def pld(self) -> Any:
        if self._pld is None and self._export is not None:
            self._pld = self._export()
        return self._pld

    @property
    def nonprivate_when_composed(self) -> bool:
        """Whether the exported PLD would have less than :data:`EXPORT_TAIL` of its mass below ``+∞`` (``δ`` of the
        bound at the export's largest ``ε``, :data:`~symsel.profiles.export.MAX_EPSILON`, above ``1 − EXPORT_TAIL``:
        e.g. the best of 3 runs of ``GaussianDpEvent(1e-3)``). dp-accounting's composition truncates tails of up to
        1e-15 and is left with no finite support at all; composed as non-private instead (``ε = ∞``, what such an
        export gives anyway)."""
        return isinstance(self.bound, SelectionBound) and float(self.bound.delta(MAX_EPSILON)) > 1.0 - EXPORT_TAIL


#: an exported selection PLD with less finite mass than this composes as non-private (:attr:`_Part.nonprivate_when_
#: composed`): a thousand times dp-accounting's default tail truncation (1e-15), so compositions never empty it.
EXPORT_TAIL = 1e-12

#: the selections accounted most recently in this process (any accountant), least recently used dropped first:
#: at most 16 entries and 128 MiB (:class:`~symsel.memory.BoundedCache`), each holding its bound (with the base's PLD
#: for DP-SGD) and its exported PLD.
_PARTS = BoundedCache("symsel.apps.accounting._PARTS", max_entries=16, max_bytes=128 * MIB)


def _event_key(event: dp_event.DpEvent) -> Hashable:
    """A hashable key of an event (``ComposedDpEvent`` holds a list; a law object is keyed by identity, and the
    cache entry keeps the event, so the identity is not reused while the entry lives)."""
    if isinstance(event, SelectionDpEvent):
        law = event.law if isinstance(event.law, str) else ("law", id(event.law))
        return ("selection", _event_key(event.event), law)
    if isinstance(event, dp_event.RepeatAndSelectDpEvent):
        return ("repeat_and_select", _event_key(event.event), float(event.mean), float(event.shape))
    if isinstance(event, dp_event.SelfComposedDpEvent):
        return ("self_composed", _event_key(event.event), int(event.count))
    if isinstance(event, dp_event.ComposedDpEvent):
        return ("composed", tuple(_event_key(e) for e in event.events))
    return repr(event)


def _gaussian_pld(event: dp_event.DpEvent, count: int, relation: NeighboringRelation, interval: float) -> Any:
    """The PLD that ``PLDAccountant._maybe_compose`` composes for ``count`` runs of a Gaussian event (one PLD at noise
    ``σ/√count``) or of a Poisson-subsampled Gaussian event (its PLD self-composed ``count`` times), with its
    arguments, built by :func:`~symsel.profiles.subsampled_gaussian_pld.subsampled_gaussian_pld` (the same arrays);
    ``None`` for other events and for a zero, negative or non-finite noise or rate (dp-accounting's own treatment)."""
    from symsel.profiles.subsampled_gaussian_pld import subsampled_gaussian_pld

    def usable(value: Any) -> bool:
        return isinstance(value, numbers.Real) and math.isfinite(value) and float(value) > 0

    if isinstance(event, dp_event.GaussianDpEvent) and usable(event.noise_multiplier):
        _check_gaussian_pld_size(event, event.noise_multiplier / math.sqrt(count), interval)
        return subsampled_gaussian_pld(1.0, event.noise_multiplier / math.sqrt(count), relation, interval)
    if (isinstance(event, dp_event.PoissonSampledDpEvent) and isinstance(event.event, dp_event.GaussianDpEvent)
            and usable(event.sampling_probability) and event.sampling_probability <= 1
            and usable(event.event.noise_multiplier)):
        _check_gaussian_pld_size(event, event.event.noise_multiplier, interval)
        return subsampled_gaussian_pld(event.sampling_probability, event.event.noise_multiplier, relation,
                                       interval).self_compose(count)
    return None


def _check_gaussian_pld_size(event: dp_event.DpEvent, sigma: float, interval: float) -> None:
    """Refuse, before building, a Gaussian run's PLD (or a subsampled step's, whose losses are no larger) whose loss
    range needs more than :data:`MAX_GAUSSIAN_PLD_POINTS` points: the range is about the run's ``ε`` at ``δ = 1e-15``,
    at most ``1/(2σ²) + √(2 log 1e15)/σ``."""
    points = (0.5 / sigma / sigma + math.sqrt(2.0 * math.log(1e15)) / sigma) / interval  # inf for a tiny sigma
    if not points <= MAX_GAUSSIAN_PLD_POINTS:
        raise ParameterError(
            "event", _clip(event), f"a Gaussian noise whose PLD fits in {MAX_GAUSSIAN_PLD_POINTS:.0e} points on the "
            f"loss grid {interval:g} (this one needs about {points:.1e}: a larger noise, fewer compositions or a "
            "larger value_discretization_interval)", "SelectionAccountant.compose")


def _event_pld(event: dp_event.DpEvent, count: int, relation: NeighboringRelation, interval: float,
               tolerance: float) -> Any:
    """The PLD of ``count`` runs of ``event``, one event that is neither composed nor a selection and that
    ``PLDAccountant`` supports, as ``PLDAccountant`` builds it (the same public constructor of
    ``privacy_loss_distribution`` with the same arguments); :data:`NOOP` or :data:`NONPRIVATE` where it composes
    nothing or marks the result non-private. An event type not listed here is exported from a ``PLDAccountant``'s
    ``δ(ε)`` (:func:`_exported_event_pld`)."""
    PLD = privacy_loss_distribution
    h = interval
    if isinstance(event, dp_event.NoOpDpEvent):
        return NOOP
    if isinstance(event, dp_event.NonPrivateDpEvent):
        return NONPRIVATE
    gaussian = _gaussian_pld(event, count, relation, interval)
    if gaussian is not None:
        return gaussian
    if isinstance(event, dp_event.GaussianDpEvent):
        if event.noise_multiplier == 0:
            return NONPRIVATE
        return PLD.from_gaussian_mechanism(standard_deviation=event.noise_multiplier / math.sqrt(count),
                                           value_discretization_interval=h, neighboring_relation=relation)
    if isinstance(event, dp_event.RandomizedResponseDpEvent):
        if event.num_buckets == 1:
            return NOOP
        if event.noise_parameter == 0:
            return NONPRIVATE
        return PLD.from_randomized_response(noise_parameter=event.noise_parameter, num_buckets=event.num_buckets,
                                            value_discretization_interval=h, neighboring_relation=relation)
    if isinstance(event, dp_event.LaplaceDpEvent):
        if event.noise_multiplier == 0:
            return NONPRIVATE
        return PLD.from_laplace_mechanism(parameter=event.noise_multiplier,
                                          value_discretization_interval=h).self_compose(count)
    if isinstance(event, dp_event.DiscreteLaplaceDpEvent):
        if event.noise_parameter == 0:
            return NONPRIVATE
        return PLD.from_discrete_laplace_mechanism(parameter=event.noise_parameter, sensitivity=event.sensitivity,
                                                   value_discretization_interval=h).self_compose(count)
    if isinstance(event, dp_event.MixtureOfGaussiansDpEvent):
        if len(event.sensitivities) == 1 and event.sensitivities[0] == 0.0:
            return NOOP
        if event.standard_deviation == 0:
            return NONPRIVATE
        return PLD.from_mixture_gaussian_mechanism(
            standard_deviation=event.standard_deviation, sensitivities=event.sensitivities,
            sampling_probs=event.sampling_probs, value_discretization_interval=h).self_compose(count)
    if isinstance(event, dp_event.PoissonSampledDpEvent) and isinstance(
            event.event, (dp_event.GaussianDpEvent, dp_event.LaplaceDpEvent)):
        if event.sampling_probability == 0:
            return NOOP
        if event.event.noise_multiplier == 0:
            return NONPRIVATE
        if isinstance(event.event, dp_event.GaussianDpEvent):
            return PLD.from_gaussian_mechanism(
                standard_deviation=event.event.noise_multiplier, value_discretization_interval=h,
                sampling_prob=event.sampling_probability, neighboring_relation=relation).self_compose(count)
        return PLD.from_laplace_mechanism(parameter=event.event.noise_multiplier, value_discretization_interval=h,
                                          sampling_prob=event.sampling_probability).self_compose(count)
    if isinstance(event, dp_event.TruncatedSubsampledGaussianDpEvent):
        if event.sampling_probability == 0 or event.truncated_batch_size == 0 or event.dataset_size == 0:
            return NOOP
        if event.noise_multiplier == 0:
            return NONPRIVATE
        return PLD.from_truncated_subsampled_gaussian_mechanism(
            dataset_size=event.dataset_size, sampling_probability=event.sampling_probability,
            truncated_batch_size=event.truncated_batch_size, noise_multiplier=event.noise_multiplier,
            value_discretization_interval=h, neighboring_relation=relation).self_compose(count)
    return _exported_event_pld(event, count, relation, interval, tolerance)


def _exported_event_pld(event: dp_event.DpEvent, count: int, relation: NeighboringRelation, interval: float,
                        tolerance: float) -> Any:
    """``count`` runs of an event type ``_event_pld`` does not know: a ``PLDAccountant`` composes it (its public
    ``compose``), and its ``δ(ε)`` (``get_delta``, an upper bound on both directions of the event) is exported as a
    pessimistic connect-the-dots PLD (:func:`selection_pld`, within ``tolerance`` in ``ε``), which dominates the
    event's own; self-composed ``count`` times."""
    profile = PldProfile(event, neighbouring=_NEIGHBOURING[relation], value_discretization_interval=interval)
    if profile.delta_at_infinity >= 1:
        return NONPRIVATE
    if profile.delta(0.0) <= 0:
        return NOOP
    pld = selection_pld(profile, interval, tolerance)
    return pld if count == 1 else pld.self_compose(count)


class SelectionAccountant(privacy_accountant.PrivacyAccountant):
    """A pessimistic PLD accountant that also accounts private selection (module docstring).

    Args:
        neighboring_relation: ``ADD_OR_REMOVE_ONE`` (default), ``REPLACE_ONE`` or ``REPLACE_SPECIAL``; events are
            supported under a relation exactly when dp-accounting's ``PLDAccountant`` supports them (selections:
            when it supports their inner event).
        value_discretization_interval: the PLD's loss grid, as for ``PLDAccountant``, at least
            :data:`MIN_DISCRETIZATION`.
        method: the symsel bound of every selection (:data:`symsel.METHODS`; default ``"best"``).
        tolerance: how far (in ``ε``) the exported PLD of a selection may lie above its bound (adaptive grid).
        export_points: if given, export with :func:`symsel.profiles.export.to_pld` on that many uniform points instead.
        rtol: the search tolerance of every selection's bound (``symsel.bound(..., rtol=)``; ``None``: its default,
            1e-6). From 1e-3 on, ``best`` works on a coarser loss grid of a DP-SGD run, several times sooner, within
            the allowance of docs/interval.md ("Searching ε"): what a calibration loop asks for.

    ``calibrate_dp_mechanism(SelectionAccountant, make_event, ...)`` works: the class is its own fresh-accountant
    factory. Selections already accounted (their law, inner profile and bound) are in :attr:`selection_bounds`.
    """

    def __init__(self, neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE,
                 value_discretization_interval: float = 1e-4, method: str = "best",
                 tolerance: float = DEFAULT_TOLERANCE, export_points: int | None = None,
                 rtol: float | None = None):
        where = "SelectionAccountant"
        if neighboring_relation not in _NEIGHBOURING:
            raise ParameterError("neighboring_relation", neighboring_relation, ", ".join(
                f"NeighboringRelation.{r.name}" for r in _NEIGHBOURING), where)
        super().__init__(neighboring_relation)
        self._interval = validate.real(value_discretization_interval, "value_discretization_interval", where,
                                       lo=MIN_DISCRETIZATION, hi=1.0,
                                       allowed=f"a loss grid {MIN_DISCRETIZATION:g} <= interval <= 1")
        self._method = validate.choice(method, "method", where, METHODS)
        self._tolerance = validate.positive(tolerance, "tolerance", where)
        self._export_points = None if export_points is None else validate.integer(
            export_points, "export_points", where, lo=3, hi=MAX_EXPORT_POINTS)
        self._rtol = None if rtol is None else validate.real(rtol, "rtol", where, lo=MIN_RTOL, hi=MAX_RTOL)
        # asked only whether it supports an event (its public ``supports``): the events this accountant composes
        self._probe = pld_privacy_accountant.PLDAccountant(neighboring_relation, self._interval)
        # the accountant's own PLD (PLDAccountant's start: the identity) and what it has composed so far
        self._composed = privacy_loss_distribution.identity(value_discretization_interval=self._interval)
        self._empty = True  # the PLD is still the identity
        self._nonprivate = False  # a non-private event has been composed: ε = inf, δ = 1
        self._events = dp_event_builder.DpEventBuilder()
        # a selection composed once into an empty accountant is held here, its PLD not yet exported: while it is
        # the only event, get_epsilon and get_delta answer from its bound (_materialize composes it otherwise)
        self._deferred: _Part | None = None
        # the one event composed after a deferred selection (the final run of the chosen configuration), held with
        # its profile: while nothing else joins them, the two are answered by symsel.with_final_run
        self._final: tuple[dp_event.DpEvent, int, Profile] | None = None
        self._pipeline: Profile | None = None
        self._prepared: dict[Hashable, _Part] = {}
        self._bounds: list[tuple[dp_event.DpEvent, SelectionBound, int]] = []

    # ------------------------------------------------------------------ dp-accounting's interface
    def _maybe_compose(self, event: dp_event.DpEvent, count: int, do_compose: bool) -> Any:
        """``PrivacyAccountant``'s abstract hook (its ``supports`` calls it with ``do_compose=False``): ``None`` if
        ``event`` is supported (and, with ``do_compose``, composed ``count`` times), else the error details."""
        if isinstance(event, dp_event.SelfComposedDpEvent):
            return self._maybe_compose(event.event, event.count * count, do_compose)
        if isinstance(event, dp_event.ComposedDpEvent):
            for e in event.events:
                result = self._maybe_compose(e, count, do_compose)
                if result is not None:
                    return result
            return None
        if isinstance(event, _SELECTION_EVENTS):
            return self._maybe_compose_selection(event, count, do_compose)
        if isinstance(event, dp_event.NoOpDpEvent):
            return None
        if not self._probe.supports(event):
            relation = f"NeighboringRelation.{self.neighboring_relation.name}"
            return _CompositionErrorDetails(
                invalid_event=event, error_message=f"Unsupported event: dp-accounting's PLDAccountant does not "
                                                   f"support it under {relation}.")
        if do_compose:
            if self._hold_final_run(event, count):  # the final run after a lone selection: held
                return None
            self._materialize()
            pld = _event_pld(event, count, self.neighboring_relation, self._interval, self._tolerance)
            if pld is NONPRIVATE:
                self._nonprivate = True
            elif pld is not NOOP:
                self._composed = self._composed.compose(pld)
            self._empty = False
        return None

    def _hold_final_run(self, event: dp_event.DpEvent, count: int) -> bool:
        """Hold ``count`` runs of ``event``, composed right after a selection that is alone so far, as the final run
        of the pipeline (:func:`symsel.bounds.pipeline.with_final_run`) rather than composing PLDs: ``True`` if
        held. An event without a profile of its own (a nested selection, a no-op) is not held."""
        if self._deferred is None or not self._empty or self._final is not None or _contains_selection(event):
            return False
        whole = event if count == 1 else dp_event.SelfComposedDpEvent(event, count)
        profile = selection_base(whole, self.neighboring_relation, self._interval, **self._options())
        if not isinstance(profile, Profile):
            return False
        self._final, self._pipeline = (event, count, profile), None
        return True

    def _pipeline_bound(self) -> Profile:
        """The deferred selection then the held final run: :func:`symsel.bounds.pipeline.with_final_run`."""
        if self._pipeline is None:
            from symsel.bounds.pipeline import with_final_run

            assert self._deferred is not None and self._final is not None
            self._pipeline = with_final_run(cast(SelectionBound, self._deferred.bound), self._final[2])
        return self._pipeline

    def _materialize(self) -> None:
        """Compose the deferred selection's exported PLD into the accountant's (before anything else joins it), then
        the final run held after it, as any event is composed."""
        part, self._deferred = self._deferred, None
        if part is not None and part.nonprivate_when_composed:
            self._nonprivate = True
        elif part is not None:
            self._composed = part.pld if self._empty else self._composed.compose(part.pld)
            self._empty = False
        final, self._final, self._pipeline = self._final, None, None
        if final is not None:
            self._maybe_compose(final[0], final[1], True)

    def compose(self, event: dp_event.DpEvent, count: int = 1) -> SelectionAccountant:
        """Account ``count`` runs of ``event`` (``UnsupportedEventError`` if it is not supported).

        Every selection in ``event`` is bounded and exported before anything is composed, so an error there
        (raised as ``UnsupportedEventError``) leaves the accountant as it was. A selection whose law is out of range
        raises :class:`UnsupportedSelectionError` (also a ``ParameterError``); an ``event`` that is not a ``DpEvent``
        or a ``count`` that is not an integer ``>= 1`` raises ``ParameterError``, and so does an event whose PLD
        would take more than seconds to build (a Gaussian noise below about 0.04 at the default grid:
        :data:`MAX_GAUSSIAN_PLD_POINTS`) or that dp-accounting fails to build (a noise of 1e300 overflows its loss
        grid), which then leaves the accountant as it was."""
        where = "SelectionAccountant.compose"
        if not isinstance(event, dp_event.DpEvent):
            raise ParameterError("event", _clip(event), "a dp_accounting DpEvent (e.g. dp_event.GaussianDpEvent(4.0), "
                                 "dp_event.RepeatAndSelectDpEvent(run, mean, shape) or SelectionDpEvent(run, "
                                 "'point(k=40)')); a symsel spec string is not an event", where)
        if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1:
            # dp-accounting's compose refuses 0 too, with a bare ValueError (``count`` must be positive)
            raise ParameterError("count", count, "an integer >= 1 (the number of times the event is composed)", where)
        count = int(count)
        for selection, times in self._selection_counts(event, count):
            if not isinstance(selection.event, dp_event.DpEvent):
                raise ParameterError("event", _clip(selection.event), "a dp_accounting DpEvent as the event a "
                                     "selection runs (e.g. dp_event.GaussianDpEvent(4.0))", where)
            if times > MAX_SELECTION_COUNT:
                raise ParameterError("count", times, f"a selection composed at most MAX_SELECTION_COUNT = "
                                     f"{MAX_SELECTION_COUNT} times (count times the counts of the SelfComposedDpEvent "
                                     "around it)", where)
        for selection in self._selections(event):
            try:
                selection_law(selection)
            except ParameterError as exc:
                raise UnsupportedSelectionError(event, selection, exc) from None
            except SymselError:  # a spec that does not parse: dp-accounting's UnsupportedEventError, below
                pass
        error = self._maybe_compose(event, count, False)
        if error is not None:  # as PrivacyAccountant.compose words it
            raise privacy_accountant.UnsupportedEventError(
                f"Unsupported event: {event}. Error: [{error.error_message}] caused by subevent {error.invalid_event}.")
        for selection in self._selections(event):
            self._part(selection)
        state = (self._composed, self._empty, self._nonprivate, self._deferred, self._final, self._pipeline,
                 len(self._bounds))
        try:
            self._maybe_compose(event, count, True)
        except (ArithmeticError, MemoryError, ValueError) as exc:
            # a PLD could not be built (a noise so small that symsel refuses its size, or so small or large that
            # dp-accounting's loss grid overflows): the accountant is left as it was, and the error names the event
            self._composed, self._empty, self._nonprivate, self._deferred, self._final, self._pipeline, kept = state
            del self._bounds[kept:]
            if isinstance(exc, SymselError):
                raise
            raise ParameterError("event", _clip(event), f"an event whose PLD dp-accounting can build on a loss grid "
                                 f"of {self._interval:g} (it failed: {type(exc).__name__}: {_clip(str(exc))})",
                                 where) from None
        self._events.compose(event, count)
        return self

    @property
    def ledger(self) -> dp_event.DpEvent:
        """The (composed) ``DpEvent`` accounted so far, as dp-accounting's accountants report it."""
        return self._events.build()

    def get_epsilon(self, target_delta: float) -> float:
        """The smallest ``ε`` of the composed pessimistic PLD at ``target_delta`` (``inf`` if non-private)."""
        target_delta = validate.probability(target_delta, "target_delta", "SelectionAccountant.get_epsilon")
        if self._nonprivate:
            return math.inf
        if self._deferred is not None and self._empty:
            if self._final is not None:
                return float(self._pipeline_bound().epsilon(target_delta))
            return float(cast(SelectionBound, self._deferred.bound).epsilon(target_delta))
        return float(self._composed.get_epsilon_for_delta(target_delta))

    def get_delta(self, target_epsilon: float) -> float:
        """``δ(target_epsilon)`` of the composed pessimistic PLD (1 if non-private)."""
        target_epsilon = validate.real(target_epsilon, "target_epsilon", "SelectionAccountant.get_delta",
                                       allowed="a real epsilon (inf allowed), not NaN")
        if self._nonprivate:
            return 1.0
        if self._deferred is not None and self._empty and self._final is not None:
            return float(self._pipeline_bound().delta(target_epsilon))
        if self._deferred is not None and self._empty:  # both are upper bounds on the selection's δ: the smaller
            bound = cast(SelectionBound, self._deferred.bound)
            return float(min(bound.delta(target_epsilon), self._deferred.pld.get_delta_for_epsilon(target_epsilon)))
        return float(self._composed.get_delta_for_epsilon(target_epsilon))

    @property
    def selection_bounds(self) -> tuple[tuple[dp_event.DpEvent, SelectionBound, int], ...]:
        """``(selection event, its SelectionBound, count)`` for each selection accounted so far."""
        return tuple(self._bounds)

    # ------------------------------------------------------------------ selections
    def _maybe_compose_selection(self, event: dp_event.DpEvent, count: int, do_compose: bool) -> Any:
        try:
            selection_law(event)
        except SymselError as exc:
            return _CompositionErrorDetails(invalid_event=event, error_message=str(exc))
        inner = self._maybe_compose(event.event, 1, False)
        if inner is not None:
            return inner
        if do_compose:
            part = self._part(event)
            alone = count == 1 and self._empty and self._deferred is None  # answered from its bound, not exported
            if part.bound is NONPRIVATE or (not alone and part.nonprivate_when_composed):
                self._materialize()
                self._nonprivate = True
                if part.bound is not NONPRIVATE:
                    self._bounds.append((event, cast(SelectionBound, part.bound), count))
            elif part.bound is not NOOP:
                if alone:
                    self._deferred = part  # alone so far: exported only if something joins it
                else:
                    self._materialize()
                    pld = part.pld if count == 1 else part.pld.self_compose(count)
                    self._composed = pld if self._empty else self._composed.compose(pld)
                    self._empty = False
                self._bounds.append((event, cast(SelectionBound, part.bound), count))
        return None

    def _selections(self, event: dp_event.DpEvent) -> list[dp_event.DpEvent]:
        if isinstance(event, dp_event.SelfComposedDpEvent):
            return self._selections(event.event)
        if isinstance(event, dp_event.ComposedDpEvent):
            return [s for e in event.events for s in self._selections(e)]
        return [event] if isinstance(event, _SELECTION_EVENTS) else []

    def _selection_counts(self, event: dp_event.DpEvent, count: int) -> list[tuple[dp_event.DpEvent, int]]:
        """Each selection in ``event`` (not inside another selection) with the number of times it is composed."""
        if isinstance(event, dp_event.SelfComposedDpEvent):
            return self._selection_counts(event.event, count * int(event.count))
        if isinstance(event, dp_event.ComposedDpEvent):
            return [pair for e in event.events for pair in self._selection_counts(e, count)]
        return [(event, count)] if isinstance(event, _SELECTION_EVENTS) else []

    def _options(self) -> dict[str, Any]:
        return {"method": self._method, "tolerance": self._tolerance, "export_points": self._export_points,
                "rtol": self._rtol}

    def _part(self, event: dp_event.DpEvent) -> _Part:
        key = (_event_key(event), self.neighboring_relation, self._interval, *self._options().values())
        if key in self._prepared:
            return self._prepared[key]
        part = _PARTS.get(key)
        if part is None:
            try:
                part = self._account(event)
            except ParameterError as exc:  # e.g. the inner event's noise is NaN: a ValueError naming it, too
                raise UnsupportedSelectionError(event, event, exc) from exc
            except SymselError as exc:
                raise privacy_accountant.UnsupportedEventError(
                    f"Unsupported event: {event}. Error: [{exc}]") from exc
            _PARTS.put(key, part)
        self._prepared[key] = part
        return part

    def _account(self, event: dp_event.DpEvent) -> _Part:
        law = selection_law(event)
        base = selection_base(event.event, self.neighboring_relation, self._interval, **self._options())
        if base is NOOP or base is NONPRIVATE:
            return _Part(event, base, None)
        assert isinstance(base, Profile)
        result = bound(law, base, self._method, rtol=self._rtol)
        if result.vacuous:
            return _Part(event, NONPRIVATE, None)
        points, interval, tolerance = self._export_points, self._interval, self._tolerance

        def export() -> Any:
            if points is not None:
                return to_pld(result, points=points, discretization=interval)
            return selection_pld(result, interval, tolerance)

        return _Part(event, result, export)
