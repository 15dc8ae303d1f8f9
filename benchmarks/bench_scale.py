"""Scale: laws with E[K] up to 10⁷ and δ down to 1e-30, through every method, ``verify`` and ``plan``.

The goal: ``bound --method all``, ``verify`` and ``plan`` answer in seconds for
``poisson(mean=1e6)``, ``binomial(n=1e6, p=0.5)``, ``two_point(L=1e7, s=0.1)`` and ``geometric(mean=1e6)``,
at δ = 1e-6 and δ = 1e-30. For each law this script times (wall clock, one cold run each, a fresh law and
base object so no cache helps):

1. every method's ε(δ) (the ``--method all`` work: shared components are computed once);
2. ``verify``'s work: every upper bound and the certified lower bound (δ = 1e-6);
3. ``plan``: the largest mean of the law's family under a budget that allows about 10⁶ runs;

and, in the same run, dp-accounting's RDP ``RepeatAndSelectDpEvent`` (a Gaussian base; Poisson and
geometric only, the laws it supports) as the peer: ``ratio`` is symsel's ``--method all`` time over the
peer's one call. Also the CLI start-up (``symsel --help``).

Run from the repository root: ``python benchmarks/bench_scale.py`` → ``benchmarks/results/bench_scale.json``.
"""

from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import print_table, rdp_repeat_and_select, write_results

import symsel
from symsel.apps.plan import max_mean
from symsel.bounds import bound_summary
from symsel.evidence.verify import verify_selection

LAWS = [
    ("poisson(mean=1e6)", "poisson(mean={mean})", math.inf),
    ("binomial(n=1e6, p=0.5)", None, None),
    ("two_point(L=1e7, s=0.1)", None, None),
    ("geometric(mean=1e6)", "geometric(mean={mean})", 1.0),
]
BASE = "gaussian(sigma=4)"
DELTAS = (1e-6, 1e-30)
PLAN_BUDGET = {"poisson(mean={mean})": 50.0, "geometric(mean={mean})": 3.6}


def _timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def cli_startup() -> float:
    exe = Path(sys.executable).with_name("symsel")
    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([str(exe), "--help"], check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    rows: list[dict[str, Any]] = []
    for spec, template, shape in LAWS:
        for delta in DELTAS:
            law, base = symsel.parse_distribution(spec), symsel.parse_profile(BASE)
            t_all, records = _timed(lambda law=law, base=base, delta=delta: [
                bound_summary(law, base, m, delta=delta) for m in symsel.METHODS])
            eps = {r["method"]: r["epsilon"] for r in records}
            row: dict[str, Any] = {"law": spec, "delta": delta, "all_methods_s": t_all, **eps}
            if shape is not None:
                mean = float(law.mean)
                t_peer, (peer_eps, _) = _timed(lambda mean=mean, shape=shape, delta=delta: rdp_repeat_and_select(
                    _gaussian_event(), mean, shape, delta))
                row.update(peer_epsilon=peer_eps, peer_s=t_peer, ratio=t_all / t_peer)
            if delta == DELTAS[0]:
                law, base = symsel.parse_distribution(spec), symsel.parse_profile(BASE)
                t_verify, report = _timed(lambda law=law, base=base, delta=delta: verify_selection(law, base, delta))
                row.update(verify_s=t_verify, lower_bound=report["lower_bound"], bracket=report.get("ratio"),
                           sound=report["sound"])
                if template is not None:
                    budget = PLAN_BUDGET[template]
                    t_plan, plan = _timed(lambda template=template, budget=budget, delta=delta: max_mean(
                        template, symsel.parse_profile(BASE), budget, delta, "best"))
                    row.update(plan_budget=budget, plan_mean=plan["mean"], plan_s=t_plan)
            rows.append(row)
            print(f"{spec} delta={delta:g}: all methods {t_all:.1f} s, best {eps['best']:.4f}", flush=True)
    startup = cli_startup()
    print_table("every method (--method all)", ["law", "delta", "time s", "best", "rdp", "peer eps", "peer s", "ratio"],
                [[r["law"], r["delta"], r["all_methods_s"], r["best"], r["rdp"], r.get("peer_epsilon"),
                  r.get("peer_s"), r.get("ratio")] for r in rows])
    print_table("verify and plan (delta = 1e-6)", ["law", "verify s", "lower", "bracket", "plan budget", "plan mean",
                                                   "plan s"],
                [[r["law"], r.get("verify_s"), r.get("lower_bound"), r.get("bracket"), r.get("plan_budget"),
                  r.get("plan_mean"), r.get("plan_s")] for r in rows if "verify_s" in r])
    print(f"symsel --help: {startup:.3f} s")
    write_results("bench_scale", {"base": BASE, "rows": rows, "cli_help_s": startup})


def _gaussian_event() -> Any:
    from dp_accounting import dp_event

    return dp_event.GaussianDpEvent(4.0)


if __name__ == "__main__":
    main()
