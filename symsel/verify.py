"""Verification: exact values and certified lower bounds side by side with every upper bound.

A bound is an upper bound. ``verify_example`` evaluates a worst case of the papers exactly
(:mod:`symsel.examples`) and compares it with every applicable bound for the base guarantee the
example assumes; ``verify_selection`` searches a certified lower bound (:mod:`symsel.lower`) for a
law of K and a base profile and brackets the truth between it and the bounds. A bound below an
exact value or a certified lower bound is a bug, reported as ``sound: false``.
"""

from __future__ import annotations

import math
from typing import Any

from symsel.bounds import METHODS, bound_summary
from symsel.distributions import Distribution
from symsel.errors import NotApplicableError, ParameterError
from symsel.examples import Example, get_example
from symsel.profiles import ApproxDPProfile, GaussianProfile, Profile, pure

#: exact values are compared with bounds up to this absolute slack (float rounding of both sides).
SOUNDNESS_SLACK = 1e-9


def base_profile_of(example: Example) -> Profile | None:
    """The base-mechanism guarantee an example assumes, as a Profile (``None`` if it names none)."""
    base = example.base
    kind = base.get("kind")
    if kind == "pure":
        return pure(base["eps"])
    if kind == "approx":
        return ApproxDPProfile(base["eps"], base["delta"])
    if kind == "gaussian":
        return GaussianProfile(base["sigma"], base.get("sensitivity", 1.0))
    if kind == "finite":
        from symsel.profiles import PairProfile

        return PairProfile(base["p"], base["q"])
    return None


def _bounds(dist: Distribution, base: Profile, delta: float) -> dict[str, dict[str, Any]]:
    out = {}
    for method in METHODS:
        record = bound_summary(dist, base, method, delta=delta)
        out[method] = record
    return out


def _rnm_bounds(example: Example) -> dict[str, dict[str, Any]]:
    from symsel.bounds.rnm import report_noisy_max_bound

    base = example.base
    profile = GaussianProfile(base["sigma"], 1.0)
    monotone = bool(example.params.get("monotone", False))
    out: dict[str, dict[str, Any]] = {}
    for method in ("profile", "rdp", "gaussian_tail"):
        try:
            bound = report_noisy_max_bound(int(base["m"]), profile, monotone=monotone, method=method)
            out[method] = {"method": method, "epsilon": float(bound.epsilon(example.delta))}
        except NotApplicableError as exc:
            out[method] = {"method": method, "epsilon": None, "reason": str(exc)}
    return out


def verify_example(name: str, dps: int = 50) -> dict[str, Any]:
    """Exact value of a registered worst case and every applicable bound; ``sound`` is false if any
    bound is below the exact value."""
    example = get_example(name)
    exact = example.exact_epsilon(dps=dps) if example.kind in ("selection", "rnm") else None
    base = base_profile_of(example)
    bounds: dict[str, dict[str, Any]] = {}
    if example.kind == "selection" and base is not None and example.dist is not None:
        bounds = _bounds(example.dist, base, example.delta)
    elif example.kind == "rnm":
        bounds = _rnm_bounds(example)
    values = {m: r.get("epsilon") for m, r in bounds.items()}
    violations = [m for m, v in values.items() if v is not None and exact is not None and v < exact - SOUNDNESS_SLACK]
    return {
        "example": example.name,
        "description": example.description,
        "source": example.source,
        "delta": example.delta,
        "exact_epsilon": exact,
        "paper_exact": example.paper_exact,
        "paper_bound": example.paper_bound,
        "bounds": values,
        "details": bounds,
        "violations": violations,
        "sound": not violations,
    }


def verify_selection(dist: Distribution, base: Profile, delta: float, budget: int = 200, seed: int = 0) -> dict:
    """A certified lower bound (searched over discretizations and score orders of the base's
    dominating pair) against every upper bound: ``lower_bound``, ``bounds``, ``ratio`` = tightest
    finite upper bound / lower bound, ``sound``."""
    from symsel.lower import base_from_profile, lower_bound

    try:
        dominating = base_from_profile(base)
    except ParameterError:
        raise ParameterError(
            "base", base.spec, "a base with a known dominating pair (gaussian, gdp, laplace, randomized_response, "
            "pure, approx, pointwise)", "verify") from None
    lower = lower_bound(dominating, dist, delta, budget=budget, seed=seed)
    bounds = _bounds(dist, base, delta)
    values = {m: r.get("epsilon") for m, r in bounds.items()}
    finite = [v for v in values.values() if v is not None and math.isfinite(v)]
    tightest = min(finite) if finite else math.inf
    violations = [m for m, v in values.items() if v is not None and v < lower.epsilon - SOUNDNESS_SLACK]
    ratio = tightest / lower.epsilon if lower.epsilon > 0 and math.isfinite(lower.epsilon) else math.inf
    return {
        "dist": dist.spec,
        "base": base.spec,
        "delta": delta,
        "lower_bound": lower.epsilon,
        "monotone_order_epsilon": lower.monotone_epsilon,
        "lower_bound_order": list(lower.order),
        "lower_bound_evaluations": lower.evaluations,
        "bounds": values,
        "details": bounds,
        "ratio": ratio,
        "violations": violations,
        "sound": not violations,
    }
