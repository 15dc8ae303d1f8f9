"""``derive(dist, base=None)``: the closed forms of docs/ratio-methods.md for one law of ``K``, each checked.

The ratio ``log phi'(q) - log phi'(q')`` is followed along the two segments of the ``(eps1, delta1)``
polygon (docs/setting.md; Koskela et al. Thm 4.1 and Lemma C.5): with ``t = s/(1 + s)``, ``delta1 = D/(1 + D)``
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
from symsel.derive.common import (
    DELTA1,
    DPS,
    EPS,
    EPS0,
    EPS1,
    SYMPY_FAILURES,
    SympyTimeoutError,
    time_limit,
)
from symsel.derive.common import at as _at
from symsel.derive.common import engine_law as _engine_law
from symsel.derive.common import free_points as _free_points
from symsel.derive.family import _simple, recognize
from symsel.derive.puredp import pure_dp
from symsel.derive.record import Check, Derivation
from symsel.derive.renyi import renyi_route
from symsel.derive.segments import sup_location
from symsel.derive.utility import utility
from symsel.distributions import Distribution, z
from symsel.errors import SpecError
from symsel.lower import lower_bound
from symsel.profiles import Profile
from symsel.spec import parse_expression

_Q, _QP = sympy.symbols("q q'", positive=True)
_FUNCTIONS = {"exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "atan", "asin", "acos",
              "binomial", "factorial", "gamma", "Abs", "log1p", "expm1"}
THEOREMS = {"poisson": "Koskela et al. Cor 5.8", "tnb": "Koskela et al. Thm 5.2", "binomial": "Koskela et al. Thm 5.7"}
#: a law whose PGF is an exact polynomial of higher degree (or larger expression) skips the symbolic pieces
#: (pure-DP region, Rényi route, utility integral): SymPy is slow there; certified numeric values remain.
HUGE_DEGREE, HUGE_OPS = 60, 3000
#: seconds given to each heavy SymPy section before it is skipped with a note (never a hang).
SECTION_SECONDS = 5.0


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


# ------------------------------------------------------------------------------------ family bounds
def family_log_ratio(name: str, params: dict[str, sympy.Expr]) -> sympy.Expr:
    """``log R_paper(eps1, delta1)`` of the family's theorem (``eps_hat = eps - log R``), docs/ratio-methods.md."""
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


# ------------------------------------------------------------------------------------ derive
def _derivative(phi: sympy.Expr) -> sympy.Expr:
    """``phi'``; an exact polynomial is differentiated as a ``Poly`` (``sympy.diff`` crawls on thousands of terms)."""
    if not phi.free_symbols - {z} and phi.is_polynomial(z):
        return sympy.Poly(phi, z).diff(z).as_expr()
    return sympy.diff(phi, z)


def _sizes(phi: sympy.Expr) -> tuple[bool, bool]:
    """``(big, huge)``: ``big`` skips SymPy's family recognition and simplification (as before); ``huge`` also
    skips the symbolic pure-DP, Rényi and utility sections."""
    exact_poly = not phi.free_symbols - {z} and phi.is_polynomial(z)
    degree = sympy.degree(phi, z) if exact_poly else 0
    ops = sympy.count_ops(phi) if len(phi.args) < 1000 else HUGE_OPS + 1
    return ops > 400 or degree > 4, ops > HUGE_OPS or degree > HUGE_DEGREE


def _section(name: str, notes: list[str], run: Any) -> tuple[dict | None, list[Check]]:
    """Run one symbolic section under :data:`SECTION_SECONDS`; on a timeout record a note, no claim."""
    try:
        with time_limit(SECTION_SECONDS):
            return run()
    except SympyTimeoutError:
        notes.append(f"{name}: SymPy did not close it within {SECTION_SECONDS:g} s; skipped (the certified numeric "
                     "engine, symsel.bound, is what applies)")
        return None, []
    except SYMPY_FAILURES as exc:  # SymPy gave up on an expression
        notes.append(f"{name}: SymPy failed on it ({type(exc).__name__}: {str(exc)[:120]}); skipped, no claim made "
                     "(the certified numeric engine, symsel.bound, is what applies)")
        return None, []


