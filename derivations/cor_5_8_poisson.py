"""Poisson K: Corollary 5.8, directly from the PGF and as the limit of Theorem 5.7 (binomial, p = m/n).

Follows Koskela, Redberg & Wang (ICML 2024), Theorem 5.7 and Corollary 5.8. ``symsel.derive`` is given the
PGF ``exp(mu (z - 1))`` with ``mu`` left free; it must recognize the Poisson family, find ``m = mu`` and state
``eps_hat = eps - mu (e^eps1 - 1) - mu delta1``. Independently SymPy takes the limit ``n -> oo`` of Thm 5.7's
``(n - 1) log(1 + (mu/n)(e^eps1 - 1) + (mu/n) delta1)`` and must find the same ``log R`` (symbolic equality).

Run: ``python derivations/cor_5_8_poisson.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import sympy as sp

from symsel.derive import derive

eps, e1, d1, mu, n = sp.symbols("varepsilon varepsilon_1 delta_1 mu n", positive=True)
cor_5_8 = eps - mu * (sp.exp(e1) - 1) - mu * d1

d = derive("pgf(expr='exp(mu*(z-1))')")
assert d.family == "poisson" and d.mean == sp.latex(mu), (d.family, d.mean)
assert d.eps_hat == sp.latex(cor_5_8), d.eps_hat
assert d.verified, [c for c in d.checks if not c.passed]

thm_5_7 = (n - 1) * sp.log(1 + mu / n * (sp.exp(e1) - 1) + mu / n * d1)
limit = sp.limit(thm_5_7, n, sp.oo)
assert sp.simplify(limit - (eps - cor_5_8)) == 0, limit

print("$$" + r"\hat\varepsilon = " + sp.latex(cor_5_8) + "$$")
print("$$" + r"\lim_{n\to\infty} " + sp.latex(thm_5_7) + " = " + sp.latex(sp.expand(limit)) + "$$")
