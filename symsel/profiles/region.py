"""Privacy regions: lower boundaries, envelopes of (ε, δ) constraints, finite dominating pairs.

For a pair of distributions ``(P, P')`` the privacy region is ``{(E_P g, E_P' g) : g : Y → [0, 1]}``
(docs/setting.md; Kairouz, Oh, Viswanath, *The Composition Theorem for Differential Privacy*,
ICML 2015; Dong, Roth, Su, *Gaussian Differential Privacy*, JRSS-B 2022). Everything here is about
its lower-right boundary ``q ↦ q'_min(q)`` -- the smallest ``P'``-probability of a test whose
``P``-probability is ``q`` -- and the conversions between a boundary and a privacy profile:

* the exact boundary of one ``(ε1, δ1)`` polygon (:func:`polygon_lower`, :func:`polygon_vertices`);
* the upper envelope of any finite set of such constraints (:class:`LinesEnvelope`), which is the
  exact boundary of a ``pointwise`` profile and the conservative boundary of any profile known on a
  finite grid of ``ε1`` (:func:`fdp_lower_from_profile`);
* the Neyman--Pearson boundary of a finite pair (:func:`neyman_pearson_vertices`) and its hockey-stick
  divergence by direct summation (:func:`finite_pair_hockey_stick`);
* the closed forms for location families: Gaussian ``Φ(Φ⁻¹(q) − μ)`` (Dong--Roth--Su, eq. for
  ``G_μ``) and Laplace.

All functions are pure. float64 versions are vectorized over ``q`` (scalar in, Python float out);
``*_mp`` versions evaluate one point at ``dps`` decimal digits inside ``mpmath.workdps``.
Approximations (finite grids of ``ε1``, hull construction) err on the side of a *smaller* ``q'_min``
(a larger region), the conservative side for every bound that takes a supremum over the region;
plain float rounding remains, at a few ulps times the local slope -- use the ``*_mp`` versions where
that matters.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

import mpmath
import numpy as np
from scipy import special

from symsel import validate
from symsel.errors import ParameterError

if TYPE_CHECKING:  # pragma: no cover
    from symsel.profiles.base import Profile

ArrayLike = float | int | Sequence[float] | np.ndarray

# --------------------------------------------------------------------------- input checks


def as_float_array(
    x: Any, name: str, where: str | None = None, *, lo: float = -math.inf, hi: float = math.inf
) -> tuple[np.ndarray, bool]:
    """``x`` as a float64 array (and whether it was a scalar); NaN, values outside ``[lo, hi]`` and anything not
    a real number (strings, which numpy would parse, booleans, complex numbers) raise."""
    if not _real_like(x):
        raise ParameterError(name, x, f"a real number or array of reals in [{lo}, {hi}]", where)
    try:
        arr = np.asarray(x, dtype=float)
    except OverflowError:  # an integer beyond float range, e.g. 10**400: rounded toward zero, then range-checked
        items = np.asarray(x, dtype=object)
        arr = np.array([validate.to_float(v) for v in items.flat], dtype=float).reshape(items.shape)
    except (TypeError, ValueError):
        raise ParameterError(name, x, f"a real number or array of reals in [{lo}, {hi}]", where) from None
    bad = np.isnan(arr) | (arr < lo) | (arr > hi)
    if bad.any():
        value = arr[bad].flat[0] if arr.ndim else float(arr)
        raise ParameterError(name, float(value), f"a real number in [{lo}, {hi}] (not NaN)", where)
    return arr, arr.ndim == 0


#: numpy dtype kinds of real numbers (signed, unsigned integers and floats): strings (``U``, ``S``), booleans (``b``),
#: complex numbers (``c``), dates (``M``, ``m``) and raw bytes (``V``) are not reals, whatever numpy makes of them.
_REAL_KINDS = "iuf"


def _real_like(x: Any) -> bool:
    """Whether ``x`` is a real number or a (nested) sequence/array of them: numpy parses ``"1e-6"`` as a float and
    takes ``True`` as 1; neither is accepted where a real (``ε``, ``δ``, ``q``, …) is expected."""
    if isinstance(x, str | bytes | bool | np.bool_ | complex | np.complexfloating):
        return False
    if isinstance(x, np.ndarray | np.generic):
        if x.dtype.kind == "O":
            return all(_real_like(item) for item in x.flat)
        return x.dtype.kind in _REAL_KINDS
    if isinstance(x, list | tuple):
        return all(_real_like(item) for item in x)
    return True  # numbers.Real, mpmath.mpf, sympy numbers, ...: float() decides


def as_mpf(x: Any, name: str, where: str | None = None) -> mpmath.mpf:
    """``x`` as an mpf at the current working precision (``±inf`` allowed); NaN, strings (which mpmath would
    parse), booleans and complex numbers raise."""
    if not _real_like(x) or isinstance(x, list | tuple) or (isinstance(x, np.ndarray) and x.ndim):
        raise ParameterError(name, x, "a real number (not NaN)", where)
    try:
        value = mpmath.mpf(x.item() if isinstance(x, np.ndarray | np.generic) else x)
    except (TypeError, ValueError):
        raise ParameterError(name, x, "a real number (not NaN)", where) from None
    if mpmath.isnan(value):
        raise ParameterError(name, x, "a real number (not NaN)", where)
    return value


def as_probabilities(q: Any, name: str = "q", where: str | None = None) -> tuple[np.ndarray, bool]:
    """``q`` as a float64 array of numbers in ``[0, 1]``."""
    return as_float_array(q, name, where, lo=0.0, hi=1.0)


def as_scalar(x: Any, name: str, where: str | None = None, *, lo: float = -math.inf, hi: float = math.inf) -> float:
    """One real number in ``[lo, hi]`` (NaN, strings and booleans raise)."""
    if isinstance(x, bool) or (isinstance(x, np.ndarray) and x.ndim):
        raise ParameterError(name, x, f"a real number in [{lo}, {hi}]", where)
    arr, _ = as_float_array(x, name, where, lo=lo, hi=hi)
    return float(arr)


def as_mpf_probability(q: Any, name: str = "q", where: str | None = None) -> mpmath.mpf:
    """``q`` as an mpf in ``[0, 1]`` (at the current working precision; refused as :func:`as_mpf` refuses)."""
    try:
        value = as_mpf(q, name, where)
    except ParameterError:
        raise ParameterError(name, q, "a real number in [0, 1]", where) from None
    if value < 0 or value > 1:
        raise ParameterError(name, q, "a real number in [0, 1]", where)
    return value


def scalar_or_array(arr: np.ndarray, scalar: bool) -> float | np.ndarray:
    """Python float for scalar input, ndarray otherwise."""
    return float(arr) if scalar else arr


# --------------------------------------------------------------------------- one (ε1, δ1) polygon


def _check_eps_delta(eps1: Any, delta1: Any, where: str) -> tuple[float, float]:
    e = as_scalar(eps1, "eps1", where, lo=0.0, hi=math.inf)
    if math.isinf(e):
        raise ParameterError("eps1", eps1, "a finite real number >= 0", where)
    d = as_scalar(delta1, "delta1", where, lo=0.0, hi=1.0)
    return e, d


Point = tuple[float, float]


def polygon_vertices(eps1: float, delta1: float) -> tuple[Point, Point, Point]:
    """The three vertices ``(δ1, 0)``, ``V``, ``(1, 1 − δ1)`` of the lower-right boundary of the polygon.

    ``V = ((e^ε1 + δ1)/(1 + e^ε1), (1 − δ1)/(1 + e^ε1))`` (docs/setting.md; Kairouz et al. 2015, Thm 2.4).
    """
    e, d = _check_eps_delta(eps1, delta1, "polygon_vertices")
    # (e^ε + δ)/(1 + e^ε) written without overflow for large ε.
    s = 1.0 / (1.0 + math.exp(-e))  # e^ε/(1 + e^ε)
    t = 1.0 / (1.0 + math.exp(e)) if e < 700 else 0.0  # 1/(1 + e^ε)
    return (d, 0.0), (s + d * t, (1.0 - d) * t), (1.0, 1.0 - d)


def polygon_lower(q: ArrayLike, eps1: float, delta1: float) -> float | np.ndarray:
    """``q'_min(q)`` on the ``(ε1, δ1)`` polygon: ``max(0, e^−ε1 (q − δ1), 1 − δ1 − e^ε1 (1 − q))``.

    The segments are S1: ``(δ1, 0) → V`` (slope ``e^−ε1``) and S2: ``V → (1, 1 − δ1)`` (slope
    ``e^ε1``); the boundary is 0 for ``q ≤ δ1`` (docs/setting.md).
    """
    e, d = _check_eps_delta(eps1, delta1, "polygon_lower")
    arr, scalar = as_probabilities(q, "q", "polygon_lower")
    with np.errstate(over="ignore", invalid="ignore"):
        s1 = math.exp(-e) * (arr - d)
        s2 = (1.0 - d) - np.where(arr < 1.0, math.exp(e) * (1.0 - arr) if e < 709 else np.inf, 0.0)
    out = np.maximum(0.0, np.maximum(s1, s2))
    return scalar_or_array(out, scalar)


def polygon_lower_mp(q: Any, eps1: Any, delta1: Any, dps: int) -> mpmath.mpf:
    """:func:`polygon_lower` at ``dps`` decimal digits (one point)."""
    with mpmath.workdps(dps):
        x = as_mpf_probability(q, "q", "polygon_lower_mp")
        e = mpmath.mpf(eps1)
        d = mpmath.mpf(delta1)
        if not (e >= 0 and mpmath.isfinite(e)) or not (0 <= d <= 1):
            raise ParameterError(
                "eps1/delta1", (eps1, delta1), "eps1 finite >= 0, delta1 in [0, 1]", "polygon_lower_mp"
            )
        down, up = _exp_both_ways(e, mpmath.mp.prec)
        return max(mpmath.mpf(0), down * (x - d), (1 - d) - up * (1 - x))


@lru_cache(maxsize=64)  # two mpmath numbers an entry: a few KiB in all
def _exp_both_ways(e: mpmath.mpf, prec: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    """``(e^-e, e^e)`` at ``prec`` bits, cached: a brute-force sup over ``q`` (``derive``'s checks) asks for one
    polygon at hundreds of points (the same numbers as computing them at every point)."""
    with mpmath.workprec(prec):
        return mpmath.exp(-e), mpmath.exp(e)


# --------------------------------------------------------------------------- location families


def gaussian_lower(q: ArrayLike, mu: float) -> float | np.ndarray:
    """Gaussian (μ-GDP) boundary ``Φ(Φ⁻¹(q) − μ)`` (Dong, Roth, Su 2022, the trade-off ``G_μ``).

    For ``q > 1/2`` the quantile is taken as ``−Φ⁻¹(1 − q)``, which is exact in float64 there.
    """
    m = as_scalar(mu, "mu", "gaussian_lower", lo=0.0)
    arr, scalar = as_probabilities(q, "q", "gaussian_lower")
    with np.errstate(divide="ignore"):
        x = np.where(arr > 0.5, -special.ndtri(1.0 - arr), special.ndtri(arr))
    out = special.ndtr(x - m)
    return scalar_or_array(np.asarray(out, dtype=float), scalar)


def _ndtri_mp(p: mpmath.mpf) -> mpmath.mpf:
    """Φ⁻¹(p) at the working precision (erfinv at extra digits, then Newton steps on Φ)."""
    if p == 0:
        return mpmath.mpf("-inf")
    if p == 1:
        return mpmath.mpf("inf")
    if p > 0.5:
        return -_ndtri_mp(1 - p)
    dps = mpmath.mp.dps
    extra = int(max(0.0, -float(mpmath.log10(p)))) + 15
    with mpmath.workdps(dps + extra):
        x = -mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * p)
        for _ in range(3):  # Newton polish on log Φ for tiny p
            fx = mpmath.ncdf(x)
            x = x - (fx - p) / mpmath.npdf(x)
    return +x


def gaussian_lower_mp(q: Any, mu: Any, dps: int) -> mpmath.mpf:
    """:func:`gaussian_lower` at ``dps`` decimal digits (one point)."""
    with mpmath.workdps(dps):
        x = as_mpf_probability(q, "q", "gaussian_lower_mp")
        return mpmath.ncdf(_ndtri_mp(x) - mpmath.mpf(mu))


def laplace_lower(q: ArrayLike, a: float) -> float | np.ndarray:
    """Laplace boundary ``F(F⁻¹(q) − a)``, ``F`` the standard Laplace CDF and ``a = Δ/b``.

    The likelihood ratio of ``Lap(0, b)`` to ``Lap(Δ, b)`` is non-increasing in the output, so the
    Neyman--Pearson tests are the half-lines ``{x < t}`` (Dong, Roth, Su 2022, Laplace trade-off).
    """
    shift = as_scalar(a, "a", "laplace_lower", lo=0.0)
    arr, scalar = as_probabilities(q, "q", "laplace_lower")
    with np.errstate(divide="ignore"):
        # x = F⁻¹(q); then F(x − a).  Split at q = 1/2 for accuracy.
        x = np.where(arr <= 0.5, np.log(2.0 * arr), -np.log(2.0 * (1.0 - arr)))
        y = x - shift
        out = np.where(y < 0, 0.5 * np.exp(np.minimum(y, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(y, 0.0)))
    return scalar_or_array(np.asarray(out, dtype=float), scalar)


def laplace_lower_mp(q: Any, a: Any, dps: int) -> mpmath.mpf:
    """:func:`laplace_lower` at ``dps`` decimal digits (one point)."""
    with mpmath.workdps(dps):
        x = as_mpf_probability(q, "q", "laplace_lower_mp")
        if x == 0:
            return mpmath.mpf(0)
        t = mpmath.log(2 * x) if x <= 0.5 else -mpmath.log(2 * (1 - x)) if x < 1 else mpmath.inf
        y = t - mpmath.mpf(a)
        return mpmath.exp(y) / 2 if y < 0 else 1 - mpmath.exp(-y) / 2


# --------------------------------------------------------------------------- finite pairs


def _pair_arrays(P: ArrayLike, Pp: ArrayLike, where: str) -> tuple[np.ndarray, np.ndarray]:
    p, _ = as_float_array(P, "P", where, lo=0.0, hi=1.0)
    pp, _ = as_float_array(Pp, "Pp", where, lo=0.0, hi=1.0)
    if p.ndim != 1 or p.shape != pp.shape or p.size == 0:
        raise ParameterError("P/Pp", (list(p.flat), list(pp.flat)), "two non-empty lists of equal length", where)
    for name, v in (("P", p), ("Pp", pp)):
        if abs(float(v.sum()) - 1.0) > 1e-9:
            raise ParameterError(name, list(v), "probabilities summing to 1 (within 1e-9)", where)
    return p, pp


def finite_pair_hockey_stick(eps: ArrayLike, P: ArrayLike, Pp: ArrayLike) -> float | np.ndarray:
    """``H_{e^ε}(P‖P') = Σ_y [P(y) − e^ε P'(y)]_+`` by direct summation, vectorized over ``ε``.

    ``ε`` may be any real or ``±inf``; ``e^ε P'(y)`` is formed as ``exp(ε + log P'(y))`` so that
    ``P'(y) = 0`` never produces ``inf · 0``.
    """
    p, pp = _pair_arrays(P, Pp, "finite_pair_hockey_stick")
    e, scalar = as_float_array(eps, "eps", "finite_pair_hockey_stick")
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        logpp = np.log(pp)
        scaled = np.exp(e[..., None] + logpp)
        scaled = np.where(pp == 0, 0.0, scaled)
        out = np.clip(np.maximum(p - scaled, 0.0).sum(axis=-1), 0.0, 1.0)
    return scalar_or_array(out, scalar)


def finite_pair_hockey_stick_mp(eps: Any, P: Sequence[Any], Pp: Sequence[Any], dps: int) -> mpmath.mpf:
    """:func:`finite_pair_hockey_stick` at ``dps`` digits; ``P``, ``Pp`` may be mpf (one ``ε``)."""
    with mpmath.workdps(dps):
        g = mpmath.exp(as_mpf(eps, "eps", "hockey_stick_from_vertices_mp"))
        return mpmath.fsum(max(mpmath.mpf(0), mpmath.mpf(a) - g * mpmath.mpf(b)) for a, b in zip(P, Pp, strict=True))


def finite_pair_renyi(order: float, P: ArrayLike, Pp: ArrayLike) -> float:
    """Rényi divergence ``D_λ(P‖P') = log(Σ P^λ P'^(1−λ))/(λ − 1)``; ``λ = inf`` gives ``log max P/P'``.

    Computed with a log-sum-exp; ``inf`` when ``P`` has mass where ``P'`` has none (:func:`finite_pair_renyi_curve`
    at one order).
    """
    lam = as_scalar(order, "order", "finite_pair_renyi", lo=1.0)
    if lam == 1.0:
        raise ParameterError("order", order, "a Rényi order > 1 (or inf)", "finite_pair_renyi")
    return float(finite_pair_renyi_curve(np.array([lam]), P, Pp)[0])


#: :func:`finite_pair_renyi_curve` handles this many (order, outcome) terms at a time.
_RENYI_BLOCK = 1 << 20


def finite_pair_renyi_curve(orders: np.ndarray, P: ArrayLike, Pp: ArrayLike) -> np.ndarray:
    """:func:`finite_pair_renyi` at every one of ``orders`` (each ``> 1`` or ``inf``), one log-sum-exp per order
    over the outcomes, computed for blocks of orders at once (a Lemma 7 or Theorem 2 curve asks for hundreds of
    orders, one call each before)."""
    p, pp = _pair_arrays(P, Pp, "finite_pair_renyi")
    lam = np.asarray(orders, dtype=float)
    if lam.ndim != 1 or not np.all(lam > 1.0):
        raise ParameterError("orders", orders, "Rényi orders > 1 (or inf)", "finite_pair_renyi_curve")
    support = p > 0
    if np.any(pp[support] == 0):
        return np.full(lam.shape, math.inf)
    lp, lpp = np.log(p[support]), np.log(pp[support])
    out = np.empty(lam.shape)
    infinite = np.isinf(lam)
    out[infinite] = max(0.0, float(np.max(lp - lpp)))
    finite = np.flatnonzero(~infinite)
    rows = max(1, _RENYI_BLOCK // max(1, lp.size))
    for start in range(0, finite.size, rows):
        at = finite[start:start + rows]
        orders_here = lam[at][:, None]
        terms = orders_here * lp + (1.0 - orders_here) * lpp
        out[at] = np.maximum(0.0, special.logsumexp(terms, axis=1) / (lam[at] - 1.0))
    return out


def neyman_pearson_vertices(P: ArrayLike, Pp: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Vertices ``(q_j, q'_j)`` of the lower boundary of the privacy region of a finite pair.

    Neyman--Pearson: the optimal tests take outcomes in decreasing order of ``P/P'`` (randomizing
    on the last one), so the boundary is the polyline through the cumulative sums in that order.
    Returned arrays start at ``(0, 0)`` and end at ``q = 1`` with ``q' = 1 − P'(P = 0)``; outcomes
    with ``P = 0`` (ratio 0) form the vertical piece at ``q = 1`` and are not listed.
    """
    p, pp = _pair_arrays(P, Pp, "neyman_pearson_vertices")
    keep = p > 0
    p, pp = p[keep], pp[keep]
    with np.errstate(divide="ignore"):
        ratio_key = np.log(pp) - np.log(p)  # ascending = decreasing P/P'
    order = np.argsort(ratio_key, kind="stable")
    xs = np.concatenate([[0.0], np.cumsum(p[order])])
    ys = np.concatenate([[0.0], np.cumsum(pp[order])])
    xs[-1] = 1.0  # P sums to 1 on its support; remove the rounding of the cumulative sum
    return np.clip(xs, 0.0, 1.0), np.clip(ys, 0.0, 1.0)


