"""An honest private hyperparameter search on Optuna: the best of ``K ~ law`` trials, with the ε of the whole search.

:func:`tune` draws ``K`` from a law of symsel (before any trial runs, independently of the data), runs ``K`` Optuna
trials and releases the best one, together with the certified ``ε(δ)`` of the search,
``symsel.bound(law, base, method).epsilon(delta)``. The bound is a property of the law, not of the ``K`` drawn: the
same ``ε`` holds whatever ``K`` turns out to be, ``K = 0`` included (no trial is released; the atom at ``K = 0``
costs nothing for ``ε ≥ 0``).

What the search must satisfy for the ``ε`` to hold (docs/README.md, "What each method assumes"):

* every call ``objective(trial)`` is one run of a mechanism whose privacy profile is below ``base``, whatever
  configuration it is given, and its result (the value, and anything it records on the trial) is that run's output;
  the objective must not look at other trials (``trial.study``) — that would make the candidates adaptive;
* the random-``K`` methods (every method but ``composition``) assume i.i.d. candidates: configurations drawn
  independently from one fixed distribution. Only Optuna's ``RandomSampler`` draws them so; any other sampler
  (TPE, CMA-ES, GP, a grid, quasi-Monte Carlo) is refused unless ``method="composition"``, the one method that also
  holds for adaptive choices (docs/composition.md);
* only the best trial's output is covered: its ``params`` and ``value`` (:attr:`TuningResult.released`). ``K``, the
  other trials, the study and the best trial's ``number`` reveal ``K``; ``K`` published with the best run has
  ``δ(ε) = Σ_k P[K=k] δ_{best of k}(ε)``, which the random-``K`` bounds do not bound (in general it is larger).
  ``composition`` is the exception: its bound is on the whole transcript (``K`` and every run), so with it every
  trial's params and value may be published too (timestamps and other side channels are outside any of these bounds).

Optuna is an optional dependency (``pip install 'symsel[hpo]'``): this module imports it only inside :func:`tune`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from symsel import validate
from symsel.errors import ParameterError, SymselError
from symsel.spec import as_distribution, as_profile

if TYPE_CHECKING:
    import numpy as np
    import optuna

WHERE = "tune"
DIRECTIONS = ("maximize", "minimize")
#: the most trials one search may run: a law with ``E[K]`` above it (``point(k=100000000)``) is refused before any
#: trial, and so is a ``K`` drawn above it (``P[K > MAX_TRIALS] <= E[K] / MAX_TRIALS``, Markov).
MAX_TRIALS = 10**6
INSTALL_HINT = "pip install 'symsel[hpo]' (or pip install 'optuna>=5.0')"


class OptunaMissingError(SymselError, ImportError):
    """:func:`tune` was called without Optuna installed (an ``ImportError`` too)."""

    def __init__(self) -> None:
        super().__init__(f"symsel.apps.hpo.tune needs Optuna, which is not installed: {INSTALL_HINT}")


@dataclass(frozen=True)
class TuningResult:
    """The outcome of :func:`tune`.

    Attributes:
        best_trial: the best completed trial (an Optuna ``FrozenTrial``; the first in trial order among equal values),
            or ``None`` when no trial completed (``K = 0``, or every trial failed or was pruned).
        best_value: its value, or ``None``.
        best_params: its parameters, or ``None``.
        k: the number of trials run, ``K`` as drawn from the law. Not covered by ``epsilon`` unless
            ``method == "composition"`` (module docstring).
        epsilon: the certified ``ε(δ)`` of the whole search, ``symsel.bound(law, base, method).epsilon(delta)``.
        delta: the target ``δ``.
        method: the bound method (:data:`symsel.METHODS`).
        law: the spec of the law of ``K``.
        base: the spec of one trial's privacy profile.
        certificate: the bound's certificate, as a plain dict.
        note: how the search was run, what ``epsilon`` covers, why ``composition`` was used, ``K = 0``.
        sampler: the class name of the Optuna sampler.
        study: the Optuna study with all ``k`` trials (for the analyst; publishing its trials' params and values
            is covered only by ``composition``).
    """

    best_trial: Any
    best_value: float | None
    best_params: dict[str, Any] | None
    k: int
    epsilon: float
    delta: float
    method: str
    law: str
    base: str
    certificate: dict[str, Any]
    note: str
    sampler: str
    study: Any = field(repr=False, compare=False)

    @property
    def released(self) -> dict[str, Any]:
        """What ``epsilon`` covers under every method: the best trial's ``params`` and ``value`` (both ``None`` when
        no trial completed), with the ``(epsilon, delta)`` of the search."""
        return {"params": self.best_params, "value": self.best_value, "epsilon": self.epsilon, "delta": self.delta}


def _optuna() -> Any:
    try:
        import optuna
    except ImportError:
        raise OptunaMissingError() from None
    return optuna








def _law_or_trials(law: Any, n_trials: Any) -> Any:
    """``law``, or ``point(k=n_trials)`` for a fixed number of trials; exactly one of them."""
    if n_trials is None:
        if law is None:
            raise ParameterError("law", None, "the law of K (a spec string such as \"geometric(mean=10)\" or a "
                                 "symsel.Distribution), or n_trials=N for a fixed number of trials", WHERE)
        return law
    if law is not None:
        raise ParameterError("n_trials", n_trials, "None when law is given (n_trials=N is the law point(k=N))", WHERE)
    count = validate.integer(n_trials, "n_trials", WHERE, lo=1)
    if count > MAX_TRIALS:
        raise ParameterError("n_trials", n_trials, f"an integer from 1 to MAX_TRIALS = {MAX_TRIALS}", WHERE)
    from symsel.distributions import point

    return point(count)


def _search_space(optuna: Any, search_space: Any) -> dict[str, Any] | None:
    if search_space is None:
        return None
    allowed = "None or a dict of parameter names to optuna.distributions (FloatDistribution, …)"
    if not isinstance(search_space, Mapping) or not all(
        isinstance(name, str) and isinstance(dist, optuna.distributions.BaseDistribution)
        for name, dist in search_space.items()
    ):
        raise ParameterError("search_space", search_space, allowed, WHERE)
    return dict(search_space)


def _is_iid(optuna: Any, sampler: Any) -> bool:
    """Only ``RandomSampler`` itself draws every trial's configuration independently from one fixed law (a subclass
    may override that)."""
    return type(sampler) is optuna.samplers.RandomSampler


def _best(trials: list[Any], direction: str) -> Any:
    """The completed trial with the best value, the first in trial order among equal values (a fixed rule)."""
    from optuna.trial import TrialState

    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    if not complete:
        return None
    sign = 1.0 if direction == "maximize" else -1.0
    return max(complete, key=lambda t: (sign * t.value, -t.number))


def _note(method: str, sampler_name: str, iid: bool, k: int, completed: int, seed_derived: bool) -> str:
    parts = [f"K = {k} drawn from the law before the search"]
    if iid:
        how = " (seeded from seed)" if seed_derived else ""
        parts.append(f"configurations drawn i.i.d. by RandomSampler{how}")
    else:
        parts.append(f"composition used because {sampler_name} does not draw configurations i.i.d. (it adapts to "
                     "earlier trials, or follows a grid or a sequence), which the random-K bounds assume; composition "
                     "also holds for adaptive choices (docs/composition.md)")
    if method == "composition":
        parts.append("epsilon (composition) covers the whole transcript: K and every trial's params and value")
    else:
        parts.append(f"epsilon ({method}) covers releasing the best trial's params and value only, not K, the "
                     "study or the trial's number")
    if k == 0:
        parts.append("K = 0: no trial ran and none is released; epsilon is the search's, as for any K")
    elif completed < k:
        parts.append(f"{k - completed} of {k} trials failed or were pruned; the best is taken over the "
                     f"{completed} completed")
    return "; ".join(parts)


def tune(
    objective: Callable[[Any], float],
    law: Any = None,
    base: Any = None,
    delta: float | None = None,
    sampler: optuna.samplers.BaseSampler | None = None,
    seed: int | np.random.Generator | None = None,
    method: str = "best",
    direction: str = "maximize",
    search_space: Mapping[str, Any] | None = None,
    *,
    n_trials: int | None = None,
) -> TuningResult:
    """Run the best of ``K ~ law`` Optuna trials of ``objective`` and return it with the certified ``ε(δ)`` of the
    whole search (module docstring: what the search must satisfy and what ``ε`` covers).

    Args:
        objective: ``objective(trial) -> float``, one private run per call (Optuna's define-by-run: it calls
            ``trial.suggest_…``; with ``search_space`` the configuration is already in ``trial.params``).
            ``optuna.TrialPruned`` marks the trial pruned, a non-number value (``None``) failed (both are that run's
            output); a NaN or infinite value is refused (``ParameterError`` naming ``objective``: it would be
            released as the best value), and any other exception marks the trial failed and is raised.
        law: the law of ``K``: a spec string (``"geometric(mean=10)"``, ``"point(k=40)"``) or a
            :class:`symsel.Distribution`, with ``E[K] <= MAX_TRIALS``; or ``None`` with ``n_trials``.
        base: the privacy profile of one trial: a spec string (``"gaussian(sigma=4)"``,
            ``"dpsgd(q=0.01, sigma=1.1, steps=100)"``) or a :class:`symsel.profiles.Profile`.
        delta: the target ``δ`` in ``(0, 1)``.
        sampler: ``None`` (a ``RandomSampler`` seeded from ``seed``), a ``RandomSampler``, or — with
            ``method="composition"`` only — any Optuna sampler.
        seed: seeds the ``numpy.random.Generator`` that draws ``K`` (``law.rvs(1, rng=rng)``) and then the default
            sampler's seed; ``None`` for fresh entropy.
        method: the bound method, one of :data:`symsel.METHODS` (default ``"best"``).
        direction: ``"maximize"`` or ``"minimize"``.
        search_space: optional ``{name: optuna distribution}`` drawn for every trial before ``objective`` is called.
        n_trials: a fixed number of trials instead of ``law``: the law ``point(k=n_trials)`` (an integer from 1 to
            :data:`MAX_TRIALS`; give ``law`` or ``n_trials``, not both).

    Raises:
        OptunaMissingError: Optuna is not installed.
        ParameterError: a bad ``objective``, ``delta``, ``method``, ``direction``, ``seed``, ``search_space``,
            ``law``, ``n_trials`` or ``base`` (a law with ``E[K] > MAX_TRIALS``, or a ``K`` drawn above it); an
            objective value that is NaN or infinite; or an adaptive ``sampler`` without ``method="composition"``.
        NotApplicableError: the method does not apply to the law and base.
    """
    optuna = _optuna()
    from symsel.bounds import METHODS, bound

    if not callable(objective):
        raise ParameterError("objective", objective, "a callable objective(trial) -> float", WHERE)
    law = _law_or_trials(law, n_trials)
    if base is None:
        raise ParameterError("base", None, "the privacy profile of one trial: a spec string "
                             "(\"gaussian(sigma=4)\") or a symsel Profile", WHERE)
    delta = validate.real(delta, "delta", WHERE, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    method = validate.choice(method, "method", WHERE, METHODS)
    direction = validate.choice(direction, "direction", WHERE, DIRECTIONS)
    rng = validate.generator(seed, "seed", WHERE)
    space = _search_space(optuna, search_space)
    if sampler is not None and not isinstance(sampler, optuna.samplers.BaseSampler):
        raise ParameterError("sampler", sampler, "None or an optuna.samplers sampler", WHERE)
    iid = sampler is None or _is_iid(optuna, sampler)
    if not iid and method != "composition":
        name = type(sampler).__name__
        raise ParameterError(
            "sampler", name,
            f"None or RandomSampler: method {method!r} assumes i.i.d. candidates (the random-K theorems), and {name} "
            "does not draw configurations i.i.d. (it adapts to earlier trials, or follows a grid or a sequence); "
            "method='composition' also holds for adaptive samplers (docs/composition.md)", WHERE)
    law_obj, base_obj = as_distribution(law, "law", WHERE), as_profile(base, "base", WHERE)
    if law_obj.support_min > MAX_TRIALS or not law_obj.mean <= MAX_TRIALS:
        raise ParameterError("law", law_obj.spec, f"a law of K with E[K] <= MAX_TRIALS = {MAX_TRIALS} trials (it has "
                             f"E[K] = {law_obj.mean:g}; one search runs the objective K times)", WHERE)

    # The bound first: it depends only on (law, base, method, delta), never on the K drawn or on any trial.
    selection = bound(law_obj, base_obj, method)
    epsilon = float(selection.epsilon(delta))
    certificate = dict(selection.certificate)

    k = int(law_obj.rvs(1, rng=rng)[0])
    if k > MAX_TRIALS:
        raise ParameterError("law", law_obj.spec, f"a law whose K stays within MAX_TRIALS = {MAX_TRIALS} trials (K = "
                             f"{k} was drawn, before any trial ran)", WHERE)
    seed_derived = sampler is None
    if sampler is None:
        sampler = optuna.samplers.RandomSampler(seed=int(rng.integers(2**32)))
    study = optuna.create_study(direction=direction, sampler=sampler, pruner=optuna.pruners.NopPruner())
    for _ in range(k):
        trial = study.ask(space)
        try:
            value = objective(trial)
        except optuna.TrialPruned:
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            continue
        except BaseException:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            raise
        if isinstance(value, numbers.Real) and not isinstance(value, bool) and not math.isfinite(float(value)):
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            raise ParameterError("objective", float(value), "a finite real value from every trial (trial "
                                 f"{trial.number} returned {float(value)}; an infinite or NaN value would be released "
                                 "as the best)", WHERE)
        study.tell(trial, value)  # a non-number (None): Optuna marks the trial failed, with a warning

    trials = study.get_trials(deepcopy=True)
    best = _best(trials, direction)
    completed = sum(t.state == optuna.trial.TrialState.COMPLETE for t in trials)
    return TuningResult(
        best_trial=best,
        best_value=None if best is None else float(best.value),
        best_params=None if best is None else dict(best.params),
        k=k,
        epsilon=epsilon,
        delta=delta,
        method=method,
        law=law_obj.spec,
        base=base_obj.spec,
        certificate=certificate,
        note=_note(method, type(sampler).__name__, iid, k, completed, seed_derived),
        sampler=type(sampler).__name__,
        study=study,
    )
