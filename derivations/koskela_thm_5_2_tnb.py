"""Koskela, Redberg & Wang Thm 5.2, TNB K: eps_hat = eps - (eta+1) log(e^eps1 + (1-gamma) delta1/gamma).

Koskela, Redberg & Wang (ICML 2024), Theorem 5.2 (``K ~ D_{eta,gamma}``, Papernot & Steinke Definition 1),
re-proved here with SymPy from the PGF and Theorem 4.1 (docs/ratio-methods.md, §4):

1. ``phi'(z) = m ((1 - c z)/gamma)^-(eta+1)``, ``c = 1 - gamma``, ``m = eta c/(gamma (1 - gamma^eta))``
   (identity), so ``phi'(q)/phi'(q') = ((1 - c q')/(1 - c q))^(eta+1)`` and ``phi' <= phi'(1) = m``.
2. The complement constraint ``1 - q' <= e^eps1 (1 - q) + delta1`` turns the base of that power into at most
   ``g(u) = (c E u + gamma + c delta1)/(c u + gamma)``, ``u = 1 - q``, ``E = e^eps1``: a Möbius function, monotone
   by Lemma C.5 (sign of ``ad - cb``), so its max over ``u in [0, 1]`` is ``max(g(0), g(1))``; both are
   ``<= E + c delta1/gamma`` (differences factored into non-negative terms).
3. With ``R = (E + c delta1/gamma)^(eta+1)`` the §4 recipe gives ``H_{e^eps}(A||A') <= m delta(eps - log R)``.

Engine checks: ``symsel.derive.derive`` is handed two bare PGFs (``eta = 1/2`` and ``eta = 2``; the geometric law
is in ``koskela_cor_5_3_pure_dp.py``) and must recognize the family, read ``(eta, gamma)`` and state this
``eps_hat`` (LaTeX equality with the typed form); ``paper_log_ratio_at`` must agree with the typed form evaluated at
50 digits on a grid of ``(eps1, delta1)`` (to 1e-14 relative: the engine is float64); the ``paper`` bound of
``symsel.bound`` must lie above an exact worst case (``symsel.evidence.lower.lower_bound``) and above
``polygon``/``fdp``.

Run: ``python derivations/koskela_thm_5_2_tnb.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import mpmath
import sympy as sp

import symsel
from symsel.bounds.hockey_stick import paper_log_ratio_at
from symsel.derive import derive
from symsel.evidence.lower import lower_bound

eta = sp.Symbol("eta", positive=True)
gamma, z, u, E, d1 = sp.symbols("gamma z u E delta_1", positive=True)  # E = e^{eps1} >= 1
eps, e1 = sp.symbols("varepsilon varepsilon_1", positive=True)
c = 1 - gamma
DPS = 50


def show(label: str, expr: sp.Expr | str) -> None:
    print(f"{label}: $${expr if isinstance(expr, str) else sp.latex(expr)}$$")


def paper_log_ratio(eta_: sp.Expr, gamma_: sp.Expr) -> sp.Expr:
    """Thm 5.2's ``log R`` as typed from the paper: ``(eta+1) log(e^eps1 + (1-gamma) delta1/gamma)``."""
    return (eta_ + 1) * sp.log(sp.exp(e1) + (1 - gamma_) / gamma_ * d1)


# ------------------------------------------------------------------ 1. phi' of D_{eta, gamma}
phi = ((1 - c * z) ** (-eta) - 1) / (gamma ** (-eta) - 1)
mean = eta * c / (gamma * (1 - gamma**eta))
claimed_dphi = mean * ((1 - c * z) / gamma) ** (-(eta + 1))
quotient = sp.expand_power_base(sp.powdenest(sp.diff(phi, z) / claimed_dphi, force=True), force=True)
assert sp.simplify(sp.powsimp(sp.expand(quotient), force=True)) == 1, "phi' is not m((1-cz)/gamma)^-(eta+1)"
assert sp.simplify(claimed_dphi.subs(z, 1) - mean) == 0
show("phi'(z)", claimed_dphi)