def neyman_pearson_vertices_mp(P: Sequence[Any], Pp: Sequence[Any], dps: int) -> tuple[list, list]:
    """:func:`neyman_pearson_vertices` with mpf entries at ``dps`` digits."""
    with mpmath.workdps(dps):
        pairs = [(mpmath.mpf(a), mpmath.mpf(b)) for a, b in zip(P, Pp, strict=True) if mpmath.mpf(a) > 0]
        pairs.sort(key=lambda ab: ab[1] / ab[0])
        xs, ys = [mpmath.mpf(0)], [mpmath.mpf(0)]
        for a, b in pairs:
            xs.append(xs[-1] + a)
            ys.append(ys[-1] + b)
        return xs, ys


def polyline_lower(q: ArrayLike, xs: np.ndarray, ys: np.ndarray) -> float | np.ndarray:
    """Linear interpolation of a boundary given by its vertices (``xs`` non-decreasing, from 0 to 1)."""
    arr, scalar = as_probabilities(q, "q", "polyline_lower")
    xs = np.asarray(xs, dtype=float)
    ys = np.asarray(ys, dtype=float)
    # np.interp needs increasing abscissae: keep the lowest ordinate of repeated abscissae.
    keep = np.concatenate([np.diff(xs) > 0, [True]])
    keep[0] = True
    xs_u, ys_u = xs[keep], ys[keep]
    return scalar_or_array(np.interp(arr, xs_u, ys_u), scalar)


