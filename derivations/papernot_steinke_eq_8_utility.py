"""Best of K runs: Papernot & Steinke's eq. (8), E[K/(K+1)] = 1 − ∫₀¹φ, in closed form for TNB, Poisson, binomial.

Follows Papernot & Steinke (ICLR 2022), §3.6 eq. (8) and App. A.2.1; docs/utility.md. The best of ``k`` uniform
quantiles has mean ``∫₀¹ x · k x^{k−1} dx = k/(k+1)`` (SymPy, symbolic ``k``), so ``E[K/(K+1)] = ∫₀¹ x φ'(x) dx``
and integration by parts gives ``1 − ∫₀¹ φ``. SymPy integrates ``φ`` for the Poisson (``(1 − e^{−μ})/μ``), the
binomial (``(1 − (1−p)^{n+1})/(p(n+1))``) and the truncated negative binomial (``η ∉ {0, 1}`` by an antiderivative
checked by differentiation; ``η = 0`` and ``η = 1`` by ``sp.integrate``). Also derived: the success probability
``1 − φ(1 − 1/c)`` (one good candidate among ``c``) and the Chernoff tail ``P[K ≥ k] ≤ φ(e^t) e^{−tk}`` with its
optimal ``t`` solved for Poisson, geometric and binomial laws.

Checks at 50 digits: each closed form against brute-force pmf sums (pmfs typed from the definitions as ratio
recursions, summed to 1e-60) and against symsel's ``expected_quantile_mp``; ``success_probability`` against the pmf sum;
``tail_bound`` is never below the derived optimum (it is the infimum) nor far above it, and the exact tail
(pmf sum) is never above either.

Run: ``python derivations/papernot_steinke_eq_8_utility.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import mpmath
import sympy as sp
from _pmf_reference import masses, mp, tnb_masses

import symsel

mpmath.mp.dps = 50
x, t = sp.symbols("x t", positive=True)
k, n = sp.symbols("k n", positive=True, integer=True)
mu, p, gamma, eta = sp.symbols("mu p gamma eta", positive=True)


def show(label: str, expr: sp.Expr) -> None:
    print(f"{label}: $${sp.latex(expr)}$$")


# ------------------------------------------------------------------ eq. (8) term by term and by parts
per_k = sp.integrate(x * sp.diff(x**k, x), (x, 0, 1))
assert sp.simplify(per_k - k / (k + 1)) == 0
show(r"\int_0^1 x \, d(x^k)", per_k)


f = sp.Function("phi")
assert sp.diff(x * f(x), x) - (f(x) + x * sp.diff(f(x), x)) == 0  # product rule: int x phi' = [x phi] - int phi
show(r"\int_0^1 x\varphi'(x)\,dx", f(1) - sp.Integral(f(x), (x, 0, 1)))


def one_minus_integral(phi: sp.Expr, antiderivative: sp.Expr) -> sp.Expr:
    """1 − ∫₀¹ φ = ∫₀¹ x φ'(x) dx, with the antiderivative checked by differentiation (φ(1) = 1 is checked)."""
    assert sp.simplify(phi.subs(x, 1) - 1) == 0
    assert sp.simplify(sp.diff(antiderivative, x) - phi) == 0
    return sp.simplify(1 - (antiderivative.subs(x, 1) - antiderivative.subs(x, 0)))


eq8_poisson = one_minus_integral(sp.exp(mu * (x - 1)), sp.exp(mu * (x - 1)) / mu)
assert sp.simplify(eq8_poisson - (1 - (1 - sp.exp(-mu)) / mu)) == 0
eq8_binomial = one_minus_integral((1 - p + p * x) ** n, (1 - p + p * x) ** (n + 1) / (p * (n + 1)))
assert sp.simplify(eq8_binomial - (1 - (1 - (1 - p) ** (n + 1)) / (p * (n + 1)))) == 0
c = 1 - gamma
phi_tnb = ((1 - c * x) ** (-eta) - 1) / (gamma ** (-eta) - 1)
y = sp.Symbol("y", positive=True)  # y = 1 - (1 - gamma) x runs from 1 (x = 0) to gamma (x = 1)
G = -(y ** (1 - eta)) / (c * (1 - eta))  # antiderivative in x of (1 - c x)^(-eta), eta != 1
assert sp.simplify(sp.diff(G, y) * (-c) - y ** (-eta)) == 0  # chain rule: dG/dx = G'(y) dy/dx
eq8_tnb = sp.simplify(1 - ((G.subs(y, gamma) - G.subs(y, 1)) - 1) / (gamma ** (-eta) - 1))
eq8_geometric = one_minus_integral(gamma * x / (1 - c * x), -gamma * x / c - gamma * sp.log(1 - c * x) / c**2)
eq8_log = one_minus_integral(sp.log(1 - c * x) / sp.log(gamma),
                             -((1 - c * x) * sp.log(1 - c * x) - (1 - c * x)) / (c * sp.log(gamma)))
show("Poisson", eq8_poisson)
show("binomial", eq8_binomial)
show(r"TNB, \eta \ne 0, 1", eq8_tnb)
show("geometric", eq8_geometric)
show("logarithmic", eq8_log)


def poisson_masses(m: mpmath.mpf) -> dict[int, mpmath.mpf]:
    return masses(mpmath.exp(-m), lambda j: m / (j + 1), 0)


