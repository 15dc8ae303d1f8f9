"""make_selection reading each OpenDP output measure, against guarantees computed here independently of symsel's
profiles (so that a change in how the approximate-DP measure is read cannot pass the suite unseen).

* pure (``max_divergence``): an ε₀-DP base's tightest profile is randomized response's,
  δ(ε) = (e^ε₀ − e^ε)/(1 + e^ε₀); the best of 2 runs is between the best of 2 runs of randomized response
  (a real ε₀-DP mechanism and score: a lower bound) and the exact 2-fold composition of randomized response (the
  optimal composition of pure DP, Kairouz et al.: an upper bound), both enumerated here; it is 2ε₀-DP and no less.
* zCDP: ρ = d_in²/(2 scale²) of OpenDP's Gaussian; one run is OpenDP's own zCDP → (ε, δ) conversion, and never
  below the exact Gaussian of μ = √(2ρ) (a ρ-zCDP mechanism; 50-digit closed form).
* approximate (``approximate(max_divergence)``): (ε₀, δ₀) exactly as OpenDP's ``map`` reports it; its tightest
  profile is δ₀ + (1 − δ₀)(e^ε₀ − e^ε)/(1 + e^ε₀); the best of 2 runs has δ(2ε₀) = 1 − (1 − δ₀)² exactly (the
  leak event of the worst-case mechanism, ranked first, is a lower bound; its 2-fold composition an upper one).
* smoothed (``smoothed_max_divergence``): one run is never below OpenDP's own profile.
"""

from __future__ import annotations

import math
from typing import Any

import opendp.prelude as dp
import pytest
from reference_profiles import gdp_delta_mp

import symsel
from symsel.apps.opendp import EPSILON_SHIFT, make_selection
from symsel.profiles import GaussianProfile

dp.enable_features("contrib")
SPACE = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))


def laplace(scale: float) -> Any:
    return SPACE >> dp.m.then_laplace(scale=scale)


def gaussian(scale: float) -> Any:
    return SPACE >> dp.m.then_gaussian(scale=scale)


def score(y: float) -> float:
    return y


def rr_delta(eps0: float, eps: float) -> float:
    """The tightest profile of ε₀-DP (randomized response with P[truth] = e^ε₀/(1 + e^ε₀))."""
    return max(0.0, (math.exp(eps0) - math.exp(eps)) / (1 + math.exp(eps0)))


def hockey(p: list[float], q: list[float], eps: float) -> float:
    g = math.exp(eps)
    return max(sum(max(a - g * b, 0.0) for a, b in zip(p, q, strict=True)),
               sum(max(b - g * a, 0.0) for a, b in zip(p, q, strict=True)))


def rr_best_of_two_delta(eps0: float, eps: float) -> float:
    """Best of 2 runs of randomized response, the truthful answer ranked first: outputs (top, bottom)."""
    p, q = math.exp(eps0) / (1 + math.exp(eps0)), 1 / (1 + math.exp(eps0))
    return hockey([1 - (1 - p) ** 2, (1 - p) ** 2], [1 - (1 - q) ** 2, (1 - q) ** 2], eps)


def rr_two_fold_delta(eps0: float, eps: float) -> float:
    """Two runs of randomized response, both released (all 4 outcomes)."""
    p, q = math.exp(eps0) / (1 + math.exp(eps0)), 1 / (1 + math.exp(eps0))
    one, other = [p, 1 - p], [q, 1 - q]
    return hockey([a * b for a in one for b in one], [a * b for a in other for b in other], eps)


def gdp_epsilon(mu: float, delta: float) -> float:
    lo, hi = 0.0, 100.0
    for _ in range(70):
        lo, hi = ((lo + hi) / 2, hi) if gdp_delta_mp(mu, (lo + hi) / 2) > delta else (lo, (lo + hi) / 2)
    return hi


