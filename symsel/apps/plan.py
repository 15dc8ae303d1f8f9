"""Planning: how many candidates can a practitioner try within a privacy budget?

With the base mechanism fixed (a DP-SGD run with its noise, sampling rate and steps) and a budget
``(epsilon, delta)``, the largest mean number of runs ``E[K]`` of a family of laws of K whose
certified selection bound stays within the budget (Koskela et al. Section 6; Papernot & Steinke
Section 4). The family is a spec template with a ``{mean}`` placeholder, e.g.
``"poisson(mean={mean})"`` or ``"tnb(eta=0.5, mean={mean})"``.

The search grows the mean to a bracket (by factors 2, 4, 16, 16, …: :data:`GALLOP_FACTOR`, over the
doubling points of the smallest mean, up to the last one within ``MAX_MEAN``), then runs symsel's one
conservative root finder (:func:`symsel.numeric.last_feasible`) in ``log E[K]`` on
``log δ(ε_budget) − log δ_budget`` (one δ evaluation per step); the answer is a mean whose bound has been
checked to fit the budget (so the plan itself is certified, not only approximate), within ``MEAN_RTOL`` of the
largest such mean.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from symsel.bounds import bound
from symsel.distributions import Distribution
from symsel.errors import NotApplicableError, ParameterError
from symsel.numeric import largest_feasible_integer, largest_fitting_integer, last_feasible, log_gap
from symsel.profiles import Profile
from symsel.spec import parse_distribution
from symsel.validate import probability, real

#: relative width of the final bracket on the mean.
MEAN_RTOL = 1e-3
MAX_MEAN = 1e10
#: the largest factor between two means tried while the search grows to a bracket (:func:`max_mean`): the means
#: grow by 2, 4, 16, 16, ... (a mean of 1e8 is bracketed in 8 steps rather than 27; the bracket of width 16 then
#: costs Brent's method a few steps more than one of width 2).
GALLOP_FACTOR = 16.0
#: the largest budget a plan accepts (beyond it every law fits and the search would only walk to MAX_MEAN).
MAX_BUDGET_EPSILON = 100.0


@lru_cache(maxsize=64)  # the same law object each time: bound()'s cache then serves the search's last mean again
def _law(template: str, mean: float) -> Distribution:
    return parse_distribution(template.replace("{mean}", repr(mean)))


def _log_excess(template: str, mean: float, base: Profile, method: str, epsilon: float, delta: float,
                final: Profile | None = None) -> float:
    """``log δ(ε_budget) − log δ_budget`` of the bound at this mean (with the final run composed when ``final``):
    ≤ 0 exactly when the mean fits the budget (one evaluation of δ; no root finding of ε(δ) per step)."""
    result = bound(_law(template, mean), base, method)
    if final is None:
        return _excess(result.log_delta_within(epsilon, math.log(delta) if delta > 0 else -math.inf), delta)
    value = _budget_delta(result, final, epsilon, delta)
    return _excess(math.log(value) if value > 0 else -math.inf, delta)


def _excess(log_value: float, delta: float) -> float:
    """``log_value − log δ_budget``: ``≤ 0`` exactly when ``exp(log_value) ≤ δ_budget`` (a ``δ = 0`` budget
    fits only ``log_value = −inf``)."""
    return log_value - math.log(delta) if delta > 0 else (0.0 if log_value == -math.inf else math.inf)


FinalRun = bool | str | Profile | None


def _final_profile(final_run: FinalRun, base: Profile) -> Profile | None:
    """The final run composed after the selection: ``None``/``False`` none, ``True`` one more run of ``base``, or
    another mechanism (a profile or a spec string, e.g. a longer training run)."""
    if final_run is None or final_run is False:
        return None
    if final_run is True:
        return base
    if isinstance(final_run, str):
        from symsel.spec import parse_profile

        return parse_profile(final_run)
    if isinstance(final_run, Profile):
        return final_run
    raise ParameterError("final_run", repr(final_run), "True, False, a base spec string or a symsel Profile", "plan")


def _budget_delta(result: Profile, final: Profile | None, epsilon: float, delta: float,
                  settle_only: bool = True) -> float:
    """δ at the budget's ε of the selection bound, or of the whole pipeline with the final run composed
    (:func:`symsel.bounds.pipeline.with_final_run`; its refinement stops once the answer to "≤ δ?" is settled).
    Where the selection alone is over the budget its value is returned: the pipeline's is at least as large (it
    releases the selection's output and more), so the answer "over the budget" is the same, and the final run's
    pair (for a Gaussian with a tiny σ, a PLD of millions of atoms) is never built. ``settle_only``: the selection's
    δ may be any of its bound's values within the budget (:meth:`~symsel.profiles.Profile.delta_within`); a reported
    ``delta_at_budget`` passes ``False`` and gets the bound's own value."""
    alone = result.delta_within(epsilon, delta) if settle_only else float(result.delta(epsilon))
    if final is None or alone > delta:  # the pipeline is at least the selection alone (drop the final run's output)
        return alone
    from symsel.bounds.pipeline import with_final_run

    return with_final_run(result, final).delta_within(epsilon, target=delta)


