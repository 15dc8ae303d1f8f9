"""Poisson K: Papernot & Steinke's Theorem 6 (ε + μδ̂ + log μ/(λ−1) when e^ε̂ ≤ 1 + 1/(λ−1)), derived from Lemma 7.

Follows Papernot & Steinke (ICLR 2022), Theorem 6 and its proof (App. B.2); docs/renyi.md. For ``φ(z) = e^{μ(z−1)}``
Lemma 7's term is ``S = log φ'(q)^λ φ'(q')^{1−λ} = log μ + μ((λ−1)(1−q') − λ(1−q))`` (SymPy). The base's
``(ε̂, δ̂)``-DP gives ``1 − q' ≤ e^ε̂ (1 − q) + δ̂``; after substitution ``S`` is affine in ``u = 1 − q`` with slope
``μ((λ−1)e^ε̂ − λ)``, which is ``≤ 0`` exactly when ``e^ε̂ ≤ λ/(λ−1) = 1 + 1/(λ−1)`` (solved), and then
``S/(λ−1) ≤ μδ̂ + log μ/(λ−1)`` (the value at ``u = 0``). Keeping ``1 − q' ≤ 1`` as well makes the bound a
maximum over the kink ``u0 = (1−δ̂)e^{−ε̂}``: ``μ max(δ̂, 1 − (λ/(λ−1))(1−δ̂)e^{−ε̂})`` for every ``ε̂`` (symsel's
``extended`` form, derived here too).

Derived as well: at ``ε̂* = log(1 + 1/(λ−1))`` the term is ``S = log μ + μ(λ−1)[(1−q') − e^{ε̂*}(1−q)]`` exactly,
and the sup of ``(1−q') − e^{ε̂}(1−q)`` over the base's privacy region is its hockey-stick divergence ``δ(ε̂)``:
Theorem 6 at ``ε̂*`` *equals* Lemma 7 over the full f-DP region (no slack) — checked two-sided against
``lemma7_log_sup`` (certified, tolerance 1e-7 relative).

Checks at 50-digit references (Balle-Wang's Gaussian ``δ(ε)`` in mpmath): ``theorem6_delta_term`` (paper and
extended) and the whole closed-form curve of ``renyi_selection_curve``; Lemma 7's certified sup never exceeds
Theorem 6's term; dp-accounting's ``RepeatAndSelectDpEvent`` (shape ∞, ``δ̂`` from an RDP conversion) is never
below it; soundness: exact ``D_λ(A‖A')`` for randomized response and P&S App. D.3's three-point example
(``ps-three-point``) stays below Theorem 6 fed with the pair's exact RDP and hockey-stick divergence.

Run: ``python derivations/papernot_steinke_thm_6_poisson.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import sympy as sp
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant

import symsel
from symsel.bounds.renyi import lemma7_log_sup, renyi_selection_curve, theorem6_delta_term
from symsel.evidence.exact import hockey_stick, renyi, selection_laws
from symsel.pairs.finite import FinitePair
from symsel.profiles import GaussianProfile

mpmath.mp.dps = 50
mu, lam, e_hat, d_hat, uu, x = sp.symbols(r"mu lambda \hat\varepsilon \hat\delta u x", positive=True)
q, qp = sp.symbols("q q'", positive=True)


def show(label: str, expr: sp.Expr) -> None:
    print(f"{label}: $${sp.latex(expr)}$$")


# ------------------------------------------------------------------ Lemma 7's term for phi = e^{mu(z-1)}
dphi = sp.diff(sp.exp(mu * (x - 1)), x)
S = sp.expand_log(sp.log(dphi.subs(x, q) ** lam * dphi.subs(x, qp) ** (1 - lam)), force=True)
assert sp.simplify(S - (sp.log(mu) + mu * ((lam - 1) * (1 - qp) - lam * (1 - q)))) == 0
show("log phi'(q)^lambda phi'(q')^(1-lambda)", sp.log(mu) + mu * ((lam - 1) * (1 - qp) - lam * (1 - q)))

# ------------------------------------------------------------------ substitute 1 - q' <= e^eps-hat u + delta-hat
S_u = sp.log(mu) + mu * ((lam - 1) * (sp.exp(e_hat) * uu + d_hat) - lam * uu)  # increasing in 1 - q' (mu(lam-1) > 0)
slope = sp.diff(S_u, uu)
assert sp.simplify(slope - mu * ((lam - 1) * sp.exp(e_hat) - lam)) == 0 and sp.diff(S_u, uu, 2) == 0
(e_star,) = sp.solve(sp.Eq(slope, 0), e_hat)
assert sp.simplify(sp.exp(e_star) - (1 + 1 / (lam - 1))) == 0
term = sp.simplify(S_u.subs(uu, 0) / (lam - 1))
assert sp.simplify(term - (mu * d_hat + sp.log(mu) / (lam - 1))) == 0
show(r"slope in u = 1 - q (<= 0 iff e^{\hat\varepsilon} \le 1 + 1/(\lambda-1))", slope)
show(r"Theorem 6: \varepsilon' - \varepsilon", mu * d_hat + sp.log(mu) / (lam - 1))

# ------------------------------------------------------------------ keeping 1 - q' <= 1: the kink
u0 = (1 - d_hat) * sp.exp(-e_hat)  # where e^eps-hat u + delta-hat reaches 1
assert sp.simplify(sp.exp(e_hat) * u0 + d_hat - 1) == 0
at_kink = sp.simplify((mu * ((lam - 1) - lam * u0)) / (lam - 1))
assert sp.simplify(at_kink - mu * (1 - lam / (lam - 1) * (1 - d_hat) * sp.exp(-e_hat))) == 0
tangent = sp.log(mu) + mu * (lam - 1) * ((1 - qp) - sp.exp(e_star) * (1 - q))
assert sp.simplify(tangent - S) == 0  # at eps-hat*, S is the hockey-stick functional: Lemma 7 = Theorem 6
show(r"S at e^{\hat\varepsilon^*} = \lambda/(\lambda-1)", tangent)
show("beyond the kink u0 (extended form, max with mu delta-hat)", at_kink)


def gaussian_delta_mp(eps_: mpmath.mpf, sigma: float) -> mpmath.mpf:
    """Balle-Wang δ(ε) of the Gaussian mechanism (sensitivity 1, noise σ) at 50 digits."""
    m = 1 / mpmath.mpf(sigma)
    return mpmath.ncdf(-eps_ / m + m / 2) - mpmath.exp(eps_) * mpmath.ncdf(-eps_ / m - m / 2)


# ------------------------------------------------------------------ engine: the delta term and the curve
lams = np.array([1.5, 2.0, 4.0, 10.0, 50.0])
print("\n| sigma | mu | lambda | 50-digit eps' | renyi_selection_curve (closed) | eps + Lemma 7 / (lambda-1) |")
print("|---|---|---|---|---|---|")
for sigma, mean in ((2.0, 10), (5.0, 100), (1.0, 3)):
    base, law = GaussianProfile(sigma), symsel.poisson(mean)
    term, e_used = theorem6_delta_term(lams, base, extended=False)
    raw = renyi_selection_curve(law, base, "closed", orders=lams).raw_values(lams)
    ext_term, ext_e = theorem6_delta_term(lams, base, extended=True)
    for i, la in enumerate(lams):
        lm = mpmath.mpf(repr(float(la)))
        es = mpmath.log(1 + 1 / (lm - 1))
        d_ref = gaussian_delta_mp(es, sigma)
        assert abs(e_used[i] - es) <= 1e-15 * es and abs(term[i] - d_ref) <= 1e-9 * d_ref, (term[i], d_ref)
        thm6 = lm / (2 * mpmath.mpf(sigma) ** 2) + mean * d_ref + mpmath.log(mean) / (lm - 1)
        # symsel counts the output of K = 0 (mass e^-mu on both sides; docs/renyi.md): log(p0 + e^{(l-1) thm6})/(l-1)
        ref = mpmath.log(mpmath.exp(-mpmath.mpf(mean)) + mpmath.exp((lm - 1) * thm6)) / (lm - 1)
        assert abs(raw[i] - ref) <= 1e-9 * ref, (raw[i], ref)
        # the extended term at the engine's eps-hat, recomputed from the derived kink formula
        e2 = mpmath.mpf(repr(float(ext_e[i])))
        d2 = gaussian_delta_mp(e2, sigma)
        ext_ref = max(d2, 1 - lm / (lm - 1) * (1 - d2) * mpmath.exp(-e2))
        assert abs(ext_term[i] - ext_ref) <= 1e-9 * ext_ref + 1e-15 and ext_term[i] <= term[i] + 1e-15
        l7 = lemma7_log_sup(law, base.region_lower, float(la)) / (float(la) - 1)
        # Lemma 7 over the f-DP region equals Theorem 6's term; the certified value is an upper bound within 1e-7
        thm6 = mean * d_ref + mpmath.log(mean) / (lm - 1)
        assert thm6 - 1e-12 <= l7 <= thm6 * (1 + 2e-7), (l7, thm6)
        print(f"| {sigma} | {mean} | {la} | {mpmath.nstr(ref, 15)} | {raw[i]:.13f} | "
              f"{l7 + float(lm / (2 * sigma**2)):.13f} |")

# ------------------------------------------------------------------ peer: dp-accounting (shape = inf)
orders = [1.5, 2.0, 3.0, 4.0, 6.0, 10.0, 20.0, 50.0]
for sigma, mean in ((2.0, 10), (5.0, 100)):
    acc = rdp_privacy_accountant.RdpAccountant(orders=orders)
    acc.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(sigma), mean, math.inf))
    ours = renyi_selection_curve(symsel.poisson(mean), GaussianProfile(sigma), "closed",
                                 orders=np.array(orders)).raw_values(orders)
    peer = np.asarray(acc.rdp)
    print(f"dp-accounting (sigma {sigma}, mu {mean}): " + ", ".join(f"{v:.5f}" for v in peer)
          + "\nsymsel Thm 6:                      " + ", ".join(f"{v:.5f}" for v in ours))
    # its delta-hat comes from converting the base's RDP (an upper bound on the exact delta): never below ours
    assert np.all(peer >= ours - 1e-12)


# ------------------------------------------------------------------ soundness: exact worst cases
def theorem6_for_pair(pair: FinitePair, mean: int, la: float) -> mpmath.mpf:
    """Theorem 6 for a finite pair: its exact D_λ(Q‖Q') and two-sided δ̂ at ε̂ = log(1 + 1/(λ−1))."""
    es = mpmath.log(1 + 1 / (mpmath.mpf(la) - 1))
    d_h = max(hockey_stick(pair.q, pair.p, es, 50), hockey_stick(pair.p, pair.q, es, 50))
    return renyi(pair.p, pair.q, la, 50) + mean * d_h + mpmath.log(mean) / (la - 1)


e1 = sp.E
rr = FinitePair([1 / (1 + e1), e1 / (1 + e1)], [e1 / (1 + e1), 1 / (1 + e1)], order=[1, 0])
print("\n| pair | mu | lambda | exact D_lambda(A||A') | Theorem 6 |")
print("|---|---|---|---|---|")
for mean in (3, 30):
    la_, lb_ = selection_laws(rr, symsel.poisson(mean), 50)
    for la in (1.5, 2.0, 8.0):
        exact, bound = renyi(la_, lb_, la, 50), theorem6_for_pair(rr, mean, la)
        print(f"| RR(1) | {mean} | {la} | {mpmath.nstr(exact, 12)} | {mpmath.nstr(bound, 12)} |")
        assert exact <= bound
three = symsel.get_example("ps-three-point")
for la in (2.0, 3.0):
    exact = three.exact_renyi(la, 40)
    bound = theorem6_for_pair(three.pair, three.params["mean"], la)
    print(f"| ps-three-point | {three.params['mean']} | {la} | {exact:.12f} | {mpmath.nstr(bound, 12)} |")
    assert exact <= bound
print("\nOK: Theorem 6's condition and term derived from Lemma 7 for phi = e^{mu(z-1)}; engine, dp-accounting and "
      "exact worst cases agree")
