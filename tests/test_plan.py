"""Planning the number of candidates within a budget."""

from __future__ import annotations

import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant

from symsel.errors import ParameterError
from symsel.plan import MEAN_RTOL, max_mean
from symsel.profiles import GaussianProfile


def test_plan_is_the_edge_of_the_budget():
    base, budget, delta = GaussianProfile(4.0), 2.0, 1e-6
    from symsel.bounds import bound
    from symsel.distributions import geometric

    plan = max_mean("geometric(mean={mean})", base, budget, delta, "fdp")
    assert plan["epsilon"] <= budget
    assert bound(geometric(mean=plan["mean"]), base, "fdp").epsilon(delta) <= budget
    over = plan["mean"] * (1 + 3 * MEAN_RTOL)
    assert bound(geometric(mean=over), base, "fdp").epsilon(delta) > budget


def _dp_accounting_max_mean(sigma: float, budget: float, delta: float) -> float:
    """Bisection on dp-accounting's own RepeatAndSelect RDP accounting (Poisson K), independent of symsel."""

    def eps(mean: float) -> float:
        acc = rdp_privacy_accountant.RdpAccountant()
        event = dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(sigma), mean, float("inf"))
        acc.compose(event)
        return acc.get_epsilon(delta)

    lo, hi = 1.0, 1e4
    for _ in range(60):
        mid = (lo * hi) ** 0.5
        lo, hi = (mid, hi) if eps(mid) <= budget else (lo, mid)
    return lo


def test_rdp_plan_affords_at_least_what_dp_accounting_affords():
    """symsel's Thm 6 takes delta_hat from the exact Gaussian profile, where dp-accounting converts it
    from the RDP curve (tests/test_dp_accounting_agreement.py reproduces dp-accounting exactly with its
    choices): the plan must afford at least dp-accounting's mean, and the dp-accounting mean itself
    must fit symsel's budget."""
    sigma, budget, delta = 4.0, 2.5, 1e-6
    plan = max_mean("poisson(mean={mean})", GaussianProfile(sigma), budget, delta, "rdp")
    peer = _dp_accounting_max_mean(sigma, budget, delta)
    assert plan["mean"] >= peer * (1 - MEAN_RTOL)


def test_profile_accounting_affords_more_geometric_candidates_than_rdp():
    base = GaussianProfile(4.0)
    fdp = max_mean("geometric(mean={mean})", base, 2.5, 1e-6, "fdp")["mean"]
    rdp = max_mean("geometric(mean={mean})", base, 2.5, 1e-6, "rdp")["mean"]
    assert fdp > 2 * rdp


def test_plan_bad_input():
    with pytest.raises(ParameterError, match="template"):
        max_mean("poisson(mean=3)", GaussianProfile(1.0), 1.0, 1e-6)
    with pytest.raises(ParameterError, match="parameter epsilon=-1"):
        max_mean("poisson(mean={mean})", GaussianProfile(1.0), -1, 1e-6)
    tight = max_mean("geometric(mean={mean})", GaussianProfile(1.0), 0.01, 1e-6)
    assert tight["mean"] is None and "needs epsilon" in tight["reason"]


def test_plan_reports_utility_and_the_gain_over_rdp():
    from click.testing import CliRunner

    from symsel.cli import main

    result = CliRunner().invoke(main, ["plan", "--base", "gaussian(sigma=4)", "--epsilon", "2", "--delta", "1e-6",
                                       "--dist", "geometric(mean={mean})", "--candidates", "10", "--json"])
    assert result.exit_code == 0, result.output
    import json

    best, rdp = json.loads(result.stdout)["plans"]
    assert best["method"] == "best" and rdp["method"] == "rdp"
    assert best["gain_over_rdp"] == pytest.approx(best["mean"] / rdp["mean"]) and best["gain_over_rdp"] > 5
    gamma = 1 / best["mean"]  # geometric: phi(z) = gamma z / (1 - (1 - gamma) z); P&S's success probability
    x = 1 - 1 / 10
    assert best["success_probability"] == pytest.approx(1 - gamma * x / (1 - (1 - gamma) * x), rel=1e-9)
    assert best["delta_at_budget"] <= 1e-6 and best["epsilon"] <= 2


def test_the_smallest_sigma_and_the_largest_steps_fit_the_budget():
    from symsel.bounds import bound
    from symsel.distributions import geometric
    from symsel.plan import solve_base
    from symsel.spec import parse_profile

    law = geometric(mean=30)
    sigma = solve_base("gaussian(sigma={sigma})", "geometric(mean=30)", 2.0, 1e-6, "envelope")["sigma"]
    assert bound(law, GaussianProfile(sigma), "envelope").epsilon(1e-6) <= 2.0
    assert bound(law, GaussianProfile(sigma * 0.99), "envelope").epsilon(1e-6) > 2.0
    template = "rdp_subsampled_gaussian(q=0.01, sigma=1.1, steps={steps})"
    steps = solve_base(template, "geometric(mean=30)", 3.0, 1e-5, "rdp")["steps"]
    assert isinstance(steps, int) and steps > 10
    at = parse_profile(template.replace("{steps}", str(steps)))
    over = parse_profile(template.replace("{steps}", str(int(steps * 1.01) + 1)))
    assert bound(law, at, "rdp").epsilon(1e-5) <= 3.0 < bound(law, over, "rdp").epsilon(1e-5)
