"""Hockey-stick bounds on the privacy profile of private selection, for any law of K.

Koskela, Redberg & Wang (ICML 2024), Theorem 4.1, applied with ``f(x) = [x - e^eps]_+`` (docs/ratio-methods.md,
§4): if ``R >= sup_{(q, q') in region} phi'(q) / phi'(q')`` over the privacy region of the base
mechanism, then for every real ``eps``

    H_{e^eps}(A || A') <= m * delta_Q(eps - log R) + P[K = 0] * [1 - e^eps]_+ ,   m = E[K],

(the ``K = 0`` atom is the same symbol for both inputs and only counts for ``eps < 0``).

Three regions give three values of ``R``:

* ``paper``: the closed forms of Theorem 5.2 (truncated negative binomial, including geometric and
  logarithmic), Theorem 5.7 (binomial, with its validity condition) and Corollary 5.8 (Poisson),
  minimized over ``eps1 >= 0``;
* ``polygon``: the certified supremum over the exact ``(eps1, delta(eps1))`` polygon, minimized over
  ``eps1 >= 0``;
* ``fdp``: the certified supremum over the whole privacy region of the base (its f-DP boundary).

The regions shrink from top to bottom, so ``fdp <= polygon <= paper`` up to the certificates'
tolerances; the methods are computed independently (only ``best`` combines methods). Every ``eps1`` yields a valid
bound, so the minimization over ``eps1`` may be approximate without harming soundness; the ``eps1``
used is reported. The supremum is computed by :func:`symsel.bounds.ratio.certified_log_sup`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar

from symsel.bounds.mixture import HingeMixture, MixtureProfile
from symsel.bounds.precision import VALUE_MARGIN, dphi_float_error
from symsel.bounds.ratio import SupCertificate, attained_log_sup, certified_log_sup
from symsel.distributions import Distribution
from symsel.errors import NotApplicableError, ParameterError
from symsel.profiles import Profile
from symsel.profiles.region import polygon_lower

HOCKEY_STICK_METHODS = ("paper", "polygon", "fdp")
#: number of ``eps1`` points scanned before the local refinement.
EPS1_SCAN_POINTS = 33


@dataclass(frozen=True)
class RatioBound:
    """``log R`` with how it was obtained."""

    log_ratio: float
    eps1: float | None = None
    certificate: SupCertificate | None = None
    theorem: str = ""


class SelectionProfile(MixtureProfile):
    """The certified privacy profile of the selection ``A`` built from a base :class:`Profile`:
    ``delta_A(eps) = min(1, m delta_Q(eps - log R) + p0 [1 - e^eps]_+)`` (module docstring), the one-term
    mixture ``(c, t) = (m, R)``."""

    def __init__(self, dist: Distribution, base: Profile, method: str, ratio: RatioBound):
        mixture = HingeMixture(np.array([ratio.log_ratio]), np.array([float(dist.mean)]), 0.0)
        super().__init__(dist, base, mixture, method)
        self.ratio = ratio

    @property
    def log_ratio(self) -> float:
        return self.ratio.log_ratio

    @property
    def vacuous(self) -> bool:
        return not math.isfinite(self.log_ratio)


# ---------------------------------------------------------------------------------- the sup
def corner_slope(base: Profile) -> float | None:
    """``c`` with ``q'_min(q) >= c q``: ``e^{-eps_max}`` when the base's privacy loss is bounded."""
    loss = base.max_privacy_loss
    if loss is None or not math.isfinite(loss):
        return None
    return math.exp(-loss)


#: what ``fdp`` implements.
FDP_THEOREM = "Koskela et al. Thm 4.1 over the f-DP region"


def fdp_ratio(dist: Distribution, base: Profile, tol: float | None = None) -> RatioBound:
    """``log R`` over the whole privacy region of the base (its f-DP lower boundary), certified."""
    kwargs: dict[str, Any] = {} if tol is None else {"tol": tol}
    cert = certified_log_sup(dist.log_dphi, base.region_lower, corner_slope=corner_slope(base), **kwargs)
    return RatioBound(cert.upper + _float_allowance(dist), None, cert, FDP_THEOREM)


def fdp_floor(dist: Distribution, base: Profile) -> SelectionProfile:
    """A profile below ``fdp``'s at every ``ε``, about ten times cheaper: the same recipe with ``log R`` replaced by
    the ratio attained at sampled points of the boundary (:func:`~symsel.bounds.ratio.attained_log_sup`), which is
    at most the certified supremum; the recipe's ``δ`` grows with ``log R``. ``best`` asks it before ``fdp`` itself."""
    attained = float(attained_log_sup(dist.log_dphi, base.region_lower, np.ones(1), np.ones(1))[0])
    return SelectionProfile(dist, base, "fdp_floor", RatioBound(attained, None, None, f"a floor of {FDP_THEOREM}"))


