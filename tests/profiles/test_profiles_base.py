"""Properties every profile must have, the FAMILIES registry, and the generic base-class methods."""

from __future__ import annotations

import ast
import math

import numpy as np
import pytest

from symsel.errors import ParameterError
from symsel.profiles import FAMILIES, GaussianProfile, Profile, gdp
from symsel.profiles.region import gaussian_lower

SPECS = [
    "gaussian(sigma=4.0, sensitivity=1.0)",
    "gdp(mu=0.8)",
    "laplace(scale=2.0, sensitivity=1.0)",
    "randomized_response(eps=1.0, k=3)",
    "pure(eps=1.5)",
    "approx(eps=1.0, delta=1e-05)",
    "pointwise(points=[(1.0, 1e-06), (2.0, 1e-08)])",
    "tabulated(eps_grid=[0.0, 1.0, 2.0], deltas=[0.5, 0.1, 0.01])",
    "dpsgd(q=0.02, sigma=1.0, steps=20)",
    "zcdp(rho=0.1)",
    "rdp_gaussian(sigma=2.0, sensitivity=1.0)",
    "rdp_pure(eps=1.0, exact=True)",
    "rdp_subsampled_gaussian(q=0.01, sigma=1.1, steps=100)",
    "pair(p=[0.5, 0.3, 0.2], q=[0.2, 0.3, 0.5])",
]


def build(spec: str) -> Profile:
    """A minimal literal parser (the project's spec parser lives elsewhere): name(k=literal, …)."""
    call = ast.parse(spec, mode="eval").body
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
    kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
    return FAMILIES[call.func.id](**kwargs)


@pytest.fixture(scope="module", params=SPECS)
def profile(request: pytest.FixtureRequest) -> Profile:
    return build(request.param)


def test_every_family_is_tested() -> None:
    assert {s.split("(")[0] for s in SPECS} == set(FAMILIES)


def test_spec_round_trip(profile: Profile) -> None:
    again = build(profile.spec)
    assert again.spec == profile.spec
    eps = np.linspace(-1, 3, 9)
    assert np.array_equal(again.delta(eps), profile.delta(eps))


def test_profile_shape_and_bounds(profile: Profile) -> None:
    """δ non-increasing, in [0, 1], ≥ 1 − e^ε for ε < 0; δ(−∞) = 1; scalar in → float out."""
    eps = np.linspace(-8, 12, 801)
    d = profile.delta(eps)
    assert d.shape == eps.shape and np.all(np.isfinite(d))
    assert np.all((d >= 0) & (d <= 1))
    assert np.all(np.diff(d) <= 1e-12)
    neg = eps < 0
    assert np.all(d[neg] >= -np.expm1(eps[neg]) - 1e-12)
    assert isinstance(profile.delta(0.5), float)
    assert profile.delta(-math.inf) == 1.0
    assert profile.delta(math.inf) == pytest.approx(profile.delta_at_infinity)
    assert profile.delta(np.array([[0.1, 0.2], [0.3, 0.4]])).shape == (2, 2)


def test_epsilon_round_trip(profile: Profile) -> None:
    """δ(ε(δ)) ≤ δ, and ε(δ) is (nearly) the smallest such ε."""
    assert profile.epsilon(1.0) == 0.0
    assert profile.epsilon(float(profile.delta(0.0))) == 0.0
    for delta in (0.2, 1e-3, 1e-6, 1e-9):
        e = profile.epsilon(delta)
        if math.isinf(e):  # no finite ε works: δ stays above the target
            assert profile.log_delta(1e3) > math.log(delta)
            continue
        assert profile.delta(e) <= delta * (1 + 1e-9)
        if e > 0 and profile.family not in {"tabulated"}:
            assert profile.delta(e - 1e-6 * max(1.0, e)) > delta * (1 - 1e-3)


