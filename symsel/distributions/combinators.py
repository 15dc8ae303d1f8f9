"""Laws built from other laws: truncation, finite mixtures and compounds."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
import sympy

from symsel.distributions.core import Distribution, require_finite_mean
from symsel.distributions.expressions import z
from symsel.distributions.params import Number, _check, _plain, exact_number
from symsel.errors import ParameterError

#: the largest ``k_max`` of :func:`truncated` (its PGF is a polynomial with exact coefficients).
TRUNCATION_MAX_K = 1000
#: the most draws of a compound's inner law taken at once (memory: eight bytes each).
COMPOUND_CHUNK = 1 << 22


def _as_distribution(value: Any, name: str, where: str) -> Distribution:
    if not isinstance(value, Distribution):
        raise ParameterError(name, value, "a distribution of K, e.g. poisson(mean=3)", where)
    return value


def truncated(dist: Distribution, k_max: int) -> Distribution:
    """``K`` conditioned on ``K <= k_max`` (Papernot & Steinke, Appendix E.1): the PGF is the
    polynomial ``sum_{k <= k_max} P[K=k] z^k / P[K <= k_max]`` with exact coefficients."""
    where = "truncated"
    dist = _as_distribution(dist, "dist", where)
    km = exact_number(k_max, "k_max", where)
    _check(km.is_integer and 1 <= km <= TRUNCATION_MAX_K, "k_max", k_max,
           f"an integer 1 <= k_max <= {TRUNCATION_MAX_K} (the truncated PGF is expanded with exact coefficients)",
           where)
    ki = int(km)
    _check(ki >= dist.support_min, "k_max", k_max, f"k_max >= {dist.support_min} (the smallest value of K)", where)
    top = ki if dist.support_max is None else min(ki, dist.support_max)
    masses = [dist.pmf_exact(i) for i in range(top + 1)]
    total = sympy.Add(*masses)
    pgf = sympy.Add(*[m * z**i for i, m in enumerate(masses)]) / total
    return Distribution(
        where,
        pgf,
        {},
        support_min=dist.support_min,
        support_max=top,
        label=f"truncated(dist={dist.spec}, k_max={ki})",
        truncation_of=(dist, ki),
    )


def mixture(components: Sequence[tuple[Number, Distribution]]) -> Distribution:
    """A finite mixture ``sum_i w_i phi_i(z)`` (weights positive, summing to 1). A mixture of one
    component is that component itself."""
    where = "mixture"
    allowed = "a non-empty list of (weight, distribution) pairs"
    if not isinstance(components, list | tuple) or not components:
        raise ParameterError("components", components, allowed, where)
    for item in components:
        if not isinstance(item, list | tuple) or len(item) != 2:
            raise ParameterError("components", item, allowed, where)
        _as_distribution(item[1], "components", where)
    weights = [exact_number(w, "weight", where) for w, _ in components]
    for w in weights:
        _check(w > 0, "weight", w, "weights > 0", where)
    total = sympy.Add(*weights)
    _check(abs(float(total) - 1) < 1e-12, "weights", [_plain(w) for w in weights], "weights summing to 1", where)
    if len(components) == 1:
        return components[0][1]
    pgf = sympy.Add(*[(w / total) * d.pgf for w, (_, d) in zip(weights, components, strict=True)])
    dists = [d for _, d in components]
    inner = ", ".join(f"({_plain(w)!r}, {d.spec})" for w, d in zip(weights, dists, strict=True))
    maxes = [d.support_max for d in dists]
    return Distribution(
        where,
        pgf,
        {},
        support_min=min(d.support_min for d in dists),
        support_max=None if None in maxes else max(maxes),
        label=f"mixture(components=[{inner}])",
    )


def compound(outer: Distribution, inner: Distribution) -> Distribution:
    """The compound ``K = sum_{i=1}^{T} K_i``: ``phi(z) = phi_T(phi_K(z))`` (e.g. Poisson of
    logarithmic is negative binomial, Papernot & Steinke Appendix A.2)."""
    outer = _as_distribution(outer, "outer", "compound")
    inner = _as_distribution(inner, "inner", "compound")
    require_finite_mean(outer.mean_mp() * inner.mean_mp(), "compound")  # E[K] = E[T] E[K_i] (Wald)
    pgf = outer.pgf.subs(z, inner.pgf)
    smax = None
    if outer.support_max is not None and inner.support_max is not None:
        smax = outer.support_max * inner.support_max
    return Distribution(
        "compound",
        pgf,
        {},
        support_min=outer.support_min * inner.support_min,
        support_max=smax,
        sampler=partial(_sample_compound, outer, inner),
        label=f"compound(outer={outer.spec}, inner={inner.spec})",
    )


def _sample_compound(outer: Distribution, inner: Distribution, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` draws of ``K = K_1 + … + K_T``: ``T`` from the outer law, then ``T`` draws of the inner law summed
    (the compound's definition; reading its masses off the PGF's series took minutes for a heavy inner tail). The
    inner draws are taken at most :data:`COMPOUND_CHUNK` at a time."""
    counts = outer.rvs(n, rng)
    ends = np.cumsum(counts)
    out = np.empty(n, dtype=np.int64)
    start = 0
    while start < n:
        before = int(ends[start - 1]) if start else 0
        stop = max(start + 1, int(np.searchsorted(ends, before + COMPOUND_CHUNK, side="right")))
        block = counts[start:stop]
        total = int(ends[stop - 1]) - before
        if total <= COMPOUND_CHUNK:
            sums = np.concatenate([[0], np.cumsum(inner.rvs(total, rng))])
            block_ends = np.cumsum(block)
            out[start:stop] = sums[block_ends] - sums[block_ends - block]
        else:  # one outer draw larger than a chunk
            value = 0
            for size in [COMPOUND_CHUNK] * (total // COMPOUND_CHUNK) + [total % COMPOUND_CHUNK]:
                value += int(inner.rvs(size, rng).sum()) if size else 0
            out[start] = value
        start = stop
    return out
