"""Numbers typed by the user, turned into exact SymPy numbers and range-checked (one :class:`ParameterError`
naming the parameter, its value and the allowed range)."""

from __future__ import annotations

import math
import numbers
from typing import Any

import mpmath
import numpy as np
import sympy

from symsel.errors import ParameterError

Number = int | float | sympy.Expr


def exact_number(value: Any, name: str, where: str) -> sympy.Expr:
    """Turn a user number into an exact SymPy number (floats by their shortest decimal repr)."""
    if isinstance(value, bool):
        raise ParameterError(name, value, "a real number", where)
    if isinstance(value, sympy.Expr):
        number = value
    elif isinstance(value, int | np.integer):
        number = sympy.Integer(int(value))
    elif isinstance(value, float | np.floating):
        if not math.isfinite(float(value)):
            raise ParameterError(name, value, "a finite real number", where)
        number = sympy.Rational(repr(float(value)))
    elif isinstance(value, mpmath.mpf):
        number = sympy.Float(value, mpmath.mp.dps)
    elif isinstance(value, numbers.Rational):  # fractions.Fraction: exact as it is
        number = sympy.Rational(int(value.numerator), int(value.denominator))
    else:  # a nested law is shown as its spec, not as an object repr
        raise ParameterError(name, getattr(value, "spec", value), "a real number", where)
    if not number.is_number or number.is_real is False or number.has(sympy.zoo, sympy.oo, sympy.nan):
        raise ParameterError(name, value, "a finite real number", where)
    return number


def _check(condition: bool, name: str, value: Any, allowed: str, where: str) -> None:
    if not condition:
        raise ParameterError(name, _plain(value), allowed, where)


def _plain(value: Any) -> Any:
    """A printable form of a parameter value (floats for SymPy numbers)."""
    if isinstance(value, sympy.Integer):
        return int(value)
    if isinstance(value, sympy.Expr) and value.is_number:
        return float(value)
    return value


def _as_count(value: Any, name: str, where: str) -> int:
    if isinstance(value, bool) or int(value) != value or value < 0:
        raise ParameterError(name, value, "a non-negative integer", where)
    return int(value)


def _symbols(*names: str) -> tuple[sympy.Symbol, ...]:
    return tuple(sympy.Symbol(n, real=True) for n in names)
