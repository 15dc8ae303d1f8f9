"""Exact output law of private selection on a finite pair, and exact divergences of finite laws.

A base mechanism with finitely many outputs is described, for one pair of neighbouring inputs, by
a :class:`FinitePair` ``(Q, Q')`` and a score order. The selection ``A`` draws ``K``, runs the
base mechanism ``K`` times and releases the best output (``⊥`` when ``K = 0``). Its law is
(Papernot & Steinke, ICLR 2022, proof of Lemma 7; Xiang, Wang & Wang, Theorem 2)

    A(y) = phi(Q(<= y)) - phi(Q(< y)),    A(⊥) = phi(0),

with ``phi`` the PGF of ``K``. The difference cancels catastrophically when ``Q(y)`` is tiny, so the
mpmath path raises its working precision until two evaluations at different precisions agree to
the requested number of digits; the float64 path switches to the integral form
``Q(y) * int_0^1 phi'(Q(<y) + t Q(y)) dt`` (Gauss-Legendre) wherever the difference would cancel.

Divergences of two finite laws are exact: the hockey-stick divergence at any real ``eps``, the
two-sided privacy profile, the smallest ``eps >= 0`` for a given ``delta`` (closed form on the right
linear piece of the convex, piecewise ``sum_S (P_y - e^eps R_y)`` profile: no root finding), and
Rényi divergences of any order ``lambda > 1`` including ``lambda = inf``.

Ties in the score are not modelled separately: the score order is a total order (a permutation
of the outcomes, lowest score first). A fixed, data-independent tie-breaking rule is exactly such a
total order, so this loses no generality (Xiang et al., Theorem 3: breaking ties at random can
only make the selection more private).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import mpmath
import numpy as np

from symsel import validate
from symsel.errors import ParameterError
from symsel.pairs.finite import (
    DEFAULT_DPS,
    FinitePair,
    check_masses,
    check_order,
    masses_mp,
    normalized_float,
    to_mpf,
)

_GAUSS_NODES = 24
_CANCELLATION_SWITCH = 1e-2
_MAX_PRECISION_ROUNDS = 8


# --------------------------------------------------------------------- selection law (mpmath)
def _law_at(masses: list[mpmath.mpf], order: tuple[int, ...], dist: Any, dps: int) -> list[mpmath.mpf]:
    """``phi(F(<=y)) - phi(F(<y))`` at working precision ``dps`` (no precision control)."""
    out = [mpmath.mpf(0)] * len(masses)
    with mpmath.workdps(dps):
        cum = mpmath.mpf(0)
        phi_lo = dist.p0_mp(dps)
        for idx in order:
            m = masses[idx]
            if m == 0:
                continue
            cum = cum + m
            phi_hi = dist.phi_mp(min(cum, mpmath.mpf(1)), dps)
            out[idx] = phi_hi - phi_lo
            phi_lo = phi_hi
    return out


def _close(a: list[mpmath.mpf], b: list[mpmath.mpf], digits: int) -> bool:
    tol = mpmath.mpf(10) ** (-digits)
    for x, y in zip(a, b, strict=True):
        if x == y:
            continue
        if y <= 0 or x <= 0:
            return False
        if abs(x - y) > tol * abs(y):
            return False
    return True


def selection_law(pmf: Sequence[Any], order: Sequence[int] | None, dist: Any,
                  dps: int = DEFAULT_DPS) -> list[mpmath.mpf]:
    """Exact law of the selection ``A`` for one side of a pair (Xiang et al., Theorem 2).

    Args:
        pmf: masses of the base output distribution on ``n`` outcomes.
        order: score order (a permutation, lowest score first); ``None`` for ``0..n-1``.
        dist: the :class:`~symsel.distributions.Distribution` of ``K``.
        dps: decimal digits of the result.

    Returns:
        ``n + 1`` mpmath numbers: ``A(y)`` for each outcome in the input's index order, then
        ``A(⊥) = phi(0)``. Each entry is correct to ``dps`` significant digits: the working
        precision is raised until two evaluations at different precisions agree.
    """
    vals = check_masses(pmf, "pmf", "selection_law")
    perm = check_order(order, len(vals), "selection_law")
    dps = validate.dps(dps, "selection_law")
    # a mass m added to a cumulative sum near 1 needs log10(1/m) more digits to be resolved
    smallest = min((v for v in masses_mp(vals, 30) if v > 0), default=mpmath.mpf(1))
    work = dps + 15 + max(0, int(-mpmath.log10(smallest)))
    previous: list[mpmath.mpf] | None = None
    for _ in range(_MAX_PRECISION_ROUNDS):
        masses = masses_mp(vals, work + 10)
        law = _law_at(masses, perm, dist, work)
        if previous is not None and _close(previous, law, dps + 3):
            break
        previous = law
        work = 2 * work
    else:  # pragma: no cover - would need a PGF losing over 2^8 * dps digits
        raise ArithmeticError("selection_law: the working precision did not stabilize")
    with mpmath.workdps(dps):
        return [+v for v in law] + [+dist.p0_mp(dps)]


def selection_laws(pair: FinitePair, dist: Any, dps: int = DEFAULT_DPS) -> tuple[list[mpmath.mpf], list[mpmath.mpf]]:
    """The selection laws ``(A, A')`` of both sides of ``pair`` (each with ``⊥`` last)."""
    return selection_law(pair.p, pair.order, dist, dps), selection_law(pair.q, pair.order, dist, dps)


# --------------------------------------------------------------------- selection law (float64)
_GL_T, _GL_W = np.polynomial.legendre.leggauss(_GAUSS_NODES)
_GL_T = 0.5 * (_GL_T + 1.0)
_GL_W = 0.5 * _GL_W


def selection_law_float(pmf: Sequence[float] | np.ndarray, order: Sequence[int] | None, dist: Any,
                        check: bool = True) -> np.ndarray:
    """Float64 version of :func:`selection_law` (``n + 1`` entries, ``⊥`` last).

    Where ``phi(F(<=y)) - phi(F(<y))`` would lose more than two digits, the integral form
    ``Q(y) int_0^1 phi'(F(<y) + t Q(y)) dt`` is used (24-point Gauss-Legendre): when the
    difference cancels, ``phi'`` is nearly constant on the short interval and the quadrature is
    accurate to machine precision.
    """
    if check:
        pmf = normalized_float(check_masses(pmf, "pmf", "selection_law_float"))
        perm = np.asarray(check_order(order, len(pmf), "selection_law_float"))
    else:
        pmf = np.asarray(pmf, dtype=float)
        perm = np.arange(len(pmf)) if order is None else np.asarray(order)
    s = pmf[perm]
    hi = np.minimum(np.cumsum(s), 1.0)
    lo = np.concatenate(([0.0], hi[:-1]))
    phi_hi = dist.phi(hi)
    phi_lo = dist.phi(lo)
    diff = phi_hi - phi_lo
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(phi_hi > 0, diff / phi_hi, 0.0)
    bad = (rel < _CANCELLATION_SWITCH) & (s > 0)
    if np.any(bad):
        x = lo[bad][:, None] + _GL_T[None, :] * s[bad][:, None]
        diff[bad] = s[bad] * (dist.dphi(x) @ _GL_W)
    diff = np.where(s > 0, np.maximum(diff, 0.0), 0.0)
    out = np.empty(len(pmf) + 1)
    out[perm] = diff
    out[-1] = dist.p0
    return out


# --------------------------------------------------------------------- divergences (mpmath)
def _pair_of_laws(p: Sequence[Any], r: Sequence[Any], dps: int, where: str) -> tuple[list, list]:
    pv = check_masses(p, "p", where)
    rv = check_masses(r, "r", where)
    if len(pv) != len(rv):
        raise ParameterError("r", f"length {len(rv)}", f"the same length as p ({len(pv)})", where)
    return masses_mp(pv, dps, "p", where), masses_mp(rv, dps, "r", where)


def _check_delta(delta: Any, where: str) -> None:
    try:
        d = float(delta)
    except (TypeError, ValueError):
        raise ParameterError("delta", delta, "a number 0 <= delta <= 1", where) from None
    if isinstance(delta, bool) or not 0 <= d <= 1:
        raise ParameterError("delta", delta, "a number 0 <= delta <= 1", where)


def hockey_stick(p: Sequence[Any], r: Sequence[Any], eps: Any, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """``H_{e^eps}(P || R) = sum_y [P(y) - e^eps R(y)]_+`` at ``dps`` digits, any real ``eps``."""
    dps = validate.dps(dps, "hockey_stick")
    pv, rv = _pair_of_laws(p, r, dps + 10, "hockey_stick")
    with mpmath.workdps(dps + 10):
        e = mpmath.exp(to_mpf(eps, dps + 10, "eps", "hockey_stick"))
        total = mpmath.fsum(max(a - e * b, 0) for a, b in zip(pv, rv, strict=True))
    with mpmath.workdps(dps):
        return +total


def profile_delta(p: Sequence[Any], r: Sequence[Any], eps: Any, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """Two-sided privacy profile ``max(H_{e^eps}(P||R), H_{e^eps}(R||P))``."""
    return max(hockey_stick(p, r, eps, dps), hockey_stick(r, p, eps, dps))


def _epsilon_one_side(p: Sequence[Any], r: Sequence[Any], delta: Any, log: Callable,
                      inf: Any) -> Any:
    """Smallest ``eps >= 0`` with ``H_{e^eps}(P||R) <= delta`` (exact, piecewise closed form).

    ``H(eps) = sum_{L_y > eps} (P_y - e^eps R_y)`` with ``L_y = log(P_y/R_y)``; between consecutive
    breakpoints ``L_y`` the set is fixed and ``H(eps) = P_S - e^eps R_S`` is solved in closed form.
    """
    inf_mass = sum((a for a, b in zip(p, r, strict=True) if a > 0 and b == 0), start=0 * delta)
    if inf_mass > delta:
        return inf
    pts = sorted(((log(a) - log(b), a, b) for a, b in zip(p, r, strict=True) if a > 0 and b > 0),
                 key=lambda t: t[0], reverse=True)
    p_s, r_s = inf_mass, 0 * delta
    i = 0
    while i < len(pts):
        level = pts[i][0]
        if p_s > delta and (r_s == 0 or level < log((p_s - delta) / r_s)):  # p_s − e^level r_s > δ, no overflow
            break
        while i < len(pts) and pts[i][0] == level:
            p_s += pts[i][1]
            r_s += pts[i][2]
            i += 1
    if r_s == 0 or p_s <= delta:
        return 0 * delta
    return max(0 * delta, log((p_s - delta) / r_s))


def epsilon_for_delta(p: Sequence[Any], r: Sequence[Any], delta: Any, dps: int = DEFAULT_DPS,
                      two_sided: bool = True) -> mpmath.mpf:
    """Smallest ``eps >= 0`` with ``max(H_{e^eps}(P||R), H_{e^eps}(R||P)) <= delta`` (exact).

    ``delta = 0`` gives the largest log-ratio (``inf`` when some ``R_y = 0 < P_y``). With
    ``two_sided=False`` only ``H(P||R)`` is used.
    """
    where = "epsilon_for_delta"
    dps = validate.dps(dps, where)
    _check_delta(delta, where)
    pv, rv = _pair_of_laws(p, r, dps + 10, where)
    with mpmath.workdps(dps + 10):
        d = to_mpf(delta, dps + 10, "delta", where)
        eps = _epsilon_one_side(pv, rv, d, mpmath.log, mpmath.inf)
        if two_sided:
            eps = max(eps, _epsilon_one_side(rv, pv, d, mpmath.log, mpmath.inf))
    with mpmath.workdps(dps):
        return +eps


def _renyi_order(order: Any, where: str) -> Any:
    if isinstance(order, str) and order.strip().lower() in {"inf", "infinity", "oo"}:
        return math.inf
    try:
        lam = float(order)
    except (TypeError, ValueError):
        raise ParameterError("order", order, "a Rényi order lambda > 1 or inf", where) from None
    if isinstance(order, bool) or not lam > 1:
        raise ParameterError("order", order, "a Rényi order lambda > 1 or inf", where)
    return math.inf if math.isinf(lam) else order


def renyi(p: Sequence[Any], r: Sequence[Any], order: Any, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """Rényi divergence ``D_lambda(P||R) = log(sum P^lambda R^(1-lambda)) / (lambda - 1)``;
    ``order = inf`` gives ``log max_y P(y)/R(y)``."""
    where = "renyi"
    dps = validate.dps(dps, where)
    lam = _renyi_order(order, where)
    pv, rv = _pair_of_laws(p, r, dps + 10, where)
    with mpmath.workdps(dps + 10):
        if any(a > 0 and b == 0 for a, b in zip(pv, rv, strict=True)):
            return mpmath.inf
        if lam == math.inf:
            value = max(mpmath.log(a) - mpmath.log(b) for a, b in zip(pv, rv, strict=True) if a > 0)
        else:
            lm = to_mpf(lam, dps + 10, "order", where)
            total = mpmath.fsum(mpmath.exp(lm * mpmath.log(a) + (1 - lm) * mpmath.log(b))
                                for a, b in zip(pv, rv, strict=True) if a > 0)
            value = mpmath.log(total) / (lm - 1)
    with mpmath.workdps(dps):
        return +value


# --------------------------------------------------------------------- divergences (float64)
def _pair_float(p: Any, r: Any, where: str) -> tuple[np.ndarray, np.ndarray]:
    pa = np.asarray(p, dtype=float)
    ra = np.asarray(r, dtype=float)
    if pa.shape != ra.shape or pa.ndim != 1:
        raise ParameterError("r", f"shape {ra.shape}", f"the shape of p {pa.shape}", where)
    if np.any(pa < 0) or np.any(ra < 0) or not np.all(np.isfinite(pa)) or not np.all(np.isfinite(ra)):
        raise ParameterError("p", "negative or non-finite mass", "non-negative finite masses", where)
    return pa, ra


def hockey_stick_float(p: Any, r: Any, eps: float) -> float:
    """Float64 version of :func:`hockey_stick`."""
    pa, ra = _pair_float(p, r, "hockey_stick_float")
    return float(np.sum(np.maximum(pa - math.exp(eps) * ra, 0.0)))


def profile_delta_float(p: Any, r: Any, eps: float) -> float:
    """Float64 version of :func:`profile_delta`."""
    return max(hockey_stick_float(p, r, eps), hockey_stick_float(r, p, eps))


def epsilon_for_delta_float(p: Any, r: Any, delta: float, two_sided: bool = True) -> float:
    """Float64 version of :func:`epsilon_for_delta` (same closed form)."""
    _check_delta(delta, "epsilon_for_delta_float")
    pa, ra = _pair_float(p, r, "epsilon_for_delta_float")
    pl, rl = pa.tolist(), ra.tolist()
    d = float(delta)
    eps = _epsilon_one_side(pl, rl, d, _safe_log, math.inf)
    if two_sided:
        eps = max(eps, _epsilon_one_side(rl, pl, d, _safe_log, math.inf))
    return float(eps)


def _safe_log(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


def renyi_float(p: Any, r: Any, order: Any) -> float:
    """Float64 version of :func:`renyi` (log-sum-exp)."""
    lam = _renyi_order(order, "renyi_float")
    pa, ra = _pair_float(p, r, "renyi_float")
    pos = pa > 0
    if np.any(pos & (ra == 0)):
        return math.inf
    lp, lr = np.log(pa[pos]), np.log(ra[pos])
    if lam == math.inf:
        return float(np.max(lp - lr))
    lam = float(lam)
    terms = lam * lp + (1 - lam) * lr
    top = float(np.max(terms))
    return (top + math.log(float(np.sum(np.exp(terms - top))))) / (lam - 1)


# --------------------------------------------------------------------- conveniences
def selection_epsilon(pair: FinitePair, dist: Any, delta: Any, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """Exact ``eps(delta)`` of the selection on ``pair`` (two-sided: max over ``(A, A')`` and
    ``(A', A)``), at ``dps`` digits."""
    a, b = selection_laws(pair, dist, dps + 10)
    return epsilon_for_delta(a, b, delta, dps)


def selection_delta(pair: FinitePair, dist: Any, eps: Any, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """Exact two-sided profile ``delta(eps)`` of the selection on ``pair``, any real ``eps``."""
    a, b = selection_laws(pair, dist, dps + 10)
    return profile_delta(a, b, eps, dps)


def selection_renyi(pair: FinitePair, dist: Any, order: Any, dps: int = DEFAULT_DPS,
                    two_sided: bool = True) -> mpmath.mpf:
    """Exact Rényi divergence of the selection on ``pair`` (max of both directions by default)."""
    a, b = selection_laws(pair, dist, dps + 10)
    value = renyi(a, b, order, dps)
    return max(value, renyi(b, a, order, dps)) if two_sided else value


def selection_epsilon_float(pair: FinitePair, dist: Any, delta: float) -> float:
    """Float64 version of :func:`selection_epsilon`."""
    a = selection_law_float(pair.p_float, pair.order, dist, check=False)
    b = selection_law_float(pair.q_float, pair.order, dist, check=False)
    return epsilon_for_delta_float(a, b, delta)
