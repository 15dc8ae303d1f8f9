"""The one Pair type family: a mechanism's dominating pair on an ordered output space.

A *pair* is two output distributions ``(P, P')`` of one mechanism on two neighbouring inputs, on a
totally ordered output space (docs/setting.md). Two kinds exist:

* :class:`~symsel.pairs.FinitePair` -- finitely many outcomes with exact (mpmath/SymPy) masses and a
  score order; the dominating pair of randomized response, of one or several ``(ε, δ)``
  guarantees, or any finite pair given by the user;
* :class:`~symsel.pairs.LocationPair` -- a location family, :class:`~symsel.pairs.GaussianPair`
  ``N(μ, 1)`` vs ``N(0, 1)`` or :class:`~symsel.pairs.LaplacePair` ``Lap(Δ, b)`` vs ``Lap(0, b)``.

Profiles hand out their dominating pair with :meth:`symsel.profiles.Profile.dominating_pair`;
exact evaluation, lower bounds, audits, the example registry and ``verify`` all take a ``Pair``.
This package imports neither :mod:`symsel.profiles` nor :mod:`symsel.evidence`; both import it.
"""

from __future__ import annotations

from typing import Any

from symsel.errors import ParameterError
from symsel.pairs.finite import FinitePair
from symsel.pairs.location import GaussianPair, LaplacePair, LocationPair

Pair = FinitePair | LocationPair
"""A finite or continuous (location) pair: ``isinstance(x, Pair)`` works."""

#: spec families whose profiles know their dominating pair (for error messages).
BASES_WITH_A_PAIR = ("gaussian", "gdp", "laplace", "randomized_response", "pure", "approx", "pointwise", "pair")


def as_pair(base: Any, where: str) -> Pair:
    """``base`` itself if it is a :data:`Pair`; a :class:`~symsel.profiles.Profile`'s
    :meth:`~symsel.profiles.Profile.dominating_pair` otherwise.

    Raises:
        ParameterError: ``base`` is neither, or a profile without a known dominating pair (the
            message names its spec and the bases that have one).
    """
    if isinstance(base, Pair):
        return base
    allowed = "a base with a known dominating pair (" + ", ".join(BASES_WITH_A_PAIR) + ")"
    dominating_pair = getattr(base, "dominating_pair", None)  # a Profile (duck-typed: pairs import no profiles)
    if callable(dominating_pair):
        pair = dominating_pair()
        if pair is None:
            raise ParameterError("base", base.spec, allowed, where)
        return pair
    raise ParameterError("base", repr(base), "a FinitePair, GaussianPair, LaplacePair or " + allowed, where)


__all__ = ["BASES_WITH_A_PAIR", "FinitePair", "GaussianPair", "LaplacePair", "LocationPair", "Pair", "as_pair"]
