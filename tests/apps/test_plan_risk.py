"""Planning to an attack-risk budget (symsel.apps.plan.max_trials_for_risk, min_sigma_for_risk) against closed forms.

On a Gaussian base the ``composition`` bound of ``point(k)`` is the profile of ``k`` Gaussian runs, exactly
``(√k/σ)``-GDP, whose TPR at FPR ``α`` is ``Φ(√k/σ − Φ⁻¹(1 − α))`` (Dong, Roth, Su 2022): the most trials and the least
noise within a TPR budget then have closed forms, computed here with scipy.
"""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from scipy.stats import norm

from symsel.apps.plan import max_trials_for_risk, min_sigma_for_risk
from symsel.cli import main
from symsel.errors import ParameterError
from symsel.profiles import GaussianProfile


def closed_form_trials(sigma: float, fpr: float, max_tpr: float) -> int:
    """The largest ``k`` with ``Φ(√k/σ − z) ≤ t``: ``√k ≤ σ (z + Φ⁻¹(t))``."""
    return math.floor((sigma * (norm.isf(fpr) + norm.ppf(max_tpr))) ** 2)


@pytest.mark.parametrize(("sigma", "fpr", "max_tpr"), [(10.0, 0.01, 0.05), (4.0, 0.001, 0.01)])
def test_max_trials_for_risk_matches_the_closed_form(sigma, fpr, max_tpr):
    expected = closed_form_trials(sigma, fpr, max_tpr)
    plan = max_trials_for_risk("point(k={k})", GaussianProfile(sigma), fpr, max_tpr, method="composition")
    assert plan["trials"] == expected
    assert plan["tpr"] <= max_tpr < plan["next_tpr"]


def test_min_sigma_for_risk_matches_the_closed_form():
    """Four runs: ``σ ≥ 2/(z + Φ⁻¹(t))``; the answer fits (never below it) and is within 0.2 % of it."""
    exact = 2.0 / (norm.isf(0.01) + norm.ppf(0.05))
    plan = min_sigma_for_risk("gaussian(sigma={sigma})", "point(k=4)", 0.01, 0.05, method="composition")
    assert exact <= plan["sigma"] <= exact * 1.002
    assert plan["tpr"] <= 0.05


def test_risk_plan_on_the_command_line():
    result = CliRunner().invoke(main, ["plan", "--base", "gaussian(sigma=10)", "--dist", "point(k={k})",
                                       "--tpr-at-fpr", "0.01", "--max-tpr", "0.05", "--method", "composition",
                                       "--json"])
    assert result.exit_code == 0, result.output
    row = json.loads(result.output)["risk_plans"][0]
    assert row["trials"] == closed_form_trials(10.0, 0.01, 0.05)


@pytest.mark.parametrize(("fpr", "max_tpr", "name"), [(0.0, 0.05, "fpr"), (1.0, 0.05, "fpr"), (math.nan, 0.05, "fpr"),
                                                      (0.01, 0.005, "max_tpr"), (0.01, 1.0, "max_tpr"),
                                                      (0.01, math.nan, "max_tpr")])
def test_bad_risk_budget_is_refused(fpr, max_tpr, name):
    with pytest.raises(ParameterError, match=name):
        max_trials_for_risk("point(k={k})", GaussianProfile(4.0), fpr, max_tpr)


@pytest.mark.parametrize("args", [["--epsilon", "1"], ["--delta", "1e-6"], ["--final-run"], []])
def test_risk_plan_refuses_what_it_would_ignore(args):
    extra = ["--max-tpr", "0.05"] if args else []
    result = CliRunner().invoke(main, ["plan", "--base", "gaussian(sigma=4)", "--dist", "point(k={k})",
                                       "--tpr-at-fpr", "0.01", *extra, *args])
    assert result.exit_code == 2 and result.output.startswith("symsel: error:"), result.output
