"""Monte Carlo audits of the selection (symsel.evidence.audit): the audited lower bound never exceeds the
exact value, and the simulated best-of-K laws match the exact laws."""

from __future__ import annotations

import numpy as np
import pytest

from symsel import distributions as dists
from symsel.errors import ParameterError
from symsel.evidence.audit import _ContinuousSampler, _FiniteSampler, audit, clopper_pearson, epsilon_from_counts
from symsel.evidence.continuous import selection_cdf
from symsel.evidence.continuous import selection_epsilon as continuous_epsilon
from symsel.evidence.exact import selection_law, selection_laws
from symsel.evidence.examples import get_example
from symsel.evidence.lower import lower_bound
from symsel.pairs.finite import FinitePair
from symsel.pairs.location import GaussianPair, LaplacePair
from symsel.profiles import GaussianProfile, zcdp


@pytest.fixture(scope="module")
def xiang():
    return get_example("xiang-example-1")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_audit_of_xiang_example_is_below_the_exact_value(xiang, seed):
    """Pure case: eps_L <= 2.9645 at 95% confidence, and the audit is informative."""
    result = audit(xiang.dist, xiang.pair, 400_000, 0.0, confidence=0.95, seed=seed)
    assert 0.5 < result.epsilon_lower <= xiang.exact_epsilon()
    assert result.n_tests == 2**4 - 2  # all subsets of {A, B, C, ⊥}


@pytest.mark.parametrize("seed", [0, 1])
def test_audit_of_the_gaussian_pair_is_below_the_exact_value(seed):
    dist, pair, delta = dists.geometric(mean=30), GaussianPair(1.0), 1e-3
    exact = float(continuous_epsilon(pair, dist, delta, dps=20))
    result = audit(dist, pair, 300_000, delta, seed=seed)
    assert 1.0 < result.epsilon_lower <= exact
    assert result.best_test.startswith("x > ")


def test_audit_of_a_searched_worst_case_is_below_its_exact_value():
    dist = dists.geometric(mean=30)
    lb = lower_bound(GaussianProfile(1.0), dist, 1e-3, budget=100)
    result = audit(dist, lb, 300_000, 1e-3, seed=0, progress=True)
    assert 1.0 < result.epsilon_lower <= lb.epsilon


def test_inverse_sampler_matches_the_exact_law():
    """The best of K draws, sampled through 1 - U^(1/K), follows phi(F(<=y)) - phi(F(<y))."""
    pair = FinitePair([0.1, 0.05, 0.6, 0.25], [0.25, 0.6, 0.05, 0.1], order=[2, 0, 3, 1])
    dist = dists.poisson(2.5)
    rng = np.random.default_rng(0)
    n = 400_000
    for side, pmf in ((0, pair.p), (1, pair.q)):
        for method in ("inverse", "direct"):
            out = _FiniteSampler(pair).sample(side, dist.rvs(n, rng), rng, method)
            freq = np.bincount(out, minlength=5) / n
            law = np.array([float(x) for x in selection_law(pmf, pair.order, dist, 30)])
            z = (freq - law) / np.sqrt(law * (1 - law) / n)
            assert np.all(np.abs(z) < 5), (method, z)


@pytest.mark.parametrize("pair", [GaussianPair(0.5), LaplacePair(1.0, 2.0)], ids=repr)
def test_continuous_sampler_matches_phi_of_the_cdf(pair):
    """P[best <= x or K = 0] = phi(F(x)) for the monotone score."""
    dist = dists.geometric(mean=5)
    rng = np.random.default_rng(1)
    n = 200_000
    for method in ("inverse", "direct"):
        x = _ContinuousSampler(pair).sample(0, dist.rvs(n, rng), rng, method)
        for t in (-1.0, 0.5, 2.0, 4.0):
            want = float(selection_cdf(pair, dist, t, 0, 20))
            got = np.mean(x <= t)
            assert abs(got - want) < 5 * np.sqrt(want * (1 - want) / n) + 1e-12


def test_zero_runs_give_bottom():
    """With P[K = 0] > 0 the audit sees ⊥ with probability phi(0) on both sides."""
    pair = FinitePair([0.3, 0.7], [0.6, 0.4])
    dist = dists.poisson(0.5)
    rng = np.random.default_rng(2)
    out = _FiniteSampler(pair).sample(0, dist.rvs(100_000, rng), rng, "inverse")
    assert np.mean(out == 2) == pytest.approx(np.exp(-0.5), abs=0.01)
    a, b = selection_laws(pair, dist, 30)
    result = audit(dist, pair, 100_000, 0.0, seed=0)
    assert result.epsilon_lower <= float(max(abs(np.log(float(x) / float(y))) for x, y in zip(a, b, strict=True)))


def test_clopper_pearson_and_eps_from_counts():
    lo, hi = clopper_pearson(np.array([0, 5, 100]), 100, 0.025)
    assert lo[0] == 0 and hi[2] == 1
    assert 0 < lo[1] < 0.05 < hi[1] < 0.12
    eps, best = epsilon_from_counts(np.array([900.0, 10.0]), np.array([100.0, 10.0]), 1000, 0.0, 0.01)
    assert best == 0 and 0 < eps < np.log(9)


def test_many_outcomes_use_calibrated_prefix_tests():
    rng = np.random.default_rng(4)
    p = rng.dirichlet(np.ones(12))
    q = rng.dirichlet(np.ones(12))
    pair = FinitePair(p.tolist(), q.tolist())
    result = audit(dists.geometric(mean=4), pair, 50_000, 1e-3, seed=0)
    a, b = selection_laws(pair, dists.geometric(mean=4), 30)
    from symsel.evidence.exact import epsilon_for_delta

    assert result.calibration_trials > 0
    assert result.epsilon_lower <= float(epsilon_for_delta(a, b, 1e-3, 30))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"trials": 0}, "trials"),
        ({"trials": 1.5}, "trials"),
        ({"delta": -0.1}, "delta"),
        ({"delta": 1.1}, "delta"),
        ({"confidence": 1.5}, "confidence"),
        ({"method": "magic"}, "method"),
        ({"pair_or_base": "nope"}, "pair_or_base"),
    ],
)
def test_bad_inputs_raise_parameter_error(xiang, kwargs, name):
    args = {"dist": xiang.dist, "pair_or_base": xiang.pair, "trials": 1000, "delta": 0.0} | kwargs
    with pytest.raises(ParameterError) as info:
        audit(**args)
    assert info.value.name == name


def test_a_profile_is_audited_through_its_dominating_pair():
    """GaussianProfile(sigma=1) stands for N(1,1) vs N(0,1): the same simulation, the same number."""
    dist = dists.geometric(mean=30)
    by_profile = audit(dist, GaussianProfile(1.0), 20_000, 1e-3, seed=5)
    by_pair = audit(dist, GaussianPair(1.0), 20_000, 1e-3, seed=5)
    assert by_profile.epsilon_lower == by_pair.epsilon_lower and by_profile.best_test == by_pair.best_test


def test_a_profile_without_a_pair_is_refused():
    with pytest.raises(ParameterError) as info:
        audit(dists.geometric(mean=30), zcdp(0.1), 1000, 1e-3)
    assert info.value.name == "pair_or_base" and info.value.value == "zcdp(rho=0.1)"
