"""The public API: one import, one entry point, and answers that depend on the law, not on its typing."""

from __future__ import annotations

import pytest

import symsel

BASE = "gaussian(sigma=4)"


@pytest.mark.parametrize("method", symsel.METHODS)
def test_poisson_typed_two_ways_gets_identical_numbers(method):
    """Issue example: poisson(mean=10) and its PGF exp(10(z − 1)) are the same law, so every method
    gives the same ε to the last bit (the closed forms are chosen by the law, recognized from φ)."""
    base = symsel.parse_profile(BASE)
    named = symsel.bound(symsel.parse_distribution("poisson(mean=10)"), base, method)
    typed = symsel.bound(symsel.parse_distribution("pgf(expr='exp(10*(z-1))')"), base, method)
    assert named.epsilon(1e-6) == typed.epsilon(1e-6)
    assert named.theorem == typed.theorem
    assert typed.dist.spec == "pgf(expr='exp(10*(z-1))')"  # the result still names the law as typed


@pytest.mark.parametrize(("named", "typed"), [
    ("binomial(n=20, p=0.5)", "pgf(expr='(1/2+z/2)^20')"),
    ("geometric(mean=30)", "pmf(expr='(1/30)*(29/30)^(k-1)', k_min=1)"),
    ("point(k=3)", "pgf(expr='z^3')"),
    ("poisson(mean=3)", "mixture(components=[(1, poisson(mean=3))])"),
])
@pytest.mark.parametrize("method", ["paper", "fdp", "envelope", "rdp", "best"])
def test_other_laws_typed_two_ways_agree(named, typed, method):
    base = symsel.parse_profile(BASE)
    results = []
    for spec in (named, typed):
        try:
            results.append(symsel.bound(symsel.parse_distribution(spec), base, method).epsilon(1e-6))
        except symsel.NotApplicableError:
            results.append("n/a")
    assert results[0] == results[1]


def test_one_import_is_enough():
    law = symsel.parse_distribution("geometric(mean=30)")
    result = symsel.bound(law, symsel.parse_profile(BASE))
    assert result.method == "best" and isinstance(result, symsel.Profile)
    assert set(symsel.METHODS) >= {"envelope", "best", "rdp"}
    assert callable(symsel.lower_bound) and callable(symsel.get_example)
    assert set(symsel.__all__) <= set(dir(symsel)) and all(hasattr(symsel, name) for name in symsel.__all__)


def test_derive_is_callable_from_the_top_level_package():
    """``symsel.derive(law)`` after one ``import symsel``; the package's function is the same one."""
    by_call = symsel.derive("poisson(mean=3)", sections=False)
    by_function = symsel.derive.derive("poisson(mean=3)", sections=False)
    assert by_call.mean == by_function.mean == "3" and by_call.family == by_function.family


def test_bad_arguments_are_parameter_errors():
    law, base = symsel.geometric(mean=30), symsel.parse_profile(BASE)
    with pytest.raises(symsel.ParameterError, match="method"):
        symsel.bound(law, base, "magic")
    with pytest.raises(symsel.ParameterError, match="base"):
        symsel.bound(law, "gaussian(sigma=4)", "best")
    with pytest.raises(symsel.ParameterError, match="dist"):
        symsel.bound("geometric(mean=30)", base, "best")


def test_a_delta_below_the_float_range_is_reported_in_log_space_not_as_zero() -> None:
    """K = 1: the selection is the base itself, so its log δ at ε = 60 (δ ≈ 1e-800, far below float64) is
    the Gaussian's, computed here at 50 digits from the closed form Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), μ = 1."""
    import mpmath

    from symsel.bounds import bound_summary

    with mpmath.workdps(50):
        eps, mu = mpmath.mpf(60), mpmath.mpf(1)
        exact = mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)
        log_exact = float(mpmath.log(exact))
    record = bound_summary(symsel.point(1), symsel.parse_profile("gaussian(sigma=1)"), "envelope", epsilon=60.0)
    assert record["delta"] == 0.0
    assert log_exact <= record["log_delta"] <= log_exact + 0.01
    mantissa, exponent = record["delta_decimal"].split("e")
    assert float(mantissa) * 10 ** (int(exponent) - float(mpmath.log10(exact))) >= 1.0  # rounded up
