"""Profiles computed by dp-accounting's privacy-loss-distribution (PLD) accountant.

The PLD accountant (Koskela, Jälkö, Honkela, *Computing Tight Differential Privacy Guarantees Using
FFT*, AISTATS 2020; Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, *Connect the Dots: Tighter Discrete
Approximations of Privacy Loss Distributions*, PETS 2022) discretizes the privacy loss
*pessimistically* (losses rounded up, truncated mass moved to ``+inf``), so its ``δ(ε)`` is an upper
bound on the true profile for every real ``ε`` -- also for ``ε < 0``, where its
``get_delta_for_epsilon`` still evaluates ``Σ_l [1 − e^(ε − l)]_+ p(l) + p(∞)``, an increasing
function of each loss. ``ε(δ)`` comes from ``get_epsilon_for_delta`` on the same PLD.

dp-accounting's public API only: it has no public accessor for a PLD's masses, so symsel keeps the arrays of the PLDs
it builds (:class:`PldArrays`; a DP-SGD run: the one-step masses of :mod:`symsel.profiles.subsampled_gaussian_pld`
self-composed as dp-accounting composes them, the same floats) and hands dp-accounting pmfs made from them by its
public constructors. A PLD known only through its public queries (another event's, held by a ``PLDAccountant``; a
nested selection accountant's) gets arrays from its ``δ`` on its loss grid (:func:`arrays_from_queries`: one
vectorized query, turned into a PLD that dominates it).

Building the PLD is the expensive step; it is done once per profile (lazily) and shared between equal
profiles through a small module-level cache.

Measured (2 cores, dp-accounting 0.6.0, ``value_discretization_interval = 1e-4``): building
``dpsgd(q=0.01, sigma=1.1, steps=1000)`` takes about 0.6--0.8 s (PLD support ≈ 1.5e5 points);
``δ`` on 16001 ``ε`` values about 12 ms (suffix sums, :func:`_suffix_delta`; dp-accounting's own array
path takes about 0.75 s); ``ε(1e-5) = 1.5154`` takes a few ms.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from symsel import validate as v
from symsel.errors import NotApplicableError, ParameterError
from symsel.memory import MIB, BoundedCache, bounded_cache
from symsel.pairs.dpsgd import dpsgd_dominated_pairs
from symsel.pairs.loss import DominatedPair, DominatingPair, from_loss_grid, hockey_stick_below, require
from symsel.profiles.base import ROUTE_PESSIMISTIC_PLD, Profile
from symsel.profiles.composition import check_pld_size

if TYPE_CHECKING:
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

# dp-accounting (and the scipy.stats it imports, about 0.6 s together) is imported by the functions that use it, so
# that a process asking about analytic bases never pays for it.

#: our names of dp-accounting's neighbouring relations → the names of its ``NeighboringRelation`` members.
_RELATIONS = {"add_remove": "ADD_OR_REMOVE_ONE", "replace_one": "REPLACE_ONE", "replace_special": "REPLACE_SPECIAL"}


def _relation(name: str) -> Any:
    """dp-accounting's ``NeighboringRelation`` called ``name`` in :data:`_RELATIONS`."""
    from dp_accounting import privacy_accountant

    return privacy_accountant.NeighboringRelation[_RELATIONS[name]]


#: dp-accounting's PLD accountants built most recently (with their build time), by the event's repr, neighbouring
#: relation and loss grid; least recently used dropped first: at most 8 entries and 128 MiB
#: (:class:`~symsel.memory.BoundedCache`; each holds a PLD).
_CACHE = BoundedCache("symsel.profiles.dpaccounting._CACHE", max_entries=8, max_bytes=128 * MIB)


def _build(event: dp_event.DpEvent, relation: str, interval: float) -> tuple[Any, float]:
    """What answers a profile's queries, and the seconds it took to build: for a DP-SGD run whose one-step PLD
    symsel builds (:func:`_subsampled_gaussian_pld`), that PLD self-composed as arrays of symsel's own, held with the
    dp-accounting PLD made from them (:class:`HeldPld`); for any other event, a ``PLDAccountant`` that has composed
    it (its public ``compose``)."""
    key = (repr(event), relation, interval)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    from dp_accounting.pld import pld_privacy_accountant

    start = time.perf_counter()
    steps = _dpsgd_steps(event)
    one_step = None if steps is None else _subsampled_gaussian_pld(
        steps[0].sampling_probability, steps[0].event.noise_multiplier, relation, interval)
    held: Any
    if one_step is not None:  # the one-step PLD is shared between runs of different lengths
        arrays = one_step.self_compose(steps[1]).accounted()  # type: ignore[index]
        held = HeldPld(arrays.to_pld(), arrays)
    else:
        held = pld_privacy_accountant.PLDAccountant(
            neighboring_relation=_relation(relation), value_discretization_interval=interval)
        held.compose(event)
    return _CACHE.put(key, (held, time.perf_counter() - start))


def _dpsgd_steps(event: dp_event.DpEvent) -> tuple[dp_event.PoissonSampledDpEvent, int] | None:
    """``(step, count)`` when ``event`` is ``count`` compositions of a Poisson-subsampled Gaussian step with a positive
    rate and noise (a DP-SGD run), else ``None``."""
    from dp_accounting import dp_event

    count = 1
    while isinstance(event, dp_event.SelfComposedDpEvent):
        event, count = event.event, count * event.count
    if (isinstance(event, dp_event.PoissonSampledDpEvent) and isinstance(event.event, dp_event.GaussianDpEvent)
            and event.sampling_probability > 0 and event.event.noise_multiplier > 0 and count >= 1):
        return event, count
    return None


@bounded_cache(max_entries=8, max_bytes=64 * MIB)
def _subsampled_gaussian_pld(rate: float, sigma: float, relation: str, interval: float) -> PldArrays | None:
    """One DP-SGD step's PLD as arrays of symsel's own (:class:`PldArrays`), the very masses of dp-accounting's
    ``from_gaussian_mechanism`` (tests/profiles/test_subsampled_gaussian_pld.py), built with the inverse privacy loss
    tabled (:mod:`symsel.profiles.subsampled_gaussian_pld`, about five times sooner), cached: a planner that varies
    the number of steps at a fixed noise builds it once instead of at every step count (it is 60 % of building a
    1000-step run; at most 8 entries and 64 MiB). ``None`` where that module does not build it (the replace-one
    relation)."""
    from symsel.profiles.subsampled_gaussian_pld import subsampled_gaussian_arrays

    return subsampled_gaussian_arrays(rate, sigma, _relation(relation), interval)


#: dp-accounting keeps a pmf of at most this many losses as a dictionary (``create_pmf`` decides; a larger one is
#: dense, and :meth:`PmfArrays.to_pmf` builds the dense pmf directly).
SPARSE_PMF_MAX = 1000


