"""Figure 7's peer column: the largest mean dp-accounting's RDP ``RepeatAndSelectDpEvent`` allows, checked with
dp-accounting directly: within the budget at the mean returned, over it one part in 1e9 above (a reference value
from the bisection the figure used before: 46 accountants a cell)."""

from __future__ import annotations

import math

import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant

from symsel.report.figures import FIG7, _dp_accounting_mean


def peer_epsilon(mean: float, shape: float) -> float:
    run = dp_event.SelfComposedDpEvent(
        dp_event.PoissonSampledDpEvent(FIG7["q"], dp_event.GaussianDpEvent(FIG7["sigma"])), FIG7["steps"])
    accountant = rdp_privacy_accountant.RdpAccountant()
    accountant.compose(dp_event.RepeatAndSelectDpEvent(run, mean, shape))
    return accountant.get_epsilon(FIG7["delta"])


@pytest.mark.parametrize(("eps", "shape", "bisected"), [(2.5, 1.0, 44.404475123532336),
                                                         (2.5, math.inf, 11.51572952713766)])
def test_the_peer_mean_is_the_largest_within_the_budget(eps, shape, bisected):
    mean = _dp_accounting_mean(eps, shape)
    assert mean == pytest.approx(bisected, rel=1e-11)
    assert peer_epsilon(mean, shape) <= eps < peer_epsilon(mean * (1 + 1e-9), shape)


def test_no_mean_fits_a_budget_below_one_run_and_every_mean_fits_a_huge_one():
    assert _dp_accounting_mean(1.0, 1.0) is None
    assert _dp_accounting_mean(50.0, 1.0, hi=1e6) == 1e6


@pytest.mark.parametrize("shape", [1.0, 0.0, 0.5, math.inf])
def test_the_shortcut_gives_dp_accountings_epsilon_to_the_bit(shape):
    """The peer's ε with the run's RDP computed once is dp-accounting's own ``compose`` + ``get_epsilon``, bit for
    bit, from one run to ten million (and the full ``compose`` is what the shortcut falls back to)."""
    from symsel.report.figures import _fig7_run_rdp, _repeat_and_select_epsilon

    for mean in (1.0, 1.5, 3.7, 44.4, 1234.5, 9.9e6):
        expected = peer_epsilon(mean, shape)
        assert _repeat_and_select_epsilon(_fig7_run_rdp(), mean, shape, FIG7["delta"]) == expected, (mean, shape)


def test_the_shortcut_falls_back_to_composing_the_event():
    """An accountant without dp-accounting's private ``_rdp`` (a version that renamed it): the event is composed in
    full, and the answer is still dp-accounting's."""
    import types

    from symsel.report.figures import _fig7_run_rdp, _repeat_and_select_epsilon

    event, held = _fig7_run_rdp()
    renamed = types.SimpleNamespace(_orders=held._orders)
    assert _repeat_and_select_epsilon((event, renamed), 30.0, 1.0, FIG7["delta"]) == peer_epsilon(30.0, 1.0)
