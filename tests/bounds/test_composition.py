"""The composition bound (docs/composition.md): δ_A(ε) ≤ Σ_k P[K=k] δ_{Q^⊗k}(ε) + P[K=0][1 − e^ε]_+.

Every reference value is computed here independently of the code under test: the μ√k-GDP closed form at
50 digits, brute-force k-fold products of finite pairs at 50 digits, the two-fold Laplace loss law by
quadrature, and the exact selection law of random finite pairs (mpmath, any real ε)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_profiles import (
    ExactPairProfile,
    exact_selection_delta,
    gdp_delta_mp,
    laplace_two_fold_delta_mp,
    product_pair_delta_mp,
    random_pair,
)

import symsel
from symsel.bounds import bound
from symsel.bounds.composition import MAX_ANCHORS, pooled_masses
from symsel.profiles import GaussianProfile, LaplaceProfile, PairProfile, pure
from symsel.profiles.composition import composed
from symsel.spec import parse_distribution

EPS_GRID = (-0.5, 0.0, 0.3, 1.0, 2.0, 3.5, 6.0)


# ----------------------------------------------------------------------------- the k-fold composition
@pytest.mark.parametrize("sigma", [1.0, 4.0])
@pytest.mark.parametrize("k", [2, 3, 10, 40])
def test_fixed_runs_of_a_gaussian_give_the_gdp_closed_form(sigma, k):
    """point(k) on a Gaussian base: the composition bound is the μ√k-GDP profile, checked at 50 digits
    (never below it, and above it by at most the float rounding allowance)."""
    result = bound(parse_distribution(f"point(k={k})"), GaussianProfile(sigma), "composition")
    for eps in EPS_GRID:
        exact = float(gdp_delta_mp(math.sqrt(k) / sigma, eps))
        value = float(result.delta(eps))
        assert exact <= value <= exact * (1 + 1e-9) + 1e-300, (eps, value, exact)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 4), k=st.integers(1, 4), eps=st.floats(-1.0, 3.0))
def test_exact_finite_composition_matches_brute_force_products(seed, n, k, eps):
    """A random finite pair composed k times (multinomial sums in log space) against all n^k outcome tuples
    summed at 50 digits, both directions."""
    p, r, _ = random_pair(seed, n)
    profile, route = composed(PairProfile(list(p), list(r)), k)
    assert route in ("exact finite pair", "the base itself")
    exact = float(product_pair_delta_mp(p, r, k, eps))
    value = float(profile.delta(eps))
    assert exact * (1 - 1e-12) <= value <= exact * (1 + 1e-6) + 1e-15, (value, exact)


def test_fixed_runs_of_pure_dp_compose_to_k_eps():
    """k runs of an ε-DP base are kε-DP (P&S Prop 17 shows kε is attained): δ(kε) = 0 and δ(kε − 0.01) > 0."""
    for k in (2, 3, 7):
        result = bound(parse_distribution(f"point(k={k})"), pure(1.0), "composition")
        assert result.epsilon(0.0) == pytest.approx(k, abs=1e-12)
        assert result.delta(k - 0.01) > 0


@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_two_laplace_runs_match_the_loss_law_by_quadrature(scale):
    """The pessimistic dp-accounting composition of a Laplace base is above the exact two-fold profile (loss
    law integrated by mpmath) and within 1e-6 relative of it."""
    profile, route = composed(LaplaceProfile(scale), 2)
    assert route.startswith("pessimistic")
    for eps in (0.0, 0.5, 1.0, 1.5, 1.9 / scale):
        exact = float(laplace_two_fold_delta_mp(scale, eps))
        value = float(profile.delta(eps))
        assert exact <= value <= exact * (1 + 1e-6) + 1e-12, (eps, value, exact)


def test_dpsgd_composition_agrees_with_dp_accountings_self_composed_event():
    """DP-SGD composed twice is dp-accounting's own SelfComposedDpEvent (same pessimistic PLD)."""
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    base = symsel.parse_profile("dpsgd(q=0.01, sigma=1.1, steps=50)")
    profile, _ = composed(base, 2)
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_event.SelfComposedDpEvent(base.event, 2))
    for delta in (1e-3, 1e-6):
        assert profile.epsilon(delta) == pytest.approx(accountant.get_epsilon(delta), rel=1e-9)


