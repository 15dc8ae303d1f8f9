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




def exact_selection_delta(p, r, order, dist, eps, dps=40):
    """Two-sided hockey-stick divergence of the exact selection law A(y) = φ(Q(≤y)) − φ(Q(<y)),
    A(⊥) = φ(0) (docs/setting.md), summed in mpmath: written here, independently of symsel.evidence.exact."""
    import mpmath

    with mpmath.workdps(dps):
        def law(masses):
            out, below = [], mpmath.mpf(0)
            for i in order:  # lowest score first
                above = below + mpmath.mpf(float(masses[i]))
                out.append(dist.phi_mp(above, dps) - dist.phi_mp(below, dps))
                below = above
            return [*out, dist.phi_mp(0, dps)]

        lp, lr = law(p), law(r)
        g = mpmath.exp(mpmath.mpf(eps))
        one = mpmath.fsum(max(x - g * y, 0) for x, y in zip(lp, lr, strict=True))
        two = mpmath.fsum(max(y - g * x, 0) for x, y in zip(lp, lr, strict=True))
        return max(one, two)


def gdp_delta_mp(mu, eps, dps=50):
    """δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) of μ-GDP (Dong, Roth, Su), at ``dps`` digits."""
    import mpmath

    with mpmath.workdps(dps):
        mu, eps = mpmath.mpf(mu), mpmath.mpf(eps)
        return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


def exact_gdp_epsilon(mu: float, delta: float) -> float:
    """The least ε with δ(ε) ≤ delta for μ-GDP, by bisection on the 50-digit closed form (upper end returned)."""
    lo, hi = 0.0, 200.0
    for _ in range(70):
        mid = (lo + hi) / 2
        if gdp_delta_mp(mu, mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def product_pair_delta_mp(p, r, k, eps, dps=50):
    """Two-sided δ(ε) of the k-fold product of the finite pair (p, r), by enumerating all n^k outcome tuples."""
    import itertools

    import mpmath

    with mpmath.workdps(dps):
        g = mpmath.exp(mpmath.mpf(eps))
        pm, rm = [mpmath.mpf(float(x)) for x in p], [mpmath.mpf(float(x)) for x in r]
        one, two = [], []
        for outcome in itertools.product(range(len(pm)), repeat=k):
            a = mpmath.fprod(pm[i] for i in outcome)
            b = mpmath.fprod(rm[i] for i in outcome)
            one.append(max(a - g * b, 0))
            two.append(max(b - g * a, 0))
        return max(mpmath.fsum(one), mpmath.fsum(two))


def laplace_two_fold_delta_mp(scale, eps, dps=30):
    """δ(ε) of two runs of the Laplace mechanism (sensitivity 1, noise ``scale`` = b), from the law of its
    privacy loss under Lap(0, b) against Lap(1, b): an atom +1/b with mass 1/2 (x ≤ 0), an atom −1/b with mass
    e^{−1/b}/2 (x ≥ 1) and (1 − 2x)/b with density e^{−x/b}/(2b) on (0, 1); δ = E[(1 − e^{ε − L1 − L2})_+]
    (the loss law is the same in both directions). The sum of the two continuous coordinates s = x1 + x2 has
    density e^{−s/b} min(s, 2 − s)/(4b²) on (0, 2); every integral is split where its integrand has a kink."""
    import mpmath

    with mpmath.workdps(dps):
        b, e = mpmath.mpf(scale), mpmath.mpf(eps)
        atoms = [(1 / b, mpmath.mpf(1) / 2), (-1 / b, mpmath.exp(-1 / b) / 2)]

        def gain(total):
            return max(mpmath.mpf(0), -mpmath.expm1(e - total))

        def cut(point, lo, hi):
            return [lo, *([point] if lo < point < hi else []), hi]

        value = mpmath.fsum(m1 * m2 * gain(l1 + l2) for l1, m1 in atoms for l2, m2 in atoms)
        for l1, m1 in atoms:  # one atom and one continuous coordinate, in either order
            kink = (1 + b * l1 - b * e) / 2  # l1 + (1 − 2x)/b = ε
            value += 2 * m1 * mpmath.quad(
                lambda x, l1=l1: mpmath.exp(-x / b) / (2 * b) * gain(l1 + (1 - 2 * x) / b), cut(kink, 0, 1))
        kink = 1 - b * e / 2  # (2 − 2s)/b = ε
        points = sorted({mpmath.mpf(0), mpmath.mpf(1), mpmath.mpf(2), *([kink] if 0 < kink < 2 else [])})
        value += mpmath.quad(lambda t: mpmath.exp(-t / b) * min(t, 2 - t) / (4 * b * b) * gain((2 - 2 * t) / b),
                             points)
        return value


def pld_state(pld) -> list[tuple]:
    """Every attribute of both directions' PMFs of a dp-accounting PLD (arrays as bytes, so equal means bit for
    bit)."""
    out = []
    for pmf in (pld._pmf_remove, pld._pmf_add):
        for name, value in sorted(vars(pmf).items()):
            out.append((name, np.asarray(value).tobytes() if isinstance(value, np.ndarray | list) else value))
    return out
