"""The practitioner's tools (and two slow hostile inputs), timed beside dp-accounting.

1. ``symsel dist`` on two hostile-but-valid laws: a nested exponential PGF ``exp(exp(z) − e)`` (its series check)
   and the largest beta-binomial, ``n = 2000`` (its exact coefficients and expected quantile);
2. the selection handed back: ``to_pld`` of the envelope bound over the Figure 7 DP-SGD base (geometric K at the
   mean ``best`` affords at ε = 2.5) and its composition with a final DP-SGD release, against dp-accounting's
   own PLD of the DP-SGD run (the peer; ratio = symsel export / peer PLD);
3. σ-tuning (Koskela et al. Figure 8, m = 10): thresholds, the admitted steps of σ = 2, 3, 4 and the tuning's ε,
   against one dp-accounting PLD of the longest admitted run (ratio = symsel / peer);
4. ``symsel report --quick`` end to end (a subprocess).

Run from the repository root: ``python benchmarks/bench_practitioner.py`` →
``benchmarks/results/bench_practitioner.json``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import print_table, write_results

import symsel


def _timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def _peer_dpsgd_pld(q: float, sigma: float, steps: int) -> Any:
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)),
                                                    steps))
    return accountant


def hostile_laws() -> list[dict[str, Any]]:
    from symsel.report.main import distribution_facts

    rows = []
    for spec in ("pgf(expr='exp(exp(z)-E)')", "beta_binomial(n=2000, a=2, b=3)"):
        seconds, facts = _timed(lambda spec=spec: distribution_facts(spec))
        rows.append({"law": spec, "seconds": seconds, "mean": facts["mean"],
                     "expected_quantile": facts["expected_quantile"]})
    return rows


def export_and_compose() -> dict[str, Any]:
    from symsel.apps.plan import max_mean
    from symsel.report.figures import FIG7

    base = symsel.parse_profile(f"dpsgd(q={FIG7['q']!r}, sigma={FIG7['sigma']!r}, steps={FIG7['steps']})")
    plan = max_mean("geometric(mean={mean})", base, 2.5, FIG7["delta"], "best")
    envelope = symsel.bound(symsel.geometric(mean=int(plan["mean"])), base, "envelope")
    export_s, pld = _timed(lambda: symsel.to_pld(envelope))
    compose_s, total = _timed(lambda: pld.compose(symsel.to_pld(base)))
    peer_s, _ = _timed(lambda: _peer_dpsgd_pld(FIG7["q"], FIG7["sigma"], FIG7["steps"]).get_epsilon(FIG7["delta"]))
    return {"mean": int(plan["mean"]), "export_s": export_s, "compose_s": compose_s, "peer_pld_s": peer_s,
            "ratio": export_s / peer_s, "tuning_eps": pld.get_epsilon_for_delta(FIG7["delta"]),
            "composed_eps_at_2delta": total.get_epsilon_for_delta(2 * FIG7["delta"])}


def sigma_tuning() -> dict[str, Any]:
    from symsel.apps.tuning import corollary_6_2_thresholds
    from symsel.apps.tuning import sigma_tuning as tune

    law = symsel.geometric(mean=10)
    seconds, result = _timed(lambda: tune(0.01, (2.0, 3.0, 4.0), law, corollary_6_2_thresholds(law, 1.5, 1e-6), 1e-6))
    longest = max(c["steps"] for c in result["candidates"])
    peer_s, _ = _timed(lambda: _peer_dpsgd_pld(0.01, 4.0, longest).get_epsilon(1e-6))
    return {"seconds": seconds, "steps": [c["steps"] for c in result["candidates"]], **result["epsilon"],
            "peer_pld_s": peer_s, "ratio": seconds / peer_s}


def quick_report() -> float:
    with tempfile.TemporaryDirectory() as folder:
        seconds, _ = _timed(lambda: subprocess.run([sys.executable, "-m", "symsel", "report", "--quick", "--out",
                                                    str(Path(folder) / "r"), "--no-progress"], check=True,
                                                   capture_output=True))
    return seconds


def main() -> None:
    results = {"hostile_laws": hostile_laws(), "export": export_and_compose(), "sigma_tuning": sigma_tuning(),
               "quick_report_s": quick_report()}
    for title, rows in (("symsel dist on hostile laws", results["hostile_laws"]),
                        ("envelope over DP-SGD exported as a PLD", [results["export"]]),
                        ("sigma-tuning (Figure 8, m = 10)", [results["sigma_tuning"]])):
        headers = list(rows[0])
        print_table(title, headers, [[row[h] for h in headers] for row in rows])
    print(f"symsel report --quick: {results['quick_report_s']:.1f} s")
    write_results("bench_practitioner", results)


if __name__ == "__main__":
    main()
