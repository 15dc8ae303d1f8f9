"""The certified trade-off curve (docs/tradeoff.md) against exact curves: how far below them it stays, and its cost
beside riskcal (Kulynych et al., NeurIPS 2024, on dp-accounting's PLD) in the same run.

1. The Gaussian mechanism and its k-fold compositions, exactly (√k/σ)-GDP: ``β(α) = Φ(Φ⁻¹(1 − α) − μ)`` at 50 digits
   (mpmath), for α from 1e-30 to 1 − 1e-12: the largest absolute and relative gaps of β and of the TPR, and whether
   β was ever above the exact curve.
2. Randomized response and its compositions: the exact curve by brute force over every deterministic test and their
   mixtures (the lower convex hull of all 2^n tests on the sufficient statistic), at 50 digits.
3. A plain DP-SGD run: riskcal's curves of dp-accounting's pessimistic and optimistic PLDs, which bracket the exact
   curve; symsel's curve must lie below the optimistic one; the gap to the pessimistic one, and the times.
4. Selections: the best of k runs of the Gaussian pair itself, whose curve is closed form (an admissible base: the
   worst case is at least as distinguishable, so this is an upper reference, not the exact worst case).

Run: ``python benchmarks/bench_tradeoff.py`` → ``benchmarks/results/tradeoff.json``.
"""

from __future__ import annotations

import itertools
import logging
import math
import sys
import time
from typing import Any

import mpmath
import numpy as np
from _common import print_table, write_results

from symsel import bound, parse_distribution
from symsel.profiles import DpsgdProfile, GaussianProfile, RandomizedResponseProfile

ALPHAS = (1e-30, 1e-12, 1e-6, 1e-3, 0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.99, 1 - 1e-6, 1 - 1e-12)


def upper_quantile(tail: mpmath.mpf) -> mpmath.mpf:
    x = -mpmath.sqrt(2) * mpmath.erfinv(2 * tail - 1)
    for _ in range(6):
        x += (mpmath.ncdf(-x) - tail) / mpmath.npdf(x)
    return x


