"""``derive(dist, base=None)``: the closed forms of docs/ratio-methods.md for one law of ``K``, each checked.

The ratio ``log phi'(q) - log phi'(q')`` is followed along the two segments of the ``(eps1, delta1)``
polygon (docs/setting.md; Koskela et al. Thm 4.1 and Lemma C.5): with ``t = s/(1 + s)``, ``delta1 = D/(1 + D)``
and every parameter positive, a derivative whose numerator and denominator are polynomials in ``s`` with
coefficients of one sign (Descartes' rule of signs), or that SymPy proves positive/negative, has a sign
that is *proved*; otherwise its sign is sampled at 64 points and the claim is labelled numerical evidence.
Family closed forms: Koskela et al. Thm 5.2 (TNB), Thm 5.7 (binomial, with its validity condition),
Cor 5.8 (Poisson). The certified numeric engine (:func:`symsel.bound`) stays what bounds are computed from.

No step runs under a time limit. Which sections run is decided by the size of ``phi`` before any SymPy work
(:class:`~symsel.derive.common.LawSize`: operations, degree of an exact polynomial, nesting depth), and the searches
inside are bounded by operation counts (enclosures, expansion sizes, series terms), so a derivation is the same,
byte for byte, on a quiet and on a loaded machine; a section skipped is named in ``Derivation.skipped`` with its
reason, which depends on the input alone.
"""

from __future__ import annotations

import ast
from typing import Any, cast

import mpmath
import sympy

from symsel import validate
from symsel.bounds import bound as selection_bound
from symsel.bounds.hockey_stick import paper_log_ratio_at, polygon_ratio_at
from symsel.bounds.ratio import SupCertificate
from symsel.derive.common import (
    DELTA1,
    DPS,
    EPS,
    EPS0,
    EPS1,
    HUGE_DEGREE,
    MAX_DIGITS,
    SYMPY_FAILURES,
    LawSize,
    display_latex,
    law_size,
    number_digits,
    polynomial_degree,
)
from symsel.derive.common import at as _at
from symsel.derive.common import engine_law as _engine_law
from symsel.derive.common import free_points as _free_points
from symsel.derive.family import _simple, recognize
from symsel.derive.puredp import pure_dp
from symsel.derive.record import Check, Derivation, Expression
from symsel.derive.renyi import renyi_route
from symsel.derive.segments import sup_location
from symsel.derive.utility import utility
from symsel.distributions import Distribution, z
from symsel.errors import NotApplicableError, ParameterError, SpecError
from symsel.evidence.lower import lower_bound
from symsel.profiles import Profile
from symsel.spec import parse_distribution, parse_expression, parse_profile

_Q, _QP = sympy.symbols("q q'", positive=True)
_Q_PLAIN, _QP_PLAIN = sympy.symbols("q q'")
_FUNCTIONS = {"exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "atan", "asin", "acos",
              "binomial", "factorial", "gamma", "Abs", "log1p", "expm1"}
THEOREMS = {"poisson": "Koskela et al. Cor 5.8", "tnb": "Koskela et al. Thm 5.2", "binomial": "Koskela et al. Thm 5.7"}
#: the smallest ``delta`` a derivation checks its bound at (``symsel derive --delta`` has the same range).
MIN_DELTA = 1e-300
#: the sections of a derivation that can be skipped (keys of ``Derivation.skipped``).
SECTIONS = ("family", "sup_location", "envelope", "pure_dp", "renyi", "utility")
#: what applies to a skipped section instead (appended to its reason).
INSTEAD = {
    "family": "the family is the engine's recognize_family's, when it names one (no SymPy identity claimed)",
    "sup_location": "the engine's certified sup applies",
    "envelope": "symsel.bound uses the certified numeric envelope (docs/envelope.md)",
    "pure_dp": "symsel.bound(dist, pure(eps0), 'fdp') gives certified numeric values",
    "renyi": "method 'rdp_lemma7' gives certified numeric values",
    "utility": "the Distribution's utility methods give certified numeric values",
}


