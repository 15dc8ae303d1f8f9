"""Tests of symsel.ptr (Koskela et al. Thm 6.1 and the tuning of Generalized PTR)."""

import math
import re

import pytest

from symsel.errors import ParameterError
from symsel.ptr import gen_ptr_guarantee, ptr_profile, ptr_tuning


def test_thm61_adds_the_test_and_failure_terms():
    eps, delta = gen_ptr_guarantee(0.8, 1e-6, 0.25, 2e-7, 3e-7)
    assert eps == pytest.approx(1.05, abs=1e-15)
    assert delta == pytest.approx(1.5e-6, rel=1e-12)


@pytest.mark.parametrize("kwargs, name", [
    ({"epsilon": -0.1}, "epsilon"),
    ({"test_delta": 1.5}, "test_delta"),
    ({"fail_delta": -1e-3}, "fail_delta"),
    ({"delta": 0.6, "test_delta": 0.6}, "delta + test_delta + fail_delta"),
])
def test_bad_input_names_the_parameter(kwargs, name):
    args = {"epsilon": 1.0, "delta": 1e-6, "test_epsilon": 0.1, "test_delta": 1e-7, "fail_delta": 1e-7} | kwargs
    with pytest.raises(ParameterError, match=re.escape(name)):
        gen_ptr_guarantee(**args)
    with pytest.raises(ParameterError, match="guarantees"):
        ptr_profile([])


def test_single_guarantee_profile_is_the_tight_eps_delta_curve():
    # (ε1, δ1)-DP is dominated by the four-point pair; its hockey-stick at ε ≤ ε1 is
    # δ1 + (1 − δ1)(e^ε1 − e^ε)/(1 + e^ε1) (Kairouz, Oh, Viswanath 2015), computed here by hand.
    e1, d1 = 1.0, 1.2e-6
    prof = ptr_profile([(e1, d1)])
    for eps in (0.0, 0.3, 0.5, 0.9, 1.0):
        ref = d1 + (1 - d1) * (math.exp(e1) - math.exp(eps)) / (1 + math.exp(e1))
        assert float(prof.delta(eps)) == pytest.approx(ref, rel=1e-9)
    assert float(prof.delta(1.5)) <= d1 * (1 + 1e-12)


def test_tuning_below_cor54_and_envelope_below_thm52():
    # Cor 5.4 by hand (geometric: η = 1, γ = 1/m): an (ε1, δ1) base gives (ε1 + 2 log(e^ε1 + (m − 1) δ1), m δ1).
    m = 10
    g = gen_ptr_guarantee(0.8, 1e-7, 0.2, 5e-8, 5e-8)
    target = 1.01 * m * g[1]  # at exactly m δ1 the envelope's certified floor (a hair above m δ1) gives inf
    cor54 = g[0] + 2 * math.log(math.exp(g[0]) + (m - 1) * g[1])
    out = ptr_tuning(f"geometric(mean={m})", [g], target)["epsilon"]
    assert out["paper"]["epsilon"] <= cor54 + 1e-9
    assert out["paper"]["epsilon"] >= g[0]  # the selection is never more private than one candidate
    assert out["envelope"]["epsilon"] <= out["paper"]["epsilon"] + 1e-9
    assert out["envelope"]["epsilon"] >= g[0]
    assert "5.2" in out["paper"]["theorem"]
