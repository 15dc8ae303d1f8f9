"""Family recognition: the law of K (its PGF) decides which closed forms apply, not how it was typed
(the Distribution design: one PGF per law). Each typed constructor is compared with a user PGF/pmf of the same
law written by hand here; laws outside the four families must give ``None``."""

from __future__ import annotations

import pytest
import sympy

from symsel.distributions import Family, recognize_family
from symsel.errors import ParameterError
from symsel.spec import parse_distribution

SAME_LAW = [
    ("poisson(mean=10)", "pgf(expr='exp(10*(z-1))')", "poisson", {"mu": 10}),
    ("poisson(mean=10)", "pgf(expr='exp(mu*z)/exp(mu)', mu=10)", "poisson", {"mu": 10}),
    ("poisson(mean=10)", "pmf(expr='exp(-10)*10^k/factorial(k)')", "poisson", {"mu": 10}),
    ("poisson(mean=3)", "mixture(components=[(1, poisson(mean=3))])", "poisson", {"mu": 3}),
    ("poisson(mean=3)", "compound(outer=poisson(mean=3), inner=point(k=1))", "poisson", {"mu": 3}),
    ("geometric(gamma=0.1)", "pgf(expr='0.1*z/(1-0.9*z)')", "tnb", {"eta": 1, "gamma": sympy.Rational(1, 10)}),
    ("geometric(gamma=0.1)", "pmf(expr='0.1*0.9^(k-1)', k_min=1)", "tnb", {"eta": 1, "gamma": sympy.Rational(1, 10)}),
    ("logarithmic(gamma=0.1)", "pgf(expr='log(1-0.9*z)/log(0.1)')", "tnb", {"eta": 0, "gamma": sympy.Rational(1, 10)}),
    ("tnb(eta=0, gamma=0.1)", "pgf(expr='log(1-0.9*z)/log(0.1)')", "tnb", {"eta": 0, "gamma": sympy.Rational(1, 10)}),
    ("tnb(eta=0.3, gamma=0.3)", "pgf(expr='((1-0.7*z)^(-0.3)-1)/(0.3^(-0.3)-1)')", "tnb",
     {"eta": sympy.Rational(3, 10), "gamma": sympy.Rational(3, 10)}),
    ("tnb(eta=-0.5, gamma=0.01)", "pgf(expr='(1-sqrt(1-0.99*z))/0.9')", "tnb",
     {"eta": sympy.Rational(-1, 2), "gamma": sympy.Rational(1, 100)}),
    ("binomial(n=10, p=0.3)", "pgf(expr='(0.7+0.3*z)^10')", "binomial", {"n": 10, "p": sympy.Rational(3, 10)}),
    ("binomial(n=10, p=0.3)", "pmf(expr='binomial(10,k)*0.3^k*0.7^(10-k)', k_max=10)", "binomial",
     {"n": 10, "p": sympy.Rational(3, 10)}),
    ("binomial(n=6, p=0.5)", "compound(outer=point(k=2), inner=binomial(n=3, p=0.5))", "binomial",
     {"n": 6, "p": sympy.Rational(1, 2)}),
    ("binomial(n=3, p=0.5)", "truncated(dist=binomial(n=3, p=0.5), k_max=10)", "binomial",
     {"n": 3, "p": sympy.Rational(1, 2)}),
    ("point(k=5)", "pgf(expr='z^5')", "point", {"k": 5}),
    ("point(k=5)", "binomial(n=5, p=1)", "point", {"k": 5}),
    ("point(k=5)", "pmf(expr='1', k_min=5, k_max=5)", "point", {"k": 5}),
]


@pytest.mark.parametrize(("typed", "user", "name", "params"), SAME_LAW)
def test_typed_and_user_forms_of_one_law_have_one_family(typed: str, user: str, name: str, params: dict) -> None:
    a, b = parse_distribution(typed), parse_distribution(user)
    expected = Family(name, params)
    assert a.family == expected
    assert recognize_family(b) == expected  # from the PGF itself, whatever the constructor
    assert b.family == expected
    assert b.mean == pytest.approx(a.mean, rel=1e-13)  # the law's mean, however typed


@pytest.mark.parametrize("spec", [
    "beta_binomial(n=10, a=2, b=3)",
    "two_point(L=5, s=0.5)",
    "mixture(components=[(0.5, point(k=2)), (0.5, point(k=4))])",
    "mixture(components=[(0.5, poisson(mean=2)), (0.5, poisson(mean=4))])",
    "negative_binomial(eta=2, gamma=0.3)",  # same phi' shape as the TNB, but an atom at 0
    "pgf(expr='(1-0.5*z)^(-1)/2')",  # geometric on {0, 1, ...}: not the TNB
    "truncated(dist=poisson(mean=3), k_max=60)",  # within 1e-40 of Poisson, yet not Poisson
    "truncated(dist=binomial(n=100, p=0.01), k_max=40)",
    "pmf(expr='1/1501', k_max=1500)",
])
def test_laws_outside_the_families_give_none(spec: str) -> None:
    dist = parse_distribution(spec)
    assert dist.family is None


def test_family_values() -> None:
    fam = parse_distribution("tnb(eta=0.5, gamma=0.01)").family
    assert fam.floats() == {"eta": 0.5, "gamma": 0.01}
    assert hash(fam) == hash(Family("tnb", {"eta": sympy.Rational(1, 2), "gamma": sympy.Rational(1, 100)}))
    with pytest.raises(ParameterError, match="name"):
        Family("geometric", {"gamma": 0.1})
    with pytest.raises(ParameterError, match="params"):
        Family("poisson", {"mean": 3})


def test_one_component_mixture_is_its_component() -> None:
    inner = parse_distribution("geometric(mean=30)")
    from symsel.distributions import mixture

    assert mixture([(1, inner)]) is inner
