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
    ``reason`` (and ``None`` numbers) instead. At a given ``epsilon`` the record also has ``log_delta``
    (natural log, exact where ``delta`` underflows) and, when ``delta`` is below the float range,
    ``delta_decimal`` (e.g. ``"3.2e-412"``), so a tiny ``delta`` is never reported as a bare 0."""
    if (delta is None) == (epsilon is None):
        raise ParameterError("delta", delta, "exactly one of delta or epsilon", "bound")
    if delta is not None:
        delta = probability(delta, "delta", "bound")
    if epsilon is not None:
        epsilon = real(epsilon, "epsilon", "bound", lo=0.0, hi=math.inf, hi_open=True, allowed="a finite epsilon >= 0")
    record: dict[str, Any] = {"method": method, "mean_K": float(dist.mean)}
    try:
        result = bound(dist, base, method)
    except NotApplicableError as exc:
        return {**record, "theorem": None, "epsilon": None, "delta": None, "reason": str(exc)}
    if delta is not None:
        record.update(epsilon=float(result.epsilon(delta)), delta=delta)
    else:
        assert epsilon is not None  # exactly one of delta and epsilon (checked above)
        log_delta = float(result.log_delta(epsilon))
        record.update(epsilon=epsilon, delta=float(result.delta(epsilon)), log_delta=log_delta)
        if record["delta"] == 0.0 and log_delta > -math.inf:  # below the float range: say so, never a silent 0
            record["delta_decimal"] = _decimal_from_log(log_delta)
    record["theorem"] = result.theorem
    record["certificate"] = dict(result.certificate)
    record["details"] = dict(result.details)
    record["vacuous"] = not math.isfinite(record["epsilon"]) or record["delta"] >= 1.0
    return record


def _decimal_from_log(log_value: float) -> str:
    """``exp(log_value)`` as a decimal string in scientific notation, rounded up in the last digit shown."""
    log10 = log_value / math.log(10.0)
    exponent = math.floor(log10)
    mantissa = 10.0 ** (log10 - exponent)
    mantissa = math.ceil(mantissa * 100 * (1 + 1e-12)) / 100
    if mantissa >= 10.0:
        mantissa, exponent = mantissa / 10.0, exponent + 1
    return f"{mantissa:.2f}e{exponent:+d}"


#: the false-positive rates a risk record reports when none are asked for.
DEFAULT_FPRS = (1e-3, 1e-2, 1e-1)


def risk_summary(profile: Profile, fprs: tuple[float, ...] = DEFAULT_FPRS) -> dict[str, Any]:
    """What the profile (a base's, or a selection bound's) says about membership attacks (docs/tradeoff.md):
    ``{spec, advantage, points: [{fpr, tpr, beta, epsilon}], evaluations}``: the certified upper bound on the
    advantage ``TPR − FPR``; at each false-positive rate the certified upper bound on the true-positive rate, the
    certified lower bound on the type II error ``β`` and the ``ε`` of the constraint that gave them (negative: the
    second family of Theorem 1); the ``δ`` evaluations the search made."""
    import numpy as np

    checked = [probability(f, "fpr", "risk") for f in fprs]
    if not checked:
        raise ParameterError("fpr", [], "at least one false-positive rate in [0, 1]", "risk")
    points = profile.tradeoff_points(np.asarray(checked, dtype=float))
    rows = [{"fpr": fpr, "tpr": float(tpr), "beta": float(beta), "epsilon": None if math.isnan(eps) else float(eps)}
            for fpr, tpr, beta, eps in zip(checked, points.tpr, points.beta, points.epsilon, strict=True)]
    return {"spec": profile.spec, "advantage": profile.advantage(), "points": rows,
            "evaluations": points.evaluations}