# ------------------------------------------------------------------------------------ the law
def symbolic_law(law: str | Distribution) -> tuple[str, sympy.Expr, Distribution | None]:
    """``(spec, phi, dist)``: ``phi`` with exact parameter values, or free positive symbols for a
    ``pgf(expr=...)`` spec that leaves names unbound (then ``dist`` is ``None``)."""
    if isinstance(law, Distribution):
        return law.spec, _tidy(law.pgf), law
    try:
        dist = parse_distribution(law)
        return dist.spec, _tidy(dist.pgf), dist
    except SpecError as exc:
        if "unknown name" not in str(exc):
            raise
        error = exc
    tree = ast.parse(law.strip(), mode="eval").body
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and tree.func.id == "pgf"):
        raise error
    kw = {k.arg: k.value for k in tree.keywords}
    if tree.args or not isinstance(kw.get("expr"), ast.Constant) or not isinstance(cast(ast.Constant, kw["expr"]).value,
                                                                                  str):
        raise error
    text = cast(str, cast(ast.Constant, kw.pop("expr")).value)
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
    """A polynomial PGF with exact coefficients, expanded (fast to differentiate and factor) when its degree is at
    most :data:`~symsel.derive.common.HUGE_DEGREE`; a higher one stays as given (``(1 - p + p z)^5000`` would
    expand to 5001 coefficients of thousands of digits)."""
    if phi.free_symbols - {z}:
        return phi
    degree = polynomial_degree(phi)
    return sympy.expand(phi) if degree is not None and degree <= HUGE_DEGREE else phi


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
            except NotApplicableError:
                return [Check(f"the engine recognizes the {name} family", "numeric", float("inf"), False)]
            if engine == float("inf"):
                continue  # Thm 5.7's validity condition fails there: the engine refuses, so do we
            ours = sympy.N(log_r.subs(point).subs({EPS1: e1, DELTA1: sympy.Rational(repr(d1))}), DPS)
            worst = max(worst, abs(float(ours) - engine) / max(1.0, abs(engine)))
    return [Check(f"log R of {THEOREMS[name]} equals the engine's paper form (relative, 3 points x 3 eps1)",
                  "numeric", worst, worst < 1e-12)]


# ------------------------------------------------------------------------------------ derive
def _derivative(phi: sympy.Expr) -> sympy.Expr:
    """``phi'``; an expanded exact polynomial is differentiated as a ``Poly`` (``sympy.diff`` crawls on thousands of
    terms), anything else by ``sympy.diff`` (a power ``(1 - p + p z)^n`` stays one power)."""
    if phi.is_Add and not phi.free_symbols - {z} and phi.is_polynomial(z):
        return sympy.Poly(phi, z).diff(z).as_expr()
    return sympy.diff(phi, z)


def _skip(name: str, reason: str) -> str:
    """The reason recorded for a skipped section: why, then what applies instead (the same words every time)."""
    return f"{reason}; {INSTEAD[name]}"


def _section(name: str, skipped: dict[str, str], run: Any) -> tuple[dict | None, list[Check]]:
    """Run one symbolic section; where SymPy gives up on an expression (it raises), record why, and no claim."""
    try:
        return run()
    except SYMPY_FAILURES as exc:
        skipped[name] = _skip(name, f"SymPy failed on it ({type(exc).__name__}: {str(exc)[:120]})")
        return None, []