# ----------------------------------------------------------------------------- the bound on a law of K
LAWS = ["point(k=1)", "point(k=2)", "point(k=3)", "binomial(n=4, p=0.5)", "truncated(dist=poisson(mean=2), k_max=4)",
        "mixture(components=[(0.5, point(k=1)), (0.5, point(k=3))])"]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 5), which=st.integers(0, len(LAWS) - 1),
       eps=st.floats(-1.5, 4.0), method=st.sampled_from(["composition", "best"]))
def test_composition_and_best_are_never_below_the_exact_selection(seed, n, which, eps, method):
    """Random finite pairs under a random score order: the exact selection's two-sided δ_A(ε) (mpmath, any
    real ε, the K = 0 atom included) never exceeds the bound on the pair's profile (exact compositions)."""
    p, r, order = random_pair(seed, n)
    dist = parse_distribution(LAWS[which])
    exact = float(exact_selection_delta(p, r, order, dist, eps))
    value = float(bound(dist, PairProfile(list(p), list(r)), method).delta(eps))
    assert value >= exact * (1 - 1e-12), (value, exact)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 4), which=st.integers(1, len(LAWS) - 1),
       eps=st.floats(-1.0, 3.0))
def test_pessimistic_composition_of_a_generic_profile_is_never_below_the_exact_selection(seed, n, which, eps):
    """The same with the pair known only by its profile (no dominating pair): compositions go through
    dp-accounting's connect-the-dots PLD, self-composed."""
    p, r, order = random_pair(seed, n)
    dist = parse_distribution(LAWS[which])
    exact = float(exact_selection_delta(p, r, order, dist, eps))
    value = float(bound(dist, ExactPairProfile(p, r), "composition").delta(eps))
    assert value >= exact * (1 - 1e-12), (value, exact)


def test_law_with_many_support_points_is_pooled_upwards():
    """binomial(200, 1/2) has 201 support points: they are pooled into at most MAX_ANCHORS bins, and the bound
    stays above the unpooled sum Σ_k P[K=k] δ_{μ√k}(ε) computed here at 50 digits (and within 2x of it)."""
    dist = parse_distribution("binomial(n=200, p=1/2)")
    anchors, _, outside, pooled = pooled_masses(dist, 1)
    assert pooled and len(anchors) <= MAX_ANCHORS and outside < 1e-40
    result = bound(dist, GaussianProfile(4.0), "composition")
    assert result.certificate["pooled"] is True
    for eps in (2.0, 5.0, 8.0):
        with mpmath.workdps(50):
            exact = mpmath.fsum(mpmath.binomial(200, k) / mpmath.mpf(2) ** 200 * gdp_delta_mp(math.sqrt(k) / 4, eps)
                                for k in range(1, 201))
        value = float(result.delta(eps))
        assert float(exact) <= value <= 2 * float(exact), (eps, value, float(exact))


def test_mass_outside_the_summed_window_is_charged_in_full():
    """tnb(eta=-0.5, mean=10) has a heavy tail: the 2048 support points summed leave about 3.2e-6 of mass, charged
    δ = 1, so the bound never falls below it and ε(1e-6) is infinite (honest, if useless: best takes the envelope)."""
    result = bound(parse_distribution("tnb(eta=-0.5, mean=10)"), GaussianProfile(4.0), "composition")
    outside = result.certificate["outside_mass"]
    assert 1e-6 < outside < 1e-5
    assert result.delta(50.0) >= outside
    assert math.isinf(result.epsilon(1e-6))


def test_laws_too_spread_for_composition_are_refused_and_best_says_so():
    """poisson(mean=1e6): 12 standard deviations span 12000 support points; composition refuses with a clear
    NotApplicableError, and best (which takes composition only for laws with a bounded support of at most 512 points)
    leaves it out, saying why in its details."""
    dist, base = parse_distribution("poisson(mean=1000000)"), GaussianProfile(4.0)
    with pytest.raises(symsel.NotApplicableError, match="spreads over"):
        bound(dist, base, "composition")
    assert "bounded support" in bound(dist, base).details["skipped_composition"]


