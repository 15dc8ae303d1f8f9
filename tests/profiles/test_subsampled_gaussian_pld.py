"""symsel.profiles.subsampled_gaussian_pld builds one DP-SGD step's PLD with the inverse privacy loss tabled: it must
be dp-accounting's own ``from_gaussian_mechanism`` PLD, bit for bit, on every kind of step (the reference is
dp-accounting's public function itself), and the table must answer the grid (else the speed-up is silently lost)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import privacy_accountant
from dp_accounting.pld import privacy_loss_mechanism
from dp_accounting.pld.privacy_loss_distribution import from_gaussian_mechanism
from reference_profiles import pld_state

from symsel.profiles.subsampled_gaussian_pld import inverse_loss_table, subsampled_gaussian_pld

RELATION = privacy_accountant.NeighboringRelation


CASES = [
    (0.01, 1.1, RELATION.ADD_OR_REMOVE_ONE, 1e-4),   # the DP-SGD default of the benchmarks and the guides
    (0.001, 0.6, RELATION.ADD_OR_REMOVE_ONE, 1e-4),  # tiny rate, little noise: a wide loss grid
    (0.32768, 21.1, RELATION.ADD_OR_REMOVE_ONE, 1e-4),  # the README plan's step
    (0.5, 3.0, RELATION.REPLACE_SPECIAL, 1e-3),
    (0.999, 0.8, RELATION.ADD_OR_REMOVE_ONE, 1e-3),  # next to no subsampling: the add direction's limit is near
    (1e-6, 0.3, RELATION.ADD_OR_REMOVE_ONE, 1e-4),
    (0.05, 1.3, RELATION.ADD_OR_REMOVE_ONE, 1e-2),   # a coarse grid
    (0.2, 50.0, RELATION.ADD_OR_REMOVE_ONE, 1e-5),
    (1.0, 2.0, RELATION.ADD_OR_REMOVE_ONE, 1e-4),    # no subsampling: one (remove) direction, x = -1/2 - eps sigma^2
    (1.0, 4.0, RELATION.ADD_OR_REMOVE_ONE, 1e-4),    # the final run of the accounting example (docs/python.md)
    (1.0, 0.3, RELATION.REPLACE_SPECIAL, 1e-3),      # little noise: a wide loss grid
    (1.0, 50.0, RELATION.ADD_OR_REMOVE_ONE, 1e-5),
    (1.0, 4.0 / math.sqrt(7), RELATION.ADD_OR_REMOVE_ONE, 1e-4),  # sigma / sqrt(count), as PLDAccountant composes
    (0.1, 2.0, RELATION.REPLACE_ONE, 1e-3),          # replace-one: dp-accounting's own build
]


@pytest.mark.parametrize("rate, sigma, relation, interval", CASES)
def test_the_tabled_build_is_dp_accountings_pld_bit_for_bit(rate, sigma, relation, interval):
    ours = subsampled_gaussian_pld(rate, sigma, relation, interval)
    reference = from_gaussian_mechanism(standard_deviation=sigma, value_discretization_interval=interval,
                                        sampling_prob=rate, neighboring_relation=relation)
    assert pld_state(ours) == pld_state(reference)
    assert ours.get_epsilon_for_delta(1e-6) == reference.get_epsilon_for_delta(1e-6)


@pytest.mark.parametrize("adjacency", [privacy_loss_mechanism.AdjacencyType.ADD,
                                       privacy_loss_mechanism.AdjacencyType.REMOVE])
def test_the_table_is_dp_accountings_inverse_loss_where_it_answers_and_answers_the_grid(adjacency):
    loss = privacy_loss_mechanism.GaussianPrivacyLoss(1.1, sampling_prob=0.01, adjacency_type=adjacency)
    limit = -math.log(1 - 0.01)
    special = [0.0, limit, -limit, math.nextafter(limit, 0), math.nextafter(-limit, 0), 1e-300, -1e-300, 30.0, -30.0,
               np.inf, -np.inf]
    grid = np.concatenate([np.arange(-40000, 40001) * 1e-4, special])
    table = inverse_loss_table(loss, grid)
    assert len(table) >= 0.99 * 40001  # the general branch: all but the special points (ε = 0, the limits)
    own_limit = limit if adjacency == privacy_loss_mechanism.AdjacencyType.ADD else -limit  # ±log(1 − q)
    assert 0.0 not in table and own_limit not in table and math.nextafter(own_limit, 0) not in table
    for eps, x in table.items():
        assert x == loss.inverse_privacy_loss(eps), eps


@pytest.mark.parametrize("sigma, sensitivity", [(4.0, 1), (0.3, 1), (2.5, 2.0)])
def test_without_subsampling_the_table_answers_every_finite_point_with_dp_accountings_inverse(sigma, sensitivity):
    """``q = 1``: the remove direction's table holds every finite grid point, each equal to dp-accounting's scalar
    inverse; the add direction (not built: the PLD is symmetric) and infinite points are left to dp-accounting."""
    remove = privacy_loss_mechanism.GaussianPrivacyLoss(sigma, sensitivity=sensitivity,
                                                         adjacency_type=privacy_loss_mechanism.AdjacencyType.REMOVE)
    grid = np.concatenate([np.arange(-30000, 30001) * 1e-4, [1e-300, -1e-300, 700.0, np.inf, -np.inf]])
    table = inverse_loss_table(remove, grid)
    assert len(table) == grid.size - 2 and np.inf not in table and -np.inf not in table
    for eps, x in table.items():
        assert x == remove.inverse_privacy_loss(eps), eps
    add = privacy_loss_mechanism.GaussianPrivacyLoss(sigma, sensitivity=sensitivity,
                                                      adjacency_type=privacy_loss_mechanism.AdjacencyType.ADD)
    assert inverse_loss_table(add, grid) == {}


def test_a_step_grid_too_wide_is_refused_before_it_is_built():
    """σ = 0.019: one step's loss grid spans 12 million points at q = 1e-300 (19 million at q = 0.01): refused with
    one line naming q and sigma before any ``δ`` is evaluated on it."""
    from symsel.errors import NotApplicableError
    from symsel.profiles.subsampled_gaussian_pld import MAX_STEP_GRID, subsampled_gaussian_arrays

    relation = privacy_accountant.NeighboringRelation.ADD_OR_REMOVE_ONE
    for rate in (1e-300, 0.01):
        with pytest.raises(NotApplicableError) as info:
            subsampled_gaussian_arrays(rate, 0.019, relation, 1e-4)
        assert f"q={rate:g}" in str(info.value) and "sigma=0.019" in str(info.value) and "\n" not in str(info.value)
    assert MAX_STEP_GRID >= 47_000  # q = 0.01, sigma = 1.1 is far inside
    assert subsampled_gaussian_arrays(1e-300, 0.3, relation, 1e-4) is not None
