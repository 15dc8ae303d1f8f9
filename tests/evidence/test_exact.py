"""Exact selection laws and divergences on finite pairs (symsel.evidence.exact).

Reference values come from independent computations: exact rational arithmetic over all
k-tuples of outcomes, mixtures of fixed-k laws written with ``math.comb``, direct sums, and
bisection on the profile.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy

from symsel import distributions as dists
from symsel.errors import ParameterError
from symsel.evidence.exact import (
    epsilon_for_delta,
    epsilon_for_delta_float,
    hockey_stick,
    hockey_stick_float,
    profile_delta,
    profile_delta_float,
    renyi,
    renyi_float,
    selection_delta,
    selection_epsilon,
    selection_epsilon_float,
    selection_law,
    selection_law_float,
    selection_laws,
    selection_renyi,
)
from symsel.pairs.finite import FinitePair


@pytest.fixture(autouse=True)
def _reference_precision():
    """Reference arithmetic in the tests runs at 80 digits (the code sets its own precision)."""
    with mpmath.workdps(80):
        yield


GEOM = dists.geometric(gamma=sympy.Rational(1, 1000))
DISTS = [
    dists.point(1), dists.point(4), GEOM, dists.geometric(mean=30), dists.tnb(0.5, gamma=0.01),
    dists.logarithmic(gamma=0.05),
    dists.poisson(7), dists.binomial(5, 0.3), dists.truncated(dists.poisson(3), 6), dists.two_point(5, 0.25),
]


def brute_force_point_law(pmf: list[Fraction], order: list[int], k: int) -> list[Fraction]:
    """Law of the best of k i.i.d. draws, enumerating all n^k tuples (exact rationals)."""
    rank = {o: r for r, o in enumerate(order)}
    law = [Fraction(0)] * len(pmf)
    for tup in itertools.product(range(len(pmf)), repeat=k):
        prob = Fraction(1)
        for y in tup:
            prob *= pmf[y]
        law[max(tup, key=lambda y: rank[y])] += prob
    return law


def random_pmf(rng: np.random.Generator, n: int) -> list[Fraction]:
    raw = [int(x) for x in rng.integers(1, 1000, n)]
    total = sum(raw)
    return [Fraction(r, total) for r in raw]


# --------------------------------------------------------------------- selection law
@pytest.mark.parametrize("dist", DISTS, ids=lambda d: d.spec)
def test_law_sums_to_one_at_50_digits(dist):
    """A is a probability law on the outcomes plus ⊥: its masses sum to 1."""
    rng = np.random.default_rng(1)
    pmf = [1e-30, *rng.dirichlet(np.ones(5)).tolist()]
    pmf = [Fraction(x).limit_denominator(10**40) for x in pmf]
    pmf = [x / sum(pmf) for x in pmf]
    order = rng.permutation(len(pmf)).tolist()
    law = selection_law(pmf, order, dist, 50)
    with mpmath.workdps(60):
        assert abs(mpmath.fsum(law) - 1) < mpmath.mpf(10) ** -48
        assert all(x >= 0 for x in law)
        assert abs(law[-1] - dist.phi_mp(0, 60)) < mpmath.mpf(10) ** -48


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_point_law_equals_enumeration_of_k_tuples(k):
    """For K = k fixed, A is the law of the best of k draws: enumerate all n^k tuples."""
    rng = np.random.default_rng(k)
    pmf = random_pmf(rng, 4)
    order = rng.permutation(4).tolist()
    expected = brute_force_point_law(pmf, order, k)
    law = selection_law(pmf, order, dists.point(k), 50)
    for got, want in zip(law[:-1], expected, strict=True):
        assert abs(got - mpmath.mpf(want.numerator) / want.denominator) < mpmath.mpf(10) ** -45
    assert law[-1] == 0


def test_binomial_law_is_the_mixture_of_fixed_k_laws():
    """A random K mixes the fixed-k laws with weights P[K = k] (binomial pmf via math.comb)."""
    rng = np.random.default_rng(7)
    pmf = random_pmf(rng, 3)
    order = [2, 0, 1]
    n, p = 4, Fraction(3, 10)
    expected = [Fraction(0)] * 3
    for k in range(1, n + 1):
        weight = math.comb(n, k) * p**k * (1 - p) ** (n - k)
        for i, v in enumerate(brute_force_point_law(pmf, order, k)):
            expected[i] += weight * v
    law = selection_law(pmf, order, dists.binomial(n, sympy.Rational(3, 10)), 50)
    for got, want in zip(law, [*expected, (1 - p) ** n], strict=True):
        assert abs(got - mpmath.mpf(want.numerator) / want.denominator) < mpmath.mpf(10) ** -45


@pytest.mark.parametrize("position", ["top", "bottom", "middle"])
def test_tiny_mass_has_no_cancellation(position):
    """A mass of 1e-40 is resolved to full relative precision wherever it sits in the order:
    compare with (a + s)^5 - a^5 in exact rationals."""
    s = Fraction(1, 10**40)
    rest = (1 - s) / 3
    pmf = [s, rest, rest, rest]
    order = {"top": [1, 2, 3, 0], "bottom": [0, 1, 2, 3], "middle": [1, 0, 2, 3]}[position]
    below = order.index(0)
    a = rest * below
    want = (a + s) ** 5 - a**5
    law = selection_law(pmf, order, dists.point(5), 30)
    with mpmath.workdps(40):
        ref = mpmath.mpf(want.numerator) / want.denominator
        assert abs(law[0] / ref - 1) < mpmath.mpf(10) ** -28


@pytest.mark.parametrize("dist", DISTS, ids=lambda d: d.spec)
def test_float_path_agrees_with_mpmath(dist):
    """The float64 law (integral form where the difference cancels) matches mpmath to 1e-10,
    tiny masses included."""
    rng = np.random.default_rng(3)
    for _ in range(3):
        pmf = rng.dirichlet(np.ones(6) * 0.3)
        pmf[rng.integers(0, 6)] = 1e-13
        pmf[rng.integers(0, 6)] = 1e-250
        pmf = pmf / pmf.sum()
        order = rng.permutation(6)
        got = selection_law_float(pmf, order, dist)
        want = np.array([float(x) for x in selection_law(pmf.tolist(), order.tolist(), dist, 30)])
        mask = want > 1e-290
        np.testing.assert_allclose(got[mask], want[mask], rtol=1e-10, atol=0)
        assert np.all(got[~mask] < 1e-280)


def test_selection_laws_of_a_pair_and_swapping():
    """``selection_laws`` gives both sides; swapping the pair swaps the laws."""
    pair = FinitePair(["0.2", "0.3", "0.5"], ["0.5", "0.3", "0.2"], order=[1, 2, 0])
    a, b = selection_laws(pair, dists.poisson(2), 30)
    b2, a2 = selection_laws(pair.swapped(), dists.poisson(2), 30)
    assert a == a2 and b == b2


# --------------------------------------------------------------------- divergences
P = ["0.1", "0.2", "0.3", "0.4"]
R = ["0.25", "0.25", "0.4", "0.1"]


def test_hockey_stick_basic_facts():
    """H at eps = 0 is total variation; for eps < 0 it is at least 1 - e^eps; it decreases."""
    tv = sum(abs(mpmath.mpf(a) - mpmath.mpf(b)) for a, b in zip(P, R, strict=True)) / 2
    assert abs(hockey_stick(P, R, 0, 40) - tv) < mpmath.mpf(10) ** -38
    assert hockey_stick(P, R, -0.5, 40) >= 1 - mpmath.exp(-0.5)
    values = [hockey_stick(P, R, e, 30) for e in np.linspace(-1, 2, 13)]
    assert all(x >= y for x, y in itertools.pairwise(values))
    assert hockey_stick(P, R, 3, 30) == 0  # max log-ratio is log 4


def test_profile_delta_is_the_max_of_both_directions():
    for e in (0.0, 0.3, 1.0):
        assert profile_delta(P, R, e, 30) == max(hockey_stick(P, R, e, 30), hockey_stick(R, P, e, 30))


@pytest.mark.parametrize("delta", [0.3, 0.05, 1e-3, 1e-9])
def test_epsilon_for_delta_inverts_the_profile(delta):
    """The closed form agrees with bisection on the two-sided profile."""
    eps = epsilon_for_delta(P, R, delta, 40)
    with mpmath.workdps(40):
        lo, hi = mpmath.mpf(0), mpmath.mpf(5)
        d = mpmath.mpf(repr(delta))  # floats are read by their decimal representation
        for _ in range(140):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if profile_delta(P, R, mid, 40) > d else (lo, mid)
        assert abs(eps - hi) < mpmath.mpf(10) ** -35
    if eps > 0:
        assert abs(profile_delta(P, R, eps, 40) - mpmath.mpf(repr(delta))) < mpmath.mpf(10) ** -36


def test_epsilon_for_delta_edge_cases():
    """delta = 0 -> max log-ratio; R = 0 < P with mass above delta -> inf; below -> finite;
    identical laws -> 0; delta = 1 -> 0."""
    assert abs(epsilon_for_delta(P, R, 0, 30) - mpmath.log(4)) < mpmath.mpf(10) ** -28
    p, r = ["0.5", "0.5", "0"], ["0.4", "0.5", "0.1"]
    assert epsilon_for_delta(p, r, 0, 30) == mpmath.inf
    p2, r2 = ["0.01", "0.49", "0.5"], ["0", "0.5", "0.5"]
    assert epsilon_for_delta(p2, r2, 0.005, 30) == mpmath.inf
    assert epsilon_for_delta(p2, r2, 0.02, 30) < mpmath.inf
    assert epsilon_for_delta(P, P, 0, 30) == 0
    assert epsilon_for_delta(P, R, 1, 30) == 0
    assert epsilon_for_delta_float(p2, r2, 0.005) == math.inf


def test_epsilon_for_delta_with_infinite_loss_mass_below_delta_is_the_closed_form():
    """P = (0.2, 0.6, 0.2), R = (0.7, 0.3, 0), δ = 0.3: the outcome with R = 0 always counts (0.2), the second from
    ε < log 2, so ``H(ε) = 0.2 + 0.6 − 0.3 e^ε = 0.3`` at ``ε = log(5/3)`` (by hand; the direct sum is checked here)."""
    p, r = ["0.2", "0.6", "0.2"], ["0.7", "0.3", "0"]
    with mpmath.workdps(50):
        want = mpmath.log(mpmath.mpf(5) / 3)
        terms = [mpmath.mpf(a) - mpmath.exp(want) * mpmath.mpf(b) for a, b in zip(p, r, strict=True)]
        direct = sum(max(mpmath.mpf(0), term) for term in terms)
        assert abs(direct - mpmath.mpf("0.3")) < mpmath.mpf(10) ** -45
        assert abs(epsilon_for_delta(p, r, "0.3", 50, two_sided=False) - want) < mpmath.mpf(10) ** -45
    assert epsilon_for_delta_float(p, r, 0.3, two_sided=False) == pytest.approx(float(want), rel=1e-14)


def test_renyi_against_direct_sums():
    for lam in (1.5, 2, 7):
        want = math.log(sum(float(a) ** lam * float(b) ** (1 - lam) for a, b in zip(P, R, strict=True))) / (lam - 1)
        assert float(renyi(P, R, lam, 30)) == pytest.approx(want, rel=1e-13)
        assert renyi_float(P, R, lam) == pytest.approx(want, rel=1e-13)
    assert abs(renyi(P, R, math.inf, 30) - mpmath.log(4)) < mpmath.mpf(10) ** -28
    assert renyi(P, R, "inf", 30) == renyi(P, R, math.inf, 30)
    assert renyi(["0.5", "0.5"], ["1", "0"], 2, 30) == mpmath.inf
    orders = [1.1, 2, 5, 20, math.inf]
    values = [renyi(P, R, o, 30) for o in orders]
    assert all(x <= y for x, y in itertools.pairwise(values))


def test_float_divergences_agree_with_mpmath():
    rng = np.random.default_rng(5)
    for _ in range(5):
        p, r = rng.dirichlet(np.ones(7)), rng.dirichlet(np.ones(7))
        for e in (-0.2, 0.0, 0.7):
            assert hockey_stick_float(p, r, e) == pytest.approx(float(hockey_stick(p.tolist(), r.tolist(), e, 30)),
                                                                rel=1e-12, abs=1e-16)
            assert profile_delta_float(p, r, e) == pytest.approx(float(profile_delta(p.tolist(), r.tolist(), e, 30)),
                                                                 rel=1e-12, abs=1e-16)
        for d in (0, 1e-6, 0.01):
            assert epsilon_for_delta_float(p, r, d) == pytest.approx(
                float(epsilon_for_delta(p.tolist(), r.tolist(), d, 30)), rel=1e-11, abs=1e-13)


# --------------------------------------------------------------------- conveniences
def test_selection_conveniences_are_consistent():
    pair = FinitePair(["0.1", "0.6", "0.3"], ["0.3", "0.6", "0.1"], order=[1, 0, 2])
    eps = selection_epsilon(pair, dists.geometric(mean=5), 1e-3, 40)
    assert abs(selection_delta(pair, dists.geometric(mean=5), eps, 40) - mpmath.mpf("1e-3")) < mpmath.mpf(10) ** -35
    assert selection_epsilon_float(pair, dists.geometric(mean=5), 1e-3) == pytest.approx(float(eps), rel=1e-12)
    geo = dists.geometric(mean=5)
    assert selection_renyi(pair, geo, math.inf, 30) == selection_epsilon(pair, geo, 0, 30)


def test_point_one_selection_is_the_base_mechanism():
    """K = 1: the selection releases the base output, whatever the order."""
    pair = FinitePair(P, R, order=[3, 1, 0, 2])
    assert abs(selection_epsilon(pair, dists.point(1), 0.01, 40) - epsilon_for_delta(P, R, 0.01, 40)) < 1e-35


def test_monotone_order_sorts_by_likelihood_ratio():
    pair = FinitePair(P, R)
    assert pair.monotone_order() == (0, 2, 1, 3)  # ratios 0.4, 0.8, 0.75, 4
    pair2 = FinitePair(["0.5", "0.5", "0"], ["0", "0.5", "0.5"])
    assert pair2.monotone_order() == (2, 1, 0)


# --------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"p": [0.5, 0.6], "q": [0.5, 0.5]}, "p"),
        ({"p": [0.5, 0.5], "q": [1.2, -0.2]}, "q"),
        ({"p": [0.5, 0.5], "q": [0.2, 0.3, 0.5]}, "q"),
        ({"p": [0.5, 0.5], "q": [0.5, 0.5], "order": [0, 0]}, "order"),
        ({"p": [0.5, 0.5], "q": [0.5, 0.5], "order": [0, 2]}, "order"),
        ({"p": [0.5, 0.5], "q": [0.5, 0.5], "order": [0]}, "order"),
        ({"p": [], "q": []}, "p"),
        ({"p": [0.5, float("nan")], "q": [0.5, 0.5]}, "p"),
        ({"p": "ab", "q": [0.5, 0.5]}, "p"),
    ],
)
def test_bad_pairs_raise_parameter_error(kwargs, name):
    with pytest.raises(ParameterError) as info:
        FinitePair(**kwargs)
    assert info.value.name == name
    assert name in str(info.value)


def test_bad_divergence_inputs_raise_parameter_error():
    with pytest.raises(ParameterError, match="delta"):
        epsilon_for_delta(P, R, 1.5)
    with pytest.raises(ParameterError, match="delta"):
        epsilon_for_delta(P, R, -0.1)
    with pytest.raises(ParameterError, match="delta"):
        epsilon_for_delta_float(P, R, 2.0)
    with pytest.raises(ParameterError, match="order"):
        renyi(P, R, 1.0)
    with pytest.raises(ParameterError, match="order"):
        renyi_float(P, R, 0.5)
    with pytest.raises(ParameterError, match="r"):
        hockey_stick(P, R[:3], 0.0)
    with pytest.raises(ParameterError, match="dps"):
        hockey_stick(P, R, 0.0, dps=2)
    with pytest.raises(ParameterError, match="pmf"):
        selection_law([0.5, 0.6], None, dists.point(2))
    with pytest.raises(ParameterError, match="order"):
        selection_law([0.5, 0.5], [1, 1], dists.point(2))
