"""The envelope bound of docs/envelope.md is never above the paper's bounds (Koskela et al. Thm 5.2 / 5.7 / Cor 5.8).

Setting: Koskela, Redberg & Wang (ICML 2024): their Theorem 4.1 with the ratio recipe of docs/ratio-methods.md gives,
for the truncated negative binomial (Thm 5.2), the binomial (Thm 5.7) and Poisson (Cor 5.8),
``delta_A(eps) <= m delta_Q(eps - log R_paper(eps1))``. The envelope bound (docs/envelope.md, symsel's own result) is
``sum_i c_i delta_Q(eps - log t_i)`` with ``H(t) = sum_i c_i [1 - t/t_i]_+``, ``sum_i c_i = m``, ``t_i <= R``.

The argument, step by step:

1. ``t_i <= R_polygon`` and ``delta_Q`` is non-increasing, so ``sum_i c_i delta_Q(eps - log t_i) <= m delta_Q(eps -
   log R_polygon)``: the one-term choice ``c = m, t = R`` is §4's bound (equivalently ``H(t) <= m [1 - t/R]_+``,
   the chord of the convex ``H`` from ``(0, m)`` to ``(R, 0)``).
2. For the ``approx(eps1, delta1)`` base this is an identity check: replacing ``H`` by ``m [1 - t/R]_+`` in the closed
   form ``m delta1 + (1 - delta1)/(1 + e^eps1)(e^eps1 H(e^{eps-eps1}) + H(e^{eps+eps1}))`` gives exactly
   ``m delta_Q(eps - log R)`` (SymPy, below).
3. ``R_polygon(eps1) <= R_paper(eps1)`` (the polygon lies inside the paper's relaxed region): proved here by SymPy
   for Poisson (a sum of non-negative terms) and in ``tnb_polygon_vertex.py`` for the TNB; for the binomial checked
   on the grid where Thm 5.7's validity condition holds.
4. Numerically, at 50 digits, on a grid of ``(eps1, delta1, eps)``: the closed-form envelope profile
   (:mod:`symsel.derive.envelope`) is at most ``m delta_Q(eps - log R_paper)`` for TNB, binomial and Poisson
   (numerical evidence on a grid, not a proof; the proof is steps 1-3), and at most ``symsel.bound(.., "paper")``.

Run: ``python derivations/envelope_never_above_paper.py``.
"""

from __future__ import annotations

import mpmath
import sympy as sp

import symsel
from symsel.derive.engine import family_log_ratio
from symsel.derive.envelope import DELTA1, EPS, EPS1, polygon_envelope
from symsel.derive.family import recognize
from symsel.distributions import z

# ------------------------------------------------------------------ step 2: the one-term choice is §4's bound
m, big_r = sp.symbols("m R", positive=True)


def hinge(v: sp.Expr) -> sp.Expr:
    return sp.Max(v, 0)


def delta_q(arg: sp.Expr) -> sp.Expr:
    """The approx(eps1, delta1) profile for every real argument (two hinges)."""
    return DELTA1 + (1 - DELTA1) * (hinge(sp.exp(EPS1) - sp.exp(arg)) + hinge(1 - sp.exp(arg + EPS1))) / (
        1 + sp.exp(EPS1))


target = m * delta_q(EPS - sp.log(big_r))
# term by term: the hinges of the one-term closed form are those of m delta_Q(eps - log R), so the sums agree
assert sp.simplify(sp.exp(EPS1) * (1 - sp.exp(EPS - EPS1) / big_r) - (sp.exp(EPS1) - sp.exp(EPS - sp.log(big_r)))) == 0
assert sp.simplify((1 - sp.exp(EPS + EPS1) / big_r) - (1 - sp.exp(EPS - sp.log(big_r) + EPS1))) == 0
print(f"one term: $$m\\delta_1 + \\tfrac{{1-\\delta_1}}{{1+e^{{\\varepsilon_1}}}}\\big(e^{{\\varepsilon_1}} m[1 - "
      f"e^{{\\varepsilon-\\varepsilon_1}}/R]_+ + m[1 - e^{{\\varepsilon+\\varepsilon_1}}/R]_+\\big) = "
      f"{sp.latex(target)}$$")

