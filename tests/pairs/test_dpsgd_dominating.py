"""The dominating pairs of DP-SGD resolved below 1e-15 (symsel.pairs.dpsgd_dominating), against references computed
here at 50 digits with mpmath: the exact hockey-stick divergence of the Gaussian mechanism composed ``T`` times
(``q = 1``: ``μ = √T/σ``-GDP in closed form), and that of one subsampled step (the loss inverted by mpmath's root
finder, the masses from ``ncdf``). Every value of the pair is at least the exact one (domination) down to 1e-40, and
close to it."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from symsel.pairs.dpsgd import dpsgd_dominated_pairs
from symsel.pairs.dpsgd_dominating import dpsgd_deep_pairs
from symsel.pairs.loss import DominatingPair, LossPair, hockey_stick_below


def _upper(pair: LossPair, eps: float) -> float:
    """The pair's hockey-stick divergence at ``eps`` widened by its allowances (as a consumer widens it)."""
    ratio = pair.a / pair.b
    live = ratio > math.exp(eps)
    gain = math.fsum(pair.a[live].tolist()) * (1 + pair.relative_error) + pair.a_infinity
    cost = math.fsum(pair.b[live].tolist()) * (1 - pair.relative_error)
    return max(0.0, gain - math.exp(eps) * cost)


def _gdp_delta(mu: mpmath.mpf, eps: float) -> mpmath.mpf:
    e = mpmath.mpf(eps)
    return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)


@pytest.mark.parametrize("steps", [1, 7, 300])
def test_gaussian_runs_are_dominated_down_to_1e_40(steps: int) -> None:
    """``q = 1``: ``T`` steps are ``√T/σ``-GDP. Both directions' δ(ε) are at least the exact value wherever it is
    above 1e-40, and within 3 % of it wherever it is above 1e-30 (the split grid rounds little)."""
    sigma = 1.5
    pairs = dpsgd_deep_pairs(1.0, sigma, steps)
    assert all(isinstance(p, DominatingPair) for p in pairs)
    with mpmath.workdps(50):
        mu = mpmath.sqrt(steps) / sigma
        checked = 0
        for eps in np.linspace(0.0, 60.0, 121):
            exact = _gdp_delta(mu, float(eps))
            if exact < mpmath.mpf("1e-40"):
                break
            for pair in pairs:
                value = _upper(pair, float(eps))
                assert value >= exact, (steps, pair.direction, eps, value, exact)
                if exact > mpmath.mpf("1e-30"):
                    assert value <= exact * 1.03, (steps, pair.direction, eps, value, exact)
            checked += 1
    assert checked >= 10


def test_truncated_tails_stay_on_the_upper_side() -> None:
    """Tails truncated at 1e-6 (instead of 1e-45), so that the truncation decides values: ``q = 1``, 9 steps, at
    every ``ε`` from −4 to 6 (negative ``ε`` counts the lower tail, moved up to the first label kept; large ``ε`` the
    upper tail, moved to ``+∞``), still at least the exact GDP value."""
    sigma, steps = 1.5, 9
    pairs = dpsgd_deep_pairs(1.0, sigma, steps, tail=1e-6)
    with mpmath.workdps(50):
        mu = mpmath.sqrt(steps) / sigma
        for pair in pairs:
            assert pair.a_infinity > 1e-8  # the truncation is at work
            for eps in np.linspace(-4.0, 6.0, 41):
                value = _upper(pair, float(eps))
                assert value >= _gdp_delta(mu, float(eps)), (pair.direction, eps)


