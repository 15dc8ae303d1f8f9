"""``E[K/(K+1)]`` (the expected quantile of the best of K runs) against references computed here at 50+ digits.

``symsel dist "geometric(mean=1e300)"`` (and ``poisson``) reported ``-inf`` (found by the hostile-input run): the
quadrature's float breakpoints ``1 - 10^-j`` all rounded to 1. The references below never use symsel's evaluation:
moderate means sum the pmf written out here (``mpmath.nsum``); huge means integrate ``phi(1 - t)``, written out in
``t`` (no cancellation in ``1 - t``), after ``t = e^-u`` at 60 digits, and ``1 - E`` is compared relatively.
"""

from __future__ import annotations

import mpmath
import pytest

import symsel

DPS = 50


def _sum_reference(pmf, k_min: int) -> mpmath.mpf:
    with mpmath.workdps(DPS + 20):
        return mpmath.nsum(lambda k: pmf(k) * k / (k + 1), [k_min, mpmath.inf])


# parameters are read at the reference's precision (an mpf made at import time would have 15 digits)
def _geometric_pmf(mean: str):
    return lambda k: (1 / mpmath.mpf(mean)) * (1 - 1 / mpmath.mpf(mean)) ** (k - 1)


def _poisson_pmf(mean: str):
    return lambda k: mpmath.exp(-mpmath.mpf(mean) + k * mpmath.log(mpmath.mpf(mean)) - mpmath.loggamma(k + 1))


def _tnb_pmf(eta: str, gamma: str):
    def pmf(k):
        e, g = mpmath.mpf(eta), mpmath.mpf(gamma)
        return mpmath.binomial(k + e - 1, k) * (1 - g) ** k / (g ** (-e) - 1)
    return pmf


@pytest.mark.parametrize(("spec", "pmf", "k_min"), [
    ("geometric(mean=30)", _geometric_pmf("30"), 1),
    ("geometric(mean=1.5)", _geometric_pmf("1.5"), 1),
    ("poisson(mean=3)", _poisson_pmf("3"), 0),
    ("poisson(mean=0.01)", _poisson_pmf("0.01"), 0),
    ("poisson(mean=40)", _poisson_pmf("40"), 0),
    ("tnb(eta=0.5, gamma=0.1)", _tnb_pmf("0.5", "0.1"), 1),
    ("tnb(eta=3, gamma=0.2)", _tnb_pmf("3", "0.2"), 1),
    ("tnb(eta=-0.5, gamma=0.3)", _tnb_pmf("-0.5", "0.3"), 1),
    ("logarithmic(gamma=0.05)", lambda k: mpmath.mpf("0.95") ** k / (k * mpmath.log(20)), 1),
])
def test_moderate_means_agree_with_the_pmf_summed_at_50_digits(spec, pmf, k_min) -> None:
    law = symsel.parse_distribution(spec)
    with mpmath.workdps(DPS + 20):
        got = law.expected_quantile_mp(DPS)
        reference = _sum_reference(pmf, k_min)
        assert abs(got - reference) <= mpmath.mpf(10) ** -(DPS - 3)
    assert law.expected_quantile() == pytest.approx(float(reference), rel=1e-15)


def _geometric_one_minus(mean: str) -> mpmath.mpf:
    """``1 - E = int_0^1 phi(x) dx`` with ``phi(1 - t) = g (1 - t)/(g + (1 - g) t)``, ``t = e^-u``; tanh-sinh at
    twice the digits wanted, on the integrand divided by ``g`` (mpmath's error target is absolute: an integral of
    1e-298 was accepted after a few nodes, 1e-9 off)."""
    with mpmath.workdps(2 * mpmath.mp.dps):
        g = 1 / mpmath.mpf(mean)
        f = lambda u: (1 - mpmath.exp(-u)) / (g * mpmath.exp(u) + (1 - g))  # noqa: E731
        top = int(-mpmath.log(g))
        return g * mpmath.quad(f, [0, 1, *range(5, top + 60, 5), mpmath.inf])


def _poisson_one_minus(mean: str) -> mpmath.mpf:
    """``int_0^1 e^(-mu t) dt`` by quadrature in ``s = mu t``."""
    with mpmath.workdps(2 * mpmath.mp.dps):
        mu = mpmath.mpf(mean)
        return mpmath.quad(lambda s: mpmath.exp(-s), [0, 1, 10, 100, 1000, mu]) / mu


@pytest.mark.parametrize(("spec", "one_minus"), [
    ("geometric(mean=1e6)", lambda: _geometric_one_minus("1e6")),
    ("geometric(mean=1e40)", lambda: _geometric_one_minus("1e40")),
    ("geometric(mean=1e300)", lambda: _geometric_one_minus("1e300")),
    ("poisson(mean=1e6)", lambda: _poisson_one_minus("1e6")),
    ("poisson(mean=1e40)", lambda: _poisson_one_minus("1e40")),
    ("poisson(mean=1e300)", lambda: _poisson_one_minus("1e300")),
])
def test_huge_means_give_one_minus_a_tiny_gap_exactly(spec, one_minus) -> None:
    """E ≈ 1: its gap ``1 - E`` (about ``log(m)/m`` and ``1/m``) agrees with the reference relatively at 45
    digits (computed at 400 digits, so that ``E`` itself keeps the gap), and the float is 1.0, never ``-inf``."""
    law = symsel.parse_distribution(spec)
    with mpmath.workdps(DPS + 10):
        reference = one_minus()
    with mpmath.workdps(400):
        gap = 1 - law.expected_quantile_mp(400)
    assert abs(gap - reference) <= abs(reference) * mpmath.mpf(10) ** -45
    value = law.expected_quantile()
    assert 0.0 <= value <= 1.0 and value == pytest.approx(1.0 - float(reference), abs=1e-16)


@pytest.mark.parametrize("spec", ["geometric(mean=1e300)", "poisson(mean=1e300)", "logarithmic(mean=1e300)",
                                  "tnb(eta=3, mean=1e300)", "tnb(eta=-0.5, mean=1e300)", "poisson(mean=1e-12)",
                                  "binomial(n=1000000000, p=0.5)", "binomial(n=1000000, p=1e-9)",
                                  "geometric(mean=1.0000001)"])
def test_the_expected_quantile_is_always_in_the_unit_interval(spec) -> None:
    value = symsel.parse_distribution(spec).expected_quantile()
    assert 0.0 <= value <= 1.0


def test_a_law_given_by_its_pgf_takes_the_quadrature_and_agrees_at_huge_means() -> None:
    """No known family: the quadrature's breakpoints, now in mpf, resolve ``phi`` down to ``1/m``."""
    law = symsel.parse_distribution("pgf(expr='z/(10**40 - (10**40-1)*z)')")
    assert law.known_family is None
    with mpmath.workdps(DPS + 10):
        reference = _geometric_one_minus("1e40")
        gap = 1 - law.expected_quantile_mp(DPS)
    assert abs(gap - reference) <= mpmath.mpf(10) ** -(DPS - 2)


def test_the_command_line_reports_about_one_for_huge_means() -> None:
    import json

    from click.testing import CliRunner

    from symsel.cli import main

    for spec in ("geometric(mean=1e300)", "poisson(mean=1e300)"):
        result = CliRunner().invoke(main, ["dist", spec, "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["expected_quantile"] == 1.0
