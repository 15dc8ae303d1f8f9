"""An accountant with Opacus's interface whose ε is that of the whole tuned search (docs/opacus.md).

Opacus (PyTorch's DP-SGD library) keeps, per training, a ``history`` of ``(noise_multiplier, sample_rate, steps)``
entries and asks an accountant for ``get_epsilon(delta)``; its ``get_noise_multiplier`` (and so
``PrivacyEngine.make_private_with_epsilon``) finds σ by bisection on that answer after setting
``history = [(σ, sample_rate, steps)]``, creating the accountant by name from its registry
(``opacus.accountants.registry``), which calls the class with no arguments.

The accountant here reads the history as the training of **one candidate**, and answers for the whole search: ``K``
candidate runs, each that training, ``K ~ law`` (any symsel law; a tuner's ``n_trials`` is ``point(k=n)``), the best
run released, and, with ``final_run``, the chosen configuration trained once more and released too. The answer is
the certified bound of :func:`symsel.bound` on the selection, or with the final run
:func:`symsel.bounds.pipeline.with_final_run`, the pipeline's one number. So σ calibrated through it is σ for the
whole search, with no change to Opacus.

The history as a base mechanism: one entry ``(σ, q, steps)`` is ``dpsgd(q, sigma=σ, steps)`` (``q = 1``: the
Gaussian mechanism with noise ``σ/√steps``, exactly); several entries (σ or the rate changed during training) are the
composition of their DP-SGD runs, taken as dp-accounting's pessimistic PLD of that composition; and each candidate is
assumed to run the whole history. An empty history is no run at all (ε = 0).

With ``target_epsilon`` (:func:`make_accountant_class`), the accountant knows the budget that Opacus's bisection
compares its answers with, and answers for what those comparisons need (:func:`steered_epsilon`): every answer is
still a certified upper bound, on the side of the target and of ``target − epsilon_tolerance`` where the
*calibration bound* is. That is the configured bound computed on a cheaper certified view of the history
(:func:`calibration_base`: for one DP-SGD run a coarser PLD grid and dominating pair; else the history's own
base), or the Rényi composition of the search and the final run where that is already below the tolerance band.
It is above the configured bound by about :data:`CALIBRATION_PAIR_WIDTH` ``· E[K] / 2`` in ε (0.01 for 20 trials),
so the σ found is the one the configured bound gives, or a little larger.

Nothing here imports Opacus or torch: the class duck-types Opacus's ``IAccountant`` (:func:`make_accountant_class`),
and only :func:`register` imports Opacus, to subclass its ``IAccountant`` and to put the class in its registry.
"""

from __future__ import annotations

import copy
import math
import numbers
from collections import OrderedDict
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

from symsel import validate
from symsel.bounds.api import METHODS, bound
from symsel.distributions import Distribution
from symsel.errors import NotApplicableError, ParameterError, SymselError
from symsel.memory import MIB, BoundedCache
from symsel.pairs.loss import DominatingPair
from symsel.profiles import DpsgdProfile, GaussianProfile, Profile

__all__ = ["WholeSearchAccountant", "calibration_base", "history_base", "make_accountant_class", "register",
           "renyi_epsilon", "steered_epsilon", "whole_search_epsilon"]

#: the most trials ``n_trials`` accepts (the planner's limit, :data:`symsel.apps.plan.MAX_TRIALS`).
MAX_TRIALS = 10**6
#: the prefix of the names :func:`register` gives when none is given.
NAME_PREFIX = "symsel"
#: answers kept (keyed on the configuration, the history and δ): a calibration, then the epsilon a training reports
#: at its end, ask again for the same history. At most this many, and 16 MiB (a key holds its history).
CACHE_SIZE = 128

#: Opacus's ``get_noise_multiplier`` stops once the target exceeds ε(σ) by at most this (its ``epsilon_tolerance``).
OPACUS_TOLERANCE = 0.01
#: the calibration bound of a one-run DP-SGD history (:func:`calibration_base`): the PLD's loss grid (the history's
#: own is 1e-4: a third of the build time, ε 0.01 % higher), ...
CALIBRATION_GRID = 3e-4
#: ... the loss width of its dominating pairs (1e-3 by default: rounding losses up by ``w`` moves a selection's ε
#: by about ``w · E[K] / 2``; half the atoms, half the work of the interval bound per ε) ...
CALIBRATION_PAIR_WIDTH = 2e-3
#: ... and the largest mass of the pieces the interval bound cuts them into (2e-4 by default: half the work again,
#: δ 0.3 % higher on 20 trials of ``dpsgd(q=0.004, sigma=0.87, steps=5000)``).
CALIBRATION_PIECE_MASS = 1e-3
#: below this δ the calibration bound keeps the deeper pairs of the tail (the interval bound asks for them where its
#: value is below 1e-10, which the answer at a larger δ hardly feels).
CALIBRATION_DEEP_DELTA = 1e-8

