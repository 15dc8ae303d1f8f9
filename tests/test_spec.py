"""Spec strings: parsed without eval, with errors that point at the bad token."""

from __future__ import annotations

import math

import pytest
import sympy

from symsel import ParameterError, SpecError, parse_distribution, parse_expression
from symsel.spec import parse_profile


@pytest.mark.parametrize(
    ("spec", "mean", "p0"),
    [
        ("tnb(eta=0.5, gamma=0.01)", 0.5 * 0.99 / (0.01 * (1 - 0.01**0.5)), 0.0),
        ("geometric(mean=30)", 30.0, 0.0),
        ("poisson(mean=10)", 10.0, math.exp(-10)),
        ("binomial(n=20, p=0.5)", 10.0, 0.5**20),
        ("two_point(L=100, s=0.1)", 0.1 + 0.9 * 100, 0.0),
        ("pgf(expr='exp(mu*(z-1))', mu=10)", 10.0, math.exp(-10)),
        ("pgf(expr='(1-p+p*z)^n', n=5, p=0.25)", 1.25, 0.75**5),
        ("pmf(expr='g*(1-g)^(k-1)', k_min=1, g=0.1)", 10.0, 0.0),
        ("pmf(expr='1/3', k_min=1, k_max=3)", 2.0, 0.0),
        ("truncated(dist=point(k=3), k_max=5)", 3.0, 0.0),
        ("mixture(components=[(0.5, point(k=2)), (0.5, point(k=4))])", 3.0, 0.0),
        ("compound(outer=point(k=2), inner=poisson(mean=1.5))", 3.0, math.exp(-3)),
    ],
)
def test_specs_build_the_right_law(spec, mean, p0):
    dist = parse_distribution(spec)
    assert dist.mean == pytest.approx(mean, rel=1e-12)
    assert dist.p0 == pytest.approx(p0, rel=1e-12, abs=1e-300)


def test_spec_round_trips_through_its_label():
    for spec in ["tnb(eta=0.5, gamma=0.01)", "poisson(mean=10)", "two_point(L=100, s=0.1)",
                 "pgf(expr='exp(mu*(z-1))', mu=10)", "truncated(dist=geometric(gamma=0.1), k_max=30)"]:
        dist = parse_distribution(spec)
        again = parse_distribution(dist.spec)
        assert again.mean == pytest.approx(dist.mean, rel=1e-14)


def test_decimal_numbers_are_exact():
    dist = parse_distribution("tnb(eta=0.5, gamma=0.01)")
    gamma = next(v for s, v in dist.values.items() if str(s) == "gamma")
    assert gamma == sympy.Rational(1, 100)


def test_caret_is_power_with_python_precedence():
    assert parse_expression("2*z^3") == 2 * sympy.Symbol("z") ** 3
    assert parse_expression("(1-g)^(k-1)", ("k",), ("g",)) == (1 - sympy.Symbol("g")) ** (sympy.Symbol("k") - 1)


@pytest.mark.parametrize(
    ("spec", "fragment", "column"),
    [
        ("tnbb(eta=1, gamma=0.1)", "unknown name 'tnbb'", 1),
        ("tnb(eta=1, gama=0.1)", "no parameter 'gama'", 12),
        ("poisson(mean=__import__('os'))", "unknown name '__import__'", 14),
        ("poisson(mean=(1).__class__)", "unsupported value", None),
        ("pgf(expr='exp(mu*(z-1))+os', mu=10)", "unknown name 'os'", 15),
        ("pgf(expr='z.real')", "unsupported syntax", None),
        ("pgf(expr='open(1)')", "unknown function 'open'", None),
        ("poisson(", "syntax error", None),
        ("poisson", "expected a distribution spec", None),
        ("", "empty", None),
        ("poisson(**{'mean': 1})", "not allowed", None),
    ],
)
def test_bad_specs_point_at_the_token(spec, fragment, column):
    with pytest.raises(SpecError) as info:
        parse_distribution(spec)
    assert fragment in str(info.value)
    if column is not None:
        assert info.value.column == column
        assert f"at column {column}" in str(info.value)


