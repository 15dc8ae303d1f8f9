"""Utility of the selection (docs/utility.md; Papernot-Steinke §3.6 and A.2.1): the expected quantile of the best
run ``E[K/(K+1)] = 1 - int_0^1 phi(x) dx`` (P&S eq. 8), the success probability ``1 - phi(1 - 1/c)`` with one
good candidate among ``c``, and the Chernoff tail ``P[K >= k] <= phi(e^t) e^{-t k}`` (any ``t >= 0``; the
optimal ``t`` solves ``e^t phi'(e^t)/phi(e^t) = k`` where SymPy closes it). Checked at 50 digits against
brute-force sums of the engine's pmf (an independent computation) and the engine's own utility methods."""

from __future__ import annotations

from typing import Any

import mpmath
import sympy

from symsel.derive.common import CAND, DPS, KK, TT, engine_law, free_points, n50
from symsel.derive.record import Check, Expression
from symsel.distributions import Distribution, z

#: the brute-force pmf sums stop after this many terms (the mass left out is carried into the check's tolerance); a
#: pmf read off a series expansion of ``phi`` (no closed form, unbounded support) after ``SERIES_TERMS``: one
#: expansion to 32 terms (the engine's cache doubles), measured at most 0.4 s for Poisson, zero-truncated Poisson and
#: logarithmic laws and 3.7 s for exp(mu (z - 1)) (1 - p + p z), whose 64-term expansion took 29 s.
MAX_TERMS, SERIES_TERMS = 2000, 30


def utility(spec: str, phi: sympy.Expr, dist: Distribution | None, big: bool) -> tuple[dict[str, Any], list[Check]]:
    """The record's ``utility`` entry (:class:`Expression` values; ``expected_quantile_kind`` says ``closed form``
    or ``numeric``; ``tail_bound`` is ``phi(e^t) e^{-t k}``, a bound for every ``t >= 0``) and its checks. ``big``:
    the law is beyond the symbolic limits (:class:`~symsel.derive.common.LawSize`), so SymPy's integral and
    ``solve`` are not attempted."""
    quantile, quantile_kind = _expected_quantile(phi, dist, big)
    success = 1 - phi.subs(z, 1 - 1 / CAND)
    chernoff = phi.subs(z, sympy.exp(TT)) * sympy.exp(-TT * KK)
    t_opt = None if big else _optimal_t(phi)
    entry = {"expected_quantile": None if quantile is None else _expression(quantile),
             "expected_quantile_kind": quantile_kind, "success_probability": _expression(success),
             "tail_bound": _expression(chernoff), "tail_optimal_t": None if t_opt is None else Expression(t_opt)}
    return entry, _checks(spec, phi, dist, quantile, success, chernoff, t_opt)


def _expression(expr: Any) -> Expression:
    """An :class:`Expression`; LaTeX of 300 operations or more is not printed (the ``sympy`` form holds it)."""
    return Expression(expr, sympy.latex(expr) if sympy.count_ops(expr) < 300 else r"\text{(large expression)}")


def _expected_quantile(phi: sympy.Expr, dist: Distribution | None, big: bool) -> tuple[Any, str]:
    if not phi.free_symbols - {z} and phi.is_polynomial(z) and not phi.atoms(sympy.Float):
        antiderivative = sympy.Poly(phi, z).integrate()  # exact coefficients: sum_k p_k/(k + 1), any degree
        return 1 - antiderivative.eval(1) + antiderivative.eval(0), "closed form"
    if not big and not phi.atoms(sympy.Float):  # float coefficients: SymPy's integral keeps ~15 digits only
        integral = sympy.integrate(phi, (z, 0, 1))
        if not integral.has(sympy.Integral):
            return sympy.simplify(1 - integral) if sympy.count_ops(integral) < 200 else 1 - integral, "closed form"
    if phi.free_symbols - {z}:
        return None, "none"
    f = sympy.lambdify(z, phi, "mpmath")
    with mpmath.workdps(DPS + 10):
        return sympy.Float(1 - mpmath.quad(f, [0, 0.5, 0.9, 0.99, 0.999, 1]), DPS), "numeric (mpmath.quad, 50 digits)"


def _optimal_t(phi: sympy.Expr) -> sympy.Expr | None:
    """The ``t`` solving ``d/dt [log phi(e^t) - t k] = 0`` when SymPy finds exactly one real solution."""
    try:
        sols = sympy.solve(sympy.diff(sympy.log(phi.subs(z, sympy.exp(TT))) - TT * KK, TT), TT)
    except (NotImplementedError, ValueError):
        return None
    sols = [s for s in sols if s.is_real is not False]
    return sympy.simplify(sols[0]) if len(sols) == 1 else None


