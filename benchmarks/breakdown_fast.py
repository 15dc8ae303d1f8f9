"""Where a warm call of each ``bench_fast.py`` row spends its CPU, stage by stage.

The rows, their code and their perturbed parameters are ``bench_fast.py``'s. Each row's symsel side runs in this
process: one untimed warm-up call, then ``--repeats`` calls on new parameters (as ``bench_fast.py``'s warm mode),
with a timer around each stage of :data:`STAGES`. A stage's time is *exclusive*: the CPU inside it minus the CPU of
the stages it calls (the base's PLD, built inside the first component that touches it, counts once, as the PLD).
"other" is the call's CPU outside every stage (parsing, the law's caches, dp-accounting's own bookkeeping). The
peer's warm call is timed in the same turns, for the ratio a stage alone would give.

Run from the repository root: ``python benchmarks/breakdown_fast.py [--rows 3,4,8b] [--repeats 3]`` →
``benchmarks/results/fast_breakdown.json`` and a table per row.

``--search-order``: ``best`` on fixed-K cases in one process, turns alternating between its search order for a fixed K
with a large envelope (``interval`` first) and the usual one (the envelope first), medians of 6 each
(:data:`symsel.bounds.api.FIXED_K_SEARCH_ORDER`).

``--imports``: the whole-process side instead: the CPU of fresh processes that only import (the peer's
``dp_accounting``, then also ``sympy``, then also symsel's bounds), medians of 5: what a fresh symsel process pays
before its first question, beyond the peer's.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import resource
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from _common import write_results
from bench_fast import in_process, rows

#: (module, attribute path, label: a string, or a function of the call's arguments giving one)
STAGES: list[tuple[str, str, str | Callable[..., str]]] = [
    ("symsel.profiles.dpaccounting", "_build", "dp-accounting PLD of a run (FFT self-composition)"),
    ("symsel.profiles.dpaccounting", "_subsampled_gaussian_pld", "one DP-SGD step's PLD"),
    ("symsel.profiles.dpaccounting", "PldProfile._suffix_tables", "PLD suffix tables"),
    ("symsel.profiles.base", "profile_envelope", "the base's privacy region (16001 ε1)"),
    ("symsel.bounds.api", "_computed", lambda law, base, method: f"{method}: build"),
    ("symsel.bounds.api", "SelectionBound.epsilon_below", lambda self, *a: f"{self.method}: ε search"),
    ("symsel.bounds.api", "SelectionBound.epsilon", lambda self, *a: f"{self.method}: ε search"),
    ("symsel.spec", "parse_distribution", "law: parse"),
    ("symsel.apps.accounting", "selection_law", "law: from the dp-accounting event"),
    ("symsel.apps.accounting", "selection_pld", "accountant: selection exported to a PLD"),
    ("symsel.apps.accounting", "_gaussian_pld", "accountant: a Gaussian run's PLD"),
    ("dp_accounting.pld.privacy_loss_distribution", "PrivacyLossDistribution.compose", "dp-accounting: PLDs composed"),
    ("dp_accounting.pld.privacy_loss_distribution", "PrivacyLossDistribution.get_epsilon_for_delta",
     "dp-accounting: ε of the composed PLD"),
]


class StageTimer:
    """Exclusive CPU per stage label (a stack of open stages: each one's time less its open children's)."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = defaultdict(float)
        self._stack: list[list[Any]] = []
        self.active = False  # counting only during symsel's calls (the peer calls some of the same dp-accounting code)

    def wrap(self, function: Callable[..., Any], label: str | Callable[..., str]) -> Callable[..., Any]:
        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if not self.active:
                return function(*args, **kwargs)
            name = label if isinstance(label, str) else label(*args, **kwargs)
            self._stack.append([name, time.process_time(), 0.0])
            try:
                return function(*args, **kwargs)
            finally:
                name, start, children = self._stack.pop()
                elapsed = time.process_time() - start
                self.totals[name] += elapsed - children
                if self._stack:
                    self._stack[-1][2] += elapsed

        return timed


def install(timer: StageTimer) -> list[tuple[Any, str, Any]]:
    """Wrap every stage of :data:`STAGES` (a ``cached_property`` through its function); returns what to restore."""
    restore = []
    for module_name, path, label in STAGES:
        owner: Any = importlib.import_module(module_name)
        *outer, name = path.split(".")
        for part in outer:
            owner = getattr(owner, part)
        original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        if isinstance(original, functools.cached_property):
            replacement: Any = functools.cached_property(timer.wrap(original.func, label))
            replacement.__set_name__(owner, name)
        else:
            replacement = timer.wrap(original, label)
        setattr(owner, name, replacement)
        restore.append((owner, name, original))
    return restore