def derive(law: str | Distribution, base: str | Profile | None = None, delta: float = 1e-5,
           sections: bool = True) -> Derivation:
    """The :class:`Derivation` of a law of ``K`` (a :class:`Distribution` or a spec; a ``pgf(expr=...)``
    spec may leave parameters free), optionally with a base mechanism whose polygon and bound are derived
    and checked for soundness against exact examples (:func:`symsel.lower.lower_bound`) at ``delta``.
    ``sections=False`` skips the pure-DP region, the Rényi route and the utility (a few seconds each)."""
    spec, phi, dist = symbolic_law(law)
    dphi = _derivative(phi)
    big, huge = _sizes(phi)
    mean = _at(dphi, 1)
    d2 = _at(_derivative(dphi), 1)
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
        engine_mean = sympy.Float(mpmath.nstr(law_n.mean_mp(DPS), DPS + 5), DPS)
        worst = max(worst, abs(float(sympy.N(mean.subs(point), DPS) - engine_mean)))
    checks.append(Check("m = phi'(1) agrees with the engine's mean at 50 digits", "numeric-50", worst, worst < 1e-40))
    ratio = sympy.log(dphi.subs(z, _Q) / dphi.subs(z, _QP)) if not huge else sympy.Symbol(r"\text{(large law)}")
    if not big:
        ratio = _simple(sympy.expand_log(ratio, force=True))
    notes: list[str] = []
    eps_hat = theorem = None
    if recognized:
        eps_hat, theorem = EPS - family_log_ratio(*recognized), THEOREMS[recognized[0]]
        if recognized[0] == "binomial":
            theorem += r" (valid when \varepsilon_1 \ge \log(1 + p\delta_1/(1-p)))"
    bound: dict[str, Any] = {}
    base_spec = base_p = None
    polygon = None
    if base is None:
        where, argument, _, _ = sup_location(dphi) if not big else ("unknown", "law too large", "none", {})
    else:
        base_p = symsel.parse_profile(base) if isinstance(base, str) else base
        base_spec = base_p.spec
        where, argument, eps_hat_b, theorem_b, bound, more, polygon = _with_base(spec, phi, dphi, dist, base_p,
                                                                                  delta, huge)
        checks += more
        if eps_hat is None:
            eps_hat, theorem = eps_hat_b, theorem_b
    envelope, envelope_checks_ = _envelope(dphi, recognized, big, dist, base_spec is not None, delta, checks)
    checks += envelope_checks_
    notes.append(_ENVELOPE_NOTE if envelope is not None else
                 "envelope H(t): SymPy could not solve its stationarity condition for this law; symsel.bound uses "
                 "the certified numeric envelope (docs/envelope.md)")
    parts = _symbolic_sections(spec, phi, dphi, dist, recognized, mean, base_p, polygon, big, huge, notes) \
        if sections else {"checks": []}
    checks += parts.pop("checks")
    fam_params = {k: sympy.latex(v) for k, v in recognized[1].items()} if recognized else {}
    return Derivation(
        spec=spec, pgf=_latex(phi), dpgf=_latex(dphi if big else _simple(dphi)), mean=sympy.latex(mean),
        variance=sympy.latex(variance), p0=sympy.latex(p0), p1=sympy.latex(p1),
        family=recognized[0] if recognized else None, family_params=fam_params, ratio=sympy.latex(ratio),
        sup_location=where, sup_argument=argument, eps_hat=None if eps_hat is None else
        (eps_hat if isinstance(eps_hat, str) else sympy.latex(eps_hat)), eps_hat_theorem=theorem, envelope=envelope,
        base=base_spec, bound=bound, checks=tuple(checks), notes=tuple(notes), **parts)


