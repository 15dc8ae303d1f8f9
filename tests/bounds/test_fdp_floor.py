"""``fdp``'s floor, and ``best`` deferring ``fdp`` to it.

``best`` builds its ``fdp`` component lazily (:class:`symsel.bounds.api.DeferredProfile`): it asks the floor
(:func:`symsel.bounds.hockey_stick.fdp_floor`, the same recipe with the ratio attained at sampled boundary points)
first, and computes the certified supremum only where the floor does not rule ``fdp`` out. The tests check that
the floor is below the certified ``fdp`` (the skip is then exact), that ``best`` answers exactly as with ``fdp``
computed in full, and that the skip happens where the envelope is below."""

from __future__ import annotations

import numpy as np
import pytest

import symsel
from symsel.bounds import api
from symsel.bounds.hockey_stick import fdp_floor

#: laws with φ'(0) > 0 and = 0 (a fixed K), spread and concentrated, on bases with a Gaussian tail, a pure corner,
#: a finite pair and a PLD.
FLOOR_CASES = [("geometric(mean=10)", "gaussian(sigma=4)"), ("poisson(mean=10)", "gaussian(sigma=1)"),
               ("point(k=40)", "laplace(scale=1)"), ("binomial(n=20, p=1/2)", "randomized_response(eps=1, k=2)"),
               ("tnb(eta=0.5, mean=10)", "pure(eps=0.5)"),
               ("logarithmic(mean=10)", "dpsgd(q=0.1, sigma=1.0, steps=10)")]


@pytest.mark.parametrize(("law", "base"), FLOOR_CASES)
def test_the_floor_is_below_the_certified_fdp_and_close_to_it(law: str, base: str) -> None:
    dist, profile = symsel.parse_distribution(law), symsel.parse_profile(base)
    certified = symsel.bound(dist, profile, "fdp")
    floor = fdp_floor(dist, profile)
    assert floor.log_ratio <= certified.details["log_ratio"]
    assert floor.log_ratio >= certified.details["log_ratio"] - 1e-3 * max(1.0, abs(certified.details["log_ratio"]))
    top = certified.epsilon(1e-12)
    eps = np.linspace(-1.0, top, 61)
    assert np.all(np.asarray(floor.delta(eps)) <= np.asarray(certified.delta(eps)))
    for delta in (1e-3, 1e-6, 1e-12):
        assert floor.epsilon(delta) <= certified.epsilon(delta)


BEST_CASES = [("geometric(mean=10)", "gaussian(sigma=3.16)"), ("poisson(mean=10)", "gaussian(sigma=4)"),
              ("binomial(n=20, p=1/2)", "laplace(scale=1)"), ("tnb(eta=0.5, mean=10)", "pure(eps=0.5)"),
              ("logarithmic(mean=10)", "dpsgd(q=0.1, sigma=1.0, steps=10)")]


def _best_with_fdp_in_full(monkeypatch: pytest.MonkeyPatch, dist, base) -> symsel.SelectionBound:
    """``best`` with its ``fdp`` computed in full. Its ``best`` and ``fdp`` are then dropped from the cache of
    computed bounds, so that the next ``best`` is built again and its deferred ``fdp`` computes its own; the other
    components stay cached for it to reuse, as any ``best`` reuses them."""
    with monkeypatch.context() as patch:
        patch.setattr(api, "_deferred_fdp", lambda d, b: api.bound(d, b, "fdp"))
        api._computed.cache_clear()
        full = symsel.bound(dist, base, "best")
    cache = api._computed.cache
    for key in [key for key in list(cache._entries) if key[2] in ("best", "fdp")]:
        cache.pop(key)
    return full


@pytest.mark.parametrize(("law", "base"), BEST_CASES)
def test_best_with_fdp_deferred_answers_as_with_fdp_in_full(monkeypatch, law: str, base: str) -> None:
    dist, profile = symsel.parse_distribution(law), symsel.parse_profile(base)
    full = _best_with_fdp_in_full(monkeypatch, dist, profile)
    deferred = symsel.bound(dist, profile, "best")
    fdp = next(part for part in deferred.profile.parts if part.method == "fdp")
    assert isinstance(fdp.profile, api.DeferredProfile) and fdp.floor is not None
    eps = np.linspace(0.0, 1.5 * full.epsilon(1e-10), 41)
    assert np.array_equal(np.asarray(deferred.delta(eps)), np.asarray(full.delta(eps)))
    assert np.array_equal(np.asarray(deferred.log_delta(eps)), np.asarray(full.log_delta(eps)))
    for delta in (1e-3, 1e-6, 1e-10):
        assert deferred.epsilon(delta) == pytest.approx(full.epsilon(delta), rel=2e-6)
    assert deferred.max_privacy_loss == full.max_privacy_loss
    assert deferred.delta_at_infinity == full.delta_at_infinity
    assert dict(deferred.certificate) == dict(full.certificate)  # it reads fdp's own certificate: computed now
    assert dict(fdp.details) == dict(full.profile.parts[[p.method for p in full.profile.parts].index("fdp")].details)


def test_best_leaves_fdp_uncomputed_where_the_envelope_is_below_its_floor() -> None:
    """Geometric(10) on Gaussian(3.16) (bench_fast row 8a's law): fdp is 4.5 % over the envelope, so ε, δ at a few ε
    and the largest loss never compute its certified supremum; asking fdp itself does."""
    best = symsel.bound(symsel.geometric(mean=10), symsel.parse_profile("gaussian(sigma=3.17)"), "best")
    fdp = next(part for part in best.profile.parts if part.method == "fdp")
    best.epsilon(1e-6)
    best.delta(np.array([0.5, 1.0, 2.0]))
    assert best.max_privacy_loss == float("inf")
    assert "computed" not in vars(fdp.profile)
    assert fdp.epsilon(1e-6) > best.epsilon(1e-6)
    assert "computed" in vars(fdp.profile)


@pytest.mark.parametrize(("law", "base"), [("binomial(n=20, p=1/2)", "laplace(scale=1)"),
                                           ("poisson(mean=3)", "randomized_response(eps=1, k=2)")])
def test_where_fdp_wins_the_deferred_fdp_is_computed_and_gives_the_answer(monkeypatch, law: str, base: str) -> None:
    """With only the envelope beside it, ``fdp`` is below the envelope at δ = 1e-6 on these pure-DP bases (by 5e-4
    and 6e-5 in ε): the deferred component must then be computed, and ``best`` must answer as with ``fdp`` in full."""
    monkeypatch.setattr(api, "BEST_COMPONENTS", ("envelope", "fdp"))
    api._computed.cache_clear()
    try:
        dist, profile = symsel.parse_distribution(law), symsel.parse_profile(base)
        full = _best_with_fdp_in_full(monkeypatch, dist, profile)
        deferred = symsel.bound(dist, profile, "best")
        fdp = next(part for part in deferred.profile.parts if part.method == "fdp")
        envelope = next(part for part in deferred.profile.parts if part.method == "envelope")
        assert fdp.epsilon(1e-6) < envelope.epsilon(1e-6)
        assert deferred.epsilon(1e-6) == full.epsilon(1e-6) == fdp.epsilon(1e-6)
        eps = np.linspace(0.0, 1.2 * full.epsilon(1e-10), 61)
        assert np.array_equal(np.asarray(deferred.delta(eps)), np.asarray(full.delta(eps)))
        assert deferred.certificate["wins_at_delta_1e-06"] == "fdp"
    finally:  # no best of two components left in the cache for other tests
        api._computed.cache_clear()