def derive(law: str | Distribution, base: str | Profile | None = None, delta: float = 1e-5,
           sections: bool = True) -> Derivation:
    """The :class:`Derivation` of a law of ``K`` (a :class:`Distribution` or a spec; a ``pgf(expr=...)``
    spec may leave parameters free), optionally with a base mechanism whose polygon and bound are derived
    and checked for soundness against exact examples (:func:`symsel.evidence.lower.lower_bound`) at ``delta``.
    ``sections=False`` skips the pure-DP region, the Rényi route and the utility (a few seconds each).

    What runs is decided by the law's size (:class:`~symsel.derive.common.LawSize`), never by time: the same
    input gives the same record on any machine, and every section skipped is named in ``skipped`` with its reason.

    ``base`` is a profile spec string or a :class:`~symsel.profiles.Profile` (or ``None``); ``delta`` a real number
    in ``[MIN_DELTA, 1]`` (the range of ``symsel derive --delta``), checked with or without a base."""
    if base is not None and not isinstance(base, str | Profile):
        raise ParameterError("base", base, "None, a profile spec string or a Profile", "derive")
    delta = validate.real(delta, "delta", "derive", lo=MIN_DELTA, hi=1.0,
                          allowed=f"a real number {MIN_DELTA:g} <= delta <= 1 (not NaN)")
    spec, phi, dist = symbolic_law(law)
    size = law_size(phi)
    symbolic = size.symbolic
    skipped: dict[str, str] = {}
    dphi = _derivative(phi)
    mean = _at(dphi, 1)
    d2 = _at(_derivative(dphi), 1)
    variance = _simple(d2 + mean - mean**2)
    p0, p1 = _at(phi, 0), _at(dphi, 0)
    recognized = recognize(phi) if symbolic else None
    checks: list[Check] = []
    if recognized:
        checks.append(Check(f"phi is the {recognized[0]} PGF (identity)", "symbolic", 0.0, True))
    elif not symbolic:
        skipped["family"] = _skip("family", size.symbolic_reason())
        if dist is not None and dist.family is not None and dist.family.name in THEOREMS:
            recognized = (dist.family.name, dict(dist.family.params))  # too large for SymPy here: the engine's
            checks.append(Check(f"phi is the {recognized[0]} PGF (the engine's recognize_family)", "engine", 0.0,
                                True))
            checks += _family_checks(*recognized, spec, phi, dist)
    checks.append(_mean_check(spec, phi, dist, mean))
    if symbolic:
        ratio = _simple(sympy.expand_log(sympy.log(dphi.subs(z, _Q) / dphi.subs(z, _QP)), force=True))
    else:  # q, q' without assumptions: SymPy's sign queries on log of a 60-term polynomial in a positive q take minutes
        ratio = sympy.log(dphi.subs(z, _Q_PLAIN)) - sympy.log(dphi.subs(z, _QP_PLAIN))
    notes: list[str] = []
    eps_hat: Expression | None = None
    theorem = None
    if recognized:
        eps_hat, theorem = Expression(EPS - family_log_ratio(*recognized)), THEOREMS[recognized[0]]
        if recognized[0] == "binomial":
            theorem += r" (valid when \varepsilon_1 \ge \log(1 + p\delta_1/(1-p)))"
    bound: dict[str, Any] = {}
    base_spec = base_p = None
    polygon = None
    if base is None:
        if symbolic:
            where, argument, _, _ = sup_location(dphi)
        else:
            skipped["sup_location"] = _skip("sup_location", size.symbolic_reason())
            where, argument = "unknown", "law too large to locate the sup symbolically (see skipped)"
    else:
        base_p = parse_profile(base) if isinstance(base, str) else base
        base_spec = base_p.spec
        where, argument, eps_hat_b, theorem_b, bound, more, polygon = _with_base(spec, phi, dphi, dist, base_p,
                                                                                  delta, size, skipped)
        checks += more
        if eps_hat is None:
            eps_hat, theorem = eps_hat_b, theorem_b
    envelope, envelope_checks_ = _envelope(dphi, recognized, size, dist, base_spec is not None, delta, skipped)
    checks += envelope_checks_
    if envelope is not None:
        notes.append(_ENVELOPE_NOTE)
    elif "envelope" not in skipped:
        notes.append("envelope H(t): SymPy could not solve its stationarity condition for this law; symsel.bound "
                     "uses the certified numeric envelope (docs/envelope.md)")
    if sections:
        parts = _symbolic_sections(spec, phi, dphi, dist, recognized, mean, base_p, polygon, size, skipped)
    else:
        parts = {"pure_dp": None, "renyi": None, "utility": None, "checks": []}
        for name in ("pure_dp", "renyi", "utility"):
            skipped[name] = _skip(name, "not requested (sections=False)")
    checks += parts.pop("checks")
    fam_params = {k: Expression(v) for k, v in recognized[1].items()} if recognized else {}
    at1 = sympy.Subs(_derivative(dphi) + dphi - dphi**2, z, 1)
    return Derivation(
        spec=spec, pgf=_expression(phi), dpgf=_expression(_simple(dphi) if symbolic else dphi),
        mean=_expression(mean, sympy.Subs(dphi, z, 1)), variance=_expression(variance, at1),
        p0=_expression(p0, sympy.Subs(phi, z, 0)), p1=_expression(p1, sympy.Subs(dphi, z, 0)),
        family=recognized[0] if recognized else None, family_params=fam_params, ratio=_expression(ratio),
        sup_location=where, sup_argument=argument, eps_hat=eps_hat, eps_hat_theorem=theorem, envelope=envelope,
        base=base_spec, bound=bound, checks=tuple(checks), notes=tuple(notes),
        skipped={k: skipped[k] for k in SECTIONS if k in skipped}, **parts)


