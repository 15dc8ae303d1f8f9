"""Shared steps of the new-law derivations, calibrated on a geometric K where Koskela, Redberg & Wang's Thm 5.2 applies.

The ``new_law_*.py`` scripts follow the recipe of Koskela, Redberg & Wang (ICML 2024), Theorem 4.1 with
docs/ratio-methods.md (ratio recipe) and §4b (envelope bound), for laws of ``K`` that no paper analyses. The steps they
share live here:

* :func:`check_facts`: the law's symbolic ``phi``, ``phi'``, mean, variance, ``P[K=0]``, ``P[K=1]`` against
  brute-force sums of its pmf at 50 digits (mpmath), independent of symsel;
* :func:`polygon_sup`: the ratio ``phi'(q)/phi'(q')`` over the ``(eps1, delta1)`` polygon at 50 digits (its
  corners, and the sampled maximum along both segments, refined: numerical evidence, not a proof) — then
  symsel's certified supremum (:func:`symsel.bounds.hockey_stick.polygon_ratio_at`) must lie above it and
  within ``1e-5``;
* :func:`bounds`: the derived bound ``log R + eps_Q(delta/m)`` (docs/ratio-methods.md), the certified ``envelope`` and
  ``best`` bounds of :func:`symsel.bound`, and the certified lower bound of :func:`symsel.evidence.lower.lower_bound`
  (exact worst-case examples): soundness (every bound above the lower bound) and tightness (best/lower)
  are asserted.

Run as a script it calibrates these steps on a geometric ``K`` (mean 10), where Thm 5.2's closed form gives
an independent value of the ratio at the polygon's end corner.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import mpmath
import sympy

import symsel
from symsel.bounds.hockey_stick import polygon_ratio_at
from symsel.distributions import Distribution, z
from symsel.evidence.lower import lower_bound
from symsel.profiles import Profile

DPS = 50
TOL = mpmath.mpf(10) ** -45
START = time.perf_counter()


def check_facts(phi: sympy.Expr, pmf: Callable[[int], mpmath.mpf], k_max: int, points=("1/4", "7/10", "1")) -> dict:
    """Check ``phi``, ``phi'`` (at ``points``), the mean, variance, ``P[K=0]`` and ``P[K=1]`` of the symbolic PGF
    against ``sum_{k <= k_max} pmf(k) ...`` at 50 digits (``pmf`` returns mpf computed in the working precision;
    ``k_max`` must make the tail negligible: the masses must sum to 1 within 1e-45). Returns the
    brute-force values ``{"mean", "variance", "p0", "p1"}`` as mpf."""
    dphi = sympy.diff(phi, z)
    with mpmath.workdps(DPS + 10):
        masses = [pmf(k) for k in range(k_max + 1)]
        assert abs(sum(masses) - 1) < TOL, f"the pmf sums to {sum(masses)}"
        for x in points:
            xm = mpmath.mpf(sympy.Rational(x).p) / sympy.Rational(x).q
            brute_phi = sum(p * xm**k for k, p in enumerate(masses))
            brute_dphi = sum(k * p * xm ** (k - 1) for k, p in enumerate(masses) if k)
            assert abs(_value(phi, x) - brute_phi) < TOL, ("phi", x)
            assert abs(_value(dphi, x) - brute_dphi) < TOL, ("phi'", x)
        mean = sum(k * p for k, p in enumerate(masses))
        variance = sum(k * k * p for k, p in enumerate(masses)) - mean**2
    return {"mean": mean, "variance": variance, "p0": masses[0], "p1": masses[1]}


def _value(expr: sympy.Expr, x: str) -> mpmath.mpf:
    """``expr`` at ``z = x`` (a rational) at 50 digits (a limit where the formula is 0/0, e.g. at ``z = 1``)."""
    point = sympy.Rational(x)
    value = expr.subs(z, point)
    if value.has(sympy.nan, sympy.zoo) or value.is_finite is False:
        value = sympy.limit(expr, z, point)
    return mpmath.mpf(str(sympy.N(value, DPS + 5)))


def assert_equal(label: str, claimed: sympy.Expr, brute: mpmath.mpf) -> None:
    """A symbolic claim (numbers only) equals the brute-force value at 50 digits."""
    with mpmath.workdps(DPS + 10):
        gap = abs(mpmath.mpf(str(sympy.N(claimed, DPS + 5))) - brute)
    assert gap < TOL, f"{label}: {claimed} vs brute force {brute} (gap {gap})"


@dataclass(frozen=True)
class PolygonSup:
    """The ratio's supremum over one ``(eps1, delta1)`` polygon: where it sits and ``log R`` there."""

    eps1: float
    delta1: float
    location: str
    log_r: float
    certified: float

    def __str__(self) -> str:
        return (f"polygon sup (eps1 = {self.eps1:.4f}, delta1 = {self.delta1:.4g}) {self.location}: log R = "
                f"{self.log_r:.8f}, certified {self.certified:.8f} (location: numerical evidence, not a proof)")