def test_region_boundary_is_consistent_with_profile(profile: Profile) -> None:
    """Any point on the boundary satisfies every (ε, δ(ε)) constraint (up to rounding), and is monotone."""
    q = np.linspace(0, 1, 401)
    low = profile.region_lower(q)
    assert np.all((low >= 0) & (low <= 1)) and np.all(np.diff(low) >= -1e-12)
    for eps in (0.0, 0.5, 1.0, 2.0):
        d = profile.delta(eps)
        assert np.all(q <= math.exp(eps) * low + d + 1e-9)


def test_bad_inputs_to_methods(profile: Profile) -> None:
    for call, name in [
        (lambda: profile.delta(float("nan")), "eps"),
        (lambda: profile.delta([0.0, float("nan")]), "eps"),
        (lambda: profile.epsilon(-0.1), "delta"),
        (lambda: profile.epsilon(1.5), "delta"),
        (lambda: profile.epsilon(float("nan")), "delta"),
        (lambda: profile.region_lower(1.5), "q"),
        (lambda: profile.region_lower(float("nan")), "q"),
        (lambda: profile.rdp(1.0), "order"),
    ]:
        with pytest.raises(ParameterError, match=f"parameter {name}="):
            call()


@pytest.mark.parametrize(
    ("family", "kwargs", "name"),
    [
        ("gaussian", {"sigma": 0.0}, "sigma"),
        ("gaussian", {"sigma": -1.0}, "sigma"),
        ("gaussian", {"sigma": float("nan")}, "sigma"),
        ("gaussian", {"sigma": float("inf")}, "sigma"),
        ("gaussian", {"sigma": "4"}, "sigma"),
        ("gaussian", {"sigma": 1.0, "sensitivity": 0.0}, "sensitivity"),
        ("gdp", {"mu": -0.5}, "mu"),
        ("laplace", {"scale": 0.0}, "scale"),
        ("randomized_response", {"eps": -1.0}, "eps"),
        ("randomized_response", {"eps": 1.0, "k": 1}, "k"),
        ("pure", {"eps": float("nan")}, "eps"),
        ("approx", {"eps": 1.0, "delta": 1.5}, "delta"),
        ("approx", {"eps": 1.0, "delta": -0.1}, "delta"),
        ("pointwise", {"points": []}, "points"),
        ("pointwise", {"points": [(1.0,)]}, "points"),
        ("pointwise", {"points": [(1.0, 2.0)]}, "delta"),
        ("pointwise", {"points": [(-1.0, 0.1)]}, "eps"),
    ],
)
def test_bad_constructor_parameters(family: str, kwargs: dict, name: str) -> None:
    with pytest.raises(ParameterError, match=f"parameter {name}=") as info:
        FAMILIES[family](**kwargs)
    assert "allowed" in str(info.value)


def test_epsilon_of_zero_delta() -> None:
    """δ = 0 asks for the maximal privacy loss: inf for the Gaussian, the pure ε otherwise."""
    assert FAMILIES["gaussian"](sigma=1.0).epsilon(0.0) == math.inf
    assert FAMILIES["laplace"](scale=0.5).epsilon(0.0) == pytest.approx(2.0)
    assert FAMILIES["pure"](eps=0.7).epsilon(0.0) == pytest.approx(0.7)


@pytest.mark.parametrize(("mu", "max_loss"), [(1.0, 1e-7), (4.0, 1e-6), (10.0, 1e-7)])
def test_generic_region_loss_against_exact_gaussian(mu: float, max_loss: float) -> None:
    """The base-class boundary (16001 ε1 points) is conservative, and loses little.

    Measured max loss in q': 4.3e-8 (μ = 1), 2.6e-7 (μ = 4), 2.5e-8 (μ = 10); it shrinks like 1/N².
    """
    g = gdp(mu)
    q = np.concatenate([np.geomspace(1e-40, 0.5, 1500), 1 - np.geomspace(1e-12, 0.5, 500)])
    exact = gaussian_lower(q, mu)
    generic = Profile.region_lower(g, q)
    assert np.all(generic <= exact + 1e-15)
    assert np.max(exact - generic) < max_loss


