"""Truncated negative binomial K: Papernot & Steinke's Theorem 2, derived from Lemma 7 and the TNB PGF alone.

Follows Papernot & Steinke (ICLR 2022), Theorem 2 and its proof (App. B.2); docs/renyi.md. Lemma 7 bounds
``D_λ(A‖A')`` by ``ε(λ) + S/(λ−1)`` with ``S = log sup φ'(q)^λ φ'(q')^{1−λ}`` over the base's privacy region.
SymPy carries the paper's argument step by step:

1. ``φ'(x) = γ^{η+1} E[K] (1 − (1−γ)x)^{−η−1}`` (identity, ``η ≠ 0`` and the logarithmic ``η = 0``);
2. with ``a = γ + (1−γ)(1−q)`` and ``a' = γ + (1−γ)(1−q')`` the exponents split as
   ``a^{−λ(1+η)} a'^{(λ−1)(1+η)} = (a^{1−λ̂} a'^{λ̂})^ν a^u``, ``ν = (λ−1)(1+η)/λ̂ ≥ 0``, ``u = −(1+η)((λ−1)/λ̂ + 1) ≤ 0``
   (solved, not typed in);
3. ``(x, y) ↦ x^{1−λ̂} y^{λ̂}`` is jointly convex (its Hessian: trace ≥ 0, determinant = 0, symbolic), so
   ``a^{1−λ̂} a'^{λ̂} ≤ γ + (1−γ)(1−q)^{1−λ̂}(1−q')^{λ̂} ≤ γ + (1−γ)e^{(λ̂−1)ε̂}`` (data processing for the
   binary post-processing); ``a^u ≤ γ^u`` as ``a ≥ γ``, ``u ≤ 0``;
4. collecting terms gives the proof's sharper ``S/(λ−1) ≤ (1+η)/λ̂ · log(1 + (1/γ − 1)e^{(λ̂−1)ε̂}) + log E[K]/(λ−1)``
   (symbolic equality), and its relaxation is eq. (5): the gap ``e^{s}/γ − 1 − (1/γ − 1)e^{s} = e^{s} − 1 ≥ 0``.

Checks: the closed form equals ``theorem2_constant`` (paper and ``extended``) at 50-digit references on a grid;
Lemma 7's certified sup (``lemma7_log_sup`` over a Gaussian base's f-DP region) never exceeds the derived bound
on a grid of (η, γ, λ, λ̂, σ); soundness: the exact ``D_λ(A‖A')`` of a finite pair (randomized response, and the
``liu-talwar`` example of :mod:`symsel.evidence.examples`) is below Theorem 2 fed with the pair's exact RDP.

Run: ``python derivations/papernot_steinke_thm_2_tnb.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import sympy as sp

import symsel
from symsel.bounds.renyi import lemma7_log_sup, theorem2_constant
from symsel.evidence.exact import renyi, selection_laws
from symsel.pairs.finite import FinitePair
from symsel.profiles import GaussianProfile

mpmath.mp.dps = 50
eta = sp.Symbol("eta", positive=True)  # eta > 0 here; eta in (-1, 0] is checked numerically below
gamma, x, q, qp, lam, lh, eh, s = sp.symbols(r"gamma x q q' lambda \hat\lambda \hat\varepsilon s", positive=True)
X, Y = sp.symbols("X Y", positive=True)


def show(label: str, expr: sp.Expr) -> None:
    print(f"{label}: $${sp.latex(expr)}$$")


# ------------------------------------------------------------------ 1. phi' of the TNB law
mean = eta * (1 - gamma) / (gamma * (1 - gamma**eta))  # E[K], P&S Definition 1
phi = ((1 - (1 - gamma) * x) ** (-eta) - 1) / (gamma ** (-eta) - 1)
dphi_form = gamma ** (eta + 1) * mean * (1 - (1 - gamma) * x) ** (-eta - 1)
assert sp.simplify(sp.diff(phi, x) - dphi_form) == 0
assert sp.simplify(sp.diff(phi, x).subs(x, 1) - mean) == 0  # E[K] = phi'(1)
phi_log = sp.log(1 - (1 - gamma) * x) / sp.log(gamma)
mean_log = (1 / gamma - 1) / sp.log(1 / gamma)
assert sp.simplify(sp.diff(phi_log, x) - gamma * mean_log * (1 - (1 - gamma) * x) ** -1) == 0  # eta = 0
show("phi'(x)", dphi_form)

# ------------------------------------------------------------------ 2. splitting the exponents
nu, u = sp.symbols("nu u", real=True)
sol = sp.solve([lh * nu - (lam - 1) * (1 + eta), (1 - lh) * nu + u + lam * (eta + 1)], [nu, u], dict=True)[0]
nu_s, u_s = sol[nu], sol[u]
assert sp.simplify(nu_s - (lam - 1) * (1 + eta) / lh) == 0
assert sp.simplify(u_s + (1 + eta) * ((lam - 1) / lh + 1)) == 0  # u <= 0 visibly
a, ap = gamma + (1 - gamma) * (1 - q), gamma + (1 - gamma) * (1 - qp)
lhs = -lam * (eta + 1) * sp.log(a) + (lam - 1) * (eta + 1) * sp.log(ap)
rhs = nu_s * ((1 - lh) * sp.log(a) + lh * sp.log(ap)) + u_s * sp.log(a)
assert sp.expand(lhs - rhs) == 0
show("nu", nu_s)
show("u", sp.factor(u_s))

# ------------------------------------------------------------------ 3. joint convexity of X^(1-lh) Y^lh
g = X ** (1 - lh) * Y**lh
hess = sp.hessian(g, (X, Y))
assert sp.simplify(hess.det()) == 0
trace = sp.factor(sp.simplify(hess.trace() / g))
assert sp.simplify(trace - lh * (lh - 1) * (1 / X**2 + 1 / Y**2)) == 0  # >= 0 for lh >= 1
show("Hessian trace / g (>= 0 for lambda-hat >= 1; det = 0)", trace)

# ------------------------------------------------------------------ 4. collect: the proof's bound and eq. (5)
W, L = sp.symbols("W L", positive=True)  # W = e^{(lh-1) eh} >= 1, L = log(1 + (1/gamma - 1) W)
assert sp.simplify(gamma + (1 - gamma) * W - gamma * (1 + (1 / gamma - 1) * W)) == 0
bound_log = (sp.expand_log(sp.log(gamma ** (eta + 1) * mean), force=True)
             + nu_s * (sp.log(gamma) + L) + u_s * sp.log(gamma))  # log of the bound after steps 2-3
extended = (1 + eta) / lh * L + sp.log(mean) / (lam - 1)
assert sp.simplify(sp.expand_log(bound_log / (lam - 1) - extended, force=True)) == 0
extended = extended.subs(L, sp.log(1 + (1 / gamma - 1) * sp.exp((lh - 1) * eh)))
paper = (1 + eta) * (1 - 1 / lh) * eh + (1 + eta) * sp.log(1 / gamma) / lh + sp.log(mean) / (lam - 1)
gap_inside = sp.exp(s) / gamma - (1 + (1 / gamma - 1) * sp.exp(s))  # e^{(lh-1) eh}/gamma vs the proof's argument
assert sp.simplify(gap_inside - (sp.exp(s) - 1)) == 0  # >= 0 for s = (lh - 1) eh >= 0
relax = sp.expand_log((1 + eta) / lh * (sp.log(sp.exp(s) / gamma)), force=True).subs(s, (lh - 1) * eh)
assert sp.simplify(relax - (paper - sp.log(mean) / (lam - 1))) == 0
show("Lemma 7 term, proof's form", extended)
show("Theorem 2, eq. (5): epsilon' - epsilon", paper)
print(r"$$S(\lambda) = \log\sup\varphi'(q)^\lambda\varphi'(q')^{1-\lambda} \le "
      r"(\lambda-1)(1+\eta)\Big[(1-\tfrac{1}{\hat\lambda})\hat\varepsilon"
      r" + \tfrac{\log(1/\gamma)}{\hat\lambda}\Big] + \log \mathbb{E}[K]$$")


def paper_constant_mp(eta_: float, gamma_: float, lh_: float, eh_: float) -> mpmath.mpf:
    """(1+η)[(1 − 1/λ̂)ε̂ + log(1/γ)/λ̂] at 50 digits (Theorem 2, the λ-free part of eq. (5))."""
    e, g, h, v = (mpmath.mpf(repr(t)) for t in (eta_, gamma_, lh_, eh_))
    return (1 + e) * ((1 - 1 / h) * v + mpmath.log(1 / g) / h)


def extended_constant_mp(eta_: float, gamma_: float, lh_: float, eh_: float) -> mpmath.mpf:
    """(1+η)/λ̂ · log(1 + (1/γ − 1) e^{(λ̂−1)ε̂}) at 50 digits (the proof's sharper form)."""
    e, g, h, v = (mpmath.mpf(repr(t)) for t in (eta_, gamma_, lh_, eh_))
    return (1 + e) / h * mpmath.log(1 + (1 / g - 1) * mpmath.exp((h - 1) * v))


# ------------------------------------------------------------------ engine: theorem2_constant
print("\n| eta | gamma | lambda-hat | eps-hat | 50-digit reference | theorem2_constant | extended ref | engine |")
print("|---|---|---|---|---|---|---|---|")
for eta_, gamma_, lh_, eh_ in ((0.0, 1e-3, 3.0, 0.2), (0.5, 1e-2, 2.5, 0.4), (1.0, 1e-6, 8.0, 0.1),
                               (-0.5, 1e-4, 5.0, 0.3), (3.0, 0.2, 1.5, 1.0)):
    ref = min(paper_constant_mp(eta_, gamma_, lh_, eh_), paper_constant_mp(eta_, gamma_, 1.0, 0.0))  # λ̂ = 1 too
    ref_ext = min(extended_constant_mp(eta_, gamma_, lh_, eh_), extended_constant_mp(eta_, gamma_, 1.0, 0.0))
    got, _ = theorem2_constant(eta_, gamma_, np.array([lh_]), np.array([eh_]))
    got_ext, _ = theorem2_constant(eta_, gamma_, np.array([lh_]), np.array([eh_]), extended=True)
    print(f"| {eta_} | {gamma_:g} | {lh_} | {eh_} | {mpmath.nstr(ref, 20)} | {got!r} | "
          f"{mpmath.nstr(ref_ext, 20)} | {got_ext!r} |")
    assert abs(got - ref) <= 1e-14 * abs(ref), (got, ref)  # float64 engine against a 50-digit reference
    assert abs(got_ext - ref_ext) <= 1e-14 * abs(ref_ext), (got_ext, ref_ext)
    assert ref_ext <= ref  # the proof's form is never larger

# ------------------------------------------------------------------ engine: Lemma 7's certified sup
print("\n| eta | gamma | sigma | lambda | Lemma 7 sup S (certified) | Thm 2 bound on S (best lambda-hat tried) |")
print("|---|---|---|---|---|---|")
for eta_, gamma_ in ((0.0, 1e-2), (1.0, 1e-4), (0.5, 1e-3), (-0.5, 1e-2), (2.0, 0.1)):
    law = symsel.tnb(eta_, gamma=gamma_)
    log_m = mpmath.log(law.mean_mp(50))
    for sigma in (1.0, 4.0):
        base = GaussianProfile(sigma)
        rho = 1 / (2 * sigma**2)  # the Gaussian base is rho-zCDP: eps-hat(lh) = rho lh
        for lam_ in (2.0, 20.0):
            sup = lemma7_log_sup(law, base.region_lower, lam_)
            bounds = [(lam_ - 1) * paper_constant_mp(eta_, gamma_, lh_, rho * lh_) + log_m
                      for lh_ in (1.0, 2.0, max(1.0, math.sqrt(math.log(1 / gamma_) / rho)))]
            assert all(sup <= b for b in bounds), (eta_, gamma_, sigma, lam_, sup, bounds)
            print(f"| {eta_} | {gamma_:g} | {sigma} | {lam_} | {sup:.10f} | {mpmath.nstr(min(bounds), 12)} |")


# ------------------------------------------------------------------ soundness: exact worst cases
def theorem2_rdp(pair: FinitePair, law: symsel.Distribution, eta_: float, gamma_: float, lam_: float,
                 hats: tuple[float, ...]) -> mpmath.mpf:
    """Theorem 2 for a finite pair, with its exact D_λ(Q‖Q') and D_λ̂(Q'‖Q), best over the given λ̂."""
    eps_ = renyi(pair.p, pair.q, lam_, 50)
    best = paper_constant_mp(eta_, gamma_, 1.0, 0.0)  # λ̂ = 1
    for h in hats:
        best = min(best, paper_constant_mp(eta_, gamma_, h, float(renyi(pair.q, pair.p, h, 50))))
    return eps_ + best + mpmath.log(law.mean_mp(50)) / (lam_ - 1)


e1 = sp.E
rr = FinitePair([1 / (1 + e1), e1 / (1 + e1)], [e1 / (1 + e1), 1 / (1 + e1)], order=[1, 0])
print("\n| pair | law | lambda | exact D_lambda(A||A') | Theorem 2 |")
print("|---|---|---|---|---|")
for eta_, gamma_ in ((0.0, 1e-2), (1.0, 1e-3), (0.5, 0.05)):
    law = symsel.tnb(eta_, gamma=gamma_)
    la, lb = selection_laws(rr, law, 50)
    for lam_ in (2.0, 4.0, 16.0):
        exact = renyi(la, lb, lam_, 50)
        thm2 = theorem2_rdp(rr, law, eta_, gamma_, lam_, (2.0, 4.0, 8.0, 32.0))
        print(f"| RR(1) | {law.spec} | {lam_} | {mpmath.nstr(exact, 12)} | {mpmath.nstr(thm2, 12)} |")
        assert exact <= thm2, (law.spec, lam_, exact, thm2)
lt = symsel.get_example("liu-talwar")
for lam_ in (2.0, 10.0, 100.0):
    exact = mpmath.mpf(lt.exact_renyi(lam_, 30))
    thm2 = theorem2_rdp(lt.pair, lt.dist, 1.0, lt.params["gamma"], lam_, (2.0, 10.0, 100.0, 1000.0))
    print(f"| liu-talwar | {lt.dist.spec} | {lam_} | {mpmath.nstr(exact, 12)} | {mpmath.nstr(thm2, 12)} |")
    assert exact <= thm2, (lam_, exact, thm2)
print("\nOK: Theorem 2 re-derived from Lemma 7 (exponent split, joint convexity, a >= gamma); equal to "
      "theorem2_constant, above Lemma 7's certified sup, above exact worst cases")
