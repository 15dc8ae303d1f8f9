"""Recognition of the known families (point mass, truncated negative binomial, binomial, Poisson) from a PGF
however it was typed, so that every law gets the closed forms the papers give for its family."""

from __future__ import annotations

import mpmath
import sympy
from sympy.core.evalf import PrecisionExhausted

from symsel.distributions.core import Distribution, Family
from symsel.distributions.expressions import _diff, _monomials, _node_count, z
from symsel.errors import SymselError

#: non-polynomial PGFs with more expression nodes than this are not recognized (returns ``None``).
_RECOGNIZE_MAX_NODES = 300
#: at most this many nodes go through ``sympy.simplify`` for the symbolic confirmation.
_SIMPLIFY_CONFIRM_MAX_NODES = 120
_RECOGNIZE_DPS = 50
_RECOGNIZE_POINTS = ("0", "0.0625", "0.1875", "0.3", "0.41", "0.5", "0.61", "0.7", "0.83", "0.9", "0.97", "1")
_RECOGNIZE_ERRORS = (ArithmeticError, ValueError, TypeError, AttributeError, SymselError, PrecisionExhausted)


def family_pgf(family: Family) -> sympy.Expr:
    """The PGF of a :class:`Family` in ``z`` with its exact parameter values."""
    par = family.params
    if family.name == "point":
        return z ** par["k"]
    if family.name == "poisson":
        return sympy.exp(par["mu"] * (z - 1))
    if family.name == "binomial":
        return (1 - par["p"] + par["p"] * z) ** par["n"]
    eta, gamma = par["eta"], par["gamma"]
    if eta == 0:
        return sympy.log(1 - (1 - gamma) * z) / sympy.log(gamma)
    return ((1 - (1 - gamma) * z) ** (-eta) - 1) / (gamma ** (-eta) - 1)


def recognize_family(dist: Distribution) -> Family | None:
    """The :class:`Family` whose PGF equals ``dist.pgf``, else ``None``.

    Polynomials (``sum_k c_k z^k`` or ``(a + b z)^n``) are matched exactly against the point mass
    and the binomial (``p`` from the two top coefficients, then every coefficient compared as an
    exact number). Other PGFs are candidates for Poisson and the truncated negative binomial, whose
    ``phi'/phi''`` is affine in ``z`` (``1/mu``; ``(1 - (1-gamma) z)/((eta+1)(1-gamma))``): its
    values at ``z = 1/4, 3/4`` (50 digits) give the parameters, which are rounded to nearby
    rationals; the candidate must then agree with ``phi`` at twelve points of [0, 1] to 1e-40
    and ``sympy.simplify`` must reduce the difference to 0. The work is bounded by the size of
    the expression (larger ones give ``None``), and ``None`` is always a safe answer: the generic
    bounds apply to every law.
    """
    pgf = dist.pgf
    if pgf.free_symbols - {z}:
        return None
    try:
        if _node_count(pgf, _RECOGNIZE_MAX_NODES) > _RECOGNIZE_MAX_NODES:
            if dist.support_max is None and not pgf.is_Add:
                return None
            coeffs = _monomials(pgf)
            return None if coeffs is None else _recognize_polynomial(coeffs)
        if dist.support_max is not None or pgf.is_polynomial(z):
            return _recognize_finite(pgf)
        return _recognize_analytic(dist)
    except _RECOGNIZE_ERRORS:
        return None


def _recognize_finite(pgf: sympy.Expr) -> Family | None:
    if pgf.is_Pow and pgf.exp.is_Integer and pgf.exp >= 1:
        base = _monomials(pgf.base)
        if base is not None and set(base) <= {0, 1} and 1 in base:
            a, b, n = base.get(0, sympy.Integer(0)), base[1], int(pgf.exp)
            if (a + b - 1).is_zero:
                if b == 1:
                    return Family("point", {"k": sympy.Integer(n)})
                return Family("binomial", {"n": sympy.Integer(n), "p": b})
            return None
    coeffs = _monomials(pgf)
    if coeffs is None:
        # a small polynomial written otherwise (a product, a mixture of powers): expand it when its
        # degree is small.
        if max((int(p.exp) for p in pgf.atoms(sympy.Pow) if p.exp.is_Integer), default=1) > 200:
            return None
        coeffs = _monomials(sympy.expand(pgf))
        if coeffs is None:
            return None
    return _recognize_polynomial(coeffs)


