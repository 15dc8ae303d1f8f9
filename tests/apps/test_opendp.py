"""symsel.apps.opendp.make_selection: an OpenDP measurement of the best of K ~ law runs. Its map is checked against
symsel.bound on base profiles built here from the mechanisms' textbook guarantees (Laplace: ε = d_in / scale;
Gaussian: ρ = d_in² / (2 scale²)), never from the OpenDP map under test, and against the pure-DP closed form of
a geometric selection (3ε, Liu & Talwar 2019); the function against the law's own sampler and the outputs it saw."""

from __future__ import annotations

import gc
import math
from pathlib import Path
from typing import Any

import numpy as np
import opendp.prelude as dp
import pytest

import symsel
from symsel.apps.opendp import EPSILON_SHIFT, base_profile_from_map, make_selection
from symsel.errors import NotApplicableError, ParameterError
from symsel.profiles import GaussianProfile, pure, zcdp

dp.enable_features("contrib")
SPACE = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))
LAW = "geometric(mean=10)"
EPSILONS = (0.0, 0.5, 1.5, 2.5, 4.0)


def laplace(scale: float) -> Any:
    return SPACE >> dp.m.then_laplace(scale=scale)


def gaussian(scale: float) -> Any:
    return SPACE >> dp.m.then_gaussian(scale=scale)


def law() -> Any:
    return symsel.parse_distribution(LAW)


# ------------------------------------------------------------------------------ the map is symsel's bound
@pytest.mark.parametrize("scale, d_in", [(1.0, 1.0), (2.0, 1.0), (1.0, 0.5)])
def test_pure_base_geometric_law_map_is_the_bound(scale: float, d_in: float) -> None:
    selection = make_selection(laplace(scale), LAW, score=lambda y: y, seed=0)
    assert selection.output_measure == dp.smoothed_max_divergence()
    expected = symsel.bound(law(), pure(eps=d_in / scale), "best")
    profile = selection.map(d_in)
    gc.collect()  # the profile lives in Rust: it must survive Python's collection of what made it
    for eps in EPSILONS:
        assert profile.delta(eps) == min(1.0, expected.delta(max(0.0, eps - EPSILON_SHIFT)))
        assert profile.delta(eps) >= expected.delta(eps)
    # a geometric selection of an eps-DP base is 3 eps-DP (Liu & Talwar 2019; Papernot & Steinke 2022)
    assert profile.delta(3 * d_in / scale + 1e-6) <= 1e-12
    for delta in (1e-3, 1e-6, 1e-10):
        certified = expected.epsilon(delta)
        assert certified <= 3 * d_in / scale + 1e-9
        # OpenDP's inversion is sound for symsel's bound (its ε is where the certified δ meets the budget) and
        # within symsel's root-finding tolerance of symsel's own ε
        assert expected.delta(profile.epsilon(delta)) <= delta
        assert certified - 2e-6 <= profile.epsilon(delta) <= certified + 1e-6


def test_zcdp_base_map_is_the_bound_on_the_zcdp_curve() -> None:
    selection = make_selection(gaussian(2.0), LAW, score=lambda y: y, seed=0)
    for d_in in (1.0, 2.0):
        expected = symsel.bound(law(), zcdp(rho=d_in**2 / (2 * 2.0**2)), "best")
        profile = selection.map(d_in)
        for eps in EPSILONS:
            assert profile.delta(eps) == min(1.0, expected.delta(max(0.0, eps - EPSILON_SHIFT)))
        assert selection.selection_bound(d_in).epsilon(1e-6) == expected.epsilon(1e-6)


def test_fixed_delta_map_is_the_certified_epsilon() -> None:
    selection = make_selection(gaussian(2.0), LAW, score=lambda y: y, delta=1e-6)
    assert selection.output_measure == dp.approximate(dp.max_divergence())
    expected = symsel.bound(law(), zcdp(rho=1 / 8), "best").epsilon(1e-6)
    assert selection.map(1.0) == (expected, 1e-6)


def test_given_base_profile_is_used_as_given() -> None:
    """A continuous Gaussian's exact profile (the caller's claim) instead of its zCDP curve: tighter."""
    tight = make_selection(gaussian(2.0), LAW, score=lambda y: y, base_profile=lambda d: GaussianProfile(2.0 / d),
                           delta=1e-6)
    expected = symsel.bound(law(), GaussianProfile(sigma=2.0), "best").epsilon(1e-6)
    assert tight.map(1.0) == (expected, 1e-6)
    assert expected < make_selection(gaussian(2.0), LAW, score=lambda y: y, delta=1e-6).map(1.0)[0]
    fixed = make_selection(gaussian(2.0), LAW, score=lambda y: y, base_profile="gaussian(sigma=2)", profile_d_in=1,
                           delta=1e-6)
    assert fixed.map(0.5) == (expected, 1e-6)  # valid for every d_in <= 1, as given
    with pytest.raises(ParameterError, match=r"d_in=2\.0.*profile_d_in=1"):
        fixed.map(2.0)


