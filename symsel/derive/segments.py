"""Where a weighted log-ratio ``w1 log phi'(q) - w2 log phi'(q')`` peaks on the lower-right boundary of the
``(eps1, delta1)`` polygon (docs/setting.md): segments ``S1`` (start to vertex) and ``S2`` (vertex to end).

Weights ``(1, 1)`` give the ratio of Koskela et al. Thm 4.1 (docs/ratio-methods.md); ``(lambda, lambda - 1)`` give
Papernot-Steinke Lemma 7's term (docs/renyi.md). With ``t = s/(1 + s)``, ``delta1 = D/(1 + D)``,
``e^eps = 1 + X`` and ``lambda = 1 + L`` (every new symbol positive), a derivative whose numerator and
denominator are polynomials in ``s`` with coefficients of one sign (Descartes' rule of signs; the
``(ax + b)/(cx + d)`` criterion of Koskela et al. Lemma C.5 is the degree-one case), or that SymPy proves
positive/negative, has a *proved* sign. For a numeric law on a numeric polygon SymPy is not used (its assumption
queries on exact numbers such as ``exp(7037861020613807/10^17)`` do not finish): the sign is proved by interval
arithmetic (``mpmath.iv`` enclosures of the derivative on a bisection of the segment, each the natural enclosure
intersected with the mean-value form, whose width shrinks with the square of the piece's) where the enclosures
exclude zero. Otherwise its sign is sampled at 63 points (numerical evidence, not a proof).

Every budget is a size, never time: the bisection stops after a number of enclosures set by the size of ``phi'``
(:data:`INTERVAL_PIECES`, :data:`INTERVAL_WORK`), and an expansion is attempted only when
:func:`~symsel.derive.common.expansion_bound` shows it stays small, so the same input gets the same answer on a
quiet and on a loaded machine.
"""

from __future__ import annotations

from typing import Any

import mpmath
import sympy

from symsel.derive.common import DELTA1, DPS, EPS0, EPS1, LAM, MAX_EXPANDED_TERMS, expansion_bound
from symsel.derive.corners import polygon_corners
from symsel.distributions import z

_T, _S, _D, _X, _L = sympy.symbols("t s D X L", positive=True)
ONE = (sympy.Integer(1), sympy.Integer(1))
SAMPLES = 64
#: interval proof, per segment: at most ``INTERVAL_PIECES`` enclosures, and at most ``INTERVAL_WORK`` enclosures times
#: the operations of ``phi'`` (``sympy.count_ops``; one enclosure evaluates ``phi'`` and ``phi''`` twice, so its cost
#: grows with that count: 4000 pieces up to 20 operations, 338 for a degree-60 binomial, whose proof needs 255);
#: pieces no narrower than ``INTERVAL_MIN_WIDTH``.
INTERVAL_PIECES, INTERVAL_WORK, INTERVAL_MIN_WIDTH = 4000, 80_000, 1e-9
#: names the interval evaluation of ``phi'`` and ``phi''`` resolves to (constants enclosed, not rounded).
_IV_NAMES = {"mpf": mpmath.iv.mpf, "exp": mpmath.iv.exp, "log": mpmath.iv.log, "sqrt": mpmath.iv.sqrt,
             "e": mpmath.iv.e, "E": mpmath.iv.e, "pi": mpmath.iv.pi}


def descartes_sign(expr: sympy.Expr) -> int | None:
    """+1/-1 when proved for every value of its (positive) variables, 0 when ``expr`` is identically zero,
    else None. First the expanded numerator and denominator are read as polynomials in positive generators
    (every monomial coefficient of one sign: multivariate Descartes); small expressions are then factored
    and handed to SymPy's assumptions, with Descartes' rule in ``s`` on each factor's coefficients."""
    if expr == 0:
        return 0
    num, den = sympy.fraction(sympy.together(expr))
    signs = [_poly_sign(num), _poly_sign(den)]
    if signs[0] is not None and signs[1] is not None:
        return signs[0] * signs[1]
    if sympy.count_ops(expr) >= 80 or expansion_bound(expr) > MAX_EXPANDED_TERMS:
        return None
    expr = sympy.factor(sympy.cancel(expr))
    if expr.is_positive:
        return 1
    if expr.is_negative:
        return -1
    num, den = sympy.fraction(sympy.together(expr))
    factor_signs: list[int] = []
    for part in (num, den):
        if expansion_bound(part) > MAX_EXPANDED_TERMS:
            return None
        try:
            poly = sympy.Poly(sympy.expand(part), _S)
        except sympy.PolynomialError:
            return None
        coeff_signs = {_coeff_sign(c) for c in poly.coeffs()}
        if len(coeff_signs) != 1 or None in coeff_signs:
            return None
        sign = coeff_signs.pop()
        assert sign is not None  # None was ruled out above
        factor_signs.append(sign)
    return factor_signs[0] * factor_signs[1]


