"""Planning: how many candidates can a practitioner try within a privacy budget?

With the base mechanism fixed (a DP-SGD run with its noise, sampling rate and steps) and a budget
``(epsilon, delta)``, the largest mean number of runs ``E[K]`` of a family of laws of K whose
certified selection bound stays within the budget (Koskela et al. Section 6; Papernot & Steinke
Section 4). The family is a spec template with a ``{mean}`` placeholder, e.g.
``"poisson(mean={mean})"`` or ``"tnb(eta=0.5, mean={mean})"``.

The search doubles the mean to a bracket, then runs symsel's one conservative root finder
(:func:`symsel.numeric.last_feasible`) in ``log E[K]``; the answer is a mean whose bound has been
checked to fit the budget (so the plan itself is certified, not only approximate), within
``MEAN_RTOL`` of the largest such mean.
"""

from __future__ import annotations

import math
from typing import Any

from symsel.bounds import bound
from symsel.distributions import Distribution
from symsel.errors import NotApplicableError, ParameterError
from symsel.numeric import last_feasible
from symsel.profiles import Profile
from symsel.spec import parse_distribution
from symsel.validate import positive, probability

#: relative width of the final bracket on the mean.
MEAN_RTOL = 1e-3
MAX_MEAN = 1e10


def _law(template: str, mean: float) -> Distribution:
    return parse_distribution(template.replace("{mean}", repr(mean)))


def _epsilon_at(template: str, mean: float, base: Profile, method: str, delta: float) -> float:
    return float(bound(_law(template, mean), base, method).epsilon(delta))


def max_mean(template: str, base: Profile, epsilon: float, delta: float, method: str = "best",
             min_mean: float = 1.0 + 1e-6) -> dict[str, Any]:
    """The largest ``E[K]`` (within ``MEAN_RTOL``) with the selection bound ``<= epsilon`` at ``delta``.

    The search runs over the value substituted for ``{mean}``; the record reports the law's own mean
    ``E[K]`` (``mean``; they differ for templates such as ``truncated(dist=geometric(mean={mean}), …)``)
    and the substituted value (``template_mean``). ``mean`` is ``None`` when even ``min_mean`` exceeds
    the budget; the search is capped at ``MAX_MEAN`` when the budget is never exceeded."""
    if "{mean}" not in template:
        raise ParameterError("dist", template, "a spec template containing {mean}, e.g. poisson(mean={mean})", "plan")
    epsilon = positive(epsilon, "epsilon", "plan")
    delta = probability(delta, "delta", "plan")
    record: dict[str, Any] = {"method": method, "budget_epsilon": epsilon, "delta": delta}
    lo, hi = min_mean, min_mean * 2
    try:
        eps_lo = _epsilon_at(template, lo, base, method, delta)
    except NotApplicableError as exc:
        return {**record, "mean": None, "epsilon": None, "reason": str(exc)}
    if eps_lo > epsilon:
        return {**record, "mean": None, "epsilon": eps_lo, "reason": f"even mean {lo:g} needs epsilon {eps_lo:.4g}"}
    eps_hi = _epsilon_at(template, hi, base, method, delta)
    while eps_hi <= epsilon:
        lo, eps_lo = hi, eps_hi
        hi *= 2
        if hi > MAX_MEAN:
            return {**record, **_means(template, lo), "epsilon": eps_lo, "capped": True}
        eps_hi = _epsilon_at(template, hi, base, method, delta)
    seen = {-math.log(lo): eps_lo}

    def over_budget(x: float) -> float:  # x = -log(mean): non-increasing, feasible (<= 0) on the right
        if x not in seen:
            seen[x] = _epsilon_at(template, math.exp(-x), base, method, delta)
        return seen[x] - epsilon

    x = last_feasible(over_budget, -math.log(hi), -math.log(lo), xtol=MEAN_RTOL / 2, rtol=0.0)
    over_budget(x)
    return {**record, **_means(template, math.exp(-x)), "epsilon": seen[x]}


def _means(template: str, value: float) -> dict[str, float]:
    return {"mean": float(_law(template, value).mean), "template_mean": value}
