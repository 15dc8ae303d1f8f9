"""Poisson K: the envelope H(t) of docs/envelope.md in closed form on an (eps1, delta1) polygon, and the profile bound.

Setting: Koskela, Redberg & Wang (ICML 2024), Theorem 4.1 taken per output (docs/envelope.md, symsel's own result) with
``phi'(z) = mu e^{mu (z - 1)}`` (their Cor 5.8's law). ``H(t) = sup_u [phi'(u) - t phi'(L(u))]_+`` over the lower
boundary ``L`` of the ``(eps1, delta1)`` polygon. Derived with SymPy (:func:`symsel.derive.envelope.polygon_envelope`):

* on S1 (slope ``e^-eps1``) a stationary point is a minimum (``D = mu (1 - e^-eps1) > 0``): S1's sup is a corner;
* on S2 (slope ``e^eps1``) it is the maximum ``1 - u* = (log t + eps1 - mu delta1)/(mu (e^eps1 - 1))`` with value
  ``mu e^{mu (u* - 1)} (1 - e^-eps1)``, for ``e^{mu delta1 - eps1} <= t <= T(V)``;
* so ``H`` is the ``u = 1`` line, then the S2 maximum, then the vertex line, then (if larger) the ``(delta1, 0)``
  line, and 0 from ``R``; for the ``approx(eps1, delta1)`` base
  ``delta_A(eps) <= mu delta1 + (1 - delta1)/(1 + e^eps1) (e^eps1 H(e^{eps - eps1}) + H(e^{eps + eps1}))``.

Verified: identities by SymPy; ``H`` against a 50-digit brute-force sup over ``u``; the profile against symsel's
certified numeric envelope; ``eps(delta)`` above a certified lower bound from exact examples.
Run: ``python derivations/envelope_poisson_polygon.py``.
"""

from __future__ import annotations

import sympy as sp

import symsel
from symsel.derive.envelope import DELTA1, EPS1, T, envelope_checks, polygon_envelope
from symsel.distributions import z

mu = sp.Symbol("mu", positive=True)
pe = polygon_envelope(mu * sp.exp(mu * (z - 1)), EPS1, DELTA1, ("poisson", {"mu": mu}))
assert pe is not None
assert "minima" in pe.second_order["S1"] and "unique maximum" in pe.second_order["S2"], pe.second_order
s2 = next(c for c in pe.candidates if c.label == "S2 interior")
stated = 1 - (sp.log(T) + EPS1 - mu * DELTA1) / (mu * (sp.exp(EPS1) - 1))
assert sp.simplify(s2.u_star - stated) == 0, "S2 stationary point differs from the stated closed form"
value = mu * sp.exp(mu * (stated - 1)) * (1 - sp.exp(-EPS1))
tau = sp.Symbol("tau", real=True)  # t = e^tau
assert sp.simplify(sp.powsimp(sp.expand((s2.value - value).subs(T, sp.exp(tau))), force=True)) == 0, "S2 value"
assert sp.simplify(s2.t_range[0] - sp.exp(mu * DELTA1 - EPS1)) == 0
print(f"S2 maximum: $$1 - u^* = {sp.latex(1 - stated)}, \\quad H = {sp.latex(value)}$$")
print(f"for $$ {sp.latex(s2.t_range[0])} \\le t \\le {sp.latex(sp.simplify(s2.t_range[1]))}$$")
print(f"$$H(t) = {pe.latex()}$$\n")

for spec, e1, d1, delta in (("poisson(mean=3)", sp.Rational(1, 2), sp.Rational(1, 1000), 0.1),
                            ("poisson(mean=10)", sp.Integer(1), sp.Rational(1, 10**6), 1e-3)):
    dist = symsel.parse_distribution(spec)
    num = polygon_envelope(sp.diff(dist.pgf, z), e1, d1, ("poisson", {"mu": dist.family.params["mu"]}))
    checks = envelope_checks(num, dist, eps_grid=(0.3, 1.0, 3.0), delta=delta)
    for c in checks:
        print(f"- {spec}, eps1 = {e1}, delta1 = {d1}: {c.claim}: {c.kind}, {c.agreement:.3g}, passed {c.passed}")
    assert all(c.passed for c in checks)
    print(f"$${num.latex(lhs=True)}$$\n")
print("OK: the closed-form envelope of Poisson K on the polygon agrees with brute force and the numeric envelope")
