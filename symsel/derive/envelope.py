"""The envelope ``H(t)`` of docs/envelope.md in closed form on an ``(eps1, delta1)`` polygon, and the profile bound
it gives.

Setting (docs/setting.md, §4b; Koskela, Redberg & Wang, Theorem 4.1 taken per output). The lower boundary of the
``(eps1, delta1)`` polygon is ``L(u) = 0`` on ``[0, delta1]``, ``e^-eps1 (u - delta1)`` on S1 (up to the vertex
``V = (e^eps1 + delta1)/(1 + e^eps1)``) and ``1 - delta1 - e^eps1 (1 - u)`` on S2 (up to ``u = 1``), and

    H(t) = sup_u [phi'(u) - t phi'(L(u))]_+ ,   g_t(u) = phi'(u) - t phi'(L(u)).

On the flat part ``g_t`` increases in ``u``, so the sup sits on S1 or S2 (corners included). On a segment of slope
``s`` (``e^-eps1`` on S1, ``e^eps1`` on S2) ``g_t'(u) = phi''(u) - t s phi''(L(u))``: a stationary point solves
``t = T(u) = phi''(u) / (s phi''(L(u)))``, and ``g_t''`` there has the sign of
``D(u) = (log phi'')'(u) - s (log phi'')'(L(u))`` (times ``phi''(u) > 0``). Candidates: the corners ``(delta1, 0)``,
``V``, ``(1, 1 - delta1)`` (lines in ``t``) and the stationary points of S1 / S2. ``H`` is the max of the
candidates and 0: exact whenever every stationary point is found, since a stationary value never exceeds the sup.
Where ``D < 0`` on a whole segment a stationary point is its unique maximum and, since ``g_t'`` then changes sign
from + to - at every root, ``T`` is non-increasing there: it is the segment's sup exactly for
``T(u_hi) <= t <= T(u_lo)``. Where ``D > 0`` stationary points are minima and are dropped.

Closed forms: the stationarity condition is solved when ``log phi''(u)`` is ``a log A(u) + b u + const`` with ``A``
affine (a power of an affine function times an exponential): with ``W = (t s e^{-b (u - L(u))})^{1/a}`` the condition
``A(u) = W A(L(u))`` is linear in ``u`` (``a = 0``: ``b (u - L(u)) = log(t s)`` is). This covers Poisson
(``phi'' = m^2 e^{m(u-1)}``), the truncated negative binomial (``A = 1 - (1 - gamma) u``, ``a = -(eta + 2)``), the
binomial (``A = 1 - p + p u``, ``a = n - 2``) and any law whose ``phi''`` has that form (e.g. a family mixed with
``K = 1``). :func:`polygon_envelope` returns ``None`` otherwise (``phi''`` with two affine factors or an affine and
an exponential factor: the condition is then transcendental; a general polynomial such as a beta-binomial's:
no closed root), and when ``phi''`` vanishes identically on no segment but cannot be factored that way.

Profile bound for the base that is exactly ``(eps1, delta1)``-DP (``approx(eps=eps1, delta=delta1)``). Its profile
is ``delta_Q(x) = delta1 + (1 - delta1)([e^eps1 - e^x]_+ + [1 - e^{x + eps1}]_+)/(1 + e^eps1)`` for every real
``x`` (the second hinge is the symmetric completion for ``x < -eps1``). With ``H(t) = sum_i c_i [1 - t/t_i]_+``,
``sum_i c_i = m`` (docs/envelope.md; a continuous mixture or an added constant changes nothing below), every ``eps >=
0``:

    delta_A(eps) <= m delta1 + (1 - delta1)/(1 + e^eps1) (e^eps1 H(e^{eps - eps1}) + H(e^{eps + eps1})),

and ``H(e^{eps + eps1}) = 0`` exactly when ``e^{eps + eps1} >= R`` (every ``t_i <= R``), which leaves
``m delta1 + (1 - delta1) e^eps1/(1 + e^eps1) H(e^{eps - eps1})``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import mpmath
import sympy

from symsel.derive.family import family_pgf
from symsel.derive.record import Check
from symsel.distributions import z
from symsel.numeric import bisect_last_feasible

DPS = 50
T = sympy.Symbol("t", positive=True)
EPS, EPS1, DELTA1 = sympy.symbols("varepsilon varepsilon_1 delta_1", positive=True)  # as in engine.py
_U, _W, _X, _D = sympy.symbols("u W X D", positive=True)
#: candidates in the order the maximizer visits them as ``t`` grows (it moves down the boundary: docs/envelope.md,
#: ``H'(t) = -phi'(L(u_t))`` is non-decreasing, so ``L(u_t)`` and ``u_t`` are non-increasing).
#: relative excess of the numeric envelope allowed above the exact one: its hinge weights sum to ``m (1 + 4e-8)``
#: (seen for Poisson(3), approx(0.01, 0.2)), beyond its ``MIXTURE_MARGIN`` of 1e-9 (conservative, so sound).
ENGINE_SLACK = 1e-6
ORDER = ("end", "S2 interior", "vertex", "S1 interior", "start")


@dataclass(frozen=True)
class Candidate:
    """One candidate for the sup: ``value`` (in ``t``) where the sup may sit.

    ``t_range = (lo, hi)``: the candidate is the exact sup of its segment for ``lo <= t <= hi`` (interior maxima);
    ``u_star``/``segment``: for a stationary point whose type was not decided it counts where ``u_star(t)`` lies
    in ``segment``; corners count for every ``t``."""

    label: str
    value: sympy.Expr
    t_range: tuple[sympy.Expr, sympy.Expr] | None = None
    u_star: sympy.Expr | None = None
    segment: tuple[sympy.Expr, sympy.Expr] | None = None

    def condition(self) -> sympy.Basic:
        if self.t_range is not None:
            return sympy.And(self.t_range[0] <= T, T <= self.t_range[1])
        if self.u_star is not None:
            assert self.segment is not None  # set with u_star
            return sympy.And(self.segment[0] <= self.u_star, self.u_star <= self.segment[1])
        return sympy.true


@dataclass(frozen=True)
class Piece:
    """``H(t) = value`` for ``lo <= t <= hi``, the sup sitting at ``label``; ``exact``: the ends are closed forms."""

    label: str
    value: sympy.Expr
    lo: sympy.Expr
    hi: sympy.Expr
    exact: bool = True


@dataclass(frozen=True)
class PolygonEnvelope:
    """The closed-form envelope ``H(t)`` on the ``(eps1, delta1)`` polygon (docs/envelope.md) and its profile bound.

    Attributes:
        dphi, eps1, delta1: the input (``phi'`` in ``z``; numbers or the symbols ``varepsilon_1``, ``delta_1``).
        mean: ``m = phi'(1) = H(0)``.
        candidates: the corners and the stationary points kept; ``H = max(0, candidates where they count)``.
        second_order: per segment, what the sign of ``D`` says (``"maximum"``, ``"minimum"``, a condition).
        ratio: ``R``, where ``H`` reaches 0: the largest corner ratio ``phi'(u)/phi'(L(u))`` (the ratio sup of §4
            when it sits at a corner, as for the three families; :func:`envelope_checks` tests it).
        pieces: numeric parameters only: ``H`` as consecutive pieces in ``t`` (the last one ``0`` past ``R``).
        breakpoints: named closed-form values of ``t`` (segment ranges of interior maxima, corner zeros).
        profile: ``delta_A(eps)`` bound for the ``approx(eps1, delta1)`` base, every ``eps >= 0``.
        profile_simple, profile_condition: its form ``m delta1 + (1-delta1) e^eps1/(1+e^eps1) H(e^{eps-eps1})``
            and where it holds (``eps + eps1 >= log R``).
    """

    dphi: sympy.Expr
    eps1: sympy.Expr
    delta1: sympy.Expr
    mean: sympy.Expr
    candidates: tuple[Candidate, ...]
    second_order: dict[str, str]
    ratio: sympy.Expr
    pieces: tuple[Piece, ...] | None
    breakpoints: dict[str, sympy.Expr]
    profile: sympy.Expr
    profile_simple: sympy.Expr
    profile_condition: sympy.Basic
    family: tuple[str, dict] | None = None
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    # ------------------------------------------------------------------ symbolic views
    @property
    def H(self) -> sympy.Expr:
        """``H(t)``: the explicit ``Piecewise`` when the parameters are numbers, else ``Max(0, candidates)``."""
        if self.pieces is not None:
            return sympy.Piecewise(*[(p.value, T <= p.hi) for p in self.pieces[:-1]], (0, True))
        return envelope_max(self.candidates)

    def latex(self, lhs: bool = False) -> str:
        """``\\begin{cases} ... \\end{cases}`` (numbers) or ``\\max\\{0, ...\\}`` (symbols): the right-hand side
        the :class:`~symsel.derive.record.Derivation` shows as ``H(t) &= ...``; ``lhs=True`` prefixes ``H(t) =``."""
        if self.pieces is not None:
            rows = [rf"{_tex(p.value)} & {_tex(p.lo)} \le t \le {_tex(p.hi)} \text{{ ({p.label})}}"
                    for p in self.pieces[:-1]]
            rows.append(rf"0 & t \ge {_tex(self.pieces[-1].lo)}")
            body = r"\begin{cases} " + r" \\ ".join(rows) + r" \end{cases}"
        else:
            terms = [_tex(c.value) + ("" if c.condition() == sympy.true else
                                      rf" \;[{sympy.latex(c.condition())}]") for c in self.candidates]
            body = r"\max\left\{0,\; " + r",\; ".join(terms) + r"\right\}"
        return ("H(t) = " if lhs else "") + body

    # ------------------------------------------------------------------ numbers
    def h_mp(self, t: Any, dps: int = DPS, values: dict | None = None) -> mpmath.mpf:
        """``H(t)`` at ``dps`` digits (``values``: numbers for the free parameters, if any)."""
        funcs = self._numeric(values or {}, dps)
        with mpmath.workdps(dps + 10):
            tt = mpmath.mpf(t)
            best = mpmath.mpf(0)
            for _, value, lo, hi in funcs:
                if lo is not None and not lo <= tt <= hi:
                    continue
                v = value(tt)
                if isinstance(v, mpmath.mpc):  # a stationary point off the real line counts nowhere
                    continue
                best = max(best, v)
        with mpmath.workdps(dps):
            return +best

    def delta_mp(self, eps: Any, dps: int = DPS, values: dict | None = None) -> mpmath.mpf:
        """The profile bound ``delta_A(eps)`` (``eps >= 0``) for the ``approx(eps1, delta1)`` base, capped at 1."""
        e1, d1, m = (self._number(x, values, dps) for x in (self.eps1, self.delta1, self.mean))
        with mpmath.workdps(dps + 10):
            e = mpmath.mpf(eps)
            h1 = self.h_mp(mpmath.exp(e - e1), dps + 10, values)
            h2 = self.h_mp(mpmath.exp(e + e1), dps + 10, values)
            out = min(1, m * d1 + (1 - d1) / (1 + mpmath.exp(e1)) * (mpmath.exp(e1) * h1 + h2))  # delta <= 1 anyway
        with mpmath.workdps(dps):
            return +out

    def epsilon_mp(self, delta: Any, dps: int = 30, values: dict | None = None) -> mpmath.mpf:
        """The smallest ``eps >= 0`` with ``delta_mp(eps) <= delta`` (bisection; ``inf`` below ``m delta1``)."""
        with mpmath.workdps(dps + 5):
            target = mpmath.mpf(delta)
            if self.delta_mp(0, dps + 5, values) <= target:
                return mpmath.mpf(0)
            m, d1 = self._number(self.mean, values, dps), self._number(self.delta1, values, dps)
            if m * d1 > target:
                return mpmath.inf
            lo = mpmath.mpf(0)
            hi = mpmath.log(self._number(self.ratio, values, dps)) + self._number(self.eps1, values, dps) + 1
            return +bisect_last_feasible(lambda eps: self.delta_mp(eps, dps + 5, values) - target, lo, hi,
                                         tol=0, max_steps=3 * dps + 20)

    def _number(self, expr: sympy.Expr, values: dict | None, dps: int) -> mpmath.mpf:
        return _mp_number(expr, values, dps)

    def _numeric(self, values: dict, dps: int) -> list:
        key = (tuple(sorted((str(k), str(v)) for k, v in values.items())), dps)
        if key not in self._cache:
            self._cache[key] = _numeric_candidates(self.candidates, values, dps)
        return self._cache[key]


def _numeric_candidates(candidates: Sequence[Candidate], values: dict, dps: int) -> list:
    """``(label, value(t), lo, hi)`` per candidate at ``dps`` digits (``lo = None``: counts for every ``t``)."""
    out = []
    for c in candidates:
        lo = hi = None
        if c.t_range is not None:
            lo, hi = (_mp_number(x, values, dps) for x in c.t_range)
        elif c.u_star is not None:  # undecided type: count it where u*(t) lies in its segment
            lo, hi = _u_star_range(c, values, dps)
        out.append((c.label, _mp_function(c.value.subs(values), dps), lo, hi))
    return out


def _mp_number(expr: Any, values: dict | None, dps: int) -> mpmath.mpf:
    value = sympy.N(sympy.sympify(expr).subs(values or {}), dps + 10)
    if value.free_symbols:
        raise ValueError(f"give values for {sorted(map(str, value.free_symbols))}")
    with mpmath.workdps(dps + 10):
        return mpmath.mpf(str(value))


def envelope_max(candidates: Sequence[Candidate]) -> sympy.Expr:
    """``max(0, each candidate where it counts)`` as a SymPy expression in ``t``."""
    parts = [c.value if c.condition() == sympy.true else sympy.Piecewise((c.value, c.condition()), (0, True))
             for c in candidates]
    return sympy.Max(0, *parts, evaluate=False)


# ------------------------------------------------------------------------------------ helpers
def _at_t(h: sympy.Expr, value: sympy.Expr) -> sympy.Expr:
    """``h`` with ``t = value``. The unevaluated ``Max`` of :func:`envelope_max` is rebuilt unevaluated from its
    substituted arguments: ``subs`` would rebuild it evaluated, and SymPy then spends seconds trying to prove which
    symbolic argument is largest (the envelope's candidates are each largest somewhere, so none is dropped)."""
    if isinstance(h, sympy.Max):
        return sympy.Max(*[arg.subs(T, value) for arg in h.args], evaluate=False)
    return h.subs(T, value)


def _tex(expr: sympy.Expr) -> str:
    """LaTeX, with long exact numbers shown to 12 digits (the closed forms stay in the pieces)."""
    expr = sympy.sympify(expr)
    if expr.is_number and (sympy.count_ops(expr) > 25 or len(str(expr)) > 40):
        return sympy.latex(sympy.N(expr, 12))
    return sympy.latex(expr.xreplace({r: sympy.Float(r, 12) for r in expr.atoms(sympy.Rational) if len(str(r)) > 24}))


def _mp_function(expr: sympy.Expr, dps: int) -> Callable[[mpmath.mpf], mpmath.mpf]:
    f = sympy.lambdify(T, expr, "mpmath")

    def value(t: mpmath.mpf) -> mpmath.mpf:
        with mpmath.workdps(dps + 10):
            return f(t)
    return value


def _u_star_range(c: Candidate, values: dict, dps: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    """``t``-range on which the (monotone) ``u*(t)`` lies in the segment: ``T`` at the segment's ends."""
    assert c.segment is not None and c.u_star is not None  # called for undecided stationary points only
    ends = [c.segment[0].subs(values), c.segment[1].subs(values)]
    f = sympy.lambdify(T, c.u_star.subs(values), "mpmath")
    with mpmath.workdps(dps + 10):
        a, b = (mpmath.mpf(str(sympy.N(e, dps + 10))) for e in ends)
        roots = []
        for end in (a, b):
            try:
                roots.append(mpmath.findroot(lambda x, e=end: f(mpmath.exp(x)) - e, 0))
            except (ValueError, ZeroDivisionError):
                return mpmath.mpf(0), mpmath.inf
        lo, hi = sorted(mpmath.exp(r) for r in roots)
    return lo, hi


def _dphi_form(dphi: sympy.Expr, family: tuple[str, dict] | None) -> sympy.Expr:
    """``phi'`` in the family's own factored form when known (``recognize`` proved it equal), else as given."""
    if family is not None and family[0] in ("poisson", "binomial", "tnb"):
        return sympy.diff(family_pgf(*family), z)
    return dphi


def _log_parts(d2: sympy.Expr) -> tuple[list[tuple[sympy.Expr, sympy.Expr]], sympy.Expr] | None:
    """``log phi''(u) = sum a_k log A_k(u) + b u + const`` with ``A_k`` affine in ``u``: ``([(a_k, A_k)], b)``,
    or ``None`` when it has another shape (read off the product structure; no ``expand_log``, slow on radicals)."""
    if d2 == 0:
        return [], sympy.Integer(0)
    if d2.is_rational_function(_U) and not d2.free_symbols - {_U}:
        d2 = sympy.factor(d2)
    logs: dict[sympy.Expr, sympy.Expr] = {}
    slope = [sympy.Integer(0)]

    def walk(expr: sympy.Expr, power: sympy.Expr) -> bool:
        if not expr.has(_U):
            return True
        if expr.is_Mul:
            return all(walk(f, power) for f in expr.args)
        if isinstance(expr, sympy.exp):
            arg = sympy.expand(expr.args[0])
            if not (arg.is_polynomial(_U) and sympy.degree(arg, _U) == 1):
                return False
            slope[0] += power * arg.coeff(_U, 1)
            return True
        base, exp_ = expr.as_base_exp()
        if exp_.has(_U):
            return False
        if exp_ != 1:
            return walk(base, power * exp_)
        num, den = sympy.fraction(sympy.together(expr))
        if den.has(_U):
            return walk(num, power) and walk(den, -power)
        if num.is_polynomial(_U) and sympy.degree(num, _U) == 1:
            key = sympy.expand(num)
            logs[key] = logs.get(key, 0) + power
            return True
        return False

    if not walk(d2, sympy.Integer(1)):
        return None
    return [(a, arg) for arg, a in logs.items() if a != 0], slope[0]


def _stationary(parts: tuple, lower: sympy.Expr, s: sympy.Expr) -> list[sympy.Expr] | None:
    """The roots ``u*(t)`` of ``phi''(u) = t s phi''(L(u))`` on a segment (``[]``: none for generic ``t``)."""
    logs, b = parts
    gap = sympy.expand(_U - lower)  # u - L(u), affine
    if len(logs) > 1:
        return None
    if not logs:
        if _is_zero(b * gap.coeff(_U, 1)):
            return []
        return _linear_root(b * gap - sympy.log(T * s))
    a, affine = logs[0]
    if b != 0 and not _is_zero(gap.coeff(_U, 1)):
        return None  # power times exponential with both moving: transcendental (Lambert W), not attempted
    w = sympy.exp((sympy.log(T * s) - b * gap) / a)
    roots = _linear_root(affine - _W * affine.subs(_U, lower))
    return [sympy.powsimp(r.subs(_W, w), force=True) for r in roots]


def _linear_root(expr: sympy.Expr) -> list[sympy.Expr]:
    """The root in ``u`` of an expression affine in ``u`` (``[]`` if its slope vanishes): SymPy's ``solve``
    spends seconds checking such roots when the coefficients are exact numbers with exponentials."""
    expr = sympy.expand(expr)
    slope = expr.coeff(_U, 1)
    rest = sympy.expand(expr - slope * _U)
    if rest.has(_U) or slope.has(_U):
        raise ValueError("not affine in u")
    return [] if _is_zero(slope) else [sympy.factor_terms(-rest / slope)]


def _is_zero(expr: sympy.Expr) -> bool:
    """Exact zero test: a number at 60 digits (SymPy's ``simplify`` can take seconds on ``1 - e^(-1/4)``)."""
    if expr.is_number:
        return expr == 0 or abs(sympy.N(expr, 60)) < sympy.Float(10, 60) ** -55
    return sympy.simplify(expr) == 0


def _sign_of(expr: sympy.Expr) -> int | None:
    """+1 / -1 when SymPy proves it for positive parameters (``e^eps1 = 1 + X``, ``delta1 = D/(1 + D)``)."""
    if expr.is_number:
        value = sympy.N(expr, DPS)
        return 1 if value > 0 else -1 if value < 0 else 0
    for candidate in (expr, sympy.factor(sympy.together(expr.subs(sympy.exp(EPS1), 1 + _X)
                                                            .subs(sympy.exp(-EPS1), 1 / (1 + _X))
                                                            .subs(DELTA1, _D / (1 + _D))))):
        if candidate.is_positive:
            return 1
        if candidate.is_negative:
            return -1
    return None


def _second_order(parts: tuple, lower: sympy.Expr, s: sympy.Expr, seg: tuple) -> tuple[int | None, sympy.Expr]:
    """The sign of ``D(u) = (log phi'')'(u) - s (log phi'')'(L(u))`` on the segment: ``(sign, decisive factor)``.

    ``D`` is a rational function; each factor depending on ``u`` is an even power or affine in ``u`` (its sign on
    the segment is that of its two end values); the rest is a factor free of ``u`` whose sign is proved, or
    returned as the condition (``sign None``)."""
    logs, b = parts
    dlog = b + sum(a * sympy.diff(arg, _U) / arg for a, arg in logs)
    d = sympy.factor(sympy.together(dlog - s * dlog.subs(_U, lower)))
    if d == 0:
        return 0, sympy.Integer(0)
    sign, rest = 1, sympy.Integer(1)
    for factor in sympy.Mul.make_args(d):
        base, power = factor.as_base_exp()
        if not factor.has(_U):
            rest *= factor
            continue
        if power.is_integer and power.is_even:
            continue
        if not (base.is_polynomial(_U) and sympy.degree(base, _U) == 1 and power.is_integer):
            return None, d
        ends = {_sign_of(base.subs(_U, x)) for x in seg}
        if len(ends) != 1 or None in ends or 0 in ends:
            return None, d
        end_sign = ends.pop()
        assert end_sign is not None  # None was ruled out above
        sign *= end_sign ** int(power % 2)
    known = _sign_of(rest)
    return (None, sign * rest) if known is None else (sign * known, sign * rest)


def _corner_lines(dphi_u: Callable[[Any], sympy.Expr], e1: sympy.Expr, d1: sympy.Expr) -> dict:
    ee = sympy.exp(e1)
    corners = {"end": (sympy.Integer(1), 1 - d1), "vertex": ((ee + d1) / (1 + ee), (1 - d1) / (1 + ee)),
               "start": (d1, sympy.Integer(0))}
    return {k: (dphi_u(q), dphi_u(qp)) for k, (q, qp) in corners.items()}


# ------------------------------------------------------------------------------------ the public function
def polygon_envelope(dphi: sympy.Expr, eps1: Any, delta1: Any,
                     family: tuple[str, dict] | None = None) -> PolygonEnvelope | None:
    """``H(t) = sup_u [phi'(u) - t phi'(L(u))]_+`` in closed form on the ``(eps1, delta1)`` polygon (docs/envelope.md).

    Args:
        dphi: ``phi'`` as a SymPy expression in :data:`symsel.distributions.z` (parameters numbers or free
            positive symbols).
        eps1, delta1: SymPy numbers (``delta1`` in ``[0, 1)``) or the symbols ``varepsilon_1``, ``delta_1`` of
            ``symsel.derive.engine`` (``EPS1``, ``DELTA1``).
        family: ``symsel.derive.family.recognize(phi)`` when known; its factored ``phi'`` is then solved.

    Returns:
        A :class:`PolygonEnvelope`, or ``None`` when SymPy cannot close the stationarity condition
        ``phi''(u) = t s phi''(L(u))``: ``log phi''`` is not ``a log(affine) + b u + const`` (module docstring),
        or ``phi'(0) = 0`` leaves no finite ``R`` to close the pieces with.
    """
    e1, d1 = sympy.sympify(eps1), sympy.sympify(delta1)
    form = _dphi_form(sympy.sympify(dphi), family)
    d2 = sympy.diff(form, z).subs(z, _U)
    parts = _log_parts(d2)
    if parts is None:
        return None

    def dphi_u(x: Any) -> sympy.Expr:
        return form.subs(z, x)

    lines = _corner_lines(dphi_u, e1, d1)
    if any(b == 0 for _, b in lines.values()):
        return None
    m = lines["end"][0]
    ee = sympy.exp(e1)
    q_v = (ee + d1) / (1 + ee)
    segments = {"S1": (sympy.exp(-e1), sympy.exp(-e1) * (_U - d1), (d1, q_v)),
                "S2": (ee, 1 - d1 - ee * (1 - _U), (q_v, sympy.Integer(1)))}
    candidates = {k: Candidate(k, a - T * b) for k, (a, b) in lines.items()}
    second: dict[str, str] = {}
    breakpoints: dict[str, sympy.Expr] = {}
    for name, (s, lower, seg) in segments.items():
        found = _segment_candidate(name, form, d2, parts, s, lower, seg, second, breakpoints)
        if found is False:
            return None
        if found is not None:
            candidates[found.label] = found
    ordered = tuple(candidates[k] for k in ORDER if k in candidates)
    ratio = sympy.Max(*[a / b for a, b in lines.values()])
    for k, (a, b) in lines.items():
        breakpoints[f"zero of the {k} line"] = a / b
    numeric = not (ratio.free_symbols | m.free_symbols)
    pieces = _resolve(ordered, ratio) if numeric else None
    h = envelope_max(ordered) if pieces is None else sympy.Piecewise(
        *[(p.value, T <= p.hi) for p in pieces[:-1]], (0, True))
    below, above = _at_t(h, sympy.exp(EPS - e1)), _at_t(h, sympy.exp(EPS + e1))
    profile = m * d1 + (1 - d1) / (1 + ee) * (ee * below + above)
    simple = m * d1 + (1 - d1) * ee / (1 + ee) * below
    return PolygonEnvelope(dphi=sympy.sympify(dphi), eps1=e1, delta1=d1, mean=m, candidates=ordered,
                           second_order=second, ratio=ratio, pieces=pieces, breakpoints=breakpoints,
                           profile=profile, profile_simple=simple,
                           profile_condition=sympy.GreaterThan(EPS + e1, sympy.log(ratio)), family=family)


def _segment_candidate(name: str, form: sympy.Expr, d2: sympy.Expr, parts: tuple, s: sympy.Expr, lower: sympy.Expr,
                       seg: tuple, second: dict, breakpoints: dict) -> Candidate | Literal[False] | None:
    """The interior candidate of one segment: ``None`` (none kept), ``False`` (not closed) or a :class:`Candidate`."""
    sign, factor = _second_order(parts, lower, s, seg)
    if sign is not None and sign >= 0:
        second[name] = "stationary points are minima: the segment's sup is at a corner" if sign > 0 else \
            "g_t is monotone on the segment for every t but one: the sup is at a corner"
        return None
    roots = _stationary(parts, lower, s)
    if roots is None:
        return False
    if not roots:
        second[name] = "no stationary point for generic t: the segment's sup is at a corner"
        return None
    if len(roots) != 1:
        return False
    u_star = roots[0]
    label = f"{name} interior"
    value = form.subs(z, u_star) - T * form.subs(z, lower.subs(_U, u_star))
    if sign is None:  # the type depends on the parameters: counted only where D < 0 (else it is a minimum)
        second[name] = f"a maximum exactly when {sympy.sstr(factor)} < 0 (else a minimum)"
        return Candidate(label, sympy.Piecewise((value, factor < 0), (0, True)), u_star=u_star, segment=seg)
    second[name] = "the stationary point is the segment's unique maximum (D < 0 on the segment)"
    t_of = d2 / (s * d2.subs(_U, lower))
    lo, hi = (sympy.powsimp(t_of.subs(_U, x)) for x in (seg[1], seg[0]))
    breakpoints[f"{name}: stationary point at its upper end"] = lo
    breakpoints[f"{name}: stationary point at its lower end"] = hi
    return Candidate(label, value, t_range=(lo, hi), u_star=u_star, segment=seg)


def _resolve(candidates: tuple[Candidate, ...], ratio: sympy.Expr) -> tuple[Piece, ...]:
    """``H`` as consecutive pieces for numeric parameters: the active candidate between closed-form critical
    values of ``t`` (ranges, line crossings, zeros); a change of winner inside an interval (a line meeting an
    interior curve) is located by bisection at 60 digits and marked ``exact=False``."""
    crit: set[sympy.Expr] = {ratio}
    lines = [c for c in candidates if c.t_range is None and c.u_star is None]
    for c in candidates:
        if c.t_range is not None:
            crit.update(c.t_range)
    for i, a in enumerate(lines):
        ca, cb = a.value.coeff(T, 0), -a.value.coeff(T, 1)
        crit.add(ca / cb)
        for b in lines[i + 1:]:
            da, db = b.value.coeff(T, 0), -b.value.coeff(T, 1)
            if sympy.N(cb - db, DPS) != 0:
                crit.add((ca - da) / (cb - db))
    r = mpmath.mpf(str(sympy.N(ratio, 60)))
    with mpmath.workdps(60):
        top = sympy.N(ratio, 60)
        points = sorted({(mpmath.mpf(str(sympy.N(x, 60))), x) for x in crit if 0 < sympy.N(x, 60) <= top},
                        key=lambda p: p[0])
    funcs = _numeric_candidates(candidates, {}, 60)
    pieces: list[Piece] = []
    with mpmath.workdps(60):
        cuts = [(mpmath.mpf(0), sympy.Integer(0))] + [p for p in points if p[0] < r * (1 - mpmath.mpf(10) ** -40)]
        for (x0, e0), (x1, e1) in zip(cuts, [*cuts[1:], (r, ratio)], strict=True):
            _fill(pieces, funcs, candidates, x0, e0, x1, e1)
    while pieces and pieces[-1].label == "zero":  # H > 0 below R: a zero piece there is rounding at R itself
        pieces.pop()
    last = pieces.pop()
    pieces += [Piece(last.label, last.value, last.lo, ratio, last.exact),
               Piece("zero", sympy.Integer(0), ratio, sympy.oo)]
    return tuple(pieces)


def _winner(funcs: list, x: mpmath.mpf) -> int:
    best, arg = mpmath.mpf(0), -1
    for i, (_, value, lo, hi) in enumerate(funcs):
        if lo is not None and not lo <= x <= hi:
            continue
        v = value(x)
        if not isinstance(v, mpmath.mpc) and v > best * (1 + mpmath.mpf(10) ** -45):
            best, arg = v, i
    return arg


def _fill(pieces: list, funcs: list, candidates: tuple, x0: Any, e0: sympy.Expr, x1: Any, e1: sympy.Expr) -> None:
    """Append the pieces of ``[x0, x1]`` (merged with the previous one when the same candidate wins)."""
    if x1 - x0 <= mpmath.mpf(10) ** -50 * max(1, x1):
        return
    eta = (x1 - x0) * mpmath.mpf(10) ** -20
    w0, w1 = _winner(funcs, x0 + eta), _winner(funcs, x1 - eta)
    if w0 != w1:  # a crossing with no closed form: bisect the change of winner
        a, b = x0 + eta, x1 - eta
        for _ in range(200):
            mid = (a + b) / 2
            a, b = (mid, b) if _winner(funcs, mid) == w0 else (a, mid)
        mid_e = sympy.Float(mpmath.nstr(b, 50), 50)
        _fill(pieces, funcs, candidates, x0, e0, b, mid_e)
        _fill(pieces, funcs, candidates, b, mid_e, x1, e1)
        return
    c = candidates[w0] if w0 >= 0 else None
    label, value = (c.label, c.value) if c else ("zero", sympy.Integer(0))
    exact = not isinstance(e0, sympy.Float) and not isinstance(e1, sympy.Float)
    if pieces and pieces[-1].label == label:
        last = pieces.pop()
        pieces.append(Piece(label, value, last.lo, e1, last.exact and exact))
    else:
        pieces.append(Piece(label, value, e0, e1, exact))


# ------------------------------------------------------------------------------------ checks
def brute_force_h(dphi_mp: Callable[[mpmath.mpf], mpmath.mpf], eps1: Any, delta1: Any, t: Any,
                  dps: int = DPS, grid: int = 100) -> mpmath.mpf:
    """``sup_u [phi'(u) - t phi'(L(u))]_+`` by brute force, independent of the closed form: a grid of ``grid``
    points on each of S1 and S2 (``L`` from :func:`symsel.profiles.region.polygon_lower_mp`), then Brent's method
    (:func:`_brent_max`) between the neighbours of the best grid point of each segment. The flat part
    ``[0, delta1]`` is dominated by its end."""
    from symsel.profiles.region import polygon_lower_mp

    with mpmath.workdps(dps + 15):
        e1, d1, tt = mpmath.mpf(eps1), mpmath.mpf(delta1), mpmath.mpf(t)
        q_v = (mpmath.exp(e1) + d1) / (1 + mpmath.exp(e1))

        def g(u: mpmath.mpf) -> mpmath.mpf:
            return dphi_mp(u) - tt * dphi_mp(polygon_lower_mp(u, e1, d1, dps + 15))

        best = mpmath.mpf(0)
        for a, b in ((d1, q_v), (q_v, mpmath.mpf(1))):
            xs = [a + (b - a) * i / grid for i in range(grid + 1)]
            values = [g(x) for x in xs]
            k = max(range(len(xs)), key=lambda i: values[i])
            lo, hi = xs[max(k - 1, 0)], xs[min(k + 1, grid)]
            best = max(best, values[k], _brent_max(g, lo, hi, dps))
    with mpmath.workdps(dps):
        return +best


def _brent_max(g: Callable, lo: mpmath.mpf, hi: mpmath.mpf, dps: int) -> mpmath.mpf:
    """The largest value of ``g`` found on ``[lo, hi]`` (ends included) by Brent's method for a unimodal function:
    each step goes to the vertex of the parabola through the three best points when that vertex lies inside the
    bracket and the step is less than half the one before last, else a golden-section step into the larger part
    of the bracket. It stops when the best point is known to ``10^-(dps/2 + 5)`` (the value then to ``10^-dps``
    relative, the maximum being quadratic) or after ``2 dps + 10`` evaluations (a golden-section search's count)."""
    golden = (3 - mpmath.sqrt(5)) / 2
    tol = mpmath.mpf(10) ** -(dps // 2 + 5) * max(1, abs(lo), abs(hi))
    a, b = lo, hi
    x = w = v = a + golden * (b - a)
    fx = fw = fv = g(x)
    f_lo, f_hi = g(lo), g(hi)
    found = max(fx, f_lo, f_hi)
    # the common case, a maximum at an end (the supremum at a corner of the polygon): a unimodal g that falls from
    # that end over a step of tol peaks within tol of it, less than about g'' tol^2 above it (the steps below
    # would only approach it geometrically, as a golden-section search does)
    for end, f_end, inward in ((lo, f_lo, tol), (hi, f_hi, -tol)):
        if f_end >= fx and g(end + inward) <= f_end:
            return found
    step = previous = mpmath.mpf(0)
    for _ in range(2 * dps + 10):
        mid = (a + b) / 2
        if abs(x - mid) <= 2 * tol - (b - a) / 2:
            break
        parabolic = False
        if abs(previous) > tol:
            # the vertex of the parabola through (x, fx), (w, fw), (v, fv) is x + p/q (for a maximum as for a
            # minimum: it does not depend on the sign of g)
            r = (x - w) * (fx - fv)
            q = (x - v) * (fx - fw)
            p = (x - v) * q - (x - w) * r
            q = 2 * (q - r)
            if q > 0:
                p = -p
            q = abs(q)
            before_last, previous = previous, step
            if abs(p) < abs(q * before_last / 2) and q * (a - x) < p < q * (b - x):
                step, parabolic = p / q, True
                if (x + step) - a < 2 * tol or b - (x + step) < 2 * tol:
                    step = tol if mid > x else -tol
        if not parabolic:
            previous = (a - x) if x >= mid else (b - x)
            step = golden * previous
        u = x + (step if abs(step) >= tol else (tol if step > 0 else -tol))
        fu = g(u)
        found = max(found, fu)
        if fu >= fx:
            if u >= x:
                a = x
            else:
                b = x
            v, fv, w, fw, x, fx = w, fw, x, fx, u, fu
        else:
            if u < x:
                a = u
            else:
                b = u
            if fu >= fw or w == x:
                v, fv, w, fw = w, fw, u, fu
            elif fu >= fv or v == x or v == w:
                v, fv = u, fu
    return found


def envelope_checks(pe: PolygonEnvelope, dist: Any = None, values: dict | None = None,
                    eps_grid: Sequence[float] = (0.1, 0.5, 1.0, 2.0, 4.0), delta: float | None = None) -> list[Check]:
    """Checks of a :class:`PolygonEnvelope` for a :class:`~symsel.derive.record.Derivation`.

    Args:
        pe: the output of :func:`polygon_envelope`.
        dist: the law as a :class:`symsel.distributions.Distribution` (numbers only). Its ``dphi_mp`` is the
            brute force's ``phi'``; without it ``pe.dphi`` is used (then only the closed form is independent).
        values: numbers for free symbols of ``pe`` (parameters, ``varepsilon_1``, ``delta_1``), if any.
        eps_grid: the ``eps`` at which the profile bound is compared with ``symsel.bound(..., "envelope")``.
        delta: if given (and ``dist``), the soundness check ``lower_bound(base, dist, delta).epsilon <= eps``.

    Returns:
        ``numeric-50``: ``H`` = a brute-force sup over ``u`` at 50 digits at one ``t`` inside each piece, near 0,
        at ``1.2 R``,
        and ``H(R) = 0 < H(R (1 - 1e-6))``; ``numeric``: the profile bound lies between the certified numeric
        envelope at ``eps - 1e-3`` (minus ``1e-45``; relative :data:`ENGINE_SLACK`) and at ``eps``, for the
        ``approx(eps1, delta1)`` base; ``soundness``: the closed form's ``eps(delta)`` is above the certified
        lower bound from exact worst-case examples. Both need ``dist`` and numeric ``eps1``, ``delta1``.
    """
    values = values or {}
    e1, d1, r = (_mp_number(x, values, DPS) for x in (pe.eps1, pe.delta1, pe.ratio))
    if dist is not None:
        def dphi_mp(u: mpmath.mpf) -> mpmath.mpf:
            return dist.dphi_mp(u, DPS + 15)
    else:
        f = sympy.lambdify(z, pe.dphi.subs(values), "mpmath")

        def dphi_mp(u: mpmath.mpf) -> mpmath.mpf:
            return f(u)
    checks = [_check_h(pe, dphi_mp, e1, d1, r, values)]
    if dist is not None:
        checks.append(_check_profile(pe, dist, e1, d1, values, eps_grid))
        if delta is not None:
            checks.append(_check_sound(pe, dist, e1, d1, values, delta))
    return checks


def _check_h(pe: PolygonEnvelope, dphi_mp: Callable, e1: Any, d1: Any, r: Any, values: dict) -> Check:
    worst = mpmath.mpf(0)
    with mpmath.workdps(DPS):
        near_r = r * (1 - mpmath.mpf(10) ** -6)
        if pe.pieces is not None:  # one t inside every piece, so that each closed form is exercised
            ts = [(_mp_number(p.lo, values, DPS) + _mp_number(p.hi, values, DPS)) / 2 for p in pe.pieces[:-1]]
        else:
            ts = [r * k / 8 for k in (1, 3, 5, 7)]
        ts += [r / 160, r * mpmath.mpf("1.2"), near_r]
        brute = {}
        for t in ts:
            brute[t] = brute_force_h(dphi_mp, e1, d1, t)
            worst = max(worst, abs(pe.h_mp(t, DPS, values) - brute[t]))
        at_r = pe.h_mp(r, DPS, values)
        scale = max(1, pe.h_mp(0, DPS, values))
    ok = worst <= mpmath.mpf(10) ** -40 * scale and at_r <= mpmath.mpf(10) ** -45 * scale and brute[near_r] > 0
    return Check(f"H(t) in closed form = a brute-force sup over u (grid + Brent's method) at 50 digits at {len(ts)} "
                 "values of t (one inside each piece, near 0, 1.2 R); H(R) = 0 < H(R(1 - 1e-6))", "numeric-50",
                 float(worst), bool(ok))


def _approx_base(e1: Any, d1: Any) -> Any:
    from symsel.spec import parse_profile

    return parse_profile(f"approx(eps={float(e1)!r}, delta={float(d1)!r})")


def _check_profile(pe: PolygonEnvelope, dist: Any, e1: Any, d1: Any, values: dict, eps_grid: Sequence[float]) -> Check:
    from symsel.bounds import bound

    numeric = bound(dist, _approx_base(e1, d1), "envelope")
    worst, ok = 0.0, True
    for eps in eps_grid:
        ours = float(pe.delta_mp(eps, DPS, values))
        below = float(pe.delta_mp(max(eps - 1e-3, 0), DPS, values))
        engine = float(numeric.delta(eps))
        ok &= ours <= engine * (1 + 1e-12) + 1e-300 and engine <= below * (1 + ENGINE_SLACK) + 1e-45
        worst = max(worst, abs(engine - ours) / max(ours, 1e-300))
    return Check(f"the closed-form profile bound for approx(eps1, delta1) lies between symsel.bound(..., 'envelope') "
                 f"at eps and its certified slack (exact at eps - 1e-3, + 1e-45), eps in {list(eps_grid)}",
                 "numeric", worst, bool(ok))


def _check_sound(pe: PolygonEnvelope, dist: Any, e1: Any, d1: Any, values: dict, delta: float) -> Check:
    from symsel.evidence.lower import lower_bound

    ours = float(pe.epsilon_mp(delta, 30, values))
    if ours == float("inf"):  # delta < m delta1: the bound is vacuous there, hence sound
        return Check(f"eps(delta = {delta:g}) is infinite (delta < m delta1): vacuous, sound", "soundness",
                     float("inf"), True)
    lower = lower_bound(_approx_base(e1, d1), dist, delta, budget=60, slices=200).epsilon
    return Check(f"the closed-form eps(delta = {delta:g}) is above a certified lower bound from exact examples",
                 "soundness", ours - lower, ours >= lower)
