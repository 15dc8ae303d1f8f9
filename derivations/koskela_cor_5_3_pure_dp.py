"""Koskela, Redberg & Wang Cor 5.3: TNB K over a pure eps-DP base is (eta + 2) eps-DP (Liu & Talwar's 3 eps at eta = 1).

Follows Koskela, Redberg & Wang (ICML 2024), Theorem 5.2 and Corollary 5.3 (the hockey-stick form of
Liu & Talwar's ``3 eps`` for geometric ``K``, ``eta = 1``, and of Papernot & Steinke's Corollary 3).

Theorem 5.2: ``H_{e^eps'}(A || A') <= m delta_Q(eps' - (eta + 1) log R(eps1))`` with
``R(eps1) = e^eps1 + ((1 - gamma)/gamma) delta_Q(eps1)``, for every ``eps1 >= 0``. A pure ``eps``-DP base has
``delta_Q(eps1) = 0`` for ``eps1 >= eps``; taking ``eps1 = eps`` gives ``log R = eps`` and
``delta_Q(eps' - (eta + 1) eps) = 0`` as soon as ``eps' - (eta + 1) eps >= eps``: ``eps' = (eta + 2) eps``.

Derived as well: for ``eps1`` in ``[0, eps]`` the worst ``eps``-DP pair (randomized response) has
``delta_Q(eps1) = (e^eps - e^eps1)/(1 + e^eps)``, so ``R`` is affine in ``e^eps1`` with slope
``1 - c/(1 + e^eps)``, ``c = (1 - gamma)/gamma``. If ``c >= 1 + e^eps`` (small ``gamma``, the usual case) the
best ``eps1`` is ``eps`` and Corollary 5.3 is what the paper's form gives; otherwise ``eps1 = 0`` is better:

    eps' = eps + (eta + 1) log(1 + c (e^eps - 1)/(1 + e^eps)) < (eta + 2) eps.

Both are compared with symsel's ``paper`` method (and with ``polygon``/``fdp``, never larger, and the exact
worst case ``liu-talwar`` of :mod:`symsel.evidence.examples`, never smaller).

Run: ``python derivations/koskela_cor_5_3_pure_dp.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import math

import sympy as sp

import symsel

eta = sp.Symbol("eta", real=True)
gamma, eps, eps_out, x = sp.symbols("gamma epsilon epsilon' x", positive=True)  # x = e^{eps1}
c = (1 - gamma) / gamma


def show(label: str, expr: sp.Expr) -> None:
    print(f"{label}: $${sp.latex(expr)}$$")


# ------------------------------------------------------------------ eps1 = eps: Corollary 5.3
log_r_at_eps = (eta + 1) * sp.log(sp.exp(eps) + c * 0)  # delta_Q(eps) = 0 for a pure eps-DP base
eps_hat = eps_out - sp.expand_log(log_r_at_eps, force=True)
# delta_Q(eps_hat) = 0 exactly when eps_hat >= eps: the smallest eps' is the root of eps_hat = eps.
(solution,) = sp.solve(sp.Eq(eps_hat, eps), eps_out)
assert sp.simplify(solution - (eta + 2) * eps) == 0
show("Corollary 5.3: the selection is eps'-DP with eps'", sp.factor(solution))
show("eps-hat at eps1 = eps", eps_hat)

# ------------------------------------------------------------------ eps1 in [0, eps]: is eps1 = eps the best?
delta_rr = (sp.exp(eps) - x) / (1 + sp.exp(eps))  # worst eps-DP pair at eps1 = log x <= eps
r_of_x = x + c * delta_rr
slope = sp.simplify(sp.diff(r_of_x, x))
assert sp.simplify(slope - (1 - c / (1 + sp.exp(eps)))) == 0 and sp.diff(r_of_x, x, 2) == 0
show("R as a function of x = e^{eps1}", sp.simplify(r_of_x))
show("dR/dx (constant)", slope)
r_at_zero = sp.simplify(r_of_x.subs(x, 1))
# e^eps - R(0) = (e^eps - 1)(1 - c/(1 + e^eps)): positive exactly when the slope is positive.
assert sp.simplify(sp.exp(eps) - r_at_zero - (sp.exp(eps) - 1) * slope) == 0
threshold = sp.solve(sp.Eq(c, 1 + sp.exp(eps)), gamma)
assert len(threshold) == 1 and sp.simplify(threshold[0] - 1 / (2 + sp.exp(eps))) == 0
show("R at eps1 = 0", r_at_zero)
show("eps1 = eps is optimal iff gamma <=", threshold[0])
better = eps + (eta + 1) * sp.log(r_at_zero)
show("otherwise eps' = eps + (eta+1) log R(0)", better)


def paper_pure_epsilon(eta_: float, gamma_: float, eps_: float) -> float:
    """The paper's form minimized over eps1 in [0, eps] for a pure eps-DP base (derived above)."""
    if (1 - gamma_) / gamma_ >= 1 + math.exp(eps_):
        return (eta_ + 2) * eps_
    return float(better.subs({eta: eta_, gamma: gamma_, eps: eps_}))


# ------------------------------------------------------------------ numerical checks against symsel
print("\n| eta | gamma | eps | derived | symsel paper | polygon | fdp |")
print("|---|---|---|---|---|---|---|")
for eta_, gamma_, eps_ in ((1, 1e-3, 1.0), (0.5, 1e-3, 1.0), (0, 1e-3, 1.0), (2, 1e-4, 0.5), (1, 0.5, 1.0),
                           (0, 0.3, 2.0)):
    law, base = symsel.tnb(eta_, gamma=gamma_), symsel.parse_profile(f"pure(eps={eps_})")
    values = {m: symsel.bound(law, base, m).epsilon(0.0) for m in ("paper", "polygon", "fdp", "envelope")}
    derived = paper_pure_epsilon(eta_, gamma_, eps_)
    print(f"| {eta_} | {gamma_:g} | {eps_} | {derived:.10f} | "
          + " | ".join(f"{values[m]:.10f}" for m in ("paper", "polygon", "fdp")) + " |")
    assert derived <= (eta_ + 2) * eps_ + 1e-12
    assert math.isclose(values["paper"], derived, rel_tol=1e-7), (values["paper"], derived)
    assert values["fdp"] <= values["polygon"] + 1e-9 <= values["paper"] + 2e-9

exact = symsel.get_example("liu-talwar")
exact_eps = exact.exact_epsilon()
eps0 = exact.params["eps"]
methods = ("paper", "polygon", "fdp", "envelope")
uppers = {m: symsel.bound(exact.dist, exact.base_profile, m).epsilon(0.0) for m in methods}
print(f"\nliu-talwar (geometric, gamma = {exact.params['gamma']:g}, pure {eps0}-DP base): exact {exact_eps:.8f}; "
      + ", ".join(f"{m} {v:.8f}" for m, v in uppers.items()) + f"; 3 eps = {3 * eps0}")
assert all(exact_eps <= v + 1e-9 for v in uppers.values()), "a bound below the exact worst case"
assert math.isclose(uppers["paper"], 3 * eps0, rel_tol=1e-12)
# The fdp certificate may stop short of convergence at this extreme gamma (its cell budget): still an upper
# bound, within 1e-5 relative of 3 eps.
assert uppers["fdp"] <= 3 * eps0 * (1 + 1e-5)
print("OK: pure eps-DP base => (eta + 2) eps from Thm 5.2 at eps1 = eps (Cor 5.3); eps1 = 0 is better iff "
      "gamma > 1/(2 + e^eps)")
