"""``derive(dist, base=None)``: the closed forms of MATH.md §3–§4 for one law of ``K``, each checked.

The ratio ``log phi'(q) - log phi'(q')`` is followed along the two segments of the ``(eps1, delta1)``
polygon (MATH.md §2; Koskela et al. Thm 4.1 and Lemma C.5): with ``t = s/(1 + s)``, ``delta1 = D/(1 + D)``
and every parameter positive, a derivative whose numerator and denominator are polynomials in ``s`` with
coefficients of one sign (Descartes' rule of signs), or that SymPy proves positive/negative, has a sign
that is *proved*; otherwise its sign is sampled at 64 points and the claim is labelled numerical evidence.
Family closed forms: Koskela et al. Thm 5.2 (TNB), Thm 5.7 (binomial, with its validity condition),
Cor 5.8 (Poisson). The certified numeric engine (:func:`symsel.bound`) stays what bounds are computed from.
"""

from __future__ import annotations

import ast
from typing import Any

import mpmath
import sympy

import symsel
from symsel.bounds.hockey_stick import paper_log_ratio_at, polygon_ratio_at
from symsel.derive.family import _simple, recognize
from symsel.derive.record import Check, Derivation
from symsel.distributions import Distribution, z
from symsel.errors import SpecError
from symsel.lower import lower_bound
from symsel.profiles import Profile
from symsel.spec import parse_expression

DPS = 50
EPS, EPS1, DELTA1 = sympy.symbols("varepsilon varepsilon_1 delta_1", positive=True)
_Q, _QP, _T, _S, _D, _X = sympy.symbols("q q' t s D X", positive=True)
_FUNCTIONS = {"exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "atan", "asin", "acos",
              "binomial", "factorial", "gamma", "Abs", "log1p", "expm1"}
THEOREMS = {"poisson": "Koskela et al. Cor 5.8", "tnb": "Koskela et al. Thm 5.2", "binomial": "Koskela et al. Thm 5.7"}
#: parameter points at which free symbols are instantiated for the 50-digit checks.
SAMPLE_VALUES = (sympy.Rational(1, 2), sympy.Rational(3), sympy.Rational(40))


# ------------------------------------------------------------------------------------ the law
def symbolic_law(law: str | Distribution) -> tuple[str, sympy.Expr, Distribution | None]:
    """``(spec, phi, dist)``: ``phi`` with exact parameter values, or free positive symbols for a
    ``pgf(expr=...)`` spec that leaves names unbound (then ``dist`` is ``None``)."""
    if isinstance(law, Distribution):
        return law.spec, _tidy(law.pgf), law
    try:
        dist = symsel.parse_distribution(law)
        return dist.spec, _tidy(dist.pgf), dist
    except SpecError as exc:
        if "unknown name" not in str(exc):
            raise
        error = exc
    tree = ast.parse(law.strip(), mode="eval").body
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and tree.func.id == "pgf"):
        raise error
    kw = {k.arg: k.value for k in tree.keywords}
    if tree.args or not isinstance(kw.get("expr"), ast.Constant) or not isinstance(kw["expr"].value, str):
        raise error
    text = kw.pop("expr").value
    called = {n.func.id for n in ast.walk(ast.parse(text, mode="eval")) if isinstance(n, ast.Call)
              and isinstance(n.func, ast.Name)}
    names = sorted({n.id for n in ast.walk(ast.parse(text, mode="eval")) if isinstance(n, ast.Name)}
                   - called - _FUNCTIONS - {"z", "E", "pi"})
    expr = parse_expression(text, params=tuple(names))
    expr = expr.subs({sympy.Symbol(n): sympy.Symbol(n, positive=True) for n in names})
    values = {}
    for name, node in kw.items():
        if name not in names or not isinstance(node, ast.Constant) or not isinstance(node.value, int | float):
            raise error
        values[sympy.Symbol(name, positive=True)] = sympy.nsimplify(node.value)
    return law.strip(), expr.subs(values), None


def _tidy(phi: sympy.Expr) -> sympy.Expr:
    """A polynomial PGF with exact coefficients, expanded (fast to differentiate and factor)."""
    return sympy.expand(phi) if phi.is_polynomial(z) and not phi.free_symbols - {z} else phi


def _at(expr: sympy.Expr, point: Any) -> sympy.Expr:
    value = expr.subs(z, point)
    if value.has(sympy.nan, sympy.zoo) or value.is_finite is False:
        value = sympy.limit(expr, z, point, "-" if point == 1 else "+")
    return _simple(value)


def _free_points(phi: sympy.Expr) -> list[dict[sympy.Symbol, sympy.Expr]]:
    free = sorted(phi.free_symbols - {z}, key=str)
    return [{s: v for s in free} for v in SAMPLE_VALUES] if free else [{}]