def test_generic_epsilon_matches_closed_form_gaussian() -> None:
    """The bracketing ε(δ) against an independent root of the closed form (scipy brentq)."""
    from scipy import optimize, stats

    g = GaussianProfile(2.0)
    mu = 0.5
    for delta in (1e-2, 1e-6, 1e-12):

        def f(e: float, delta: float = delta) -> float:
            return stats.norm.cdf(-e / mu + mu / 2) - math.exp(e) * stats.norm.cdf(-e / mu - mu / 2) - delta

        ref = optimize.brentq(f, 0, 50, xtol=1e-14)
        assert g.epsilon(delta) == pytest.approx(ref, rel=1e-9)
        assert g.epsilon(delta) >= ref - 1e-12


class _CountedGaussian(GaussianProfile):
    """The Gaussian profile, with every ``ε`` at which ``log δ`` is evaluated recorded."""

    def __init__(self, sigma: float):
        super().__init__(sigma)
        self.asked: list[float] = []

    def _log_delta_finite(self, eps: np.ndarray) -> np.ndarray:
        self.asked.extend(np.ravel(eps).tolist())
        return super()._log_delta_finite(eps)


def test_the_generic_epsilon_evaluates_each_point_once() -> None:
    """Brent's method starts by asking for the ends of the bracket the doubling found: they are not evaluated again
    (on a selection bound, each evaluation sums thousands of terms). The answer is that of the closed form."""
    counted = _CountedGaussian(2.0)
    answer = Profile.epsilon(counted, 1e-6)
    assert len(counted.asked) == len(set(counted.asked)), counted.asked
    assert answer == pytest.approx(GaussianProfile(2.0).epsilon(1e-6), rel=1e-9)


#: one spec per base family of symsel.profiles.FAMILIES (checked complete below)
_ONE_PER_FAMILY = {
    "approx": "approx(eps=1, delta=1e-6)", "dpsgd": "dpsgd(q=0.01, sigma=1, steps=10)",
    "gaussian": "gaussian(sigma=4)", "gdp": "gdp(mu=0.5)", "laplace": "laplace(scale=1)",
    "pair": "pair(p=[0.5, 0.5], q=[0.4, 0.6])", "pointwise": "pointwise(points=[(1, 1e-6), (2, 1e-8)])",
    "pure": "pure(eps=1)", "randomized_response": "randomized_response(eps=1, k=3)",
    "rdp_gaussian": "rdp_gaussian(sigma=2)", "rdp_pure": "rdp_pure(eps=1)",
    "rdp_pure_exact": "rdp_pure(eps=1, exact=True)",
    "rdp_subsampled_gaussian": "rdp_subsampled_gaussian(q=0.01, sigma=1, steps=10)",
    "tabulated": "tabulated(eps_grid=[0, 1, 2], deltas=[0.5, 0.1, 0.01])", "zcdp": "zcdp(rho=0.5)",
}


def test_every_base_family_and_a_bound_on_it_pickle():
    import pickle

    import symsel
    from symsel.profiles import FAMILIES

    assert set(FAMILIES) <= set(_ONE_PER_FAMILY)
    law = symsel.geometric(mean=3)
    for spec in _ONE_PER_FAMILY.values():
        base = symsel.parse_profile(spec)
        copy = pickle.loads(pickle.dumps(base))
        assert copy.spec == base.spec and copy.epsilon(1e-6) == base.epsilon(1e-6), spec
        selection = symsel.bound(law, base)
        restored = pickle.loads(pickle.dumps(selection))
        assert (restored.method, restored.profile.spec) == (selection.method, selection.profile.spec), spec
        if spec.startswith(("zcdp", "rdp")):  # their RDP curves were closures: the restored curve is the same
            assert restored.epsilon(1e-6) == selection.epsilon(1e-6), spec
