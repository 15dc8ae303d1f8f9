"""Gaussian and Laplace profiles against quadrature of the densities and against dp-accounting."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld
from scipy import stats

from symsel.profiles import FAMILIES, GaussianProfile, LaplaceProfile, gdp

# --------------------------------------------------------------------------- references (independent)


def gaussian_hockey_stick_quad(mu: float, eps: float, dps: int = 40) -> mpmath.mpf:
    """∫ [φ(x − μ) − e^ε φ(x)]_+ dx by quadrature; the integrand is positive right of the crossing
    point x* where the log-likelihood ratio μx − μ²/2 equals ε (found by root finding)."""
    with mpmath.workdps(dps):
        mu_, e = mpmath.mpf(mu), mpmath.mpf(eps)

        def f(x: mpmath.mpf) -> mpmath.mpf:
            return mpmath.npdf(x - mu_) - mpmath.exp(e) * mpmath.npdf(x)

        xstar = mpmath.findroot(lambda x: mu_ * x - mu_**2 / 2 - e, 0)
        scale = max(1, abs(xstar))  # the tail decays on the scale 1/|x*|
        pts = [xstar + mpmath.mpf(2) ** k / scale for k in range(-4, 8)]
        with mpmath.workdps(dps + 20):  # headroom for the cancellation inside the integrand
            return mpmath.quad(f, [xstar, *pts, mpmath.inf], method="gauss-legendre")


def laplace_hockey_stick_quad(b: float, sens: float, eps: float, dps: int = 30) -> mpmath.mpf:
    """∫ [p(x) − e^ε p'(x)]_+ dx for p = Lap(0, b), p' = Lap(Δ, b), splitting at the kinks 0, Δ and at
    the crossing found numerically."""
    with mpmath.workdps(dps):
        b_, d_, e = mpmath.mpf(b), mpmath.mpf(sens), mpmath.mpf(eps)

        def f(x: mpmath.mpf) -> mpmath.mpf:
            val = mpmath.exp(-abs(x) / b_) / (2 * b_) - mpmath.exp(e) * mpmath.exp(-abs(x - d_) / b_) / (2 * b_)
            return max(mpmath.mpf(0), val)

        def loss(x: mpmath.mpf) -> mpmath.mpf:
            return (abs(x - d_) - abs(x)) / b_ - e

        pts = [-mpmath.inf, mpmath.mpf(0), d_, mpmath.inf]
        if loss(mpmath.mpf(0)) * loss(d_) < 0:
            pts.insert(2, mpmath.findroot(loss, (mpmath.mpf(0), d_), solver="bisect"))
        return mpmath.quad(f, pts)


# --------------------------------------------------------------------------- Gaussian


@pytest.mark.parametrize("sigma", [0.5, 1.0, 4.0])
def test_gaussian_matches_quadrature(sigma: float) -> None:
    g = GaussianProfile(sigma)
    for eps in (-2.0, -0.2, 0.0, 0.3, 1.0, 3.0):
        ref = gaussian_hockey_stick_quad(1 / sigma, eps)
        # the float path rounds up by its error bound (at most ~1e-7 relative), never down
        assert g.delta(eps) == pytest.approx(float(ref), rel=2e-7, abs=1e-300)
        assert g.delta(eps) >= ref
        with mpmath.workdps(40):
            assert abs(g.delta_mp(eps, 35) - ref) <= mpmath.mpf(10) ** -30 * ref


@pytest.mark.parametrize("sigma", [0.7, 2.0])
def test_gaussian_vs_dp_accounting_pld(sigma: float) -> None:
    """dp-accounting's pessimistic PLD is an upper bound, within its discretization of the exact value."""
    g = GaussianProfile(sigma, sensitivity=1.0)
    ref = pld.from_gaussian_mechanism(sigma, sensitivity=1.0, value_discretization_interval=1e-4)
    eps = np.linspace(0.0, 4.0, 41)
    ours = g.delta(eps)
    theirs = np.asarray(ref.get_delta_for_epsilon(eps))
    big = theirs > 1e-12
    assert np.all(ours[big] <= theirs[big] * (1 + 2e-7))
    assert np.allclose(ours[big], theirs[big], rtol=2e-3)
    for d in (1e-3, 1e-6, 1e-9):
        assert g.epsilon(d) == pytest.approx(ref.get_epsilon_for_delta(d), abs=2e-3)
        assert g.epsilon(d) <= ref.get_epsilon_for_delta(d) + 1e-9


def test_gaussian_tiny_delta_no_underflow() -> None:
    """σ = 1: the ε with δ = 1e-30 is found and δ there agrees with mpmath (50 digits) to 1e-8."""
    g = GaussianProfile(1.0)
    eps = g.epsilon(1e-30)
    assert math.isfinite(eps) and eps > 0
    val = g.delta(eps)
    ref = g.delta_mp(eps, 50)
    assert val == pytest.approx(float(ref), rel=1e-8)
    assert float(gaussian_hockey_stick_quad(1.0, eps, 50)) == pytest.approx(float(ref), rel=1e-20)
    assert val <= 1e-30 * (1 + 1e-9)
    # far below the float range: log δ still finite and right
    for e in (40.0, 80.0, 300.0):
        ld = g.log_delta(e)
        assert math.isfinite(ld)
        assert ld == pytest.approx(float(mpmath.log(g.delta_mp(e, 60))), rel=1e-10)


def test_gaussian_far_tail_mp_series_and_extreme_sigma() -> None:
    """a < −1000 uses the Mills-ratio series in mpmath; it agrees with Φ(a) − e^ε Φ(b) at 80 digits."""
    g = GaussianProfile(1.0)
    for eps in (1005.0, 3000.0):
        with mpmath.workdps(80):
            e = mpmath.mpf(eps)
            ref = mpmath.ncdf(-e + 0.5) - mpmath.exp(e) * mpmath.ncdf(-e - 0.5)
        assert abs(g.delta_mp(eps, 30) / ref - 1) < mpmath.mpf(10) ** -25
        assert g.log_delta(eps) == pytest.approx(float(mpmath.log(ref)), rel=1e-12)
    for sigma in (1e-300, 1e300):  # no NaN, no crash at absurd parameters
        d = GaussianProfile(sigma).delta(np.array([-1.0, 0.0, 1.0, 1e6]))
        assert np.all(np.isfinite(d)) and np.all(np.diff(d) <= 0)


def test_gaussian_small_mu_accuracy() -> None:
    """Large σ: the log-space formula keeps its digits (falls back to mpmath on cancellation)."""
    g = GaussianProfile(2000.0)
    for eps in (0.0, 1e-4, 2e-3):
        assert g.delta(eps) == pytest.approx(float(g.delta_mp(eps, 40)), rel=2e-7)


def test_gaussian_region_and_rdp_and_compose() -> None:
    g = GaussianProfile(2.0, sensitivity=1.5)
    mu = 0.75
    assert g.mu == pytest.approx(mu)
    t = np.linspace(-6, 6, 121)
    assert np.allclose(g.region_lower(stats.norm.sf(t - mu)), stats.norm.sf(t), rtol=1e-9, atol=1e-15)
    assert float(g.region_lower_mp(0.3, 30)) == pytest.approx(g.region_lower(0.3), rel=1e-12)
    # RDP λμ²/2 against the Rényi integral ∫ p^λ p'^(1−λ)
    lam = 2.5
    with mpmath.workdps(30):
        integral = mpmath.quad(
            lambda x: mpmath.npdf(x - mu) ** lam * mpmath.npdf(x) ** (1 - lam), [-mpmath.inf, mpmath.inf]
        )
        assert g.rdp(lam) == pytest.approx(float(mpmath.log(integral) / (lam - 1)), rel=1e-12)
    assert g.rdp(math.inf) == math.inf
    # the curve at many orders at once: each value is rdp(order), bit for bit; a bad order is refused as rdp refuses it
    orders = np.concatenate([1 + np.logspace(-9, 3, 200), [math.inf]])
    np.testing.assert_array_equal(g.rdp_curve(orders), [g.rdp(float(order)) for order in orders])
    assert GaussianProfile(1e-200).rdp_curve(np.array([2.0, 1e10]))[1] == math.inf  # overflow: no Rényi privacy
    for bad in ([2.0, 1.0], [math.nan, 3.0]):
        with pytest.raises(ValueError, match="order"):
            g.rdp_curve(np.array(bad))
    composed = g.compose(4)
    assert composed.spec.startswith("gdp(") and composed.mu == pytest.approx(2 * mu)
    same = GaussianProfile(1.0, sensitivity=1.5)  # four Gaussians at σ compose to one at σ/2
    assert np.allclose(composed.delta(np.linspace(-1, 5, 13)), same.delta(np.linspace(-1, 5, 13)), rtol=1e-12)
    assert gdp(0.75).delta(0.5) == pytest.approx(g.delta(0.5), rel=1e-14)
    assert g.epsilon(0.0) == math.inf


def test_gaussian_family_spec() -> None:
    g = FAMILIES["gaussian"](sigma=4)
    assert g.spec == "gaussian(sigma=4.0, sensitivity=1.0)"
    assert FAMILIES["gdp"](mu=0.5).spec == "gdp(mu=0.5)"


# --------------------------------------------------------------------------- Laplace


@pytest.mark.parametrize(("b", "sens"), [(1.0, 1.0), (0.5, 2.0), (3.0, 1.0)])
def test_laplace_matches_quadrature(b: float, sens: float) -> None:
    lp = LaplaceProfile(b, sensitivity=sens)
    a = sens / b
    for eps in (-3 * a, -a - 0.1, -a / 2, -1e-3, 0.0, a / 3, a - 1e-3, a, 2 * a):
        ref = laplace_hockey_stick_quad(b, sens, eps)
        assert lp.delta(eps) == pytest.approx(float(ref), rel=1e-10, abs=1e-14)
        assert lp.delta(eps) >= ref - mpmath.mpf(10) ** -25  # quadrature error only
        assert float(lp.delta_mp(eps, 30)) == pytest.approx(float(ref), rel=1e-12, abs=1e-20)
    assert lp.epsilon(0.0) == pytest.approx(a)


def test_laplace_vs_dp_accounting_pld() -> None:
    lp = LaplaceProfile(1.3, sensitivity=1.0)
    ref = pld.from_laplace_mechanism(1.3, sensitivity=1.0, value_discretization_interval=1e-4)
    eps = np.linspace(0.0, 1.0, 21)
    theirs = np.asarray(ref.get_delta_for_epsilon(eps))
    ours = lp.delta(eps)
    assert np.all(ours <= theirs + 1e-12)
    assert np.allclose(ours, theirs, atol=2e-4)


def test_laplace_region_and_rdp() -> None:
    b, sens = 0.8, 1.0
    lp = LaplaceProfile(b, sensitivity=sens)
    t = np.linspace(-8, 8, 161)
    q, qp = stats.laplace.cdf(t, scale=b), stats.laplace.cdf(t - sens, scale=b)
    assert np.allclose(lp.region_lower(q), qp, rtol=1e-10, atol=1e-16)
    assert float(lp.region_lower_mp(0.2, 30)) == pytest.approx(lp.region_lower(0.2), rel=1e-12)
    for lam in (1.5, 2.0, 7.0):
        with mpmath.workdps(30):

            def integrand(x: mpmath.mpf, lam: float = lam) -> mpmath.mpf:
                p = mpmath.exp(-abs(x) / b) / (2 * b)
                pp = mpmath.exp(-abs(x - sens) / b) / (2 * b)
                return p**lam * pp ** (1 - lam)

            integral = mpmath.quad(integrand, [-mpmath.inf, 0, sens, mpmath.inf])
            assert lp.rdp(lam) == pytest.approx(float(mpmath.log(integral) / (lam - 1)), rel=1e-10)
    assert lp.rdp(math.inf) == pytest.approx(sens / b)


# --------------------------------------------------------------------------- float path never rounds down
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_EXACT_DPS = 50


def _gaussian_delta_exact(sigma: float, eps: float) -> mpmath.mpf:
    """Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), μ = 1/σ formed in mpmath, at 50 digits (enough guard digits
    for the cancellation: the two terms are computed at 50 + 60 digits)."""
    with mpmath.workdps(_EXACT_DPS + 60):
        mu = 1 / mpmath.mpf(sigma)
        e = mpmath.mpf(eps)
        value = mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)
    with mpmath.workdps(_EXACT_DPS):
        return +value


