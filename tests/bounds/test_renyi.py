"""The Rényi route (Papernot & Steinke, ICLR 2022): closed forms against each other, Lemma 7 against the
closed forms, and every bound against exact evaluation of the selection on finite pairs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import dp_event

from symsel.bounds.renyi import (
    ApproximateRenyiProfile,
    RenyiSelectionProfile,
    approximate_dp_law,
    base_rdp_curve,
    corollary3_epsilon,
    corollary4_rdp,
    corollary21,
    lemma22_curve,
    renyi_bound,
    renyi_selection_curve,
    theorem2_constant,
    truncation_terms,
)
from symsel.distributions import binomial, geometric, logarithmic, poisson, tnb, truncated, two_point
from symsel.errors import NotApplicableError, ParameterError
from symsel.evidence.exact import selection_epsilon, selection_renyi
from symsel.pairs.finite import FinitePair
from symsel.profiles import (
    ApproxDPProfile,
    GaussianProfile,
    PldProfile,
    RandomizedResponseProfile,
    pure,
    zcdp,
)

FINE_ORDERS = np.unique(np.concatenate([np.geomspace(1.001, 1e5, 4000), np.arange(2.0, 200.0)]))


def rr_pairs(eps: float) -> list[FinitePair]:
    """Randomized response RR(eps) with both score orders (either outcome may be the 'best')."""
    p, pp = RandomizedResponseProfile(eps).finite_pair()
    return [FinitePair(p, pp, order=[0, 1]), FinitePair(p, pp, order=[1, 0])]


# --------------------------------------------------------------------------- Corollary 3 (pure DP)


@pytest.mark.parametrize("eta", [0.0, 0.5, 1.0, 2.0])
def test_corollary3_pure_base_gives_2_plus_eta_eps(eta: float) -> None:
    """Cor 3: an (ε, 0)-DP base and K ~ D_{η,γ} give an ((2+η)ε, 0)-DP selection: the bound's D_∞ and
    ε(δ = 0) are exactly (2+η)ε, and the whole RDP curve stays below it."""
    eps = 0.7
    dist = tnb(eta, mean=20)
    prof = renyi_bound(dist, pure(eps))
    assert corollary3_epsilon(eps, eta) == pytest.approx((2 + eta) * eps, rel=1e-15)
    assert prof.rdp(math.inf) == pytest.approx((2 + eta) * eps, rel=1e-15)
    assert prof.epsilon(0.0) == pytest.approx((2 + eta) * eps, rel=1e-15)
    assert np.all(prof.rdp_values <= (2 + eta) * eps + 1e-12)
    assert "Corollary 3" in prof.theorem


def test_corollary3_against_exact_liu_talwar_example() -> None:
    """Liu-Talwar / P&S Cor 3 with η = 1: the worst case approaches 3ε; the exact D_∞ on the
    Xiang et al. Example 1 pair (1-DP, geometric γ = 1e-3) is 2.96 ≤ 3 (and Lemma 7 is tighter than 3)."""
    import sympy

    e, b, d = sympy.E, sympy.Rational(1, 1000), 100
    pair = FinitePair([1 - b * e - d * b, b * e, d * b], [1 - b - d * b * e, b, d * b * e], order=[0, 1, 2])
    dist = geometric(gamma=sympy.Rational(1, 1000))
    exact = float(selection_renyi(pair, dist, math.inf, dps=40))
    assert 2.95 < exact < 2.97
    closed = renyi_bound(dist, pure(1.0))
    generic = renyi_bound(dist, pure(1.0), method="lemma7")
    assert exact <= closed.rdp(math.inf) == pytest.approx(3.0)
    assert exact <= generic.rdp(math.inf) < 3.0


# --------------------------------------------------------------------------- Corollary 4 (zCDP)


@pytest.mark.parametrize(("eta", "mean", "rho"), [(0.0, 10, 0.1), (1.0, 30, 0.05), (2.0, 100, 0.5), (-0.5, 20, 0.2)])
def test_corollary4_closed_form_matches_numeric_theorem2(eta: float, mean: float, rho: float) -> None:
    """Cor 4 is Thm 2 with ε(λ) = ρλ, λ̂ = sqrt(log(1/γ)/ρ) optimized in closed form and monotonicity
    below the knee λ = 1 + sqrt(log E[K]/ρ). The numeric Thm 2 on a fine grid (λ̂ and the monotone
    envelope both restricted to the grid) can only be larger, and is within 1e-4 relative."""
    dist = tnb(eta, mean=mean)
    _, gamma = float(dist.parameters.get("eta", 0.0)), float(dist.parameters["gamma"])
    numeric = renyi_selection_curve(dist, zcdp(rho), orders=FINE_ORDERS)
    lam = np.array([1.05, 1.5, 2.0, 3.0, 8.0, 30.0, 300.0])
    closed = corollary4_rdp(lam, rho, eta, gamma, dist.mean)
    num = numeric(lam)
    assert np.all(num >= closed - 1e-9)
    assert np.all(num <= closed * (1 + 1e-4))
    via_method = renyi_selection_curve(dist, zcdp(rho), method="cor4", orders=FINE_ORDERS)
    np.testing.assert_allclose(via_method(lam), closed, rtol=1e-13)
    # the Gaussian base is ρ-zCDP with ρ = μ²/2
    gauss = renyi_selection_curve(dist, GaussianProfile(1 / math.sqrt(2 * rho)), method="cor4", orders=FINE_ORDERS)
    np.testing.assert_allclose(gauss(lam), closed, rtol=1e-12)


def test_corollary4_constant_region_and_assumption() -> None:
    """Below the knee the Cor 4 curve is constant; ρ > log(1/γ) violates its assumption."""
    lam = np.array([1.01, 1.1, 1.5])
    vals = corollary4_rdp(lam, 0.1, 0.0, 0.01, 10.0)
    assert np.ptp(vals) == 0.0
    with pytest.raises(NotApplicableError, match="rho <= log"):
        corollary4_rdp(lam, 5.0, 0.0, 0.01, 10.0)
    with pytest.raises(NotApplicableError, match="zCDP"):
        renyi_selection_curve(geometric(mean=10), pure(1.0), method="cor4")


def test_theorem2_constant_extended_never_larger() -> None:
    """The proof's form (1+η)/λ̂ log(1 + (1/γ−1)e^{(λ̂−1)ε̂}) ≤ eq. (5)'s terms, equal at λ̂ = 1."""
    lam_hat = np.geomspace(1.01, 1e3, 300)
    for eps_hat in (lam_hat * 0.02, lam_hat * 0.5, np.full_like(lam_hat, 3.0)):
        paper, _ = theorem2_constant(1.0, 0.01, lam_hat, eps_hat)
        sharp, _ = theorem2_constant(1.0, 0.01, lam_hat, eps_hat, extended=True)
        assert sharp <= paper + 1e-12
    c, lh = theorem2_constant(0.5, 0.01, np.array([2.0]), np.array([np.inf]))
    assert lh == 1.0 and c == pytest.approx(1.5 * math.log(100))


# --------------------------------------------------------------------------- Lemma 7 vs closed forms


@pytest.mark.parametrize("base", [GaussianProfile(4.0), GaussianProfile(1.0), pure(1.0)], ids=lambda b: b.spec)
@pytest.mark.parametrize("dist", [geometric(mean=30), tnb(2, mean=10), logarithmic(mean=50), poisson(30)],
                         ids=lambda d: d.name)
def test_lemma7_generic_below_closed_forms(base, dist) -> None:
    """The closed forms bound the Lemma 7 sup over the region (via RDP of the base at λ̂, or one (ε̂, δ̂)
    constraint), and for these bases the profile region is exact; so the certified generic sup is at
    most the closed form at every order. Thm 6 (Poisson) *equals* the exact sup -- sup over the region of
    (λ−1)(1−q') − λ(1−q) is (λ−1) δ(ε̂) with e^ε̂ = λ/(λ−1) (hockey-stick duality) -- so there Lemma 7
    matches it up to the certificate's tolerance (1e-7 relative)."""
    grid = np.geomspace(1.02, 2000.0, 30)
    generic = renyi_selection_curve(dist, base, method="lemma7", orders=grid)
    closed = renyi_selection_curve(dist, base, orders=grid)
    g, c = generic.raw_values(grid), closed.raw_values(grid)
    if dist.name == "poisson":
        np.testing.assert_allclose(g, c, rtol=1e-6, atol=1e-6)
    else:
        assert np.all(g <= c + 1e-9)
        assert np.min(g - c) < -0.1  # strictly better somewhere: the closed forms relax the region


def test_lemma7_polygon_region_between_profile_region_and_closed_form() -> None:
    """One (ε̂, δ(ε̂)) polygon is a larger region than the full profile's: its best bound over ε̂ is
    between the profile-region bound and (for a geometric K) Thm 2."""
    dist, base = geometric(mean=10), GaussianProfile(2.0)
    orders = [1.5, 3.0, 10.0]
    prof = renyi_selection_curve(dist, base, method="lemma7", orders=orders).raw_values(orders)
    poly = renyi_selection_curve(dist, base, method="lemma7", orders=orders, region="polygon",
                                 eps_hat_grid=np.linspace(0.0, 3.0, 13)).raw_values(orders)
    closed = renyi_selection_curve(dist, base, orders=orders).raw_values(orders)
    assert np.all(prof <= poly + 1e-9)
    assert np.all(poly <= closed)


# --------------------------------------------------------------------------- soundness: exact evaluation


@pytest.mark.parametrize("dist", [geometric(mean=10), tnb(0.5, mean=20), logarithmic(mean=30), poisson(10),
                                  truncated(geometric(mean=10), 25)], ids=lambda d: d.name)
@pytest.mark.parametrize("method", ["closed", "lemma7"])
def test_bounds_dominate_exact_renyi_on_randomized_response(dist, method: str) -> None:
    """RR(ε) is the worst ε-DP pair; its exact RDP curve is the base's. The exact Rényi divergence of the
    selection (both score orders, both directions) lies below the bound at every order, and the exact
    ε(δ) below the converted bound."""
    eps = 1.0
    base = RandomizedResponseProfile(eps)
    orders = np.unique(np.concatenate([np.geomspace(1.05, 2000.0, 40), [1.5, 2.0, 4.0, 10.0, 50.0]]))
    curve = renyi_selection_curve(dist, base, method=method, orders=orders)
    prof = RenyiSelectionProfile(curve, dist, base, method)
    for pair in rr_pairs(eps):
        for lam in (1.5, 2.0, 4.0, 10.0, 50.0, math.inf):
            exact = float(selection_renyi(pair, dist, lam, dps=30))
            assert exact <= float(curve(np.array([lam]))[0]) + 1e-12
        for delta in (1e-3, 1e-6):
            assert float(selection_epsilon(pair, dist, delta, dps=30)) <= prof.epsilon(delta) + 1e-12


def test_lemma20_dominates_exact_on_approximate_dp_pair() -> None:
    """Lemma 20 for an (ε0, δ0)-DP base: on the worst (ε0, δ0) pair (Kairouz et al. four points, both
    score orders), the exact ε(δ) is below the bound, and the bound needs δ > δ_L = 1 − φ(1 − δ0)."""
    eps0, delta0 = 0.5, 1e-4
    base = ApproxDPProfile(eps0, delta0)
    for dist in (geometric(mean=10), poisson(10)):
        prof = renyi_bound(dist, base)
        assert isinstance(prof, ApproximateRenyiProfile)
        d_l = prof.delta_extra
        assert d_l == pytest.approx(1 - float(dist.phi(1 - delta0)), rel=1e-10)
        assert prof.epsilon(d_l * 0.5) == math.inf
        p, pp = base.finite_pair()
        for order in ([0, 1, 2, 3], [3, 2, 1, 0], [1, 0, 2, 3]):
            pair = FinitePair(p, pp, order=order)
            for delta in (5e-3, 2e-3):
                assert float(selection_epsilon(pair, dist, delta, dps=30)) <= prof.epsilon(delta)


def test_lemma20_law_and_corollary21() -> None:
    """K' of Lemma 20: TNB stays TNB with 1 − γ' = (1 − γ)(1 − δ0), Poisson(μ) becomes Poisson(μ(1 − δ0)),
    and for the Poisson law Cor 21's ε' = ε0 + (e^ε0 − 1) log μ bounds Lemma 20 + Theorem 6 at its order."""
    d0 = 0.01
    geo = geometric(gamma=0.1)
    k_prime = approximate_dp_law(geo, d0)
    x = np.array([0.0, 0.3, 0.9])
    np.testing.assert_allclose(k_prime.phi(x), geo.phi(x * (1 - d0)) / geo.phi(1 - d0), rtol=1e-13)
    assert k_prime.parameters["gamma"] == pytest.approx(1 - 0.9 * 0.99)
    assert approximate_dp_law(poisson(10), d0).mean == pytest.approx(9.9)
    lam_max, eps_prime, delta_prime = corollary21(10, 0.5, 1e-6)
    assert lam_max == pytest.approx(1 + 1 / math.expm1(0.5))
    assert delta_prime == pytest.approx(-math.expm1(-1e-5))
    prof = renyi_bound(poisson(10), ApproxDPProfile(0.5, 1e-6), orders=[lam_max])
    assert prof.inner.rdp(lam_max) <= eps_prime


def test_lemma22_truncation_terms_and_soundness() -> None:
    """Lemma 22: the extra terms are log(1/P[K ≤ k])/(λ−1) + log(E[K]/E[K·1{K≤k}]); the truncated bound
    (Thm 2 of the untruncated law + these terms) dominates the exact truncated selection."""
    dist, k_max = geometric(gamma=0.1), 20
    a, b = truncation_terms(dist, k_max)
    head = sum(0.1 * 0.9 ** (j - 1) for j in range(1, k_max + 1))
    head_mean = sum(j * 0.1 * 0.9 ** (j - 1) for j in range(1, k_max + 1))
    assert a == pytest.approx(-math.log(head), rel=1e-12)
    assert b == pytest.approx(math.log(10 / head_mean), rel=1e-12)
    base = RandomizedResponseProfile(0.5)
    curve = lemma22_curve(dist, k_max, base)
    auto = renyi_selection_curve(truncated(dist, k_max), base)
    lam = np.array([1.5, 3.0, 20.0])
    np.testing.assert_allclose(curve(lam), auto(lam), rtol=1e-12)
    assert "Lemma 22" in auto.theorem
    for pair in rr_pairs(0.5):
        for order in lam:
            assert float(selection_renyi(pair, truncated(dist, k_max), order, dps=30)) <= curve(np.array([order]))[0]


def test_extended_forms_are_sound_and_not_larger() -> None:
    """The proofs' sharper forms of Thm 2 and Thm 6 (extended=True) are never larger than the printed
    statements and still dominate the exact selection on RR."""
    base = RandomizedResponseProfile(1.0)
    for dist in (geometric(mean=10), poisson(10)):
        plain = renyi_selection_curve(dist, base)
        sharp = renyi_selection_curve(dist, base, extended=True)
        grid = plain.grid
        assert np.all(sharp(grid) <= plain(grid) + 1e-12)
        for pair in rr_pairs(1.0):
            for lam in (1.5, 4.0, 30.0):
                assert float(selection_renyi(pair, dist, lam, dps=30)) <= sharp(np.array([lam]))[0]


# --------------------------------------------------------------------------- the profile object, bad input


def test_result_profile_records_theorem_and_parameters() -> None:
    prof = renyi_bound(geometric(mean=30), GaussianProfile(4.0))
    assert isinstance(prof, RenyiSelectionProfile)
    assert prof.theorem == "Papernot-Steinke Theorem 2"
    assert prof.details["lambda_hat"] > 1 and prof.details["eta"] == 1.0
    assert prof.delta(prof.epsilon(1e-6)) <= 1e-6
    assert renyi_bound(poisson(30), GaussianProfile(4.0)).theorem == (
        "Papernot-Steinke Theorem 6, with the output of K = 0 counted")


def test_bad_input_names_the_parameter() -> None:
    dist, base = geometric(mean=10), GaussianProfile(2.0)
    curve = renyi_selection_curve(dist, base)
    with pytest.raises(ParameterError, match="order"):
        curve(np.array([1.0]))
    with pytest.raises(ParameterError, match="order"):
        curve(np.array([0.5, 2.0]))
    prof = renyi_bound(dist, base)
    with pytest.raises(ParameterError, match="delta"):
        prof.epsilon(1.5)
    with pytest.raises(ParameterError, match="delta"):
        prof.epsilon(-1e-9)
    with pytest.raises(ParameterError, match="orders"):
        renyi_bound(dist, base, orders=[0.9, 2.0])
    with pytest.raises(ParameterError, match="method"):
        renyi_bound(dist, base, method="magic")
    with pytest.raises(ParameterError, match="region"):
        renyi_bound(dist, base, method="lemma7", region="disk")
    with pytest.raises(ParameterError, match="base"):
        renyi_bound(dist, "gaussian(sigma=1)")
    no_rdp = PldProfile(dp_event.GaussianDpEvent(1.0))
    with pytest.raises(NotApplicableError, match="no RDP curve"):
        renyi_bound(dist, no_rdp)
    with pytest.raises(NotApplicableError, match="no RDP curve"):
        base_rdp_curve(no_rdp, [2.0])
    with pytest.raises(NotApplicableError, match="lemma7"):
        renyi_bound(binomial(20, 0.5), base)
    with pytest.raises(NotApplicableError, match="Lemma 20"):
        renyi_selection_curve(dist, ApproxDPProfile(1.0, 1e-6))
    with pytest.raises(ParameterError, match="delta0"):
        approximate_dp_law(dist, 1.0)


def test_lemma7_poisson_2000_is_finite_and_above_a_brute_force_sup() -> None:
    """Lemma 7 with Poisson(2000) (phi' underflows float64 below q ~ 0.65) and a Gaussian base.

    Reference, independent of symsel's certified sup: on the Gaussian f-DP boundary
    q' = Phi(Phi^-1(q) - 1/4), log phi'(q)^lam phi'(q')^(1-lam) = log mu + mu (lam q - (lam-1) q' - 1);
    its maximum over a fine grid (scipy, in log form) is a *lower* value of the sup, so the Lemma 7
    curve must lie above eps_base(lam) + that / (lam - 1)."""
    from scipy.stats import norm

    from symsel.bounds import bound
    from symsel.bounds.renyi import renyi_bound
    from symsel.distributions import poisson
    from symsel.spec import parse_profile

    mu, base = 2000.0, parse_profile("gaussian(sigma=4)")
    eps = bound(poisson(mean=2000), base, "rdp_lemma7").epsilon(1e-6)
    assert np.isfinite(eps) and 5 < eps < 30
    profile = renyi_bound(poisson(mean=2000), base, "lemma7", orders=[1.5, 2.0, 4.0, 16.0])
    q = np.linspace(0.0, 1.0, 200_001)[1:-1]
    q_min = norm.cdf(norm.ppf(q) - 0.25)
    for lam in (1.5, 2.0, 4.0, 16.0):
        log_sup = np.log(mu) + mu * np.max(lam * q - (lam - 1.0) * q_min - 1.0)
        reference = lam / 32.0 + log_sup / (lam - 1.0)  # Gaussian RDP: lam / (2 sigma^2)
        ours = float(profile.curve.raw_values([lam])[0])
        assert ours >= reference - 1e-9
        assert ours <= reference + 1e-3 * (1.0 + 1.0 / (lam - 1.0))  # certified, and tight


@pytest.mark.parametrize(("typed", "user"), [
    ("poisson(mean=10)", "pgf(expr='exp(10*(z-1))')"),
    ("geometric(gamma=0.1)", "pmf(expr='0.1*0.9^(k-1)', k_min=1)"),
    ("tnb(eta=0, gamma=0.1)", "pgf(expr='log(1-0.9*z)/log(0.1)')"),
    ("point(k=5)", "pgf(expr='z^5')"),
])
def test_closed_forms_follow_the_law_not_its_typing(typed: str, user: str) -> None:
    """Theorem 2 / Theorem 6 / App. D.1 apply to the law, recognized from its PGF."""
    from symsel.spec import parse_distribution, parse_profile

    base = parse_profile("gaussian(sigma=4)")
    a = renyi_bound(parse_distribution(typed), base, "closed")
    b = renyi_bound(parse_distribution(user), base, "closed")
    assert a.theorem == b.theorem
    assert b.epsilon(1e-6) == a.epsilon(1e-6)


def test_convex_upper_fill_is_above_every_exact_value_and_close_to_it() -> None:
    """The chord fill of a convex function never falls below it, evaluates it at a fraction of the orders,
    and stays within the tolerance of the full evaluation (reference: the function itself at every order)."""
    from symsel.bounds.renyi import convex_upper_fill

    orders = np.unique(np.concatenate([np.linspace(1.01, 8, 60), np.geomspace(8, 5000, 140)]))
    calls: list[float] = []

    def f(lam: float) -> float:  # convex: a log-sum-exp of affine functions of lam
        calls.append(lam)
        return float(np.logaddexp(0.3 * lam - 2.0, np.logaddexp(0.02 * lam, -1.5 * lam + 4.0)))

    filled = convex_upper_fill(orders, f, tol=1e-5)
    used = len(calls)
    exact = np.array([f(x) for x in orders])
    assert np.all(filled >= exact - 1e-12)
    assert np.max((filled - exact) / (orders - 1.0)) <= 1e-5
    assert used < 0.6 * orders.size  # the fill skipped at least 40 % of the orders


def test_convex_upper_fill_never_interpolates_next_to_an_infinite_value() -> None:
    from symsel.bounds.renyi import convex_upper_fill

    orders = np.linspace(1.5, 40.0, 50)
    filled = convex_upper_fill(orders, lambda lam: math.inf if lam > 20 else lam**2, tol=1e-6)
    assert np.all(np.isinf(filled[orders > 20]))
    assert np.all(filled[orders <= 20] >= orders[orders <= 20] ** 2 - 1e-9)


def test_lemma7_curve_with_the_fill_agrees_with_every_order_evaluated() -> None:
    """The filled Lemma 7 curve is never below (and within 1e-4 of) the curve with a certified sup at every
    order, for a law without closed form."""
    from symsel.bounds.renyi import lemma7_log_sup

    dist, base = two_point(L=50, s=0.2), GaussianProfile(4.0)
    curve = renyi_selection_curve(dist, base, method="lemma7")
    grid = curve.grid
    filled = curve.raw_values(grid)
    rdp = base_rdp_curve(base, grid)
    direct = np.array([r + lemma7_log_sup(dist, base.region_lower, float(x), None) / (x - 1.0)
                       for r, x in zip(rdp, grid, strict=True)])
    assert np.all(filled >= direct - 1e-12)
    assert np.max(filled - direct) < 1e-4


# --------------------------------------------------------------------------- tight references for the conversion


def test_subsampled_gaussian_epsilon_is_the_cks_conversion_of_dp_accountings_rdp() -> None:
    """ε(δ) of rdp_subsampled_gaussian(q, σ, T) against an independent evaluation: dp-accounting's RDP of one
    Poisson-subsampled Gaussian step times T, converted by Canonne–Kamath–Steinke (Prop. 12):
    ε = min_λ ε(λ) + log(1 − 1/λ) − (log δ + log λ)/(λ − 1). On the profile's order grid (a choice of grid, not a
    computed value) it is equal to 1e-9 relative; on a superset with 1500 more orders the minimum can only be lower,
    and symsel is never below that and within 1e-4 of it. (tests/profiles/test_profiles_rdp.py compares with
    dp-accounting's
    own get_epsilon, which uses other orders and another conversion, at 2 %.)"""
    import logging

    from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc

    from symsel.profiles import rdp_subsampled_gaussian

    q, sigma, steps = 0.01, 1.1, 1000
    prof = rdp_subsampled_gaussian(q, sigma, steps)
    finer = np.unique(np.concatenate([prof.orders, np.geomspace(1.01, 128.0, 1500)]))

    def rdp_of(orders: np.ndarray) -> np.ndarray:
        absl = logging.getLogger("absl")
        level = absl.level
        absl.setLevel(logging.ERROR)  # orders where dp-accounting's series does not converge come back as inf
        try:
            return steps * np.asarray(rdp_acc._compute_rdp_poisson_subsampled_gaussian(q, sigma, orders), dtype=float)
        finally:
            absl.setLevel(level)

    curves = {"grid": (prof.orders, rdp_of(prof.orders)), "finer": (finer, rdp_of(finer))}

    def converted(which: str, delta: float) -> float:
        orders, rdp = curves[which]
        return float(np.min(rdp + np.log1p(-1.0 / orders) - (math.log(delta) + np.log(orders)) / (orders - 1.0)))

    for delta in (1e-5, 1e-8, 1e-12):
        ours = prof.epsilon(delta)
        on_grid, below = converted("grid", delta), converted("finer", delta)
        assert ours == pytest.approx(on_grid, rel=1e-9, abs=0)
        assert below <= ours <= below * (1 + 1e-4)


@pytest.mark.parametrize("method", ["rdp", "rdp_lemma7"])
def test_renyi_route_is_sound_for_a_poisson_law_of_mean_below_one(method: str) -> None:
    """Poisson(0.5) on RR(0.5): the exact selection (both score orders, 50 digits) has δ(0) ≈ 0.095, so no
    ε(1e-3) can be 0."""
    from reference_profiles import exact_selection_delta

    from symsel.bounds import bound

    dist, base = poisson(0.5), RandomizedResponseProfile(0.5)
    p, pp = base.finite_pair()
    eps = bound(dist, base, method).epsilon(1e-3)
    assert max(exact_selection_delta(p, pp, order, dist, eps, dps=50) for order in ([0, 1], [1, 0])) <= 1e-3


def test_the_papers_route_for_poisson_is_the_rdp_view_of_the_base():
    """docs/renyi.md: on the DP-SGD base of Koskela et al. Fig. 6 (q = 256/60000, σ = 1.1, T = ⌈60/q⌉), Poisson K of
    mean 30 at δ = 1e-5 costs 11.32 when δ̂ of Thm 6 comes from converting the base's RDP curve (the base given as
    ``rdp_subsampled_gaussian``; dp-accounting's RepeatAndSelectDpEvent computes the same route) and 8.25 with δ̂
    from the base's tight profile (``dpsgd``)."""
    from dp_accounting.rdp import rdp_privacy_accountant

    import symsel

    q, sigma = 256 / 60000, 1.1
    steps = math.ceil(60 / q)
    law = symsel.parse_distribution("poisson(mean=30)")
    arguments = f"q={q!r}, sigma={sigma}, steps={steps}"
    papers = symsel.bound(law, symsel.parse_profile(f"rdp_subsampled_gaussian({arguments})"), "rdp").epsilon(1e-5)
    tight = symsel.bound(law, symsel.parse_profile(f"dpsgd({arguments})"), "rdp").epsilon(1e-5)
    accountant = rdp_privacy_accountant.RdpAccountant()
    accountant.compose(dp_event.RepeatAndSelectDpEvent(dp_event.SelfComposedDpEvent(
        dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps), 30, math.inf))
    assert papers == pytest.approx(accountant.get_epsilon(1e-5), rel=1e-3)
    assert round(papers, 2) == 11.32 and round(tight, 2) == 8.25


@pytest.mark.parametrize("orders", [[1.0], [1.0, 2.0], [0.5, 3.0]])
def test_an_order_of_one_or_less_is_refused_by_name(orders: list[float]) -> None:
    """Rényi orders must exceed 1 (the conversion to (ε, δ) divides by ``λ − 1``): order 1 itself and below are
    refused with an error naming ``orders`` and the offending value."""
    with pytest.raises(ParameterError, match="orders") as caught:
        renyi_selection_curve(poisson(3), zcdp(0.1), orders=orders)
    assert str(min(orders)) in str(caught.value)
