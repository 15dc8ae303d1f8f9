"""The selection handed back to dp-accounting (symsel.profiles.export): the exported PLD dominates the selection bound,
composing with the identity gives it back, and composition stays below the basic-composition budget."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from dp_accounting.pld import privacy_loss_distribution

import symsel
from symsel.cli import main
from symsel.profiles.export import compose, to_pld

GAUSSIAN = "gaussian(sigma=4)"


@pytest.fixture(scope="module")
def selection():
    return symsel.bound(symsel.geometric(mean=30), symsel.parse_profile(GAUSSIAN), "envelope")


@pytest.fixture(scope="module")
def pld(selection):
    return to_pld(selection)


def test_exported_pld_is_never_below_the_selection_profile(selection, pld) -> None:
    """At 1500 ε between and on the grid points. Where the bound is convex in e^ε (here ε ≥ 1, δ ≤ 0.08) the
    export is above it; below that the capped bound has a concave knee, which no real curve has, and the export
    follows the greatest convex minorant instead (still above the true curve: next test). It is a proper PLD."""
    eps = np.linspace(-2.5, 9.0, 1500)
    exported = np.asarray(pld.get_delta_for_epsilon(eps))  # dp-accounting's query of an array (a tenth of the CPU)
    bound = np.asarray(selection.delta(eps))
    convex_part = eps >= 1.0
    assert np.all(exported[convex_part] >= bound[convex_part] - 1e-14)
    assert np.max(exported[convex_part] - bound[convex_part]) < 1e-3  # and close: the grid costs little
    assert np.all(exported <= 1.0 + 1e-12) and np.all(exported >= -np.expm1(eps) - 1e-12)  # total mass 1


@pytest.mark.parametrize("delta", [0.3, 0.05, 1e-3, 1e-6])
def test_exported_pld_is_above_a_certified_lower_bound(pld, delta) -> None:
    """Independent check, also inside the knee: the exact ε of a real worst-case selection (slice insertion on
    the Gaussian pair, docs/lower-bounds.md) is never above the exported PLD's ε."""
    lower = symsel.lower_bound(symsel.parse_profile(GAUSSIAN), symsel.geometric(mean=30), delta, budget=20)
    assert pld.get_epsilon_for_delta(delta) >= lower.epsilon


def test_exported_epsilon_is_pessimistic_and_close(selection, pld) -> None:
    for delta in (1e-3, 1e-6, 1e-10):
        exported, certified = pld.get_epsilon_for_delta(delta), selection.epsilon(delta)
        assert certified <= exported <= certified + 1e-3


def test_composing_with_the_identity_gives_the_selection_back(pld) -> None:
    identity = privacy_loss_distribution.identity()
    for delta in (1e-4, 1e-6):
        assert pld.compose(identity).get_epsilon_for_delta(delta) == pytest.approx(
            pld.get_epsilon_for_delta(delta), abs=1e-9)


def test_two_selections_compose_below_twice_the_budget(selection) -> None:
    """Basic composition: (ε, δ) twice is (2ε, 2δ); the PLD composition must be at least as good."""
    delta = 1e-6
    eps = selection.epsilon(delta)
    twice = compose([selection, selection])
    assert twice.get_epsilon_for_delta(2 * delta) <= 2 * eps + 2e-3
    assert twice.get_epsilon_for_delta(2 * delta) > eps  # composing costs something


def test_composition_with_a_dpsgd_release_inside_dp_accounting() -> None:
    """A tuning round on a small DP-SGD base, then one more DP-SGD run: the composition is above each part."""
    base = symsel.parse_profile("dpsgd(q=0.01, sigma=1.5, steps=100)")
    tuning = symsel.bound(symsel.poisson(mean=5), base, "envelope")
    joint = compose([tuning, base]).get_epsilon_for_delta(1e-5)
    assert joint > tuning.epsilon(1e-5) and joint > base.epsilon(1e-5)


