"""Report Noisy Max (Koskela, Redberg & Wang, Section 3): Theorem 3.2/3.3, Corollary 3.4 and the RDP
baseline of Theorem 3.1, against each other and against the exact law of argmax on worst-case inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from symsel.bounds.rnm import (
    GaussianTailRnmProfile,
    ReportNoisyMaxProfile,
    gaussian_tail_epsilon,
    noise_profile,
    report_noisy_max_bound,
    rnm_figure1_curves,
)
from symsel.errors import NotApplicableError, ParameterError
from symsel.evidence.exact import epsilon_for_delta
from symsel.evidence.examples import report_noisy_max_law
from symsel.profiles import GaussianProfile, LaplaceProfile, RandomizedResponseProfile


def exact_rnm_epsilon(x: tuple, xp: tuple, sigma: float, delta: float) -> float:
    """Exact ε(δ) (both directions) of argmax_i x_i + N(0, σ²) on the pair of query vectors (x, x')."""
    return float(epsilon_for_delta(report_noisy_max_law(x, sigma, 30), report_noisy_max_law(xp, sigma, 30), delta, 25))


# --------------------------------------------------------------------------- Theorem 3.2 and Cor 3.4


def test_theorem32_profile_is_m_times_the_sensitivity_2_gaussian() -> None:
    """δ_M(ε) = min(1, m δ_G(ε)) with δ_G the Gaussian mechanism at sensitivity 2 (1 if monotone), and
    ε(δ) = ε_G(δ/m); ε(δ) agrees with the independent mpmath bisection in symsel.evidence.examples."""
    from symsel.evidence.examples import gaussian_rnm_bound

    sigma, m = 4.0, 3
    prof = report_noisy_max_bound(m, GaussianProfile(sigma))
    assert isinstance(prof, ReportNoisyMaxProfile)
    g2 = GaussianProfile(sigma, 2.0)
    eps = np.array([-0.5, 0.0, 0.5, 1.0, 2.0, 3.0])
    np.testing.assert_allclose(prof.delta(eps), np.minimum(1.0, m * g2.delta(eps)), rtol=1e-12)
    for delta in (1e-3, 1e-6, 1e-10):
        assert prof.epsilon(delta) == pytest.approx(g2.epsilon(delta / m), rel=1e-12)
        assert prof.epsilon(delta) == pytest.approx(gaussian_rnm_bound(m, 2.0 / sigma, delta), rel=1e-9)
    mono = report_noisy_max_bound(m, GaussianProfile(sigma), monotone=True)
    assert mono.epsilon(1e-6) == pytest.approx(GaussianProfile(sigma).epsilon(1e-6 / m), rel=1e-12)


@pytest.mark.parametrize("sigma", [1.0, 4.0, 10.0])
@pytest.mark.parametrize("m", [2, 10, 1000, 100000])
@pytest.mark.parametrize("monotone", [False, True])
def test_corollary34_tail_bound_is_above_theorem32(sigma: float, m: int, monotone: bool) -> None:
    """Cor 3.4: ε = μ²/2 + μ sqrt(2 log(m/δ)), μ = Δ/σ -- e.g. 2/σ² + (2/σ) sqrt(2 log(m/δ)) for Δ = 2. It
    bounds P(ω ≥ ε) ≥ δ_G(ε) by a Chernoff bound, so it can only be larger than Thm 3.2's ε."""
    delta = 1e-6
    sens = 1.0 if monotone else 2.0
    closed = sens**2 / (2 * sigma**2) + (sens / sigma) * math.sqrt(2 * math.log(m / delta))
    tail = report_noisy_max_bound(m, GaussianProfile(sigma), monotone=monotone, method="gaussian_tail")
    assert isinstance(tail, GaussianTailRnmProfile)
    assert tail.epsilon(delta) == pytest.approx(closed, rel=1e-14)
    assert gaussian_tail_epsilon(m, sigma, delta, monotone=monotone) == pytest.approx(closed, rel=1e-14)
    assert tail.delta(closed) == pytest.approx(delta, rel=1e-9)
    prof = report_noisy_max_bound(m, GaussianProfile(sigma), monotone=monotone)
    assert prof.epsilon(delta) <= tail.epsilon(delta)
    eps = np.linspace(0.0, 2 * closed, 41)
    assert np.all(prof.delta(eps) <= tail.delta(eps) * (1 + 1e-12))


def test_figure1_curves_ordering() -> None:
    """Koskela et al. Figure 1 (σ = 4, sensitivity-1 queries, δ = 1e-6, m = 10 … 1e5): the hockey-stick
    bound (Thm 3.2) lies below the RDP bound (Thm 3.1), which lies below Cor 3.4's tail bound; all grow
    like sqrt(log m). Values recorded from this implementation."""
    curves = rnm_figure1_curves([10, 100, 1000, 10000, 100000])
    np.testing.assert_array_equal(curves["m"], [10, 100, 1000, 10000, 100000])
    assert np.all(curves["profile"] < curves["rdp"])
    assert np.all(curves["rdp"] < curves["gaussian_tail"])
    for key in ("profile", "rdp", "gaussian_tail"):
        assert np.all(np.diff(curves[key]) > 0)
    np.testing.assert_allclose(curves["profile"], [2.4903, 2.7076, 2.9097, 3.0994, 3.2787], atol=1e-3)
    np.testing.assert_allclose(curves["rdp"], [2.6490, 2.8608, 3.0582, 3.2436, 3.4192], atol=1e-3)
    np.testing.assert_allclose(curves["gaussian_tail"], [2.9638, 3.1599, 3.3439, 3.5181, 3.6837], atol=1e-3)


def test_rdp_baseline_is_zhu_wang() -> None:
    """Thm 3.1: ε(λ) + log m/(λ−1) with the Gaussian RDP λΔ²/(2σ²), Δ = 2; the profile bound's own RDP
    curve is the same (Thm 3.2's proof with f(z) = z^λ)."""
    sigma, m = 4.0, 50
    rdp = report_noisy_max_bound(m, GaussianProfile(sigma), method="rdp")
    prof = report_noisy_max_bound(m, GaussianProfile(sigma))
    for lam in (1.5, 2.0, 10.0):
        expected = lam * 4 / (2 * sigma**2) + math.log(m) / (lam - 1)
        assert rdp.rdp(lam) == pytest.approx(expected, rel=1e-14)
        assert prof.rdp(lam) == pytest.approx(expected, rel=1e-14)


# --------------------------------------------------------------------------- soundness against exact RNM


PAIRS = [
    ((1.0, 0.0), (0.0, 1.0), False),
    ((1.0, 0.0, 0.0), (0.0, 1.0, 1.0), False),
    ((0.0, 0.0, 0.0), (1.0, -1.0, -1.0), False),
    ((0.5, 0.0, -3.0), (-0.5, 1.0, -2.0), False),
    ((1.0, 0.0, 0.0), (1.0, 1.0, 1.0), True),
    ((0.0, 0.0), (0.0, 1.0), True),
]


@pytest.mark.parametrize(("x", "xp", "monotone"), PAIRS)
def test_exact_rnm_below_every_bound(x: tuple, xp: tuple, monotone: bool) -> None:
    """On inputs whose queries differ by ≤ 1 (all in one direction when monotone), the exact ε(δ) of
    argmax (1-D quadrature, 30 digits) is below Thm 3.2, Thm 3.1 and Cor 3.4."""
    sigma, m = 2.0, len(x)
    for delta in (1e-2, 1e-5):
        exact = exact_rnm_epsilon(x, xp, sigma, delta)
        for method in ("profile", "rdp", "gaussian_tail"):
            bound = report_noisy_max_bound(m, GaussianProfile(sigma), monotone=monotone, method=method)
            assert exact <= bound.epsilon(delta), (method, delta)


def test_exact_rnm_two_queries_is_a_gaussian_post_processing() -> None:
    """m = 2: argmax is a threshold of (x1 − x2) + N(0, 2σ²), a Gaussian with μ = 2/(σ√2) post-processed to one
    bit; the exact profile sits below that Gaussian's, which sits below Thm 3.2 (2 δ_G with μ = 2/σ)."""
    sigma = 2.0
    for delta in (1e-2, 1e-4):
        exact = exact_rnm_epsilon((1.0, 0.0), (0.0, 1.0), sigma, delta)
        gauss = GaussianProfile(sigma * math.sqrt(2), 2.0).epsilon(delta)
        assert exact <= gauss <= report_noisy_max_bound(2, GaussianProfile(sigma)).epsilon(delta)


# --------------------------------------------------------------------------- Theorem 3.3 (rounds)


def test_theorem33_rounds_gaussian_is_gdp_composition() -> None:
    """k rounds, Gaussian noise: m^k δ_{μ√k}(ε) with μ = 2/σ (exact GDP composition)."""
    sigma, m, k = 4.0, 3, 5
    prof = report_noisy_max_bound(m, GaussianProfile(sigma), rounds=k)
    composed = GaussianProfile.from_mu(2.0 / sigma * math.sqrt(k))
    for eps in (0.5, 2.0, 5.0):
        assert prof.delta(eps) == pytest.approx(min(1.0, m**k * composed.delta(eps)), rel=1e-12)
    assert prof.epsilon(1e-6) == pytest.approx(composed.epsilon(1e-6 / m**k), rel=1e-12)
    tail = report_noisy_max_bound(m, GaussianProfile(sigma), rounds=k, method="gaussian_tail")
    assert tail.epsilon(1e-6) == pytest.approx(gaussian_tail_epsilon(m, sigma, 1e-6, rounds=k), rel=1e-14)
    assert prof.epsilon(1e-6) <= tail.epsilon(1e-6)
    rdp = report_noisy_max_bound(m, GaussianProfile(sigma), rounds=k, method="rdp")
    assert rdp.rdp(2.0) == pytest.approx(k * (2 * 4 / (2 * sigma**2) + math.log(m)), rel=1e-14)


def test_theorem33_rounds_laplace_uses_pld_composition() -> None:
    """Laplace noise (pure a = 2/b per round at sensitivity 2): the PLD composition of k rounds is at most
    the pure composition k·a, and one round gives exactly the pure bound region."""
    b, m = 4.0, 3
    one = report_noisy_max_bound(m, LaplaceProfile(b))
    assert one.epsilon(1e-6) <= 2.0 / b
    five = report_noisy_max_bound(m, LaplaceProfile(b), rounds=5)
    assert 2.0 / b < five.epsilon(1e-6) <= 5 * 2.0 / b + 1e-9


# --------------------------------------------------------------------------- bad input


def test_bad_input_names_the_parameter() -> None:
    base = GaussianProfile(1.0)
    for bad in (0, -3, 2.5, True, "3"):
        with pytest.raises(ParameterError, match="m"):
            report_noisy_max_bound(bad, base)
    for bad in (0, -1, 1.5):
        with pytest.raises(ParameterError, match="rounds"):
            report_noisy_max_bound(3, base, rounds=bad)
    with pytest.raises(ParameterError, match="method"):
        report_noisy_max_bound(3, base, method="exact")
    with pytest.raises(ParameterError, match="monotone"):
        report_noisy_max_bound(3, base, monotone="yes")
    with pytest.raises(ParameterError, match="delta"):
        report_noisy_max_bound(3, base).epsilon(2.0)
    with pytest.raises(NotApplicableError, match="prescaled"):
        noise_profile(RandomizedResponseProfile(1.0))
    with pytest.raises(NotApplicableError, match="Gaussian"):
        report_noisy_max_bound(3, LaplaceProfile(1.0), method="gaussian_tail")
    with pytest.raises(ParameterError, match="m_values"):
        rnm_figure1_curves(10)
