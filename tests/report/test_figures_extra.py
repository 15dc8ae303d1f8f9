"""Tests of symsel.report.figures_extra against independent computations (scipy root finding on the analytic
Gaussian profile, the closed-form Gaussian tail bound, a dense-order RDP minimisation, dp-accounting)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from symsel.report.figures import save_figure
from symsel.report.figures_extra import dpsgd_epsilon_vs_mean, rnm_epsilon_vs_m


def _gaussian_delta(eps: float, mu: float) -> float:
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def test_rnm_figure1_against_independent_formulas(tmp_path):
    sigma, delta, ms = 4.0, 1e-6, [10, 1000, 100000]
    rows, draw = rnm_epsilon_vs_m(ms, sigma=sigma, delta=delta)
    assert [r["m"] for r in rows] == ms
    mu = 2 / sigma  # sensitivity 2 (Thm 3.2)
    orders = np.linspace(1.001, 200, 400000)
    for row in rows:
        m = row["m"]
        hs = brentq(lambda e, m=m: m * _gaussian_delta(e, mu) - delta, 0.0, 20.0, xtol=1e-12)
        assert row["profile"] == pytest.approx(hs, abs=1e-6)
        assert row["profile"] >= hs - 1e-9  # an upper bound never below the exact root
        tail = 2 / sigma**2 + (2 / sigma) * math.sqrt(2 * math.log(m / delta))
        assert row["gaussian_tail"] == pytest.approx(tail, rel=1e-9)
        rdp = orders * mu**2 / 2 + math.log(m) / (orders - 1)
        conv = np.min(rdp + np.log((orders - 1) / orders) - (math.log(delta) + np.log(orders)) / (orders - 1))
        assert conv - 1e-6 <= row["rdp"] <= conv + 0.02
        assert row["profile"] < row["rdp"] < row["gaussian_tail"]
    paths = save_figure("rnm", rows, draw, tmp_path)
    assert all(p.stat().st_size > 0 for p in paths)
    assert paths[2].read_text().splitlines()[0] == "m,profile,rdp,gaussian_tail"


def _dp_accounting_selection(base_event, mean: float, shape: float):
    """dp-accounting's RDP accountant holding the selection: the papers' RDP route (Opacus and dp-accounting take
    the δ̂ of Thm 5.6 from the RDP→DP conversion of the base)."""
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant

    accountant = rdp_privacy_accountant.RdpAccountant()
    accountant.compose(dp_event.RepeatAndSelectDpEvent(base_event, mean, shape))
    return accountant


def _dpsgd_event(q: float, sigma: float, steps: int):
    from dp_accounting import dp_event

    return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps)


def test_dpsgd_figure6_draws_the_papers_rdp_route_as_dp_accounting_computes_it(tmp_path):
    """The RDP curves of Koskela et al. Fig. 6 are dp-accounting's RepeatAndSelectDpEvent (within 1 %: the order grids
    differ); symsel's Thm 5.6 with the tight δ̂ and ``best`` lie below them, and (the paper's finding) the
    hockey-stick bounds lie below the RDP ones at every mean."""
    q, sigma, steps, delta = 0.01, 1.1, 20, 1e-5
    rows, draw = dpsgd_epsilon_vs_mean([2, 8], laws=("geometric", "poisson"), q=q, sigma=sigma, steps=steps,
                                       delta=delta)
    by = {(r["law"], r["mean"]): r for r in rows}
    for law, shape in (("geometric", 1.0), ("poisson", math.inf)):
        for mean in (2, 8):
            row = by[(law, mean)]
            peer = _dp_accounting_selection(_dpsgd_event(q, sigma, steps), mean, shape).get_epsilon(delta)
            assert row["rdp"] == pytest.approx(peer, rel=0.01)
            assert row["paper"] < row["rdp"]
            if law == "poisson":
                assert row["rdp_tight_delta"] < row["rdp"]
    paths = save_figure("fig6", rows, draw, tmp_path)
    assert all(p.exists() for p in paths)


def test_figure7_hockey_stick_allows_three_times_the_models_of_rdp(tmp_path):
    """Koskela et al. §6.2 on Fig. 7 (CIFAR-10 DP-SGD, q = 16384/50000, σ = 21.1, T = 250): Thm 5.2 allows about
    three times as many models as the RDP bound. At m = 40 and 120 (δ = 1e-5): HS at 3m costs no more than RDP at
    m; the RDP curve is dp-accounting's."""
    from symsel.report.figures import FIG7
    from symsel.report.figures_extra import cifar_epsilon_vs_mean

    rows, draw = cifar_epsilon_vs_mean([40, 120])
    by = {r["mean"]: r for r in rows}
    assert by[120]["paper"] <= by[40]["rdp"]
    assert by[40]["rdp"] < by[120]["rdp"]
    peer = _dp_accounting_selection(_dpsgd_event(FIG7["q"], FIG7["sigma"], FIG7["steps"]), 40, 1.0)
    assert by[40]["rdp"] == pytest.approx(peer.get_epsilon(FIG7["delta"]), rel=0.01)
    assert all(p.exists() for p in save_figure("fig7", rows, draw, tmp_path))


