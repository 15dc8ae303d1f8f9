"""Rényi DP of one Poisson-subsampled Gaussian step under the replace-one relation (docs/composition.md, "DP-SGD at
small δ").

Under replace-one an example of clipped gradient ``g`` (``‖g‖ ≤ 1``) is replaced by one of gradient ``g'``: the
difference ``g − g'`` can have norm 2 (``g' = −g``), and the step's pair along ``g`` is
``M₊ = (1 − q) N(0, σ²) + q N(1, σ²)`` against ``M₋ = (1 − q) N(0, σ²) + q N(−1, σ²)`` (dp-accounting's replace-one
PLD is built on this pair). It is *not* the add/remove pair at sensitivity 2: the replaced example is sampled with
probability ``q`` on both sides, so each side is a mixture. Its Rényi divergence is bounded through the dataset in
the middle, where the example's gradient is 0 (the step's output is then ``N₀ = N(0, σ²)``), by the weak triangle
inequality of Rényi divergences (Mironov, *Rényi Differential Privacy*, CSF 2017, Proposition 11, with ``p = q = 2``):

    D_λ(M₊ ‖ M₋) ≤ (λ − 1/2)/(λ − 1) · D_{2λ}(M₊ ‖ N₀) + D_{2λ−1}(N₀ ‖ M₋).

Both divergences on the right are the add/remove step's, in its two directions; the add/remove RDP of the
subsampled Gaussian (Mironov, Talwar and Zhang 2019; :mod:`symsel.profiles.subsampled_rdp`) bounds both. The bound
is loose: for ``q = 0.05``, ``σ = 1.5`` it is 0.597 at ``λ = 8`` where the pair's divergence (quadrature at 30
digits, tests/profiles/test_replace_one_rdp.py) is 0.0189, since the order doubles into the range where the
subsampled Gaussian's RDP grows fast. It is finite at every order, so its conversion to ``(ε, δ)`` reaches every
``δ > 0`` below the PLD's truncated tail (about 1e-15), where the PLD answers ∞.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def replace_one_rdp(q: float, sigma: float, orders: Sequence[float] | np.ndarray) -> np.ndarray:
    """An upper bound on the RDP of one replace-one step at each order ``λ > 1`` (module docstring)."""
    from symsel.profiles.dpaccounting import rdp_poisson_subsampled_gaussian

    lam = np.asarray(orders, dtype=float)
    doubled = rdp_poisson_subsampled_gaussian(q, sigma, 2.0 * lam)
    odd = rdp_poisson_subsampled_gaussian(q, sigma, 2.0 * lam - 1.0)
    return (lam - 0.5) / (lam - 1.0) * doubled + odd