def _pipeline_epsilon(result: Profile, final: Profile | None, delta: float) -> float:
    """ε at ``delta`` of the selection bound, or of the whole pipeline with the final run composed."""
    if final is None:
        return float(result.epsilon(delta))
    from symsel.bounds.pipeline import with_final_run

    return float(with_final_run(result, final).epsilon(delta))


def pipeline_epsilon(law: Distribution, base: Profile, method: str, delta: float,
                     final_run: FinalRun = True) -> float:
    """ε at ``delta`` of the whole pipeline: the selection of ``law`` on ``base`` by ``method``, then the final run
    (``True``: one more run of ``base``)."""
    return _pipeline_epsilon(bound(law, base, method), _final_profile(final_run, base), delta)


def _checked_budget(template: str, placeholder: str, example: str, epsilon: float, delta: float,
                    method: str) -> tuple[float, float, dict[str, Any]]:
    """The template, ``epsilon`` and ``delta`` of a planning question checked (one-line errors naming each), and
    the record every answer starts from."""
    if not isinstance(template, str) or placeholder not in template:  # an int here was a TypeError
        raise ParameterError("dist", template, f"a spec template containing {placeholder}, e.g. {example}", "plan")
    epsilon = real(epsilon, "epsilon", "plan", lo=0.0, hi=MAX_BUDGET_EPSILON, lo_open=True,
                   allowed=f"a budget 0 < epsilon <= {MAX_BUDGET_EPSILON:g}")
    delta = probability(delta, "delta", "plan")
    return epsilon, delta, {"method": method, "budget_epsilon": epsilon, "delta": delta}


