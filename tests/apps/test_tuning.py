"""Tuning over candidates of different privacy (Koskela et al. §6.2): admitted steps per noise level, checked
with dp-accounting directly, and the tuning bound equal to Corollary 6.2's closed form with the paper method."""

from __future__ import annotations

import math

import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

import symsel
from symsel.apps.tuning import max_steps, sigma_tuning, tuning_bound
from symsel.errors import ParameterError


def _dp_accounting_delta(q: float, sigma: float, steps: int, eps: float) -> float:
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_event.SelfComposedDpEvent(
        dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps))
    return accountant.get_delta(eps)


def test_max_steps_is_the_last_admitted_run() -> None:
    thresholds = [(1.0, 1e-4), (2.0, 1e-6)]
    steps = max_steps(0.05, 1.2, thresholds, limit=2000)
    assert steps > 1
    for eps, delta in thresholds:
        assert _dp_accounting_delta(0.05, 1.2, steps, eps) <= delta
    assert any(_dp_accounting_delta(0.05, 1.2, steps + 1, eps) > delta for eps, delta in thresholds)


def test_tuning_bound_is_corollary_6_2_with_the_paper_method() -> None:
    """Geometric K (η = 1, γ = 1/10), thresholds (ε1, δ1) = (1, 1e-4) and (ε̂, δ/m) = (2, 1e-6), δ = 1e-5:
    Cor 6.2 gives ε = ε̂ + (η+1) log(e^ε1 + (1−γ)δ1/γ)."""
    law = symsel.geometric(mean=10)
    thresholds = [(1.0, 1e-4), (2.0, 1e-6)]
    corollary = 2.0 + 2 * math.log(math.e + 9 * 1e-4)
    paper = tuning_bound(law, thresholds, "paper").epsilon(1e-5)
    assert corollary <= paper <= corollary + 1e-9


def test_sigma_tuning_admits_longer_runs_for_more_noise() -> None:
    table = sigma_tuning(0.05, [1.0, 2.0], symsel.geometric(mean=10), [(1.0, 1e-4), (2.0, 1e-6)], 1e-5, limit=3000)
    short, long = (c["steps"] for c in table["candidates"])
    assert 0 < short < long
    with pytest.raises(ParameterError, match="thresholds"):
        tuning_bound(symsel.geometric(mean=10), [], "paper")


