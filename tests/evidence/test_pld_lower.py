"""Certified lower bounds on bases known through dominated pairs (symsel.evidence.pld_lower) and the check of every
lower bound against an upper bound (symsel.evidence.lower.below_upper_bound).

References are independent of the code under test: the selection's hockey-stick divergence summed here at 100
digits with the PGF written out by hand, and dp-accounting's RDP accountant for the ``k``-fold composition of
DP-SGD (releasing every run is an upper bound on releasing the best of them).
"""

from __future__ import annotations

import dp_accounting
import mpmath
import numpy as np
import pytest

import symsel
from symsel.errors import InconsistentBoundsError
from symsel.evidence import lower as lower_module
from symsel.evidence.lower import below_upper_bound
from symsel.evidence.pld_lower import loss_pair_lower_bound, selection_delta_below
from symsel.pairs.dpsgd import dpsgd_dominated_pairs


def selection_delta_100_digits(a, b, order, phi, eps) -> mpmath.mpf:
    """``Σ_o [φ(Y + a_o) − φ(Y) − e^ε (φ(X + b_o) − φ(X))]_+`` (``X``, ``Y``: masses scored below ``o``) at 100
    digits: the exact ``δ(ε)`` of the best of ``K`` runs on the finite pair with that score order."""
    with mpmath.workdps(100):
        e = mpmath.exp(mpmath.mpf(eps))
        x = y = total = mpmath.mpf(0)
        for o in order:
            ao, bo = mpmath.mpf(a[o]), mpmath.mpf(b[o])
            total += max(mpmath.mpf(0), phi(y + ao) - phi(y) - e * (phi(x + bo) - phi(x)))
            x, y = x + bo, y + ao
        return total


def rdp_upper_bound(q: float, sigma: float, steps: int, delta: float) -> float:
    """dp-accounting's RDP accountant for ``steps`` Poisson-subsampled Gaussian steps."""
    accountant = dp_accounting.rdp.RdpAccountant()
    accountant.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize("eps", [1.0, 30.0, 80.0, 95.0, 200.0, 5000.0])
def test_a_mass_below_the_working_precision_still_costs(eps: float) -> None:
    """An atom with ``Q'``-mass 1e-40 scored last: at 30 digits ``φ(X + b) − φ(X)`` at ``X ≈ 1 − 2⁻¹⁰`` rounds to
    0, which would make the sum a constant for every ``ε`` (a δ that never falls: on long DP-SGD runs a lower bound of
    8622 where valid upper bounds say 124). From below it must stay under the exact sum, and near it while the
    atom's term lives."""
    a = np.array([0.5, 0.5])
    b = np.array([1.0 - 2.0**-10, 1e-40])  # a sub-probability: 1 - 1e-40 would round to 1.0, and the masses sum above 1
    order = np.array([0, 1])
    dist = symsel.parse_distribution("point(k=2)")
    exact = selection_delta_100_digits(a, b, order, lambda z: z**2, eps)
    below = selection_delta_below(a, b, order, dist, eps, 0.0)
    assert below <= exact
    if exact > 1e-3:
        assert below >= exact * (1 - 1e-12)


def test_tiny_masses_keep_their_relative_size() -> None:
    """``Q'``-masses far below 10^-30 anywhere in the order: the bound from below never exceeds the exact sum, and
    follows it to 1e-12 (relative, where it is at least 1e-20) when no tiny mass is scored first (there
    ``φ'(0) = 0`` and the slope bound of a difference is loose by a factor: still a bound from below)."""
    rng = np.random.default_rng(3)
    a = rng.dirichlet(np.ones(6))
    b = np.concatenate([rng.dirichlet(np.ones(3)) * (1 - 3e-45), [1e-45, 1e-45, 1e-45]])
    dist = symsel.parse_distribution("point(k=3)")
    for order, close in (([0, 3, 4, 1, 2, 5], True), ([3, 0, 4, 1, 2, 5], False)):
        for eps in (10.0, 60.0, 90.0, 100.0, 110.0, 300.0):
            exact = selection_delta_100_digits(a, b, order, lambda z: z**3, eps)
            below = selection_delta_below(a, b, np.array(order), dist, eps, 0.0)
            assert below <= exact, (order, eps)
            if close and exact >= 1e-20:
                assert below >= exact * (1 - 1e-12), (order, eps)


@pytest.mark.parametrize("steps", [500_000, 1_000_000])
def test_long_dpsgd_runs_stay_below_the_rdp_accountant(steps: int) -> None:
    """dpsgd(q=0.01, sigma=1.1) at 5e5 and 1e6 steps, two runs, δ = 1e-6: the lower bound on the dominated pairs
    (both directions, one round from ε = 120) is at most dp-accounting's RDP ε for releasing both runs (124.3 and
    about 206), and it is not trivial (above one run's share)."""
    q, sigma = 0.01, 1.1
    pairs = dpsgd_dominated_pairs(q, sigma, steps)
    found = loss_pair_lower_bound(pairs, symsel.point(k=2), 1e-6, 120.0, pieces=1, rounds=1).epsilon
    upper = rdp_upper_bound(q, sigma, 2 * steps, 1e-6)
    assert 0.25 * upper < found <= upper


def test_a_lower_bound_above_an_upper_bound_is_refused() -> None:
    assert below_upper_bound(1.5, 1.5, "here") == 1.5
    with pytest.raises(InconsistentBoundsError, match=r"lower bound eps=2\.0 exceeds a valid upper bound eps=1\.0"):
        below_upper_bound(2.0, 1.0, "here")


def test_lower_bound_checks_itself_against_an_upper_bound(monkeypatch) -> None:
    """Both paths of symsel.lower_bound refuse a value above an upper bound: the searched one (a base with a
    dominating pair) against the rdp bound, the dominated-pair one (DP-SGD) against best's."""
    dist = symsel.point(k=3)
    monkeypatch.setattr(lower_module, "_cheap_upper_bound", lambda *args: 0.5)
    with pytest.raises(InconsistentBoundsError):
        symsel.lower_bound(symsel.parse_profile("randomized_response(eps=2, k=2)"), dist, 1e-6, budget=5, slices=0)

    from symsel.evidence import pld_lower

    def inflated(pairs, *args, **kwargs):
        return pld_lower.PldLowerBound(1e3, 1e-6, "add", 2, "made up", np.array([0.5, 0.5]), np.array([0.5, 0.5]),
                                       (0, 1))

    from symsel.evidence import dpsgd_brackets

    monkeypatch.setattr(pld_lower, "loss_pair_lower_bound", inflated)
    monkeypatch.setattr(dpsgd_brackets, "searched_lower_bound", inflated)
    with pytest.raises(InconsistentBoundsError):
        symsel.lower_bound(symsel.parse_profile("dpsgd(q=0.1, sigma=1.0, steps=10)"), dist, 1e-6)
