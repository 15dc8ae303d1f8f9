"""The exported PLD's grid reaches the bound's largest privacy loss (it was rounded to the nearest step, which could
fall just below it and leave the last mass at +inf: every ε infinite)."""

from __future__ import annotations

import math

import symsel


def test_export_of_a_bound_with_a_finite_largest_loss_keeps_finite_epsilons():
    """geometric(10) on Laplace(scale=2): the selection's ε(1e-6) is 1.27929 (``interval``; the envelope: 1.28162);
    dp-accounting's ε of the exported PLD is finite, never below it, and within 2e-3 of it (the export takes
    ``interval`` at 40 grid points only, and the cheaper components elsewhere)."""
    result = symsel.bound(symsel.parse_distribution("geometric(mean=10)"), symsel.parse_profile("laplace(scale=2)"))
    exported = symsel.to_pld(result).get_epsilon_for_delta(1e-6)
    assert math.isfinite(exported)
    assert result.epsilon(1e-6) <= exported <= result.epsilon(1e-6) + 2e-3
    envelope = symsel.bound(symsel.parse_distribution("geometric(mean=10)"), symsel.parse_profile("laplace(scale=2)"),
                            "envelope").epsilon(1e-6)
    assert exported <= envelope + 1e-3
