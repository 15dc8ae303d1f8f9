"""The report's practitioner's table: the best of n_trials ∈ {10, 40, 100} runs of
dpsgd(q=0.01, sigma=1.1, steps=1000) at δ = 1e-6, against the numbers of an independent run
(benchmarks/bench_fixed_trials.py, README "A fixed number of trials of DP-SGD"): symsel's best and composition,
dp-accounting's RDP accountant on the n_trials-fold composition, and the certified lower bound. The quick report
(the shared fixture) has every column but the lower bounds, which only the full report computes (about a minute of
CPU); one of them, n_trials = 10, is computed here by the full report's own row function."""

from __future__ import annotations

import pytest

from symsel.report.main import FIXED_TRIALS_ONLY_FULL, fixed_trials_row, fixed_trials_summary
from symsel.rounding import format_lower, format_upper

#: the independent run's values, to 4 decimals: n_trials → (best, composition, dp-accounting RDP, lower).
EXPECTED = {10: (4.8215, 5.8070, 6.2300, 4.8190), 40: (7.8476, 12.9455, 13.7785, 7.8417),
            100: (10.5936, 22.9002, 24.2422, 10.5837)}
FOUR_DECIMALS = 5e-5


def test_the_quick_report_shows_the_table_with_the_independent_numbers(report) -> None:
    """summary.md and the JSON carry the table; best, composition and dp-accounting's RDP agree with the independent
    run to 4 decimals; best names the method it takes (interval, on DP-SGD's dominating pairs, for all three); the
    lower bounds are left to the full report, and the summary says so."""
    payload, out = report
    table = payload["fixed_trials"]
    assert (table["base"], table["delta"]) == ("dpsgd(q=0.01, sigma=1.1, steps=1000)", 1e-6)
    assert [row["n_trials"] for row in table["rows"]] == list(EXPECTED)
    summary = (out / "summary.md").read_text()
    assert ("## A fixed number of trials of DP-SGD: ε at δ = 1e-06, base `dpsgd(q=0.01, sigma=1.1, steps=1000)`"
            in summary)
    assert ("| n_trials | law of K | best | best's method | composition | dp-accounting RDP | lower | best / lower |"
            in summary)
    for row in table["rows"]:
        best, composition, rdp, _ = EXPECTED[row["n_trials"]]
        assert row["law"] == f"point(k={row['n_trials']})"
        assert row["best"] == pytest.approx(best, abs=FOUR_DECIMALS)
        assert row["composition"] == pytest.approx(composition, abs=FOUR_DECIMALS)
        assert row["dp_accounting_rdp"] == pytest.approx(rdp, abs=FOUR_DECIMALS)
        assert row["best_method"] == "interval"
        assert row["lower"] is None
        # printed rounded up (symsel.rounding): each printed upper bound is at or above the unrounded one
        assert (f"| {row['n_trials']} | `{row['law']}` | {format_upper(row['best'])} | interval | "
                f"{format_upper(row['composition'])} | {format_upper(row['dp_accounting_rdp'])} | "
                f"full report only |  |") in summary
        assert all(float(format_upper(row[key])) >= row[key] for key in ("best", "composition", "dp_accounting_rdp"))
    assert FIXED_TRIALS_ONLY_FULL in summary
    assert str(out / "fixed_trials.csv") in payload["files"]
    assert (out / "fixed_trials.csv").read_text().splitlines()[0] == (
        "n_trials,law,best,best_method,composition,dp_accounting_rdp,lower")


@pytest.mark.slow
def test_the_full_report_s_row_has_its_certified_lower_bound_below_best() -> None:
    """The full report's row for n_trials = 10 (about 17 CPU-s; 40 and 100 cost 26 and 33 s and are left to the full
    report): the certified lower bound agrees with the independent run to 4 decimals and lies below best, and the
    summary prints it with the ratio best / lower and without the quick report's note."""
    row = fixed_trials_row(10, lower=True)
    best, composition, rdp, lower = EXPECTED[10]
    assert row["best"] == pytest.approx(best, abs=FOUR_DECIMALS)
    assert row["lower"] == pytest.approx(lower, abs=FOUR_DECIMALS)
    assert row["composition"] == pytest.approx(composition, abs=FOUR_DECIMALS)
    assert row["dp_accounting_rdp"] == pytest.approx(rdp, abs=FOUR_DECIMALS)
    assert row["lower"] <= row["best"]
    lines = fixed_trials_summary({"fixed_trials": {"base": "b", "delta": 1e-6, "rows": [row]}})
    # upper bounds and the ratio printed rounded up, the lower bound rounded down (symsel.rounding)
    assert (f"| 10 | `point(k=10)` | {format_upper(row['best'])} | interval | {format_upper(row['composition'])} | "
            f"{format_upper(row['dp_accounting_rdp'])} | {format_lower(row['lower'])} | "
            f"{format_upper(row['best'] / row['lower'])} |") in lines
    assert float(format_lower(row["lower"])) <= row["lower"]
    assert FIXED_TRIALS_ONLY_FULL not in lines
