"""A running maximum over ``δ`` for certified lower bounds (docs/lower-bounds.md, "Monotone in δ").

The worst case's ``ε(δ)`` is non-increasing in ``δ``: a selection that is ``(ε, δ)``-DP is ``(ε, δ')``-DP for every
``δ' ≥ δ``. So a certified lower bound found at ``δ'`` is also one at every ``δ ≤ δ'``, and the largest lower bound
found so far at any ``δ' ≥ δ`` is a certified lower bound at ``δ``. :func:`running_maximum` keeps, per base and law,
the results found in this process and answers with that maximum: the lower bounds a process reports never rise with
``δ``, whatever the constructions do at each ``δ`` on their own.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from typing import Any

#: (base, law) keys remembered (least recently used dropped first).
MAX_KEYS = 64

_FOUND: OrderedDict[tuple[str, str], dict[float, Any]] = OrderedDict()


def running_maximum(key: tuple[str, str] | None, result: Any) -> Any:
    """``result`` (a lower bound with ``epsilon`` and ``delta``) or, when a larger one was found at some
    ``δ' ≥ result.delta`` for the same ``key``, that one with its ``delta`` set to ``result.delta`` and the
    ``δ'`` named in its ``construction``. ``key=None``: no memory (``result`` itself)."""
    if key is None:
        return result
    found = _FOUND.setdefault(key, {})
    _FOUND.move_to_end(key)
    while len(_FOUND) > MAX_KEYS:
        _FOUND.popitem(last=False)
    delta = float(result.delta)
    previous = found.get(delta)
    if previous is None or result.epsilon > previous.epsilon:
        found[delta] = result
    larger = [r for d, r in found.items() if d >= delta]
    best = max(larger, key=lambda r: r.epsilon)
    if best.epsilon <= result.epsilon:
        return result
    return dataclasses.replace(best, delta=delta,
                               construction=f"{best.construction}; running maximum: found at δ = {best.delta:g}")


def forget() -> None:
    """Drop every remembered result (tests)."""
    _FOUND.clear()
