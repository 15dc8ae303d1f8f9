"""The composition protocol of :class:`~symsel.profiles.Profile` (``self_composed``, ``exact_composition``,
``weighted_compositions``, ``finite_loss_bound``, ``pld_discretization``): every base keeps the route and the
numbers it had when :mod:`symsel.bounds.composition` chose them by testing the base's type, and a profile class
that composition.py has never heard of is composed through its own method.

The pinned numbers were computed by the type-testing code (commit 37f9aa9) before it was replaced; the exact
routes are also checked against references written here: the μ√k-GDP closed form at 50 digits and finite pairs
composed by brute force over all ``n^k`` outcome tuples (itertools, 50 digits, both directions); the dp-accounting
routes against dp-accounting called directly."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

import symsel
from symsel.bounds import bound
from symsel.bounds import composition as comp
from symsel.bounds.api import _composition_may_help
from symsel.profiles import GaussianProfile, PairProfile, Profile
from symsel.profiles import composition as base_comp
from symsel.spec import parse_distribution

EPS = (0.3, 1.0, 2.0)
GAUSSIAN = "gaussian(sigma=2)"
RR = "randomized_response(eps=1, k=2)"
PAIR = "pair(p=[0.5, 0.3, 0.2], q=[0.2, 0.3, 0.5])"
APPROX = "approx(eps=1, delta=1e-6)"
LAPLACE = "laplace(scale=1)"
DPSGD = "dpsgd(q=0.1, sigma=1.0, steps=10)"
GDP_ROUTE = "exact GDP (mu sqrt(k))"
FINITE_ROUTE = "exact finite pair"
PLD_ROUTE = "pessimistic PLD (dp-accounting self-composition)"

#: (base, k) -> route, type of the composed profile, δ at :data:`EPS`: what the type-testing code gave.
PINNED = {
    (GAUSSIAN, 2): (GDP_ROUTE, "GaussianProfile",
                    (0.17708811108715775, 0.03963259300475111, 0.0012601169324973883)),
    (GAUSSIAN, 3): (GDP_ROUTE, "GaussianProfile",
                    (0.24041884213285733, 0.08254210148560323, 0.007768258040960448)),
    (RR, 2): (FINITE_ROUTE, "ComposedFinitePair", (0.43681204879222557, 0.3378347121485183, 1.603245132032934e-12)),
    (RR, 3): (FINITE_ROUTE, "ComposedFinitePair", (0.5815285108801534, 0.33783471214997074, 0.24697696447539375)),
    (PAIR, 2): (FINITE_ROUTE, "ComposedFinitePair", (0.3340225907894089, 0.14126872686242456, 0.0)),
    (PAIR, 3): (FINITE_ROUTE, "ComposedFinitePair", (0.4217223084052122, 0.23039559954902583, 0.0658875512090452)),
    (APPROX, 2): (FINITE_ROUTE, "ComposedFinitePair",
                  (0.43681317516756474, 0.33783603647843174, 2.000000603245926e-06)),
    (APPROX, 3): (FINITE_ROUTE, "ComposedFinitePair",
                  (0.5815297662933653, 0.3378366986438476, 0.24697922354224117)),
    (LAPLACE, 2): (PLD_ROUTE, "ComposedPld", (0.3909337220250621, 0.24183667540325635, 1e-15)),
    (LAPLACE, 3): (PLD_ROUTE, "ComposedPld", (0.49918022155136743, 0.3102260478972572, 0.14706625984696595)),
    (DPSGD, 2): (PLD_ROUTE, "PldProfile", (0.11479408448487169, 0.02284908687695547, 0.0014572676494255424)),
    ("rdp_gaussian(sigma=2)", 2): (PLD_ROUTE, "ComposedPld",
                                   (0.2772564638009419, 0.10573285866231437, 0.006854966404100071)),
}

#: base -> δ at :data:`EPS` of the composition bound on binomial(n=4, p=1/2), and its certificate's route.
PINNED_BINOMIAL = {
    GAUSSIAN: (GDP_ROUTE, (0.16893126031453812, 0.045138692588127735, 0.0037246953909051785)),
    "randomized_response(eps=1, k=3)": (f"{FINITE_ROUTE}; the base itself",
                                        (0.3797158482182845, 0.17860500920792657, 0.04257642748475736)),
    PAIR: (f"{FINITE_ROUTE}; the base itself", (0.3187761148812746, 0.1302526628839789, 0.024580798533064496)),
    APPROX: (f"{FINITE_ROUTE}; the base itself", (0.4400753679146036, 0.2447169115499884, 0.07718205442108808)),
    LAPLACE: (f"{PLD_ROUTE}; the base itself", (0.380512729189131, 0.19504589230533242, 0.04992856699948035)),
    DPSGD: (f"{PLD_ROUTE}; the base itself", (0.11059131262733614, 0.025417928700351942, 0.0022919345000416793)),
}


def _close(value: float, pinned: float) -> bool:
    # a dp-accounting PLD known through its public queries is read through arrays rebuilt from its δ on its grid
    # (symsel.profiles.dpaccounting.arrays_from_queries, masses raised by their rounding bound) and symsel's suffix
    # tables: at most 3e-9 below (the pinned values were read from its own masses), above by 6e-9 relative and
    # 1e-21 absolute (the rebuilt masses' rounding, seen where δ is only the mass at +∞, 1e-15)
    return pinned * (1 - 3e-9) <= value <= pinned * (1 + 6e-9) + 1e-21 or value == pinned


# ----------------------------------------------------------------------------- independent references
def gdp_delta(mu: float, eps: float) -> mpmath.mpf:
    """δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) of μ-GDP, at 50 digits."""
    with mpmath.workdps(50):
        m, e = mpmath.mpf(mu), mpmath.mpf(eps)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


def brute_force_delta(P: list[float], Q: list[float], k: int, eps: float) -> mpmath.mpf:
    """max over both directions of Σ_{outcome tuples} [P^⊗k − e^ε Q^⊗k]_+, at 50 digits."""
    with mpmath.workdps(50):
        g = mpmath.exp(mpmath.mpf(eps))
        p = [mpmath.mpf(x) for x in P]
        q = [mpmath.mpf(x) for x in Q]
        forward = backward = mpmath.mpf(0)
        for outcome in itertools.product(range(len(p)), repeat=k):
            a = mpmath.fprod(p[i] for i in outcome)
            b = mpmath.fprod(q[i] for i in outcome)
            forward += max(a - g * b, 0)
            backward += max(b - g * a, 0)
        return max(forward, backward)


# ----------------------------------------------------------------------------- every base, as before
@pytest.mark.parametrize(("spec", "k"), list(PINNED))
def test_each_base_keeps_its_route_and_numbers(spec: str, k: int) -> None:
    base = symsel.parse_profile(spec)
    profile, route = base_comp.composed(base, k)
    pinned_route, pinned_type, pinned_deltas = PINNED[(spec, k)]
    assert route == pinned_route
    assert type(profile).__name__ == pinned_type
    for eps, pinned in zip(EPS, pinned_deltas, strict=True):
        assert _close(float(profile.delta(eps)), pinned), (eps, float(profile.delta(eps)), pinned)


@pytest.mark.parametrize("k", [2, 3])
def test_gaussian_route_is_the_gdp_closed_form(k: int) -> None:
    profile, route = symsel.parse_profile(GAUSSIAN).self_composed(k)
    assert route == GDP_ROUTE
    for eps in (*EPS, -0.5, 5.0):
        exact = float(gdp_delta(0.5 * math.sqrt(k), eps))
        assert exact <= float(profile.delta(eps)) <= exact * (1 + 1e-9) + 1e-300


@pytest.mark.parametrize("spec", [RR, PAIR, APPROX, "pair(p=[0.6, 0.4, 0.0], q=[0.3, 0.4, 0.3])"])
@pytest.mark.parametrize("k", [2, 3])
def test_finite_pair_route_is_the_brute_force_product(spec: str, k: int) -> None:
    base = symsel.parse_profile(spec)
    profile, route = base.self_composed(k)
    assert route == FINITE_ROUTE
    P, Q = base.finite_pair()
    for eps in (*EPS, -0.5, 5.0):
        exact = float(brute_force_delta(P, Q, k, eps))
        value = float(profile.delta(eps))
        # above by at most the losses' rounding allowance (ROUNDING = 1e-12 relative): at ε = 2 = k·1 an atom sits
        # on the kink, where that is ~2e-12 absolute
        assert exact * (1 - 1e-12) <= value <= exact * (1 + 1e-9) + 1e-11, (eps, value, exact)


def test_a_finite_pair_too_large_to_compose_exactly_falls_back_to_its_two_plds() -> None:
    """20 distinct losses 10 times: C(29, 19) ≈ 2e7 multinomial atoms > MAX_EXACT_ATOMS, so the pair's own method
    takes the larger of its two directions' dp-accounting PLDs (numbers pinned from the type-testing code)."""
    n = 20
    base = PairProfile([(i + 1) / 210 for i in range(n)], [(n - i) / 210 for i in range(n)])
    assert math.comb(10 + n - 1, n - 1) > base_comp.MAX_EXACT_ATOMS
    profile, route = base_comp.composed(base, 10)
    assert route == PLD_ROUTE
    assert isinstance(profile, base_comp.LargerOf)
    pinned = (0.9497370998490104, 0.93013463654547, 0.8923976463278853, 0.6986962701459103)
    for eps, value in zip((*EPS, 5.0), pinned, strict=True):
        assert _close(float(profile.delta(eps)), value)
    assert base.exact_composition  # still an exact route for the anchors and best's law size


