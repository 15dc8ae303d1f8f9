"""The closed-form envelope H(t) of docs/envelope.md on an (eps1, delta1) polygon (symsel.derive.envelope).

References are independent of the closed form: a brute-force sup over u at 50 digits (grid + Brent's method on
the engine's phi' and polygon boundary), symsel's certified numeric envelope, the paper's bound (Koskela et al.
Thm 5.2 / 5.7 / Cor 5.8 through ``symsel.bound(..., "paper")``) and certified lower bounds from exact examples.
"""

from __future__ import annotations

import mpmath
import pytest
import sympy

import symsel
from symsel.derive.envelope import _brent_max, brute_force_h, envelope_checks, polygon_envelope
from symsel.derive.family import recognize
from symsel.distributions import z

LAWS = ("poisson(mean=3)", "geometric(mean=10)", "tnb(eta=0.5, gamma=0.1)", "tnb(eta=-0.5, gamma=0.1)",
        "binomial(n=20, p=0.3)")
POINTS = ((sympy.Rational(1, 2), sympy.Rational(1, 1000)), (sympy.Integer(2), sympy.Rational(1, 10)))


def _envelope(spec: str, e1: sympy.Expr, d1: sympy.Expr):
    dist = symsel.parse_distribution(spec)
    return dist, polygon_envelope(sympy.diff(dist.pgf, z), e1, d1, recognize(dist.pgf))


@pytest.mark.parametrize("spec", LAWS)
@pytest.mark.parametrize("point", POINTS, ids=("e1=0.5", "e1=2"))
def test_closed_form_matches_brute_force_and_numeric_envelope(spec, point):
    dist, pe = _envelope(spec, *point)
    assert pe is not None and pe.pieces is not None
    checks = envelope_checks(pe, dist, eps_grid=(0.2, 1.0, 3.0))
    assert [c.kind for c in checks] == ["numeric-50", "numeric"]
    assert all(c.passed for c in checks), checks


def test_binomial_interior_maximum_on_s1_and_the_start_corner():
    """Where Thm 5.7's validity condition fails, S1 holds an interior maximum and the sup reaches (delta1, 0)."""
    dist, pe = _envelope("binomial(n=20, p=0.3)", sympy.Rational(1, 100), sympy.Rational(1, 5))
    assert [p.label for p in pe.pieces] == ["end", "S2 interior", "vertex", "S1 interior", "start", "zero"]
    assert all(c.passed for c in envelope_checks(pe, dist, eps_grid=(0.5,)))


def test_poisson_s2_maximum_is_the_stated_closed_form():
    mu, t = 3, mpmath.mpf("1.0")
    e1, d1 = sympy.Rational(1, 2), sympy.Rational(1, 1000)
    _, pe = _envelope(f"poisson(mean={mu})", e1, d1)
    piece = next(p for p in pe.pieces if p.label == "S2 interior")
    assert sympy.N(piece.lo, 30) < 1 < sympy.N(piece.hi, 30)
    with mpmath.workdps(50):
        one_minus_u = (mpmath.log(t) + mpmath.mpf(0.5) - mu * mpmath.mpf(1) / 1000) / (mu * (mpmath.e ** 0.5 - 1))
        expected = mu * mpmath.exp(-mu * one_minus_u) * (1 - mpmath.e ** -0.5)
        assert abs(pe.h_mp(t) - expected) < mpmath.mpf(10) ** -45


def test_profile_formula_is_the_approx_profile_mixture():
    """delta_Q(x) of approx(eps1, delta1) is delta1 + (1-delta1)([e^eps1 - e^x]_+ + [1 - e^(x+eps1)]_+)/(1+e^eps1)."""
    base = symsel.parse_profile("approx(eps=0.7, delta=0.01)")
    for x in (-3.0, -0.7, -0.2, 0.0, 0.4, 0.7, 2.0):
        ours = 0.01 + 0.99 * (max(mpmath.e ** 0.7 - mpmath.e ** x, 0) + max(1 - mpmath.e ** (x + 0.7), 0)) / (
            1 + mpmath.e ** 0.7)
        assert abs(float(ours) - float(base.delta(x))) < 1e-12


