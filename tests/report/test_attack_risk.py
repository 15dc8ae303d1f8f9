"""The report's attack-risk table (symsel.report.main.attack_risk_row): one run of the Gaussian base against the GDP
closed form, a selection's rows, and the quick report's summary and CSV."""

from __future__ import annotations

import csv

from scipy.stats import norm

from symsel.report.main import RISK_FPRS, attack_risk_row


def test_one_run_row_is_the_gaussian_closed_form() -> None:
    """gaussian(σ = 4) is 0.25-GDP: TPR at FPR α is ``Φ(0.25 − Φ⁻¹(1 − α))``, the advantage ``2Φ(0.125) − 1``
    (scipy); the row's certified bounds are at or above them and within 1e-6."""
    row = attack_risk_row(None)
    for fpr in RISK_FPRS:
        exact = norm.sf(norm.isf(fpr) - 0.25)
        assert exact <= row[f"tpr_at_{fpr:g}"] <= exact * (1 + 1e-6)
    tv = 2 * norm.cdf(0.125) - 1
    assert tv <= row["advantage"] <= tv + 1e-9


def test_the_quick_report_has_the_table(report) -> None:
    payload, out = report
    rows = payload["attack_risk"]["rows"]
    assert [r["law"] for r in rows] == ["one run", "geometric(mean=10)"]
    assert all(rows[1][f"tpr_at_{f:g}"] >= rows[0][f"tpr_at_{f:g}"] for f in RISK_FPRS)
    with (out / "attack_risk.csv").open() as handle:
        assert [r["law"] for r in csv.DictReader(handle)] == ["one run", "geometric(mean=10)"]
    assert "## Attack risk" in (out / "summary.md").read_text()