def test_dpsgd_route_is_dp_accountings_self_composed_event() -> None:
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    base = symsel.parse_profile(DPSGD)
    profile, route = base.self_composed(2)
    assert route == PLD_ROUTE
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_event.SelfComposedDpEvent(base.event, 2))
    for eps in EPS:
        theirs = float(accountant.get_delta(eps))
        assert theirs <= float(profile.delta(eps)) <= theirs * (1 + 2e-9) + 1e-300  # suffix sums, from above


def test_laplace_route_is_dp_accountings_laplace_pld_self_composed() -> None:
    from dp_accounting.pld import privacy_loss_distribution

    profile, route = symsel.parse_profile(LAPLACE).self_composed(3)
    assert route == PLD_ROUTE
    pld = privacy_loss_distribution.from_laplace_mechanism(
        1.0, sensitivity=1.0, pessimistic_estimate=True, value_discretization_interval=1e-4).self_compose(3)
    for eps in EPS:  # ComposedPld reads the PLD by its own suffix sums, not get_delta_for_epsilon: ~1e-10 apart
        assert float(profile.delta(eps)) == pytest.approx(float(pld.get_delta_for_epsilon(eps)), rel=1e-9, abs=1e-18)


@pytest.mark.parametrize("spec", list(PINNED_BINOMIAL))
def test_the_composition_bound_on_each_base_keeps_its_certificate_and_numbers(spec: str) -> None:
    profile, certificate = comp.composition_profile(parse_distribution("binomial(n=4, p=0.5)"),
                                                 symsel.parse_profile(spec))
    route, pinned = PINNED_BINOMIAL[spec]
    assert certificate == {"anchors": 4, "pooled": False, "outside_mass": 0.0, "composition": route}
    for eps, value in zip(EPS, pinned, strict=True):
        assert _close(float(profile.delta(eps)), value)