@dataclass(frozen=True, eq=False)
class PmfArrays:
    """One direction of a pessimistic PLD as symsel holds it: mass ``probs[i]`` at the loss
    ``(lower_loss + i) · discretization``, and ``infinity_mass`` at ``+∞``. symsel keeps the arrays of the PLDs it
    builds (dp-accounting has no public accessor for a PLD's masses) and hands dp-accounting a pmf made from them
    by its public constructors (:meth:`to_pmf`)."""

    discretization: float
    lower_loss: int
    probs: np.ndarray
    infinity_mass: float

    @property
    def losses(self) -> np.ndarray:
        """The finite losses, increasing (the products dp-accounting forms)."""
        return (np.arange(self.probs.size) + self.lower_loss) * self.discretization

    def self_compose(self, count: int, tail_mass_truncation: float = 1e-15) -> PmfArrays:
        """``count`` compositions with itself, as dp-accounting's dense pmf composes itself: its public FFT
        self-convolution (``common.self_convolve``, which drops at most ``tail_mass_truncation`` of the tails), the
        dropped mass and the chance that some run lands at ``+∞`` put at ``+∞`` (pessimistic)."""
        from dp_accounting.pld import common

        offset, probs = common.self_convolve(self.probs, count, tail_mass_truncation)
        infinity = tail_mass_truncation - math.expm1(count * math.log1p(-self.infinity_mass))
        return PmfArrays(self.discretization, self.lower_loss * count + offset, np.array(probs), infinity)

    def accounted(self, tail_mass_truncation: float = 1e-15) -> PmfArrays:
        """These masses as ``PLDAccountant`` holds them once it has composed them into its own PLD (which starts as
        the identity, a single mass 1 at loss 0): the product with that mass by the FFT convolution its dense pmfs
        compose with (``scipy.signal.fftconvolve``), then its pessimistic truncation of the tails: the longest prefix
        and the longest suffix each of mass at most ``tail_mass_truncation / 2`` are cut, the prefix's mass added to
        the first loss kept and the suffix's put at ``+∞``. The same floats as ``PLDAccountant``'s, so a profile and
        the accountant agree to the bit (tests/profiles/test_profiles_dpaccounting.py)."""
        from scipy import signal

        probs = signal.fftconvolve(np.ones(1), self.probs)
        half = tail_mass_truncation / 2
        left = _prefix_within(probs, half)
        right = max(probs.size - _prefix_within(probs[::-1], half), left + 1)
        left_mass, right_mass = np.sum(probs[:left]), np.sum(probs[right:])
        kept = probs[left:right]
        kept[0] += left_mass
        return PmfArrays(self.discretization, self.lower_loss + left, kept, self.infinity_mass + right_mass)

    def to_pmf(self) -> Any:
        """dp-accounting's pmf of these masses (public constructors: ``DensePLDPmf``, or ``create_pmf`` for a pmf
        small enough that dp-accounting would keep it sparse)."""
        from dp_accounting.pld import pld_pmf

        if self.probs.size > SPARSE_PMF_MAX:
            return pld_pmf.DensePLDPmf(self.discretization, self.lower_loss, self.probs, self.infinity_mass, True)
        masses = dict(zip(range(self.lower_loss, self.lower_loss + self.probs.size), self.probs.tolist(),
                          strict=True))
        return pld_pmf.create_pmf(masses, self.discretization, self.infinity_mass, True)


def _prefix_within(values: np.ndarray, threshold: float) -> int:
    """The length of the longest prefix of ``values`` whose running sums (added in order) stay at most
    ``threshold``."""
    over = np.flatnonzero(np.cumsum(values) > threshold)
    return int(over[0]) if over.size else int(values.size)


@dataclass(frozen=True, eq=False)
class PldArrays:
    """A pessimistic PLD as symsel holds it: the remove direction and, when the PLD is not symmetric, the add
    direction (:class:`PmfArrays`)."""

    remove: PmfArrays
    add: PmfArrays | None = None

    def directions(self) -> list[tuple[str, PmfArrays]]:
        """``("remove", pmf)``, and ``("add", pmf)`` when not symmetric."""
        return [("remove", self.remove)] + ([] if self.add is None else [("add", self.add)])

    def self_compose(self, count: int) -> PldArrays:
        """``count`` compositions with itself (each direction: :meth:`PmfArrays.self_compose`)."""
        return PldArrays(self.remove.self_compose(count), None if self.add is None else self.add.self_compose(count))

    def accounted(self) -> PldArrays:
        """As ``PLDAccountant`` holds these masses once composed (each direction: :meth:`PmfArrays.accounted`)."""
        return PldArrays(self.remove.accounted(), None if self.add is None else self.add.accounted())

    def to_pld(self) -> Any:
        """dp-accounting's ``PrivacyLossDistribution`` of these arrays (its public constructor)."""
        from dp_accounting.pld import privacy_loss_distribution

        return privacy_loss_distribution.PrivacyLossDistribution(
            self.remove.to_pmf(), None if self.add is None else self.add.to_pmf())


def connect_dots_masses(deltas: np.ndarray, discretization: float, clip: bool = True) -> tuple[np.ndarray, float]:
    """The pessimistic connect-the-dots masses (Doroshenko et al., PETS 2022, Algorithm 1) on the contiguous loss
    grid ``ε_i = (lower + i) h`` whose hockey-stick divergence at ``ε_i`` is ``deltas[i]`` (made non-increasing first),
    and the mass at ``+∞`` (the last ``δ``). Between grid points its ``δ`` is the chord in ``e^ε``, which lies above
    any curve convex in ``e^ε`` through (or below) the points: the PLD dominates every mechanism whose ``δ`` is at
    most ``deltas`` on the grid. Formed with the operations of dp-accounting's fixed-gap construction (its
    numerically stable form: first mass ``1 − δ_1 + (δ_2 − δ_1)/(e^h − 1)``, inner masses
    ``((δ_{i+1} − δ_i) − e^h (δ_i − δ_{i−1}))/(e^h − 1)``, last ``(δ_n − δ_{n−1})/(e^{−h} − 1)``, negative ones
    raised to 0 unless ``clip`` is false), so that the same ``δ`` give the same floats."""
    deltas = np.minimum.accumulate(np.asarray(deltas, dtype=float))
    if deltas.size == 1:
        return np.array([1.0 - deltas[0]]), float(deltas[0])
    diffs = np.diff(deltas)
    probs = np.empty_like(deltas)
    probs[0] = 1 - deltas[0] + diffs[0] / math.expm1(discretization)
    probs[1:-1] = (diffs[1:] - diffs[:-1] * math.exp(discretization)) / math.expm1(discretization)
    probs[-1] = diffs[-1] / math.expm1(-discretization)
    return (np.maximum(0.0, probs) if clip else probs), float(deltas[-1])