def test_smoothed_base_profile_is_sampled_conservatively() -> None:
    base = dp.c.make_zCDP_to_approxDP(gaussian(2.0))
    assert base.output_measure == dp.smoothed_max_divergence()
    curve = base.map(1.0)
    sampled = base_profile_from_map(base, 1.0, profile_points=16)
    points = dict(sampled.points)
    for eps, delta in points.items():  # the grid's guarantees are OpenDP's own (their intersection may imply less)
        assert delta == min(1.0, curve.delta(eps))
        assert sampled.delta(eps) <= delta * (1 + 1e-12)  # (symsel rounds up)
    grid = sorted(points)
    truth = GaussianProfile(sigma=2.0)  # the mechanism itself: a Gaussian of noise 2 per unit of sensitivity
    for eps in np.linspace(0.0, grid[-1] + 5, 200):  # between and beyond the grid: never below the mechanism
        assert sampled.delta(float(eps)) >= truth.delta(float(eps))
    selection = make_selection(base, LAW, score=lambda y: y, profile_points=16, delta=1e-6)
    assert selection.map(1.0) == (symsel.bound(law(), sampled, "best").epsilon(1e-6), 1e-6)


def test_composes_inside_opendp() -> None:
    selection = make_selection(laplace(1.0), LAW, score=lambda y: y)
    eps, delta = dp.c.make_fix_delta(selection, 1e-6).map(1.0)
    expected = symsel.bound(law(), pure(eps=1.0), "best")
    certified = expected.epsilon(1e-6)
    # sound for symsel's bound, and within symsel's root-finding tolerance of its own ε
    assert delta == 1e-6 and expected.delta(eps) <= 1e-6 and certified - 2e-6 <= eps <= certified + 1e-6


# ------------------------------------------------------------------------------ the function
def pairs(scale: float) -> Any:
    """A base that outputs (score, candidate) pairs: a Laplace release and a label made from it."""
    return laplace(scale) >> dp.new_function(lambda y: (y, f"candidate {y!r}"), TO="ExtrinsicObject")


def test_releases_the_best_of_k_base_outputs() -> None:
    seen: list[Any] = []

    def score(output: tuple[float, str]) -> float:
        seen.append(output)
        return output[0]

    for seed in range(5):
        seen.clear()
        k = int(law().rvs(1, rng=np.random.default_rng(seed))[0])  # the draw make_selection makes first
        result = make_selection(pairs(1.0), LAW, score=score, seed=seed)(0.0)
        assert len(seen) == k >= 1
        assert result in seen and result == max(seen, key=lambda o: o[0])
        assert result[1] == f"candidate {result[0]!r}"


def test_pairs_are_ranked_by_their_first_element_and_minimize() -> None:
    outputs: list[Any] = []
    base = pairs(1.0) >> dp.new_function(lambda o: (outputs.append(o), o)[1], TO="ExtrinsicObject")
    for direction, pick in (("maximize", max), ("minimize", min)):
        outputs.clear()
        result = make_selection(base, "point(k=7)", direction=direction, seed=1)(0.0)
        assert len(outputs) == 7 and result == pick(outputs, key=lambda o: o[0])


def test_k_zero_releases_none() -> None:
    coin = symsel.parse_distribution("pgf(expr='1/2 + z/2')")
    seed = next(s for s in range(100) if int(coin.rvs(1, rng=np.random.default_rng(s))[0]) == 0)
    calls: list[float] = []
    selection = make_selection(laplace(1.0), coin, score=lambda y: calls.append(y) or y, seed=seed)
    assert selection(0.0) is None and calls == []


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("kwargs, name", [
    ({"measurement": "laplace"}, "measurement"),
    ({"measurement": SPACE[0]}, "measurement"),
    ({"law": 10}, "law"),
    ({"score": 3}, "score"),
    ({"direction": "up"}, "direction"),
    ({"method": "magic"}, "method"),
    ({"delta": 0.0}, "delta"),
    ({"delta": 1.5}, "delta"),
    ({"seed": -1}, "seed"),
    ({"profile_points": 1}, "profile_points"),
    ({"base_profile": "gaussian(sigma=2)"}, "profile_d_in"),
    ({"base_profile": 4.0, "profile_d_in": 1}, "base_profile"),
    ({"profile_d_in": 1}, "profile_d_in"),
])
def test_bad_arguments_name_the_parameter(kwargs: dict[str, Any], name: str) -> None:
    args = {"measurement": laplace(1.0), "law": LAW, "score": lambda y: y} | kwargs
    with pytest.raises(ParameterError) as info:
        make_selection(**args)
    assert info.value.name == name and isinstance(info.value, ValueError)
    assert f"parameter {name}=" in str(info.value) and "allowed:" in str(info.value)


