"""Finite pairs: a mechanism's two output laws on finitely many outcomes, with a score order.

A :class:`FinitePair` ``(Q, Q')`` holds the masses of one base mechanism's outputs on two
neighbouring inputs, as exact numbers (int, float read by its shortest decimal, str, Fraction,
mpmath or SymPy), and a total score order on the outcomes (lowest first; a fixed tie-breaking rule
is such an order). It is the dominating pair of randomized response, of one or several
``(eps, delta)`` guarantees, or any finite pair given by a user (docs/setting.md). The number
conversions here are the one reading of a user's masses for the whole package.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any, TypeAlias

import mpmath
import numpy as np
import sympy

from symsel.errors import ParameterError

DEFAULT_DPS = 50
_SUM_TOLERANCE = 1e-9

Number: TypeAlias = int | float | str | Fraction | mpmath.mpf | sympy.Expr
"""Accepted mass types: floats are read by their shortest decimal representation."""


# --------------------------------------------------------------------- number conversion
def to_mpf(value: Any, dps: int, name: str = "value", where: str | None = None) -> mpmath.mpf:
    """Convert a user number to an mpmath float at ``dps`` digits.

    Python floats are read by their shortest decimal representation (``0.1`` means 1/10), the
    convention of :func:`symsel.distributions.exact_number`; SymPy expressions are evaluated at
    ``dps + 10`` digits; mpmath numbers keep their own value.
    """
    with mpmath.workdps(dps):
        return _mpf_here(value, dps, name, where)


def _mpf_here(value: Any, dps: int, name: str, where: str | None) -> mpmath.mpf:
    """:func:`to_mpf` at the working precision already set to ``dps`` digits (many values, one precision change)."""
    if isinstance(value, mpmath.mpf):
        out = +value
    elif isinstance(value, bool):
        raise ParameterError(name, value, "a real number", where)
    elif isinstance(value, int | np.integer):
        out = mpmath.mpf(int(value))
    elif isinstance(value, float | np.floating):
        out = mpmath.mpf(repr(float(value)))
    elif isinstance(value, Fraction):
        out = mpmath.mpf(value.numerator) / value.denominator
    elif isinstance(value, str):
        try:
            out = mpmath.mpf(value)
        except (ValueError, TypeError):
            raise ParameterError(name, value, "a real number", where) from None
    elif isinstance(value, sympy.Basic):
        if not getattr(value, "is_number", False):
            raise ParameterError(name, str(value), "a number (no free symbols)", where)
        out = mpmath.mpf(str(sympy.N(value, dps + 10)))
    else:
        raise ParameterError(name, value, "a real number", where)
    if not mpmath.isfinite(out):
        raise ParameterError(name, value, "a finite real number", where)
    return out


def to_float(value: Any) -> float:
    if isinstance(value, sympy.Basic):
        return float(sympy.N(value, 20))
    if isinstance(value, str):
        return float(mpmath.mpf(value))
    return float(value)


def check_masses(values: Sequence[Any] | np.ndarray, name: str, where: str) -> tuple[Any, ...]:
    """Validate a pmf: a non-empty sequence of finite non-negative numbers summing to 1."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise ParameterError(name, values, "a sequence of probabilities", where)
    vals = tuple(values)
    if len(vals) == 0:
        raise ParameterError(name, list(vals), "a non-empty sequence of probabilities", where)
    with mpmath.workdps(30):
        converted = [_mpf_here(v, 30, name, where) for v in vals]
        for v, c in zip(vals, converted, strict=True):
            if c < 0:
                raise ParameterError(name, _show(vals), f"non-negative masses (found {_show_one(v)})", where)
        total = mpmath.fsum(converted)
        if abs(total - 1) > _SUM_TOLERANCE:
            allowed = f"masses summing to 1 within {_SUM_TOLERANCE:g} (sum = {mpmath.nstr(total, 12)})"
            raise ParameterError(name, _show(vals), allowed, where)
    return vals


def _show_one(v: Any) -> Any:
    if isinstance(v, mpmath.mpf | sympy.Basic):
        return float(v) if not isinstance(v, sympy.Basic) else str(v)
    return v


def _show(vals: Sequence[Any]) -> list[Any]:
    shown = [_show_one(v) for v in vals[:8]]
    return [*shown, "..."] if len(vals) > 8 else shown


def masses_mp(values: Sequence[Any], dps: int, name: str = "pmf", where: str | None = None) -> list[mpmath.mpf]:
    """Masses at ``dps`` digits, normalized by their sum (which is 1 up to rounding)."""
    with mpmath.workdps(dps):
        vals = [_mpf_here(v, dps, name, where) for v in values]
        total = mpmath.fsum(vals)
        return [v / total for v in vals]


