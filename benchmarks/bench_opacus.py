"""The Opacus-interface accountant and the whole pipeline's one number: calibration, route agreement, trials.

What is measured (CPU seconds of this process, ``time.process_time``):

1. **Calibration** of σ for 20 trials plus the final run of ``dpsgd(q=0.004, sigma=σ, steps=5000)`` to ε = 8,
   δ = 1e-5 through the Opacus interface: Opacus's ``get_noise_multiplier`` when Opacus is installed, else its
   bisection written out (double σ from 10 until ε ≤ target, halve ``[0, σ_high]`` until the target exceeds
   ε(σ_high) by at most 0.01), on :func:`symsel.apps.opacus.make_accountant_class` ``(n_trials=20, final_run=True,
   target_epsilon=8)``, then the same without the target (every answer the tight bound; second, in the same
   process);
   against symsel's planner (``plan.solve_base`` with ``{sigma}``, ``final_run=True``) and, as the peer, the same
   bisection on dp-accounting's PLD accountant for one candidate (what Opacus calibrates without symsel). Goals:
   σ within 0.5 % of the planner's, ε(σ) never above the budget, ≤ 20 CPU-s.
2. **Routes** of the whole pipeline, 30 trials of ``dpsgd(q=0.004, sigma=1.0, steps=5000)`` then the final run at
   δ = 1e-5: ``symsel.with_final_run``, ``plan.pipeline_epsilon``, ``symsel bound --compose-with``,
   ``SelectionAccountant`` with the run composed after the selection, the Opacus accountant; and dp-accounting's
   composition of the two exported PLDs (``to_pld(selection).compose(to_pld(base))``, not a route of the function).
   Goal: every route within 0.1 % of the others. The routes run one after the other in one process, so the
   selection's bound (cached by value) is computed by the first only.
3. **Trials**: the planner's most trials with the final run on ``dpsgd(q=0.01, sigma=1.1, steps=1000)`` at ε = 8,
   δ = 1e-5, and the accountant's ε at that number and one more.
4. **rdp for a fixed K**: the planner's most trials by the ``rdp`` method (``point(k={k})``, no final run) on the
   same base and budget, against the most ``K`` runs whose composition dp-accounting's RDP accountant keeps within
   it (the best of ``K`` runs is a post-processing of all of them, so the two should agree).

Run from the repository root: ``python benchmarks/bench_opacus.py [--parts calibration routes trials]`` →
``benchmarks/results/opacus_<part>.json`` per part (the parts can run in parallel processes), and
``benchmarks/results/opacus.json``, every part's latest result (a part not run keeps the one already there), once
each part has a result (the parts' files are then removed).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from typing import Any

from _common import RESULTS_DIR, dpsgd_event, write_results
from click.testing import CliRunner
from dp_accounting.pld import pld_privacy_accountant

import symsel
from symsel.apps import plan
from symsel.apps.accounting import SelectionAccountant, SelectionDpEvent
from symsel.apps.opacus import make_accountant_class
from symsel.cli import main

TARGET, DELTA = 8.0, 1e-5


def cpu(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    value = fn()
    return time.process_time() - start, value


def bisection(get_epsilon: Callable[[float], float], target: float, tolerance: float = 0.01) -> tuple[float, int]:
    """Opacus's ``get_noise_multiplier`` (module docstring): σ and the number of ε asked."""
    calls, eps_high, sigma_low, sigma_high = 0, math.inf, 0.0, 10.0
    while eps_high > target:
        sigma_high *= 2
        eps_high = get_epsilon(sigma_high)
        calls += 1
    while target - eps_high > tolerance:
        sigma = (sigma_low + sigma_high) / 2
        eps = get_epsilon(sigma)
        calls += 1
        if eps < target:
            sigma_high, eps_high = sigma, eps
        else:
            sigma_low = sigma
    return sigma_high, calls


