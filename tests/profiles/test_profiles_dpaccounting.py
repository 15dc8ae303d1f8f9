"""PLD-backed profiles (DP-SGD and any event the PLD accountant accepts)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import dp_event, privacy_accountant
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant
from scipy import stats

import symsel
from symsel.errors import NotApplicableError, ParameterError
from symsel.profiles import FAMILIES, DpsgdProfile, GaussianProfile, LaplaceProfile, PldProfile
from symsel.profiles.region import fdp_lower_from_profile, fdp_upper_from_profile


def dpsgd_event(q: float, sigma: float, steps: int) -> dp_event.DpEvent:
    return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps)


@pytest.fixture(scope="module")
def dpsgd_1000() -> DpsgdProfile:
    return DpsgdProfile(0.01, 1.1, 1000)


def test_dpsgd_matches_dp_accounting(dpsgd_1000: DpsgdProfile) -> None:
    """Same event in dp-accounting's own PLD accountant: same δ(ε) and ε(δ) (its build time is in benchmarks/)."""
    ref = pld_privacy_accountant.PLDAccountant()
    ref.compose(dpsgd_event(0.01, 1.1, 1000))
    eps = np.array([3.0, 0.0, 0.5, 1.0, 1.5, 2.0])  # unsorted on purpose
    # symsel reads the PLD through suffix sums with a rounding allowance: never below dp-accounting's own sum, and
    # at most 2e-9 (relative) above it
    ours, theirs = np.asarray(dpsgd_1000.delta(eps)), np.array([ref.get_delta(float(e)) for e in eps])
    assert np.all(ours >= theirs) and np.allclose(ours, theirs, rtol=2e-9, atol=1e-18)
    for d in (1e-3, 1e-5, 1e-8):
        assert dpsgd_1000.epsilon(d) == ref.get_epsilon(d)
    assert dpsgd_1000.epsilon(1e-5) == pytest.approx(1.5154, abs=1e-3)
    assert dpsgd_1000.epsilon(0.0) == math.inf
    assert dpsgd_1000.epsilon(dpsgd_1000.delta_at_infinity / 2) == math.inf


def test_dpsgd_negative_eps_follows_symmetry(dpsgd_1000: DpsgdProfile) -> None:
    """The PLD answers for ε < 0, consistently with δ(ε) = 1 − e^ε + e^ε δ(−ε) (both directions kept)."""
    eps = np.array([-2.0, -1.0, -0.5, -0.1])
    d = dpsgd_1000.delta(eps)
    assert np.all(d >= -np.expm1(eps))
    via_identity = -np.expm1(eps) + np.exp(eps) * dpsgd_1000.delta(-eps)
    assert np.allclose(d, via_identity, rtol=1e-3)


def test_dpsgd_full_batch_is_gdp() -> None:
    """q = 1: k Gaussian steps are exactly √k/σ-GDP; the pessimistic PLD is above and close."""
    prof = DpsgdProfile(1.0, 2.0, 4)
    exact = GaussianProfile(1.0)
    eps = np.linspace(-1.0, 3.0, 17)
    ours, ref = prof.delta(eps), exact.delta(eps)
    assert np.all(ours >= ref - 1e-12)
    assert np.allclose(ours, ref, rtol=5e-3, atol=1e-9)


def test_dpsgd_region_grid_loss_and_threshold_tests() -> None:
    """Generic region: loss of the default grid, and threshold tests of the mixture pair lie above.

    Measured: against a 4x finer grid (64001 points) the default 16001-point grid loses < 1e-7 in q'
    (5.5e-8 here; 3.0e-8 for q=0.01, σ=1.1, 1000 steps), shrinking like 1/N². The first-order certificate
    of :func:`fdp_upper_from_profile` bounds the loss by ~1e-4 (it ignores the curvature of δ).
    """
    prof = PldProfile.from_event(dpsgd_event(0.05, 1.0, 1))  # the PLD alone (DpsgdProfile adds the RDP curve)
    q = np.concatenate([np.geomspace(1e-12, 0.5, 300), 1 - np.geomspace(1e-12, 0.5, 300)])
    lower = prof.region_lower(q)
    grid = prof.region_eps_grid()
    assert grid.size == 16001
    upper = fdp_upper_from_profile(q, prof, grid)
    assert np.all(lower <= upper + 1e-15)
    assert np.max(upper - lower) < 2e-4
    finer = fdp_lower_from_profile(q, prof, np.linspace(0.0, grid[-1], 4 * (grid.size - 1) + 1))
    assert np.all(lower <= finer * (1 + 1e-9) + 1e-15)  # the finer grid holds the coarse points (up to rounding)
    assert np.max(finer - lower) < 1e-7
    coarse = fdp_lower_from_profile(q, prof, grid[::16])
    assert np.all(coarse <= lower + 1e-15)
    # remove-direction pair: P = (1 − q) N(0, σ²) + q N(1, σ²) vs P' = N(0, σ²); tests {x > t}
    t = np.linspace(-6, 8, 141)
    qq = 0.95 * stats.norm.sf(t) + 0.05 * stats.norm.sf(t - 1)
    qp = stats.norm.sf(t)
    assert np.all(qp >= prof.region_lower(qq) - 1e-12)


