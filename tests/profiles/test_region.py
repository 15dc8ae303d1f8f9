"""Privacy-region helpers: polygon, envelopes, Neyman--Pearson boundaries, location families."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from symsel.errors import ParameterError
from symsel.profiles import region
from symsel.profiles.region import (
    finite_pair_hockey_stick,
    finite_pair_hockey_stick_mp,
    finite_pair_renyi,
    gaussian_lower,
    gaussian_lower_mp,
    hockey_stick_from_vertices,
    laplace_lower,
    laplace_lower_mp,
    neyman_pearson_vertices,
    pair_from_vertices,
    polygon_lower,
    polygon_lower_mp,
    polygon_vertices,
    polyline_lower,
    profile_envelope,
    upper_envelope,
)
from symsel.spec import parse_profile

Q = np.linspace(0.0, 1.0, 2001)


def four_point_pair(eps: float, delta: float) -> tuple[list[float], list[float]]:
    """The worst (ε, δ) pair, written out independently of the code under test."""
    e = math.exp(eps)
    return (
        [delta, (1 - delta) * e / (1 + e), (1 - delta) / (1 + e), 0.0],
        [0.0, (1 - delta) / (1 + e), (1 - delta) * e / (1 + e), delta],
    )


def all_tests(P: list[float], Pp: list[float]) -> np.ndarray:
    """(P(S), P'(S)) for every deterministic test S ⊆ outcomes."""
    pts = []
    n = len(P)
    for mask in itertools.product([0, 1], repeat=n):
        pts.append(
            (sum(p for p, m in zip(P, mask, strict=True) if m), sum(p for p, m in zip(Pp, mask, strict=True) if m))
        )
    return np.array(pts)


# --------------------------------------------------------------------------- polygon


@pytest.mark.parametrize(("eps", "delta"), [(0.0, 0.0), (1.0, 0.0), (1.0, 1e-3), (3.0, 0.2), (0.3, 0.9)])
def test_polygon_vertices_lie_on_both_segments(eps: float, delta: float) -> None:
    """V = ((e^ε+δ)/(1+e^ε), (1−δ)/(1+e^ε)) solves both S1 and S2 (docs/setting.md)."""
    a, vtx, b = polygon_vertices(eps, delta)
    assert a == (delta, 0.0) and b == (1.0, 1.0 - delta)
    x, y = vtx
    assert y == pytest.approx(math.exp(-eps) * (x - delta), abs=1e-15)
    assert y == pytest.approx(1 - delta - math.exp(eps) * (1 - x), abs=1e-14)
    assert polygon_lower(x, eps, delta) == pytest.approx(y, abs=1e-15 * (1 + math.exp(eps)))


@pytest.mark.parametrize(("eps", "delta"), [(0.5, 0.0), (1.0, 1e-3), (2.0, 0.1)])
def test_polygon_is_neyman_pearson_boundary_of_four_point_pair(eps: float, delta: float) -> None:
    """Every deterministic test of the worst pair lies above the polygon and its vertices are attained."""
    P, Pp = four_point_pair(eps, delta)
    pts = all_tests(P, Pp)
    lower = polygon_lower(pts[:, 0], eps, delta)
    assert np.all(pts[:, 1] >= lower - 1e-15)
    for vx, vy in polygon_vertices(eps, delta):
        hit = np.isclose(pts[:, 0], vx, atol=1e-15) & np.isclose(pts[:, 1], vy, atol=1e-15)
        assert hit.any()


def test_polygon_lower_mp_matches_float() -> None:
    for q in (0.0, 1e-4, 0.3, 0.6, 0.999, 1.0):
        assert float(polygon_lower_mp(q, 1.2, 1e-5, 40)) == pytest.approx(polygon_lower(q, 1.2, 1e-5), abs=1e-15)


def test_polygon_lower_mp_is_the_polygon_at_each_precision_in_turn() -> None:
    """The polygon at ``dps`` digits, its two exponentials kept between calls, is ``max(0, e^-eps1 (q - delta1),
    1 - delta1 - e^eps1 (1 - q))`` computed at that precision, for precisions in any order."""
    for dps in (15, 60, 15, 100, 30):
        for q, eps1, delta1 in ((0.3, 1.2, 1e-5), (0.9, 1.2, 1e-5), (0.999, 0.25, 0.0), (0.5, 3.0, 0.01)):
            with mpmath.workdps(dps):
                x, e, d = mpmath.mpf(q), mpmath.mpf(eps1), mpmath.mpf(delta1)
                expected = max(mpmath.mpf(0), mpmath.exp(-e) * (x - d), 1 - d - mpmath.exp(e) * (1 - x))
            assert polygon_lower_mp(q, eps1, delta1, dps) == expected, (dps, q)


def test_polygon_huge_eps_no_nan() -> None:
    out = polygon_lower(np.array([0.0, 0.5, 1.0]), 800.0, 0.1)
    assert np.all(np.isfinite(out))
    assert out[-1] == pytest.approx(0.9)


# --------------------------------------------------------------------------- Gaussian / Laplace


def test_gaussian_lower_is_attained_by_threshold_tests() -> None:
    """N(μ,1) vs N(0,1): the tests {x > t} give (Φ(μ − t), Φ(−t)) exactly on the boundary."""
    mu = 1.3
    t = np.linspace(-8, 8, 401)
    q, qp = stats.norm.sf(t - mu), stats.norm.sf(t)
    assert np.allclose(gaussian_lower(q, mu), qp, rtol=1e-9, atol=1e-15)


def test_gaussian_lower_two_sided_tests_lie_above() -> None:
    mu = 0.8
    rng = np.random.default_rng(1)
    a, b = np.sort(rng.uniform(-5, 6, size=(2, 500)), axis=0)
    q = stats.norm.cdf(b - mu) - stats.norm.cdf(a - mu)
    qp = stats.norm.cdf(b) - stats.norm.cdf(a)
    assert np.all(qp >= gaussian_lower(q, mu) - 1e-14)


@pytest.mark.parametrize("q", [1e-30, 1e-8, 0.25, 0.5, 0.75, 1 - 1e-9])
def test_gaussian_lower_mp_matches_float_and_erfinv(q: float) -> None:
    ref = gaussian_lower_mp(q, 2.0, 40)
    assert float(ref) == pytest.approx(gaussian_lower(q, 2.0), rel=1e-9)
    with mpmath.workdps(120):  # independent: Φ⁻¹(q) = √2 erfinv(2q − 1) at generous precision
        x = mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(q) - 1)
        independent = mpmath.ncdf(x - 2)
        assert abs(independent - ref) <= mpmath.mpf(10) ** -35 * independent


