"""Beta-binomial K (no paper analyses it): a derived polygon bound, sound against exact worst-case examples.

Follows the recipe of Koskela, Redberg & Wang (ICML 2024), Theorem 4.1 and MATH.md §4: for an
``(eps, delta)``-DP base the polygon ``(eps1, delta1) = (1, 1e-6)`` has its ratio sup at the vertex (sign of the
derivative sampled along both segments: numerical evidence, labelled so), giving
``eps(delta) <= log R_V + eps_Q(delta/m)``. The mean ``m = n a/(a + b) = 8`` is checked exactly, the vertex value
against the engine's certified sup, and the bound against :func:`symsel.lower.lower_bound` (exact examples).

Run: ``python derivations/beta_binomial_new_law.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

from symsel.derive import derive

d = derive("beta_binomial(n=20, a=2, b=3)", "approx(eps=1, delta=1e-6)")
assert d.mean == "8", d.mean  # n a / (a + b)
assert d.sup_location == "vertex", d.sup_location
assert d.bound["epsilon_lower"] <= d.bound["epsilon_derived"], d.bound
assert d.bound["epsilon_lower"] <= d.bound["epsilon_best"], d.bound
assert d.verified, [c for c in d.checks if not c.passed]
print("$$" + r"\hat\varepsilon = " + d.eps_hat + "$$")
print(f"$$\\varepsilon(10^{{-5}}) \\le {d.bound['epsilon_derived']:.6f}, "
      f"\\text{{ lower bound }} {d.bound['epsilon_lower']:.6f}$$")
