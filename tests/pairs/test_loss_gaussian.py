"""The Gaussian pair's dominating loss pair built from the closed-form law of its privacy loss
(:func:`symsel.pairs.loss.gaussian_dominating_pair`), against the exact μ-GDP profile at 50 digits."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference_profiles import gdp_delta_mp

from symsel.errors import ParameterError
from symsel.pairs.loss import DominatingPair, gaussian_dominating_pair


def _pair_delta(pair: DominatingPair, eps: float) -> tuple[float, float]:
    """``a_∞ + Σ_{a/b > e^ε} (a − e^ε b)`` of the pair in float64 (``math.fsum``), and a bound on its rounding:
    each term within ``4u (a + e^ε b)`` (``e^ε b < a`` on the terms taken)."""
    e = math.exp(eps)
    terms = pair.a - e * pair.b
    taken = terms > 0
    value = math.fsum(terms[taken].tolist()) + pair.a_infinity
    error = 8 * 2.0**-53 * (math.fsum(pair.a[taken].tolist()) + pair.a_infinity) + 1e-300
    return value, error


@pytest.mark.parametrize("mu", [0.5, 5.0, 30.0])
def test_never_below_the_exact_gaussian_and_close(mu):
    """At losses around the mean and in both tails the pair's δ is at least the exact δ of μ-GDP and, where the losses
    stay below 700 (float ``e^{−l}``), within 1 % of it above 1e-12 (a value of 1 or more is trivially above)."""
    pair = gaussian_dominating_pair(mu)
    assert isinstance(pair, DominatingPair)
    for eps in (0.0, mu * mu / 2 - 2 * mu, mu * mu / 2, mu * mu / 2 + 3 * mu, mu * mu / 2 + 6 * mu):
        exact = gdp_delta_mp(mu, eps)
        value, error = _pair_delta(pair, eps)
        assert value >= 1.0 or value - error >= exact, (mu, eps, value, exact)
        if exact > 1e-12 and mu * mu / 2 + 14 * mu < 700:
            assert value + error <= exact * 1.01, (mu, eps, value, exact)


def test_losses_beyond_the_float_range_go_to_infinity():
    """μ = 100: every loss is above 700, so every bin's ``e^{−l}`` mass would underflow: all mass at ``+∞`` (δ = 1,
    conservative) rather than a mass of 0 that would understate δ."""
    pair = gaussian_dominating_pair(100.0)
    assert pair.a_infinity >= 1.0 - 1e-12
    assert math.fsum(pair.a.tolist()) <= 1e-12


def test_sizes_and_masses():
    """At most GAUSSIAN_MAX_BINS atoms; Q-masses sum to 1 up to rounding; Q'-masses at most 1."""
    for mu in (1e-3, 1.0, 50.0):
        pair = gaussian_dominating_pair(mu)
        assert pair.n <= 200_001
        assert math.fsum(pair.a.tolist()) + pair.a_infinity == pytest.approx(1.0, abs=1e-12)
        assert math.fsum(pair.b.tolist()) <= 1.0
        assert np.all(np.diff(pair.ratio) >= 0)


@pytest.mark.parametrize("mu", [0.0, -1.0, math.nan, math.inf])
def test_bad_mu(mu):
    with pytest.raises(ParameterError):
        gaussian_dominating_pair(mu)