def polygon_sup(dist: Distribution, base: Profile, eps1: float | None = None, samples: int = 400) -> PolygonSup:
    """``log sup phi'(q)/phi'(q')`` over the ``(eps1, delta(eps1))`` polygon (docs/setting.md) at 50 digits: the
    corners (start ``(delta1, 0)``, vertex ``V``, end ``(1, 1 - delta1)``) and ``samples`` points of each of
    S1, S2; a sampled maximum inside a segment is refined by golden-section search. Where the maximum sits is
    numerical evidence, not a proof. symsel's certified sup must be above the value found and within 1e-5.
    ``eps1`` defaults to the one symsel's ``polygon`` method chose."""
    if eps1 is None:
        eps1 = float(symsel.bound(dist, base, "polygon").details["eps1"])
    delta1 = float(base.delta(eps1))
    dphi = sympy.lambdify(z, sympy.diff(dist.pgf, z), "mpmath")
    with mpmath.workdps(DPS):
        big_e, d1 = mpmath.exp(mpmath.mpf(eps1)), mpmath.mpf(delta1)
        corners = {"start": (d1, mpmath.mpf(0)), "vertex": ((big_e + d1) / (1 + big_e), (1 - d1) / (1 + big_e)),
                   "end": (mpmath.mpf(1), 1 - d1)}

        def along(a: str, b: str, t: mpmath.mpf) -> mpmath.mpf:
            q = corners[a][0] + t * (corners[b][0] - corners[a][0])
            qp = corners[a][1] + t * (corners[b][1] - corners[a][1])
            return mpmath.log(dphi(q)) - mpmath.log(dphi(qp)) if dphi(qp) > 0 else mpmath.inf

        found = {name: along(name, name, mpmath.mpf(0)) for name in corners}
        for a, b, name in (("start", "vertex", "S1"), ("vertex", "end", "S2")):
            grid = [along(a, b, mpmath.mpf(i) / samples) for i in range(samples + 1)]
            i = max(range(samples + 1), key=lambda j: grid[j])
            if 0 < i < samples and grid[i] > max(found.values()) + TOL:
                found[f"inside {name}"] = _golden_max(lambda t, a=a, b=b: along(a, b, t),
                                                      mpmath.mpf(i - 1) / samples, mpmath.mpf(i + 1) / samples)
        location = max(found, key=lambda name: found[name])
    best = float(found[location])
    certified = polygon_ratio_at(dist, base, eps1).log_ratio
    if math.isfinite(best):
        assert best - 1e-12 <= certified <= best + 1e-5, (best, certified)
    else:
        assert certified == math.inf, certified
    return PolygonSup(eps1, delta1, location, best, certified)


def _golden_max(f: Callable[[mpmath.mpf], mpmath.mpf], lo: mpmath.mpf, hi: mpmath.mpf) -> mpmath.mpf:
    """The maximum of a unimodal ``f`` on ``[lo, hi]`` by golden-section search (80 steps)."""
    ratio = (mpmath.sqrt(5) - 1) / 2
    for _ in range(80):
        left, right = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if f(left) < f(right):
            lo = left
        else:
            hi = right
    return f((lo + hi) / 2)


