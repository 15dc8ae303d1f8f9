"""Agreement with dp-accounting's ``RepeatAndSelectDpEvent`` (RDP accountant), the production form of
Papernot & Steinke's bounds.

What dp-accounting 0.6.0 implements (``rdp_privacy_accountant._compute_rdp_repeat_and_select``), on the
accountant's order grid (default ``DEFAULT_RDP_ORDERS``: 1.1, 1.2, …, 10.9, 11, …, 63, 128, 256, 512, 1024):

* ``shape`` in ``[0, inf)``: Theorem 2 with ``γ`` solved from the mean (bisection to 1e-9, rounded
  down), ``λ̂`` restricted to the same grid, then monotonicity (Remark 5) over the grid;
* ``shape = inf``: Theorem 6 with ``ε̂ = log(1 + 1/(λ−1))`` and ``δ̂`` from the base's RDP curve converted on
  the same grid (``compute_delta``), without the monotonicity step;
* ``get_epsilon``: the Canonne-Kamath-Steinke conversion on the grid (as :class:`symsel.profiles.RdpProfile`).

With the same orders and the base's RDP from dp-accounting, :func:`symsel.bounds.renyi.renyi_bound` must
reproduce it: observed max relative difference 5e-11 over the 150 cases below (the brief's bar was 1 %).
The only differences in our favour: ``λ̂ = 1`` is also tried in Theorem 2 (footnote 4), ``γ`` is exact,
and Theorem 6's curve is made monotone too -- none of which changes ``ε`` by more than 1e-9 here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc

from symsel.bounds.renyi import renyi_bound
from symsel.distributions import geometric, logarithmic, poisson, tnb
from symsel.profiles import DEFAULT_ORDERS, GaussianProfile, RdpProfile
from symsel.profiles.dpaccounting import rdp_poisson_subsampled_gaussian

ORDERS = np.array(rdp_acc.DEFAULT_RDP_ORDERS, dtype=float)
#: P&S Figures 6/7 settings. MNIST: batch 256 of 60000 for 60 epochs is 14062.5 steps; rounded up.
FIG6_STEPS = math.ceil(60 * 60000 / 256)


def _gaussian(sigma: float) -> tuple[dp_event.DpEvent, object]:
    return dp_event.GaussianDpEvent(sigma), lambda lam: np.asarray(lam, dtype=float) / (2 * sigma**2)


def _dpsgd(q: float, sigma: float, steps: int) -> tuple[dp_event.DpEvent, object]:
    event = dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps)
    return event, lambda lam: steps * rdp_poisson_subsampled_gaussian(q, sigma, lam)


BASES = {
    "gaussian-1": _gaussian(1.0),
    "gaussian-4": _gaussian(4.0),
    "dpsgd-q0.01-s1.1-T100": _dpsgd(0.01, 1.1, 100),
    "dpsgd-fig6-mnist": _dpsgd(256 / 60000, 1.1, FIG6_STEPS),
    "dpsgd-fig7-cifar": _dpsgd(16384 / 50000, 21.1, 250),
}
LAWS = {
    "logarithmic": (0.0, lambda mean: logarithmic(mean=mean)),
    "tnb-0.5": (0.5, lambda mean: tnb(0.5, mean=mean)),
    "geometric": (1.0, lambda mean: geometric(mean=mean)),
    "tnb-2": (2.0, lambda mean: tnb(2, mean=mean)),
    "poisson": (math.inf, lambda mean: poisson(mean)),
}


def dp_accounting_epsilon(event: dp_event.DpEvent, mean: float, shape: float, delta: float,
                          orders: np.ndarray = ORDERS) -> float:
    accountant = rdp_acc.RdpAccountant(list(orders))
    accountant.compose(dp_event.RepeatAndSelectDpEvent(event, mean, shape))
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize("base_name", list(BASES))
@pytest.mark.parametrize("law", list(LAWS))
@pytest.mark.parametrize("mean", [10, 30, 100])
def test_same_orders_same_epsilon(base_name: str, law: str, mean: int) -> None:
    """Like for like (same orders, dp-accounting's base RDP, base converted on the same grid): agreement
    to 1e-6 relative, and never above dp-accounting by more than rounding, plus, for Poisson, the output of K = 0
    that symsel counts and Papernot-Steinke's proof assumes away (docs/renyi.md): it moves the RDP curve by at most
    P[K = 0]/(lambda - 1) times e^{-(lambda - 1) eps'}, measured at most 7e-9 in epsilon here."""
    event, rdp_fn = BASES[base_name]
    shape, make = LAWS[law]
    base = RdpProfile(rdp_fn, orders=ORDERS)
    ours = renyi_bound(make(mean), base, orders=ORDERS)
    for delta in (1e-5, 1e-6):
        theirs = dp_accounting_epsilon(event, mean, shape, delta)
        mine = ours.epsilon(delta)
        assert mine == pytest.approx(theirs, rel=1e-6)
        assert mine <= theirs * (1 + 1e-9) + float(make(mean).p0)


# --------------------------------------------------------------------------- what symsel gains


def test_finer_orders_and_sharper_forms_gain_little() -> None:
    """A finer order grid (dp-accounting's ∪ symsel's 660 orders) and the proofs' sharper Thm 2/Thm 6
    (``extended=True``) can only lower ε. Measured at δ = 1e-6 over the bases above: the finer grid gains
    at most 0.05 %; the sharper Theorem 2 gains up to 2.2 % (η = 2, mean 10) and 0.01-0.2 % at mean 100;
    the relaxed Theorem 6 gains nothing measurable on these bases."""
    fine = np.unique(np.concatenate([ORDERS, DEFAULT_ORDERS]))
    event, rdp_fn = BASES["gaussian-4"]
    base, base_fine = RdpProfile(rdp_fn, orders=ORDERS), RdpProfile(rdp_fn, orders=fine)
    for law in ("logarithmic", "tnb-2", "poisson"):
        shape, make = LAWS[law]
        theirs = dp_accounting_epsilon(event, 10, shape, 1e-6)
        same = renyi_bound(make(10), base, orders=ORDERS).epsilon(1e-6)
        finer = renyi_bound(make(10), base_fine, orders=fine).epsilon(1e-6)
        sharp = renyi_bound(make(10), base_fine, orders=fine, extended=True).epsilon(1e-6)
        assert sharp <= finer <= same <= theirs * (1 + 1e-9)
        assert (theirs - finer) / theirs < 5e-4
        if law == "tnb-2":
            assert (theirs - sharp) / theirs > 0.02  # 2.577 -> 2.520


def test_exact_base_profile_and_lemma7_gain_much() -> None:
    """Where symsel improves on dp-accounting materially (same paper, better inputs):

    * Theorem 6 with ``δ̂`` from the *exact* Gaussian profile instead of the RDP conversion: Poisson
      mean 10, σ = 1: ε(1e-6) 10.71 -> 8.96; mean 100: 51.77 -> 35.95 (σ = 4: 2.50 -> 2.04, 9.23 -> 6.96);
    * Lemma 7 with a certified sup over the exact Gaussian region (any law of K): geometric mean 10,
      σ = 4: 2.27 -> 1.63; logarithmic mean 10, σ = 1: 7.86 -> 6.87.
    """
    gauss1, gauss4 = GaussianProfile(1.0), GaussianProfile(4.0)
    theirs = dp_accounting_epsilon(BASES["gaussian-1"][0], 10, math.inf, 1e-6)
    mine = renyi_bound(poisson(10), gauss1).epsilon(1e-6)
    assert theirs == pytest.approx(10.7076, abs=1e-3)
    assert mine == pytest.approx(8.9576, abs=1e-3)
    theirs = dp_accounting_epsilon(BASES["gaussian-4"][0], 10, 1.0, 1e-6)
    generic = renyi_bound(geometric(mean=10), gauss4, method="lemma7", orders=np.geomspace(1.05, 200, 60))
    assert theirs == pytest.approx(2.2716, abs=1e-3)
    assert generic.epsilon(1e-6) < 1.64
