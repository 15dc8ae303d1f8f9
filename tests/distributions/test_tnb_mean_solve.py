"""The TNB law's ``gamma`` for a given mean (``tnb(eta, mean=...)``): Newton's method in a bracket, checked against
an independent bisection at 80 digits, and on the side where the mean is at most the one asked for."""

from __future__ import annotations

import itertools

import mpmath
import pytest
import sympy

from symsel import tnb
from symsel.distributions.families import _solve_gamma_for_mean
from symsel.errors import ParameterError

ETAS = [sympy.Rational(-9, 10), sympy.Rational(-1, 2), sympy.Rational(-1, 1000), 0, sympy.Rational(1, 1000),
        sympy.Rational(1, 2), 2, 7, 1000]
MEANS = [sympy.Rational(10001, 10000), sympy.Rational(3, 2), 2, 10, sympy.Rational(314159, 1000), 1000, 10**5,
         10**8, 10**12]


def _mean(eta: mpmath.mpf, gamma: mpmath.mpf) -> mpmath.mpf:
    """E[K] of the TNB law from Papernot and Steinke's formula, written directly in gamma."""
    if eta == 0:
        return (1 / gamma - 1) / mpmath.log(1 / gamma)
    return eta * (1 - gamma) / (gamma * (1 - gamma**eta))


def _bisection(eta: mpmath.mpf, mean: mpmath.mpf) -> mpmath.mpf:
    """gamma = exp(x) by 420 halvings of x in (-2000, 0) (the mean falls as gamma grows)."""
    lo, hi = mpmath.mpf(-2000), mpmath.mpf(0)
    for _ in range(420):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _mean(eta, mpmath.exp(mid)) > mean else (lo, mid)
    return mpmath.exp(hi)


@pytest.mark.parametrize(("eta", "mean"), list(itertools.product(ETAS, MEANS)))
def test_gamma_for_the_mean_matches_a_bisection_to_sixty_digits(eta, mean):
    solved = _solve_gamma_for_mean(sympy.sympify(eta), sympy.sympify(mean), "tnb")
    with mpmath.workdps(80):
        e, m = mpmath.mpf(sympy.N(eta, 80)), mpmath.mpf(sympy.N(mean, 80))
        reference = _bisection(e, m)
        gamma = mpmath.mpf(sympy.N(solved, 80))
        assert abs(gamma / reference - 1) < mpmath.mpf(10) ** -58, (eta, mean)


@pytest.mark.parametrize("eta", [sympy.Rational(-1, 2), 0, sympy.Rational(1, 2), 3])
def test_the_law_has_the_mean_asked_for(eta):
    for mean in (sympy.Rational(11, 10), 10, 12345):
        law = tnb(eta, mean=mean)
        assert abs(float(law.mean) / float(mean) - 1) < 1e-14


def test_unreachable_means_are_refused():
    with pytest.raises(ParameterError, match="mean"):
        tnb(sympy.Rational(-1, 2), mean=sympy.Integer(10) ** 400)