#: the widest loss range, in grid points, that :func:`arrays_from_queries` asks a PLD's ``δ`` on.
QUERY_GRID_MAX = 4_000_000
#: :func:`arrays_from_queries` lowers the grid's end at most this many times (doubling it) ...
LOWER_END_DOUBLINGS = 12
#: ... while ``δ`` at twice the end lies more than this below the chord from ``(−∞, 1)`` through the end (a convex
#: curve that meets its chord inside the segment is affine there: no mass below the end).
AFFINE_TOLERANCE = 1e-12


def arrays_from_queries(held: Any, discretization: float) -> PldArrays | None:
    """A pessimistic PLD of symsel's own that dominates a PLD known only through dp-accounting's public queries
    (``held``: a ``PrivacyLossDistribution``, a ``PLDAccountant`` or a :class:`HeldPld`) whose losses are multiples
    of ``discretization``: its ``δ`` on every grid point from ``bottom`` to ``top`` (one vectorized public
    ``get_delta_for_epsilon`` call; ``top`` the largest loss: ``get_epsilon_for_delta(δ(∞))``, raised until
    ``δ(top) = δ(∞)``; ``bottom`` from ``−top``, doubled while the curve below it is not affine in ``e^ε``), turned
    into masses by :func:`connect_dots_masses`, each raised by the rounding error bound of its formula. Certified:
    the PLD's ``δ`` (the larger of its two directions) is affine in ``e^ε`` between grid points and convex, so the
    chord through its grid values is the curve itself on ``[bottom, top]`` and above it below ``bottom`` (the chord
    from ``(−∞, 1)``); above ``top`` both are ``δ(∞)``. One symmetric PLD (dominating both
    directions). ``None`` when the PLD has no finite top (``δ(∞) ≥ 1``) or is wider than :data:`QUERY_GRID_MAX`."""
    delta, epsilon = _queries(held)
    h = float(discretization)
    at_infinity = float(delta(math.inf))
    if not 0.0 <= at_infinity < 1.0:
        return None
    top = float(epsilon(at_infinity))
    if not math.isfinite(top):
        return None
    last = max(1, math.ceil(top / h) + 1)
    while float(delta(last * h)) > at_infinity:
        last *= 2
        if 2 * last > QUERY_GRID_MAX:
            return None
    first = -last
    for _ in range(LOWER_END_DOUBLINGS):  # down to the smallest loss: below it δ is affine in e^ε (no mass there)
        near, far = float(delta(first * h)), float(delta(2 * first * h))
        if far >= 1 - math.exp(first * h) * (1 - near) - AFFINE_TOLERANCE or last - 2 * first + 1 > QUERY_GRID_MAX:
            break
        first *= 2
    if last - first + 1 > QUERY_GRID_MAX:
        return None
    grid = np.arange(first, last + 1)
    deltas = np.clip(np.asarray(delta(grid * h), dtype=float), 0.0, 1.0)
    deltas[-1] = max(deltas[-1], at_infinity)
    # not clipped: where the PLD has no mass the formula gives rounding noise of either sign (about u/h), which
    # cancels in the sums; raising each negative one to 0 would add about u/h of mass per grid point
    probs, infinity = connect_dots_masses(deltas, h, clip=False)
    # each mass is a sum of two quotients of differences: raise it by a bound on the rounding of that formula
    steps = np.abs(np.diff(np.minimum.accumulate(deltas)))
    nearby = np.concatenate([[1.0], steps]) * math.exp(h) + np.concatenate([steps, [0.0]])
    probs = probs + 8 * np.finfo(float).eps * nearby / math.expm1(h)
    return PldArrays(PmfArrays(h, first, probs, infinity))


#: relative rise of ``ε(δ)`` read from arrays rebuilt by :func:`arrays_from_queries` (:func:`epsilon_tables`): their
#: ``ε`` is at least dp-accounting's in exact arithmetic, and this covers the rounding of the two computations.
QUERY_EPSILON_SLACK = 1e-12


def _queries(held: Any) -> tuple[Any, Any]:
    """``(δ(ε), ε(δ))`` of a ``PrivacyLossDistribution``, an accountant or a :class:`HeldPld` (public methods)."""
    if hasattr(held, "get_delta_for_epsilon"):
        return held.get_delta_for_epsilon, held.get_epsilon_for_delta
    return held.get_delta, held.get_epsilon


def pld_arrays(pld: Any, discretization: float | None = None) -> PldArrays | None:
    """The arrays of a PLD: its own when symsel built it (a :class:`PldArrays` or a :class:`HeldPld` holding them),
    else from dp-accounting's public queries (:func:`arrays_from_queries`, when ``discretization`` is known);
    ``None`` otherwise."""
    if isinstance(pld, PldArrays):
        return pld
    own = pld.arrays if isinstance(pld, HeldPld) else None
    if own is not None:
        return own
    if pld is None or discretization is None:
        return None
    return arrays_from_queries(pld, discretization)


class HeldPld:
    """A dp-accounting ``PrivacyLossDistribution`` answered as an accountant answers (``get_delta``,
    ``get_epsilon``: the PLD's public queries), with the arrays it was made from when symsel built it
    (:class:`PldArrays`, else ``None``)."""

    def __init__(self, pld: Any, arrays: PldArrays | None = None):
        self.pld, self.arrays = pld, arrays

    def get_delta(self, target_epsilon: Any) -> Any:
        return self.pld.get_delta_for_epsilon(target_epsilon)

    def get_epsilon(self, target_delta: float) -> float:
        return float(self.pld.get_epsilon_for_delta(target_delta))


#: ``PldProfile.epsilon`` answers its first this many queries by dp-accounting's own call, the later ones from the
#: :class:`EpsilonTable` (the same floats).
EPSILON_TABLE_AFTER = 2

#: a PLD without arrays of symsel's own (not built by symsel) is queried one float at a time (dp-accounting's fast
#: path) for up to this many ε values, until its arrays are rebuilt from its public queries
#: (:func:`arrays_from_queries`).
_SCALAR_QUERY_MAX = 256


