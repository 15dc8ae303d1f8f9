"""Independent oracles for the numbers symsel/apps produces, written against the mutants of ``benchmarks/mutation.py``
that survived the other tests. Every reference value comes from an independent computation: the exact
μ-GDP profile at 50 digits (``reference_profiles.gdp_delta_mp``) with the exact Gaussian composition μ√k, or
dp-accounting's own accountants on the inner event; never from the code under test.

Each test is cheap (Gaussian bases, K = 1 or 2, small counts): a second or two.
"""

from __future__ import annotations

import math

import pytest
from dp_accounting import dp_event
from reference_profiles import exact_gdp_epsilon, gdp_delta_mp

from symsel.apps.accounting import SelectionAccountant, SelectionDpEvent

G = dp_event.GaussianDpEvent
DELTA = 1e-6


def _between(eps: float, exact: float, slack: float = 0.01) -> None:
    """Never below the exact ε (a pessimistic PLD), and within ``slack`` (relative) above it (the export's
    tolerance, 5e-3 in ε per selection, composed)."""
    assert exact * (1 - 1e-9) <= eps <= exact * (1 + slack), (eps, exact)


# ------------------------------------------------------------------------ counts of a selection
@pytest.mark.parametrize("count", [2, 3])
def test_a_selection_composed_count_times_is_that_many_runs(count: int) -> None:
    """``compose(selection, count)`` with K = 1 on G(σ): ``count`` runs of G(σ), exactly (√count/σ)-GDP. A mutant
    that composes the selection's PLD once (or count − 1 times) is below the exact ε."""
    sigma = 3.0
    eps = SelectionAccountant().compose(SelectionDpEvent(G(sigma), "point(k=1)"), count).get_epsilon(DELTA)
    _between(eps, exact_gdp_epsilon(math.sqrt(count) / sigma, DELTA))


def test_a_self_composed_selection_multiplies_both_counts() -> None:
    """``SelfComposedDpEvent(selection, 2)`` composed 3 times: 6 runs of G(σ) (K = 1), exactly (√6/σ)-GDP; reading
    only one of the two counts gives 2 or 3 runs."""
    sigma = 4.0
    event = dp_event.SelfComposedDpEvent(SelectionDpEvent(G(sigma), "point(k=1)"), 2)
    eps = SelectionAccountant().compose(event, 3).get_epsilon(DELTA)
    _between(eps, exact_gdp_epsilon(math.sqrt(6) / sigma, DELTA))


def test_a_selection_after_another_event_keeps_both() -> None:
    """G(σ1) then a K = 1 selection of G(σ2) then the selection again: exactly GDP with μ² = 1/σ1² + 2/σ2². Dropping
    what was composed before a selection, or the selection itself, is below it."""
    accountant = SelectionAccountant().compose(G(2.0))
    selection = SelectionDpEvent(G(3.0), "point(k=1)")
    accountant.compose(selection).compose(selection)
    _between(accountant.get_epsilon(DELTA), exact_gdp_epsilon(math.sqrt(1 / 4 + 2 / 9), DELTA))


def test_two_runs_of_a_self_composed_gaussian_inside_a_selection() -> None:
    """The best of K = 2 runs of ``SelfComposedDpEvent(G(σ), n)`` is at most its 2-fold composition, exactly
    (√(2n)/σ)-GDP, which the ``composition`` method computes; and at least one run, (√n/σ)-GDP."""
    sigma, n = 5.0, 3
    event = SelectionDpEvent(dp_event.SelfComposedDpEvent(G(sigma), n), "point(k=2)")
    eps = SelectionAccountant(method="composition").compose(event).get_epsilon(DELTA)
    _between(eps, exact_gdp_epsilon(math.sqrt(2 * n) / sigma, DELTA), slack=0.005)


def test_a_count_of_one_is_one_run() -> None:
    """``count = 1`` is the smallest count (0 is refused, as dp-accounting refuses it): one selection, K = 1 of
    G(σ), exactly (1/σ)-GDP."""
    eps = SelectionAccountant().compose(SelectionDpEvent(G(3.0), "point(k=1)"), 1).get_epsilon(DELTA)
    _between(eps, exact_gdp_epsilon(1 / 3.0, DELTA))


# ------------------------------------------------------------------------ tune (Optuna)
def test_tune_with_n_trials_runs_that_many_and_reports_their_composition() -> None:
    """``n_trials = 3`` under ``composition`` on a Gaussian base: 3 trials run, and ε is that of 3 runs composed,
    exactly (√3/σ)-GDP (at 50 digits here); 2 trials would be below it."""
    pytest.importorskip("optuna")
    from symsel.apps.hpo import tune

    sigma, calls = 4.0, []
    result = tune(lambda trial: calls.append(trial.suggest_float("x", 0, 1)) or calls[-1],
                  base=f"gaussian(sigma={sigma})", delta=DELTA, n_trials=3, seed=0, method="composition")
    assert result.k == 3 and len(calls) == 3
    exact = exact_gdp_epsilon(math.sqrt(3) / sigma, DELTA)
    assert exact * (1 - 1e-9) <= result.epsilon <= exact * (1 + 1e-6)


# ------------------------------------------------------------------------ inner events without privacy
@pytest.mark.parametrize("inner", [dp_event.LaplaceDpEvent(0.0), dp_event.GaussianDpEvent(0.0)], ids=repr)
def test_a_selection_of_a_noiseless_run_is_non_private(inner: dp_event.DpEvent) -> None:
    """Noise 0: no privacy at all, as dp-accounting says of the run itself (ε = inf, δ(ε) = 1), not an error."""
    accountant = SelectionAccountant().compose(SelectionDpEvent(inner, "point(k=2)"))
    assert accountant.get_epsilon(DELTA) == math.inf and accountant.get_delta(5.0) == 1.0


# ------------------------------------------------------------------------ sweep cells
def test_sweep_cells_of_both_kinds_give_the_exact_gaussian_numbers(tmp_path) -> None:
    """A grid's ``cells`` with a δ cell and an ε cell, K = 2 runs of G(σ) under ``composition``: exactly
    (√2/σ)-GDP, so the δ cell's ε and the ε cell's δ are the 50-digit GDP values (the ε cell read as a δ cell, or
    the law and base swapped, is refused or wrong)."""
    from symsel.apps.sweep import load_grid, run_cell

    sigma = 2.0
    grid = tmp_path / "grid.yaml"
    grid.write_text(f"cells:\n  - {{dist: 'point(k=2)', base: 'gaussian(sigma={sigma})', delta: 1e-6, "
                    f"method: composition}}\n  - {{dist: 'point(k=2)', base: 'gaussian(sigma={sigma})', epsilon: 2.0, "
                    f"method: composition}}\n")
    by_delta, by_epsilon = load_grid(grid)
    assert (by_delta.quantity, by_epsilon.quantity) == ("delta", "epsilon")
    mu = math.sqrt(2) / sigma
    first, second = run_cell(by_delta), run_cell(by_epsilon)
    assert not first["error"] and not second["error"]
    exact_eps = exact_gdp_epsilon(mu, 1e-6)
    assert exact_eps * (1 - 1e-9) <= first["epsilon"] <= exact_eps * (1 + 1e-6)
    exact_delta = float(gdp_delta_mp(mu, 2.0))
    assert exact_delta * (1 - 1e-9) <= second["delta"] <= exact_delta * (1 + 1e-6)
