"""Koskela, Redberg & Wang Cor 5.8, Poisson K: eps_hat = eps - mu(e^eps1 - 1) - mu delta1, also Thm 5.7's limit.

Koskela, Redberg & Wang (ICML 2024), Corollary 5.8, re-derived two ways with SymPy, ``mu`` left free:

* directly (their Remark C.8): ``phi'(z) = mu e^{mu(z - 1)}`` gives ``log phi'(q)/phi'(q') = mu (q - q')``; with
  ``q <= e^eps1 q' + delta1`` this is ``<= mu ((e^eps1 - 1) q' + delta1) <= mu (e^eps1 - 1) + mu delta1``
  (linear in ``q'`` with a non-negative slope, so largest at ``q' = 1``); and ``phi' <= phi'(1) = mu``;
* as the limit ``n -> oo`` of Theorem 5.7 with ``p = mu/n``: ``(n - 1) log(1 + (mu/n)(e^eps1 - 1) + (mu/n) delta1)``
  tends to the same ``log R`` (symbolic limit); Thm 5.7's validity condition
  ``eps1 >= log(1 + p delta1/(1 - p))`` tends to ``eps1 >= 0`` (also a symbolic limit), so no condition survives.

Engine checks: ``symsel.derive.derive`` on the bare PGF ``exp(mu (z - 1))`` recognizes the Poisson family with
``m = mu`` and states this ``eps_hat``; ``paper_log_ratio_at`` agrees with the 50-digit typed form on a grid; the
``paper`` bound lies above an exact worst case (``symsel.evidence.lower.lower_bound``). ``poisson_fdp_ratio.py``
shows that
``eps1 = 0`` is optimal (``log R = mu delta(0)``).

Run: ``python derivations/koskela_cor_5_8_poisson.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import sympy as sp

import symsel
from symsel.bounds.hockey_stick import paper_log_ratio_at
from symsel.derive import derive
from symsel.evidence.lower import lower_bound

eps, e1, d1, mu, n = sp.symbols("varepsilon varepsilon_1 delta_1 mu n", positive=True)
z, q, qp = sp.symbols("z q q'", positive=True)
DPS = 50
cor_5_8 = eps - mu * (sp.exp(e1) - 1) - mu * d1
print("$$" + r"\text{Cor 5.8: } \hat\varepsilon = " + sp.latex(cor_5_8) + "$$")

# ------------------------------------------------------------------ directly from the PGF (Remark C.8)
dphi = sp.diff(sp.exp(mu * (z - 1)), z)
log_ratio = sp.expand_log(sp.log(dphi.subs(z, q)) - sp.log(dphi.subs(z, qp)), force=True)
assert sp.simplify(log_ratio - mu * (q - qp)) == 0
relaxed = log_ratio.subs(q, sp.exp(e1) * qp + d1)  # q <= e^eps1 q' + delta1 and the ratio increases in q
slope = sp.diff(relaxed, qp)
assert sp.simplify(slope - mu * (sp.exp(e1) - 1)) == 0  # >= 0 for eps1 >= 0: largest at q' = 1
assert sp.simplify(relaxed.subs(qp, 1) - (eps - cor_5_8)) == 0
print(f"log phi'(q)/phi'(q'): $${sp.latex(sp.simplify(log_ratio))}$$ <= at q' = 1: $${sp.latex(eps - cor_5_8)}$$")

# ------------------------------------------------------------------ as the limit of Theorem 5.7
thm_5_7 = (n - 1) * sp.log(1 + mu / n * (sp.exp(e1) - 1) + mu / n * d1)
limit = sp.limit(thm_5_7, n, sp.oo)
assert sp.simplify(limit - (eps - cor_5_8)) == 0, limit
condition_limit = sp.limit(sp.log(1 + (mu / n) * d1 / (1 - mu / n)), n, sp.oo)
assert condition_limit == 0
print("$$" + r"\lim_{n\to\infty} " + sp.latex(thm_5_7) + " = " + sp.latex(sp.expand(limit)) + "$$")

# ------------------------------------------------------------------ the engine
d = derive("pgf(expr='exp(mu*(z-1))')")
assert d.family == "poisson" and d.mean == sp.latex(mu), (d.family, d.mean)
assert d.eps_hat == sp.latex(cor_5_8), d.eps_hat
assert d.verified, [c for c in d.checks if not c.passed]
worst = 0.0
for mean in (sp.Rational(1, 2), 3, 40):
    law = symsel.poisson(mean)
    for e1_, d1_ in ((0.0, 0.3), (0.5, 1e-3), (1.0, 1e-6), (3.0, 1e-12)):
        ref = sp.N((eps - cor_5_8).subs({mu: mean, e1: sp.Rational(repr(e1_)), d1: sp.Rational(repr(d1_))}), DPS)
        worst = max(worst, float(abs(ref - paper_log_ratio_at(law, e1_, d1_)) / max(1, ref)))
assert worst < 1e-14, worst
print(f"paper_log_ratio_at vs the 50-digit typed form (mu = 1/2, 3, 40; 4 points each): max rel. diff {worst:.1e}")

law, base, delta = symsel.poisson(10), symsel.parse_profile("gaussian(sigma=4)"), 1e-6
paper = symsel.bound(law, base, "paper").epsilon(delta)
exact = lower_bound(base, law, delta, budget=40, slices=150).epsilon
print(f"Poisson(10), gaussian(sigma=4), delta = {delta:g}: exact worst case >= {exact:.6f} <= paper {paper:.6f}")
assert exact <= paper
print("OK: Cor 5.8 from the Poisson PGF and as the n -> oo limit of Thm 5.7 agree; the engine reproduces it")