def _expression(expr: sympy.Expr, unevaluated: sympy.Expr | None = None) -> Expression:
    """An :class:`Expression` whose LaTeX is abbreviated when long (:func:`~symsel.derive.common.display_latex`);
    a value with an exact number of more than :data:`~symsel.derive.common.MAX_DIGITS` digits is recorded as
    ``unevaluated`` (e.g. ``Subs(phi, z, 0)``: exact, and ``doit()`` gives the number)."""
    if unevaluated is not None and number_digits(expr) > MAX_DIGITS:
        expr = unevaluated
    return Expression(expr, display_latex(expr))


def _mean_check(spec: str, phi: sympy.Expr, dist: Distribution | None, mean: sympy.Expr) -> Check:
    """``m = phi'(1)`` against the engine's mean at 50 digits at each parameter point."""
    worst = 0.0
    for point in _free_points(phi):
        law_n = _engine_law(spec, phi, point, dist)
        engine_mean = sympy.Float(mpmath.nstr(law_n.mean_mp(DPS), DPS + 5), DPS)
        value = sympy.N(mean.subs(point), DPS)
        worst = max(worst, abs(float(value - engine_mean)) if value.is_number else float("inf"))
    return Check("m = phi'(1) agrees with the engine's mean at 50 digits", "numeric-50", worst, worst < 1e-40)


_ENVELOPE_NOTE = (
    "envelope H(t) on the (eps1, delta1) polygon in closed form (docs/envelope.md); for an (eps1, delta1)-DP base "
    "it gives, "
    "for every eps >= 0, delta_A(eps) <= m delta1 + (1 - delta1)/(1 + e^eps1) (e^eps1 H(e^(eps - eps1)) + "
    "H(e^(eps + eps1))) (symsel.derive.envelope)")


def _envelope(dphi: sympy.Expr, recognized: tuple | None, size: LawSize, dist: Distribution | None, with_base: bool,
              delta: float, skipped: dict[str, str]) -> tuple[Expression | None, list[Check]]:
    """The closed-form envelope of :mod:`symsel.derive.envelope` on the symbolic polygon (or ``None``) and,
    for a numeric law, its checks at one polygon (eps1, delta1) = (1/2, 1e-6): ``H`` against a 50-digit brute-force
    sup, the profile bound against the certified numeric envelope, and (with a base) soundness at ``delta``."""
    from symsel.derive.envelope import envelope_checks, polygon_envelope

    if not size.symbolic:
        skipped["envelope"] = _skip("envelope", size.symbolic_reason())
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
    return Expression(symbolic.H, symbolic.latex()), more


def _symbolic_sections(spec: str, phi: sympy.Expr, dphi: sympy.Expr, dist: Distribution | None, recognized: Any,
                       mean: sympy.Expr, base: Profile | None, polygon: tuple | None, size: LawSize,
                       skipped: dict[str, str]) -> dict[str, Any]:
    """The pure-DP region, the Rényi route and the utility. A law beyond the symbolic limits keeps only the
    utility, and only when ``phi`` is an exact polynomial (its quantile evaluated numerically at 50 digits); a huge
    one skips all three (reasons in ``skipped``)."""
    out: dict[str, Any] = {"pure_dp": None, "renyi": None, "utility": None, "checks": []}
    if size.huge:
        for name in ("pure_dp", "renyi", "utility"):
            skipped[name] = _skip(name, size.huge_reason())
        return out
    eps0 = sympy.Rational(repr(float(cast(Any, base).eps))) if getattr(base, "family", None) == "pure" else EPS0
    if size.symbolic:
        out["pure_dp"], c1 = _section("pure_dp", skipped, lambda: pure_dp(spec, phi, dphi, dist, eps0))
        out["renyi"], c2 = _section("renyi", skipped,
                                    lambda: renyi_route(spec, phi, dphi, dist, recognized, mean, polygon))
        out["checks"] += c1 + c2
    else:
        for name in ("pure_dp", "renyi"):
            skipped[name] = _skip(name, size.symbolic_reason())
    if size.symbolic or size.degree is not None:
        out["utility"], c3 = _section("utility", skipped, lambda: utility(spec, phi, dist, not size.symbolic))
        out["checks"] += c3
    else:  # its checks would sum a pmf series-expanded from phi: minutes for exp(exp(z - 1) - 1)
        skipped["utility"] = _skip("utility", size.symbolic_reason() + ", and beyond them only an exact polynomial "
                                   "keeps its utility (a pmf summed from a series expansion of phi is too slow)")
    return out


