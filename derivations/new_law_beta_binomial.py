"""Beta-binomial K (no paper analyses it): envelope bound within 0.1% of exact worst-case examples, polygon bound sound.

Recipe of Koskela, Redberg & Wang (ICML 2024), Theorem 4.1 with docs/ratio-methods.md (ratio recipe) and §4b (envelope).
The law: ``K ~ Bin(n, P)``, ``P ~ Beta(a, b)`` (Skellam's beta-binomial), ``P[K=k] = C(n,k) B(k+a, n-k+b)/B(a,b)``,
mean ``n a/(a+b)``, variance ``n a b (a+b+n)/((a+b)^2 (a+b+1))`` — both checked here against brute-force pmf
sums at 50 digits (mpmath), as are ``phi``, ``phi'``, ``P[K=0]``, ``P[K=1]``. With a Gaussian base
(``sigma = 2``) :func:`symsel.derive.derive` does not decide the sign along the polygon's segments; the sampled
ratio (numerical evidence, not a proof) peaks *inside* S2, not at a corner, and symsel's certified sup is
above it and within 1e-5. The derived bound ``log R + eps_Q(delta/m)``, the certified envelope and best
bounds are each asserted above the certified lower bound from exact examples, and best/lower is asserted.

Run: ``python derivations/new_law_beta_binomial.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import mpmath
import sympy
from new_law_common import assert_equal, bounds, check_facts, polygon_sup, report, tightness

import symsel
from symsel.derive import derive

N, A, B = 20, 2, 3
SPEC, BASE, DELTA = f"beta_binomial(n={N}, a={A}, b={B})", "gaussian(sigma=2)", 1e-5
n, a, b = sympy.symbols("n a b", positive=True)
MEAN = n * a / (a + b)
VARIANCE = n * a * b * (a + b + n) / ((a + b) ** 2 * (a + b + 1))


def beta(x: int, y: int) -> sympy.Expr:
    """The beta function as an exact ratio of gamma functions (SymPy's ``beta`` evaluates in float)."""
    return sympy.gamma(x) * sympy.gamma(y) / sympy.gamma(x + y)


def pmf(k: int) -> mpmath.mpf:
    """``C(n,k) B(k+a, n-k+b)/B(a,b)`` in mpmath (independent of symsel's coefficients)."""
    return mpmath.binomial(N, k) * mpmath.beta(k + A, N - k + B) / mpmath.beta(A, B)


dist = symsel.parse_distribution(SPEC)
values = {n: N, a: A, b: B}
facts = check_facts(dist.pgf, pmf, N)
assert_equal("mean n a/(a+b)", MEAN.subs(values), facts["mean"])
assert_equal("variance", VARIANCE.subs(values), facts["variance"])
assert_equal("P[K=0] = B(a, n+b)/B(a,b)", beta(A, N + B) / beta(A, B), facts["p0"])
assert_equal("P[K=1] = n B(1+a, n-1+b)/B(a,b)", N * beta(1 + A, N - 1 + B) / beta(A, B), facts["p1"])

d = derive(SPEC)  # the engine's record (without a base: derive(SPEC, BASE) alone takes ~4 s of the 8 s budget)
assert (d.mean, d.variance, d.p0, d.p1) == ("8", "20", r"\frac{1}{46}", r"\frac{10}{253}"), d
assert d.verified, [c for c in d.checks if not c.passed]

sup = polygon_sup(dist, symsel.parse_profile(BASE))
numbers = bounds(dist, symsel.parse_profile(BASE), DELTA, sup, float(MEAN.subs(values)), slices=200)
print(f"$$K \\sim \\mathrm{{BetaBin}}({N},{A},{B}):\\ \\varepsilon({DELTA:g}) \\le {numbers['best']:.5f}"
      f"\\ (\\text{{envelope}}),\\ \\text{{exact example }} {numbers['lower']:.5f}$$")
print(f"$$m = {sympy.latex(MEAN)},\\ \\operatorname{{Var}}[K] = {sympy.latex(VARIANCE)}$$")
print(sup)
report(numbers, tightness(numbers, 1.003))