@settings(max_examples=150, deadline=None, derandomize=True)
@given(sigma=st.floats(0.05, 100.0), eps=st.floats(-5.0, 50.0))
def test_gaussian_float_delta_never_below_the_exact_value(sigma: float, eps: float) -> None:
    """A profile used in a bound must never round down: the float64 δ(ε) is at least the exact value
    (50 digits) and at most 2e-7 above it relatively (the float path adds its error bound, at most 1e-7
    in log δ before it hands over to mpmath; the smallest positive float where the exact value underflows)."""
    prof = GaussianProfile(sigma)
    value = prof.delta(eps)
    with mpmath.workdps(_EXACT_DPS):
        exact = _gaussian_delta_exact(sigma, eps)
        assert mpmath.mpf(value) >= exact, (sigma, eps, value, exact)
        assert mpmath.mpf(value) <= exact * (1 + mpmath.mpf("2e-7")) + mpmath.mpf("1e-320"), (sigma, eps)
        if exact > 0:
            assert mpmath.mpf(prof.log_delta(eps)) >= mpmath.log(exact)


def test_gaussian_float_delta_sigma_50_eps_half() -> None:
    """The case that used to round down (about −6e-11 relative)."""
    with mpmath.workdps(_EXACT_DPS):
        exact = _gaussian_delta_exact(50.0, 0.5)
        value = mpmath.mpf(GaussianProfile(50.0).delta(0.5))
        assert exact <= value <= exact * (1 + mpmath.mpf("1e-9"))