def test_bad_law_spec_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="geometric"):
        make_selection(laplace(1.0), "geometric(mean=-3)", score=lambda y: y)


@pytest.mark.parametrize("d_in", [-1.0, math.nan, math.inf, "1", True])
def test_map_at_a_bad_distance_names_d_in(d_in: Any) -> None:
    selection = make_selection(laplace(1.0), LAW, score=lambda y: y)
    with pytest.raises(ParameterError) as info:
        selection.map(d_in)
    assert info.value.name == "d_in" and "allowed: a finite distance >= 0" in str(info.value)


def test_wrong_input_names_data() -> None:
    selection = make_selection(laplace(1.0), LAW, score=lambda y: y)
    for data in ("abc", math.nan, [1.0]):
        with pytest.raises(ParameterError) as info:
            selection(data)
        assert info.value.name == "data" and "input domain" in str(info.value)


def test_outputs_that_are_not_pairs_need_a_score() -> None:
    selection = make_selection(laplace(1.0), "point(k=2)", seed=0)
    with pytest.raises(ParameterError, match="score"):
        selection(0.0)


def test_an_unsupported_measure_is_not_applicable() -> None:
    approximate_zcdp = dp.c.make_approximate(gaussian(2.0))
    selection = make_selection(approximate_zcdp, LAW, score=lambda y: y)
    with pytest.raises(NotApplicableError, match="base_profile"):
        selection.map(1.0)
    assert isinstance(NotApplicableError("x"), ValueError)


