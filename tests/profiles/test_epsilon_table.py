"""The PLD's ``ε(δ)`` from :class:`~symsel.profiles.dpaccounting.EpsilonTable`: dp-accounting's own
``get_epsilon_for_delta`` to the bit on the arrays symsel holds (DP-SGD, symmetric and asymmetric), and on the
safe side of it (and close) for a PLD known only through dp-accounting's public queries, at every δ from 1e-30 to
above δ(0)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

import symsel
from symsel.profiles import PldProfile
from symsel.profiles.dpaccounting import EpsilonTable, HeldPld, PmfArrays, _build, epsilon_tables

DELTAS = [0.0, 1e-30, 1e-15, 1e-12, 1e-9, 3e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.05, 0.2, 0.5, 0.9, 1.0]
EVENTS = {
    "dpsgd, asymmetric": dp_event.SelfComposedDpEvent(
        dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.1)), 300),
    "gaussian": dp_event.GaussianDpEvent(2.0),
    "laplace, 10 times": dp_event.SelfComposedDpEvent(dp_event.LaplaceDpEvent(1.0), 10),
    "subsampled laplace": dp_event.PoissonSampledDpEvent(0.2, dp_event.LaplaceDpEvent(0.5)),
}


@pytest.mark.parametrize("chunk", [8192, 7])
@pytest.mark.parametrize("name", list(EVENTS))
def test_the_table_gives_dp_accountings_epsilon(name, chunk, monkeypatch):
    """Also with chunks of 7 losses: the running sums carried across chunk ends are the loop's. A DP-SGD run's arrays
    are symsel's own (the accountant's to the bit): the same floats as ``PLDAccountant.get_epsilon``; the other
    events' arrays come from public ``δ`` queries (``arrays_from_queries``, each mass raised by its rounding
    bound): never below it, and at most one step of the loss grid above it (where ``δ`` falls steeply)."""
    monkeypatch.setattr(EpsilonTable, "CHUNK", chunk)
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(EVENTS[name])
    held, _ = _build(EVENTS[name], "add_remove", 1e-4)
    own = isinstance(held, HeldPld)
    assert own == name.startswith("dpsgd")
    tables = epsilon_tables(held, 1e-4)
    assert tables is not None
    grid = np.concatenate([DELTAS, np.geomspace(1e-20, 0.99, 60)])
    for delta in grid.tolist():
        expected = accountant.get_epsilon(delta)
        got = max(table.epsilon(delta) for table in tables)
        if own or math.isinf(expected):
            assert got == expected or (math.isinf(got) and math.isinf(expected)), (delta, got, expected)
        else:
            assert expected <= got <= expected + 1e-4 + 1e-9, (delta, got, expected)  # at most one grid step


def test_a_dpsgd_profile_answers_as_its_accountant():
    base = symsel.parse_profile("dpsgd(q=0.02, sigma=0.9, steps=200)")
    for delta in (1e-30, 1e-10, 1e-6, 1e-3, 0.3):
        expected = max(0.0, base.accountant.get_epsilon(delta)) if base.delta(0.0) > delta else 0.0
        assert PldProfile.epsilon(base, delta) == expected


def test_without_arrays_or_grid_there_is_no_table():
    """A dp-accounting PLD whose loss grid is not given has no arrays symsel may use: dp-accounting answers."""
    from dp_accounting.pld import privacy_loss_distribution

    assert epsilon_tables(None) is None
    assert epsilon_tables(privacy_loss_distribution.from_gaussian_mechanism(2.0)) is None


@pytest.mark.parametrize(("discretization", "lower_loss", "probs", "infinity_mass", "deltas"), [
    # near a tie: at loss 0, log((U - delta) / L) is within an ulp of 0 for delta = 0.25 (either way the same value)
    (math.log(2), 0, [0.5, 0.5], 0.0, [0.25, 0.2, 0.3]),
    # losses past 745: e^-l is 0 in float64 and dp-accounting returns the loss where U reaches delta
    (1.0, 790, [0.3, 0.2, 0.1, 0.1], 0.1, [0.1, 0.15, 0.25, 0.45, 0.6, 0.9]),
])
def test_crafted_pmfs_with_ties_and_vanishing_terms(discretization, lower_loss, probs, infinity_mass, deltas):
    from dp_accounting.pld import pld_pmf

    pmf = pld_pmf.DensePLDPmf(discretization, lower_loss, np.asarray(probs), infinity_mass, True)
    table = EpsilonTable(PmfArrays(discretization, lower_loss, np.asarray(probs), infinity_mass))
    for delta in deltas:
        assert table.epsilon(delta) == pmf.get_epsilon_for_delta(delta), delta