def test_bound_compose_with_on_the_command_line() -> None:
    result = CliRunner().invoke(main, ["bound", "--dist", "geometric(mean=30)", "--base", GAUSSIAN, "--delta",
                                       "1e-6", "--method", "envelope", "--compose-with", GAUSSIAN, "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["composed"]["with"] == [GAUSSIAN]
    assert payload["composed"]["epsilon"] > payload["epsilon"]


@pytest.mark.parametrize("method", ["envelope", "fdp"])
def test_exported_pld_is_never_below_the_exact_selection_on_randomized_response(method) -> None:
    """Independent reference at every ε, negative ones included (where the export uses the hockey-stick duality):
    the exact selection law on binary randomized response RR(0.7), the worst 0.7-DP pair, geometric K with mean 8,
    both score orders, summed at 50 digits (tests/reference_profiles.py). The exported PLD's δ is never below it."""
    import math

    import mpmath
    from reference_profiles import exact_selection_delta

    law, eps0 = symsel.geometric(mean=8), 0.7
    exported = to_pld(symsel.bound(law, symsel.parse_profile(f"pure(eps={eps0})"), method))
    e = math.exp(eps0)
    p, r = [e / (1 + e), 1 / (1 + e)], [1 / (1 + e), e / (1 + e)]
    for eps in np.linspace(-3.0, 4.0, 29):
        exact = max(exact_selection_delta(p, r, order, law, float(eps), dps=50) for order in ([0, 1], [1, 0]))
        assert mpmath.mpf(exported.get_delta_for_epsilon(float(eps))) >= exact, eps


def _greatest_convex_minorant(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Brute force, O(n³): at each x_i the least chord value over every pair of points (0, 1) ∪ {(x_j, y_j)} that
    brackets it (a point itself is a degenerate chord) — the greatest convex function below the points."""
    px, py = np.concatenate([[0.0], x]), np.concatenate([[1.0], y])
    out = np.empty_like(x)
    for i, xi in enumerate(x):
        best = y[i]
        for j in range(px.size):
            for k in range(px.size):
                if px[j] < xi < px[k]:
                    best = min(best, py[j] + (py[k] - py[j]) * (xi - px[j]) / (px[k] - px[j]))
        out[i] = best
    return out


@pytest.mark.parametrize("seed", range(6))
def test_lower_convex_hull_is_the_greatest_convex_minorant(seed) -> None:
    """The connect-the-dots input must be a proper PLD's curve: convex in e^ε through (0, 1). lower_convex_hull
    equals the brute-force greatest convex minorant of random points, hence is convex, never above the points and
    never below any convex function that is below them (such as the true curve)."""
    from symsel.profiles.export import lower_convex_hull

    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0.05, 5.0, 12))
    y = np.clip(1.0 - 0.3 * x + rng.uniform(0.0, 0.6, 12), 0.0, 1.0)
    hull = lower_convex_hull(x, y)
    np.testing.assert_allclose(hull, _greatest_convex_minorant(x, y), rtol=1e-12, atol=1e-15)
    assert np.all(hull <= y)
    slopes = np.diff(np.concatenate([[1.0], hull])) / np.diff(np.concatenate([[0.0], x]))
    assert np.all(np.diff(slopes) >= -1e-9)


def test_a_nearly_non_private_part_composes_to_infinity_not_an_empty_pld() -> None:
    # gaussian(sigma=1e-3) has δ ≈ 1 up to the export's top ε: all but 1e-16 of its mass at +∞; composed exactly
    selection = symsel.bound(symsel.geometric(mean=3), symsel.parse_profile("gaussian(sigma=4)"))
    pld = compose([selection, symsel.parse_profile("gaussian(sigma=1e-3)")])
    assert pld.get_epsilon_for_delta(1e-6) == np.inf


def test_export_points_are_limited() -> None:
    from symsel.profiles.export import MAX_POINTS

    selection = symsel.bound(symsel.geometric(mean=3), symsel.parse_profile("gaussian(sigma=4)"))
    with pytest.raises(symsel.ParameterError, match="points"):
        to_pld(selection, points=MAX_POINTS + 1)