def breakdown(row: Any, ordinal: int, repeats: int) -> dict[str, Any]:
    mine, peer = in_process(row.symsel), in_process(row.peers[0]) if row.peers else None
    mine(0.1 * ordinal)
    if peer is not None:
        peer(0.1 * ordinal)
    timer = StageTimer()
    restore = install(timer)
    totals, peers = [], []
    try:
        for turn in range(1, repeats + 1):
            i = turn + 0.1 * ordinal
            timer.active = True
            start = time.process_time()
            mine(i)
            totals.append(time.process_time() - start)
            timer.active = False
            if peer is not None:
                start = time.process_time()
                peer(i)
                peers.append(time.process_time() - start)
    finally:
        for owner, name, original in restore:
            setattr(owner, name, original)
    per_call = {name: value / repeats for name, value in sorted(timer.totals.items(), key=lambda kv: -kv[1])}
    mean = sum(totals) / repeats
    per_call["other"] = mean - sum(per_call.values())
    return {"id": row.id, "label": row.label, "symsel_cpu": mean,
            "peer_cpu": statistics.median(peers) if peers else None, "stages": per_call}


#: the fresh processes of ``--imports``: what each imports
IMPORTS = {"python": "pass", "dp_accounting": "import dp_accounting",
           "dp_accounting + sympy": "import dp_accounting, sympy",
           "dp_accounting + symsel's bounds": "import dp_accounting, symsel.bounds.api, symsel.profiles.dpaccounting"}


#: the cases of ``--search-order``: (law, base with ``{s}`` for the perturbed parameter, parameter)
ORDER_CASES = [("point(k=40)", "gaussian(sigma={s})", 4.0), ("point(k=3)", "gaussian(sigma={s})", 2.0),
               ("point(k=40)", "laplace(scale={s})", 1.0), ("point(k=40)", "dpsgd(q=0.01, sigma={s}, steps=1000)", 1.1)]


def search_order(turns: int = 12) -> list[dict[str, Any]]:
    """CPU of ``best``'s ε (built and asked, new parameter each turn) under the two orders, alternating."""
    import symsel
    from symsel.bounds import api

    usual, kept = 10**12, api.FIXED_K_COSTLY_TERMS
    out = []
    for law, base, scale in ORDER_CASES:
        def call(i: int, law: str = law, base: str = base, scale: float = scale) -> float:
            profile = symsel.parse_profile(base.format(s=scale * (1 + 0.001 * i)))
            return float(symsel.bound(symsel.parse_distribution(law), profile, "best").epsilon(1e-6))

        call(0)
        samples: dict[str, list[float]] = {"interval first": [], "envelope first": []}
        try:
            for i in range(1, turns + 1):
                name = "interval first" if i % 2 else "envelope first"
                api.FIXED_K_COSTLY_TERMS = kept if i % 2 else usual
                start = time.process_time()
                call(i)
                samples[name].append(time.process_time() - start)
        finally:
            api.FIXED_K_COSTLY_TERMS = kept
        medians = {name: statistics.median(values) for name, values in samples.items()}
        out.append({"law": law, "base": base.format(s=scale), "cpu_s": medians})
        print(f"    {law} on {base.format(s=scale)}: " + ", ".join(f"{k} {v:.3f} s" for k, v in medians.items()))
    return out


def imports(repeats: int = 5) -> dict[str, float]:
    """Median CPU (user + system, children) of a fresh ``python -c`` process per entry of :data:`IMPORTS`."""
    out = {}
    for name, code in IMPORTS.items():
        samples = []
        for _ in range(repeats):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-c", code], check=True, timeout=300)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            samples.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        out[name] = statistics.median(samples)
        print(f"    {out[name]:.3f} CPU-s  {name}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=None, help="comma-separated row ids (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--imports", action="store_true", help="time fresh processes that only import")
    parser.add_argument("--search-order", action="store_true", help="best's two search orders for a fixed K, A/B")
    args = parser.parse_args(argv)
    if args.search_order:
        path = write_results("fast_search_order", {"turns": 12, "cases": search_order()})
        print(f"wrote {path}")
        return 0
    if args.imports:
        path = write_results("fast_imports", {"repeats": 5, "cpu_s": imports()})
        print(f"wrote {path}")
        return 0
    chosen = None if args.rows is None else [s.strip() for s in args.rows.split(",")]
    records = []
    for ordinal, row in enumerate(rows(), 1):
        if chosen is not None and row.id not in chosen:
            continue
        record = breakdown(row, ordinal, max(1, args.repeats))
        records.append(record)
        peer = record["peer_cpu"]
        print(f"row {row.id}: {row.label}: symsel {1e3 * record['symsel_cpu']:.1f} ms a call"
              + ("" if peer is None else f", peer {1e3 * peer:.1f} ms (2x: {2e3 * peer:.1f} ms)"))
        for name, value in record["stages"].items():
            if value >= 5e-4 or name == "other":
                share = "" if peer is None else f"  ({value / peer:.2f}x the peer)"
                print(f"    {1e3 * value:8.1f} ms  {name}{share}")
    path = write_results("fast_breakdown", {"repeats": args.repeats, "rows": records})
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