_ENVELOPE_NOTE = (
    "envelope H(t) on the (eps1, delta1) polygon in closed form (docs/envelope.md); for an (eps1, delta1)-DP base "
    "it gives, "
    "for every eps >= 0, delta_A(eps) <= m delta1 + (1 - delta1)/(1 + e^eps1) (e^eps1 H(e^(eps - eps1)) + "
    "H(e^(eps + eps1))) (symsel.derive.envelope)")


def _envelope(dphi: sympy.Expr, recognized: tuple | None, big: bool, dist: Distribution | None, with_base: bool,
              delta: float, checks: list[Check]) -> tuple[str | None, list[Check]]:
    """The closed-form envelope of :mod:`symsel.derive.envelope` on the symbolic polygon (LaTeX or ``None``) and,
    for a numeric law, its checks at one polygon (eps1, delta1) = (1/2, 1e-6): ``H`` against a 50-digit brute-force
    sup, the profile bound against the certified numeric envelope, and (with a base) soundness at ``delta``."""
    from symsel.derive.envelope import envelope_checks, polygon_envelope

    if big:
        return None, []
    try:
        symbolic = polygon_envelope(dphi, EPS1, DELTA1, recognized)
    except SYMPY_FAILURES:  # e.g. a Max of terms SymPy cannot compare (free exponents): no closed form claimed
        return None, []
    if symbolic is None:
        return None, []
    more: list[Check] = []
    if dist is not None:
        numeric = polygon_envelope(dphi, sympy.Rational(1, 2), sympy.Rational(1, 10**6), recognized)
        if numeric is not None:
            more = envelope_checks(numeric, dist=dist, delta=delta if with_base else None)
    return symbolic.latex(), more


def _latex(expr: sympy.Expr) -> str:
    """LaTeX of ``expr``; a polynomial of more than 40 terms shows its first and last few terms."""
    if isinstance(expr, sympy.Add) and len(expr.args) > 40 and expr.is_polynomial(z):
        terms = sympy.Poly(expr, z).terms()
        show = [sympy.latex(c * z**e[0]) for e, c in terms[:3]] + [r"\cdots"] + \
            [sympy.latex(c * z**e[0]) for e, c in terms[-2:]]
        return " + ".join(show) + rf" \quad \text{{({len(terms)} terms)}}"
    return sympy.latex(expr)


def _symbolic_sections(spec: str, phi: sympy.Expr, dphi: sympy.Expr, dist: Distribution | None, recognized: Any,
                       mean: sympy.Expr, base: Profile | None, polygon: tuple | None, big: bool, huge: bool,
                       notes: list[str]) -> dict[str, Any]:
    """The pure-DP region, the Rényi route and the utility, each under a time limit. A ``big`` law (an exact
    polynomial of degree > 4 or a large expression) keeps only the utility, evaluated numerically at 50 digits;
    a ``huge`` one skips all three."""
    if huge:
        notes.append("pure-DP region, Rényi route and utility: skipped for a law this large (SymPy too slow); "
                     "symsel.bound and the Distribution's utility methods give certified numeric values")
        return {"pure_dp": None, "renyi": None, "utility": None, "checks": []}
    eps0 = sympy.Rational(repr(float(base.eps))) if getattr(base, "family", None) == "pure" else EPS0
    pure_entry = renyi_entry = None
    c1: list[Check] = []
    c2: list[Check] = []
    if big:
        notes.append("pure-DP region and Rényi route: skipped for a law this large (SymPy's sign proofs are too slow); "
                     "symsel.bound(dist, pure(eps0), 'fdp') and method 'rdp_lemma7' give certified numeric values")
    else:
        pure_entry, c1 = _section("pure-DP region", notes, lambda: pure_dp(spec, phi, dphi, dist, eps0))
        renyi_entry, c2 = _section("Rényi route", notes,
                                   lambda: renyi_route(spec, phi, dphi, dist, recognized, mean, polygon))
    util_entry, c3 = _section("utility", notes, lambda: utility(spec, phi, dist, big))
    return {"pure_dp": pure_entry, "renyi": renyi_entry, "utility": util_entry, "checks": c1 + c2 + c3}