def test_laplace_lower_is_attained_by_threshold_tests() -> None:
    """Lap(0,1) vs Lap(a,1): the tests {x < t} are the Neyman--Pearson tests."""
    a = 0.7
    t = np.linspace(-10, 10, 501)
    q, qp = stats.laplace.cdf(t), stats.laplace.cdf(t - a)
    assert np.allclose(laplace_lower(q, a), qp, rtol=1e-10, atol=1e-16)
    for qq in (1e-6, 0.3, 0.5, 0.8):
        assert float(laplace_lower_mp(qq, a, 30)) == pytest.approx(laplace_lower(qq, a), rel=1e-12)


def test_laplace_lower_interval_tests_lie_above() -> None:
    a = 1.5
    rng = np.random.default_rng(2)
    lo, hi = np.sort(rng.uniform(-6, 8, size=(2, 400)), axis=0)
    q = stats.laplace.cdf(hi) - stats.laplace.cdf(lo)
    qp = stats.laplace.cdf(hi - a) - stats.laplace.cdf(lo - a)
    assert np.all(qp >= laplace_lower(q, a) - 1e-14)


# --------------------------------------------------------------------------- finite pairs


def test_finite_pair_hockey_stick_direct_sum() -> None:
    P, Pp = [0.5, 0.3, 0.2, 0.0], [0.1, 0.3, 0.4, 0.2]
    for eps in (-2.0, -0.3, 0.0, 0.4, 1.6, 5.0):
        ref = sum(max(0.0, p - math.exp(eps) * pp) for p, pp in zip(P, Pp, strict=True))
        assert finite_pair_hockey_stick(eps, P, Pp) == pytest.approx(ref, abs=1e-15)
        assert float(finite_pair_hockey_stick_mp(eps, P, Pp, 30)) == pytest.approx(ref, abs=1e-15)
    assert finite_pair_hockey_stick(math.inf, Pp, P) == pytest.approx(0.2)
    assert finite_pair_hockey_stick(-math.inf, P, Pp) == pytest.approx(1.0)