def _one_step_delta(q: float, sigma: float, direction: str, eps: float) -> mpmath.mpf:
    """One subsampled step's exact δ(ε) at 50 digits: ``P[x > x*] − e^ε Q[x > x*]`` where the loss (increasing in
    ``x``) equals ``ε`` at ``x*``."""
    s = mpmath.mpf(sigma)
    mixtures = {"remove": (((1 - q, 0), (q, 1)), ((1, 0),)), "add": (((1, 0),), ((1 - q, 0), (q, -1))),
                "replace": (((1 - q, 0), (q, 1)), ((1 - q, 0), (q, -1)))}
    p_mix, q_mix = mixtures[direction]

    def density(mix, x):
        return mpmath.fsum(w * mpmath.exp(-(x - m) ** 2 / (2 * s**2)) for w, m in mix if w > 0)

    def upper_mass(mix, x):
        return mpmath.fsum(w * mpmath.ncdf(-(x - m) / s) for w, m in mix if w > 0)

    def loss(x):
        return mpmath.log(density(p_mix, x)) - mpmath.log(density(q_mix, x))

    e = mpmath.mpf(eps)
    lo, hi = mpmath.mpf(-200), mpmath.mpf(200)
    if loss(lo) >= e:
        return mpmath.mpf(1) - mpmath.exp(e)
    for _ in range(200):  # bisection: the loss is increasing
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if loss(mid) < e else (lo, mid)
    return upper_mass(p_mix, hi) - mpmath.exp(e) * upper_mass(q_mix, hi)


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_one_subsampled_step_is_dominated(relation: str) -> None:
    """One step of ``q = 0.05, σ = 1.5``, every direction: at least the exact δ(ε) (50 digits) down to 1e-40, and
    at most the exact δ two loss steps of the grid to the left (near the add loss's supremum ``−log(1 − q)`` the
    split moves mass by a step, which is a large relative change in δ)."""
    q, sigma = 0.05, 1.5
    with mpmath.workdps(50):
        for pair in dpsgd_deep_pairs(q, sigma, 1, relation):
            checked = 0
            for eps in (0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.1, 0.3, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0):
                exact = _one_step_delta(q, sigma, pair.direction, eps)
                if exact < mpmath.mpf("1e-40"):
                    continue
                value = _upper(pair, eps)
                assert value >= exact, (pair.direction, eps, value, exact)
                # within a loss step of the grid (2e-3): at most the exact value two steps to the left
                assert value <= _one_step_delta(q, sigma, pair.direction, eps - 4e-3), (pair.direction, eps, value)
                checked += 1
            assert checked >= 6


def test_dpsgd_run_brackets_the_dominated_pair_far_below_1e_15() -> None:
    """300 steps of ``q = 0.05, σ = 1.5``: never below the dominated pairs' certified lower value (an independent
    construction, symsel.pairs.dpsgd), and still finite information at δ ≈ 1e-30: the mass at ``+∞`` is below
    1e-40."""
    uppers = dpsgd_deep_pairs(0.05, 1.5, 300)
    lowers = dpsgd_dominated_pairs(0.05, 1.5, 300)
    for upper, lower in zip(uppers, lowers, strict=True):
        assert upper.direction == lower.direction
        assert upper.a_infinity < 1e-40
        for eps in (0.5, 2.0, 4.0, 6.0, 8.0):
            below = float(hockey_stick_below(lower, np.array([eps]))[0])
            value = _upper(upper, eps)
            assert value >= below, (upper.direction, eps, value, below)
            assert below == 0.0 or value <= 1.6 * below, (upper.direction, eps, value, below)


def test_the_smallest_sampling_rate_gives_a_pair_on_the_coarsest_fine_grid() -> None:
    """q = 1e-300: the loss range (about 1e-300) is far below the float slack of a loss, so the step's grid is
    :data:`MIN_STEP_WIDTH` wide and the bottom bucket's label, rounded up, may lie above the rest; the pair is still
    built, with no label array beyond reach, and with all its mass at losses of
    at most a few grid steps: nearly no privacy loss, as at this rate."""
    from symsel.pairs.dpsgd_dominating import MIN_STEP_WIDTH

    for pair in dpsgd_deep_pairs(1e-300, 1.0, 10, "add_remove"):
        assert pair.a_infinity < 1e-45  # the top bucket, beyond the step's span
        assert abs(float(np.sum(pair.a)) - 1.0) < 1e-9
        assert float(np.max(np.log(pair.ratio))) <= 100 * MIN_STEP_WIDTH
