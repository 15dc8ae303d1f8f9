"""(ε0, δ0)-DP bases: Papernot & Steinke's Lemma 20 law K' (TNB stays TNB with a new γ, Poisson Poisson), Corollary 21.

Follows Papernot & Steinke (ICLR 2022), Lemma 20, its footnote 12 and Corollary 21 (App. E); docs/renyi.md. An
``(ε0, δ0)``-DP base splits as ``(1−δ0)·(pure part) + δ0·(rest)``; the selection is then ``δ``-approximately RDP
with ``δ = 1 − φ(1−δ0)`` and the bound of the pure part for ``K'`` with PGF ``φ(x(1−δ0))/φ(1−δ0)``. SymPy shows
(symbolic identities):

* truncated negative binomial ``D_{η,γ}`` ↦ ``D_{η,γ'}`` with ``1 − γ' = (1−γ)(1−δ0)`` (``η ≠ 0`` and ``η = 0``);
* ``Poisson(μ)`` ↦ ``Poisson(μ(1−δ0))`` and ``δ = 1 − e^{−μδ0} ≤ μδ0``;
* ``Bin(n, p)`` ↦ ``Bin(n, p(1−δ0)/(1−pδ0))``;
* Corollary 21: Theorem 6 for ``K'`` and a pure ``ε0`` base (``ε̂ = ε0``, ``δ̂ = 0``) needs
  ``λ ≤ 1 + 1/(e^{ε0} − 1)`` (solved) and gives ``ε0 + (e^{ε0}−1) log(μ(1−δ0)) ≤ ε0 + (e^{ε0}−1) log μ`` there.

Checks at 50 digits: ``approximate_dp_law`` (its exact family parameters, its PGF against the typed PGF of the
derived law), ``lemma20_bound``'s ``δ`` and ``corollary21``; soundness: an exactly ``(ε0, δ0)``-DP three-point pair
(randomized response mixed with ``δ0`` distinguishing atoms) has an exact selection ``ε(δ)`` below ``lemma20_bound``'s.

Run: ``python derivations/papernot_steinke_lemma_20_approximate.py`` (prints LaTeX; exits non-zero on failure).
"""

from __future__ import annotations

import mpmath
import sympy as sp

import symsel
from symsel.bounds.renyi import approximate_dp_law, corollary21, lemma20_bound
from symsel.evidence.exact import selection_epsilon
from symsel.pairs.finite import FinitePair

mpmath.mp.dps = 50
x, gamma, eta, mu, d0, e0, lam, p, a = sp.symbols(r"x gamma eta mu delta_0 varepsilon_0 lambda p a", positive=True)
n = sp.Symbol("n", positive=True, integer=True)
keep = 1 - d0


def show(label: str, expr: sp.Expr) -> None:
    print(f"{label}: $${sp.latex(expr)}$$")


def k_prime(phi: sp.Expr) -> sp.Expr:
    """PGF of K' (footnote 12): φ(x(1−δ0))/φ(1−δ0)."""
    return phi.subs(x, x * keep) / phi.subs(x, keep)


def tnb_pgf(g: sp.Expr, e: sp.Expr | None) -> sp.Expr:
    """PGF of D_{η,γ} (eq. (7)); ``e = None`` is the logarithmic law (η = 0)."""
    if e is None:
        return sp.log(1 - (1 - g) * x) / sp.log(g)
    return ((1 - (1 - g) * x) ** (-e) - 1) / (g ** (-e) - 1)


gamma_new = 1 - (1 - gamma) * keep
for e in (eta, None):
    assert sp.simplify(k_prime(tnb_pgf(gamma, e)) - tnb_pgf(gamma_new, e)) == 0
show(r"TNB: \gamma'", gamma_new)
assert sp.simplify(k_prime(sp.exp(mu * (x - 1))) - sp.exp(mu * keep * (x - 1))) == 0
p_new = p * keep / (1 - p * d0)
assert sp.simplify(k_prime((1 - p + p * x) ** n) - (1 - p_new + p_new * x) ** n) == 0
show(r"Poisson: \mu'", mu * keep)
show(r"binomial: p'", p_new)
delta_poisson = 1 - sp.exp(mu * (keep - 1))
assert sp.simplify(delta_poisson - (1 - sp.exp(-mu * d0))) == 0
slack = a - (1 - sp.exp(-a))  # mu delta0 - delta with a = mu delta0: 0 at a = 0 and non-decreasing
assert slack.subs(a, 0) == 0 and sp.simplify(sp.diff(slack, a) - (1 - sp.exp(-a))) == 0
show(r"Poisson: \delta = 1 - \varphi(1-\delta_0)", sp.simplify(delta_poisson))

# Corollary 21: Theorem 6's condition with eps-hat = eps0, delta-hat = 0
(lam_max,) = sp.solve(sp.Eq(sp.exp(e0), 1 + 1 / (lam - 1)), lam)
assert sp.simplify(lam_max - (1 + 1 / (sp.exp(e0) - 1))) == 0
eps_cor21 = sp.simplify(e0 + sp.log(mu * keep) / (lam_max - 1))
assert sp.simplify(eps_cor21 - (e0 + (sp.exp(e0) - 1) * sp.log(mu * keep))) == 0
show(r"Corollary 21: \lambda_{\max}", lam_max)
show(r"Corollary 21: \varepsilon' at \lambda_{\max} (then \log(1-\delta_0) \le 0 is dropped)", eps_cor21)


