"""Profiles given by a finite dominating pair: randomized response, (ε, δ)-DP, several (ε_i, δ_i) at once.

A finite pair ``(P, P')`` whose swap ``(P', P)`` has the same privacy region is a *dominating pair*
(Zhu, Dong, Wang, *Optimal Accounting of Differential Privacy via Characteristic Function*, AISTATS
2022, Def. 7): every quantity here -- ``δ(ε)``, the Neyman--Pearson region boundary, Rényi divergences
-- is computed exactly from it by finite sums. The worst case of one ``(ε, δ)`` guarantee is the
four-point pair of Kairouz, Oh, Viswanath (ICML 2015, Thm 2.4); for several guarantees the region is
the intersection of their polygons, whose piecewise-linear boundary again defines a finite pair.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

import mpmath
import numpy as np

from symsel import validate as v
from symsel.errors import NotApplicableError, ParameterError
from symsel.pairs.finite import FinitePair
from symsel.pairs.loss import DominatedPair, DominatingPair, Kind, from_finite
from symsel.profiles.base import ROUTE_EXACT_FINITE_PAIR, ROUTE_PESSIMISTIC_PLD, Profile, delta_by_symmetry
from symsel.profiles.composition import ComposedFinitePair, composed_finite_pair_plds
from symsel.profiles.region import (
    ArrayLike,
    LinesEnvelope,
    as_mpf,
    finite_pair_hockey_stick,
    finite_pair_hockey_stick_mp,
    finite_pair_renyi,
    finite_pair_renyi_curve,
    hockey_stick_from_vertices_mp,
    neyman_pearson_vertices,
    neyman_pearson_vertices_mp,
    polygon_lower,
    polygon_lower_mp,
    polyline_lower,
    polyline_lower_mp,
    profile_envelope,
    profile_envelope_mp,
)

#: digits of the masses of :meth:`FinitePairProfile.dominating_pair`.
PAIR_DPS = 120
#: digits at which :class:`PointwiseProfile` computes its boundary's vertices before rounding them to float64.
POINTWISE_DPS = 40
#: relative allowance on each term of :class:`PointwiseProfile`'s ``δ(ε)`` (twice its ``4u`` error bound).
POINTWISE_ROUNDING = 8.0 * 2.0**-53


class FinitePairProfile(Profile):
    """Base class: the profile, region and RDP curve of a finite symmetric dominating pair.

    Subclasses provide :meth:`_pair` (a possibly merged float pair used for computing) and
    :meth:`_pair_mp` (the same pair at ``dps`` digits). ``δ`` is the max of both directions, which
    for a symmetric pair equals either one.
    """

    #: composed exactly by finite sums (:meth:`self_composed`), up to
    #: :data:`symsel.profiles.composition.MAX_EXACT_ATOMS`.
    exact_composition = True

    def _pair(self) -> tuple[list[float], list[float]]:
        raise NotImplementedError

    def _pair_mp(self, dps: int) -> tuple[list, list]:
        raise NotImplementedError

    def finite_pair(self) -> tuple[list[float], list[float]]:
        """The dominating pair ``(P, P')`` as two lists of floats."""
        return self._pair()

    def dominating_pair(self) -> FinitePair:
        """The finite pair ``(P, P')`` with masses at :data:`PAIR_DPS` digits (exact for every
        evaluation symsel makes), outcomes in their natural order."""
        P, Pp = self._pair_mp(PAIR_DPS)
        return FinitePair(P, Pp, label=self.spec)

    def dominating_loss_pairs(self) -> tuple[DominatingPair, ...]:
        """The finite pair ordered by privacy loss (:meth:`_loss_pairs`), as pairs that dominate the base."""
        return self._loss_pairs(DominatingPair)

    def dominated_loss_pairs(self) -> tuple[DominatedPair, ...]:
        """The same pairs as the base dominates them (a finite pair is a post-processing of itself)."""
        return self._loss_pairs(DominatedPair)

    def _loss_pairs(self, kind: type[Kind]) -> tuple[Kind, ...]:
        """The finite pair ordered by privacy loss, in both orders ``(P, P')`` and ``(P', P)`` unless they are the
        same pair up to relabelling (the pair both dominates the base and is a post-processing of it, so it is made
        as either ``kind``). A base given by a pair means: every ordered neighbouring pair of the base is a
        post-processing of ``(P, P')`` or of ``(P', P)`` (docs/setting.md)."""
        with mpmath.workdps(PAIR_DPS):
            P, Pp = self._pair_mp(PAIR_DPS)
            total_p, total_q = mpmath.fsum(P), mpmath.fsum(Pp)
            p = np.array([float(x / total_p) for x in P])
            q = np.array([float(x / total_q) for x in Pp])
        pairs = [from_finite(p, q, kind, "P,P'", self.spec)]
        if sorted(zip(p.tolist(), q.tolist(), strict=True)) != sorted(zip(q.tolist(), p.tolist(), strict=True)):
            pairs.append(from_finite(q, p, kind, "P',P", self.spec))
        return tuple(pairs)

    def self_composed(self, k: int) -> tuple[Profile, str]:
        """Exact: the privacy loss of ``k`` runs of ``(P, P')`` is the sum of ``k`` i.i.d. losses, whose law is
        multinomial over the pair's distinct loss values, summed in log space in both directions
        (:class:`symsel.profiles.composition.ComposedFinitePair`; the product of dominating pairs dominates the
        composition, Zhu, Dong, Wang 2022). Above :data:`symsel.profiles.composition.MAX_EXACT_ATOMS` atoms:
        pessimistic, the larger of the two directions' dp-accounting PLDs each self-composed ``k`` times
        (:func:`symsel.profiles.composition.composed_finite_pair_plds`)."""
        try:
            return ComposedFinitePair(self, k), ROUTE_EXACT_FINITE_PAIR
        except NotApplicableError:
            return composed_finite_pair_plds(self, k), ROUTE_PESSIMISTIC_PLD

    @property
    def finite_loss_bound(self) -> float:
        """``max |log(P/P')|`` over the outcomes where both masses are positive (0 if there is none)."""
        P, Pp = (np.asarray(x, dtype=float) for x in self.finite_pair())
        both = (P > 0) & (Pp > 0)
        return float(np.max(np.abs(np.log(P[both]) - np.log(Pp[both])), initial=0.0))

    @cached_property
    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        P, Pp = self._pair()
        return np.asarray(P, dtype=float), np.asarray(Pp, dtype=float)

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        P, Pp = self._arrays
        return np.maximum(finite_pair_hockey_stick(eps, P, Pp), finite_pair_hockey_stick(eps, Pp, P))

    def delta_mp(self, eps: Any, dps: int) -> mpmath.mpf:
        """Exact finite sum at ``dps`` digits."""
        dps = v.dps(dps, f"{self.family}.delta_mp")
        P, Pp = self._pair_mp(dps + 10)
        with mpmath.workdps(dps):
            e = as_mpf(eps, "eps", f"{self.family}.delta_mp")
            out = max(finite_pair_hockey_stick_mp(e, P, Pp, dps + 10), finite_pair_hockey_stick_mp(e, Pp, P, dps + 10))
            return +out

    @property
    def delta_at_infinity(self) -> float:
        P, Pp = self._arrays
        return float(max(P[Pp == 0].sum(), Pp[P == 0].sum()))

    @property
    def max_privacy_loss(self) -> float:
        P, Pp = self._arrays
        both = (P > 0) & (Pp > 0)
        if np.any((P > 0) & (Pp == 0)) or np.any((Pp > 0) & (P == 0)):
            return math.inf
        return float(np.max(np.abs(np.log(P[both]) - np.log(Pp[both])))) if both.any() else 0.0

    @cached_property
    def _np_vertices(self) -> tuple[np.ndarray, np.ndarray]:
        P, Pp = self._arrays
        return neyman_pearson_vertices(P, Pp)

    def region_lower(self, q: ArrayLike) -> float | np.ndarray:
        """Exact: the Neyman--Pearson polyline of the pair (likelihood-ratio tests, randomized)."""
        xs, ys = self._np_vertices
        return polyline_lower(q, xs, ys)

    def region_lower_mp(self, q: Any, dps: int) -> mpmath.mpf:
        dps = v.dps(dps, f"{self.family}.region_lower_mp")
        P, Pp = self._pair_mp(dps + 10)
        xs, ys = neyman_pearson_vertices_mp(P, Pp, dps + 10)
        with mpmath.workdps(dps):
            return +polyline_lower_mp(q, xs, ys, dps + 10)

    def rdp(self, order: float) -> float:
        """Exact Rényi divergence of the pair, max of both directions (``inf`` if supports differ)."""
        lam = self._check_order(order)
        P, Pp = self._arrays
        return max(finite_pair_renyi(lam, P, Pp), finite_pair_renyi(lam, Pp, P))

    def rdp_curve(self, orders: np.ndarray) -> np.ndarray:
        """:meth:`rdp` at every one of ``orders``, vectorized over them."""
        P, Pp = self._arrays
        return np.maximum(finite_pair_renyi_curve(orders, P, Pp), finite_pair_renyi_curve(orders, Pp, P))


# --------------------------------------------------------------------------- randomized response


class RandomizedResponseProfile(FinitePairProfile):
    """``k``-ary randomized response: report the true value w.p. ``e^ε/(e^ε + k − 1)``, else a uniform other.

    Neighbours differ in the true value, so the pair is ``P = (p, r, r, …)``, ``P' = (r, p, r, …)``
    with ``p = e^ε/(e^ε + k − 1)``, ``r = 1/(e^ε + k − 1)`` (Warner 1965; Kairouz, Oh, Viswanath,
    *Extremal Mechanisms for Local Differential Privacy*, 2014). It is ``ε``-DP exactly.
    """

    family = "randomized_response"

    def __init__(self, eps: float, k: int = 2):
        where = "randomized_response"
        self.eps = v.nonnegative(eps, "eps", where)
        self.k = v.integer(k, "k", where, lo=2)

    @property
    def spec(self) -> str:
        return f"randomized_response(eps={self.eps!r}, k={self.k!r})"

    def _probs(self) -> tuple[float, float]:
        t = math.exp(-self.eps)
        p = 1.0 / (1.0 + (self.k - 1) * t)
        r = t / (1.0 + (self.k - 1) * t)
        return p, r

    def _pair(self) -> tuple[list[float], list[float]]:
        """Merged pair: the ``k − 2`` outcomes with equal probability under both are one outcome."""
        p, r = self._probs()
        if self.k == 2:
            return [p, r], [r, p]
        rest = (self.k - 2) * r
        return [p, r, rest], [r, p, rest]

    def _pair_mp(self, dps: int) -> tuple[list, list]:
        with mpmath.workdps(dps):
            t = mpmath.exp(-mpmath.mpf(self.eps))
            p = 1 / (1 + (self.k - 1) * t)
            r = t / (1 + (self.k - 1) * t)
            if self.k == 2:
                return [p, r], [r, p]
            return [p, r, (self.k - 2) * r], [r, p, (self.k - 2) * r]

    def finite_pair(self, merge: bool = False) -> tuple[list[float], list[float]]:
        """The ``k``-outcome pair ``(P, P')`` (``merge=True``: the ``k − 2`` indifferent outcomes as one)."""
        if merge or self.k == 2:
            return self._pair()
        p, r = self._probs()
        rest = [r] * (self.k - 2)
        return [p, r, *rest], [r, p, *rest]

    @property
    def max_privacy_loss(self) -> float:
        return self.eps

    @property
    def delta_at_infinity(self) -> float:
        """0: both outcomes have positive probability (float64 rounds ``e^-ε`` to 0 past ``ε ≈ 745``)."""
        return 0.0


# --------------------------------------------------------------------------- one (ε, δ) guarantee


class ApproxDPProfile(FinitePairProfile):
    """The tightest profile implied by one ``(ε, δ)``-DP guarantee (``δ = 0``: pure ``ε``-DP).

    Worst-case pair (Kairouz, Oh, Viswanath 2015, Thm 2.4): ``P = (δ, (1−δ)e^ε/(1+e^ε), (1−δ)/(1+e^ε), 0)``,
    ``P' = (0, (1−δ)/(1+e^ε), (1−δ)e^ε/(1+e^ε), δ)``; for ``ε' ≥ 0``

        δ(ε') = δ + (1 − δ) [e^ε − e^ε']_+ / (1 + e^ε),

    and the region is the ``(ε, δ)`` polygon (:func:`symsel.profiles.region.polygon_lower`).
    """

    family = "approx"

    def __init__(self, eps: float, delta: float):
        where = self.family
        self.eps = v.nonnegative(eps, "eps", where)
        self.delta_param = v.probability(delta, "delta", where)

    @property
    def spec(self) -> str:
        if self.family == "pure":
            return f"pure(eps={self.eps!r})"
        return f"approx(eps={self.eps!r}, delta={self.delta_param!r})"

    def _pair(self) -> tuple[list[float], list[float]]:
        d = self.delta_param
        s = 1.0 / (1.0 + math.exp(-self.eps))  # e^ε/(1 + e^ε)
        t = 1.0 / (1.0 + math.exp(self.eps)) if self.eps < 700 else 0.0
        return [d, (1 - d) * s, (1 - d) * t, 0.0], [0.0, (1 - d) * t, (1 - d) * s, d]

    def _pair_mp(self, dps: int) -> tuple[list, list]:
        with mpmath.workdps(dps):
            d, e = mpmath.mpf(self.delta_param), mpmath.mpf(self.eps)
            s, t = 1 / (1 + mpmath.exp(-e)), 1 / (1 + mpmath.exp(e))
            z = mpmath.mpf(0)
            return [d, (1 - d) * s, (1 - d) * t, z], [z, (1 - d) * t, (1 - d) * s, d]

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        d, e = self.delta_param, self.eps
        s = 1.0 / (1.0 + math.exp(-e))

        def nonneg(x: np.ndarray) -> np.ndarray:
            return d + (1.0 - d) * s * -np.expm1(np.minimum(x - e, 0.0))

        return delta_by_symmetry(eps, nonneg)

    @property
    def delta_at_infinity(self) -> float:
        return self.delta_param

    @property
    def max_privacy_loss(self) -> float:
        return self.eps if self.delta_param == 0 else math.inf

    def region_lower(self, q: ArrayLike) -> float | np.ndarray:
        """Exact: the ``(ε, δ)`` polygon."""
        return polygon_lower(q, self.eps, self.delta_param)

    def region_lower_mp(self, q: Any, dps: int) -> mpmath.mpf:
        return polygon_lower_mp(q, self.eps, self.delta_param, v.dps(dps, f"{self.family}.region_lower_mp"))


def pure(eps: float) -> ApproxDPProfile:
    """Pure ``ε``-DP: :class:`ApproxDPProfile` with ``δ = 0`` (binary randomized response)."""
    obj = ApproxDPProfile(eps, 0.0)
    obj.family = "pure"
    return obj


# --------------------------------------------------------------------------- several guarantees


class PointwiseProfile(FinitePairProfile):
    """The tightest profile implied by several guarantees ``(ε_i, δ_i)`` holding at once.

    The region is the intersection of the ``(ε_i, δ_i)`` polygons; its lower boundary is the upper
    envelope of their segments (:func:`symsel.profiles.region.profile_envelope`), a convex polyline. The
    profile is its hockey-stick ``δ(ε) = sup_q (q − e^ε q'_min(q))``, attained at a vertex (docs/setting.md;
    Kairouz, Oh, Viswanath 2015). As a certificate it is evaluated conservatively: ``δ(ε)`` from vertices computed
    at 40 digits and rounded up, the boundary with every line rounded down (docs/numerics.md).
    """

    family = "pointwise"

    def __init__(self, points: list[tuple[float, float]]):
        where = "pointwise"
        if isinstance(points, str | bytes) or not hasattr(points, "__iter__"):
            raise ParameterError("points", points, "a non-empty list of (eps, delta) pairs", where)
        pts = []
        for item in points:
            if isinstance(item, str | bytes) or not hasattr(item, "__len__") or len(item) != 2:
                raise ParameterError("points", points, "a non-empty list of (eps, delta) pairs", where)
            pts.append((v.nonnegative(item[0], "eps", where), v.probability(item[1], "delta", where)))
        if not pts:
            raise ParameterError("points", points, "a non-empty list of (eps, delta) pairs", where)
        self.points = tuple(pts)

    @property
    def spec(self) -> str:
        inner = ", ".join(f"({e!r}, {d!r})" for e, d in self.points)
        return f"pointwise(points=[{inner}])"

    @cached_property
    def envelope(self) -> LinesEnvelope:
        """The region boundary as a :class:`symsel.profiles.region.LinesEnvelope` (float64)."""
        eps, deltas = zip(*self.points, strict=True)
        return profile_envelope(np.array(eps), np.array(deltas))

    @cached_property
    def _vertices(self) -> tuple[np.ndarray, np.ndarray]:
        return self.envelope.vertices()

    def _pair(self) -> tuple[list[float], list[float]]:
        """The pair of the 40-digit boundary, each mass rounded to float64 (the float hull's vertices are up to
        ~1e-13 off, and composition and the Rényi curve read this pair); zero-length segments are dropped."""
        P, Pp = self._pair_mp(POINTWISE_DPS)
        kept = [(max(0.0, float(a)), max(0.0, float(b))) for a, b in zip(P, Pp, strict=True) if a > 0 or b > 0]
        return [a for a, _ in kept], [b for _, b in kept]

    def _pair_mp(self, dps: int) -> tuple[list, list]:
        xs, ys = self._vertices_mp(dps)
        with mpmath.workdps(dps):
            x = [*xs, mpmath.mpf(1)]
            y = [*ys, mpmath.mpf(1)]
            P = [x[j] - x[j - 1] for j in range(1, len(x))]
            Pp = [y[j] - y[j - 1] for j in range(1, len(y))]
            return P, Pp

    def _vertices_mp(self, dps: int) -> tuple[list, list]:
        eps, deltas = zip(*self.points, strict=True)
        return profile_envelope_mp(eps, deltas, dps).vertices_mp(dps)

    @cached_property
    def _certificate_vertices(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The boundary's vertices computed at :data:`POINTWISE_DPS` digits, then rounded to float64 (each within
        half an ulp), and the guarantees as arrays."""
        xs, ys = self._vertices_mp(POINTWISE_DPS)
        g_eps, g_delta = (np.array(t, dtype=float) for t in zip(*self.points, strict=True))
        return np.array([float(x) for x in xs]), np.array([float(y) for y in ys]), g_eps, g_delta

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        """``δ(ε) = max_v (x_v − e^ε y_v)`` over the boundary's vertices, rounded up.

        Float64 vertices of the float hull lose up to ~1e-13 relative where two guarantees' lines meet at a
        shallow angle, so the vertices come from the 40-digit hull instead (half an ulp each). The float64
        evaluation of ``x − e^ε y`` then errs by at most ``4u (x + e^ε y)`` (the vertex, ``exp``, the product, the
        difference; ``u = 2^-53``): each term is moved by :data:`POINTWISE_ROUNDING` times its size, and values in
        the subnormal range by ``1e-320``. The result is capped by ``δ_i`` for every guarantee with ``ε_i ≤ ε``
        (which holds exactly), so the profile still equals ``δ_i`` at an active guarantee's ``ε_i``."""
        xs, ys, g_eps, g_delta = self._certificate_vertices
        e = eps.reshape(-1, 1)
        with np.errstate(over="ignore", invalid="ignore"):
            scaled = np.where(ys == 0, 0.0, np.exp(e) * ys)
            terms = xs * (1 + POINTWISE_ROUNDING) - scaled * (1 - POINTWISE_ROUNDING)
        out = np.max(np.where(np.isnan(terms), -np.inf, terms), axis=1)
        out = np.where(out < 1e-300, out + 1e-320, out)
        caps = np.where(g_eps[None, :] <= e, g_delta[None, :], np.inf).min(axis=1)
        return np.clip(np.minimum(out, caps), 0.0, 1.0).reshape(eps.shape)

    def delta_mp(self, eps: Any, dps: int) -> mpmath.mpf:
        dps = v.dps(dps, "pointwise.delta_mp")
        xs, ys = self._vertices_mp(dps + 10)
        with mpmath.workdps(dps):
            return +hockey_stick_from_vertices_mp(eps, xs, ys, dps + 10)

    @property
    def delta_at_infinity(self) -> float:
        return min(d for _, d in self.points)

    def region_lower(self, q: ArrayLike) -> float | np.ndarray:
        """The max of the polygons' boundaries, each line rounded down (:meth:`LinesEnvelope.rounded_down`)."""
        return self.envelope.rounded_down(q)

    def region_lower_mp(self, q: Any, dps: int) -> mpmath.mpf:
        dps = v.dps(dps, "pointwise.region_lower_mp")
        eps, deltas = zip(*self.points, strict=True)
        env = profile_envelope_mp(eps, deltas, dps + 10)
        with mpmath.workdps(dps):
            return +env.evaluate_mp(q, dps + 10)


class PairProfile(FinitePairProfile):
    """The privacy profile of an arbitrary finite pair ``(P, P')`` of one mechanism on one pair of
    neighbours, taken in both directions: ``δ(ε) = max(H_{e^ε}(P‖P'), H_{e^ε}(P'‖P))``.

    The pair need not be symmetric, so the region is not the Neyman–Pearson polyline of one
    direction: it is the generic (conservative) boundary implied by the two-sided profile
    (:meth:`Profile.region_lower`), which contains both directions' tests.
    """

    family = "pair"

    def __init__(self, p: list[float], q: list[float]):
        where = "pair"
        P = [v.probability(x, "p", where) for x in p]
        Q = [v.probability(x, "q", where) for x in q]
        if len(P) != len(Q) or len(P) < 1:
            raise ParameterError("q", q, f"a list of the same length as p ({len(P)})", where)
        for name, masses in (("p", P), ("q", Q)):
            if abs(math.fsum(masses) - 1) > 1e-9:
                raise ParameterError(name, masses, "probabilities summing to 1", where)
        self._P, self._Q = P, Q

    @property
    def spec(self) -> str:
        return f"pair(p={self._P!r}, q={self._Q!r})"

    def _pair(self) -> tuple[list[float], list[float]]:
        return list(self._P), list(self._Q)

    def _pair_mp(self, dps: int) -> tuple[list, list]:
        with mpmath.workdps(dps):
            return [mpmath.mpf(repr(x)) for x in self._P], [mpmath.mpf(repr(x)) for x in self._Q]

    def region_lower(self, q: ArrayLike) -> float | np.ndarray:
        return Profile.region_lower(self, q)

    def region_lower_mp(self, q: Any, dps: int) -> mpmath.mpf:
        raise NotImplementedError("pair: the two-sided region has no mpmath form")
