"""The Rényi-DP route for private selection: Papernot & Steinke, *Hyperparameter Tuning with Rényi
Differential Privacy*, ICLR 2022 (MATH.md §6).

The selection ``A`` draws ``K`` (PGF ``φ``), runs a base mechanism ``Q`` ``K`` times and releases the
best run. Every bound here is an RDP curve ``λ ↦ ε'(λ)`` of ``A``, turned into an ``(ε, δ)`` profile by
:class:`symsel.profiles.RdpProfile` (optimal conversion on a grid of orders):

* **Lemma 7** (any PGF): ``D_λ(A‖A') ≤ ε(λ) + (1/(λ−1)) log sup_{(q,q') ∈ 𝓡} φ'(q)^λ φ'(q')^(1−λ)``,
  the sup certified by :func:`symsel.bounds.ratio.certified_log_sup` on the region of the base
  (its full profile, or one ``(ε̂, δ̂)`` polygon optimized over ``ε̂``);
* **Theorem 2** (truncated negative binomial ``D_{η,γ}``), optimized over ``λ̂`` on a grid, with
  **Corollary 3** (pure ``ε`` ⇒ ``(2+η)ε``-DP) as the ``λ = ∞`` cap and **Corollary 4** (ρ-zCDP) in
  closed form;
* **Theorem 6** (Poisson ``μ``), with ``ε̂ = log(1 + 1/(λ−1))``, the largest ``ε̂`` its hypothesis allows;
* the point mass of Appendix D.1 (``k`` fixed runs: ``k ε(λ) + log k/(λ−1)``);
* **Lemma 20** (an ``(ε0, δ0)``-DP base: ``δ = 1 − φ(1 − δ0)`` plus the bound for ``K'`` with PGF
  ``φ(x(1−δ0))/φ(1−δ0)`` and a pure ``ε0`` base) and **Corollary 21** (Poisson);
* **Lemma 22** (``K`` conditioned on ``K ≤ k``: extra terms added to any of the above).

Every curve is made non-decreasing in ``λ`` afterwards (Remark 5: ``D_λ`` grows with ``λ``, so a bound at
``λ2`` holds at every ``λ1 ≤ λ2``), as dp-accounting's ``RepeatAndSelectDpEvent`` does for Theorem 2.

Two optional refinements (``extended=True``) go beyond the printed statements; both follow from the
papers' own proofs:

* Theorem 2: the proof of P&S (App. B.2) reaches ``(1+η)/λ̂ · log(1 + (1/γ − 1) e^{(λ̂−1)ε̂})`` before
  relaxing it to ``(1+η)(1 − 1/λ̂)ε̂ + (1+η) log(1/γ)/λ̂``;
* Theorem 6: the last step of its proof bounds ``(λ−1)(1−q') − λ(1−q)`` using ``1 − q' ≤ e^ε̂ (1−q) + δ̂``
  and needs ``e^ε̂ ≤ λ/(λ−1)``; keeping ``1 − q' ≤ 1`` as well gives, for every ``ε̂ ≥ 0``,
  ``μ · max(δ̂, 1 − (λ/(λ−1)) (1 − δ̂) e^{−ε̂})`` in place of ``μ δ̂``, minimized over a grid of ``ε̂``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import mpmath
import numpy as np
import sympy

from symsel.bounds.ratio import certified_log_sup
from symsel.distributions import Distribution, z
from symsel.distributions import poisson as poisson_law
from symsel.distributions import tnb as tnb_law
from symsel.errors import NotApplicableError, ParameterError
from symsel.profiles import ApproxDPProfile, GaussianProfile, Profile, RdpProfile, pure
from symsel.profiles.base import check_order, delta_by_symmetry
from symsel.profiles.dpaccounting import DpsgdProfile, rdp_poisson_subsampled_gaussian
from symsel.profiles.rdp import DEFAULT_ORDERS, SUBSAMPLED_ORDERS
from symsel.region import polygon_lower

#: orders of the generic Lemma 7 curve (each needs a certified sup, about 10 ms): 160 log-spaced
#: orders on [1.01, 1e4] and the integers 2..32.
LEMMA7_ORDERS = np.unique(np.concatenate([np.geomspace(1.01, 1e4, 160), np.arange(2.0, 33.0)]))
#: at most this many orders of a base's own grid are used by Lemma 7.
LEMMA7_MAX_ORDERS = 200
#: offsets ``ε̂ − log(1 + 1/(λ−1))`` tried by the extended Theorem 6.
_THM6_OFFSETS = np.concatenate([[0.0], np.geomspace(1e-5, 30.0, 240)])
_METHODS = ("closed", "lemma7", "cor4")
_REGIONS = ("profile", "polygon")


# --------------------------------------------------------------------------- the curve


@dataclass(frozen=True, eq=False)
class SelectionCurve:
    """An RDP curve ``λ ↦ ε'(λ)`` of the selection, callable on arrays of orders ``λ > 1``.

    ``raw(λ)`` is a valid bound at each ``λ`` on its own; the call returns
    ``min(raw(λ), min_{λ_j ∈ grid, λ_j ≥ λ} raw(λ_j), pure_eps)`` (monotonicity of Rényi divergence,
    P&S Remark 5; ``D_λ ≤ D_∞``).

    Attributes:
        theorem: which result the curve implements (e.g. ``"Papernot-Steinke Theorem 2"``).
        raw: the per-order bound (vectorized).
        grid: the orders used for the monotone envelope (and for the conversion to ``(ε, δ)``).
        pure_eps: a bound on ``D_∞`` of the selection, when one is known.
        details: optimized parameters (``λ̂``, ``ε̂``, …) and the constants used.
    """

    theorem: str
    raw: Callable[[np.ndarray], np.ndarray]
    grid: np.ndarray
    pure_eps: float | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    @cached_property
    def _memo(self) -> dict[float, float]:
        return {}

    def raw_values(self, orders: Any) -> np.ndarray:
        """``raw`` at ``orders`` (memoized per order: Lemma 7 costs a certified sup per order)."""
        lam = np.atleast_1d(np.asarray(orders, dtype=float))
        todo = np.array(sorted({float(x) for x in lam.ravel()} - set(self._memo)))
        if todo.size:
            vals = np.asarray(self.raw(todo), dtype=float).reshape(todo.shape)
            vals = np.where(np.isnan(vals), np.inf, vals)
            self._memo.update(zip(todo.tolist(), np.maximum(vals, 0.0).tolist(), strict=True))
        return np.array([self._memo[float(x)] for x in lam.ravel()]).reshape(lam.shape)

    @cached_property
    def _suffix_min(self) -> np.ndarray:
        vals = self.raw_values(self.grid)
        return np.append(np.minimum.accumulate(vals[::-1])[::-1], np.inf)

    def __call__(self, orders: Any) -> np.ndarray:
        lam = np.asarray(orders, dtype=float)
        flat = lam.ravel()
        for x in flat[~(flat > 1)]:
            check_order(float(x), "renyi_selection")  # raises ParameterError naming the order
        finite = np.isfinite(flat)
        out = np.full(flat.shape, np.inf)
        if finite.any():
            vals = self.raw_values(flat[finite])
            idx = np.searchsorted(self.grid, flat[finite], side="left")
            out[finite] = np.minimum(vals, self._suffix_min[idx])
        if self.pure_eps is not None:
            out = np.minimum(out, self.pure_eps)
        return out.reshape(lam.shape)


class RenyiSelectionProfile(RdpProfile):
    """The ``(ε, δ)`` profile of a selection from its RDP curve (optimal conversion of
    :class:`~symsel.profiles.RdpProfile` on ``orders``).

    Attributes:
        curve: the :class:`SelectionCurve` (its ``theorem`` and ``details`` say how it was obtained).
        distribution, base: the law of ``K`` and the base mechanism's profile.
        method: ``"closed"``, ``"lemma7"`` or ``"cor4"``.
    """

    family = "renyi_selection"

    def __init__(self, curve: SelectionCurve, distribution: Distribution, base: Profile, method: str):
        spec = f"renyi_selection(dist={distribution.spec}, base={base.spec}, method={method!r})"
        super().__init__(curve, orders=curve.grid, name="renyi_selection", spec=spec, pure_eps=curve.pure_eps)
        self.curve = curve
        self.distribution = distribution
        self.base = base
        self.method = method

    @property
    def theorem(self) -> str:
        return self.curve.theorem

    @property
    def details(self) -> Mapping[str, Any]:
        return self.curve.details


class ApproximateRenyiProfile(Profile):
    """``δ_L``-approximate RDP (P&S Lemma 20) as an ``(ε, δ)`` profile.

    With ``A = (1 − δ_L) A_1 + δ_L P`` and ``A' = (1 − δ_L) A'_1 + δ_L P'`` (the decomposition in the proof
    of Lemma 20) and joint convexity of the hockey-stick divergence,
    ``H_{e^ε}(A‖A') ≤ δ_L + (1 − δ_L) δ_inner(ε)`` for ``ε ≥ 0``, where ``inner`` bounds ``(A_1, A'_1)``.
    """

    family = "approx_renyi_selection"

    def __init__(self, inner: Profile, delta_extra: float, theorem: str, details: Mapping[str, Any] | None = None):
        if not 0.0 <= delta_extra <= 1.0:
            raise ParameterError("delta_extra", delta_extra, "a number in [0, 1]", self.family)
        self.inner = inner
        self.delta_extra = float(delta_extra)
        self.theorem = theorem
        self.details = dict(details or {})

    @property
    def spec(self) -> str:
        return f"approx_renyi_selection(inner={self.inner.spec}, delta_extra={self.delta_extra!r})"

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        d = self.delta_extra

        def nonneg(x: np.ndarray) -> np.ndarray:
            return d + (1.0 - d) * np.asarray(self.inner.delta(x), dtype=float)

        return np.clip(delta_by_symmetry(eps, nonneg), 0.0, 1.0)

    @property
    def delta_at_infinity(self) -> float:
        return self.delta_extra + (1.0 - self.delta_extra) * self.inner.delta_at_infinity

    @property
    def max_privacy_loss(self) -> float:
        inner = self.inner.max_privacy_loss
        return math.inf if self.delta_extra > 0 or inner is None else inner

    def epsilon(self, delta: float) -> float:
        """``inner.epsilon((δ − δ_L)/(1 − δ_L))``; ``inf`` for ``δ ≤ δ_L`` (unless ``δ_L = 0``)."""
        d = self._check_delta(delta)
        if d >= 1.0:
            return 0.0
        if d < self.delta_extra or (d == self.delta_extra and self.delta_extra > 0):
            return math.inf
        return self.inner.epsilon(min(1.0, (d - self.delta_extra) / (1.0 - self.delta_extra)))


# --------------------------------------------------------------------------- helpers


def base_rdp_curve(base: Profile, orders: Any) -> np.ndarray:
    """The base mechanism's RDP ``ε(λ)`` at ``orders`` (vectorized where the profile allows).

    Raises :class:`NotApplicableError` when the profile has no RDP curve.
    """
    lam = np.atleast_1d(np.asarray(orders, dtype=float))
    if isinstance(base, RdpProfile):
        vals = np.asarray(base._rdp_fn(lam), dtype=float).reshape(lam.shape)
    elif isinstance(base, DpsgdProfile) and base.neighbouring == "add_remove":
        vals = base.steps * rdp_poisson_subsampled_gaussian(base.q, base.sigma, lam)
    else:
        out = []
        for x in lam:
            r = base.rdp(float(x))
            if r is None:
                raise NotApplicableError(
                    f"renyi: the base profile {base.spec} has no RDP curve (profile.rdp returns None); "
                    "the Rényi route needs D_λ(Q‖Q') — use the hockey-stick bounds instead"
                )
            out.append(float(r))
        vals = np.array(out)
    vals = np.where(np.isnan(vals), np.inf, vals)
    return np.maximum(vals, 0.0)


def default_orders(base: Profile, method: str = "closed") -> np.ndarray:
    """The order grid used when none is given: the base's own grid for RDP-curve bases, the
    subsampled-Gaussian grid for DP-SGD (dp-accounting's RDP is unreliable at large fractional orders),
    else ``DEFAULT_ORDERS``. Lemma 7 (a certified sup per order) uses :data:`LEMMA7_ORDERS`, or at most
    :data:`LEMMA7_MAX_ORDERS` evenly picked orders of the base's own grid."""
    if isinstance(base, RdpProfile):
        grid = np.asarray(base.orders, dtype=float)
    elif isinstance(base, DpsgdProfile):
        grid = SUBSAMPLED_ORDERS
    else:
        return LEMMA7_ORDERS if method == "lemma7" else DEFAULT_ORDERS
    if method == "lemma7" and grid.size > LEMMA7_MAX_ORDERS:
        grid = grid[np.unique(np.linspace(0, grid.size - 1, LEMMA7_MAX_ORDERS).round().astype(int))]
    return grid


def _orders(orders: Any, base: Profile, method: str) -> np.ndarray:
    if orders is None:
        return np.unique(np.asarray(default_orders(base, method), dtype=float))
    if isinstance(orders, str | bytes) or not hasattr(orders, "__iter__"):
        raise ParameterError("orders", orders, "a list of Rényi orders > 1", "renyi")
    grid = np.asarray(list(orders), dtype=float)
    if grid.ndim != 1 or grid.size == 0 or np.any(~(grid > 1)) or np.any(~np.isfinite(grid)):
        bad = grid[~(grid > 1) | ~np.isfinite(grid)]
        shown = float(bad[0]) if bad.size else list(orders)
        raise ParameterError("orders", shown, "finite Rényi orders > 1", "renyi")
    return np.unique(grid)


def _check_inputs(dist: Any, base: Any, method: str, where: str) -> None:
    if not isinstance(dist, Distribution):
        raise ParameterError("dist", dist, "a symsel Distribution", where)
    if not isinstance(base, Profile):
        raise ParameterError("base", base, "a symsel Profile", where)
    if method not in _METHODS:
        raise ParameterError("method", method, "one of " + ", ".join(map(repr, _METHODS)), where)


def _pure_loss(base: Profile) -> float | None:
    """``D_∞`` of the base when finite (pure DP), else ``None``."""
    loss = base.max_privacy_loss
    if loss is None or not math.isfinite(loss):
        return None
    return float(loss)


def tnb_parameters(dist: Distribution) -> tuple[float, float]:
    """``(η, γ)`` of a law recognized (from its PGF, :attr:`Distribution.family`) as the truncated
    negative binomial ``D_{η,γ}`` (P&S Definition 1; ``η = 0`` logarithmic, ``η = 1`` geometric)."""
    family = dist.family
    if family is None or family.name != "tnb":
        raise NotApplicableError(
            f"renyi: Theorem 2 of Papernot-Steinke is for the truncated negative binomial law, not {dist.spec}; "
            "use method='lemma7' (any PGF)"
        )
    values = family.floats()
    return values["eta"], values["gamma"]


# --------------------------------------------------------------------------- closed forms


def theorem2_constant(
    eta: float, gamma: float, lam_hat: np.ndarray, eps_hat: np.ndarray, extended: bool = False
) -> tuple[float, float]:
    """``(1+η) min_λ̂ [(1 − 1/λ̂) ε̂(λ̂) + log(1/γ)/λ̂]`` over ``λ̂ ∈ {1} ∪ lam_hat`` (P&S Theorem 2,
    eq. (5): the terms not depending on ``λ``), and the minimizing ``λ̂``.

    With ``extended`` the proof's sharper ``(1+η)/λ̂ · log(1 + (1/γ − 1) e^{(λ̂−1)ε̂})`` is used (equal at
    ``λ̂ = 1``, never larger). ``λ̂ = 1`` contributes ``(1+η) log(1/γ)`` (footnote 4: ``ε̂`` is then
    multiplied by 0).
    """
    lh = np.concatenate([[1.0], np.asarray(lam_hat, dtype=float)])
    eh = np.concatenate([[0.0], np.asarray(eps_hat, dtype=float)])
    log_inv_gamma = -math.log(gamma)
    with np.errstate(invalid="ignore", over="ignore"):
        if extended:
            log_odds = math.log1p(-gamma) + log_inv_gamma  # log(1/γ − 1)
            per = np.logaddexp(0.0, log_odds + (lh - 1.0) * eh) / lh
        else:
            per = (1.0 - 1.0 / lh) * eh + log_inv_gamma / lh
    per = np.where(np.isnan(per), np.inf, per)
    best = int(np.argmin(per))
    return (1.0 + eta) * float(per[best]), float(lh[best])


def corollary3_epsilon(eps: float, eta: float) -> float:
    """P&S Corollary 3: an ``(ε, 0)``-DP base and ``K ~ D_{η,γ}`` give a ``((2 + η) ε, 0)``-DP selection."""
    e = _nonnegative(eps, "eps", "corollary3_epsilon")
    h = _real(eta, "eta", "corollary3_epsilon")
    if not h > -1:
        raise ParameterError("eta", eta, "eta > -1", "corollary3_epsilon")
    return (2.0 + h) * e


def corollary4_rdp(orders: Any, rho: float, eta: float, gamma: float, mean: float) -> np.ndarray:
    """P&S Corollary 4: ``ρ``-zCDP base, ``K ~ D_{η,γ}`` with mean ``E[K]``, assuming ``ρ ≤ log(1/γ)``:

        ε'(λ) = 2 sqrt(ρ log E[K]) + 2(1+η) sqrt(ρ log(1/γ)) − ηρ              if λ ≤ 1 + sqrt(log E[K] / ρ),
        ε'(λ) = ρ(λ − 1) + log E[K]/(λ − 1) + 2(1+η) sqrt(ρ log(1/γ)) − ηρ     otherwise.
    """
    where = "corollary4_rdp"
    r = _positive(rho, "rho", where)
    h = _real(eta, "eta", where)
    if not h > -1:
        raise ParameterError("eta", eta, "eta > -1", where)
    g = _real(gamma, "gamma", where)
    if not 0 < g < 1:
        raise ParameterError("gamma", gamma, "0 < gamma < 1", where)
    m = _real(mean, "mean", where)
    if not m >= 1:
        raise ParameterError("mean", mean, "mean >= 1", where)
    if r > -math.log(g):
        raise NotApplicableError(f"{where}: Corollary 4 assumes rho <= log(1/gamma) = {-math.log(g):.6g}; got rho={r}")
    lam = np.asarray(orders, dtype=float)
    for x in lam.ravel()[~(lam.ravel() > 1)]:
        check_order(float(x), where)
    log_m = math.log(m)
    shared = 2.0 * (1.0 + h) * math.sqrt(r * -math.log(g)) - h * r
    knee = 1.0 + math.sqrt(log_m / r)
    with np.errstate(divide="ignore"):
        high = r * (lam - 1.0) + log_m / (lam - 1.0) + shared
    low = 2.0 * math.sqrt(r * log_m) + shared
    return np.where(lam <= knee, low, high)


def corollary21(mean: float, eps0: float, delta0: float) -> tuple[float, float, float]:
    """P&S Corollary 21: an ``(ε0, δ0)``-DP base and ``K ~ Poisson(μ)`` give ``δ'``-approximate
    ``(λ, ε')``-RDP for every ``λ ≤ 1 + 1/(e^ε0 − 1)``, with ``ε' = ε0 + (e^ε0 − 1) log μ`` and
    ``δ' = 1 − e^{−μ δ0}``. Returns ``(λ_max, ε', δ')``."""
    where = "corollary21"
    mu = _positive(mean, "mean", where)
    e0 = _positive(eps0, "eps0", where)
    d0 = _real(delta0, "delta0", where)
    if not 0 <= d0 <= 1:
        raise ParameterError("delta0", delta0, "0 <= delta0 <= 1", where)
    return 1.0 + 1.0 / math.expm1(e0), e0 + math.expm1(e0) * math.log(mu), -math.expm1(-mu * d0)


def _theorem2(dist: Distribution, base: Profile, grid: np.ndarray, extended: bool) -> SelectionCurve:
    eta, gamma = tnb_parameters(dist)
    mean = dist.mean
    eps_hat = base_rdp_curve(base, grid)
    const, lam_hat = theorem2_constant(eta, gamma, grid, eps_hat, extended)
    log_m = math.log(mean)

    def raw(lam: np.ndarray) -> np.ndarray:
        return base_rdp_curve(base, lam) + log_m / (lam - 1.0) + const

    loss = _pure_loss(base)
    pure_eps = corollary3_epsilon(loss, eta) if loss is not None else None
    eps_at = float(eps_hat[grid == lam_hat][0]) if lam_hat != 1.0 else 0.0
    details = {"eta": eta, "gamma": gamma, "mean": mean, "lambda_hat": lam_hat, "eps_hat": eps_at,
               "constant": const, "extended": extended}
    name = "Papernot-Steinke Theorem 2" + (" (proof's sharper form)" if extended else "")
    if pure_eps is not None:
        name += " + Corollary 3"
    return SelectionCurve(name, raw, grid, pure_eps, details)


def _corollary4(dist: Distribution, base: Profile, grid: np.ndarray) -> SelectionCurve:
    eta, gamma = tnb_parameters(dist)
    rho = zcdp_rho(base)
    mean = dist.mean

    def raw(lam: np.ndarray) -> np.ndarray:
        return corollary4_rdp(lam, rho, eta, gamma, mean)

    details = {"eta": eta, "gamma": gamma, "mean": mean, "rho": rho,
               "lambda_hat": math.sqrt(-math.log(gamma) / rho)}
    return SelectionCurve("Papernot-Steinke Corollary 4", raw, grid, None, details)


def zcdp_rho(base: Profile) -> float:
    """``ρ`` of a base known to be exactly ``ρ``-zCDP for all orders: a Gaussian (``μ²/2``) or the
    ``zcdp`` / ``rdp_gaussian`` families (``ε(λ) = ρλ``)."""
    if isinstance(base, GaussianProfile):
        return base.mu**2 / 2.0
    if isinstance(base, RdpProfile) and base.spec.startswith(("zcdp(", "rdp_gaussian(")):
        return float(base.rdp(2.0)) / 2.0
    raise NotApplicableError(
        f"renyi: Corollary 4 needs a rho-zCDP base (gaussian, gdp, zcdp, rdp_gaussian), not {base.spec}"
    )


def theorem6_delta_term(lam: np.ndarray, base: Profile, extended: bool) -> tuple[np.ndarray, np.ndarray]:
    """The ``δ̂`` term of P&S Theorem 6 at each order, and the ``ε̂`` used.

    Paper: ``ε̂ = log(1 + 1/(λ−1))`` (the largest ``ε̂`` the hypothesis ``e^ε̂ ≤ 1 + 1/(λ−1)`` allows; ``δ(ε̂)``
    is non-increasing, so it is the best one) and the term is ``δ(ε̂)``. Extended (see the module
    docstring): ``min_{ε̂ ≥ ε̂*} max(δ(ε̂), 1 − (λ/(λ−1))(1 − δ(ε̂)) e^{−ε̂})`` over a grid of ``ε̂``.
    """
    lam = np.asarray(lam, dtype=float)
    e_star = np.log1p(1.0 / (lam - 1.0))
    if not extended:
        return np.asarray(base.delta(e_star), dtype=float).reshape(lam.shape), e_star
    e_hat = e_star[:, None] + _THM6_OFFSETS[None, :]
    d_hat = np.asarray(base.delta(e_hat.ravel()), dtype=float).reshape(e_hat.shape)
    ratio = (lam / (lam - 1.0))[:, None]
    term = np.maximum(d_hat, 1.0 - ratio * (1.0 - d_hat) * np.exp(-e_hat))
    term[:, 0] = d_hat[:, 0]  # ε̂ = ε̂*: the paper's term exactly (the max above only adds rounding there)
    best = np.argmin(term, axis=1)
    rows = np.arange(lam.size)
    return term[rows, best], e_hat[rows, best]


def _theorem6(dist: Distribution, base: Profile, grid: np.ndarray, extended: bool) -> SelectionCurve:
    family = dist.family
    if family is None or family.name != "poisson":
        raise NotApplicableError(f"renyi: Theorem 6 of Papernot-Steinke is for a Poisson law, not {dist.spec}")
    mu = family.floats()["mu"]

    def raw(lam: np.ndarray) -> np.ndarray:
        term, _ = theorem6_delta_term(lam, base, extended)
        return base_rdp_curve(base, lam) + mu * term + math.log(mu) / (lam - 1.0)

    loss = _pure_loss(base)
    # λ → ∞ with ε̂ = 0 (allowed for every λ): D_∞(A‖A') ≤ D_∞(Q‖Q') + μ δ(0).
    pure_eps = loss + mu * float(base.delta(0.0)) if loss is not None else None
    term, e_hat = theorem6_delta_term(grid, base, extended)
    details = {"mu": mu, "eps_hat": e_hat, "delta_term": term, "extended": extended}
    name = "Papernot-Steinke Theorem 6" + (" (relaxed hypothesis)" if extended else "")
    return SelectionCurve(name, raw, grid, pure_eps, details)


def _point_mass(dist: Distribution, base: Profile, grid: np.ndarray) -> SelectionCurve:
    family = dist.family
    if family is None or family.name != "point":
        raise NotApplicableError(f"renyi: P&S Appendix D.1 is for a fixed number of runs, not {dist.spec}")
    k = int(family.params["k"])

    def raw(lam: np.ndarray) -> np.ndarray:
        return k * base_rdp_curve(base, lam) + math.log(k) / (lam - 1.0)

    loss = _pure_loss(base)
    return SelectionCurve(
        "Papernot-Steinke Appendix D.1 (point mass: k runs)", raw, grid, k * loss if loss is not None else None,
        {"k": k},
    )


# --------------------------------------------------------------------------- Lemma 7 (any PGF)


def lemma7_log_sup(
    dist: Distribution,
    boundary: Callable[[np.ndarray], np.ndarray],
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
    dist: Distribution, base: Profile, grid: np.ndarray, region: str, eps_hat_grid: Sequence[float] | None
) -> SelectionCurve:
    if region not in _REGIONS:
        raise ParameterError("region", region, "one of " + ", ".join(map(repr, _REGIONS)), "renyi")
    loss = _pure_loss(base)
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
            boundaries.append(((lambda q, e1=e1, d1=d1: polygon_lower(q, e1, d1)), corner, float(e1)))

    def raw(lam: np.ndarray) -> np.ndarray:
        lam = np.atleast_1d(np.asarray(lam, dtype=float))
        order = np.argsort(lam)
        sorted_lam = lam[order]
        rdp = base_rdp_curve(base, sorted_lam)
        sup = np.full(sorted_lam.shape, np.inf)
        for b, c, _ in boundaries:
            sup = np.minimum(sup, convex_upper_fill(sorted_lam, lambda x, b=b, c=c: lemma7_log_sup(dist, b, x, c)))
        out = np.empty(lam.shape)
        with np.errstate(invalid="ignore"):
            out[order] = np.where(np.isfinite(rdp), rdp + sup / (sorted_lam - 1.0), np.inf)
        return out

    pure_eps = None
    if loss is not None:
        pure_eps = loss + min(lemma7_log_sup(dist, b, math.inf, c) for b, c, _ in boundaries)
        pure_eps = pure_eps if math.isfinite(pure_eps) else None
    details = {"region": region, "eps_hat_grid": [e for _, _, e in boundaries if e is not None]}
    return SelectionCurve(f"Papernot-Steinke Lemma 7 (region: {region})", raw, grid, pure_eps, details)


# --------------------------------------------------------------------------- Lemma 22 (truncation)


def truncation_terms(dist: Distribution, k_max: int, dps: int = 30) -> tuple[float, float]:
    """The two extra terms of P&S Lemma 22 for ``K`` conditioned on ``K ≤ k_max``:
    ``a = log(1/P[K ≤ k])`` (divided by ``λ − 1``) and ``b = log(1 + E[K·1{K>k}]/(E[K] − E[K·1{K>k}]))``
    ``= log(E[K] / E[K·1{K≤k}])``. Returns ``(a, b)`` rounded up."""
    kk = int(k_max)
    if kk != k_max or kk < 1:
        raise ParameterError("k_max", k_max, "an integer k_max >= 1", "truncation_terms")
    with mpmath.workdps(dps):
        masses = [dist.pmf_mp(j, dps) for j in range(kk + 1)]
        head_mass = mpmath.fsum(masses)
        head_mean = mpmath.fsum(j * p for j, p in enumerate(masses))
        mean = dist.mean_mp(dps)
        if head_mean <= 0:
            raise NotApplicableError(f"renyi: {dist.spec} has no mass on 1..{kk}; Lemma 22 does not apply")
        a = -mpmath.log(head_mass)
        b = mpmath.log(mean / head_mean)
        pad = mpmath.mpf(10) ** (-dps + 5)
        return float(max(a, 0) + pad), float(max(b, 0) + pad)


def _lemma22(inner: SelectionCurve, dist: Distribution, k_max: int) -> SelectionCurve:
    a, b = truncation_terms(dist, k_max)

    def raw(lam: np.ndarray) -> np.ndarray:
        # the inner *raw* bound: it bounds the Lemma 7 expression at λ itself (monotonicity is applied
        # only once, to the final curve of the truncated selection).
        return inner.raw_values(lam) + a / (np.asarray(lam, dtype=float) - 1.0) + b

    details = {**inner.details, "k_max": int(k_max), "log_inv_head_mass": a, "log_mean_ratio": b}
    return SelectionCurve(f"Papernot-Steinke Lemma 22 with {inner.theorem}", raw, inner.grid, None, details)


def split_truncated(dist: Distribution) -> tuple[Distribution, int] | None:
    """``(inner law, k_max)`` of a :func:`symsel.distributions.truncated` law, else ``None``."""
    return dist.truncation_of


# --------------------------------------------------------------------------- public entry points


def renyi_selection_curve(
    dist: Distribution,
    base: Profile,
    method: str = "closed",
    orders: Sequence[float] | None = None,
    *,
    extended: bool = False,
    region: str = "profile",
    eps_hat_grid: Sequence[float] | None = None,
) -> SelectionCurve:
    """The selection's RDP curve ``λ ↦ ε'(λ)`` (Papernot & Steinke, ICLR 2022).

    Args:
        dist: the law of ``K``.
        base: the base mechanism's profile; it must have an RDP curve (``base.rdp``).
        method: ``"closed"`` -- Theorem 2 (+ Corollary 3) for ``tnb``/``geometric``/``logarithmic``,
            Theorem 6 for ``poisson``, the point-mass bound for ``point``, Lemma 22 (with the closed form
            of the untruncated law) for ``truncated``; ``"cor4"`` -- Corollary 4 (TNB law, zCDP base);
            ``"lemma7"`` -- Lemma 7 for any PGF with a certified sup over the base's privacy region.
        orders: the grid of orders (also the ``λ̂`` grid of Theorem 2); default :func:`default_orders`.
        extended: use the proofs' sharper forms of Theorems 2 and 6 (module docstring).
        region: Lemma 7 only: ``"profile"`` (the base's f-DP region ``base.region_lower``) or ``"polygon"``
            (one ``(ε̂, δ(ε̂))`` polygon, best over ``eps_hat_grid``).

    Raises:
        NotApplicableError: no closed form for this law / base, or the base has no RDP curve.
        ParameterError: a bad argument (named).
    """
    where = "renyi_selection_curve"
    _check_inputs(dist, base, method, where)
    if isinstance(base, ApproxDPProfile) and base.delta_param > 0:
        raise NotApplicableError(
            f"renyi: {base.spec} has no finite RDP curve; its selection is delta-approximate RDP (Lemma 20): "
            "use renyi_bound, which applies Lemma 20"
        )
    grid = _orders(orders, base, method)
    base_rdp_curve(base, grid[:1])  # fail early when the base has no RDP curve
    if method == "lemma7":
        return _lemma7(dist, base, grid, region, eps_hat_grid)
    if method == "cor4":
        return _corollary4(dist, base, grid)
    family = dist.family  # recognized from the PGF: the law decides, not how it was typed
    if family is not None and family.name == "tnb":
        return _theorem2(dist, base, grid, extended)
    if family is not None and family.name == "poisson":
        return _theorem6(dist, base, grid, extended)
    if family is not None and family.name == "point":
        return _point_mass(dist, base, grid)
    split = split_truncated(dist)
    if split is not None:
        inner_dist, k_max = split
        inner = renyi_selection_curve(inner_dist, base, method, grid, extended=extended)
        return _lemma22(inner, inner_dist, k_max)
    raise NotApplicableError(
        f"renyi: Papernot-Steinke give no closed form for {dist.spec} (closed forms: truncated negative "
        "binomial, Poisson, point mass, truncations of these); use method='lemma7', which handles any PGF"
    )


def lemma22_curve(
    dist: Distribution,
    k_max: int,
    base: Profile,
    method: str = "closed",
    orders: Sequence[float] | None = None,
    *,
    extended: bool = False,
) -> SelectionCurve:
    """P&S Lemma 22: the RDP curve of the selection with ``K`` conditioned on ``K ≤ k_max``, from a bound
    for the untruncated law ``dist`` plus ``log(1/P[K ≤ k])/(λ−1) + log(E[K]/E[K·1{K≤k}])``."""
    inner = renyi_selection_curve(dist, base, method, orders, extended=extended)
    return _lemma22(inner, dist, k_max)


def approximate_dp_law(dist: Distribution, delta0: float) -> Distribution:
    """The law ``K'`` of P&S Lemma 20: ``P[K' = k] ∝ P[K = k](1 − δ0)^k``, PGF ``φ(x(1−δ0))/φ(1−δ0)``.

    Closed families stay closed: ``D_{η,γ}`` becomes ``D_{η,γ'}`` with ``1 − γ' = (1−γ)(1−δ0)``, and
    ``Poisson(μ)`` becomes ``Poisson(μ(1−δ0))``; other laws get the substituted PGF.
    """
    d0 = _real(delta0, "delta0", "approximate_dp_law")
    if not 0 <= d0 < 1:
        raise ParameterError("delta0", delta0, "0 <= delta0 < 1", "approximate_dp_law")
    if d0 == 0:
        return dist
    keep = 1 - sympy.Rational(repr(d0))
    family = dist.family
    if family is not None and family.name == "tnb":
        return tnb_law(family.params["eta"], gamma=1 - (1 - family.params["gamma"]) * keep)
    if family is not None and family.name == "poisson":
        return poisson_law(family.params["mu"] * keep)
    pgf = dist.pgf.subs(z, z * keep) / dist.pgf.subs(z, keep)
    return Distribution("pgf", pgf, {}, support_min=dist.support_min, support_max=dist.support_max,
                        label=f"lemma20({dist.spec}, delta0={d0!r})")


def lemma20_bound(
    dist: Distribution,
    eps0: float,
    delta0: float,
    method: str = "closed",
    orders: Sequence[float] | None = None,
    *,
    extended: bool = False,
) -> ApproximateRenyiProfile:
    """P&S Lemma 20 for an ``(ε0, δ0)``-DP base: the selection is ``δ``-approximately
    ``(λ, ε'(λ))``-RDP with ``δ = 1 − φ(1 − δ0)`` and ``ε'`` the bound (``method``) for ``K'``
    (:func:`approximate_dp_law`) and a pure ``ε0`` base (exact RDP of randomized response, the worst
    ``ε0``-DP pair). Returned as the profile ``δ + (1 − δ) δ_inner(ε)``."""
    where = "lemma20_bound"
    e0 = _nonnegative(eps0, "eps0", where)
    d0 = _real(delta0, "delta0", where)
    if not 0 <= d0 < 1:
        raise ParameterError("delta0", delta0, "0 <= delta0 < 1", where)
    if not isinstance(dist, Distribution):
        raise ParameterError("dist", dist, "a symsel Distribution", where)
    inner_base = pure(e0)
    inner_dist = approximate_dp_law(dist, d0)
    with mpmath.workdps(40):
        delta_extra = float(1 - dist.phi_mp(1 - mpmath.mpf(repr(d0)), 40))
    inner = renyi_bound(inner_dist, inner_base, method, orders, extended=extended)
    details = {"delta_extra": delta_extra, "inner_distribution": inner_dist.spec, "inner": inner.details}
    return ApproximateRenyiProfile(inner, delta_extra, f"Papernot-Steinke Lemma 20 with {inner.theorem}", details)


def renyi_bound(
    dist: Distribution,
    base: Profile,
    method: str = "closed",
    orders: Sequence[float] | None = None,
    *,
    extended: bool = False,
    region: str = "profile",
    eps_hat_grid: Sequence[float] | None = None,
) -> RenyiSelectionProfile | ApproximateRenyiProfile:
    """The selection's ``(ε, δ)`` profile by the Rényi route (arguments as :func:`renyi_selection_curve`).

    An ``(ε0, δ0)``-DP base (``ApproxDPProfile`` with ``δ0 > 0``, which has no finite RDP curve) goes
    through Lemma 20 (:func:`lemma20_bound`). The result's ``theorem`` and ``details`` record what was
    used; ``epsilon(δ)`` / ``delta(ε)`` use the optimal RDP conversion on the order grid.
    """
    _check_inputs(dist, base, method, "renyi_bound")
    if isinstance(base, ApproxDPProfile) and base.delta_param > 0:
        return lemma20_bound(dist, base.eps, base.delta_param, method, orders, extended=extended)
    curve = renyi_selection_curve(
        dist, base, method, orders, extended=extended, region=region, eps_hat_grid=eps_hat_grid
    )
    return RenyiSelectionProfile(curve, dist, base, method)


# --------------------------------------------------------------------------- validation


def _real(value: Any, name: str, where: str) -> float:
    if isinstance(value, bool):
        raise ParameterError(name, value, "a real number", where)
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ParameterError(name, value, "a real number", where) from None
    if math.isnan(x):
        raise ParameterError(name, value, "a real number (not NaN)", where)
    return x


def _positive(value: Any, name: str, where: str) -> float:
    x = _real(value, name, where)
    if not (0 < x < math.inf):
        raise ParameterError(name, value, f"a finite {name} > 0", where)
    return x


def _nonnegative(value: Any, name: str, where: str) -> float:
    x = _real(value, name, where)
    if not (0 <= x < math.inf):
        raise ParameterError(name, value, f"a finite {name} >= 0", where)
    return x
