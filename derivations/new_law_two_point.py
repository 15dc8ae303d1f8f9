"""Two-point K (Xiang et al. eq. 21: P[K=1] = s, P[K=L] = 1 - s): envelope bound within 0.1% of exact examples.

Recipe of Koskela, Redberg & Wang (ICML 2024), Theorem 4.1 with docs/ratio-methods.md and docs/envelope.md, for the
law of Xiang, Wang & Wang's eq. (21). Symbolically in ``L, s``: ``phi = s z + (1-s) z^L``, ``phi' = s + (1-s) L
z^(L-1)``, ``m = s + (1-s) L``, ``Var = s (1-s) (L-1)^2``, ``P[K=0] = 0``, ``P[K=1] = s`` (checked against brute-force
pmf sums at 50 digits for ``L = 10, s = 1/2``). The polygon ratio is ``(s + (1-s) L q^(L-1))/(s + (1-s) L
q'^(L-1))``; its sampled maximum (numerical evidence, not a proof) lies inside S2 and symsel's certified sup is
above it and within 1e-5. The base part uses symsel's numeric engine directly (:func:`symsel.bound`,
:func:`symsel.evidence.lower.lower_bound`); ``derive(spec, base)`` is run beside it and must agree (same bound,
verified,
location ``unknown`` since the derivative changes sign inside S2); ``derive(spec)`` gives the facts.

Run: ``python derivations/new_law_two_point.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import mpmath
import sympy
from new_law_common import assert_equal, bounds, check_facts, derive_agrees, polygon_sup, report, tightness

import symsel
from symsel.derive import derive
from symsel.distributions import z

L_VAL, S_VAL = 10, sympy.Rational(1, 2)
SPEC, BASE, DELTA = f"two_point(L={L_VAL}, s=1/2)", "gaussian(sigma=2)", 1e-5
L, s = sympy.symbols("L s", positive=True)
PHI = s * z + (1 - s) * z**L
DPHI = sympy.diff(PHI, z)
MEAN = sympy.simplify(DPHI.subs(z, 1))
VARIANCE = sympy.factor(sympy.simplify(sympy.diff(PHI, z, 2).subs(z, 1) + MEAN - MEAN**2))
assert sympy.simplify(DPHI - (s + (1 - s) * L * z ** (L - 1))) == 0
assert sympy.simplify(MEAN - (s + (1 - s) * L)) == 0
assert sympy.simplify(VARIANCE - s * (1 - s) * (L - 1) ** 2) == 0
values = {L: L_VAL, s: S_VAL}

dist = symsel.parse_distribution(SPEC)
assert sympy.expand(dist.pgf - PHI.subs(values)) == 0
facts = check_facts(PHI.subs(values), lambda k: mpmath.mpf(1) / 2 if k in (1, L_VAL) else mpmath.mpf(0), L_VAL)
assert_equal("mean s + (1-s) L", MEAN.subs(values), facts["mean"])
assert_equal("variance s (1-s) (L-1)^2", VARIANCE.subs(values), facts["variance"])
assert_equal("P[K=0] = 0", sympy.Integer(0), facts["p0"])
assert_equal("P[K=1] = s", S_VAL, facts["p1"])
d = derive(SPEC)
assert (d.mean, d.variance, d.p0, d.p1) == (r"\frac{11}{2}", r"\frac{81}{4}", "0", r"\frac{1}{2}"), d
assert d.verified, [c for c in d.checks if not c.passed]

base = symsel.parse_profile(BASE)
sup = polygon_sup(dist, base)
numbers = bounds(dist, base, DELTA, sup, float(MEAN.subs(values)), slices=400)
print(f"$$K \\in \\{{1, {L_VAL}\\}},\\ s = 1/2:\\ \\varepsilon({DELTA:g}) \\le {numbers['best']:.5f}"
      f"\\ (\\text{{envelope}}),\\ \\text{{exact example }} {numbers['lower']:.5f}$$")
print(f"$$\\varphi'(z) = {sympy.latex(DPHI)},\\ m = {sympy.latex(MEAN)},\\ "
      f"\\operatorname{{Var}}[K] = {sympy.latex(VARIANCE)}$$")
print(sup)
print(f"derive(spec, base): sup at the {derive_agrees(SPEC, BASE, numbers, sup)}")
report(numbers, tightness(numbers, 1.003))