def _engine_law(spec: str, phi: sympy.Expr, point: dict, dist: Distribution | None) -> Distribution:
    if dist is not None:
        return dist
    text = sympy.sstr(phi.subs({s: sympy.Symbol(s.name) for s in point}))
    args = ", ".join(f"{s.name}={float(v)!r}" for s, v in point.items())
    return symsel.parse_distribution(f"pgf(expr={text!r}{', ' + args if args else ''})")


# ------------------------------------------------------------------------------------ family bounds
def family_log_ratio(name: str, params: dict[str, sympy.Expr]) -> sympy.Expr:
    """``log R_paper(eps1, delta1)`` of the family's theorem (``eps_hat = eps - log R``), MATH.md §4."""
    if name == "poisson":
        return params["mu"] * (sympy.exp(EPS1) - 1) + params["mu"] * DELTA1
    if name == "tnb":
        return (params["eta"] + 1) * sympy.log(sympy.exp(EPS1) + (1 - params["gamma"]) / params["gamma"] * DELTA1)
    n, p = params["n"], params["p"]
    return (n - 1) * sympy.log(1 + p * (sympy.exp(EPS1) - 1) + p * DELTA1)


def _family_checks(name: str, params: dict, spec: str, phi: sympy.Expr, dist: Distribution | None) -> list[Check]:
    log_r = family_log_ratio(name, params)
    worst = 0.0
    for point in _free_points(phi):
        law = _engine_law(spec, phi, point, dist)
        for e1, d1 in ((0.5, 1e-3), (1.0, 1e-6), (2.0, 0.1)):
            try:
                engine = paper_log_ratio_at(law, e1, d1)
            except symsel.errors.NotApplicableError:
                return [Check(f"the engine recognizes the {name} family", "numeric", float("inf"), False)]
            if engine == float("inf"):
                continue  # Thm 5.7's validity condition fails there: the engine refuses, so do we
            ours = sympy.N(log_r.subs(point).subs({EPS1: e1, DELTA1: sympy.Rational(repr(d1))}), DPS)
            worst = max(worst, abs(float(ours) - engine) / max(1.0, abs(engine)))
    return [Check(f"log R of {THEOREMS[name]} equals the engine's paper form (relative, 3 points x 3 eps1)",
                  "numeric", worst, worst < 1e-12)]


# ------------------------------------------------------------------------------------ sup location
def _sign(expr: sympy.Expr) -> int | None:
    """+1/-1 when proved for every ``s > 0`` (Descartes: coefficients of one sign) or by SymPy; else None."""
    if sympy.count_ops(expr) < 200:
        expr = sympy.factor(sympy.cancel(expr))
    if expr.is_positive:
        return 1
    if expr.is_negative:
        return -1
    num, den = sympy.fraction(sympy.together(expr))
    signs = []
    for part in (num, den):
        try:
            poly = sympy.Poly(sympy.expand(part), _S)
        except sympy.PolynomialError:
            return None
        coeff_signs = set()
        for c in poly.coeffs():
            if c.free_symbols:
                sign = 1 if c.is_positive else -1 if c.is_negative else None
            else:
                value = sympy.N(c, DPS)
                sign = 1 if value > 1e-40 else -1 if value < -1e-40 else None
            if sign is None:
                return None
            coeff_signs.add(sign)
        if len(coeff_signs) != 1:
            return None
        signs.append(coeff_signs.pop())
    return signs[0] * signs[1]


def _sampled_sign(dphi: sympy.Expr, a: tuple, b: tuple) -> int | None:
    """The sign of ``d/dt log phi'(q(t))/phi'(q'(t))`` at 63 points at 30 digits (numerical evidence)."""
    f1 = sympy.lambdify(z, dphi, "mpmath")
    f2 = sympy.lambdify(z, sympy.diff(dphi, z), "mpmath")
    with mpmath.workdps(30):
        a0, a1, b0, b1 = (mpmath.mpf(sympy.N(v, 40)) for v in (a[0], a[1], b[0], b[1]))
        signs = set()
        for i in range(1, 64):
            t = mpmath.mpf(i) / 64
            q, qp = a0 + t * (b0 - a0), a1 + t * (b1 - a1)
            value = f2(q) * (b0 - a0) / f1(q) - f2(qp) * (b1 - a1) / f1(qp)
            if abs(value) > mpmath.mpf(10) ** -25:
                signs.add(1 if value > 0 else -1)
    return signs.pop() if len(signs) == 1 else None


