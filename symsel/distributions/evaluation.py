"""Numeric evaluation of a law's PGF ``phi`` and of ``phi'``, compiled once from the symbolic form.

Two flavours, both derived from :attr:`Distribution.pgf` (or, for laws that give one, the cancellation-free
``stable_form`` written with ``expm1``/``log1p``, whose parameters then stay arguments of the compiled function):

* float64, vectorized over numpy arrays (``phi``, ``dphi``, ``log_dphi``);
* mpmath at an explicitly requested number of decimal digits (``phi_mp``, ``dphi_mp``). The precision is set
  with ``mpmath.workdps`` around each call and never leaks out.

The compiled callables are cached on the instance (``functools.cached_property``) and by value
(:func:`_compiled`); :class:`EvaluationMixin` is mixed into :class:`~symsel.distributions.core.Distribution`
and reads its fields ``pgf``/``dpgf``, ``values``, ``stable_form`` and ``log_dpgf_form``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

import mpmath
import numpy as np
import sympy

from symsel.distributions.expressions import (
    _HORNER_MIN_TERMS,
    DEFAULT_DPS,
    _broadcast,
    _horner,
    _monomials,
    z,
)
from symsel.memory import MIB, bounded_cache


def expm1_mp(x: Any) -> Any:
    """``e^x - 1`` in mpmath, correct to the working precision: ``exp`` evaluated with ``10 - mag(x)`` extra bits
    before the subtraction (the bits the subtraction cancels, plus ten), ``x + x^2/2`` where ``|x| < 2^-prec``.
    mpmath's own ``expm1`` gets the same digits through ``sum_accurately`` (a loop of trial precisions) at about
    twice the cost; the stable forms of the geometric, logarithmic and truncated negative binomial laws call it at
    every ``phi`` value of an exact selection law (tests/distributions/test_evaluation_mp.py compares the two)."""
    if not isinstance(x, mpmath.mpf) or not mpmath.isfinite(x) or not x:
        return mpmath.expm1(x)
    size = mpmath.mag(x)
    if size < -mpmath.mp.prec:
        return x + x * x / 2
    with mpmath.extraprec(max(0, -size) + 10):
        value = mpmath.exp(x) - 1
    return +value


#: lambdify's namespace for the mpmath flavour: mpmath, with :func:`expm1_mp` for ``expm1``.
_MPMATH_MODULES = [{"expm1": expm1_mp}, "mpmath"]


@bounded_cache(max_entries=512, max_bytes=16 * MIB)
def _compiled(arguments: tuple[Any, ...], expr: Any, module: str) -> Callable:
    """``sympy.lambdify`` of ``expr`` in ``arguments``, cached on their values (SymPy expressions hash by structure):
    the same law built again, as a planner or a calibration does at every step, does not compile its PGF again."""
    return sympy.lambdify(list(arguments), expr, _MPMATH_MODULES if module == "mpmath" else module)


def _split_constants(expr: Any) -> tuple[Any, dict[Any, sympy.Dummy]]:
    """``expr`` with each largest ``z``-free compound subexpression replaced by a new symbol, and those
    subexpressions with their symbols. Nodes that contain ``z`` are rebuilt unevaluated, so the operations on the
    way to ``z`` are the ones ``expr`` itself prints."""
    constants: dict[Any, sympy.Dummy] = {}

    def walk(node: Any) -> Any:
        if z not in node.free_symbols:
            if node.is_Atom:
                return node
            if node.is_Pow and node.exp.is_negative:  # keep the division: ``a / c`` is not ``a * (1 / c)``
                return sympy.Pow(walk(node.base), node.exp, evaluate=False)
            if node not in constants:
                constants[node] = sympy.Dummy(f"c{len(constants)}")
            return constants[node]
        if node.is_Atom:
            return node
        return node.func(*(walk(arg) for arg in node.args), evaluate=False)

    return walk(expr), constants


class _ConstantsHoisted:
    """The mpmath flavour of a stable form ``f(z, *parameters)``: its ``z``-free parts (the truncated negative
    binomial's denominator ``expm1(-eta log gamma)``, ``gamma - 1``) computed once per working precision and
    parameter values instead of at every call, which makes an exact selection law of a geometric law about twice
    as fast. Each part is evaluated with the same operations at the same precision as inside ``f``, so the values
    are the same numbers (tests/distributions/test_evaluation_mp.py compares them with the plain compiled form)."""

    def __init__(self, parameters: tuple[Any, ...], expr: Any) -> None:
        body, constants = _split_constants(expr)
        self._body = sympy.lambdify([z, *parameters, *constants.values()], body, _MPMATH_MODULES)
        self._parts = sympy.lambdify(list(parameters), list(constants), _MPMATH_MODULES) if constants else None
        self._memo: dict[tuple[int, tuple[Any, ...]], tuple[Any, ...]] = {}

    def __call__(self, x: Any, *parameters: Any) -> Any:
        if self._parts is None:
            return self._body(x, *parameters)
        key = (mpmath.mp.prec, parameters)
        parts = self._memo.get(key)
        if parts is None:
            if len(self._memo) >= 64:
                self._memo.clear()
            parts = self._memo[key] = tuple(self._parts(*parameters))
        return self._body(x, *parameters, *parts)


@bounded_cache(max_entries=512, max_bytes=16 * MIB)
def _with_constants_hoisted(parameters: tuple[Any, ...], expr: Any) -> _ConstantsHoisted:
    """:class:`_ConstantsHoisted` of ``expr``, cached on its value as :func:`_compiled` is."""
    return _ConstantsHoisted(parameters, expr)


@bounded_cache(max_entries=512, max_bytes=16 * MIB)
def _derivative(expr: Any, order: int) -> Any:
    """``d^order expr / dz^order``, cached on the expression's value."""
    return sympy.diff(expr, z, order)


class EvaluationMixin:
    """``phi`` and ``phi'`` of a :class:`~symsel.distributions.core.Distribution` as numbers (float64 and mpmath),
    and the stable form's derivatives at ``z = 1`` that its moments use."""

    if TYPE_CHECKING:  # what it reads from Distribution
        values: Mapping[sympy.Symbol, sympy.Expr]
        stable_form: sympy.Expr | None
        log_dpgf_form: sympy.Expr | None

        @property
        def pgf(self) -> sympy.Expr: ...

        @property
        def dpgf(self) -> sympy.Expr: ...

    def _lambdify(self, derivative: bool, module: str) -> Callable:
        """Compile ``phi`` (or ``phi'``) once. With a ``stable_form`` the parameters stay
        arguments, so ``expm1``/``log1p`` are evaluated at run time instead of being folded by
        SymPy into a cancelling ``exp(x) - 1``; otherwise the values are substituted."""
        if self.stable_form is None:
            expr = self.dpgf if derivative else self.pgf
            if expr.is_Add and len(expr.args) > _HORNER_MIN_TERMS:
                coeffs = _monomials(expr)
                if coeffs is not None:
                    return _horner(coeffs, module)
            return _compiled((z,), expr, module)
        expr = _derivative(self.stable_form, 1) if derivative else self.stable_form
        if module == "mpmath":
            return _with_constants_hoisted(tuple(self.values), expr)
        return _compiled((z, *self.values), expr, module)

    @cached_property
    def _phi_np(self) -> Callable:
        return self._lambdify(False, "numpy")

    @cached_property
    def _dphi_np(self) -> Callable:
        return self._lambdify(True, "numpy")

    @cached_property
    def _phi_mpf(self) -> Callable:
        return self._lambdify(False, "mpmath")

    @cached_property
    def _dphi_mpf(self) -> Callable:
        return self._lambdify(True, "mpmath")

    @cached_property
    def _values_float(self) -> tuple[float, ...]:
        """The parameter values in float64, once (converting SymPy numbers cost more than a short ``phi'`` call)."""
        return tuple(float(v) for v in self.values.values())

    def _args_float(self) -> tuple[float, ...]:
        return () if self.stable_form is None else self._values_float

    def _args_mp(self) -> tuple[mpmath.mpf, ...]:
        """Parameter values at the current mpmath precision (call inside ``workdps``)."""
        if self.stable_form is None:
            return ()
        cache = self.__dict__.setdefault("_args_mp_cache", {})  # per precision: sympy.N costs more than phi itself
        prec = mpmath.mp.prec
        if prec not in cache:
            if len(cache) >= 64:
                cache.clear()
            cache[prec] = tuple(mpmath.mpf(sympy.N(v, mpmath.mp.dps + 10)) for v in self.values.values())
        return cache[prec]

    def phi(self, x: Any) -> np.ndarray:
        """``phi(x)`` in float64, vectorized over ``x``."""
        return _broadcast(lambda a: self._phi_np(a, *self._args_float()), x)

    def dphi(self, x: Any) -> np.ndarray:
        """``phi'(x)`` in float64, vectorized over ``x``."""
        return _broadcast(lambda a: self._dphi_np(a, *self._args_float()), x)

    def log_dphi(self, x: Any) -> np.ndarray:
        """``log phi'(x)`` in float64, vectorized; where float64 underflows (``phi' < 1e-280``) the
        value is recomputed with mpmath, so it is ``-inf`` only where ``phi'(x) = 0`` exactly."""
        arr = np.atleast_1d(np.asarray(x, dtype=float))
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.log_dpgf_form is not None:
                out = np.asarray(self._log_dphi_np(arr, *self._values_float), dtype=float)
                # a new array of arr's shape (a constant form gives one number); + 0.0 as adding zeros did
                out = (out if out.shape == arr.shape else np.broadcast_to(out, arr.shape)) + 0.0
                redo = ~np.isfinite(out)  # the log form itself does not underflow
            else:
                out = np.log(self.dphi(arr))
                redo = ~np.isfinite(out) | (out < -645)
        if redo.any():  # (called hundreds of thousands of times on a few points by Lemma 7's certified sup)
            for i in np.flatnonzero(redo):
                value = self.dphi_mp(arr[i], DEFAULT_DPS)
                out[i] = float(mpmath.log(value)) if value > 0 else -math.inf
        return out if np.ndim(x) else out[0]

    @cached_property
    def _log_dphi_np(self) -> Callable:
        return _compiled((z, *self.values), self.log_dpgf_form, "numpy")

    def phi_mp(self, x: Any, dps: int = DEFAULT_DPS) -> mpmath.mpf:
        """``phi(x)`` in mpmath at ``dps`` decimal digits (``x`` is converted at that precision)."""
        return self._stable_mp(self._phi_mpf, x, dps)

    def dphi_mp(self, x: Any, dps: int = DEFAULT_DPS) -> mpmath.mpf:
        """``phi'(x)`` in mpmath at ``dps`` decimal digits."""
        return self._stable_mp(self._dphi_mpf, x, dps)

    def _stable_mp(self, fn: Callable, x: Any, dps: int) -> mpmath.mpf:
        """``fn(x)`` rounded to ``dps`` digits; a stable form is evaluated with :attr:`_guard_digits` more (its
        ``1 + z (gamma - 1)`` at ``z = 1`` keeps ``gamma``'s digits only so: ``geometric(mean=1e50)`` divided by 0)."""
        with mpmath.workdps(dps):
            x = mpmath.mpf(x)
            if self.stable_form is None:
                return +fn(x)
        with mpmath.workdps(dps + self._guard_digits):
            value = fn(x, *self._args_mp())
        with mpmath.workdps(dps):
            return +value

    @cached_property
    def _guard_digits(self) -> int:
        """Extra digits for the stable form at ``z = 1``: a parameter ``v`` in (0, 1) enters it as ``1 - v`` (the
        truncated negative binomial's ``1 - (1 - gamma) z`` is ``gamma`` at ``z = 1``), which keeps only the
        working precision minus ``-log10 v`` digits of ``v``; without them ``gamma = 1e-38`` gave a mean 3e-4
        off and ``gamma = 1e-45`` a division by zero."""
        extra = 10
        for value in self.values.values():
            if value.is_number and 0 < abs(value) < 1:
                lost = -mpmath.log10(mpmath.mpf(sympy.N(abs(value), 15)))
                extra = max(extra, 10 + math.ceil(lost))
        return extra

    def _stable_derivative_at_one(self, order: int) -> mpmath.mpf:
        """``phi^(order)(1)`` from the cancellation-free form, at the current precision."""
        cache = self.__dict__.setdefault("_stable_derivatives", {})
        if order not in cache:
            cache[order] = _compiled((z, *self.values), _derivative(self.stable_form, order), "mpmath")
        return cache[order](mpmath.mpf(1), *self._args_mp())
