"""Xiang et al. Table 4 (τ = 0.1) and Figure 6 in spirit (symsel.report.figures_xiang) against independent computations:
dp-accounting's PLD for the noise that meets the base budget and its RDP RepeatAndSelectDpEvent for the geometric
law, and the Monte Carlo audit below the exact Gaussian-pair value."""

from __future__ import annotations

import math

import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant

from symsel.errors import ParameterError
from symsel.report.figures import draw_figure, save_figure
from symsel.report.figures_xiang import STEPS, sigma_for_base_budget, tnb_vs_base_budget, two_point_table


@pytest.fixture(autouse=True)
def _cells_in_this_process(monkeypatch):
    """The figures' cells in the test's own process (no joblib pool to start; the xdist worker beside it already
    uses the other core), where the cached noise levels and profiles serve them."""
    from symsel.report import figures

    monkeypatch.setattr(figures, "JOBS", 1)


def _sgd(rate: float, sigma: float) -> dp_event.DpEvent:
    return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(rate, dp_event.GaussianDpEvent(sigma)), STEPS)


def test_figure_6_cell_at_the_noise_that_meets_the_base_budget_in_dp_accounting(tmp_path) -> None:
    """The noise solved for ε_B = 2 meets the budget by dp-accounting's PLD (and 2 % less noise does not); the Figure
    6 cell at that noise: symsel's rdp at most dp-accounting's RDP RepeatAndSelectDpEvent, best below rdp, the audit
    below the exact Gaussian-pair value. (One test, so that the noise, about 10 s, is solved once per process.)"""
    sigma = sigma_for_base_budget(2.0)  # sampling ratio 0.1, as in the figures
    for noise, below in ((sigma, True), (sigma * 0.98, False)):
        accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
        accountant.compose(_sgd(0.1, noise))
        assert (accountant.get_epsilon(1e-5) <= 2.0 + 2e-3) is below
    rows, draw = tnb_vs_base_budget(eps_bases=(2.0,), laws=("tnb(eta=1, gamma=0.001)",), audit_trials=50_000)
    (row,) = rows
    assert row["sigma"] == sigma
    accountant = rdp_privacy_accountant.RdpAccountant()
    accountant.compose(dp_event.RepeatAndSelectDpEvent(_sgd(0.1, row["sigma"]), 1000.0, 1.0))
    peer = accountant.get_epsilon(1e-5)
    assert row["rdp"] <= peer * 1.001
    assert row["audit"] <= row["gaussian_pair"]  # a 95 % lower bound for the pair below its exact value
    assert 0 < row["gdp_mu"] < 2
    assert all(p.stat().st_size > 0 for p in save_figure("x6", rows, draw, tmp_path))


def test_table_4_two_point_cells_beside_the_papers_values(tmp_path) -> None:
    """Two of Table 4's cells at τ = 0.1, ε_B = 2: more runs cost more; the exact GDP-pair value (ε_U-G
    without its RDP step) beside the ε_U-G the paper prints (2.40, 4.48): within 1 % and 4.5 % of these two cells
    (measured +0.8 %, +3.9 %; over the 15 cells of the τ = 0.1 rows the ratio runs from 0.94 to 1.10,
    docs/figures.md)."""
    rows, draw = two_point_table(eps_bases=(2.0,), columns=((10, 0.1), (100, 0.01)))
    small, large = rows
    assert (small["paper_eps_U_G"], large["paper_eps_U_G"]) == (2.40, 4.48)
    assert small["best"] < large["best"]  # more runs cost more
    # measured: 2.4198 / 2.40 (+0.8 %) and 4.6532 / 4.48 (+3.9 %): the paper's values carry an RDP step
    assert small["gaussian_pair"] == pytest.approx(small["paper_eps_U_G"], rel=0.01)
    assert large["gaussian_pair"] == pytest.approx(large["paper_eps_U_G"], rel=0.045)
    assert all(p.stat().st_size > 0 for p in save_figure("x4", rows, draw, tmp_path))
    _the_table_says_why_best_is_above_the_papers_value(rows, draw)
    (outside,), _ = two_point_table(eps_bases=(2.0,), columns=((10, 0.5),))
    assert outside["paper_eps_U_G"] is None  # not one of the paper's cells
    with pytest.raises(ParameterError, match="eps_bases"):
        two_point_table(eps_bases=())
    with pytest.raises(ParameterError, match="eps_base"):
        sigma_for_base_budget(-1.0)


def _the_table_says_why_best_is_above_the_papers_value(rows: list[dict], draw) -> None:
    """The table image (Agg figure objects) carries, under the table, the ratio of symsel's certified ``best`` to the
    paper's ε_U-G (their geometric mean over the rows, and the range) and the reason docs/figures.md gives: ``best``
    holds for every score and every pair DP-SGD dominates, ε_U-G is the GDP approximation with a monotone score."""
    import matplotlib.pyplot as plt

    ratios = [r["best"] / r["paper_eps_U_G"] for r in rows]
    assert all(ratio > 1.2 for ratio in ratios)  # the gap the note explains (measured 1.53 and 1.64 here)
    middle = math.exp(sum(map(math.log, ratios)) / len(ratios))
    fig = draw_figure(draw)
    try:
        (note,) = [text.get_text() for ax in fig.axes for text in ax.texts]
    finally:
        plt.close(fig)
    assert note.startswith(f"symsel's best ≈ {middle:.1f}× the paper's ε_U-G ({min(ratios):.1f}–{max(ratios):.1f}×)")
    assert "every score function and every pair DP-SGD dominates" in note
    assert "exactly μ-GDP with a monotone score on one Gaussian pair" in note
    assert len(note.splitlines()) == 2
