"""The :class:`Distribution` of the number of runs ``K``, held as one symbolic probability generating function,
and the :class:`Family` record of the known families.

A :class:`Distribution` is an immutable value: a SymPy expression ``phi(z) = E[z^K]`` whose free
symbols other than ``z`` are named parameters, together with their values. Everything else about
``K`` -- its derivative ``phi'``, mean, variance, pmf, CDF, the utility quantities of
Papernot & Steinke (ICLR 2022) Section 3.6 / eq. (8) and Appendix A.2.1, a Chernoff tail bound and a
sampler -- is derived from ``phi``. A new law of ``K`` is one PGF; nothing else needs to change
for the bounds of :mod:`symsel.bounds` to apply to it.

The class body holds the law itself: the PGF and its symbolic derivative, the parameters, the spec string, the
recognized family and the moments. The rest is mixed in, one idea per module:

* :mod:`~symsel.distributions.evaluation` -- ``phi`` and ``phi'`` as numbers (float64 vectorized, mpmath at a
  requested precision);
* :mod:`~symsel.distributions.masses` -- ``P[K = 0]``, pmf and CDF (exact, mpmath, float64);
* :mod:`~symsel.distributions.utility` -- expected quantile, success probability, Chernoff tail bound;
* :mod:`~symsel.distributions.sampling` -- draws of ``K``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import mpmath
import numpy as np
import sympy

from symsel.distributions.evaluation import EvaluationMixin
from symsel.distributions.expressions import DEFAULT_DPS, _derivative_at_one, _diff, _evaluate, _simplify
from symsel.distributions.masses import MassesMixin
from symsel.distributions.params import _plain
from symsel.distributions.sampling import SamplingMixin
from symsel.distributions.utility import FINITE_SUM_MAX_TERMS, UtilityMixin
from symsel.errors import ParameterError
from symsel.rendering import renderer

__all__ = [
    "DEFAULT_DPS",
    "FAMILY_PARAMETERS",
    "FINITE_SUM_MAX_TERMS",
    "MAX_MEAN",
    "Distribution",
    "Family",
    "require_finite_mean",
]

FAMILY_PARAMETERS: dict[str, tuple[str, ...]] = {
    "point": ("k",),
    "tnb": ("eta", "gamma"),
    "binomial": ("n", "p"),
    "poisson": ("mu",),
}
"""The families that papers give closed forms for, and their parameters (:class:`Family`)."""


@dataclass(frozen=True)
class Family:
    """A known family of laws of ``K``, with exact parameter values.

    * ``point``: ``phi(z) = z^k`` (``k`` fixed runs);
    * ``tnb``: the truncated negative binomial ``D_{eta,gamma}`` of Papernot & Steinke, Definition 1
      (``eta = 0`` logarithmic, ``eta = 1`` geometric);
    * ``binomial``: ``(1 - p + p z)^n`` with ``0 < p < 1`` (``p = 1`` is the point mass ``k = n``);
    * ``poisson``: ``exp(mu (z - 1))``.

    Attributes:
        name: one of :data:`FAMILY_PARAMETERS`.
        params: parameter name -> exact SymPy number.
    """

    name: str
    params: Mapping[str, sympy.Expr]

    def __post_init__(self) -> None:
        if self.name not in FAMILY_PARAMETERS:
            raise ParameterError("name", self.name, "one of " + ", ".join(FAMILY_PARAMETERS), "Family")
        if tuple(self.params) != FAMILY_PARAMETERS[self.name]:
            raise ParameterError(
                "params", list(self.params), f"exactly {', '.join(FAMILY_PARAMETERS[self.name])}", "Family"
            )
        object.__setattr__(self, "params", {n: sympy.sympify(v) for n, v in self.params.items()})

    def __hash__(self) -> int:
        return hash((self.name, tuple(self.params.items())))

    def floats(self) -> dict[str, float]:
        """The parameters as floats."""
        return {n: float(v) for n, v in self.params.items()}


#: the largest E[K] accepted: bounds multiply by m in float64 (1e300 leaves room for m delta_Q, m e^eps).
MAX_MEAN = 1e300


def require_finite_mean(mean: Any, where: str) -> float:
    """``mean`` as a float, or a :class:`ParameterError` naming the mean the parameters imply when it is not below
    :data:`MAX_MEAN`: every bound scales with ``m = E[K]`` in float64."""
    if not mean < MAX_MEAN:
        raise ParameterError("mean", float(mean), f"E[K] < {MAX_MEAN:g} (implied by the parameters given)", where)
    return float(mean)


@dataclass(frozen=True, eq=False)
class Distribution(EvaluationMixin, MassesMixin, UtilityMixin, SamplingMixin):
    """The law of the number of runs ``K``, held as its PGF ``phi(z) = E[z^K]``.

    Attributes:
        name: family name, as used in spec strings.
        pgf_symbolic: ``phi`` as a SymPy expression in ``z`` and the parameter symbols.
        values: the parameter symbols and their exact values.
        pmf_symbolic: optional closed form of ``P[K = k]`` in the symbol ``k`` (and parameters),
            valid for ``k >= support_min``; below ``support_min`` the pmf is 0.
        support_min: the smallest ``k`` with positive mass, when known (0 otherwise).
        support_max: the largest possible ``k`` (``None`` when unbounded).
        sampler: optional fast sampler ``(rng, size) -> ndarray``; otherwise inverse-CDF sampling.
        label: the spec string of the distribution.
        moments_closed: optional known closed forms ``(mean, variance)`` in the parameters, for
            families whose PGF is too large for SymPy to simplify quickly (the tests check them
            against brute-force sums of the pmf).
        stable_form: optional expression equal to ``pgf_symbolic`` written with ``expm1``/``log1p``
            so that numeric evaluation does not cancel (used by the truncated negative binomial
            for ``eta`` near 0).
        known_family: the :class:`Family` when the constructor knows it (a fast path for
            :attr:`family`; user PGFs leave it ``None`` and are recognized from the PGF).
    """

    name: str
    pgf_symbolic: sympy.Expr
    values: Mapping[sympy.Symbol, sympy.Expr] = field(default_factory=dict)
    pmf_symbolic: sympy.Expr | None = None
    support_min: int = 0
    support_max: int | None = None
    sampler: Callable[[np.random.Generator, int], np.ndarray] | None = field(default=None, repr=False)
    label: str | None = None
    moments_closed: tuple[sympy.Expr, sympy.Expr] | None = None
    stable_form: sympy.Expr | None = field(default=None, repr=False)
    truncation_of: tuple[Distribution, int] | None = field(default=None, repr=False)
    log_dpgf_form: sympy.Expr | None = field(default=None, repr=False)
    known_family: Family | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        """A named family whose mean overflows float64 (``geometric(gamma=1e-320)``, ``binomial(10**400, 1/2)``)
        is refused here (user PGFs: :func:`symsel.distributions.user.validate_pgf`; compounds: their constructor)."""
        if self.known_family is not None:
            self.__dict__["mean"] = require_finite_mean(self.mean_mp(DEFAULT_DPS), self.name)  # the cached mean

    def __getstate__(self) -> dict[str, Any]:
        """The fields only: what is cached (compiled ``φ'`` functions, masses, moments) is computed again on use, so
        a law pickles (Dask, multiprocessing) whatever it has cached."""
        return {name: self.__dict__[name] for name in self.__dataclass_fields__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    @cached_property
    def family(self) -> Family | None:
        """The known family this law belongs to (point, truncated negative binomial, binomial,
        Poisson), recognized from the PGF itself (:func:`recognize_family`), so that a law typed as
        ``pgf(expr=...)``, ``pmf(...)``, a one-component mixture or a compound gets the same closed
        forms as the named constructor. ``None`` when no known family matches (always safe)."""
        if self.known_family is not None:
            return self.known_family
        from symsel.distributions.recognize import recognize_family

        return recognize_family(self)

    # ----------------------------------------------------------------- symbolic side
    @cached_property
    def pgf(self) -> sympy.Expr:
        """``phi(z)`` with the parameter values substituted (exact). The values are numbers, so replacing the
        symbols (``xreplace``) gives what ``subs`` does, on a 5000-term pmf in a fraction of its seconds."""
        return self.pgf_symbolic.xreplace(dict(self.values))

    @cached_property
    def dpgf_symbolic(self) -> sympy.Expr:
        """``phi'(z)``, symbolic in the parameters."""
        return _simplify(_diff(self.pgf_symbolic))

    @cached_property
    def dpgf(self) -> sympy.Expr:
        """``phi'(z)`` with the parameter values substituted (differentiated, not simplified:
        simplification can introduce removable singularities such as ``(z^6 + z)/z``)."""
        return _diff(self.pgf)

    @cached_property
    def mean_symbolic(self) -> sympy.Expr:
        """``E[K] = phi'(1)`` in simplified closed form."""
        if self.moments_closed is not None:
            return self.moments_closed[0]
        return _simplify(_derivative_at_one(self.pgf_symbolic, 1))

    @cached_property
    def variance_symbolic(self) -> sympy.Expr:
        """``Var[K] = phi''(1) + phi'(1) - phi'(1)^2`` in simplified closed form."""
        if self.moments_closed is not None:
            return self.moments_closed[1]
        d1 = _derivative_at_one(self.pgf_symbolic, 1)
        d2 = _derivative_at_one(self.pgf_symbolic, 2)
        return _simplify(d2 + d1 - d1**2)

    @property
    def parameters(self) -> dict[str, Any]:
        """Parameter names and values, as plain Python numbers."""
        return {str(s): _plain(v) for s, v in self.values.items()}

    @property
    def spec(self) -> str:
        """A spec string that rebuilds this distribution (when it is a named family)."""
        if self.label:
            return self.label
        args = ", ".join(f"{n}={v!r}" for n, v in self.parameters.items())
        return f"{self.name}({args})"

    def __repr__(self) -> str:
        return renderer().distribution_repr(self)

    def _repr_latex_(self) -> str:
        """Jupyter's ``text/latex`` display: ``φ(z)``, ``E[K]``, ``P[K = 0]``, the support and the spec
        (:func:`symsel.display.distribution_latex`, through :mod:`symsel.rendering`)."""
        return renderer().distribution_latex(self)

    # ----------------------------------------------------------------- moments
    def _number(self, expr: sympy.Expr) -> sympy.Expr:
        return expr.subs(self.values)

    @cached_property
    def mean(self) -> float:
        """``E[K]`` as a float."""
        return float(self.mean_mp(DEFAULT_DPS))

    @cached_property
    def variance(self) -> float:
        """``Var[K]`` as a float."""
        return float(self.variance_mp(DEFAULT_DPS))

    def variance_mp(self, dps: int = DEFAULT_DPS) -> mpmath.mpf:
        """``Var[K]`` at ``dps`` decimal digits."""
        if self.stable_form is not None:
            with mpmath.workdps(dps + self._guard_digits):
                d1, d2 = self._stable_derivative_at_one(1), self._stable_derivative_at_one(2)
                with mpmath.workdps(dps):
                    return +(d2 + d1 - d1**2)
        return _evaluate(self._number(self.variance_symbolic), dps, "variance", self.spec)

    def mean_mp(self, dps: int = DEFAULT_DPS) -> mpmath.mpf:
        """``E[K]`` at ``dps`` decimal digits."""
        if self.stable_form is not None:
            with mpmath.workdps(dps + self._guard_digits):
                value = self._stable_derivative_at_one(1)
            with mpmath.workdps(dps):
                return +value
        return _evaluate(self._number(self.mean_symbolic), dps, "mean", self.spec)
