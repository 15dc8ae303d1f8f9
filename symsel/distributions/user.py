"""Laws given by the user as a PGF or a pmf formula, and the checks that such an expression is the PGF of a law
on ``{0, 1, ...}``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import mpmath
import sympy

from symsel.distributions.core import MAX_MEAN, Distribution
from symsel.distributions.expressions import (
    _SIMPLIFY_MAX_OPS,
    _at_one,
    _coefficient_and_power,
    _monomials,
    _short,
    k,
    z,
)
from symsel.distributions.params import Number, _check, exact_number
from symsel.errors import ParameterError, SymselError
from symsel.formula import check_expression, parse_expression
from symsel.memory import MIB, BoundedCache

_SERIES_TERMS_CHECKED = 16

def from_pgf(expr: sympy.Expr | str, params: Mapping[str, Number] | None = None,
             label: str | None = None) -> Distribution:
    """A user-given PGF expression in ``z`` (a SymPy expression, or a formula string read by
    :func:`symsel.spec.parse_expression`) with named parameters; at most
    :data:`~symsel.spec.MAX_EXPRESSION_NODES` nodes; validated by :func:`validate_pgf` (``phi(1) = 1``, defined on
    [0, 1], non-negative leading coefficients)."""
    where = "pgf"
    if isinstance(expr, str):
        expr = parse_expression(expr, ("z",), tuple(params or {}))
    check_expression(expr, ("z",), where)
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
    if isinstance(expr, str):
        expr = parse_expression(expr, ("k",), tuple(params or {}))
    check_expression(expr, ("k",), where)
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
        pgf = sympy.Add(*[expr.xreplace({k: sympy.Integer(i)}) * z**i for i in range(lo, hi + 1)])
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


class _Shown:
    """The PGF as an error message shows it (:func:`_short`), rendered on first use: printing a 5000-term polynomial
    costs seconds, and a valid law never needs it."""

    def __init__(self, expr: sympy.Expr):
        self._expr: sympy.Expr | None = expr
        self._text = ""

    def __str__(self) -> str:
        if self._expr is not None:
            self._text, self._expr = _short(self._expr), None
        return self._text


#: the laws :func:`validate_pgf` accepted in this process, by everything the verdict depends on (the PGF with its
#: values, the pmf formula, the support): a notebook, a planner or a test suite parses one user law many times, and
#: the checks (a Taylor series, 40-digit grids) cost a tenth of a second to seconds. A refusal is never stored, nor
#: a PGF of more than :data:`_ACCEPTED_MAX_TERMS` top-level terms (a 5000-term pmf would keep megabytes alive).
#: At most 256 laws and 16 MiB (:class:`~symsel.memory.BoundedCache`).
_ACCEPTED = BoundedCache("symsel.distributions.user._ACCEPTED", max_entries=256, max_bytes=16 * MIB)
_ACCEPTED_MAX_TERMS = 256


def validate_pgf(dist: Distribution, pmf: sympy.Expr | None = None) -> None:
    """Check that ``dist.pgf`` is a PGF of a law on ``{0, 1, ...}``.

    * a polynomial ``sum_k c_k z^k`` (every finite ``pmf``/``truncated`` law, and user polynomials):
      every coefficient is a real number ``>= 0`` and they sum to 1 (exactly when SymPy can decide
      it, else to 25 digits);
    * otherwise: finite and real on [0, 1], ``0 <= phi <= 1`` there and ``phi(1) = 1`` to 25
      digits, the first 16 Taylor coefficients non-negative and, when the pmf formula ``pmf`` is
      given (unbounded support), its first 1000 masses non-negative;
    * a finite mean ``phi'(1)``.

    Raises :class:`ParameterError` (one line, the expression shortened) otherwise. A law accepted before (the same
    PGF, pmf formula and support; a PGF of at most 256 top-level terms) is accepted again without the checks.
    """
    if len(dist.pgf.args) > _ACCEPTED_MAX_TERMS:
        _check_pgf(dist, pmf)
        return
    key = (dist.name, dist.pgf, pmf, dist.support_min, dist.support_max)
    if _ACCEPTED.get(key) is not None:
        return
    _check_pgf(dist, pmf)
    _ACCEPTED.put(key, True)


def _check_pgf(dist: Distribution, pmf: sympy.Expr | None) -> None:
    """The checks of :func:`validate_pgf`."""
    where = dist.name
    shown = _Shown(dist.pgf)
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
                    "expr", str(shown), f"a PGF defined on [0, 1] (fails at z={x}: {_short(exc)})", where
                ) from None
            if not isinstance(value, mpmath.mpf) or not mpmath.isfinite(value):
                raise ParameterError("expr", str(shown), f"a PGF real and finite on [0, 1] (phi({x}) = {value})", where)
            if value < -tol or value > 1 + tol:
                allowed = f"a PGF with 0 <= phi(z) <= 1 on [0, 1] (phi({x}) = {mpmath.nstr(value, 30)})"
                raise ParameterError("expr", str(shown), allowed, where)
        one = dist.phi_mp(1, 40)
        if abs(one - 1) > tol:
            raise ParameterError("expr", str(shown), f"a PGF with phi(1) = 1 (it is {mpmath.nstr(one, 30)})", where)
    if coeffs is None and not _nonnegative_polynomial_product(dist.pgf):
        _check_series(dist, shown, where)
        if pmf is not None:
            _check_pmf_formula(pmf, dist.support_min, shown, where)
        _prove_pgf(dist, shown, where, pmf)
    elif coeffs is None:
        _check_sum_is_one(_at_one(dist.pgf), shown, where)
    try:
        m = dist.mean
    except (TypeError, ValueError, ZeroDivisionError, SymselError) as exc:
        raise ParameterError("expr", str(shown), f"a PGF with a finite mean ({_short(exc)})", where) from None
    if not 0 <= m < MAX_MEAN:
        raise ParameterError("expr", str(shown), f"a PGF with a finite mean below {MAX_MEAN:g} (phi'(1) = {m})", where)


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


def _check_masses(coeffs: Mapping[int, sympy.Expr], shown: _Shown, where: str) -> None:
    """Every coefficient of a polynomial PGF is a real number >= 0, and they sum to 1."""
    for i in sorted(coeffs):
        c = coeffs[i]
        value = complex(sympy.N(c, 30))
        if c.is_negative or c.is_extended_real is False or abs(value.imag) > 1e-25 or value.real < -1e-25:
            raise ParameterError(
                "expr", str(shown), f"a PGF with non-negative coefficients (P[K={i}] = {_short(c, 30)})", where
            )
    total = sympy.Add(*coeffs.values())
    exact = (total - 1).is_zero  # else decided at 50 digits (1 + 1e-30 is not 1)
    if exact is False or (exact is None and abs(complex(sympy.N(total - 1, 60, maxn=2000))) > 1e-50):
        raise ParameterError(
            "expr", str(shown), f"probabilities summing to 1 (they sum to {sympy.N(total, 20)})", where
        )


def _check_series(dist: Distribution, shown: _Shown, where: str) -> None:
    terms = _SERIES_TERMS_CHECKED if dist.support_max is None else min(_SERIES_TERMS_CHECKED, dist.support_max + 1)
    for i, c in enumerate(dist._series_coefficients(terms)):
        cval = complex(sympy.N(c, 30))
        if abs(cval.imag) > 1e-25 or cval.real < -1e-25:
            raise ParameterError(
                "expr", str(shown), f"a PGF with non-negative coefficients (P[K={i}] = {cval.real:.3g})", where
            )
    _check_absolutely_monotone(dist, shown, where)


#: points of [0, 1) where phi' and phi'' of a series PGF are checked to be >= 0.
_MONOTONE_GRID = 64


def _check_absolutely_monotone(dist: Distribution, shown: _Shown, where: str) -> None:
    """Beyond the Taylor coefficients checked exactly: ``phi'`` and ``phi''`` non-negative at 40 digits on a grid
    of [0, 1) (a PGF is absolutely monotone there, Bernstein's theorem). The bounds use exactly these two
    facts (``phi'`` non-negative and non-decreasing); a negative far coefficient that leaves them intact is not
    certified absent, and the error says which derivative failed where."""
    second = sympy.diff(dist.dpgf, z)
    try:
        first_fn = sympy.lambdify([z], dist.dpgf, "mpmath")
        second_fn = sympy.lambdify([z], second, "mpmath")
    except NotImplementedError:  # e.g. abs(z): SymPy's derivative of abs has no numeric form
        raise ParameterError("expr", str(shown), "a PGF whose derivatives phi', phi'' can be evaluated (write it "
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
                    raise ParameterError("expr", str(shown), f"a PGF, absolutely monotone on [0, 1) ({derivative}"
                                         f"({mpmath.nstr(x, 4)}) = {mpmath.nstr(value, 3)} < 0)", where)


def _check_pmf_formula(pmf: sympy.Expr, k_min: int, shown: _Shown, where: str) -> None:
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
                    raise ParameterError("expr", str(shown), f"a pmf with real masses (P[K={i}] = {value})", where)
                value = value.real
            if value < -mpmath.mpf("1e-25"):
                raise ParameterError(
                    "expr", str(shown), f"a pmf with non-negative masses (P[K={i}] = {mpmath.nstr(value, 3)})", where
                )


# ------------------------------------------------------------------ the prover of non-negative coefficients
#: the coefficients of a series PGF are certified one by one (interval arithmetic, :func:`_interval_taylor`) up to
#: ``z^16`` and up to the last negative coefficient of its polynomial part, which may sit at most at this degree.
MAX_CERTIFIED_DEGREE = 1000
#: decimal digits of the interval arithmetic, tried in turn while a coefficient's sign stays undecided.
_INTERVAL_DPS = (50, 200)
#: an undecided coefficient up to this degree is then computed exactly by SymPy.
_EXACT_FALLBACK_DEGREE = 24
#: the polynomial part is split off sums of at most this many terms (products of a number and a sum distributed).
_SPLIT_MAX_TERMS = 20_000


class _UnprovedError(Exception):
    """The prover's reason for giving up on a subexpression (turned into a :class:`ParameterError`)."""


@dataclass(frozen=True)
class _Series:
    """What :func:`_prove` established about a function ``f`` of ``z``: its Taylor series at 0 converges absolutely
    on the closed unit disk (so it equals ``f`` on [0, 1], by Abel's theorem at 1), and every coefficient of
    ``z^k``, ``k >= 1``, has the sign ``sign`` (+1: all >= 0; -1: all <= 0; 0: ``f`` is the constant ``c0``).
    ``c0 = f(0)`` and ``v1 = f(1)`` are exact SymPy numbers."""

    sign: int
    c0: sympy.Expr
    v1: sympy.Expr

    def signed(self) -> int | None:
        """+1 when every coefficient is >= 0, -1 when every one is <= 0 (constant included), else None."""
        s0 = _sign(self.c0)
        if self.sign == 0:
            return s0 if s0 else 1
        return self.sign if s0 in (0, self.sign) else None


def _sign(x: sympy.Expr) -> int:
    """The sign of an exact real number, as SymPy decides it (its numeric evaluation certifies the digits it
    uses); :class:`_UnprovedError` when it cannot."""
    if x.is_zero:
        return 0
    if x.is_positive:
        return 1
    if x.is_negative:
        return -1
    raise _UnprovedError(f"the sign of {_short(x)} could not be decided")


def _prove(expr: sympy.Expr) -> _Series:
    """A proof that ``expr`` is a power series in ``z`` with absolutely convergent coefficients on the closed unit
    disk whose non-constant coefficients all have one sign, built over the syntax tree:

    * real numbers; ``z``; sums of terms whose non-constant coefficients share a sign; a number times a term;
      products and positive integer powers of terms whose coefficients (constant included) share a sign;
    * ``exp(f)`` with ``f``'s non-constant coefficients >= 0 (``exp(c + g) = e^c exp(g)``);
    * ``f^(-a)``, ``a > 0``, with ``f = c (1 - u)``, ``c = f(0) > 0`` (or ``c < 0`` and ``a`` an integer), ``u``'s
      coefficients >= 0 and ``u(1) < 1``: ``(1 - u)^(-a) = sum_n binom(a + n - 1, n) u^n`` (1/(1 - g) included);
    * ``f^a``, ``0 < a < 1``, with such an ``f`` and ``u(1) <= 1``: ``(1 - u)^a = 1 - (terms >= 0)``;
    * ``log(f)`` with such an ``f`` and ``u(1) < 1``: ``log c + log(1 - u) = log c - sum_n u^n / n``;
    * ``cosh(f)``, ``sinh(f)`` with all of ``f``'s coefficients >= 0.

    Anything else raises :class:`_UnprovedError` naming the subexpression."""
    if not expr.has(z):
        if expr.is_extended_real is not True or expr.is_finite is not True:
            raise _UnprovedError(f"{_short(expr)} is not a finite real number")
        return _Series(0, expr, expr)
    if expr == z:
        return _Series(1, sympy.Integer(0), sympy.Integer(1))
    if expr.is_Add:
        parts = [_prove(a) for a in expr.args]
        signs = {p.sign for p in parts} - {0}
        if len(signs) > 1:
            raise _UnprovedError(f"{_short(expr)} adds series whose coefficients have opposite signs")
        return _Series(signs.pop() if signs else 0, sympy.Add(*[p.c0 for p in parts]),
                       sympy.Add(*[p.v1 for p in parts]))
    if expr.is_Mul:
        merged = _merge_exponentials(expr)
        if merged is not expr:
            return _prove(merged)
        parts = [_prove(a) for a in expr.args]
        factor = sympy.Mul(*[p.c0 for p in parts if p.sign == 0])
        series = [p for p in parts if p.sign != 0]
        c0 = sympy.Mul(*[p.c0 for p in parts])
        v1 = sympy.Mul(*[p.v1 for p in parts])
        if _sign(factor) == 0:
            return _Series(0, sympy.Integer(0), sympy.Integer(0))
        if len(series) == 1:
            return _Series(series[0].sign * _sign(factor), c0, v1)
        sign = _sign(factor)
        for p in series:
            s = p.signed()
            if s is None:
                raise _UnprovedError(f"{_short(expr)} multiplies a series whose coefficients change sign")
            sign *= s
        return _Series(sign, c0, v1)
    if expr.is_Pow:
        base, exponent = expr.args
        if exponent.has(z):
            if base.is_number and base.is_positive:  # b^f = exp(f log b)
                return _prove(sympy.exp(exponent * sympy.log(base), evaluate=False))
            raise _UnprovedError(f"{_short(expr)} has z in an exponent")
        p = _prove(base)
        if p.sign == 0:
            return _Series(0, p.c0**exponent, p.v1**exponent)
        if exponent.is_Integer and exponent > 0:
            s = p.signed()
            if s is None:
                raise _UnprovedError(f"{_short(expr)} raises a series whose coefficients change sign to a power")
            return _Series(s ** int(exponent), p.c0**exponent, p.v1**exponent)
        c = p.c0
        if _sign(c) == 0 or p.sign != -_sign(c):
            raise _UnprovedError(f"{_short(expr)} is not (c (1 - u))^a with c = f(0) != 0 and u's coefficients >= 0")
        at_one = _sign(p.v1 / c)  # 1 - u(1)
        if exponent.is_negative is True:
            if at_one <= 0:
                raise _UnprovedError(f"{_short(expr)}: u(1) < 1 is needed for (1 - u)^(-a) to converge at z = 1")
            if _sign(c) < 0 and not exponent.is_Integer:
                raise _UnprovedError(f"{_short(expr)} is a non-integer power of a negative number")
            power = c**exponent
            return _Series(_sign(power), power, p.v1**exponent)
        if exponent.is_positive is True and (exponent < 1) is sympy.true and _sign(c) > 0 and at_one >= 0:
            return _Series(-1, c**exponent, p.v1**exponent)
        raise _UnprovedError(f"{_short(expr)}: only integer powers, negative powers and powers between 0 and 1 "
                        "of c (1 - u) are proved")
    if isinstance(expr, sympy.exp):
        p = _prove(expr.args[0])
        if p.sign < 0:
            raise _UnprovedError(f"{_short(expr)}: the exponent's coefficients must be >= 0 beyond the constant")
        return _Series(1 if p.sign else 0, sympy.exp(p.c0), sympy.exp(p.v1))
    if isinstance(expr, sympy.cosh | sympy.sinh):  # cosh(c + g) = cosh c cosh g + sinh c sinh g, c >= 0
        p = _prove(expr.args[0])
        if p.signed() != 1 and p.sign != 0:
            raise _UnprovedError(f"{_short(expr)}: the argument's coefficients must all be >= 0")
        return _Series(p.sign, expr.func(p.c0), expr.func(p.v1))
    if isinstance(expr, sympy.log):
        p = _prove(expr.args[0])
        if p.sign == 0:
            return _Series(0, sympy.log(p.c0), sympy.log(p.v1))
        if not (p.sign < 0 and _sign(p.c0) > 0 and _sign(p.v1) > 0):
            raise _UnprovedError(f"{_short(expr)} is not log(c (1 - u)) with c > 0, u's coefficients >= 0 and u(1) < 1")
        return _Series(-1, sympy.log(p.c0), sympy.log(p.v1))
    raise _UnprovedError(f"{_short(expr)} is not among the forms proved (numbers, z, +, *, powers, exp, log, "
                         "cosh, sinh)")


def _merge_exponentials(expr: sympy.Mul) -> sympy.Expr:
    """``exp(a) exp(b) ... = exp(a + b + ...)`` for a product with several exponentials of ``z`` (SymPy keeps
    ``exp(1 - z) exp(2 z - 2)`` apart); ``expr`` itself otherwise."""
    exps = [f for f in expr.args if isinstance(f, sympy.exp) and f.has(z)]
    if len(exps) < 2:
        return expr
    rest = [f for f in expr.args if not (isinstance(f, sympy.exp) and f.has(z))]
    exponent = sympy.Add(*[f.args[0] for f in exps])
    return sympy.Mul(*rest, sympy.exp(exponent, evaluate=False), evaluate=False)


def _split_polynomial(expr: sympy.Expr) -> tuple[list[sympy.Expr], dict[int, sympy.Expr]]:
    """``expr`` as (series terms, ``{j: c_j}``): the terms ``c z^j`` (``c`` a number) of its sum form the
    polynomial part; a product of numbers, powers of ``z`` and one sum is distributed first."""
    series: list[sympy.Expr] = []
    poly: dict[int, sympy.Expr] = {}
    pending = list(sympy.Add.make_args(expr))
    while pending:
        if len(series) + len(poly) + len(pending) > _SPLIT_MAX_TERMS:
            return [expr], {}
        term = pending.pop()
        split = _coefficient_and_power(term)
        if split is not None and split[0].is_number:
            c, j = split
            poly[j] = poly.get(j, sympy.Integer(0)) + c
            continue
        if term.is_Mul:
            sums = [f for f in term.args if f.is_Add]
            rest = [f for f in term.args if not f.is_Add]
            if len(sums) == 1 and all(_coefficient_and_power(f) is not None for f in rest):
                outer = sympy.Mul(*rest)
                pending.extend(outer * a for a in sums[0].args)
                continue
        series.append(term)
    return series, poly


def _interval_taylor(expr: sympy.Expr, n: int) -> list:
    """The Taylor coefficients of ``expr`` at 0 up to ``z^(n-1)`` as mpmath intervals (``mpmath.iv``, at its current
    precision), over the forms :func:`_prove` accepts: exact rationals exactly, other numbers from SymPy's evaluation
    widened by 1e-(dps - 5) relative; ``exp``, ``log`` and real powers by their recurrences (J. C. P. Miller's for
    powers). Every operation encloses the exact value, so a coefficient whose interval lies in [0, inf) is >= 0."""
    iv = mpmath.iv
    zero = iv.mpf(0)

    number = _interval_number

    def mul(a: list, b: list) -> list:
        out = [zero] * n
        nz_b = [(j, y) for j, y in enumerate(b) if y != 0]
        for i, x in enumerate(a):
            if x == 0:
                continue
            for j, y in nz_b:
                if i + j >= n:
                    break
                out[i + j] += x * y
        return out

    def power(f: list, a: sympy.Expr) -> list:
        if a.is_Integer and a >= 0:
            result, square, e = [iv.mpf(1)] + [zero] * (n - 1), f, int(a)
            while e:
                if e & 1:
                    result = mul(result, square)
                e >>= 1
                if e:
                    square = mul(square, square)
            return result
        aa = number(a)
        g = [f[0] ** aa] + [zero] * (n - 1)
        for m in range(1, n):
            total = zero
            for j in range(1, m + 1):
                if f[j] != 0:
                    total += ((aa + 1) * j - m) * f[j] * g[m - j]
            g[m] = total / (m * f[0])
        return g

    def walk(e: sympy.Expr) -> list:
        if not e.has(z):
            return [number(e)] + [zero] * (n - 1)
        if e == z:
            return [zero, iv.mpf(1)] + [zero] * (n - 2) if n > 1 else [zero]
        if e.is_Add:
            out = [zero] * n
            for a in e.args:
                out = [x + y for x, y in zip(out, walk(a), strict=True)]
            return out
        if e.is_Mul:
            merged = _merge_exponentials(e)
            if merged is not e:
                return walk(merged)
            factors = [walk(a) for a in e.args]
            out = factors[0]
            for f in factors[1:]:
                out = mul(out, f)
            return out
        if e.is_Pow:
            base, exponent = e.args
            if exponent.has(z):
                return walk(sympy.exp(exponent * sympy.log(base), evaluate=False))
            if base == z and exponent.is_Integer and exponent >= 0:
                j = int(exponent)
                return [iv.mpf(1) if i == j else zero for i in range(n)]
            return power(walk(base), exponent)
        if isinstance(e, sympy.cosh | sympy.sinh):
            plus, minus = walk(sympy.exp(e.args[0])), walk(sympy.exp(-e.args[0]))
            sign = 1 if isinstance(e, sympy.cosh) else -1
            return [(x + sign * y) / 2 for x, y in zip(plus, minus, strict=True)]
        f = walk(e.args[0])
        g = [zero] * n
        if isinstance(e, sympy.exp):
            g[0] = iv.exp(f[0])
            for k in range(1, n):
                g[k] = sum((j * f[j] * g[k - j] for j in range(1, k + 1) if f[j] != 0), zero) / k
            return g
        if isinstance(e, sympy.log):
            g[0] = iv.log(f[0])
            for k in range(1, n):
                g[k] = (f[k] - sum((j * g[j] * f[k - j] for j in range(1, k) if f[k - j] != 0), zero) / k) / f[0]
            return g
        raise _UnprovedError(f"{_short(e)} has no interval series")  # not reached: _prove accepted the expression

    return walk(expr)


def _prove_pgf(dist: Distribution, shown: _Shown, where: str, pmf: sympy.Expr | None = None) -> None:
    """Refuse a series PGF unless every coefficient is proved >= 0 and ``phi(1) = 1``: :func:`_prove` on its series
    part (its coefficients beyond the constant >= 0), the coefficients up to ``z^16`` and up to the last negative
    coefficient of its polynomial part certified one by one, ``phi(1) = 1`` decided exactly (numerically at 50
    digits where SymPy cannot decide it). A pmf formula (unbounded support) proved >= 0 for every ``k >= k_min``
    by SymPy is a proof too."""
    series, poly = _split_polynomial(dist.pgf)
    try:
        info = _prove(sympy.Add(*series))
        if info.sign < 0:
            raise _UnprovedError("the coefficients of its series part are <= 0")
    except _UnprovedError as exc:
        if pmf is not None and _pmf_nonnegative(pmf, dist.support_min):
            _check_sum_is_one(_at_one(dist.pgf), shown, where)
            return
        raise ParameterError("expr", str(shown), f"a PGF symsel can prove has coefficients >= 0; this one could not be "
                             f"proved a PGF ({exc})", where) from None
    negative = [j for j, c in poly.items() if not c.is_nonnegative]
    top = max([_SERIES_TERMS_CHECKED, *negative])
    if top > MAX_CERTIFIED_DEGREE:
        raise ParameterError("expr", str(shown), "a PGF whose polynomial part has its negative coefficients at "
                             f"degrees <= {MAX_CERTIFIED_DEGREE} (z^{top} is beyond; it could not be proved a PGF)",
                             where)
    _certify_coefficients(dist, sympy.Add(*series), poly, top + 1, info, shown, where)
    _check_sum_is_one(info.v1 + sympy.Add(*poly.values()), shown, where)


def _certify_coefficients(dist: Distribution, series: sympy.Expr, poly: Mapping[int, sympy.Expr], n: int,
                          info: _Series, shown: _Shown, where: str) -> None:
    """Every coefficient of ``series + poly`` up to ``z^(n-1)`` is >= 0: ``P[K = 0]`` exactly, the others by
    interval arithmetic (then exactly by SymPy up to ``z^24`` while an interval straddles 0)."""
    try:
        p0 = _sign(info.c0 + poly.get(0, sympy.Integer(0)))
    except _UnprovedError as exc:
        raise ParameterError("expr", str(shown), f"a PGF with P[K=0] >= 0 provably ({exc})", where) from None
    if p0 < 0:
        raise ParameterError("expr", str(shown), f"a PGF with non-negative coefficients (P[K=0] = "
                             f"{_short(sympy.N(info.c0 + poly.get(0, 0), 3))})", where)
    undecided = list(range(1, n))
    saved = mpmath.iv.prec
    try:
        for dps in _INTERVAL_DPS:
            mpmath.iv.dps = dps
            coefficients = _interval_taylor(series, n)
            still = []
            for j in undecided:
                c = coefficients[j] + _interval_number(poly.get(j))
                if c.a >= 0:
                    continue
                if c.b < 0:
                    value = mpmath.mpf(c.mid)
                    raise ParameterError("expr", str(shown), f"a PGF with non-negative coefficients (P[K={j}] = "
                                         f"{mpmath.nstr(value, 3)})", where)
                still.append(j)
            undecided = still
            if not undecided:
                return
    finally:
        mpmath.iv.prec = saved
    for j in undecided:
        if j > _EXACT_FALLBACK_DEGREE:
            raise ParameterError("expr", str(shown), f"a PGF whose coefficients can be certified >= 0 (the sign of "
                                 f"P[K={j}] could not be decided; it could not be proved a PGF)", where)
        exact = dist._series_coefficients(j + 1)[j]
        try:
            sign = _sign(sympy.simplify(exact))
        except _UnprovedError as exc:
            raise ParameterError("expr", str(shown), f"a PGF whose coefficients can be certified >= 0 (P[K={j}]: {exc};"
                                 " it could not be proved a PGF)", where) from None
        if sign < 0:
            raise ParameterError("expr", str(shown), f"a PGF with non-negative coefficients (P[K={j}] = "
                                 f"{_short(sympy.N(exact, 3))})", where)


def _interval_number(c: sympy.Expr | None):
    """``c`` as an mpmath interval at the current ``iv`` precision (0 for ``None``)."""
    iv = mpmath.iv
    if c is None or c == 0:
        return iv.mpf(0)
    if c.is_Rational:
        return iv.mpf(int(c.p)) / int(c.q)
    with mpmath.workdps(iv.dps + 15):  # SymPy's digits at their own precision (mpf() would round to mp.prec)
        value = mpmath.mpf(sympy.N(c, iv.dps + 15))
        radius = abs(value) * mpmath.mpf(10) ** (5 - iv.dps)
        return iv.mpf([value - radius, value + radius])


def _check_sum_is_one(total: sympy.Expr, shown: _Shown, where: str) -> None:
    """``phi(1) = 1``: exactly where SymPy decides ``total - 1 = 0``, else to 50 digits."""
    gap = total - 1
    exact = gap.is_zero
    if exact is None and sympy.count_ops(gap) <= _SIMPLIFY_MAX_OPS:
        exact = sympy.simplify(gap).is_zero
    if exact is None:
        value = sympy.N(gap, 60, maxn=2000)
        exact = value.is_number and abs(complex(value)) <= 1e-50
    if not exact:
        raise ParameterError("expr", str(shown), f"a PGF with phi(1) = 1 (it is {sympy.N(total, 40)})", where)


def _pmf_nonnegative(pmf: sympy.Expr, k_min: int) -> bool:
    """SymPy proves ``pmf(k) >= 0`` for every integer ``k >= k_min``."""
    j = sympy.Symbol("j", integer=True, nonnegative=True)
    try:
        return sympy.simplify(pmf.subs(k, k_min + j)).is_nonnegative is True
    except (TypeError, ValueError, RecursionError):
        return False