def _laplace_delta_exact(scale: float, eps: float) -> mpmath.mpf:
    """Laplace profile at 50 digits: 0 for ε ≥ a, 1 − exp((ε − a)/2) for |ε| ≤ a, 1 − e^ε below, a = 1/b."""
    with mpmath.workdps(_EXACT_DPS + 20):
        a, e = 1 / mpmath.mpf(scale), mpmath.mpf(eps)
        if e >= a:
            return mpmath.mpf(0)
        return -mpmath.expm1((e - a) / 2) if e >= -a else -mpmath.expm1(e)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(scale=st.floats(0.05, 100.0), eps=st.floats(-5.0, 50.0))
def test_laplace_float_delta_never_below_the_exact_value(scale: float, eps: float) -> None:
    value = LaplaceProfile(scale).delta(eps)
    with mpmath.workdps(_EXACT_DPS):
        exact = _laplace_delta_exact(scale, eps)
        assert mpmath.mpf(value) >= exact, (scale, eps, value, exact)
        assert mpmath.mpf(value) <= exact * (1 + mpmath.mpf("1e-9")) + mpmath.mpf("1e-15"), (scale, eps)


# --------------------------------------------------------------------------- the far tail (a < -1000) in closed form
def _gaussian_log_delta_direct(mu: float, eps: float) -> mpmath.mpf:
    """``log(Φ(a) − e^ε Φ(a − μ))`` with ``a = −ε/μ + μ/2`` from ``mpmath.ncdf`` at 120 digits (the subtraction
    loses about ``log10(|a|/μ)`` of them: at most 18 here), returned at 50."""
    with mpmath.workdps(120):
        m, e = mpmath.mpf(mu), mpmath.mpf(eps)
        a = -e / m + m / 2
        value = mpmath.log(mpmath.ncdf(a) - mpmath.exp(e) * mpmath.ncdf(a - m))
    with mpmath.workdps(50):
        return +value