def test_protocol_properties_of_the_bases() -> None:
    """exact_composition (Gaussian, finite pairs), finite_loss_bound (Laplace, finite pairs: finite even where
    max_privacy_loss is inf), pld_discretization (PLD-backed profiles), and the PLD size estimate they feed."""
    exact = {GAUSSIAN: True, "gdp(mu=0.5)": True, RR: True, PAIR: True, APPROX: True, "pure(eps=1)": True,
             LAPLACE: False, DPSGD: False, "rdp_gaussian(sigma=2)": False}
    for spec, value in exact.items():
        assert symsel.parse_profile(spec).exact_composition is value, spec
    approx = symsel.parse_profile(APPROX)
    assert approx.max_privacy_loss == math.inf
    assert approx.finite_loss_bound == pytest.approx(1.0, rel=1e-15)
    assert symsel.parse_profile(LAPLACE).finite_loss_bound == 1.0
    assert symsel.parse_profile(PAIR).finite_loss_bound == pytest.approx(math.log(2.5), rel=1e-15)
    assert symsel.parse_profile(GAUSSIAN).finite_loss_bound is None
    assert symsel.parse_profile(DPSGD).pld_discretization == 1e-4
    assert symsel.parse_profile("dpsgd(q=0.1, sigma=1.0, steps=10, value_discretization_interval=1e-3)"
                                ).pld_discretization == 1e-3
    assert symsel.parse_profile(LAPLACE).pld_discretization is None
    # pld_points as before: 2ka/h + 1 for a bounded loss a; the RDP estimate on a DP-SGD base
    assert base_comp.pld_points(symsel.parse_profile(LAPLACE), 50) == (1000001.0, "privacy loss up to 1 per run")
    assert base_comp.pld_points(approx, 50)[0] == pytest.approx(1000000.9999999998, rel=1e-14)
    estimate = base_comp.pld_points(symsel.parse_profile(DPSGD), 50)
    assert estimate[0] == pytest.approx(331425.71122007666, rel=1e-12)
    assert estimate[1] == "epsilon(1e-15) of 50 runs about 33.14 by RDP"


def test_best_takes_composition_by_the_protocol_property() -> None:
    """21 support points: taken on exact routes (up to 512 points), not through dp-accounting (up to 8)."""
    dist = parse_distribution("binomial(n=20, p=0.5)")
    for spec, taken in ((GAUSSIAN, True), (RR, True), (APPROX, True), (LAPLACE, False), (DPSGD, False)):
        assert _composition_may_help(dist, symsel.parse_profile(spec)) is taken, spec


