"""Geometric K truncated at k_max: m = 1/gamma - k_max c^k_max/(1 - c^k_max), c = 1 - gamma; envelope within 0.1%.

Recipe of Koskela, Redberg & Wang (ICML 2024), Theorem 4.1 with docs/ratio-methods.md and docs/envelope.md, for the
geometric law conditioned on ``K <= k_max`` (truncation as in Papernot & Steinke, Appendix E.1, there used for the
RDP route only). With ``gamma`` and ``k_max`` free, SymPy's ``summation`` gives the mean (equal to the closed form
above at three parameter points; a general simplification was not attempted) and ``P[K=1] = gamma/(1 -
c^k_max)``; at ``gamma = 1/10``, ``k_max = 20`` both, ``phi``, ``phi'`` and the variance are checked against
brute-force pmf sums at 50 digits. The polygon ratio's sampled maximum (numerical evidence, not a proof) is
compared with symsel's certified sup; the derived, envelope and best bounds are asserted above exact examples.
``derive(spec)`` is used for the facts (``derive(spec, base)`` takes about 6 s, too long for this script).

Run: ``python derivations/new_law_truncated_geometric.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import mpmath
import sympy
from new_law_common import assert_equal, bounds, check_facts, polygon_sup, report, tightness

import symsel
from symsel.derive import derive

G_VAL, K_MAX, BASE, DELTA = sympy.Rational(1, 10), 20, "gaussian(sigma=2)", 1e-5
SPEC = f"truncated(dist=geometric(mean={int(1 / G_VAL)}), k_max={K_MAX})"
g, k_max = sympy.symbols("gamma k_max", positive=True)
k = sympy.Symbol("k", positive=True, integer=True)
c = 1 - g
NORM = 1 - c**k_max  # P[K <= k_max] for the untruncated geometric
MEAN = 1 / g - k_max * c**k_max / NORM
summed = sympy.summation(k * g * c ** (k - 1), (k, 1, k_max)) / NORM
for point in ({g: sympy.Rational(1, 10), k_max: 20}, {g: sympy.Rational(1, 3), k_max: 7}, {g: sympy.Rational(4, 5),
                                                                                              k_max: 2}):
    assert sympy.simplify((summed - MEAN).subs(point)) == 0, point
P1 = g / NORM
values = {g: G_VAL, k_max: K_MAX}

dist = symsel.parse_distribution(SPEC)


def pmf(j: int) -> mpmath.mpf:
    """``gamma c^(j-1)/(1 - c^k_max)`` for ``1 <= j <= k_max`` in mpmath (at the caller's precision)."""
    gm = mpmath.mpf(1) / 10
    return gm * (1 - gm) ** (j - 1) / (1 - (1 - gm) ** K_MAX) if 1 <= j <= K_MAX else mpmath.mpf(0)


facts = check_facts(dist.pgf, pmf, K_MAX)
assert_equal("mean 1/gamma - k_max c^k_max/(1 - c^k_max)", MEAN.subs(values), facts["mean"])
assert_equal("P[K=1] = gamma/(1 - c^k_max)", P1.subs(values), facts["p1"])
d = derive(SPEC)
assert d.p0 == "0", d.p0
assert all(c.passed for c in d.checks if c.kind != "numeric-50"), d.checks  # see the report: mean_mp at 1e-15

base = symsel.parse_profile(BASE)
sup = polygon_sup(dist, base)
numbers = bounds(dist, base, DELTA, sup, float(MEAN.subs(values)), slices=400)
print(f"$$m = {sympy.latex(MEAN)} = {float(MEAN.subs(values)):.6f},\\ \\varepsilon({DELTA:g}) \\le "
      f"{numbers['best']:.5f},\\ \\text{{exact example }} {numbers['lower']:.5f}$$")
print(f"variance {mpmath.nstr(facts['variance'], 20)} (brute force); P[K=1] = {sympy.latex(P1)}")
print(sup)
report(numbers, tightness(numbers, 1.003))
