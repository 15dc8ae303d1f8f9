"""The one conservative root finder of symsel.

Every inverse symsel reports — ``ε(δ)`` of a profile, the largest mean number of candidates within
a budget, the ``γ`` of a truncated negative binomial with a given mean, the noise or the number of
steps a budget allows — is the crossing point of a monotone function with a level. A bound must err on
the safe side, so the finder returns the end of its final bracket on the *feasible* side, where the
condition has been evaluated and holds; the answer is never on the wrong side of the crossing by
rounding or by early stopping.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from scipy.optimize import brentq

#: the smallest ``rtol`` scipy's ``brentq`` accepts (four float64 epsilons): a smaller one (a caller's ``rtol=0``)
#: is raised to it; below it ``brentq`` raises and :func:`last_feasible` would fall back to bisection.
BRENT_MIN_RTOL = 4 * 2.0**-52


def last_feasible(
    feasible_gap: Callable[[float], float],
    lo: float,
    hi: float,
    *,
    xtol: float = 1e-12,
    rtol: float = 1e-12,
) -> float:
    """For ``g = feasible_gap`` non-increasing on ``[lo, hi]`` with ``g(lo) > 0 ≥ g(hi)``, a point
    ``x ∈ (lo, hi]`` with ``g(x) ≤ 0`` (checked) within ``xtol + rtol |x|`` of the crossing.

    ``g(x) ≤ 0`` means "``x`` is feasible" (e.g. ``log δ(ε) − log δ_target``). Brent's method
    locates the crossing; the returned point is then moved up until ``g`` is checked to be ``≤ 0``
    there, so the answer is always feasible. A ``nan`` or infinite ``g`` is treated as infeasible
    (``+inf``) on the left end and handled by bisection."""

    # the tightest bracket seen: the largest point checked infeasible and the smallest checked feasible
    seen = {"infeasible": lo, "feasible": hi}

    def safe(x: float) -> float:
        # feasible points are made strictly negative, so that a flat stretch where g = 0 exactly
        # (a profile reaching the target on a whole interval) counts as feasible from its left end
        value = feasible_gap(x)
        if value is None or math.isnan(value):
            value = math.inf
        if value > 0:
            seen["infeasible"] = max(seen["infeasible"], x)
            return min(value, 1e300)
        seen["feasible"] = min(seen["feasible"], x)
        return max(min(value, -1e-300), -1e300)

    tol = xtol + rtol * max(abs(lo), abs(hi))
    if hi - lo <= tol:
        return hi
    relay = _Relay(safe)
    try:
        root = brentq(relay, lo, hi, xtol=xtol, rtol=max(rtol, BRENT_MIN_RTOL), maxiter=200)
    except (ValueError, RuntimeError):
        root = bisect_last_feasible(safe, lo, hi, tol)
    finally:
        relay.detach()
    step = xtol + rtol * abs(root)
    if seen["feasible"] <= root + step and seen["feasible"] - seen["infeasible"] <= 2 * step:
        return seen["feasible"]  # a point already checked feasible, no further from the crossing than root + step
    x = min(hi, root + step)
    while safe(x) > 0:  # Brent may stop just left of the crossing: walk right to a checked point
        step *= 4
        if x >= hi:
            return hi
        x = min(hi, x + step)
    return x


class _Relay:
    """Calls ``function`` until :meth:`detach`. scipy's ``brentq`` wraps the function it is given in a closure that
    refers to itself (a reference cycle, freed only by the garbage collector's next full pass); handing it this relay
    and detaching it afterwards leaves that cycle holding nothing of the caller's (a profile and its arrays)."""

    __slots__ = ("function",)

    def __init__(self, function: Callable[[float], float]):
        self.function: Callable[[float], float] | None = function

    def __call__(self, x: float) -> float:
        assert self.function is not None, "called after detach()"
        return self.function(x)

    def detach(self) -> None:
        self.function = None


def bisect_last_feasible(g: Callable[[Any], Any], lo: Any, hi: Any, tol: Any, max_steps: int = 400) -> Any:
    """Bisection for the same problem as :func:`last_feasible`, in any number type (floats, or mpmath
    numbers at the working precision): the returned ``hi`` end always has ``g(hi) ≤ 0`` if it had at
    the start, and ``hi − lo ≤ tol`` unless ``max_steps`` ran out."""
    for _ in range(max_steps):
        if hi - lo <= tol:
            break
        mid = (lo + hi) / 2
        if g(mid) <= 0:
            hi = mid
        else:
            lo = mid
    return hi


def largest_fitting_integer(probe: Callable[[int], tuple[bool, float]], lo: int, hi: int, gap_lo: float,
                            gap_hi: float) -> int:
    """:func:`largest_feasible_integer` steered by a gap: ``probe(n)`` returns whether ``n`` fits and a number that
    grows with ``n`` (``≤ 0`` where it fits; ``gap_lo``, ``gap_hi`` its values at ``lo`` and ``hi``). The next integer
    tried is the one just below where the secant through the last two points probed, in ``log n``, crosses 0 (kept
    inside the bracket); the middle of the bracket instead where the gaps are not finite and distinct, or after a
    secant step that did not bring the gap at least a quarter closer to 0. The gap only chooses where to look: the
    answer is the same largest fitting integer as the bisection's, every answer checked, in a few probes where the
    gap is smooth in ``log n`` instead of ``log2(hi - lo)``."""
    points, bisect = [(lo, gap_lo), (hi, gap_hi)], False
    while hi - lo > 1:
        (n1, g1), (n2, g2) = points[-2], points[-1]
        mid, secant = (lo + hi) // 2, False
        if not bisect and math.isfinite(g1) and math.isfinite(g2) and g1 != g2:
            # the secant's crossing in log n, clamped to the bracket first (far outside it, exp would overflow)
            log_guess = math.log(n2) + (math.log(n1) - math.log(n2)) * -g2 / (g1 - g2)
            guess = math.exp(min(max(log_guess, math.log(lo)), math.log(hi))) if math.isfinite(log_guess) else math.nan
            if math.isfinite(guess):
                mid, secant = min(max(math.floor(guess), lo + 1), hi - 1), True
        fits, gap = probe(mid)
        lo, hi = (mid, hi) if fits else (lo, mid)
        bisect = secant and not abs(gap) <= 0.75 * min(abs(g1), abs(g2))
        points.append((mid, gap))
    return lo


def log_gap(value: float, bound: float) -> float:
    """``log(value / bound)`` for ``value, bound ≥ 0`` (the gap :func:`largest_fitting_integer` is steered by):
    ``−inf`` for ``value = 0``, ``+inf`` over a bound of 0."""
    if value <= 0:
        return -math.inf
    if bound <= 0:
        return math.inf
    return math.log(value) - math.log(bound)


def largest_feasible_integer(feasible: Callable[[int], bool], lo: int, hi: int) -> int:
    """The largest integer ``n`` in ``[lo, hi)`` with ``feasible(n)``, for ``feasible`` monotone (true up to
    the crossing, false after it), given ``feasible(lo)`` and not ``feasible(hi)``: bisection on the
    integers, every answer checked (the number of steps a budget admits, say)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if feasible(mid) else (lo, mid)
    return lo
