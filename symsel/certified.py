"""Certified numbers that carry their direction: :class:`Upper` (the truth is at most it) and :class:`Lower` (the
truth is at least it).

Both are ``float`` subclasses: they compute, compare, serialize (JSON, pickle) and print as the plain float they
hold, so code that reads a bound as a number is unchanged. What they add is the side the truth lies on, read where
the number is shown: an upper bound is rounded up and a lower bound down (:func:`symsel.display.format_certified`).
Arithmetic on them gives plain floats: a number derived from a bound is not certified by that alone.

:meth:`symsel.bounds.SelectionBound.epsilon` and :meth:`~symsel.bounds.SelectionBound.delta` return :class:`Upper`
at a scalar argument; :func:`symsel.lower_bound`'s ``epsilon`` is a :class:`Lower`.
"""

from __future__ import annotations


class Upper(float):
    """A certified upper bound: the exact value is at most this number."""

    __slots__ = ()
    direction = "upper"


class Lower(float):
    """A certified lower bound: the exact value is at least this number."""

    __slots__ = ()
    direction = "lower"
