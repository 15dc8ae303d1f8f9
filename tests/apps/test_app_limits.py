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
    with pytest.raises(ParameterError, match="integer >= 0") as info:
        SelectionAccountant().compose(RUN, count)
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


def test_a_huge_geometric_mean_answers() -> None:
    # gamma = 1e-50: 1 + z (gamma - 1) at z = 1 lost every digit of gamma and phi' divided by zero
    accountant = SelectionAccountant().compose(dp_event.RepeatAndSelectDpEvent(RUN, 1e50, 1))
    eps = accountant.get_epsilon(1e-6)
    assert math.isfinite(eps) and eps > SelectionAccountant().compose(
        dp_event.RepeatAndSelectDpEvent(RUN, 1e20, 1)).get_epsilon(1e-6)


def test_dp_accounting_is_pinned_below_the_next_minor() -> None:
    import dp_accounting.pld.pld_privacy_accountant as pld

    text = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    assert re.search(r'"dp-accounting>=0\.6,<0\.7"', text)
    held = pld.PLDAccountant()
    assert hasattr(held, "_pld") and hasattr(held, "_maybe_compose")  # the private names accounting.py uses


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
