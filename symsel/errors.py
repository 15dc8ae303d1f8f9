"""Errors raised by symsel.

Every user mistake surfaces as a :class:`SymselError`; the ones about a value are also
``ValueError`` subclasses, so ``except ValueError`` keeps working for callers that expect it.
The command line prints ``str(error)`` as a single line and exits with status 2.
"""

from __future__ import annotations

from typing import Any


class SymselError(Exception):
    """Base class of every error symsel raises on purpose."""


class ParameterError(SymselError, ValueError):
    """A parameter is outside its allowed range.

    The message names the parameter, the offending value and the allowed range, e.g.
    ``tnb: parameter eta=-2 is out of range; allowed: eta > -1``.
    """

    #: set on a copy re-raised under the family name the user typed (``symsel.spec``); absent otherwise
    spec_named: bool

    def __init__(self, name: str, value: Any, allowed: str, where: str | None = None):
        self.name = name
        self.value = value
        self.allowed = allowed
        self.where = where
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}parameter {name}={_shown(value)} is out of range; allowed: {allowed}")


#: the longest value shown in full in a :class:`ParameterError` (a deeply nested law's spec runs to thousands of
#: characters, and the one-line error would be cut before it says what is allowed).
_SHOWN_VALUE = 120


def _shown(value: Any) -> str:
    """``repr(value)``, its middle elided past :data:`_SHOWN_VALUE` characters."""
    text = repr(value)
    return text if len(text) <= _SHOWN_VALUE else f"{text[:70]}...{text[-40:]}"


class SpecError(SymselError, ValueError):
    """A spec string could not be parsed or names something unknown.

    ``column`` (1-based) points at the offending token of ``spec`` when it is known.
    """

    def __init__(self, message: str, spec: str | None = None, column: int | None = None):
        self.spec = spec
        self.column = column
        where = ""
        if spec is not None:
            where = f" in spec {spec!r}" + (f" at column {column}" if column else "")
        super().__init__(f"{message}{where}")


class NotApplicableError(SymselError, ValueError):
    """A method does not apply to the given inputs (e.g. a paper closed form for a new law)."""


class PairDirectionError(SymselError, TypeError, ValueError):
    """A pair of the wrong kind for the bound asked: an upper bound computed on a pair the base dominates, or a lower
    bound on a pair that dominates the base, would fall on the wrong side of the truth (:mod:`symsel.pairs.loss`).
    A ``TypeError`` (the argument has the wrong type) and, as every symsel input error, a ``ValueError``."""

    def __init__(self, where: str, needed: str, given: str, source: str):
        self.where, self.needed, self.given = where, needed, given
        side = "an upper" if needed == "DominatingPair" else "a lower"
        super().__init__(f"{where}: needs a {needed} ({side} bound is computed on it), got a {given} ({source})")


class InconsistentBoundsError(SymselError, ArithmeticError):
    """A certified lower bound came out above a valid upper bound for the same question: one of the two is wrong,
    so neither is reported (symsel refuses rather than print a number on the wrong side)."""