def test_finite_pair_renyi_direct() -> None:
    P, Pp = [0.6, 0.4], [0.3, 0.7]
    lam = 2.5
    ref = math.log(sum(p**lam * pp ** (1 - lam) for p, pp in zip(P, Pp, strict=True))) / (lam - 1)
    assert finite_pair_renyi(lam, P, Pp) == pytest.approx(ref, rel=1e-13)
    assert finite_pair_renyi(math.inf, P, Pp) == pytest.approx(math.log(2))
    assert finite_pair_renyi(3.0, [0.5, 0.5], [1.0, 0.0]) == math.inf


@pytest.mark.parametrize("block", [1 << 20, 7])
def test_the_renyi_curve_of_a_finite_pair_is_the_divergence_at_every_order(block, monkeypatch) -> None:
    """The vectorized curve (in blocks of orders; a block of 7 terms splits it into many) against mpmath sums at
    40 digits, order by order, on pairs with an outcome that only one side has, and the profile's two-sided curve
    (the one Lemma 7 and Theorem 2 read) against its one-order :meth:`rdp`."""
    monkeypatch.setattr(region, "_RENYI_BLOCK", block)
    rng = np.random.default_rng(11)
    orders = np.array([1.001, 1.5, 2.0, 3.7, 10.0, 64.0, 255.5, math.inf, 1e4])
    for n in (2, 5, 40):
        P, Pp = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
        Pp[0] = 0.0  # P has mass where P' has none: infinite one way; P' -> P stays finite
        Pp /= Pp.sum()
        assert np.all(region.finite_pair_renyi_curve(orders, P, Pp) == math.inf)
        curve = region.finite_pair_renyi_curve(orders, Pp, P)
        with mpmath.workdps(40):
            a, b = [mpmath.mpf(float(x)) for x in Pp], [mpmath.mpf(float(x)) for x in P]
            for lam, got in zip(orders, curve, strict=True):
                if math.isinf(lam):
                    ref = max(mpmath.log(x / y) for x, y in zip(a, b, strict=True) if x > 0)
                else:
                    total = mpmath.fsum(x**lam * y ** (1 - lam) for x, y in zip(a, b, strict=True) if x > 0)
                    ref = mpmath.log(total) / (lam - 1)
                assert got == pytest.approx(float(max(ref, 0)), rel=1e-12, abs=1e-300), (n, lam)
        profile = parse_profile(f"pair(p={P.tolist()}, q={rng.dirichlet(np.ones(n)).tolist()})")
        two_sided = profile.rdp_curve(orders)
        assert [profile.rdp(float(lam)) for lam in orders] == list(two_sided)
    with pytest.raises(ParameterError, match="orders"):
        region.finite_pair_renyi_curve(np.array([2.0, 1.0]), [0.5, 0.5], [0.4, 0.6])


