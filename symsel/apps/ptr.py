"""Tuning Generalized Propose-Test-Release by private selection (Koskela et al. §6.1, Theorem 6.1).

**Theorem 6.1** (Redberg, Zhu, Wang 2023, as restated by Koskela et al.): a proposal ``φ`` with data-dependent
privacy loss ``ε_φ(X)`` w.r.t. ``δ``, released after an ``(ε̂, δ̂)``-DP test that passes with probability at most
``δ'`` when ``ε_φ(X) > ε``, makes Generalized PTR ``(ε + ε̂, δ + δ̂ + δ')``-DP. PTR has no Rényi guarantee, so
only point-wise ``(ε, δ)`` information is available: several such guarantees of one candidate (for different
``ε``) hold at once, and their intersection is the base profile ``pointwise(points=[…])`` (docs/setting.md). Any
selection bound of :func:`symsel.bound` applies to it: Thm 5.2 (method ``paper``, the paper's §6.1 route) and the
envelope bound (Thm 4.1 per output, docs/envelope.md), which only needs the pointwise base's δ(ε).

* :func:`gen_ptr_guarantee` — Thm 6.1's one ``(ε, δ)`` pair;
* :func:`ptr_profile` — the candidate's profile from several pairs;
* :func:`ptr_tuning` — the tuning's ε at a target δ, by each method.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from symsel import validate
from symsel.errors import ParameterError

WHERE = "ptr"
Guarantee = tuple[float, float]


def gen_ptr_guarantee(epsilon: float, delta: float, test_epsilon: float, test_delta: float,
                      fail_delta: float) -> Guarantee:
    """Theorem 6.1: Generalized PTR is ``(epsilon + test_epsilon, delta + test_delta + fail_delta)``-DP.

    ``epsilon``/``delta``: the proposal's data-dependent guarantee; ``test_epsilon``/``test_delta``: the test's DP;
    ``fail_delta``: the probability the test passes although ``ε_φ(X) > epsilon``."""
    eps = validate.nonnegative(epsilon, "epsilon", WHERE) + validate.nonnegative(test_epsilon, "test_epsilon", WHERE)
    total = (validate.probability(delta, "delta", WHERE) + validate.probability(test_delta, "test_delta", WHERE)
             + validate.probability(fail_delta, "fail_delta", WHERE))
    if total > 1.0:
        raise ParameterError("delta + test_delta + fail_delta", total, "at most 1", WHERE)
    return (float(eps), float(total))


def ptr_profile(guarantees: Sequence[Guarantee]) -> Any:
    """The base profile dominating a candidate that satisfies every ``(ε_i, δ_i)`` at once (a pointwise profile)."""
    from symsel.profiles import PointwiseProfile

    if isinstance(guarantees, str | bytes) or not guarantees:
        raise ParameterError("guarantees", guarantees, "a non-empty list of (epsilon, delta) pairs", WHERE)
    return PointwiseProfile(cast(list[tuple[float, float]], [tuple(g) for g in guarantees]))  # it checks each pair


def ptr_tuning(law: Any, guarantees: Sequence[Guarantee], delta: float,
               methods: Sequence[str] = ("paper", "envelope")) -> dict[str, Any]:
    """The selection's ε at ``delta`` over candidates each satisfying ``guarantees`` (Thm 6.1 pairs), per method.

    ``law``: a Distribution or spec string (e.g. ``"geometric(mean=10)"``; §6.1 uses a geometric ``K``)."""
    from symsel.bounds import bound
    from symsel.spec import parse_distribution

    delta = validate.probability(delta, "delta", WHERE)
    dist = parse_distribution(law) if isinstance(law, str) else law
    base = ptr_profile(guarantees)
    out = {}
    for method in methods:
        b = bound(dist, base, method)
        out[method] = {"epsilon": float(b.epsilon(delta)), "theorem": b.theorem}
    return {"law": dist.spec, "base": base.spec, "delta": delta, "epsilon": out}
