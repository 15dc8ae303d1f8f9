"""Location pairs (symsel.pairs.location): bin masses at high precision, far into the tails.

The reference masses are differences of normal CDFs (lower tails left of the mean, upper tails right of it) taken here
at 400 digits with mpmath's ``ncdf``, independent of the pair's own erfc forms and precision control."""

from __future__ import annotations

import mpmath
import numpy as np

from symsel.pairs.location import GaussianPair


def test_tail_bins_are_exact_at_a_bounded_precision(monkeypatch) -> None:
    """GaussianPair(mu = 60): bins at 60 standard deviations have masses near 1e-800. Their digits are not lost to
    cancellation (a bin is a difference of two tail masses of its own size), so the precision stays near the digits
    asked for; raising it by the mass's magnitude (about 800 digits here, 200 000 at mu = 1000, where a lower bound
    would not end) buys nothing. Every mass is within 1e-25 (relative) of the 400-digit reference."""
    pair = GaussianPair(60.0)
    cuts = tuple(float(c) for c in np.linspace(-3.0, 63.0, 23))
    used = []
    real = GaussianPair._bin_mass0_mp

    def recorded(self, a, b):
        used.append(mpmath.mp.dps)
        return real(self, a, b)

    monkeypatch.setattr(GaussianPair, "_bin_mass0_mp", recorded)
    p, q = pair.bin_masses_mp(cuts, 30)
    assert max(used) <= 2 * 30 + 400 and max(used) < 200
    with mpmath.workdps(400):
        edges = [-mpmath.inf, *[mpmath.mpf(c) for c in cuts], mpmath.inf]
        for side, masses in ((60, p), (0, q)):
            for lo, hi, mass in zip(edges[:-1], edges[1:], masses, strict=True):
                if lo >= side:  # right of the mean: the upper tails (no cancellation of numbers near 1)
                    exact = mpmath.ncdf(side - lo) - mpmath.ncdf(side - hi)
                else:
                    exact = mpmath.ncdf(hi - side) - mpmath.ncdf(lo - side)
                assert abs(mass - exact) <= mpmath.mpf("1e-25") * exact, (side, lo, hi)
    assert min(q) < mpmath.mpf("1e-700")  # the test reaches the far tail