def mpq(v: object) -> mpmath.mpf:
    return mpmath.mpf(sp.N(sp.nsimplify(v), 60))


# ------------------------------------------------------------------ engine: approximate_dp_law, lemma20, cor 21
print("\n| law | delta0 | K' (engine) | max PGF error vs derived law | delta: 50-digit | lemma20_bound |")
print("|---|---|---|---|---|---|")
grid = [mpmath.mpf(v) / 10 for v in (0, 3, 7, 10)]
for law, delta0, derived_pgf in (
        (symsel.tnb(sp.Rational(1, 2), gamma=sp.Rational(1, 100)), sp.Rational(1, 1000),
         tnb_pgf(gamma_new, eta).subs({gamma: sp.Rational(1, 100), eta: sp.Rational(1, 2)})),
        (symsel.logarithmic(gamma=sp.Rational(1, 50)), sp.Rational(1, 100), tnb_pgf(gamma_new, None).subs(
            gamma, sp.Rational(1, 50))),
        (symsel.poisson(20), sp.Rational(1, 10**4), sp.exp(mu * keep * (x - 1)).subs(mu, 20)),
        (symsel.binomial(12, sp.Rational(1, 3)), sp.Rational(1, 20),
         (1 - p_new + p_new * x) ** n)):
    derived_pgf = derived_pgf.subs({d0: delta0, n: 12, p: sp.Rational(1, 3)})
    new = approximate_dp_law(law, float(delta0))
    err = max(abs(new.phi_mp(v, 50) - mpmath.mpf(sp.N(derived_pgf.subs(x, sp.nsimplify(v)), 55))) for v in grid)
    delta_ref = 1 - mpmath.mpf(sp.N(law.pgf.subs(law.values).subs(symsel.distributions.z, 1 - delta0), 55))
    method = "lemma7" if law.name == "binomial" else "closed"  # P&S give no closed form for a binomial K'
    got = lemma20_bound(law, 1.0, float(delta0), method).details["delta_extra"]
    print(f"| {law.spec} | {delta0} | {new.spec} | {mpmath.nstr(err, 3)} | {mpmath.nstr(delta_ref, 20)} | {got!r} |")
    assert err <= mpmath.mpf(10) ** -45, (law.spec, err)
    assert abs(got - delta_ref) <= 1e-15 * delta_ref, (got, delta_ref)
    if law.family is not None and law.family.name == "tnb":
        assert new.family.name == "tnb" and new.family.params["gamma"] == 1 - (1 - law.family.params["gamma"]) * (
            1 - delta0), new.family  # exact rational parameter
    if law.family is not None and law.family.name == "poisson":
        assert new.family.params["mu"] == 20 * (1 - delta0)

for mean, eps0_, delta0 in ((10, 0.5, 1e-6), (100, 0.1, 1e-8), (3, 1.0, 1e-3)):
    lm, ep, dl = corollary21(mean, eps0_, delta0)
    e_, m_, d_ = (mpq(v) for v in (eps0_, mean, delta0))
    assert abs(lm - (1 + 1 / mpmath.expm1(e_))) <= 1e-15 * lm
    assert abs(ep - (e_ + mpmath.expm1(e_) * mpmath.log(m_))) <= 1e-15 * ep
    assert abs(dl - (-mpmath.expm1(-m_ * d_))) <= 1e-15 * dl and dl <= float(m_ * d_)

# ------------------------------------------------------------------ soundness: an exact (eps0, delta0)-DP pair
print("\n| law | eps0 | delta0 | delta | exact selection eps(delta) | lemma20_bound eps(delta) |")
print("|---|---|---|---|---|---|")
for law, eps0_, delta0 in ((symsel.poisson(5), 1, sp.Rational(1, 10**4)),
                           (symsel.tnb(sp.Rational(1, 2), gamma=sp.Rational(1, 20)), 1, sp.Rational(1, 10**3))):
    e = sp.exp(eps0_)
    # (1 - delta0) x randomized response + delta0 x a distinguishing atom (outcome 0 on X, outcome 3 on X')
    pair = FinitePair([delta0, (1 - delta0) / (1 + e), (1 - delta0) * e / (1 + e), 0],
                      [0, (1 - delta0) * e / (1 + e), (1 - delta0) / (1 + e), delta0], order=[3, 1, 2, 0])
    bound = lemma20_bound(law, float(eps0_), float(delta0))
    for delta in (1.5 * bound.details["delta_extra"], 4 * bound.details["delta_extra"]):
        exact = float(selection_epsilon(pair, law, delta, 30))
        upper = bound.epsilon(delta)
        print(f"| {law.spec} | {eps0_} | {delta0} | {delta:.3g} | {exact:.8f} | {upper:.8f} |")
        assert exact <= upper, (law.spec, delta, exact, upper)
print("\nOK: Lemma 20's K' derived in closed form (TNB, Poisson, binomial) and Corollary 21 from Theorem 6; engine "
      "and exact worst cases agree")
