"""Bad input to the Python APIs of symsel.apps gets one ParameterError naming the parameter and its range (or the right
answer), never a bare TypeError/ZeroDivisionError, a hang, a traceback in a message, or a NaN/inf released."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
from dp_accounting import dp_event

import symsel
from symsel.apps import accounting
from symsel.apps.accounting import SelectionAccountant, UnsupportedSelectionError
from symsel.errors import ParameterError

RUN = dp_event.GaussianDpEvent(4.0)


# ------------------------------------------------------------------------------------------- SelectionAccountant
def test_a_spec_string_is_not_an_event() -> None:
    with pytest.raises(ParameterError, match=r"parameter event=.*gaussian\(sigma=4\).*DpEvent") as info:
        SelectionAccountant().compose("gaussian(sigma=4)")
    assert info.value.name == "event"


@pytest.mark.parametrize("count", [2.5, -1, "2", True, math.nan])
def test_a_count_must_be_an_integer(count: Any) -> None:
    with pytest.raises(ParameterError, match="an integer >= ") as info:
        SelectionAccountant().compose(RUN, count)
    assert info.value.name == "count"


def test_a_count_of_zero_is_refused_naming_it() -> None:
    """dp-accounting refuses count 0 with a bare ValueError ("`count` must be positive"); it was let through."""
    with pytest.raises(ParameterError, match="integer >= 1") as info:
        SelectionAccountant().compose(RUN, 0)
    assert info.value.name == "count"


def test_an_integral_numpy_count_is_accepted() -> None:
    import numpy as np

    eps = SelectionAccountant().compose(RUN, np.int64(2)).get_epsilon(1e-6)
    assert eps == pytest.approx(SelectionAccountant().compose(RUN, 2).get_epsilon(1e-6))


@pytest.mark.parametrize(("mean", "shape", "allowed"), [
    (1e300, 1, "mean < 1e+300"),  # was a ZeroDivisionError
    (1e300, 0.5, "mean < 1e+300"),
    (1e300, math.inf, f"mean <= {accounting.MAX_POISSON_MEAN:g}"),
    (1e9, math.inf, f"mean <= {accounting.MAX_POISSON_MEAN:g}"),  # was a hang
])
def test_a_mean_out_of_range_is_one_clear_error(mean: float, shape: float, allowed: str) -> None:
    accountant = SelectionAccountant()
    with pytest.raises(UnsupportedSelectionError) as info:
        accountant.compose(dp_event.RepeatAndSelectDpEvent(RUN, mean, shape))
    assert isinstance(info.value, ParameterError) and isinstance(info.value, ValueError)
    assert info.value.name == "mean" and allowed in str(info.value) and "\n" not in str(info.value)
    assert not accountant.supports(dp_event.RepeatAndSelectDpEvent(RUN, mean, shape))
    assert accountant.get_epsilon(1e-6) == 0.0  # nothing was composed


def test_a_selection_composed_too_many_times_is_refused_at_once() -> None:
    """count 1e18 (or 1e4 x 1e3 through a SelfComposedDpEvent) made dp-accounting self-compose the exported PLD that
    many times: a hang. Refused before anything is bounded, naming the limit; the accountant is unchanged."""
    accountant = SelectionAccountant()
    selection = accounting.SelectionDpEvent(RUN, "point(k=2)")
    for event, count in ((selection, 10**18), (dp_event.SelfComposedDpEvent(
            dp_event.ComposedDpEvent([RUN, selection]), 10**4), 10**3)):
        with pytest.raises(ParameterError, match=f"MAX_SELECTION_COUNT = {accounting.MAX_SELECTION_COUNT}") as info:
            accountant.compose(event, count)
        assert info.value.name == "count"
    assert accountant.get_epsilon(1e-6) == 0.0


def test_an_export_of_too_many_points_is_refused() -> None:
    """export_points=1e12 asked numpy for 7 TiB (a MemoryError): refused by the constructor, naming the limit."""
    with pytest.raises(ParameterError, match=str(accounting.MAX_EXPORT_POINTS)) as info:
        SelectionAccountant(export_points=10**12)
    assert info.value.name == "export_points"


@pytest.mark.parametrize("inner", [dp_event.GaussianDpEvent(math.nan), dp_event.GaussianDpEvent(-4.0)], ids=repr)
def test_a_selection_of_a_bad_inner_event_is_a_value_error_naming_it(inner: Any) -> None:
    """A NaN or negative noise inside a selection: dp-accounting's UnsupportedEventError (as before) and now also a
    symsel ParameterError naming sigma (it was an UnsupportedEventError only, not a ValueError)."""
    with pytest.raises(UnsupportedSelectionError) as info:
        SelectionAccountant().compose(accounting.SelectionDpEvent(inner, "point(k=2)"))
    assert isinstance(info.value, ParameterError) and info.value.name == "sigma"


def test_a_selection_of_something_that_is_not_an_event_names_it() -> None:
    with pytest.raises(ParameterError, match="DpEvent as the event a selection runs") as info:
        SelectionAccountant().compose(accounting.SelectionDpEvent("gaussian(sigma=4)", "point(k=2)"))
    assert info.value.name == "event"


@pytest.mark.filterwarnings("error::RuntimeWarning")  # log1p(-1) once warned from the float64 precision probe
def test_a_huge_geometric_mean_answers() -> None:
    # gamma = 1e-50: 1 + z (gamma - 1) at z = 1 lost every digit of gamma and phi' divided by zero
    accountant = SelectionAccountant().compose(dp_event.RepeatAndSelectDpEvent(RUN, 1e50, 1))
    eps = accountant.get_epsilon(1e-6)
    assert math.isfinite(eps) and eps > SelectionAccountant().compose(
        dp_event.RepeatAndSelectDpEvent(RUN, 1e20, 1)).get_epsilon(1e-6)


def test_dp_accounting_has_no_upper_pin_so_test_latest_shows_drift() -> None:
    """SelectionAccountant uses dp-accounting's public API only (tests/apps/test_accounting.py checks it with
    PLDAccountant cut down to its public surface), so no release is pinned above."""
    text = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    requirement = re.search(r'"dp-accounting([^"]*)"', text)
    assert requirement is not None and requirement.group(1) == ">=0.6"


# ------------------------------------------------------------------------------------------- tune (Optuna)
@pytest.fixture
def optuna() -> Any:
    module = pytest.importorskip("optuna")
    level = module.logging.get_verbosity()
    module.logging.set_verbosity(module.logging.WARNING)
    yield module
    module.logging.set_verbosity(level)


def test_tune_refuses_a_law_of_too_many_trials(optuna: Any) -> None:
    from symsel.apps.hpo import MAX_TRIALS, tune

    calls = []
    with pytest.raises(ParameterError, match=f"MAX_TRIALS = {MAX_TRIALS}") as info:
        tune(lambda t: calls.append(1) or 0.0, law="point(k=100000000)", base="gaussian(sigma=4)", delta=1e-6)
    assert info.value.name == "law" and "point(k=100000000)" in str(info.value) and not calls


def test_tune_n_trials_is_a_fixed_number_of_trials(optuna: Any) -> None:
    from symsel.apps.hpo import tune

    calls = []

    def objective(trial: Any) -> float:
        calls.append(trial.suggest_float("x", 0.0, 1.0))
        return calls[-1]

    result = tune(objective, base="gaussian(sigma=4)", delta=1e-6, n_trials=10, seed=0, method="composition")
    assert result.k == 10 and len(calls) == 10 and result.best_value == max(calls)
    fixed = symsel.bound(symsel.point(10), symsel.parse_profile("gaussian(sigma=4)"), "composition")
    assert result.epsilon == pytest.approx(fixed.epsilon(1e-6), rel=1e-12)


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"n_trials": 2.5}, "n_trials"),
    ({"n_trials": 0}, "n_trials"),
    ({"n_trials": 10**7}, "n_trials"),
    ({"n_trials": 3, "law": "point(k=3)"}, "n_trials"),
    ({}, "law"),
])
def test_tune_bad_n_trials_names_it(optuna: Any, kwargs: dict, name: str) -> None:
    from symsel.apps.hpo import tune

    with pytest.raises(ParameterError) as info:
        tune(lambda t: 0.0, base="gaussian(sigma=4)", delta=1e-6, **kwargs)
    assert info.value.name == name


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_tune_refuses_an_objective_value_that_is_not_finite(optuna: Any, value: float) -> None:
    from symsel.apps.hpo import tune

    with pytest.raises(ParameterError, match="finite real value") as info:
        tune(lambda t: value, law="point(k=3)", base="gaussian(sigma=4)", delta=1e-6, seed=0)
    assert info.value.name == "objective" and "\n" not in str(info.value)


# ------------------------------------------------------------------------------------------- make_selection (OpenDP)
@pytest.fixture
def dp() -> Any:
    module = pytest.importorskip("opendp.prelude")
    module.enable_features("contrib")
    return module


def _laplace(dp: Any) -> Any:
    return (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)) >> dp.m.then_laplace(scale=1.0)


def test_make_selection_refuses_a_law_of_too_many_runs(dp: Any) -> None:
    from symsel.apps.opendp import MAX_RUNS, make_selection

    with pytest.raises(ParameterError, match=f"MAX_RUNS = {MAX_RUNS}") as info:
        make_selection(_laplace(dp), "point(k=100000000)")
    assert info.value.name == "law" and "point(k=100000000)" in str(info.value)


def test_a_score_that_raises_is_one_line_naming_score(dp: Any) -> None:
    from symsel.apps.opendp import make_selection

    def score(output: float) -> float:
        raise KeyError("no such column")

    selection = make_selection(_laplace(dp), "point(k=3)", score=score, seed=0)
    with pytest.raises(ParameterError, match="KeyError") as info:
        selection(1.0)
    message = str(info.value)
    assert info.value.name == "score" and "\n" not in message and "Traceback" not in message


def test_a_nan_score_is_refused(dp: Any) -> None:
    from symsel.apps.opendp import make_selection

    selection = make_selection(_laplace(dp), "point(k=3)", score=lambda output: math.nan, seed=0)
    with pytest.raises(ParameterError, match="not NaN") as info:
        selection(1.0)
    assert info.value.name == "score"


# ------------------------------------------------------------------------------------------- sweep grids
ALIAS_BOMB = ("a: &a ['x','x','x','x','x','x','x','x','x']\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
              "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
              "laws: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nbases: ['gaussian(sigma=4)']\ndeltas: [1e-6]\n")


@pytest.mark.parametrize(("text", "name"), [
    (ALIAS_BOMB, "grid"),  # was accepted (a 600 kB repr as one law); now refused from its cell count, before any cell
    ("laws: [3]\nbases: ['gaussian(sigma=4)']\ndeltas: [1e-6]\n", "laws"),
    ("laws: ['geometric(mean=3)']\nbases: [{sigma: 4}]\ndeltas: [1e-6]\n", "bases"),
    ("laws: ['geometric(mean=3)']\nbases: ['gaussian(sigma=4)']\ndeltas: [1e-6]\nmethods: [[paper]]\n", "methods"),
    ("laws: ['']\nbases: ['gaussian(sigma=4)']\ndeltas: [1e-6]\n", "laws"),
    ("cells:\n  - {dist: [1, 2], base: 'gaussian(sigma=4)', delta: 1e-6}\n", "dist"),
])
def test_a_grid_entry_that_is_not_a_spec_string_is_refused(tmp_path: Path, text: str, name: str) -> None:
    from symsel.apps.sweep import load_grid

    grid = tmp_path / "grid.yaml"
    grid.write_text(text)
    with pytest.raises(ParameterError) as info:
        load_grid(grid)
    assert info.value.name == name and len(str(info.value)) < 300 and "\n" not in str(info.value)


def test_make_selection_refuses_too_many_profile_points(dp: Any) -> None:
    """profile_points=1e12 was accepted (and, on a base whose map is a privacy profile, sampled one point at a
    time: a hang). Refused, naming the limit."""
    from symsel.apps.opendp import MAX_PROFILE_POINTS, make_selection

    with pytest.raises(ParameterError, match=str(MAX_PROFILE_POINTS)) as info:
        make_selection(_laplace(dp), "point(k=2)", score=float, profile_points=10**12)
    assert info.value.name == "profile_points"


# ------------------------------------------------------------------------------------------- plan / tuning
def test_plan_templates_that_are_not_strings_name_the_parameter() -> None:
    """An int as a template was a TypeError ("argument of type 'int' is not iterable")."""
    from symsel.apps import plan

    base = symsel.parse_profile("gaussian(sigma=4)")
    with pytest.raises(ParameterError) as info:
        plan.max_mean(3, base, 2.0, 1e-6)  # type: ignore[arg-type]
    assert info.value.name == "dist"
    with pytest.raises(ParameterError) as info:
        plan.solve_base(3, "point(k=2)", 2.0, 1e-6)  # type: ignore[arg-type]
    assert info.value.name == "base"


def test_solve_base_refuses_a_budget_beyond_its_range() -> None:
    """epsilon = 1e300 was a hang (every step evaluated bounds far out in their tails); refused, naming the limit."""
    from symsel.apps.plan import MAX_SOLVE_EPSILON, solve_base

    with pytest.raises(ParameterError, match=f"{MAX_SOLVE_EPSILON:g}") as info:
        solve_base("gaussian(sigma={sigma})", "point(k=2)", 1e300, 1e-6)
    assert info.value.name == "epsilon"


@pytest.mark.parametrize(("sigmas", "name"), [("abc", "sigmas"), ([], "sigmas"), ([math.nan], "sigma"),
                                              ([1.0, -2.0], "sigma")])
def test_sigma_tuning_checks_its_noise_levels(sigmas: Any, name: str) -> None:
    """A string of sigmas was iterated character by character (ValueError: could not convert string to float)."""
    from symsel.apps.tuning import sigma_tuning

    with pytest.raises(ParameterError) as info:
        sigma_tuning(0.01, sigmas, symsel.geometric(mean=10), [(1.0, 1e-6)], 1e-6)
    assert info.value.name == name