def test_tune_and_ptr_on_the_command_line() -> None:
    """`symsel tune` equals the library's sigma_tuning with §6.2's thresholds; `symsel ptr` equals Thm 5.2 by
    hand (Cor 5.4's form for geometric K and one (1, 1e-6) guarantee); bad input is one line, exit 2."""
    import json

    from click.testing import CliRunner

    from symsel.cli import main

    runner = CliRunner()
    result = runner.invoke(main, ["tune", "--dist", "geometric(mean=10)", "--q", "0.05", "--sigma", "1.2",
                                  "--threshold", "1,1e-4", "--threshold", "2,1e-6", "--delta", "1e-5", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["candidates"][0]["steps"] == max_steps(0.05, 1.2, [(1.0, 1e-4), (2.0, 1e-6)])
    corollary = 2.0 + 2 * math.log(math.e + 9 * 1e-4)
    assert corollary - 1e-9 <= payload["epsilon"]["paper"] <= corollary + 1e-9
    result = runner.invoke(main, ["ptr", "--dist", "geometric(mean=10)", "--guarantee", "1,1e-6", "--delta", "1e-5",
                                  "--method", "paper", "--json"])
    assert result.exit_code == 0, result.output
    # Thm 5.2 at eps1 = 1: m * delta(eps_hat) = 1e-5 needs eps_hat = 1 (delta(1) = 1e-6), plus 2 log(e + 9e-6)
    by_hand = 1.0 + 2 * math.log(math.e + 9 * 1e-6)
    assert by_hand - 1e-9 <= json.loads(result.stdout)["epsilon"]["paper"]["epsilon"] <= by_hand + 1e-6
    for args, name in ((["ptr", "--dist", "geometric(mean=10)", "--guarantee", "1"], "guarantee"),
                       (["tune", "--dist", "poisson(mean=3)", "--q", "0.1", "--sigma", "1"], "law"),
                       (["tune", "--dist", "geometric(mean=3)", "--q", "0.1", *["--sigma", "1"] * 51], "sigma")):
        bad = runner.invoke(main, args)
        assert bad.exit_code == 2 and name in bad.output and len(bad.output.strip().splitlines()) == 1, bad.output


# ------------------------------------------------------------------------------------------ every branch, pinned
class _ComposedGaussian:
    """Stand-in for ``DpsgdProfile(q, σ, steps)`` in the step search: ``steps`` runs of the Gaussian mechanism,
    μ√steps-GDP, with δ(ε) from the 50-digit closed form (reference_profiles.gdp_delta_mp), rounded up. The search
    logic of max_steps is then checked against a brute-force scan of the same closed form."""

    def __init__(self, q: float, sigma: float, steps: int):
        self.mu = math.sqrt(steps) / sigma

    def delta(self, eps: float) -> float:
        from reference_profiles import gdp_delta_mp

        value = gdp_delta_mp(self.mu, eps)
        return math.nextafter(float(value), math.inf) if value > 0 else 0.0


def _brute_force_steps(sigma: float, thresholds, limit: int) -> int:
    from reference_profiles import gdp_delta_mp

    admitted = 0
    for steps in range(1, limit + 1):  # the profile grows with the steps: the admitted set is an initial segment
        if all(gdp_delta_mp(math.sqrt(steps) / sigma, e) <= d for e, d in thresholds):
            admitted = steps
        else:
            break
    return admitted


@pytest.mark.parametrize(("sigma", "thresholds", "limit"), [
    (0.5, [(0.5, 1e-6)], 50),                # not even one step is admitted: 0
    (20.0, [(1.0, 1e-3), (2.0, 1e-6)], 3),   # 60 admitted; the doubling overshoots the limit, which is admitted
    (20.0, [(1.0, 1e-3), (2.0, 1e-6)], 8),   # the doubling lands on the limit itself
    (20.0, [(1.0, 1e-3), (2.0, 1e-6)], 62),  # the doubling overshoots the limit, which is not admitted: bisection
    (20.0, [(1.0, 1e-3), (2.0, 1e-6)], 10_000),  # an ordinary bisection between two powers of two
    (40.0, [(0.5, 1e-2), (3.0, 1e-9)], 10_000),  # 161 admitted
])
def test_max_steps_is_the_brute_force_answer(monkeypatch, sigma, thresholds, limit):
    import symsel.profiles

    monkeypatch.setattr(symsel.profiles, "DpsgdProfile", _ComposedGaussian)
    expected = _brute_force_steps(sigma, thresholds, min(limit, 400))
    assert expected < 400
    assert max_steps(0.01, sigma, thresholds, limit=limit) == expected


def test_sigma_tuning_flags_the_candidates_stopped_by_the_limit(monkeypatch) -> None:
    import symsel.profiles

    monkeypatch.setattr(symsel.profiles, "DpsgdProfile", _ComposedGaussian)
    thresholds = [(1.0, 1e-3), (2.0, 1e-6)]
    table = sigma_tuning(0.01, [20.0, 40.0], symsel.geometric(mean=10), thresholds, 1e-5, methods=("paper",),
                         limit=100)
    low, high = table["candidates"]
    assert low == {"sigma": 20.0, "steps": _brute_force_steps(20.0, thresholds, 100), "at_limit": False}
    assert high == {"sigma": 40.0, "steps": 100, "at_limit": True}
    assert 0 < low["steps"] < 100
    corollary = 2.0 + 2 * math.log(math.e + 9 * 1e-3)  # Cor 6.2 by hand, as above
    assert corollary <= table["epsilon"]["paper"] <= corollary + 1e-9
    assert table["thresholds"] == [[1.0, 1e-3], [2.0, 1e-6]] and table["delta"] == 1e-5


def test_admits_is_the_threshold_inequality_itself() -> None:
    """A profile exactly at a threshold is admitted (δ(ε_j) ≤ δ_j), one a hair above it is not; the Gaussian's δ
    is the 50-digit closed form."""
    from reference_profiles import gdp_delta_mp

    from symsel.apps.tuning import admits

    base = symsel.parse_profile("gaussian(sigma=2)")
    at = float(base.delta(1.0))
    exact = float(gdp_delta_mp(0.5, 1.0))
    assert at == pytest.approx(exact, rel=1e-12) and at >= exact * (1 - 1e-15)
    assert admits(base, [(1.0, at)]) and admits(base, [(1.0, at), (3.0, 1.0)])
    assert not admits(base, [(1.0, at * (1 - 1e-9))])
    assert not admits(base, [(3.0, 1.0), (1.0, exact * (1 - 1e-6))])
    for bad in ([1.0], [(1.0, 1e-6, 0.0)], [(1.0, 2.0)], [(-1.0, 1e-6)]):
        with pytest.raises(ParameterError):
            admits(base, bad)
    with pytest.raises(ParameterError, match="limit"):
        max_steps(0.01, 1.0, [(1.0, 1e-6)], limit=0)


def test_gaussian_sigma_for_every_branch() -> None:
    """The σ of the (ε, δ) Gaussian mechanism against its 50-digit root: above 1 (the bracket is doubled), below
    the bracket's start (ε so large that σ = 1e-3 already meets δ: returned as is, and it does meet it), and out of
    reach (no σ below 1e6 meets a budget of ε = 1e-8 at δ = 1e-10)."""
    from reference_profiles import gdp_delta_mp
    from test_properties import gaussian_sigma_mp

    from symsel.apps.tuning import gaussian_sigma_for

    for epsilon, delta in ((0.1, 1e-10), (1.0, 1e-5), (2.0, 1e-3)):
        sigma = gaussian_sigma_for(epsilon, delta)
        exact = gaussian_sigma_mp(epsilon, delta)
        assert exact <= sigma <= float(exact) * (1 + 1e-8)
    assert gaussian_sigma_for(0.1, 1e-10) > 2.0
    small = gaussian_sigma_for(1e6, 1e-10)
    assert small == 1e-3 and gdp_delta_mp(1 / small, 1e6) <= 1e-10
    with pytest.raises(ParameterError, match="epsilon_q"):
        gaussian_sigma_for(1e-8, 1e-10)


def test_corollary_6_2_thresholds_against_50_digit_references() -> None:
    """§6.2's thresholds for geometric K (mean 10) and a (2, 1e-5) Gaussian budget: δ1 is the Gaussian's δ at ε1
    (50 digits), ε1 minimises log(e^ε + 9 δ_G(ε)) (a golden-section search at 50 digits reaches the same value to
    1e-12), and ε̂ meets δ_G(ε̂) ≤ δ/m within 1e-9 of the root. A law that is not a truncated negative binomial is
    refused."""
    import mpmath
    from reference_profiles import gdp_delta_mp

    from symsel.apps.tuning import corollary_6_2_thresholds, gaussian_sigma_for

    law = symsel.geometric(mean=10)
    (eps1, delta1), (eps_hat, delta_hat) = corollary_6_2_thresholds(law, 2.0, 1e-5)
    mu = 1 / gaussian_sigma_for(2.0, 1e-5)
    assert delta1 == pytest.approx(float(gdp_delta_mp(mu, eps1)), rel=1e-12)
    assert delta_hat == pytest.approx(1e-6, rel=1e-15)
    assert gdp_delta_mp(mu, eps_hat) <= delta_hat
    assert gdp_delta_mp(mu, eps_hat * (1 - 1e-9)) > delta_hat

    def added(e):
        return mpmath.log(mpmath.exp(e) + 9 * gdp_delta_mp(mu, e))

    with mpmath.workdps(50):
        a, b = mpmath.mpf(0), mpmath.mpf(20)
        ratio = (mpmath.sqrt(5) - 1) / 2
        for _ in range(200):
            c, d = b - ratio * (b - a), a + ratio * (b - a)
            a, b = (a, d) if added(c) < added(d) else (c, b)
        best = added((a + b) / 2)
    assert float(added(eps1)) == pytest.approx(float(best), rel=1e-12)
    with pytest.raises(ParameterError, match="truncated negative binomial"):
        corollary_6_2_thresholds("poisson(mean=10)", 2.0, 1e-5)


@pytest.mark.parametrize(("sigma", "thresholds"), [
    (300.0, [(1.0, 1e-3), (2.0, 1e-6)]),
    (900.0, [(0.5, 1e-2), (3.0, 1e-9)]),
    (2000.0, [(1.5, 1e-5)]),
    (5000.0, [(0.3, 1e-4), (1.0, 1e-7), (4.0, 1e-12)]),
])
def test_max_steps_finds_thousands_of_steps_in_a_few_runs(monkeypatch, sigma, thresholds):
    """Answers of thousands of steps (the μ√steps-GDP stand-in): the same integer as a plain doubling-and-bisection
    on the threshold test itself, with at most 14 runs built (doubling and bisection build about 25)."""
    import symsel.profiles
    from symsel.apps.tuning import admits

    built: list[int] = []

    class Counted(_ComposedGaussian):
        def __init__(self, q: float, sigma: float, steps: int):
            built.append(steps)
            super().__init__(q, sigma, steps)

    def fits(steps: int) -> bool:
        return admits(_ComposedGaussian(0.01, sigma, steps), thresholds)

    lo, hi = 1, 2
    while fits(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    monkeypatch.setattr(symsel.profiles, "DpsgdProfile", Counted)
    assert max_steps(0.01, sigma, thresholds, limit=10**7) == lo
    assert lo > 1000 and len(built) <= 14, (lo, built)