@pytest.mark.parametrize("spec", ("poisson(mean=3)", "tnb(eta=0.5, gamma=0.1)", "binomial(n=20, p=0.3)"))
def test_never_above_the_paper_and_above_exact_examples(spec):
    dist, pe = _envelope(spec, sympy.Rational(1, 2), sympy.Rational(1, 1000))
    base = symsel.parse_profile("approx(eps=0.5, delta=0.001)")
    paper = symsel.bound(dist, base, "paper")
    for eps in (0.3, 1.0, 2.0, 4.0):
        assert float(pe.delta_mp(eps)) <= paper.delta(eps) * (1 + 1e-12)
    sound = envelope_checks(pe, dist, eps_grid=(1.0,), delta=0.1)[-1]
    assert sound.kind == "soundness" and sound.passed and sound.agreement < 2


def test_symbolic_parameters_give_max_of_candidates():
    mu = sympy.Symbol("mu", positive=True)
    e1, d1 = sympy.symbols("varepsilon_1 delta_1", positive=True)
    pe = polygon_envelope(mu * sympy.exp(mu * (z - 1)), e1, d1, ("poisson", {"mu": mu}))
    assert pe is not None and pe.pieces is None
    assert "minima" in pe.second_order["S1"] and "maximum" in pe.second_order["S2"]
    values = {mu: 3, e1: sympy.Rational(1, 2), d1: sympy.Rational(1, 1000)}
    _, numeric = _envelope("poisson(mean=3)", sympy.Rational(1, 2), sympy.Rational(1, 1000))
    dist = symsel.parse_distribution("poisson(mean=3)")
    for t in ("0.3", "1.0", "1.9"):
        assert abs(pe.h_mp(t, values=values) - numeric.h_mp(t)) < mpmath.mpf(10) ** -45
        assert abs(pe.h_mp(t, values=values) - brute_force_h(lambda u: dist.dphi_mp(u, 65), "0.5", "0.001", t)) < 1e-40
    assert pe.latex().startswith(r"\max")


def test_none_when_sympy_cannot_close_it():
    dist = symsel.parse_distribution("beta_binomial(n=20, a=2, b=3)")
    assert polygon_envelope(sympy.diff(dist.pgf, z), sympy.Rational(1, 2), sympy.Rational(1, 1000)) is None


M = mpmath.mpf
BRENT_CASES = [  # g, bracket, its maximum (exact), evaluations allowed; numbers read at 65 digits
    (lambda x: x * mpmath.exp(-x), ("0.97", "1.01"), lambda: mpmath.exp(-1), 20),  # inside
    (mpmath.sin, ("1.5", "1.65"), lambda: M(1), 20),
    (lambda x: -((x - M("0.2") - M("1e-8")) ** 2), ("0.2", "0.22"), lambda: M(0), 40),  # inside, by an end
    (lambda x: -x, ("0.2", "0.22"), lambda: M("-0.2"), 6),  # at an end
    (lambda x: x**3, ("0.2", "0.22"), lambda: M("0.22") ** 3, 6),
]


@pytest.mark.parametrize(("g", "bracket", "exact", "evaluations"), BRENT_CASES)
def test_brent_max_reaches_the_maximum_to_50_digits(g, bracket, exact, evaluations):
    """``_brent_max`` (the brute force's refinement): the maximum of a unimodal function inside a bracket, next to
    one of its ends or at an end, to 1e-48 at 65 digits, within the stated number of evaluations."""
    calls = []

    def counted(x):
        calls.append(x)
        return g(x)

    with mpmath.workdps(65):
        found = _brent_max(counted, M(bracket[0]), M(bracket[1]), 50)
        assert abs(found - exact()) <= M(10) ** -48, mpmath.nstr(found - exact(), 5)
    assert len(calls) <= evaluations