def test_dpsgd_rdp_matches_rdp_accountant() -> None:
    prof = DpsgdProfile(0.01, 1.1, 100)
    acc = rdp_privacy_accountant.RdpAccountant(orders=[2.0, 8.0, 32.0])
    acc.compose(dpsgd_event(0.01, 1.1, 100))
    for lam, r in zip([2.0, 8.0, 32.0], acc._rdp, strict=True):
        assert prof.rdp(lam) == pytest.approx(r, rel=1e-12)
    # replace-special realizes the add/remove pair: dp-accounting's RDP accountant under that relation agrees
    special = rdp_privacy_accountant.RdpAccountant(
        orders=[2.0, 8.0, 32.0], neighboring_relation=privacy_accountant.NeighboringRelation.REPLACE_SPECIAL)
    special.compose(dpsgd_event(0.01, 1.1, 100))
    prof_special = DpsgdProfile(0.01, 1.1, 100, neighbouring="replace_special")
    for lam, r in zip([2.0, 8.0, 32.0], special._rdp, strict=True):
        assert prof_special.rdp(lam) == pytest.approx(r, rel=1e-12)


def test_pld_profile_from_event_and_cache() -> None:
    event = dp_event.LaplaceDpEvent(2.0)
    prof = PldProfile.from_event(event, value_discretization_interval=1e-4)
    exact = LaplaceProfile(2.0)
    eps = np.linspace(0, 0.6, 7)
    assert np.all(prof.delta(eps) >= exact.delta(eps) - 1e-12)
    assert np.allclose(prof.delta(eps), exact.delta(eps), atol=1e-4)
    a, b = DpsgdProfile(0.02, 1.0, 10), DpsgdProfile(0.02, 1.0, 10)
    assert a.accountant is b.accountant
    with pytest.raises(NotApplicableError):
        PldProfile(dp_event.RepeatAndSelectDpEvent(event, 1.0, 1.0))


def test_dpsgd_family_spec_and_bad_parameters() -> None:
    prof = FAMILIES["dpsgd"](q=0.01, sigma=1.1, steps=1000)
    assert prof.spec == "dpsgd(q=0.01, sigma=1.1, steps=1000)"
    for kwargs, name in [
        ({"q": 0.0, "sigma": 1.0, "steps": 1}, "q"),
        ({"q": 1.5, "sigma": 1.0, "steps": 1}, "q"),
        ({"q": 0.1, "sigma": 0.0, "steps": 1}, "sigma"),
        ({"q": 0.1, "sigma": 1.0, "steps": 0}, "steps"),
        ({"q": 0.1, "sigma": 1.0, "steps": 2.5}, "steps"),
        ({"q": float("nan"), "sigma": 1.0, "steps": 1}, "q"),
        ({"q": 0.1, "sigma": 1.0, "steps": 1, "neighbouring": "swap"}, "neighbouring"),
    ]:
        with pytest.raises(ParameterError, match=f"parameter {name}="):
            DpsgdProfile(**kwargs)


@pytest.mark.parametrize(("q", "sigma", "steps"), [(0.01, 1.1, 300), (0.05, 0.8, 50)])
def test_many_point_queries_are_never_below_dp_accounting(q, sigma, steps):
    """Arrays longer than the scalar threshold go through symsel's suffix-sum evaluation of the same PLD
    sum; it must never fall below dp-accounting's own term-by-term value (the rounding allowance), and
    stay within 1e-6 of it."""
    profile = PldProfile.from_event(dpsgd_event(q, sigma, steps))  # the PLD alone
    eps = np.linspace(-2.0, 10.0, 4001)
    fast = np.asarray(profile.delta(eps))
    sample = eps[::20]
    reference = np.array([float(profile.accountant.get_delta(float(e))) for e in sample])
    assert np.all(fast[::20] >= reference)
    positive = reference > 0
    assert np.max((fast[::20][positive] - reference[positive]) / reference[positive]) < 1e-6


