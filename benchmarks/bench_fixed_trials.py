"""The practitioner's commonest case: a fixed number of trials of one DP-SGD run,
released as the best trial. For n_trials ∈ {10, 40, 100} on dpsgd(q=0.01, sigma=1.1, steps=1000) at δ = 1e-6:
symsel's ``best`` (which takes ``interval``), ``composition`` (releasing every trial: dp-accounting's PLD of
n_trials · steps steps), ``envelope``, dp-accounting's RDP accountant on the n_trials-fold composition (what a user
of dp-accounting alone would report for releasing all trials) and the certified lower bound
(``symsel.lower_bound``: DP-SGD's dominated pair, docs/lower-bounds.md). CPU seconds beside each. Then the plan:
how many trials fit ε = 8, δ = 1e-6, alone and with the final training run composed.

Run from the repository root: ``python benchmarks/bench_fixed_trials.py`` → ``benchmarks/results/fixed_trials.json``;
the table is the README's "A fixed number of trials of DP-SGD".
"""

from __future__ import annotations

import time

from _common import fmt, write_results
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant

import symsel
from symsel.errors import NotApplicableError

BASE = "dpsgd(q=0.01, sigma=1.1, steps=1000)"
TRIALS = (10, 40, 100)
DELTA = 1e-6
PLAN_EPSILON = 8.0


def main() -> None:
    base = symsel.parse_profile(BASE)
    rows = []
    print("| n_trials | best | composition | envelope | dp-accounting RDP (all trials) | certified lower | "
          "best / lower |")
    print("|---|---|---|---|---|---|---|")
    for k in TRIALS:
        law = symsel.point(k=k)
        row: dict = {"n_trials": k}
        for method in ("best", "composition", "envelope"):
            start = time.process_time()
            try:
                row[method] = symsel.bound(law, base, method).epsilon(DELTA)
            except NotApplicableError:
                row[method] = None
            row[f"{method}_cpu_s"] = time.process_time() - start
        accountant = rdp_privacy_accountant.RdpAccountant()
        step = dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.1))
        accountant.compose(dp_event.SelfComposedDpEvent(step, 1000 * k))
        row["dp_accounting_rdp"] = accountant.get_epsilon(DELTA)
        start = time.process_time()
        row["lower"] = symsel.lower_bound(base, law, DELTA).epsilon
        row["lower_cpu_s"] = time.process_time() - start
        rows.append(row)
        cells = [row[name] for name in ("best", "composition", "envelope", "dp_accounting_rdp", "lower")]
        text = [str(k), *(fmt(c, 6) for c in cells), fmt(row["best"] / row["lower"], 5)]
        print("| " + " | ".join(text) + " |", flush=True)
    plans = _plans(base)
    write_results("fixed_trials", {"rows": rows, "plans": plans})


def _plans(base: symsel.Profile) -> list[dict]:
    """How many trials fit ε = 8, δ = 1e-6: the selection alone, and the whole pipeline with the final training run
    composed (``final_run=True``, docs/composition.md, "A selection and the final run"), with the pipeline's ε."""
    from symsel.apps.plan import max_trials

    plans = []
    print("\n| plan at eps = 8 | trials | epsilon | CPU s |\n|---|---|---|---|")
    for final_run in (False, True):
        start = time.process_time()
        plan = max_trials("point(k={k})", base, PLAN_EPSILON, DELTA, final_run=final_run)
        plan["cpu_s"] = time.process_time() - start
        plans.append(plan)
        label = "with the final run" if final_run else "selection alone"
        print(f"| {label} | {plan['trials']} | {fmt(plan['epsilon'], 6)} | {plan['cpu_s']:.1f} |", flush=True)
    return plans


if __name__ == "__main__":
    main()
