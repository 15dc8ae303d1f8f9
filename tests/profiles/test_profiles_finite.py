"""Randomized response, (ε, δ)-DP and pointwise profiles against direct sums and brute-force tests."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from dp_accounting.pld import common
from dp_accounting.pld import privacy_loss_distribution as pld

from symsel.profiles import (
    FAMILIES,
    ApproxDPProfile,
    PointwiseProfile,
    RandomizedResponseProfile,
    pure,
)

EPS = np.array([-3.0, -1.0, -0.2, 0.0, 0.1, 0.5, 1.0, 2.0, 4.0])


def hockey(P: list, Pp: list, eps: float) -> float:
    """Σ [P − e^ε P']_+ with mpmath at 40 digits (reference)."""
    with mpmath.workdps(40):
        g = mpmath.exp(eps)
        return float(mpmath.fsum(max(0, mpmath.mpf(a) - g * mpmath.mpf(b)) for a, b in zip(P, Pp, strict=True)))


def rr_pair(eps: float, k: int) -> tuple[list[float], list[float]]:
    """k-ary RR for inputs 0 and 1, written out directly."""
    keep = math.exp(eps) / (math.exp(eps) + k - 1)
    other = 1 / (math.exp(eps) + k - 1)
    P = [keep if y == 0 else other for y in range(k)]
    Pp = [keep if y == 1 else other for y in range(k)]
    return P, Pp


def subset_points(P: list[float], Pp: list[float]) -> np.ndarray:
    return np.array(
        [
            (sum(p for p, m in zip(P, mask, strict=True) if m), sum(p for p, m in zip(Pp, mask, strict=True) if m))
            for mask in itertools.product([0, 1], repeat=len(P))
        ]
    )


def check_region_against_tests(profile, P: list[float], Pp: list[float]) -> None:
    """Every (randomized) test lies on/above the boundary, and deterministic tests attain it."""
    pts = subset_points(P, Pp)
    q = np.clip(pts[:, 0], 0, 1)
    lower = profile.region_lower(np.clip(q - 1e-13, 0, 1))
    assert np.all(pts[:, 1] >= lower - 1e-14)
    gap = pts[:, 1] - profile.region_lower(q)
    assert np.sum(np.abs(gap) < 1e-13) >= 3  # (0,0), (1,1) and at least one vertex in between
    rng = np.random.default_rng(0)
    g = rng.uniform(size=(500, len(P)))
    assert np.all(g @ np.array(Pp) >= profile.region_lower(np.clip(g @ np.array(P) - 1e-13, 0, 1)) - 1e-14)


# --------------------------------------------------------------------------- randomized response


@pytest.mark.parametrize(("eps", "k"), [(0.5, 2), (1.0, 3), (2.0, 10), (0.0, 4)])
def test_randomized_response_direct_sum(eps: float, k: int) -> None:
    rr = RandomizedResponseProfile(eps, k)
    P, Pp = rr_pair(eps, k)
    assert np.allclose(rr.finite_pair()[0], P) and np.allclose(rr.finite_pair()[1], Pp)
    for e in EPS:
        ref = max(hockey(P, Pp, e), hockey(Pp, P, e))
        assert rr.delta(e) == pytest.approx(ref, abs=1e-15)
        assert float(rr.delta_mp(e, 30)) == pytest.approx(ref, abs=1e-15)
    assert rr.epsilon(0.0) == pytest.approx(eps)


def test_randomized_response_vs_dp_accounting() -> None:
    """dp-accounting's RR: keep w.p. 1 − p + p/k; our ε-RR is p = k/(e^ε + k − 1)."""
    eps, k = 1.2, 5
    rr = RandomizedResponseProfile(eps, k)
    ref = pld.from_randomized_response(k / (math.exp(eps) + k - 1), k, value_discretization_interval=1e-5)
    e = np.linspace(0, 1.2, 13)
    theirs = np.asarray(ref.get_delta_for_epsilon(e))
    assert np.all(rr.delta(e) <= theirs + 1e-12)
    assert np.allclose(rr.delta(e), theirs, atol=1e-4)


@pytest.mark.parametrize(("eps", "k"), [(0.7, 2), (1.5, 4)])
def test_randomized_response_region_and_rdp(eps: float, k: int) -> None:
    rr = RandomizedResponseProfile(eps, k)
    P, Pp = rr_pair(eps, k)
    check_region_against_tests(rr, P, Pp)
    assert float(rr.region_lower_mp(0.4, 30)) == pytest.approx(rr.region_lower(0.4), abs=1e-15)
    for lam in (1.5, 2.0, 10.0):
        ref = math.log(sum(p**lam * pp ** (1 - lam) for p, pp in zip(P, Pp, strict=True))) / (lam - 1)
        assert rr.rdp(lam) == pytest.approx(ref, rel=1e-12)
    assert rr.rdp(math.inf) == pytest.approx(eps)
    assert len(rr.finite_pair(merge=True)[0]) == min(k, 3)


# --------------------------------------------------------------------------- one (ε, δ) guarantee


def four_point(eps: float, delta: float) -> tuple[list[float], list[float]]:
    e = math.exp(eps)
    return (
        [delta, (1 - delta) * e / (1 + e), (1 - delta) / (1 + e), 0.0],
        [0.0, (1 - delta) / (1 + e), (1 - delta) * e / (1 + e), delta],
    )


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-5), (0.5, 0.0), (3.0, 0.1), (0.0, 0.2)])
def test_approx_profile_is_hockey_stick_of_four_point_pair(eps: float, delta: float) -> None:
    prof = ApproxDPProfile(eps, delta)
    P, Pp = four_point(eps, delta)
    fp = prof.finite_pair()
    assert np.allclose(fp[0], P, atol=1e-16) and np.allclose(fp[1], Pp, atol=1e-16)
    for e in EPS:
        ref = max(hockey(P, Pp, e), hockey(Pp, P, e))
        assert prof.delta(e) == pytest.approx(ref, abs=1e-15)
        assert float(prof.delta_mp(e, 30)) == pytest.approx(ref, abs=1e-15)
    assert prof.delta(eps) == pytest.approx(delta, abs=1e-16)
    assert prof.delta(math.inf) == delta
    assert prof.epsilon(delta) == pytest.approx(eps, abs=1e-9) if delta < prof.delta(0.0) else True
    check_region_against_tests(prof, P, Pp)