def _segment_sign(dphi: sympy.Expr, a: tuple, b: tuple, numeric: bool, e1: Any = EPS1) -> tuple[int | None, str]:
    if numeric and sympy.count_ops(dphi) > 60:  # large exact laws: SymPy's sign proof is too slow; sample
        return _sampled_sign(dphi, a, b), "sampling"
    q, qp = a[0] + _T * (b[0] - a[0]), a[1] + _T * (b[1] - a[1])
    ratio = sympy.log(dphi.subs(z, q)) - sympy.log(dphi.subs(z, qp))
    derivative = sympy.diff(ratio, _T)
    sign = None
    if not (numeric and sympy.count_ops(derivative) > 200):  # large exact polynomials: SymPy is too slow here
        sign = _sign(derivative.subs(_T, _S / (1 + _S)).subs(DELTA1, _D / (1 + _D)).subs(sympy.exp(EPS1), 1 + _X))
    if sign is not None:
        return sign, "symbolic"
    if not numeric:
        return None, "none"
    values = [sympy.N(derivative.subs(_T, sympy.Rational(i, 64)), 30) for i in range(1, 64)]
    signs = {1 if v > 0 else -1 for v in values if v.is_real and abs(v) > 1e-25}
    return (signs.pop(), "sampling") if len(signs) == 1 else (None, "sampling")


def _corners(e1: Any, d1: Any) -> dict[str, tuple[sympy.Expr, sympy.Expr]]:
    ee = sympy.exp(e1)
    return {"start": (d1, sympy.Integer(0)), "vertex": ((ee + d1) / (1 + ee), (1 - d1) / (1 + ee)),
            "end": (sympy.Integer(1), 1 - d1)}


def sup_location(dphi: sympy.Expr, e1: Any = EPS1, d1: Any = DELTA1) -> tuple[str, str, str, dict]:
    """Where ``sup log phi'(q)/phi'(q')`` over the polygon sits: ``(location, argument, kind, corners)``."""
    corners = _corners(e1, d1)
    numeric = not (e1.free_symbols if isinstance(e1, sympy.Expr) else False) and not dphi.free_symbols - {z}
    s1, k1 = _segment_sign(dphi, corners["start"], corners["vertex"], numeric, e1)
    s2, k2 = _segment_sign(dphi, corners["vertex"], corners["end"], numeric, e1)
    kind = "symbolic" if k1 == k2 == "symbolic" else "sampling" if None not in (s1, s2) else "none"
    if s1 is None or s2 is None:
        return "unknown", "the sign of the derivative along a segment was not decided", kind, corners
    where = {(1, -1): "vertex", (1, 1): "end", (-1, -1): "start", (-1, 1): "start or end"}[(s1, s2)]
    word = {1: "increases", -1: "decreases"}
    how = "proved (sign of the factored derivative, Descartes / SymPy, cf. Lemma C.5)" if kind == "symbolic" \
        else "sampled at 63 points per segment: numerical evidence, not a proof"
    return where, f"the ratio {word[s1]} along S1 and {word[s2]} along S2; {how}", kind, corners


