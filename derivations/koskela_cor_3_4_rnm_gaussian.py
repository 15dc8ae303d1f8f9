"""Koskela, Redberg & Wang Cor 3.4, RNM, Gaussian noise: eps(delta) = mu^2/2 + mu sqrt(2 log(m/delta)), mu = 2/sigma.

Koskela, Redberg & Wang (ICML 2024), Corollary 3.4 and its proof (App. A.3), derived with SymPy: the privacy loss of
``N(Delta, sigma^2)`` against ``N(0, sigma^2)`` is ``omega ~ N(mu^2/2, mu^2)``, ``mu = Delta/sigma``; the
Gaussian profile is ``delta(eps) = P(omega >= eps) - e^eps P(omega' >= eps) <= P(omega >= eps)`` (Balle & Wang,
Lemma 3); Chernoff: ``P(omega >= eps) <= min_t exp(-t eps) E e^{t omega}``, minimized at ``t = (eps - mu^2/2)/mu^2``
(valid for ``eps >= mu^2/2``), gives ``exp(-(eps - mu^2/2)^2/(2 mu^2))``; with Theorem 3.2 (``m delta``) set equal to
``delta`` and solved for ``eps``. ``Delta = 2`` in general, ``1`` for monotone queries.

Checks: ``symsel.bounds.rnm.gaussian_tail_epsilon`` equals the 50-digit typed form on a grid of ``(m, sigma, delta)``
(1e-12 relative); it is never below the profile-based Theorem 3.2 value (the engine's
``report_noisy_max_bound(...).epsilon`` and
``symsel.evidence.examples.gaussian_rnm_bound``, an independent mpmath bisection),
and never below the exact worst case of the ``rnm`` example of
:mod:`symsel.evidence.examples` (exact RNM laws, 50 digits).

Run: ``python derivations/koskela_cor_3_4_rnm_gaussian.py`` (prints LaTeX; exits non-zero if an assertion fails).
"""

from __future__ import annotations

import mpmath
import sympy as sp

from symsel.bounds.rnm import gaussian_tail_epsilon, report_noisy_max_bound
from symsel.evidence.examples import gaussian_rnm_bound, get_example
from symsel.profiles import GaussianProfile

t, mu, m, delta, sigma = sp.symbols("t mu m delta sigma", positive=True)
eps, w = sp.symbols("varepsilon omega", real=True)
DPS = 50

# ------------------------------------------------------------------ Chernoff bound on the privacy loss
mean, var = mu**2 / 2, mu**2
mgf = sp.simplify(sp.integrate(sp.exp(t * w) * sp.exp(-((w - mean) ** 2) / (2 * var)) / sp.sqrt(2 * sp.pi * var),
                               (w, -sp.oo, sp.oo), conds="none"))
assert sp.simplify(mgf - sp.exp(t * mu**2 / 2 + t**2 * mu**2 / 2)) == 0, mgf
exponent = sp.expand(-t * eps + sp.log(sp.exp(t * mu**2 / 2 + t**2 * mu**2 / 2)), force=True)
(t_star,) = sp.solve(sp.diff(exponent, t), t)
assert sp.simplify(t_star - (eps - mu**2 / 2) / mu**2) == 0 and sp.diff(exponent, t, 2) == mu**2  # a minimum
chernoff = sp.simplify(exponent.subs(t, t_star))
assert sp.simplify(chernoff + (eps - mu**2 / 2) ** 2 / (2 * mu**2)) == 0
# ------------------------------------------------------------------ m exp(chernoff) = delta, solved for eps >= mu^2/2
roots = sp.solve(sp.Eq(sp.log(m) + chernoff, sp.log(delta)), eps)
closed = mu**2 / 2 + mu * sp.sqrt(2 * sp.log(m / delta))
assert any(sp.simplify(sp.expand_log(r - closed, force=True)) == 0 for r in roots), roots
print("$$" + r"\varepsilon(\delta) = " + sp.latex(closed) + r",\quad \mu = \tfrac{2}{\sigma}\ (\tfrac{1}{\sigma}"
      r"\text{ if monotone})$$")
print("$$" + r"\mu = 2/\sigma:\ \varepsilon = " + sp.latex(sp.expand(closed.subs(mu, 2 / sigma))) + "$$")

# ------------------------------------------------------------------ the engine
closed_fn = sp.lambdify((mu, m, delta), closed, "mpmath")
worst = 0.0
print("\n| m | sigma | delta | Cor 3.4 (typed, 50 digits) | gaussian_tail_epsilon | Thm 3.2 engine | Thm 3.2 mpmath |")
print("|---|---|---|---|---|---|---|")
for m_ in (3, 100, 10**5):
    for sigma_ in (1.0, 4.0):
        for delta_ in (1e-3, 1e-6, 1e-10):
            for monotone, sens in ((False, 2), (True, 1)):
                with mpmath.workdps(DPS):
                    ref = closed_fn(mpmath.mpf(sens) / mpmath.mpf(repr(sigma_)), m_, mpmath.mpf(repr(delta_)))
                tail = gaussian_tail_epsilon(m_, sigma_, delta_, monotone=monotone)
                profile = report_noisy_max_bound(m_, GaussianProfile(sigma_), monotone=monotone).epsilon(delta_)
                worst = max(worst, float(abs(tail - ref) / ref))
                assert profile <= tail, (m_, sigma_, delta_, monotone, profile, tail)
                if not monotone and delta_ == 1e-6:
                    bisect = gaussian_rnm_bound(m_, sens / sigma_, delta_)
                    assert abs(bisect - profile) <= 1e-7 * bisect and bisect <= tail
                    print(f"| {m_} | {sigma_} | {delta_:g} | {mpmath.nstr(ref, 15)} | {tail:.12f} | {profile:.8f} | "
                          f"{bisect:.8f} |")
assert worst < 1e-12, worst
print(f"gaussian_tail_epsilon vs the typed form: max rel. diff {worst:.1e} (36 points); always >= Theorem 3.2's value")

# ------------------------------------------------------------------ soundness against the exact RNM worst case
example = get_example("rnm")  # m = 3, sigma = 4, delta = 1e-6, values (1, 0, 0) vs (0, 1, 1)
exact = example.exact_epsilon(dps=DPS, delta=example.delta)
tail = gaussian_tail_epsilon(3, example.params["sigma"], example.delta)
print(f"rnm example (m = 3, sigma = 4, delta = 1e-6): exact eps {exact:.6f} <= Thm 3.2 {example.paper_bound:.6f} "
      f"<= Cor 3.4 {tail:.6f}")
assert exact <= example.paper_bound <= tail
print("OK: Corollary 3.4 (Chernoff) matches the engine and dominates Theorem 3.2 and the exact value")
