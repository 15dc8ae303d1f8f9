"""Discrete uniform K on {1..n}: m = (n+1)/2, Var = (n^2-1)/12 by SymPy sums; envelope within 0.1% of exact examples.

Recipe of Koskela, Redberg & Wang (ICML 2024), Theorem 4.1 with docs/ratio-methods.md and docs/envelope.md, for the
uniform law on ``{1, ..., n}`` (the textbook discrete uniform; Papernot & Steinke mention it only as a naive choice).
With ``n`` free, SymPy's ``summation`` gives ``phi = sum_k z^k/n``, ``phi'``, ``m = (n+1)/2`` and ``Var = (n^2-1)/12``;
the closed form ``phi = z (1 - z^n)/(n (1 - z))`` is an identity checked at ``n = 10``, and every fact against
brute-force pmf sums at 50 digits. The polygon ratio's sampled maximum (numerical evidence, not a proof) is
compared with symsel's certified sup. The base part uses symsel's numeric engine directly; ``derive(spec, base)``
is run beside it and must agree (same bound, verified, sup location consistent with the scan).

Run: ``python derivations/new_law_discrete_uniform.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import mpmath
import sympy
from new_law_common import assert_equal, bounds, check_facts, derive_agrees, polygon_sup, report, tightness

import symsel
from symsel.derive import derive
from symsel.distributions import z

N_VAL, BASE, DELTA = 10, "gaussian(sigma=2)", 1e-5
SPEC = f"pmf(expr='1/n', k_min=1, k_max={N_VAL}, n={N_VAL})"
n = sympy.Symbol("n", positive=True, integer=True)
k = sympy.Symbol("k", positive=True, integer=True)
MEAN = sympy.factor(sympy.summation(k / n, (k, 1, n)))
SECOND = sympy.summation(k**2 / n, (k, 1, n))
VARIANCE = sympy.factor(sympy.simplify(SECOND - MEAN**2))
assert sympy.simplify(MEAN - (n + 1) / 2) == 0 and sympy.simplify(VARIANCE - (n**2 - 1) / 12) == 0
PHI_CLOSED = z * (1 - z**n) / (n * (1 - z))
PHI = sympy.Add(*[z**j for j in range(1, N_VAL + 1)]) / N_VAL  # phi at n = 10 as the sum itself
assert sympy.cancel(PHI_CLOSED.subs(n, N_VAL) - PHI) == 0, "z (1 - z^n)/(n (1 - z)) is not the sum at n = 10"
DPHI = sympy.diff(PHI_CLOSED, z)

dist = symsel.parse_distribution(SPEC)
assert sympy.expand(dist.pgf - PHI) == 0
facts = check_facts(PHI, lambda j: mpmath.mpf(1) / N_VAL if j else mpmath.mpf(0), N_VAL)
assert_equal("mean (n+1)/2", MEAN.subs(n, N_VAL), facts["mean"])
assert_equal("variance (n^2-1)/12", VARIANCE.subs(n, N_VAL), facts["variance"])
assert_equal("P[K=1] = 1/n", sympy.Rational(1, N_VAL), facts["p1"])
d = derive(SPEC)
assert (d.mean, d.variance, d.p0, d.p1) == (r"\frac{11}{2}", r"\frac{33}{4}", "0", r"\frac{1}{10}"), d
assert d.verified, [c for c in d.checks if not c.passed]

base = symsel.parse_profile(BASE)
sup = polygon_sup(dist, base)
numbers = bounds(dist, base, DELTA, sup, float(MEAN.subs(n, N_VAL)), slices=400)
print(f"$$K \\sim U\\{{1..{N_VAL}\\}}:\\ m = {sympy.latex(MEAN)},\\ \\operatorname{{Var}}[K] = {sympy.latex(VARIANCE)},"
      f"\\ \\varepsilon({DELTA:g}) \\le {numbers['best']:.5f},\\ \\text{{exact example }} {numbers['lower']:.5f}$$")
print(f"$$\\varphi(z) = {sympy.latex(PHI_CLOSED)},\\ \\varphi'(z) = {sympy.latex(sympy.simplify(DPHI))}$$")
print(sup)
print(f"derive(spec, base): sup at the {derive_agrees(SPEC, BASE, numbers, sup)}")
report(numbers, tightness(numbers, 1.003))