_ANSWERS = BoundedCache("symsel.apps.opacus._ANSWERS", max_entries=CACHE_SIZE, max_bytes=16 * MIB)

History = list[tuple[float, float, int]]


def _entry(entry: Any, index: int) -> tuple[float, float, int]:
    """One history entry ``(noise_multiplier, sample_rate, steps)`` checked."""
    where = "history"
    if not isinstance(entry, tuple | list) or len(entry) != 3:
        raise ParameterError(f"history[{index}]", entry, "a (noise_multiplier, sample_rate, steps) triple", where)
    sigma = validate.real(entry[0], f"history[{index}] noise_multiplier", where, lo=0.0, hi=math.inf, hi_open=True,
                          allowed="a finite noise multiplier >= 0")
    rate = validate.real(entry[1], f"history[{index}] sample_rate", where, lo=0.0, hi=1.0, lo_open=True,
                         allowed="a sample rate 0 < q <= 1")
    steps = entry[2]
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 1:
        raise ParameterError(f"history[{index}] steps", steps, "a whole number of steps >= 1", where)
    return float(sigma), float(rate), int(steps)


def history_base(history: History) -> Profile | None:
    """The privacy profile of one candidate's training as recorded in ``history`` (module docstring); ``None`` for
    an empty history. A noise multiplier of 0 is no privacy: :class:`~symsel.errors.ParameterError` is not raised,
    the caller answers ``inf``."""
    entries = [_entry(e, i) for i, e in enumerate(history)]
    if not entries:
        return None
    if len(entries) == 1:
        sigma, rate, steps = entries[0]
        if rate == 1.0:  # steps Gaussian runs with noise sigma: one Gaussian run with noise sigma / sqrt(steps)
            return GaussianProfile(sigma / math.sqrt(steps))
        return DpsgdProfile(rate, sigma, steps)
    from dp_accounting import dp_event

    from symsel.apps.accounting import selection_base

    events = [dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(s), n) if q == 1.0 else
              dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(s)), n)
              for s, q, n in entries]
    profile = selection_base(dp_event.ComposedDpEvent(events))
    if not isinstance(profile, Profile):
        raise ParameterError("history", history, "a training with a privacy profile", "history")
    return profile


def whole_search_epsilon(history: History, delta: float, law: str = "point(k=1)", final_run: bool = False,
                         method: str = "best", target_epsilon: float | None = None,
                         epsilon_tolerance: float = OPACUS_TOLERANCE) -> float:
    """ε at ``delta`` of the whole search: the best of ``K ~ law`` candidate runs, each the training of ``history``,
    then (``final_run``) one more such run. Certified (an upper bound); ``inf`` where no finite ε holds. With
    ``target_epsilon``, :func:`steered_epsilon`'s answer (certified too, tight only near the target). The answer is
    cached on its arguments."""
    delta = validate.probability(delta, "delta", "get_epsilon")
    target_epsilon, epsilon_tolerance = _steering(target_epsilon, epsilon_tolerance)
    entries = tuple(_entry(e, i) for i, e in enumerate(history))
    key = (law, bool(final_run), method, entries, delta, target_epsilon, epsilon_tolerance)
    cached = _ANSWERS.get(key)
    if cached is not None:
        return cached
    if not entries:
        value = 0.0
    elif any(sigma == 0.0 for sigma, _, _ in entries):
        value = math.inf
    else:
        value = _epsilon(entries, delta, law, final_run, method, target_epsilon, epsilon_tolerance)
    return _ANSWERS.put(key, value)