def binomial_masses(nn: int, pp: mpmath.mpf) -> dict[int, mpmath.mpf]:
    return masses((1 - pp) ** nn, lambda j: (nn - j) / mpmath.mpf(j + 1) * pp / (1 - pp), 0, nn)


def expect(pmf: dict[int, mpmath.mpf], fn) -> mpmath.mpf:
    return mpmath.fsum(v * fn(j) for j, v in pmf.items())


cases = [(symsel.poisson(m_), eq8_poisson.subs(mu, m_), poisson_masses(mp(m_))) for m_ in (3, sp.Rational(25, 2))]
cases += [(symsel.binomial(nn, pp), eq8_binomial.subs({n: nn, p: pp}), binomial_masses(nn, mp(pp)))
          for nn, pp in ((10, sp.Rational(3, 10)), (40, sp.Rational(1, 2)))]
cases += [(symsel.tnb(e_, gamma=g_), closed.subs({eta: e_, gamma: g_}), tnb_masses(mp(e_), mp(g_)))
          for e_, g_, closed in ((sp.Rational(1, 2), sp.Rational(1, 20), eq8_tnb),
                                 (-sp.Rational(1, 2), sp.Rational(1, 10), eq8_tnb), (2, sp.Rational(1, 5), eq8_tnb),
                                 (1, sp.Rational(1, 10), eq8_geometric), (0, sp.Rational(1, 50), eq8_log))]

print("\n| law | eq. (8) closed form (50 digits) | pmf-sum error | expected_quantile_mp error | success (c=10) err |")
print("|---|---|---|---|---|")
for law, closed, pmf in cases:
    value = mpmath.mpf(sp.N(closed, 55))
    brute = expect(pmf, lambda j: mpmath.mpf(j) / (j + 1))
    engine = law.expected_quantile_mp(50)
    succ_ref = expect(pmf, lambda j: 1 - (1 - mpmath.mpf(1) / 10) ** j)
    succ_closed = 1 - law.phi_mp(1 - mpmath.mpf(1) / 10, 50)  # 1 − φ(1 − 1/c)
    succ_engine = law.success_probability(10)
    print(f"| {law.spec} | {mpmath.nstr(value, 25)} | {mpmath.nstr(abs(brute - value), 3)} | "
          f"{mpmath.nstr(abs(engine - value), 3)} | {abs(succ_engine - float(succ_ref)):.1e} |")
    assert abs(brute - value) <= mpmath.mpf(10) ** -45, (law.spec, brute, value)
    assert abs(engine - value) <= mpmath.mpf(10) ** -40, (law.spec, engine, value)
    assert abs(succ_closed - succ_ref) <= mpmath.mpf(10) ** -40
    assert abs(succ_engine - succ_ref) <= 1e-15 * succ_ref

# ------------------------------------------------------------------ the Chernoff tail and its optimal t
tails = {}
for name, phi in (("Poisson", sp.exp(mu * (x - 1))), ("geometric", gamma * x / (1 - (1 - gamma) * x)),
                  ("binomial", (1 - p + p * x) ** n)):
    log_bound = sp.expand_log(sp.log(phi.subs(x, sp.exp(t))), force=True) - t * k
    sols = sp.solve(sp.diff(log_bound, t), t)
    assert len(sols) == 1, (name, sols)
    tails[name] = (sols[0], sp.simplify(sp.exp(log_bound.subs(t, sols[0]))))
    show(f"{name}: optimal t", sols[0])
assert sp.simplify(tails["Poisson"][0] - sp.log(k / mu)) == 0
show("Poisson: min_t phi(e^t) e^{-tk}", tails["Poisson"][1])

print("\n| law | k | exact P[K >= k] | derived min_t bound | tail_bound (symsel) |")
print("|---|---|---|---|---|")
for law, name, subs, kk, pmf in (
        (symsel.poisson(10), "Poisson", {mu: 10}, 25, poisson_masses(mpmath.mpf(10))),
        (symsel.geometric(gamma=sp.Rational(1, 20)), "geometric", {gamma: sp.Rational(1, 20)}, 80,
         tnb_masses(mpmath.mpf(1), mpmath.mpf(1) / 20)),
        (symsel.binomial(30, sp.Rational(1, 4)), "binomial", {n: 30, p: sp.Rational(1, 4)}, 15,
         binomial_masses(30, mpmath.mpf(1) / 4))):
    t_star = sp.N(tails[name][0].subs({**subs, k: kk}), 50)
    assert t_star > 0  # k is above the mean: the optimum is an admissible t >= 0
    derived = mpmath.mpf(sp.N(tails[name][1].subs({**subs, k: kk}), 55))
    exact = expect(pmf, lambda j, kk=kk: 1 if j >= kk else 0)
    engine = law.tail_bound(kk)
    print(f"| {law.spec} | {kk} | {mpmath.nstr(exact, 12)} | {mpmath.nstr(derived, 12)} | {engine:.12g} |")
    assert exact <= derived and exact <= engine
    assert derived * (1 - 1e-12) <= engine <= derived * (1 + 1e-6), (engine, derived)
print("\nOK: eq. (8) closed forms (Poisson, binomial, TNB), success probability and Chernoff tails derived; they "
      "match pmf sums at 50 digits and symsel's utility functions")