# --------------------------------------------------------------------------------------------------- pure
@pytest.mark.parametrize(("scale", "d_in"), [(2.0, 1.0), (1.0, 1.0), (1.0, 0.5)])
def test_one_run_of_a_pure_base_is_its_own_guarantee(scale: float, d_in: float) -> None:
    eps0 = d_in / scale  # the Laplace mechanism's textbook guarantee
    selection = make_selection(laplace(scale), "point(k=1)", score=score)
    profile, bound = selection.map(d_in), selection.selection_bound(d_in)
    for eps in (0.0, 0.25 * eps0, 0.5 * eps0, 0.99 * eps0, eps0, 1.5 * eps0):
        assert bound.delta(eps) == pytest.approx(rr_delta(eps0, eps), rel=1e-9, abs=1e-15)
        assert rr_delta(eps0, eps) <= profile.delta(eps) <= rr_delta(eps0, eps - EPSILON_SHIFT) + 1e-15
    assert profile.delta(eps0 + 2 * EPSILON_SHIFT) == 0.0
    fixed = make_selection(laplace(scale), "point(k=1)", score=score, delta=1e-6)
    exact = math.log(math.exp(eps0) - 1e-6 * (1 + math.exp(eps0)))  # rr_delta(eps0, ε) = 1e-6
    eps, delta = fixed.map(d_in)
    assert delta == 1e-6 and exact <= eps <= exact + 1e-8


def test_best_of_two_runs_of_a_pure_base_is_two_epsilon_dp_and_no_less() -> None:
    eps0 = 0.5
    selection = make_selection(laplace(2.0), "point(k=2)", score=score)
    bound = selection.selection_bound(1.0)
    assert bound.delta(2 * eps0) <= 1e-12
    assert selection.map(1.0).delta(2 * eps0 + 2 * EPSILON_SHIFT) <= 1e-12
    for eps in (0.0, 0.2, 0.5, 0.8, 0.99, 2 * eps0 - 1e-3):
        lower, upper = rr_best_of_two_delta(eps0, eps), rr_two_fold_delta(eps0, eps)
        assert lower > 0
        assert lower * (1 - 1e-9) <= bound.delta(eps) <= upper + 1e-11, (eps, lower, upper)  # measured: 7.8e-13 above


# --------------------------------------------------------------------------------------------------- zCDP
@pytest.mark.parametrize(("scale", "d_in"), [(2.0, 1.0), (1.0, 0.5), (4.0, 2.0)])
def test_one_run_of_a_zcdp_base_is_its_own_guarantee(scale: float, d_in: float) -> None:
    rho = d_in ** 2 / (2 * scale ** 2)
    assert gaussian(scale).map(d_in) == pytest.approx(rho, rel=1e-12)  # the base's own ρ, as OpenDP reports it
    opendp_curve = dp.c.make_zCDP_to_approxDP(gaussian(scale)).map(d_in)
    selection = make_selection(gaussian(scale), "point(k=1)", score=score)
    for delta in (1e-3, 1e-6, 1e-9):
        eps = selection.selection_bound(d_in).epsilon(delta)
        assert eps >= gdp_epsilon(math.sqrt(2 * rho), delta)  # a ρ-zCDP mechanism: the Gaussian of μ = √(2ρ)
        assert eps <= rho + 2 * math.sqrt(rho * math.log(1 / delta))  # Bun & Steinke's conversion
        assert eps == pytest.approx(opendp_curve.epsilon(delta), rel=1e-4)


def test_best_of_two_runs_of_a_zcdp_base_is_at_most_its_composition() -> None:
    """Two runs of ρ-zCDP are 2ρ-zCDP: at most Bun & Steinke's conversion of 2ρ; the best of two runs of the
    Gaussian itself is a lower bound (symsel's certified lower bound of that mechanism). symsel composes the (ε, δ)
    profile of ρ-zCDP, not its Rényi curve: it is 2.8 % above OpenDP's optimal conversion of 2ρ-zCDP (sound, looser)."""
    rho = 1 / 8
    selection = make_selection(gaussian(2.0), "point(k=2)", score=score)
    optimal = dp.c.make_zCDP_to_approxDP(gaussian(2.0 / math.sqrt(2))).map(1.0).epsilon(1e-6)
    lower = symsel.lower_bound(GaussianProfile(2.0), symsel.point(2), 1e-6, budget=20, slices=100).epsilon
    eps = selection.selection_bound(1.0).epsilon(1e-6)
    assert lower <= eps <= 2 * rho + 2 * math.sqrt(2 * rho * math.log(1e6))
    assert optimal <= eps <= optimal * 1.04