def _poly_sign(part: sympy.Expr) -> int | None:
    """The sign of a polynomial in positive generators whose monomial coefficients share one sign (``None`` when
    undecided, or when its expansion could exceed :data:`~symsel.derive.common.MAX_EXPANDED_TERMS` terms)."""
    if sympy.count_ops(part) > 3000 or expansion_bound(part) > MAX_EXPANDED_TERMS:
        return None
    part = sympy.expand(part)
    if part == 0:
        return 0
    try:
        poly = sympy.Poly(part)
    except (sympy.PolynomialError, sympy.GeneratorsNeeded):
        return _coeff_sign(part)
    if not all(g.is_positive for g in poly.gens):
        return None
    signs = {_coeff_sign(c) for c in poly.coeffs()}
    return signs.pop() if len(signs) == 1 and None not in signs else None


def _coeff_sign(c: sympy.Expr) -> int | None:
    if c.free_symbols:
        return 1 if c.is_positive else -1 if c.is_negative else None
    value = sympy.N(c, DPS)
    return 1 if value > 1e-40 else -1 if value < -1e-40 else None


def sampled_segment_sign(dphi: sympy.Expr, a: tuple, b: tuple, weights: tuple = ONE,
                         samples: int = SAMPLES) -> int | None:
    """The sign of ``d/dt [w1 log phi'(q(t)) - w2 log phi'(q'(t))]`` on the segment ``a -> b`` at
    ``samples - 1`` interior points at 30 digits: ``+1``/``-1``/``0`` (all below ``1e-25``) when one sign is
    seen, ``None`` when both are (numerical evidence, not a proof). ``dphi`` and the weights are numeric."""
    f1 = sympy.lambdify(z, dphi, "mpmath")
    f2 = sympy.lambdify(z, sympy.diff(dphi, z), "mpmath")
    with mpmath.workdps(30):
        a0, a1, b0, b1, w1, w2 = (mpmath.mpf(str(sympy.N(v, 40))) for v in (*a, *b, *weights))
        signs = set()
        for i in range(1, samples):
            t = mpmath.mpf(i) / samples
            q, qp = a0 + t * (b0 - a0), a1 + t * (b1 - a1)
            value = w1 * f2(q) * (b0 - a0) / f1(q) - w2 * f2(qp) * (b1 - a1) / f1(qp)
            if abs(value) > mpmath.mpf(10) ** -25:
                signs.add(1 if value > 0 else -1)
    if len(signs) > 1:
        return None
    return signs.pop() if signs else 0


def interval_segment_sign(dphi: sympy.Expr, a: tuple, b: tuple, weights: tuple = ONE) -> int | None:
    """The *proved* sign of ``d/dt [w1 log phi'(q(t)) - w2 log phi'(q'(t))]`` on the segment ``a -> b``: ``[0, 1]``
    is bisected until the interval enclosure (``mpmath.iv``, 30 digits) of ``w1 phi''(q) dq/phi'(q) - w2 phi''(q')
    dq'/phi'(q')`` on every piece excludes zero or is exactly zero. ``+1``/``-1`` (non-strict: pieces where it is
    identically zero allowed), ``0`` when it is zero throughout, ``None`` when the budget (:func:`interval_budget`
    enclosures) runs out or an enclosure fails (e.g. ``phi'(0) = 0``)."""
    iv = mpmath.iv
    try:
        f1 = sympy.lambdify(z, dphi, [_IV_NAMES, "mpmath"])
        f2 = sympy.lambdify(z, sympy.diff(dphi, z), [_IV_NAMES, "mpmath"])
        f3 = sympy.lambdify(z, sympy.diff(dphi, z, 2), [_IV_NAMES, "mpmath"])
    except Exception:  # an expression lambdify cannot print: no proof
        return None
    saved, iv.dps = iv.dps, 30
    try:
        a0, a1, b0, b1, w1, w2 = (_enclose(v) for v in (*a, *b, *weights))
        d0, d1 = b0 - a0, b1 - a1

        def value(t: Any) -> Any:
            q, qp = a0 + t * d0, a1 + t * d1
            return w1 * f2(q) * d0 / f1(q) - w2 * f2(qp) * d1 / f1(qp)

        def slope(t: Any) -> Any:  # d/dt of value: (log phi')'' along the segment, times its direction squared
            q, qp = a0 + t * d0, a1 + t * d1
            g1, g2 = f1(q), f2(q)
            h1, h2 = f1(qp), f2(qp)
            along_q = w1 * d0 * d0 * (f3(q) * g1 - g2 * g2) / (g1 * g1)
            return along_q - w2 * d1 * d1 * (f3(qp) * h1 - h2 * h2) / (h1 * h1)

        def derivative(lo: mpmath.mpf, hi: mpmath.mpf) -> tuple[Any, int]:
            t = iv.mpf([lo, hi])
            natural = value(t)
            if natural.a > 0 or natural.b < 0 or (natural.a == 0 and natural.b == 0):
                return natural, 1
            # the mean-value form, value(m) + value'([t]) ([t] - m): its width shrinks with the square of the
            # piece's, where the natural enclosure's only shrinks with it (a derivative of 1e-4 next to terms of
            # size 1 needed more than 4000 pieces); both enclose the range, so their intersection does. It costs
            # about two more enclosures, and is counted so.
            mid = (lo + hi) / 2
            centered = value(iv.mpf(mid)) + slope(t) * iv.mpf([lo - mid, hi - mid])
            return iv.mpf([max(natural.a, centered.a), min(natural.b, centered.b)]), 3

        return _bisect_sign(derivative, interval_budget(dphi))
    except Exception:  # an enclosure failed (division by an interval holding zero, a function without iv form)
        return None
    finally:
        iv.dps = saved