def test_figure4_binomial_cdfs_match_scipy_and_bounds_tend_to_poisson(tmp_path):
    from scipy.stats import binom, poisson

    from symsel.report.figures_extra import binomial_cdfs, binomial_vs_poisson

    rows, draw = binomial_cdfs([20, 1000], mean=10.0, k_max=25)
    for row in rows:
        assert row["Bin(n=20, p=0.5)"] == pytest.approx(binom.cdf(row["k"], 20, 0.5), abs=1e-12)
        assert row["Poisson(10)"] == pytest.approx(poisson.cdf(row["k"], 10), abs=1e-12)
    assert all(p.exists() for p in save_figure("cdf", rows, draw, tmp_path))
    rows, draw = binomial_vs_poisson([20, 1000], [1.0, 2.0, 2.5], mean=10.0, lower_at=(1e-6,))
    grid = {(r["law"], r["epsilon"]): r for r in rows if "epsilon" in r}
    lower = {r["law"]: r["lower"] for r in rows if "lower" in r}
    bin20, bin1000, pois = "Bin(n=20, p=0.5)", "Bin(n=1000, p=0.01)", "Poisson(10)"
    # the paper's RDP curve (Thm 5.6, delta-hat from the RDP->DP conversion) is dp-accounting's
    from dp_accounting import dp_event

    peer = _dp_accounting_selection(dp_event.GaussianDpEvent(4.0), 10, math.inf)
    for eps in (2.0, 2.5):
        assert grid[(pois, eps)]["rdp"] == pytest.approx(peer.get_delta(eps), rel=0.05)
        assert grid[(pois, eps)]["rdp_tight_delta"] < grid[(pois, eps)]["rdp"]
    # the paper's finding: near delta = 1e-6 the binomial (n = 20) by Thm 5.7 costs no more than Poisson by RDP
    assert grid[(bin20, 2.5)]["paper"] <= grid[(pois, 2.5)]["rdp"] <= 2e-6
    for row in grid.values():
        assert row["envelope"] <= row.get("paper", 1.0) + 1e-12
    # certified lower bounds: at epsilon just below eps_L the envelope (an upper bound) is still above 1e-6
    import symsel

    base = symsel.parse_profile("gaussian(sigma=4)")
    for law, spec in ((bin20, "binomial(n=20, p=0.5)"), (pois, "poisson(mean=10.0)")):
        envelope = symsel.bound(symsel.parse_distribution(spec), base, "envelope")
        assert envelope.delta(lower[law] - 1e-9) >= 1e-6
        assert envelope.epsilon(1e-6) <= lower[law] * 1.002
    # n = 20: even the lower bound of Bin(20, 1/2) exceeds Poisson's (a real, not a loose, gap)
    assert lower[bin20] > lower[pois]
    # Koskela et al. App. C.5: Thm 5.7 at (n, m/n) tends to Cor 5.8 as n grows (here n = 1000 within 1% in epsilon)
    cor58 = symsel.bound(symsel.parse_distribution("poisson(mean=10)"), base, "paper").epsilon(1e-6)
    thm57 = symsel.bound(symsel.parse_distribution("binomial(n=1000, p=0.01)"), base, "paper").epsilon(1e-6)
    assert thm57 == pytest.approx(cor58, rel=0.01)
    assert grid[(bin1000, 2.5)]["paper"] < grid[(pois, 2.5)]["rdp"]
    assert all(p.exists() for p in save_figure("fig4", rows, draw, tmp_path))


def test_figure2_geometric_profiles_against_dp_accounting_and_scipy(tmp_path):
    from symsel.report.figures_extra import geometric_delta_vs_epsilon

    rows, draw = geometric_delta_vs_epsilon([30, 3000], [0.5, 3.0, 3.5])
    for row in rows:
        if row["law"] == "base":  # the base's own profile: the Gaussian mechanism's, by scipy
            assert row["base"] == pytest.approx(_gaussian_delta(row["epsilon"], 0.25), rel=1e-9, abs=1e-300)
            continue
        from dp_accounting import dp_event

        mean = 30 if row["law"] == "m=30" else 3000
        peer = _dp_accounting_selection(dp_event.GaussianDpEvent(4.0), mean, 1.0).get_delta(row["epsilon"])
        assert row["rdp"] <= peer * 1.05
        if row["epsilon"] >= 3.0:  # Koskela et al. Fig. 2: at small delta the HS bound lies below the RDP bound
            assert row["envelope"] <= row["paper"] <= row["rdp"]
    assert all(p.exists() for p in save_figure("fig2", rows, draw, tmp_path))