FAR_TAIL_CASES = [(mu, (mu / 2 + x) * mu) for mu in (1e-6, 1e-3, 0.3, 1.0, 10.0, 1e3)
                  for x in (1000.0, 1000.5, 3e3, 1.5e4, 1e5, 1e7, 1e9)]


def test_gaussian_far_tail_closed_form_never_below_and_close() -> None:
    """Below ``a = −1000`` the float64 ``log δ`` is the closed-form bound plus its error bound: never below the
    exact value (50 digits, from ``Φ`` directly, not the Mills series of ``delta_mp``), within ``1e-12`` of it
    relatively, and without the mpmath fallback (which took 0.5 ms per value, and millions of them in a search)."""
    fallbacks: list[float] = []

    class Counting(GaussianProfile):
        def delta_mp(self, eps, dps):  # type: ignore[no-untyped-def]
            fallbacks.append(eps)
            return super().delta_mp(eps, dps)

    for mu, eps in FAR_TAIL_CASES:
        profile = Counting.from_mu(mu)
        value = float(profile.log_delta(eps))
        exact = _gaussian_log_delta_direct(mu, eps)
        with mpmath.workdps(50):
            assert mpmath.mpf(value) >= exact, (mu, eps, value, exact)
            assert (mpmath.mpf(value) - exact) / abs(exact) <= mpmath.mpf("1e-12"), (mu, eps, value, exact)
    assert len(fallbacks) <= 1, fallbacks  # at most mu = 1e3 at a = -1000, where the input error is near the limit


