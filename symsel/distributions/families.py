"""The named families of laws of ``K`` (Papernot & Steinke; Koskela et al.; Xiang et al.), each one PGF."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import mpmath
import numpy as np
import sympy
from sympy.codegen.cfunctions import expm1, log1p

from symsel.distributions.core import Distribution, Family
from symsel.distributions.expressions import k, z
from symsel.distributions.params import Number, _check, _plain, _symbols, exact_number
from symsel.errors import ParameterError

#: the most runs of a fixed-count law (E[K] up to 1e9 answers in seconds).
POINT_MAX_K = 10**9


# ----------------------------------------------------------------------------- samplers
# Module-level functions bound with functools.partial (not closures), so that a law pickles (Dask, multiprocessing).
def _sample_point(k: int, rng: np.random.Generator, n: int) -> np.ndarray:
    return np.full(n, k)


def _sample_tnb(eta: float, gamma: float, rng: np.random.Generator, n: int) -> np.ndarray:
    """The truncated negative binomial for ``eta >= 0``: logarithmic, geometric, or a negative binomial conditioned
    on ``K != 0`` by rejection."""
    if eta == 0:
        return rng.logseries(1 - gamma, n)
    if eta == 1:
        return rng.geometric(gamma, n)
    out = np.empty(0, dtype=np.int64)
    while out.size < n:
        draw = rng.negative_binomial(eta, gamma, max(2 * (n - out.size), 16))
        out = np.concatenate([out, draw[draw > 0]])
    return out[:n]


def _sample_poisson(mean: float, rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.poisson(mean, n)


def _sample_binomial(trials: int, p: float, rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.binomial(trials, p, n)


def _sample_negative_binomial(eta: float, gamma: float, rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.negative_binomial(eta, gamma, n)


def _sample_beta_binomial(trials: int, a: float, b: float, rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.binomial(trials, rng.beta(a, b, n))


def _sample_two_point(top: int, s: float, rng: np.random.Generator, n: int) -> np.ndarray:
    return np.where(rng.random(n) < s, 1, top)


def point(k: int) -> Distribution:
    """A fixed number ``k >= 1`` of runs: ``phi(z) = z^k`` (naive repetition)."""
    kk = exact_number(k, "k", "point")
    _check(kk.is_integer and 1 <= kk <= POINT_MAX_K, "k", k, f"an integer 1 <= k <= {POINT_MAX_K:.0e}", "point")
    kk_int = int(kk)
    ks = sympy.Symbol("k_runs", positive=True, integer=True)
    return Distribution(
        "point",
        z**ks,
        {ks: sympy.Integer(kk_int)},
        sympy.KroneckerDelta(k, ks),
        support_min=kk_int,
        support_max=kk_int,
        sampler=partial(_sample_point, kk_int),
        label=f"point(k={kk_int})",
        known_family=Family("point", {"k": sympy.Integer(kk_int)}),
    )


def _tnb_mean_expr(eta: sympy.Expr, gamma: sympy.Expr) -> sympy.Expr:
    if eta == 0:
        return (1 / gamma - 1) / sympy.log(1 / gamma)
    return eta * (1 - gamma) / (gamma * (1 - gamma**eta))


def _solve_gamma_for_mean(eta: sympy.Expr, mean: sympy.Expr, where: str) -> sympy.Expr:
    """Solve ``E[K](eta, gamma) = mean`` for ``gamma`` at 60 digits. The mean decreases as ``gamma`` grows, so
    the root in ``x = log gamma`` is bracketed (the bracket doubled from ``[-1, -1e-30]``) and found by Newton's
    method on ``log E[K]`` kept inside the bracket (a bisection step where Newton's would leave it), at 70 digits,
    until a step is below ``1e-66 |x|``; the answer is then moved to the side where the mean is at most ``mean``
    (the side a bisection keeps). About 8 steps where a bisection to the same accuracy took 260."""
    if eta == 1:
        return 1 / mean
    dps = 60
    with mpmath.workdps(dps + 10):
        e, target = mpmath.mpf(sympy.N(eta, dps + 10)), mpmath.mpf(sympy.N(mean, dps + 10))
        log_target = mpmath.log(target)

        def mean_at(log_gamma: mpmath.mpf) -> mpmath.mpf:
            one_minus_g = -mpmath.expm1(log_gamma)  # 1 - gamma without cancellation near gamma = 1
            if e == 0:
                return one_minus_g / (mpmath.exp(log_gamma) * -log_gamma)
            return e * one_minus_g / (mpmath.exp(log_gamma) * -mpmath.expm1(e * log_gamma))

        lo, hi = mpmath.mpf(-1), mpmath.mpf(-1e-30)
        while mean_at(lo) < target:
            lo *= 2
            if lo < -1e6:
                raise ParameterError("mean", _plain(mean), "a mean reachable by this family", where)
        if mean_at(hi) > target:
            raise ParameterError(
                "mean", _plain(mean), f"mean > {float(mean_at(hi)):.6g} (the limit as gamma -> 1)", where
            )
        return sympy.Float(mpmath.exp(_newton_in_bracket(mean_at, e, log_target, lo, hi)), dps)


def _log_mean_slope(x: mpmath.mpf, e: mpmath.mpf) -> mpmath.mpf:
    """``d log E[K] / d log gamma`` of the TNB law at ``x = log gamma < 0``: ``-g/(1-g) - 1 + e g^e/(1-g^e)``
    (``-g/(1-g) - 1 - 1/x`` for ``e = 0``), with ``g = e^x``."""
    first = mpmath.exp(x) / mpmath.expm1(x)  # -g / (1 - g)
    if e == 0:
        return first - 1 - 1 / x
    return first - 1 - e * mpmath.exp(e * x) / mpmath.expm1(e * x)


def _newton_in_bracket(mean_at: Callable[[mpmath.mpf], mpmath.mpf], e: mpmath.mpf, log_target: mpmath.mpf,
                       lo: mpmath.mpf, hi: mpmath.mpf) -> mpmath.mpf:
    """The root of ``log mean_at(x) = log_target`` in ``[lo, hi]`` (``mean_at`` decreasing, above the target at
    ``lo``, at most it at ``hi``): safeguarded Newton at the working precision, then the point returned has
    ``mean_at <= target`` (the bracket's ``hi`` side)."""
    x = (lo + hi) / 2
    for _ in range(400):
        gap = mpmath.log(mean_at(x)) - log_target
        if gap > 0:
            lo = x
        else:
            hi = x
        step = gap / _log_mean_slope(x, e)
        if abs(step) <= abs(x) * mpmath.mpf(10) ** -66 or hi - lo <= abs(hi) * mpmath.mpf(10) ** -66:
            break
        x = x - step
        if not lo < x < hi:  # Newton would leave the bracket: bisect instead
            x = (lo + hi) / 2
    tiny = abs(x) * mpmath.mpf(10) ** -68
    for _ in range(64):  # to the side where the mean is at most the target (x grows: the mean falls)
        if mpmath.log(mean_at(x)) - log_target <= 0:
            return x
        x = min(x + tiny, hi)
        tiny *= 2
    return hi


#: the largest shape of a truncated negative binomial law (``gamma^-eta`` is held exactly).
TNB_MAX_ETA = 1000
#: below this |eta| (a subnormal float64) the float64 phi' is 0/0 and SymPy's simplification of gamma^-eta hangs.
TNB_MIN_ETA = 1e-300


def tnb(eta: Number, gamma: Number | None = None, mean: Number | None = None) -> Distribution:
    """Truncated negative binomial ``D_{eta,gamma}`` (Papernot & Steinke, Definition 1).

    ``phi(z) = ((1 - (1-gamma) z)^(-eta) - 1) / (gamma^(-eta) - 1)`` for ``eta != 0`` and
    ``log(1 - (1-gamma) z) / log(gamma)`` for ``eta = 0`` (logarithmic); ``eta = 1`` is geometric.
    Support ``{1, 2, ...}``. Give either ``gamma`` in (0, 1) or the ``mean`` (gamma is then
    solved for at 60 digits).
    """
    return _tnb(eta, gamma, mean, "tnb")


def _tnb(eta: Number, gamma: Number | None, mean: Number | None, where: str) -> Distribution:
    """:func:`tnb`, its errors naming ``where``: the family the user called (``geometric``, ``logarithmic``)."""
    e = exact_number(eta, "eta", where)
    _check(-1 < e <= TNB_MAX_ETA, "eta", eta, f"-1 < eta <= {TNB_MAX_ETA} (exact arithmetic on gamma^-eta)", where)
    _check(e == 0 or abs(e) >= TNB_MIN_ETA, "eta", eta,
           f"eta = 0 (logarithmic) or |eta| >= {TNB_MIN_ETA:g} (float64 evaluation of eta (1 - gamma))", where)
    if (gamma is None) == (mean is None):
        raise ParameterError("gamma", gamma, "exactly one of gamma or mean", where)
    if mean is not None:
        mu = exact_number(mean, "mean", where)
        _check(mu > 1, "mean", mean, "mean > 1", where)
        g = _solve_gamma_for_mean(e, mu, where)
    else:
        g = exact_number(gamma, "gamma", where)
        _check(0 < g < 1, "gamma", gamma, "0 < gamma < 1", where)
    eta_s, gamma_s = _symbols("eta", "gamma")
    stable = None
    if e == 0:
        pgf = sympy.log(1 - (1 - gamma_s) * z) / sympy.log(gamma_s)
        log_dpgf = sympy.log((1 - gamma_s) / -sympy.log(gamma_s)) - log1p(-(1 - gamma_s) * z)
        pmf = (1 - gamma_s) ** k / (k * sympy.log(1 / gamma_s))
        values = {gamma_s: g}
        name = "logarithmic"
    else:
        pgf = ((1 - (1 - gamma_s) * z) ** (-eta_s) - 1) / (gamma_s ** (-eta_s) - 1)
        stable = expm1(-eta_s * log1p(-(1 - gamma_s) * z)) / expm1(-eta_s * sympy.log(gamma_s))
        log_dpgf = sympy.log(eta_s * (1 - gamma_s) / expm1(-eta_s * sympy.log(gamma_s))) - (eta_s + 1) * log1p(
            -(1 - gamma_s) * z
        )
        pmf = sympy.binomial(k + eta_s - 1, k) * (1 - gamma_s) ** k / (gamma_s ** (-eta_s) - 1)
        values = {eta_s: e, gamma_s: g}
        name = "geometric" if e == 1 else "tnb"
    gf = float(g)
    ef = float(e)

    # The label keeps what the user gave (gamma, or the mean gamma was solved from).
    given = f"mean={_plain(exact_number(mean, 'mean', where))!r}" if mean is not None else f"gamma={_plain(g)!r}"
    label = f"tnb(eta={_plain(e)!r}, {given})" if name == "tnb" else f"{name}({given})"
    return Distribution(
        name,
        pgf,
        values,
        pmf,
        support_min=1,
        sampler=None if ef < 0 else partial(_sample_tnb, ef, gf),
        label=label,
        stable_form=stable,
        log_dpgf_form=log_dpgf,
        known_family=Family("tnb", {"eta": e, "gamma": g}),
    )


def logarithmic(gamma: Number | None = None, mean: Number | None = None) -> Distribution:
    """Logarithmic law: the truncated negative binomial with ``eta = 0``."""
    return _tnb(0, gamma, mean, "logarithmic")


def geometric(gamma: Number | None = None, mean: Number | None = None) -> Distribution:
    """Geometric law on ``{1, 2, ...}`` with success probability ``gamma`` (mean ``1/gamma``):
    the truncated negative binomial with ``eta = 1``."""
    return _tnb(1, gamma, mean, "geometric")


def poisson(mean: Number) -> Distribution:
    """Poisson law: ``phi(z) = exp(mean (z - 1))`` (Papernot & Steinke, Section 2.2)."""
    mu = exact_number(mean, "mean", "poisson")
    _check(mu > 0, "mean", mean, "mean > 0", "poisson")
    (mu_s,) = _symbols("mu")
    mf = float(mu)
    return Distribution(
        "poisson",
        sympy.exp(mu_s * (z - 1)),
        {mu_s: mu},
        sympy.exp(-mu_s) * mu_s**k / sympy.factorial(k),
        sampler=partial(_sample_poisson, mf),
        label=f"poisson(mean={_plain(mu)!r})",
        log_dpgf_form=sympy.log(mu_s) + mu_s * (z - 1),
        known_family=Family("poisson", {"mu": mu}),
    )


def binomial(n: int, p: Number) -> Distribution:
    """Binomial law ``Bin(n, p)``: ``phi(z) = (1 - p + p z)^n`` (Koskela et al., Section 5.2)."""
    nn = exact_number(n, "n", "binomial")
    _check(nn.is_integer and nn >= 1, "n", n, "an integer n >= 1", "binomial")
    pp = exact_number(p, "p", "binomial")
    _check(0 < pp <= 1, "p", p, "0 < p <= 1", "binomial")
    n_s = sympy.Symbol("n", positive=True, integer=True)
    (p_s,) = _symbols("p")
    ni, pf = int(nn), float(pp)
    return Distribution(
        "binomial",
        (1 - p_s + p_s * z) ** n_s,
        {n_s: nn, p_s: pp},
        sympy.binomial(n_s, k) * p_s**k * (1 - p_s) ** (n_s - k),
        support_max=ni,
        sampler=partial(_sample_binomial, ni, pf),
        label=f"binomial(n={ni}, p={_plain(pp)!r})",
        log_dpgf_form=sympy.log(n_s * p_s) + (n_s - 1) * log1p(p_s * (z - 1)),
        known_family=Family("point", {"k": nn}) if pp == 1 else Family("binomial", {"n": nn, "p": pp}),
    )


def negative_binomial(eta: Number, gamma: Number | None = None, mean: Number | None = None) -> Distribution:
    """Untruncated negative binomial: ``phi(z) = (gamma / (1 - (1-gamma) z))^eta``, ``eta > 0``
    (support includes 0; Papernot & Steinke, Appendix A.2). The mean is ``eta (1-gamma)/gamma``."""
    where = "negative_binomial"
    e = exact_number(eta, "eta", where)
    _check(0 < e <= TNB_MAX_ETA, "eta", eta, f"0 < eta <= {TNB_MAX_ETA} (exact arithmetic on gamma^eta)", where)
    if (gamma is None) == (mean is None):
        raise ParameterError("gamma", gamma, "exactly one of gamma or mean", where)
    if mean is not None:
        mu = exact_number(mean, "mean", where)
        _check(mu > 0, "mean", mean, "mean > 0", where)
        g = e / (e + mu)
    else:
        g = exact_number(gamma, "gamma", where)
        _check(0 < g < 1, "gamma", gamma, "0 < gamma < 1", where)
    eta_s, gamma_s = _symbols("eta", "gamma")
    ef, gf = float(e), float(g)
    return Distribution(
        "negative_binomial",
        (gamma_s / (1 - (1 - gamma_s) * z)) ** eta_s,
        {eta_s: e, gamma_s: g},
        sympy.binomial(k + eta_s - 1, k) * (1 - gamma_s) ** k * gamma_s**eta_s,
        sampler=partial(_sample_negative_binomial, ef, gf),
        label=f"negative_binomial(eta={_plain(e)!r}, "
        + (f"mean={_plain(exact_number(mean, 'mean', where))!r})" if mean is not None else f"gamma={_plain(g)!r})"),
    )


def _rising(x: sympy.Expr, n: int) -> sympy.Expr:
    """The rising factorial x (x+1) … (x+n−1); a rational x by exact integer products (``sympy.rf`` builds and
    flattens an n-factor product: 30 s at n = 2000)."""
    if not x.is_Rational:
        return sympy.rf(x, n)
    p, q = int(x.p), int(x.q)
    return sympy.Rational(math.prod(p + i * q for i in range(n)), q**n)


def beta_binomial(n: int, a: Number, b: Number) -> Distribution:
    """Beta-binomial law: ``K ~ Bin(n, P)`` with ``P ~ Beta(a, b)``; ``phi`` is the polynomial
    ``sum_k C(n,k) B(k+a, n-k+b)/B(a,b) z^k`` (a law no paper's theorem covers)."""
    where = "beta_binomial"
    nn = exact_number(n, "n", where)
    _check(nn.is_integer and 1 <= nn <= 2000, "n", n, "an integer 1 <= n <= 2000", where)
    aa = exact_number(a, "a", where)
    _check(aa > 0, "a", a, "a > 0", where)
    bb = exact_number(b, "b", where)
    _check(bb > 0, "b", b, "b > 0", where)
    ni = int(nn)
    a_s, b_s = sympy.symbols("a b", positive=True)
    # exact coefficients by the ratio c_{i+1}/c_i = (n-i)(a+i) / ((i+1)(b+n-i-1)), O(n) products: substituting
    # a and b into n + 1 rising factorials took minutes at n = 2000
    coeff = [_rising(bb, ni) / _rising(aa + bb, ni)]
    for i in range(ni):
        coeff.append(coeff[-1] * (ni - i) * (aa + i) / ((i + 1) * (bb + ni - i - 1)))
    pgf = sympy.Add(*[c * z**i for i, c in enumerate(coeff)])
    # unevaluated: rf(a + b, 2000) would expand into a 2000-factor symbolic product
    pmf = sympy.binomial(ni, k) * sympy.rf(a_s, k) * sympy.rf(b_s, ni - k) / sympy.rf(a_s + b_s, ni, evaluate=False)
    af, bf = float(aa), float(bb)
    mean = ni * a_s / (a_s + b_s)
    return Distribution(
        where,
        pgf,
        {a_s: aa, b_s: bb},
        pmf,
        support_max=ni,
        sampler=partial(_sample_beta_binomial, ni, af, bf),
        moments_closed=(mean, mean * b_s * (a_s + b_s + ni) / ((a_s + b_s) * (a_s + b_s + 1))),
        label=f"beta_binomial(n={ni}, a={_plain(aa)!r}, b={_plain(bb)!r})",
    )


def two_point(L: int, s: Number) -> Distribution:
    """Two-point law ``P[K=1] = s``, ``P[K=L] = 1 - s`` (Xiang et al., eq. (21)):
    ``phi(z) = s z + (1 - s) z^L``."""
    where = "two_point"
    ll = exact_number(L, "L", where)
    _check(ll.is_integer and ll >= 2, "L", L, "an integer L >= 2", where)
    ss = exact_number(s, "s", where)
    _check(0 < ss < 1, "s", s, "0 < s < 1", where)
    L_s = sympy.Symbol("L", positive=True, integer=True)
    (s_s,) = _symbols("s")
    li, sf = int(ll), float(ss)
    pmf = s_s * sympy.KroneckerDelta(k, 1) + (1 - s_s) * sympy.KroneckerDelta(k, L_s)
    return Distribution(
        where,
        s_s * z + (1 - s_s) * z**L_s,
        {L_s: ll, s_s: ss},
        pmf,
        support_min=1,
        support_max=li,
        sampler=partial(_sample_two_point, li, sf),
        label=f"two_point(L={li}, s={_plain(ss)!r})",
    )
