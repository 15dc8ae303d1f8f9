"""Poisson K: the hockey-stick ratio over the f-DP region is m times the total variation, m * delta(0).

Follows Koskela, Redberg & Wang (ICML 2024), Corollary 5.8 and Remark C.8, and docs/ratio-methods.md. For
``K ~ Poisson(m)``, ``phi'(z) = m e^{m(z - 1)}``, so

    log phi'(q) - log phi'(q') = m (q - q'),

and its supremum over the privacy region of the base is ``m sup_g (E_Q g - E_Q' g) = m TV(Q, Q') = m delta(0)``
(the hockey-stick divergence at ``eps = 0``). For a Gaussian (mu-GDP) base the boundary is
``q' = Phi(Phi^-1(q) - mu)``; with ``x = Phi^-1(q)`` the maximum of ``Phi(x) - Phi(x - mu)`` is at ``x = mu/2``,
giving ``2 Phi(mu/2) - 1 = erf(mu / (2 sqrt 2))``, which is the Balle--Wang profile at ``eps = 0``.

Also derived: Cor 5.8's ``eps_hat = eps - m(e^eps1 - 1) - m delta(eps1)`` is best at ``eps1 = 0`` for every
base, because ``d/d eps1 [e^eps1 + delta(eps1)] = e^eps1 (1 - Q'[L > eps1]) >= 0`` (shown for the Gaussian
profile symbolically). So for Poisson the ``paper``, ``polygon`` and ``fdp`` methods coincide at
``log R = m delta(0)``, which is what ``benchmarks/bench_tightness.py`` measures.

The closed form is compared with :func:`symsel.bounds.ratio.certified_log_sup` on the Gaussian boundary
and with the three methods of :func:`symsel.bound`.

Run: ``python derivations/poisson_fdp_ratio.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import math

import sympy as sp

import symsel
from symsel.bounds.ratio import certified_log_sup
from symsel.distributions import poisson
from symsel.profiles import GaussianProfile
from symsel.profiles.region import gaussian_lower

m, mu = sp.symbols("m mu", positive=True)
z, q, qp, x, eps = sp.symbols("z q q' x epsilon", real=True)


def show(label: str, expr: sp.Expr) -> None:
    print(f"{label}: $${sp.latex(expr)}$$")


def Phi(t: sp.Expr) -> sp.Expr:
    """Standard normal CDF."""
    return (1 + sp.erf(t / sp.sqrt(2))) / 2


# ------------------------------------------------------------------ the log-ratio is linear
dphi = sp.diff(sp.exp(m * (z - 1)), z)
log_ratio = sp.expand_log(sp.log(dphi.subs(z, q)) - sp.log(dphi.subs(z, qp)), force=True)
assert sp.simplify(log_ratio - m * (q - qp)) == 0
show("phi'(z)", dphi)
show("log phi'(q) - log phi'(q')", sp.simplify(log_ratio))

# ------------------------------------------------------------------ sup of q - q' on the Gaussian boundary
gap = Phi(x) - Phi(x - mu)  # q - q'_min(q) with q = Phi(x)
critical = sp.solve(sp.Eq(sp.diff(gap, x), 0), x)
assert critical == [mu / 2], critical
second = sp.simplify(sp.diff(gap, x, 2).subs(x, mu / 2))
assert sp.simplify(second + mu * sp.exp(-(mu**2) / 8) / sp.sqrt(2 * sp.pi)) == 0  # < 0: a maximum
tv = sp.simplify(gap.subs(x, mu / 2))
assert sp.simplify(tv - sp.erf(mu / (2 * sp.sqrt(2)))) == 0
balle_wang = Phi(-eps / mu + mu / 2) - sp.exp(eps) * Phi(-eps / mu - mu / 2)  # Gaussian profile (Thm 8)
assert sp.simplify(balle_wang.subs(eps, 0) - tv) == 0
show("argmax of Phi(x) - Phi(x - mu)", critical[0])
show("TV = delta(0)", tv)
show("sup over the f-DP region of log phi'(q) - log phi'(q')", m * tv)

# ------------------------------------------------------------------ Cor 5.8 is optimal at eps1 = 0
d_delta = sp.simplify(sp.diff(balle_wang, eps))
assert sp.simplify(d_delta + sp.exp(eps) * Phi(-eps / mu - mu / 2)) == 0
slope = sp.simplify(sp.diff(sp.exp(eps) + balle_wang, eps))
assert sp.simplify(slope - sp.exp(eps) * (1 - Phi(-eps / mu - mu / 2))) == 0  # > 0 for every eps
show("d/d eps1 [e^eps1 + delta(eps1)]", sp.exp(eps) * (1 - Phi(-eps / mu - mu / 2)))
print("so min over eps1 >= 0 of m(e^eps1 - 1) + m delta(eps1) is m delta(0): paper = polygon = fdp for Poisson")

# ------------------------------------------------------------------ numerical checks against symsel
tv_fn = sp.lambdify(mu, tv, "math")
print("\n| mean | sigma | m * TV | certified sup (lower, upper) | paper | polygon | fdp |")
print("|---|---|---|---|---|---|---|")
for mean, sigma in ((10, 4.0), (30, 4.0), (100, 20.0), (3, 1.0)):
    law, base = poisson(mean), GaussianProfile(sigma)
    closed = mean * tv_fn(1.0 / sigma)
    cert = certified_log_sup(law.log_dphi, lambda t, s=sigma: gaussian_lower(t, 1.0 / s), tol=1e-10)
    methods = {meth: symsel.bound(law, base, meth).details["log_ratio"] for meth in ("paper", "polygon", "fdp")}
    print(f"| {mean} | {sigma} | {closed:.10f} | ({cert.lower:.10f}, {cert.upper:.10f}) | "
          + " | ".join(f"{methods[k]:.8f}" for k in ("paper", "polygon", "fdp")) + " |")
    assert cert.lower <= closed + 1e-9 * closed, "a boundary point exceeds m * TV"
    assert closed <= cert.upper, "certified supremum below m * TV"
    assert cert.upper - closed <= 1e-6 * closed
    assert math.isclose(base.delta(0.0), tv_fn(1.0 / sigma), rel_tol=1e-12)
    for meth, value in methods.items():
        assert value >= closed - 1e-12 * closed, f"{meth} below m * TV"
        assert value - closed <= 1e-5 * closed, f"{meth} not at m * TV: {value} vs {closed}"
print("\nOK: for Poisson K the f-DP ratio is m * delta(0), and the paper's Cor 5.8 attains it at eps1 = 0")
