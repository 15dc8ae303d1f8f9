"""Profiles known through a Rényi-DP curve ``ε(λ)``, converted optimally to ``(ε, δ)``.

Conversion (Canonne, Kamath, Steinke, *The Discrete Gaussian for Differential Privacy*, NeurIPS 2020,
Prop. 12 / Cor. 13; Balle, Barthe, Gaboardi, Hsu, Sato, *Hypothesis Testing Interpretations and Rényi
Differential Privacy*, AISTATS 2020, Thm 21): if ``D_λ ≤ ε(λ)`` then for every real ``ε``

    δ(ε) ≤ exp((λ − 1)(ε(λ) − ε)) / λ · (1 − 1/λ)^(λ − 1),
    ε(δ) ≤ ε(λ) + log((λ − 1)/λ) − (log δ + log λ)/(λ − 1),

and the best ``λ`` of a fixed grid is used for both, so ``ε(δ)`` is exactly the inverse of ``δ(ε)``
on that grid. For ``ε ≥ 0`` the total-variation bound ``δ(ε) ≤ δ(0) ≤ sqrt(1 − exp(−ε(λ)))``
(Bretagnolle--Huber, with ``KL ≤ D_λ``) is also used, as dp-accounting does; for ``ε < 0`` the
symmetry identity of :mod:`symsel.profiles.base` applies.

The default grid (:data:`DEFAULT_ORDERS`): 600 log-spaced orders on ``[1.01, 1e4]`` plus the integers
2..64. Measured for ``zcdp`` against the continuous optimum over ``λ``: the grid loses at most 4e-5
relative in ``ε`` for ``ρ ∈ [1e-3, 5]``, ``δ ∈ [1e-12, 1e-2]`` (1.2e-4 at ``ρ = 50``, where ``λ* ≈ 1.5``);
see ``tests/profiles/test_profiles_rdp.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from symsel import validate as v
from symsel.errors import ParameterError
from symsel.profiles.base import Profile, delta_by_symmetry
from symsel.profiles.region import finite_pair_renyi

DEFAULT_ORDERS = np.unique(np.concatenate([np.geomspace(1.01, 1e4, 600), np.arange(2.0, 65.0)]))


class RdpProfile(Profile):
    """A profile from an RDP curve ``rdp_fn(orders) -> ε(λ)`` (vectorized over a float array).

    Args:
        rdp_fn: the RDP curve; ``inf`` values are allowed (the order is then useless).
        orders: the grid of ``λ > 1`` optimized over (default :data:`DEFAULT_ORDERS`).
        name: a label used in ``spec`` when no spec string is given.
        spec: the spec string that rebuilds the profile (set by the named families).
        pure_eps: ``D_∞`` when known (used for ``ε(δ = 0)``).
        zcdp_rho: ``ρ`` when the curve is exactly ``ε(λ) = ρλ`` for every order (ρ-zCDP; set by the
            ``zcdp`` and ``rdp_gaussian`` families), so that closed forms for zCDP bases apply.
    """

    family = "rdp"

    def __init__(
        self,
        rdp_fn: Callable[[np.ndarray], Any],
        orders: Sequence[float] | np.ndarray | None = None,
        name: str = "rdp",
        spec: str | None = None,
        pure_eps: float | None = None,
        zcdp_rho: float | None = None,
    ):
        where = "rdp"
        if not callable(rdp_fn):
            raise ParameterError("rdp_fn", rdp_fn, "a callable orders -> RDP values", where)
        grid = DEFAULT_ORDERS if orders is None else np.asarray(list(orders), dtype=float)
        if grid.ndim != 1 or grid.size == 0 or np.any(~(grid > 1)) or np.any(~np.isfinite(grid)):
            raise ParameterError("orders", orders, "a non-empty list of finite Rényi orders > 1", where)
        self._rdp_fn = rdp_fn
        self.orders = np.unique(grid)
        self.name = name
        self._spec = spec
        self._pure_eps = pure_eps
        self.zcdp_rho = zcdp_rho

    @property
    def spec(self) -> str:
        return self._spec if self._spec is not None else f"rdp(name={self.name!r})"

    @cached_property
    def rdp_values(self) -> np.ndarray:
        """``ε(λ)`` on :attr:`orders` (NaN and negative values from the callable become ``inf``/0)."""
        values = np.asarray(self._rdp_fn(self.orders), dtype=float).reshape(self.orders.shape)
        values = np.where(np.isnan(values), np.inf, values)
        return np.maximum(values, 0.0)

    def rdp(self, order: float) -> float:
        lam = self._check_order(order)
        if math.isinf(lam):
            return self._pure_eps if self._pure_eps is not None else math.inf
        return float(np.asarray(self._rdp_fn(np.array([lam])), dtype=float).ravel()[0])

    # ------------------------------------------------------------------ conversions
    def _log_delta_nonneg(self, eps: np.ndarray) -> np.ndarray:
        lam, r = self.orders, self.rdp_values
        finite = np.isfinite(r)
        lam, r = lam[finite], r[finite]
        if lam.size == 0:
            return np.zeros_like(eps)
        best = self._conversion_envelope(eps)
        with np.errstate(divide="ignore"):
            tv = 0.5 * math.log(-math.expm1(-float(r.min()))) if r.min() > 0 else -math.inf
        out = np.minimum(np.minimum(best, tv), 0.0)
        if self._pure_eps is not None:
            out = np.minimum(out, _log_delta_pure(eps, self._pure_eps))
        return out

    @cached_property
    def _conversion_lines(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The conversion's log δ for order λ is a line in ε, ``a_λ − (λ − 1) ε``; their minimum (concave,
        piecewise linear) as :func:`lower_envelope` of the finite orders."""
        lam, r = self.orders, self.rdp_values
        finite = np.isfinite(r)
        lam, r = lam[finite], r[finite]
        return lower_envelope((lam - 1.0) * (r + np.log1p(-1.0 / lam)) - np.log(lam), -(lam - 1.0))

    def _conversion_envelope(self, eps: np.ndarray) -> np.ndarray:
        """min over orders of the conversion's log δ at each ε: one line per ε (searchsorted on the envelope's
        breakpoints) instead of every order; the value is always one order's own line, so never below the
        exact minimum (1e8 order-evaluations took 30 s in an exported envelope over DP-SGD)."""
        intercepts, slopes, breaks = self._conversion_lines
        index = np.searchsorted(breaks, eps)
        return intercepts[index] + slopes[index] * eps

    def _log_delta_finite(self, eps: np.ndarray) -> np.ndarray:
        if np.all(eps >= 0):
            return self._log_delta_nonneg(eps)
        with np.errstate(divide="ignore"):
            return np.log(self._delta_finite(eps))

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        return delta_by_symmetry(eps, lambda x: np.exp(self._log_delta_nonneg(x)))

    @property
    def delta_at_infinity(self) -> float:
        return 0.0 if np.any(np.isfinite(self.rdp_values)) else 1.0

    @property
    def max_privacy_loss(self) -> float:
        return self._pure_eps if self._pure_eps is not None else math.inf

    def epsilon(self, delta: float) -> float:
        """``min_λ [ε(λ) + log((λ−1)/λ) − (log δ + log λ)/(λ − 1)]`` over the grid, 0 if the TV bound
        already gives ``δ(0) ≤ δ``; ``δ = 0``: ``D_∞`` when known, else ``inf``."""
        d = self._check_delta(delta)
        lam, r = self.orders, self.rdp_values
        if np.all(r == 0):
            return 0.0
        if d == 0:
            return self.max_privacy_loss
        finite = np.isfinite(r)
        if not finite.any():
            return 0.0 if d >= 1 else math.inf
        lam, r = lam[finite], r[finite]
        if d**2 + math.expm1(-float(r.min())) >= 0 or self.log_delta(0.0) <= math.log(d):
            return 0.0  # δ(0) ≤ δ already (the TV bound, or the profile's own δ(0) read back exactly)
        eps = float(np.min(r + np.log1p(-1.0 / lam) - (math.log(d) + np.log(lam)) / (lam - 1.0)))
        if self._pure_eps is not None:
            eps = min(eps, _epsilon_pure(d, self._pure_eps))
        eps = max(0.0, eps)
        # Rounding of ε can leave δ(ε) a few ulps above δ where δ is steep: step up until it holds.
        for _ in range(64):
            if self.delta(eps) <= d:
                break
            eps = max(eps * (1 + 1e-15), eps + 1e-300)
        return eps