class PldProfile(Profile):
    """The (pessimistic) profile of any ``DpEvent`` the dp-accounting PLD accountant accepts.

    Args:
        event: a ``dp_accounting.DpEvent``.
        neighbouring: ``"add_remove"`` (default), ``"replace_one"`` or ``"replace_special"``.
        value_discretization_interval: the PLD's loss grid (smaller: tighter and slower).
    """

    family = "pld"

    def __init__(
        self, event: dp_event.DpEvent, neighbouring: str = "add_remove", value_discretization_interval: float = 1e-4
    ):
        from dp_accounting import dp_event
        from dp_accounting.pld import pld_privacy_accountant

        where = self.family
        if not isinstance(event, dp_event.DpEvent):
            raise ParameterError("event", event, "a dp_accounting DpEvent", where)
        self.neighbouring = v.choice(neighbouring, "neighbouring", where, tuple(_RELATIONS))
        self.value_discretization_interval = v.real(
            value_discretization_interval, "value_discretization_interval", where, lo=0.0, hi=1.0, lo_open=True
        )
        probe = pld_privacy_accountant.PLDAccountant(neighboring_relation=_relation(self.neighbouring))
        if not probe.supports(event):
            raise NotApplicableError(f"{where}: the PLD accountant does not support the event {event!r}")
        self.event = event

    @staticmethod
    def from_event(
        event: dp_event.DpEvent, value_discretization_interval: float = 1e-4, neighbouring: str = "add_remove"
    ) -> PldProfile:
        """The profile of any ``event`` the PLD accountant accepts (also reachable as ``DpsgdProfile.from_event``)."""
        return PldProfile(event, neighbouring=neighbouring, value_discretization_interval=value_discretization_interval)

    @property
    def spec(self) -> str:
        """Descriptive only: a general event has no spec family (``dpsgd`` has one)."""
        return f"pld(event={self.event!r}, neighbouring={self.neighbouring!r})"

    # ------------------------------------------------------------------ the PLD
    @cached_property
    def accountant(self) -> pld_privacy_accountant.PLDAccountant:
        """The composed PLD accountant (built on first use, cached)."""
        accountant, seconds = _build(self.event, self.neighbouring, self.value_discretization_interval)
        self.build_seconds = seconds
        return accountant

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        flat = eps.ravel()
        if flat.size <= _SCALAR_QUERY_MAX and "_suffix_tables" not in self.__dict__ and self._own_arrays is None:
            # dp-accounting answers a float by one dot product (6-13 ms at 1000 DP-SGD steps) but walks its whole
            # support in Python for an array (about 0.5 s), whatever the array's length.
            values = [float(self.accountant.get_delta(float(e))) for e in flat]
            return np.clip(np.asarray(values, dtype=float).reshape(eps.shape), 0.0, 1.0)
        tables = self._suffix_tables  # built once (a few tens of ms); then a query is one searchsorted
        if tables is None:  # no arrays (a PLD too wide to query on its grid): dp-accounting's own (slow) array path
            order = np.argsort(flat, kind="stable")
            deltas = np.asarray(self.accountant.get_delta(flat[order]), dtype=float)
            out = np.empty_like(flat)
            out[order] = np.broadcast_to(deltas, flat.shape)
            return np.clip(out.reshape(eps.shape), 0.0, 1.0)
        return suffix_tables_delta(tables, flat).reshape(eps.shape)

    @property
    def _own_arrays(self) -> PldArrays | None:
        """The PLD's arrays when symsel built it (DP-SGD), else ``None``."""
        return self.accountant.arrays if isinstance(self.accountant, HeldPld) else None

    @cached_property
    def _arrays(self) -> PldArrays | None:
        """The PLD's arrays: symsel's own, else from dp-accounting's public queries on the PLD's loss grid
        (:func:`arrays_from_queries`: one vectorized query, a PLD that dominates the event's)."""
        return pld_arrays(self.accountant, self.value_discretization_interval)

    @cached_property
    def _suffix_tables(self) -> list[tuple[Any, ...]] | None:
        """:func:`pld_suffix_tables` of the composed PLD (``None``: no arrays)."""
        return pld_suffix_tables(self._arrays)

    def dominating_loss_pairs(self) -> tuple[DominatingPair, ...]:
        """The pessimistic PLD's dominating pairs, one per direction (remove; add when the PLD is not symmetric),
        coarsened to the loss width of :func:`loss_pair_width` by rounding losses up (:func:`from_loss_grid`).

        Assumed of dp-accounting (docs/interval.md, "What is assumed of dp-accounting"): its pessimistic PLD of
        each direction, read as the pair with ``Q``-mass ``p(l)`` and ``Q'``-mass ``p(l) e^{−l}`` at each loss
        ``l`` and ``p(∞)`` at ``+∞``, dominates that direction of the event, up to the FFT round-off of its masses
        (its negative masses are counted as error). The dominated side comes from elsewhere
        (:mod:`symsel.pairs.dpsgd`)."""
        return self._dominating_loss_pairs

    @cached_property
    def _dominating_loss_pairs(self) -> tuple[DominatingPair, ...]:
        return pld_loss_pairs(self._arrays, f"{self.spec}, pessimistic PLD")

    def self_composed(self, k: int) -> tuple[Profile, str]:
        """Pessimistic: the PLD accountant's profile of ``SelfComposedDpEvent(event, k)``, same neighbouring
        relation and grid (a plain :class:`PldProfile`: a DP-SGD base's RDP conversion is not carried over), after
        :func:`symsel.profiles.composition.check_pld_size` has checked that its PLD fits."""
        from dp_accounting import dp_event

        check_pld_size(self, k)
        composed_event = dp_event.SelfComposedDpEvent(self.event, k)
        return PldProfile(composed_event, neighbouring=self.neighbouring,
                          value_discretization_interval=self.value_discretization_interval), ROUTE_PESSIMISTIC_PLD

    @property
    def pld_discretization(self) -> float:
        """The profile's own ``value_discretization_interval``, kept by :meth:`self_composed`."""
        return self.value_discretization_interval

    @cached_property
    def _delta_infinity(self) -> float:
        return float(np.clip(self.accountant.get_delta(math.inf), 0.0, 1.0))

    @property
    def delta_at_infinity(self) -> float:
        """The PLD's mass at ``+inf`` (truncation moved there pessimistically)."""
        return self._delta_infinity

    def epsilon(self, delta: float) -> float:
        """``get_epsilon_for_delta`` of the pessimistic PLD (``inf`` below ``δ(∞)``), from the :class:`EpsilonTable`
        of each direction (dp-accounting's value to the bit on symsel's own arrays, about 40 times faster; on arrays
        rebuilt from public queries, at least dp-accounting's value)."""
        d = self._check_delta(delta)
        if self.delta(0.0) <= d:
            return 0.0
        # the first queries ask dp-accounting (its loop stops where the answer is; a table costs about as much to
        # form), the later ones the tables: a profile asked once or twice (a planner's step) pays no table
        self._epsilon_queries = getattr(self, "_epsilon_queries", 0) + 1
        tables = self._epsilon_tables if self._epsilon_queries > EPSILON_TABLE_AFTER else None
        if tables is None:
            return max(0.0, float(self.accountant.get_epsilon(d)))
        return max(0.0, *(table.epsilon(d) for table in tables))

    @cached_property
    def _epsilon_tables(self) -> list[EpsilonTable] | None:
        return epsilon_tables(self._arrays)


