"""One number for the whole pipeline (a selection, then the final run of the chosen configuration): every front-end
asks :func:`symsel.with_final_run` and gets its number, within the stated 0.1 %.

The routes: the function itself, the planner (``plan.pipeline_epsilon`` and ``symsel plan --mean --final-run``),
``symsel bound --compose-with``, :class:`~symsel.apps.accounting.SelectionAccountant` with the run composed after the
selection, and the Opacus-interface accountant (:mod:`symsel.apps.opacus`). Independent references: the exact
``μ``-GDP of all ``k + 1`` Gaussian runs (the selection is a post-processing of its ``k`` runs, so the pipeline is
never worse than their composition with the final run: an upper reference the bound must stay below), and
dp-accounting's composition of the two exported PLDs, a valid bound that the pipeline's must not exceed by more than
the stated tolerance.
"""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from dp_accounting import dp_event
from scipy.optimize import brentq
from scipy.stats import norm

import symsel
from symsel.apps import plan
from symsel.apps.accounting import SelectionAccountant, SelectionDpEvent
from symsel.apps.opacus import make_accountant_class
from symsel.cli import main

#: the agreement every route must reach with the function's own number.
ROUTE_RTOL = 1e-3
SIGMA, K, DELTA = 4.0, 30, 1e-6
BASE = f"gaussian(sigma={SIGMA})"


def gaussian_dp_epsilon(mu: float, delta: float) -> float:
    """``ε`` of ``μ``-GDP at ``δ`` (Dong, Roth and Su, Corollary 2.13), by root finding on the closed form."""
    def excess(eps: float) -> float:
        return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2) - delta
    return brentq(excess, 0.0, 100.0, xtol=1e-14)


@pytest.fixture(scope="module")
def reference() -> float:
    law, base = symsel.point(K), symsel.parse_profile(BASE)
    return float(symsel.with_final_run(symsel.bound(law, base)).epsilon(DELTA))


def test_the_function_is_exported_and_below_the_composition_of_every_run(reference: float) -> None:
    """The pipeline releases a post-processing of ``k + 1`` Gaussian runs: its bound must be below their exact
    composition, ``(√(k+1)/σ)``-GDP, and above the final run alone, ``(1/σ)``-GDP (the pipeline releases its output)."""
    assert "with_final_run" in symsel.__all__
    assert reference < gaussian_dp_epsilon(math.sqrt(K + 1) / SIGMA, DELTA)
    assert reference > gaussian_dp_epsilon(1 / SIGMA, DELTA)


def test_the_planner_answers_the_function_number(reference: float) -> None:
    value = plan.pipeline_epsilon(symsel.point(K), symsel.parse_profile(BASE), "best", DELTA)
    assert value == pytest.approx(reference, rel=ROUTE_RTOL)


def test_plan_mean_with_a_number_of_trials_and_the_final_run(reference: float) -> None:
    """``plan --mean 30 --dist "point(k={k})" --final-run`` answers (it asked for ``--epsilon`` before)."""
    result = CliRunner().invoke(main, ["plan", "--base", BASE, "--mean", str(K), "--dist", "point(k={k})",
                                       "--final-run", "--delta", str(DELTA), "--method", "best", "--json"])
    assert result.exit_code == 0, result.output
    row = json.loads(result.output)["epsilons"][0]
    assert row["epsilon"] == pytest.approx(reference, rel=ROUTE_RTOL)


def test_plan_mean_refuses_a_fractional_number_of_trials() -> None:
    result = CliRunner().invoke(main, ["plan", "--base", BASE, "--mean", "30.5", "--dist", "point(k={k})",
                                       "--delta", str(DELTA)])
    assert result.exit_code == 2
    assert "mean" in result.output and "30.5" in result.output and "whole number" in result.output


def test_bound_compose_with_answers_the_function_number(reference: float) -> None:
    result = CliRunner().invoke(main, ["bound", "--dist", f"point(k={K})", "--base", BASE, "--delta", str(DELTA),
                                       "--compose-with", BASE, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["composed"]["epsilon"] == pytest.approx(reference, rel=ROUTE_RTOL)


def test_selection_accountant_with_the_run_composed_answers_the_function_number(reference: float) -> None:
    run = dp_event.GaussianDpEvent(SIGMA)
    accountant = SelectionAccountant().compose(SelectionDpEvent(run, f"point(k={K})")).compose(run)
    assert accountant.get_epsilon(DELTA) == pytest.approx(reference, rel=ROUTE_RTOL)
    # and in one ComposedDpEvent
    both = SelectionAccountant().compose(dp_event.ComposedDpEvent([SelectionDpEvent(run, f"point(k={K})"), run]))
    assert both.get_epsilon(DELTA) == pytest.approx(reference, rel=ROUTE_RTOL)


def test_a_third_event_composes_pessimistic_plds_never_below_the_pipeline(reference: float) -> None:
    """A no-op keeps the pipeline's number; any third run composes the exported PLDs, whose ε is at least the
    pipeline's with one more run of privacy cost."""
    run = dp_event.GaussianDpEvent(SIGMA)
    accountant = SelectionAccountant().compose(SelectionDpEvent(run, f"point(k={K})")).compose(run)
    accountant.compose(dp_event.NoOpDpEvent())
    assert accountant.get_epsilon(DELTA) == pytest.approx(reference, rel=ROUTE_RTOL)
    accountant.compose(dp_event.GaussianDpEvent(1e3))
    assert accountant.get_epsilon(DELTA) >= reference * (1 - ROUTE_RTOL)


def test_the_opacus_accountant_answers_the_function_number(reference: float) -> None:
    """The Opacus-interface accountant on the same question: ``K`` Gaussian candidate runs and the final run. A
    Gaussian run is DP-SGD with ``sample_rate = 1`` and one step."""
    accountant = make_accountant_class(law=f"point(k={K})", final_run=True)()
    accountant.history = [(SIGMA, 1.0, 1)]
    assert accountant.get_epsilon(DELTA) == pytest.approx(reference, rel=ROUTE_RTOL)


def test_dp_accountings_composition_of_exported_plds_is_a_looser_bound(reference: float) -> None:
    """Composing exported PLDs (the run first, then the selection's adaptive export, in dp-accounting) is valid too,
    but it rounds each curve onto a grid first: the pipeline's number must not be above it (beyond the stated
    tolerance), and it is the one to quote."""
    run = dp_event.GaussianDpEvent(SIGMA)
    composed = SelectionAccountant().compose(run).compose(SelectionDpEvent(run, f"point(k={K})"))
    assert reference <= composed.get_epsilon(DELTA) * (1 + ROUTE_RTOL)


def test_planner_and_accountant_agree_on_how_many_trials_fit() -> None:
    """The planner's largest ``k`` with the final run fits by the accountant's ε, and ``k + 1`` does not."""
    epsilon = 3.0
    record = plan.max_trials("point(k={k})", symsel.parse_profile(BASE), epsilon, DELTA, final_run=True)
    k = record["trials"]
    run = dp_event.GaussianDpEvent(SIGMA)
    for trials, fits in ((k, True), (k + 1, False)):
        accountant = SelectionAccountant().compose(SelectionDpEvent(run, f"point(k={trials})")).compose(run)
        assert (accountant.get_epsilon(DELTA) <= epsilon) is fits, trials