def _log_delta_pure(eps: np.ndarray, eps0: float) -> np.ndarray:
    """``log δ`` of the worst ``ε0``-DP pair at ``ε ≥ 0``: ``log((e^ε0 − e^ε)/(1 + e^ε0))``, ``-inf`` beyond ``ε0``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.log(-np.expm1(np.minimum(eps, eps0) - eps0)) - np.log1p(np.exp(-eps0))
    return np.where(eps >= eps0, -np.inf, val)


def _epsilon_pure(delta: float, eps0: float) -> float:
    """The ``ε`` at which the worst ``ε0``-DP pair has ``δ(ε) = delta``."""
    shrink = delta * (1.0 + math.exp(-eps0))  # 1 − e^(ε − ε0)
    return eps0 + math.log1p(-shrink) if shrink < 1 else 0.0


# --------------------------------------------------------------------------- named families


# the RDP curves of the families below: module-level callables, not closures, so that the profiles (and the
# bounds that hold them) pickle
@dataclass(frozen=True)
class _LinearRdp:
    """``ε(λ) = slope · λ`` (zCDP, the Gaussian mechanism)."""

    slope: float

    def __call__(self, lam: Any) -> np.ndarray:
        return self.slope * np.asarray(lam, dtype=float)


@dataclass(frozen=True)
class _PureRdp:
    """``ε(λ) = min(ε, λε²/2)`` of pure ``ε``-DP."""

    eps: float

    def __call__(self, lam: Any) -> np.ndarray:
        return np.minimum(self.eps, np.asarray(lam, dtype=float) * self.eps * self.eps / 2.0)


@dataclass(frozen=True)
class _RandomizedResponseRdp:
    """The RDP of binary randomized response at ``ε`` (the worst ``ε``-DP pair), ``p = 1/(1 + e^{-ε})``."""

    p: float

    def __call__(self, lam: Any) -> np.ndarray:
        pair = ([self.p, 1.0 - self.p], [1.0 - self.p, self.p])
        return np.array([finite_pair_renyi(float(x), *pair) for x in np.atleast_1d(lam)])


@dataclass(frozen=True)
class _SubsampledGaussianRdp:
    """``steps ×`` the RDP of the Poisson-subsampled Gaussian."""

    q: float
    sigma: float
    steps: int

    def __call__(self, lam: Any) -> np.ndarray:
        from symsel.profiles.dpaccounting import rdp_poisson_subsampled_gaussian

        return self.steps * rdp_poisson_subsampled_gaussian(self.q, self.sigma, lam)


def zcdp(rho: float) -> RdpProfile:
    """ρ-zCDP: ``ε(λ) = ρλ`` (Bun, Steinke, *Concentrated Differential Privacy*, TCC 2016)."""
    r = v.positive(rho, "rho", "zcdp")
    return RdpProfile(_LinearRdp(r), name="zcdp", spec=f"zcdp(rho={r!r})", zcdp_rho=r)


def rdp_gaussian(sigma: float, sensitivity: float = 1.0) -> RdpProfile:
    """Gaussian mechanism through its RDP ``λΔ²/(2σ²)`` (Mironov 2017, Prop. 7)."""
    s = v.positive(sigma, "sigma", "rdp_gaussian")
    d = v.positive(sensitivity, "sensitivity", "rdp_gaussian")
    rho = d * d / (2.0 * s * s)
    return RdpProfile(
        _LinearRdp(rho),
        name="rdp_gaussian",
        spec=f"rdp_gaussian(sigma={s!r}, sensitivity={d!r})",
        zcdp_rho=rho,
    )


def rdp_pure(eps: float, exact: bool = False) -> RdpProfile:
    """Pure ``ε``-DP through RDP: ``min(ε, λε²/2)`` (Bun--Steinke 2016, Prop. 3.3) or, with ``exact``,
    the RDP of binary randomized response, the worst ``ε``-DP pair (Mironov 2017, Prop. 5 form)."""
    e = v.nonnegative(eps, "eps", "rdp_pure")
    if not isinstance(exact, bool):
        raise ParameterError("exact", exact, "True or False", "rdp_pure")
    spec = f"rdp_pure(eps={e!r}, exact={exact!r})"
    if exact:
        return RdpProfile(_RandomizedResponseRdp(1.0 / (1.0 + math.exp(-e))), name="rdp_pure", spec=spec, pure_eps=e)
    return RdpProfile(_PureRdp(e), name="rdp_pure", spec=spec, pure_eps=e)


#: orders for the subsampled Gaussian: dp-accounting's fractional series does not converge for large
#: fractional orders, so large orders are integers only.
SUBSAMPLED_ORDERS = np.unique(
    np.concatenate(
        [np.geomspace(1.01, 64.0, 300), np.arange(2.0, 257.0), [384.0, 512.0, 768.0, 1024.0, 2048.0, 4096.0]]
    )
)


def rdp_subsampled_gaussian(q: float, sigma: float, steps: int = 1) -> RdpProfile:
    """DP-SGD through RDP: ``steps ×`` the RDP of the Poisson-subsampled Gaussian (Mironov, Talwar, Zhang 2019;
    :mod:`symsel.profiles.subsampled_rdp`), add/remove neighbours."""
    where = "rdp_subsampled_gaussian"
    qq, s = v.subsampled_gaussian(q, sigma, where)
    n = v.integer(steps, "steps", where, lo=1)
    return RdpProfile(
        _SubsampledGaussianRdp(qq, s, n), orders=SUBSAMPLED_ORDERS, name=where,
        spec=f"rdp_subsampled_gaussian(q={qq!r}, sigma={s!r}, steps={n!r})",
    )


def lower_envelope(intercepts: np.ndarray, slopes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The lines ``a_i + b_i x`` that attain ``min_i (a_i + b_i x)`` somewhere, by decreasing slope, and the
    breakpoints between consecutive ones (increasing): line ``k`` is the minimum on ``[x_{k-1}, x_k]``
    (convex-hull trick). Equal slopes keep the smaller intercept."""
    order = np.lexsort((intercepts, -slopes))  # slope descending, then intercept ascending
    a_sorted, b_sorted = intercepts[order], slopes[order]
    keep_a: list[float] = []
    keep_b: list[float] = []
    for a, b in zip(a_sorted.tolist(), b_sorted.tolist(), strict=True):
        if keep_b and b == keep_b[-1]:
            continue  # same slope, larger (or equal) intercept: never the minimum
        while len(keep_a) >= 2:
            # the last kept line is useless if the new one undercuts the one before it no later than it does
            x_new = (a - keep_a[-2]) / (keep_b[-2] - b)
            x_old = (keep_a[-1] - keep_a[-2]) / (keep_b[-2] - keep_b[-1])
            if x_new > x_old:
                break
            keep_a.pop()
            keep_b.pop()
        keep_a.append(a)
        keep_b.append(b)
    a_hull, b_hull = np.array(keep_a), np.array(keep_b)
    breaks = (a_hull[1:] - a_hull[:-1]) / (b_hull[:-1] - b_hull[1:])
    return a_hull, b_hull, breaks