class EpsilonTable:
    """dp-accounting's ``get_epsilon_for_delta`` of one dense pmf, vectorized and bit for bit.

    dp-accounting walks the losses from the largest down, adding each loss's mass ``p`` to ``U`` (started at the
    mass at ``+∞``) and ``p e^{-l}`` to ``L``, and stops before the first loss ``l`` with
    ``log((U − δ) / L) ≥ l`` (or returns ``l`` when ``U ≥ δ`` while ``L`` is still 0); ``ε`` is then
    ``log((U − δ) / L)``. Here the losses (dp-accounting's own ``itertools.count`` sums), the terms
    ``math.exp(-l) p`` and the running sums (a cumulative sum adds in the same order) are formed from the top in
    chunks, as far down as a query needs, and kept for the next query: every float is the one the loop forms, and a
    query is a few array operations. The stopping test uses ``numpy.log`` and re-checks with ``math.log`` where the
    two could disagree (within 1e-12 of the loss). tests/profiles/test_epsilon_table.py compares it with
    dp-accounting's call."""

    #: losses formed at first (then twice as many each time a query needs more).
    CHUNK = 8192

    def __init__(self, pmf: PmfArrays, slack: float = 0.0):
        self.slack = slack  # added (relative, at least absolute) to every finite answer
        self._masses = np.flip(np.asarray(pmf.probs, dtype=float))
        self._top = (pmf.lower_loss + len(pmf.probs) - 1) * pmf.discretization
        self._step = -pmf.discretization
        self.infinity_mass = float(pmf.infinity_mass)
        self.losses = np.empty(0)
        self.upper = np.asarray([self.infinity_mass])  # U before the loss of the same index (and after the last)
        self.lower = np.asarray([0.0])

    def _extend(self) -> None:
        """Form the next losses, terms and running sums (as many again as formed so far, at least :data:`CHUNK`)."""
        done, n = self.losses.size, self._masses.size
        more = min(n, done + max(self.CHUNK, done)) - done
        steps = np.full(more, self._step)
        if done == 0:
            steps[0] = self._top
            losses = np.cumsum(steps)  # the top loss, then one step down at a time, as itertools.count adds
        else:
            losses = np.cumsum(np.concatenate([[self.losses[-1]], steps]))[1:]
        probs = self._masses[done:done + more]
        terms = np.asarray([math.exp(-loss) for loss in losses.tolist()]) * probs
        self.losses = np.concatenate([self.losses, losses])
        self.upper = np.concatenate([self.upper, np.cumsum(np.concatenate([self.upper[-1:], probs]))[1:]])
        self.lower = np.concatenate([self.lower, np.cumsum(np.concatenate([self.lower[-1:], terms]))[1:]])

    def epsilon(self, delta: float) -> float:
        """The smallest ``ε`` with the pmf's hockey-stick divergence at most ``delta`` (``inf`` if none), raised by
        :attr:`slack`."""
        value = self._epsilon(delta)
        return value + self.slack * max(1.0, abs(value)) if math.isfinite(value) and value > 0 else value

    def _epsilon(self, delta: float) -> float:
        if self.infinity_mass > delta:
            return math.inf
        while True:
            m, n = self.losses.size, self._masses.size
            upper, lower, losses = self.upper[:m], self.lower[:m], self.losses
            with np.errstate(divide="ignore", invalid="ignore"):
                level = np.log((upper - delta) / lower)
            ready = (upper > delta) & (lower > 0)
            stop = ready & (level >= losses)
            unsure = np.flatnonzero(ready & (np.abs(level - losses) <= 1e-12 * np.maximum(1.0, np.abs(losses))))
            for k in unsure.tolist():  # numpy's log and math.log may differ in the last bit: decide as the loop does
                stop[k] = math.log((float(upper[k]) - delta) / float(lower[k])) >= float(losses[k])
            first_stop = int(np.argmax(stop)) if stop.any() else m
            zero = (self.upper[1:] >= delta) & (self.lower[1:] == 0)
            if zero[:first_stop].any():  # U reached delta while L is 0: the loop returns that loss
                return max(0.0, float(losses[int(np.argmax(zero[:first_stop]))]))
            if first_stop < m or m == n:
                break
            self._extend()
        mass_upper, mass_lower = float(self.upper[first_stop]), float(self.lower[first_stop])
        if mass_upper <= mass_lower + delta:
            return 0.0
        return math.log((mass_upper - delta) / mass_lower)


def epsilon_tables(pld: Any, discretization: float | None = None) -> list[EpsilonTable] | None:
    """The :class:`EpsilonTable` of each direction of a PLD (:func:`pld_arrays`; remove, and add when it is not
    symmetric: ``get_epsilon_for_delta`` is their larger value); ``None`` without arrays."""
    arrays = pld_arrays(pld, discretization)
    if arrays is None:
        return None
    # arrays rebuilt from queries: the table's logarithm of other sums may land an ulp below dp-accounting's answer
    slack = 0.0 if arrays is pld or arrays is getattr(pld, "arrays", None) else QUERY_EPSILON_SLACK
    return [EpsilonTable(pmf, slack) for _, pmf in arrays.directions()]


#: the widest loss width to which a PLD is coarsened (by rounding up) before ``interval`` uses it as a dominating
#: pair ...
LOSS_PAIR_WIDTH = 1e-3
#: ... and the number of groups its loss range is cut into when that is finer: rounding up by ``w`` moves a
#: selection's ε by about ``w`` times half the number of runs, so a fixed width is loose where the losses are small
#: (``dpsgd(q=0.01, sigma=4, steps=100)``, point(k=40): 4.6 % at 1e-3, 0.1 % at its own grid).
LOSS_PAIR_GROUPS = 10_000


def loss_pair_width(losses: np.ndarray, probs: np.ndarray, grid: float) -> float:
    """The width to which :func:`pld_loss_pairs` coarsens a PLD: its loss range (of the losses with positive mass)
    cut into :data:`LOSS_PAIR_GROUPS`, at most :data:`LOSS_PAIR_WIDTH`; 0 (the PLD's own atoms) when that is less
    than two of its grid steps."""
    live = losses[probs > 0]
    span = float(live[-1] - live[0]) if live.size else 0.0
    width = min(LOSS_PAIR_WIDTH, span / LOSS_PAIR_GROUPS)
    return width if width >= 2 * grid else 0.0


def pld_loss_pairs(pld: Any, source: str, discretization: float | None = None,
                   min_width: float = 0.0) -> tuple[DominatingPair, ...]:
    """The dominating pairs of a pessimistic PLD (:func:`pld_arrays`), one per direction, coarsened to
    :func:`loss_pair_width`, or to ``min_width`` when that is wider, each atom split onto the multiples of the width
    around it (:func:`from_loss_grid`: the coarser pair dominates the finer one); empty without arrays."""
    arrays = pld_arrays(pld, discretization)
    if arrays is None:
        return ()
    pairs = []
    for direction, pmf in arrays.directions():
        probs, losses = np.asarray(pmf.probs, dtype=float), pmf.losses
        width = max(loss_pair_width(losses, probs, float(pmf.discretization)), float(min_width))
        pairs.append(from_loss_grid(losses, probs, float(pmf.infinity_mass), width, direction,
                                    f"{source}, {direction}"))
    return tuple(pairs)


