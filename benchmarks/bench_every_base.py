"""Fixed and concentrated K on every base with a dominating pair: best, composition and
interval against the certified lower bound, with the time of each.

    python benchmarks/bench_every_base.py            # the quick grid (δ = 1e-6; k ∈ {2, 10, 40}, binomial(40, ½))
    python benchmarks/bench_every_base.py --full     # the issue's grid: k ∈ {2, 3, 5, 10, 20, 40, 100},
                                                     # binomial n ∈ {20, 40, 200}, δ ∈ {1e-6, 1e-10}
    python benchmarks/bench_every_base.py --full --bases 3,4   # only those bases (indexes into BASES)
    python benchmarks/bench_every_base.py --random   # the papers' random laws (mean 10), δ ∈ {1e-6, 1e-10}
    python benchmarks/bench_every_base.py --weak     # weak runs (small losses: large σ, Laplace scale), δ = 1e-6,
                                                     # fixed, binomial and random laws
    python benchmarks/bench_every_base.py --random --bases 4 --slices 4000   # the lower bound's construction cut
                                                     # finer (lower_bound's slices; 1000 when not given)

Writes benchmarks/results/every_base.json and prints a Markdown table; benchmarks/results_page.py puts
every every_base*.json file on the results page, "Every base".
"""

from __future__ import annotations

import math
import sys
import time

from _common import fmt, write_results

import symsel
from symsel.errors import NotApplicableError

BASES = [
    "dpsgd(q=0.01, sigma=1.1, steps=1000)",
    "dpsgd(q=0.1, sigma=1.0, steps=10)",
    "laplace(scale=1)",
    "randomized_response(eps=1, k=2)",
    "pair(p=[0.5384092330932617, 0.4615907669067383], q=[0.14445972442626953, 0.8555402755737305])",
]
#: weak runs, where the losses are small and a fixed grid width is coarse beside them (``--weak``)
WEAK_BASES = [
    "dpsgd(q=0.01, sigma=4, steps=100)",
    "dpsgd(q=0.01, sigma=2, steps=1000)",
    "laplace(scale=10)",
    "laplace(scale=40)",
    "gaussian(sigma=12)",
    "gaussian(sigma=20)",
]
WEAK_LAWS = ["point(k=3)", "point(k=40)", "binomial(n=40, p=1/2)", "poisson(mean=10)", "geometric(mean=10)"]
QUICK_LAWS = ["point(k=2)", "point(k=10)", "point(k=40)", "binomial(n=40, p=1/2)"]
FULL_LAWS = [f"point(k={k})" for k in (2, 3, 5, 10, 20, 40, 100)] + [
    f"binomial(n={n}, p=1/2)" for n in (20, 40, 200)]
RANDOM_LAWS = ["geometric(mean=10)", "logarithmic(mean=10)", "tnb(eta=0.5, mean=10)", "poisson(mean=10)"]


def epsilon(dist, base, method: str, delta: float) -> tuple[float | None, float]:
    start = time.process_time()
    try:
        value = symsel.bound(dist, base, method).epsilon(delta)
    except NotApplicableError:
        value = None
    return value, time.process_time() - start


def main() -> None:
    full = "--full" in sys.argv
    random_laws = "--random" in sys.argv
    weak = "--weak" in sys.argv
    bases = WEAK_BASES if weak else BASES
    chosen = bases
    if "--bases" in sys.argv:
        chosen = [bases[int(i)] for i in sys.argv[sys.argv.index("--bases") + 1].split(",")]
    laws = WEAK_LAWS if weak else RANDOM_LAWS if random_laws else FULL_LAWS if full else QUICK_LAWS
    deltas = (1e-6, 1e-10) if full or random_laws else (1e-6,)
    slices = int(sys.argv[sys.argv.index("--slices") + 1]) if "--slices" in sys.argv else 1000
    rows = []
    print("| base | law | δ | best | composition | interval | lower | best / lower | CPU s (interval, lower) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for base_spec in chosen:
        base = symsel.parse_profile(base_spec)
        for law in laws:
            dist = symsel.parse_distribution(law)
            for delta in deltas:
                best, _ = epsilon(dist, base, "best", delta)
                comp, _ = epsilon(dist, base, "composition", delta)
                interval, t_interval = epsilon(dist, base, "interval", delta)
                start = time.process_time()
                lower = symsel.lower_bound(base, dist, delta, budget=40, slices=slices).epsilon
                t_lower = time.process_time() - start
                ratio = best / lower if best is not None and lower > 0 else math.inf
                row = {"base": base_spec, "law": law, "delta": delta, "best": best, "composition": comp,
                       "interval": interval, "lower": lower, "ratio": ratio, "interval_cpu_s": t_interval,
                       "lower_cpu_s": t_lower, "lower_slices": slices}
                rows.append(row)
                short = base_spec if len(base_spec) < 40 else base_spec[:18] + "…"

                print(f"| `{short}` | `{law}` | {delta:g} | {fmt(best, 6)} | {fmt(comp, 6)} | {fmt(interval, 6)} | "
                      f"{fmt(lower, 6)} | {fmt(ratio, 5)} | {t_interval:.1f}, {t_lower:.1f} |", flush=True)
    name = ("every_base_weak" if weak else "every_base_random" if random_laws else "every_base_full" if full
            else "every_base")
    if "--bases" in sys.argv:
        name += "_" + sys.argv[sys.argv.index("--bases") + 1].replace(",", "_")
    write_results(name, {"rows": rows})


if __name__ == "__main__":
    main()
