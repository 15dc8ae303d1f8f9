"""Memory in a loop: the resident set size after each of repeated σ calibrations in one process.

A sweep or a notebook calibrates the noise of a DP-SGD run again and again in one process. Each case below runs
``calibrate_dp_mechanism`` (dp-accounting's) ``--calibrations`` times in a fresh child process, each time for a
slightly different bracket (so that no cache answers it), and records the process's RSS after each calibration:

* ``fixed K``: ``SelectionAccountant`` on ``SelectionDpEvent(run, "point(k=10)")``;
* ``random K``: ``SelectionAccountant`` on ``RepeatAndSelectDpEvent(run, 10, 1)`` (geometric, mean 10);
* the peer: dp-accounting's ``PLDAccountant`` on ``SelfComposedDpEvent(run, 10)`` (ten runs composed: what it can
  account for a fixed K).

``run`` is DP-SGD with sampling rate ``q = 0.01`` and ``--steps`` steps (default 100: a few minutes in all). The
automatic garbage collector stays on, as in a user's process; RSS flat after the first calibrations (the bounded
caches filled) means nothing accumulates; beside it, the bytes symsel's caches hold (``symsel.memory.cache_bytes``,
each cache bounded in bytes). Writes ``benchmarks/results/memory.json``.

    python benchmarks/bench_memory.py [--calibrations 20] [--steps 100]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import print_table, write_results

CHILD = """
import json, os, sys, time
from dp_accounting import dp_event, mechanism_calibration
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from symsel.apps.accounting import SelectionAccountant, SelectionDpEvent

case, steps, calibrations = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

def make_event(sigma):
    run = dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(sigma)), steps)
    if case == "fixed K":
        return SelectionDpEvent(run, "point(k=10)")
    if case == "random K":
        return dp_event.RepeatAndSelectDpEvent(run, 10, 1)
    return dp_event.SelfComposedDpEvent(run, 10)

accountant = PLDAccountant if case == "peer" else SelectionAccountant
rows = []
for i in range(calibrations):
    start = time.perf_counter()
    sigma = mechanism_calibration.calibrate_dp_mechanism(
        accountant, make_event, target_epsilon=2.0, target_delta=1e-6,
        bracket_interval=mechanism_calibration.ExplicitBracketInterval(0.5 * (1 + 1e-3 * i), 4.0), tol=1e-2)
    seconds = time.perf_counter() - start
    caches = None
    if case != "peer":  # what symsel's caches hold (measured after the timing)
        from symsel.memory import cache_bytes
        caches = sum(cache_bytes().values()) / 2**20
    print(json.dumps({"sigma": sigma, "rss_mib": rss_mib(), "seconds": seconds, "cache_mib": caches}), flush=True)
"""

CASES = ("random K", "fixed K", "peer")


def run_case(case: str, steps: int, calibrations: int) -> list[dict]:
    """The child's rows (one JSON line per calibration), echoed to stderr as they come."""
    rows = []
    with subprocess.Popen([sys.executable, "-c", CHILD, case, str(steps), str(calibrations)],
                          stdout=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        for line in child.stdout:
            rows.append(json.loads(line))
            print(f"{case}: {len(rows)} {rows[-1]}", file=sys.stderr, flush=True)
    if child.returncode != 0:
        raise RuntimeError(f"{case}: the child failed (exit status {child.returncode})")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calibrations", type=int, default=20)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=CASES)
    args = parser.parse_args()
    results = {case: run_case(case, args.steps, args.calibrations) for case in args.cases}
    table = []
    for case, rows in results.items():
        rss = [row["rss_mib"] for row in rows]
        half = len(rss) // 2
        per_call = (rss[-1] - rss[half]) / max(1, len(rss) - 1 - half)
        table.append([case, len(rows), rss[0], rss[half], rss[-1], per_call,
                      sum(r["seconds"] for r in rows) / len(rows), rows[-1].get("cache_mib")])
    print_table(f"RSS (MiB) over {args.calibrations} calibrations, DP-SGD q=0.01, {args.steps} steps",
                ["case", "calibrations", "after 1st", "at half", "after last", "MiB/calibration (2nd half)",
                 "s/calibration", "symsel caches (MiB)"], table)
    path = write_results("memory", {"calibrations": args.calibrations, "steps": args.steps, "cases": results,
                                    "summary": {row[0]: dict(zip(("calibrations_done", "rss_first", "rss_half",
                                                                  "rss_last", "mib_per_calibration_second_half",
                                                                  "seconds_per_calibration", "cache_mib_last"),
                                                                 row[1:], strict=True))
                                                for row in table}})
    print(f"\nwritten: {path}")


if __name__ == "__main__":
    main()
