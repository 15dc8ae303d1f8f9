"""The selection handed back to dp-accounting (symsel.export): the exported PLD dominates the selection bound,
composing with the identity gives it back, and composition stays below the basic-composition budget."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from dp_accounting.pld import privacy_loss_distribution

import symsel
from symsel.cli import main
from symsel.export import compose, to_pld

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
    exported = np.array([pld.get_delta_for_epsilon(float(e)) for e in eps])
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
