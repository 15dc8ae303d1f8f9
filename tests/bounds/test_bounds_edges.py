"""Answers at the edges of the parameter ranges: δ = 1, huge privacy losses, laws far from the defaults."""

from __future__ import annotations

import math

import pytest

import symsel
from symsel.profiles import GaussianProfile

FAST_METHODS = ("paper", "polygon", "fdp", "envelope", "rdp", "best")


@pytest.mark.parametrize("method", FAST_METHODS)
def test_delta_one_costs_no_epsilon(method):
    """Every profile has δ(0) ≤ 1, so (0, 1)-DP holds for any mechanism: ε(1) = 0 for every method."""
    result = symsel.bound(symsel.geometric(mean=30), GaussianProfile(4.0), method)
    assert result.epsilon(1.0) == 0.0


def test_randomized_response_with_a_huge_epsilon_is_bounded_by_it():
    """randomized_response(eps=1000) is 1000-DP: ε(δ) ≤ 1000 for every δ (float64 rounds e^-1000 to 0,
    which must not make the answer infinite), and the selection's ε is at most 1000 + log R with the
    ratio R ≤ φ'(1)/φ'(0) = m / P[K = 1] = 900 for geometric K with mean 30. It is at least 1000: on the
    pair itself the preferred outcome has probability ≈ 1 under X and ≈ e^-1000 φ'(0) under X', so
    δ_A(1000) ≈ 1 − P[K = 1] ≫ 1e-6."""
    base = symsel.parse_profile("randomized_response(eps=1000)")
    assert base.epsilon(1e-6) <= 1000.0
    law = symsel.geometric(mean=30)
    for method in ("paper", "fdp", "envelope", "best"):
        value = symsel.bound(law, base, method).epsilon(1e-6)
        assert 1000.0 - 1e-6 <= value <= 1000.0 + math.log(900.0) + 1e-6, method


def test_a_base_without_privacy_gets_reasons_not_an_abort():
    """approx(eps=1, delta=1) is no guarantee at all: the Rényi route is marked not applicable (with a
    reason) and every other method answers ε = ∞ at δ < 1."""
    law, base = symsel.geometric(mean=30), symsel.parse_profile("approx(eps=1, delta=1)")
    for method in ("rdp", "rdp_lemma7"):
        with pytest.raises(symsel.NotApplicableError, match="no privacy"):
            symsel.bound(law, base, method)
    for method in ("paper", "fdp", "envelope", "best"):
        assert symsel.bound(law, base, method).epsilon(1e-6) == math.inf
