"""The envelope bound (docs/envelope.md) against the certified lower bound and against dp-accounting.

Three measurements, each in one run with the peer:

1. **Tightness** on the standard analytic settings (Gaussian base σ = 4, δ = 1e-6; σ = 1 for the law with
   P[K = 1] = 0): ε of every method and the certified lower bound of :func:`symsel.evidence.lower.lower_bound`
   (exact ε of a valid finite mechanism, so the truth lies between). Goal: ``envelope`` within 0.2 %
   of the lower bound.
2. **Candidates at equal (ε, δ)** on Koskela et al.'s Figure 7 setting (q = 16384/50000, σ = 21.1,
   250 steps, δ = 1e-5; De et al. 2022): for budgets ε from 1 to 4, the largest mean of K that
   dp-accounting's ``RdpAccountant`` on ``RepeatAndSelectDpEvent`` allows, and the largest mean that
   symsel's ``envelope`` certifies (:func:`symsel.apps.plan.max_mean`, bisection in log E[K] to 1e-3, feasible
   end). Goals: ≥ 50× for geometric K at ε = 2.5, and more than dp-accounting for Poisson K at every ε.
3. **Speed**: ``envelope`` (build + ε(δ)) against one dp-accounting RDP call on the analytic setting; on a
   DP-SGD base, the envelope step on top of the built PLD against dp-accounting's PLD build.

Run from the repository root: ``python benchmarks/bench_envelope.py [--quick]`` →
``benchmarks/results/bench_envelope.json``.
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

from _common import dpsgd_event, median_time, print_table, rdp_repeat_and_select, write_results

import symsel
from symsel.apps.plan import max_mean
from symsel.errors import NotApplicableError
from symsel.profiles import DpsgdProfile

P_K1_ZERO = "pgf(expr='z^2*(1-g)/(1-g*z)', g=0.9)"
TIGHTNESS = [
    ("geometric(mean=30)", "gaussian(sigma=4)"),
    ("poisson(mean=10)", "gaussian(sigma=4)"),
    ("tnb(eta=0.5, mean=30)", "gaussian(sigma=4)"),
    ("logarithmic(mean=30)", "gaussian(sigma=4)"),
    ("binomial(n=60, p=0.5)", "gaussian(sigma=4)"),
    ("point(k=3)", "gaussian(sigma=4)"),
    (P_K1_ZERO, "gaussian(sigma=1)"),
]
TIGHTNESS_DELTA = 1e-6
FIG7 = {"q": 16384 / 50000, "sigma": 21.1, "steps": 250, "delta": 1e-5}
FIG7_LAWS = [("geometric", "geometric(mean={mean})", 1.0), ("logarithmic", "logarithmic(mean={mean})", 0.0),
             ("tnb(eta=0.5)", "tnb(eta=0.5, mean={mean})", 0.5), ("poisson", "poisson(mean={mean})", math.inf)]
BUDGETS = (1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0)


def tightness(budget: int) -> list[dict[str, Any]]:
    from symsel.evidence.lower import lower_bound

    rows = []
    for dist_spec, base_spec in TIGHTNESS:
        dist, base = symsel.parse_distribution(dist_spec), symsel.parse_profile(base_spec)
        row: dict[str, Any] = {"dist": dist_spec, "base": base_spec}
        for method in symsel.METHODS:
            try:
                row[method] = symsel.bound(dist, base, method).epsilon(TIGHTNESS_DELTA)
            except NotApplicableError:
                row[method] = None
        start = time.perf_counter()
        row["lower"] = lower_bound(base, dist, TIGHTNESS_DELTA, budget=budget).epsilon
        row["lower_seconds"] = time.perf_counter() - start
        row["envelope/lower"] = row["envelope"] / row["lower"] if row["lower"] > 0 else math.inf
        rows.append(row)
    print_table(f"Tightness: epsilon at delta = {TIGHTNESS_DELTA:g} (lower = certified lower bound)",
                ["dist", "base", *symsel.METHODS, "lower", "envelope/lower"],
                [[r["dist"], r["base"], *(r[m] for m in symsel.METHODS), r["lower"], r["envelope/lower"]]
                 for r in rows])
    return rows


def _dpaccounting_max_mean(event: Any, budget: float, shape: float, delta: float) -> float | None:
    """Largest mean with dp-accounting's RDP ε ≤ budget (bisection in log mean to 1e-3, feasible end)."""
    lo, hi = 1.0 + 1e-6, 2.0
    if rdp_repeat_and_select(event, lo, shape, delta)[0] > budget:
        return None
    while rdp_repeat_and_select(event, hi, shape, delta)[0] <= budget:
        lo, hi = hi, hi * 2
        if hi > 1e9:
            return lo
    while hi / lo - 1 > 1e-3:
        mid = math.sqrt(lo * hi)
        if rdp_repeat_and_select(event, mid, shape, delta)[0] <= budget:
            lo = mid
        else:
            hi = mid
    return lo


