"""Koskela, Redberg & Wang Thm 5.7, Bin(n, p): eps_hat = eps - (n-1) log(1 + p(e^eps1-1) + p delta1), and its condition.

Koskela, Redberg & Wang (ICML 2024), Theorem 5.7 and its proof (App. C.4, Lemma C.5), re-derived with SymPy:
``phi'(z) = n p (1 - p + p z)^(n-1)``, so ``phi'(q)/phi'(q') = ((1 - p + p q)/(1 - p + p q'))^(n-1)``. With
``q <= E q' + delta1`` (``E = e^eps1``) the base is at most ``f(x) = (a x + b)/(c x + d)`` in ``x = q'``,
``a = p E``, ``b = 1 - p + p delta1``, ``c = p``, ``d = 1 - p``. Lemma C.5: ``f' = (ad - cb)/(cx + d)^2``, so ``f`` is
non-decreasing iff ``ad >= cb``, i.e. iff ``eps1 >= log(1 + p delta1/(1 - p))``; then ``f <= f(1)`` and
``R = (1 + p(E - 1) + p delta1)^(n-1)``, giving Theorem 5.7. Outside the condition ``f`` decreases and the point
``(q, q') = (delta1, 0)`` of the polygon has ratio ``(1 + p delta1/(1 - p))^(n-1)`` above the formula's ``R``: the
formula is then false (shown numerically against the engine's certified polygon sup), and the engine refuses
(``paper_log_ratio_at`` returns ``inf``).

Engine checks: ``symsel.derive.derive`` on a bare binomial PGF recognizes ``(n, p)`` and states this ``eps_hat``
with the validity condition; ``paper_log_ratio_at`` agrees with the 50-digit typed form on a grid (1e-14 relative);
the ``paper`` bound lies above an exact worst case (``symsel.evidence.lower.lower_bound``) and above ``fdp``.

Run: ``python derivations/koskela_thm_5_7_binomial.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import math

import sympy as sp

import symsel
from symsel.bounds.hockey_stick import paper_log_ratio_at
from symsel.bounds.ratio import certified_log_sup
from symsel.derive import derive
from symsel.evidence.lower import lower_bound
from symsel.profiles.region import polygon_lower

n = sp.Symbol("n", positive=True, integer=True)
p, z, x, E, d1, q = sp.symbols("p z x E delta_1 q", positive=True)
eps, e1 = sp.symbols("varepsilon varepsilon_1", positive=True)
DPS = 50


def show(label: str, expr: sp.Expr | str) -> None:
    print(f"{label}: $${expr if isinstance(expr, str) else sp.latex(expr)}$$")


def log_r(n_: sp.Expr, p_: sp.Expr) -> sp.Expr:
    """Thm 5.7's ``log R`` as typed from the paper."""
    return (n_ - 1) * sp.log(1 + p_ * (sp.exp(e1) - 1) + p_ * d1)


thm_5_7 = eps - log_r(n, p)
condition = sp.log(1 + p * d1 / (1 - p))
show("Theorem 5.7", r"\hat\varepsilon = " + sp.latex(thm_5_7) + r",\quad \varepsilon_1 \ge " + sp.latex(condition))

# ------------------------------------------------------------------ the ratio and Lemma C.5
phi = (1 - p + p * z) ** n
dphi = sp.diff(phi, z)
assert sp.simplify(dphi - n * p * (1 - p + p * z) ** (n - 1)) == 0
a, b, c, d = p * E, 1 - p + p * d1, p, 1 - p
f = (a * x + b) / (c * x + d)
assert sp.simplify(f - (1 - p + p * (E * x + d1)) / (1 - p + p * x)) == 0  # q replaced by its bound E q' + delta1
assert sp.simplify(sp.diff(f, x) - (a * d - c * b) / (c * x + d) ** 2) == 0  # Lemma C.5
ad_cb = sp.factor(a * d - c * b)
show("Lemma C.5: ad - cb", p * (1 - p) * (E - sp.exp(condition)))
# ad - cb >= 0  <=>  E >= 1 + p delta1/(1 - p)  <=>  eps1 >= log(1 + p delta1/(1 - p))   (p < 1)
threshold = sp.solve(sp.Eq(ad_cb, 0), E)
assert len(threshold) == 1 and sp.simplify(threshold[0] - sp.exp(condition)) == 0
assert sp.simplify(ad_cb - p * (1 - p) * (E - sp.exp(condition))) == 0  # increasing in E, zero at the threshold
at_one = sp.simplify(f.subs(x, 1))
assert sp.simplify(at_one - (1 + p * (E - 1) + p * d1)) == 0
show("f(1) (the sup when ad >= cb)", 1 + p * (E - 1) + p * d1)
at_zero = sp.simplify(f.subs(x, 0))
assert sp.simplify(at_zero - (1 + p * d1 / (1 - p))) == 0
# outside the condition f(0) > f(1): f(0) - f(1) = -(ad - cb)/(d (c + d)) with c + d = 1
assert sp.simplify(at_zero - at_one + ad_cb / (d * (c + d))) == 0
show("f(0) - f(1)", -p * (E - sp.exp(condition)))

