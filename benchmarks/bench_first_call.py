"""A fresh process's first ``interval`` evaluation against a warm one, with the allocator left as glibc sets it.

``import symsel`` changes nothing in the process (no ``mallopt``), so a fresh process pays glibc's default of
returning freed large arrays to the kernel and faulting them in again. This script starts fresh processes that
import symsel, build the ``interval`` bound of point(40) on gaussian(σ = 40) and time (CPU and wall clock, minor page
faults) one query — the first in the process — and then the same query on fresh profiles (no cached result)
:data:`WARM` more times (warm: the law's evaluators built, the heap grown, the shared tables computed). Two queries:
``delta``, one evaluation of ``δ(ε)`` at :data:`EPSILON`, and ``epsilon``, ``ε(δ = 1e-6)`` (a search of several
evaluations on one profile). The ratio first / warm (median over processes) is the figure of merit (goal ≤ 1.15).
The same is run with :func:`symsel.memory.keep_freed_memory` applied by the child (what the CLI does), for comparison.

Run from the repository root: ``python benchmarks/bench_first_call.py [--processes N]`` →
``benchmarks/results/first_call.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _common import print_table, write_results

#: the query: δ of the interval bound at this ε (about δ = 1e-6 for point(40) on gaussian(σ = 40)).
EPSILON = 0.9
#: warm evaluations after the first, in the same process.
WARM = 5

CHILD = """
import resource, sys, time, json
if sys.argv[1] == "keep":
    from symsel.memory import keep_freed_memory
    keep_freed_memory()
import symsel
from symsel.bounds.interval import interval_profile
law, base = symsel.point(40), symsel.parse_profile("gaussian(sigma=40)")
eps = float(sys.argv[2])

def one():
    profile = interval_profile(law, base)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    cpu, wall = time.process_time(), time.perf_counter()
    value = profile.delta_nonnegative(eps) if sys.argv[4] == "delta" else profile.epsilon(1e-6)
    return (time.process_time() - cpu, time.perf_counter() - wall,
            resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults, value)

first = one()
warm = [one() for _ in range(int(sys.argv[3]))]
print(json.dumps({"first": first, "warm": warm}))
"""


def run(mode: str, query: str, processes: int) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    runs = []
    for _ in range(processes):
        out = subprocess.run([sys.executable, "-c", CHILD, mode, repr(EPSILON), str(WARM), query], capture_output=True,
                             text=True, env=env, check=True)
        runs.append(json.loads(out.stdout.splitlines()[-1]))
    first_cpu = statistics.median(r["first"][0] for r in runs)
    first_wall = statistics.median(r["first"][1] for r in runs)
    warm_cpu = statistics.median(statistics.median(w[0] for w in r["warm"]) for r in runs)
    warm_wall = statistics.median(statistics.median(w[1] for w in r["warm"]) for r in runs)
    return {
        "mode": mode, "query": query, "processes": processes,
        "first_cpu_s": first_cpu, "warm_cpu_s": warm_cpu, "ratio_cpu": first_cpu / warm_cpu,
        "first_wall_s": first_wall, "warm_wall_s": warm_wall, "ratio_wall": first_wall / warm_wall,
        "first_page_faults": statistics.median(r["first"][2] for r in runs),
        "warm_page_faults": statistics.median(statistics.median(w[2] for w in r["warm"]) for r in runs),
        "delta": runs[0]["first"][3],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--name", default="first_call")
    args = parser.parse_args()
    rows = [run(mode, query, args.processes) for query in ("delta", "epsilon") for mode in ("library", "keep")]
    print_table("interval, point(40) on gaussian(sigma=40): first vs warm (medians)",
                ["query", "allocator", "first CPU-s", "warm CPU-s", "ratio", "first wall-s", "warm wall-s", "ratio",
                 "faults first", "faults warm"],
                [[r["query"], r["mode"], r["first_cpu_s"], r["warm_cpu_s"], r["ratio_cpu"], r["first_wall_s"],
                  r["warm_wall_s"], r["ratio_wall"], r["first_page_faults"], r["warm_page_faults"]] for r in rows])
    write_results(args.name, {"query": {"law": "point(40)", "base": "gaussian(sigma=40)", "method": "interval",
                                        "delta_at_epsilon": EPSILON, "epsilon_at_delta": 1e-6,
                                        "warm_evaluations": WARM},
                              "goal": "first / warm <= 1.15 with the allocator as glibc sets it (mode 'library')",
                              "rows": rows})


if __name__ == "__main__":
    main()