def max_mean(template: str, base: Profile, epsilon: float, delta: float, method: str = "best",
             min_mean: float = 1.0 + 1e-6, candidates: float | None = None,
             final_run: FinalRun = False) -> dict[str, Any]:
    """The largest ``E[K]`` (within ``MEAN_RTOL``) with the selection bound ``<= epsilon`` at ``delta``.

    A mean fits when ``δ(ε_budget) ≤ δ_budget``. The search runs over the value substituted for ``{mean}``; the
    record reports the law's own mean ``E[K]`` (``mean``; they differ for templates such as
    ``truncated(dist=geometric(mean={mean}), …)``), the substituted value (``template_mean``), the bound's
    ``epsilon`` at ``delta`` and ``delta_at_budget`` for the reported mean (both within the budget: ``epsilon`` is
    the budget's ε where the bound's own ε(δ), found from above, would round past it), and the
    utility of that law: the expected quantile of the best run (P&S eq. 8) and, with ``candidates``, the
    probability that the best of ``candidates`` equally likely configurations is found (P&S App. A.2.1).
    ``mean`` is ``None`` when even ``min_mean`` exceeds the budget; the search is capped at ``MAX_MEAN`` (when the
    last doubling point of ``min_mean`` within it fits, that is the answer, flagged ``capped``).

    ``final_run``: compose the final training run after the selection and plan for the whole pipeline
    (``True``: one more run of ``base``; or the final run's own profile or spec), bounded by
    :func:`symsel.bounds.pipeline.with_final_run` (docs/composition.md, "A selection and the final run")."""
    epsilon, delta, record = _checked_budget(template, "{mean}", "poisson(mean={mean})", epsilon, delta, method)
    if candidates is not None:  # checked before the search: a bad value is refused whether or not a mean fits
        candidates = real(candidates, "candidates", "max_mean", lo=1.0, hi=math.inf, hi_open=True,
                                   allowed="a finite number of candidates >= 1")
    final = _final_profile(final_run, base)
    if final is not None:
        record["final_run"] = final.spec
    seen: dict[float, float] = {}

    def over_budget(x: float) -> float:  # x = -log(mean): non-increasing, feasible (<= 0) on the right
        if x not in seen:
            seen[x] = _log_excess(template, math.exp(-x), base, method, epsilon, delta, final)
        return seen[x]

    lo, hi = min_mean, min_mean * 2
    try:
        excess_lo = over_budget(-math.log(lo))
    except NotApplicableError as exc:
        return {**record, "mean": None, "epsilon": None, "reason": str(exc)}
    if excess_lo > 0:
        eps_lo = _epsilon(template, lo, base, method, delta, final)
        return {**record, "mean": None, "epsilon": eps_lo, "reason": f"even mean {lo:g} needs epsilon {eps_lo:.4g}"}
    # galloping over doubling points of lo: factors 2, 4, 16, 16, ... up to the last one within MAX_MEAN, checked
    top = lo * 2.0 ** max(1, math.floor(math.log2(MAX_MEAN / lo)))
    while top > MAX_MEAN and top > hi:
        top /= 2
    capped, factor = False, 2.0
    while over_budget(-math.log(hi)) <= 0:
        if hi >= top:
            lo, capped = hi, True
            break
        factor = min(factor * factor, GALLOP_FACTOR)
        lo, hi = hi, min(hi * factor, top)
    x = -math.log(lo) if capped else last_feasible(over_budget, -math.log(hi), -math.log(lo),
                                                    xtol=MEAN_RTOL / 2, rtol=0.0)
    value = math.exp(-x)
    # the search checked δ(ε_budget) ≤ δ_budget at this mean, so ε_budget is itself a certified ε at δ_budget: the
    # bound's own ε(δ), found on its safe side (within its tolerance above the crossing), is reported when below it
    eps = min(_epsilon(template, value, base, method, delta, final), epsilon)
    law = _law(template, value)
    out = {**record, "mean": float(law.mean), "template_mean": value, "epsilon": eps,
           "delta_at_budget": _budget_delta(bound(law, base, method), final, epsilon, delta, settle_only=False),
           "expected_quantile": law.expected_quantile()}
    if candidates is not None:
        out["candidates"] = float(candidates)
        out["success_probability"] = law.success_probability(candidates)
    if capped:
        out["capped"] = True
    return out


#: the most trials :func:`max_trials` searches.
MAX_TRIALS = 10**6


def _selection_bound(law: Distribution, base: Profile, method: str) -> Profile:
    """``bound(law, base, method)``; for a law with ``K ≤ 1`` where the method needs two runs (``interval``), the
    base itself: the selection then releases at most one run's output (or nothing), so its ``δ(ε)`` is at most the
    base's."""
    try:
        return bound(law, base, method)
    except NotApplicableError:
        if law.support_max is not None and int(law.support_max) <= 1:
            return base
        raise


