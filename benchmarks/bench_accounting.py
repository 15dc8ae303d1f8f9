"""SelectionAccountant against dp-accounting's RDP and PLD accountants on the same events: ε and cold time.

What is measured (wall clock, on whatever machine runs it):

1. **Events** (δ = 1e-6 unless said): ``RepeatAndSelectDpEvent`` of Gaussian and Laplace events for every shape
   (Poisson, geometric, logarithmic, TNB η = 0.5), a fixed ``K = 40`` (``SelectionDpEvent(…, "point(k=40)")``), and a
   DP-SGD tuning followed by the final training run (q = 0.01, σ = 1.1, 1000 steps; geometric mean 10; δ = 1e-5).
   Each accountant is fresh and *cold*: symsel's caches (bounds, pooled masses, PLD profiles, the accountant's own
   laws and selection PLDs) are cleared before each SelectionAccountant run. The RDP peer is dp-accounting's
   ``RdpAccountant`` on the same event (Papernot & Steinke; it refuses fixed K and TNB shapes below 0). The PLD peer
   is dp-accounting's ``PLDAccountant`` on what it can account: the ``K = mean`` runs all released
   (``SelfComposedDpEvent(event, round(mean))``; a bound on the selection too, rarely a good one), or the final
   training run alone.
2. **Export**: the adaptive grid (default, ``tolerance`` 5e-3) against ``symsel.profiles.export.to_pld`` with 4001
uniform
   points (``export_points=4001``) on the standard example, alone and composed with one more Gaussian(4) run.
3. **Speed goal**: ``get_epsilon`` of a fresh SelectionAccountant on
   ``RepeatAndSelectDpEvent(GaussianDpEvent(4), 30, 1)`` against a fresh ``PLDAccountant`` on
   ``SelfComposedDpEvent(GaussianDpEvent(4), 30)`` (goal: within 2x), both cold, three ways: a fresh Python process
   per run (modules imported, nothing computed yet), in one process with every cache cleared, and in one process for
   a new σ (what ``calibrate_dp_mechanism`` sees: the law is reused). Medians of ``--repeats`` runs. Then where the
   time of the fresh-process run goes (cProfile, cumulative seconds of the phases).

Run from the repository root: ``python benchmarks/bench_accounting.py [--repeats N]`` →
``benchmarks/results/bench_accounting.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from typing import Any

from _common import dpsgd_event, print_table, write_results
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant

import symsel.apps.accounting as accounting
from symsel.apps.accounting import SelectionAccountant, SelectionDpEvent

GAUSS4 = dp_event.GaussianDpEvent(4.0)
GAUSS2 = dp_event.GaussianDpEvent(2.0)
DPSGD = dpsgd_event(0.01, 1.1, 1000)


def clear_caches() -> None:
    """The symsel caches a selection goes through, so that the next run is computed from scratch (caches keyed by
    the law object miss anyway: the accountant's law cache is cleared, so every law is a new object)."""
    from symsel.bounds import api, composition
    from symsel.profiles import dpaccounting

    for module, name in ((api, "_computed"), (composition, "composed"), (composition, "pooled_masses"),
                         (dpaccounting, "_CACHE"), (dpaccounting, "_rdp_poisson_subsampled_gaussian"),
                         (accounting, "_PARTS"), (accounting, "_LAWS")):
        cache = getattr(module, name, None)
        if hasattr(cache, "cache_clear"):
            cache.cache_clear()
        elif cache is not None:  # a symsel.memory.BoundedCache
            cache.clear()


def timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _epsilon(accountant: Any, events: list[Any], delta: float) -> float:
    for event in events:
        accountant.compose(event)
    return float(accountant.get_epsilon(delta))


# ------------------------------------------------------------------------------------------------ 1. events
def cases() -> list[dict[str, Any]]:
    """(label, events, δ, the PLD peer's events and what they are)."""
    def ras(event: Any, mean: float, shape: float) -> Any:
        return dp_event.RepeatAndSelectDpEvent(event, mean, shape)

    return [
        {"label": "geometric(30), Gaussian(4)", "events": [ras(GAUSS4, 30, 1)], "delta": 1e-6,
         "pld": [dp_event.SelfComposedDpEvent(GAUSS4, 30)], "pld_is": "30 runs composed"},
        {"label": "poisson(10), Gaussian(2)", "events": [ras(GAUSS2, 10, math.inf)], "delta": 1e-6,
         "pld": [dp_event.SelfComposedDpEvent(GAUSS2, 10)], "pld_is": "10 runs composed"},
        {"label": "logarithmic(10), Gaussian(2)", "events": [ras(GAUSS2, 10, 0)], "delta": 1e-6,
         "pld": [dp_event.SelfComposedDpEvent(GAUSS2, 10)], "pld_is": "10 runs composed"},
        {"label": "tnb(0.5, 10), Gaussian(2)", "events": [ras(GAUSS2, 10, 0.5)], "delta": 1e-6,
         "pld": [dp_event.SelfComposedDpEvent(GAUSS2, 10)], "pld_is": "10 runs composed"},
        {"label": "geometric(10), Laplace(2)", "events": [ras(dp_event.LaplaceDpEvent(2.0), 10, 1)], "delta": 1e-6,
         "pld": [dp_event.SelfComposedDpEvent(dp_event.LaplaceDpEvent(2.0), 10)], "pld_is": "10 runs composed"},
        {"label": "point(k=40), Gaussian(4)", "events": [SelectionDpEvent(GAUSS4, "point(k=40)")], "delta": 1e-6,
         "pld": [dp_event.SelfComposedDpEvent(GAUSS4, 40)], "pld_is": "40 runs composed"},
        {"label": "DP-SGD: geometric(10) tuning + final run", "events": [ras(DPSGD, 10, 1), DPSGD], "delta": 1e-5,
         "pld": [DPSGD], "pld_is": "final run alone"},
    ]


def event_rows() -> list[dict[str, Any]]:
    rows = []
    for case in cases():
        events, delta = case["events"], case["delta"]
        clear_caches()
        t_sel, eps_sel = timed(lambda ev=events, d=delta: _epsilon(SelectionAccountant(), ev, d))
        try:
            t_rdp, eps_rdp = timed(lambda ev=events, d=delta: _epsilon(rdp_privacy_accountant.RdpAccountant(), ev, d))
        except Exception as exc:  # dp-accounting refuses (fixed K: UnsupportedEventError) or raises (shape < 0)
            t_rdp, eps_rdp = None, f"refused: {type(exc).__name__}"
        t_pld, eps_pld = timed(lambda ev=case["pld"], d=delta: _epsilon(pld_privacy_accountant.PLDAccountant(), ev, d))
        row = {"label": case["label"], "delta": delta, "selection_epsilon": eps_sel, "selection_s": t_sel,
               "rdp_epsilon": eps_rdp, "rdp_s": t_rdp, "pld_epsilon": eps_pld, "pld_s": t_pld, "pld_is": case["pld_is"]}
        row["ratio_to_rdp"] = eps_sel / eps_rdp if isinstance(eps_rdp, float) else None
        row["time_ratio_to_pld"] = t_sel / t_pld
        rows.append(row)
        print(f"  {case['label']}: {eps_sel:.4f} in {t_sel:.2f} s", flush=True)
    return rows


# ------------------------------------------------------------------------------------------------ 2. export
def export_rows() -> list[dict[str, Any]]:
    event, final = dp_event.RepeatAndSelectDpEvent(GAUSS4, 30, 1), GAUSS4
    rows = []
    for label, options in (("adaptive (tolerance 5e-3)", {}), ("to_pld, 4001 points", {"export_points": 4001})):
        clear_caches()
        accountant = SelectionAccountant(**options)
        seconds, alone = timed(lambda a=accountant: _epsilon(a, [event], 1e-6))
        (_, result, _), = accountant.selection_bounds
        composed = _epsilon(accountant, [final], 1e-6)
        rows.append({"export": label, "selection_s": seconds, "epsilon": alone, "bound_epsilon": result.epsilon(1e-6),
                     "composed_epsilon": composed})
    return rows


# ------------------------------------------------------------------------------------------------ 3. speed goal
FRESH = """
import json, sys, time
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
import symsel.apps.accounting
which = sys.argv[1]
start = time.perf_counter()
if which == "selection":
    accountant = symsel.apps.accounting.SelectionAccountant()
    accountant.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(4.0), 30, 1))
elif which == "pld30":
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(4.0), 30))
else:
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_event.GaussianDpEvent(4.0))
eps = accountant.get_epsilon(1e-6)
print(json.dumps({"seconds": time.perf_counter() - start, "epsilon": eps}))
"""

PROFILED = """
import cProfile, json, pstats, time
from dp_accounting import dp_event
import symsel.apps.accounting
profile = cProfile.Profile()
start = time.perf_counter()
profile.enable()
accountant = symsel.apps.accounting.SelectionAccountant()
accountant.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(4.0), 30, 1))
eps = accountant.get_epsilon(1e-6)
profile.disable()
total = time.perf_counter() - start
stats = pstats.Stats(profile).stats
phases = {"law of K (SymPy, first use)": "_repeat_and_select_law", "bound: envelope": "_envelope",
          "bound: composition": "_composition", "bound: paper / fdp": "_hockey_stick", "bound: rdp": "_renyi",
          "bound: best total": "_best", "export (adaptive grid)": "selection_pld",
          "dp-accounting connect-the-dots": "create_pmf_pessimistic_connect_dots",
          "pooled masses (50 digits)": "pooled_masses", "get_epsilon": "get_epsilon"}
out = {}
for label, name in phases.items():
    values = [v[3] for k, v in stats.items() if k[2] == name]
    out[label] = max(values) if values else 0.0
print(json.dumps({"total": total, "profiled_total": sum(v[2] for v in stats.values()), "phases": out}))
"""


def _subprocess(script: str, *args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def speed_goal(repeats: int) -> dict[str, Any]:
    fresh: dict[str, list[dict[str, Any]]] = {k: [] for k in ("selection", "pld30", "pld1")}
    for _ in range(repeats):  # interleaved, so that load from other work hits both alike
        for which in fresh:
            fresh[which].append(_subprocess(FRESH, which))
    out: dict[str, Any] = {"fresh_process": {k: {"median_s": statistics.median(r["seconds"] for r in v),
                                                  "all_s": [r["seconds"] for r in v], "epsilon": v[-1]["epsilon"]}
                                              for k, v in fresh.items()}}
    selection_event = dp_event.RepeatAndSelectDpEvent(GAUSS4, 30, 1)
    cleared, pld_times = [], []
    for _ in range(repeats):
        clear_caches()
        cleared.append(timed(lambda: _epsilon(SelectionAccountant(), [selection_event], 1e-6))[0])
        pld_times.append(timed(lambda: _epsilon(pld_privacy_accountant.PLDAccountant(),
                                                [dp_event.SelfComposedDpEvent(GAUSS4, 30)], 1e-6))[0])
    new_sigma = []
    for i in range(repeats):
        sigma = 4.0 + 0.01 * (i + 1)
        event = dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(sigma), 30, 1)
        new_sigma.append(timed(lambda e=event: _epsilon(SelectionAccountant(), [e], 1e-6))[0])
    out["in_process"] = {"selection_cleared_s": statistics.median(cleared), "pld30_s": statistics.median(pld_times),
                         "selection_new_sigma_s": statistics.median(new_sigma)}
    out["profile"] = _subprocess(PROFILED)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    print("events (cold):", flush=True)
    rows = event_rows()
    print_table("SelectionAccountant vs dp-accounting (fresh accountants, symsel caches cleared)", [
        "event", "delta", "Selection eps", "s", "RDP eps", "s", "Sel/RDP eps", "PLD peer", "PLD eps", "s",
        "Sel/PLD time"], [
        [r["label"], r["delta"], r["selection_epsilon"], r["selection_s"], r["rdp_epsilon"], r["rdp_s"],
         r["ratio_to_rdp"], r["pld_is"], r["pld_epsilon"], r["pld_s"], r["time_ratio_to_pld"]] for r in rows])
    exports = export_rows()
    print_table("Export of geometric(30) x Gaussian(4), delta = 1e-6", [
        "export", "bound eps", "accountant eps", "selection s", "+ Gaussian(4) run"], [
        [r["export"], r["bound_epsilon"], r["epsilon"], r["selection_s"], r["composed_epsilon"]] for r in exports])
    goal = speed_goal(args.repeats)
    fresh, inproc = goal["fresh_process"], goal["in_process"]
    ratio_fresh = fresh["selection"]["median_s"] / fresh["pld30"]["median_s"]
    ratio_cleared = inproc["selection_cleared_s"] / inproc["pld30_s"]
    ratio_sigma = inproc["selection_new_sigma_s"] / inproc["pld30_s"]
    print_table("Speed goal: RepeatAndSelect(Gaussian(4), 30, 1) vs PLDAccountant, get_epsilon(1e-6), cold", [
        "run", "SelectionAccountant s", "PLDAccountant(30 runs) s", "ratio", "PLDAccountant(1 run) s"], [
        ["fresh process", fresh["selection"]["median_s"], fresh["pld30"]["median_s"], ratio_fresh,
         fresh["pld1"]["median_s"]],
        ["one process, caches cleared", inproc["selection_cleared_s"], inproc["pld30_s"], ratio_cleared, None],
        ["one process, new sigma", inproc["selection_new_sigma_s"], inproc["pld30_s"], ratio_sigma, None]])
    profile = goal["profile"]
    print_table(f"Where the fresh-process time goes (cProfile, total {profile['total']:.2f} s with profiling)",
                ["phase", "cumulative s"], [[k, v] for k, v in profile["phases"].items()])
    payload = {"repeats": args.repeats, "rows": rows, "export": exports, "speed_goal": goal,
               "goal_ratios": {"fresh_process": ratio_fresh, "caches_cleared": ratio_cleared, "new_sigma": ratio_sigma},
               "goal_met": {"fresh_process": ratio_fresh <= 2, "caches_cleared": ratio_cleared <= 2,
                            "new_sigma": ratio_sigma <= 2}}
    payload["wall_seconds"] = time.perf_counter() - start
    path = write_results("bench_accounting", payload)
    print(f"\nwrote {path} ({payload['wall_seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
