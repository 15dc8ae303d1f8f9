"""Truncated negative binomial K: Papernot & Steinke's Corollary 3 ((2+η)ε, pure DP) and Corollary 4 (ρ-zCDP).

Follows Papernot & Steinke (ICLR 2022), Corollaries 3 and 4 and their proofs (App. B.2), both from Theorem 2;
docs/renyi.md. ``ℓ`` stands for ``log(1/γ)`` and ``log_m`` for ``log E[K]``.

* Corollary 3: a pure ``ε``-DP base is ``(λ, ε)``-RDP for every order, so Theorem 2 holds with ``ε = ε̂``;
  SymPy takes the limits ``λ̂ → ∞`` then ``λ → ∞`` of eq. (5) and finds ``(2 + η)ε``.
* Corollary 4: a ``ρ``-zCDP base has ``ε = ρλ``, ``ε̂ = ρλ̂``. SymPy minimizes eq. (5) over ``λ̂`` (stationary
  point ``λ̂* = sqrt(log(1/γ)/ρ)``, second derivative ``> 0``; ``λ̂* ≥ 1`` is the hypothesis ``ρ ≤ log(1/γ)``), then
  over ``t = λ − 1`` for the monotone envelope (Remark 5: ``t* = sqrt(log E[K]/ρ)``), which gives the paper's two
  cases (symbolic equality with the printed statement).

Checks: ``corollary3_epsilon`` and ``corollary4_rdp`` against the derived forms at 50-digit references on a grid;
dp-accounting's RDP accountant on ``RepeatAndSelectDpEvent(GaussianDpEvent(σ), E[K], η)`` (Theorem 2 with
``λ̂`` on its order grid) is never below Corollary 4 and agrees with symsel's ``theorem2_constant`` on the same
grid; soundness: exact selections on randomized response (``ε``-DP, hence ``ε²/2``-zCDP) and the ``liu-talwar``
example stay below both corollaries.

Run: ``python derivations/papernot_steinke_cor_3_cor_4.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import sympy as sp
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant

import symsel
from symsel.bounds.renyi import corollary3_epsilon, corollary4_rdp, theorem2_constant
from symsel.evidence.exact import renyi, selection_epsilon, selection_laws
from symsel.pairs.finite import FinitePair

mpmath.mp.dps = 50
eta = sp.Symbol("eta", positive=True)
eps, L, lam, lh, rho, logm, t = sp.symbols(r"varepsilon ell lambda \hat\lambda rho log_m t", positive=True)


def show(label: str, expr: sp.Expr) -> None:
    print(f"{label}: $${sp.latex(expr)}$$")


def theorem2(e: sp.Expr, e_hat: sp.Expr) -> sp.Expr:
    """eq. (5) of Theorem 2 with ``log E[K]`` written ``log_m``."""
    return e + (1 + eta) * (1 - 1 / lh) * e_hat + (1 + eta) * L / lh + logm / (lam - 1)


# ------------------------------------------------------------------ Corollary 3
cor3 = sp.limit(sp.limit(theorem2(eps, eps), lh, sp.oo), lam, sp.oo)
assert sp.simplify(cor3 - (2 + eta) * eps) == 0, cor3
show(r"Corollary 3: \lim_{\lambda,\hat\lambda\to\infty}", sp.factor(cor3))

# ------------------------------------------------------------------ Corollary 4: optimize lambda-hat
zcdp = theorem2(rho * lam, rho * lh)
(lh_star,) = sp.solve(sp.diff(zcdp, lh), lh)
assert sp.simplify(lh_star - sp.sqrt(L / rho)) == 0
assert sp.simplify(sp.diff(zcdp, lh, 2).subs(lh, lh_star) - 2 * (1 + eta) * rho**sp.Rational(3, 2) / sp.sqrt(L)) == 0
at_lh = sp.simplify(zcdp.subs(lh, lh_star))
assert sp.simplify(at_lh - (rho * lam - (1 + eta) * rho + 2 * (1 + eta) * sp.sqrt(rho * L) + logm / (lam - 1))) == 0
show(r"\hat\lambda^*", lh_star)
show(r"\varepsilon'(\lambda) at \hat\lambda^* (equal to)",
     rho * lam - (1 + eta) * rho + 2 * (1 + eta) * sp.sqrt(rho * L) + logm / (lam - 1))

# ------------------------------------------------------------------ Corollary 4: the monotone envelope in lambda
h = rho * t + logm / t  # the lambda-dependent part, t = lambda - 1
(t_star,) = sp.solve(sp.diff(h, t), t)
assert sp.simplify(t_star - sp.sqrt(logm / rho)) == 0 and sp.simplify(sp.diff(h, t, 2)) == 2 * logm / t**3
shared = 2 * (1 + eta) * sp.sqrt(rho * L) - eta * rho
low = sp.simplify(at_lh.subs(lam, 1 + t_star))
high = at_lh
assert sp.simplify(low - (2 * sp.sqrt(rho * logm) + shared)) == 0  # the paper's first case
assert sp.simplify(sp.expand(high - (rho * (lam - 1) + logm / (lam - 1) + shared))) == 0  # its second case
show(r"\lambda \le 1 + \sqrt{\log E[K]/\rho}", low)
show(r"\lambda > 1 + \sqrt{\log E[K]/\rho} (equal to)", rho * (lam - 1) + logm / (lam - 1) + shared)

low_f = sp.lambdify((rho, eta, L, logm), low, "mpmath")
high_f = sp.lambdify((rho, eta, L, logm, lam), high, "mpmath")


def cor4_mp(lam_: float, rho_: float, eta_: float, gamma_: float, mean_: mpmath.mpf) -> mpmath.mpf:
    """The derived Corollary 4 at 50 digits."""
    r, e, g, la = (mpmath.mpf(repr(float(v))) for v in (rho_, eta_, gamma_, lam_))
    lm, ell = mpmath.log(mean_), mpmath.log(1 / g)
    return low_f(r, e, ell, lm) if la <= 1 + mpmath.sqrt(lm / r) else high_f(r, e, ell, lm, la)


# ------------------------------------------------------------------ engine: corollary3_epsilon, corollary4_rdp
for eps_, eta_ in ((1.0, 0.0), (0.3, -0.5), (2.0, 1.0), (0.1, 3.0)):
    ref = (2 + mpmath.mpf(repr(eta_))) * mpmath.mpf(repr(eps_))
    assert abs(corollary3_epsilon(eps_, eta_) - ref) <= 1e-15 * ref
orders = np.array([1.01, 1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0, 100.0, 1000.0])
print("\n| rho | eta | gamma | E[K] | max rel. error of corollary4_rdp vs 50-digit derived |")
print("|---|---|---|---|---|")
for rho_, eta_, gamma_ in ((0.1, 0.0, 1e-3), (0.01, 1.0, 1e-4), (0.5, 0.5, 0.05), (0.1, -0.5, 1e-2), (1.0, 2.0, 1e-6)):
    law = symsel.tnb(eta_, gamma=gamma_)
    mean_mp = law.mean_mp(50)
    got = corollary4_rdp(orders, rho_, eta_, gamma_, float(mean_mp))
    refs = [cor4_mp(o, rho_, eta_, gamma_, mean_mp) for o in orders]
    err = max(abs(g - r) / r for g, r in zip(got, refs, strict=True))
    print(f"| {rho_} | {eta_} | {gamma_:g} | {float(mean_mp):.6g} | {float(err):.2e} |")
    assert err <= 1e-14, (rho_, eta_, gamma_, err)

# ------------------------------------------------------------------ peer: dp-accounting's RepeatAndSelectDpEvent
DPA_ORDERS = np.concatenate([np.linspace(1.1, 10.9, 99), np.arange(11, 64), [128, 256, 512]])
print("\n| sigma | eta | E[K] | lambda | dp-accounting | symsel Thm 2 (same grid) | Corollary 4 |")
print("|---|---|---|---|---|---|---|")
for sigma, eta_, mean_ in ((3.0, 0.0, 10.0), (2.0, 1.0, 100.0), (5.0, 0.5, 30.0), (1.5, 2.0, 50.0)):
    rho_ = 1 / (2 * sigma**2)
    acc = rdp_privacy_accountant.RdpAccountant(orders=list(DPA_ORDERS))
    acc.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(sigma), mean_, eta_))
    peer = np.asarray(acc.rdp)
    law = symsel.tnb(eta_, mean=mean_)
    _, gamma_ = (float(v) for v in law.family.params.values())
    const, _ = theorem2_constant(eta_, gamma_, DPA_ORDERS[DPA_ORDERS > 1], rho_ * DPA_ORDERS[DPA_ORDERS > 1])
    ours = rho_ * DPA_ORDERS + math.log(mean_) / (DPA_ORDERS - 1) + const
    ours = np.minimum.accumulate(ours[::-1])[::-1]  # the same monotone envelope (Remark 5)
    cor4 = corollary4_rdp(DPA_ORDERS, rho_, eta_, gamma_, mean_)
    assert np.all(peer >= cor4 - 1e-12), "dp-accounting below Corollary 4"
    assert np.all(ours >= cor4 - 1e-12), "Theorem 2 on a grid below Corollary 4 (its continuous optimum)"
    # dp-accounting solves gamma from the mean to 1e-9 (rounded down) and omits lambda-hat = 1: agreement to 1e-7
    assert np.allclose(peer, ours, rtol=1e-7, atol=0), np.max(np.abs(peer / ours - 1))
    for i in (0, 40, 120, len(DPA_ORDERS) - 1):
        print(f"| {sigma} | {eta_} | {mean_} | {DPA_ORDERS[i]:.4g} | {peer[i]:.10f} | {ours[i]:.10f} | "
              f"{cor4[i]:.10f} |")

# ------------------------------------------------------------------ soundness: exact worst cases
print("\n| base | law | exact | Corollary 3 (2+eta) eps | exact D_lambda at lambda = 2, 8, 32 | Corollary 4 |")
print("|---|---|---|---|---|---|")
for eps_ in (0.5, 1.0):
    e = sp.exp(sp.nsimplify(eps_))
    rr = FinitePair([1 / (1 + e), e / (1 + e)], [e / (1 + e), 1 / (1 + e)], order=[1, 0])
    for eta_, gamma_ in ((0.0, 1e-2), (1.0, 1e-3), (-0.5, 0.05)):
        law = symsel.tnb(eta_, gamma=gamma_)
        exact_eps = selection_epsilon(rr, law, 0, 40)
        assert exact_eps <= corollary3_epsilon(eps_, eta_), (eps_, law.spec, exact_eps)
        la, lb = selection_laws(rr, law, 40)
        lams = (2.0, 8.0, 32.0)
        exact_r = [renyi(la, lb, v, 40) for v in lams]
        cor4 = corollary4_rdp(lams, eps_**2 / 2, eta_, gamma_, law.mean)  # eps-DP => eps^2/2-zCDP
        assert all(a <= b for a, b in zip(exact_r, cor4, strict=True)), (exact_r, cor4)
        print(f"| RR({eps_}) | {law.spec} | {float(exact_eps):.6f} | {corollary3_epsilon(eps_, eta_):.6f} | "
              + ", ".join(f"{float(v):.4f}" for v in exact_r) + " | " + ", ".join(f"{v:.4f}" for v in cor4) + " |")
lt = symsel.get_example("liu-talwar")
lt_exact = lt.exact_epsilon(30)
assert lt_exact <= corollary3_epsilon(lt.params["eps"], 1.0)
print(f"| liu-talwar | {lt.dist.spec} | {lt_exact:.6f} | {corollary3_epsilon(lt.params['eps'], 1.0):.6f} | | |")
print("\nOK: Corollary 3 is the lambda, lambda-hat -> oo limit of Theorem 2; Corollary 4 is its optimum over "
      "lambda-hat with the monotone envelope in lambda; both match symsel, dp-accounting and exact worst cases")