def max_trials(template: str, base: Profile, epsilon: float, delta: float, method: str = "best",
               final_run: FinalRun = False) -> dict[str, Any]:
    """The largest whole number of trials ``k`` whose selection bound fits the budget: ``δ(ε_budget) ≤ δ_budget``
    for the law ``template`` with ``{k}`` replaced by ``k`` (``"point(k={k})"``: a fixed number of trials, a grid or
    a tuner's ``n_trials``; ``"binomial(n={k}, p=1/2)"``). The search doubles ``k`` to a bracket, then narrows it on
    the integers by secant steps in ``log k`` on ``log(δ(ε_budget) / δ_budget)``
    (:func:`~symsel.numeric.largest_fitting_integer`: the bisection's integer, in fewer bounds). Every answer has been
    checked to fit (its ``delta_at_budget`` is reported), and ``k + 1`` has been checked not to, unless the search hit
    :data:`MAX_TRIALS` (``capped``). A bound that is not monotone in ``k`` can only make the answer smaller than the
    largest fitting ``k``, never unchecked.

    ``final_run`` composes the final training run after the selection, as in :func:`max_mean`; the search then
    starts from the answer without it (the pipeline can only need more), and most of its steps settle on the
    coarse grid of :func:`~symsel.bounds.pipeline.with_final_run`."""
    epsilon, delta, record = _checked_budget(template, "{k}", "point(k={k})", epsilon, delta, method)
    final = _final_profile(final_run, base)
    seen: dict[int, float] = {}

    def delta_at(k: int) -> float:
        if k not in seen:
            result = _selection_bound(parse_distribution(template.replace("{k}", str(k))), base, method)
            seen[k] = _budget_delta(result, final, epsilon, delta)
        return seen[k]

    try:
        if delta_at(1) > delta:
            return {**record, "trials": None, "reason": f"even one trial needs more than delta = {delta:g} at "
                                                         f"epsilon = {epsilon:g}"}
    except NotApplicableError as exc:
        return {**record, "trials": None, "reason": str(exc)}
    lo, hi, capped, doubling = 1, 2, False, True
    if final is not None:  # the pipeline fits no more trials than the selection alone: that answer bounds the search
        alone = max_trials(template, base, epsilon, delta, method)
        record["final_run"] = final.spec
        doubling = bool(alone.get("capped"))
        hi = 2 if doubling else int(alone["trials"]) + 1
    while doubling and delta_at(hi) <= delta:
        lo, hi = hi, hi * 2
        if hi > MAX_TRIALS:
            capped = True
            break
    if not capped and hi - lo > 1:
        def probe(k: int) -> tuple[bool, float]:
            return delta_at(k) <= delta, log_gap(delta_at(k), delta)

        lo = largest_fitting_integer(probe, lo, hi, log_gap(seen[lo], delta),
                                     log_gap(seen[hi], delta) if hi in seen else math.inf)
    law = parse_distribution(template.replace("{k}", str(lo)))
    result = _selection_bound(law, base, method)
    out = {**record, "trials": lo, "dist": law.spec,
           "delta_at_budget": _budget_delta(result, final, epsilon, delta, settle_only=False),
           "epsilon": _pipeline_epsilon(result, final, delta), "evaluations": len(seen)}
    if capped:
        out["capped"] = True
    else:
        out["next_delta_at_budget"] = delta_at(lo + 1)
    return out


def _epsilon(template: str, mean: float, base: Profile, method: str, delta: float,
             final: Profile | None = None) -> float:
    return _pipeline_epsilon(bound(_law(template, mean), base, method), final, delta)


#: the largest budget :func:`solve_base` accepts (epsilon = 1e300 did not answer in minutes; 1e5 answers in seconds,
#: the whole range of either knob fitting far below it).
MAX_SOLVE_EPSILON = 1e5
#: the knobs of a base template that :func:`solve_base` can solve for, with their search ranges.
BASE_KNOBS = {"steps": (1.0, 1e6), "sigma": (1e-2, 1e4)}


