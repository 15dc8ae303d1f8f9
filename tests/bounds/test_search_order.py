"""The order in which ``best`` asks its components for ``ε``: for a fixed ``K`` with a large envelope, ``interval``
first, so that the envelope's root search becomes one evaluation (:data:`symsel.bounds.api.FIXED_K_SEARCH_ORDER`),
except on a base known by a PLD (DP-SGD), where ``interval``'s evaluations cost most and its search starts from the
envelope's ``ε``.

Only the work may depend on the order: the answer is the smallest component's ``ε``, each asked by name, to
``interval``'s search tolerance (a search started from another point stops at another checked point within it)."""

from __future__ import annotations

import math

import pytest

import symsel
from symsel.bounds import api
from symsel.bounds.interval import SEARCH_RTOL, SEARCH_XTOL

CASES = [("point(k=40)", "gaussian(sigma=4)"), ("point(k=3)", "gaussian(sigma=2)"), ("point(k=40)", "laplace(scale=1)")]


def _envelope_searches(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every full root search of an envelope profile (``EnvelopeProfile.epsilon``), recorded."""
    from symsel.bounds.envelope import EnvelopeProfile

    calls: list[float] = []
    original = EnvelopeProfile.epsilon

    def counted(self, delta: float) -> float:
        calls.append(delta)
        return original(self, delta)

    monkeypatch.setattr(EnvelopeProfile, "epsilon", counted)
    return calls


@pytest.mark.parametrize(("law", "base"), CASES)
def test_a_fixed_k_with_a_large_envelope_asks_interval_first(monkeypatch, law: str, base: str) -> None:
    dist, profile = symsel.parse_distribution(law), symsel.parse_profile(base)
    best = symsel.bound(dist, profile, "best")
    envelope = next(part for part in best.profile.parts if part.method == "envelope")
    assert envelope.details["terms"] >= api.FIXED_K_COSTLY_TERMS
    assert best.profile._search_order() == api.FIXED_K_SEARCH_ORDER
    searches = _envelope_searches(monkeypatch)
    answer = best.epsilon(1e-6)
    assert searches == []  # the envelope was evaluated at interval's ε, not searched
    by_name = {m: symsel.bound(dist, profile, m).epsilon(1e-6) for m in best.details["components"].split(", ")}
    # each answer a checked point within the interval search's tolerance above the same crossing
    assert math.isclose(answer, min(by_name.values()), rel_tol=SEARCH_RTOL, abs_tol=SEARCH_XTOL)
    assert min(by_name, key=by_name.get) == "interval"


def test_a_weak_run_and_a_spread_law_keep_the_usual_order(monkeypatch) -> None:
    """σ = 40: the envelope is small (about 3,900 terms) and a close start for ``interval``; a geometric law: the
    envelope wins. Both search the envelope first, as before."""
    weak = symsel.bound(symsel.parse_distribution("point(k=40)"), symsel.parse_profile("gaussian(sigma=40)"), "best")
    spread = symsel.bound(symsel.parse_distribution("geometric(mean=30)"), symsel.parse_profile("gaussian(sigma=4)"),
                          "best")
    assert weak.profile._search_order() == api.COST_ORDER
    assert spread.profile._search_order() == api.COST_ORDER
    searches = _envelope_searches(monkeypatch)
    weak.epsilon(1e-6)
    assert searches == [1e-6]


def test_a_fixed_k_on_a_dpsgd_run_searches_the_envelope_first() -> None:
    """On DP-SGD (a base known by a PLD) a fixed ``K`` with a large envelope keeps the usual order: ``interval``'s
    search starts from the envelope's ``ε`` and evaluates its pairs fewer times than from the closed forms' (the
    fixed-``K`` order, forced here); both answers are the smallest component's ``ε`` within the search's tolerance."""
    from symsel.bounds import interval_pairs

    dist, profile = symsel.parse_distribution("point(k=10)"), symsel.parse_profile(
        "dpsgd(q=0.01, sigma=1.1, steps=1000)")
    best = symsel.bound(dist, profile, "best")
    envelope = next(part for part in best.profile.parts if part.method == "envelope")
    assert envelope.details["terms"] >= api.FIXED_K_COSTLY_TERMS
    assert best.profile._search_order() == api.COST_ORDER
    interval = next(part for part in best.profile.parts if part.method == "interval").profile
    assert isinstance(interval, interval_pairs.PairIntervalProfile)
    usual = best.epsilon(1e-6)
    usual_evaluations = len(interval._pair_cache)
    interval._pair_cache.clear()
    interval._cache.clear()
    best.profile._search_order = lambda: api.FIXED_K_SEARCH_ORDER  # the closed forms first, as on other bases
    forced = best.epsilon(1e-6)
    assert usual_evaluations < len(interval._pair_cache)
    by_name = {m: symsel.bound(dist, profile, m).epsilon(1e-6) for m in best.details["components"].split(", ")}
    for answer in (usual, forced):
        assert math.isclose(answer, min(by_name.values()), rel_tol=SEARCH_RTOL, abs_tol=SEARCH_XTOL)
    assert min(by_name, key=by_name.get) == "interval"