def pld_suffix_tables(pld: Any, discretization: float | None = None) -> list[tuple[Any, ...]] | None:
    """Per direction of a PLD (:func:`pld_arrays`; remove, and add when not symmetric): losses, suffix sums of
    ``p`` and of ``p e^{-l}`` and of their absolute values, and the mass at ``+inf``, for :func:`_suffix_delta`;
    ``None`` without arrays (then dp-accounting's own evaluation is used) or when ``e^{-l}`` would overflow."""
    arrays = pld_arrays(pld, discretization)
    if arrays is None:
        return None
    tables = []
    for _, pmf in arrays.directions():
        probs, losses, inf_mass = np.asarray(pmf.probs, dtype=float), pmf.losses, float(pmf.infinity_mass)
        if probs.size == 0 or losses[0] < -700:  # e^{-l} would overflow
            return None
        weights = np.exp(-losses)
        tail_p, tail_pe = _tail(probs), _tail(probs * weights)
        # dp-accounting's PLD can hold tiny negative masses: the rounding allowance uses |p| (the same sums
        # when there are none)
        if probs.min() >= 0:
            abs_p, abs_pe = tail_p, tail_pe
        else:
            abs_p, abs_pe = _tail(np.abs(probs)), _tail(np.abs(probs) * weights)
        tables.append((losses, tail_p, tail_pe, abs_p, abs_pe, inf_mass))
    return tables


def suffix_tables_delta(tables: list[tuple[Any, ...]], eps: np.ndarray) -> np.ndarray:
    """``δ(ε)`` of a PLD from its :func:`pld_suffix_tables` (the larger of the two directions), never below the
    exact sum over the PLD (see :func:`_suffix_delta`), clipped to ``[0, 1]``."""
    out = np.zeros_like(eps, dtype=float)
    for table in tables:
        out = np.maximum(out, _suffix_delta(table, eps))
    return np.clip(out, 0.0, 1.0)


def _tail(values: np.ndarray) -> np.ndarray:
    """Suffix sums ``Σ_{j ≥ i} values[j]`` (summed from the small end), with a trailing 0 (written in place, from
    the end: the same sums as reversing a cumulative sum, without its two copies)."""
    out = np.empty(values.size + 1)
    out[-1] = 0.0
    np.cumsum(values[::-1], out=out[-2::-1])
    return out


def _suffix_delta(table: tuple[np.ndarray, ...], eps: np.ndarray) -> np.ndarray:
    """``p(∞) + Σ_{l > ε} p(l) (1 − e^{ε−l})`` for many ``ε`` at once, as ``S_p − e^ε S_pe`` from suffix
    sums (one ``searchsorted``): the sum dp-accounting's ``get_delta_for_epsilon`` forms term by term.
    The difference can cancel, so the rounding error bound of sequential summation, ``(2n + 8) u`` times
    ``S_|p| + e^ε S_|p|e`` (``n`` terms, unit roundoff ``u``), is added and a negative difference is
    raised to 0: the result is never below the exact sum over the (already pessimistic) PLD."""
    losses, tail_p, tail_pe, abs_p, abs_pe, inf_mass = table
    k = np.searchsorted(losses, eps, side="right")
    with np.errstate(over="ignore", invalid="ignore"):
        growth = np.exp(eps)
        # beyond the largest loss the sums are empty: 0, not e^ε · 0 (NaN once e^ε overflows)
        scaled_pe = np.where(tail_pe[k] != 0, growth * tail_pe[k], 0.0)
        scaled_abs = np.where(abs_pe[k] != 0, growth * abs_pe[k], 0.0)
    difference = tail_p[k] - scaled_pe
    allowance = (2 * losses.size + 8) * np.finfo(float).eps * (abs_p[k] + scaled_abs)
    return inf_mass + np.maximum(difference, 0.0) + allowance


#: the most DP-SGD steps accepted.
DPSGD_MAX_STEPS = 10**7

#: the largest privacy-loss range (in discretization intervals) a DP-SGD PLD may need: about 2e7 points, a few
#: hundred MB while dp-accounting composes it.
DPSGD_MAX_PLD_POINTS = 2e7


def _check_pld_size(q: float, sigma: float, steps: int, interval: float) -> None:
    """Refuse, before building, a DP-SGD PLD too large to hold: the loss range that matters is at most the
    RDP conversion's ε at δ = 1e-15 (one step and all steps), so about ``ε/interval`` points."""
    from symsel.profiles.rdp import SUBSAMPLED_ORDERS, RdpProfile

    one_step = RdpProfile(lambda orders: rdp_poisson_subsampled_gaussian(q, sigma, orders), orders=SUBSAMPLED_ORDERS)
    for count, name, value in ((1, "sigma", sigma), (steps, "steps", steps)):
        curve = one_step if count == 1 else RdpProfile(  # mypy cannot type a lambda with a default argument
            lambda orders, n=count: n * rdp_poisson_subsampled_gaussian(q, sigma, orders), orders=SUBSAMPLED_ORDERS)  # type: ignore[misc]
        points = curve.epsilon(1e-15) / interval
        if not points <= DPSGD_MAX_PLD_POINTS:
            raise ParameterError(
                name, value, f"a DP-SGD run whose PLD fits in {DPSGD_MAX_PLD_POINTS:.0e} points (this one needs "
                f"about {points:.1e}: larger sigma, fewer steps or a smaller q)", "dpsgd")


#: ``best`` builds a DP-SGD run's PLD on a coarser loss grid (:func:`coarse_loss_grid`) when asked for a search
#: tolerance of at least this (``bound(..., rtol=)``; docs/interval.md, "Searching ε") ...
COARSE_GRID_RTOL = 1e-3
#: ... at most this wide ...
COARSE_GRID_MAX = 1e-3
#: ... and otherwise this fraction of the run's loss scale (its RDP conversion's ``ε`` at δ = 1e-15), divided by the
#: square root of its steps in thousands: the pessimistic grid's excess grows as the run's losses shrink and as its
#: steps add up (docs/interval.md, "The loss grid follows the tolerance": measured excess of ``best`` over the
#: default grid at most 0.11 %).
COARSE_GRID_SCALE = 3e-4
#: the ε1 points of the coarse profile's region grid (:meth:`~symsel.profiles.Profile.region_eps_grid`): every fourth
#: point of the default grid, so its region contains the default one's (fewer constraints) and the envelope built on
#: it is certified; measured on dpsgd(q=0.01, σ = 1.1, 1000 steps) its ε at δ = 1e-6 is at most 3e-6 (relative) above
#: the default grid's (poisson(mean=10), tnb(eta=0.5, mean=10), point(k=40)), and the region costs 9 ms instead
#: of 30-100.
COARSE_REGION_GRID_POINTS = 4001


