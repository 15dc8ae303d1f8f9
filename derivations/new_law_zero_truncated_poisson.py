"""Zero-truncated Poisson K: the ratio mu (q - q') peaks at the vertex, eps_hat = eps - mu (E - 1 + 2 delta1)/(E + 1).

Recipe of Koskela, Redberg & Wang (ICML 2024), Theorem 4.1 with docs/ratio-methods.md and docs/envelope.md, for ``K ~
Poisson(mu)`` conditioned on ``K >= 1`` (the zero-truncated Poisson of the count-data literature, e.g. Johnson, Kemp
& Kotz): ``phi = (e^(mu z) - 1)/(e^mu - 1)``, ``phi' = mu e^(mu z)/(e^mu - 1)``, ``m = mu e^mu/(e^mu - 1)``, all with
``mu`` free, checked against brute-force pmf sums at 50 digits (``mu = 3``). Since ``log phi'(q)/phi'(q') =
mu (q - q')`` is linear, SymPy proves its slope non-negative along S1 and non-positive along S2: the sup over the
``(eps1, delta1)`` polygon is at the vertex, in closed form (a proof; ``derive`` agrees: "vertex, proved").
Here ``E = e^eps1``. It is below Cor 5.8's Poisson form ``mu (E - 1) + mu delta1`` (SymPy: the difference is
``mu (E - 1)(E + delta1)/(E + 1) >= 0``). The derived bound, the certified envelope and best are asserted above
the certified lower bound from exact examples, and best/lower is asserted.

Run: ``python derivations/new_law_zero_truncated_poisson.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import mpmath
import sympy
from new_law_common import assert_equal, bounds, check_facts, polygon_sup, report, tightness

import symsel
from symsel.derive import derive
from symsel.distributions import z

MU_VAL, BASE, DELTA = 3, "gaussian(sigma=2)", 1e-5
SPEC = "pgf(expr='(exp(mu*z)-1)/(exp(mu)-1)', mu={})"
mu, big_e, d1, q = sympy.symbols("mu E delta_1 q", positive=True)  # E = e^eps1 >= 1
PHI = (sympy.exp(mu * z) - 1) / (sympy.exp(mu) - 1)
DPHI = sympy.diff(PHI, z)
MEAN = sympy.simplify(DPHI.subs(z, 1))
VARIANCE = sympy.simplify(sympy.diff(PHI, z, 2).subs(z, 1) + MEAN - MEAN**2)
assert sympy.simplify(MEAN - mu * sympy.exp(mu) / (sympy.exp(mu) - 1)) == 0
assert sympy.simplify(sympy.expand_log(sympy.log(DPHI.subs(z, q) / DPHI.subs(z, d1)), force=True)
                      - mu * (q - d1)) == 0, "the log-ratio is not mu (q - q')"

# q - q' along S1 (q' = (q - delta1)/E) and S2 (q' = 1 - delta1 - E (1 - q)), as functions of q:
slope_s1 = sympy.diff(q - (q - d1) / big_e, q)
slope_s2 = sympy.diff(q - (1 - d1 - big_e * (1 - q)), q)
assert sympy.simplify(slope_s1 - (big_e - 1) / big_e) == 0 and sympy.simplify(slope_s2 - (1 - big_e)) == 0
LOG_R = sympy.factor(mu * ((big_e + d1) / (1 + big_e) - (1 - d1) / (1 + big_e)))
assert sympy.simplify(LOG_R - mu * (big_e - 1 + 2 * d1) / (big_e + 1)) == 0
gap = sympy.factor(mu * (big_e - 1) + mu * d1 - LOG_R)  # Cor 5.8 minus ours
assert sympy.simplify(gap - mu * (big_e - 1) * (big_e + d1) / (big_e + 1)) == 0  # >= 0 for E >= 1

values = {mu: MU_VAL}
dist = symsel.parse_distribution(SPEC.format(MU_VAL))
facts = check_facts(PHI.subs(values), lambda k: mpmath.mpf(MU_VAL) ** k / mpmath.factorial(k) / mpmath.expm1(MU_VAL)
                    if k else mpmath.mpf(0), 200)
assert_equal("mean mu e^mu/(e^mu - 1)", MEAN.subs(values), facts["mean"])
assert_equal("variance", VARIANCE.subs(values), facts["variance"])
assert_equal("P[K=1] = mu/(e^mu - 1)", DPHI.subs(values).subs(z, 0), facts["p1"])
d = derive(SPEC.format("")[:-5] + ")", sections=False)  # mu left free; facts and polygon only
assert d.sup_location == "vertex" and "proved" in d.sup_argument, (d.sup_location, d.sup_argument)

base = symsel.parse_profile(BASE)
sup = polygon_sup(dist, base)
closed = float(LOG_R.subs({mu: MU_VAL, big_e: sympy.exp(sympy.Float(sup.eps1, 30)), d1: sup.delta1}))
assert sup.location == "vertex" and abs(sup.log_r - closed) < 1e-12, (sup, closed)
numbers = bounds(dist, base, DELTA, sup, float(MEAN.subs(values)), slices=400)
shown = sympy.latex(LOG_R.subs(big_e, sympy.Symbol(r"e^{\varepsilon_1}")))
print(f"$$\\hat\\varepsilon = \\varepsilon - {shown}$$")
print(f"$$m = {sympy.latex(MEAN)},\\ \\operatorname{{Var}}[K] = {sympy.latex(VARIANCE)}$$")
print(f"polygon sup (eps1 = {sup.eps1:.4f}, delta1 = {sup.delta1:.4g}) at the vertex: log R = {sup.log_r:.10f} "
      f"(closed form {closed:.10f}), certified {sup.certified:.10f}")
report(numbers, tightness(numbers, 1.003))