def _pmf_sums(law: Distribution, c: int, k: int) -> tuple[mpmath.mpf, mpmath.mpf, mpmath.mpf, mpmath.mpf]:
    """Brute force from the engine's pmf: ``sum p_j j/(j+1)``, ``1 - sum p_j (1-1/c)^j``, ``P[K >= k]`` (exact
    up to the mass left out, also returned)."""
    with mpmath.workdps(DPS + 10):
        quantile = power = below = mass = mpmath.mpf(0)
        x = 1 - mpmath.mpf(1) / c
        top = law.support_max if law.support_max is not None else (
            MAX_TERMS if law._pmf_closed is not None else SERIES_TERMS)
        for j in range(law.support_min, min(top, MAX_TERMS) + 1):
            p = law.pmf_mp(j, DPS + 10)
            quantile += p * j / (j + 1)
            power += p * x**j
            below += p if j < k else 0
            mass += p
            if 1 - mass < mpmath.mpf(10) ** -(DPS + 5):
                break
        return quantile, 1 - power, 1 - below, max(1 - mass, mpmath.mpf(0))


def _checks(spec: str, phi: sympy.Expr, dist: Distribution | None, quantile: Any, success: sympy.Expr,
            chernoff: sympy.Expr, t_opt: sympy.Expr | None) -> list[Check]:
    """Expected quantile and success probability against the pmf sums (tolerance: the mass left out) and the
    engine; the tail bound above the exact tail and, with the optimal ``t``, not above the engine's search."""
    worst_q = worst_s = 0.0
    ok_q = ok_s = ok_t = True
    tail_margin = float("inf")
    for point in free_points(phi)[:2]:
        law = engine_law(spec, phi, point, dist)
        c, k = 10, max(2, int(law.mean) * 3)
        if law.support_max is None and (law.mean > MAX_TERMS / 20 or (law._pmf_closed is None and law.mean > 5)):
            continue  # the pmf sum would need too many (or too slow, series-expanded) terms: the engine check below
        q_sum, success_sum, tail, left = _pmf_sums(law, c, k)
        tol = float(left) + 1e-40
        if quantile is not None:
            d = abs(float(n50(sympy.sympify(quantile).subs(point)) - sympy.Float(q_sum, DPS)))
            ok_q &= d <= tol
            worst_q = max(worst_q, d)
        d = abs(float(n50(success.subs(point).subs(CAND, c)) - sympy.Float(success_sum, DPS)))
        ok_s &= d <= tol
        worst_s = max(worst_s, d)
        if t_opt is not None:
            t_val = n50(t_opt.subs(point).subs(KK, k))
            if t_val.is_real and t_val >= 0:
                value = n50(chernoff.subs(point).subs({KK: k, TT: t_val}))
                ok_t &= float(value) >= float(tail) - 1e-40 and float(value) <= law.tail_bound(k) * (1 + 1e-9)
                tail_margin = min(tail_margin, float(value) - float(tail))
    checks = [Check("success probability 1 - phi(1 - 1/c) = 1 - sum_j p_j (1 - 1/c)^j (pmf sum, c = 10, 50 digits, "
                    "within the mass the sum leaves out)", "numeric-50", worst_s, ok_s)]
    if quantile is not None:
        checks.append(Check("expected quantile = sum_j p_j j/(j + 1) (pmf sum at 50 digits, within the mass the sum "
                            "leaves out)", "numeric-50", worst_q, ok_q))
        checks.append(_engine_quantile_check(spec, phi, dist, quantile))
    if t_opt is not None:
        checks.append(Check("Chernoff bound at the solved t is >= the exact tail P[K >= k] (pmf sum) and <= the "
                            "engine's tail_bound search (k = 3 E[K])", "numeric-50", tail_margin, ok_t))
    return checks


def _engine_quantile_check(spec: str, phi: sympy.Expr, dist: Distribution | None, quantile: Any) -> Check:
    worst = 0.0
    for point in free_points(phi):
        law = engine_law(spec, phi, point, dist)
        worst = max(worst, abs(float(n50(sympy.sympify(quantile).subs(point))
                                     - sympy.Float(law.expected_quantile_mp(DPS), DPS))))
    return Check("expected quantile = the engine's Distribution.expected_quantile_mp (50 digits)", "numeric-50",
                 worst, worst < 1e-30)
