"""The vectorized RDP of the Poisson-subsampled Gaussian (symsel/profiles/subsampled_rdp.py) against the same series
summed at 60 digits, and against dp-accounting's term-by-term sum: never meaningfully less accurate than the peer,
and the same orders usable (finite)."""

from __future__ import annotations

import logging
import math

import mpmath
import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant

from symsel.profiles.rdp import SUBSAMPLED_ORDERS
from symsel.profiles.subsampled_rdp import subsampled_gaussian_rdp


def reference(q: float, sigma: float, alpha: float) -> mpmath.mpf:
    """RDP(alpha) at 60 digits: the integer binomial sum, or the two fractional series (|C(alpha, i)|, as
    dp-accounting sums them) until a term is below 1e-40 of the total."""
    with mpmath.workdps(60):
        q, s, a = mpmath.mpf(q), mpmath.mpf(sigma), mpmath.mpf(alpha)
        if a == int(a):
            total = mpmath.fsum(mpmath.binomial(a, i) * q**i * (1 - q) ** (a - i)
                                * mpmath.exp((i * i - i) / (2 * s * s)) for i in range(int(a) + 1))
        else:
            z0 = s**2 * mpmath.log(1 / q - 1) + mpmath.mpf(1) / 2
            total = mpmath.mpf(0)
            for i in range(1000):
                j = a - i
                weight = abs(mpmath.binomial(a, i))
                low = q**i * (1 - q) ** j * mpmath.exp((i * i - i) / (2 * s * s)) * mpmath.ncdf((z0 - i) / s)
                high = q**j * (1 - q) ** i * mpmath.exp((j * j - j) / (2 * s * s)) * mpmath.ncdf((j - z0) / s)
                term = weight * (low + high)
                total += term
                if i > 5 and term < total * mpmath.mpf(10) ** -40:
                    break
        return mpmath.log(total) / (a - 1)


def peer(q: float, sigma: float, orders) -> np.ndarray:
    logging.getLogger("absl").setLevel(logging.ERROR)  # its non-converging orders come back as inf, with a warning
    return np.asarray(rdp_privacy_accountant._compute_rdp_poisson_subsampled_gaussian(q, sigma, orders), dtype=float)


ORDERS = [1.5, 2.0, 7.7, 32.0, 256.0]


@pytest.mark.parametrize("q", [1e-4, 0.01, 0.32768])
@pytest.mark.parametrize("sigma", [0.7, 4.0, 300.0])
def test_within_the_peers_error_of_the_60_digit_series(q, sigma):
    """Where the sum is close to 1 (small q, large sigma) both lose digits to rounding; symsel's integer orders sum
    the excess over 1 (no cancellation), and no value is more than twice the peer's error (or 1e-11) off."""
    ours, theirs = subsampled_gaussian_rdp(q, sigma, ORDERS), peer(q, sigma, ORDERS)
    for alpha, mine, other in zip(ORDERS, ours, theirs, strict=True):
        exact = reference(q, sigma, alpha)
        error_ours, error_peer = (float(abs(value - exact) / exact) for value in (mine, other))
        assert error_ours <= max(2 * error_peer, 1e-11), (alpha, error_ours, error_peer)


@pytest.mark.parametrize(("q", "sigma"), [(0.01, 1.1), (0.32768, 21.1), (0.05, 0.5), (0.9, 2.0)])
def test_the_whole_order_grid_agrees_with_dp_accounting(q, sigma):
    ours, theirs = subsampled_gaussian_rdp(q, sigma, SUBSAMPLED_ORDERS), peer(q, sigma, SUBSAMPLED_ORDERS)
    assert np.array_equal(np.isfinite(ours), np.isfinite(theirs))
    finite = np.isfinite(theirs)
    assert np.allclose(ours[finite], theirs[finite], rtol=1e-10, atol=0)


def test_the_edges():
    assert subsampled_gaussian_rdp(0.0, 1.0, [2.0, 3.5]).tolist() == [0.0, 0.0]
    assert subsampled_gaussian_rdp(0.1, 0.0, [2.0]).tolist() == [math.inf]
    assert subsampled_gaussian_rdp(0.1, 1.0, [math.inf]).tolist() == [math.inf]
    assert subsampled_gaussian_rdp(1.0, 2.0, [3.0, 4.5]).tolist() == [3.0 / 8.0, 4.5 / 8.0]
