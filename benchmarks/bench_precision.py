"""Float64 against mpmath: how many digits symsel's fast paths keep, down to delta = 1e-30.

symsel derives every numeric evaluator of a law of ``K`` from one SymPy PGF, once in float64 (numpy) and
once in mpmath (docs/numerics.md: small ``delta``, large means and cancelling differences are the pitfalls).
This script measures the agreement of the two, as maximum relative differences:

1. ``phi'`` and ``log phi'`` on ``[0, 1]`` (a grid dense near both ends) for a dozen laws, including the
   truncated negative binomial near ``eta = 0`` (cancellation-free ``expm1``/``log1p`` form), a Poisson
   law whose ``phi'(0)`` underflows float64, truncated, mixture and compound laws and a user PGF;
2. the Gaussian base profile (Balle & Wang 2018, Thm 8): ``delta(eps)`` and ``log delta(eps)`` against
   ``delta_mp`` at 50 digits, for ``delta`` down to 1e-30 (``log delta`` down to 1e-300), and
   ``eps(delta)`` against an mpmath root of ``delta_mp`` for ``delta`` from 1e-6 to 1e-30, with the check
   that the float answer is on the safe side (``delta_mp(eps_float) <= delta``);
3. selection bounds (Koskela, Redberg & Wang, Thm 4.1; ``fdp`` and ``polygon``): the certified float sup
   ``log R`` against the mpmath value of ``log phi'(q) - log phi'(L(q))`` at 50 digits on a fine grid
   around the maximizer (the certificate must dominate it), and ``eps(delta)`` of the selection against
   ``log R + eps_Q(delta/m)`` evaluated with mpmath, for ``delta`` down to 1e-30;
4. the exact selection law (Xiang et al. Thm 2; P&S Lemma 7 proof) on the papers' three-point worst cases:
   the float64 path (integral form where the difference cancels) against mpmath.

Run: ``python benchmarks/bench_precision.py`` → ``benchmarks/results/bench_precision.json``.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

import mpmath
import numpy as np
from _common import print_table, write_results

from symsel.bounds.hockey_stick import hockey_stick_bound
from symsel.evidence.exact import selection_epsilon, selection_epsilon_float
from symsel.profiles import GaussianProfile
from symsel.profiles.region import polygon_lower_mp
from symsel.spec import parse_distribution

DPS = 50
#: smallest normal float64; below it phi' is subnormal or 0 and only log phi' keeps its digits.
TINY = np.finfo(float).tiny
DELTAS = (1e-6, 1e-10, 1e-15, 1e-20, 1e-25, 1e-30)
LAWS = (
    "geometric(mean=30)",
    "logarithmic(gamma=1e-6)",
    "tnb(eta=0.5, mean=100)",
    "tnb(eta=1e-6, gamma=0.01)",
    "tnb(eta=-0.5, gamma=0.0001)",
    "poisson(mean=100)",
    "poisson(mean=1000)",
    "binomial(n=50, p=0.3)",
    "truncated(dist=geometric(mean=30), k_max=200)",
    "mixture(components=[(0.5, poisson(mean=3)), (0.5, point(k=5))])",
    "compound(outer=poisson(mean=2), inner=logarithmic(gamma=0.1))",
    "pgf(expr='z*exp(mu*(z-1))', mu=9)",
)


def q_grid() -> np.ndarray:
    ends = np.logspace(-16, -1, 46)
    return np.unique(np.concatenate([[0.0, 1.0], np.linspace(0, 1, 201), ends, 1 - ends]))


def rel(a: float, b: Any) -> float:
    """``|a - b| / |b|`` with ``b`` an mpmath number (0 when both are 0)."""
    b = mpmath.mpf(b)
    if b == 0:
        return 0.0 if a == 0 else math.inf
    return float(abs((mpmath.mpf(a) - b) / b))


# --------------------------------------------------------------------------- 1. phi'
def bench_dphi() -> list[dict[str, Any]]:
    q = q_grid()
    out = []
    for spec in LAWS:
        dist = parse_distribution(spec)
        f = np.asarray(dist.dphi(q), dtype=float)
        logf = np.asarray(dist.log_dphi(q), dtype=float)
        worst = worst_log = 0.0
        worst_q = worst_log_q = None
        underflow = 0
        for x, fx, lx in zip(q, f, logf, strict=True):
            exact = dist.dphi_mp(mpmath.mpf(float(x)), DPS)
            if 0 < exact < TINY:
                underflow += 1  # below the normal float64 range: phi' itself cannot keep its digits
            elif fx != 0 or exact != 0:
                r = rel(float(fx), exact)
                if r > worst:
                    worst, worst_q = r, float(x)
            if exact > 0:
                with mpmath.workdps(DPS):
                    lr = abs(float(mpmath.mpf(lx) - mpmath.log(exact)))
                if lr > worst_log:
                    worst_log, worst_log_q = lr, float(x)
        out.append({"law": spec, "points": int(q.size), "max_rel_dphi": worst, "at_q": worst_q,
                    "underflowed_points": underflow, "max_abs_log_dphi": worst_log, "log_at_q": worst_log_q})
    return out


# --------------------------------------------------------------------------- 2. Gaussian base
def gaussian_eps_mp(base: GaussianProfile, delta: float, guess: float) -> mpmath.mpf:
    """Root of ``log delta_mp(eps) = log delta`` at ``DPS`` digits (secant from the float answer)."""
    with mpmath.workdps(DPS):
        target = mpmath.log(mpmath.mpf(delta))
        return mpmath.findroot(lambda e: mpmath.log(base.delta_mp(e, DPS + 10)) - target, mpmath.mpf(guess))


def bench_gaussian() -> dict[str, Any]:
    out: dict[str, Any] = {"delta": [], "epsilon": []}
    for sigma in (0.5, 1.0, 4.0, 20.0):
        base = GaussianProfile(sigma)
        top = base.epsilon(1e-300)
        eps = np.unique(np.concatenate([np.linspace(-5, top, 400), [0.0]]))
        d = np.asarray(base.delta(eps), dtype=float)
        ld = np.asarray(base.log_delta(eps), dtype=float)
        worst_d = worst_ld = 0.0
        for e, de, lde in zip(eps, d, ld, strict=True):
            exact = base.delta_mp(mpmath.mpf(float(e)), DPS)
            if exact >= 1e-30:
                worst_d = max(worst_d, rel(float(de), exact))
            with mpmath.workdps(DPS):
                worst_ld = max(worst_ld, abs(float(mpmath.mpf(lde) - mpmath.log(exact))))
        out["delta"].append({"sigma": sigma, "eps_range": [float(eps[0]), float(top)],
                             "max_rel_delta_to_1e-30": worst_d, "max_abs_log_delta_to_1e-300": worst_ld})
        for delta in DELTAS:
            e_float = base.epsilon(delta)
            e_mp = gaussian_eps_mp(base, delta, e_float)
            safe = base.delta_mp(mpmath.mpf(e_float), DPS) <= mpmath.mpf(delta) * (1 + mpmath.mpf(10) ** -12)
            out["epsilon"].append({"sigma": sigma, "delta": delta, "epsilon": e_float,
                                   "rel_diff": rel(e_float, e_mp), "conservative": bool(safe)})
    return out


# --------------------------------------------------------------------------- 3. selection bounds
def _sup_mp(dist: Any, lower_mp: Any, q_points: np.ndarray) -> tuple[float, float]:
    """Max over ``q_points`` of ``log phi'(q) - log phi'(L(q))`` at ``DPS`` digits, and its argmax."""
    best, arg = -math.inf, None
    with mpmath.workdps(DPS):
        for x in q_points:
            qm = mpmath.mpf(float(x))
            low = lower_mp(qm)
            num, den = dist.dphi_mp(qm, DPS), dist.dphi_mp(low, DPS)
            if num <= 0 or den <= 0:
                continue
            value = float(mpmath.log(num) - mpmath.log(den))
            if value > best:
                best, arg = value, float(x)
    return best, arg


def bench_selection() -> list[dict[str, Any]]:
    base = GaussianProfile(4.0)
    out = []
    for spec in ("geometric(mean=30)", "tnb(eta=0.5, mean=100)", "poisson(mean=10)", "logarithmic(gamma=1e-6)"):
        dist = parse_distribution(spec)
        for method in ("fdp", "polygon"):
            bound = hockey_stick_bound(dist, base, method)
            cert = bound.ratio.certificate
            if method == "fdp":
                def lower_mp(x: Any) -> Any:
                    return base.region_lower_mp(x, DPS)
            else:
                eps1 = bound.ratio.eps1
                delta1 = base.delta_mp(mpmath.mpf(eps1), DPS)

                def lower_mp(x: Any, e1: float = eps1, d1: Any = delta1) -> Any:
                    return polygon_lower_mp(x, e1, d1, DPS)
            centre = cert.argmax_q
            width = max(1e-3, 1e-3 * centre)
            points = np.unique(np.clip(np.concatenate([
                np.linspace(centre - width, centre + width, 201), np.linspace(0, 1, 101)[1:]]), 1e-300, 1.0))
            sup_mp, arg = _sup_mp(dist, lower_mp, points)
            record: dict[str, Any] = {
                "law": spec, "method": method, "log_ratio_certified": bound.log_ratio,
                "log_ratio_attained_float": cert.lower, "log_ratio_max_mp_on_grid": sup_mp, "argmax_mp": arg,
                "certificate_dominates_mp": bool(bound.log_ratio >= sup_mp),
                "rel_attained_float_vs_mp": abs(cert.lower - sup_mp) / abs(sup_mp) if sup_mp else 0.0,
                "epsilon": [],
            }
            m = dist.mean
            for delta in DELTAS:
                e_float = bound.epsilon(delta)
                base_mp = gaussian_eps_mp(base, delta / m, base.epsilon(delta / m))
                with mpmath.workdps(DPS):
                    e_mp = mpmath.mpf(bound.log_ratio) + base_mp
                d_mp = m * base.delta_mp(mpmath.mpf(e_float) - mpmath.mpf(bound.log_ratio), DPS)
                record["epsilon"].append({"delta": delta, "epsilon": e_float, "rel_diff": rel(e_float, e_mp),
                                          "conservative": bool(d_mp <= mpmath.mpf(delta) * (1 + 1e-12))})
            out.append(record)
    return out


# --------------------------------------------------------------------------- 4. exact laws
def bench_exact() -> list[dict[str, Any]]:
    from symsel.evidence.examples import get_example

    out = []
    for name in ("xiang-example-1", "xiang-example-1-approx", "liu-talwar"):
        ex = get_example(name)
        e_float = selection_epsilon_float(ex.pair, ex.dist, ex.delta)
        e_mp = selection_epsilon(ex.pair, ex.dist, ex.delta, DPS)
        out.append({"example": name, "delta": ex.delta, "epsilon_float": e_float, "epsilon_mp": float(e_mp),
                    "rel_diff": rel(e_float, e_mp)})
    return out


def main() -> int:
    start = time.perf_counter()
    dphi = bench_dphi()
    print_table("1. phi' in float64 vs mpmath (50 digits) on a grid of [0, 1]",
                ["law", "max rel phi'", "at q", "subnormal pts", "max abs log phi'"],
                [[r["law"], r["max_rel_dphi"], r["at_q"], r["underflowed_points"], r["max_abs_log_dphi"]]
                 for r in dphi])
    gauss = bench_gaussian()
    print_table("2a. Gaussian profile delta(eps): float64 vs delta_mp",
                ["sigma", "eps range", "max rel delta (>= 1e-30)", "max abs log delta (>= 1e-300)"],
                [[r["sigma"], f"[{r['eps_range'][0]:.3g}, {r['eps_range'][1]:.3g}]", r["max_rel_delta_to_1e-30"],
                  r["max_abs_log_delta_to_1e-300"]] for r in gauss["delta"]])
    print_table("2b. Gaussian eps(delta): float64 vs mpmath root",
                ["sigma", "delta", "epsilon", "rel diff", "conservative"],
                [[r["sigma"], r["delta"], r["epsilon"], r["rel_diff"], r["conservative"]] for r in gauss["epsilon"]])
    selection = bench_selection()
    print_table("3a. certified sup log R (float) vs mpmath max of log phi'(q) - log phi'(L(q)) on a grid",
                ["law", "method", "certified", "attained float", "mp max", "rel attained", "dominates"],
                [[r["law"], r["method"], r["log_ratio_certified"], r["log_ratio_attained_float"],
                  r["log_ratio_max_mp_on_grid"], r["rel_attained_float_vs_mp"], r["certificate_dominates_mp"]]
                 for r in selection])
    print_table("3b. selection eps(delta), Gaussian sigma = 4 base: float vs log R + eps_Q(delta/m) in mpmath",
                ["law", "method", "max rel diff", "at delta", "all conservative"],
                [[r["law"], r["method"], max(e["rel_diff"] for e in r["epsilon"]),
                  max(r["epsilon"], key=lambda e: e["rel_diff"])["delta"],
                  all(e["conservative"] for e in r["epsilon"])] for r in selection])
    exact = bench_exact()
    print_table("4. exact selection eps(delta): float64 path vs mpmath",
                ["example", "delta", "eps float", "eps mpmath", "rel diff"],
                [[r["example"], r["delta"], r["epsilon_float"], r["epsilon_mp"], r["rel_diff"]] for r in exact])
    summary = {
        "max_rel_dphi": max(r["max_rel_dphi"] for r in dphi),
        "max_abs_log_dphi": max(r["max_abs_log_dphi"] for r in dphi),
        "max_rel_gaussian_delta": max(r["max_rel_delta_to_1e-30"] for r in gauss["delta"]),
        "max_rel_gaussian_epsilon": max(r["rel_diff"] for r in gauss["epsilon"]),
        "gaussian_epsilon_conservative": all(r["conservative"] for r in gauss["epsilon"]),
        "max_rel_selection_epsilon": max(e["rel_diff"] for r in selection for e in r["epsilon"]),
        "selection_epsilon_conservative": all(e["conservative"] for r in selection for e in r["epsilon"]),
        "certificates_dominate_mp": all(r["certificate_dominates_mp"] for r in selection),
        "max_rel_exact_epsilon": max(r["rel_diff"] for r in exact),
    }
    print("\nsummary:", ", ".join(f"{k} = {v:.2e}" if isinstance(v, float) else f"{k} = {v}"
                                  for k, v in summary.items()))
    payload = {"dps": DPS, "deltas": DELTAS, "summary": summary, "dphi": dphi, "gaussian": gauss,
               "selection": selection, "exact": exact, "wall_seconds": time.perf_counter() - start}
    path = write_results("bench_precision", payload)
    print(f"\nwrote {path} ({payload['wall_seconds']:.0f} s)")
    sound = summary["certificates_dominate_mp"] and summary["selection_epsilon_conservative"]
    return 0 if sound else 1


if __name__ == "__main__":
    sys.exit(main())