def gaussian_exact(alpha: float, mu: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(β, TPR) of μ-GDP at 50 digits."""
    with mpmath.workdps(50):
        x = upper_quantile(mpmath.mpf(alpha))
        return mpmath.ncdf(x - mu), mpmath.ncdf(mu - x)


def gaps(beta: np.ndarray, tpr: np.ndarray, exact: list[tuple[Any, Any]]) -> dict[str, Any]:
    above = [float(b - e_b) for b, (e_b, _) in zip(beta, exact, strict=True) if b > e_b]
    tpr_below = [float(e_t - t) for t, (_, e_t) in zip(tpr, exact, strict=True) if t < e_t]
    return {"beta_max_abs_gap": max(float(e_b - b) for b, (e_b, _) in zip(beta, exact, strict=True)),
            "beta_max_rel_gap": max(float((e_b - b) / e_b) for b, (e_b, _) in zip(beta, exact, strict=True)
                                    if e_b > 0),
            "tpr_max_rel_gap": max(float((t - e_t) / e_t) for t, (_, e_t) in zip(tpr, exact, strict=True)),
            "beta_above_exact": len(above), "tpr_below_exact": len(tpr_below)}


def gaussian_section() -> list[dict[str, Any]]:
    rows = []
    for sigma, k in [(1.0, 1), (4.0, 1), (0.5, 3), (4.0, 10), (2.0, 100), (20.0, 1), (20.0, 1000)]:
        base = GaussianProfile(sigma)
        profile = base if k == 1 else base.self_composed(k)[0]
        mu = math.sqrt(k) / sigma
        start = time.perf_counter()
        points = profile.tradeoff_points(np.array(ALPHAS))
        seconds = time.perf_counter() - start
        exact = [gaussian_exact(a, mu) for a in ALPHAS]
        rows.append({"sigma": sigma, "k": k, "mu": mu, **gaps(points.beta, points.tpr, exact),
                     "evaluations": points.evaluations, "seconds": seconds})
    return rows


def brute_force(P: list[float], Q: list[float], alpha: float) -> mpmath.mpf:
    with mpmath.workdps(50):
        n = len(P)
        points = sorted({(mpmath.fsum(mpmath.mpf(P[i]) for i in range(n) if c[i]),
                          1 - mpmath.fsum(mpmath.mpf(Q[i]) for i in range(n) if c[i]))
                         for c in itertools.product((0, 1), repeat=n)})
        hull: list = []
        for p in points:
            while len(hull) >= 2 and ((hull[-1][0] - hull[-2][0]) * (p[1] - hull[-2][1])
                                      - (hull[-1][1] - hull[-2][1]) * (p[0] - hull[-2][0])) <= 0:
                hull.pop()
            hull.append(p)
        x = mpmath.mpf(alpha)
        best = min(b for a, b in hull if a <= x)
        for (a1, b1), (a2, b2) in itertools.pairwise(hull):
            if a1 <= x <= a2 and a2 > a1:
                best = min(best, b1 + (b2 - b1) * (x - a1) / (a2 - a1))
        return best


def randomized_response_section() -> list[dict[str, Any]]:
    rows = []
    alphas = [1e-9, 1e-4, 0.01, 0.1, 0.3, 0.5, 0.8, 0.999]
    for eps, k in [(1.0, 1), (0.5, 4), (2.0, 3), (0.2, 8)]:
        p = math.exp(eps) / (1 + math.exp(eps))
        # the number j of the k answers that are 1 is sufficient (equal likelihood ratios merged: the same curve),
        # so every test of the k-fold product is a test on j: brute force over the 2^(k+1) subsets of {0, …, k}
        P = [math.comb(k, j) * p ** (k - j) * (1 - p) ** j for j in range(k + 1)]
        Q = [math.comb(k, j) * (1 - p) ** (k - j) * p ** j for j in range(k + 1)]
        base = RandomizedResponseProfile(eps)
        profile = base if k == 1 else base.self_composed(k)[0]
        points = profile.tradeoff_points(np.array(alphas))
        exact = [min(brute_force(P, Q, a), brute_force(Q, P, a)) for a in alphas]
        exact_pairs = [(b, 1 - b) for b in exact]
        rows.append({"eps": eps, "k": k, **gaps(points.beta, points.tpr, exact_pairs),
                     "evaluations": points.evaluations})
    return rows


def dpsgd_section() -> list[dict[str, Any]]:
    from dp_accounting.pld import privacy_loss_distribution as pld_module
    from riskcal.analysis import get_beta_from_pld

    logging.getLogger().setLevel(logging.ERROR)
    alphas = np.array([1e-4, 1e-3, 0.01, 0.05, 0.1, 0.2, 0.5, 0.9])
    rows = []
    for q, sigma, steps in [(0.01, 1.1, 100), (0.01, 1.1, 1000), (0.004, 1.0, 5000)]:
        start = time.perf_counter()
        ours = DpsgdProfile(q, sigma, steps).tradeoff_points(alphas)
        ours_seconds = time.perf_counter() - start

        def riskcal(pessimistic: bool, q: float = q, sigma: float = sigma, steps: int = steps) -> np.ndarray:
            pld = pld_module.from_gaussian_mechanism(
                standard_deviation=sigma, sampling_prob=q, use_connect_dots=pessimistic,
                pessimistic_estimate=pessimistic, value_discretization_interval=1e-4).self_compose(steps)
            return np.asarray(get_beta_from_pld(pld, alpha=alphas), dtype=float)

        start = time.perf_counter()
        below = riskcal(True)
        riskcal_seconds = time.perf_counter() - start
        above = riskcal(False)
        valid = below <= 1 - alphas  # riskcal's curve of a PLD is at most 1 − α where it is right
        rows.append({"q": q, "sigma": sigma, "steps": steps,
                     "beta_above_riskcal_optimistic": int(np.sum(ours.beta > above)),
                     "beta_above_riskcal_pessimistic": int(np.sum((ours.beta > below) & valid)),
                     "max_gap_to_riskcal_pessimistic": float(np.max((below - ours.beta)[valid])),
                     "riskcal_invalid_points": [float(a) for a in alphas[~valid]],
                     "symsel_seconds": ours_seconds, "riskcal_pessimistic_seconds": riskcal_seconds,
                     "time_ratio_symsel_over_riskcal": ours_seconds / riskcal_seconds,
                     "symsel_evaluations": ours.evaluations})
    return rows


def max_of_k(alpha: float, k: int, mu: float) -> mpmath.mpf:
    with mpmath.workdps(50):
        a = mpmath.mpf(alpha)
        t = upper_quantile(1 - (1 - a) ** (mpmath.mpf(1) / k))
        s = mu - upper_quantile(a ** (mpmath.mpf(1) / k))
        return min(mpmath.ncdf(t - mu) ** k, 1 - mpmath.ncdf(s) ** k)


def selection_section() -> list[dict[str, Any]]:
    alphas = np.array([1e-6, 1e-3, 0.01, 0.1, 0.3, 0.5, 0.9])
    rows = []
    for k, sigma, methods in [(2, 1.0, ("composition", "envelope", "best")), (10, 4.0, ("envelope", "best"))]:
        reference = [max_of_k(float(a), k, 1 / sigma) for a in alphas]
        for method in methods:
            selection = bound(parse_distribution(f"point(k={k})"), GaussianProfile(sigma), method)
            start = time.perf_counter()
            points = selection.tradeoff_points(alphas)
            seconds = time.perf_counter() - start
            rows.append({"law": f"point(k={k})", "sigma": sigma, "method": method,
                         "beta_above_pair_curve": int(sum(b > r for b, r in zip(points.beta, reference, strict=True))),
                         "max_gap_to_pair_curve": max(float(r - b) for b, r in zip(points.beta, reference,
                                                                                      strict=True)),
                         "advantage": selection.advantage(), "evaluations": points.evaluations, "seconds": seconds})
    return rows


def main() -> int:
    gaussian = gaussian_section()
    print_table("Gaussian k-fold compositions against the closed form (50 digits)",
                ["sigma", "k", "mu", "beta abs gap", "beta rel gap", "tpr rel gap", "above", "evals", "s"],
                [[r["sigma"], r["k"], r["mu"], r["beta_max_abs_gap"], r["beta_max_rel_gap"], r["tpr_max_rel_gap"],
                  r["beta_above_exact"], r["evaluations"], r["seconds"]] for r in gaussian])
    rr = randomized_response_section()
    print_table("Randomized response compositions against brute force over all tests",
                ["eps", "k", "beta abs gap", "beta rel gap", "above", "evals"],
                [[r["eps"], r["k"], r["beta_max_abs_gap"], r["beta_max_rel_gap"], r["beta_above_exact"],
                  r["evaluations"]] for r in rr])
    dpsgd = dpsgd_section()
    print_table("DP-SGD against riskcal (pessimistic and optimistic dp-accounting PLDs)",
                ["q", "sigma", "steps", "above opt", "above pess", "gap to pess", "symsel s", "riskcal s", "ratio"],
                [[r["q"], r["sigma"], r["steps"], r["beta_above_riskcal_optimistic"],
                  r["beta_above_riskcal_pessimistic"], r["max_gap_to_riskcal_pessimistic"], r["symsel_seconds"],
                  r["riskcal_pessimistic_seconds"], r["time_ratio_symsel_over_riskcal"]] for r in dpsgd])
    selections = selection_section()
    print_table("Selections against the best of k runs of the Gaussian pair (an upper reference)",
                ["law", "sigma", "method", "above", "max gap", "advantage", "evals", "s"],
                [[r["law"], r["sigma"], r["method"], r["beta_above_pair_curve"], r["max_gap_to_pair_curve"],
                  r["advantage"], r["evaluations"], r["seconds"]] for r in selections])
    path = write_results("tradeoff", {"alphas": list(ALPHAS), "gaussian": gaussian, "randomized_response": rr,
                                      "dpsgd": dpsgd, "selections": selections})
    print(f"\nwritten {path}")
    never_above = (all(r["beta_above_exact"] == 0 for r in gaussian + rr)
                   and all(r["beta_above_riskcal_optimistic"] == 0 for r in dpsgd)
                   and all(r["beta_above_pair_curve"] == 0 for r in selections))
    print("beta never above an exact (or upper reference) curve:", never_above)
    return 0 if never_above else 1


if __name__ == "__main__":
    sys.exit(main())
