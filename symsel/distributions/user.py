"""Laws given by the user as a PGF or a pmf formula, and the checks that such an expression is the PGF of a law
on ``{0, 1, ...}``."""

from __future__ import annotations

from collections.abc import Mapping

import mpmath
import sympy

from symsel.distributions.core import MAX_MEAN, Distribution
from symsel.distributions.expressions import _monomials, _short, k, z
from symsel.distributions.params import Number, _check, exact_number
from symsel.errors import ParameterError, SymselError

_SERIES_TERMS_CHECKED = 16

def from_pgf(expr: sympy.Expr, params: Mapping[str, Number] | None = None, label: str | None = None) -> Distribution:
    """A user-given PGF expression in ``z`` with named parameters; validated by
    :func:`validate_pgf` (``phi(1) = 1``, defined on [0, 1], non-negative leading coefficients)."""
    where = "pgf"
    values, expr = _bind_params(expr, params or {}, where)
    dist = Distribution("pgf", expr, values, label=label)
    validate_pgf(dist)
    return dist


def from_pmf(
    expr: sympy.Expr,
    params: Mapping[str, Number] | None = None,
    k_min: int = 0,
    k_max: int | None = None,
    label: str | None = None,
) -> Distribution:
    """A user-given pmf expression in ``k`` (on ``k_min..k_max``, or ``k_min..inf`` when SymPy can
    sum the series in closed form); the PGF is ``sum_k pmf(k) z^k``."""
    where = "pmf"
    values, expr = _bind_params(expr, params or {}, where, extra=("k",))
    expr = expr.subs(sympy.Symbol("k"), k)
    lo = int(exact_number(k_min, "k_min", where))
    _check(lo >= 0, "k_min", k_min, "k_min >= 0", where)
    if k_max is None:
        total = sympy.summation(expr.subs(values) * z**k, (k, lo, sympy.oo))
        # SymPy guards the closed form with its convergence condition (|z| < radius, radius > 1
        # for a pmf summing to 1); on [0, 1] the first branch is the one that applies.
        total = total.replace(lambda e: isinstance(e, sympy.Piecewise), lambda e: e.args[0][0])
        if total.has(sympy.Sum):
            raise ParameterError("k_max", None, "a finite k_max (SymPy found no closed form for the series)", where)
        pgf, hi, vals = total, None, {}
    else:
        hi = int(exact_number(k_max, "k_max", where))
        _check(lo <= hi <= 5000, "k_max", k_max, f"{lo} <= k_max <= 5000", where)
        pgf = sympy.Add(*[expr.subs(k, i) * z**i for i in range(lo, hi + 1)])
        vals = values
    dist = Distribution(
        "pmf", pgf, vals, expr if k_max is not None else expr.subs(values), support_min=lo, support_max=hi, label=label
    )
    validate_pgf(dist, pmf=expr.subs(values) if k_max is None else None)
    return dist


def _bind_params(
    expr: sympy.Expr, params: Mapping[str, Number], where: str, extra: tuple[str, ...] = ()
) -> tuple[dict, sympy.Expr]:
    allowed = {"z", *extra}
    free = {str(s) for s in expr.free_symbols}
    missing = sorted(free - allowed - set(params))
    if missing:
        raise ParameterError(
            missing[0], None, f"a value for every symbol of the expression ({', '.join(missing)})", where
        )
    unused = sorted(set(params) - free)
    if unused:
        raise ParameterError(unused[0], params[unused[0]], "only symbols that appear in the expression", where)
    values: dict[sympy.Symbol, sympy.Expr] = {}
    renames = {}
    for name, value in params.items():
        sym = sympy.Symbol(name, real=True)
        renames[sympy.Symbol(name)] = sym
        values[sym] = exact_number(value, name, where)
    renames.update({s: z for s in expr.free_symbols if str(s) == "z"})
    return values, expr.xreplace(renames)


#: tolerance of ``phi(1) = 1`` and of ``0 <= phi <= 1`` (evaluated at 40 digits), as an mpmath number:
#: ``1 + 1e-25`` is exactly 1.0 in float64.
_PGF_TOLERANCE = "1e-25"
#: for a pmf with unbounded support, this many masses from ``k_min`` are checked to be non-negative.
_PMF_MASSES_CHECKED = 1000