def test_unknown_names_list_the_known_ones():
    with pytest.raises(SpecError, match=r"known: .*geometric.*poisson"):
        parse_distribution("poison(mean=3)")


def test_out_of_range_parameters_are_parameter_errors():
    with pytest.raises(ParameterError, match=r"parameter eta=-2 .*-1 < eta"):
        parse_distribution("tnb(eta=-2, gamma=0.5)")
    with pytest.raises(ParameterError, match="parameter expr="):
        parse_distribution("pgf(expr='z^2 + 1')")
    with pytest.raises(ParameterError, match="non-negative coefficients"):
        parse_distribution("pgf(expr='2*z - z^2')")
    with pytest.raises(ParameterError, match="summing to 1"):
        parse_distribution("pgf(expr='z/2')")
    with pytest.raises(SpecError, match=r"unknown name 'mu'.*name=value"):
        parse_distribution("pgf(expr='exp(mu*(z-1))')")


def test_profile_specs_share_the_syntax():
    profile = parse_profile("gaussian(sigma=4)")
    assert profile.delta(1.0) == pytest.approx(profile.delta(1.0))
    assert parse_profile("rdp_pure(eps=1.0, exact=True)").spec
    with pytest.raises(SpecError, match="unknown name 'gausian'"):
        parse_profile("gausian(sigma=4)")


def test_fractions_of_integers_are_exact_values():
    """g=9/10 is the exact rational 9/10 (the issue's P[K = 1] = 0 example); a zero denominator or a float
    operand is a one-line SpecError."""
    import sympy

    law = parse_distribution("pgf(expr='z^2*(1-g)/(1-g*z)', g=9/10)")
    assert {str(s): v for s, v in law.values.items()}["g"] == sympy.Rational(9, 10)
    assert law.mean == pytest.approx(11.0, rel=1e-12)  # 2 + g/(1-g)
    with pytest.raises(SpecError, match="division by zero"):
        parse_distribution("geometric(gamma=1/0)")
    with pytest.raises(SpecError, match="unsupported value"):
        parse_distribution("geometric(gamma=9/10.0)")


@pytest.mark.parametrize("formula", ["(z**1000000)**1000000", "z**9999999*z**9999999", "(z**100000)**1000"])
def test_the_degree_of_the_whole_expression_is_limited(formula):
    # each power is within the limit; the power they make together is not
    with pytest.raises(SpecError, match="whole expression's degree"):
        parse_distribution(f"pgf(expr='{formula}')")


def test_an_expression_built_in_python_is_limited_in_size():
    from symsel.formula import MAX_EXPRESSION_NODES, check_expression

    z = sympy.Symbol("z")
    wide = sympy.Add(*[sympy.Pow(z, i, evaluate=False) for i in range(MAX_EXPRESSION_NODES)], evaluate=False)
    with pytest.raises(ParameterError, match="at most 50000 nodes"):
        check_expression(wide, ("z",), "pgf")
    assert check_expression(z**2, ("z",), "pgf") == z**2


def test_a_byte_the_locale_could_not_decode_is_named_as_such():
    # argv under LANG=C keeps an undecodable byte as a surrogate: not a number with too many digits
    with pytest.raises(SpecError, match=r"byte that is not text in this locale .0xe9"):
        parse_distribution("g\udce9ometric(mean=3)")


def test_python_s_integer_printing_limit_is_said_in_symsel_s_words():
    with pytest.raises(SpecError, match="more than 4300 digits") as caught:
        parse_distribution("pgf(expr='factorial(10000)**1000')")
    assert "set_int_max_str_digits" not in str(caught.value)


def test_a_long_value_is_elided_so_the_error_says_what_is_allowed():
    error = ParameterError("dist", "compound(" * 200 + "x", "a law of K", "truncated")
    assert len(str(error)) < 250 and str(error).endswith("allowed: a law of K")
