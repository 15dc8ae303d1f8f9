"""The papers' worst cases and tight examples, by name, evaluated exactly.

Each :class:`Example` records the base mechanism's output pair (and score order), the law of the
number of runs ``K``, the ``delta`` of interest, the base mechanism's guarantee as a
:class:`~symsel.profiles.Profile` (what the upper bounds are computed from), the numbers the paper
states, and checks of the paper's claims against exact evaluation (:mod:`symsel.evidence.exact`, at 50 digits
by default).

Entries (``EXAMPLES``; :func:`get_example`):

* ``xiang-example-1``, ``xiang-example-1-approx`` -- Xiang, Wang & Wang, Section 3.2, Example 1
  and Appendix A.1: a pure 1-DP three-point pair, geometric ``K`` (``gamma = 1e-3``); exact 2.96
  vs the bound 3 (pure), 2.92 vs 3.11 at ``delta = 1e-5``.
* ``ps-fixed-k`` -- Papernot & Steinke, Appendix D.1, Proposition 17: ``k`` fixed runs of
  randomized response have ``D_inf = k eps``.
* ``ps-conditional`` -- Papernot & Steinke, Appendix D.2: conditional sampling (run until the
  output lands in ``S``) on a three-point pair; Rényi lower bound vs Corollary 16.
* ``ps-three-point`` -- Papernot & Steinke, Appendix D.3: three-point pair for which Lemma 7 is
  tight up to low-order terms.
* ``liu-talwar`` -- geometric ``K`` and a pure ``eps``-DP base: the worst case approaches
  ``3 eps`` (Liu & Talwar; Papernot & Steinke Corollary 3 with ``eta = 1``).
* ``rnm``, ``rnm-monotone`` -- Report Noisy Max with Gaussian noise over ``m = 3`` queries
  (Koskela, Redberg & Wang, Section 3, Theorem 3.2 and Figure 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import mpmath
import sympy

from symsel import distributions as dists
from symsel.errors import ParameterError
from symsel.evidence.exact import epsilon_for_delta, renyi, selection_laws
from symsel.numeric import bisect_last_feasible
from symsel.pairs.finite import FinitePair
from symsel.profiles import GaussianProfile, PairProfile, Profile, pure

DEFAULT_DPS = 50


@dataclass(frozen=True)
class PaperCheck:
    """One claim of a paper about an example, checked against exact evaluation.

    ``quantity`` is ``"epsilon"`` (two-sided ``eps`` at the example's ``delta``), ``"renyi"``
    (``D_order(A || A')``, one direction, as the papers state it) or ``"renyi-inf"``;
    ``relation`` is ``"<="``, ``">="`` or ``"~="`` (equal after rounding to ``digits`` decimals,
    or, with ``truncate=True``, after truncation -- the way the paper reports it).
    """

    statement: str
    quantity: str
    relation: str
    value: float
    order: float | None = None
    digits: int = 2
    truncate: bool = False
    rel_tol: float | None = None

    def holds(self, exact: float) -> bool:
        if self.relation == "<=":
            return exact <= self.value + 1e-12
        if self.relation == ">=":
            return exact >= self.value - 1e-12
        if self.rel_tol is not None:
            return abs(exact - self.value) <= self.rel_tol * abs(self.value)
        scale = 10**self.digits
        shown = math.floor(exact * scale) / scale if self.truncate else round(exact, self.digits)
        return abs(shown - self.value) < 0.5 / scale


@dataclass(frozen=True)
class Example:
    """A named worst case.

    Attributes:
        name, description, source: identification (``source`` names paper and section).
        kind: ``"selection"`` (best of ``K`` runs), ``"conditional"`` (run until the output lies
            in ``params["S"]``) or ``"rnm"`` (Report Noisy Max).
        base_profile: the base mechanism's guarantee as a :class:`~symsel.profiles.Profile`
            (``pure(1.0)``, a :class:`~symsel.profiles.PairProfile` of the example's own pair, ...);
            for Report Noisy Max, the profile of one noisy query at the queries' sensitivity 1
            (``params["monotone"]`` says whether the queries move monotonically).
        delta: the ``delta`` at which the example is reported (0 for pure DP).
        pair: the base output pair with its score order (``None`` for RNM).
        dist: the law of ``K`` (``None`` unless ``kind == "selection"``).
        paper_exact: the exact value the paper states, when it states one.
        paper_bound: the paper's upper bound, when it states one.
        params: the example's parameters.
        checks: the paper's claims, checked by :meth:`verify`.
    """

    name: str
    description: str
    source: str
    kind: str
    base_profile: Profile | None
    delta: float
    pair: FinitePair | None = None
    dist: Any = None
    paper_exact: float | None = None
    paper_bound: float | None = None
    params: dict[str, Any] = field(default_factory=dict)
    checks: tuple[PaperCheck, ...] = ()
    _cache: dict[int, tuple[list, list]] = field(default_factory=dict, repr=False, compare=False)

    # ---------------------------------------------------------------- exact output laws
    def laws(self, dps: int = DEFAULT_DPS) -> tuple[list[mpmath.mpf], list[mpmath.mpf]]:
        """The exact output laws ``(A, A')`` on the two neighbouring inputs, at ``dps`` digits
        (memoized per ``dps``)."""
        if dps not in self._cache:
            self._cache[dps] = self._laws(dps)
        return self._cache[dps]

    def _laws(self, dps: int) -> tuple[list[mpmath.mpf], list[mpmath.mpf]]:
        if self.kind == "selection":
            return selection_laws(cast(FinitePair, self.pair), self.dist, dps)
        if self.kind == "conditional":
            return conditional_laws(cast(FinitePair, self.pair), self.params["S"], dps)
        if self.kind == "rnm":
            return (report_noisy_max_law(self.params["values_x"], self.params["sigma"], dps),
                    report_noisy_max_law(self.params["values_x_prime"], self.params["sigma"], dps))
        raise ParameterError("kind", self.kind, "selection, conditional or rnm", self.name)

    def exact_epsilon_mp(self, dps: int = DEFAULT_DPS, delta: float | None = None) -> mpmath.mpf:
        """Exact two-sided ``eps(delta)`` (``delta`` defaults to the example's)."""
        a, b = self.laws(dps + 10)
        return epsilon_for_delta(a, b, self.delta if delta is None else delta, dps)

    def exact_epsilon(self, dps: int = DEFAULT_DPS, delta: float | None = None) -> float:
        """:meth:`exact_epsilon_mp` as a float."""
        return float(self.exact_epsilon_mp(dps, delta))

    def exact_renyi(self, order: Any, dps: int = DEFAULT_DPS, two_sided: bool = False) -> float:
        """Exact ``D_order(A || A')`` (``two_sided``: the max with ``D_order(A' || A)``)."""
        a, b = self.laws(dps + 10)
        value = renyi(a, b, order, dps)
        if two_sided:
            value = max(value, renyi(b, a, order, dps))
        return float(value)

    def verify(self, dps: int = DEFAULT_DPS) -> list[tuple[PaperCheck, float, bool]]:
        """Evaluate every paper claim exactly: ``(check, exact value, holds)``."""
        out = []
        for check in self.checks:
            if check.quantity == "epsilon":
                value = self.exact_epsilon(dps)
            elif check.quantity == "renyi":
                value = self.exact_renyi(check.order, dps)
            elif check.quantity == "renyi-inf":
                value = self.exact_renyi(math.inf, dps)
            else:  # pragma: no cover - registry entries use the three quantities above
                raise ParameterError("quantity", check.quantity, "epsilon, renyi or renyi-inf", self.name)
            out.append((check, value, check.holds(value)))
        return out


# --------------------------------------------------------------------- other exact laws
def conditional_laws(pair: FinitePair, subset: Sequence[int], dps: int = DEFAULT_DPS) -> tuple[list, list]:
    """Laws of conditional sampling ``Q | Q in S`` on both sides (Papernot & Steinke, App. C):
    run the base mechanism until its output lies in ``S``."""
    s = sorted({int(i) for i in subset})
    if not s or s[0] < 0 or s[-1] >= pair.n:
        raise ParameterError("S", list(subset), f"a non-empty subset of 0..{pair.n - 1}", "conditional_laws")
    out = []
    for masses in (pair.p_mp(dps + 10), pair.q_mp(dps + 10)):
        with mpmath.workdps(dps + 10):
            total = mpmath.fsum(masses[i] for i in s)
            if total == 0:
                raise ParameterError("S", s, "a set of positive probability on both sides", "conditional_laws")
            out.append([masses[i] / total for i in s])
    return out[0], out[1]


def report_noisy_max_law(values: Sequence[float], sigma: float, dps: int = DEFAULT_DPS) -> list[mpmath.mpf]:
    """Law of ``argmax_i values_i + Z_i`` with ``Z_i ~ N(0, sigma^2)`` i.i.d. (Koskela et al.,
    eq. (3.1)): ``P[i] = int npdf(z) prod_{j != i} ncdf(z + (v_i - v_j)/sigma) dz``, by tanh-sinh
    quadrature at ``dps + 15`` digits (ties have probability 0). Queries with equal values share
    one integral, and the largest group gets the complement to 1."""
    vals = [float(v) for v in values]
    if len(vals) < 2 or not all(math.isfinite(v) for v in vals):
        raise ParameterError("values", vals, "at least two finite query values", "report_noisy_max_law")
    if isinstance(sigma, bool) or not (isinstance(sigma, int | float) and 0 < sigma < math.inf):
        raise ParameterError("sigma", sigma, "sigma > 0", "report_noisy_max_law")
    groups: dict[float, list[int]] = {}
    for i, val in enumerate(vals):
        groups.setdefault(val, []).append(i)
    ordered = sorted(groups, key=lambda v: (-len(groups[v]), v))
    with mpmath.workdps(dps + 15):
        s = mpmath.mpf(repr(float(sigma)))
        v = {x: mpmath.mpf(repr(x)) for x in groups}
        per_member: dict[float, mpmath.mpf] = {}
        for value in ordered[1:]:
            shifts = [(v[value] - v[other]) / s for j, other in enumerate(vals) if j != groups[value][0]]

            def integrand(z: mpmath.mpf, shifts: list = shifts) -> mpmath.mpf:
                out = mpmath.npdf(z)
                for d in shifts:
                    out *= mpmath.ncdf(z + d)
                return out

            per_member[value] = mpmath.quad(integrand, [-mpmath.inf, -4, 0, 4, mpmath.inf])
        rest = 1 - mpmath.fsum(per_member[x] * len(groups[x]) for x in ordered[1:])
        per_member[ordered[0]] = rest / len(groups[ordered[0]])
        law = [per_member[x] for x in vals]
    with mpmath.workdps(dps):
        return [+p for p in law]


def gaussian_rnm_bound(m: int, mu: float, delta: float, dps: int = 30) -> float:
    """The ``eps`` at which Koskela et al.'s Theorem 3.2 bound ``m * delta_G(eps)`` equals ``delta``,
    with ``delta_G(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)`` the Gaussian profile
    (bisection on the decreasing profile; the returned end point errs high, as a bound must)."""
    with mpmath.workdps(dps):
        mu_, d = mpmath.mpf(repr(float(mu))), mpmath.mpf(repr(float(delta)))

        def excess(e: mpmath.mpf) -> mpmath.mpf:
            return m * (mpmath.ncdf(-e / mu_ + mu_ / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu_ - mu_ / 2)) - d

        if excess(0) <= 0:
            return 0.0
        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        while excess(hi) > 0:
            lo, hi = hi, 2 * hi
        return float(bisect_last_feasible(excess, lo, hi, mpmath.mpf(2) ** -190 * hi, max_steps=200))


# --------------------------------------------------------------------- registry entries
def _pair_profile(pair: FinitePair) -> PairProfile:
    """The two-sided profile of an example's own finite pair (float masses, renormalized to sum to 1)."""
    p, q = [float(x) for x in pair.p_float], [float(x) for x in pair.q_float]
    return PairProfile(p, q)


def _xiang_pair() -> FinitePair:
    e, b, d = sympy.E, sympy.Rational(1, 1000), 100
    return FinitePair([1 - b * e - d * b, b * e, d * b], [1 - b - d * b * e, b, d * b * e],
                      order=[0, 1, 2], label="Xiang et al. eq. (6): outcomes A, B, C")


def _xiang_example_1() -> Example:
    return Example(
        name="xiang-example-1",
        description="Three-point (1, 0)-DP pair (A, B, C) with b = 1e-3, d = 100, score C > B > A, "
                    "geometric K with gamma = 1e-3 (TNB eta = 1): the selection is 2.96-DP against the "
                    "bound 3 = (2 + eta) eps.",
        source="Xiang, Wang & Wang, Section 3.2, Example 1, eqs. (6)-(8)",
        kind="selection", base_profile=pure(1.0), delta=0.0,
        pair=_xiang_pair(), dist=dists.geometric(gamma=sympy.Rational(1, 1000)),
        paper_exact=2.96, paper_bound=3.0,
        params={"b": 1e-3, "d": 100, "eps": 1.0, "gamma": 1e-3},
        checks=(
            PaperCheck("the selection is (2.96, 0)-DP", "epsilon", "~=", 2.96, digits=2),
            PaperCheck("below the pure-DP bound (2 + eta) eps = 3", "epsilon", "<=", 3.0),
            PaperCheck("output law: Pr[B | H] = 2.60e-4 (one-sided D_inf = log(2.60e-4 / 1.34e-5))",
                       "renyi-inf", "~=", 2.96, digits=2),
        ),
    )


def _xiang_example_1_approx() -> Example:
    return Example(
        name="xiang-example-1-approx",
        description="The pair of Example 1 read as a (1, 1e-5)-DP base: the selection is (2.92, 1e-5)-DP "
                    "(exact 2.9253..., which the paper truncates to 2.92) while the Rényi route of "
                    "Papernot & Steinke (Thm 2, converted to (eps, delta)) gives 3.11.",
        source="Xiang, Wang & Wang, Appendix A.1 ('Tight example for approximate DP')",
        kind="selection", base_profile=pure(1.0), delta=1e-5,
        pair=_xiang_pair(), dist=dists.geometric(gamma=sympy.Rational(1, 1000)),
        paper_exact=2.92, paper_bound=3.11,
        params={"b": 1e-3, "d": 100, "eps": 1.0, "gamma": 1e-3, "paper_bound_method": "Papernot-Steinke Thm 2 (RDP)"},
        checks=(
            PaperCheck("the selection is (2.92, 1e-5)-DP (truncated to 2 decimals)", "epsilon", "~=", 2.92,
                       digits=2, truncate=True),
            PaperCheck("below the Rényi-route bound 3.11", "epsilon", "<=", 3.11),
        ),
    )


def _ps_fixed_k(k: int = 3, eps: float = 1.0) -> Example:
    e = sympy.exp(sympy.nsimplify(eps))
    pair = FinitePair([1 / (1 + e), e / (1 + e)], [e / (1 + e), 1 / (1 + e)], order=[1, 0],
                      label="randomized response; outcome 1 (index 0) preferred")
    lower = {lam: k * eps - k * math.log1p(math.exp(-eps)) / (lam - 1) for lam in (2, 4, 10)}
    return Example(
        name="ps-fixed-k",
        description=f"k = {k} fixed runs of randomized response with eps = {eps}, the order preferring the "
                    "first outcome: A is not eps'-DP for eps' < k eps, and D_lambda(A||A') >= "
                    "k eps - k log(1 + e^-eps)/(lambda - 1). (The last line of the paper's proof writes "
                    "log(1 + e^eps), a weaker bound; the proposition's statement is the sharper one.)",
        source="Papernot & Steinke, Appendix D.1, Proposition 17",
        kind="selection", base_profile=pure(float(eps)), delta=0.0,
        pair=pair, dist=dists.point(k), paper_exact=float(k * eps), paper_bound=float(k * eps),
        params={"k": k, "eps": eps, "renyi_lower": lower},
        checks=(
            PaperCheck("D_inf(A||A') = k eps", "renyi-inf", "~=", k * eps, rel_tol=1e-30),
            PaperCheck("the selection is exactly (k eps, 0)-DP", "epsilon", "~=", k * eps, rel_tol=1e-30),
            *(PaperCheck(f"D_{lam}(A||A') >= k eps - k log(1+e^-eps)/({lam}-1)", "renyi", ">=", v, order=lam)
              for lam, v in lower.items()),
        ),
    )


def _ps_conditional(lam: float = 4.0, a: float = 0.01, level: float = 0.1) -> Example:
    """Papernot & Steinke's Figure 8 calibration: ``s, t`` solve
    ``D_lam(Q||Q') = D_lam(Q'||Q) = level * lam`` for the given ``a``."""
    with mpmath.workdps(60):
        am = mpmath.mpf(repr(a))

        def masses(s: mpmath.mpf, t: mpmath.mpf) -> tuple[list, list]:
            q = [am * mpmath.exp(-s), am * mpmath.exp(-s), 1 - 2 * am * mpmath.exp(-s)]
            qp = [am * mpmath.exp(-s - t), am, 1 - am - am * mpmath.exp(-s - t)]
            return q, qp

        def equations(s: mpmath.mpf, t: mpmath.mpf) -> list:
            q, qp = masses(s, t)
            return [renyi(q, qp, lam, 60) - level * lam, renyi(qp, q, lam, 60) - level * lam]

        s, t = mpmath.findroot(equations, (mpmath.mpf(1), mpmath.mpf(1)))
        q, qp = masses(s, t)
        q_s = q[0] + q[1]
        upper16 = (renyi(q, qp, lam, 60) + (lam - 2) / (lam - 1) * renyi(qp, q, lam - 1, 60)
                   + 2 / (lam - 1) * mpmath.log(1 / q_s))
        lower_d2 = s + t - lam * mpmath.log(2) / (lam - 1)
        dinf_bound = renyi(q, qp, math.inf, 60) + renyi(qp, q, math.inf, 60)
    pair = FinitePair(q, qp, label="Papernot-Steinke D.2 three-point pair")
    return Example(
        name="ps-conditional",
        description=f"Conditional sampling on S = {{1, 2}} of the pair Q = (a e^-s, a e^-s, 1 - 2a e^-s), "
                    f"Q' = (a e^-s-t, a, 1 - a - a e^-s-t) with a = {a} and s, t chosen as in Figure 8 "
                    f"(D_lambda(Q||Q') = D_lambda(Q'||Q) = {level} lambda at lambda = {lam}): the exact "
                    "D_lambda(Q_S||Q'_S) lies between the paper's lower bound s + t - lambda log 2/(lambda-1) "
                    "and Corollary 16's upper bound.",
        source="Papernot & Steinke, Appendix D.2 (tight example for conditional sampling), Corollary 16",
        kind="conditional", base_profile=_pair_profile(pair),
        delta=0.0, pair=pair, dist=None, paper_exact=None, paper_bound=float(upper16),
        params={"S": (0, 1), "a": a, "s": float(s), "t": float(t), "order": lam, "level": level},
        checks=(
            PaperCheck("D_lambda(Q_S||Q'_S) >= s + t - lambda log 2 / (lambda - 1)", "renyi", ">=",
                       float(lower_d2), order=lam),
            PaperCheck("Corollary 16 (second inequality) upper bound", "renyi", "<=", float(upper16), order=lam),
            PaperCheck("Corollary 16 (first inequality): D_inf(Q_S||Q'_S) <= D_inf(Q||Q') + D_inf(Q'||Q)",
                       "renyi-inf", "<=", float(dinf_bound)),
        ),
    )


def _ps_three_point() -> Example:
    b, c, bp, cp = sympy.Rational(1, 10**3), sympy.Rational(9, 10), sympy.Rational(1, 10**8), sympy.Rational(1, 10)
    lam, mean = 2, 10
    dist = dists.poisson(mean)
    pair = FinitePair([1 - b - c, b, c], [1 - bp - cp, bp, cp], order=[2, 1, 0],
                      label="Papernot-Steinke D.3: order prefers the first outcome, then the second")
    with mpmath.workdps(60):
        d_q = renyi(pair.p, pair.q, lam, 60)
        f1 = [dist.dphi_mp(float(x), 60) for x in (c, cp)]
        first_order = d_q + mpmath.log(f1[0] ** lam * f1[1] ** (1 - lam)) / (lam - 1)
    return Example(
        name="ps-three-point",
        description="Three-point pair Q = (1-b-c, b, c), Q' = (1-b'-c', b', c') with b = 1e-3, c = 0.9, "
                    "b' = 1e-8, c' = 0.1, Poisson K with mean 10, order preferring the first outcome: "
                    "D_2(A||A') is close to Lemma 7 evaluated at the post-processing (q, q') = (c, c'), "
                    "i.e. Lemma 7 is tight up to low-order terms.",
        source="Papernot & Steinke, Appendix D.3 (tightness of the generic result, Lemma 7)",
        kind="selection", base_profile=_pair_profile(pair),
        delta=0.0, pair=pair, dist=dist, paper_exact=None, paper_bound=None,
        params={"b": 1e-3, "c": 0.9, "b_prime": 1e-8, "c_prime": 0.1, "mean": mean, "order": lam,
                "lemma7_at_c": float(first_order)},
        checks=(
            PaperCheck("D_2(A||A') ~ D_2(Q||Q') + log(f'(c)^2 f'(c')^-1) (within 1%)", "renyi", "~=",
                       float(first_order), order=lam, rel_tol=0.01),
        ),
    )


def _liu_talwar(eps: float = 1.0, b: float = 1e-6, d: float = 1e4, gamma: float = 1e-6) -> Example:
    e = sympy.exp(sympy.nsimplify(eps))
    bb, dd = sympy.nsimplify(b), sympy.nsimplify(d)
    pair = FinitePair([1 - bb * e - dd * bb, bb * e, dd * bb], [1 - bb - dd * bb * e, bb, dd * bb * e],
                      order=[0, 1, 2], label="pure-DP three-point pair (Xiang et al. eq. (6) shape)")
    return Example(
        name="liu-talwar",
        description=f"Geometric K (gamma = {gamma:g}) and a pure {eps}-DP three-point base (b = {b:g}, d = {d:g}, "
                    "score C > B > A): the selection's exact eps approaches, and stays below, Liu & Talwar's 3 eps.",
        source="Liu & Talwar (STOC 2019); Papernot & Steinke Corollary 3 with eta = 1; construction of "
               "Xiang et al. Example 1",
        kind="selection", base_profile=pure(float(eps)), delta=0.0,
        pair=pair, dist=dists.geometric(gamma=sympy.nsimplify(gamma)), paper_exact=None, paper_bound=3 * eps,
        params={"eps": eps, "b": b, "d": d, "gamma": gamma},
        checks=(
            PaperCheck("below the Liu-Talwar bound 3 eps", "epsilon", "<=", 3 * eps),
            PaperCheck("within 1% of 3 eps", "epsilon", ">=", 0.99 * 3 * eps),
        ),
    )


def _rnm(monotone: bool = False, sigma: float = 4.0, delta: float = 1e-6) -> Example:
    x = (1.0, 0.0, 0.0)
    xp = (1.0, 1.0, 1.0) if monotone else (0.0, 1.0, 1.0)
    sens = 1.0 if monotone else 2.0
    kind = "monotone: every query moves up by at most 1" if monotone else "query 1 down by 1, the others up by 1"
    bound = gaussian_rnm_bound(3, sens / sigma, delta)
    return Example(
        name="rnm-monotone" if monotone else "rnm",
        description=f"Report Noisy Max over m = 3 sensitivity-1 queries with N(0, {sigma}^2) noise; values "
                    f"{x} on X and {xp} on X' ({kind}). Theorem 3.2 bounds H_e^eps by 3 delta(eps) of the "
                    f"Gaussian mechanism with sensitivity {sens:g}.",
        source="Koskela, Redberg & Wang, Section 3, eq. (3.1), Theorem 3.2, Figure 1 (sigma = 4, delta = 1e-6)",
        kind="rnm", base_profile=GaussianProfile(sigma, 1.0), delta=delta,
        paper_bound=bound,
        params={"values_x": x, "values_x_prime": xp, "sigma": sigma, "m": 3, "monotone": monotone,
                "sensitivity": sens},
        checks=(PaperCheck(f"Theorem 3.2: below the eps of 3 delta_G(eps) (sensitivity {sens:g})", "epsilon",
                           "<=", bound),),
    )


EXAMPLES: dict[str, Callable[[], Example]] = {
    "xiang-example-1": _xiang_example_1,
    "xiang-example-1-approx": _xiang_example_1_approx,
    "ps-fixed-k": _ps_fixed_k,
    "ps-conditional": _ps_conditional,
    "ps-three-point": _ps_three_point,
    "liu-talwar": _liu_talwar,
    "rnm": _rnm,
    "rnm-monotone": lambda: _rnm(monotone=True),
}
"""Example constructors by name (built on demand)."""


def get_example(name: str) -> Example:
    """The example called ``name`` (see :data:`EXAMPLES`)."""
    if name not in EXAMPLES:
        raise ParameterError("name", name, f"one of {', '.join(EXAMPLES)}", "get_example")
    return EXAMPLES[name]()


def list_examples() -> list[str]:
    """Names of the registered examples."""
    return list(EXAMPLES)
