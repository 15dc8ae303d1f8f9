"""Lemma 7's floor: the attained values of its suprema, and how ``best`` uses them to skip Lemma 7.

The floor is a Lemma 7 curve built from values at sampled points of the boundary instead of certified suprema
(:func:`symsel.bounds.ratio.attained_log_sup`). ``best`` asks it first and leaves Lemma 7 out where the floor
is already over the other components. That is exact, not approximate, as long as the floor's profile is below the
certified one; these tests check that it is (against the certified suprema at every order, which
tests/bounds/test_renyi.py checks against brute force), that ``best``'s answers are those of the full minimum, and
that the skip happens."""

from __future__ import annotations

import math

import numpy as np
import pytest

import symsel
from symsel.bounds.renyi import lemma7_log_sup, renyi_bound, renyi_selection_curve
from symsel.bounds.renyi.curve import base_rdp_curve

#: (law, base, region): laws without a closed form (binomial, a PGF expression), bases with a pure corner, a
#: Gaussian tail, an RDP curve only and a PLD; one polygon region; binomial laws have mass at K = 0.
FLOOR_CASES = [
    ("binomial(n=40, p=1/2)", "laplace(scale=1)", "profile"),
    ("binomial(n=5, p=0.3)", "pure(eps=1)", "profile"),
    ("pgf(expr='(z+z**3)/2')", "gaussian(sigma=2)", "profile"),
    ("binomial(n=40, p=1/2)", "zcdp(rho=0.05)", "profile"),
    ("binomial(n=40, p=1/2)", "gaussian(sigma=4)", "polygon"),
]


def _parse(law: str, base: str) -> tuple[symsel.Distribution, symsel.Profile]:
    return symsel.parse_distribution(law), symsel.parse_profile(base)


@pytest.mark.parametrize(("law", "base", "region"), FLOOR_CASES)
def test_the_floor_is_below_the_certified_sup_at_every_order_and_within_a_thousandth(law, base, region) -> None:
    """At every order of the grid, the floor curve is at most the curve with a certified sup evaluated at that
    very order (no convex fill), and close to it: it must be below for ``best`` to stay exact, and close for the
    skip to happen."""
    dist, profile = _parse(law, base)
    curve = renyi_selection_curve(dist, profile, method="lemma7", region=region)
    grid = curve.grid[::7]
    floor = curve.floor.raw_values(grid)
    rdp = base_rdp_curve(profile, grid)
    if region == "profile":
        boundaries = [profile.region_lower]
    else:
        from symsel.profiles.region import polygon_lower

        boundaries = [lambda q, e=e: polygon_lower(q, e, float(profile.delta(e)))
                      for e in curve.details["eps_hat_grid"]]
    loss = profile.max_privacy_loss
    corner = math.exp(-loss) if loss is not None and math.isfinite(loss) and region == "profile" else None
    sups = np.array([min(lemma7_log_sup(dist, b, float(lam), corner) for b in boundaries) for lam in grid])
    direct = rdp + sups / (grid - 1.0)
    p0 = float(dist.p0)
    if p0 > 0:  # the output of K = 0 (with_bottom_output), computed here on its own
        direct = np.logaddexp(math.log(p0), (grid - 1.0) * direct) / (grid - 1.0)
    assert np.all(floor <= direct), np.max(floor - direct)
    assert np.all(floor >= direct - 1e-3 * np.maximum(1.0, direct)), np.min(floor - direct)


@pytest.mark.parametrize(("law", "base", "region"), FLOOR_CASES)
def test_the_floor_profile_is_below_the_certified_profile(law, base, region) -> None:
    dist, profile = _parse(law, base)
    selection = renyi_bound(dist, profile, "lemma7", region=region)
    eps = np.linspace(0.0, 2.0 * selection.epsilon(1e-10), 41)
    assert np.all(np.asarray(selection.floor.delta(eps)) <= np.asarray(selection.delta(eps)))
    for delta in (1e-3, 1e-6, 1e-10, 1e-30):
        assert selection.floor.epsilon(delta) <= selection.epsilon(delta)


