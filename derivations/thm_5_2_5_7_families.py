"""Truncated negative binomial and binomial K: Theorem 5.2 and Theorem 5.7 recovered from the PGF alone.

Follows Koskela, Redberg & Wang (ICML 2024), Theorem 5.2 (``D_{eta,gamma}`` of Papernot & Steinke, Definition 1)
and Theorem 5.7 (``Bin(n, p)``, valid when ``eps1 >= log(1 + p delta1/(1 - p))``). ``symsel.derive`` is given each
law as a bare PGF; it must recognize the family from ``phi'/phi''`` (an affine function of ``z``), read off the
parameters, and state the paper's ``eps_hat``, which must equal the form typed here from the paper and agree with
the engine's ``paper`` method (checked inside the derivation at three ``(eps1, delta1)`` points).

Run: ``python derivations/thm_5_2_5_7_families.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import sympy as sp

from symsel.derive import derive

eps, e1, d1 = sp.symbols("varepsilon varepsilon_1 delta_1", positive=True)

geometric = derive("pgf(expr='z/(30 - 29*z)')")  # geometric, gamma = 1/30, eta = 1
gamma = sp.Rational(1, 30)
thm_5_2 = eps - 2 * sp.log(sp.exp(e1) + (1 - gamma) / gamma * d1)
assert geometric.family == "tnb" and geometric.family_params == {"eta": "1", "gamma": sp.latex(gamma)}
assert geometric.eps_hat == sp.latex(thm_5_2), geometric.eps_hat
assert geometric.mean == "30" and geometric.verified

binom = derive("pgf(expr='(7/10 + 3*z/10)**20')")
p = sp.Rational(3, 10)
thm_5_7 = eps - 19 * sp.log(1 + p * (sp.exp(e1) - 1) + p * d1)
assert binom.family == "binomial" and binom.family_params == {"n": "20", "p": sp.latex(p)}
assert binom.eps_hat == sp.latex(thm_5_7) and "valid when" in binom.eps_hat_theorem
assert binom.mean == "6" and binom.verified

print("$$" + r"\text{Thm 5.2: } \hat\varepsilon = " + geometric.eps_hat + "$$")
print("$$" + r"\text{Thm 5.7: } \hat\varepsilon = " + binom.eps_hat + "$$")