def _float_allowance(dist: Distribution) -> float:
    """Allowance on ``log φ'(q) − log φ'(q')`` for the float64 error of ``φ'`` beyond the certificate's own
    margin (:func:`symsel.bounds.precision.dphi_float_error`; 0 for laws evaluated to ``VALUE_MARGIN``)."""
    error = dphi_float_error(dist)
    return 0.0 if error <= VALUE_MARGIN else 2 * error


def polygon_ratio_at(dist: Distribution, base: Profile, eps1: float, tol: float | None = None) -> RatioBound:
    """``log R`` over the single ``(eps1, delta(eps1))`` polygon, certified."""
    delta1 = float(base.delta(eps1))
    kwargs: dict[str, Any] = {} if tol is None else {"tol": tol}
    slope = math.exp(-eps1) if delta1 == 0.0 else None
    cert = certified_log_sup(dist.log_dphi, lambda q: polygon_lower(q, eps1, delta1), corner_slope=slope, **kwargs)
    theorem = "Koskela et al. Thm 4.1 over the (eps1, delta(eps1)) polygon"
    return RatioBound(cert.upper + _float_allowance(dist), eps1, cert, theorem)


def polygon_ratio(dist: Distribution, base: Profile) -> RatioBound:
    """``log R`` over the best polygon found by a scan over ``eps1`` and a local refinement.

    The search uses a loose certificate (tolerance 1e-4); the chosen ``eps1`` is then certified at the
    default tolerance. Where a paper closed form applies, its optimal ``eps1`` is a candidate too
    (at equal ``eps1`` the polygon is never worse than the paper's relaxation)."""
    extra: list[float] = []
    try:
        paper_eps1 = paper_ratio(dist, base).eps1
        assert paper_eps1 is not None  # the paper's scan always picks an eps1
        extra.append(float(paper_eps1))
    except NotApplicableError:
        pass
    coarse = _minimize_over_eps1(lambda e1: polygon_ratio_at(dist, base, e1, tol=1e-4), base, extra)
    if coarse.eps1 is None or not math.isfinite(coarse.log_ratio):
        return coarse
    finals = [polygon_ratio_at(dist, base, e1) for e1 in {coarse.eps1, *extra}]
    return min(finals, key=lambda r: r.log_ratio)


def _eps1_range(base: Profile) -> float:
    """Upper end of the ``eps1`` scan: where ``delta`` reaches 1e-40 (or the maximal loss)."""
    loss = base.max_privacy_loss
    if loss is not None and math.isfinite(loss):
        return max(loss, 1e-9)
    top = base.epsilon(max(1e-40, base.delta_at_infinity * (1 + 1e-9)) if base.delta_at_infinity < 1 else 1.0)
    return min(top, 200.0) if math.isfinite(top) else 200.0


def _minimize_over_eps1(evaluate: Any, base: Profile, extra: list[float] | tuple = ()) -> RatioBound:
    top = _eps1_range(base)
    grid = np.unique(np.concatenate([np.linspace(0.0, top, EPS1_SCAN_POINTS), [top], list(extra)]))
    results = [evaluate(float(e)) for e in grid]
    values = np.array([r.log_ratio for r in results])
    best = int(np.argmin(values))
    if not math.isfinite(values[best]):
        return results[best]
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
    if hi > lo:
        cache: dict[float, RatioBound] = {}

        def objective(e1: float) -> float:
            cache[e1] = evaluate(e1)
            return min(cache[e1].log_ratio, 1e300)  # an infinite value would make the search's arithmetic NaN

        minimize_scalar(objective, bounds=(lo, hi), method="bounded", options={"xatol": 1e-7 * max(1, hi)})
        refined = min(cache.values(), key=lambda r: r.log_ratio, default=results[best])
        if refined.log_ratio < values[best]:
            return refined
    return results[best]