def candidates(budgets: tuple[float, ...]) -> list[dict[str, Any]]:
    event = dpsgd_event(FIG7["q"], FIG7["sigma"], FIG7["steps"])
    base = DpsgdProfile(FIG7["q"], FIG7["sigma"], FIG7["steps"])
    rows = []
    for name, template, shape in FIG7_LAWS:
        for budget in budgets:
            peer = _dpaccounting_max_mean(event, budget, shape, FIG7["delta"])
            start = time.perf_counter()
            ours = max_mean(template, base, budget, FIG7["delta"], "envelope")
            rows.append({"law": name, "epsilon": budget, "dp_accounting_mean": peer, "envelope_mean": ours["mean"],
                         "ratio": None if not peer or ours["mean"] is None else ours["mean"] / peer,
                         "seconds": time.perf_counter() - start})
    print_table("Figure 7 (q = 16384/50000, sigma = 21.1, 250 steps, delta = 1e-5): largest mean of K",
                ["law", "epsilon", "dp-accounting RDP", "envelope", "ratio", "s"],
                [[r["law"], r["epsilon"], r["dp_accounting_mean"], r["envelope_mean"], r["ratio"], r["seconds"]]
                 for r in rows])
    return rows


def speed(repeats: int) -> dict[str, Any]:
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    out: dict[str, Any] = {}
    # analytic: geometric m = 30, gaussian sigma = 4, delta = 1e-6
    dist, base = symsel.geometric(mean=30), symsel.parse_profile("gaussian(sigma=4)")
    t_env, _, eps_env = median_time(lambda: symsel.bound(dist, base, "envelope").epsilon(1e-6), repeats)
    t_best, _, eps_best = median_time(lambda: symsel.bound(dist, base, "best").epsilon(1e-6), repeats)
    event = dp_event.GaussianDpEvent(4.0)
    t_peer, _, peer = median_time(lambda: rdp_repeat_and_select(event, 30, 1.0, 1e-6)[0], repeats)
    out["analytic"] = {"envelope_s": t_env, "best_s": t_best, "dp_accounting_rdp_s": t_peer,
                       "envelope_eps": eps_env, "best_eps": eps_best, "dp_accounting_eps": peer,
                       "envelope_ratio": t_env / t_peer, "best_ratio": t_best / t_peer}
    # DP-SGD: the envelope step on top of a built PLD against dp-accounting's build of that PLD
    q, sigma, steps = 0.01, 1.1, 1000

    def build() -> Any:
        accountant = pld_privacy_accountant.PLDAccountant()
        accountant.compose(dpsgd_event(q, sigma, steps))
        return accountant

    t_build, _, _ = median_time(build, repeats)
    profile = DpsgdProfile(q, sigma, steps)
    profile.delta(1.0)
    profile.region_lower(0.5)  # the region grid is part of the base, shared by every method

    t_step, _, eps = median_time(lambda: symsel.bound(symsel.geometric(mean=30), profile, "envelope").epsilon(1e-5),
                                 repeats)
    peer_eps = rdp_repeat_and_select(dpsgd_event(q, sigma, steps), 30, 1.0, 1e-5)[0]
    out["dpsgd"] = {"pld_build_s": t_build, "envelope_step_s": t_step, "ratio": t_step / t_build,
                    "envelope_eps": eps, "dp_accounting_rdp_eps": peer_eps}
    print_table(f"Speed (median of {repeats})", ["case", "symsel", "peer", "ratio"], [
        ["analytic envelope vs dp-acc RDP call", t_env, t_peer, t_env / t_peer],
        ["analytic best vs dp-acc RDP call", t_best, t_peer, t_best / t_peer],
        ["DP-SGD envelope step vs PLD build", t_step, t_build, t_step / t_build],
    ])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer budgets and a smaller lower-bound search")
    args = parser.parse_args()
    start = time.perf_counter()
    payload = {
        "speed": speed(3 if args.quick else 7),
        "tightness": tightness(60 if args.quick else 200),
        "candidates": candidates((2.5,) if args.quick else BUDGETS),
    }
    payload["seconds"] = time.perf_counter() - start
    print(f"\nwritten {write_results('bench_envelope', payload)} in {payload['seconds']:.0f} s")


if __name__ == "__main__":
    main()
