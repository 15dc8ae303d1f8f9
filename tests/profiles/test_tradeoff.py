"""The trade-off curve and attack risk (symsel.profiles.tradeoff) against independent values.

References: the Gaussian trade-off curve in closed form at 50 digits (μ-GDP, ``k``-fold compositions
``μ = √k/σ``), the exact Neyman–Pearson curve of finite pairs by brute force over every deterministic test
(their lower convex hull is the set of randomized tests), the max of ``k`` Gaussians in closed form (a selection's
admissible pair) and the exact total variation distance. None of them goes through the code under test.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

from symsel import bound, parse_distribution, parse_profile
from symsel.errors import ParameterError
from symsel.profiles import GaussianProfile, PairProfile, Profile, RandomizedResponseProfile, gdp
from symsel.profiles.tradeoff import advantage_upper, beta_lower, tpr_upper, tradeoff_points
from tests.reference_profiles import ExactPairProfile

ALPHAS = np.array([1e-30, 1e-12, 1e-6, 1e-3, 0.01, 0.05, 0.2, 0.5, 0.8, 0.99, 1 - 1e-6, 1 - 1e-12])


def upper_quantile_mp(tail) -> mpmath.mpf:
    """``x`` with ``Φ(−x) = tail`` (the upper ``tail`` quantile ``Φ⁻¹(1 − tail)``), at the working precision:
    erfinv, then Newton steps on ``Φ(−x) = tail`` (accurate for a tiny ``tail``)."""
    x = -mpmath.sqrt(2) * mpmath.erfinv(2 * tail - 1)
    for _ in range(6):
        x += (mpmath.ncdf(-x) - tail) / mpmath.npdf(x)
    return x


def gaussian_beta_mp(alpha: float, mu: float) -> mpmath.mpf:
    """``Φ(Φ⁻¹(1 − α) − μ)`` at 50 digits (Dong, Roth, Su 2022, ``G_μ``)."""
    with mpmath.workdps(50):
        return mpmath.ncdf(upper_quantile_mp(mpmath.mpf(alpha)) - mu)


def gaussian_tpr_mp(alpha: float, mu: float) -> mpmath.mpf:
    """``1 − Φ(Φ⁻¹(1 − α) − μ) = Φ(μ − Φ⁻¹(1 − α))`` at 50 digits."""
    with mpmath.workdps(50):
        return mpmath.ncdf(mu - upper_quantile_mp(mpmath.mpf(alpha)))


# ------------------------------------------------------------------------------------ Gaussian, closed form
@pytest.mark.parametrize(("sigma", "k"), [(1.0, 1), (4.0, 10), (0.5, 3), (20.0, 1), (2.0, 100)])
def test_gaussian_compositions_against_closed_form(sigma, k):
    """The k-fold composition of the Gaussian mechanism is exactly (√k/σ)-GDP: the certified β is never above
    ``Φ(Φ⁻¹(1 − α) − μ)`` and within 1e-6 of it relative (β and TPR alike, each at its small end)."""
    base = GaussianProfile(sigma)
    profile = base if k == 1 else base.self_composed(k)[0]
    mu = math.sqrt(k) / sigma
    points = tradeoff_points(profile, ALPHAS)
    for alpha, beta, tpr in zip(ALPHAS, points.beta, points.tpr, strict=True):
        exact_beta, exact_tpr = gaussian_beta_mp(alpha, mu), gaussian_tpr_mp(alpha, mu)
        assert beta <= exact_beta, (alpha, beta, exact_beta)
        assert tpr >= exact_tpr, (alpha, tpr, exact_tpr)
        assert exact_beta - beta <= 1e-6 * exact_beta + 1e-300, (alpha, beta, exact_beta)
        assert tpr - exact_tpr <= 1e-6 * exact_tpr, (alpha, tpr, exact_tpr)


@pytest.mark.parametrize("mu", [0.01, 1.0, 8.0])
def test_gdp_curve_and_advantage(mu):
    """μ-GDP: the curve, and the advantage ``2Φ(μ/2) − 1`` (the total variation of N(0,1) and N(μ,1))."""
    profile = gdp(mu)
    alphas = np.array([1e-9, 0.02, 0.5, 0.97])
    beta = profile.tradeoff(alphas)
    exact = np.array([float(gaussian_beta_mp(a, mu)) for a in alphas])
    assert np.all(beta <= exact) and np.all(exact - beta <= 1e-6 * exact)
    with mpmath.workdps(50):
        tv = 2 * mpmath.ncdf(mpmath.mpf(mu) / 2) - 1
    assert profile.advantage() >= tv and profile.advantage() - tv <= 1e-12


# ------------------------------------------------------------------------------------ finite pairs, brute force
def brute_force_tradeoff(P, Q, alpha: float) -> mpmath.mpf:
    """``inf {1 − E_Q φ : E_P φ ≤ α}`` over every randomized test: enumerate every deterministic test (a subset of
    outcomes), then evaluate at ``alpha`` the lower convex hull of their (α, β) points (randomized tests are the
    mixtures of deterministic ones; the hull's lower chain by the monotone-chain algorithm), at 50 digits."""
    with mpmath.workdps(50):
        n = len(P)
        points = set()
        for chosen in itertools.product((0, 1), repeat=n):
            a = mpmath.fsum(mpmath.mpf(P[i]) for i in range(n) if chosen[i])
            b = 1 - mpmath.fsum(mpmath.mpf(Q[i]) for i in range(n) if chosen[i])
            points.add((a, b))
        hull: list = []
        for point in sorted(points):
            while len(hull) >= 2:
                (x1, y1), (x2, y2) = hull[-2], hull[-1]
                if (x2 - x1) * (point[1] - y1) - (y2 - y1) * (point[0] - x1) <= 0:  # hull[-1] not below the chord
                    hull.pop()
                else:
                    break
            hull.append(point)
        x = mpmath.mpf(alpha)
        best = min(b for a, b in hull if a <= x)  # tests with a smaller type I error
        for (a1, b1), (a2, b2) in itertools.pairwise(hull):
            if a1 <= x <= a2 and a2 > a1:
                best = min(best, b1 + (b2 - b1) * (x - a1) / (a2 - a1))
        return best


def composed_pair(P, Q, k: int):
    """The k-fold product pair, by plain enumeration."""
    outcomes = list(itertools.product(range(len(P)), repeat=k))
    return ([math.prod(P[i] for i in o) for o in outcomes], [math.prod(Q[i] for i in o) for o in outcomes])


@pytest.mark.parametrize(("eps", "k"), [(1.0, 1), (0.7, 3), (2.0, 2)])
def test_randomized_response_against_brute_force(eps, k):
    """Randomized response and its k-fold compositions: the certified β is never above the exact
    Neyman–Pearson curve found by brute force over all randomized tests, and equal to it (the pair is symmetric,
    so its profile loses nothing) to the search's relative tolerance: 1e-6 by default, 1e-10 when asked."""
    p = math.exp(eps) / (1 + math.exp(eps))
    P, Q = composed_pair([p, 1 - p], [1 - p, p], k)
    base = RandomizedResponseProfile(eps)
    profile = base if k == 1 else base.self_composed(k)[0]
    alphas = [1e-7, 0.01, 0.1, 0.3, 0.5, 0.77, 0.999]
    beta = profile.tradeoff(np.array(alphas))
    fine = profile.tradeoff(np.array(alphas), rtol=1e-10)
    for alpha, value, close in zip(alphas, beta, fine, strict=True):
        exact = min(brute_force_tradeoff(P, Q, alpha), brute_force_tradeoff(Q, P, alpha))
        assert value <= exact and close <= exact, (alpha, value, close, exact)
        assert exact - value <= 1e-6 * exact, (alpha, value, exact)
        assert exact - close <= 1e-9 * exact, (alpha, close, exact)


class RoundedUpPairProfile(Profile):
    """The two-sided profile of a finite pair summed at 50 digits and rounded up to float64: an upper profile with
    no float rounding on the wrong side, so the conversion alone is under test."""

    family = "rounded_up_pair"

    def __init__(self, p, q):
        self.p, self.q = p, q

    @property
    def spec(self) -> str:
        return "rounded_up_pair"

    def _delta_finite(self, eps):
        out = []
        with mpmath.workdps(50):
            for e in np.asarray(eps, dtype=float):
                g = mpmath.exp(mpmath.mpf(float(e)))
                pairs = [(mpmath.mpf(a), mpmath.mpf(b)) for a, b in zip(self.p, self.q, strict=True)]
                one = mpmath.fsum(max(0, a - g * b) for a, b in pairs)
                two = mpmath.fsum(max(0, b - g * a) for a, b in pairs)
                out.append(math.nextafter(float(max(one, two)), math.inf))
        return np.minimum(np.array(out), 1.0)


def test_random_pairs_never_above_either_direction():
    """Asymmetric finite pairs (the profile is the max of both directions): β is never above the exact curve of
    either order, by brute force; with the profile rounded up (strictly), and with symsel's own float64 pair profile
    (whose sums carry plain float rounding: within 1e-15)."""
    rng = np.random.default_rng(7)
    for _ in range(3):
        P = list(rng.dirichlet(np.ones(4)))
        Q = list(rng.dirichlet(np.ones(4)))
        alphas = [1e-4, 0.05, 0.4, 0.9]
        strict = RoundedUpPairProfile(P, Q).tradeoff(np.array(alphas))
        plain = PairProfile(P, Q).tradeoff(np.array(alphas))
        for alpha, value, float_value in zip(alphas, strict, plain, strict=True):
            exact = min(brute_force_tradeoff(P, Q, alpha), brute_force_tradeoff(Q, P, alpha))
            assert value <= exact, (alpha, value, exact)
            assert float_value <= exact + 1e-15, (alpha, float_value, exact)


def test_advantage_is_total_variation_of_a_pair():
    P, Q = [0.5, 0.3, 0.2], [0.2, 0.3, 0.5]
    assert advantage_upper(ExactPairProfile(P, Q)) == pytest.approx(0.3, rel=1e-15)
    assert PairProfile(P, Q).advantage() >= 0.3 - 1e-15


# ------------------------------------------------------------------------------------ selections
def max_of_k_gaussians_beta(alpha: float, k: int, mu: float) -> mpmath.mpf:
    """The exact trade-off of the best of ``k`` runs of N(0,1) against N(μ,1), scored by the output itself (an
    admissible base for a Gaussian mechanism of ``μ = 1/σ``): the maximum's likelihood ratio is increasing, so the
    Neyman–Pearson tests are thresholds ``max > t``; both orders of the pair, the smaller."""
    with mpmath.workdps(50):
        a = mpmath.mpf(alpha)
        t = upper_quantile_mp(1 - (1 - a) ** (mpmath.mpf(1) / k))  # Φ(t)^k = 1 − α
        one = mpmath.ncdf(t - mu) ** k  # reject "N(0,1)" when max > t
        s = mu - upper_quantile_mp(a ** (mpmath.mpf(1) / k))  # Φ(s − μ)^k = α
        two = 1 - mpmath.ncdf(s) ** k  # reject "N(μ,1)" when max < s
        return min(one, two)


@pytest.mark.parametrize("method", ["envelope", "composition", "fdp"])
def test_selection_never_above_an_admissible_pair(method):
    """The best of 3 runs of a Gaussian mechanism (σ = 2): every method's certified β lies below the exact curve
    of the selection on the Gaussian pair itself (the worst case is at least as distinguishable)."""
    selection = bound(parse_distribution("point(k=3)"), GaussianProfile(2.0), method)
    alphas = np.array([1e-6, 0.01, 0.2, 0.6])
    beta = selection.tradeoff(alphas)
    for alpha, value in zip(alphas, beta, strict=True):
        assert value <= max_of_k_gaussians_beta(float(alpha), 3, 0.5)


def max_of_k_gaussians_tv(k: int, mu: float) -> mpmath.mpf:
    """Total variation between the maxima of ``k`` runs of N(0,1) and of N(μ,1): ``sup_t Φ(t)^k − Φ(t − μ)^k``
    (threshold sets suffice: the likelihood ratio of the maxima is monotone), at 50 digits; the largest value on a
    grid of ``t`` is at most the supremum, so it is a valid lower reference."""
    with mpmath.workdps(50):
        def gap(t):
            return mpmath.ncdf(t) ** k - mpmath.ncdf(t - mu) ** k

        return max(gap(mpmath.mpf(t) / 200) for t in range(-600, 1201))


@pytest.mark.parametrize("method", ["envelope", "composition"])
def test_selection_advantage_between_tv_and_delta_zero(method):
    """The advantage bound of a selection is at most ``δ(0)`` and at least the exact advantage of the selection on
    the Gaussian pair (an admissible base), computed independently."""
    selection = bound(parse_distribution("point(k=3)"), GaussianProfile(2.0), method)
    value = selection.advantage()
    assert value <= float(selection.delta(0.0))
    assert value >= max_of_k_gaussians_tv(3, 0.5)


def test_advantage_below_delta_zero_where_the_bound_is_loose_there():
    """The envelope bound of geometric(30) on σ = 4 is 1 at ε = 0, but its other constraints bound the advantage by
    0.4951 (a fine grid of 2001 ε in [0, 4] gives 0.49395: the adaptive one is within 0.3 % of it)."""
    selection = bound(parse_distribution("geometric(mean=30)"), GaussianProfile(4.0), "envelope")
    assert float(selection.delta(0.0)) == 1.0
    assert 0.49395 < selection.advantage() < 0.4952


class ScaledProfile(Profile):
    """``min(1, c δ(ε))`` of another profile, ``c ≥ 1``: a valid upper profile, flat at 1 near ``ε = 0`` and not
    convex in ``e^ε`` (as bounds often are: the envelope bound of a fixed K is 1 on ``[0, ε0]``)."""

    family = "scaled"

    def __init__(self, inner: Profile, factor: float):
        self.inner, self.factor = inner, factor

    @property
    def spec(self) -> str:
        return "scaled"

    def _delta_finite(self, eps):
        return np.minimum(1.0, self.factor * np.asarray(self.inner.delta(np.abs(eps)), dtype=float))


@pytest.mark.parametrize("factor", [10.0, 100.0])
def test_search_not_trapped_where_a_bound_is_flat(factor):
    """On a profile flat at 1 near ``ε = 0`` the search finds TPR bounds at least as good as a dense scan of the same
    profile's constraints (20001 ``ε`` in [0, 10]) up to its relative tolerance, and never below the exact curve of
    the GDP it bounds."""
    inner = gdp(0.5)
    profile = ScaledProfile(inner, factor)
    eps = np.linspace(0.0, 10.0, 20001)
    deltas = np.asarray(profile.delta(eps))
    for fpr in (1e-4, 0.01, 0.1):
        dense = float(np.min(deltas + np.exp(eps) * fpr))
        assert profile.tpr_at_fpr(fpr) <= dense * (1 + 1e-6)  # the search's relative tolerance
        assert profile.tpr_at_fpr(fpr) >= gaussian_tpr_mp(fpr, 0.5)


# ------------------------------------------------------------------------------------ corners and input
def test_corners():
    profile = gdp(1.0)
    assert profile.tradeoff(1.0) == 0.0 and profile.tpr_at_fpr(1.0) == 1.0
    assert profile.tradeoff(0.0) == 1.0 and profile.tpr_at_fpr(0.0) == 0.0
    approx = parse_profile("approx(eps=1, delta=1e-3)")
    assert approx.tpr_at_fpr(0.0) == pytest.approx(1e-3, rel=1e-12) and approx.tpr_at_fpr(0.0) >= 1e-3
    nothing = parse_profile("approx(eps=1, delta=1)")
    assert np.all(nothing.tradeoff(np.array([0.0, 0.3, 1.0])) == 0.0)


def test_pure_dp_closed_form():
    """ε-DP: ``f(α) = max(0, 1 − e^ε α, e^{−ε}(1 − α))`` exactly (the kink at ``ε`` is evaluated)."""
    profile = parse_profile("pure(eps=1.5)")
    alphas = np.array([1e-9, 0.05, 0.2, 0.5, 0.9])
    exact = np.maximum(0, np.maximum(1 - math.exp(1.5) * alphas, math.exp(-1.5) * (1 - alphas)))
    beta = profile.tradeoff(alphas)
    assert np.all(beta <= exact) and np.allclose(beta, exact, rtol=1e-12, atol=0)


def test_vectorized_shape_and_scalar():
    profile = gdp(0.5)
    grid = np.array([[0.01, 0.1], [0.5, 0.9]])
    assert profile.tradeoff(grid).shape == (2, 2)
    assert isinstance(profile.tradeoff(0.1), float) and isinstance(profile.tpr_at_fpr(0.1), float)
    assert profile.tradeoff(0.1) == pytest.approx(beta_lower(profile, [0.1])[0], rel=0, abs=0)
    assert profile.tpr_at_fpr(0.1) == tpr_upper(profile, 0.1)


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "0.1", True, [0.1, 2.0]])
def test_bad_alpha_is_refused(bad):
    with pytest.raises(ParameterError, match="alpha"):
        gdp(1.0).tradeoff(bad)


@pytest.mark.parametrize("bad", [0.0, -1e-3, 0.5, float("nan"), True])
def test_bad_rtol_is_refused(bad):
    with pytest.raises(ParameterError, match="rtol"):
        tradeoff_points(gdp(1.0), 0.1, bad)