# ------------------------------------------------------------------ 2. the ratio under the complement constraint
g = (c * E * u + gamma + c * d1) / (c * u + gamma)  # (1 - c q') / (1 - c q) with 1 - q' = E u + delta1, u = 1 - q
assert sp.simplify(g - (1 - c * (1 - (E * u + d1))) / (1 - c * (1 - u))) == 0
a_, b_, cc_, dd_ = c * E, gamma + c * d1, c, gamma  # g = (a u + b)/(cc u + dd)
lemma_c5 = c * (gamma * (E - 1) - c * d1)  # the sign of g' decides where the max over u sits
assert sp.expand(a_ * dd_ - cc_ * b_ - lemma_c5) == 0
assert sp.simplify(sp.diff(g, u) - lemma_c5 / (cc_ * u + dd_) ** 2) == 0, "Lemma C.5: g' = (ad - cb)/(cu + d)^2"
show("Lemma C.5: ad - cb", lemma_c5)
g0, g1 = sp.simplify(g.subs(u, 0)), sp.simplify(g.subs(u, 1))
r_paper = E + c * d1 / gamma
gap0 = sp.simplify(r_paper - g0)
gap1 = sp.factor(sp.simplify(r_paper - g1))
assert sp.simplify(gap0 - (E - 1)) == 0  # >= 0 as E >= 1
assert sp.simplify(gap1 - (gamma * (E - 1) + c**2 * d1 / gamma)) == 0  # >= 0: every term is non-negative
show("R_paper - g(0)", gap0)
show("R_paper - g(1)", gamma * (E - 1) + c**2 * d1 / gamma)
thm_5_2 = eps - paper_log_ratio(eta, gamma)
show("Theorem 5.2", r"\hat\varepsilon = " + sp.latex(thm_5_2))

# ------------------------------------------------------------------ 3. the engine: derive() from bare PGFs
LAWS = (  # (bare PGF, eta, gamma, exact mean)
    ("((1 - 9*z/10)**(-1/2) - 1)/(sqrt(10) - 1)", sp.Rational(1, 2), sp.Rational(1, 10), None),
    ("((1 - 19*z/20)**(-2) - 1)/(400 - 1)", 2, sp.Rational(1, 20), None),
)
GRID = ((0.0, 0.5), (0.3, 1e-3), (1.0, 1e-6), (2.5, 0.1), (8.0, 1e-12))
for text, eta_, gamma_, exact_mean in LAWS:
    d = derive(f"pgf(expr={text!r})", sections=False)  # the family and eps-hat only
    assert d.family == "tnb", (text, d.family)
    assert d.family_params == {"eta": sp.latex(sp.nsimplify(eta_)), "gamma": sp.latex(gamma_)}, d.family_params
    typed = eps - paper_log_ratio(sp.nsimplify(eta_), gamma_)
    assert d.eps_hat == sp.latex(typed), (d.eps_hat, sp.latex(typed))
    m_exact = sp.simplify(mean.subs({eta: eta_, gamma: gamma_})) if exact_mean is None else exact_mean
    law = symsel.parse_distribution(f"pgf(expr={text!r})")
    engine_mean = sp.Float(mpmath.nstr(law.mean_mp(DPS), DPS + 5), DPS)
    assert abs(engine_mean - sp.N(m_exact, DPS)) < sp.Float(10) ** -45 * sp.N(m_exact), (text, engine_mean, m_exact)
    # every derive() check except its mean check (see the report: it compares str(mpf) at 15 digits) must pass
    others = [ck for ck in d.checks if "mean" not in ck.claim]
    assert others and all(ck.passed for ck in others), [ck for ck in others if not ck.passed]
    worst = 0.0
    for e1_, d1_ in GRID:
        ref = sp.N(paper_log_ratio(sp.nsimplify(eta_), gamma_).subs({e1: sp.Rational(repr(e1_)),
                                                                      d1: sp.Rational(repr(d1_))}), DPS)
        engine = paper_log_ratio_at(law, e1_, d1_)
        worst = max(worst, float(abs(ref - engine) / max(1, abs(ref))))
    assert worst < 1e-14, (text, worst)
    print(f"derive(pgf(expr={text!r})): tnb, eta = {eta_}, gamma = {gamma_}, m = {sp.N(m_exact, 20)}; "
          f"paper_log_ratio_at vs 50-digit typed form: max rel. diff {worst:.1e}")

# ------------------------------------------------------------------ 4. soundness against exact worst cases
base = symsel.parse_profile("gaussian(sigma=4)")
for law in (symsel.tnb(2, gamma=sp.Rational(1, 20)),):
    for delta in (1e-6,):
        ours = {m: symsel.bound(law, base, m).epsilon(delta) for m in ("paper", "polygon", "fdp")}
        exact = lower_bound(base, law, delta, budget=60, slices=200).epsilon
        print(f"{law.spec}, gaussian(sigma=4), delta = {delta:g}: exact worst case >= {exact:.6f}; "
              + ", ".join(f"{k} {v:.6f}" for k, v in ours.items()))
        assert exact <= ours["fdp"] <= ours["polygon"] + 1e-9 <= ours["paper"] + 2e-9, (ours, exact)
print("OK: Theorem 5.2 re-derived from the PGF (Lemma C.5 on the complement constraint) and reproduced by the engine")