def coarse_loss_grid(q: float, sigma: float, steps: int) -> float:
    """The loss grid of :data:`COARSE_GRID_SCALE` for ``steps`` DP-SGD steps, rounded down to 1, 2 or 5 times a power
    of ten and at most :data:`COARSE_GRID_MAX`. Only the work and the tightness depend on it: every grid's
    pessimistic PLD dominates the run."""
    from symsel.profiles.rdp import SUBSAMPLED_ORDERS, RdpProfile

    run = RdpProfile(lambda orders: steps * rdp_poisson_subsampled_gaussian(q, sigma, orders),
                     orders=SUBSAMPLED_ORDERS)
    raw = min(COARSE_GRID_MAX, COARSE_GRID_SCALE * run.epsilon(1e-15) / math.sqrt(steps / 1000))
    if not raw > 0:
        return 0.0
    power = 10.0 ** math.floor(math.log10(raw))
    return max(m * power for m in (1, 2, 5, 10) if m * power <= raw * (1 + 1e-12))


class DpsgdProfile(PldProfile):
    """DP-SGD: Poisson-subsampled Gaussian (rate ``q``, noise multiplier ``σ``) composed ``steps`` times.

    The event is ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(σ)), steps)``, accounted by
    the PLD accountant (Abadi et al., *Deep Learning with Differential Privacy*, CCS 2016, for the
    mechanism; the references of this module for the accounting). ``rdp(λ)`` is the RDP of the subsampled
    Gaussian (Mironov, Talwar, Zhang, *Rényi Differential Privacy of the Sampled Gaussian Mechanism*, 2019; the
    series dp-accounting sums, vectorized in :mod:`symsel.profiles.subsampled_rdp`) times ``steps``, for
    ``add_remove`` only.

    Build time of ``q=0.01, σ=1.1, steps=1000``: about 0.5--0.8 s (see the module docstring).

    The generic region boundary (base class) uses 16001 uniform ``ε1`` on ``[0, ε(δ(∞))]`` (about 0.7 s
    of PLD evaluations, once per profile). Measured for this example against a 64001-point grid: the
    loss is 3.0e-8 absolute in ``q'`` (4.9e-7 with 4001 points, 6.6e-6 with 1001: it falls like 1/N²);
    see ``tests/profiles/test_profiles_dpaccounting.py``.
    """

    family = "dpsgd"

    def __init__(
        self,
        q: float,
        sigma: float,
        steps: int,
        neighbouring: str = "add_remove",
        value_discretization_interval: float = 1e-4,
    ):
        where = self.family
        self.q, self.sigma = v.subsampled_gaussian(q, sigma, where)
        self.steps = v.integer(steps, "steps", where, lo=1)
        if self.steps > DPSGD_MAX_STEPS:
            raise ParameterError("steps", steps, f"an integer 1 <= steps <= {DPSGD_MAX_STEPS:.0e}", where)
        _check_pld_size(self.q, self.sigma, self.steps, float(value_discretization_interval))
        from dp_accounting import dp_event

        event = dp_event.SelfComposedDpEvent(
            dp_event.PoissonSampledDpEvent(self.q, dp_event.GaussianDpEvent(self.sigma)), self.steps
        )
        super().__init__(event, neighbouring=neighbouring, value_discretization_interval=value_discretization_interval)

    @property
    def spec(self) -> str:
        extra = "" if self.neighbouring == "add_remove" else f", neighbouring={self.neighbouring!r}"
        if self.value_discretization_interval != 1e-4:
            extra += f", value_discretization_interval={self.value_discretization_interval!r}"
        return f"dpsgd(q={self.q!r}, sigma={self.sigma!r}, steps={self.steps!r}{extra})"

    def at_tolerance(self, rtol: float) -> Profile:
        """The same run on the loss grid :func:`coarse_loss_grid` when ``rtol`` is at least :data:`COARSE_GRID_RTOL`
        and that grid is coarser than the profile's own (add/remove and replace-special: replace-one's ``interval``
        uses the deep pairs, whatever the grid); else the profile itself. dp-accounting's pessimistic PLD dominates
        the run on every grid, so every bound computed on it is certified; the coarse one is built once per
        profile, with a region grid of :data:`COARSE_REGION_GRID_POINTS` (fewer constraints: a larger region, still
        certified)."""
        if rtol < COARSE_GRID_RTOL or self.neighbouring == "replace_one":
            return self
        return self._coarse_profile

    @cached_property
    def _coarse_profile(self) -> Profile:
        grid = coarse_loss_grid(self.q, self.sigma, self.steps)
        if not grid > self.value_discretization_interval:
            return self
        coarse = DpsgdProfile(self.q, self.sigma, self.steps, self.neighbouring, value_discretization_interval=grid)
        coarse.region_grid_points = COARSE_REGION_GRID_POINTS
        return coarse

    def dominated_loss_pairs(self) -> tuple[DominatedPair, ...]:
        """One step's outputs bucketed by privacy loss, the steps' labels summed (:mod:`symsel.pairs.dpsgd`); the
        dominating pairs are the pessimistic PLD's (:meth:`PldProfile.dominating_loss_pairs`)."""
        return dpsgd_dominated_pairs(self.q, self.sigma, self.steps)

    def dominating_loss_pairs(self) -> tuple[DominatingPair, ...]:
        """The pessimistic PLD's pairs (:meth:`PldProfile.dominating_loss_pairs`); for replace-one the deep pairs
        (:meth:`deep_dominating_loss_pairs`) at every ``δ``: dp-accounting's replace-one PLD is known only through
        its queries, whose rebuilt masses carry round-off of about 3e-6 (``q = 0.05, σ = 1.5, 300 steps``), which
        leaves ``interval`` vacuous."""
        if self.neighbouring == "replace_one":
            return self.deep_dominating_loss_pairs()
        return super().dominating_loss_pairs()

    has_deep_loss_pairs = True

    def deep_dominating_loss_pairs(self) -> tuple[DominatingPair, ...]:
        """The dominating pairs of :mod:`symsel.pairs.dpsgd_dominating` (one step split on a loss grid, the steps
        composed by direct convolutions: every mass within a relative error, tails below 1e-45), for ``interval``
        where the pessimistic PLD's truncated tail (about 1e-15) decides; built on first use."""
        return self._deep_pairs

    @cached_property
    def _deep_pairs(self) -> tuple[DominatingPair, ...]:
        from symsel.pairs.dpsgd_dominating import dpsgd_deep_pairs

        return dpsgd_deep_pairs(self.q, self.sigma, self.steps, self.neighbouring)

    def self_composed(self, k: int) -> tuple[Profile, str]:
        """:meth:`PldProfile.self_composed` (``k·steps`` steps through dp-accounting, built on first use), with a
        :attr:`~symsel.profiles.Profile.floor` for add/remove: :class:`DpsgdCompositionFloor`, a certified lower
        bound on the ``k``-fold composition in a few milliseconds, so that ``best`` skips the composition where it
        cannot win without building its PLD (for 40 runs of ``dpsgd(q=0.01, sigma=1.1, steps=1000)``: 40000 steps,
        about 0.25 s)."""
        profile, route = super().self_composed(k)
        if self.neighbouring == "add_remove":
            profile.floor = DpsgdCompositionFloor(self.q, self.sigma, self.steps * int(k))
        return profile, route

    def rdp(self, order: float) -> float | None:
        """``steps ×`` the RDP of the Poisson-subsampled Gaussian (:mod:`symsel.profiles.subsampled_rdp`) for
        add/remove and replace-special (the same pair); for replace-one ``steps ×`` the bound of
        :mod:`symsel.profiles.replace_one_rdp`."""
        lam = self._check_order(order)
        return self.steps * float(self._step_rdp([lam])[0])

    def _step_rdp(self, orders: Any) -> np.ndarray:
        """One step's RDP at ``orders`` under the profile's neighbouring relation (:meth:`rdp`)."""
        return _DpsgdRdpCurve(self.q, self.sigma, 1, self.neighbouring == "replace_one")(orders)

    # ------------------------------------------------------------------ small δ: the RDP conversion too
    # The pessimistic PLD moves its truncated tail to a loss of +inf, so its δ(ε) never falls below that
    # mass (about 1e-15 for q=0.01, σ=1.1, 1000 steps) and ε(δ) is inf below it. The RDP curve of the same
    # mechanism, converted optimally to (ε, δ), is also a valid profile and reaches δ → 0. For ε ≥ 0 the
    # profile is the pointwise minimum of the two (a minimum of valid profiles is valid); for ε < 0 the PLD.

    @cached_property
    def _rdp_profile(self) -> Profile | None:
        from symsel.profiles.rdp import SUBSAMPLED_ORDERS, RdpProfile

        curve = _DpsgdRdpCurve(self.q, self.sigma, self.steps, self.neighbouring == "replace_one")
        return RdpProfile(curve, orders=SUBSAMPLED_ORDERS, name="dpsgd_rdp")

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        out = super()._delta_finite(eps)
        rdp = self._rdp_profile
        nonneg = eps >= 0
        if rdp is not None and nonneg.any():
            out = np.array(out, dtype=float)
            out[nonneg] = np.minimum(out[nonneg], np.asarray(rdp.delta(eps[nonneg]), dtype=float))
        return out

    @property
    def delta_at_infinity(self) -> float:
        """0 with the RDP conversion (every neighbouring relation); else the PLD's mass at ``+inf``."""
        return 0.0 if self._rdp_profile is not None else self._delta_infinity

    def epsilon(self, delta: float) -> float:
        """The smaller of the PLD's ``ε(δ)`` and the RDP conversion's (both valid; the PLD is tighter down to
        its truncated mass, the RDP curve below it)."""
        pld_eps = super().epsilon(delta)
        rdp = self._rdp_profile
        return pld_eps if rdp is None else min(pld_eps, rdp.epsilon(delta))