def _epsilon(entries: tuple[tuple[float, float, int], ...], delta: float, law: str, final_run: bool,
             method: str, target_epsilon: float | None, epsilon_tolerance: float) -> float:
    try:
        base = history_base(list(entries))
        calibration = None if target_epsilon is None else calibration_base(list(entries), delta)
    except ParameterError as exc:
        too_little_noise = exc.name == "sigma" and isinstance(exc.value, numbers.Real) and exc.value < 1
        if not (too_little_noise or "PLD" in str(exc.allowed)):
            raise
        return math.inf  # too little noise to account (σ < 0.01, or a PLD too large): no finite ε is claimed
    assert base is not None
    from symsel.spec import parse_distribution

    dist = parse_distribution(law)
    if target_epsilon is not None:
        return steered_epsilon(dist, base, delta, final_run, method, target_epsilon, epsilon_tolerance,
                               calibration=calibration)
    return float(_search_bound(dist, base, method, final_run).epsilon(delta))


class _CalibrationRun(DpsgdProfile):
    """One DP-SGD run as the calibration bound sees it (:func:`calibration_base`): the same mechanism, its
    pessimistic PLD on the grid :data:`CALIBRATION_GRID`, its dominating pairs coarsened to
    :data:`CALIBRATION_PAIR_WIDTH` by rounding losses up (:func:`~symsel.profiles.dpaccounting.pld_loss_pairs`: a
    coarser pair dominates the finer one, so every bound on it holds for the run), cut by the interval bound into
    pieces of at most :data:`CALIBRATION_PIECE_MASS`, and resolved deeper into the tail only when ``deep``."""

    interval_piece_mass = CALIBRATION_PIECE_MASS

    def __init__(self, q: float, sigma: float, steps: int, deep: bool):
        super().__init__(q, sigma, steps, value_discretization_interval=CALIBRATION_GRID)
        self.has_deep_loss_pairs = deep

    @property
    def spec(self) -> str:
        return f"dpsgd_calibration(q={self.q!r}, sigma={self.sigma!r}, steps={self.steps!r})"

    def dominating_loss_pairs(self) -> tuple[DominatingPair, ...]:
        return self._calibration_pairs

    @cached_property
    def _calibration_pairs(self) -> tuple[DominatingPair, ...]:
        from symsel.profiles.dpaccounting import pld_loss_pairs

        return pld_loss_pairs(self.accountant, f"{self.spec}, pessimistic PLD", self.value_discretization_interval,
                              min_width=CALIBRATION_PAIR_WIDTH)


def calibration_base(history: History, delta: float) -> Profile | None:
    """The profile on which a calibration (``target_epsilon``) bounds the search: for a history of one DP-SGD run
    (rate below 1), that run with a coarser PLD grid and dominating pair (:class:`_CalibrationRun`: a certified
    profile of the same run, bounds on it a little looser and several times cheaper); for any other history its
    own base (:func:`history_base`)."""
    delta = validate.probability(delta, "delta", "calibration_base")
    entries = [_entry(e, i) for i, e in enumerate(history)]
    if len(entries) == 1 and entries[0][1] < 1.0 and entries[0][0] > 0:
        sigma, rate, steps = entries[0]
        return _CalibrationRun(rate, sigma, steps, deep=delta < CALIBRATION_DEEP_DELTA)
    return history_base(history)


def _search_bound(dist: Distribution, base: Profile, method: str, final_run: bool) -> Profile:
    """The certified bound on the whole search's profile: the selection's, or with the final run the pipeline's."""
    selection = bound(dist, base, method)
    if final_run:
        from symsel.bounds.pipeline import with_final_run

        return with_final_run(selection, base)
    return selection


def _over(profile: Profile, epsilon: float, delta: float) -> bool:
    """Whether the bound's ``δ(epsilon)`` is over ``delta``, evaluated as its own search of ``ε(delta)`` evaluates
    it (a pipeline's :meth:`~symsel.bounds.pipeline.PipelineProfile.delta_within` with the target ``delta``, asked
    first whether its floor already :meth:`~symsel.bounds.pipeline.PipelineProfile.exceeds` ``delta``)."""
    from symsel.bounds.pipeline import PipelineProfile

    if isinstance(profile, PipelineProfile):
        return profile.exceeds(epsilon, delta) or profile.delta_within(epsilon, delta) > delta
    return float(profile.delta(epsilon)) > delta


