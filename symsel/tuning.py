"""Tuning hyperparameters that change the privacy of each candidate (Koskela et al. §6.2, Corollary 6.2, Figure 8).

When the candidates differ in their own privacy (say DP-SGD runs with different noise levels σ), the selection's
bound may use only what all candidates share. Fix point-wise thresholds ``(ε_j, δ_j)`` (Cor 6.2 uses two:
``(ε1, δ1)`` and ``(ε̂, δ/m)``); a candidate is admitted when its privacy profile is below every threshold. Every
admitted candidate is then dominated by the base profile ``pointwise(points=[(ε_j, δ_j), …])``, whose privacy
region contains each candidate's (MATH.md §2), so Theorem 4.1 — and every method of :func:`symsel.bound` built on
it — holds for the tuning over any mix of admitted candidates (the per-output argument of MATH.md §4b uses only the
region). With the two thresholds and ``paper`` on a truncated negative binomial law this is Corollary 6.2.

* :func:`max_steps` — the longest DP-SGD run of one noise level that stays below the thresholds;
* :func:`tuning_bound` — the selection bound over any admitted candidates;
* :func:`sigma_tuning` — Figure 8's table: for each σ its admitted steps, and the tuning's ε by each method.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from symsel import validate
from symsel.errors import ParameterError

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
    (0 if not even one step is). Bisection on the integer steps: the profile grows with the steps."""
    from symsel.profiles import DpsgdProfile

    thresholds = _checked(thresholds)
    limit = validate.integer(limit, "limit", "tuning", lo=1)

    def ok(steps: int) -> bool:
        return admits(DpsgdProfile(q, sigma, steps), thresholds)

    if not ok(1):
        return 0
    lo, hi = 1, 2
    while hi <= limit and ok(hi):
        lo, hi = hi, hi * 2
    if hi > limit:
        return limit if ok(limit) else _bisect(ok, lo, limit)
    return _bisect(ok, lo, hi)


def _bisect(ok: Any, lo: int, hi: int) -> int:
    """Largest integer in [lo, hi) with ok, given ok(lo) and not ok(hi)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def tuning_bound(law: Any, thresholds: Sequence[Threshold], method: str = "best") -> Any:
    """The bound on a selection over any candidates admitted by the thresholds (module docstring)."""
    import symsel

    points = ", ".join(f"({eps!r}, {delta!r})" for eps, delta in _checked(thresholds))
    return symsel.bound(law, symsel.parse_profile(f"pointwise(points=[{points}])"), method)


def sigma_tuning(q: float, sigmas: Sequence[float], law: Any, thresholds: Sequence[Threshold], delta: float,
                 methods: Sequence[str] = ("paper", "best"), limit: int = MAX_STEPS) -> dict[str, Any]:
    """Figure 8's numbers: the steps each noise level may run, and the tuning's ε at ``delta`` by each method."""
    delta = validate.probability(delta, "delta", "tuning")
    candidates = [{"sigma": float(s), "steps": max_steps(q, s, thresholds, limit)} for s in sigmas]
    bounds = {m: float(tuning_bound(law, thresholds, m).epsilon(delta)) for m in methods}
    return {"q": q, "thresholds": [list(t) for t in _checked(thresholds)], "law": law.spec, "delta": delta,
            "candidates": candidates, "epsilon": bounds}