# ----------------------------------------------------------------------------- best and the brackets
def test_best_is_tight_for_two_fixed_runs():
    """point(2), σ = 4, δ = 1e-6: the worst case is as bad as releasing both runs. ``best`` is 1.54363
    (μ√2-GDP at 50 digits) and meets the certified lower bound of an exact worst-case selection within 1e-4."""
    dist, base = parse_distribution("point(k=2)"), GaussianProfile(4.0)
    value = bound(dist, base).epsilon(1e-6)
    gdp = mpmath.findroot(lambda e: gdp_delta_mp(math.sqrt(2) / 4, e) - mpmath.mpf("1e-6"), 1.5)
    assert float(gdp) <= value <= float(gdp) * (1 + 1e-9)
    lower = symsel.lower_bound(base, dist, 1e-6).epsilon
    assert lower <= value <= lower * (1 + 1e-4)


@pytest.mark.parametrize(("k", "expected", "winner", "lower"), [(2, 1.5436304, "composition", 1.543630),
                                                               (3, 1.8791887, "interval", 1.877344),
                                                               (10, 3.1585025, "interval", 3.155772)])
def test_best_on_fixed_runs_is_the_smallest_of_its_components(k, expected, winner, lower):
    """σ = 4, δ = 1e-6: composition wins at k = 2 (1.54363: μ√2-GDP, exact), the interval bound at k = 3 and 10
    (1.87919 against composition's 1.92535; 3.15850 against the envelope's 3.41101); pinned to 1e-6 relative, and
    within 0.12 % of the certified lower bound (tests/bounds/test_interval.py checks those lower bounds)."""
    result = bound(parse_distribution(f"point(k={k})"), GaussianProfile(4.0))
    value = result.epsilon(1e-6)
    assert value == pytest.approx(expected, rel=1e-6)
    assert lower <= value <= lower * 1.0012
    assert result.certificate["wins_at_delta_1e-06"] == winner


def test_best_reports_which_components_it_took():
    result = bound(parse_distribution("point(k=2)"), GaussianProfile(4.0))
    assert "composition" in result.details["components"]
    result = bound(parse_distribution("point(k=2)"), symsel.parse_profile("dpsgd(q=0.01, sigma=1.1, steps=20)"))
    assert "composition" in result.details["components"]
    result = bound(parse_distribution("geometric(mean=30)"),
                   symsel.parse_profile("dpsgd(q=0.01, sigma=1.1, steps=20)"))
    assert "skipped_composition" in result.details


def test_composition_profile_is_monotone_and_answers_for_negative_epsilon():
    dist = parse_distribution("binomial(n=5, p=0.3)")  # P[K = 0] = 0.168
    result = bound(dist, GaussianProfile(2.0), "composition")
    eps = np.linspace(-3, 6, 91)
    values = np.asarray(result.delta(eps))
    assert np.all(values >= -np.expm1(np.minimum(eps, 0)) - 1e-12)
    assert np.all(np.diff(values) <= 1e-15)


def test_best_certificate_names_the_winner_and_carries_the_components_certificates():
    """point(2): composition wins at every δ (it is exact); geometric(30): the envelope wins. Each component's own
    certificate is carried under "<method>.<key>"."""
    fixed = bound(parse_distribution("point(k=2)"), GaussianProfile(4.0)).certificate
    assert fixed["wins_at_delta_1e-06"] == "composition" and fixed["composition.composition"].startswith("exact GDP")
    spread = bound(parse_distribution("geometric(mean=30)"), GaussianProfile(4.0)).certificate
    assert {spread[f"wins_at_delta_{d}"] for d in ("0.001", "1e-06", "1e-10")} == {"envelope"}
    assert spread["envelope.converged"] is True and spread["envelope.eps_shift"] <= 1e-3