def validate_pgf(dist: Distribution, pmf: sympy.Expr | None = None) -> None:
    """Check that ``dist.pgf`` is a PGF of a law on ``{0, 1, ...}``.

    * a polynomial ``sum_k c_k z^k`` (every finite ``pmf``/``truncated`` law, and user polynomials):
      every coefficient is a real number ``>= 0`` and they sum to 1 (exactly when SymPy can decide
      it, else to 25 digits);
    * otherwise: finite and real on [0, 1], ``0 <= phi <= 1`` there and ``phi(1) = 1`` to 25
      digits, the first 16 Taylor coefficients non-negative and, when the pmf formula ``pmf`` is
      given (unbounded support), its first 1000 masses non-negative;
    * a finite mean ``phi'(1)``.

    Raises :class:`ParameterError` (one line, the expression shortened) otherwise.
    """
    where = dist.name
    shown = _short(dist.pgf)
    coeffs = _monomials(dist.pgf)
    with mpmath.workdps(40):
        tol = mpmath.mpf(_PGF_TOLERANCE)
        if coeffs is not None:
            _check_masses(coeffs, shown, where)
        for x in (0, 0.25, 0.5, 0.75, 0.999, 1):
            try:
                value = dist.phi_mp(x, 40)
            except (ZeroDivisionError, ValueError, TypeError, OverflowError) as exc:
                raise ParameterError(
                    "expr", shown, f"a PGF defined on [0, 1] (fails at z={x}: {_short(exc)})", where
                ) from None
            if not isinstance(value, mpmath.mpf) or not mpmath.isfinite(value):
                raise ParameterError("expr", shown, f"a PGF real and finite on [0, 1] (phi({x}) = {value})", where)
            if value < -tol or value > 1 + tol:
                raise ParameterError(
                    "expr", shown, f"a PGF with 0 <= phi(z) <= 1 on [0, 1] (phi({x}) = {mpmath.nstr(value, 30)})", where
                )
        one = dist.phi_mp(1, 40)
        if abs(one - 1) > tol:
            raise ParameterError("expr", shown, f"a PGF with phi(1) = 1 (it is {mpmath.nstr(one, 30)})", where)
    if coeffs is None and not _nonnegative_polynomial_product(dist.pgf):
        _check_series(dist, shown, where)
        if pmf is not None:
            _check_pmf_formula(pmf, dist.support_min, shown, where)
    try:
        m = dist.mean
    except (TypeError, ValueError, ZeroDivisionError, SymselError) as exc:
        raise ParameterError("expr", shown, f"a PGF with a finite mean ({_short(exc)})", where) from None
    if not 0 <= m < MAX_MEAN:
        raise ParameterError("expr", shown, f"a PGF with a finite mean below {MAX_MEAN:g} (phi'(1) = {m})", where)


def _nonnegative_polynomial_product(expr: sympy.Expr) -> bool:
    """``expr`` is a product of positive numbers and integer powers ``p(z)^n`` (``n >= 1``) of polynomials with
    non-negative coefficients, so its own coefficients are non-negative without expanding it (a series of
    ``(z/2 + 1/2)^1000000`` did not finish)."""
    factors = expr.args if expr.is_Mul else (expr,)
    for factor in factors:
        base, exponent = (factor.base, factor.exp) if factor.is_Pow else (factor, sympy.Integer(1))
        if not (exponent.is_Integer and exponent >= 1):
            return False
        if base.is_number:
            if not base.is_positive:
                return False
            continue
        coeffs = _monomials(base)
        if coeffs is None or not all(c.is_nonnegative for c in coeffs.values()):
            return False
    return True


