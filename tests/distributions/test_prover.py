"""No non-law accepted: a user PGF that is a series is proved to have non-negative coefficients everywhere (the
structural prover of symsel.distributions.user plus certified coefficients up to the polynomial part's last negative
one), and phi(1) = 1 is decided exactly. Each refused example below was accepted before (a negative coefficient
beyond z^16 that leaves phi', phi'' >= 0 on the grid, or phi(1) within 1e-25 of 1)."""

from __future__ import annotations

import pytest
import sympy

import symsel
from symsel.distributions.expressions import z
from symsel.distributions.user import MAX_CERTIFIED_DEGREE, _prove, _UnprovedError
from symsel.errors import ParameterError


@pytest.mark.parametrize(("spec", "fragment"), [
    # the example: its z^40 coefficient is 2^40 e^-2 / 40! - 1/100 < 0
    ("pgf(expr='exp(2*(z-1)) + (z**30-z**40)/100')", "P[K=40]"),
    # the same law printed a negative variance (-4.61)
    ("pgf(expr='exp(2*(z-1)) + z**30/100 - z**40/100')", "P[K=40]"),
    ("pgf(expr='exp(2*(z-1)) + (z^99 - z^100)/10^100')", "P[K=100]"),  # far behind a series
    ("pgf(expr='exp(3*(z-1)) + (z^16 - z^17)/10^7')", "P[K=17]"),  # just past the 16 coefficients checked before
    ("pgf(expr='exp(z-1) + exp(-1)*(z^50-z^51)/factorial(50)')", "P[K=51]"),  # written as a product
    ("pgf(expr='z*exp(4*(z-1)) + (z^60 - z^61)/10^40')", "P[K=61]"),
])
def test_a_negative_coefficient_behind_a_series_is_refused(spec: str, fragment: str) -> None:
    with pytest.raises(ParameterError, match="non-negative coefficients") as info:
        symsel.parse_distribution(spec)
    assert fragment in str(info.value) and "parameter expr=" in str(info.value)


@pytest.mark.parametrize("spec", [
    "pgf(expr='exp(z-1) + 10^-30*z')",  # phi(1) = 1 + 1e-30
    "pgf(expr='exp(z-1)*(1 + 10^-30)')",
    "pgf(expr='(1 + 10^-40)*0.1*z/(1-0.9*z)')",
])
def test_phi_at_one_must_be_exactly_one(spec: str) -> None:
    with pytest.raises(ParameterError, match=r"phi\(1\) = 1 \(it is 1\.0000000000000000000000000000") as info:
        symsel.parse_distribution(spec)
    assert "parameter expr=" in str(info.value)


@pytest.mark.parametrize("spec", [
    "pgf(expr='exp(z-1)*(z^2-z+1)')",  # a law ((k-1)^2/k! e^-1), but not provable by the structural rules
    "pgf(expr='exp(z-1) + (z^1500 - z^1501)/10^1000')",  # a negative coefficient beyond the certified degrees
    "pgf(expr='3/2*(1 - z/3)/(2 - z)')",  # a law (3/4 2^-k (1 - 2/3)), but (1 - z/3) changes sign in a product
])
def test_what_cannot_be_proved_is_refused(spec: str) -> None:
    with pytest.raises(ParameterError, match="could not be proved a PGF") as info:
        symsel.parse_distribution(spec)
    assert "parameter expr=" in str(info.value)


def test_the_certified_degree_is_named() -> None:
    with pytest.raises(ParameterError, match=f"<= {MAX_CERTIFIED_DEGREE}"):
        symsel.parse_distribution("pgf(expr='exp(z-1) + (z^1500 - z^1501)/10^1000')")


@pytest.mark.parametrize(("spec", "mean"), [
    ("pgf(expr='exp(mu*(z-1))', mu=10)", 10.0),
    ("pgf(expr='exp(exp(z)-E)')", float(sympy.E)),
    ("pgf(expr='z^2*(1-g)/(1-g*z)', g=9/10)", 11.0),
    ("pgf(expr='log(1-0.9*z)/log(0.1)')", 0.9 / (0.1 * float(sympy.log(10)))),
    ("pgf(expr='(exp(mu*z)-1)/(exp(mu)-1)', mu=3)", 3 * float(sympy.exp(3) / (sympy.exp(3) - 1))),
    ("pgf(expr='(1-sqrt(1-0.99*z))/0.9')", 5.5),
    ("pgf(expr='((1-0.7*z)^(-0.3)-1)/(0.3^(-0.3)-1)')", None),
    ("pgf(expr='((1 - 9*z/10)**(-1/2) - 1)/(sqrt(10) - 1)')", None),
    ("pgf(expr='exp(exp(z-1)-1)')", 1.0),
    ("pgf(expr='2^(z-1)')", float(sympy.log(2))),
    ("pgf(expr='cosh(z)/cosh(1)')", float(sympy.tanh(1))),
    ("pgf(expr='exp(1-z)*exp(2*(z-1))')", 1.0),  # the exponentials merged: exp(z - 1)
    ("pgf(expr='exp(3*(z-1)) + (z^16 - z^17)/10^10')", None),  # P[K=17] = 3^17 e^-3/17! - 1e-10 > 0
    ("pgf(expr='exp(z-1) + 10^-30*(z-1)')", None),  # P[K=0] = e^-1 - 1e-30 > 0
    ("pgf(expr='exp(z-1) - exp(-1)*z^20/factorial(20) + exp(-1)*z^21/factorial(20)')", None),  # P[K=20] = 0
    ("pmf(expr='g*(1-g)^(k-1)', k_min=1, g=0.1)", 10.0),
    ("pmf(expr='exp(-10)*10^k/factorial(k)')", 10.0),
])
def test_laws_are_still_accepted(spec: str, mean: float | None) -> None:
    law = symsel.parse_distribution(spec)
    if mean is not None:
        assert law.mean == pytest.approx(mean, rel=1e-12)
    assert law.variance >= 0


@pytest.mark.parametrize(("expr", "sign"), [
    (sympy.exp(2 * (z - 1)), 1),
    (1 / (1 - z / 2), 1),
    (sympy.log(1 - z / 2), -1),
    (sympy.sqrt(1 - z), -1),  # (1 - u)^a, 0 < a < 1, u(1) = 1 allowed
    (1 / (z - 2), -1),  # -1/2 (1 - z/2)^-1: every coefficient <= 0
    (sympy.exp(z) - 3, 1),
])
def test_the_prover_accepts(expr: sympy.Expr, sign: int) -> None:
    assert _prove(expr).sign == sign


@pytest.mark.parametrize("expr", [
    sympy.sqrt(1 + z),  # 1 + z/2 - z^2/8 + ...
    (1 - z / 2) ** sympy.Rational(3, 2),  # mixed signs
    1 / (1 - z),  # diverges at z = 1
    sympy.log(1 - z),  # diverges at z = 1
    sympy.log(1 + z),
    sympy.exp(-z),
    sympy.sqrt(z),  # not a power series
    (sympy.exp(z) - 3) ** 2,
    sympy.sin(z),
])
def test_the_prover_refuses(expr: sympy.Expr) -> None:
    with pytest.raises(_UnprovedError):
        _prove(expr)
