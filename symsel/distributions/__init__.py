"""Distributions of the number of runs K, each held as one symbolic probability generating function.

The package is split by idea; every name is re-exported here, so ``from symsel.distributions import ...`` is the
import path to use:

* :mod:`~symsel.distributions.core` -- the :class:`Distribution` (a PGF ``phi(z) = E[z^K]``, its parameters and
  moments) and the :class:`Family` record; what else is derived from the PGF is mixed into :class:`Distribution`
  from :mod:`~symsel.distributions.evaluation` (``phi``, ``phi'`` as numbers), :mod:`~symsel.distributions.masses`
  (pmf, CDF), :mod:`~symsel.distributions.utility` (expected quantile, success probability, tail bound) and
  :mod:`~symsel.distributions.sampling` (draws of ``K``);
* :mod:`~symsel.distributions.families` -- the named families (point, truncated negative binomial and its
  logarithmic/geometric cases, Poisson, binomial, negative binomial, beta-binomial, two-point);
* :mod:`~symsel.distributions.combinators` -- truncation, mixtures, compounds;
* :mod:`~symsel.distributions.user` -- user PGFs and pmfs, and the checks that they are laws;
* :mod:`~symsel.distributions.recognize` -- recognition of the known families from any PGF;
* :mod:`~symsel.distributions.params` and :mod:`~symsel.distributions.expressions` -- checked user numbers and
  SymPy helpers.
"""

from __future__ import annotations

from collections.abc import Callable

from symsel.distributions.combinators import TRUNCATION_MAX_K, compound, mixture, truncated
from symsel.distributions.core import DEFAULT_DPS, FAMILY_PARAMETERS, Distribution, Family
from symsel.distributions.expressions import k, z
from symsel.distributions.families import (
    TNB_MAX_ETA,
    beta_binomial,
    binomial,
    geometric,
    logarithmic,
    negative_binomial,
    point,
    poisson,
    tnb,
    two_point,
)
from symsel.distributions.params import Number, exact_number
from symsel.distributions.recognize import family_pgf, recognize_family
from symsel.distributions.user import from_pgf, from_pmf, validate_pgf

FAMILIES: dict[str, Callable[..., Distribution]] = {
    "point": point,
    "tnb": tnb,
    "logarithmic": logarithmic,
    "geometric": geometric,
    "poisson": poisson,
    "binomial": binomial,
    "negative_binomial": negative_binomial,
    "beta_binomial": beta_binomial,
    "two_point": two_point,
    "truncated": truncated,
    "mixture": mixture,
    "compound": compound,
}
"""Distribution families by spec name (``pgf`` and ``pmf`` are handled by :mod:`symsel.spec`)."""

__all__ = [
    "DEFAULT_DPS",
    "FAMILIES",
    "FAMILY_PARAMETERS",
    "TNB_MAX_ETA",
    "TRUNCATION_MAX_K",
    "Distribution",
    "Family",
    "Number",
    "beta_binomial",
    "binomial",
    "compound",
    "exact_number",
    "family_pgf",
    "from_pgf",
    "from_pmf",
    "geometric",
    "k",
    "logarithmic",
    "mixture",
    "negative_binomial",
    "point",
    "poisson",
    "recognize_family",
    "tnb",
    "truncated",
    "two_point",
    "validate_pgf",
    "z",
]
