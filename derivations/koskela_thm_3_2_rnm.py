"""Koskela, Redberg & Wang Thm 3.2, Report Noisy Max: H_{e^eps} <= m delta_Delta(eps), Delta = 2 (1 if monotone).

Koskela, Redberg & Wang (ICML 2024), Theorem 3.2 (docs/rnm.md), for Gaussian noise ``N(0, sigma^2)``. Derived here
with SymPy: the profile of the additive Gaussian mechanism at sensitivity ``Delta`` is the hockey-stick integral
``int [p(x - Delta) - e^eps p(x)]_+ dx``; the bracket is positive beyond the root ``x0`` of the log density ratio
(``(2 Delta x - Delta^2)/(2 sigma^2) = eps``), and the integral from ``x0`` is
``delta_Delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)``, ``mu = Delta/sigma`` (symbolic equality).

Checks: ``symsel.bounds.rnm.report_noisy_max_bound(m, gaussian)`` has ``delta(eps) = min(1, m delta_2(eps))``
(``delta_1`` when monotone) against the 50-digit typed form on a grid of ``(m, sigma, eps)``; and the bound lies above
the exact hockey-stick divergence of exact RNM laws (``symsel.evidence.examples.report_noisy_max_law``, 50 digits) for
``m = 3`` query vectors (general and monotone neighbours), in both directions, on a grid of ``eps``.

Run: ``python derivations/koskela_thm_3_2_rnm.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import mpmath
import sympy as sp

from symsel.bounds.rnm import report_noisy_max_bound
from symsel.evidence.exact import hockey_stick
from symsel.evidence.examples import report_noisy_max_law
from symsel.profiles import GaussianProfile

x = sp.Symbol("x", real=True)
eps = sp.Symbol("varepsilon", real=True)
sigma, big_delta, m = sp.symbols("sigma Delta m", positive=True)
DPS = 50


def Phi(t: sp.Expr) -> sp.Expr:
    """Standard normal CDF."""
    return (1 + sp.erf(t / sp.sqrt(2))) / 2


def density(t: sp.Expr) -> sp.Expr:
    """``N(0, sigma^2)`` density."""
    return sp.exp(-(t**2) / (2 * sigma**2)) / (sigma * sp.sqrt(2 * sp.pi))


# ------------------------------------------------------------------ the additive Gaussian profile at sensitivity Delta
log_ratio = sp.expand(sp.log(density(x - big_delta)) - sp.log(density(x)), force=True)
assert sp.simplify(log_ratio - (2 * big_delta * x - big_delta**2) / (2 * sigma**2)) == 0
(x0,) = sp.solve(sp.Eq(log_ratio, eps), x)  # the ratio increases in x: the bracket is positive beyond x0
integral = sp.integrate(density(x - big_delta), (x, x0, sp.oo)) - sp.exp(eps) * sp.integrate(density(x), (x, x0, sp.oo))
mu = big_delta / sigma
profile = Phi(mu / 2 - eps / mu) - sp.exp(eps) * Phi(-mu / 2 - eps / mu)
assert sp.simplify(sp.expand(integral - profile)) == 0, sp.simplify(integral - profile)
print("$$" + r"H_{e^\varepsilon}(M(X)\|M(X')) \le m\,\delta_\Delta(\varepsilon),\quad \delta_\Delta(\varepsilon) = "
      + sp.latex(profile) + "$$")

# ------------------------------------------------------------------ the engine against the typed form
delta_fn = sp.lambdify((eps, big_delta, sigma), profile, "mpmath")


def typed_bound(m_: int, sens: int, sigma_: float, eps_: float) -> mpmath.mpf:
    """``min(1, m delta_Delta(eps))`` at 50 digits (Theorem 3.2 as typed)."""
    with mpmath.workdps(DPS):
        return min(mpmath.mpf(1), m_ * delta_fn(mpmath.mpf(repr(eps_)), sens, mpmath.mpf(repr(sigma_))))


worst = 0.0
for m_ in (2, 10, 1000):
    for sigma_ in (0.7, 4.0):
        for monotone, sens in ((False, 2), (True, 1)):
            engine = report_noisy_max_bound(m_, GaussianProfile(sigma_), monotone=monotone)
            for eps_ in (0.0, 0.3, 1.0, 3.0, 8.0):
                ref = typed_bound(m_, sens, sigma_, eps_)
                got = float(engine.delta(eps_))
                if ref > 1e-300:
                    worst = max(worst, float(abs(got - ref) / ref))
assert worst < 1e-10, worst
print(f"report_noisy_max_bound(m, gaussian(sigma)).delta vs the 50-digit typed form (m = 2, 10, 1000; sigma = 0.7, 4; "
      f"both sensitivities; 5 eps): max rel. diff {worst:.1e}")

# ------------------------------------------------------------------ soundness: exact RNM laws (m = 3)
SIGMA = 4.0  # the paper's Figure 1
PAIRS = (  # (values on X, values on X', monotone?)
    ((1.0, 0.0, 0.0), (0.0, 1.0, 1.0), False),
    ((1.0, 0.0, 0.0), (1.0, 1.0, 1.0), True),
)
print("\n| X | X' | monotone | eps | exact H (both directions, max) | 3 delta_Delta(eps) |")
print("|---|---|---|---|---|---|")
for vx, vxp, monotone in PAIRS:
    a, b = report_noisy_max_law(vx, SIGMA, DPS), report_noisy_max_law(vxp, SIGMA, DPS)
    bound = report_noisy_max_bound(3, GaussianProfile(SIGMA), monotone=monotone)
    for eps_ in (0.0, 0.1, 0.25, 0.5, 1.0):
        exact = max(hockey_stick(a, b, eps_, DPS), hockey_stick(b, a, eps_, DPS))
        ours = typed_bound(3, 1 if monotone else 2, SIGMA, eps_)
        print(f"| {vx} | {vxp} | {monotone} | {eps_} | {mpmath.nstr(exact, 10)} | {mpmath.nstr(ours, 10)} |")
        assert exact <= ours and exact <= float(bound.delta(eps_)) * (1 + 1e-12), (vx, vxp, eps_, exact, ours)
print("OK: Theorem 3.2's m delta_Delta(eps) (Gaussian profile derived by SymPy) is the engine's RNM profile, sound on "
      "exact RNM laws")
