"""Profiles computed by dp-accounting's privacy-loss-distribution (PLD) accountant.

The PLD accountant (Koskela, Jälkö, Honkela, *Computing Tight Differential Privacy Guarantees Using
FFT*, AISTATS 2020; Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, *Connect the Dots: Tighter Discrete
Approximations of Privacy Loss Distributions*, PETS 2022) discretizes the privacy loss
*pessimistically* (losses rounded up, truncated mass moved to ``+inf``), so its ``δ(ε)`` is an upper
bound on the true profile for every real ``ε`` -- also for ``ε < 0``, where its
``get_delta_for_epsilon`` still evaluates ``Σ_l [1 − e^(ε − l)]_+ p(l) + p(∞)``, an increasing
function of each loss. ``ε(δ)`` comes from ``get_epsilon_for_delta`` on the same PLD.

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
from collections import OrderedDict
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from symsel import validate as v
from symsel.errors import NotApplicableError, ParameterError
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


_CACHE: OrderedDict[tuple, tuple[pld_privacy_accountant.PLDAccountant, float]] = OrderedDict()
_CACHE_SIZE = 8


def _build(
    event: dp_event.DpEvent, relation: str, interval: float
) -> tuple[pld_privacy_accountant.PLDAccountant, float]:
    key = (repr(event), relation, interval)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    from dp_accounting.pld import pld_privacy_accountant

    start = time.perf_counter()
    accountant = pld_privacy_accountant.PLDAccountant(
        neighboring_relation=_relation(relation), value_discretization_interval=interval
    )
    steps = _dpsgd_steps(event)
    if steps is None or not (hasattr(accountant, "_pld") and hasattr(accountant, "_ledger")):
        accountant.compose(event)  # (also when dp-accounting's internals are not as expected)
    else:  # the accountant's own construction, with the one-step PLD shared between runs of different lengths
        step, count = steps
        one_step = _subsampled_gaussian_pld(step.sampling_probability, step.event.noise_multiplier, relation, interval)
        accountant._ledger.compose(event, 1)
        accountant._pld = accountant._pld.compose(one_step.self_compose(count))
    result = (accountant, time.perf_counter() - start)
    _CACHE[key] = result
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return result


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


@lru_cache(maxsize=8)
def _subsampled_gaussian_pld(rate: float, sigma: float, relation: str, interval: float) -> Any:
    """One DP-SGD step's PLD as ``PLDAccountant`` builds it for a ``PoissonSampledDpEvent`` of a Gaussian (its
    ``from_gaussian_mechanism`` call), cached: a planner that varies the number of steps at a fixed noise builds it
    once instead of at every step count (it is 60 % of building a 1000-step run). dp-accounting's PLDs are not
    changed by composing or querying them; tests/profiles/test_profiles_dpaccounting.py checks the result against
    ``PLDAccountant.compose`` itself. Built with the inverse privacy loss tabled
    (:mod:`symsel.profiles.subsampled_gaussian_pld`: the same arrays, about five times sooner)."""
    from symsel.profiles.subsampled_gaussian_pld import subsampled_gaussian_pld

    return subsampled_gaussian_pld(rate, sigma, _relation(relation), interval)


#: ``PldProfile.epsilon`` answers its first this many queries by dp-accounting's own call, the later ones from the
#: :class:`EpsilonTable` (the same floats).
EPSILON_TABLE_AFTER = 2

#: when its internals are not as expected (no suffix tables), up to this many ε values the PLD is queried one
#: float at a time (dp-accounting's fast path).
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
        tables = self._suffix_tables  # built once (a few tens of ms); then a query is one searchsorted
        if tables is None and flat.size <= _SCALAR_QUERY_MAX:
            # dp-accounting answers a float by one dot product (6-13 ms at 1000 DP-SGD steps) but walks its whole
            # support in Python for an array (about 0.5 s), whatever the array's length.
            values = [float(self.accountant.get_delta(float(e))) for e in flat]
            return np.clip(np.asarray(values, dtype=float).reshape(eps.shape), 0.0, 1.0)
        if tables is None:  # dp-accounting internals not as expected: its own (slow) array path
            order = np.argsort(flat, kind="stable")
            deltas = np.asarray(self.accountant.get_delta(flat[order]), dtype=float)
            out = np.empty_like(flat)
            out[order] = np.broadcast_to(deltas, flat.shape)
            return np.clip(out.reshape(eps.shape), 0.0, 1.0)
        return suffix_tables_delta(tables, flat).reshape(eps.shape)

    @cached_property
    def _suffix_tables(self) -> list[tuple[Any, ...]] | None:
        """:func:`pld_suffix_tables` of the composed PLD (``None``: dp-accounting's internals not as expected)."""
        return pld_suffix_tables(getattr(self.accountant, "_pld", None))

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
        return pld_loss_pairs(getattr(self.accountant, "_pld", None), f"{self.spec}, pessimistic PLD")

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
        of each direction (dp-accounting's value to the bit, about 40 times faster) when its internals are as
        expected."""
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
        return epsilon_tables(getattr(self.accountant, "_pld", None))


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

    def __init__(self, pmf: Any):
        self._probs = np.flip(np.asarray(pmf._probs, dtype=float))
        self._top = (pmf._lower_loss + len(pmf._probs) - 1) * pmf._discretization
        self._step = -pmf._discretization
        self.infinity_mass = float(pmf._infinity_mass)
        self.losses = np.empty(0)
        self.upper = np.asarray([self.infinity_mass])  # U before the loss of the same index (and after the last)
        self.lower = np.asarray([0.0])

    def _extend(self) -> None:
        """Form the next losses, terms and running sums (as many again as formed so far, at least :data:`CHUNK`)."""
        done, n = self.losses.size, self._probs.size
        more = min(n, done + max(self.CHUNK, done)) - done
        steps = np.full(more, self._step)
        if done == 0:
            steps[0] = self._top
            losses = np.cumsum(steps)  # the top loss, then one step down at a time, as itertools.count adds
        else:
            losses = np.cumsum(np.concatenate([[self.losses[-1]], steps]))[1:]
        probs = self._probs[done:done + more]
        terms = np.asarray([math.exp(-loss) for loss in losses.tolist()]) * probs
        self.losses = np.concatenate([self.losses, losses])
        self.upper = np.concatenate([self.upper, np.cumsum(np.concatenate([self.upper[-1:], probs]))[1:]])
        self.lower = np.concatenate([self.lower, np.cumsum(np.concatenate([self.lower[-1:], terms]))[1:]])

    def epsilon(self, delta: float) -> float:
        """The smallest ``ε`` with the pmf's hockey-stick divergence at most ``delta`` (``inf`` if none)."""
        if self.infinity_mass > delta:
            return math.inf
        while True:
            m, n = self.losses.size, self._probs.size
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


def epsilon_tables(pld: Any) -> list[EpsilonTable] | None:
    """The :class:`EpsilonTable` of each direction of a dp-accounting ``PrivacyLossDistribution`` (remove, and add
    when it is not symmetric: ``get_epsilon_for_delta`` is their larger value); ``None`` when its pmfs are not dense
    pmfs with the expected fields (dp-accounting's own call is then used)."""
    tables = []
    for _, pmf in pld_directions(pld):
        if type(pmf).__name__ != "DensePLDPmf" or not all(
                hasattr(pmf, name) for name in ("_probs", "_lower_loss", "_discretization", "_infinity_mass")):
            return None
        tables.append(EpsilonTable(pmf))
    return tables or None


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


def pld_directions(pld: Any) -> list[tuple[str, Any]]:
    """The pmfs of a dp-accounting ``PrivacyLossDistribution`` with their direction: remove, and add when the PLD
    is not symmetric (empty when its internals are not as expected)."""
    found = [("remove", getattr(pld, "_pmf_remove", None))]
    if not getattr(pld, "_symmetric", True):
        found.append(("add", getattr(pld, "_pmf_add", None)))
    return [(name, pmf) for name, pmf in found if pmf is not None and hasattr(pmf, "to_dense_pmf")]


def pld_loss_pairs(pld: Any, source: str) -> tuple[DominatingPair, ...]:
    """The dominating pairs of a dp-accounting ``PrivacyLossDistribution`` (pessimistic), one per direction,
    coarsened to :func:`loss_pair_width` by rounding losses up (:func:`from_loss_grid`); empty when its internals
    are not as expected."""
    pairs = []
    for direction, pmf in pld_directions(pld):
        dense = pmf.to_dense_pmf()
        probs = np.asarray(dense._probs, dtype=float)
        losses = (np.arange(probs.size) + dense._lower_loss) * dense._discretization
        width = loss_pair_width(losses, probs, float(dense._discretization))
        pairs.append(from_loss_grid(losses, probs, float(dense._infinity_mass), width, direction,
                                    f"{source}, {direction}"))
    return tuple(pairs)


def pld_suffix_tables(pld: Any) -> list[tuple[Any, ...]] | None:
    """Per pmf of a dp-accounting ``PrivacyLossDistribution`` (remove, and add when not symmetric): losses, suffix
    sums of ``p`` and of ``p e^{-l}`` and of their absolute values, and the mass at ``+inf``, for
    :func:`_suffix_delta`; ``None`` when dp-accounting's internals are not as expected (then its own evaluation is
    used) or ``e^{-l}`` would overflow."""
    pmfs: list[Any] = [getattr(pld, "_pmf_remove", None)]
    if not getattr(pld, "_symmetric", True):
        pmfs.append(getattr(pld, "_pmf_add", None))
    tables = []
    for pmf in pmfs:
        try:
            dense = pmf.to_dense_pmf()
            probs = np.asarray(dense._probs, dtype=float)
            losses = (np.arange(probs.size) + dense._lower_loss) * dense._discretization
            inf_mass = float(dense._infinity_mass)
        except AttributeError:
            return None
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

    def dominated_loss_pairs(self) -> tuple[DominatedPair, ...]:
        """One step's outputs bucketed by privacy loss, the steps' labels summed (:mod:`symsel.pairs.dpsgd`); the
        dominating pairs are the pessimistic PLD's (:meth:`PldProfile.dominating_loss_pairs`)."""
        return dpsgd_dominated_pairs(self.q, self.sigma, self.steps)

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
        if self.neighbouring == "replace_one":
            from symsel.profiles.replace_one_rdp import replace_one_rdp

            return replace_one_rdp(self.q, self.sigma, orders)
        return rdp_poisson_subsampled_gaussian(self.q, self.sigma, orders)

    # ------------------------------------------------------------------ small δ: the RDP conversion too
    # The pessimistic PLD moves its truncated tail to a loss of +inf, so its δ(ε) never falls below that
    # mass (about 1e-15 for q=0.01, σ=1.1, 1000 steps) and ε(δ) is inf below it. The RDP curve of the same
    # mechanism, converted optimally to (ε, δ), is also a valid profile and reaches δ → 0. For ε ≥ 0 the
    # profile is the pointwise minimum of the two (a minimum of valid profiles is valid); for ε < 0 the PLD.

    @cached_property
    def _rdp_profile(self) -> Profile | None:
        from symsel.profiles.rdp import SUBSAMPLED_ORDERS, RdpProfile

        steps, step_rdp = self.steps, self._step_rdp
        return RdpProfile(lambda orders: steps * step_rdp(orders), orders=SUBSAMPLED_ORDERS, name="dpsgd_rdp")

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


@lru_cache(maxsize=64)
def _rdp_poisson_subsampled_gaussian(q: float, sigma: float, orders: tuple[float, ...]) -> tuple[float, ...]:
    from symsel.profiles.subsampled_rdp import subsampled_gaussian_rdp

    return tuple(float(v) for v in subsampled_gaussian_rdp(q, sigma, orders))
