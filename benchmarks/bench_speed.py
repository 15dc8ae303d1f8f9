"""Speed and peak memory of symsel's selection bounds, side by side with dp-accounting.

What is timed (wall clock, median of repeats, on whatever machine runs it):

1. An analytic base: geometric ``K`` with mean 30, Gaussian base ``sigma = 4``, ``delta = 1e-6`` (the worked
   example of Koskela, Redberg & Wang, ICML 2024, Section 5 / Figure 3). For each method of
   :func:`symsel.bounds.bound` (``paper`` = Thm 5.2, ``polygon``, ``fdp`` = Thm 4.1 over the
   (eps1, delta1) polygon / the f-DP region; ``rdp`` = Papernot & Steinke's closed forms, ``rdp_lemma7`` = their
   Lemma 7 over the base's privacy region): parse the two spec strings, build the bound, query
   ``epsilon(delta)``.
2. A DP-SGD base ``dpsgd(q=0.01, sigma=1.1, steps=1000)`` (dp-accounting PLD inside), geometric mean 30,
   ``delta = 1e-5``: the time dp-accounting needs to build the base's PLD, then the time of each symsel
   bound on top of it (a fresh profile object, PLD cached: so the privacy-region envelope is rebuilt),
   reported as a ratio to the PLD build.

The peer in both cases is dp-accounting's RDP accountant on ``RepeatAndSelectDpEvent`` (Papernot &
Steinke, ICLR 2022, Thm 2), the route practitioners use today; times are reported as ratios to it.
Peak memory is the ``tracemalloc`` peak of one separate run (tracing slows the run, so it is not timed).

Run: ``python benchmarks/bench_speed.py [--repeats N]`` → ``benchmarks/results/bench_speed.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from _common import (
    dpsgd_event,
    median_time,
    peak_memory,
    print_table,
    rdp_repeat_and_select,
    symsel_rdp_available,
    write_results,
)

from symsel.bounds import METHODS, bound
from symsel.profiles import DpsgdProfile
from symsel.spec import parse_distribution, parse_profile

ANALYTIC = {"dist": "geometric(mean=30)", "base": "gaussian(sigma=4)", "delta": 1e-6, "mean": 30.0, "shape": 1.0}
DPSGD = {"q": 0.01, "sigma": 1.1, "steps": 1000, "dist": "geometric(mean=30)", "delta": 1e-5, "mean": 30.0,
         "shape": 1.0}
#: methods slower than this (seconds, first run) are not repeated.
SLOW = 5.0


def methods() -> list[str]:
    """Every method of :func:`symsel.bounds.bound` (``rdp``, ``rdp_lemma7`` once they exist)."""
    return list(METHODS)


def phases(prepare: Any, method: str, delta: float) -> dict[str, float]:
    """``prepare() -> (dist, base)``, then build the bound and query ``epsilon(delta)``, each phase timed."""
    t0 = time.perf_counter()
    dist, base = prepare()
    t1 = time.perf_counter()
    result = bound(dist, base, method)
    t2 = time.perf_counter()
    eps = float(result.epsilon(delta))
    t3 = time.perf_counter()
    return {"parse": t1 - t0, "build": t2 - t1, "query": t3 - t2, "total": t3 - t0, "epsilon": eps}


def _prepare_analytic() -> tuple[Any, Any]:
    dist = parse_distribution(ANALYTIC["dist"])
    dist.log_dphi(0.5)  # compile phi' (lambdify) as part of the parse phase
    return dist, parse_profile(ANALYTIC["base"])


def analytic_run(method: str) -> dict[str, float]:
    """Parse, build, query: one end-to-end evaluation with its phases."""
    return phases(_prepare_analytic, method, ANALYTIC["delta"])


def timed_phases(fn: Any, repeats: int) -> dict[str, Any]:
    """Median of each phase over ``repeats`` runs (one run if the first is slower than ``SLOW``)."""
    runs = [fn()]
    if runs[0]["total"] < SLOW:
        runs += [fn() for _ in range(repeats - 1)]
    out: dict[str, Any] = {"runs": len(runs), "epsilon": runs[-1]["epsilon"]}
    for key in ("parse", "build", "query", "total"):
        values = sorted(r[key] for r in runs)
        out[key] = values[len(values) // 2]
    return out


def bench_analytic(repeats: int) -> dict[str, Any]:
    results: dict[str, Any] = {"setting": ANALYTIC, "symsel": {}}
    peer_event = _gaussian_event(4.0)
    peer_time, _, (peer_eps, peer_order) = median_time(
        lambda: rdp_repeat_and_select(peer_event, ANALYTIC["mean"], ANALYTIC["shape"], ANALYTIC["delta"]), repeats)
    peer_mem, _ = peak_memory(
        lambda: rdp_repeat_and_select(peer_event, ANALYTIC["mean"], ANALYTIC["shape"], ANALYTIC["delta"]))
    results["dpaccounting_rdp"] = {"seconds": peer_time, "epsilon": peer_eps, "order": peer_order,
                                   "peak_bytes": peer_mem}
    rows = []
    for method in methods():
        analytic_run(method)  # warm-up: imports, scipy, first lambdify of the module-level code
        record = timed_phases(lambda m=method: analytic_run(m), repeats)
        record["peak_bytes"], _ = peak_memory(lambda m=method: analytic_run(m))
        record["ratio_to_dpaccounting_rdp"] = record["total"] / peer_time
        results["symsel"][method] = record
        rows.append([method, record["epsilon"], record["parse"], record["build"], record["query"], record["total"],
                     record["ratio_to_dpaccounting_rdp"], record["peak_bytes"] / 2**20, record["runs"]])
    rows.append(["dp-acc RDP", peer_eps, None, None, None, peer_time, 1.0, peer_mem / 2**20, repeats])
    print_table(
        f"Analytic base: {ANALYTIC['dist']} x {ANALYTIC['base']}, delta = {ANALYTIC['delta']:g}",
        ["method", "epsilon", "parse s", "build s", "query s", "total s", "x dp-acc RDP", "peak MiB", "runs"],
        rows,
    )
    return results


def _gaussian_event(sigma: float) -> Any:
    from dp_accounting import dp_event

    return dp_event.GaussianDpEvent(sigma)


def pld_build_seconds(repeats: int) -> tuple[float, int]:
    """dp-accounting alone: build the base's PLD (fresh accountant each time, no symsel cache)."""
    from dp_accounting.pld import pld_privacy_accountant

    event = dpsgd_event(DPSGD["q"], DPSGD["sigma"], DPSGD["steps"])

    def build() -> Any:
        accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
        accountant.compose(event)
        return accountant

    seconds, _, _ = median_time(build, repeats)
    peak, _ = peak_memory(build)
    return seconds, peak


