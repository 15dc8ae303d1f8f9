"""Tuning hyperparameters that change the privacy of each candidate (Koskela et al. §6.2, Corollary 6.2, Figure 8).

When the candidates differ in their own privacy (say DP-SGD runs with different noise levels σ), the selection's
bound may use only what all candidates share. Fix point-wise thresholds ``(ε_j, δ_j)`` (Cor 6.2 uses two:
``(ε1, δ1)`` and ``(ε̂, δ/m)``); a candidate is admitted when its privacy profile is below every threshold. Every
admitted candidate is then dominated by the base profile ``pointwise(points=[(ε_j, δ_j), …])``, whose privacy
region contains each candidate's (docs/setting.md), so Theorem 4.1 — and every method of :func:`symsel.bound` built on
it — holds for the tuning over any mix of admitted candidates (the per-output argument of docs/envelope.md uses only the
region). With the two thresholds and ``paper`` on a truncated negative binomial law this is Corollary 6.2.

* :func:`max_steps` — the longest DP-SGD run of one noise level that stays below the thresholds;
* :func:`tuning_bound` — the selection bound over any admitted candidates;
* :func:`sigma_tuning` — Figure 8's table: for each σ its admitted steps, and the tuning's ε by each method;
* :func:`corollary_6_2_thresholds` — §6.2's choice of the two thresholds from a budget (ε_Q, δ), via the Gaussian
  mechanism adjusted to it (:func:`gaussian_sigma_for`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from symsel import validate
from symsel.errors import ParameterError
from symsel.numeric import largest_fitting_integer, last_feasible, log_gap

Threshold = tuple[float, float]
#: the longest run :func:`max_steps` searches.
MAX_STEPS = 100_000


def _checked(thresholds: Sequence[Threshold]) -> list[Threshold]:
    if not thresholds:
        raise ParameterError("thresholds", thresholds, "at least one (epsilon, delta) threshold", "tuning")
    out = []
    for pair in thresholds:
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ParameterError("thresholds", pair, "(epsilon, delta) pairs", "tuning")
        out.append((validate.nonnegative(pair[0], "epsilon", "tuning"), validate.probability(pair[1], "delta",
                                                                                             "tuning")))
    return out


def admits(profile: Any, thresholds: Sequence[Threshold]) -> bool:
    """Whether a candidate's profile is below every threshold ``δ(ε_j) ≤ δ_j``."""
    return all(float(profile.delta(eps)) <= delta for eps, delta in _checked(thresholds))


def max_steps(q: float, sigma: float, thresholds: Sequence[Threshold], limit: int = MAX_STEPS) -> int:
    """The largest number of DP-SGD steps (rate ``q``, noise ``sigma``) whose PLD profile is below every threshold
    (0 if not even one step is); the profile grows with the steps. The steps grow by factors 2, 4, 16, 16, … to a
    bracket, then :func:`~symsel.numeric.largest_fitting_integer` finds the crossing, steered by the largest
    ``log(δ(ε_j) / δ_j)`` (each run's PLD is built once; about 11 runs where doubling and bisection built 25)."""
    from symsel.profiles import DpsgdProfile

    checked = _checked(thresholds)
    limit = validate.integer(limit, "limit", "tuning", lo=1)

    def probe(steps: int) -> tuple[bool, float]:
        profile = DpsgdProfile(q, sigma, steps)
        values = [float(profile.delta(eps)) for eps, _ in checked]
        fits = all(value <= delta for value, (_, delta) in zip(values, checked, strict=True))
        return fits, max(log_gap(value, delta) for value, (_, delta) in zip(values, checked, strict=True))

    fits, gap_lo = probe(1)
    if not fits:
        return 0
    lo, factor = 1, 2
    while True:
        hi = lo * factor
        if hi > limit:
            fits, gap_hi = probe(limit) if limit > lo else (True, gap_lo)
            if fits:
                return limit
            hi = limit
            break
        fits, gap_hi = probe(hi)
        if not fits:
            break
        lo, gap_lo, factor = hi, gap_hi, min(factor * factor, 16)
    return largest_fitting_integer(probe, lo, hi, gap_lo, gap_hi)


def tuning_bound(law: Any, thresholds: Sequence[Threshold], method: str = "best") -> Any:
    """The bound on a selection over any candidates admitted by the thresholds (module docstring)."""
    from symsel.bounds import bound
    from symsel.spec import parse_profile

    points = ", ".join(f"({eps!r}, {delta!r})" for eps, delta in _checked(thresholds))
    return bound(law, parse_profile(f"pointwise(points=[{points}])"), method)