def renyi_epsilon(dist: Distribution, base: Profile, delta: float, final_run: bool) -> float:
    """ε at ``delta`` of the Rényi composition of the search and the final run: the selection's RDP curve (the
    ``rdp`` bound, Papernot & Steinke) plus, with ``final_run``, the base's own RDP curve (RDP composes adaptively,
    Mironov 2017, Prop. 1: the final run is that training whichever configuration was chosen), converted as
    :class:`~symsel.profiles.rdp.RdpProfile` converts. Certified, needs no PLD (milliseconds for DP-SGD), and looser
    than the pipeline's bound; ``inf`` where the base has no RDP curve or the law no closed form."""
    from symsel.bounds.renyi.curve import RenyiSelectionProfile, base_rdp_curve
    from symsel.profiles.rdp import RdpProfile

    delta = validate.probability(delta, "delta", "renyi_epsilon")
    if not isinstance(final_run, bool):
        raise ParameterError("final_run", final_run, "True or False", "renyi_epsilon")
    try:
        selection = bound(dist, base, "rdp").profile
    except NotApplicableError:
        return math.inf
    if not isinstance(selection, RenyiSelectionProfile):
        return math.inf
    if not final_run:
        return float(selection.epsilon(delta))
    curve = selection.curve

    def composed(orders: Any) -> Any:
        return curve(orders) + base_rdp_curve(base, orders)

    return float(RdpProfile(composed, orders=selection.orders, name="search_and_final_run").epsilon(delta))


def steered_epsilon(dist: Distribution, base: Profile, delta: float, final_run: bool, method: str,
                    target_epsilon: float, epsilon_tolerance: float = OPACUS_TOLERANCE,
                    calibration: Profile | None = None) -> float:
    """A certified upper bound on the whole search's ε at ``delta`` (the search on ``base``), tight where Opacus's
    bisection needs it: on the side of ``t = target_epsilon`` and of ``t − epsilon_tolerance`` where the
    calibration bound is, ``C``: the bound of ``method`` (:func:`whole_search_epsilon` without a target) on
    ``calibration`` (default ``base``; :func:`calibration_base`, a certified profile of the same training), or,
    where that is below the band, the Rényi composition. Those are the two comparisons the bisection makes, so it
    takes the steps it takes with ``C``. In order:

    1. ``method='best'``: :func:`renyi_epsilon` (no PLD, milliseconds), the answer when it is below
       ``t − epsilon_tolerance`` (far from the target);
    2. ``C``'s own ``δ(t)`` over ``delta``: ``C > t``; the answer is the Rényi bound when there is one (above ``t``,
       or in the band, which then holds a certified value), else ``C``;
    3. ``C``'s ``δ(t − 2·epsilon_tolerance)`` within ``delta``: the answer is ``t − 2·epsilon_tolerance``, an ε the
       bound certifies;
    4. else ``C`` itself (within ``2·epsilon_tolerance`` below ``t``: the answer a bisection stops on is ``C``).

    Steps 2 and 3 ask one ``δ`` each, evaluated as ``C``'s own search of ε evaluates it, instead of a search of ε.
    Far from ``t`` the answer is certified but may be looser than ``C``."""
    target = validate.positive(target_epsilon, "target_epsilon", "get_epsilon")
    tolerance = validate.positive(epsilon_tolerance, "epsilon_tolerance", "get_epsilon")
    renyi = renyi_epsilon(dist, base, delta, final_run) if method == "best" else math.inf
    if renyi < target - tolerance:
        return renyi
    exact = _search_bound(dist, base if calibration is None else calibration, method, final_run)
    if _over(exact, target, delta):
        return renyi if math.isfinite(renyi) else float(exact.epsilon(delta))
    below = target - 2 * tolerance
    if below > 0 and not _over(exact, below, delta):
        return below
    return float(exact.epsilon(delta))