def solve_base(base_template: str, law: str, epsilon: float, delta: float, method: str = "best",
               final_run: FinalRun = False) -> dict[str, Any]:
    """The inverse questions: with the law of K fixed, the largest ``{steps}`` (or the smallest ``{sigma}``) of a
    base template such as ``"dpsgd(q=0.01, sigma=1.1, steps={steps})"`` whose selection bound fits the budget.

    Feasibility ``log δ(ε_budget) ≤ log δ_budget`` is monotone in both knobs (more steps or less noise only
    weakens the base). The search starts at the easy end of the knob's range (one step, the most noise) and moves
    towards the hard end by factors 2, 4, 16, 16, … to a bracket (the costly bases, a million steps or little noise,
    are built only when the answer is near them), then runs :func:`symsel.numeric.last_feasible` in ``log`` of the
    knob; its answer is checked feasible (sigma kept on the feasible side; steps the largest whole number that fits,
    the next one checked not to). ``final_run=True`` plans
    the whole pipeline: the selection, then one more run of the base at the same knob (a spec or profile: that
    run instead, fixed)."""
    from symsel.spec import parse_profile

    knobs = [k for k in BASE_KNOBS if isinstance(base_template, str) and "{" + k + "}" in base_template]
    if len(knobs) != 1:
        raise ParameterError("base", base_template, "a base template with exactly one of {steps} or {sigma}", "plan")
    knob = knobs[0]
    epsilon = real(epsilon, "epsilon", "plan", lo=0.0, hi=MAX_SOLVE_EPSILON, lo_open=True,
                   allowed=f"a budget 0 < epsilon <= {MAX_SOLVE_EPSILON:g}")
    delta = probability(delta, "delta", "plan")
    dist = parse_distribution(law)
    low, high = BASE_KNOBS[knob]

    def base_at(value: float) -> Profile:
        text = str(int(value)) if knob == "steps" else repr(float(value))
        return parse_profile(base_template.replace("{" + knob + "}", text))

    seen: dict[float, float] = {}

    def excess(x: float) -> float:  # steps: x = log(steps), feasible on the left -> use -x; sigma: x = -log(sigma)
        value = math.exp(-x) if knob == "steps" else math.exp(x)
        return excess_at(math.floor(value) if knob == "steps" else value)

    def excess_at(value: float) -> float:
        key = float(value)
        if key not in seen:
            try:
                seen[key] = excess_of(value)
            except NotApplicableError:  # no bound can be built there (a PLD too wide): not certified, so not taken
                seen[key] = math.inf
        return seen[key]

    def excess_of(value: float) -> float:
        base = base_at(max(value, low))
        final = _final_profile(final_run, base)
        result = bound(dist, base, method)
        if final is None:
            return _excess(float(result.log_delta(epsilon)), delta)
        found = _budget_delta(result, final, epsilon, delta)
        return _excess(math.log(found) if found > 0 else -math.inf, delta)

    # map both knobs to a variable in which feasibility holds on the right: steps -> -log(steps); sigma -> log sigma
    lo_x, hi_x = (-math.log(high), -math.log(low)) if knob == "steps" else (math.log(low), math.log(high))
    record: dict[str, Any] = {"law": dist.spec, "base": base_template, "knob": knob, "method": method,
                              "budget_epsilon": epsilon, "delta": delta}
    if excess(hi_x) > 0:
        easiest = low if knob == "steps" else high
        return {**record, knob: None, "reason": f"even {knob} = {easiest:g} exceeds the budget"}
    # gallop from the easy end (one step, or the most noise) towards the hard one by factors 2, 4, 16, 16, ... of the
    # knob: the costly bases (a million steps, little noise) are built only when the answer is near them
    feasible, jump, x = hi_x, math.log(2.0), None
    while True:
        trial = max(feasible - jump, lo_x)
        if excess(trial) > 0:
            break
        feasible = trial
        if trial == lo_x:  # the whole range fits
            x = lo_x
            break
        jump = min(2 * jump, math.log(GALLOP_FACTOR))
    if x is None:
        x = last_feasible(excess, trial, feasible, xtol=1e-3, rtol=0.0)
    value = math.floor(math.exp(-x)) if knob == "steps" else math.exp(x)
    if knob == "steps":  # the largest whole number that fits: the crossing is below (value + 1) e^0.001
        value = max(int(value), 1)
        beyond = min(int(high) + 1, math.floor((value + 1) * math.exp(1e-3)) + 1)  # over the budget, or out of range
        if value + 1 < beyond and excess_at(value + 1) <= 0:
            value = largest_feasible_integer(lambda n: excess_at(n) <= 0, value + 1, beyond)
    base = base_at(value)
    final = _final_profile(final_run, base)
    result = bound(dist, base, method)
    if final is not None:
        record["final_run"] = final.spec
    return {**record, knob: value, "epsilon": _pipeline_epsilon(result, final, delta),
            "delta_at_budget": _budget_delta(result, final, epsilon, delta, settle_only=False)}


# ------------------------------------------------------------------------------------ planning to an attack-risk budget
def _checked_risk(fpr: float, max_tpr: float) -> tuple[float, float]:
    fpr = real(fpr, "fpr", "plan", lo=0.0, hi=1.0, lo_open=True, hi_open=True,
               allowed="a false-positive rate in (0, 1)")
    max_tpr = real(max_tpr, "max_tpr", "plan", lo=fpr, hi=1.0, hi_open=True,
                   allowed=f"a true-positive rate in [fpr, 1) = [{fpr:g}, 1)")
    return fpr, max_tpr