def test_gaussian_far_tail_vectorized_matches_scalar() -> None:
    """One array of far-tail arguments answers what each does alone (the closed form is elementwise)."""
    g = GaussianProfile(100.0)
    eps = np.array([1e3, 1e4, 1e5, 2.5e5])
    assert np.array_equal(g.log_delta(eps), np.array([g.log_delta(float(e)) for e in eps]))


def _exact_gaussian_log_delta(mu: float, eps: float, dps: int = 60) -> mpmath.mpf:
    """``log δ(ε)`` of ``μ``-GDP from Balle & Wang's closed form at ``dps`` digits (the cancellation of the far tail
    costs about ``log10(a²)`` of them)."""
    with mpmath.workdps(dps):
        mu_, e = mpmath.mpf(mu), mpmath.mpf(eps)
        return mpmath.log(mpmath.ncdf(-e / mu_ + mu_ / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu_ - mu_ / 2))


@pytest.mark.parametrize("eps", [200.0, 300.0])
def test_gaussian_log_delta_holds_when_log_ndtr_errs_by_its_allowed_tolerance(monkeypatch, eps: float) -> None:
    """The float log-space δ is rounded up by a bound that covers a ``log_ndtr`` off by its stated relative
    tolerance (64 ulp): with every ``log_ndtr`` value moved that far down (more negative, the side that lowers
    ``log δ``), the result is still not below the exact ``log δ`` (mpmath, 60 digits). Far in the tail
    (``|log Φ(a)| ≈ a²/2`` in the ten thousands) the other error terms of the bound do not cover this shift."""
    from scipy import special

    from symsel.profiles import analytic

    real = special.log_ndtr
    monkeypatch.setattr(special, "log_ndtr", lambda z: real(z) * (1 + 64 * 2.0**-53))
    mu = 1.0
    got = float(analytic.gaussian_log_delta(np.array([eps]), mu, lambda *_: pytest.fail("mpmath fallback"))[0])
    exact = _exact_gaussian_log_delta(mu, eps)
    assert got >= exact, (got, mpmath.nstr(exact, 20))