def polyline_lower_mp(q: Any, xs: Sequence[Any], ys: Sequence[Any], dps: int) -> mpmath.mpf:
    """:func:`polyline_lower` at ``dps`` digits (one point)."""
    with mpmath.workdps(dps):
        x = as_mpf_probability(q, "q", "polyline_lower_mp")
        for j in range(1, len(xs)):
            x0, x1 = mpmath.mpf(xs[j - 1]), mpmath.mpf(xs[j])
            if x <= x1 and x1 > x0:
                y0, y1 = mpmath.mpf(ys[j - 1]), mpmath.mpf(ys[j])
                return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
        return mpmath.mpf(ys[-1])


def hockey_stick_from_vertices(eps: ArrayLike, xs: Sequence[float], ys: Sequence[float]) -> float | np.ndarray:
    """``sup_q (q − e^ε q'_min(q))`` for a piecewise-linear boundary: the max over its vertices.

    The objective is concave in ``q`` (``q'_min`` is convex), so the sup over a piecewise-linear
    boundary sits at a vertex; this is exact for every real ``ε`` (including ``±inf``).
    """
    e, scalar = as_float_array(eps, "eps", "hockey_stick_from_vertices")
    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        scaled = np.where(y == 0, 0.0, np.exp(e[..., None] + np.log(y)))
        out = np.clip(np.max(x - scaled, axis=-1), 0.0, 1.0)
    return scalar_or_array(out, scalar)


