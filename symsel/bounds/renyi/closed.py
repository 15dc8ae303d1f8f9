"""Papernot & Steinke's closed forms: Theorem 2 / Corollary 3 / Corollary 4 (truncated negative binomial),
Theorem 6 (Poisson), the point mass of Appendix D.1, Corollary 21."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from symsel import validate
from symsel.bounds.renyi.curve import SelectionCurve, _pure_loss, base_rdp_curve
from symsel.distributions import Distribution
from symsel.errors import NotApplicableError, ParameterError
from symsel.profiles import GaussianProfile, Profile, RdpProfile
from symsel.profiles.base import check_order

#: offsets ``ε̂ − log(1 + 1/(λ−1))`` tried by the extended Theorem 6.
_THM6_OFFSETS = np.concatenate([[0.0], np.geomspace(1e-5, 30.0, 240)])


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
    e = validate.nonnegative(eps, "eps", "corollary3_epsilon")
    h = validate.real(eta, "eta", "corollary3_epsilon")
    if not h > -1:
        raise ParameterError("eta", eta, "eta > -1", "corollary3_epsilon")
    return (2.0 + h) * e


def corollary4_rdp(orders: Any, rho: float, eta: float, gamma: float, mean: float) -> np.ndarray:
    """P&S Corollary 4: ``ρ``-zCDP base, ``K ~ D_{η,γ}`` with mean ``E[K]``, assuming ``ρ ≤ log(1/γ)``:

        ε'(λ) = 2 sqrt(ρ log E[K]) + 2(1+η) sqrt(ρ log(1/γ)) − ηρ              if λ ≤ 1 + sqrt(log E[K] / ρ),
        ε'(λ) = ρ(λ − 1) + log E[K]/(λ − 1) + 2(1+η) sqrt(ρ log(1/γ)) − ηρ     otherwise.
    """
    where = "corollary4_rdp"
    r = validate.positive(rho, "rho", where)
    h = validate.real(eta, "eta", where)
    if not h > -1:
        raise ParameterError("eta", eta, "eta > -1", where)
    g = validate.real(gamma, "gamma", where)
    if not 0 < g < 1:
        raise ParameterError("gamma", gamma, "0 < gamma < 1", where)
    m = validate.real(mean, "mean", where)
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
    mu = validate.positive(mean, "mean", where)
    e0 = validate.positive(eps0, "eps0", where)
    d0 = validate.real(delta0, "delta0", where)
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
    ``zcdp`` / ``rdp_gaussian`` families (``ε(λ) = ρλ``, marked by the profile's ``zcdp_rho``)."""
    if isinstance(base, GaussianProfile):
        return base.mu**2 / 2.0
    if isinstance(base, RdpProfile) and base.zcdp_rho is not None:
        return float(base.zcdp_rho)
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
        # the best of k runs is a post-processing of all k runs: RDP composition, k ε(λ), which is below
        # P&S Appendix D.1's k ε(λ) + log k/(λ − 1) at every order (the same curve dp-accounting composes)
        return k * base_rdp_curve(base, lam)

    loss = _pure_loss(base)
    return SelectionCurve(
        "RDP composition of the k runs (post-processing; P&S Appendix D.1 adds log k/(λ−1))", raw, grid,
        k * loss if loss is not None else None, {"k": k},
    )
