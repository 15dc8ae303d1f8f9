"""Certified lower bounds by search over post-processings and score orders (symsel.lower)."""

from __future__ import annotations

import math
import time

import mpmath
import numpy as np
import pytest

from symsel import distributions as dists
from symsel.continuous import GaussianPair
from symsel.continuous import selection_epsilon as continuous_epsilon
from symsel.errors import ParameterError
from symsel.exact import epsilon_for_delta, profile_delta, selection_epsilon
from symsel.lower import (
    FiniteBase,
    GaussianBase,
    LaplaceBase,
    base_from_profile,
    lower_bound,
    zigzag_order,
)

GEOM30 = dists.geometric(mean=30)


def gaussian_profile(mu: float, eps: float) -> mpmath.mpf:
    """delta(eps) of N(mu,1) vs N(0,1): Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    with mpmath.workdps(40):
        m, e = mpmath.mpf(mu), mpmath.mpf(eps)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


@pytest.fixture(scope="module")
def gaussian_result():
    start = time.perf_counter()
    result = lower_bound(GaussianBase(0.25), GEOM30, 1e-6, budget=200, seed=0)
    return result, time.perf_counter() - start


def test_non_monotone_orders_beat_the_monotone_order(gaussian_result):
    """MATH.md Section 8: geometric K (mean 30), Gaussian base sigma = 4, delta = 1e-6. The
    monotone order (continuous, exact) gives ~1.236; a searched order gives ~1.78; the upper
    bound of the f-DP region method is ~1.89."""
    result, seconds = gaussian_result
    monotone_continuous = float(continuous_epsilon(GaussianPair(0.25), GEOM30, 1e-6, dps=20))
    assert monotone_continuous == pytest.approx(1.2358, abs=1e-3)
    assert result.monotone_epsilon <= monotone_continuous + 1e-12
    assert result.epsilon > monotone_continuous + 0.5
    assert result.epsilon > result.monotone_epsilon
    assert result.epsilon < 1.89
    assert result.evaluations <= 200
    assert seconds < 10


def test_reported_value_is_the_exact_value_rounded_down(gaussian_result):
    result, _ = gaussian_result
    exact = selection_epsilon(result.pair, GEOM30, 1e-6, 50)
    assert result.epsilon <= exact
    assert float(exact) - result.epsilon < 1e-14
    assert tuple(result.pair.order) == result.order


def test_the_found_mechanism_is_a_valid_gaussian_post_processing(gaussian_result):
    """The bins are a post-processing of N(0.25,1) vs N(0,1): their profile is below the
    Gaussian profile at every eps."""
    result, _ = gaussian_result
    for eps in (-0.5, 0.0, 0.1, 0.5, 1.0, 2.0):
        assert profile_delta(result.pair.p, result.pair.q, eps, 40) <= gaussian_profile(0.25, eps) + 1e-30


def test_pure_base_with_geometric_k_stays_below_three_eps():
    """Liu-Talwar: eps-DP base, geometric K -> 3 eps-DP; the search gets close to it."""
    dist = dists.geometric(gamma=1e-3)
    result = lower_bound(FiniteBase.randomized_response(1.0), dist, 0.0, budget=300, seed=1)
    assert result.epsilon <= 3.0
    assert result.epsilon > 2.95  # beats Xiang et al.'s Example 1 (2.9645)
    assert epsilon_for_delta(result.pair.p, result.pair.q, 0, 40) <= 1 + 1e-30  # still 1-DP


@pytest.mark.parametrize("k", [2, 3])
def test_fixed_k_runs_reach_k_eps(k):
    """Prop 17: for K = k fixed and a pure eps-DP base, kε is attained and never exceeded."""
    result = lower_bound(FiniteBase.randomized_response(0.5), dists.point(k), 0.0, budget=60, seed=0)
    assert result.epsilon <= k * 0.5 + 1e-12
    assert result.epsilon == pytest.approx(k * 0.5, abs=1e-12)


def test_laplace_base():
    """Laplace base with eps = 1: the selection stays below 3 eps, beats the monotone order, and
    the bins remain 1-DP."""
    result = lower_bound(LaplaceBase(scale=1.0, sensitivity=1.0), GEOM30, 1e-6, budget=200, seed=0)
    assert result.monotone_epsilon < result.epsilon <= 3.0
    assert epsilon_for_delta(result.pair.p, result.pair.q, 0, 40) <= 1 + 1e-25


def test_approximate_dp_base_and_lemma_20():
    """Four-point (eps, delta0) pair: the selection's delta is at least 1 - phi(1 - delta0)
    (Papernot & Steinke Lemma 20; ~ m delta0), so smaller deltas give eps = inf; larger ones
    stay below the (eps + 2 log(e^eps + (1-gamma) delta0/gamma)) bound of Koskela et al. Cor 5.4."""
    base = FiniteBase.approx_dp(1.0, 1e-6)
    floor = 1 - float(GEOM30.phi_mp(1 - mpmath.mpf("1e-6"), 30))
    assert lower_bound(base, GEOM30, floor / 3, budget=80).epsilon == math.inf
    result = lower_bound(base, GEOM30, 1e-3, budget=150)
    gamma = 1 / 30
    assert 2.5 < result.epsilon <= 1 + 2 * math.log(math.e + (1 - gamma) * 1e-6 / gamma)


def test_search_is_reproducible():
    a = lower_bound(GaussianBase(1.0), dists.poisson(10), 1e-5, budget=80, seed=3)
    b = lower_bound(GaussianBase(1.0), dists.poisson(10), 1e-5, budget=80, seed=3)
    assert a.epsilon == b.epsilon and a.order == b.order and a.cuts == b.cuts


@pytest.mark.parametrize("base", [GaussianBase(0.5), FiniteBase.randomized_response(1.0)], ids=repr)
@pytest.mark.parametrize("budget", [1, 5])
def test_tiny_budgets_are_respected(base, budget):
    result = lower_bound(base, GEOM30, 1e-5, budget=budget)
    assert result.evaluations <= budget
    assert result.epsilon >= 0


def test_zigzag_order():
    assert zigzag_order(1, 1) == (1, 2, 0)
    assert zigzag_order(2, 2) == (2, 3, 1, 4, 0)
    assert zigzag_order(1, 1, high_first=False) == (1, 0, 2)


class FakeGaussianProfile:
    mu = 0.5


class FakeLaplaceProfile:
    scale, sensitivity = 2.0, 1.0


class FakeFiniteProfile:
    def finite_pair(self):
        return [0.7, 0.3], [0.3, 0.7]


def test_base_from_profile_duck_types():
    assert base_from_profile(FakeGaussianProfile()) == GaussianBase(0.5)
    assert base_from_profile(FakeLaplaceProfile()) == LaplaceBase(2.0, 1.0)
    assert base_from_profile(FakeFiniteProfile()) == FiniteBase([0.7, 0.3], [0.3, 0.7])
    with pytest.raises(ParameterError) as info:
        base_from_profile(object())
    assert info.value.name == "profile"
    # a profile is accepted directly by lower_bound
    assert lower_bound(FakeFiniteProfile(), dists.point(2), 0.0, budget=30).epsilon == pytest.approx(
        2 * math.log(7 / 3), abs=1e-12)


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: lower_bound(GaussianBase(1.0), GEOM30, 1.5), "delta"),
        (lambda: lower_bound(GaussianBase(1.0), GEOM30, 1e-6, budget=0), "budget"),
        (lambda: lower_bound(GaussianBase(1.0), GEOM30, 1e-6, dps=1), "dps"),
        (lambda: GaussianBase(-1.0), "mu"),
        (lambda: LaplaceBase(0.0), "scale"),
        (lambda: FiniteBase([0.5, 0.5], [0.2, 0.2]), "q"),
        (lambda: FiniteBase([0.5, 0.5], [1.0]), "q"),
        (lambda: FiniteBase.approx_dp(1.0, 2.0), "delta"),
    ],
)
def test_bad_inputs_raise_parameter_error(make, name):
    with pytest.raises(ParameterError) as info:
        make()
    assert info.value.name == name


def test_result_improvement_property(gaussian_result):
    result, _ = gaussian_result
    assert result.improvement == pytest.approx(result.epsilon - result.monotone_epsilon)
    assert result.cuts is not None and np.all(np.diff(result.cuts) > 0)