def _enclose(value: Any) -> Any:
    """An ``mpmath.iv`` interval holding the exact number ``value`` (evaluated at 60 digits, widened by 1e-55)."""
    x = mpmath.mpf(str(sympy.N(value, 60)))
    pad = mpmath.mpf(10) ** -55 * max(1, abs(x))
    return mpmath.iv.mpf([x - pad, x + pad])


def interval_budget(dphi: sympy.Expr) -> int:
    """Enclosures allowed per segment: ``min(INTERVAL_PIECES, INTERVAL_WORK // count_ops(phi'))``."""
    return max(1, min(INTERVAL_PIECES, INTERVAL_WORK // max(1, int(sympy.count_ops(dphi)))))


def _bisect_sign(derivative: Any, budget: int = INTERVAL_PIECES) -> int | None:
    """Bisect ``[0, 1]`` until every piece's enclosure has one sign (see :func:`interval_segment_sign`), with at
    most ``budget`` enclosures; ``derivative(lo, hi)`` returns an enclosure and how many enclosures it cost."""
    pieces = [(mpmath.mpf(0), mpmath.mpf(1))]
    signs: set[int] = set()
    spent = 0
    while spent < budget:
        if not pieces:
            return signs.pop() if signs else 0
        lo, hi = pieces.pop()
        g, cost = derivative(lo, hi)
        spent += cost
        if g.a > 0 or g.b < 0:
            signs.add(1 if g.a > 0 else -1)
            if len(signs) > 1:
                return None  # the derivative changes sign: not monotone on this segment
        elif not (g.a == 0 and g.b == 0):
            if hi - lo < INTERVAL_MIN_WIDTH:
                return None
            mid = (lo + hi) / 2
            pieces += [(lo, mid), (mid, hi)]
    return None


def segment_derivative(dphi: sympy.Expr, a: tuple, b: tuple, weights: tuple = ONE) -> sympy.Expr:
    """``d/dt [w1 log phi'(q(t)) - w2 log phi'(q'(t))]`` with ``(q, q') = a + t (b - a)``."""
    q, qp = a[0] + _T * (b[0] - a[0]), a[1] + _T * (b[1] - a[1])
    return sympy.diff(weights[0] * sympy.log(dphi.subs(z, q)) - weights[1] * sympy.log(dphi.subs(z, qp)), _T)


#: the largest ``phi'`` (``sympy.count_ops``) whose logarithmic derivative is simplified for a second try.
LOG_DERIVATIVE_MAX_OPS = 200


def log_derivative_form(dphi: sympy.Expr, a: tuple, b: tuple, weights: tuple = ONE) -> sympy.Expr | None:
    """:func:`segment_derivative` written through the logarithmic derivative ``g = phi''/phi'``, cancelled first:
    ``w1 g(q) dq/dt - w2 g(q') dq'/dt``, the same function of ``t`` (``d/dt log phi'(q(t)) = g(q) dq/dt``). Where
    ``phi'`` is an exponential (a Poisson-like law) ``g`` is a constant and the derivative does not depend on ``t``,
    which the unsimplified quotient of exponentials hides from :func:`descartes_sign`. ``None`` for a ``phi'``
    larger than :data:`LOG_DERIVATIVE_MAX_OPS` operations."""
    if sympy.count_ops(dphi) > LOG_DERIVATIVE_MAX_OPS:
        return None
    g = sympy.cancel(sympy.powsimp(sympy.diff(dphi, z) / dphi))
    q, qp = a[0] + _T * (b[0] - a[0]), a[1] + _T * (b[1] - a[1])
    return weights[0] * g.subs(z, q) * (b[0] - a[0]) - weights[1] * g.subs(z, qp) * (b[1] - a[1])


def positive_form(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` in the positive variables of the module docstring (``s, D, X, L``)."""
    out = expr.subs(_T, _S / (1 + _S)).subs(DELTA1, _D / (1 + _D)).subs(LAM, 1 + _L)
    return out.subs({sympy.exp(EPS1): 1 + _X, sympy.exp(EPS0): 1 + _X})


def segment_sign(dphi: sympy.Expr, a: tuple, b: tuple, numeric: bool, weights: tuple = ONE) -> tuple[int | None, str]:
    """``(sign, kind)`` of the derivative along one segment: kind ``"symbolic"`` (proved by SymPy / Descartes),
    ``"interval"`` (proved by interval arithmetic; numeric law and polygon), ``"sampling"`` (numerical evidence)
    or ``"none"`` (undecided)."""
    if numeric:
        sign = interval_segment_sign(dphi, a, b, weights)
        if sign is not None:
            return sign, "interval"
        return sampled_segment_sign(dphi, a, b, weights), "sampling"
    sign = descartes_sign(positive_form(segment_derivative(dphi, a, b, weights)))
    if sign is None:  # a second try: the same derivative through the cancelled logarithmic derivative of phi'
        simpler = log_derivative_form(dphi, a, b, weights)
        sign = None if simpler is None else descartes_sign(positive_form(simpler))
    return (sign, "symbolic") if sign is not None else (None, "none")


#: where the sup of a function monotone on each segment sits, from its signs on (S1, S2).
def _location(s1: int, s2: int) -> str:
    if s1 >= 0 and s2 <= 0:
        return "vertex"
    if s2 > 0:
        return "end" if s1 >= 0 else "start or end"
    return "start"


def sup_location(dphi: sympy.Expr, e1: Any = EPS1, d1: Any = DELTA1, weights: tuple = ONE,
                 name: str = "the ratio") -> tuple[str, str, str, dict]:
    """Where ``sup [w1 log phi'(q) - w2 log phi'(q')]`` over the polygon sits: ``(location, argument, kind,
    corners)``; ``location`` is ``vertex``, ``start``, ``end``, ``start or end`` or ``unknown``."""
    corners = polygon_corners(e1, d1)
    free = set().union(*(sympy.sympify(w).free_symbols for w in (*weights, e1, d1)))
    numeric = not free and not dphi.free_symbols - {z}
    s1, k1 = segment_sign(dphi, corners["start"], corners["vertex"], numeric, weights)
    s2, k2 = segment_sign(dphi, corners["vertex"], corners["end"], numeric, weights)
    kind = combined_kind(k1, k2) if None not in (s1, s2) else "none"
    if s1 is None or s2 is None:
        return "unknown", "the sign of the derivative along a segment was not decided", kind, corners
    word = {1: "increases", -1: "decreases", 0: "is constant"}
    return _location(s1, s2), f"{name} {word[s1]} along S1 and {word[s2]} along S2; {HOW[kind]}", kind, corners


#: how a segment's sign was settled, by kind (the sup location's argument).
HOW = {"symbolic": "proved (sign of the factored derivative, Descartes / SymPy, cf. Lemma C.5)",
       "interval": "proved by interval arithmetic (mpmath.iv enclosures of the derivative on a bisection of "
                   "each segment exclude zero)",
       "sampling": "sampled at 63 points per segment: numerical evidence, not a proof"}


def combined_kind(*kinds: str) -> str:
    """The weakest of the segments' kinds: ``symbolic`` if all are, a proof (``interval``) if all are proofs,
    else ``sampling``."""
    if all(k == "symbolic" for k in kinds):
        return "symbolic"
    return "interval" if all(k in ("symbolic", "interval") for k in kinds) else "sampling"
