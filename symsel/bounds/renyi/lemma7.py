"""Papernot & Steinke Lemma 7 for any PGF: a certified sup over the base's privacy region per order, filled
between orders by convexity."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from symsel.bounds.ratio import attained_log_sup, certified_log_sup
from symsel.bounds.renyi.curve import _REGIONS, SelectionCurve, _pure_loss, base_rdp_curve
from symsel.distributions import Distribution
from symsel.errors import ParameterError
from symsel.profiles import Profile
from symsel.profiles.base import check_order
from symsel.profiles.region import polygon_lower

# --------------------------------------------------------------------------- Lemma 7 (any PGF)


def lemma7_log_sup(
    dist: Distribution,
    boundary: Callable[[np.ndarray], float | np.ndarray],
    order: float,
    corner_slope: float | None = None,
    tol: float = 1e-7,
) -> float:
    """Certified upper bound on ``log sup_{q} φ'(q)^λ φ'(q'_min(q))^(1−λ)`` (P&S Lemma 7) for a
    non-decreasing boundary ``q'_min``; ``inf`` when no finite certificate exists.

    The refinement stops when the certificate is within ``tol · min(1, λ − 1)`` (relative) of the best
    attained value, so that the gap stays below ``tol`` after the division by ``λ − 1``."""
    lam = check_order(order, "lemma7_log_sup")
    log_dphi = dist.log_dphi  # log space, with an mpmath fallback where float64 underflows
    if math.isinf(lam):
        cert = certified_log_sup(log_dphi, boundary, weights=(1.0, 1.0), corner_slope=corner_slope, tol=tol)
    else:
        cert = certified_log_sup(
            log_dphi, boundary, weights=(lam, lam - 1.0), corner_slope=corner_slope, tol=tol * min(1.0, lam - 1.0)
        )
    return cert.upper


#: Lemma 7 orders evaluated first (evenly spread over the grid's indices) before adaptive refinement.
LEMMA7_COARSE_ORDERS = 16
#: refinement stops when the chord's possible excess, divided by ``λ − 1``, is below this at every order.
LEMMA7_CHORD_TOL = 1e-5


def convex_upper_fill(orders: np.ndarray, upper: Callable[[float], float],
                      tol: float = LEMMA7_CHORD_TOL, coarse: int = LEMMA7_COARSE_ORDERS) -> np.ndarray:
    """Certified upper values of a convex function ``f`` of the order at every one of the sorted ``orders``,
    calling ``upper`` (a certified upper bound of ``f`` at one order) only where needed.

    ``f(λ) = log sup_q φ'(q)^λ φ'(q')^(1−λ) = sup_q [log φ'(q') + λ (log φ'(q) − log φ'(q'))]`` is a supremum of
    affine functions of ``λ``, hence convex (P&S Lemma 7's term, per boundary). Between two evaluated orders the
    chord of the certified values lies above ``f``, so it is itself a certified value. The chord replaces an
    evaluation where the secants of the neighbouring intervals (extended, a convexity-based estimate of ``f``
    from below) show that it exceeds ``f`` by less than ``tol · (λ − 1)``; elsewhere the middle order of the
    interval is evaluated. Infinite values are never interpolated."""
    n = orders.size
    values: dict[int, float] = {}

    def evaluate(i: int) -> None:
        if i not in values:
            values[i] = float(upper(float(orders[i])))

    for i in np.unique(np.linspace(0, n - 1, min(n, coarse)).round().astype(int)):
        evaluate(int(i))
    while True:
        known = sorted(values)
        todo = []
        for pos in range(len(known) - 1):
            i, j = known[pos], known[pos + 1]
            if j - i < 2:
                continue
            fi, fj = values[i], values[j]
            if not (math.isfinite(fi) and math.isfinite(fj)):
                todo.append((i + j) // 2)
                continue
            inner = orders[i + 1 : j]
            chord = fi + (fj - fi) * (inner - orders[i]) / (orders[j] - orders[i])
            below = np.full(inner.shape, -np.inf)
            neighbours = []
            if pos > 0:
                neighbours.append((known[pos - 1], i))
            if pos + 2 < len(known):
                neighbours.append((j, known[pos + 2]))
            for a, b in neighbours:
                if not (math.isfinite(values[a]) and math.isfinite(values[b])):
                    continue
                slope = (values[b] - values[a]) / (orders[b] - orders[a])
                below = np.maximum(below, values[b] + slope * (inner - orders[b]))
            if np.any((chord - below) > tol * (inner - 1.0)):
                todo.append((i + j) // 2)
        if not todo:
            break
        for i in todo:
            evaluate(i)
    known = sorted(values)
    out = np.interp(orders, orders[known], [values[i] for i in known])
    for pos in range(len(known) - 1):  # no interpolation next to an infinite value
        i, j = known[pos], known[pos + 1]
        if not (math.isfinite(values[i]) and math.isfinite(values[j])):
            out[i + 1 : j] = np.inf
    for i in known:
        out[i] = values[i]
    return out


def _lemma7(
    dist: Distribution, base: Profile, grid: np.ndarray, region: str, eps_hat_grid: Sequence[float] | np.ndarray | None
) -> SelectionCurve:
    if region not in _REGIONS:
        raise ParameterError("region", region, "one of " + ", ".join(map(repr, _REGIONS)), "renyi")
    loss = _pure_loss(base)
    boundaries: list[tuple[Callable[[np.ndarray], float | np.ndarray], float | None, float | None]]
    if region == "profile":
        boundaries = [(base.region_lower, math.exp(-loss) if loss is not None else None, None)]
    else:
        if eps_hat_grid is None:
            top = base.epsilon(1e-12)
            top = 20.0 if not math.isfinite(top) else max(top, 1e-3)
            eps_hat_grid = np.linspace(0.0, top, 17)
        boundaries = []
        for e1 in np.asarray(list(eps_hat_grid), dtype=float):
            if not (e1 >= 0 and math.isfinite(e1)):
                raise ParameterError("eps_hat_grid", float(e1), "finite eps_hat >= 0", "renyi")
            d1 = float(base.delta(float(e1)))
            corner = math.exp(-e1) if d1 == 0 else None
            boundaries.append(((lambda q, e1=e1, d1=d1: polygon_lower(q, e1, d1)), corner, float(e1)))  # type: ignore[misc]  # a lambda with default arguments

    def raw(lam: np.ndarray) -> np.ndarray:
        lam = np.atleast_1d(np.asarray(lam, dtype=float))
        order = np.argsort(lam)
        sorted_lam = lam[order]
        rdp = base_rdp_curve(base, sorted_lam)
        sup = np.full(sorted_lam.shape, np.inf)
        for b, c, _ in boundaries:
            sup = np.minimum(sup, convex_upper_fill(sorted_lam, lambda x, b=b, c=c: lemma7_log_sup(dist, b, x, c)))  # type: ignore[misc]  # a lambda with default arguments
        out = np.empty(lam.shape)
        with np.errstate(invalid="ignore"):
            out[order] = np.where(np.isfinite(rdp), rdp + sup / (sorted_lam - 1.0), np.inf)
        return out

    def raw_floor(lam: np.ndarray) -> np.ndarray:
        lam = np.atleast_1d(np.asarray(lam, dtype=float))
        rdp = base_rdp_curve(base, lam)
        attained = np.min([attained_log_sup(dist.log_dphi, b, lam, lam - 1.0) for b, _, _ in boundaries], axis=0)
        with np.errstate(invalid="ignore"):
            return np.where(np.isfinite(rdp), rdp + attained / (lam - 1.0), np.inf)

    pure_eps = None
    if loss is not None:
        pure_eps = loss + min(lemma7_log_sup(dist, b, math.inf, c) for b, c, _ in boundaries)
        pure_eps = pure_eps if math.isfinite(pure_eps) else None
    details = {"region": region, "eps_hat_grid": [e for _, _, e in boundaries if e is not None]}
    theorem = f"Papernot-Steinke Lemma 7 (region: {region})"
    floor = SelectionCurve(f"a floor of {theorem}", raw_floor, grid, pure_eps)
    return SelectionCurve(theorem, raw, grid, pure_eps, details, floor=floor)
