"""Binomial K: the envelope H(t) of docs/envelope.md in closed form on an (eps1, delta1) polygon, and the profile bound.

Setting: Koskela, Redberg & Wang (ICML 2024), Theorem 4.1 taken per output (docs/envelope.md, symsel's own result) for
``K ~ Bin(n, p)`` (the law of their Thm 5.7), ``phi'(z) = n p (1 - p + p z)^{n-1}``. On a segment of slope ``s`` the
stationarity condition ``phi''(u) = t s phi''(L(u))`` reads ``(1 - p + p u)/(1 - p + p L(u)) = (t s)^{1/(n-2)}``:
linear in ``u``, solved by SymPy (:func:`symsel.derive.envelope.polygon_envelope`). With ``A(x) = 1 - p + p x > 0``
the second-order factor is ``D = p (n-2) N / (A(u) A(L(u)) e^{-eps1 [S1]})`` with

* S1: ``N = (1-p)(e^eps1 - 1) - p delta1``: a **maximum** exactly when ``eps1 < log(1 + p delta1/(1-p))`` — where
  Thm 5.7's validity condition fails; then ``H`` passes through an S1 interior piece and the ``(delta1, 0)`` corner;
* S2: ``N = -(p delta1 + e^eps1 - 1) < 0``: always the segment's unique maximum.

Profile bound for the ``approx(eps1, delta1)`` base: ``delta_A(eps) <= n p delta1 + (1 - delta1)/(1 + e^eps1)
(e^eps1 H(e^{eps - eps1}) + H(e^{eps + eps1}))``. Verified: identities by SymPy; ``H`` against a 50-digit
brute-force sup over ``u``; the profile against symsel's certified numeric envelope; ``eps(delta)`` above a
certified lower bound from exact examples. Run: ``python derivations/envelope_binomial_polygon.py``.
"""

from __future__ import annotations

import sympy as sp

import symsel
from symsel.derive.envelope import DELTA1, EPS1, envelope_checks, polygon_envelope
from symsel.derive.family import family_pgf, recognize
from symsel.distributions import z

n, p, u = sp.symbols("n p u", positive=True)
params = {"n": n, "p": p}
pe = polygon_envelope(sp.diff(family_pgf("binomial", params), z), EPS1, DELTA1, ("binomial", params))
assert pe is not None
conditions = {k.label.split()[0]: k.value.args[0][1] for k in pe.candidates if k.u_star is not None}


def d_of(name: str) -> sp.Expr:
    """``D`` itself (the kept condition is ``D < 0``, possibly rewritten by SymPy as ``-D > 0``)."""
    cond = conditions[name]
    return cond.lhs - cond.rhs if cond.rel_op == "<" else cond.rhs - cond.lhs


def a_of(x: sp.Expr) -> sp.Expr:
    return 1 - p + p * x


lower = {"S1": sp.exp(-EPS1) * (u - DELTA1), "S2": 1 - DELTA1 - sp.exp(EPS1) * (1 - u)}
numerator = {"S1": (1 - p) * (sp.exp(EPS1) - 1) - p * DELTA1, "S2": -(p * DELTA1 + sp.exp(EPS1) - 1)}
scale = {"S1": sp.exp(EPS1), "S2": 1}
for name in ("S1", "S2"):
    d = d_of(name).subs(sp.Symbol("u", positive=True), u)
    claimed = p * (n - 2) * numerator[name] / (a_of(u) * a_of(lower[name]) * scale[name])
    assert sp.simplify(d - claimed) == 0, (name, sp.factor(d))
    print(f"second order on {name}: $$D = {sp.latex(claimed)}$$")

for spec, e1, d1, delta, path in (
        ("binomial(n=20, p=0.3)", sp.Rational(1, 2), sp.Rational(1, 1000), 0.1, ["end", "S2 interior", "vertex"]),
        ("binomial(n=20, p=0.3)", sp.Rational(1, 100), sp.Rational(1, 5), 0.9,
         ["end", "S2 interior", "vertex", "S1 interior", "start"]),
        ("binomial(n=50, p=0.1)", sp.Integer(1), sp.Rational(1, 10**5), 0.05, ["end", "S2 interior", "vertex"])):
    dist = symsel.parse_distribution(spec)
    num = polygon_envelope(sp.diff(dist.pgf, z), e1, d1, recognize(dist.pgf))
    assert [q.label for q in num.pieces] == [*path, "zero"], [q.label for q in num.pieces]
    checks = envelope_checks(num, dist, eps_grid=(0.5, 2.0), delta=delta)
    for k in checks:
        print(f"- {spec}, eps1 = {e1}, delta1 = {d1}: {k.claim}: {k.kind}, {k.agreement:.3g}, passed {k.passed}")
    assert all(k.passed for k in checks)
    print(f"$${num.latex(lhs=True)}$$\n")
print("OK: the closed-form envelope of binomial K on the polygon agrees with brute force and the numeric envelope")