def sigma_tuning(q: float, sigmas: Sequence[float], law: Any, thresholds: Sequence[Threshold], delta: float,
                 methods: Sequence[str] = ("paper", "best"), limit: int = MAX_STEPS) -> dict[str, Any]:
    """Figure 8's numbers: the steps each noise level may run, and the tuning's ε at ``delta`` by each method."""
    delta = validate.probability(delta, "delta", "tuning")
    if isinstance(sigmas, str | bytes) or not isinstance(sigmas, Sequence) or not sigmas:  # "abc" was float("a")
        raise ParameterError("sigmas", sigmas, "a non-empty list of noise levels sigma > 0", "tuning")
    sigmas = [validate.positive(s, "sigma", "tuning") for s in sigmas]
    candidates = [{"sigma": float(s), "steps": max_steps(q, s, thresholds, limit)} for s in sigmas]
    for candidate in candidates:  # the search stops at ``limit``: more steps may be admitted
        candidate["at_limit"] = candidate["steps"] >= limit
    bounds = {m: float(tuning_bound(law, thresholds, m).epsilon(delta)) for m in methods}
    return {"q": q, "thresholds": [list(t) for t in _checked(thresholds)], "law": law.spec, "delta": delta,
            "candidates": candidates, "epsilon": bounds}


def gaussian_sigma_for(epsilon: float, delta: float) -> float:
    """The noise σ of the sensitivity-1 Gaussian mechanism that is exactly (ε, δ)-DP (root of its analytic profile,
    Balle & Wang 2018), on the side where the profile is checked to meet the budget."""
    from symsel.spec import parse_profile

    epsilon = validate.positive(epsilon, "epsilon_q", "tuning")
    delta = validate.real(delta, "delta", "tuning", lo=1e-300, hi=1.0, hi_open=True)

    def excess(sigma: float) -> float:
        return float(parse_profile(f"gaussian(sigma={sigma!r})").delta(epsilon)) - delta

    lo, hi = 1e-3, 1.0
    while excess(hi) > 0:
        lo, hi = hi, hi * 2
        if hi > 1e6:
            raise ParameterError("epsilon_q", epsilon, "a budget some Gaussian noise below 1e6 meets", "tuning")
    if excess(lo) <= 0:
        return lo
    return last_feasible(excess, lo, hi)  # the profile falls with σ: the feasible side is above the crossing


def corollary_6_2_thresholds(law: Any, epsilon_q: float, delta: float) -> list[Threshold]:
    """Koskela et al. §6.2's thresholds for a truncated negative binomial ``law`` (γ from its PGF): with δ_G the
    profile of the Gaussian mechanism adjusted to be (ε_Q, δ)-DP, ε1 minimises Thm 5.2's added term
    log(e^ε + ((1 − γ)/γ) δ_G(ε)), δ1 = δ_G(ε1), and ε̂ solves δ_G(ε̂) = δ/m. Returns [(ε1, δ1), (ε̂, δ/m)].
    Any thresholds give a sound tuning bound; these make Corollary 6.2 small."""
    from scipy.optimize import minimize_scalar

    from symsel.bounds.renyi.closed import tnb_parameters
    from symsel.errors import NotApplicableError
    from symsel.spec import parse_distribution, parse_profile

    dist = parse_distribution(law) if isinstance(law, str) else law
    try:
        _, gamma = tnb_parameters(dist)
    except NotApplicableError:
        raise ParameterError("law", dist.spec, "a truncated negative binomial law (geometric, logarithmic, tnb) "
                             "for the thresholds of §6.2; give the thresholds yourself otherwise", "tuning") from None
    gauss = parse_profile(f"gaussian(sigma={gaussian_sigma_for(epsilon_q, delta)!r})")
    odds = (1.0 - gamma) / gamma

    def added(eps: float) -> float:
        return math.log(math.exp(eps) + odds * float(gauss.delta(eps)))

    eps1 = float(minimize_scalar(added, bounds=(0.0, 20.0), method="bounded", options={"xatol": 1e-8}).x)
    mean = float(dist.mean)
    return [(eps1, float(gauss.delta(eps1))), (float(gauss.epsilon(delta / mean)), delta / mean)]