def test_approx_vs_dp_accounting_pessimistic_pld() -> None:
    """dp-accounting's PLD from (ε, δ) is the same worst case (pessimistically rounded)."""
    eps, delta = 1.0, 1e-4
    prof = ApproxDPProfile(eps, delta)
    ref = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(eps, delta), 1e-5)
    e = np.linspace(0, 1.5, 16)
    theirs = np.asarray(ref.get_delta_for_epsilon(e))
    assert np.all(prof.delta(e) <= theirs + 1e-12)
    assert np.allclose(prof.delta(e), theirs, atol=1e-5)


def test_pure_dp_rdp_and_spec() -> None:
    p = pure(1.0)
    assert p.spec == "pure(eps=1.0)"
    assert p.rdp(2.0) == pytest.approx(RandomizedResponseProfile(1.0, 2).rdp(2.0), rel=1e-13)
    assert ApproxDPProfile(1.0, 1e-6).rdp(2.0) == math.inf
    assert p.epsilon(0.0) == pytest.approx(1.0)
    assert ApproxDPProfile(1.0, 1e-6).epsilon(0.0) == math.inf
    assert FAMILIES["approx"](eps=1, delta=1e-6).spec == "approx(eps=1.0, delta=1e-06)"


# --------------------------------------------------------------------------- several guarantees


def brute_pointwise(points: list[tuple[float, float]], eps: float, n: int = 400001) -> float:
    """sup_q (q − e^ε max_i polygon_i(q)) on a dense grid (a lower estimate of the exact value)."""
    q = np.linspace(0, 1, n)
    lower = np.zeros_like(q)
    for e1, d1 in points:
        lower = np.maximum(lower, np.maximum(math.exp(-e1) * (q - d1), 1 - d1 - math.exp(e1) * (1 - q)))
    return float(np.max(q - math.exp(eps) * lower))


def test_pointwise_single_point_equals_approx() -> None:
    pw = PointwiseProfile([(1.0, 1e-3)])
    ap = ApproxDPProfile(1.0, 1e-3)
    assert np.allclose(pw.delta(EPS), ap.delta(EPS), atol=1e-15)
    q = np.linspace(0, 1, 101)
    assert np.allclose(pw.region_lower(q), ap.region_lower(q), atol=1e-15)


@pytest.mark.parametrize(
    "points",
    [
        [(0.5, 1e-2), (1.0, 1e-4), (2.0, 1e-7)],
        [(1.0, 1e-6), (2.0, 1e-8)],
        [(0.0, 0.3), (1.0, 0.05), (3.0, 0.0)],
    ],
)
def test_pointwise_is_exact_hockey_stick_of_intersection(points: list[tuple[float, float]]) -> None:
    pw = FAMILIES["pointwise"](points=points)
    for e in (-1.0, 0.0, 0.3, 0.75, 1.5, 2.5, 5.0):
        brute = brute_pointwise(points, e)
        ours = pw.delta(e)
        assert brute - 1e-12 <= ours <= brute + 2e-5  # grid sup is a lower estimate
        # pointwise δ is rounded up by up to 8 ulps of x + e^ε y (~2e-15 here); the single curves are not
        assert ours <= min(ApproxDPProfile(a, b).delta(e) for a, b in points) + 4e-15
        assert float(pw.delta_mp(e, 30)) == pytest.approx(ours, abs=1e-14)
    for e1, d1 in points:
        assert pw.delta(e1) <= d1 + 1e-15
    # the finite pair realizes the same profile and region
    P, Pp = pw.finite_pair()
    assert sum(P) == pytest.approx(1) and sum(Pp) == pytest.approx(1)
    for e in (0.0, 0.7, 2.0):
        assert max(hockey(P, Pp, e), hockey(Pp, P, e)) == pytest.approx(pw.delta(e), abs=1e-14)
    q = np.linspace(0, 1, 1001)
    brute_lower = np.max([ApproxDPProfile(a, b).region_lower(q) for a, b in points], axis=0)
    assert np.allclose(pw.region_lower(q), brute_lower, atol=1e-15)
    assert float(pw.region_lower_mp(0.37, 30)) == pytest.approx(pw.region_lower(0.37), abs=1e-15)


def test_pointwise_redundant_point_and_rdp() -> None:
    a = PointwiseProfile([(1.0, 1e-3), (1.5, 1e-3)])
    b = ApproxDPProfile(1.0, 1e-3)
    assert np.allclose(a.delta(EPS), b.delta(EPS), atol=1e-15)
    assert a.rdp(2.0) == math.inf
    c = PointwiseProfile([(0.5, 0.1), (1.0, 0.0)])
    assert math.isfinite(c.rdp(2.0)) and c.rdp(2.0) <= pure(1.0).rdp(2.0) + 1e-12
    assert c.epsilon(0.0) == pytest.approx(1.0)
    assert c.spec == "pointwise(points=[(0.5, 0.1), (1.0, 0.0)])"
