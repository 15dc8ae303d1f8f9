"""The ratio's sup over the pure-DP region: the ``(eps0, 0)`` polygon ``q' >= e^{-eps0} q``,
``1 - q' <= e^{eps0} (1 - q)`` (docs/setting.md with ``delta1 = 0``; it is the whole privacy region of an
``eps0``-DP base, so this is also the f-DP sup of ``symsel.bound(dist, pure(eps0), "fdp")``).

With ``delta1 = 0`` segment ``S1`` starts at the corner ``(0, 0)``, where the ratio is ``phi'(0)/phi'(0)``: 1 when
``P[K = 1] > 0`` and a ``0/0`` limit otherwise, taken along ``S1`` (``q = e^{eps0} q'``); ``k`` fixed runs give
``log R = (k - 1) eps0``, i.e. a ``k eps0``-DP selection (tight: P&S Prop 17). The selection is then
``(eps0 + log R(eps0))``-DP (docs/ratio-methods.md: ``delta_Q(eps - log R) = 0`` once ``eps - log R >= eps0``).
"""

from __future__ import annotations

from typing import Any

import sympy

from symsel.bounds.hockey_stick import fdp_ratio
from symsel.derive.common import EPS0, engine_law, free_points, n50, tidy_log_ratio
from symsel.derive.record import Check, Expression
from symsel.derive.segments import sup_location
from symsel.distributions import Distribution, z
from symsel.profiles import pure

#: ``eps0`` values at which the closed form is checked against the certified engine.
CHECK_EPS0 = (sympy.Rational(1, 2), sympy.Integer(1), sympy.Integer(2))
_X = sympy.Symbol("x", positive=True)


def corner_log_ratio(dphi: sympy.Expr, where: str, corners: dict, eps0: Any = EPS0) -> sympy.Expr:
    """``log phi'(q) - log phi'(q')`` at a corner; at ``start = (0, 0)`` the limit along ``S1``
    (``q = e^{eps0} x``, ``q' = x``, ``x -> 0+``); ``start or end`` gives the larger of the two."""
    if where == "start or end":
        return sympy.Max(corner_log_ratio(dphi, "start", corners, eps0), corner_log_ratio(dphi, "end", corners, eps0))
    q, qp = corners[where]
    if where == "start" and q == 0 and qp == 0:
        along = sympy.expand_log(sympy.log(dphi.subs(z, sympy.exp(eps0) * _X) / dphi.subs(z, _X)), force=True)
        return sympy.simplify(sympy.limit(along, _X, 0, "+"))
    return tidy_log_ratio(dphi.subs(z, q), dphi.subs(z, qp), eps0)


def pure_dp(spec: str, phi: sympy.Expr, dphi: sympy.Expr, dist: Distribution | None,
            eps0: Any = EPS0) -> tuple[dict[str, Any], list[Check]]:
    """The record's ``pure_dp`` entry (sup location, argument, ``log R(eps0)`` and the selection's pure
    epsilon ``eps0 + log R``, as :class:`~symsel.derive.record.Expression`) and its checks against the certified
    f-DP sup at several ``eps0``."""
    where, argument, kind, corners = sup_location(dphi, eps0, sympy.Integer(0))
    entry: dict[str, Any] = {"eps0": Expression(eps0), "sup_location": where, "argument": argument, "kind": kind,
                             "log_ratio": None, "epsilon": None}
    if where == "unknown":
        return entry, []
    log_r = corner_log_ratio(dphi, where, corners, eps0)
    entry["log_ratio"] = Expression(log_r)
    entry["epsilon"] = Expression(eps0 + log_r)
    values = [eps0] if not isinstance(eps0, sympy.Symbol) else list(CHECK_EPS0)
    return entry, [_certified_check(spec, phi, dist, log_r, eps0, values, where, kind)]


def _certified_check(spec: str, phi: sympy.Expr, dist: Distribution | None, log_r: sympy.Expr, eps0: Any,
                     values: list, where: str, kind: str) -> Check:
    """``cert.lower <= log R(eps0) <= cert.upper`` with ``cert`` the engine's certified f-DP sup (the closed
    form is a value of the ratio at a feasible point, so it can never exceed a sound certificate; it must
    not fall below the best value the engine attained either, or the claimed sup location is wrong)."""
    worst, ok = 0.0, True
    for point in free_points(phi):
        law = engine_law(spec, phi, point, dist)
        for e0 in values:
            ours = n50(log_r.subs(point).subs(EPS0, e0))
            cert = fdp_ratio(law, pure(float(e0))).certificate
            assert cert is not None  # fdp_ratio always certifies
            slack = 1e-9 * max(1.0, abs(cert.lower))
            ok &= bool(ours.is_real) and cert.lower - slack <= ours <= cert.upper + slack
            worst = max(worst, abs(float(ours) - cert.lower))
    evidence = "symbolic sign + " if kind == "symbolic" else ""
    claim = (f"pure-DP region: log R(eps0) at the {where} lies in the engine's certified f-DP interval "
             f"[lower, upper] of symsel.bound(dist, pure(eps0), 'fdp') at eps0 = "
             + ", ".join(str(v) for v in values) + f" ({evidence}50-digit value; agreement = |closed - lower|)")
    return Check(claim, "numeric-50", worst, ok)
