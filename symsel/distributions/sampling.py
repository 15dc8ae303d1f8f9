"""Samples of ``K``: the law's own fast sampler when its constructor gives one, else inverse-CDF sampling from a table
of cumulative masses (built once, until the remaining tail is below :data:`_SAMPLER_TAIL`).

:class:`SamplingMixin` is mixed into :class:`~symsel.distributions.core.Distribution` and reads its fields
``sampler``, ``support_min`` and ``support_max`` and its masses ``pmf_mp``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING

import mpmath
import numpy as np

from symsel.distributions.expressions import DEFAULT_DPS

_SAMPLER_TAIL = 1e-15


class SamplingMixin:
    """Draws of ``K`` from a :class:`~symsel.distributions.core.Distribution`."""

    if TYPE_CHECKING:  # what it reads from Distribution and MassesMixin
        sampler: Callable[[np.random.Generator, int], np.ndarray] | None
        support_min: int
        support_max: int | None

        def pmf_mp(self, kk: int, dps: int = DEFAULT_DPS) -> mpmath.mpf: ...

    def rvs(self, size: int | tuple[int, ...] = 1, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Draw ``size`` samples of ``K`` with a numpy ``Generator`` (or a seed)."""
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        count = int(np.prod(size))
        draws = self.sampler(gen, count) if self.sampler is not None else self._inverse_sample(gen, count)
        return np.asarray(draws, dtype=np.int64).reshape(size)

    def _inverse_sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        table = self._inverse_cdf_table
        draws = self.support_min + np.searchsorted(table, rng.random(n), side="right")
        return np.minimum(draws, self.support_min + len(table) - 1)

    @cached_property
    def _inverse_cdf_table(self) -> np.ndarray:
        """Cumulative probabilities from ``support_min`` until the tail is below 1e-15."""
        probs: list[float] = []
        total = mpmath.mpf(0)
        i = self.support_min
        limit = self.support_max if self.support_max is not None else 10**7
        with mpmath.workdps(DEFAULT_DPS):
            while i <= limit:
                p = self.pmf_mp(i)
                total += p
                probs.append(float(total))
                if 1 - total < _SAMPLER_TAIL:
                    break
                i += 1
        table = np.array(probs)
        table[-1] = 1.0
        return table
