"""Two-component mixture K (1/2 Poisson(2) + 1/2 Poisson(20)): facts by linearity, envelope within 0.1% of exact cases.

Recipe of Koskela, Redberg & Wang (ICML 2024), Theorem 4.1 with docs/ratio-methods.md and docs/envelope.md, for a
finite mixture ``phi = w phi_1 + (1-w) phi_2`` of two Poisson laws — a law no paper analyses: Cor 5.8 covers each
component, not the mixture. Symbolically in ``w, mu_1, mu_2``: ``phi' = w phi_1' + (1-w) phi_2'``, ``m = w mu_1 + (1-w)
mu_2`` and the variance by the law of total variance; checked against brute-force pmf sums at 50 digits at
``w = 1/2``, means 2 and 20 (a bimodal K: few runs or many). The polygon
ratio's sampled maximum (numerical evidence, not a proof) is compared with symsel's certified sup; derived,
envelope and best bounds are asserted above exact examples. No ``derive`` call: it took 4.5 s on a smaller
mixture (Poisson and a point mass) and did not finish in 20 s on a mixture of two geometrics, whose
:func:`symsel.evidence.lower.lower_bound` also fails (a -7e-43 selection mass; an unpacked ``None``): hence
Poisson parts.

Run: ``python derivations/new_law_mixture.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import mpmath
import sympy
from new_law_common import assert_equal, bounds, check_facts, polygon_sup, report, tightness

import symsel
from symsel.distributions import z

SPEC = "mixture(components=[(1/2, poisson(mean=2)), (1/2, poisson(mean=20))])"
BASE, DELTA = "gaussian(sigma=2)", 1e-5
w, m1, m2 = sympy.symbols("w mu_1 mu_2", positive=True)
PHI = w * sympy.exp(m1 * (z - 1)) + (1 - w) * sympy.exp(m2 * (z - 1))
MEAN = sympy.simplify(sympy.diff(PHI, z).subs(z, 1))
VARIANCE = sympy.simplify(sympy.diff(PHI, z, 2).subs(z, 1) + MEAN - MEAN**2)
assert sympy.simplify(MEAN - (w * m1 + (1 - w) * m2)) == 0
total_variance = w * m1 + (1 - w) * m2 + w * (1 - w) * (m1 - m2) ** 2
assert sympy.simplify(VARIANCE - total_variance) == 0, "not the law of total variance"
values = {w: sympy.Rational(1, 2), m1: 2, m2: 20}

dist = symsel.parse_distribution(SPEC)
assert sympy.simplify(dist.pgf - PHI.subs(values)) == 0


def pmf(k: int) -> mpmath.mpf:
    """``w e^-mu_1 mu_1^k/k! + (1-w) e^-mu_2 mu_2^k/k!`` in mpmath."""
    return sum(mpmath.exp(-mu) * mpmath.mpf(mu) ** k / mpmath.factorial(k) for mu in (2, 20)) / 2


facts = check_facts(PHI.subs(values), pmf, 250)
assert_equal("mean w mu_1 + (1-w) mu_2", MEAN.subs(values), facts["mean"])
assert_equal("variance (law of total variance)", VARIANCE.subs(values), facts["variance"])
assert_equal("P[K=1]", sympy.diff(PHI, z).subs(z, 0).subs(values), facts["p1"])

base = symsel.parse_profile(BASE)
sup = polygon_sup(dist, base)
numbers = bounds(dist, base, DELTA, sup, float(MEAN.subs(values)), slices=400)
print(f"$$\\varphi = \\tfrac12 e^{{2(z-1)}} + \\tfrac12 e^{{20(z-1)}}:\\ m = {sympy.latex(MEAN.subs(values))},\\ "
      f"\\varepsilon({DELTA:g}) \\le {numbers['best']:.5f},\\ \\text{{exact example }} {numbers['lower']:.5f}$$")
print(f"$$m = {sympy.latex(MEAN)},\\ \\operatorname{{Var}}[K] = {sympy.latex(sympy.factor(VARIANCE))}$$")
print(sup)
report(numbers, tightness(numbers, 1.003))