def hockey_stick_from_vertices_mp(eps: Any, xs: Sequence[Any], ys: Sequence[Any], dps: int) -> mpmath.mpf:
    """:func:`hockey_stick_from_vertices` at ``dps`` digits (one ``ε``)."""
    with mpmath.workdps(dps):
        g = mpmath.exp(as_mpf(eps, "eps", "hockey_stick_from_vertices_mp"))
        best = max(mpmath.mpf(a) - g * mpmath.mpf(b) for a, b in zip(xs, ys, strict=True))
        return min(mpmath.mpf(1), max(mpmath.mpf(0), best))


def pair_from_vertices(xs: Sequence[float], ys: Sequence[float]) -> tuple[list[float], list[float]]:
    """A finite pair whose Neyman--Pearson boundary is the polyline ``(xs, ys)`` (closed to ``(1, 1)``).

    Each segment becomes one outcome with masses ``(Δq, Δq')``; the vertical piece at ``q = 1``
    becomes an outcome with ``P = 0``. Zero-length segments are dropped.
    """
    x = [float(v) for v in xs] + [1.0]
    y = [float(v) for v in ys] + [1.0]
    P, Pp = [], []
    for j in range(1, len(x)):
        dx, dy = max(0.0, x[j] - x[j - 1]), max(0.0, y[j] - y[j - 1])
        if dx > 0 or dy > 0:
            P.append(dx)
            Pp.append(dy)
    return P, Pp