# ------------------------------------------------------------------ engine: derive() from a bare PGF
d_rec = derive("pgf(expr='(7/10 + 3*z/10)**20')")
n_, p_ = 20, sp.Rational(3, 10)
assert d_rec.family == "binomial" and d_rec.family_params == {"n": "20", "p": sp.latex(p_)}, d_rec.family_params
assert d_rec.eps_hat == sp.latex(eps - log_r(n_, p_)), d_rec.eps_hat
assert "valid when" in d_rec.eps_hat_theorem and d_rec.mean == "6" and d_rec.verified
law = symsel.binomial(n_, p_)
worst = 0.0
for e1_, d1_ in ((0.5, 1e-3), (1.0, 1e-6), (2.0, 0.1), (0.05, 1e-9), (6.0, 0.5)):
    assert e1_ >= math.log1p(float(p_) * d1_ / (1 - float(p_)))
    ref = sp.N(log_r(n_, p_).subs({e1: sp.Rational(repr(e1_)), d1: sp.Rational(repr(d1_))}), DPS)
    worst = max(worst, float(abs(ref - paper_log_ratio_at(law, e1_, d1_)) / max(1, ref)))
assert worst < 1e-14, worst
print(f"derive(pgf(expr='(7/10 + 3*z/10)**20')): binomial n = 20, p = 3/10, m = 6; "
      f"paper_log_ratio_at vs the 50-digit typed form: max rel. diff {worst:.1e}")

# ------------------------------------------------------------------ outside the validity condition
print("\n| p | eps1 | delta1 | condition | formula log R | log ratio at (delta1, 0) | certified polygon sup | engine |")
print("|---|---|---|---|---|---|---|---|")
for p_out, e1_, d1_ in ((0.3, 0.0, 0.2), (0.5, 0.01, 0.1), (0.9, 0.5, 0.3)):
    law_out = symsel.binomial(n_, sp.nsimplify(p_out))
    cond = math.log1p(p_out * d1_ / (1 - p_out))
    assert e1_ < cond
    formula = float(log_r(n_, sp.nsimplify(p_out)).subs({e1: e1_, d1: d1_}))
    corner = (n_ - 1) * math.log1p(p_out * d1_ / (1 - p_out))  # (q, q') = (delta1, 0) lies in the polygon
    cert = certified_log_sup(law_out.log_dphi, lambda t, e=e1_, dd=d1_: polygon_lower(t, e, dd), tol=1e-9)
    engine = paper_log_ratio_at(law_out, e1_, d1_)
    print(f"| {p_out} | {e1_} | {d1_} | {cond:.6f} | {formula:.6f} | {corner:.6f} | {cert.upper:.6f} | {engine} |")
    assert corner > formula and cert.lower > formula, "the formula should fail outside its condition"
    assert engine == math.inf, "the engine should refuse outside the condition"

# ------------------------------------------------------------------ soundness
base = symsel.parse_profile("gaussian(sigma=2)")
delta = 1e-6
bounds = {m: symsel.bound(law, base, m).epsilon(delta) for m in ("paper", "fdp")}
exact = lower_bound(base, law, delta, budget=40, slices=150).epsilon
print(f"\nBin(20, 3/10), gaussian(sigma=2), delta = {delta:g}: exact worst case >= {exact:.6f}, "
      f"paper {bounds['paper']:.6f}, fdp {bounds['fdp']:.6f}")
# Here the paper's R is within 1e-7 of the true sup, so fdp <= paper holds up to the certificate's tolerance only.
assert exact <= bounds["paper"] and exact <= bounds["fdp"] <= bounds["paper"] * (1 + 1e-6), (exact, bounds)
print("OK: Theorem 5.7 and its validity condition re-derived by Lemma C.5; the engine reproduces and guards it")
