"""Truncated negative binomial K: the supremum of phi'(q)/phi'(q') over an (eps1, delta1) polygon, in closed form.

Follows Koskela, Redberg & Wang (ICML 2024), Theorem 5.2 and its proof (Appendix C.2), and docs/setting.md, §4:
for ``K ~ D_{eta,gamma}`` (Papernot & Steinke, Definition 1) ``phi'(z) = m ((1 - (1-gamma) z)/gamma)^-(eta+1)``,
so ``phi'(q)/phi'(q') = r^(eta+1)`` with ``r = (1 - c q')/(1 - c q)``, ``c = 1 - gamma``. The lower-right
boundary of the ``(eps1, delta1)`` polygon is ``q' = 0`` on ``[0, delta1]``, then the segments

    S1: q' = e^-eps1 (q - delta1)               from (delta1, 0) to V,
    S2: 1 - q' = delta1 + e^eps1 (1 - q)        from V to (1, 1 - delta1),
    V = ((e^eps1 + delta1)/(1 + e^eps1), (1 - delta1)/(1 + e^eps1)).

Derived here with SymPy: ``r`` is a Möbius function of the position on each segment, hence monotone
(Lemma C.5 of the paper: ``(ax+b)/(cx+d)`` is monotone with the sign of ``ad - cb``). On S1 it increases
towards V; on S2 its direction depends on the sign of ``gamma (e^eps1 - 1) - c delta1``. So the supremum over
the polygon is attained at a vertex:

    log R_polygon(eps1) = (eta + 1) log max(r_V, 1 + c delta1 / gamma),
    r_V = (gamma (1 + e^eps1) + c (e^eps1 + delta1)) / (gamma (1 + e^eps1) + c (1 - delta1)),

which is never above the paper's ``(eta + 1) log(e^eps1 + c delta1 / gamma)`` (also derived). The closed form
is then compared with symsel's certified numerical supremum
(:func:`symsel.bounds.ratio.certified_log_sup`) on several parameter sets, and with the ``polygon`` method
of :mod:`symsel.bounds.hockey_stick` at a fixed ``eps1``.

Run: ``python derivations/tnb_polygon_vertex.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import math

import sympy as sp

import symsel
from symsel.bounds.hockey_stick import polygon_ratio_at
from symsel.bounds.ratio import certified_log_sup
from symsel.profiles.region import polygon_lower

gamma, E, d1, u, q = sp.symbols("gamma E delta_1 u q", positive=True)  # E = e^{eps1} >= 1
c = 1 - gamma


def show(label: str, expr: sp.Expr) -> None:
    print(f"{label}: $${sp.latex(expr)}$$")


# ------------------------------------------------------------------ symbolic derivation
def ratio(q_: sp.Expr, q_prime: sp.Expr) -> sp.Expr:
    """``r = (1 - c q')/(1 - c q)``; ``phi'(q)/phi'(q') = r^(eta+1)`` and the power is increasing."""
    return (1 - c * q_prime) / (1 - c * q_)


# S2, parametrized by u = 1 - q in [0, (1 - delta1)/(1 + E)]: 1 - q' = delta1 + E u.
r_s2 = sp.simplify(ratio(1 - u, 1 - d1 - E * u))
dr_s2 = sp.simplify(sp.diff(r_s2, u))
sign_s2 = gamma * (E - 1) - c * d1
assert sp.simplify(dr_s2 * (gamma + c * u) ** 2 / c - sign_s2) == 0, "S2: derivative is not c*sign/(.)^2"
show("r on S2 (u = 1 - q)", r_s2)
show("dr/du on S2", sp.factor(dr_s2))

# S1, parametrized by q in [delta1, q_V]: q' = (q - delta1)/E.
r_s1 = sp.simplify(ratio(q, (q - d1) / E))
dr_s1 = sp.simplify(sp.diff(r_s1, q))
sign_s1 = E - 1 + c * d1  # >= 0 because E >= 1 and c, delta1 >= 0
assert sp.simplify(dr_s1 * E * (1 - c * q) ** 2 / c - sign_s1) == 0, "S1: derivative is not c*sign/(E(.)^2)"
show("dr/dq on S1 (non-negative: E >= 1)", sp.factor(dr_s1))

# On q' = 0, q in [0, delta1]: r = 1/(1 - c q) increases in q, so its max (at q = delta1) is the start of S1,
# itself below the end of S1 (V). Hence sup = max(r at V, r at the end (1, 1 - delta1) of S2).
q_v, qp_v = (E + d1) / (1 + E), (1 - d1) / (1 + E)
r_vertex = sp.simplify(ratio(q_v, qp_v))
r_end = sp.simplify(r_s2.subs(u, 0))
expected_vertex = (gamma * (1 + E) + c * (E + d1)) / (gamma * (1 + E) + c * (1 - d1))
assert sp.simplify(r_vertex - expected_vertex) == 0
assert sp.simplify(r_end - (1 + c * d1 / gamma)) == 0
assert sp.simplify(r_s2.subs(u, (1 - d1) / (1 + E)) - r_vertex) == 0, "S2 does not start at V"
assert sp.simplify(r_s1.subs(q, q_v) - r_vertex) == 0, "S1 does not end at V"
show("r at the vertex V", expected_vertex)
show("r at (1, 1 - delta_1)", r_end)

# The paper's relaxed ratio (Thm 5.2) dominates both candidates.
r_paper = E + c * d1 / gamma
assert sp.simplify(r_paper - r_end - (E - 1)) == 0  # >= 0
gap = sp.factor(sp.together(r_paper - r_vertex))
# A sum of non-negative terms over a positive denominator (E >= 1, 0 <= delta1 <= 1, c delta1 < 1):
gap_proof = (gamma**2 * (E**2 - 1) + c**2 * d1 * (1 - d1)) / (gamma * (gamma * E + 1 - c * d1))
assert sp.simplify(gap - gap_proof) == 0, "paper minus vertex ratio is not the non-negative form"
show("paper ratio minus vertex ratio", gap_proof)

# ------------------------------------------------------------------ numerical checks
gap_fn = sp.lambdify((gamma, E, d1), gap, "math")
for g in (1e-6, 1e-3, 0.1, 0.5, 0.9):
    for e1 in (0.0, 0.01, 0.3, 1.0, 5.0):
        for delta1 in (0.0, 1e-9, 1e-3, 0.2, 0.9):
            assert gap_fn(g, math.exp(e1), delta1) >= -1e-12 * math.exp(e1), (g, e1, delta1)


def log_r_closed(eta: float, g: float, eps1: float, delta1: float) -> float:
    """``(eta + 1) log max(r_V, 1 + c delta1/gamma)``, the derived supremum."""
    big_e, cc = math.exp(eps1), 1 - g
    vertex = (g * (1 + big_e) + cc * (big_e + delta1)) / (g * (1 + big_e) + cc * (1 - delta1))
    return (eta + 1) * math.log(max(vertex, 1 + cc * delta1 / g))


CASES = (  # (eta, gamma, eps1, delta1)
    (1.0, 1 / 30, 0.5, float(symsel.parse_profile("gaussian(sigma=4)").delta(0.5))),
    (0.5, 0.01, 1.0, 1e-3),
    (0.0, 1e-3, 0.2, 0.05),
    (-0.5, 0.2, 2.0, 1e-6),
    (3.0, 0.05, 0.1, 0.3),
    (1.0, 0.5, 0.0, 0.4),
)
print("\n| eta | gamma | eps1 | delta1 | closed form | certified sup (lower, upper) | paper (Thm 5.2) |")
print("|---|---|---|---|---|---|---|")
for eta, g, eps1, delta1 in CASES:
    law = symsel.tnb(eta, gamma=g)
    closed = log_r_closed(eta, g, eps1, delta1)
    cert = certified_log_sup(law.log_dphi, lambda x, e=eps1, d=delta1: polygon_lower(x, e, d), tol=1e-10)
    paper = (eta + 1) * math.log(math.exp(eps1) + (1 - g) / g * delta1)
    print(f"| {eta} | {g:.4g} | {eps1} | {delta1:.3g} | {closed:.10f} | ({cert.lower:.10f}, {cert.upper:.10f}) "
          f"| {paper:.6f} |")
    assert cert.lower <= closed + 1e-9 * max(1.0, closed), "a boundary point exceeds the closed-form supremum"
    assert closed <= cert.upper + 1e-12, "the certified supremum is below the closed form"
    assert cert.upper - closed <= 1e-6 * max(1.0, closed), "certificate not tight against the closed form"
    assert closed <= paper + 1e-12, "polygon supremum above the paper's relaxed bound"

# symsel's polygon method at a fixed eps1 reproduces the closed form (Gaussian base, geometric K, mean 30).
base, law = symsel.parse_profile("gaussian(sigma=4)"), symsel.tnb(1, gamma=sp.Rational(1, 30))
for eps1 in (0.2, 0.6, 1.2):
    via_symsel = polygon_ratio_at(law, base, eps1).log_ratio
    closed = log_r_closed(1.0, 1 / 30, eps1, float(base.delta(eps1)))
    assert abs(via_symsel - closed) <= 1e-6 * max(1.0, closed), (eps1, via_symsel, closed)
print("\nsymsel polygon_ratio_at = closed form at eps1 = 0.2, 0.6, 1.2 (Gaussian sigma = 4, geometric 30)")
print("OK: sup over the (eps1, delta1) polygon = (eta+1) log max(r_V, 1 + (1-gamma) delta1/gamma)")
