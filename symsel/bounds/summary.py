"""The record the command line, the report and ``verify`` print for one method."""

from __future__ import annotations

import math
from typing import Any

from symsel.bounds.api import bound
from symsel.distributions import Distribution
from symsel.errors import NotApplicableError, ParameterError
from symsel.profiles import Profile
from symsel.validate import probability, real


def bound_summary(
    dist: Distribution, base: Profile, method: str, delta: float | None = None, epsilon: float | None = None
) -> dict[str, Any]:
    """``{method, theorem, epsilon, delta, mean_K, certificate, details, vacuous}`` for one method at
    the given ``delta`` (→ epsilon) or ``epsilon`` (→ delta). A method that does not apply gets
    ``reason`` (and ``None`` numbers) instead."""
    if (delta is None) == (epsilon is None):
        raise ParameterError("delta", delta, "exactly one of delta or epsilon", "bound")
    if delta is not None:
        delta = probability(delta, "delta", "bound")
    if epsilon is not None:
        epsilon = real(epsilon, "epsilon", "bound", lo=0.0, allowed="epsilon >= 0")
    record: dict[str, Any] = {"method": method, "mean_K": float(dist.mean)}
    try:
        result = bound(dist, base, method)
    except NotApplicableError as exc:
        return {**record, "theorem": None, "epsilon": None, "delta": None, "reason": str(exc)}
    if delta is not None:
        record.update(epsilon=float(result.epsilon(delta)), delta=delta)
    else:
        record.update(epsilon=epsilon, delta=float(result.delta(epsilon)))
    record["theorem"] = result.theorem
    record["certificate"] = dict(result.certificate)
    record["details"] = dict(result.details)
    record["vacuous"] = not math.isfinite(record["epsilon"]) or record["delta"] >= 1.0
    return record
