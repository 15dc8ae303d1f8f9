"""K truncated at m: Papernot & Steinke's Lemma 22 adds log(1/P[K ≤ m])/(λ−1) + log(E[K]/E[K·1{K≤m}]) to Lemma 7.

Follows Papernot & Steinke (ICLR 2022), App. E.1, Lemma 22 and its proof; docs/renyi.md. With ``P = P[K ≤ m]``,
``H = E[K·1{K≤m}]`` and ``T = E[K·1{K>m}] = E[K] − H``, for ``x ∈ [0, 1]``:
``0 ≤ f'(x) − P f̃'(x) = Σ_{k>m} k p_k x^{k−1} ≤ x^m T`` and ``P f̃'(x) ≥ x^{m−1} H``, so
``1 ≤ f'/(P f̃') ≤ 1 + xT/H ≤ E[K]/H``. Then ``f̃'(q)^λ f̃'(q')^{1−λ} ≤ f'(q)^λ f'(q')^{1−λ} · P^{−1} (E[K]/H)^{λ−1}``
(the first factor uses ``f̃' ≤ f'/P``, the second ``f̃' ≥ f'/(P E[K]/H)`` with a negative exponent), i.e. the two
terms ``a/(λ−1) + b`` with ``a = log(1/P)``, ``b = log(1 + T/(E[K] − T)) = log(E[K]/H)`` (SymPy: the exponent
bookkeeping, and for the geometric law the closed forms of ``P`` and ``H`` by ``sp.summation``).

Checks at 50 digits: ``truncation_terms`` against brute-force tail sums (``P[K > m]`` and ``T`` summed from the pmf
past ``m``, pmfs typed from their definitions) for Poisson, geometric, logarithmic and TNB laws; the sandwich
``1 ≤ f'/(P f̃') ≤ 1 + xT/H`` on a grid (numerical evidence, not a proof — the proof is the paragraph above); the
engine's Lemma 22 curve is the inner closed form plus exactly these terms; Lemma 7's certified sup for the
truncated PGF is below the untruncated one plus ``a + (λ−1)b``; soundness: the exact ``D_λ(A‖A')`` of the
truncated selection on randomized response is below ``lemma22_curve``.

Run: ``python derivations/papernot_steinke_lemma_22_truncation.py`` (prints LaTeX; exits non-zero on failure).
"""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp
from _pmf_reference import masses, mp, tnb_masses

import symsel
from symsel.bounds.renyi import lemma7_log_sup, lemma22_curve, renyi_selection_curve, truncation_terms
from symsel.evidence.exact import renyi, selection_laws
from symsel.pairs.finite import FinitePair
from symsel.profiles import pure

mpmath.mp.dps = 50
lam, P, E, H, g = sp.symbols(r"lambda P E H gamma", positive=True)
j, m = sp.symbols("j m", positive=True, integer=True)
fq, fqp = sp.symbols("f'(q) f'(q')", positive=True)


def show(label: str, expr: sp.Expr) -> None:
    print(f"{label}: $${sp.latex(expr)}$$")


# ------------------------------------------------------------------ exponent bookkeeping
bound = (fq / P) ** lam * (fqp / (P * E / H)) ** (1 - lam)  # f~'(q) <= f'(q)/P, f~'(q') >= f'(q') H/(P E)
log_extra = sp.expand_log(sp.log(bound), force=True) - sp.expand_log(sp.log(fq**lam * fqp ** (1 - lam)), force=True)
a_term, b_term = sp.log(1 / P), sp.log(E / H)
assert sp.simplify(sp.expand_log(log_extra / (lam - 1) - (a_term / (lam - 1) + b_term), force=True)) == 0
T = E - H
assert sp.simplify(sp.log(1 + T / (E - T)) - b_term) == 0  # the paper's form of b
show("Lemma 22: extra terms", a_term / (lam - 1) + sp.log(1 + T / (E - T)))

# ------------------------------------------------------------------ geometric law: P and H in closed form
pmf_geo = g * (1 - g) ** (j - 1)
P_geo = sp.simplify(sp.summation(pmf_geo, (j, 1, m)))
H_geo = sp.simplify(sp.summation(j * pmf_geo, (j, 1, m)))
assert sp.simplify(P_geo - (1 - (1 - g) ** m)) == 0
b_geo = sp.simplify(sp.log((1 / g) / H_geo))
show(r"geometric: P[K \le m]", P_geo)
show(r"geometric: E[K 1\{K \le m\}]", sp.factor(H_geo))