def _margin(upper: float, lower: float) -> float:
    """``upper - lower``, and ``0`` when both are infinite (a vacuous bound that the exact example shows is tight:
    ``delta`` below ``m delta0``), never ``nan``."""
    return 0.0 if upper == lower else upper - lower


def _with_base(spec: str, phi: sympy.Expr, dphi: sympy.Expr, dist: Distribution | None, base: Profile,
               delta: float, huge: bool) -> tuple[str, str, str | None, str | None, dict, list[Check], tuple]:
    """The base's polygon (the engine's optimal ``eps1``), where the ratio's sup sits on it (not looked for on a
    ``huge`` law: its ``phi'`` is too large to evaluate symbolically), the derived bound and its soundness checks."""
    if dist is None:
        raise SpecError("a base needs every parameter of the law bound to a value (e.g. pgf(expr=..., mu=3))")
    polygon = symsel.bound(dist, base, "polygon")
    best = symsel.bound(dist, base)
    e1 = sympy.Rational(repr(float(polygon.details["eps1"])))
    d1 = sympy.Rational(repr(float(base.delta(float(e1)))))
    where, argument, kind, corners = sup_location(dphi, e1, d1) if not huge else (
        "unknown", "law too large to locate the sup symbolically; the engine's certified sup applies", "none", {})
    checks: list[Check] = []
    eps_hat = theorem = None
    log_r = None
    if where in ("vertex", "start", "end"):
        q, qp = corners[where]
        log_r = sympy.log(dphi.subs(z, q)) - sympy.log(dphi.subs(z, qp))
        value = sympy.N(log_r, DPS)
        cert = polygon_ratio_at(dist, base, float(e1)).certificate
        # the engine's grid attains cert.lower and certifies cert.upper: the claimed sup must lie between them
        # (1e-12: float64 log phi' on the grid); how far the certificate's upper end is above it is reported.
        below_grid = float(value) - cert.lower
        checks.append(Check(f"sup of the ratio over the polygon (eps1 = {float(e1):g}) = its {where} value: no point "
                            "of the engine's certificate grid is above it and its certified sup is not below it",
                            kind, cert.upper - float(value),
                            below_grid >= -1e-12 and cert.upper >= float(value) - 1e-12))
        eps_hat = (r"\varepsilon - " + (sympy.latex(log_r) if sympy.count_ops(log_r) < 60 else
                                        mpmath.nstr(mpmath.mpf(str(value)), 30)))
        theorem = (f"docs/ratio-methods.md with the polygon sup at its {where} (eps1 = {float(e1):g}, "
                   f"delta1 = {float(d1):.3g})")
    m = float(sympy.N(_at(dphi, 1), DPS))
    lower = lower_bound(base, dist, delta, budget=60, slices=200)
    bound = {"delta": delta, "epsilon_best": best.epsilon(delta), "method_best": best.method,
             "epsilon_lower": lower.epsilon, "lower_construction": lower.construction}
    checks.append(Check(f"symsel.bound is sound at delta = {delta:g}: above an exact example (lower bound)",
                        "soundness", _margin(best.epsilon(delta), lower.epsilon), best.epsilon(delta) >= lower.epsilon))
    if log_r is not None and delta / m <= 1:
        derived = float(sympy.N(log_r, DPS)) + base.epsilon(delta / m)
        bound["epsilon_derived"] = derived
        checks.append(Check(f"the derived closed-form bound is sound at delta = {delta:g}", "soundness",
                            _margin(derived, lower.epsilon), derived >= lower.epsilon))
    return where, argument, eps_hat, theorem, bound, checks, (e1, d1)
