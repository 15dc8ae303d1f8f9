"""RDP-curve profiles: the optimal RDP → (ε, δ) conversion, against dp-accounting and the exact profiles."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc
from scipy import optimize

import symsel
from symsel.errors import ParameterError
from symsel.profiles import (
    DEFAULT_ORDERS,
    FAMILIES,
    GaussianProfile,
    RdpProfile,
    pure,
    rdp_gaussian,
    rdp_pure,
    rdp_subsampled_gaussian,
    zcdp,
)


def test_conversion_matches_dp_accounting_for_gaussian_curve() -> None:
    """Same orders, same RDP values: dp-accounting's compute_delta / compute_epsilon agree."""
    sigma = 3.0
    orders = [o for o in DEFAULT_ORDERS if o > 1.01]  # dp-accounting skips orders <= 1.01
    values = [o / (2 * sigma**2) for o in orders]
    prof = RdpProfile(lambda lam: np.asarray(lam) / (2 * sigma**2), orders=orders)
    for eps in (0.0, 0.1, 0.5, 1.0, 2.0, 4.0):
        ref, _ = rdp_acc.compute_delta(orders, values, eps)
        assert prof.delta(eps) == pytest.approx(ref, rel=1e-10, abs=1e-300)
    for delta in (0.5, 1e-2, 1e-5, 1e-10, 1e-30):
        ref, _ = rdp_acc.compute_epsilon(orders, values, delta)
        assert prof.epsilon(delta) == pytest.approx(ref, rel=1e-12, abs=1e-15)


def test_conversion_is_above_the_exact_gaussian_profile() -> None:
    """The RDP route is an upper bound on the exact Gaussian profile, for every ε (also negative)."""
    exact, via_rdp = GaussianProfile(2.0), rdp_gaussian(2.0)
    eps = np.linspace(-2, 6, 33)
    assert np.all(via_rdp.delta(eps) >= exact.delta(eps) * (1 - 1e-12))
    for d in (1e-3, 1e-6, 1e-12):
        assert via_rdp.epsilon(d) >= exact.epsilon(d)


@pytest.mark.parametrize("rho", [0.01, 0.5, 5.0])
def test_order_grid_loss_against_continuous_optimum(rho: float) -> None:
    """Grid min vs continuous min over λ of ε_λ(δ) for ρ-zCDP: relative loss < 1e-4."""
    prof = zcdp(rho)
    for delta in (1e-2, 1e-6, 1e-12):

        def eps_of(lam: float, delta: float = delta) -> float:
            return rho * lam + math.log1p(-1 / lam) - (math.log(delta) + math.log(lam)) / (lam - 1)

        best = optimize.minimize_scalar(eps_of, bounds=(1.0001, 1e4), method="bounded", options={"xatol": 1e-10})
        ours = prof.epsilon(delta)
        assert ours >= best.fun - 1e-12
        assert ours <= best.fun * (1 + 1e-4) + 1e-12


def test_round_trip_and_monotone() -> None:
    for prof in (zcdp(0.3), rdp_pure(1.0), rdp_pure(1.0, exact=True), rdp_gaussian(1.5, 2.0)):
        eps = np.linspace(-3, 8, 200)
        d = prof.delta(eps)
        assert np.all(np.diff(d) <= 1e-15)
        for delta in (0.3, 1e-4, 1e-9):
            e = prof.epsilon(delta)
            assert prof.delta(e) <= delta * (1 + 1e-9)
            if e > 1e-6:
                assert prof.delta(e * (1 - 1e-6)) > delta * (1 - 1e-3)


def test_rdp_pure_variants() -> None:
    loose, tight = rdp_pure(1.0), rdp_pure(1.0, exact=True)
    for lam in (1.5, 2.0, 10.0, 100.0):
        assert tight.rdp(lam) <= loose.rdp(lam) + 1e-15
        assert loose.rdp(lam) == pytest.approx(min(1.0, lam / 2))
        assert tight.rdp(lam) == pytest.approx(pure(1.0).rdp(lam), rel=1e-12)
    assert tight.rdp(math.inf) == 1.0
    assert tight.delta(1.0) == 0.0 and tight.epsilon(0.0) == 1.0
    assert np.all(tight.delta(np.linspace(0, 2, 9)) <= loose.delta(np.linspace(0, 2, 9)) + 1e-15)
    # pure-DP knowledge is used: never worse than the worst ε-DP pair
    assert np.all(tight.delta(np.linspace(0, 2, 9)) <= pure(1.0).delta(np.linspace(0, 2, 9)) + 1e-15)