def _margin(upper: float, lower: float) -> float:
    """``upper - lower``, and ``0`` when both are infinite (a vacuous bound that the exact example shows is tight:
    ``delta`` below ``m delta0``), never ``nan``."""
    return 0.0 if upper == lower else upper - lower


def _with_base(spec: str, phi: sympy.Expr, dphi: sympy.Expr, dist: Distribution | None, base: Profile,
               delta: float, size: LawSize, skipped: dict[str, str]
               ) -> tuple[str, str, Expression | None, str | None, dict, list[Check], tuple]:
    """The base's polygon (the engine's optimal ``eps1``), where the ratio's sup sits on it (not looked for on a
    ``huge`` law: its ``phi'`` is too large to evaluate symbolically), the derived bound and its soundness checks."""
    if dist is None:
        raise SpecError("a base needs every parameter of the law bound to a value (e.g. pgf(expr=..., mu=3))")
    polygon = selection_bound(dist, base, "polygon")
    best = selection_bound(dist, base)
    e1 = sympy.Rational(repr(float(cast(float, polygon.details["eps1"]))))
    d1 = sympy.Rational(repr(float(base.delta(float(e1)))))
    corners: dict[str, Any]
    if size.huge:
        skipped["sup_location"] = _skip("sup_location", size.huge_reason())
        where, argument, kind, corners = ("unknown", "law too large to locate the sup on the polygon (see skipped)",
                                          "none", {})
    else:
        where, argument, kind, corners = sup_location(dphi, e1, d1)
    checks: list[Check] = []
    eps_hat = theorem = None
    log_r = None
    if where in ("vertex", "start", "end"):
        q, qp = corners[where]
        log_r = sympy.log(dphi.subs(z, q)) - sympy.log(dphi.subs(z, qp))
        value = sympy.N(log_r, DPS)
        cert = cast(SupCertificate, polygon_ratio_at(dist, base, float(e1)).certificate)
        if not (value.is_real and value.is_finite):  # phi'(q') = 0 at that corner (fixed K, q' = 0): no finite sup
            checks.append(Check(f"the ratio is unbounded at the polygon's {where} (eps1 = {float(e1):g}): phi'(q') = "
                                "0 there, so the polygon bound is vacuous, and the engine's certified sup is infinite",
                                kind, 0.0, cert.upper == float("inf")))
            argument += "; the ratio is infinite there (phi'(q') = 0): the polygon bound is vacuous"
            log_r = None
            where = f"{where} (unbounded)"
    if log_r is not None:
        # the engine's grid attains cert.lower and certifies cert.upper: the claimed sup must lie between them
        # (1e-12: float64 log phi' on the grid); how far the certificate's upper end is above it is reported.
        below_grid = float(value) - cert.lower
        checks.append(Check(f"sup of the ratio over the polygon (eps1 = {float(e1):g}) = its {where} value: no point "
                            "of the engine's certificate grid is above it and its certified sup is not below it",
                            kind, cert.upper - float(value),
                            below_grid >= -1e-12 and cert.upper >= float(value) - 1e-12))
        eps_hat = Expression(EPS - log_r, r"\varepsilon - " + (sympy.latex(log_r) if sympy.count_ops(log_r) < 60 else
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
