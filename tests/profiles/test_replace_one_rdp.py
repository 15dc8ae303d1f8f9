"""The replace-one RDP bound of DP-SGD (symsel/profiles/replace_one_rdp.py) against the replace-one pair's Rényi
divergence integrated at 30 digits, and the finite answers it gives a replace-one base below the PLD's tail."""

from __future__ import annotations

import math

import mpmath
import pytest

from symsel.profiles import DpsgdProfile
from symsel.profiles.dpaccounting import rdp_poisson_subsampled_gaussian
from symsel.profiles.replace_one_rdp import replace_one_rdp

Q, SIGMA = 0.05, 1.5


def _replace_pair_renyi(q: float, sigma: float, lam: float) -> float:
    """``D_λ(M₊ ‖ M₋)`` for ``M± = (1 − q) N(0, σ²) + q N(±1, σ²)``, by quadrature at 30 digits."""
    with mpmath.workdps(30):
        q_, s = mpmath.mpf(q), mpmath.mpf(sigma)

        def density(x: mpmath.mpf, shift: int) -> mpmath.mpf:
            return (1 - q_) * mpmath.npdf(x, 0, s) + q_ * mpmath.npdf(x, shift, s)

        def integrand(x: mpmath.mpf) -> mpmath.mpf:
            return density(x, 1) ** lam * density(x, -1) ** (1 - lam)

        reach = 40 * s + 4 * lam * s * s
        total = mpmath.quad(integrand, [-reach, -1, 0, 1, reach])
        return float(mpmath.log(total) / (lam - 1))


@pytest.mark.parametrize("lam", [2.0, 8.0, 32.0])
def test_replace_one_rdp_is_above_the_pair_divergence(lam: float) -> None:
    exact = _replace_pair_renyi(Q, SIGMA, lam)
    bound = float(replace_one_rdp(Q, SIGMA, [lam])[0])
    assert bound >= exact * (1 + 1e-9)
    # the add/remove step's RDP is below the replace-one divergence: using it here (the wrong pair) must fail above
    assert rdp_poisson_subsampled_gaussian(Q, SIGMA, [lam])[0] < exact


def test_replace_one_base_is_finite_down_to_1e_30_and_monotone() -> None:
    base = DpsgdProfile(Q, SIGMA, 300, neighbouring="replace_one")
    deltas = [1e-5, 1e-8, 1e-15, 1e-16, 1e-20, 1e-30]
    eps = [base.epsilon(d) for d in deltas]
    assert all(math.isfinite(e) for e in eps)
    assert eps == sorted(eps)
    # never below the add/remove base (replace-one contains the replace-by-zero neighbours)
    add_remove = DpsgdProfile(Q, SIGMA, 300)
    assert all(e >= add_remove.epsilon(d) for d, e in zip(deltas, eps, strict=True))
    assert base.rdp(4.0) == pytest.approx(300 * float(replace_one_rdp(Q, SIGMA, [4.0])[0]))


def test_replace_special_base_uses_the_add_remove_rdp() -> None:
    special = DpsgdProfile(Q, SIGMA, 300, neighbouring="replace_special")
    add_remove = DpsgdProfile(Q, SIGMA, 300)
    for d in (1e-16, 1e-30):
        assert special.epsilon(d) == pytest.approx(add_remove.epsilon(d), rel=1e-12)