# ------------------------------------------------------------------------------------ derive
def derive(law: str | Distribution, base: str | Profile | None = None, delta: float = 1e-5) -> Derivation:
    """The :class:`Derivation` of a law of ``K`` (a :class:`Distribution` or a spec; a ``pgf(expr=...)``
    spec may leave parameters free), optionally with a base mechanism whose polygon and bound are derived
    and checked for soundness against exact examples (:func:`symsel.lower.lower_bound`) at ``delta``."""
    spec, phi, dist = symbolic_law(law)
    dphi = sympy.diff(phi, z)
    big = sympy.count_ops(phi) > 400 or (phi.is_polynomial(z) and sympy.degree(phi, z) > 4
                                         and not phi.free_symbols - {z})
    mean = _at(dphi, 1)
    d2 = _at(sympy.diff(phi, z, 2), 1)
    variance = _simple(d2 + mean - mean**2)
    p0, p1 = _at(phi, 0), _at(dphi, 0)
    recognized = recognize(phi) if not big else None
    checks: list[Check] = []
    if recognized:
        checks.append(Check(f"phi is the {recognized[0]} PGF (identity)", "symbolic", 0.0, True))
    elif big and dist is not None and dist.family is not None and dist.family.name in THEOREMS:
        recognized = (dist.family.name, dict(dist.family.params))  # too large for SymPy here: the engine's
        checks.append(Check(f"phi is the {recognized[0]} PGF (the engine's recognize_family)", "engine", 0.0, True))
        checks += _family_checks(*recognized, spec, phi, dist)
    worst = 0.0
    for point in _free_points(phi):
        law_n = _engine_law(spec, phi, point, dist)
        worst = max(worst, abs(float(sympy.N(mean.subs(point), DPS) - sympy.Float(str(law_n.mean_mp(DPS)), DPS))))
    checks.append(Check("m = phi'(1) agrees with the engine's mean at 50 digits", "numeric-50", worst, worst < 1e-40))
    ratio = sympy.log(dphi.subs(z, _Q) / dphi.subs(z, _QP))
    if not big:
        ratio = _simple(sympy.expand_log(ratio, force=True))
    notes = []
    eps_hat = theorem = None
    if recognized:
        eps_hat, theorem = EPS - family_log_ratio(*recognized), THEOREMS[recognized[0]]
        if recognized[0] == "binomial":
            theorem += r" (valid when \varepsilon_1 \ge \log(1 + p\delta_1/(1-p)))"
    bound: dict[str, Any] = {}
    base_spec = None
    if base is None:
        where, argument, _, _ = sup_location(dphi) if not big else ("unknown", "law too large", "none", {})
    else:
        base_p = symsel.parse_profile(base) if isinstance(base, str) else base
        base_spec = base_p.spec
        where, argument, eps_hat_b, theorem_b, bound, more = _with_base(spec, phi, dphi, dist, base_p, delta)
        checks += more
        if eps_hat is None:
            eps_hat, theorem = eps_hat_b, theorem_b
    notes.append("envelope H(t): no closed form attempted in this version; symsel.bound uses the certified "
                 "numeric envelope (MATH.md §4b)")
    fam_params = {k: sympy.latex(v) for k, v in recognized[1].items()} if recognized else {}
    return Derivation(
        spec=spec, pgf=sympy.latex(phi), dpgf=sympy.latex(dphi if big else _simple(dphi)), mean=sympy.latex(mean),
        variance=sympy.latex(variance), p0=sympy.latex(p0), p1=sympy.latex(p1),
        family=recognized[0] if recognized else None, family_params=fam_params, ratio=sympy.latex(ratio),
        sup_location=where, sup_argument=argument, eps_hat=None if eps_hat is None else
        (eps_hat if isinstance(eps_hat, str) else sympy.latex(eps_hat)), eps_hat_theorem=theorem, envelope=None,
        base=base_spec, bound=bound, checks=tuple(checks), notes=tuple(notes))


def _with_base(spec: str, phi: sympy.Expr, dphi: sympy.Expr, dist: Distribution | None, base: Profile,
               delta: float) -> tuple[str, str, str | None, str | None, dict, list[Check]]:
    if dist is None:
        raise SpecError("a base needs every parameter of the law bound to a value (e.g. pgf(expr=..., mu=3))")
    polygon = symsel.bound(dist, base, "polygon")
    best = symsel.bound(dist, base)
    e1 = sympy.Rational(repr(float(polygon.details["eps1"])))
    d1 = sympy.Rational(repr(float(base.delta(float(e1)))))
    where, argument, kind, corners = sup_location(dphi, e1, d1)
    checks: list[Check] = []
    eps_hat = theorem = None
    log_r = None
    if where in ("vertex", "start", "end"):
        q, qp = corners[where]
        log_r = sympy.log(dphi.subs(z, q)) - sympy.log(dphi.subs(z, qp))
        value = sympy.N(log_r, DPS)
        certified = polygon_ratio_at(dist, base, float(e1)).log_ratio
        gap = certified - float(value)
        checks.append(Check(f"sup of the ratio over the polygon (eps1 = {float(e1):g}) = its {where} value; the "
                            "engine's certified sup is above it and within 1e-6", kind, gap, -1e-12 <= gap < 1e-6))
        eps_hat = (r"\varepsilon - " + (sympy.latex(log_r) if sympy.count_ops(log_r) < 60 else
                                        mpmath.nstr(mpmath.mpf(str(value)), 30)))
        theorem = f"MATH.md §4 with the polygon sup at its {where} (eps1 = {float(e1):g}, delta1 = {float(d1):.3g})"
    m = float(sympy.N(_at(dphi, 1), DPS))
    lower = lower_bound(base, dist, delta, budget=60, slices=200)
    bound = {"delta": delta, "epsilon_best": best.epsilon(delta), "method_best": best.method,
             "epsilon_lower": lower.epsilon, "lower_construction": lower.construction}
    checks.append(Check(f"symsel.bound is sound at delta = {delta:g}: above an exact example (lower bound)",
                        "soundness", best.epsilon(delta) - lower.epsilon, best.epsilon(delta) >= lower.epsilon))
    if log_r is not None and delta / m <= 1:
        derived = float(sympy.N(log_r, DPS)) + base.epsilon(delta / m)
        bound["epsilon_derived"] = derived
        checks.append(Check(f"the derived closed-form bound is sound at delta = {delta:g}", "soundness",
                            derived - lower.epsilon, derived >= lower.epsilon))
    return where, argument, eps_hat, theorem, bound, checks