def _check_masses(coeffs: Mapping[int, sympy.Expr], shown: str, where: str) -> None:
    """Every coefficient of a polynomial PGF is a real number >= 0, and they sum to 1."""
    for i in sorted(coeffs):
        c = coeffs[i]
        value = complex(sympy.N(c, 30))
        if c.is_negative or c.is_extended_real is False or abs(value.imag) > 1e-25 or value.real < -1e-25:
            raise ParameterError(
                "expr", shown, f"a PGF with non-negative coefficients (P[K={i}] = {_short(c, 30)})", where
            )
    total = sympy.Add(*coeffs.values())
    exact = (total - 1).is_zero
    if exact is False or (exact is None and abs(complex(sympy.N(total - 1, 40))) > float(_PGF_TOLERANCE)):
        raise ParameterError(
            "expr", shown, f"probabilities summing to 1 (they sum to {sympy.N(total, 20)})", where
        )


def _check_series(dist: Distribution, shown: str, where: str) -> None:
    terms = _SERIES_TERMS_CHECKED if dist.support_max is None else min(_SERIES_TERMS_CHECKED, dist.support_max + 1)
    for i, c in enumerate(dist._series_coefficients(terms)):
        cval = complex(sympy.N(c, 30))
        if abs(cval.imag) > 1e-25 or cval.real < -1e-25:
            raise ParameterError(
                "expr", shown, f"a PGF with non-negative coefficients (P[K={i}] = {cval.real:.3g})", where
            )
    _check_absolutely_monotone(dist, shown, where)


#: points of [0, 1) where phi' and phi'' of a series PGF are checked to be >= 0.
_MONOTONE_GRID = 64


def _check_absolutely_monotone(dist: Distribution, shown: str, where: str) -> None:
    """Beyond the Taylor coefficients checked exactly: ``phi'`` and ``phi''`` non-negative at 40 digits on a grid
    of [0, 1) (a PGF is absolutely monotone there, Bernstein's theorem). The bounds use exactly these two
    facts (``phi'`` non-negative and non-decreasing); a negative far coefficient that leaves them intact is not
    certified absent, and the error says which derivative failed where."""
    second = sympy.diff(dist.dpgf, z)
    try:
        first_fn = sympy.lambdify([z], dist.dpgf, "mpmath")
        second_fn = sympy.lambdify([z], second, "mpmath")
    except NotImplementedError:  # e.g. abs(z): SymPy's derivative of abs has no numeric form
        raise ParameterError("expr", shown, "a PGF whose derivatives phi', phi'' can be evaluated (write it "
                             "without abs, e.g. z for abs(z))", where) from None
    tol = mpmath.mpf("1e-25")
    with mpmath.workdps(40):
        for j in range(_MONOTONE_GRID):
            x = mpmath.mpf(j) / _MONOTONE_GRID
            for order, fn in ((1, first_fn), (2, second_fn)):
                try:
                    value = fn(x)
                except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                    continue  # evaluated at a removable point: the checks above already passed
                if isinstance(value, mpmath.mpc):
                    value = value.real if abs(value.imag) <= tol else mpmath.mpf(-1)
                if value < -tol:
                    derivative = "phi'" if order == 1 else "phi''"
                    raise ParameterError("expr", shown, f"a PGF, absolutely monotone on [0, 1) ({derivative}"
                                         f"({mpmath.nstr(x, 4)}) = {mpmath.nstr(value, 3)} < 0)", where)


def _check_pmf_formula(pmf: sympy.Expr, k_min: int, shown: str, where: str) -> None:
    """The first :data:`_PMF_MASSES_CHECKED` masses of a pmf formula are real and non-negative."""
    fn = sympy.lambdify([k], pmf, "mpmath")
    with mpmath.workdps(30):
        for i in range(k_min, k_min + _PMF_MASSES_CHECKED):
            try:
                value = fn(i)
            except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                continue  # the PGF checks above already passed; a formula that fails far out is not an error
            if isinstance(value, mpmath.mpc):
                if abs(value.imag) > mpmath.mpf("1e-25"):
                    raise ParameterError("expr", shown, f"a pmf with real masses (P[K={i}] = {value})", where)
                value = value.real
            if value < -mpmath.mpf("1e-25"):
                raise ParameterError(
                    "expr", shown, f"a pmf with non-negative masses (P[K={i}] = {mpmath.nstr(value, 3)})", where
                )