class WholeSearchAccountant:
    """Opacus's accountant interface (duck-typed) answering for the whole search (module docstring).

    Class attributes, fixed per registered configuration (:func:`make_accountant_class`): ``law`` (a symsel spec
    of the law of ``K``), ``final_run`` (bool), ``method`` (a symsel bound method), ``name`` (what
    :meth:`mechanism` returns: the registry's name, by which Opacus creates a fresh accountant for calibration),
    and ``target_epsilon`` (``None``, or the budget a calibration bisects to: :func:`steered_epsilon`) with
    ``epsilon_tolerance`` (the bisection's).
    """

    law: str = "point(k=1)"
    final_run: bool = False
    method: str = "best"
    name: str = NAME_PREFIX
    target_epsilon: float | None = None
    epsilon_tolerance: float = OPACUS_TOLERANCE

    def __init__(self) -> None:
        self.history: History = []

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """One more optimizer step of the candidate's training: the last entry's step count grows when σ and the
        rate are unchanged, else a new entry ``(σ, q, 1)`` is started."""
        if self.history and self.history[-1][:2] == (noise_multiplier, sample_rate):
            sigma, rate, steps = self.history[-1]
            self.history[-1] = (sigma, rate, steps + 1)
        else:
            self.history.append((noise_multiplier, sample_rate, 1))

    def get_epsilon(self, delta: float, **ignored: Any) -> float:
        """ε at ``delta`` of the whole search (:func:`whole_search_epsilon`). Keyword arguments other accountants
        take (``eps_error``, ``optimal``, …), which Opacus passes on from ``make_private_with_epsilon``, are ignored:
        the answer is the certified bound (with ``target_epsilon``, :func:`steered_epsilon`'s)."""
        return whole_search_epsilon(self.history, delta, self.law, self.final_run, self.method,
                                    self.target_epsilon, self.epsilon_tolerance)

    def __len__(self) -> int:
        """Optimizer steps of the candidate's training so far."""
        return int(sum(entry[2] for entry in self.history))

    @classmethod
    def mechanism(cls) -> str:
        return cls.name

    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable[[Any], None]:
        """A hook for Opacus's ``DPOptimizer``: after each step, one :meth:`step` with the optimizer's noise
        multiplier and ``sample_rate`` times its accumulated iterations (as Opacus's own accountants record it)."""
        def hook(optimizer: Any) -> None:
            self.step(noise_multiplier=optimizer.noise_multiplier,
                      sample_rate=sample_rate * optimizer.accumulated_iterations)

        return hook

    def state_dict(self, destination: Any = None) -> Any:
        """``{"history": ..., "mechanism": ...}`` (into ``destination`` when given)."""
        if destination is None:
            destination = OrderedDict()
        destination["history"] = copy.deepcopy(self.history)
        destination["mechanism"] = self.mechanism()
        return destination

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict`'s output; a ``ValueError`` (:class:`~symsel.errors.ParameterError`) names what
        is missing or a mechanism other than this accountant's."""
        where = f"{type(self).__name__}.load_state_dict"
        if not state_dict:
            raise ParameterError("state_dict", state_dict, "a non-empty mapping with 'history' and 'mechanism'", where)
        for key in ("history", "mechanism"):
            if key not in state_dict:
                raise ParameterError("state_dict", sorted(state_dict), f"a mapping with the key {key!r}", where)
        if state_dict["mechanism"] != self.mechanism():
            raise ParameterError("state_dict['mechanism']", state_dict["mechanism"],
                                 f"{self.mechanism()!r} (this accountant's)", where)
        history = list(state_dict["history"])
        for i, entry in enumerate(history):
            _entry(entry, i)
        self.history = [tuple(e) for e in history]

    def __repr__(self) -> str:
        target = "" if self.target_epsilon is None else f", target_epsilon={self.target_epsilon!r}"
        return (f"<{type(self).__name__} {self.name!r}: law={self.law!r}, final_run={self.final_run}{target}, "
                f"{len(self.history)} history entries>")


def _configuration(law: str | None, n_trials: int | None, final_run: bool, method: str) -> tuple[str, bool, str]:
    """The law (``n_trials`` as ``point(k=n)``), checked by parsing it, ``final_run`` and ``method``."""
    where = "opacus accountant"
    if (law is None) == (n_trials is None):
        raise ParameterError("law", law, "exactly one of law (a symsel spec of K) or n_trials", where)
    if n_trials is not None:
        if isinstance(n_trials, numbers.Integral) and not isinstance(n_trials, bool) and n_trials > MAX_TRIALS:
            raise ParameterError("n_trials", n_trials, f"an integer 1 <= n_trials <= {MAX_TRIALS}", where)
        n = validate.integer(n_trials, "n_trials", where, lo=1, hi=MAX_TRIALS)
        law = f"point(k={n})"
    if not isinstance(law, str):
        raise ParameterError("law", law, "a symsel spec string of the law of K, e.g. 'geometric(mean=30)'", where)
    from symsel.spec import parse_distribution

    spec = parse_distribution(law).spec
    if not isinstance(final_run, bool):
        raise ParameterError("final_run", final_run, "True or False", where)
    method = validate.choice(method, "method", where, METHODS)
    return spec, final_run, method


def _steering(target_epsilon: float | None, epsilon_tolerance: float) -> tuple[float | None, float]:
    """``target_epsilon`` (``None`` or a finite ε > 0) and ``epsilon_tolerance`` (a finite ε > 0) checked."""
    where = "opacus accountant"
    tolerance = validate.positive(epsilon_tolerance, "epsilon_tolerance", where)
    if target_epsilon is None:
        return None, tolerance
    return validate.positive(target_epsilon, "target_epsilon", where), tolerance


def default_name(law: str, final_run: bool, method: str, target_epsilon: float | None = None,
                 epsilon_tolerance: float = OPACUS_TOLERANCE) -> str:
    """The registry name of a configuration when none is given, e.g. ``symsel:point(k=20)+final`` or, with a
    target, ``symsel:point(k=20)+final~eps=8``."""
    name = f"{NAME_PREFIX}:{law}" + ("+final" if final_run else "") + ("" if method == "best" else f"@{method}")
    if target_epsilon is not None:
        name += f"~eps={target_epsilon!r}"
        if epsilon_tolerance != OPACUS_TOLERANCE:
            name += f"~tol={epsilon_tolerance!r}"
    return name


def make_accountant_class(law: str | None = None, *, n_trials: int | None = None, final_run: bool = False,
                          method: str = "best", name: str | None = None, target_epsilon: float | None = None,
                          epsilon_tolerance: float = OPACUS_TOLERANCE,
                          bases: tuple[type, ...] = ()) -> type[WholeSearchAccountant]:
    """A class, constructed with no arguments (as Opacus's registry constructs accountants), for one configuration:
    ``K ~ law`` (or ``n_trials`` fixed), with or without the final run, bounded by ``method``; ``mechanism()`` returns
    ``name`` (default :func:`default_name`). ``bases`` are further base classes (Opacus's ``IAccountant`` when
    registered).

    ``target_epsilon``: the budget a calibration (Opacus's ``get_noise_multiplier``, ``make_private_with_epsilon``)
    will bisect σ to, with Opacus's ``epsilon_tolerance`` (default 0.01, Opacus's default). The accountant then
    answers histories far from the target with cheaper certified bounds and near it with the calibration bound
    (:func:`steered_epsilon`, :func:`calibration_base`): the calibration finds the σ of the configured bound, or one
    a little larger, for several times less. Every answer stays a certified upper bound, but away from the target
    it may be looser; ask an accountant without a target for the tight ε of any history."""
    spec, final, chosen = _configuration(law, n_trials, final_run, method)
    target, tolerance = _steering(target_epsilon, epsilon_tolerance)
    label = name if name is not None else default_name(spec, final, chosen, target, tolerance)
    if not isinstance(label, str) or not label:
        raise ParameterError("name", name, "a non-empty string (the registry's name of the accountant)",
                             "opacus accountant")
    attributes = {"law": spec, "final_run": final, "method": chosen, "name": label, "target_epsilon": target,
                  "epsilon_tolerance": tolerance,
                  "__doc__": f"Whole-search accountant {label!r}: K ~ {spec}" + (", then the final run" if final
                                                                                  else "") + "."}
    return type("WholeSearchAccountant", (WholeSearchAccountant, *bases), attributes)


def register(law: str | None = None, *, n_trials: int | None = None, final_run: bool = False, method: str = "best",
             name: str | None = None, target_epsilon: float | None = None,
             epsilon_tolerance: float = OPACUS_TOLERANCE, force: bool = True) -> str:
    """Register the whole-search accountant of one configuration in Opacus's registry and return its name, for
    ``PrivacyEngine(accountant=name)`` and ``get_noise_multiplier(..., accountant=name)``. Imports Opacus (and so
    torch); the class subclasses Opacus's ``IAccountant``. ``force`` replaces a class registered under that name.
    ``target_epsilon`` and ``epsilon_tolerance``: the calibration's budget, as :func:`make_accountant_class` says
    (the σ for several times less work)."""
    try:
        from opacus.accountants.accountant import IAccountant
        from opacus.accountants.registry import register_accountant
    except ImportError as exc:
        raise SymselError(f"symsel.apps.opacus.register needs Opacus (pip install 'symsel[opacus]'): {exc}") from None
    cls = make_accountant_class(law, n_trials=n_trials, final_run=final_run, method=method, name=name,
                                target_epsilon=target_epsilon, epsilon_tolerance=epsilon_tolerance,
                                bases=(IAccountant,))
    register_accountant(cls.name, cls, force=force)
    return cls.name
