"""Laws, bases and bounds pickle (a Dask or multiprocessing worker receives them by pickle), and come back the same.

References: the spec strings and numbers of the object pickled, and numpy's own generators for the samplers' draws
(the draws of a law with a seed are those of the numpy call its docstring names)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import symsel

LAWS = [
    "point(k=40)", "geometric(mean=10)", "logarithmic(mean=10)", "tnb(eta=0.5, mean=10)", "poisson(mean=10)",
    "binomial(n=40, p=1/2)", "negative_binomial(eta=2, mean=5)", "beta_binomial(n=10, a=1, b=2)",
    "two_point(L=5, s=0.5)", "pgf(expr='z**2/2 + z**3/2')", "truncated(dist=geometric(mean=30), k_max=200)",
    "mixture(components=[(0.5, poisson(mean=3)), (0.5, point(k=5))])",
    "compound(outer=poisson(mean=2), inner=logarithmic(gamma=0.1))",
]


@pytest.mark.parametrize("spec", LAWS)
def test_a_law_pickles_after_use_and_answers_the_same(spec: str) -> None:
    """After its compiled φ' and its masses have been used (cached functions that do not pickle themselves)."""
    law = symsel.parse_distribution(spec)
    u = np.array([0.1, 0.5, 0.99])
    values, mean, draws = law.dphi(u), law.mean, law.rvs(20, rng=4)
    copy = pickle.loads(pickle.dumps(law))
    assert copy.spec == law.spec and copy.mean == mean
    np.testing.assert_array_equal(copy.dphi(u), values)
    np.testing.assert_array_equal(copy.rvs(20, rng=4), draws)


@pytest.mark.parametrize(("spec", "numpy_draws"), [
    ("poisson(mean=10)", lambda rng: rng.poisson(10.0, 8)),
    ("binomial(n=40, p=1/2)", lambda rng: rng.binomial(40, 0.5, 8)),
    ("geometric(gamma=0.1)", lambda rng: rng.geometric(0.1, 8)),
    ("point(k=3)", lambda rng: np.full(8, 3)),
])
def test_the_samplers_draw_what_numpy_draws(spec: str, numpy_draws) -> None:
    law = symsel.parse_distribution(spec)
    np.testing.assert_array_equal(law.rvs(8, rng=11), numpy_draws(np.random.default_rng(11)))


@pytest.mark.parametrize("spec", ["gaussian(sigma=4)", "laplace(scale=1)", "randomized_response(eps=1, k=2)",
                                  "dpsgd(q=0.01, sigma=1.1, steps=100)"])
def test_a_base_pickles(spec: str) -> None:
    base = symsel.parse_profile(spec)
    before = float(base.delta(1.0))
    copy = pickle.loads(pickle.dumps(base))
    assert copy.spec == base.spec and float(copy.delta(1.0)) == before


@pytest.mark.parametrize(("law", "base", "method"), [
    ("geometric(mean=10)", "gaussian(sigma=4)", "best"), ("point(k=10)", "laplace(scale=1)", "interval"),
    ("tnb(eta=0.5, mean=10)", "gaussian(sigma=2)", "envelope")])
def test_a_bound_pickles_as_its_question(law: str, base: str, method: str) -> None:
    """The bound (whose certificate is read-only and whose parts hold functions) is sent as law, base and method and
    computed again on arrival: the same method, spec and ε."""
    result = symsel.bound(symsel.parse_distribution(law), symsel.parse_profile(base), method)
    eps = result.epsilon(1e-6)
    copy = pickle.loads(pickle.dumps(result))
    assert (copy.method, copy.spec) == (result.method, result.spec)
    assert copy.epsilon(1e-6) == eps
