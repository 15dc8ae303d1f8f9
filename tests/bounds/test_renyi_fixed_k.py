"""The `rdp` route for a fixed number of runs is the RDP composition of the runs, which dp-accounting's
`RdpAccountant` computes: compared here with dp-accounting itself (an independent implementation of the subsampled
Gaussian's RDP curve, of composition and of the conversion to (ε, δ)), in both directions.
"""

from __future__ import annotations

import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant

import symsel
from symsel.apps import plan

#: symsel's conversion and order grid differ from dp-accounting's; measured within 2e-4 (relative) on these cases.
CONVERSION_RTOL = 2e-3


def dp_accounting_epsilon(event: dp_event.DpEvent, k: int, delta: float) -> float:
    return rdp_privacy_accountant.RdpAccountant().compose(event, k).get_epsilon(delta)


def dpsgd(q: float, sigma: float, steps: int) -> dp_event.DpEvent:
    return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps)


CASES = [("dpsgd(q=0.01, sigma=1.1, steps=1000)", dpsgd(0.01, 1.1, 1000), 18, 1e-5),
         ("dpsgd(q=0.004, sigma=1.0, steps=5000)", dpsgd(0.004, 1.0, 5000), 30, 1e-5),
         ("dpsgd(q=0.1, sigma=2.0, steps=50)", dpsgd(0.1, 2.0, 50), 5, 1e-8),
         ("gaussian(sigma=4)", dp_event.GaussianDpEvent(4.0), 40, 1e-6),
         ("gaussian(sigma=1)", dp_event.GaussianDpEvent(1.0), 2, 1e-10)]


@pytest.mark.parametrize(("spec", "event", "k", "delta"), CASES)
def test_rdp_for_k_fixed_runs_is_dp_accountings_rdp_composition(spec: str, event: dp_event.DpEvent, k: int,
                                                                 delta: float) -> None:
    """Within the two conversions' difference, on both sides: a curve above the composition (P&S Appendix D.1's
    extra log k/(λ−1)) fails the upper side, one below it (fewer runs composed) the lower side."""
    ours = symsel.bound(symsel.point(k), symsel.parse_profile(spec), "rdp").epsilon(delta)
    peer = dp_accounting_epsilon(event, k, delta)
    assert peer * (1 - CONVERSION_RTOL) <= ours <= peer * (1 + CONVERSION_RTOL)


def test_the_planners_rdp_row_fits_as_many_trials_as_dp_accounting() -> None:
    """dpsgd(q=0.01, sigma=1.1, steps=1000) at ε = 8, δ = 1e-5: dp-accounting's RDP composition fits 18 runs and not
    19; the planner's `rdp` row says the same."""
    event = dpsgd(0.01, 1.1, 1000)
    assert dp_accounting_epsilon(event, 18, 1e-5) <= 8 < dp_accounting_epsilon(event, 19, 1e-5)
    record = plan.max_trials("point(k={k})", symsel.parse_profile("dpsgd(q=0.01, sigma=1.1, steps=1000)"), 8.0, 1e-5,
                             "rdp")
    assert record["trials"] == 18
