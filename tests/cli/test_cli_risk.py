"""`symsel risk`: one strict JSON object, the numbers of the Python API, one-line errors."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from scipy.stats import norm

from symsel.cli import main


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_risk_of_a_gaussian_base_matches_the_closed_form():
    """One run of the Gaussian mechanism σ = 2 is 0.5-GDP: TPR at FPR α is ``Φ(μ − Φ⁻¹(1 − α))`` (scipy), the
    advantage ``2Φ(μ/2) − 1``; the JSON has each as a certified bound within 1e-6."""
    result = run("risk", "--base", "gaussian(sigma=2)", "--fpr", "0.01", "--fpr", "1e-6", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert [p["fpr"] for p in payload["points"]] == [0.01, 1e-6]
    for point in payload["points"]:
        exact = norm.sf(norm.isf(point["fpr"]) - 0.5)
        assert exact <= point["tpr"] <= exact * (1 + 1e-6)
        assert point["beta"] <= 1 - exact
    tv = 2 * norm.cdf(0.25) - 1
    assert tv <= payload["advantage"] <= tv + 1e-9


def test_risk_of_a_selection_is_strict_json():
    result = run("risk", "--base", "gaussian(sigma=4)", "--dist", "geometric(mean=30)", "--method", "envelope",
                 "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    assert payload["method"] == "envelope" and payload["dist"] == "geometric(mean=30)"
    assert [p["fpr"] for p in payload["points"]] == [1e-3, 1e-2, 1e-1]
    assert all(0 < p["tpr"] < 1 and math.isclose(p["beta"] + p["tpr"], 1, abs_tol=1e-12) for p in payload["points"])


def test_risk_text():
    result = run("risk", "--base", "randomized_response(eps=1)", "--fpr", "0.5")
    assert result.exit_code == 0 and "advantage" in result.output and "0.5" in result.output


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--fpr", "1.5"], "parameter fpr=1.5"),
        (["--fpr", "nan"], "parameter fpr=nan"),
        (["--fpr", "-0.1"], "parameter fpr=-0.1"),
        (["--method", "envelope"], "no --method without --dist"),
        (["--dist", "point(k=3)", "--method", "bogus"], "parameter method='bogus'"),
    ],
)
def test_risk_bad_input_is_one_line(args, fragment):
    result = run("risk", "--base", "gaussian(sigma=4)", *args)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("symsel: error:") and fragment in lines[0], result.output