def check_order(order: Any, n: int, where: str = "FinitePair") -> tuple[int, ...]:
    """Validate a score order: a permutation of ``range(n)``, lowest score first."""
    if order is None:
        return tuple(range(n))
    try:
        perm = tuple(int(i) for i in order)
        ok = all(int(i) == i for i in order)
    except (TypeError, ValueError):
        raise ParameterError("order", order, f"a permutation of 0..{n - 1} (lowest score first)", where) from None
    if not ok or sorted(perm) != list(range(n)):
        raise ParameterError("order", list(order), f"a permutation of 0..{n - 1} (lowest score first)", where)
    return perm


# --------------------------------------------------------------------- the pair
@dataclass(frozen=True, init=False)
class FinitePair:
    """Output distributions ``Q = Q(X)`` and ``Q' = Q(X')`` of a base mechanism on ``n`` outcomes,
    with a score order.

    Args:
        p: masses of ``Q`` (numbers: int, float, str, Fraction, mpmath or SymPy).
        q: masses of ``Q'``, same length.
        order: a permutation of ``0..n-1`` listing the outcomes from the lowest to the highest
            score (ties are broken by this fixed order). Default: outcome 0 lowest, ``n-1`` best.

    The masses must be non-negative and sum to 1 within 1e-9; numeric evaluations normalize them
    by their sum. Keep inputs exact (SymPy expressions, strings, mpmath numbers at high precision)
    when evaluating at many digits.
    """

    p: tuple[Any, ...]
    q: tuple[Any, ...]
    order: tuple[int, ...]
    label: str | None = field(default=None, compare=False)

    def __init__(self, p: Sequence[Number], q: Sequence[Number], order: Sequence[int] | None = None,
                 label: str | None = None):
        pv = check_masses(p, "p", "FinitePair")
        qv = check_masses(q, "q", "FinitePair")
        if len(pv) != len(qv):
            raise ParameterError("q", f"length {len(qv)}", f"the same length as p ({len(pv)})", "FinitePair")
        object.__setattr__(self, "p", pv)
        object.__setattr__(self, "q", qv)
        object.__setattr__(self, "order", check_order(order, len(pv)))
        object.__setattr__(self, "label", label)

    @property
    def n(self) -> int:
        """Number of outcomes (``⊥`` not included)."""
        return len(self.p)

    def p_mp(self, dps: int = DEFAULT_DPS) -> list[mpmath.mpf]:
        """Masses of ``Q`` at ``dps`` digits (normalized)."""
        return masses_mp(self.p, dps, "p")

    def q_mp(self, dps: int = DEFAULT_DPS) -> list[mpmath.mpf]:
        """Masses of ``Q'`` at ``dps`` digits (normalized)."""
        return masses_mp(self.q, dps, "q")

    @cached_property
    def p_float(self) -> np.ndarray:
        """Masses of ``Q`` in float64 (normalized)."""
        return normalized_float(self.p)

    @cached_property
    def q_float(self) -> np.ndarray:
        """Masses of ``Q'`` in float64 (normalized)."""
        return normalized_float(self.q)

    def swapped(self) -> FinitePair:
        """The pair ``(Q', Q)`` with the same order."""
        return FinitePair(self.q, self.p, self.order, self.label)

    def with_order(self, order: Sequence[int] | None) -> FinitePair:
        """The same masses with another score order."""
        return FinitePair(self.p, self.q, order, self.label)

    def monotone_order(self) -> tuple[int, ...]:
        """Outcomes sorted by the likelihood ratio ``Q/Q'`` (increasing; ties by index): the order
        in which a higher score means stronger evidence for ``Q``."""
        p, q = self.p_float, self.q_float
        with np.errstate(divide="ignore"):
            lr = np.where(q > 0, np.log(np.where(p > 0, p, 1.0)) - np.log(np.where(q > 0, q, 1.0)), np.inf)
        lr = np.where(p > 0, lr, -np.inf)
        return tuple(int(i) for i in np.lexsort((np.arange(self.n), lr)))

    def __repr__(self) -> str:
        name = f"{self.label}: " if self.label else ""
        return f"FinitePair({name}n={self.n}, order={list(self.order)})"


def normalized_float(values: Sequence[Any]) -> np.ndarray:
    arr = np.array([to_float(v) for v in values], dtype=float)
    arr = np.clip(arr, 0.0, None)
    return arr / arr.sum()
