"""The certified supremum: never below a dense brute-force evaluation, and close to it."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from symsel import binomial, geometric, point, poisson, tnb, two_point
from symsel.bounds.ratio import certified_log_sup
from symsel.profiles import GaussianProfile, pure
from symsel.profiles.region import polygon_lower


def vertex(eps1, delta1):
    """q of the polygon's vertex V = ((e^eps1 + delta1)/(1 + e^eps1), ...) (docs/setting.md)."""
    return (math.exp(eps1) + delta1) / (1 + math.exp(eps1))


def brute_force_sup(dist, boundary, weights, n=20001, extra=()):
    """max over a dense grid (plus known kinks) of a log phi'(q) - b log phi'(L(q)), phi' at 30
    digits (a lower bound on the true supremum)."""
    a, b = weights
    best = -math.inf
    for q in np.concatenate([np.linspace(1e-9, 1, n), extra]):
        lq = float(boundary(np.array([q]))[0])
        num, den = dist.dphi_mp(q, 30), dist.dphi_mp(lq, 30)
        if den == 0:
            continue
        best = max(best, float(a * mpmath.log(num) - b * mpmath.log(den)))
    return best


CASES = [
    (geometric(mean=30), lambda: GaussianProfile(4.0).region_lower, (1, 1), ()),
    (tnb(0.5, gamma=0.05), lambda: GaussianProfile(2.0).region_lower, (1, 1), ()),
    (poisson(10), lambda: (lambda q: polygon_lower(q, 0.5, 1e-3)), (1, 1), (vertex(0.5, 1e-3),)),
    (binomial(30, 0.3), lambda: (lambda q: polygon_lower(q, 0.3, 1e-2)), (1, 1), (vertex(0.3, 1e-2),)),
    (two_point(20, 0.2), lambda: GaussianProfile(8.0).region_lower, (1, 1), ()),
    (geometric(mean=30), lambda: GaussianProfile(4.0).region_lower, (4.0, 3.0), ()),
    (poisson(5), lambda: (lambda q: polygon_lower(q, 1.0, 1e-4)), (2.5, 1.5), (vertex(1.0, 1e-4),)),
]


@pytest.mark.parametrize(("dist", "make_boundary", "weights", "kinks"), CASES)
def test_certificate_brackets_the_dense_maximum(dist, make_boundary, weights, kinks):
    boundary = make_boundary()
    cert = certified_log_sup(dist.log_dphi, boundary, weights=weights)
    dense = brute_force_sup(dist, boundary, weights, n=4001, extra=kinks)
    assert cert.upper >= dense
    assert cert.upper >= cert.lower
    assert cert.upper - dense < 1e-4 * max(1, abs(dense))


def test_pure_corner_uses_the_linear_lower_bound():
    """point(k) with an eps-DP base: phi'(0) = 0 but L(q) >= e^-eps q gives exactly (k-1) eps."""
    cert = certified_log_sup(point(4).log_dphi, pure(0.7).region_lower, corner_slope=math.exp(-0.7))
    assert cert.upper == pytest.approx(3 * 0.7, abs=1e-9)
    assert cert.upper >= 3 * 0.7
    no_slope = certified_log_sup(point(4).log_dphi, pure(0.7).region_lower)
    assert no_slope.vacuous


def test_weights_must_be_ordered():
    with pytest.raises(ValueError, match="weights"):
        certified_log_sup(poisson(2).log_dphi, lambda q: q, weights=(1.0, 2.0))


def test_float_allowance_covers_the_measured_error_of_phi_prime():
    """Every certificate widens its φ' values by dphi_float_error(law): at least VALUE_MARGIN and at least 64 times
    the relative error of the float64 φ' found at the probes 1 − 10^-k, where 1 − (1 − γ) z cancels. For geometric
    K with mean 1e7 that error is measured here against φ'(z) = γ/(1 − (1 − γ) z)² at 50 digits; it is far above
    VALUE_MARGIN, so an allowance that ignored it would certify sups from wrong φ' values."""
    from symsel.bounds.precision import VALUE_MARGIN, dphi_float_error

    dist = geometric(mean=1e7)
    worst = 0.0
    with mpmath.workdps(50):
        gamma = 1 / mpmath.mpf(10) ** 7
        for x in 1.0 - np.logspace(-1, -15, 15):
            exact = gamma / (1 - (1 - gamma) * mpmath.mpf(float(x))) ** 2
            worst = max(worst, abs(float((mpmath.mpf(float(dist.dphi(np.array([x]))[0])) - exact) / exact)))
    assert 64 * worst > 100 * VALUE_MARGIN  # ~1.3e-9 relative: the floor alone would not cover it
    assert dphi_float_error(dist) >= max(VALUE_MARGIN, 64 * worst)


@pytest.mark.parametrize(("dist", "make_boundary", "weights", "kinks"), CASES)
@pytest.mark.parametrize("tol", [1e-7, 1e-3])
def test_certificate_is_the_largest_cell_bound_of_its_final_grid(dist, make_boundary, weights, kinks, tol):
    """The refinement recomputes only the halves of the cells it splits: the certificate must be what the bounds of
    every cell of the final grid, computed afresh, give (the grid is every point the boundary was evaluated at), and
    never below the same cell bounds at 30 digits without the float64 nudges."""
    from symsel.bounds.ratio import RELATIVE_MARGIN, _cell_bounds

    inner, seen = make_boundary(), []

    def boundary(q):
        low = inner(q)
        seen.append((np.asarray(q, float).copy(), np.clip(np.asarray(low, float), 0, 1)))
        return low

    a, b = weights
    cert = certified_log_sup(dist.log_dphi, boundary, weights=weights, tol=tol)
    points = np.concatenate([q for q, _ in seen])
    order = np.argsort(points, kind="stable")
    q, lows = points[order], np.concatenate([low for _, low in seen])[order]
    assert cert.cells == q.size - 1
    cells = _cell_bounds(q[:-1], q[1:], lows[:-1], dist.log_dphi, a, b, None)
    top = float(np.max(cells))
    assert cert.upper == top + RELATIVE_MARGIN * (abs(top) + a + b)
    with mpmath.workdps(30):  # the cells at the top (and the largest of the rest), at 30 digits
        near = set(np.nonzero(cells >= top - 1e-3 * max(1, abs(top)))[0].tolist())
        for i in sorted(near)[:200]:
            low = mpmath.mpf(lows[i]) * (mpmath.mpf(q[i + 1]) / mpmath.mpf(q[i])) if q[i] > 0 else mpmath.mpf(0)
            if low == 0:
                continue
            right = dist.dphi_mp(mpmath.mpf(q[i + 1]), 30)
            exact = a * mpmath.log(right) - b * mpmath.log(dist.dphi_mp(min(low, 1), 30))
            assert cert.upper >= exact, (i, q[i], q[i + 1])
