"""Tests of symsel.apps.ptr (Koskela et al. Thm 6.1 and the tuning of Generalized PTR)."""

import itertools
import math
import re

import numpy as np
import pytest

from symsel.apps.ptr import gen_ptr_guarantee, ptr_profile, ptr_tuning
from symsel.errors import ParameterError


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


# ------------------------------------------------------------------------------------------ two guarantees
TWO = [(0.5, 1e-3), (1.5, 1e-7)]


def test_two_guarantee_profile_is_the_hockey_stick_of_the_intersected_polygons():
    """Two Thm 6.1 guarantees at once: δ(ε) is the max over the vertices of the intersection of the two polygons
    (vertices by brute force at 50 digits, tests/test_properties.py), at every real ε, never below it and
    within 1e-10 relative (float vertices); it is
    at most each guarantee's own curve, meets each guarantee exactly, and is 1 − e^ε + e^ε δ(−ε) below 0."""
    from test_properties import pointwise_delta_mp, pointwise_vertices_mp

    prof = ptr_profile(TWO)
    vertices = pointwise_vertices_mp(TWO)
    assert len(vertices) == 7  # (0,0), (δ2, 0), three kinks, (1, 1 − δ2), (1, 1)
    singles = [ptr_profile([g]) for g in TWO]
    for eps in (-1.0, -0.2, 0.0, 0.25, 0.5, 0.9, 1.5, 2.0):
        exact = float(pointwise_delta_mp(vertices, eps))
        value = float(prof.delta(eps))
        assert value >= exact * (1 - 1e-13)
        assert value == pytest.approx(exact, rel=1e-10, abs=0)  # float vertices: a few 1e-11 relative
        assert all(value <= float(s.delta(eps)) * (1 + 1e-10) for s in singles)
        if eps < 0:
            mirrored = 1 - math.exp(eps) + math.exp(eps) * float(pointwise_delta_mp(vertices, -eps))
            assert value == pytest.approx(mirrored, rel=1e-10, abs=0)
    for eps, delta in TWO:
        assert float(prof.delta(eps)) == pytest.approx(delta, rel=1e-9, abs=0)
    assert float(prof.delta(2.0)) == pytest.approx(1e-7, rel=1e-10, abs=0)  # δ(∞) = the smaller δ
    assert prof.delta_at_infinity == 1e-7


def test_two_guarantee_tuning_is_theorem_5_2_by_hand_and_sound():
    """ptr_tuning on two guarantees, geometric K (m = 10), δ = 1e-5. Thm 5.2: ε = min over ε1 of
    2 log(e^ε1 + 9 δ(ε1)) + ε(δ/m); e^ε1 + 9 δ(ε1) is piecewise linear in e^ε1 with kinks at the boundary's slopes,
    so the minimum is at one of them (50 digits). The paper ε is that, never below it and within 1e-6; the envelope
    is at most the paper ε; the exact selection on the worst pair of the two guarantees, in every score order of
    its outcomes (ranked in float64, the worst four summed at 50 digits), stays within (ε, δ) for both
    methods."""
    import mpmath
    from reference_profiles import exact_selection_delta
    from test_properties import pointwise_delta_mp, pointwise_epsilon_mp, pointwise_pair_mp, pointwise_vertices_mp

    import symsel

    delta = 1e-5
    law = symsel.geometric(mean=10)
    out = ptr_tuning(law, TWO, delta)["epsilon"]
    by_string = ptr_tuning("geometric(mean=10)", TWO, delta, methods=("paper",))
    assert by_string["epsilon"]["paper"] == out["paper"] and by_string["base"] == ptr_profile(TWO).spec
    vertices = pointwise_vertices_mp(TWO)
    with mpmath.workdps(50):
        slopes = [(x1 - x0) / (y1 - y0) for (x0, y0), (x1, y1) in itertools.pairwise(vertices)
                  if y1 > y0]
        candidates = [mpmath.mpf(1), *(s for s in slopes if s >= 1)]
        log_ratio = min(2 * mpmath.log(s + 9 * pointwise_delta_mp(vertices, mpmath.log(s))) for s in candidates)
        paper = log_ratio + pointwise_epsilon_mp(vertices, mpmath.mpf(delta) / 10)
    assert mpmath.mpf(out["paper"]["epsilon"]) >= paper
    assert out["paper"]["epsilon"] == pytest.approx(float(paper), rel=1e-6)
    assert out["envelope"]["epsilon"] <= out["paper"]["epsilon"]
    p, r = pointwise_pair_mp(vertices)
    pf, rf = np.array([float(x) for x in p]), np.array([float(x) for x in r])

    def float_delta(order, eps):  # the selection law in float64, only to rank the 720 score orders
        cp = np.concatenate([[0.0], np.cumsum(pf[list(order)])])
        cr = np.concatenate([[0.0], np.cumsum(rf[list(order)])])
        a, b = np.diff(law.phi(np.minimum(cp, 1.0))), np.diff(law.phi(np.minimum(cr, 1.0)))
        return max(np.maximum(a - math.exp(eps) * b, 0).sum(), np.maximum(b - math.exp(eps) * a, 0).sum())

    for method in ("paper", "envelope"):
        eps = out[method]["epsilon"]
        ranked = sorted(itertools.permutations(range(len(p))), key=lambda o: -float_delta(o, eps))
        for order in ranked[:4]:  # the worst orders, evaluated exactly
            assert exact_selection_delta(p, r, list(order), law, eps, dps=50) <= delta


def test_ptr_profile_refuses_a_string():
    with pytest.raises(ParameterError, match="guarantees"):
        ptr_profile("1,1e-6")


def test_thm61_accepts_a_total_delta_of_exactly_one():
    """δ + δ̂ + δ' = 1 is a (vacuous but) valid Thm 6.1 guarantee: refused only above 1."""
    assert gen_ptr_guarantee(0.5, 0.5, 0.25, 0.25, 0.25) == (0.75, 1.0)
