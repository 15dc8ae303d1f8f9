"""How many candidates a budget affords: the largest certified mean of K at ε = 2.5, δ = 1e-5 on the DP-SGD run of
Koskela et al. Figure 7 (CIFAR-10 setting: q = 16384/50000, σ = 21.1, 250 steps), for the report's four laws of K, by
symsel's ``best`` and ``rdp`` and by the peer, dp-accounting's RDP ``RepeatAndSelectDpEvent``. CPU seconds beside
each. The same cells as the report's "Candidates affordable" table (``symsel.report.figures.candidates_vs_budget``).

Run from the repository root: ``python benchmarks/bench_candidates.py`` → ``benchmarks/results/candidates.json``;
the README's first table and the results page's "Candidates" section are read from it.
"""

from __future__ import annotations

import time

from _common import fmt, write_results

from symsel.report.figures import FIG7, _fig7_cell
from symsel.report.main import CANDIDATE_BUDGET, FULL

METHODS = ("best", "rdp", "dp-accounting RDP")


def main() -> None:
    rows = []
    print("| law | method | mean of K | CPU s |")
    print("|---|---|---|---|")
    for label, template, shape in FULL["fig7_laws"]:
        for method in METHODS:
            start = time.process_time()
            cell = _fig7_cell(label, template, shape, CANDIDATE_BUDGET, method)
            cell["cpu_s"] = time.process_time() - start
            rows.append(cell)
            print(f"| {label} | {method} | {fmt(cell['mean'])} | {cell['cpu_s']:.1f} |", flush=True)
    write_results("candidates", {"setting": {**FIG7, "epsilon": CANDIDATE_BUDGET}, "rows": rows})


if __name__ == "__main__":
    main()
