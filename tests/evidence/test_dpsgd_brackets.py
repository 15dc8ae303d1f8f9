"""Lower bounds on DP-SGD under each neighbouring relation and at small δ (symsel.evidence.dpsgd_brackets), against
dp-accounting's PLD and RDP accountants for the same compositions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import dp_event, privacy_accountant
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant

from symsel import distributions as dists
from symsel.evidence import monotone
from symsel.evidence.dpsgd_brackets import (
    lower_tail,
    replace_one_dominated_pair,
    replace_one_step_buckets,
    searched_lower_bound,
)
from symsel.pairs.dpsgd import dpsgd_dominated_pairs
from symsel.pairs.loss import hockey_stick_below

Q, SIGMA, STEPS = 0.05, 1.5, 30
#: small pairs (the tests' cost grows as the square of the labels)
SMALL = {"max_labels": 800, "final_atoms": 200}
RELATIONS = privacy_accountant.NeighboringRelation


def _event(steps: int) -> dp_event.DpEvent:
    return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(Q, dp_event.GaussianDpEvent(SIGMA)), steps)


def _pld_delta(relation: privacy_accountant.NeighboringRelation, steps: int, eps: float) -> float:
    accountant = pld_privacy_accountant.PLDAccountant(neighboring_relation=relation,
                                                      value_discretization_interval=1e-3)
    accountant.compose(_event(steps))
    return float(accountant.get_delta(eps))


def _rdp_epsilon(steps: int, delta: float) -> float:
    accountant = rdp_privacy_accountant.RdpAccountant()
    accountant.compose(_event(steps))
    return float(accountant.get_epsilon(delta))


def test_replace_one_step_buckets_are_a_pair() -> None:
    up, down, labels = replace_one_step_buckets(Q, SIGMA, 2e-3)
    assert up.sum() == pytest.approx(1.0, abs=1e-12) and down.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(np.diff(labels) >= 0)
    # the pair is symmetric: the masses mirror each other
    assert np.allclose(up, down[::-1], rtol=1e-9, atol=1e-300)


@pytest.fixture(scope="module")
def replace_pair():
    return replace_one_dominated_pair(Q, SIGMA, STEPS, **SMALL)[0]


@pytest.mark.parametrize("eps", [0.5, 1.5, 3.0])
def test_replace_one_pair_is_below_dp_accountings_replace_one_pld(replace_pair, eps: float) -> None:
    below = float(hockey_stick_below(replace_pair, np.array([eps]))[0])
    upper = _pld_delta(RELATIONS.REPLACE_ONE, STEPS, eps)
    assert below <= upper
    assert below >= 0.9 * upper  # informative: the bucketed pair is close to the relation's own pair
    # and above the add/remove pair's (replace-one contains the replace-by-zero neighbours, and is stronger)
    add_remove = dpsgd_dominated_pairs(Q, SIGMA, STEPS, **SMALL)
    assert below > max(float(hockey_stick_below(p, np.array([eps]))[0]) for p in add_remove)


def test_small_delta_pairs_resolve_the_tail_and_stay_below_the_rdp_accountant() -> None:
    # at ε where dp-accounting's RDP accountant (an independent upper bound) puts δ = 1e-30, the pair with the
    # tail resolved for 1e-30 is below 1e-30 but far from 0; the pair with the default tail cannot see it
    eps = _rdp_epsilon(STEPS, 1e-30)
    fine = max(float(hockey_stick_below(p, np.array([eps]))[0])
               for p in dpsgd_dominated_pairs(Q, SIGMA, STEPS, tail=lower_tail(1e-30), **SMALL))
    assert 1e-34 < fine <= 1e-30
    assert lower_tail(1e-30) < 1e-39 and lower_tail(1e-5) == 1e-24


@pytest.fixture(scope="module")
def point2_lower_bounds() -> dict[float, float]:
    """Certified lower bounds for point(2) at three δ, on small add/remove pairs (one direction: the remove one)."""
    found = {}
    for delta in (1e-5, 1e-15, 1e-30):
        pairs = dpsgd_dominated_pairs(Q, SIGMA, STEPS, tail=lower_tail(delta), **SMALL)[:1]
        found[delta] = searched_lower_bound(pairs, dists.point(2), delta, _rdp_epsilon(2 * STEPS, delta)).epsilon
    return found


def test_lower_bound_never_above_independent_upper_bounds(point2_lower_bounds) -> None:
    # point(2) is a post-processing of 2·STEPS composed steps: dp-accounting's accountants for them bound it
    for delta, lower in point2_lower_bounds.items():
        upper = _rdp_epsilon(2 * STEPS, delta)
        assert math.isfinite(lower)
        assert 0.8 * upper < lower <= upper
    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-3)
    accountant.compose(_event(2 * STEPS))
    assert point2_lower_bounds[1e-5] <= float(accountant.get_epsilon(1e-5))


def test_lower_bound_is_monotone_in_delta(point2_lower_bounds) -> None:
    values = [point2_lower_bounds[d] for d in sorted(point2_lower_bounds, reverse=True)]
    assert values == sorted(values)


def test_running_maximum_takes_larger_bounds_from_larger_delta_only() -> None:
    """A bound found at a larger δ holds at every smaller δ (ε(δ) is non-increasing); one found at a smaller δ never
    raises one at a larger δ; the same results always give the same answers (no memory between calls)."""
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Found:
        epsilon: float
        delta: float
        construction: str = "test"

    results = [Found(5.0, 1e-5), Found(4.0, 1e-8), Found(9.0, 1e-10), Found(5.5, 1e-6)]
    out = monotone.running_maximum(results)
    assert [r.epsilon for r in out] == [5.0, 5.5, 9.0, 5.5]
    assert out[1].delta == 1e-8 and "1e-06" in out[1].construction
    assert out[0] is results[0] and out[2] is results[2]
    assert [r.epsilon for r in monotone.running_maximum(results)] == [r.epsilon for r in out]
