"""Reference profiles for the tests, written independently of the code under test (plain numpy)."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

from symsel.profiles import Profile


class ExactPairProfile(Profile):
    """The exact two-sided profile max(H(P||P'), H(P'||P)) of a finite pair, written independently
    of the code under test (plain numpy sums)."""

    family = "exact_pair"

    def __init__(self, p, r):
        self.p, self.r = np.asarray(p, float), np.asarray(r, float)

    @property
    def spec(self) -> str:
        return "exact_pair"

    def _delta_finite(self, eps):
        e = np.exp(np.asarray(eps, float))[:, None]
        one = np.maximum(self.p - e * self.r, 0).sum(axis=1)
        two = np.maximum(self.r - e * self.p, 0).sum(axis=1)
        return np.maximum(one, two)

    def rdp(self, order):
        """Exact two-sided Rényi divergence of the pair (order > 1; inf at order = inf)."""
        if order == math.inf:
            return self.max_privacy_loss
        lp, lr = np.log(self.p), np.log(self.r)
        one = logsumexp(order * lp + (1 - order) * lr) / (order - 1)
        two = logsumexp(order * lr + (1 - order) * lp) / (order - 1)
        return float(max(one, two))

    @property
    def max_privacy_loss(self):
        with np.errstate(divide="ignore"):
            ratios = np.concatenate([np.log(self.p) - np.log(self.r), np.log(self.r) - np.log(self.p)])
        return float(np.max(ratios))


def random_pair(seed: int, n: int):
    """A random finite pair (P, P') with full support and a random score order."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(n))
    r = np.clip(p * np.exp(rng.normal(0, 0.6, n)), 1e-9, None)
    return p, r / r.sum(), rng.permutation(n)