# --------------------------------------------------------------------------------------------- approximate
def approximate_base(delta0: float) -> Any:
    return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(gaussian(2.0)), delta0)


@pytest.mark.parametrize("delta0", [1e-6, 1e-3])
def test_one_run_of_an_approximate_base_is_its_own_guarantee(delta0: float) -> None:
    base = approximate_base(delta0)
    assert base.output_measure == dp.approximate(dp.max_divergence())
    eps0, reported = base.map(1.0)  # OpenDP's own (ε₀, δ₀)
    assert reported == delta0
    bound = make_selection(base, "point(k=1)", score=score).selection_bound(1.0)
    for eps in (0.0, 0.5 * eps0, 0.9 * eps0, eps0, 2 * eps0):
        expected = delta0 + (1 - delta0) * rr_delta(eps0, eps)
        assert bound.delta(eps) == pytest.approx(expected, rel=1e-9)
    assert make_selection(base, "point(k=1)", score=score, delta=delta0).map(1.0) == pytest.approx((eps0, delta0),
                                                                                                  rel=1e-9)
    # at a larger δ the guarantee gives ε(δ) of its profile: e^ε = e^ε₀ − (δ − δ₀)(1 + e^ε₀)/(1 − δ₀)
    delta = 10 * delta0
    exact = math.log(math.exp(eps0) - (delta - delta0) * (1 + math.exp(eps0)) / (1 - delta0))
    eps, _ = make_selection(base, "point(k=1)", score=score, delta=delta).map(1.0)
    assert exact <= eps <= exact + 1e-8


def test_best_of_two_runs_of_an_approximate_base_at_two_epsilon() -> None:
    delta0 = 1e-3
    base = approximate_base(delta0)
    eps0, _ = base.map(1.0)
    bound = make_selection(base, "point(k=2)", score=score, method="composition").selection_bound(1.0)
    assert bound.delta(2 * eps0) == pytest.approx(1 - (1 - delta0) ** 2, rel=1e-6)
    for eps in (0.0, eps0, 1.5 * eps0):  # between the worst-case mechanism's selection and its composition
        lower = 1 - (1 - delta0) ** 2 + (1 - delta0) ** 2 * rr_best_of_two_delta(eps0, eps)
        upper = 1 - (1 - delta0) ** 2 + (1 - delta0) ** 2 * rr_two_fold_delta(eps0, eps)
        assert lower * (1 - 1e-9) <= bound.delta(eps) <= upper * (1 + 1e-9), (eps, lower, upper)


# ------------------------------------------------------------------------------------------------ smoothed
def test_one_run_of_a_smoothed_base_is_its_own_profile_within_the_grid() -> None:
    """OpenDP's profile of its zCDP Gaussian (noise 2): one run is never below the Gaussian mechanism itself (the
    exact 0.5-GDP curve, 50 digits) and within the sampling grid of OpenDP's own ε(δ) (the intersection of the
    sampled guarantees may imply less than one of them: at ε = 0 it does, 0.289 against OpenDP's 0.297)."""
    base = dp.c.make_zCDP_to_approxDP(gaussian(2.0))
    assert base.output_measure == dp.smoothed_max_divergence()
    curve = base.map(1.0)
    bound = make_selection(base, "point(k=1)", score=score).selection_bound(1.0)
    for eps in (0.0, 0.1, 0.5, 1.0, 1.7, 2.5, 3.3, 4.5):
        assert bound.delta(eps) >= float(gdp_delta_mp(0.5, eps))
    for delta in (1e-3, 1e-6):
        reference = float(curve.epsilon(delta))
        assert gdp_epsilon(0.5, delta) <= bound.epsilon(delta) <= reference * 1.005  # grid: measured 0.3 % above
