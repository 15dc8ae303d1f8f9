"""Printed bounds stay bounds: decimal text of a certified number, rounded towards its safe side.

A certified upper bound (an ``ε`` or a ``δ`` that the true value does not exceed) is printed rounded up, a
certified lower bound rounded down, so the printed digits are still a bound; a count that fits a budget (trials,
steps) is an integer and is printed as it is. Rounding to nearest (``f"{x:.6g}"``) can print an upper bound below
the number certified. Every place that prints a certified number (the command line, the report's tables and text
files, the rich display) formats it with :func:`format_upper` or :func:`format_lower`; JSON output keeps the
float's shortest ``repr``, which reads back as the same float, so it needs no rounding.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

__all__ = ["DIGITS", "format_lower", "format_upper"]

#: significant digits of a printed bound.
DIGITS = 6


def _directed(value: float, up: bool, digits: int) -> str:
    """``value`` at ``digits`` significant digits, rounded up (``up``) or down, in ``g`` notation."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    exact = Decimal(value)  # the float's exact binary value
    step = Decimal(1).scaleb(exact.adjusted() - digits + 1)
    rounded = exact.quantize(step, rounding=ROUND_CEILING if up else ROUND_FLOOR)
    # the decimal has at most digits + 1 significant digits (9.99995 up to 10.0000, the last one a zero): printed
    # through the nearest float it reads the same, except among subnormal floats, where the decimal itself is printed
    text = f"{float(rounded):.{digits}g}"
    if Decimal(text) != rounded:
        text = format(rounded.normalize(), f".{digits}g")
    return text


def format_upper(value: float, digits: int = DIGITS) -> str:
    """A certified upper bound (``ε`` or ``δ``) as text: ``digits`` significant digits, rounded up, never below
    ``value`` (``inf`` as ``inf``, ``nan`` as ``nan``)."""
    return _directed(float(value), True, digits)


def format_lower(value: float, digits: int = DIGITS) -> str:
    """A certified lower bound as text: ``digits`` significant digits, rounded down, never above ``value``."""
    return _directed(float(value), False, digits)