def calibrate(target_epsilon: float | None) -> tuple[float, float, int | None, str]:
    """σ by Opacus's calibration for the question of part 1, through the accountant with or without the target
    (``target_epsilon``): CPU seconds, σ, ε asked (None through Opacus), how."""
    q, steps, trials = 0.004, 5000, 20
    try:
        from opacus.accountants.utils import get_noise_multiplier

        from symsel.apps.opacus import register

        name = register(n_trials=trials, final_run=True, target_epsilon=target_epsilon)
        seconds, sigma = cpu(lambda: get_noise_multiplier(target_epsilon=TARGET, target_delta=DELTA, sample_rate=q,
                                                          steps=steps, accountant=name))
        return seconds, sigma, None, "opacus.accountants.utils.get_noise_multiplier"
    except ImportError:
        accountant = make_accountant_class(n_trials=trials, final_run=True, target_epsilon=target_epsilon)()

        def ask(sigma: float) -> float:
            accountant.history = [(sigma, q, steps)]
            return accountant.get_epsilon(DELTA)

        seconds, (sigma, calls) = cpu(lambda: bisection(ask, TARGET))
        return seconds, sigma, calls, "Opacus's bisection written out (Opacus not installed)"


def calibration() -> dict[str, Any]:
    q, steps, trials = 0.004, 5000, 20
    seconds, sigma, calls, how = calibrate(TARGET)
    slow_seconds, slow_sigma, slow_calls, _ = calibrate(None)
    fresh = make_accountant_class(n_trials=trials, final_run=True, name="fresh")()
    fresh.history = [(sigma, q, steps)]
    epsilon = fresh.get_epsilon(DELTA)
    planner_seconds, planned = cpu(lambda: plan.solve_base(f"dpsgd(q={q}, sigma={{sigma}}, steps={steps})",
                                                           f"point(k={trials})", TARGET, DELTA, final_run=True))

    def peer(sigma: float) -> float:
        return pld_privacy_accountant.PLDAccountant().compose(dpsgd_event(q, sigma, steps)).get_epsilon(DELTA)

    peer_seconds, (peer_sigma, peer_calls) = cpu(lambda: bisection(peer, TARGET))
    ratio = sigma / planned["sigma"] - 1
    return {"question": f"{trials} trials + final run of dpsgd(q={q}, steps={steps}) to epsilon={TARGET}, "
                        f"delta={DELTA}", "how": how, "sigma": sigma, "epsilon_at_sigma": epsilon,
            "cpu_seconds": seconds, "get_epsilon_calls": calls,
            "without_target": {"sigma": slow_sigma, "cpu_seconds": slow_seconds, "get_epsilon_calls": slow_calls,
                               "same_sigma": slow_sigma == sigma,
                               "sigma_with_target_relative_to_it": sigma / slow_sigma - 1},
            "planner_sigma": planned["sigma"],
            "planner_epsilon": planned["epsilon"], "planner_cpu_seconds": planner_seconds,
            "sigma_relative_to_planner": ratio,
            "peer_one_candidate_sigma": peer_sigma, "peer_cpu_seconds": peer_seconds, "peer_calls": peer_calls,
            "goals": {"sigma_within_0.5%": abs(ratio) <= 5e-3, "never_above_budget": epsilon <= TARGET,
                      "cpu_seconds_at_most_20": seconds <= 20}}


def routes() -> dict[str, Any]:
    k, base_spec = 30, "dpsgd(q=0.004, sigma=1.0, steps=5000)"
    law, base = symsel.point(k), symsel.parse_profile(base_spec)
    run = dpsgd_event(0.004, 1.0, 5000)

    def cli_compose() -> float:
        out = CliRunner().invoke(main, ["bound", "--dist", f"point(k={k})", "--base", base_spec, "--delta",
                                        str(DELTA), "--compose-with", base_spec, "--json"])
        return float(json.loads(out.output)["composed"]["epsilon"])

    def opacus_route() -> float:
        accountant = make_accountant_class(n_trials=k, final_run=True)()
        accountant.history = [(1.0, 0.004, 5000)]
        return accountant.get_epsilon(DELTA)

    measured = {}
    for name, fn in (
        ("symsel.with_final_run", lambda: symsel.with_final_run(symsel.bound(law, base)).epsilon(DELTA)),
        ("plan.pipeline_epsilon", lambda: plan.pipeline_epsilon(law, base, "best", DELTA)),
        ("bound --compose-with", cli_compose),
        ("SelectionAccountant", lambda: SelectionAccountant().compose(SelectionDpEvent(run, f"point(k={k})"))
         .compose(run).get_epsilon(DELTA)),
        ("opacus accountant", opacus_route),
    ):
        seconds, value = cpu(fn)
        measured[name] = {"epsilon": float(value), "cpu_seconds": seconds}
    values = [r["epsilon"] for r in measured.values()]
    spread = max(values) / min(values) - 1
    seconds, composed = cpu(lambda: symsel.to_pld(symsel.bound(law, base)).compose(symsel.to_pld(base))
                            .get_epsilon_for_delta(DELTA))
    return {"question": f"{k} trials of {base_spec} then the final run, delta={DELTA}", "routes": measured,
            "relative_spread": spread, "goal_within_0.1%": spread <= 1e-3,
            "dp_accounting_composition_of_exports": {"epsilon": composed, "cpu_seconds": seconds,
                                                     "relative_to_pipeline": composed / min(values) - 1}}