def test_rdp_subsampled_gaussian_vs_rdp_accountant() -> None:
    prof = rdp_subsampled_gaussian(0.01, 1.1, 1000)
    acc = rdp_acc.RdpAccountant()
    acc.compose(dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.1)), 1000))
    for delta in (1e-5, 1e-8):
        ref = acc.get_epsilon(delta)
        ours = prof.epsilon(delta)
        assert ours <= ref + 1e-12  # at least dp-accounting's orders are covered … or better ones
        assert ours == pytest.approx(ref, rel=2e-2)
    assert prof.rdp(2.0) == pytest.approx(1000 * rdp_acc._compute_rdp_poisson_subsampled_gaussian(0.01, 1.1, [2.0])[0])


def test_families_specs_and_errors() -> None:
    assert FAMILIES["zcdp"](rho=0.5).spec == "zcdp(rho=0.5)"
    assert FAMILIES["rdp_pure"](eps=1, exact=True).spec == "rdp_pure(eps=1.0, exact=True)"
    assert FAMILIES["rdp_subsampled_gaussian"](q=0.01, sigma=1.1, steps=10).spec == (
        "rdp_subsampled_gaussian(q=0.01, sigma=1.1, steps=10)"
    )
    for call, name in [
        (lambda: zcdp(0.0), "rho"),
        (lambda: rdp_gaussian(-1.0), "sigma"),
        (lambda: rdp_pure(1.0, exact="yes"), "exact"),
        (lambda: rdp_subsampled_gaussian(2.0, 1.0, 1), "q"),
        (lambda: rdp_subsampled_gaussian(0.1, 1.0, 0), "steps"),
        (lambda: RdpProfile(lambda x: x, orders=[0.5, 2.0]), "orders"),
        (lambda: zcdp(1.0).rdp(0.5), "order"),
    ]:
        with pytest.raises(ParameterError, match=f"parameter {name}="):
            call()


def test_the_conversion_envelope_equals_the_minimum_over_every_order() -> None:
    """lower_envelope (the convex-hull trick behind the RDP → (ε, δ) conversion) against the brute-force minimum
    over all lines: never below it, and equal to 1e-12 relative, on random lines with repeated slopes."""
    from symsel.profiles.rdp import lower_envelope

    rng = np.random.default_rng(7)
    for trial in range(100):
        n = int(rng.integers(1, 200))
        a = rng.normal(size=n) * rng.choice([1.0, 100.0])
        b = -rng.exponential(size=n) * rng.choice([1.0, 100.0])
        if trial % 4 == 0:
            b = np.round(b, 1)  # ties in slope
        hull_a, hull_b, breaks = lower_envelope(a, b)
        assert np.all(np.diff(breaks) >= 0)
        x = np.concatenate([rng.uniform(-30, 30, 500), breaks])
        index = np.searchsorted(breaks, x)
        got = hull_a[index] + hull_b[index] * x
        brute = (a[None, :] + b[None, :] * x[:, None]).min(axis=1)
        scale = np.maximum(1.0, np.abs(brute))
        assert np.all(got >= brute - 1e-12 * scale)
        assert np.all(got <= brute + 1e-12 * scale)
    profile = symsel.parse_profile("zcdp(rho=0.5)")  # and inside a profile: the old per-order minimum
    eps = np.linspace(0.0, 20.0, 301)
    lam, r = profile.orders, profile.rdp_values
    per_order = (lam - 1) * (r[None, :] - eps[:, None] + np.log1p(-1 / lam)) - np.log(lam)
    expected = np.minimum(np.minimum(per_order.min(axis=1), 0.5 * math.log(-math.expm1(-r.min()))), 0.0)
    assert np.allclose(np.log(profile.delta(eps)), expected, rtol=1e-12, atol=1e-12)


def test_a_curve_infinite_at_every_order_certifies_no_finite_epsilon() -> None:
    """Two distributions with disjoint supports have Rényi divergence ``∞`` at every order and ``δ(ε) = 1`` for every
    ``ε`` (all of the first's mass lies where the second has none): a curve infinite at every order is theirs, so
    it certifies nothing below ``δ = 1``: ``ε(δ) = ∞`` for every ``δ < 1``, and ``0`` at ``δ = 1``."""
    profile = RdpProfile(lambda lam: np.full(np.shape(lam), math.inf))
    for delta in (1e-30, 1e-6, 0.5, 1 - 1e-12):
        assert profile.epsilon(delta) == math.inf, delta
    assert profile.epsilon(1.0) == 0.0
    assert profile.delta(3.0) == 1.0
