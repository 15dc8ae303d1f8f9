"""The mpmath flavour of the compiled PGFs: :func:`expm1_mp` against mpmath's own ``expm1`` at far higher precision,
and the cached parameter values against fresh ones at every precision."""

from __future__ import annotations

import mpmath
import pytest
import sympy

import symsel
from symsel.distributions.evaluation import expm1_mp
from symsel.distributions.expressions import z

POINTS = ["0", "1e-300", "-1e-300", "3e-40", "-7e-21", "1e-8", "-1e-8", "0.001", "-0.3", "0.5", "1", "-1", "2.5",
          "-2.5", "40", "-40", "700", "-745", "1e5", "-1e5"]


@pytest.mark.parametrize("dps", [15, 30, 60, 200])
@pytest.mark.parametrize("text", POINTS)
def test_expm1_mp_is_correct_to_the_working_precision(text, dps):
    with mpmath.workdps(dps):
        x = mpmath.mpf(text)
        value = expm1_mp(x)
        prec = mpmath.mp.prec
    with mpmath.workdps(dps + 100):
        exact = mpmath.mpf(text)  # the decimal point rounded to dps digits above: compare at the same point
        with mpmath.workdps(dps):
            exact = +exact
        reference = mpmath.expm1(exact)
        error = abs(value - reference) / abs(reference) if reference else abs(value)
    assert error <= mpmath.mpf(2) ** (2 - prec)


@pytest.mark.parametrize("x", [mpmath.inf, -mpmath.inf, mpmath.nan, 0.5, 3, mpmath.mpc(0.1, 0.2)])
def test_expm1_mp_defers_to_mpmath_off_the_finite_reals(x):
    got, expected = expm1_mp(x), mpmath.expm1(x)
    assert (mpmath.isnan(got) and mpmath.isnan(expected)) or got == expected


@pytest.mark.parametrize("spec", ["geometric(mean=10)", "tnb(eta=0.5, mean=10)", "tnb(eta=-0.5, mean=3)",
                                  "geometric(mean=1e12)", "geometric(mean=1.5)"])
def test_phi_mp_agrees_with_the_pgf_at_higher_precision_at_every_precision(spec):
    """The stable form through :func:`expm1_mp` and the parameters cached per precision give ``phi`` as the same
    form does with mpmath's own ``expm1`` and fresh parameters at 40 more digits (for each precision in turn)."""
    law = symsel.parse_distribution(spec)
    plain = sympy.lambdify([z, *law.values], law.stable_form, "mpmath")
    for dps in (20, 50, 20, 120):
        for text in ("0", "0.1", "0.5", "0.99", "0.999999", "1"):
            with mpmath.workdps(dps):
                x = mpmath.mpf(text)  # the point as phi_mp reads it (phi is ill-conditioned near 1 for a huge mean)
            value = law.phi_mp(x, dps)
            with mpmath.workdps(dps + 40):
                reference = plain(x, *(mpmath.mpf(sympy.N(v, dps + 60)) for v in law.values.values()))
            assert abs(value - reference) <= abs(reference) * mpmath.mpf(10) ** (-(dps - 2)) + mpmath.mpf(10) ** -300


@pytest.mark.parametrize("spec", ["geometric(mean=30)", "tnb(eta=0.5, mean=10)", "tnb(eta=-0.5, mean=3)",
                                  "tnb(eta=2, mean=1.5)", "geometric(mean=1e50)"])
def test_the_hoisted_constants_give_the_numbers_of_the_whole_form(spec):
    """``phi`` and ``phi'`` of a stable form with its ``z``-free parts computed once per precision are the same
    numbers, bit for bit, as the whole form compiled as it is, at every precision in turn (a constant kept from
    one precision for another, or a division turned into a product with the reciprocal, would differ)."""
    law = symsel.parse_distribution(spec)
    modules = [{"expm1": expm1_mp}, "mpmath"]
    whole = [sympy.lambdify([z, *law.values], form, modules) for form in (law.stable_form, law.stable_form.diff(z))]
    hoisted = [law._phi_mpf, law._dphi_mpf]
    differing = 0
    for dps in (15, 50, 15, 80, 200):
        with mpmath.workdps(dps + law._guard_digits):
            args = law._args_mp()
            for i in range(0, 1001, 37):
                x = mpmath.mpf(i) / 1000
                for fast, slow in zip(hoisted, whole, strict=True):
                    differing += fast(x, *args) != slow(x, *args)
    assert differing == 0