def reference_terms(pmf: dict[int, mpmath.mpf], k_max: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(a, b) of Lemma 22 from the tail past k_max: a = log(1/(1 − P[K > m])), b = log(1 + T/(E[K] − T))."""
    tail = mpmath.fsum(v for k, v in pmf.items() if k > k_max)
    t_mean = mpmath.fsum(k * v for k, v in pmf.items() if k > k_max)
    mean = mpmath.fsum(k * v for k, v in pmf.items())
    return mpmath.log(1 / (1 - tail)), mpmath.log(1 + t_mean / (mean - t_mean))


laws = [(symsel.poisson(10), masses(mpmath.exp(-10), lambda k: mpmath.mpf(10) / (k + 1), 0), (12, 20)),
        (symsel.geometric(gamma=sp.Rational(1, 10)), tnb_masses(mpmath.mpf(1), mpmath.mpf(1) / 10), (20, 60)),
        (symsel.logarithmic(gamma=sp.Rational(1, 20)), tnb_masses(mpmath.mpf(0), mpmath.mpf(1) / 20), (10, 100)),
        (symsel.tnb(sp.Rational(1, 2), gamma=sp.Rational(1, 10)),
         tnb_masses(mpmath.mpf(1) / 2, mpmath.mpf(1) / 10), (15, 50))]
print("\n| law | m | a reference (50 digits) | truncation_terms a | b reference | truncation_terms b |")
print("|---|---|---|---|---|---|")
for law, pmf, cuts in laws:
    for k_max in cuts:
        ref_a, ref_b = reference_terms(pmf, k_max)
        got_a, got_b = truncation_terms(law, k_max, dps=50)
        print(f"| {law.spec} | {k_max} | {mpmath.nstr(ref_a, 20)} | {got_a!r} | {mpmath.nstr(ref_b, 20)} | {got_b!r} |")
        for got, ref in ((got_a, ref_a), (got_b, ref_b)):
            assert abs(got - ref) <= 1e-15 * ref + 1e-300, (law.spec, k_max, got, ref)
        if law.name == "geometric":
            subs = {g: sp.Rational(1, 10), m: k_max}
            assert abs(mpmath.log(1 / mp(P_geo.subs(subs))) - ref_a) < mpmath.mpf(10) ** -45
            assert abs(mpmath.mpf(sp.N(b_geo.subs(subs), 55)) - ref_b) < mpmath.mpf(10) ** -45
        # the sandwich 1 <= f'/(P f~') <= 1 + x T/H at a few x (numerical evidence)
        head = {k: v for k, v in pmf.items() if k <= k_max}
        p_head = mpmath.fsum(head.values())
        h_mean = mpmath.fsum(k * v for k, v in head.items())
        t_mean = mpmath.fsum(k * v for k, v in pmf.items()) - h_mean
        for xv in (mpmath.mpf(1) / 10, mpmath.mpf(1) / 2, mpmath.mpf(9) / 10, mpmath.mpf(1)):
            full = mpmath.fsum(k * v * xv ** (k - 1) for k, v in pmf.items() if k > 0)
            trunc = mpmath.fsum(k * v * xv ** (k - 1) for k, v in head.items() if k > 0)  # = P f~'(x)
            assert 1 <= full / trunc <= 1 + xv * t_mean / h_mean

# ------------------------------------------------------------------ the engine's Lemma 22 curve and Lemma 7
base = pure(1.0)
e1 = sp.E
rr = FinitePair([1 / (1 + e1), e1 / (1 + e1)], [e1 / (1 + e1), 1 / (1 + e1)], order=[1, 0])
orders = np.array([1.5, 2.0, 4.0, 8.0])
print("\n| law | m | lambda | exact D_lambda(A||A') (truncated K) | lemma22_curve raw | Lemma 7 (truncated PGF) |")
print("|---|---|---|---|---|---|")
for law, k_max in ((symsel.poisson(10), 14), (symsel.geometric(gamma=sp.Rational(1, 10)), 25)):
    a_, b_ = truncation_terms(law, k_max)
    inner = renyi_selection_curve(law, base, "closed", orders=orders).raw_values(orders)
    curve = lemma22_curve(law, k_max, base, "closed", orders=orders).raw_values(orders)
    assert np.allclose(curve, inner + a_ / (orders - 1) + b_, rtol=1e-14, atol=0)
    trunc = symsel.distributions.truncated(law, k_max)
    la, lb = selection_laws(rr, trunc, 40)
    for i, lv in enumerate(orders):
        sup_t = lemma7_log_sup(trunc, base.region_lower, float(lv))
        sup_f = lemma7_log_sup(law, base.region_lower, float(lv))
        # certified values carry a 1e-7 relative tolerance: compare with that slack
        assert sup_t <= sup_f + a_ + (lv - 1) * b_ + 1e-6 * abs(sup_f), (law.spec, lv, sup_t, sup_f)
        exact = renyi(la, lb, float(lv), 40)
        l7 = float(base.rdp(float(lv))) + sup_t / (lv - 1)
        print(f"| {law.spec} | {k_max} | {lv} | {mpmath.nstr(exact, 12)} | {curve[i]:.10f} | {l7:.10f} |")
        assert exact <= curve[i] and exact <= l7 + 1e-9
print("\nOK: Lemma 22's two terms derived (exponent bookkeeping, geometric closed forms) and equal to "
      "truncation_terms at 50 digits; the truncated selection stays below the Lemma 22 curve")
