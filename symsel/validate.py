"""Range checks shared by every constructor and command: a bad parameter raises :class:`ParameterError`."""

from __future__ import annotations

import math
import numbers
import os
import sys
from typing import Any

from symsel.errors import ParameterError


def real(
    value: Any,
    name: str,
    where: str,
    *,
    lo: float = -math.inf,
    hi: float = math.inf,
    lo_open: bool = False,
    hi_open: bool = False,
    allowed: str | None = None,
) -> float:
    """``value`` as a float in the interval ``lo .. hi`` (open ends as flagged); NaN and booleans raise."""
    text = allowed or _interval_text(lo, hi, lo_open, hi_open)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(name, value, text, where)
    x = to_float(value)
    if math.isnan(x):
        raise ParameterError(name, value, text, where)
    if x < lo or x > hi or (lo_open and x == lo) or (hi_open and x == hi):
        raise ParameterError(name, _shown(value), text, where)
    return x


def positive(value: Any, name: str, where: str) -> float:
    """A finite real number ``> 0``."""
    return real(value, name, where, lo=0.0, hi=math.inf, lo_open=True, hi_open=True, allowed=f"a finite {name} > 0")


def nonnegative(value: Any, name: str, where: str) -> float:
    """A finite real number ``>= 0``."""
    return real(value, name, where, lo=0.0, hi=math.inf, hi_open=True, allowed=f"a finite {name} >= 0")


def probability(value: Any, name: str, where: str) -> float:
    """A real number in ``[0, 1]``."""
    return real(value, name, where, lo=0.0, hi=1.0)


def integer(value: Any, name: str, where: str, *, lo: int = 1, hi: int | None = None) -> int:
    """An integer ``>= lo`` (and ``<= hi`` if given; an integral float such as ``1000.0`` is accepted)."""
    text = f"an integer >= {lo}" if hi is None else f"an integer {lo} <= {name} <= {hi}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(name, value, text, where)
    if isinstance(value, numbers.Integral):
        n = int(value)  # exact: an integer beyond float range is compared as it is
    else:
        x = to_float(value)
        if not math.isfinite(x) or x != int(x):
            raise ParameterError(name, _shown(value), text, where)
        n = int(x)
    if n < lo or (hi is not None and n > hi):
        raise ParameterError(name, _shown(value), text, where)
    return n


def to_float(value: numbers.Real) -> float:
    """``float(value)``, with a number beyond float range (an ``int`` or ``Fraction`` such as ``10**400``) rounded
    toward zero to the largest finite float of its sign instead of raising ``OverflowError``.

    A range check then refuses it where the range is finite (``delta = 10**400`` is above 1; a mean of ``K`` or a
    noise multiplier has a finite upper limit), and where it is accepted (an ``epsilon`` of ``10**400``) the answer
    is for a budget no larger than the one given: ``delta(eps)`` decreases in ``eps``, so the ``delta`` answered at
    the rounded ``epsilon`` is an upper bound on the one at ``10**400``.
    """
    try:
        return float(value)
    except OverflowError:
        positive: Any = value > 0  # type: ignore[operator]  # numbers.Real declares no comparison with int
        return math.copysign(sys.float_info.max, 1 if positive else -1)


def _shown(value: Any) -> Any:
    """``value`` for an error message: an integer of more than 30 digits as ``<an integer of about N digits>`` (the
    digits of a huge integer are no help to read, and beyond 4300 of them Python refuses to print it)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and abs(int(value)) >= 10**30:
        return _HugeInteger(int(abs(int(value)).bit_length() * math.log10(2)) + 1)
    return value


class _HugeInteger:
    """How a huge integer is shown in an error message."""

    def __init__(self, digits: int):
        self.digits = digits

    def __repr__(self) -> str:
        return f"<an integer of about {self.digits} digits>"


def environment_integer(name: str, where: str) -> int | None:
    """The environment variable ``name`` as an integer ``>= 1`` (``None`` when unset): a variable a library symsel
    calls reads (e.g. joblib's ``LOKY_MAX_CPU_COUNT``), checked here so that a bad value is one error naming it."""
    text = os.environ.get(name)
    if text is None:
        return None
    try:
        value = int(text.strip())
    except ValueError:
        value = 0
    if value < 1:
        raise ParameterError(f"environment variable {name}", text[:40], "a whole number >= 1, or unset", where)
    return value


def flag(value: Any, name: str, where: str) -> bool:
    """A ``bool`` (``True`` or ``False``; not a number or a string that would read as one)."""
    if not isinstance(value, bool):
        raise ParameterError(name, value, "True or False", where)
    return value


def choice(value: Any, name: str, where: str, options: tuple[str, ...]) -> str:
    """One of ``options``."""
    if not isinstance(value, str) or value not in options:
        raise ParameterError(name, value, "one of " + ", ".join(repr(o) for o in options), where)
    return value


#: the largest search budget of :func:`symsel.lower_bound` (float64 evaluations of the exact selection formula), the
#: same for the Python API and ``symsel verify --budget``: 20 000 takes minutes on a large law, 1e12 would never end.
MAX_LOWER_BOUND_BUDGET = 20_000

#: the working precisions symsel accepts (decimal digits): below 5 no certified rounding is meaningful, above
#: 10000 a single evaluation takes minutes.
DPS_RANGE = (5, 10000)


def dps(value: Any, where: str) -> int:
    """A number of decimal digits for mpmath, in :data:`DPS_RANGE` (the one rule for every ``dps`` argument)."""
    return integer(value, "dps", where, lo=DPS_RANGE[0], hi=DPS_RANGE[1])


def _interval_text(lo: float, hi: float, lo_open: bool, hi_open: bool) -> str:
    if math.isinf(lo) and math.isinf(hi):
        return "a real number (not NaN)"
    left = "(" if lo_open or math.isinf(lo) else "["
    right = ")" if hi_open or math.isinf(hi) else "]"
    return f"a real number in {left}{lo}, {hi}{right}"


#: the sampling rates and noise multipliers a Poisson-subsampled Gaussian (DP-SGD) accepts: below ``MIN_RATE``
#: dp-accounting's ``1/q`` overflows, beyond ``MAX_NOISE`` it squares ``sigma`` into an overflow (and at 1e6 a step
#: costs an epsilon of about 1e-12 already), below ``MIN_NOISE`` its RDP divides by zero (a step with ``sigma``
#: below 1e-2 is no privacy to speak of).
MIN_RATE, MIN_NOISE, MAX_NOISE = 1e-300, 1e-2, 1e6


def subsampled_gaussian(q: Any, sigma: Any, where: str) -> tuple[float, float]:
    """``(q, sigma)`` of a Poisson-subsampled Gaussian: ``MIN_RATE <= q <= 1``, ``MIN_NOISE <= sigma <= MAX_NOISE``."""
    rate = real(q, "q", where, lo=MIN_RATE, hi=1.0, allowed=f"a sampling rate {MIN_RATE:g} <= q <= 1")
    noise = real(sigma, "sigma", where, lo=MIN_NOISE, hi=MAX_NOISE,
                 allowed=f"a noise multiplier {MIN_NOISE:g} <= sigma <= {MAX_NOISE:g}")
    return rate, noise


def generator(seed: Any, name: str, where: str) -> Any:
    """A ``numpy.random.Generator``: one given as it is, else ``default_rng(seed)`` for ``None`` or an integer
    ``>= 0``."""
    import numpy as np

    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
        raise ParameterError(name, seed, "None, an integer >= 0 or a numpy.random.Generator", where)
    return np.random.default_rng(None if seed is None else int(seed))
