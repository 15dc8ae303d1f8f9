"""Tuning over candidates of different privacy (Koskela et al. §6.2): admitted steps per noise level, checked
with dp-accounting directly, and the tuning bound equal to Corollary 6.2's closed form with the paper method."""

from __future__ import annotations

import math

import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

import symsel
from symsel.errors import ParameterError
from symsel.tuning import max_steps, sigma_tuning, tuning_bound


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
    assert tuning_bound(law, thresholds, "best").epsilon(1e-5) <= paper


def test_sigma_tuning_admits_longer_runs_for_more_noise() -> None:
    table = sigma_tuning(0.05, [1.0, 2.0], symsel.geometric(mean=10), [(1.0, 1e-4), (2.0, 1e-6)], 1e-5, limit=3000)
    short, long = (c["steps"] for c in table["candidates"])
    assert 0 < short < long
    assert table["epsilon"]["best"] <= table["epsilon"]["paper"]
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
    assert payload["epsilon"]["best"] <= payload["epsilon"]["paper"]
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
