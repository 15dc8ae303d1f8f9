"""How far the float64 ``φ'`` of a law may be from the truth: the allowance every certified supremum
and envelope gives its ``φ'`` values.

``φ'`` is compiled from a SymPy expression; for most laws float64 evaluates it to a few ulps, but forms
such as ``1 − (1−γ) z`` with ``γ ≈ 1e-8`` lose digits near ``z = 1``. The allowance is measured once per
law against mpmath and cached on the law.
"""

from __future__ import annotations

import math

import numpy as np

from symsel.distributions import Distribution
from symsel.memory import MIB, BoundedCache

#: the smallest relative allowance on ``φ'`` values.
VALUE_MARGIN = 1e-10


def dphi_float_error(dist: Distribution) -> float:
    """The relative error of the float64 ``φ'`` measured against mpmath (40 digits) at points that
    stress it (near 0, uniform, and ``1 − 10^{-k}`` where ``1 − (1−γ)u``-type forms cancel).

    A measurement, not a proof: :data:`VALUE_MARGIN` or 64 times the worst error seen, whichever is
    larger, is the allowance every ``φ'`` value of the envelope gets. Cached on the law's value (family, PGF and
    the form its float64 ``φ'`` is compiled from), not on the object: a law built again is not measured again."""
    key = (dist.name, dist.pgf, dist.stable_form)
    error = _FLOAT_ERRORS.get(key)
    return error if error is not None else _FLOAT_ERRORS.put(key, _measure(dist))


#: :func:`dphi_float_error`'s measurements: at most 256 entries and 16 MiB (the keys hold PGFs).
_FLOAT_ERRORS = BoundedCache("symsel.bounds.precision._FLOAT_ERRORS", max_entries=256, max_bytes=16 * MIB)


def _measure(dist: Distribution) -> float:
    probes = np.unique(np.concatenate([np.linspace(0.0, 1.0, 17), 1.0 - np.logspace(-1, -15, 15),
                                       np.logspace(-15, -1, 8)]))
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):  # a non-finite value is
        fast = np.asarray(dist.dphi(probes), dtype=float)  # the answer (inf) below, not a warning
    worst = 0.0
    for x, value in zip(probes.tolist(), fast.tolist(), strict=True):
        exact = dist.dphi_mp(x, 40)
        if exact <= 1e-290:
            continue
        if not math.isfinite(value):
            return math.inf
        worst = max(worst, abs(float((value - exact) / exact)))
    return max(VALUE_MARGIN, 64 * worst)


def usable_float_error(dist: Distribution, method: str) -> float:
    """:func:`dphi_float_error`, or :class:`NotApplicableError` when float64 cannot evaluate ``φ'`` of this law
    at all (e.g. a geometric law with mean 1e20, where ``1 − (1−γ)z`` rounds to 0 at ``z = 1``): every numerical
    method built on float ``φ'`` would then either refine without end or certify nothing."""
    from symsel.errors import NotApplicableError

    margin = dphi_float_error(dist)
    if not math.isfinite(margin) or margin >= 0.5:
        raise NotApplicableError(
            f"{method}: the float64 phi' of {dist.spec} disagrees with its 40-digit value by {margin / 64:.2g} "
            "(relative); no certified bound can be built from it")
    return margin