def test_neyman_pearson_vertices_bound_all_tests() -> None:
    """Every test (deterministic subsets) lies on or above the NP polyline; the polyline is attained."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        P = rng.dirichlet(np.ones(5))
        Pp = rng.dirichlet(np.ones(5))
        xs, ys = neyman_pearson_vertices(P, Pp)
        pts = all_tests(list(P), list(Pp))
        # q'_min is non-decreasing: shifting q by 1e-13 absorbs the rounding of the subset sums on steep pieces
        assert np.all(pts[:, 1] >= polyline_lower(np.clip(pts[:, 0] - 1e-13, 0, 1), xs, ys) - 1e-14)
        for x, y in zip(xs, ys, strict=True):  # each vertex is a deterministic test
            assert np.min(np.abs(pts[:, 0] - x) + np.abs(pts[:, 1] - y)) < 1e-12


def test_randomized_tests_lie_above_np_polyline() -> None:
    rng = np.random.default_rng(4)
    P, Pp = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
    xs, ys = neyman_pearson_vertices(P, Pp)
    g = rng.uniform(size=(2000, 6))
    q, qp = g @ P, g @ Pp
    assert np.all(qp >= polyline_lower(np.clip(q - 1e-13, 0, 1), xs, ys) - 1e-14)


def test_pair_from_vertices_round_trip() -> None:
    P, Pp = [0.5, 0.3, 0.2, 0.0], [0.1, 0.3, 0.4, 0.2]
    xs, ys = neyman_pearson_vertices(P, Pp)
    P2, Pp2 = pair_from_vertices(xs, ys)
    assert sum(P2) == pytest.approx(1) and sum(Pp2) == pytest.approx(1)
    for eps in (-1.0, 0.0, 0.5, 2.0):
        assert finite_pair_hockey_stick(eps, P2, Pp2) == pytest.approx(finite_pair_hockey_stick(eps, P, Pp), abs=1e-15)
        assert hockey_stick_from_vertices(eps, xs, ys) == pytest.approx(finite_pair_hockey_stick(eps, P, Pp), abs=1e-15)


# --------------------------------------------------------------------------- envelopes


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 50.0), st.floats(-2.0, 2.0), st.floats(-1.0, 1.0)), min_size=1, max_size=12))
def test_upper_envelope_equals_brute_force_max(lines: list[tuple[float, float, float]]) -> None:
    slopes, x0, y0 = zip(*lines, strict=True)
    env = upper_envelope(list(slopes), list(x0), list(y0))
    a, x, y = (np.array(t)[:, None] for t in (slopes, x0, y0))
    brute = np.clip(np.maximum(0.0, np.max(y + a * (Q[None, :] - x), axis=0)), 0.0, 1.0)
    assert np.allclose(env(Q), brute, atol=1e-12)


def test_profile_envelope_is_max_of_polygons() -> None:
    pts = [(0.5, 0.1), (1.0, 1e-3), (2.0, 1e-6), (4.0, 1e-9)]
    env = profile_envelope([e for e, _ in pts], [d for _, d in pts])
    brute = np.max([polygon_lower(Q, e, d) for e, d in pts], axis=0)
    assert np.allclose(env(Q), brute, atol=1e-15)
    xs, ys = env.vertices()
    assert np.allclose(polyline_lower(Q, xs, ys), brute, atol=1e-14)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: polygon_lower(0.5, -1.0, 0.1), "eps1"),
        (lambda: polygon_lower(0.5, 1.0, 1.5), "delta1"),
        (lambda: polygon_lower(1.5, 1.0, 0.1), "q"),
        (lambda: polygon_lower(float("nan"), 1.0, 0.1), "q"),
        (lambda: gaussian_lower([0.2, float("nan")], 1.0), "q"),
        (lambda: gaussian_lower(0.2, -1.0), "mu"),
        (lambda: finite_pair_hockey_stick(0.0, [0.5, 0.6], [0.5, 0.5]), "P"),
        (lambda: finite_pair_renyi(1.0, [0.5, 0.5], [0.5, 0.5]), "order"),
    ],
)
def test_bad_parameters_raise_parameter_error(call, name: str) -> None:
    with pytest.raises(ParameterError, match=name):
        call()


def _lowest_second_mass_brute_force(P: list, Pp: list, q) -> object:
    """The smallest ``Q'``-mass of a randomized test of ``Q``-mass ``q`` on a finite pair: every deterministic test
    (subset of outcomes) gives a point ``(P(S), P'(S))``; a randomized test is a mixture of two of them, so the
    answer is the lowest chord between two points on either side of ``q``, over every pair of subsets."""
    n = len(P)
    points = [(sum(P[i] for i in s), sum(Pp[i] for i in s))
              for r in range(n + 1) for s in itertools.combinations(range(n), r)]
    best = None
    for (x1, y1), (x2, y2) in itertools.product(points, points):
        if x1 <= q <= x2:
            y = y1 if x2 == x1 else y1 + (y2 - y1) * (q - x1) / (x2 - x1)
            best = y if best is None else min(best, y)
    return best


def test_neyman_pearson_vertices_mp_give_the_lowest_test_whatever_the_order_of_the_outcomes() -> None:
    """The mpmath Neyman--Pearson polyline of a four-outcome pair listed out of likelihood-ratio order equals the
    brute-force lowest randomized test over all 16 subsets (exact rationals); an unsorted polyline lies above it."""
    from fractions import Fraction

    P = [Fraction(k, 10) for k in (1, 4, 2, 3)]
    Pp = [Fraction(k, 10) for k in (3, 1, 4, 2)]
    xs, ys = region.neyman_pearson_vertices_mp([float(p) for p in P], [float(p) for p in Pp], 40)
    for q in (Fraction(k, 20) for k in (1, 6, 9, 14, 19)):
        expected = _lowest_second_mass_brute_force(P, Pp, q)
        got = region.polyline_lower_mp(mpmath.mpf(q.numerator) / q.denominator, xs, ys, 40)
        assert abs(got - mpmath.mpf(expected.numerator) / expected.denominator) < mpmath.mpf(10) ** -15, (q, got)