def _recognize_polynomial(coeffs: dict[int, sympy.Expr]) -> Family | None:
    """Point mass or binomial, decided by comparing every coefficient exactly."""
    if len(coeffs) == 1:
        ((j, c),) = coeffs.items()
        return Family("point", {"k": sympy.Integer(j)}) if j >= 1 and c == 1 else None
    n = max(coeffs)
    if set(coeffs) != set(range(n + 1)):
        return None
    top, below = coeffs[n], coeffs[n - 1]
    p = n * top / (below + n * top)  # c_{n-1}/c_n = n (1-p)/p
    q = 1 - p
    if not (p.is_positive and q.is_positive):
        return None
    if not (coeffs[0] - q**n).is_zero:
        return None
    ratio = p / q
    term = q**n
    for j in range(n + 1):
        if not (coeffs[j] - term).is_zero:
            return None
        term = term * (n - j) / (j + 1) * ratio
    return Family("binomial", {"n": sympy.Integer(n), "p": p})


def _exactify(value: mpmath.mpf) -> sympy.Expr:
    """A rational with denominator <= 1e12 within 1e-40 (relative) of ``value``, else a 50-digit Float."""
    from fractions import Fraction

    guess = Fraction(mpmath.nstr(value, _RECOGNIZE_DPS + 10)).limit_denominator(10**12)
    if abs(value - mpmath.mpf(guess.numerator) / guess.denominator) <= mpmath.mpf("1e-40") * max(1, abs(value)):
        return sympy.Rational(guess.numerator, guess.denominator)
    return sympy.Float(value, _RECOGNIZE_DPS)


def _recognize_analytic(dist: Distribution) -> Family | None:
    dps = _RECOGNIZE_DPS + 20
    candidates = []
    with mpmath.workdps(dps):
        mean = dist.mean_mp(dps)
        if mpmath.isfinite(mean) and mean > 0:
            candidates.append(Family("poisson", {"mu": _exactify(mean)}))
        d2 = sympy.lambdify([z], _diff(dist.dpgf), "mpmath")
        x1, x2 = mpmath.mpf(1) / 4, mpmath.mpf(3) / 4
        psi1, psi2 = dist.dphi_mp(x1, dps) / d2(x1), dist.dphi_mp(x2, dps) / d2(x2)
        slope = (psi2 - psi1) / (x2 - x1)
        intercept = psi1 - slope * x1
        if slope < 0 and intercept > 0:
            s, c = -1 / slope, -slope / intercept
            if s > 0 and 0 < c < 1:
                candidates.append(Family("tnb", {"eta": _exactify(s - 1), "gamma": _exactify(1 - c)}))
    for family in candidates:
        template = family_pgf(family)
        if _agree_numerically(dist, template) and _agree_symbolically(dist.pgf, template):
            return family
    return None


def _agree_numerically(dist: Distribution, template: sympy.Expr) -> bool:
    fn = sympy.lambdify([z], template, "mpmath")
    with mpmath.workdps(_RECOGNIZE_DPS + 10):
        for x in _RECOGNIZE_POINTS:
            value = dist.phi_mp(mpmath.mpf(x), _RECOGNIZE_DPS + 10)
            if not abs(value - fn(mpmath.mpf(x))) <= mpmath.mpf("1e-40"):
                return False
    return True


def _agree_symbolically(expr: sympy.Expr, template: sympy.Expr) -> bool:
    difference = expr - template
    if difference == 0 or sympy.expand(difference) == 0:
        return True
    if _node_count(difference, _SIMPLIFY_CONFIRM_MAX_NODES) > _SIMPLIFY_CONFIRM_MAX_NODES:
        return False
    return sympy.simplify(difference) == 0
