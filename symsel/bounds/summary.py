"""One entry point over every selection bound, and the record the CLI and reports print."""

from __future__ import annotations

import math
from typing import Any

from symsel.distributions import Distribution
from symsel.errors import NotApplicableError, ParameterError
from symsel.profiles import Profile
from symsel.validate import probability, real

METHODS = ("paper", "polygon", "fdp", "rdp", "rdp_lemma7")


def selection_bound(dist: Distribution, base: Profile, method: str = "fdp") -> Profile:
    """A certified upper bound on the privacy profile of the best of ``K ~ dist`` runs of ``base``.

    ``paper``/``polygon``/``fdp``: :func:`symsel.bounds.hockey_stick.hockey_stick_bound`
    (Koskela et al. Thm 4.1); ``rdp``: the Rényi route as production tools run it — Papernot &
    Steinke's closed forms (Thm 2 / Cor 3, Thm 6, Lemma 20, Lemma 22; what dp-accounting's
    ``RepeatAndSelectDpEvent`` implements), or their generic Lemma 7 where no closed form exists;
    ``rdp_lemma7``: Lemma 7 over the whole privacy region of the base, for any law of K."""
    if method not in METHODS:
        raise ParameterError("method", method, " | ".join(METHODS) + " | all", "bound")
    if method in ("rdp", "rdp_lemma7"):
        from symsel.bounds.renyi import renyi_bound

        if method == "rdp":
            try:
                return renyi_bound(dist, base, "closed")
            except NotApplicableError:
                if base.rdp(2.0) is None:  # no Rényi curve of the base: Lemma 7 cannot help either
                    raise
        return renyi_bound(dist, base, "lemma7")
    from symsel.bounds.hockey_stick import hockey_stick_bound

    return hockey_stick_bound(dist, base, method)


def bound_summary(
    dist: Distribution, base: Profile, method: str, delta: float | None = None, epsilon: float | None = None
) -> dict[str, Any]:
    """``{method, epsilon, delta, mean_K, eps1, log_ratio, …}`` for one method at the given ``delta``
    (→ epsilon) or ``epsilon`` (→ delta). A method that does not apply gets ``reason`` instead."""
    if (delta is None) == (epsilon is None):
        raise ParameterError("delta", delta, "exactly one of delta or epsilon", "bound")
    if delta is not None:
        delta = probability(delta, "delta", "bound")
    if epsilon is not None:
        epsilon = real(epsilon, "epsilon", "bound", lo=0.0, allowed="epsilon >= 0")
    record: dict[str, Any] = {"method": method, "mean_K": float(dist.mean)}
    try:
        profile = selection_bound(dist, base, method)
    except NotApplicableError as exc:
        return {**record, "epsilon": None, "delta": None, "eps1": None, "log_ratio": None, "reason": str(exc)}
    if delta is not None:
        record.update(epsilon=float(profile.epsilon(delta)), delta=delta)
    else:
        record.update(epsilon=epsilon, delta=float(profile.delta(epsilon)))
    ratio = getattr(profile, "ratio", None)
    record["eps1"] = None if ratio is None or ratio.eps1 is None else float(ratio.eps1)
    record["log_ratio"] = None if ratio is None else float(ratio.log_ratio)
    if ratio is not None:
        record["theorem"] = ratio.theorem
        if ratio.certificate is not None:
            record["certificate"] = {"cells": ratio.certificate.cells, "converged": ratio.certificate.converged,
                                     "attained_log_ratio": ratio.certificate.lower}
    else:
        record["theorem"] = getattr(profile, "theorem", None)
    record["vacuous"] = not math.isfinite(record["epsilon"]) or record["delta"] >= 1.0
    return record
