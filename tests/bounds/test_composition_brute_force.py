"""``symsel.bound(law, base, "composition")`` at small supports against a brute-force exact composition written
here: all k-tuples of outcomes of a finite pair, product masses at 40 digits, the
larger of both directions, mixed over K with the law's pmf computed here (binomial: math.comb); K = 0 contributes
the identity pair's δ(ε) = [1 − e^ε]_+. On finite pairs the composition bound is exact, so symsel must be within
−1e-12 / +1e-9 of it. Gaussian bases: the μ√k-GDP closed form at 50 digits, mixed the same way."""

from __future__ import annotations

import itertools
import math

import mpmath
import pytest
from reference_profiles import gdp_delta_mp

import symsel

EPSILONS = (-0.4, 0.0, 0.2, 0.7, 1.5, 3.0)

PAIRS = {
    "pair3": "pair(p=[0.5, 0.3, 0.2], q=[0.2, 0.3, 0.5])",
    "pair2_skewed": "pair(p=[0.9, 0.1], q=[0.6, 0.4])",
    "pair3_uneven": "pair(p=[0.05, 0.15, 0.8], q=[0.1, 0.45, 0.45])",
    "rr_eps1_k2": "randomized_response(eps=1, k=2)",
    "rr_eps0.5_k3": "randomized_response(eps=0.5, k=3)",
    "rr_eps2_k4": "randomized_response(eps=2, k=4)",
}


def masses(spec: str) -> tuple[list[mpmath.mpf], list[mpmath.mpf]]:
    """The pair's two distributions, from the spec's numbers (randomized response: Warner's, written here)."""
    name, _, args = spec.partition("(")
    if name == "pair":
        p, q = args.rstrip(")").split("], q=")
        return ([mpmath.mpf(x) for x in p.removeprefix("p=[").split(",")],
                [mpmath.mpf(x) for x in q.strip("[]").split(",")])
    values = dict(part.strip().split("=") for part in args.rstrip(")").split(","))
    eps, k = mpmath.mpf(values["eps"]), int(values["k"])
    top, other = mpmath.exp(eps) / (mpmath.exp(eps) + k - 1), 1 / (mpmath.exp(eps) + k - 1)
    one = [top] + [other] * (k - 1)  # the true answer is outcome 0 under one input, outcome 1 under the other
    two = [other, top] + [other] * (k - 2)
    return one, two


def product_delta(p: list, q: list, k: int, eps: float) -> mpmath.mpf:
    """Two-sided δ(ε) of the k-fold product, every k-tuple of outcomes enumerated (k = 0: the identity)."""
    g = mpmath.exp(mpmath.mpf(eps))
    one, two = [], []
    for outcome in itertools.product(range(len(p)), repeat=k):
        a, b = mpmath.fprod(p[i] for i in outcome), mpmath.fprod(q[i] for i in outcome)
        one.append(max(a - g * b, 0))
        two.append(max(b - g * a, 0))
    return max(mpmath.fsum(one), mpmath.fsum(two))


def binomial_pmf(n: int, p: float) -> list[mpmath.mpf]:
    pm = mpmath.mpf(p)
    return [math.comb(n, k) * pm ** k * (1 - pm) ** (n - k) for k in range(n + 1)]


def check(value: float, exact: mpmath.mpf, what) -> None:
    assert float(exact) - 1e-12 <= value <= float(exact) + 1e-9, (what, value, float(exact))


def test_the_brute_force_itself() -> None:
    """Randomized response ε: one run is ε-DP with δ(0) = (e^ε − 1)/(e^ε + k − 1); k runs are kε-DP."""
    with mpmath.workdps(40):
        p, q = masses("randomized_response(eps=1, k=3)")
        assert product_delta(p, q, 1, 0.0) == pytest.approx(float((mpmath.e - 1) / (mpmath.e + 2)), rel=1e-14)
        assert product_delta(p, q, 3, 3.0) < 1e-35 < product_delta(p, q, 3, 2.99)
        assert product_delta(p, q, 0, -0.4) == pytest.approx(1 - math.exp(-0.4), rel=1e-14)


@pytest.mark.parametrize("name", list(PAIRS))
def test_fixed_runs_on_finite_pairs_are_the_exact_product(name) -> None:
    spec = PAIRS[name]
    base = symsel.parse_profile(spec)
    with mpmath.workdps(40):
        p, q = masses(spec)
        for k in range(1, 7 if len(p) <= 3 else 6):
            result = symsel.bound(symsel.point(k), base, "composition")
            for eps in EPSILONS:
                check(float(result.delta(eps)), product_delta(p, q, k, eps), (k, eps))


@pytest.mark.parametrize("name", ["pair3", "pair2_skewed", "rr_eps0.5_k3", "rr_eps2_k4"])
@pytest.mark.parametrize(("n", "prob"), [(1, 0.4), (3, 0.5), (5, 0.2), (6, 0.9)])
def test_binomial_runs_on_finite_pairs_are_the_exact_mixture(name, n, prob) -> None:
    spec = PAIRS[name]
    base = symsel.parse_profile(spec)
    result = symsel.bound(symsel.parse_distribution(f"binomial(n={n}, p={prob})"), base, "composition")
    with mpmath.workdps(40):
        p, q = masses(spec)
        if len(p) ** n > 2000:
            n_eps = EPSILONS[1:4]
        else:
            n_eps = EPSILONS
        pmf = binomial_pmf(n, prob)
        for eps in n_eps:
            exact = mpmath.fsum(pmf[k] * product_delta(p, q, k, eps) for k in range(n + 1))
            check(float(result.delta(eps)), exact, eps)


@pytest.mark.parametrize("sigma", [0.7, 2.0])
@pytest.mark.parametrize("law", ["point(k=1)", "point(k=5)", "binomial(n=4, p=0.5)", "binomial(n=6, p=0.1)"])
def test_gaussian_runs_are_the_gdp_mixture(sigma, law) -> None:
    """k runs of a Gaussian of noise σ are (√k/σ)-GDP; the law mixes them (K = 0: [1 − e^ε]_+)."""
    dist = symsel.parse_distribution(law)
    result = symsel.bound(dist, symsel.parse_profile(f"gaussian(sigma={sigma})"), "composition")
    if law.startswith("point"):
        pmf = {int(law[8:-1]): mpmath.mpf(1)}
    else:
        n, prob = law.removeprefix("binomial(n=").rstrip(")").split(", p=")
        pmf = dict(enumerate(binomial_pmf(int(n), float(prob))))
    with mpmath.workdps(50):
        for eps in EPSILONS:
            exact = mpmath.fsum(w * (max(0, 1 - mpmath.exp(eps)) if k == 0 else gdp_delta_mp(math.sqrt(k) / sigma, eps))
                                for k, w in pmf.items())
            value = float(result.delta(eps))
            assert float(exact) * (1 - 1e-12) - 1e-15 <= value <= float(exact) * (1 + 1e-9) + 1e-15, (eps, value)