#: best on laws whose rdp is Lemma 7: rdp loses everywhere (the first two), wins at small δ (the third), or wins
#: everywhere (the last two).
BEST_CASES = [
    ("binomial(n=40, p=1/2)", "laplace(scale=1)"),
    ("binomial(n=40, p=1/2)", "gaussian(sigma=4)"),
    ("binomial(n=10, p=1/2)", "laplace(scale=1)"),
    ("binomial(n=40, p=1/2)", "zcdp(rho=0.05)"),
    ("pgf(expr='(z+z**3)/2')", "rdp_gaussian(sigma=2)"),
]


def _best(law: str, base: str) -> symsel.SelectionBound:
    result = symsel.bound(*_parse(law, base), "best")
    assert "rdp" in result.details["components"]
    rdp = next(part for part in result.profile.parts if part.method == "rdp")
    assert rdp.floor is not None, "rdp is Lemma 7 here"
    return result


@pytest.mark.parametrize(("law", "base"), BEST_CASES)
def test_best_with_the_floor_gives_the_full_minimum(law: str, base: str) -> None:
    """δ(ε), the fit test and the certificate's winners are exactly those of the minimum of every component
    evaluated in full; ε(δ) is that minimum up to the interval search's tolerance (it may start from another
    component's ε)."""
    result = _best(law, base)
    parts = result.profile.parts
    eps = np.linspace(0.0, 1.5 * result.epsilon(1e-10), 31)
    full = np.min([np.asarray(part.log_delta(eps)) for part in parts], axis=0)
    assert np.array_equal(np.asarray(result.log_delta(eps)), full)
    assert np.array_equal(np.asarray(result.delta(eps)), np.min([np.asarray(p.delta(eps)) for p in parts], axis=0))
    for x, log_full in zip(eps[1::5], full[1::5], strict=True):
        for log_target in (log_full - 0.5, log_full + 0.5):
            within = result.log_delta_within(float(x), log_target)
            assert within >= log_full
            assert within == log_full if log_full > log_target else within <= log_target
    for delta in (1e-3, 1e-6, 1e-10):
        plain = min(part.epsilon(delta) for part in parts)
        assert plain - 2e-6 <= result.epsilon(delta) <= plain + 2e-6 * max(1.0, plain)
        assert result.certificate[f"wins_at_delta_{delta:g}"] == min((p.epsilon(delta), p.method) for p in parts)[1]


def _lemma7_evaluated(result: symsel.SelectionBound) -> bool:
    rdp = next(part for part in result.profile.parts if part.method == "rdp")
    return bool(rdp.profile.curve._memo)


def test_best_skips_lemma7_where_its_floor_is_over_the_other_components() -> None:
    """Binomial(40) on Laplace(1) (bench_fast row 6): at δ = 1e-6 Lemma 7's ε is 0.4 % over interval's, and its
    floor is within 1e-6 of it, so neither ε there nor δ at ε where the others are below evaluates its ~100
    suprema. (The certificate does: at δ = 1e-10 Lemma 7's bound on the largest loss wins, by 1e-10.)"""
    result = _best("binomial(n=40, p=1/2)", "laplace(scale=1.01)")
    result.epsilon(1e-6)
    result.delta(np.array([10.0, 11.0, 12.0]))
    result.delta_within(11.0, 1e-9)
    assert result.delta_at_infinity == 0.0
    assert not _lemma7_evaluated(result)


def test_best_evaluates_lemma7_where_it_can_win() -> None:
    result = _best("binomial(n=40, p=1/2)", "zcdp(rho=0.051)")
    assert result.certificate["wins_at_delta_1e-06"] == "rdp"
    assert _lemma7_evaluated(result)