# ----------------------------------------------------------------------------- a profile composition.py never saw
class DelegatingProfile(Profile):
    """A μ-GDP profile that is no GaussianProfile: it composes through its own :meth:`self_composed`."""

    family = "delegating"
    exact_composition = True

    def __init__(self, sigma: float):
        self.inner = GaussianProfile(sigma)
        self.calls: list[int] = []

    @property
    def spec(self) -> str:
        return f"delegating(sigma={self.inner.sigma!r})"

    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        return self.inner._delta_finite(eps)

    def self_composed(self, k: int) -> tuple[Profile, str]:
        self.calls.append(k)
        return self.inner.compose(k), "custom route (delegated mu sqrt(k))"


class PlainProfile(DelegatingProfile):
    """The same profile with the generic protocol: no route of its own, composed through dp-accounting."""

    exact_composition = False

    def self_composed(self, k: int) -> tuple[Profile, str] | None:
        self.calls.append(k)
        return None


def test_a_custom_profile_is_composed_through_its_own_method() -> None:
    base = DelegatingProfile(2.0)
    profile, route = base_comp.composed(base, 3)
    assert route == "custom route (delegated mu sqrt(k))"
    assert base.calls == [3]
    for eps in EPS:
        exact = float(gdp_delta(0.5 * math.sqrt(3), eps))
        assert exact <= float(profile.delta(eps)) <= exact * (1 + 1e-9)

    dist = parse_distribution("binomial(n=4, p=0.5)")
    selection, certificate = comp.composition_profile(dist, base)
    assert certificate["composition"] == "custom route (delegated mu sqrt(k)); the base itself"
    assert certificate["anchors"] == 4
    assert sorted(set(base.calls)) == [2, 3, 4]  # k = 1 is the base itself; 3 may come from the cache
    reference = bound(dist, GaussianProfile(2.0), "composition")  # the Gaussian's vectorized route
    for eps in EPS:
        assert float(selection.delta(eps)) == pytest.approx(float(reference.delta(eps)), rel=1e-9)
    assert float(bound(dist, base, "composition").delta(1.0)) == pytest.approx(float(selection.delta(1.0)))
    assert _composition_may_help(parse_distribution("binomial(n=20, p=0.5)"), base)


def test_a_custom_profile_without_a_route_takes_the_generic_pld() -> None:
    base = PlainProfile(2.0)
    profile, route = base_comp.composed(base, 2)
    assert route == PLD_ROUTE
    assert base.calls == [2]
    assert isinstance(profile, base_comp.ComposedPld)
    for eps in EPS:  # the connect-the-dots PLD dominates: never below the exact μ√2-GDP profile
        assert float(profile.delta(eps)) >= float(gdp_delta(0.5 * math.sqrt(2), eps))
    assert not _composition_may_help(parse_distribution("binomial(n=20, p=0.5)"), base)


def test_composition_module_tests_no_profile_type() -> None:
    import inspect

    for module in (comp, base_comp):
        source = inspect.getsource(module)
        assert "isinstance(base" not in source
        for name in ("LaplaceProfile", "PldProfile", "ApproxDPProfile"):
            assert name not in source


def _gdp_delta(mu: float, eps: float) -> mpmath.mpf:
    """The μ-GDP profile at 50 digits: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)."""
    with mpmath.workdps(50):
        m, e = mpmath.mpf(mu), mpmath.mpf(eps)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


@pytest.mark.parametrize("sigmas", [(1.0, 1.0), (1.0, 3.0), (0.5, 2.0, 4.0)])
def test_basic_composition_is_above_the_exact_composition(sigmas: tuple[float, ...]) -> None:
    """Gaussian runs compose exactly to ``μ = sqrt(Σ 1/σ²)``-GDP (50-digit reference): the basic composition's
    profile is at or above it at every ``ε`` and its ``ε(δ)`` at or above the exact one, and at most the even
    split's ``Σ δ_i(ε/n)`` summed here at 50 digits (up to its rounding allowance). A split that is not a split (each
    part at the whole ``ε``) falls below the exact composition here."""
    parts = [GaussianProfile(s) for s in sigmas]
    composed = base_comp.BasicComposition(parts, "test")
    mu = math.sqrt(sum(1.0 / s**2 for s in sigmas))
    for eps in (0.5, 2.0, 6.0):
        split = mpmath.fsum(_gdp_delta(1.0 / s, eps / len(sigmas)) for s in sigmas)
        value = float(composed.delta(eps))
        assert value >= float(_gdp_delta(mu, eps))
        assert value <= min(1.0, float(split) * (1 + 1e-9))
    exact_eps = float(mpmath.findroot(lambda e: _gdp_delta(mu, e) - mpmath.mpf("1e-6"), 4.0))
    assert composed.epsilon(1e-6) >= exact_eps
    assert composed.delta(-1.0) == 1.0
