"""Certified brackets on DP-SGD under every neighbouring relation and down to δ = 1e-30: ``best`` (the upper bound)
against the certified lower bound (``symsel.lower_bound``: the pairs each relation realizes, docs/lower-bounds.md),
on ``dpsgd(q=0.05, sigma=1.5, steps=300)``. The goal: best / lower ≤ 1.01 on every row.

Each lower bound is also checked against an independent upper bound where one exists: dp-accounting's RDP
accountant on the ``k·steps``-fold composition for ``point(k)`` (add/remove and replace-special: the same pair), its
PLD accountant on that composition for ``point(k)`` at δ ≥ 1e-8 (every relation), and its RDP accountant's
``RepeatAndSelectDpEvent`` for the geometric law (add/remove). ``independent`` is the smallest of them, and a lower
bound above it is flagged ``unsound``.

A row costs 30 s to 2 min of CPU on two shared cores (the lower bound is most of it), so the full grid (5 laws × 3
relations × 4 δ) takes over an hour; by default a representative subset of 20 rows runs (every relation and δ for
``point(16)``; the other laws on replace-one at δ = 1e-8 and on add/remove at δ = 1e-30), in two processes
(``--part 0/2`` and ``--part 1/2`` write partial files, ``--merge`` joins them). ``--full`` runs the full grid.

Run from the repository root: ``python benchmarks/bench_brackets.py [--full]`` → ``benchmarks/results/brackets.json``.
"""

from __future__ import annotations

import json
import math
import sys
import time

from _common import RESULTS_DIR, fmt, write_results
from dp_accounting import dp_event, privacy_accountant
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant

import symsel

Q, SIGMA, STEPS = 0.05, 1.5, 300
LAWS = ("point(k=4)", "point(k=16)", "point(k=64)", "binomial(n=30, p=0.3)", "geometric(mean=25)")
RELATIONS = ("add_remove", "replace_one", "replace_special")
DELTAS = (1e-5, 1e-8, 1e-15, 1e-30)
GOAL = 1.01
_DP_RELATIONS = {"add_remove": "ADD_OR_REMOVE_ONE", "replace_one": "REPLACE_ONE",
                 "replace_special": "REPLACE_SPECIAL"}


def grid(full: bool) -> list[tuple[str, str, float]]:
    if full:
        return [(r, law, d) for r in RELATIONS for law in LAWS for d in DELTAS]
    rows = [(r, "point(k=16)", d) for r in RELATIONS for d in DELTAS]
    others = [law for law in LAWS if law != "point(k=16)"]
    rows += [("replace_one", law, 1e-8) for law in others] + [("add_remove", law, 1e-30) for law in others]
    return rows


def _step() -> dp_event.DpEvent:
    return dp_event.PoissonSampledDpEvent(Q, dp_event.GaussianDpEvent(SIGMA))


def independent(relation: str, law: str, delta: float) -> float | None:
    """The smallest of dp-accounting's upper bounds that apply to the row (module docstring), or ``None``."""
    found = []
    dp_relation = privacy_accountant.NeighboringRelation[_DP_RELATIONS[relation]]
    if law.startswith("point"):
        k = int(law.split("=")[1].rstrip(")"))
        composed = dp_event.SelfComposedDpEvent(_step(), k * STEPS)
        if relation != "replace_one":
            accountant = rdp_privacy_accountant.RdpAccountant()
            accountant.compose(composed)
            found.append(float(accountant.get_epsilon(delta)))
        if delta >= 1e-8:
            pld = pld_privacy_accountant.PLDAccountant(neighboring_relation=dp_relation,
                                                       value_discretization_interval=1e-3)
            pld.compose(composed)
            found.append(float(pld.get_epsilon(delta)))
    if law.startswith("geometric") and relation == "add_remove":
        accountant = rdp_privacy_accountant.RdpAccountant()
        accountant.compose(dp_event.RepeatAndSelectDpEvent(dp_event.SelfComposedDpEvent(_step(), STEPS), 25.0, 1.0))
        found.append(float(accountant.get_epsilon(delta)))
    return min(found) if found else None


def _row(relation: str, law: str, delta: float) -> dict:
    base = symsel.parse_profile(f"dpsgd(q={Q}, sigma={SIGMA}, steps={STEPS}, neighbouring='{relation}')")
    dist = symsel.parse_distribution(law)
    start = time.process_time()
    best = symsel.bound(dist, base).epsilon(delta)
    best_s = time.process_time() - start
    start = time.process_time()
    lower = symsel.lower_bound(base, dist, delta).epsilon
    lower_s = time.process_time() - start
    reference = independent(relation, law, delta)
    ratio = best / lower if lower > 0 else math.inf
    return {"relation": relation, "law": law, "delta": delta, "best": best, "lower": lower, "ratio": ratio,
            "independent": reference, "sound": reference is None or lower <= reference,
            "met": ratio <= GOAL, "best_cpu_s": best_s, "lower_cpu_s": lower_s}


def _write(rows: list[dict], full: bool) -> None:
    order = {key: i for i, key in enumerate(grid(full))}
    rows = sorted(rows, key=lambda r: order.get((r["relation"], r["law"], r["delta"]), len(order)))
    write_results("brackets", {"base": f"dpsgd(q={Q}, sigma={SIGMA}, steps={STEPS})", "goal": GOAL, "full": full,
                               "rows": rows, "met": sum(r["met"] for r in rows),
                               "unsound": sum(not r["sound"] for r in rows)})


def main(argv: list[str]) -> None:
    full = "--full" in argv
    parts = RESULTS_DIR / "brackets_parts"
    if "--merge" in argv:
        rows = [row for path in sorted(parts.glob("*.json")) for row in json.loads(path.read_text())]
        _write(rows, full)
        for path in parts.glob("*.json"):
            path.unlink()
        parts.rmdir()
        return
    part = next((a.split("/") for a in argv[argv.index("--part") + 1:][:1]), None) if "--part" in argv else None
    todo = grid(full)
    if part is not None:
        todo = todo[int(part[0])::int(part[1])]
    rows = []
    print("| relation | law | δ | best | lower | best / lower | independent | met |")
    print("|---|---|---|---|---|---|---|---|")
    for relation, law, delta in todo:
        row = _row(relation, law, delta)
        rows.append(row)
        print(f"| {relation} | {law} | {delta:g} | {fmt(row['best'], 6)} | {fmt(row['lower'], 6)} | "
              f"{fmt(row['ratio'], 5)} | {fmt(row['independent'], 6)} | {'yes' if row['met'] else 'no'} |",
              flush=True)
        if part is not None:
            parts.mkdir(parents=True, exist_ok=True)
            (parts / f"part{part[0]}.json").write_text(json.dumps(rows))
    if part is None:
        _write(rows, full)


if __name__ == "__main__":
    main(sys.argv[1:])