def trials() -> dict[str, Any]:
    base_spec = "dpsgd(q=0.01, sigma=1.1, steps=1000)"
    seconds, record = cpu(lambda: plan.max_trials("point(k={k})", symsel.parse_profile(base_spec), TARGET, DELTA,
                                                  final_run=True))
    k = record["trials"]
    run = dpsgd_event(0.01, 1.1, 1000)
    accountant = {n: SelectionAccountant().compose(SelectionDpEvent(run, f"point(k={n})")).compose(run)
                  .get_epsilon(DELTA) for n in (k, k + 1)}
    return {"question": f"most trials with the final run of {base_spec}, epsilon={TARGET}, delta={DELTA}",
            "planner_trials": k, "planner_epsilon": record["epsilon"], "planner_cpu_seconds": seconds,
            "accountant_epsilon": {str(n): e for n, e in accountant.items()},
            "agree": accountant[k] <= TARGET < accountant[k + 1]}


def rdp_fixed_k() -> dict[str, Any]:
    from dp_accounting.rdp import rdp_privacy_accountant

    q, sigma, steps = 0.01, 1.1, 1000
    base_spec = f"dpsgd(q={q}, sigma={sigma}, steps={steps})"
    seconds, record = cpu(lambda: plan.max_trials("point(k={k})", symsel.parse_profile(base_spec), TARGET, DELTA,
                                                  method="rdp"))

    def peer_epsilon(k: int) -> float:
        return rdp_privacy_accountant.RdpAccountant().compose(dpsgd_event(q, sigma, steps), k).get_epsilon(DELTA)

    def peer_most() -> int:
        lo, hi = 1, 2
        while peer_epsilon(hi) <= TARGET:
            lo, hi = hi, 2 * hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if peer_epsilon(mid) <= TARGET else (lo, mid)
        return lo

    peer_seconds, peer_k = cpu(peer_most)
    return {"question": f"most trials (fixed K, method rdp, no final run) of {base_spec}, epsilon={TARGET}, "
                        f"delta={DELTA}", "planner_trials": record["trials"], "planner_cpu_seconds": seconds,
            "dp_accounting_rdp_composition_trials": peer_k, "dp_accounting_cpu_seconds": peer_seconds,
            "agree": record["trials"] == peer_k}


PARTS = {"calibration": calibration, "routes": routes, "trials": trials, "rdp_fixed_k": rdp_fixed_k}


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", nargs="+", choices=list(PARTS), default=list(PARTS),
                        help="the parts to run (each is written to benchmarks/results/opacus_<part>.json as it "
                             "ends; all of them also to opacus.json)")
    args = parser.parse_args()
    payload: dict[str, Any] = {}
    for part in args.parts:
        payload[part] = PARTS[part]()
        print(json.dumps(payload[part], indent=1), flush=True)
        write_results(f"opacus_{part}", {part: payload[part]})
    merged: dict[str, Any] = {}
    whole = RESULTS_DIR / "opacus.json"
    if whole.exists():  # the parts not run again keep their last result
        merged.update({part: value for part, value in json.loads(whole.read_text()).items() if part in PARTS})
    for part in PARTS:
        path = RESULTS_DIR / f"opacus_{part}.json"
        if path.exists():
            merged[part] = json.loads(path.read_text())[part]
    if set(merged) == set(PARTS):  # one file for the results page; the parts' files are only the way there
        print(write_results("opacus", merged))
        for part in PARTS:
            (RESULTS_DIR / f"opacus_{part}.json").unlink(missing_ok=True)


if __name__ == "__main__":
    main_bench()