def _prepare_dpsgd() -> tuple[Any, Any]:
    base = DpsgdProfile(DPSGD["q"], DPSGD["sigma"], DPSGD["steps"])
    base.accountant  # noqa: B018 - fetch the (cached) PLD outside the timed bound
    return parse_distribution(DPSGD["dist"]), base


def dpsgd_run(method: str) -> dict[str, float]:
    """A fresh base profile (its PLD comes from symsel's cache), the bound, the query."""
    return phases(_prepare_dpsgd, method, DPSGD["delta"])


def bench_dpsgd(repeats: int) -> dict[str, Any]:
    build_seconds, build_peak = pld_build_seconds(repeats)
    DpsgdProfile(DPSGD["q"], DPSGD["sigma"], DPSGD["steps"]).accountant  # noqa: B018 - warm symsel's PLD cache
    event = dpsgd_event(DPSGD["q"], DPSGD["sigma"], DPSGD["steps"])
    peer_time, _, (peer_eps, peer_order) = median_time(
        lambda: rdp_repeat_and_select(event, DPSGD["mean"], DPSGD["shape"], DPSGD["delta"]), repeats)
    results: dict[str, Any] = {
        "setting": DPSGD,
        "pld_build": {"seconds": build_seconds, "peak_bytes": build_peak},
        "dpaccounting_rdp": {"seconds": peer_time, "epsilon": peer_eps, "order": peer_order},
        "symsel": {},
    }
    rows = []
    label = "symsel PldProfile"
    for method in methods():
        record = timed_phases(lambda m=method: dpsgd_run(m), repeats)
        record["peak_bytes"], _ = peak_memory(lambda m=method: dpsgd_run(m))
        record["ratio_to_pld_build"] = record["total"] / build_seconds
        # the hockey-stick methods need the PLD; the RDP route only the base's RDP curve
        needs_pld = 0.0 if method == "rdp" else build_seconds
        record["ratio_to_dpaccounting_rdp"] = (record["total"] + needs_pld) / peer_time
        results["symsel"][method] = record
        peak = record.get("peak_bytes")
        rows.append([label, method, record["epsilon"], record["total"], record["ratio_to_pld_build"],
                     record["ratio_to_dpaccounting_rdp"], None if peak is None else peak / 2**20, record["runs"]])
    rows.append(["dp-acc", "PLD build", None, build_seconds, 1.0, None, build_peak / 2**20, repeats])
    rows.append(["dp-acc", "RDP select", peer_eps, peer_time, peer_time / build_seconds, 1.0, None, repeats])
    print_table(
        f"DP-SGD base q={DPSGD['q']}, sigma={DPSGD['sigma']}, steps={DPSGD['steps']}; {DPSGD['dist']}, "
        f"delta = {DPSGD['delta']:g}  (bound s excludes the PLD build; 'x RDP' adds it for the hockey-stick methods)",
        ["path", "method", "epsilon", "bound s", "x PLD build", "x RDP", "peak MiB", "runs"],
        rows,
    )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    payload = {
        "repeats": args.repeats,
        "symsel_rdp_available": symsel_rdp_available(),
        "analytic": bench_analytic(args.repeats),
        "dpsgd": bench_dpsgd(args.repeats),
    }
    payload["wall_seconds"] = time.perf_counter() - start
    path = write_results("bench_speed", payload)
    print(f"\nwrote {path} ({payload['wall_seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