# --------------------------------------------------------------------------- envelopes of lines


#: relative allowance of :meth:`LinesEnvelope.rounded_down` (twice the ``4u`` of its error bound).
LINE_ROUNDING = 8.0 * 2.0**-53


@dataclass(frozen=True)
class LinesEnvelope:
    """``q ↦ max(0, max_k [y0_k + a_k (q − x0_k)])`` on ``[0, 1]``: a convex piecewise-linear boundary.

    Each line is a valid lower bound on ``q'`` for every point of the region (an ``(ε1, δ1)``
    constraint), so the max over *any subset* of them is a valid (conservative) boundary; rounding in
    the hull construction can only drop lines, never invent them. Lines are stored in anchor form
    (``y0 + a (q − x0)``) so that steep lines anchored at ``q = 1`` stay accurate near ``q = 1``.

    Attributes:
        slopes, x0, y0: the lines of the hull, in increasing slope.
        breaks: ``breaks[k]`` is where line ``k + 1`` overtakes line ``k``.
    """

    slopes: tuple
    x0: tuple
    y0: tuple
    breaks: tuple

    @cached_property
    def _float_lines(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Slopes, anchors and breaks as float64 arrays, converted once (a profile's hull holds up to ~32000 lines
        and is evaluated thousands of times by a certified supremum)."""
        slopes, x0, y0, breaks = (np.asarray(t, dtype=float) for t in (self.slopes, self.x0, self.y0, self.breaks))
        return slopes, x0, y0, breaks

    def __call__(self, q: ArrayLike) -> float | np.ndarray:
        """Evaluate in float64 (vectorized)."""
        arr, scalar = as_probabilities(q, "q", "LinesEnvelope")
        a, x0, y0, breaks = self._float_lines
        n = a.size
        j = np.searchsorted(breaks, arr)
        out = np.zeros_like(arr)
        for shift in (-1, 0, 1):
            k = np.clip(j + shift, 0, n - 1)
            out = np.maximum(out, y0[k] + a[k] * (arr - x0[k]))
        return scalar_or_array(np.clip(out, 0.0, 1.0), scalar)

    def rounded_down(self, q: ArrayLike) -> float | np.ndarray:
        """A float64 value at most the boundary of the exact lines the float lines round.

        Each line's float parameters (a slope ``exp(±ε1)``, an anchor ``1 − δ1``) carry one rounding and its
        evaluation three more, so ``|fl(line) − line| ≤ 4u (|y0| + a |q − x0|)`` (``u = 2^-53``). Every line is
        lowered by :data:`LINE_ROUNDING` times that bracket before the max; the max over a subset of valid lower
        lines is a valid lower boundary (used where the boundary is a certificate, e.g. ``PointwiseProfile``).
        """
        arr, scalar = as_probabilities(q, "q", "LinesEnvelope")
        a, x0, y0, _ = self._float_lines
        out = np.zeros_like(arr)
        with np.errstate(over="ignore", invalid="ignore"):
            for k in range(a.size):
                reach = a[k] * np.abs(arr - x0[k])
                line = y0[k] + a[k] * (arr - x0[k]) - LINE_ROUNDING * (abs(y0[k]) + reach)
                out = np.maximum(out, np.where(np.isfinite(line), line, 0.0))
        return scalar_or_array(np.clip(out, 0.0, 1.0), scalar)

    def evaluate_mp(self, q: Any, dps: int) -> mpmath.mpf:
        """Evaluate at ``dps`` digits (max over all hull lines; exact)."""
        with mpmath.workdps(dps):
            x = as_mpf_probability(q, "q", "LinesEnvelope.evaluate_mp")
            lines = zip(self.slopes, self.x0, self.y0, strict=True)
            vals = (mpmath.mpf(b) + mpmath.mpf(a) * (x - mpmath.mpf(c)) for a, c, b in lines)
            return max(mpmath.mpf(0), *vals)

    def vertices(self) -> tuple[np.ndarray, np.ndarray]:
        """The boundary's vertices on ``[0, 1]`` (float64), from ``q = 0`` to ``q = 1``."""
        inner = [float(b) for b in self.breaks if 0.0 < float(b) < 1.0]
        xs = np.array([0.0, *inner, 1.0])
        return xs, np.asarray(self(xs), dtype=float)

    def vertices_mp(self, dps: int) -> tuple[list, list]:
        """The vertices at ``dps`` digits (requires the envelope to have been built from mpf lines)."""
        with mpmath.workdps(dps):
            inner = [mpmath.mpf(b) for b in self.breaks if 0 < mpmath.mpf(b) < 1]
            xs = [mpmath.mpf(0), *inner, mpmath.mpf(1)]
            return xs, [self.evaluate_mp(x, dps) for x in xs]


def _intersect(a1: Any, x1: Any, y1: Any, a2: Any, x2: Any, y2: Any) -> Any:
    """Abscissa where two lines in anchor form meet (``a1 != a2``), as an offset from ``x1`` so that
    steep lines anchored at the same point (``q = 1``) intersect accurately."""
    return x1 + (y2 - y1 + a2 * (x1 - x2)) / (a1 - a2)


def upper_envelope(slopes: Sequence[Any], x0: Sequence[Any], y0: Sequence[Any]) -> LinesEnvelope:
    """The upper envelope on ``[0, 1]`` of the lines ``y0_k + a_k (q − x0_k)`` and of ``q' = 0``.

    Monotone-chain (convex hull trick) in the numeric type of the inputs (floats or mpf), ``O(n log n)``. The
    break point of each kept line with the one before it is stored when the line is kept and read at every later
    comparison (the same :func:`_intersect` of the same two lines as computing it again, which a DP-SGD profile's
    32 000 lines did in a third of a second).
    """
    lines = sorted(zip(slopes, x0, y0, strict=True), key=lambda t: t[0])
    zero = type(lines[0][0])(0) if lines else 0.0
    lines = [(zero, zero, zero), *lines]
    lines.sort(key=lambda t: t[0])
    hull_a: list[Any] = []
    hull_x: list[Any] = []
    hull_y: list[Any] = []
    breaks: list[Any] = []  # breaks[k - 1]: where hull line k overtakes hull line k - 1
    for a, x, y in lines:
        if hull_a and hull_a[-1] == a:
            if y + a * (hull_x[-1] - x) <= hull_y[-1]:  # the new line is below the old one (compare at its x0)
                continue
            hull_a.pop()
            hull_x.pop()
            hull_y.pop()
            if breaks:
                breaks.pop()
        while len(hull_a) >= 2 and _intersect(hull_a[-2], hull_x[-2], hull_y[-2], a, x, y) <= breaks[-1]:
            hull_a.pop()
            hull_x.pop()
            hull_y.pop()
            breaks.pop()
        if hull_a:
            breaks.append(_intersect(hull_a[-1], hull_x[-1], hull_y[-1], a, x, y))
        hull_a.append(a)
        hull_x.append(x)
        hull_y.append(y)
    # Drop lines that are active only outside [0, 1].
    first, last = 0, len(hull_a)
    while first < len(breaks) and breaks[first] <= 0:
        first += 1
    stop = len(breaks)
    while stop > first and breaks[stop - 1] >= 1:
        stop -= 1
        last -= 1
    return LinesEnvelope(
        slopes=tuple(hull_a[first:last]),
        x0=tuple(hull_x[first:last]),
        y0=tuple(hull_y[first:last]),
        breaks=tuple(breaks[first:stop]),
    )


def _constraint_lines(eps1: np.ndarray, delta1: np.ndarray) -> tuple[list, list, list]:
    """The two lines S1, S2 of every ``(ε1, δ1)`` polygon, in anchor form (float64)."""
    slopes, x0, y0 = [], [], []
    for e, d in zip(eps1.tolist(), delta1.tolist(), strict=True):
        if d >= 1.0:
            continue  # the constraint says nothing
        slopes.append(math.exp(-e))  # S1 through (δ1, 0)
        x0.append(d)
        y0.append(0.0)
        if e < 700:
            slopes.append(math.exp(e))  # S2 through (1, 1 − δ1)
            x0.append(1.0)
            y0.append(1.0 - d)
    return slopes, x0, y0


def profile_envelope(eps1: ArrayLike, delta1: ArrayLike) -> LinesEnvelope:
    """The boundary implied by the constraints ``δ(ε1_i) ≤ δ1_i`` (``ε1_i ≥ 0``), i.e. the polygons' max.

    docs/setting.md: ``q'_min(q) = max(0, sup_i e^−ε1_i (q − δ1_i), sup_i (1 − δ1_i − e^ε1_i (1 − q)))``.
    """
    e, _ = as_float_array(eps1, "eps1", "profile_envelope", lo=0.0)
    d, _ = as_float_array(delta1, "delta1", "profile_envelope", lo=0.0, hi=1.0)
    e, d = np.broadcast_arrays(np.atleast_1d(e), np.atleast_1d(d))
    finite = np.isfinite(e)
    return upper_envelope(*_constraint_lines(e[finite], d[finite]))


def profile_envelope_mp(eps1: Sequence[Any], delta1: Sequence[Any], dps: int) -> LinesEnvelope:
    """:func:`profile_envelope` with mpf lines at ``dps`` digits."""
    with mpmath.workdps(dps):
        slopes, x0, y0 = [], [], []
        for e, d in zip(eps1, delta1, strict=True):
            e, d = mpmath.mpf(e), mpmath.mpf(d)
            if d >= 1:
                continue
            slopes += [mpmath.exp(-e), mpmath.exp(e)]
            x0 += [d, mpmath.mpf(1)]
            y0 += [mpmath.mpf(0), 1 - d]
        return upper_envelope(slopes, x0, y0)


def fdp_lower_from_profile(q: ArrayLike, profile: Profile, eps1_grid: ArrayLike) -> float | np.ndarray:
    """The f-DP boundary implied by ``profile`` on a finite grid of ``ε1 ≥ 0`` (docs/setting.md).

    ``q'_min(q) = max(0, max_ε1 e^−ε1 (q − δ(ε1)), max_ε1 (1 − δ(ε1) − e^ε1 (1 − q)))`` with the max
    over the grid only: fewer constraints give a smaller ``q'_min`` (a larger region), so the result
    is a conservative boundary for every grid; it converges to the exact one as the grid is refined.
    """
    grid, _ = as_float_array(eps1_grid, "eps1_grid", "fdp_lower_from_profile", lo=0.0)
    grid = np.unique(grid[np.isfinite(grid)])
    deltas = np.asarray(profile.delta(grid), dtype=float)
    return profile_envelope(grid, deltas)(q)


def fdp_upper_from_profile(q: ArrayLike, profile: Profile, eps1_grid: ArrayLike) -> float | np.ndarray:
    """An upper bound on the *exact* f-DP boundary of ``profile`` (all ``ε1 ≥ 0``), from the same grid.

    For ``ε ∈ [ε_i, ε_{i+1}]`` monotonicity gives ``δ(ε) ≥ δ(ε_{i+1})``, so that constraint is at most
    ``e^−ε_i (q − δ(ε_{i+1}))`` resp. ``1 − δ(ε_{i+1}) − e^ε_i (1 − q)``; beyond the grid ``δ ≥ δ(∞)``.
    The gap to :func:`fdp_lower_from_profile` bounds what the finite grid loses.
    """
    grid, _ = as_float_array(eps1_grid, "eps1_grid", "fdp_upper_from_profile", lo=0.0)
    grid = np.unique(grid[np.isfinite(grid)])
    deltas = np.asarray(profile.delta(grid), dtype=float)
    next_delta = np.append(deltas[1:], profile.delta(math.inf))
    if grid[0] > 0:  # the cell [0, ε_0]
        grid = np.insert(grid, 0, 0.0)
        next_delta = np.insert(next_delta, 0, deltas[0])
    return profile_envelope(grid, next_delta)(q)