# ---------------------------------------------------------------------------------- paper
def paper_log_ratio_at(dist: Distribution, eps1: float, delta1: float) -> float:
    """``log R_paper(eps1)``: Koskela et al. Thm 5.2 (truncated negative binomial), Thm 5.7
    (binomial; ``inf`` where its validity condition ``eps1 >= log(1 + p delta1/(1-p))`` fails) and
    Cor 5.8 (Poisson). The family is recognized from the law's PGF (``dist.family``), so a law typed
    as its own PGF gets the same closed form. Raises :class:`NotApplicableError` for other laws."""
    family = dist.family
    name = None if family is None else family.name
    if name not in PAPER_THEOREM:
        raise NotApplicableError(
            f"method 'paper' has closed forms only for truncated negative binomial (tnb, geometric, logarithmic), "
            f"binomial and poisson laws of K (Koskela et al. Thm 5.2, 5.7, Cor 5.8); got {dist.spec}: "
            f"use method 'envelope', 'polygon' or 'fdp'"
        )
    assert family is not None  # name is None otherwise
    params = family.floats()
    if name == "tnb":  # (η+1) log(e^ε1 + (1−γ)δ1/γ), in log space (ε1 may be in the hundreds)
        eta, gamma = params["eta"], params["gamma"]
        return (eta + 1) * _log_add(eps1, (1 - gamma) / gamma * delta1)
    if name == "binomial":  # (n−1) log(1 + p(e^ε1 − 1) + p δ1) = (n−1) log(p e^ε1 + 1 − p + p δ1)
        n, p = int(params["n"]), params["p"]
        if p < 1 and eps1 < math.log1p(p * delta1 / (1 - p)):
            return math.inf
        if eps1 < 1.0:
            return (n - 1) * math.log1p(p * math.expm1(eps1) + p * delta1)
        return (n - 1) * _log_add(math.log(p) + eps1, 1 - p + p * delta1)
    mu = params["mu"]
    return mu * math.expm1(eps1) + mu * delta1 if eps1 < 700 else math.inf


def _log_add(log_x: float, y: float) -> float:
    """``log(e^log_x + y)`` for ``y ≥ 0`` without overflow."""
    return log_x + math.log1p(y * math.exp(-log_x)) if log_x > 0 else math.log(math.exp(log_x) + y)


#: the theorem behind each family's closed form.
PAPER_THEOREM = {
    "tnb": "Koskela et al. Thm 5.2",
    "binomial": "Koskela et al. Thm 5.7",
    "poisson": "Koskela et al. Cor 5.8",
}


def paper_ratio(dist: Distribution, base: Profile) -> RatioBound:
    """``min_{eps1 >= 0} log R_paper(eps1)`` (scan and local refinement; any ``eps1`` is valid)."""
    paper_log_ratio_at(dist, 0.0, 1.0)  # raises NotApplicableError early for other laws
    assert dist.family is not None  # paper_log_ratio_at raised otherwise
    theorem = PAPER_THEOREM[dist.family.name]

    def evaluate(e1: float) -> RatioBound:
        return RatioBound(paper_log_ratio_at(dist, e1, float(base.delta(e1))), e1, None, theorem)

    return _minimize_over_eps1(evaluate, base)


# ---------------------------------------------------------------------------------- public
def hockey_stick_bound(dist: Distribution, base: Profile, method: str = "fdp") -> SelectionProfile:
    """Certified privacy profile of the selection (Koskela, Redberg & Wang, Theorem 4.1 with the
    hockey-stick divergence; docs/ratio-methods.md), by ``method`` in ``paper``, ``polygon``, ``fdp``."""
    if method not in HOCKEY_STICK_METHODS:
        raise ParameterError("method", method, " | ".join(HOCKEY_STICK_METHODS), "hockey_stick_bound")
    if method == "paper":
        ratio = paper_ratio(dist, base)
    elif method == "polygon":
        ratio = polygon_ratio(dist, base)
    else:
        ratio = fdp_ratio(dist, base)
    return SelectionProfile(dist, base, method, ratio)
