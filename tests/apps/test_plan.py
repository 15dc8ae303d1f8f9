"""Planning the number of candidates within a budget."""

from __future__ import annotations

import math

import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant

import symsel
from symsel.apps.plan import MEAN_RTOL, max_mean
from symsel.errors import ParameterError
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
    from the RDP curve (tests/bounds/test_dp_accounting_agreement.py reproduces dp-accounting exactly with its
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
    from symsel.apps.plan import solve_base
    from symsel.bounds import bound
    from symsel.distributions import geometric
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


# ------------------------------------------------------------------------------------------ pinned, every branch
def _rr_delta_mp(eps0, x):
    """δ(x) of binary randomized response RR(ε0) (the worst ε0-DP pair), any real x, at 50 digits."""
    import mpmath

    with mpmath.workdps(50):
        e0, x = mpmath.mpf(eps0), mpmath.mpf(x)
        if x >= e0:
            return mpmath.mpf(0)
        if x >= 0:
            return (mpmath.exp(e0) - mpmath.exp(x)) / (1 + mpmath.exp(e0))
        return 1 - mpmath.exp(x) + mpmath.exp(x) * _rr_delta_mp(eps0, -x)


def _geometric_fdp_log_ratio_mp(mean, eps0):
    """log R over the ε0-DP region for geometric K: φ'(z) = γ/(1 − (1−γ)z)², and G = 2 log((1 − c q')/(1 − c q)),
    c = 1 − γ, is monotone along each edge of the region's lower boundary (its q-derivative has one sign), so the
    sup sits at the vertex V = (e^ε0, 1)/(1 + e^ε0)."""
    import mpmath

    with mpmath.workdps(50):
        c, e = 1 - 1 / mpmath.mpf(mean), mpmath.exp(mpmath.mpf(eps0))
        return 2 * mpmath.log((1 - c / (1 + e)) / (1 - c * e / (1 + e)))


def test_plan_on_a_pure_base_is_pinned_to_the_closed_form():
    """geometric K on pure ε0-DP, fdp: δ_A(ε) = m δ_RR(ε − log R(m)) with log R at the vertex (above). The largest
    mean within (0.75, 1e-3) at 50 digits is 7.0923…; the plan is below it within MEAN_RTOL, the epsilon it
    reports is log R(m) + ε_RR(δ/m) at its own mean, to 1e-6, and its δ at the budget is the exact one up to the
    sup's certified tolerance (1e-7 on log R)."""
    import math

    import mpmath

    from symsel.profiles import pure

    eps0, budget, delta = 0.3, 0.75, 1e-3

    def selection_delta(m, slack=0.0):
        return min(1, m * _rr_delta_mp(eps0, budget - _geometric_fdp_log_ratio_mp(m, eps0) - slack))

    with mpmath.workdps(50):
        lo, hi = mpmath.mpf(1), mpmath.mpf(100)
        for _ in range(120):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if selection_delta(mid) <= delta else (lo, mid)
    best = float(lo)
    assert 7.09 < best < 7.1
    plan = max_mean("geometric(mean={mean})", pure(eps0), budget, delta, "fdp")
    assert best * (1 - MEAN_RTOL) <= plan["mean"] <= best
    m = plan["mean"]
    with mpmath.workdps(50):
        e = mpmath.exp(mpmath.mpf(eps0))
        eps_rr = mpmath.log(e - (delta / mpmath.mpf(m)) * (1 + e))  # δ_RR(x) = δ/m on 0 ≤ x ≤ ε0
        expected = _geometric_fdp_log_ratio_mp(m, eps0) + eps_rr
    assert plan["epsilon"] <= budget
    assert plan["epsilon"] == pytest.approx(float(expected), rel=1e-6)
    # δ is steep in log R: the certified sup (tolerance 1e-7 on log R) moves it by a few 1e-4 relative
    assert selection_delta(m) <= plan["delta_at_budget"] <= selection_delta(m, slack=1e-7) <= delta
    assert "capped" not in plan and plan["template_mean"] == m
    assert math.isfinite(plan["expected_quantile"])


def test_a_plan_that_fits_every_mean_stops_at_the_stated_cap():
    """Cor 5.3 (Koskela et al.): a pure ε0-DP base and geometric K give (3 ε0, 0) whatever the mean, so every
    mean fits a (2, 1e-6) budget with ε0 = 0.5: the doubling search stops at MAX_MEAN, flags the plan as capped
    and reports the last mean it checked (above MAX_MEAN/2, at most MAX_MEAN) with epsilon 3 ε0 and δ = 0 at the
    budget; the exact selection on randomized response at that mean is 0 there as well."""
    from reference_profiles import exact_selection_delta

    from symsel.apps.plan import MAX_MEAN
    from symsel.distributions import geometric
    from symsel.profiles import pure

    plan = max_mean("geometric(mean={mean})", pure(0.5), 2.0, 1e-6, "paper", candidates=50)
    assert plan["capped"] is True
    assert MAX_MEAN / 2 < plan["mean"] <= MAX_MEAN
    assert 1.5 <= plan["epsilon"] <= 1.5 + 1e-9
    assert plan["delta_at_budget"] == 0.0
    e = math.exp(0.5)
    p, r = [e / (1 + e), 1 / (1 + e)], [1 / (1 + e), e / (1 + e)]
    law = geometric(mean=plan["template_mean"])
    for order in ([0, 1], [1, 0]):
        assert exact_selection_delta(p, r, order, law, 2.0, dps=50) == 0
    gamma = 1 / plan["mean"]  # P&S App. A.2.1: 1 - φ(1 - 1/candidates) for geometric K
    x = 1 - 1 / 50
    assert plan["success_probability"] == pytest.approx(1 - gamma * x / (1 - (1 - gamma) * x), rel=1e-9)


def test_a_method_that_does_not_apply_is_reported_not_raised():
    """paper has no closed form for a truncated law: the plan says why instead of raising."""
    plan = max_mean("truncated(dist=geometric(mean={mean}), k_max=50)", GaussianProfile(4.0), 2.0, 1e-6, "paper")
    assert plan["mean"] is None and plan["epsilon"] is None and "paper" in plan["reason"]


def test_an_impossible_budget_reports_the_epsilon_the_smallest_mean_needs():
    """gaussian σ = 1 cannot meet ε = 0.01 with geometric K of mean 1 + 1e-6 (P[K = 1] ≈ 1): the record gives
    the ε that mean needs, which is at least the base's own ε(δ) (a selection is never more private than one
    run), found here from the 50-digit GDP profile."""
    import mpmath
    from reference_profiles import gdp_delta_mp

    tight = max_mean("geometric(mean={mean})", GaussianProfile(1.0), 0.01, 1e-6)
    lo, hi = mpmath.mpf(0), mpmath.mpf(10)
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gdp_delta_mp(1.0, mid) > 1e-6 else (lo, mid)
    assert tight["mean"] is None and tight["epsilon"] >= float(lo)
    assert "needs epsilon" in tight["reason"]


def test_solve_base_refuses_templates_without_exactly_one_knob():
    from symsel.apps.plan import solve_base

    for template in ("gaussian(sigma=2)", "dpsgd(q=0.01, sigma={sigma}, steps={steps})"):
        with pytest.raises(ParameterError, match="exactly one"):
            solve_base(template, "geometric(mean=10)", 1.0, 1e-6)


def test_solve_base_reports_an_impossible_budget_and_a_budget_the_whole_range_meets():
    """No σ up to 1e4 brings geometric K of mean 10 to ε = 1e-6 (the bound at σ = 1e4 is above it): no σ, and a
    reason. σ = 1e-2 already meets ε = 1e5, so the whole search range fits and its end, 1e-2, is returned. For
    steps, the whole range up to 1e6 fits a tiny-rate, high-noise run, and its end is returned (checked)."""
    from symsel.apps.plan import BASE_KNOBS, solve_base
    from symsel.bounds import bound
    from symsel.distributions import geometric
    from symsel.spec import parse_profile

    law = geometric(mean=10)
    none = solve_base("gaussian(sigma={sigma})", "geometric(mean=10)", 1e-6, 1e-9, "paper")
    assert none["sigma"] is None and "sigma" in none["reason"]
    assert bound(law, GaussianProfile(BASE_KNOBS["sigma"][1]), "paper").epsilon(1e-9) > 1e-6
    easy = solve_base("gaussian(sigma={sigma})", "geometric(mean=10)", 1e5, 1e-9, "paper")
    assert easy["sigma"] == pytest.approx(BASE_KNOBS["sigma"][0], rel=1e-12)
    assert easy["epsilon"] <= 1e5 and easy["delta_at_budget"] <= 1e-9
    template = "rdp_subsampled_gaussian(q=1e-06, sigma=50.0, steps={steps})"
    many = solve_base(template, "geometric(mean=10)", 5.0, 1e-5, "rdp")
    # the search runs in log(steps) and floors: exp(log(1e6)) = 999999.99…, so the end of the range is 999999
    assert int(BASE_KNOBS["steps"][1]) - 1 <= many["steps"] <= int(BASE_KNOBS["steps"][1])
    at = parse_profile(template.replace("{steps}", str(many["steps"])))
    assert bound(law, at, "rdp").epsilon(1e-5) <= 5.0


def test_a_reported_epsilon_over_the_budget_keeps_the_checked_mean_and_reports_the_budget(monkeypatch):
    """ε(δ) is found on its safe side, so at the edge mean it may land a hair above the budget although
    δ(ε_budget) was checked to fit: the planner keeps that mean and reports the budget's ε, itself certified there
    (the bound's δ at ε_budget, computed afresh, is within δ_budget). Simulated by an ε(δ) that is 1e-9 over the
    budget at the first mean it is asked about (the search itself only asks δ)."""
    import symsel.apps.plan as plan_module

    base, template = GaussianProfile(4.0), "geometric(mean={mean})"
    plain = max_mean(template, base, 2.0, 1e-6, "fdp")
    real, asked = plan_module._epsilon, []

    def over_once(*args):
        asked.append(args[1])
        value = real(*args)
        return max(value, 2.0 + 1e-9) if len(asked) == 1 else value

    monkeypatch.setattr(plan_module, "_epsilon", over_once)
    clamped = max_mean(template, base, 2.0, 1e-6, "fdp")
    assert asked[0] == plain["template_mean"]
    assert clamped["template_mean"] == plain["template_mean"] and clamped["epsilon"] == 2.0
    law = symsel.parse_distribution(template.replace("{mean}", repr(clamped["template_mean"])))
    assert symsel.bound(law, base, "fdp").delta(2.0) <= 1e-6


def test_a_plan_never_reports_a_mean_over_its_budget(monkeypatch):
    """Simulated by an ε(δ) that stays 0.5 above the true one: no mean within reach of 20 steps of MEAN_RTOL fits."""
    import symsel.apps.plan as plan_module

    real = plan_module._epsilon
    monkeypatch.setattr(plan_module, "_epsilon", lambda *args: real(*args) + 0.5)
    plan = max_mean("geometric(mean={mean})", GaussianProfile(4.0), 2.0, 1e-6, "fdp")
    assert plan["mean"] is None or plan["epsilon"] <= 2.0, plan


def test_a_zero_delta_budget_is_a_pure_dp_plan():
    """δ = 0: a mean fits when the bound is exactly 0 at the budget. Pure 0.5-DP and geometric K give (1.5, 0) for
    every mean (Cor 5.3), so a (1.5, 0) budget fits every mean, with ε exactly at the budget: the search doubles
    to its cap and reports a mean it checked (a doubling point of min_mean)."""
    from symsel.apps.plan import MAX_MEAN
    from symsel.profiles import pure

    plan = max_mean("geometric(mean={mean})", pure(0.5), 1.5, 0.0, "paper")
    assert plan["capped"] is True and plan["delta_at_budget"] == 0.0
    assert 1.5 <= plan["epsilon"] <= 1.5 + 1e-12
    assert MAX_MEAN / 2 < plan["mean"] <= MAX_MEAN
    doublings = math.log2(plan["template_mean"] / (1.0 + 1e-6))
    assert doublings == pytest.approx(round(doublings), abs=1e-9)
    over = max_mean("geometric(mean={mean})", pure(0.5), 0.5, 0.0, "paper")  # no selection beats one run
    assert over["mean"] is None and over["epsilon"] > 0.5


def test_the_cap_itself_is_searched():
    """MAX_MEAN is included in the search: from min_mean = MAX_MEAN / 2^33 the doubling reaches MAX_MEAN exactly,
    which fits, and that is the mean reported (up to the rounding of exp(log(·)))."""
    from symsel.apps.plan import MAX_MEAN
    from symsel.profiles import pure

    plan = max_mean("geometric(mean={mean})", pure(0.5), 2.0, 1e-6, "paper", min_mean=MAX_MEAN / 2**33)
    assert plan["capped"] is True
    assert plan["template_mean"] == pytest.approx(MAX_MEAN, rel=1e-12)


def test_solve_base_answers_a_zero_delta_budget():
    from symsel.apps.plan import solve_base

    result = solve_base("gaussian(sigma={sigma})", "geometric(mean=10)", 2.0, 0.0, "paper")
    assert result["sigma"] is None or result["delta_at_budget"] == 0.0


@pytest.mark.parametrize("epsilon, delta", [(3.0, 1e-6), (1.0, 1e-3), (5.0, 1e-10), (8.0, 1e-6)])
def test_max_trials_matches_the_exact_composition_of_gaussian_runs(epsilon: float, delta: float) -> None:
    """Fixed K, method composition on gaussian(σ = 4): k runs are exactly (√k/4)-GDP, so the largest k with
    δ(ε) ≤ δ is read off the closed form at 50 digits here (the secant search must find the bisection's integer)."""
    from reference_profiles import gdp_delta_mp

    from symsel.apps.plan import max_trials

    reference = max(k for k in range(1, 400) if gdp_delta_mp(math.sqrt(k) / 4, epsilon) <= delta)
    assert reference < 399
    found = max_trials("point(k={k})", GaussianProfile(4.0), epsilon, delta, "composition")
    assert found["trials"] == reference
    assert found["delta_at_budget"] <= delta < found["next_delta_at_budget"]


def test_max_trials_with_best_fits_more_trials_than_composition_on_laplace() -> None:
    """best takes interval on Laplace: more trials fit ε = 12 than composition's k ε₀ allows (at most 12 there:
    12 runs of a 1-DP base are 12-DP, 13 are not within δ = 1e-6 by composition's exact sums)."""
    from symsel.apps.plan import max_trials
    from symsel.spec import parse_profile

    base = parse_profile("laplace(scale=1)")
    best = max_trials("point(k={k})", base, 14.0, 1e-6, "best")
    composition = max_trials("point(k={k})", base, 14.0, 1e-6, "composition")
    assert best["trials"] >= composition["trials"] and best["delta_at_budget"] <= 1e-6
    with pytest.raises(ParameterError, match="dist"):
        max_trials("point(k=3)", base, 3.0, 1e-6)


#: one Gaussian trial then the final run, planned at ε = 2, δ = 1e-6 by best: the CLI's arguments and Python's
TWO_RUN_ARGS = ["--base", "gaussian(sigma={sigma})", "--dist", "point(k=1)", "--epsilon", "2", "--delta", "1e-6",
                "--method", "best", "--final-run"]


@pytest.fixture(scope="module")
def two_run_plan() -> dict:
    """:func:`~symsel.apps.plan.solve_base` on the question of :data:`TWO_RUN_ARGS` (about 6 CPU-s), computed once for
    the tests that check it against the closed form and against the command line."""
    from symsel.apps.plan import solve_base

    return solve_base("gaussian(sigma={sigma})", "point(k=1)", 2.0, 1e-6, "best", final_run=True)


def test_solve_base_with_the_final_run_of_one_gaussian_run_is_the_exact_two_run_sigma(two_run_plan: dict) -> None:
    """One trial then the final run is two Gaussian runs, exactly (σ/√2)-Gaussian (closed form): the planned σ is on
    the feasible side of the exact σ* (never below it) and within 1 % of it."""
    from scipy.optimize import brentq

    plan = two_run_plan
    exact = brentq(lambda s: GaussianProfile(s / math.sqrt(2)).epsilon(1e-6) - 2.0, 0.5, 20.0, xtol=1e-12)
    assert exact <= plan["sigma"] <= exact * 1.01
    assert plan["epsilon"] <= 2.0 and plan["delta_at_budget"] <= 1e-6


def test_max_trials_with_the_final_run_between_basic_composition_and_the_selection_alone() -> None:
    """The whole pipeline fits no more trials than the selection alone, and at least as many as basic composition
    certifies (selection at ε − ε_final(δ/2), δ/2, with the final run's exact ε: randomized response is pure ε₀-DP);
    its answer is checked to fit and the next count not to."""
    from symsel.apps.plan import max_trials

    base = symsel.parse_profile("randomized_response(eps=0.5, k=2)")
    alone = max_trials("point(k={k})", base, 2.0, 1e-6)["trials"]
    pipeline = max_trials("point(k={k})", base, 2.0, 1e-6, final_run=True)
    basic = max_trials("point(k={k})", base, 2.0 - 0.5, 0.5e-6)["trials"]
    assert basic <= pipeline["trials"] <= alone
    assert pipeline["trials"] < alone  # the final run costs something here
    assert pipeline["delta_at_budget"] <= 1e-6 < pipeline["next_delta_at_budget"]
    assert pipeline["final_run"] == base.spec


def test_a_wrong_final_run_is_refused() -> None:
    from symsel.apps.plan import max_trials

    with pytest.raises(ParameterError, match="final_run"):
        max_trials("point(k={k})", GaussianProfile(4.0), 2.0, 1e-6, final_run=3)  # type: ignore[arg-type]


def test_plan_final_run_from_the_command_line(two_run_plan: dict) -> None:
    """``symsel plan --final-run``: the whole pipeline's answer, said so, and the same number as Python's."""
    import json

    from click.testing import CliRunner

    from symsel.cli import main
    from symsel.rounding import format_upper

    args = ["plan", *TWO_RUN_ARGS]
    text = CliRunner().invoke(main, args)
    assert text.exit_code == 0 and text.output.startswith("whole pipeline")
    assert f"sigma = {format_upper(two_run_plan['sigma'])} " in text.output
    payload = json.loads(CliRunner().invoke(main, [*args, "--json"]).output)
    assert payload["final_run"] is True
    assert payload["solutions"][0]["sigma"] == two_run_plan["sigma"]


@pytest.mark.parametrize("budget", [1.7, 2.3, 3.0, 4.1, 6.5])
def test_solve_base_steps_are_the_largest_whole_number_that_fits(budget):
    """The answer fits and one more step does not (both checked here with the bound itself), whatever budget; the
    largest number of steps tried on the way is at most 16 times the answer plus one (the search gallops up from one
    step instead of building a run of a million steps first)."""
    from symsel import spec
    from symsel.apps.plan import solve_base
    from symsel.bounds import bound
    from symsel.distributions import geometric

    template = "rdp_subsampled_gaussian(q=0.01, sigma=1.1, steps={steps})"
    tried: list[int] = []
    parse = spec.parse_profile

    def recording(text: str):
        tried.append(int(text.split("steps=")[1].rstrip(")")))
        return parse(text)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(spec, "parse_profile", recording)
        steps = solve_base(template, "geometric(mean=30)", budget, 1e-5, "rdp")["steps"]
    law = geometric(mean=30)

    def fits(n: int) -> bool:
        return bound(law, parse(template.replace("{steps}", str(n))), "rdp").epsilon(1e-5) <= budget

    assert fits(steps) and not fits(steps + 1), (budget, steps)
    assert max(tried) <= 16 * (steps + 1), (budget, steps, sorted(set(tried)))


@pytest.mark.parametrize("final_run", [False, True])
def test_max_trials_with_interval_starts_at_one_trial_and_fits_at_least_the_exact_composition(final_run) -> None:
    """``interval`` needs two runs; one trial is the base itself. On gaussian(σ = 4) the answer is a number (never
    null), checked to fit, and at least the largest k whose k runs (exactly (√k/4)-GDP, closed form at 50 digits
    here; with the final run: k + 1 runs) fit: releasing every run is an upper bound on the selection."""
    from reference_profiles import gdp_delta_mp

    from symsel.apps.plan import max_trials

    extra = 1 if final_run else 0
    reference = max(k for k in range(1, 400) if gdp_delta_mp(math.sqrt(k + extra) / 4, 2.0) <= 1e-6)
    found = max_trials("point(k={k})", GaussianProfile(4.0), 2.0, 1e-6, "interval", final_run=final_run)
    assert found["trials"] is not None and found["trials"] >= reference
    assert found["delta_at_budget"] <= 1e-6 < found["next_delta_at_budget"]


def test_one_trial_with_interval_is_the_base_itself() -> None:
    """A budget that one Gaussian run meets (its exact ε at 50 digits, plus a hair) but two runs' selection does not:
    one trial, at the base's own ε."""
    from reference_profiles import gdp_delta_mp

    from symsel.apps.plan import max_trials

    lo, hi = 0.0, 5.0
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gdp_delta_mp(0.25, mid) > 1e-6 else (lo, mid)
    found = max_trials("point(k={k})", GaussianProfile(4.0), hi * (1 + 1e-9), 1e-6, "interval")
    assert found["trials"] == 1 and abs(found["epsilon"] - hi) <= 1e-6 * hi


@pytest.mark.parametrize("candidates", [-5.0, math.nan, math.inf, 0.5])
def test_bad_candidates_are_refused_even_when_no_mean_fits(candidates):
    # at epsilon 1 no mean of a geometric K fits a Gaussian(4) base at 1e-6: the value was never looked at
    with pytest.raises(ParameterError, match="candidates"):
        max_mean("geometric(mean={mean})", GaussianProfile(4.0), 1.0, 1e-6, candidates=candidates)


@pytest.mark.parametrize("extra", [["--dist", "point(k={k})"], ["--dist", "geometric(mean={mean})", "--mean", "3"]])
def test_plan_refuses_candidates_where_it_is_not_reported(extra):
    from click.testing import CliRunner

    from symsel.cli import main

    result = CliRunner().invoke(main, ["plan", "--base", "gaussian(sigma=4)", "--epsilon", "1", "--delta", "1e-6",
                                       *extra, "--candidates", "5"])
    assert result.exit_code == 2 and "--candidates applies" in result.output


def test_solve_base_takes_a_knob_where_no_bound_can_be_built_as_infeasible(monkeypatch):
    """Where the base cannot be bounded (``NotApplicableError``: e.g. a DP-SGD step's PLD too wide at little noise)
    the knob is not certified, so the search stays where it is: the answer is the least noise that could be bounded
    and fits, its bound checked independently of the search."""
    from symsel.apps import plan
    from symsel.errors import NotApplicableError

    real_bound = plan.bound

    def bound_or_refuse(dist, base, method="best"):
        if base.sigma < 1.0:
            raise NotApplicableError("no bound below sigma = 1 in this test")
        return real_bound(dist, base, method)

    monkeypatch.setattr(plan, "bound", bound_or_refuse)
    result = plan.solve_base("gaussian(sigma={sigma})", "point(k=2)", 50.0, 1e-6, method="composition")
    assert 1.0 <= result["sigma"] <= 1.01
    monkeypatch.setattr(plan, "bound", real_bound)
    assert real_bound(symsel.point(2), symsel.parse_profile(f"gaussian(sigma={result['sigma']!r})"),
                      "composition").delta(50.0) <= 1e-6
