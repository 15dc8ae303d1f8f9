"""`symsel report --quick`: the report folder (summary.md, every figure as PNG, PDF and CSV, the tables), its
numbers consistent with the engine and with dp-accounting, and every upper bound above its certified lower bound."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import symsel

FIGURES = ("candidates_vs_budget", "epsilon_vs_mean", "profiles", "laws_at_equal_mean", "rnm_epsilon_vs_m",
           "binomial_cdfs", "ps_conditional_sampling", "geometric_delta_vs_epsilon", "success_vs_epsilon",
           "utility_vs_epsilon")


def test_the_folder_holds_every_figure_and_the_summary(report) -> None:
    payload, out = report
    for name in FIGURES:
        png = out / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
        assert (out / f"{name}.pdf").read_bytes()[:5] == b"%PDF-"
        with (out / f"{name}.csv").open() as handle:
            assert len(list(csv.DictReader(handle))) >= 2
    summary = (out / "summary.md").read_text()
    for name in FIGURES:
        assert f"]({name}.png)" in summary
    assert "| law of K |" in summary and "best / lower" in summary
    assert set(map(str, [out / "summary.md", out / "bounds.csv"])) <= set(payload["files"])


def test_every_upper_bound_is_above_its_certified_lower_bound(report) -> None:
    payload, _ = report
    for row in payload["bounds"]["rows"]:
        assert row["lower"] is not None and row["lower"] > 0
        for method in ("paper", "fdp", "envelope", "composition", "rdp", "best"):
            if row[method] is not None:  # JSON writes an infinite (vacuous) bound as "inf"
                assert row[method] == "inf" or row[method] >= row["lower"], (row["spec"], method)
        if row["spec"] == "point(k=2)":  # two runs: composition is the worst case
            assert row["best"] / row["lower"] < 1.0001
        elif not row["spec"].startswith("point("):  # the standard random laws at mean 10: the bracket is tight
            assert row["best"] / row["lower"] < 1.01


def test_the_table_is_the_engine_s_answer(report) -> None:
    payload, _ = report
    row = payload["bounds"]["rows"][0]
    law, base = symsel.parse_distribution(row["spec"]), symsel.parse_profile(payload["bounds"]["base"])
    assert row["envelope"] == symsel.bound(law, base, "envelope").epsilon(payload["bounds"]["delta"])


def test_candidates_beat_dp_accounting_as_in_koskela_figure_7(report) -> None:
    """At ε = 2.5 the geometric law affords at least 50 times dp-accounting's mean (the report's goal), and the
    rdp row (symsel's own P&S route) agrees with dp-accounting's to 1 %."""
    rows = {(r["law"], r["method"]): r["mean"] for r in report[0]["affordable"]}
    assert rows[("geometric", "best")] >= 50 * rows[("geometric", "dp-accounting RDP")]
    assert rows[("geometric", "rdp")] == pytest.approx(rows[("geometric", "dp-accounting RDP")], rel=0.01)
    assert rows[("poisson", "best")] > rows[("poisson", "dp-accounting RDP")]


def test_every_step_has_a_cost_to_be_scheduled_by() -> None:
    """Jobs start longest first by :data:`STEP_SECONDS`: a new step needs its measured time there."""
    from symsel.report.main import STEP_SECONDS, report_steps

    assert sorted(STEP_SECONDS) == sorted(report_steps())
    assert set(report_steps(quick=True)) <= set(STEP_SECONDS)


def test_every_full_report_figure_has_a_builder_taking_its_settings() -> None:
    """The full report (not run here: minutes) names only builders that exist and accept its settings."""
    import inspect

    from symsel.report.main import FULL, QUICK, extra_builders

    builders = extra_builders()
    for settings in (FULL, QUICK):
        names = [name for name, _, _ in settings["extra"]]
        assert len(names) == len(set(names))
        for name, kwargs, caption in settings["extra"]:
            assert name in builders, name
            inspect.signature(builders[name]).bind(**kwargs)
            assert caption


def test_the_guide_counts_the_report_figures() -> None:
    """docs/cli.md: "20 figures (10 with `--quick`)" — the numbers of figure steps of the full and the quick report."""
    from symsel.report.main import TABLE_STEPS, report_steps

    readme = " ".join((Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text().split())
    full, quick = (len(report_steps(q)) - len(TABLE_STEPS) for q in (False, True))
    assert f"{full} figures ({quick} with `--quick`)" in readme


def test_the_epsilon_against_mean_figure_never_goes_below_its_certified_lower_bounds(report) -> None:
    """epsilon_vs_mean.csv: every method's ε (``best`` included) at or above the certified lower bound of its row."""
    _, out = report
    with (out / "epsilon_vs_mean.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert rows and {"paper", "fdp", "envelope", "rdp", "best", "lower"} <= set(rows[0])
    for row in rows:
        lower = float(row["lower"])
        for method in ("paper", "fdp", "envelope", "rdp", "best"):
            assert float(row[method]) >= lower - 1e-9, (row["law"], row["mean"], method)
