"""K >= 2 always (P[K=1] = 0): every ratio method is vacuous since phi'(0) = 0, the envelope bound is finite and tight.

Recipe of Koskela, Redberg & Wang (ICML 2024), Theorem 4.1 with docs/ratio-methods.md and docs/envelope.md, for ``K =
1 + G`` with ``G`` geometric on ``{1, 2, ...}``: ``phi = z^2 (1-g)/(1 - g z)``, ``P[K=k] = (1-g) g^(k-2)`` for ``k >=
2`` (a shifted geometric; no paper analyses it). With ``g`` free SymPy gives ``phi'(z) = (1-g) z (2 - g z)/(1 - g
z)^2``, ``phi'(0) = 0``, ``m = (2 - g)/(1 - g)``, ``Var = g/(1-g)^2`` — checked at ``g = 9/10`` against brute-force pmf
sums at 50 digits. The ratio ``phi'(q)/phi'(q')`` at the start ``(delta1, 0)`` of every ``(eps1, delta1)``
polygon is ``phi'(delta1)/0 = +inf`` for ``delta1 > 0`` (SymPy: ``phi'(delta1) > 0``), so the ratio recipe
(docs/ratio-methods.md: polygon, fdp, paper) gives no bound for a Gaussian base (``delta(eps1) > 0`` for every
``eps1``); symsel's certified sup is ``inf`` too. The envelope bound (docs/envelope.md) is finite; it is asserted
above the certified lower bound from exact examples and best/lower is asserted. ``derive(spec, base)`` agrees.

Run: ``python derivations/new_law_no_single_run.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import math

import mpmath
import sympy
from new_law_common import assert_equal, bounds, check_facts, polygon_sup, report, tightness

import symsel
from symsel.derive import derive
from symsel.distributions import z

SPEC, BASE, DELTA = "pgf(expr='z^2*(1-g)/(1-g*z)', g=9/10)", "gaussian(sigma=2)", 1e-5
g, d1 = sympy.symbols("g delta_1", positive=True)
PHI = z**2 * (1 - g) / (1 - g * z)
DPHI = sympy.factor(sympy.diff(PHI, z))
MEAN = sympy.factor(DPHI.subs(z, 1))
VARIANCE = sympy.factor(sympy.simplify(sympy.diff(PHI, z, 2).subs(z, 1) + MEAN - MEAN**2))
assert sympy.simplify(DPHI - (1 - g) * z * (2 - g * z) / (1 - g * z) ** 2) == 0
assert DPHI.subs(z, 0) == 0, "phi'(0) is not 0"
assert sympy.simplify(MEAN - (2 - g) / (1 - g)) == 0 and sympy.simplify(VARIANCE - g / (1 - g) ** 2) == 0
# phi'(delta1) > 0 for 0 < delta1 <= 1, 0 < g < 1: with u = 1 - g every factor below is positive
# (2 - (1-u) delta1 >= 1 + u, 1 - (1-u) delta1 >= u), while phi'(x) = 2 (1-g) x + O(x^2) -> 0: the ratio at
# the start (delta1, 0) is +inf.
u = sympy.Symbol("u", positive=True)
at_start = DPHI.subs(z, d1).subs(g, 1 - u)
assert sympy.simplify(at_start - u * d1 * (2 - (1 - u) * d1) / (1 - (1 - u) * d1) ** 2) == 0
assert sympy.simplify(sympy.limit(DPHI / z, z, 0) - 2 * (1 - g)) == 0
values = {g: sympy.Rational(9, 10)}

dist = symsel.parse_distribution(SPEC)
facts = check_facts(PHI.subs(values), lambda k: mpmath.mpf(9) ** (k - 2) / 10 ** (k - 1) if k >= 2
                    else mpmath.mpf(0), 1400)
assert_equal("mean (2-g)/(1-g)", MEAN.subs(values), facts["mean"])
assert_equal("variance g/(1-g)^2", VARIANCE.subs(values), facts["variance"])
assert_equal("P[K=0] = 0", sympy.Integer(0), facts["p0"])
assert_equal("P[K=1] = 0", sympy.Integer(0), facts["p1"])

base = symsel.parse_profile(BASE)
sup = polygon_sup(dist, base, eps1=1.0)
assert sup.location == "start" and sup.log_r == math.inf and sup.certified == math.inf, sup
for method in ("polygon", "fdp"):
    assert symsel.bound(dist, base, method).epsilon(DELTA) == math.inf, method
numbers = bounds(dist, base, DELTA, sup, float(MEAN.subs(values)), slices=400)
assert math.isfinite(numbers["envelope"]), numbers
d = derive(SPEC, BASE, DELTA, sections=False)
assert (d.mean, d.variance, d.p1) == ("11", "90", "0") and d.verified, d
assert d.bound["epsilon_lower"] <= numbers["envelope"], (d.bound, numbers)
print(f"$$P[K=1] = \\varphi'(0) = 0:\\ R = \\infty,\\ \\text{{envelope }} \\varepsilon({DELTA:g}) \\le "
      f"{numbers['envelope']:.5f},\\ \\text{{exact example }} {numbers['lower']:.5f}$$")
print(f"$$\\varphi'(z) = {sympy.latex(DPHI)},\\ m = {sympy.latex(MEAN)},\\ \\operatorname{{Var}}[K] = "
      f"{sympy.latex(VARIANCE)}$$")
report(numbers, tightness(numbers, 1.005))
