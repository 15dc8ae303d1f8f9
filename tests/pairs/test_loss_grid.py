"""The dominating pair of a PLD on a loss grid (:func:`symsel.pairs.loss.from_loss_grid`): a pair of
(sub-)distributions, split onto a coarser grid without falling below the PLD in either tail, summed at 40 digits from
the masses it states."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

from symsel.pairs.loss import from_loss_grid

DPS = 40


def _gaussian_pld(cuts: int = 3000) -> tuple[np.ndarray, np.ndarray]:
    """A valid PLD of the Gaussian pair ``N(1, 1)`` against ``N(0, 1)``: the outputs cut into bins on ``[−8, 9]``, each
    bin's ``Q``-mass rounded down and its loss ``log(Q/Q')`` rounded up (so ``Σ p e^{−l} ≤ Q'``-mass of the bins
    ``< 1``); the mass outside goes to ``+∞`` (:func:`from_loss_grid` puts the ``Q``-mass missing from 1 there)."""
    with mpmath.workdps(DPS):
        x = [mpmath.mpf(v) for v in np.linspace(-8.0, 9.0, cuts).tolist()]
        p = [mpmath.ncdf(b - 1) - mpmath.ncdf(a - 1) for a, b in itertools.pairwise(x)]
        q = [mpmath.ncdf(b) - mpmath.ncdf(a) for a, b in itertools.pairwise(x)]
        losses = np.array([math.nextafter(float(mpmath.log(pi / qi)), math.inf) for pi, qi in zip(p, q, strict=True)])
        masses = np.array([math.nextafter(float(pi), 0.0) for pi in p])
    return losses, masses


def _tails(a: np.ndarray, b: np.ndarray, a_inf: float, eps: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """``H_{e^ε}(Q ‖ Q')`` and ``H_{e^ε}(Q' ‖ Q)`` of the masses as stated, at ``DPS`` digits."""
    e = mpmath.exp(mpmath.mpf(eps))
    upper = mpmath.fsum(max(mpmath.mpf(x) - e * mpmath.mpf(y), 0) for x, y in zip(a.tolist(), b.tolist(), strict=True))
    lower = mpmath.fsum(max(mpmath.mpf(y) - e * mpmath.mpf(x), 0) for x, y in zip(a.tolist(), b.tolist(), strict=True))
    return upper + mpmath.mpf(a_inf), lower


def _pld_masses(losses: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The PLD's own pair: ``Q``-masses and ``Q' = p e^{−l}``, the latter at ``DPS`` digits, as floats rounded up
    (the divergences of the PLD taken from above: the coarse pair must stay above them)."""
    with mpmath.workdps(DPS):
        b = np.array([math.nextafter(float(mpmath.mpf(p) * mpmath.exp(-mpmath.mpf(l))), math.inf)
                      for l, p in zip(losses.tolist(), probs.tolist(), strict=True)])
    return probs, b


@pytest.mark.parametrize("width", [0.01, 0.1])
def test_the_split_keeps_both_distributions_and_dominates_both_tails(width: float) -> None:
    """Each atom split between the multiples of ``width`` around it: ``Q`` and ``Q'`` sum to at most 1 (``Q``'s
    missing mass at ``+∞``), and both tails of the coarse pair at or above the fine one's at every ``ε`` tried,
    above by at most second order in the width (rounding each atom up moves them by first order)."""
    losses, probs = _gaussian_pld()
    pair = from_loss_grid(losses, probs, 0.0, width, "remove", "gaussian")
    fine_a, fine_b = _pld_masses(losses, probs)
    with mpmath.workdps(DPS):
        assert mpmath.fsum(pair.b.tolist()) <= 1
        assert mpmath.fsum(pair.a.tolist()) + mpmath.mpf(pair.a_infinity) <= 1 + 1e-15
        slack = 8 * pair.relative_error
        for eps in (-4.0, -1.5, -0.5, 0.0, 0.3, 1.0, 2.0, 3.5):
            coarse_up, coarse_down = _tails(pair.a, pair.b, pair.a_infinity, eps)
            fine_up, fine_down = _tails(fine_a, fine_b, 0.0, eps)
            assert coarse_up >= fine_up - slack, (width, eps)
            assert coarse_down >= fine_down - slack, (width, eps)
            assert coarse_up - fine_up <= width * width, (width, eps)


@pytest.mark.parametrize("width", [0.0, 0.01])
def test_a_pld_with_more_than_one_of_q_prime_is_cut_to_a_pair_of_distributions(width: float) -> None:
    """A PLD whose masses imply more ``Q'``-mass than 1 (round-off of connect-the-dots masses, clipped at 0, at very
    negative losses: ``Q``-masses of 1e-9 at losses −6 to −4 carry about 3e-5 of ``Q'``): the pair made of it has
    ``Q'``-mass at most 1 and the PLD's ``Q``-mass, and its upper tail is the PLD's at every ``ε`` above the
    lowest loss it keeps, which stays below −1."""
    losses, probs = _gaussian_pld()
    noise_losses = np.round(np.arange(-6.0, -4.0, 0.01), 2)
    losses = np.concatenate([noise_losses, losses])
    probs = np.concatenate([np.full(noise_losses.size, 1e-9), probs])
    order = np.argsort(losses, kind="stable")
    losses, probs = losses[order], probs[order]
    fine_a, fine_b = _pld_masses(losses, probs)
    with mpmath.workdps(DPS):
        assert mpmath.fsum(fine_b.tolist()) > 1 + 1e-5  # the input is no pair of distributions
        pair = from_loss_grid(losses, probs, 0.0, width, "add", "noisy")
        assert mpmath.fsum(pair.b.tolist()) <= 1
        assert abs(mpmath.fsum(pair.a.tolist()) + mpmath.mpf(pair.a_infinity) - mpmath.fsum(probs.tolist())) < 1e-15
        finite = pair.a > 0
        lowest = float(np.min(np.log(pair.a[finite]) - np.log(pair.b[finite])))
        assert lowest < -1.0
        for eps in (lowest + 1e-9, -1.0, 0.0, 0.5, 2.0):
            coarse_up, _ = _tails(pair.a, pair.b, pair.a_infinity, eps)
            fine_up, _ = _tails(fine_a, fine_b, 0.0, eps)
            assert coarse_up >= fine_up - 8 * pair.relative_error, (width, eps)


def test_a_pld_at_loss_zero_alone_with_too_much_mass_keeps_q_prime_at_most_one() -> None:
    """The PLD of a run with (almost) no loss, ``dpsgd(q=1e-300, …)``: one atom at loss 0 whose ``Q``-mass is over 1
    by round-off (1.3e-13 for dp-accounting's add direction). No lowest atoms can be cut; the atom's loss is raised
    just enough that its ``Q'``-mass is at most 1, its ``Q``-mass kept."""
    mass = 1.0 + 1.3e-13
    pair = from_loss_grid(np.array([0.0]), np.array([mass]), 0.0, 0.0, "add", "at zero")
    with mpmath.workdps(DPS):
        assert mpmath.fsum(pair.b.tolist()) <= 1
        assert mpmath.fsum(pair.a.tolist()) + mpmath.mpf(pair.a_infinity) == mpmath.mpf(mass)
    finite = pair.a > 0
    assert 0.0 < float(np.log(pair.a[finite][0]) - np.log(pair.b[finite][0])) < 1e-12