def bounds(dist: Distribution, base: Profile, delta: float, sup: PolygonSup, mean: float,
           budget: int = 20, slices: int = 200) -> dict:
    """The derived bound ``log R + eps_Q(delta/m)`` (docs/ratio-methods.md), symsel's certified envelope (§4b) and best
    bounds, and the certified lower bound from exact examples; asserts every bound is above the lower one."""
    lower = lower_bound(base, dist, delta, budget=budget, slices=slices).epsilon
    out = {"delta": delta, "lower": lower,
           "derived": sup.log_r + base.epsilon(delta / mean) if math.isfinite(sup.log_r) else math.inf,
           "envelope": symsel.bound(dist, base, "envelope").epsilon(delta),
           "best": symsel.bound(dist, base, "best").epsilon(delta)}
    for name in ("derived", "envelope", "best"):
        assert out[name] >= lower, f"UNSOUND: {name} {out[name]} below the exact example's {lower}"
    return out


def derive_agrees(spec: str, base_spec: str, numbers: dict, sup: PolygonSup) -> str:
    """``symsel.derive(spec, base)`` on the same law and base: verified, the same ``best`` bound, and a sup location
    consistent with the 50-digit scan (a corner found there is the one ``derive`` names; a maximum inside a
    segment leaves ``derive``'s location ``unknown``). Returns derive's location and how it was decided."""
    d = symsel.derive(spec, base_spec, numbers["delta"], sections=False)
    assert d.verified, [c for c in d.checks if not c.passed]
    assert abs(d.bound["epsilon_best"] - numbers["best"]) <= 1e-9 * numbers["best"], (d.bound, numbers)
    expected = "unknown" if sup.location.startswith("inside") else sup.location
    assert d.sup_location == expected, (d.sup_location, sup.location)
    return f"{d.sup_location} ({d.sup_argument})"


def tightness(numbers: dict, limit: float) -> float:
    """``best / lower``, asserted at most ``limit`` (measured, with some slack)."""
    ratio = numbers["best"] / numbers["lower"]
    assert ratio <= limit, f"best/lower = {ratio} above the measured limit {limit}"
    return ratio


def report(numbers: dict, ratio: float) -> None:
    """The bound line in LaTeX and a plain summary with the run time."""
    print(f"$$\\varepsilon({numbers['delta']:g}):\\ \\text{{derived }} {numbers['derived']:.5f},\\ "
          f"\\text{{envelope }} {numbers['envelope']:.5f},\\ \\text{{best }} {numbers['best']:.5f},\\ "
          f"\\text{{lower }} {numbers['lower']:.5f}$$")
    print(f"best/lower = {ratio:.4f}; run time {time.perf_counter() - START:.1f} s")


def main() -> None:
    """Calibration: geometric ``K`` (mean 10, ``gamma = 1/10``) and an ``(1, 1e-6)``-DP base."""
    g = sympy.Rational(1, 10)
    dist = symsel.geometric(gamma=g)
    base = symsel.parse_profile("approx(eps=1, delta=1e-6)")
    facts = check_facts(dist.pgf, lambda k: mpmath.mpf(9) ** (k - 1) / 10**k if k else 0, 2000)
    assert_equal("mean 1/gamma", 1 / g, facts["mean"])
    sup = polygon_sup(dist, base, 1.0)
    # Thm 5.2 (eta = 1): phi'(q)/phi'(q') = ((1 - c q')/(1 - c q))^2, c = 1 - gamma; at the end (1, 1 - delta1)
    # it is (1 + c delta1/gamma)^2, at the vertex the closed form of tnb_polygon_vertex.py.
    big_e, d1, c = math.e, sup.delta1, 0.9
    vertex = 2 * math.log((0.1 * (1 + big_e) + c * (big_e + d1)) / (0.1 * (1 + big_e) + c * (1 - d1)))
    assert sup.location == "vertex" and abs(sup.log_r - vertex) < 1e-12, (sup, vertex)
    numbers = bounds(dist, base, 1e-4, sup, 10.0)
    print(f"$$\\text{{geometric, mean 10: }}\\log R_V = {sup.log_r:.10f} = 2\\log r_V\\ (\\text{{Thm 5.2 form}})$$")
    report(numbers, tightness(numbers, 1.05))


if __name__ == "__main__":
    main()
