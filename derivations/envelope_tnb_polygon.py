"""Truncated negative binomial K: the envelope H(t) of docs/envelope.md in closed form on an (eps1, delta1) polygon.

Setting: Koskela, Redberg & Wang (ICML 2024), Theorem 4.1 taken per output (docs/envelope.md, symsel's own result) for
``K ~ D_{eta,gamma}`` (Papernot & Steinke, Definition 1; the law of Koskela et al. Thm 5.2) with
``phi'(z) = m ((1 - (1-gamma) z)/gamma)^{-(eta+1)}``. With ``c = 1 - gamma`` the stationarity condition
``phi''(u) = t s phi''(L(u))`` on a segment of slope ``s`` reads ``(1 - c L(u))/(1 - c u) = (t s)^{1/(eta+2)}``:
linear in ``u``, so SymPy solves it (:func:`symsel.derive.envelope.polygon_envelope`). The second-order factor is

* S1: ``(eta+2) c (c delta1 + e^eps1 - 1) >= 0``: stationary points are minima, S1's sup is a corner;
* S2: ``-(eta+2) c (gamma (e^eps1 - 1) - c delta1)``: a maximum exactly when ``gamma (e^eps1 - 1) > c delta1``
  (the same sign that decides the direction of the ratio along S2, cf. ``tnb_polygon_vertex.py``); otherwise the
  S2 sup is a corner too.

Profile bound for the ``approx(eps1, delta1)`` base: ``delta_A(eps) <= m delta1 + (1 - delta1)/(1 + e^eps1)
(e^eps1 H(e^{eps - eps1}) + H(e^{eps + eps1}))`` (docs/envelope.md with the base's two-hinge profile).
Verified: identities by SymPy; ``H`` against a 50-digit brute-force sup over ``u``; the profile against symsel's
certified numeric envelope; ``eps(delta)`` above a certified lower bound from exact examples; for
``eta = 1`` (geometric), ``0.5`` and ``-0.5``. Run: ``python derivations/envelope_tnb_polygon.py``.
"""

from __future__ import annotations

import sympy as sp

import symsel
from symsel.derive.envelope import DELTA1, EPS1, envelope_checks, polygon_envelope
from symsel.derive.family import family_pgf, recognize
from symsel.distributions import z

eta, gamma = sp.symbols("eta gamma", positive=True)
c = 1 - gamma
pe = polygon_envelope(sp.diff(family_pgf("tnb", {"eta": eta, "gamma": gamma}), z), EPS1, DELTA1,
                      ("tnb", {"eta": eta, "gamma": gamma}))
assert pe is not None
conditions = {k.label.split()[0]: k.value.args[0][1] for k in pe.candidates if k.u_star is not None}
s1, s2 = (sp.factor(conditions[k].lhs - conditions[k].rhs) for k in ("S1", "S2"))  # the condition is "D < 0"
assert conditions["S1"].rel_op == "<" and conditions["S2"].rel_op == "<"
assert sp.simplify(s1 - (eta + 2) * c * (c * DELTA1 + sp.exp(EPS1) - 1)) == 0, s1
assert sp.simplify(s2 + (eta + 2) * c * (gamma * (sp.exp(EPS1) - 1) - c * DELTA1)) == 0, s2
print(f"second order on S1: $$D \\propto {sp.latex((eta + 2) * c * (c * DELTA1 + sp.exp(EPS1) - 1))} \\ge 0$$")
print(f"second order on S2: $$D \\propto {sp.latex(-(eta + 2) * c * (gamma * (sp.exp(EPS1) - 1) - c * DELTA1))}$$")
u_star = next(k.u_star for k in pe.candidates if k.label == "S2 interior")
print(f"S2 stationary point: $$u^* = {sp.latex(u_star)}$$")
tau = sp.Symbol("tau", positive=True)  # (t e^eps1)^{1/(eta+2)}: check u* solves (1 - c L(u))/(1 - c u) = tau
lower = 1 - DELTA1 - sp.exp(EPS1) * (1 - u_star)
ratio = ((1 - c * lower) / (1 - c * u_star)).subs(sp.Symbol("t", positive=True), tau ** (eta + 2) * sp.exp(-EPS1))
assert sp.simplify(sp.powsimp(sp.expand_log(ratio, force=True), force=True) - tau) == 0, "u* does not solve it"

for spec, e1, d1, delta in (("geometric(mean=10)", sp.Rational(1, 2), sp.Rational(1, 1000), 0.1),
                            ("tnb(eta=0.5, gamma=0.1)", sp.Integer(2), sp.Rational(1, 10), 0.9),
                            ("tnb(eta=-0.5, gamma=0.1)", sp.Rational(1, 100), sp.Rational(1, 5), 0.5)):
    dist = symsel.parse_distribution(spec)
    num = polygon_envelope(sp.diff(dist.pgf, z), e1, d1, recognize(dist.pgf))
    checks = envelope_checks(num, dist, eps_grid=(1.0,), delta=delta)
    for k in checks:
        print(f"- {spec}, eps1 = {e1}, delta1 = {d1}: {k.claim}: {k.kind}, {k.agreement:.3g}, passed {k.passed}")
    assert all(k.passed for k in checks)
    print("  pieces:", " -> ".join(p.label for p in num.pieces), "; S2:", num.second_order["S2"])
print(f"$$H(t) = {pe.latex()}$$")
print("OK: the closed-form envelope of TNB K on the polygon agrees with brute force and the numeric envelope")
