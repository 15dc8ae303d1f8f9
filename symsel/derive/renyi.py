"""Papernot-Steinke Lemma 7's term ``log sup_{(q, q') in polygon} phi'(q)^lambda phi'(q')^(1 - lambda)`` over the
``(eps1, delta1)`` polygon (docs/renyi.md): for ``lambda > 1`` it grows with ``q`` and shrinks with ``q'``, so the sup
is on segments ``S1``/``S2``; the sign of the ``lambda``-weighted log-derivative along each (the machinery of
:mod:`symsel.derive.segments` with weights ``(lambda, lambda - 1)``) places it. A segment whose derivative does
not depend on the position ``t`` is monotone with a parameter-dependent direction: its sup is one of its
endpoints, and the closed form is the ``Max`` of the candidate corners (always a valid value of the sup, as each
candidate is a feasible point and each segment's sup is among them).

P&S closed forms compared: Thm 2 (TNB ``D_{eta,gamma}``), whose ``lambda``-free part with ``hat lambda = 1``,
``(1 + eta) log(1/gamma) + log m/(lambda - 1)``, bounds ``term/(lambda - 1)`` for every base; Thm 6 (Poisson
``mu``): ``term/(lambda - 1) = mu delta1 + log mu/(lambda - 1)`` at the end corner, which is the sup when
``e^{eps1} <= lambda/(lambda - 1)`` (the theorem's hypothesis ``e^{hat eps} <= 1 + 1/(lambda - 1)``).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import sympy

from symsel.bounds.renyi.lemma7 import lemma7_log_sup
from symsel.derive.common import (
    DELTA1,
    DELTA_HAT,
    EPS1,
    EPS_HAT,
    LAM,
    LAM_HAT,
    MAX_EXPANDED_TERMS,
    checked_simplify,
    engine_law,
    expansion_bound,
    free_points,
    n50,
)
from symsel.derive.corners import polygon_corners
from symsel.derive.record import Check, Expression
from symsel.derive.segments import _T, HOW, combined_kind, segment_derivative, segment_sign
from symsel.distributions import Distribution, z
from symsel.profiles.region import polygon_lower

CHECK_ORDERS = (sympy.Integer(2), sympy.Integer(16))
#: the cancelled zero test of :func:`_t_free` runs on at most this many operations.
T_FREE_OPS = 200
CHECK_POLYGONS = ((sympy.Rational(1, 2), sympy.Rational(1, 1000)), (sympy.Integer(1), sympy.Rational(1, 10**6)))
_CANDIDATES = {"S1": {1: ["vertex"], -1: ["start"], 0: ["vertex"], "t-free": ["start", "vertex"]},
               "S2": {1: ["end"], -1: ["vertex"], 0: ["vertex"], "t-free": ["vertex", "end"]}}


def corner_term(dphi: sympy.Expr, corner: tuple, lam: Any = LAM) -> sympy.Expr:
    """``lambda log phi'(q) + (1 - lambda) log phi'(q')`` at one corner ``(q, q')``."""
    q, qp = corner
    term = sympy.expand_log(lam * sympy.log(dphi.subs(z, q)) + (1 - lam) * sympy.log(dphi.subs(z, qp)))
    return checked_simplify(term, 80)


def _segment(dphi: sympy.Expr, a: tuple, b: tuple, numeric: bool, weights: tuple) -> tuple[Any, str]:
    sign, kind = segment_sign(dphi, a, b, numeric, weights)
    if sign is not None or numeric:  # numeric: no SymPy on exact numbers (see symsel.derive.segments)
        return sign, kind
    if _t_free(segment_derivative(dphi, a, b, weights)):
        return "t-free", "symbolic"
    return None, kind


def _t_free(derivative: sympy.Expr) -> bool:
    """Whether the derivative along a segment is proved not to depend on the position ``t``: no ``t`` is left once
    exponentials are combined (``powsimp``: Poisson-like laws), or the cancelled ``d/dt`` of it is 0 (tried only
    when small: at most :data:`T_FREE_OPS` operations and :data:`~symsel.derive.common.MAX_EXPANDED_TERMS` terms
    once expanded; SymPy's ``simplify`` took minutes on a two-component mixture's)."""
    if not sympy.powsimp(derivative, combine="exp").has(_T):
        return True
    second = sympy.diff(derivative, _T)
    return (sympy.count_ops(second) <= T_FREE_OPS and expansion_bound(second) <= MAX_EXPANDED_TERMS
            and sympy.cancel(sympy.together(second)) == 0)


def lemma7_sup(dphi: sympy.Expr, e1: Any = EPS1, d1: Any = DELTA1, lam: Any = LAM) -> tuple[str, str, str, Any]:
    """``(location, argument, kind, term)``: where Lemma 7's term peaks on the polygon and its closed form
    (``None`` when a segment's monotonicity is not decided)."""
    corners = polygon_corners(e1, d1)
    numeric = not (sympy.sympify(e1).free_symbols | sympy.sympify(lam).free_symbols | (dphi.free_symbols - {z}))
    weights = (lam, lam - 1)
    s1, k1 = _segment(dphi, corners["start"], corners["vertex"], numeric, weights)
    s2, k2 = _segment(dphi, corners["vertex"], corners["end"], numeric, weights)
    if s1 is None or s2 is None:
        return "unknown", "the sign of the lambda-weighted derivative along a segment was not decided", "none", None
    names = list(dict.fromkeys(_CANDIDATES["S1"][s1] + _CANDIDATES["S2"][s2]))
    terms = [corner_term(dphi, corners[n], lam) for n in names]
    kind = combined_kind(k1, k2)
    word = {1: "increases", -1: "decreases", 0: "is constant", "t-free": "is monotone (direction set by the "
            "parameters: the derivative does not depend on the position)"}
    how = "proved (factored sign / t-free derivative)" if kind == "symbolic" else HOW[kind]
    argument = f"the Lemma 7 term {word[s1]} along S1 and {word[s2]} along S2; {how}"
    return " or ".join(names), argument, kind, terms[0] if len(terms) == 1 else sympy.Max(*terms)


def ps_closed_form(family: tuple[str, dict] | None, mean: sympy.Expr) -> tuple[sympy.Expr | None, str | None]:
    """P&S's bound on ``term/(lambda - 1)`` for the family: Thm 2 (TNB; ``hat eps`` the base's RDP at
    ``hat lambda``) or Thm 6 (Poisson; ``(hat eps, hat delta)`` a DP guarantee of the base with
    ``e^{hat eps} <= 1 + 1/(lambda - 1)``); ``None`` for other laws."""
    if family is None:
        return None, None
    name, params = family
    if name == "tnb":
        eta, gamma = params["eta"], params["gamma"]
        form = ((1 + eta) * (1 - 1 / LAM_HAT) * EPS_HAT + (1 + eta) * sympy.log(1 / gamma) / LAM_HAT
                + sympy.log(mean) / (LAM - 1))
        return form, "Papernot-Steinke Thm 2"
    if name == "poisson":
        mu = params["mu"]
        return mu * DELTA_HAT + sympy.log(mu) / (LAM - 1), "Papernot-Steinke Thm 6"
    return None, None


def renyi_route(spec: str, phi: sympy.Expr, dphi: sympy.Expr, dist: Distribution | None,
                family: tuple[str, dict] | None, mean: sympy.Expr,
                polygon: tuple[Any, Any] | None = None) -> tuple[dict[str, Any], list[Check]]:
    """The record's ``renyi`` entry and its checks. Symbolic in ``(eps1, delta1, lambda)``; the checks use the
    base's polygon ``(eps1, delta1)`` when given, else two sample polygons."""
    where, argument, kind, term = lemma7_sup(dphi)
    closed, theorem = ps_closed_form(family, mean)
    entry: dict[str, Any] = {"term": r"\log\sup_{(q,q')} \varphi'(q)^{\lambda}\varphi'(q')^{1-\lambda}",
                             "sup_location": where, "argument": argument, "kind": kind,
                             "closed_form": None if term is None else Expression(term),
                             "ps_closed_form": None if closed is None else Expression(closed), "theorem": theorem}
    if term is None:
        return entry, []
    polygons = [polygon] if polygon is not None else list(CHECK_POLYGONS)
    checks = [_lemma7_check(spec, phi, dist, term, polygons, where, kind)]
    if family is not None and family[0] == "tnb":
        checks.append(_thm2_check(spec, phi, dist, term, closed, polygons))
    if family is not None and family[0] == "poisson":
        checks += _thm6_checks(dphi, family[1]["mu"])
    return entry, checks


def _polygon_boundary(q: Any, eps1: float, delta1: float) -> Any:
    return polygon_lower(q, eps1, delta1)


def _values(term: sympy.Expr, point: dict, e1: Any, d1: Any, lam: Any) -> sympy.Float:
    return n50(term.subs(point).subs({EPS1: e1, DELTA1: d1, LAM: lam}))


def _lemma7_check(spec: str, phi: sympy.Expr, dist: Distribution | None, term: sympy.Expr, polygons: list,
                  where: str, kind: str) -> Check:
    """The closed form at 50 digits against the engine's certified Lemma 7 sup on the same polygon: never
    above the certificate, and within ``1e-5`` (relative) of it."""
    worst, ok = 0.0, True
    for point in free_points(phi)[:2]:
        law = engine_law(spec, phi, point, dist)
        for e1, d1 in polygons:
            boundary = functools.partial(_polygon_boundary, eps1=float(e1), delta1=float(d1))
            corner = math.exp(-float(e1)) if d1 == 0 else None
            for lam in CHECK_ORDERS:
                ours = _values(term, point, e1, d1, lam)
                cert = lemma7_log_sup(law, boundary, float(lam), corner)
                if not ours.is_finite or not math.isfinite(cert):
                    ok &= (not ours.is_finite) == (not math.isfinite(cert))
                    continue
                gap = cert - float(ours)
                ok &= -1e-9 * max(1.0, abs(cert)) <= gap <= 1e-5 * max(1.0, abs(cert))
                worst = max(worst, abs(gap))
    return Check(f"Lemma 7 term at the {where} (closed form, 50 digits) = the engine's certified "
                 "lemma7_log_sup on the same polygon, lambda = 2, 16 (below it, within 1e-5)",
                 "numeric-50" if kind == "symbolic" else "sampling", worst, ok)


def _thm2_check(spec: str, phi: sympy.Expr, dist: Distribution | None, term: sympy.Expr, closed: sympy.Expr,
                polygons: list) -> Check:
    """``term/(lambda - 1) <= `` Thm 2's form at ``hat lambda = 1`` (valid for every base: ``hat eps`` has
    weight 0 there) at 50 digits."""
    worst, ok = math.inf, True
    for point in free_points(phi):
        for e1, d1 in polygons:
            for lam in CHECK_ORDERS:
                ours = _values(term, point, e1, d1, lam) / (lam - 1)
                theirs = n50(closed.subs(point).subs({LAM_HAT: 1, EPS_HAT: 0, LAM: lam}))
                ok &= bool(ours <= theirs)
                worst = min(worst, float(theirs - ours))
    return Check("term/(lambda - 1) <= P&S Thm 2's (1+eta) log(1/gamma) + log m/(lambda - 1) (hat lambda = 1); "
                 "agreement = smallest margin", "numeric-50", worst, ok)


def _thm6_checks(dphi: sympy.Expr, mu: sympy.Expr) -> list[Check]:
    """P&S Thm 6 from the end corner: an identity, and the end is the sup under the theorem's hypothesis
    (the S2 derivative is ``>= 0`` when ``e^{eps1} <= lambda/(lambda - 1)``)."""
    end = corner_term(dphi, polygon_corners(EPS1, DELTA1)["end"])
    identity = sympy.simplify(sympy.expand_log(end / (LAM - 1) - mu * DELTA1 - sympy.log(mu) / (LAM - 1),
                                               force=True)) == 0
    corners = polygon_corners(EPS1, DELTA1)
    derivative = segment_derivative(dphi, corners["vertex"], corners["end"], (LAM, LAM - 1))
    # under the hypothesis write e^{eps1} = lambda/(lambda - 1) * w, 0 < w <= 1, i.e. w = 1/(1 + W), W >= 0
    w = sympy.Symbol("W", nonnegative=True)
    hyp = sympy.simplify(derivative.subs(sympy.exp(EPS1), LAM / (LAM - 1) / (1 + w)).subs(LAM, 1 + sympy.Symbol(
        "L", positive=True)).subs(DELTA1, sympy.Symbol("D", positive=True) / (1 + sympy.Symbol("D", positive=True))))
    proved = hyp.is_nonnegative is True
    return [Check("end-corner term/(lambda - 1) = mu delta1 + log mu/(lambda - 1): P&S Thm 6 (identity)",
                  "symbolic", 0.0, identity),
            Check("under e^{eps1} <= lambda/(lambda - 1) the term is non-decreasing along S2 (Thm 6's end is the sup)",
                  "symbolic" if proved else "none", 0.0, proved)]