# ------------------------------------------------------------------ step 3: R_polygon <= R_paper for Poisson
mu, big_x = sp.symbols("mu X", positive=True)  # e^eps1 = 1 + X
e = 1 + big_x
log_vertex = mu * ((e + DELTA1) / (1 + e) - (1 - DELTA1) / (1 + e))
log_paper = family_log_ratio("poisson", {"mu": mu}).subs(sp.exp(EPS1), e)
gap = sp.factor(sp.simplify(log_paper - log_vertex))
proof = mu * (big_x * (1 + big_x) + big_x * DELTA1) / (2 + big_x)
assert sp.simplify(gap - proof) == 0, gap
assert sp.simplify(log_paper - mu * DELTA1 - mu * big_x) == 0  # paper minus the end / start corners: mu X >= 0
print(f"Poisson: $$\\log R_\\text{{paper}} - \\log R_V = {sp.latex(proof)} \\ge 0,"
      " \\quad e^{\\varepsilon_1} = 1 + X$$")

# ------------------------------------------------------------------ step 4: 50 digits on a grid
def paper_delta(mean: mpmath.mpf, e1: mpmath.mpf, d1: mpmath.mpf, arg: mpmath.mpf) -> mpmath.mpf:
    """``m delta_Q(arg)`` for the approx(eps1, delta1) base (the two-hinge profile above), capped at 1."""
    hinges = max(mpmath.exp(e1) - mpmath.exp(arg), 0) + max(1 - mpmath.exp(arg + e1), 0)
    return min(1, mean * (d1 + (1 - d1) * hinges / (1 + mpmath.exp(e1))))



LAWS = {"poisson(mean=3)": None, "tnb(eta=0.5, gamma=0.05)": None, "binomial(n=20, p=0.3)": None}
GRID = ((sp.Rational(1, 4), sp.Rational(1, 10**6)), (sp.Integer(1), sp.Rational(1, 1000)),
        (sp.Integer(2), sp.Rational(1, 20)))
EPS_GRID = (0.25, 1.0, 2.5, 5.0)
worst_ratio, skipped = mpmath.mpf(0), 0
with mpmath.workdps(50):
    for spec in LAWS:
        dist = symsel.parse_distribution(spec)
        fam = recognize(dist.pgf)
        mean = dist.mean_mp(50)
        for e1, d1 in GRID:
            if fam[0] == "binomial" and sp.exp(e1) < 1 + fam[1]["p"] * d1 / (1 - fam[1]["p"]):
                skipped += 1  # Thm 5.7 does not apply there
                continue
            pe = polygon_envelope(sp.diff(dist.pgf, z), e1, d1, fam)
            log_r_paper = mpmath.mpf(str(sp.N(family_log_ratio(*fam).subs({EPS1: e1, DELTA1: d1}), 60)))
            assert mpmath.log(mpmath.mpf(str(sp.N(pe.ratio, 60)))) <= log_r_paper, (spec, e1, d1)
            base = symsel.parse_profile(f"approx(eps={float(e1)!r}, delta={float(d1)!r})")
            paper_engine = symsel.bound(dist, base, "paper")
            e1_mp, d1_mp = mpmath.mpf(str(sp.N(e1, 60))), mpmath.mpf(str(sp.N(d1, 60)))
            ratios = []
            for eps in EPS_GRID:
                ours = pe.delta_mp(eps)
                paper = paper_delta(mean, e1_mp, d1_mp, eps - log_r_paper)
                assert ours <= paper * (1 + mpmath.mpf(10) ** -45), (spec, e1, d1, eps, ours, paper)
                assert float(ours) <= paper_engine.delta(eps) * (1 + 1e-12), (spec, e1, d1, eps)
                ratios.append(ours / paper)
            worst_ratio = max(worst_ratio, *ratios)
            print(f"- {spec}, eps1 = {e1}, delta1 = {d1}: envelope/paper at eps = {EPS_GRID}: "
                  + ", ".join(mpmath.nstr(r, 6) for r in ratios))
print(f"\nlargest envelope/paper ratio on the grid: {mpmath.nstr(worst_ratio, 8)} (<= 1); "
      f"{skipped} binomial grid points skipped (Thm 5.7's validity condition fails there)")
print("OK: the closed-form envelope bound is never above Thm 5.2 / Thm 5.7 / Cor 5.8 on the grid (50 digits)")
