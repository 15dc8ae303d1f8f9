"""The trade-off curve of a plain DP-SGD run against riskcal (Kulynych et al., NeurIPS 2024, Algorithm 1: the
symmetrized trade-off of a dp-accounting PLD), computed by riskcal from PLDs it builds itself.

riskcal's curve of a pessimistic PLD lies below the exact curve (the PLD dominates the mechanism) and its curve of
an optimistic PLD above it (the PLD is dominated), so the exact curve is between them; symsel's certified β must
be below the optimistic one, and close to the pessimistic one (the same dp-accounting discretization).
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

from symsel.profiles import DpsgdProfile

riskcal_analysis = pytest.importorskip("riskcal.analysis")
pld_module = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")

Q, SIGMA, STEPS = 0.01, 1.1, 100
ALPHAS = np.array([1e-3, 0.01, 0.05, 0.2, 0.5, 0.9])


def riskcal_beta(pessimistic: bool) -> np.ndarray:
    logging.getLogger().setLevel(logging.ERROR)  # dp-accounting's notice that the optimistic PLD is not connect-dots
    pld = pld_module.from_gaussian_mechanism(
        standard_deviation=SIGMA, sampling_prob=Q, use_connect_dots=pessimistic, pessimistic_estimate=pessimistic,
        value_discretization_interval=1e-4).self_compose(STEPS)
    return np.asarray(riskcal_analysis.get_beta_from_pld(pld, alpha=ALPHAS), dtype=float)


def test_dpsgd_against_riskcal():
    ours = DpsgdProfile(Q, SIGMA, STEPS).tradeoff(ALPHAS)
    above, below = riskcal_beta(pessimistic=False), riskcal_beta(pessimistic=True)
    assert np.all(ours <= above), (ours, above)
    assert np.all(ours <= below + 1e-9), (ours, below)
    assert np.all(below - ours <= 1e-5), (ours, below)