def test_dpsgd_below_the_pld_truncation_mass_falls_back_to_the_rdp_conversion() -> None:
    """The pessimistic PLD of q=0.01, σ=1.1, 1000 steps keeps about 1.5e-15 at a loss of +inf, so its ε(δ) is inf
    below that. The DP-SGD profile is also bounded by the RDP curve's conversion: ε(1e-16) and ε(1e-30) are
    finite and equal dp-accounting's RdpAccountant on the same event and orders; above the truncation mass the
    PLD (tighter) still decides, and δ(ε(δ)) ≤ δ holds on both sides."""
    from symsel.profiles.rdp import SUBSAMPLED_ORDERS

    profile = DpsgdProfile(0.01, 1.1, 1000)
    pld = PldProfile.from_event(dpsgd_event(0.01, 1.1, 1000))
    assert pld.epsilon(1e-16) == math.inf
    accountant = rdp_privacy_accountant.RdpAccountant(orders=list(SUBSAMPLED_ORDERS))
    accountant.compose(dpsgd_event(0.01, 1.1, 1000))
    for delta in (1e-16, 1e-30):
        eps = profile.epsilon(delta)
        assert eps == pytest.approx(float(accountant.get_epsilon(delta)), rel=1e-9)
        assert profile.delta(eps) <= delta * (1 + 1e-12)
    assert profile.epsilon(1e-5) == pld.epsilon(1e-5)
    assert profile.epsilon(1e-5) < float(accountant.get_epsilon(1e-5))  # the PLD is the tighter one there
    assert profile.delta_at_infinity == 0.0


def _pmf_arrays(pld):
    out = []
    for pmf in (pld._pmf_remove, pld._pmf_add):
        dense = pmf.to_dense_pmf()
        out.append((dense._lower_loss, dense._discretization, dense._infinity_mass, np.asarray(dense._probs)))
    return out


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_a_run_built_from_the_shared_one_step_pld_is_the_accountants_own(relation):
    """DP-SGD runs of several lengths at one noise share the one-step PLD (_subsampled_gaussian_pld); each run's PLD
    is, array for array, what ``PLDAccountant.compose`` builds for the same event, in any order of building."""
    from dp_accounting import privacy_accountant
    from dp_accounting.pld import pld_privacy_accountant

    from symsel.profiles.dpaccounting import _build

    relations = {"add_remove": privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE,
                 "replace_one": privacy_accountant.NeighboringRelation.REPLACE_ONE}
    for steps in (30, 7, 30, 1):
        event = dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.05, dp_event.GaussianDpEvent(1.3)), steps)
        ours, _ = _build(event, relation, 1e-3)
        reference = pld_privacy_accountant.PLDAccountant(relations[relation], 1e-3)
        reference.compose(event)
        if relation == "add_remove":  # symsel's own arrays; the reference's read from its fields (test only)
            mine = [(p.lower_loss, p.discretization, p.infinity_mass, p.probs) for _, p in ours.arrays.directions()]
            for (lo, disc, inf, probs), (lo_r, disc_r, inf_r, probs_r) in zip(
                    mine * (3 - len(mine)), _pmf_arrays(reference._pld), strict=True):
                assert (lo, disc, inf) == (lo_r, disc_r, inf_r) and np.array_equal(probs, probs_r)
        else:  # not built by symsel: dp-accounting's own accountant, composed by its public compose
            assert isinstance(ours, pld_privacy_accountant.PLDAccountant)
        assert ours.get_epsilon(1e-5) == reference.get_epsilon(1e-5)
        eps = np.linspace(-1.0, 4.0, 101)
        assert np.array_equal(ours.get_delta(eps), reference.get_delta(eps))


