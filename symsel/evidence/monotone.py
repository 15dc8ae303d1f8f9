"""A running maximum over ``δ`` for certified lower bounds (docs/lower-bounds.md, "Monotone in δ").

The worst case's ``ε(δ)`` is non-increasing in ``δ``: a selection that is ``(ε, δ)``-DP is ``(ε, δ')``-DP for every
``δ' ≥ δ``. So a certified lower bound found at ``δ'`` is also one at every ``δ ≤ δ'``, and the largest lower bound
found at any ``δ' ≥ δ`` among those asked is a certified lower bound at ``δ``. :func:`running_maximum` applies this
to the results of one call at several ``δ`` (:func:`symsel.evidence.lower.lower_bounds`): the bounds it reports never
rise with ``δ``, whatever the constructions do at each ``δ`` on their own. It keeps no memory between calls, so the
same question always gets the same answer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any


def running_maximum(results: Sequence[Any]) -> list[Any]:
    """``results`` (lower bounds with ``epsilon``, ``delta`` and ``construction``), in their order, each replaced by
    the largest one found at some ``δ' ≥`` its ``delta`` when that is larger: that one with its ``delta`` set to the
    result's and the ``δ'`` named in its ``construction``."""
    out = []
    for result in results:
        delta = float(result.delta)
        best = max((r for r in results if float(r.delta) >= delta), key=lambda r: r.epsilon)
        if best.epsilon <= result.epsilon:
            out.append(result)
        else:
            out.append(dataclasses.replace(
                best, delta=delta, construction=f"{best.construction}; running maximum: found at δ = {best.delta:g}"))
    return out