#: labels kept while composing (and atoms at the end) by :class:`DpsgdCompositionFloor`: its cost grows as their
#: square; 1000 put the floor of 40 runs of ``dpsgd(q=0.01, sigma=1.1, steps=1000)`` at ``ε = 12.0`` for δ = 1e-6
#: (the composition itself: 12.95) in about 3 ms.
FLOOR_LABELS = 1000


class DpsgdCompositionFloor(Profile):
    """A certified lower bound on ``δ(ε)`` of ``steps`` DP-SGD steps (add/remove): the hockey-stick divergence from
    below (:func:`~symsel.pairs.loss.hockey_stick_below`) of the dominated pairs of
    :func:`symsel.pairs.dpsgd.dpsgd_dominated_pairs` (one step bucketed by privacy loss, the labels of the steps
    summed: a post-processing of the mechanism, in each direction), the larger of the two directions, with at most
    :data:`FLOOR_LABELS` labels. At most the true profile, so at most any upper bound on it: the floor of a composed
    DP-SGD profile (:meth:`DpsgdProfile.self_composed`). The pairs are built on first use."""

    family = "floor"

    def __init__(self, q: float, sigma: float, steps: int):
        self.q, self.sigma, self.steps = float(q), float(sigma), int(steps)

    @property
    def spec(self) -> str:
        return f"dpsgd_floor(q={self.q!r}, sigma={self.sigma!r}, steps={self.steps!r})"

    @cached_property
    def _pairs(self) -> tuple[DominatedPair, ...]:
        pairs = dpsgd_dominated_pairs(self.q, self.sigma, self.steps, max_labels=FLOOR_LABELS,
                                      final_atoms=FLOOR_LABELS)
        return require(pairs, DominatedPair, "dpsgd_floor")  # a floor: computed on pairs the base dominates

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        return np.max([hockey_stick_below(pair, eps) for pair in self._pairs], axis=0)

    @property
    def delta_at_infinity(self) -> float:
        return float(self._delta_finite(np.array([math.inf]))[0])


def rdp_poisson_subsampled_gaussian(q: float, sigma: float, orders: Any) -> np.ndarray:
    """RDP of one Poisson-subsampled Gaussian step at ``orders`` (:mod:`symsel.profiles.subsampled_rdp`: the series
    dp-accounting sums, vectorized), cached: the curve does not depend on the law of K, and planners ask for it at
    every bisection step."""
    key = tuple(float(x) for x in np.atleast_1d(np.asarray(orders, dtype=float)))
    return np.array(_rdp_poisson_subsampled_gaussian(float(q), float(sigma), key))


@bounded_cache(max_entries=64, max_bytes=16 * MIB)  # floats: a tuple of orders and one of values each
def _rdp_poisson_subsampled_gaussian(q: float, sigma: float, orders: tuple[float, ...]) -> tuple[float, ...]:
    from symsel.profiles.subsampled_rdp import subsampled_gaussian_rdp

    return tuple(float(v) for v in subsampled_gaussian_rdp(q, sigma, orders))


@dataclass(frozen=True)
class _DpsgdRdpCurve:
    """``steps`` DP-SGD steps' RDP at ``orders``: the Poisson-subsampled Gaussian's (add/remove and replace-special),
    or the replace-one bound of :mod:`symsel.profiles.replace_one_rdp`. A value, not a closure over the profile: the
    profile's cached RDP profile holds it without a reference cycle, and it pickles."""

    q: float
    sigma: float
    steps: int
    replace_one: bool

    def __call__(self, orders: Any) -> np.ndarray:
        if self.replace_one:
            from symsel.profiles.replace_one_rdp import replace_one_rdp

            return self.steps * np.asarray(replace_one_rdp(self.q, self.sigma, orders), dtype=float)
        return self.steps * np.asarray(rdp_poisson_subsampled_gaussian(self.q, self.sigma, orders), dtype=float)