def test_papernot_steinke_utility_against_pmf_sums(tmp_path):
    from scipy.stats import poisson

    from symsel.report.figures_extra import utility_vs_epsilon

    families = {"poisson": "poisson(mean={m})", "geometric (eta=1)": "geometric(mean={m})"}
    rows, draw = utility_vs_epsilon([5.0], families=families)
    ks = np.arange(0, 400)
    by = {r["law"]: r for r in rows}
    assert by["poisson"]["utility"] == pytest.approx(float(np.sum(poisson.pmf(ks, 5.0) * ks / (ks + 1))), rel=1e-9)
    # geometric on {1, 2, ...} with mean 5: P[K = k] = p (1 - p)^(k-1), p = 1/5
    pk = 0.2 * 0.8 ** (ks[1:] - 1.0)
    assert by["geometric (eta=1)"]["utility"] == pytest.approx(float(np.sum(pk * ks[1:] / (ks[1:] + 1))), rel=1e-9)
    assert all(r["envelope"] <= r["rdp"] + 1e-9 for r in rows)
    assert all(p.exists() for p in save_figure("ps5", rows, draw, tmp_path))
    rows, _ = utility_vs_epsilon([5.0], utility="success", candidates=100, families=families)
    success = {r["law"]: r["utility"] for r in rows}
    assert success["poisson"] == pytest.approx(1 - math.exp(-5.0 / 100), rel=1e-9)
    assert success["geometric (eta=1)"] == pytest.approx(float(np.sum(pk * (1 - 0.99 ** ks[1:]))), rel=1e-9)
    with pytest.raises(ValueError, match="utility"):
        utility_vs_epsilon([5.0], utility="median")


def test_figure3_geometric_against_theorem_5_2_by_hand_and_dp_accounting(tmp_path):
    """Thm 5.2 minimised over a dense ε1 grid with scipy's Gaussian profile; dp-accounting's RDP
    RepeatAndSelectDpEvent for the RDP curve; Cor 5.5 (re-derived) above Thm 5.2; the lower bound below."""
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant

    from symsel.report.figures_extra import geometric_epsilon_vs_mean

    sigma, delta = 4.0, 1e-6
    rows, draw = geometric_epsilon_vs_mean([10, 1000], sigma=sigma, delta=delta, lower_at=(10,))
    mu = 1 / sigma
    grid = np.linspace(0.0, 4.0, 4001)
    for row in rows:
        m = row["mean"]
        eps_hat = brentq(lambda e, m=m: m * _gaussian_delta(e, mu) - delta, 0.0, 20.0, xtol=1e-12)
        by_hand = min(eps_hat + 2 * math.log(math.exp(e1) + (m - 1) * _gaussian_delta(e1, mu)) for e1 in grid)
        assert by_hand - 1e-3 <= row["paper"] <= by_hand + 1e-6
        accountant = rdp_privacy_accountant.RdpAccountant()
        accountant.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(sigma), m, 1.0))
        assert row["rdp"] <= accountant.get_epsilon(delta) * 1.001
        assert row["envelope"] <= row["paper"] < row["cor_5_5"]
    assert rows[0]["lower"] <= rows[0]["envelope"] <= rows[0]["lower"] * 1.002
    assert rows[1]["lower"] is None
    assert all(p.stat().st_size > 0 for p in save_figure("fig3", rows, draw, tmp_path))


@pytest.mark.parametrize("lines", [3, 6, 7, 14])
def test_a_long_legend_is_drawn_beside_the_axes_not_over_the_data(lines, tmp_path, monkeypatch):
    """save_figure keeps a legend of up to 6 entries inside the axes and moves a longer one to their right (its
    left edge past the axes' right edge), widening the figure; the PNG grows accordingly."""
    import matplotlib.pyplot as plt

    seen = {}
    close = plt.close

    def keep(fig):
        ax = fig.axes[0]
        fig.canvas.draw()
        legend = ax.get_legend().get_window_extent()
        seen["outside"] = bool(legend.x0 >= ax.get_window_extent().x1)
        seen["width"] = fig.get_size_inches()[0]
        close(fig)

    monkeypatch.setattr(plt, "close", keep)

    def draw(ax):
        for i in range(lines):
            ax.plot([0, 1], [i, i + 1], label=f"curve {i}")
        ax.legend(fontsize=7)

    save_figure("legend", [{"x": 1}], draw, tmp_path)
    assert seen["outside"] is (lines > 6)
    assert seen["width"] == (6.4 if lines <= 6 else 9.4)
