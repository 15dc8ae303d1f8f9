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


def _bisection_answer(fits, lo: int, hi: int) -> int:
    """The reference: the largest fitting integer in [lo, hi) by plain bisection."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


@pytest.mark.parametrize("seed", range(40))
def test_the_steered_integer_search_is_the_bisection_answer_whatever_the_gap(seed) -> None:
    """:func:`largest_fitting_integer` against bisection on random crossings, with gaps that are smooth in log n,
    kinked (the larger of two), flat, infinite on one side or not informative at all (constant): the same integer
    every time, and the steering only ever saves probes on the smooth gaps."""
    import random

    from symsel.numeric import largest_fitting_integer

    rng = random.Random(seed)
    lo = rng.randint(1, 1000)
    hi = lo + rng.randint(2, 10**6)
    crossing = rng.uniform(lo, hi - 1) if seed % 5 else lo + 0.5  # the answer is floor(crossing)
    kind = seed % 4

    def gap(n: int) -> float:
        x = math.log(n) - math.log(crossing)
        if kind == 0:
            return 3.0 * x + 0.5 * x * abs(x)  # smooth, increasing, convex for n above the crossing
        if kind == 1:
            return max(2.0 * x, 40.0 * x - 1e-3)  # the larger of two: a kink
        if kind == 2:
            return -math.inf if n <= crossing else math.inf  # no information but the side
        return -1.0 if n <= crossing else 1.0  # flat on each side

    calls: list[int] = []

    def probe(n: int) -> tuple[bool, float]:
        calls.append(n)
        return n <= crossing, gap(n)

    expected = _bisection_answer(lambda n: n <= crossing, lo, hi)
    assert largest_fitting_integer(probe, lo, hi, gap(lo), gap(hi)) == expected == math.floor(crossing)
    assert all(lo < n < hi for n in calls)
    bisection_probes = math.ceil(math.log2(hi - lo)) + 1
    assert len(calls) <= (8 if kind == 0 else 3 * bisection_probes), (kind, lo, hi, crossing, calls)