@pytest.mark.parametrize("negative", [False, True], ids=["masses >= 0", "a tiny negative mass"])
def test_suffix_tables_hold_the_sums_of_absolute_masses(negative: bool) -> None:
    """The rounding allowance of the suffix-sum evaluation uses the suffix sums of ``|p|`` and ``|p| e^{-l}``: checked
    against ``math.fsum`` over each suffix, on a PLD whose masses are all >= 0 and on one with a tiny negative mass
    (dp-accounting's FFT convolution can leave some). δ(ε) never comes out below the term-by-term sum."""
    from symsel.profiles.dpaccounting import PldArrays, PmfArrays, pld_suffix_tables, suffix_tables_delta

    masses = {-3: 0.1, -1: 0.25, 0: 0.3, 2: 0.2, 5: 0.15 - (2e-12 if negative else 0.0), 7: -2e-12 if negative else 0}
    pld = PldArrays(PmfArrays(0.1, -3, np.array([masses.get(i, 0.0) for i in range(-3, 8)]), 1e-3))
    (losses, tail_p, tail_pe, abs_p, abs_pe, inf_mass), = pld_suffix_tables(pld)
    grid = np.arange(-3, 8)
    probs = [masses.get(int(i), 0.0) for i in grid]
    weighted = [p * math.exp(-0.1 * g) for p, g in zip(probs, grid, strict=True)]
    assert np.allclose(losses, grid * 0.1) and inf_mass == 1e-3
    for i in range(len(grid) + 1):
        assert abs_p[i] == pytest.approx(math.fsum(abs(p) for p in probs[i:]), rel=1e-15, abs=1e-300)
        assert abs_pe[i] == pytest.approx(math.fsum(abs(w) for w in weighted[i:]), rel=1e-15, abs=1e-300)
        assert tail_p[i] == pytest.approx(math.fsum(probs[i:]), rel=1e-12, abs=1e-18)
        assert tail_pe[i] == pytest.approx(math.fsum(weighted[i:]), rel=1e-12, abs=1e-18)
    eps = np.linspace(-0.5, 0.8, 27)
    exact = [1e-3 + math.fsum(-p * math.expm1(e - 0.1 * g) for p, g in zip(probs, grid, strict=True) if 0.1 * g > e)
             for e in eps]
    assert np.all(suffix_tables_delta(pld_suffix_tables(pld), eps) >= exact)


def test_suffix_sums_are_sequential_sums_from_the_small_end() -> None:
    """The rounding allowance of :func:`_suffix_delta` is that of summing one term at a time from the end: each
    suffix sum is exactly the float64 running sum of a Python loop (mixed signs and magnitudes), and ends with 0."""
    from symsel.profiles.dpaccounting import _tail

    rng = np.random.default_rng(3)
    values = rng.normal(size=2001) * np.exp(rng.uniform(-30, 5, size=2001))
    expected, running = [0.0], 0.0
    for value in values[::-1]:
        running += float(value)
        expected.append(running)
    np.testing.assert_array_equal(_tail(values), np.array(expected[::-1]))
    assert _tail(np.array([])).tolist() == [0.0]


def test_delta_beyond_the_largest_loss_is_the_mass_at_infinity_even_where_e_to_the_eps_overflows() -> None:
    """Beyond the PLD's largest loss its suffix sums are empty: δ is its mass at +∞ (here 0, with the RDP curve
    beside it), never ``e^ε · 0`` = NaN once ``e^ε`` overflows (ε = 505198 reached ``symsel tune --epsilon-q 1e300``
    through the envelope of a one-step DP-SGD base, an internal error)."""
    base = symsel.parse_profile("dpsgd(q=0.01, sigma=1.0, steps=1)")
    eps = np.array([50.0, 709.0, 800.0, 505198.34, 1e300])
    values = np.asarray(base.delta(eps))
    assert np.all(np.isfinite(values)) and np.all(values == base.delta_at_infinity)
    law = symsel.parse_distribution("geometric(mean=10)")
    assert symsel.bound(law, base).delta(505198.34) == 0.0


def test_the_dpsgd_floor_at_infinity_is_zero_and_below_the_pld_bound() -> None:
    """Both outputs of a DP-SGD step have positive density everywhere (mixtures of Gaussians), so no outcome has
    infinite privacy loss and ``δ(∞) = 0`` exactly; the floor, a lower bound, is that 0 and never above the
    composed profile's own ``δ(∞)``."""
    from symsel.profiles.dpaccounting import DpsgdCompositionFloor

    floor = DpsgdCompositionFloor(q=0.1, sigma=1.0, steps=2)
    assert floor.delta_at_infinity == 0.0
    assert floor.delta(math.inf) == 0.0
    assert floor.delta_at_infinity <= DpsgdProfile(q=0.1, sigma=1.0, steps=2).delta_at_infinity
