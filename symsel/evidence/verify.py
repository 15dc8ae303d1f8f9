"""Verification: exact values and certified lower bounds side by side with every upper bound.

A bound is an upper bound. ``verify_example`` evaluates a worst case of the papers exactly
(:mod:`symsel.evidence.examples`) and compares it with every applicable bound for the base guarantee the
example assumes; ``verify_selection`` searches a certified lower bound (:mod:`symsel.evidence.lower`) for a
law of K and a base profile and brackets the truth between it and the bounds. A bound below an
exact value or a certified lower bound is a bug, reported as ``sound: false``.
"""

from __future__ import annotations

import math
from typing import Any

from symsel import validate
from symsel.bounds import METHODS, bound, bound_summary
from symsel.distributions import Distribution
from symsel.errors import NotApplicableError
from symsel.evidence.examples import Example, get_example
from symsel.pairs import as_pair
from symsel.profiles import Profile

#: exact values are compared with bounds up to this absolute slack (float rounding of both sides).
SOUNDNESS_SLACK = 1e-9


def _bounds(dist: Distribution, base: Profile, delta: float, details: bool = True) -> dict[str, dict[str, Any]]:
    """Every method's :func:`bound_summary` at ``delta``; with ``details=False`` only its ``epsilon`` (``None`` where
    the method does not apply): no certificate, whose components' ε at more δ (``best``'s ``interval``) can cost
    seconds."""
    out = {}
    for method in METHODS:
        if details:
            out[method] = bound_summary(dist, base, method, delta=delta)
            continue
        try:
            out[method] = {"method": method, "epsilon": float(bound(dist, base, method).epsilon(delta))}
        except NotApplicableError as exc:
            out[method] = {"method": method, "epsilon": None, "reason": str(exc)}
    return out


def _rnm_bounds(example: Example) -> dict[str, dict[str, Any]]:
    """Koskela et al. Section 3 bounds for a Report Noisy Max example: ``example.base_profile`` is one
    noisy query at the queries' sensitivity 1; the theorems use the noise mechanism at sensitivity 2,
    or 1 when the queries move monotonically (``params["monotone"]``, Theorem 3.2)."""
    from symsel.bounds.rnm import report_noisy_max_bound

    monotone = bool(example.params["monotone"])
    assert example.base_profile is not None  # every Report Noisy Max example carries its noise profile
    out: dict[str, dict[str, Any]] = {}
    for method in ("profile", "rdp", "gaussian_tail"):
        try:
            bound = report_noisy_max_bound(int(example.params["m"]), example.base_profile, monotone=monotone,
                                           method=method)
            out[method] = {"method": method, "epsilon": float(bound.epsilon(example.delta))}
        except NotApplicableError as exc:
            out[method] = {"method": method, "epsilon": None, "reason": str(exc)}
    return out


def verify_example(name: str, dps: int = 50, details: bool = True) -> dict[str, Any]:
    """Exact value of a registered worst case and every applicable bound; ``sound`` is false if any
    bound is below the exact value. ``details=False``: each bound's ``epsilon`` only (:func:`_bounds`)."""
    details = validate.flag(details, "details", "verify_example")
    example = get_example(name)
    exact = example.exact_epsilon(dps=dps) if example.kind in ("selection", "rnm") else None
    base = example.base_profile
    bounds: dict[str, dict[str, Any]] = {}
    if example.kind == "selection" and base is not None and example.dist is not None:
        bounds = _bounds(example.dist, base, example.delta, details)
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
    """A certified lower bound (:func:`symsel.evidence.lower.lower_bound` on ``base.dominating_pair()``:
    few-bin search and slice insertion, docs/lower-bounds.md) against every upper bound: ``lower_bound``,
    ``lower_bound_construction``, ``bounds``, ``ratio`` = tightest finite upper bound / lower bound,
    ``sound``. A base without a dominating pair raises :class:`~symsel.errors.ParameterError`
    naming it."""
    from symsel.evidence.lower import lower_bound

    if base.dominating_pair() is None and not base.dominated_loss_pairs() and base.family != "tabulated":
        as_pair(base, "verify")  # the one-line error naming the bases that have a pair
    lower = lower_bound(base, dist, delta, budget=budget, seed=seed)
    bounds = _bounds(dist, base, delta)
    values = {m: r.get("epsilon") for m, r in bounds.items()}
    finite = [v for v in values.values() if v is not None and math.isfinite(v)]
    tightest = min(finite) if finite else math.inf
    violations = [m for m, v in values.items() if v is not None and v < lower.epsilon - SOUNDNESS_SLACK]
    monotone = float(lower.monotone_epsilon)  # NaN only when the lower bound did not evaluate it: never output
    if tightest == 0.0:  # an upper bound of 0 closes the bracket whatever the lower bound
        ratio = 1.0
    else:
        ratio = tightest / lower.epsilon if lower.epsilon > 0 and math.isfinite(lower.epsilon) else math.inf
    return {
        "dist": dist.spec,
        "base": base.spec,
        "delta": delta,
        "lower_bound": lower.epsilon,
        "monotone_order_epsilon": None if math.isnan(monotone) else monotone,
        **({"monotone_order_note": "not evaluated for this lower bound"} if math.isnan(monotone) else {}),
        "lower_bound_order": list(lower.order),
        "lower_bound_construction": lower.construction,
        "lower_bound_evaluations": lower.evaluations,
        "bounds": values,
        "details": bounds,
        "ratio": ratio,
        "violations": violations,
        "sound": not violations,
    }