def max_trials_for_risk(template: str, base: Profile, fpr: float = 0.01, max_tpr: float = 0.05,
                        method: str = "best") -> dict[str, Any]:
    """The largest whole number of trials ``k`` (``{k}`` in ``template``, e.g. ``"point(k={k})"``) whose selection's
    certified true-positive rate at false-positive rate ``fpr`` is at most ``max_tpr``: no membership attack on the
    selection's output reaches that TPR at that FPR (docs/tradeoff.md, Corollary 3). Doubling to a bracket, then
    bisection on the integers; the answer is checked to fit, ``k + 1`` checked not to (unless ``capped`` at
    :data:`MAX_TRIALS`); ``tpr`` is the answer's certified TPR bound."""
    fpr, max_tpr = _checked_risk(fpr, max_tpr)
    if not isinstance(template, str) or "{k}" not in template:
        raise ParameterError("dist", template, "a spec template containing {k}, e.g. point(k={k})", "plan")
    record: dict[str, Any] = {"method": method, "fpr": fpr, "max_tpr": max_tpr}
    seen: dict[int, float] = {}

    def tpr_at(k: int) -> float:
        if k not in seen:
            seen[k] = float(bound(parse_distribution(template.replace("{k}", str(k))), base, method).tpr_at_fpr(fpr))
        return seen[k]

    try:
        if tpr_at(1) > max_tpr:
            return {**record, "trials": None, "tpr_one_trial": seen[1],
                    "reason": f"even one trial allows TPR {seen[1]:.4g} > {max_tpr:g} at FPR {fpr:g}"}
    except NotApplicableError as exc:
        return {**record, "trials": None, "reason": str(exc)}
    lo, hi, capped = 1, 2, False
    while tpr_at(hi) <= max_tpr:
        lo, hi = hi, hi * 2
        if hi > MAX_TRIALS:
            capped = True
            break
    if not capped:
        lo = largest_feasible_integer(lambda k: tpr_at(k) <= max_tpr, lo, hi)
    out = {**record, "trials": lo, "dist": parse_distribution(template.replace("{k}", str(lo))).spec,
           "tpr": seen[lo], "evaluations": len(seen)}
    if capped:
        out["capped"] = True
    else:
        out["next_tpr"] = tpr_at(lo + 1)
    return out


def min_sigma_for_risk(base_template: str, law: str, fpr: float = 0.01, max_tpr: float = 0.05,
                       method: str = "best") -> dict[str, Any]:
    """The least noise ``{sigma}`` of a base template (e.g. ``"dpsgd(q=0.01, sigma={sigma}, steps=1000)"``) whose
    selection of ``law`` has a certified TPR at ``fpr`` of at most ``max_tpr``: the σ's of :data:`BASE_KNOBS` range,
    searched in ``log σ`` by :func:`symsel.numeric.last_feasible` (answer checked to fit, within 0.1 % of the
    crossing)."""
    from symsel.spec import parse_profile

    fpr, max_tpr = _checked_risk(fpr, max_tpr)
    if not isinstance(base_template, str) or "{sigma}" not in base_template:
        raise ParameterError("base", base_template, "a base template containing {sigma}", "plan")
    dist = parse_distribution(law)
    low, high = BASE_KNOBS["sigma"]
    seen: dict[float, float] = {}

    def excess(x: float) -> float:  # x = log sigma; feasible (<= 0) on the right
        if x not in seen:
            base = parse_profile(base_template.replace("{sigma}", repr(math.exp(x))))
            seen[x] = math.log(float(bound(dist, base, method).tpr_at_fpr(fpr))) - math.log(max_tpr)
        return seen[x]

    record: dict[str, Any] = {"law": dist.spec, "base": base_template, "method": method, "fpr": fpr,
                              "max_tpr": max_tpr}
    if excess(math.log(high)) > 0:
        return {**record, "sigma": None, "reason": f"even sigma = {high:g} allows a TPR above {max_tpr:g}"}
    if excess(math.log(low)) <= 0:
        x = math.log(low)
    else:
        x = last_feasible(excess, math.log(low), math.log(high), xtol=1e-3, rtol=0.0)
    sigma = math.exp(x)
    return {**record, "sigma": sigma, "tpr": math.exp(excess(x)) * max_tpr, "evaluations": len(seen)}
