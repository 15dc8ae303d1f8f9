"""The Rényi route's entry points: the selection curve for a law and base, Lemma 20 for (ε0, δ0)-DP bases."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import mpmath
import numpy as np
import sympy

from symsel import validate
from symsel.bounds.renyi.closed import _corollary4, _point_mass, _theorem2, _theorem6
from symsel.bounds.renyi.curve import (
    ApproximateRenyiProfile,
    RenyiSelectionProfile,
    SelectionCurve,
    _check_inputs,
    _orders,
    base_rdp_curve,
)
from symsel.bounds.renyi.lemma7 import _lemma7
from symsel.bounds.renyi.truncation import _lemma22, split_truncated
from symsel.distributions import Distribution, z
from symsel.distributions import poisson as poisson_law
from symsel.distributions import tnb as tnb_law
from symsel.errors import NotApplicableError, ParameterError
from symsel.profiles import ApproxDPProfile, Profile, pure

# --------------------------------------------------------------------------- public entry points


def renyi_selection_curve(
    dist: Distribution,
    base: Profile,
    method: str = "closed",
    orders: Sequence[float] | None = None,
    *,
    extended: bool = False,
    region: str = "profile",
    eps_hat_grid: Sequence[float] | np.ndarray | None = None,
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
    curve = _selection_curve(dist, base, method, orders, extended=extended, region=region, eps_hat_grid=eps_hat_grid)
    return with_bottom_output(curve, float(dist.p0))


def with_bottom_output(curve: SelectionCurve, p0: float) -> SelectionCurve:
    """The curve with the output ``⊥`` of ``K = 0`` counted: it has mass ``φ(0)`` on both sides, so it adds
    ``φ(0)`` to ``Σ_y A(y)^λ A'(y)^{1−λ}``, whose other outputs the theorems bound by ``e^{(λ−1) raw(λ)}``:
    ``ε'(λ) = log(φ(0) + e^{(λ−1) raw(λ)}) / (λ − 1)`` (docs/renyi.md). Without it a law with ``E[K] < 1``
    (Poisson 0.5: Theorem 6's ``log μ/(λ − 1) < 0``) comes out below 0, is clipped to 0 and certifies
    ``ε = 0`` where the exact selection has ``δ(0) ≈ 0.1``; with ``φ(0) = 0`` nothing changes."""
    if not p0 > 0:
        return curve
    log_p0, inner = math.log(p0), curve.raw

    def raw(lam: np.ndarray) -> np.ndarray:
        lam = np.asarray(lam, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            return np.logaddexp(log_p0, (lam - 1.0) * np.asarray(inner(lam), dtype=float)) / (lam - 1.0)

    details = {**curve.details, "bottom_output_mass": p0}
    floor = None if curve.floor is None else with_bottom_output(curve.floor, p0)
    return replace(curve, raw=raw, details=details, theorem=f"{curve.theorem}, with the output of K = 0 counted",
                   floor=floor)


def _selection_curve(
    dist: Distribution,
    base: Profile,
    method: str,
    orders: Sequence[float] | np.ndarray | None,
    *,
    extended: bool,
    region: str,
    eps_hat_grid: Sequence[float] | np.ndarray | None,
) -> SelectionCurve:
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
        inner = _selection_curve(inner_dist, base, method, grid, extended=extended, region=region,
                                 eps_hat_grid=eps_hat_grid)
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
    d0 = validate.real(delta0, "delta0", "approximate_dp_law")
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
    e0 = validate.nonnegative(eps0, "eps0", where)
    d0 = validate.real(delta0, "delta0", where)
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
    eps_hat_grid: Sequence[float] | np.ndarray | None = None,
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
