"""symsel: symbolic-plus-numeric privacy accounting of private selection.

Private selection runs a differentially private base mechanism a random number ``K`` of times and
releases the best run. symsel holds the law of ``K`` as a SymPy probability generating function,
and turns it into certified bounds on the privacy profile of the selection (Koskela, Redberg and
Wang, ICML 2024, Theorem 4.1) next to the Renyi-DP route of Papernot and Steinke (ICLR 2022).
"""

from symsel.distributions import (
    Distribution,
    beta_binomial,
    binomial,
    compound,
    from_pgf,
    from_pmf,
    geometric,
    logarithmic,
    mixture,
    negative_binomial,
    point,
    poisson,
    tnb,
    truncated,
    two_point,
)
from symsel.errors import NotApplicableError, ParameterError, SpecError, SymselError
from symsel.spec import parse_distribution, parse_expression

__all__ = [
    "Distribution",
    "NotApplicableError",
    "ParameterError",
    "SpecError",
    "SymselError",
    "beta_binomial",
    "binomial",
    "compound",
    "from_pgf",
    "from_pmf",
    "geometric",
    "logarithmic",
    "mixture",
    "negative_binomial",
    "parse_distribution",
    "parse_expression",
    "point",
    "poisson",
    "tnb",
    "truncated",
    "two_point",
]