def readme_block(heading: str) -> str:
    """The first ```python block after ``heading`` in the Python guide (docs/python.md)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "python.md").read_text()
    start = text.index("```python\n", text.index(heading)) + len("```python\n")
    return text[start:text.index("```\n", start)]


def test_the_readme_example_runs() -> None:
    namespace: dict[str, Any] = {}
    exec(readme_block("### Private selection in OpenDP"), namespace)
    selection = namespace["selection"]
    expected = symsel.bound(law(), pure(eps=1.0), "best")
    assert selection.map(1.0).delta(3.0) == expected.delta(3.0 - EPSILON_SHIFT)
    assert namespace["make_selection"] is make_selection


def test_integer_distances_on_a_count() -> None:
    """A count of a dataset under the symmetric distance: d_in is an integer; K = 3 runs of ε = d_in / 2."""
    count = (dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()) >> dp.t.then_count()
    selection = make_selection(count >> dp.m.then_laplace(scale=2.0), "point(k=3)", score=lambda y: -abs(y - 3),
                               delta=1e-6, seed=0)
    assert isinstance(selection([1, 2, 3]), int)
    for d_in in (1, 2):
        expected = symsel.bound(symsel.parse_distribution("point(k=3)"), pure(eps=d_in / 2), "best").epsilon(1e-6)
        assert selection.map(d_in) == (expected, 1e-6)
        assert expected <= 3 * d_in / 2  # never above the composition of the three runs
    with pytest.raises(ParameterError, match=r"d_in=0\.5.*an integer"):
        selection.map(0.5)


def test_without_opendp_the_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from symsel.apps.opendp import OpenDPMissingError

    monkeypatch.setitem(sys.modules, "opendp.prelude", None)  # `import opendp.prelude` now raises ImportError
    with pytest.raises(OpenDPMissingError, match=r"pip install 'symsel\[opendp\]'") as info:
        make_selection(laplace(1.0), LAW)
    assert isinstance(info.value, ImportError)


# ------------------------------------------------------------------------------ OpenDP's measure names, old and new
def _installed(role: str) -> list[str]:
    from symsel.apps.opendp import MEASURES

    return [name for name in MEASURES[role][0] if callable(getattr(dp, name, None))]


@pytest.mark.parametrize("role", ["pure", "zcdp", "approx", "profile"])
def test_each_measure_is_built_and_recognised_under_the_names_the_installed_opendp_has(role: str) -> None:
    from symsel.apps.opendp import _measure, _role

    built = _measure(dp, role)
    names = _installed(role)
    if names:  # the first of its names this OpenDP has builds it
        assert built == getattr(dp, names[0])()
    else:  # no name of its own: approximate(pure)
        assert role == "approx" and built == dp.approximate(_measure(dp, "pure"))
    assert _role(dp, built) == role
    others = [r for r in ("pure", "zcdp", "approx", "profile") if r != role]
    assert all(_role(dp, _measure(dp, other)) != role for other in others)
    if hasattr(dp, "renyi_divergence"):
        assert _role(dp, dp.renyi_divergence()) is None


class _RenamedOpenDP:
    """The installed OpenDP as its renaming release presents it: the measures' constructors under the new names
    only (pure_dp, zcdp, approx_dp, profile_dp), each building what the installed OpenDP builds for that measure."""

    OLD = ("max_divergence", "zero_concentrated_divergence", "smoothed_max_divergence", "fixed_smoothed_max_divergence")

    def __init__(self) -> None:
        from symsel.apps.opendp import _measure

        self.pure_dp = lambda: _measure(dp, "pure")
        self.zcdp = lambda: _measure(dp, "zcdp")
        self.approx_dp = lambda: _measure(dp, "approx")
        self.profile_dp = lambda: _measure(dp, "profile")

    def __getattr__(self, name: str) -> Any:
        if name in self.OLD:
            raise AttributeError(name)
        return getattr(dp, name)


def test_opendps_new_measure_names_are_accepted_beside_the_old(monkeypatch: pytest.MonkeyPatch) -> None:
    """With only the new names (PureDP, zCDP, ApproxDP, ProfileDP) the selection reads a pure, a zCDP and a profile
    base and builds both of its output measures; and measures reporting the new type names are recognised."""
    from types import SimpleNamespace

    import symsel.apps.opendp as app

    renamed = _RenamedOpenDP()
    for role, kinds in (("pure", ("PureDP",)), ("zcdp", ("zCDP",)), ("approx", ("ApproxDP", "Approximate<PureDP>")),
                        ("profile", ("ProfileDP",))):
        for kind in kinds:
            assert app._role(renamed, SimpleNamespace(type=kind)) == role
    for role, name in (("pure", "pure_dp"), ("zcdp", "zcdp"), ("approx", "approx_dp"), ("profile", "profile_dp")):
        assert app._measure(renamed, role) == getattr(renamed, name)()
        assert app._role(renamed, app._measure(renamed, role)) == role
    monkeypatch.setattr(app, "_dp", lambda: renamed)
    selection = make_selection(laplace(1.0), LAW, score=lambda y: y, seed=0)
    assert selection.output_measure == renamed.profile_dp()
    expected = symsel.bound(law(), pure(eps=1.0), "best")
    assert selection.map(1.0).delta(2.0) == min(1.0, expected.delta(2.0 - EPSILON_SHIFT))
    fixed = make_selection(gaussian(2.0), LAW, score=lambda y: y, delta=1e-6)
    assert fixed.output_measure == renamed.approx_dp()
    assert fixed.map(1.0) == (symsel.bound(law(), zcdp(rho=1 / 8), "best").epsilon(1e-6), 1e-6)
    smoothed = base_profile_from_map(dp.c.make_zCDP_to_approxDP(gaussian(2.0)), 1.0, profile_points=8)
    assert len(smoothed.points) == 8


def _raising(x: float) -> float:
    raise RuntimeError("inner boom")


def test_a_base_measurement_that_fails_inside_opendp_is_one_line_naming_it() -> None:
    """A base whose own function raises inside OpenDP (which wraps it in an ``OpenDPException`` whose message is a
    multi-line Python traceback): one ``ParameterError`` line naming ``measurement``, the data and the inner error;
    a map that raises: one line naming ``d_in`` and the inner error."""
    dp.enable_features("honest-but-curious")  # a user-defined measurement
    try:
        _check_failing_bases()
    finally:
        dp.disable_features("honest-but-curious")


def _check_failing_bases() -> None:
    failing = dp.m.make_user_measurement(*SPACE, dp.max_divergence(), _raising, lambda d_in: d_in)
    with pytest.raises(ParameterError) as info:
        make_selection(failing, "point(k=2)", score=float, seed=1)(1.0)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    assert "measurement=" in message and "data=1.0" in message and "RuntimeError: inner boom" in message
    bad_map = dp.m.make_user_measurement(*SPACE, dp.max_divergence(), lambda x: x, lambda d_in: 1 / 0)
    with pytest.raises(ParameterError) as info:
        make_selection(bad_map, "point(k=2)", score=float).map(1.0)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    assert "d_in=1.0" in message and "ZeroDivisionError: division by zero" in message
