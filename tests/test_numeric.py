"""symsel.numeric.last_feasible, the one conservative root finder: the answer is checked feasible and within the
tolerance of the crossing, and Brent's method runs for every ``rtol`` a caller passes (``rtol=0`` included: scipy
refuses an ``rtol`` below four float64 epsilons, which once sent every such search to bisection)."""

from __future__ import annotations

import math

import pytest

from symsel.numeric import last_feasible


@pytest.mark.parametrize("rtol", [0.0, 1e-16, 1e-12])
def test_a_smooth_crossing_is_found_by_brent_in_few_steps_and_on_the_feasible_side(rtol) -> None:
    crossing, calls = math.log(7.0), []

    def gap(x: float) -> float:  # non-increasing, feasible (<= 0) right of the crossing
        calls.append(x)
        return math.exp(-(x - crossing)) - 1.0

    x = last_feasible(gap, -3.0, 10.0, xtol=1e-9, rtol=rtol)
    assert gap(x) <= 0 and crossing <= x <= crossing + 2e-9 + rtol * abs(x)
    assert len(calls) <= 20  # bisection from a bracket 13 wide to 1e-9 takes 34 evaluations


def test_a_step_function_still_ends_on_its_feasible_side() -> None:
    """A discontinuous gap (as ε(δ) of a discretized PLD is in σ): Brent's method falls back to bisection steps
    where interpolation fails, and the answer is the checked feasible point within the tolerance."""
    edge = 2.345678

    def gap(x: float) -> float:
        return 1.0 if x < edge else -1.0

    x = last_feasible(gap, 0.0, 10.0, xtol=1e-6, rtol=0.0)
    assert gap(x) < 0 and edge <= x <= edge + 2e-6
